/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Building and sending segments: headers and options, payload by reference
 * out of the send queue, the send loop (windows, NewReno; RFC 6675 SACK
 * recovery is in tcp_sack.c), retransmission timeout and persist (RFC
 * 6298, RFC 9293 §3.8.6.1). */

#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include "tcp_priv.h"
#include "tcp_cksum.h"

/* Payload up to this many bytes from our own copy buffers (tcp_send) is
 * copied into the header mbuf instead of chaining a reference: cheaper
 * than an mbuf allocation and a refcount for small responses. */
#define TCP_COPY_MAX 512

static inline uint32_t
tcp_tsval(const struct tcp_conn *c)
{
	return (uint32_t)(c->stack->now / 1000) + c->ts_offset;
}

/* Receive window we can offer from rcv_nxt: our memory minus what the
 * app still holds (manual receive); out-of-order data sits inside it. */
uint32_t
tcp_rcv_window(const struct tcp_conn *c)
{
	const struct tcp_stack *s = c->stack;
	uint32_t wnd = s->cfg.rcv_buf > c->rcv_held ?
		       s->cfg.rcv_buf - c->rcv_held : 0;
	uint32_t max = 65535u << c->rcv_wscale;

	if (wnd > max)
		wnd = max;
	/* Receiver SWS avoidance (RFC 9293 §3.8.6.2.2, as BSD does it): a
	 * window that reopened by less than min(RCV.BUFF / 2, MSS) is not
	 * offered, or a peer probing a zero window would be invited to send
	 * runts; what was offered already stays (below). */
	if (wnd < RTE_MIN(s->cfg.rcv_buf / 2, (uint32_t)c->mss))
		wnd = 0;
	/* Never shrink the window already offered (RFC 9293 §3.8.6.2.1). */
	if (SEQ_GT(c->rcv_adv, c->rcv_nxt + wnd))
		wnd = c->rcv_adv - c->rcv_nxt;
	return wnd;
}

static inline void
tcp_put32(uint8_t *p, uint32_t v)
{
	v = rte_cpu_to_be_32(v);
	memcpy(p, &v, 4);
}

static uint16_t
tcp_ts_opt(const struct tcp_conn *c, uint8_t *p, bool with_nops)
{
	uint16_t n = 0;

	if (with_nops) {
		p[n++] = TCP_OPT_NOP;
		p[n++] = TCP_OPT_NOP;
	}
	p[n++] = TCP_OPT_TS;
	p[n++] = 10;
	tcp_put32(p + n, tcp_tsval(c));
	tcp_put32(p + n + 4, c->ts_recent);
	return n + 8;
}

/* Options of a SYN or SYN-ACK: what c->flags says is offered/agreed. */
uint16_t
tcp_syn_opts(const struct tcp_conn *c, uint8_t *p, uint16_t mss, bool synack,
	     uint32_t tsecr)
{
	uint16_t n = 0;

	p[n++] = TCP_OPT_MSS;
	p[n++] = 4;
	p[n++] = mss >> 8;
	p[n++] = mss & 0xff;
	if ((c->flags & TF_SACK) && (c->flags & TF_TS)) {
		p[n++] = TCP_OPT_SACK_PERM;
		p[n++] = 2;
		n += tcp_ts_opt(c, p + n, false);
	} else if (c->flags & TF_TS) {
		n += tcp_ts_opt(c, p + n, true);
	} else if (c->flags & TF_SACK) {
		p[n++] = TCP_OPT_NOP;
		p[n++] = TCP_OPT_NOP;
		p[n++] = TCP_OPT_SACK_PERM;
		p[n++] = 2;
	}
	if (c->flags & TF_TS)	/* TSecr of a SYN is 0 (RFC 7323 §3.2) */
		tcp_put32(p + n - 4, synack ? tsecr : 0);
	if (c->flags & TF_WS) {
		p[n++] = TCP_OPT_NOP;
		p[n++] = TCP_OPT_WS;
		p[n++] = 3;
		p[n++] = c->rcv_wscale;
	}
	return n;
}

/* SACK blocks: a D-SACK block first when a duplicate just arrived (RFC
 * 2883 §4), then the newest blocks first (RFC 2018 §4). */
int
tcp_sack_opt(const struct tcp_conn *c, uint8_t *p, int max_blocks)
{
	int d = !!(c->flags & TF_DSACK);
	int i, n = 0, nb = RTE_MIN((int)c->nr_rsack + d, max_blocks);

	if (nb == 0)
		return 0;
	p[n++] = TCP_OPT_NOP;
	p[n++] = TCP_OPT_NOP;
	p[n++] = TCP_OPT_SACK;
	p[n++] = 2 + 8 * nb;
	for (i = 0; i < nb; i++) {
		const struct tcp_sack_block *b = (d && i == 0) ? &c->dsack :
						 &c->rsack[i - d];

		tcp_put32(p + n, b->start);
		tcp_put32(p + n + 4, b->end);
		n += 8;
	}
	return n;
}

/* Option bytes of a non-SYN segment right now. */
static uint16_t
tcp_opts_now(const struct tcp_conn *c, uint8_t *p)
{
	uint16_t n = 0;

	if (c->flags & TF_TS)
		n += tcp_ts_opt(c, p, true);
	if ((c->flags & TF_SACK) && (c->nr_rsack > 0 ||
				     (c->flags & TF_DSACK)) &&
	    c->state >= TCP_ESTABLISHED)
		n += tcp_sack_opt(c, p + n, (c->flags & TF_TS) ? 3 : 4);
	return n;
}

/* Header mbuf with room for the IP layer in front. */
static struct rte_mbuf *
tcp_hdr_mbuf(struct tcp_stack *s, const struct tcp_key *k, uint32_t seq,
	     uint32_t ack, uint8_t flags, uint16_t win, const uint8_t *opts,
	     uint16_t optlen)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(s->cfg.pool);
	struct rte_tcp_hdr *th;
	uint16_t hlen = sizeof(*th) + optlen;

	if (m == NULL) {
		s->stats.drops[TCP_DROP_NOMEM]++;
		return NULL;
	}
	th = (struct rte_tcp_hdr *)rte_pktmbuf_append(m, hlen);
	if (th == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	th->src_port = k->lport;
	th->dst_port = k->rport;
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = rte_cpu_to_be_32(ack);
	th->data_off = (hlen / 4) << 4;
	th->tcp_flags = flags;
	th->rx_win = rte_cpu_to_be_16(win);
	th->cksum = 0;
	th->tcp_urp = 0;
	/* A RST for no connection has no options and opts NULL: memcpy
	 * wants valid pointers even for 0 bytes (C11 7.24.1p2). */
	if (optlen > 0)
		memcpy(th + 1, opts, optlen);
	m->l4_len = hlen;
	return m;
}

static uint32_t
tcp_phdr_sum(uint32_t src, uint32_t dst, uint32_t len)
{
	struct {
		uint32_t src, dst;
		uint8_t zero, proto;
		uint16_t len;
	} __rte_packed ph = { src, dst, 0, IPPROTO_TCP,
			      rte_cpu_to_be_16((uint16_t)len) };

	return rte_raw_cksum(&ph, sizeof(ph));
}

static int
tcp_xmit(struct tcp_stack *s, struct rte_mbuf *m, uint32_t dst)
{
	struct rte_tcp_hdr *th = rte_pktmbuf_mtod(m, struct rte_tcp_hdr *);
	uint32_t sum = tcp_phdr_sum(s->cfg.local_ip, dst,
			(m->ol_flags & RTE_MBUF_F_TX_TCP_SEG) ? 0 : m->pkt_len);
	uint16_t raw = 0;

	th->cksum = 0;
	if (s->cfg.tx_cksum_offload) {
		th->cksum = (uint16_t)sum;
		m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;
	} else {
		tcp_cksum_mbuf(m, 0, m->pkt_len, &raw);
		sum += raw;
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		th->cksum = (uint16_t)~sum;
	}
	s->stats.seg_out++;
	return s->cfg.output(s->cfg.output_arg, m, dst);
}

/* Reference [seq, seq+len) of the send queue from h, copying small runs
 * of our own buffers. Returns the bytes added: fewer than len when the
 * port's mbufs-per-packet limit is reached. */
static int
tcp_add_payload(struct tcp_conn *c, struct rte_mbuf *h, uint32_t seq,
		uint32_t len)
{
	uint32_t want = len;
	struct tcp_stack *s = c->stack;
	struct rte_mbuf *m, *last = h;
	uint32_t mseq, off;
	/* A port that sends one mbuf per frame (tx_max_segs 1): every
	 * payload byte is copied into h, the one copy that port forces. */
	bool flat = s->cfg.tx_max_segs == 1;

	/* Seek from the cursor when it is at or before seq. */
	if (c->sq_cur != NULL && SEQ_GEQ(seq, c->sq_cur_seq)) {
		m = c->sq_cur;
		mseq = c->sq_cur_seq;
	} else {
		m = c->sq_head;
		mseq = c->sq_seq;
	}
	while (m != NULL && SEQ_GEQ(seq, mseq + m->data_len)) {
		mseq += m->data_len;
		m = m->next;
	}
	off = seq - mseq;
	while (len > 0 && m != NULL) {
		uint32_t take = RTE_MIN(len, (uint32_t)m->data_len - off);

		c->sq_cur = m;
		c->sq_cur_seq = mseq;
		if (last == h && take <= rte_pktmbuf_tailroom(h) &&
		    (flat || (!RTE_MBUF_HAS_EXTBUF(m) &&
			      take <= TCP_COPY_MAX))) {
			void *dst = rte_pktmbuf_append(h, take);

			memcpy(dst, rte_pktmbuf_mtod_offset(m, void *, off),
			       take);
		} else {
			struct rte_mbuf *mi;

			if (h->nb_segs >= s->cfg.tx_max_segs)
				break;	/* the port's limit: send less */
			mi = rte_pktmbuf_alloc(s->cfg.pool);
			if (mi == NULL) {
				s->stats.drops[TCP_DROP_NOMEM]++;
				return -ENOMEM;
			}
			rte_pktmbuf_attach(mi, m);
			mi->data_off += off;
			mi->data_len = take;
			mi->pkt_len = take;
			last->next = mi;
			last = mi;
			h->nb_segs++;
			h->pkt_len += take;
		}
		len -= take;
		off = 0;
		mseq += m->data_len;
		m = m->next;
	}
	if (len == want)
		return m == NULL ? -EFAULT : -ENOMEM;
	return want - len;
}

/* After sending anything carrying our ACK. */
static void
tcp_acked_now(struct tcp_conn *c, uint32_t wnd)
{
	c->flags &= ~(TF_ACKNOW | TF_DELACK | TF_DSACK);
	c->delack_at = 0;
	c->segs_unacked = 0;
	c->last_ack_sent = c->rcv_nxt;
	if (SEQ_GT(c->rcv_nxt + wnd, c->rcv_adv))
		c->rcv_adv = c->rcv_nxt + wnd;
}

/* A segment of c was not sent. When the port only could not take it now
 * (tcp.h, tcp_output_fn), c sends again at the next poll, and the ACK the
 * segment carried is still owed. A RST is not repeated: its connection
 * is gone. */
static void
tcp_refused(struct tcp_conn *c, uint8_t flags, int rc)
{
	if ((rc != -ENOBUFS && rc != -ENOMEM) || (flags & TCP_F_RST))
		return;
	if (flags & TCP_F_ACK)
		c->flags |= TF_ACKNOW;
	tcp_txwait_add(c);
}

/* Send one segment of the connection: [seq, seq+len) of the queue, with
 * SYN/FIN/RST/ACK as asked. Returns the payload bytes sent (fewer than len
 * at the port's mbufs-per-packet limit; FIN then waits) or -errno when it
 * could not be built or the output callback refused it. */
int
tcp_send_segment(struct tcp_conn *c, uint32_t seq, uint32_t len,
		 uint8_t flags)
{
	struct tcp_stack *s = c->stack;
	uint8_t opts[40];
	uint16_t optlen, win;
	uint32_t ack = 0, wnd;
	struct rte_mbuf *m;
	int rc;

	if (flags & TCP_F_SYN)
		optlen = tcp_syn_opts(c, opts, s->mss, flags & TCP_F_ACK,
				      c->ts_recent);
	else
		optlen = tcp_opts_now(c, opts);
	wnd = tcp_rcv_window(c);
	if (flags & TCP_F_SYN)	/* never scaled (RFC 7323 §2.2) */
		win = RTE_MIN(wnd, 65535u);
	else
		win = RTE_MIN(wnd >> c->rcv_wscale, 65535u);
	if (flags & TCP_F_ACK)
		ack = c->rcv_nxt;
	m = tcp_hdr_mbuf(s, &c->key, seq, ack, flags, win, opts, optlen);
	if (m == NULL) {
		tcp_refused(c, flags, -ENOMEM);
		return -ENOMEM;
	}
	if (len > 0) {
		int n = tcp_add_payload(c, m, seq, len);

		if (n < 0) {
			rte_pktmbuf_free(m);
			tcp_refused(c, flags, n);
			return n;
		}
		if ((uint32_t)n < len) {	/* FIN/PSH belong to the end */
			rte_pktmbuf_mtod(m, struct rte_tcp_hdr *)->tcp_flags &=
				~(TCP_F_FIN | TCP_F_PSH);
			len = n;
		}
		if (len > (uint32_t)(c->mss - optlen)) {
			/* TSO: the port cuts it into MSS segments. */
			m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
			m->tso_segsz = c->mss - optlen;
		}
	}
	if (flags & TCP_F_ACK)
		tcp_acked_now(c, (flags & TCP_F_SYN) ? win :
			      (uint32_t)win << c->rcv_wscale);
	if (flags & TCP_F_RST)
		s->stats.resets_out++;
	s->stats.bytes_out += len;
	rc = tcp_xmit(s, m, c->key.rip);
	if (rc < 0) {
		tcp_refused(c, flags, rc);
		return rc;
	}
	return len;
}

/* A segment without data, SYN or FIN carries the next unsent sequence
 * (snd_max), not snd_nxt: after a go-back-N retransmission snd_nxt can
 * lie below what the peer already received, which would make our ACKs
 * unacceptable to it and stall both directions (as in BSD tcp_output). A
 * refused zero-window probe byte is not counted. */
int
tcp_send_ctl(struct tcp_conn *c, uint8_t flags)
{
	uint32_t seq = c->persist ? c->snd_nxt : c->snd_max;

	if (c->state == TCP_SYN_SENT)
		seq = c->iss + 1;
	return tcp_send_segment(c, seq, 0, flags);
}

/* RST or RST|ACK for a segment with no connection (RFC 9293 §3.10.7.1). */
int
tcp_send_rst_for(struct tcp_stack *s, const struct tcp_key *k, uint32_t seq,
		 uint32_t ack, uint8_t flags)
{
	struct rte_mbuf *m = tcp_hdr_mbuf(s, k, seq, ack, flags, 0, NULL, 0);

	if (m == NULL)
		return -ENOMEM;
	s->stats.resets_out++;
	return tcp_xmit(s, m, k->rip);
}

/* SYN-ACK carrying a cookie (RFC 4987 §3.6): no state is kept. The cookie
 * encodes the MSS; when the peer offered timestamps, the low 6 bits of our
 * TSval carry its window scale and SACK permission, echoed back in the
 * ACK's TSecr, so the connection keeps those options. */
int
tcp_send_synack_cookie(struct tcp_stack *s, const struct tcp_key *k,
		       uint32_t iss, uint32_t ack, const struct tcp_opts *o)
{
	const struct tcp_stack_config *cfg = &s->cfg;
	uint32_t wnd = RTE_MIN(cfg->rcv_buf, 65535u), v;
	uint8_t opts[40];
	uint16_t n = 0;
	struct rte_mbuf *m;

	opts[n++] = TCP_OPT_MSS;
	opts[n++] = 4;
	opts[n++] = s->mss >> 8;
	opts[n++] = s->mss & 0xff;
	if (o->has_ts && !cfg->no_timestamps) {
		bool sack = o->sack_ok && !cfg->no_sack;
		uint32_t ws = (o->has_ws && !cfg->no_wscale) ? o->ws : 0xf;

		v = tcp_cookie_tsval(s, ws | (sack ? 0x10 : 0));
		opts[n++] = sack ? TCP_OPT_SACK_PERM : TCP_OPT_NOP;
		opts[n++] = sack ? 2 : TCP_OPT_NOP;
		opts[n++] = TCP_OPT_TS;
		opts[n++] = 10;
		tcp_put32(opts + n, v);
		tcp_put32(opts + n + 4, o->tsval);
		n += 8;
		if (ws != 0xf) {
			opts[n++] = TCP_OPT_NOP;
			opts[n++] = TCP_OPT_WS;
			opts[n++] = 3;
			opts[n++] = tcp_wscale_for(cfg->rcv_buf);
		}
	}
	m = tcp_hdr_mbuf(s, k, iss, ack, TCP_F_SYN | TCP_F_ACK, wnd, opts, n);
	if (m == NULL)
		return -ENOMEM;
	s->stats.syncookies_sent++;
	return tcp_xmit(s, m, k->rip);
}

/* ---- send queue ---- */

void
tcp_sq_drop_acked(struct tcp_conn *c, uint32_t n)
{
	c->sq_bytes -= n;
	c->sq_seq += n;
	while (n > 0 && c->sq_head != NULL) {
		struct rte_mbuf *m = c->sq_head;

		if (n < m->data_len) {
			rte_pktmbuf_adj(m, n);
			if (c->sq_cur == m)
				c->sq_cur_seq += n;
			break;
		}
		n -= m->data_len;
		c->sq_head = m->next;
		if (c->sq_head == NULL)
			c->sq_tail = NULL;
		if (c->sq_cur == m)
			c->sq_cur = NULL;
		if (c->sq_copy == m)
			c->sq_copy = NULL;
		m->next = NULL;
		m->nb_segs = 1;
		m->pkt_len = m->data_len;
		rte_pktmbuf_free_seg(m);
	}
}

void
tcp_sq_free(struct tcp_conn *c)
{
	while (c->sq_head != NULL) {
		struct rte_mbuf *m = c->sq_head;

		c->sq_head = m->next;
		m->next = NULL;
		m->nb_segs = 1;
		m->pkt_len = m->data_len;
		rte_pktmbuf_free_seg(m);
	}
	c->sq_tail = NULL;
	c->sq_cur = NULL;
	c->sq_copy = NULL;
	c->sq_bytes = 0;
}

/* ---- timers ---- */

void
tcp_rearm_rto(struct tcp_conn *c)
{
	c->flags &= ~(TF_REO_TIMER | TF_TLP_TIMER);
	c->persist = 0;
	c->rto_at = c->stack->now + c->rto;
	tcp_timer_sched(c);
}

static void
tcp_rto_backoff(struct tcp_conn *c)
{
	uint64_t rto = (uint64_t)c->rto * 2;

	c->rto = RTE_MIN(rto, (uint64_t)c->stack->cfg.rto_max_us);
}

/* Persist (RFC 9293 §3.8.6.1): probe a zero window with one byte of new
 * data; snd_max covers it so the ACK that takes it is acceptable. */
static void
tcp_persist_probe(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;

	if (SEQ_LT(c->snd_nxt, c->snd_end)) {
		tcp_send_segment(c, c->snd_nxt, 1, TCP_F_ACK);
		if (SEQ_LT(c->snd_max, c->snd_nxt + 1))
			c->snd_max = c->snd_nxt + 1;
	} else {
		tcp_send_ctl(c, TCP_F_ACK);
	}
	c->persist = 1;
	tcp_rto_backoff(c);
	c->rto_at = s->now + c->rto;
}

static void
tcp_arm_persist(struct tcp_conn *c)
{
	if (c->rto_at != 0)
		return;
	c->persist = 1;
	c->rto_at = c->stack->now + c->rto;
	tcp_timer_sched(c);
}

int
tcp_rto_expired(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;
	unsigned int limit = s->cfg.max_retries;

	if (c->persist) {
		tcp_persist_probe(c);
		return 0;
	}
	if (c->flags & TF_TLP_TIMER) {
		c->flags &= ~TF_TLP_TIMER;
		if (tcp_tlp_fire(c))
			return 0;
	}
	if (c->flags & TF_REO_TIMER) {
		/* The reordering window passed with no ACK: the hole, or a
		 * retransmission that later data overtook, is lost (RFC
		 * 8985 §6.3 reordering timer). The RTO runs again first, so
		 * a run still waiting can file the timer earlier. */
		c->flags &= ~TF_REO_TIMER;
		tcp_rearm_rto(c);
		if ((c->flags & (TF_SACK | TF_RECOVERY)) == TF_SACK &&
		    tcp_hole_timed_out(c)) {
			tcp_enter_recovery(c);
			tcp_output(c);
		} else if ((c->flags & TF_RECOVERY) && tcp_rxt_check(c)) {
			tcp_output(c);
		}
		return 0;
	}
	if (c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED)
		limit = TCP_SYN_RETRIES;
	if (++c->retries > limit) {
		if (c->state != TCP_SYN_SENT)
			tcp_send_ctl(c, TCP_F_RST | TCP_F_ACK);
		tcp_conn_terminate(c, TCP_CLOSE_TIMEOUT);
		return -1;
	}
	s->stats.rto_expired++;
	tcp_rto_backoff(c);	/* RFC 6298 5.5 */
	c->flags &= ~TF_RTT_TIMING;	/* Karn */
	c->flags |= TF_BACKOFF;
	if (c->state == TCP_SYN_SENT) {
		tcp_send_segment(c, c->iss, 0, TCP_F_SYN);
		s->stats.retransmits++;
		tcp_rearm_rto(c);
		return 0;
	}
	if (c->state == TCP_SYN_RECEIVED) {
		tcp_send_segment(c, c->iss, 0, TCP_F_SYN | TCP_F_ACK);
		s->stats.retransmits++;
		tcp_rearm_rto(c);
		return 0;
	}
	tcp_cc_rto(c);
	/* The timeout ends a probe's episode; a D-SACK of its copy must not
	 * count as one for the retransmissions that follow (undo). */
	if ((c->flags & TF_TLP_OUT) && (c->flags & TF_TLP_RETRANS))
		c->undo_retrans++;
	tcp_tlp_end(c);
	c->dupacks = 0;
	c->recover = c->snd_max;
	c->nr_rxt = 0;		/* everything outstanding goes again */
	c->flags &= ~TF_RXT_CUT;
	if ((c->flags & TF_SACK) && c->retries == 1) {
		/* RFC 6675 §5.1: keep using the SACK information. Every
		 * un-SACKed byte is lost; they go again (holes only) as the
		 * slow-started cwnd allows, new data after them. */
		c->flags |= TF_RECOVERY | TF_RTO_LOSS;
		c->high_rxt = c->snd_una;
		tcp_output(c);
	} else {
		/* RFC 5681 §3.1 eq. 4, RFC 6582 §3.2 step 4: go back to
		 * snd_una. A repeated timeout also forgets the scoreboard:
		 * the peer may have reneged (RFC 2018 §8). */
		c->flags &= ~(TF_RECOVERY | TF_RTO_LOSS);
		c->nr_sacked = 0;
		c->snd_nxt = c->snd_una;
		c->sq_cur = NULL;
		tcp_output(c);
	}
	if (c->flags & TF_DEAD)
		return 0;
	if (c->rto_at == 0)
		tcp_rearm_rto(c);
	return 0;
}

/* ---- the send loop (SACK recovery's in tcp_sack.c) ---- */

uint16_t
tcp_seg_max(const struct tcp_conn *c)
{
	uint8_t opts[40];

	return c->mss - tcp_opts_now(c, opts);
}

static bool
tcp_fin_due(const struct tcp_conn *c, uint32_t seq, uint32_t len)
{
	return (c->flags & TF_FIN_QUEUED) && seq + len == c->snd_end;
}

/* Send one segment at snd_nxt of at most max bytes; returns bytes of
 * sequence space sent, 0 if nothing fits. */
uint32_t
tcp_output_one(struct tcp_conn *c, uint32_t usable, bool force)
{
	struct tcp_stack *s = c->stack;
	uint32_t avail = SEQ_LT(c->snd_nxt, c->snd_end) ?
			 c->snd_end - c->snd_nxt : 0;
	uint32_t len = RTE_MIN(avail, usable);
	uint16_t segmax = tcp_seg_max(c);
	uint32_t cap = RTE_MAX((uint32_t)segmax, s->cfg.tso_max);
	uint8_t flags = TCP_F_ACK;
	bool fin, new_data;
	int sent;

	if (len > cap)
		len = cap;
	fin = tcp_fin_due(c, c->snd_nxt, len) &&
	      SEQ_LEQ(c->snd_nxt, c->snd_end);
	if (len == 0 && !fin)
		return 0;
	/* Sender SWS avoidance (RFC 9293 §3.8.6.2.1): hold a window-limited
	 * runt while data is in flight, unless it is half the largest
	 * window the peer offered (Fs = 1/2). */
	if (!force && len < segmax && len < avail && tcp_flight(c) > 0 &&
	    len < c->max_snd_wnd / 2)
		return 0;
	if (fin)
		flags |= TCP_F_FIN;
	if (len > 0 && c->snd_nxt + len == c->snd_end)
		flags |= TCP_F_PSH;
	if (SEQ_LT(c->snd_nxt, c->snd_max)) {
		s->stats.retransmits++;
		c->undo_retrans++;
	} else if (!(c->flags & TF_RTT_TIMING) && len > 0) {
		c->flags |= TF_RTT_TIMING;
		c->rtt_seq = c->snd_nxt + len;
		c->rtt_start = s->now;
	}
	new_data = SEQ_GEQ(c->snd_nxt, c->snd_max);
	sent = tcp_send_segment(c, c->snd_nxt, len, flags);
	if (sent < 0) {
		/* Not sent: snd_nxt stays. The port only could not take it
		 * now: the next poll sends it (tcp_txwait_retry), and an RTO
		 * would count a segment that never left as lost. Otherwise
		 * make sure a timer brings us back. */
		if (c->rto_at == 0 && !c->on_txwait)
			tcp_rearm_rto(c);
		return 0;
	}
	if ((uint32_t)sent < len) {
		len = sent;
		fin = false;
		if (len == 0)
			return 0;
	}
	c->snd_nxt += len + (fin ? 1 : 0);
	if (fin)
		c->flags |= TF_FIN_SENT;
	if (SEQ_GT(c->snd_nxt, c->snd_max))
		c->snd_max = c->snd_nxt;
	if (c->rto_at == 0 || c->persist)
		tcp_rearm_rto(c);
	if (new_data)
		tcp_tlp_arm(c);		/* RFC 8985 §7.2 */
	return len + (fin ? 1 : 0);
}

int
tcp_output(struct tcp_conn *c)
{
	int sent = 0;

	if (c->flags & TF_DEAD)
		return 0;
	/* Connections wait for the port already: take a turn behind them.
	 * Sending now would take the room the port frees for those that
	 * happen to send first (the ones answered in this burst), and
	 * starve the queue. */
	if (c->stack->nr_txwait > 0 && !c->stack->in_txwait) {
		tcp_txwait_queue(c);
		return 0;
	}
	if (c->state < TCP_ESTABLISHED || c->state == TCP_TIME_WAIT)
		goto ack;
	if ((c->flags & (TF_RECOVERY | TF_SACK)) == (TF_RECOVERY | TF_SACK)) {
		sent = tcp_output_sack(c);
		goto ack;
	}
	for (;;) {
		/* RFC 3042 limited transmit: the first two duplicate ACKs
		 * each let one new segment out beyond cwnd. */
		uint32_t lt = (c->flags & TF_RECOVERY) ? 0 :
			      RTE_MIN(c->dupacks, (uint8_t)2) * c->mss;
		uint32_t wnd = RTE_MIN(c->snd_wnd, c->cwnd + lt);
		uint32_t flight = c->snd_nxt - c->snd_una;
		uint32_t usable = wnd > flight ? wnd - flight : 0;

		if (tcp_output_one(c, usable, false) == 0)
			break;
		sent++;
	}
	/* Zero window with data waiting and nothing in flight: probe. */
	if (c->snd_wnd == 0 && SEQ_LT(c->snd_nxt, c->snd_end) &&
	    tcp_flight(c) == 0)
		tcp_arm_persist(c);
ack:
	/* Waiting for the port: the retry brings the ACK. */
	if (sent == 0 && (c->flags & TF_ACKNOW) && !c->on_txwait)
		tcp_send_ctl(c, TCP_F_ACK);
	return sent;
}

/* tcp_txwait_retry: send what a refused segment of c would have sent. In
 * the handshake that is the SYN or SYN-ACK (every other segment of those
 * states is the ACK the SYN-ACK also carries); after it, whatever is due:
 * data, a FIN, retransmissions, or the owed ACK. */
void
tcp_output_again(struct tcp_conn *c)
{
	if (c->flags & TF_GONE)
		return;
	switch (c->state) {
	case TCP_SYN_SENT:
		tcp_send_segment(c, c->iss, 0, TCP_F_SYN);
		break;
	case TCP_SYN_RECEIVED:
		tcp_send_segment(c, c->iss, 0, TCP_F_SYN | TCP_F_ACK);
		break;
	case TCP_CLOSED:
	case TCP_LISTEN:
		break;
	default:
		tcp_output(c);
	}
}
