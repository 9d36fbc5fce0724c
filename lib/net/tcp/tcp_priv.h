/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_TCP_PRIV_H
#define FFN_TCP_PRIV_H

/* Internals shared by the tcp_*.c files; not part of the contract. */

#include <sys/queue.h>

#include <rte_common.h>
#include <rte_hash.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_tcp.h>

#include "tcp.h"

/* Sequence space comparisons (RFC 9293 §3.4), modulo 2^32. */
#define SEQ_LT(a, b)	((int32_t)((a) - (b)) < 0)
#define SEQ_LEQ(a, b)	((int32_t)((a) - (b)) <= 0)
#define SEQ_GT(a, b)	((int32_t)((a) - (b)) > 0)
#define SEQ_GEQ(a, b)	((int32_t)((a) - (b)) >= 0)
#define SEQ_MAX(a, b)	(SEQ_GT(a, b) ? (a) : (b))
#define SEQ_MIN(a, b)	(SEQ_LT(a, b) ? (a) : (b))

#define TCP_F_FIN 0x01
#define TCP_F_SYN 0x02
#define TCP_F_RST 0x04
#define TCP_F_PSH 0x08
#define TCP_F_ACK 0x10

#define TCP_OPT_EOL 0
#define TCP_OPT_NOP 1
#define TCP_OPT_MSS 2
#define TCP_OPT_WS 3
#define TCP_OPT_SACK_PERM 4
#define TCP_OPT_SACK 5
#define TCP_OPT_TS 8

#define TCP_MAX_WSCALE 14	/* RFC 7323 §2.3 */
#define TCP_MAX_SACK 4		/* blocks remembered, each direction */
#define TCP_SCOREBOARD 16	/* SACKed blocks (holes) a sender tracks */
#define TCP_OOO_MAX 64		/* out-of-order blocks (holes) held */
#define TCP_MAX_LISTEN 16
#define TCP_WHEEL_SLOTS 1024	/* power of two */
#define TCP_TICK_US 1000
#define TCP_DUPTHRESH 3		/* RFC 5681 §3.2, RFC 6675 */
#define TCP_REORD_MAX 32	/* highest DupThresh reordering raises it to */
#define TCP_REO_PERSIST 16	/* RFC 8985 §6.2 step 4 */
#define TCP_RXT_RECS 8		/* retransmissions tracked for RACK */
#define TCP_SYN_RETRIES 6
#define TCP_HDR_MAX 60
#define TCP_DEFAULT_MSS 536	/* RFC 9293 §3.7.1 when no option */

/* conn->flags */
#define TF_ACKNOW	0x0001	/* send an ACK at the end of input */
#define TF_DELACK	0x0002	/* an ACK is owed (delayed) */
#define TF_FIN_QUEUED	0x0004	/* app shut down: FIN after snd_end */
#define TF_FIN_SENT	0x0008
#define TF_APP_CLOSED	0x0010	/* no more callbacks */
#define TF_WS		0x0020	/* window scaling in use */
#define TF_TS		0x0040	/* timestamps in use */
#define TF_SACK		0x0080	/* SACK permitted both ways */
#define TF_RECOVERY	0x0100	/* in fast recovery */
#define TF_MANUAL_RCV	0x0200
#define TF_RTT_TIMING	0x0400
#define TF_EOF_SEEN	0x0800	/* peer FIN delivered */
#define TF_COOKIE	0x1000	/* opened from a SYN cookie */
#define TF_IN_CB	0x2000	/* inside a callback: free deferred */
#define TF_DEAD		0x4000	/* freed once the callback returns */
#define TF_OOO_FIN	0x8000
#define TF_BACKOFF	0x10000	/* RTO backed off, no RTT sample since */
#define TF_TERM		0x20000	/* closed() running or done: API calls no-ops */
#define TF_GONE		(TF_DEAD | TF_TERM)
#define TF_DSACK	0x40000	/* report dsack in the next ACK (RFC 2883) */
#define TF_RTO_LOSS	0x80000	/* recovery after a timeout (with TF_RECOVERY) */
#define TF_UNDO		0x100000 /* the last reduction may prove spurious */
#define TF_REO_TIMER	0x200000 /* rto_at is the reordering window timer */
#define TF_RXT_CUT	0x400000 /* this recovery reduced for a lost rexmit */
#define TF_TLP_TIMER	0x800000 /* rto_at is the probe timer (RFC 8985 §7) */
#define TF_TLP_OUT	0x1000000 /* a probe is out: TLP.end_seq is set */
#define TF_TLP_RETRANS	0x2000000 /* ... and it was a retransmission */
#define TF_ACTIVE	0x4000000 /* opened by tcp_connect() */

struct tcp_key {
	uint32_t rip;	/* remote address, network order */
	uint32_t lip;
	uint16_t rport;	/* network order */
	uint16_t lport;
} __rte_packed;

struct tcp_listener {
	uint16_t port;		/* host order, 0 = free slot */
	uint32_t backlog;
	uint32_t syn_rcvd;	/* connections in SYN_RECEIVED */
	/* The last SYN answered with a cookie (tcp_now(), valid if
	 * cookie_sent): like Linux's per-listener last_overflow, only
	 * then is a bare ACK worth a cookie check (tcp_cookie_recent). */
	uint64_t cookie_at;
	bool cookie_sent;
	const struct tcp_ops *ops;
	void *arg;
};

struct tcp_sack_block {
	uint32_t start;
	uint32_t end;
};

/* A run of retransmitted sequence space (RFC 8985 §6.2 for what the
 * scoreboard cannot see: a retransmission lost again). Data first sent
 * after it lies above mark; once some of that was delivered and the
 * reordering window passed, the run is lost. */
struct tcp_rxt {
	uint32_t start, end;	/* un-ACKed part of the run */
	uint32_t mark;		/* snd_max when it was sent */
	uint32_t next;		/* lost: resent up to here */
	uint64_t at;		/* when it was sent */
	uint64_t seen;		/* later data first delivered (0: not yet) */
	uint8_t lost;
};

struct tcp_ooo {
	uint32_t seq;
	uint32_t len;
	struct rte_mbuf *m;	/* positioned at payload, pkt_len == len */
};

/* Parsed options of one segment. */
struct tcp_opts {
	uint16_t mss;
	uint8_t ws;
	uint8_t has_mss : 1, has_ws : 1, sack_ok : 1, has_ts : 1;
	uint8_t nr_sack;
	uint32_t tsval, tsecr;
	struct tcp_sack_block sack[TCP_MAX_SACK];
};

struct tcp_conn {
	struct tcp_stack *stack;
	struct tcp_key key;
	uint8_t state;
	uint8_t snd_wscale;	/* shift applied to windows the peer sends */
	uint8_t rcv_wscale;	/* shift we apply to our advertised window */
	uint8_t dupacks;
	uint8_t retries;	/* consecutive RTO expiries */
	uint8_t close_reason;
	uint32_t flags;
	uint16_t mss;		/* send MSS: payload bytes per segment */
	uint16_t opt_len;	/* TCP option bytes in every data segment */
	const struct tcp_ops *ops;
	void *arg;
	struct tcp_listener *listener;	/* while SYN_RECEIVED */

	/* Send sequence space (RFC 9293 §3.3.1). */
	uint32_t iss;
	uint32_t snd_una;
	uint32_t snd_nxt;
	uint32_t snd_max;	/* highest sequence sent + 1 */
	uint32_t snd_end;	/* end of queued data (FIN not included) */
	uint32_t snd_wnd;	/* peer window, bytes */
	uint32_t max_snd_wnd;
	uint32_t snd_wl1, snd_wl2;

	/* Send queue: single-segment mbufs linked by ->next holding
	 * [sq_seq, snd_end); acked bytes are cut off the head. The cursor
	 * remembers where the last transmission ended. */
	struct rte_mbuf *sq_head, *sq_tail;
	uint32_t sq_seq;
	uint32_t sq_bytes;
	struct rte_mbuf *sq_cur;
	uint32_t sq_cur_seq;	/* sequence of sq_cur's first data byte */
	struct rte_mbuf *sq_copy;	/* our last copy buffer (tcp_send) */

	/* Receive sequence space. */
	uint32_t irs;
	uint32_t rcv_nxt;
	uint32_t rcv_adv;	/* right edge we advertised */
	uint32_t rcv_held;	/* delivered but not tcp_recved (manual) */
	uint32_t ooo_bytes;
	uint16_t nr_ooo;
	uint16_t segs_unacked;	/* full segments since our last ACK */
	uint32_t last_ack_sent;
	uint32_t rcv_fin_seq;	/* FIN seen out of order (TF_OOO_FIN) */
	struct tcp_ooo ooo[TCP_OOO_MAX];
	/* SACK blocks we report; [0] is the most recent (RFC 2018 §4). */
	struct tcp_sack_block rsack[TCP_MAX_SACK];
	uint8_t nr_rsack;
	struct tcp_sack_block dsack;	/* duplicate just received */
	/* Scoreboard of blocks the peer SACKed, sorted, merged. */
	uint8_t nr_sacked;
	struct tcp_sack_block sacked[TCP_SCOREBOARD];

	/* Timestamps (RFC 7323). */
	uint32_t ts_recent;
	uint64_t ts_recent_age;
	uint32_t ts_offset;

	/* RTT (RFC 6298) in µs. */
	uint32_t srtt, rttvar, rto;
	uint32_t rtt_seq;
	uint64_t rtt_start;

	/* Congestion control. */
	uint32_t cwnd, ssthresh;
	uint32_t recover;	/* RFC 6582 */
	uint32_t high_rxt;	/* RFC 6675 HighRxt */
	uint32_t rescue_rxt;	/* RFC 6675 RescueRxt */
	uint32_t rec_start;	/* snd_una when recovery began */
	uint64_t sack_since;	/* first hole SACK-bypassed since (0: none) */
	uint32_t min_rtt;	/* µs, lowest sample */
	uint8_t reo_mult;	/* reordering window in min_rtt/4 units */
	uint8_t reo_persist;	/* recoveries before reo_mult, reord reset */
	uint8_t reord;		/* DupThresh: 3, raised by reordering seen */
	uint16_t undo_retrans;	/* retransmissions not shown spurious */
	uint32_t undo_marker;	/* snd_una when the reduction was made */
	uint32_t undo_tsval;	/* our TSval of the first retransmission */
	uint32_t undo_dist;	/* segments SACKed past the hole at entry */
	uint32_t prior_cwnd, prior_ssthresh;
	uint8_t nr_rxt;
	struct tcp_rxt rxt[TCP_RXT_RECS];	/* oldest first */
	double prior_wmax;
	uint32_t bytes_acked;	/* for CA growth (RFC 5681 §3.1, ABC) */
	double cubic_wmax, cubic_k, cubic_west;
	uint64_t cubic_epoch;

	/* Tail loss probe (RFC 8985 §7). */
	uint32_t tlp_seq;	/* first sequence of the probe */
	uint32_t tlp_end;	/* TLP.end_seq: snd_max after it */
	uint32_t tlp_flight;	/* FlightSize when it was sent */
	uint64_t tlp_rto_at;	/* RTO expiry behind the probe timer */

	/* Timers, absolute µs; 0 = off. */
	uint64_t rto_at;	/* retransmit, SYN retry or persist */
	uint64_t delack_at;
	uint64_t idle_at;	/* idle timeout or end of TIME_WAIT */
	uint64_t last_rx;
	uint64_t last_progress;	/* snd_una last moved, or the app closed */
	uint64_t deadline;	/* wheel slot this conn is filed under */
	uint8_t persist;	/* rto_at is the persist timer */
	uint8_t on_wheel;
	uint8_t on_txwait;
	uint8_t on_ackwait;
	LIST_ENTRY(tcp_conn) wheel;
	TAILQ_ENTRY(tcp_conn) tw;	/* TIME_WAIT age order */
	TAILQ_ENTRY(tcp_conn) txwait;	/* a segment the port refused */
	TAILQ_ENTRY(tcp_conn) ackwait;	/* tcp_flush_after_rx() */
} __rte_cache_aligned;

LIST_HEAD(tcp_wheel_slot, tcp_conn);
TAILQ_HEAD(tcp_tw_list, tcp_conn);
TAILQ_HEAD(tcp_txwait_list, tcp_conn);
TAILQ_HEAD(tcp_ackwait_list, tcp_conn);

struct tcp_stack {
	struct tcp_stack_config cfg;
	uint16_t mss;			/* our MSS from the MTU */
	uint64_t now;
	struct rte_hash *conns;
	struct rte_mempool *conn_pool;
	struct rte_mempool *ext_pool;	/* struct tcp_ext */
	uint32_t nr_conns;		/* not counting TIME_WAIT */
	uint32_t nr_tw;
	struct tcp_tw_list tw_list;
	/* Connections whose last segment the port refused for now (TX
	 * queue full, no mbuf), oldest first: tcp_poll sends for them
	 * again before the timers (tcp_txwait_retry). */
	struct tcp_txwait_list txwait;
	uint32_t nr_txwait;
	uint8_t in_txwait;		/* tcp_txwait_retry is sending */
	/* Connections to flush at the next poll, after the receive burst
	 * (tcp_flush_after_rx), in the order asked. */
	struct tcp_ackwait_list ackwait;
	struct tcp_listener listeners[TCP_MAX_LISTEN];
	uint32_t secret[4];		/* ISN and cookie key */
	uint16_t next_port;
	uint64_t chack_second;
	uint32_t chack_count;
	uint64_t wheel_tick;		/* last tick processed */
	struct tcp_wheel_slot wheel[TCP_WHEEL_SLOTS];
	struct tcp_stats stats;
} __rte_cache_aligned;

/* External-buffer reference shared by all mbufs of one tcp_send_iov(). */
struct tcp_ext {
	struct rte_mbuf_ext_shared_info shinfo;
	struct rte_mempool *pool;
	tcp_release_fn release;
	void *arg;
};

/* tcp_stack.c */
struct tcp_conn *tcp_conn_alloc(struct tcp_stack *s, const struct tcp_key *k);
void tcp_conn_free(struct tcp_conn *c);
void tcp_conn_set_state(struct tcp_conn *c, uint8_t st);
void tcp_conn_terminate(struct tcp_conn *c, int reason);
void tcp_enter_time_wait(struct tcp_conn *c);
void tcp_timer_sched(struct tcp_conn *c);
void tcp_txwait_add(struct tcp_conn *c);
void tcp_txwait_queue(struct tcp_conn *c);
void tcp_ackwait_remove(struct tcp_conn *c);
struct tcp_listener *tcp_listener_find(struct tcp_stack *s, uint16_t port);
uint32_t tcp_isn(struct tcp_stack *s, const struct tcp_key *k);
uint32_t tcp_cookie_make(struct tcp_stack *s, const struct tcp_key *k,
			 uint32_t seq, uint16_t mss);
int tcp_cookie_check(struct tcp_stack *s, const struct tcp_key *k,
		     uint32_t seq, uint32_t cookie, uint16_t *mss);
void tcp_cookie_sent(struct tcp_stack *s, struct tcp_listener *l);
bool tcp_cookie_recent(struct tcp_stack *s, const struct tcp_listener *l);
bool tcp_challenge_ack_allowed(struct tcp_stack *s);
uint64_t tcp_now(struct tcp_stack *s);

/* tcp_output.c */
int tcp_output(struct tcp_conn *c);
void tcp_output_again(struct tcp_conn *c);
int tcp_send_ctl(struct tcp_conn *c, uint8_t flags);
int tcp_send_segment(struct tcp_conn *c, uint32_t seq, uint32_t len,
		     uint8_t flags);
int tcp_send_rst_for(struct tcp_stack *s, const struct tcp_key *k,
		     uint32_t seq, uint32_t ack, uint8_t flags);
int tcp_send_synack_cookie(struct tcp_stack *s, const struct tcp_key *k,
			   uint32_t iss, uint32_t ack, const struct tcp_opts *o);
void tcp_sq_drop_acked(struct tcp_conn *c, uint32_t acked);
void tcp_sq_free(struct tcp_conn *c);
uint32_t tcp_rcv_window(const struct tcp_conn *c);
void tcp_rearm_rto(struct tcp_conn *c);
void tcp_enter_recovery(struct tcp_conn *c);
/* The retransmission (or persist, TLP, reordering) timer of c fired.
 * Returns -1 when c ran out of retries and was terminated: it may be
 * back in the pool, and the caller must not touch it again; else 0. */
int tcp_rto_expired(struct tcp_conn *c);
int tcp_sack_opt(const struct tcp_conn *c, uint8_t *p, int max_blocks);
uint16_t tcp_syn_opts(const struct tcp_conn *c, uint8_t *p, uint16_t mss,
		      bool synack, uint32_t tsecr);

uint16_t tcp_seg_max(const struct tcp_conn *c);
uint32_t tcp_output_one(struct tcp_conn *c, uint32_t usable, bool force);

/* tcp_sack.c */
void tcp_sacked_add(struct tcp_conn *c, uint32_t st, uint32_t en);
void tcp_sacked_prune(struct tcp_conn *c);
uint32_t tcp_sacked_in(const struct tcp_conn *c, uint32_t a, uint32_t b);
int tcp_output_sack(struct tcp_conn *c);
void tcp_rxt_note(struct tcp_conn *c, uint32_t seq, uint32_t len);
bool tcp_rxt_check(struct tcp_conn *c);

/* One arriving segment. */
struct tcp_seg {
	struct rte_mbuf *m;	/* whole segment until the payload is cut */
	uint32_t seq, ack, len;	/* len: payload bytes */
	uint32_t win;
	uint16_t hlen;
	uint8_t flags;
	struct tcp_opts o;
};

/* tcp_tlp.c */
void tcp_tlp_end(struct tcp_conn *c);
uint32_t tcp_tlp_pto(const struct tcp_conn *c);
void tcp_tlp_arm(struct tcp_conn *c);
bool tcp_tlp_fire(struct tcp_conn *c);
bool tcp_tlp_dsack(const struct tcp_conn *c, const struct tcp_seg *g);
void tcp_tlp_ack(struct tcp_conn *c, const struct tcp_seg *g, uint32_t una0);

/* tcp_input.c */
int tcp_parse_opts(const struct rte_tcp_hdr *th, struct tcp_opts *o);

/* tcp_rcv.c: payload and FIN of an acceptable segment. Consumes g->m.
 * False if the connection is gone. */
bool tcp_data_in(struct tcp_conn *c, struct tcp_seg *g);

/* tcp_open.c */
void tcp_offer_options(struct tcp_conn *c);
bool tcp_accept(struct tcp_conn *c, struct tcp_listener *l);
int tcp_input_listen(struct tcp_stack *s, const struct tcp_key *k,
		     struct tcp_seg *g);
int tcp_input_syn_sent(struct tcp_conn *c, struct tcp_seg *g);
int tcp_input_tw(struct tcp_conn *c, const struct tcp_key *k,
		 struct tcp_seg *g);
/* tcp_input.c */
int tcp_input_sync(struct tcp_conn *c, struct tcp_seg *g);

/* tcp_ack.c: 0, -1 drop the segment, -2 the connection is gone */
int tcp_ack(struct tcp_conn *c, struct tcp_seg *g);

/* tcp_cc.c */
void tcp_cc_init(struct tcp_conn *c);
void tcp_cc_ack(struct tcp_conn *c, uint32_t acked);
void tcp_cc_congestion(struct tcp_conn *c);
void tcp_cc_rto(struct tcp_conn *c);
void tcp_cc_undo(struct tcp_conn *c);
void tcp_cc_lost_rexmit(struct tcp_conn *c);
void tcp_cc_tlp_loss(struct tcp_conn *c, uint32_t flight);
void tcp_rtt_sample(struct tcp_conn *c, uint32_t rtt_us);

static inline uint32_t
tcp_flight(const struct tcp_conn *c)
{
	return c->snd_max - c->snd_una;
}

/* Time data SACKed above the first hole may arrive ahead of it before
 * the hole counts as lost: min_rtt/4, widened each time reordering
 * fooled us (RFC 8985 §6.2 step 4), at most one RTT. */
static inline uint32_t
tcp_reo_wnd(const struct tcp_conn *c)
{
	uint32_t base = c->min_rtt ? c->min_rtt : c->srtt;

	return RTE_MAX(RTE_MIN(base / 4 * c->reo_mult, base), 1000u);
}

/* Arm the reordering timer for due unless the RTO comes first. Behind a
 * pending probe (TF_TLP_TIMER) the RTO is tlp_rto_at, not rto_at: once
 * SACKs or a recovery came no probe may go (tcp_tlp_allowed), and the
 * probe timer would only hand back to the RTO, dropping this timer. */
static inline void
tcp_reo_timer_arm(struct tcp_conn *c, uint64_t due)
{
	uint64_t rto = c->rto_at != 0 && (c->flags & TF_TLP_TIMER) ?
		       c->tlp_rto_at : c->rto_at;

	if (c->persist || (rto != 0 && rto <= due))
		return;
	c->rto_at = due;
	c->flags &= ~TF_TLP_TIMER;
	c->flags |= TF_REO_TIMER;
	tcp_timer_sched(c);
}

/* The first hole was SACK-bypassed longer than the reordering window:
 * lost, however few segments were SACKed above it (a time threshold as
 * RFC 8985 RACK, for small windows and tails where DupThresh SACKed
 * segments never come). */
static inline bool
tcp_hole_timed_out(const struct tcp_conn *c)
{
	return c->nr_sacked > 0 && c->sack_since != 0 &&
	       c->stack->now - c->sack_since >= tcp_reo_wnd(c);
}

static inline bool
tcp_cb_enter(struct tcp_conn *c)
{
	if (c->flags & (TF_APP_CLOSED | TF_DEAD))
		return false;
	c->flags |= TF_IN_CB;
	return true;
}

/* Returns false when the connection died inside the callback. */
static inline bool
tcp_cb_leave(struct tcp_conn *c)
{
	c->flags &= ~TF_IN_CB;
	if (c->flags & TF_DEAD) {
		tcp_conn_free(c);
		return false;
	}
	return true;
}

static inline void
tcp_drop(struct tcp_stack *s, struct rte_mbuf *m, enum tcp_drop_reason r)
{
	s->stats.drops[r]++;
	rte_pktmbuf_free(m);
}

static inline void
tcp_challenge_ack(struct tcp_conn *c)
{
	if (tcp_challenge_ack_allowed(c->stack))
		tcp_send_ctl(c, TCP_F_ACK);
}

static inline uint8_t
tcp_wscale_for(uint32_t buf)
{
	uint8_t sh = 0;

	while ((buf >> sh) > 65535 && sh < TCP_MAX_WSCALE)
		sh++;
	return sh;
}

/* TSval of a cookie SYN-ACK: a stack-wide ms clock with 6 low bits of
 * option state. Connections made from it continue above it. */
static inline uint32_t
tcp_cookie_tsval(const struct tcp_stack *s, uint32_t bits)
{
	return (((uint32_t)(s->now / 1000) + s->secret[3]) & ~0x3fu) | bits;
}

/* Handshake done; a FIN the app queued meanwhile moves us on. */
static inline void
tcp_established(struct tcp_conn *c)
{
	tcp_conn_set_state(c, (c->flags & TF_FIN_QUEUED) ? TCP_FIN_WAIT_1 :
			   TCP_ESTABLISHED);
}

/* Our FIN is acknowledged once snd_una passed it. */
static inline bool
tcp_fin_acked(const struct tcp_conn *c)
{
	return (c->flags & TF_FIN_SENT) && SEQ_GT(c->snd_una, c->snd_end);
}

#endif /* FFN_TCP_PRIV_H */
