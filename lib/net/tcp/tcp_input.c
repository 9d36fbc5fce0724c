/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Segment arrival (RFC 9293 §3.10.7): validation, listen/SYN-SENT/
 * synchronized processing, ACK and window handling with loss recovery
 * (RFC 5681, 6582, 6675), reassembly, FIN and RST (RFC 5961). The ACK
 * is in tcp_ack.c, payload, reassembly and FIN in tcp_rcv.c, LISTEN,
 * SYN-SENT and TIME-WAIT in tcp_open.c. */

#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include "tcp_priv.h"
#include "tcp_cksum.h"

#define PAWS_IDLE_US (24ull * 24 * 3600 * 1000000)	/* RFC 7323 §5.5 */

static inline uint32_t
tcp_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return rte_be_to_cpu_32(v);
}

int
tcp_parse_opts(const struct rte_tcp_hdr *th, struct tcp_opts *o)
{
	const uint8_t *p = (const uint8_t *)(th + 1);
	int n = ((th->data_off >> 4) * 4) - (int)sizeof(*th);

	memset(o, 0, sizeof(*o));
	while (n > 0) {
		uint8_t kind = p[0], len;

		if (kind == TCP_OPT_EOL)
			break;
		if (kind == TCP_OPT_NOP) {
			p++, n--;
			continue;
		}
		if (n < 2 || p[1] < 2 || p[1] > n)
			return -EINVAL;
		len = p[1];
		switch (kind) {
		case TCP_OPT_MSS:
			if (len == 4 && (th->tcp_flags & TCP_F_SYN)) {
				o->has_mss = 1;
				o->mss = (p[2] << 8) | p[3];
			}
			break;
		case TCP_OPT_WS:
			if (len == 3 && (th->tcp_flags & TCP_F_SYN)) {
				o->has_ws = 1;
				o->ws = RTE_MIN(p[2], TCP_MAX_WSCALE);
			}
			break;
		case TCP_OPT_SACK_PERM:
			if (len == 2 && (th->tcp_flags & TCP_F_SYN))
				o->sack_ok = 1;
			break;
		case TCP_OPT_TS:
			if (len == 10) {
				o->has_ts = 1;
				o->tsval = tcp_get32(p + 2);
				o->tsecr = tcp_get32(p + 6);
			}
			break;
		case TCP_OPT_SACK:
			if (len >= 10 && (len - 2) % 8 == 0) {
				int i, nb = (len - 2) / 8;

				for (i = 0; i < nb && i < TCP_MAX_SACK; i++) {
					o->sack[i].start =
						tcp_get32(p + 2 + 8 * i);
					o->sack[i].end =
						tcp_get32(p + 6 + 8 * i);
				}
				o->nr_sack = i;
			}
			break;
		}
		p += len, n -= len;
	}
	return 0;
}

/* ---- synchronized states ---- */

static bool
tcp_seq_acceptable(const struct tcp_conn *c, uint32_t seq, uint32_t len)
{
	uint32_t wnd = SEQ_GT(c->rcv_adv, c->rcv_nxt) ?
		       c->rcv_adv - c->rcv_nxt : 0;

	if (len == 0) {
		if (wnd == 0)
			return seq == c->rcv_nxt;
		return SEQ_LEQ(c->rcv_nxt, seq) &&
		       SEQ_LT(seq, c->rcv_nxt + wnd);
	}
	if (wnd == 0)
		return false;
	return (SEQ_LEQ(c->rcv_nxt, seq) && SEQ_LT(seq, c->rcv_nxt + wnd)) ||
	       (SEQ_LEQ(c->rcv_nxt, seq + len - 1) &&
		SEQ_LT(seq + len - 1, c->rcv_nxt + wnd));
}

/* Returned by a step of tcp_input_sync() when the segment goes on to the
 * next step; any other value is what tcp_input_sync() returns. */
#define TCP_IN_NEXT 1

/* RFC 7323 §5.3 (R1): PAWS. */
static int
tcp_sync_paws(struct tcp_conn *c, struct tcp_seg *g)
{
	struct tcp_stack *s = c->stack;

	/* PAWS (RFC 7323 §5.3 R1), tolerating one RTT of the peer's clock
	 * (taken as 1 ms ticks): a segment the network reordered behind a
	 * retransmission carries an older TSval than TS.Recent but is new
	 * data, and losing it costs the peer another retransmission. A
	 * wrapped sequence number needs 2^31 bytes, far more than one
	 * window can carry in one RTT. */
	if ((c->flags & TF_TS) && g->o.has_ts && !(g->flags & TCP_F_RST) &&
	    (int32_t)(g->o.tsval - c->ts_recent) <
	    -(int32_t)(c->srtt / 1000 + 1) &&
	    s->now - c->ts_recent_age < PAWS_IDLE_US) {
		tcp_send_ctl(c, TCP_F_ACK);
		tcp_drop(s, g->m, TCP_DROP_PAWS);
		return -EINVAL;
	}
	return TCP_IN_NEXT;
}

/* RFC 9293 §3.5 (figure 8), §3.10.7.4: the peer's SYN again in
 * SYN-RECEIVED. */
static int
tcp_syn_rcvd_syn(struct tcp_conn *c, struct tcp_seg *g)
{
	if (c->state == TCP_SYN_RECEIVED && (g->flags & TCP_F_SYN) &&
	    !(g->flags & TCP_F_ACK) && g->seq == c->irs) {
		/* Our SYN-ACK was lost: repeat it. */
		tcp_send_segment(c, c->iss, 0, TCP_F_SYN | TCP_F_ACK);
		rte_pktmbuf_free(g->m);
		return 0;
	}
	if (c->state == TCP_SYN_RECEIVED && (c->flags & TF_ACTIVE) &&
	    (g->flags & (TCP_F_SYN | TCP_F_ACK | TCP_F_RST)) ==
	    (TCP_F_SYN | TCP_F_ACK) && g->seq == c->irs &&
	    g->ack == c->snd_max) {
		/* Simultaneous open (RFC 9293 §3.5 figure 8): the peer's
		 * SYN-ACK acknowledges our SYN; its SYN is the one we have.
		 * Taken as the ACK that completes the open (Linux makes the
		 * same exception to RFC 5961 §4.2). */
		g->flags &= ~TCP_F_SYN;
		g->seq++;
	}
	return TCP_IN_NEXT;
}

/* RFC 9293 §3.10.7.4, first check: sequence number; RFC 2883 D-SACK
 * of a duplicate. */
static int
tcp_sync_check_seq(struct tcp_conn *c, struct tcp_seg *g)
{
	if (!tcp_seq_acceptable(c, g->seq, g->len +
				!!(g->flags & TCP_F_FIN))) {
		if ((c->flags & TF_SACK) && g->len > 0 &&
		    SEQ_LT(g->seq, c->rcv_nxt)) {	/* RFC 2883 */
			c->dsack.start = g->seq;
			c->dsack.end = SEQ_MIN(g->seq + g->len, c->rcv_nxt);
			c->flags |= TF_DSACK;
		}
		if (!(g->flags & TCP_F_RST))
			tcp_send_ctl(c, TCP_F_ACK);
		tcp_drop(c->stack, g->m, TCP_DROP_OUT_OF_WINDOW);
		return -EINVAL;
	}
	return TCP_IN_NEXT;
}

/* RFC 9293 §3.10.7.4, second, fourth and fifth checks: RST (RFC 5961
 * §3.2), SYN (RFC 5961 §4.2), ACK bit off. */
static int
tcp_sync_check_flags(struct tcp_conn *c, struct tcp_seg *g)
{
	struct tcp_stack *s = c->stack;

	if (g->flags & TCP_F_RST) {	/* RFC 5961 §3.2 */
		rte_pktmbuf_free(g->m);
		if (g->seq == c->rcv_nxt) {
			s->stats.resets_in++;
			tcp_conn_terminate(c, TCP_CLOSE_RESET);
			return 0;
		}
		s->stats.drops[TCP_DROP_RST_INVALID]++;
		tcp_challenge_ack(c);
		return -EINVAL;
	}
	if (g->flags & TCP_F_SYN) {	/* RFC 5961 §4.2 */
		tcp_challenge_ack(c);
		rte_pktmbuf_free(g->m);
		return 0;
	}
	if (!(g->flags & TCP_F_ACK)) {
		rte_pktmbuf_free(g->m);
		return 0;
	}
	return TCP_IN_NEXT;
}

/* RFC 9293 §3.10.7.4, fifth check in SYN-RECEIVED: the open is done;
 * tell the app (l: the listener, read before the state changed). False
 * if the connection is gone. */
static bool
tcp_syn_rcvd_open(struct tcp_conn *c, struct tcp_listener *l)
{
	if (c->flags & TF_ACTIVE) {
		/* Simultaneous open: ours, no listener involved. */
		if (c->ops != NULL && c->ops->connected != NULL &&
		    tcp_cb_enter(c)) {
			c->ops->connected(c->arg, c);
			if (!tcp_cb_leave(c))
				return false;
		}
		return true;
	}
	return tcp_accept(c, l);
}

/* RFC 9293 §3.10.7.4, fifth check in SYN-RECEIVED: the ACK of our
 * SYN-ACK (RFC 6298 §2 for the RTT sample). */
static int
tcp_syn_rcvd_ack(struct tcp_conn *c, struct tcp_seg *g)
{
	struct tcp_stack *s = c->stack;
	struct tcp_listener *l = c->listener;

	if (SEQ_LEQ(g->ack, c->snd_una) ||
	    SEQ_GT(g->ack, c->snd_max)) {
		tcp_send_rst_for(s, &c->key, g->ack, 0, TCP_F_RST);
		tcp_drop(s, g->m, TCP_DROP_BAD_ACK);
		return -EINVAL;
	}
	c->snd_una = g->ack;
	c->snd_wnd = g->win << c->snd_wscale;
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = g->seq;
	c->snd_wl2 = g->ack;
	if (c->retries == 0)
		tcp_rtt_sample(c, (uint32_t)(s->now -
					     (c->rto_at - c->rto)));
	c->retries = 0;
	c->rto_at = 0;
	tcp_established(c);
	if (!tcp_syn_rcvd_open(c, l)) {
		rte_pktmbuf_free(g->m);
		return 0;
	}
	return TCP_IN_NEXT;
}

/* RFC 9293 §3.10.7.4, fifth check: our FIN acknowledged in FIN-WAIT-1,
 * CLOSING or LAST-ACK. */
static int
tcp_sync_fin_acked(struct tcp_conn *c, struct tcp_seg *g)
{
	struct tcp_stack *s = c->stack;

	if (tcp_fin_acked(c)) {
		switch (c->state) {
		case TCP_FIN_WAIT_1:
			tcp_conn_set_state(c, TCP_FIN_WAIT_2);
			if ((c->flags & TF_APP_CLOSED) &&
			    c->idle_at > s->now + s->cfg.time_wait_us)
				c->idle_at = s->now + s->cfg.time_wait_us;
			break;
		case TCP_CLOSING:
			rte_pktmbuf_free(g->m);
			tcp_enter_time_wait(c);
			return 0;
		case TCP_LAST_ACK:
			rte_pktmbuf_free(g->m);
			tcp_conn_terminate(c, TCP_CLOSE_NORMAL);
			return 0;
		}
	}
	return TCP_IN_NEXT;
}

/* RFC 9293 §3.10.7.4, seventh and eighth steps: segment text and FIN.
 * False if the connection is gone. */
static bool
tcp_sync_text(struct tcp_conn *c, struct tcp_seg *g)
{
	switch (c->state) {
	case TCP_ESTABLISHED:
	case TCP_FIN_WAIT_1:
	case TCP_FIN_WAIT_2:
		if (!tcp_data_in(c, g))
			return false;
		break;
	default:
		/* Peer already sent FIN: only repeat our ACK for a resent
		 * one (RFC 9293 §3.10.7.4, eighth step). */
		if (g->flags & TCP_F_FIN)
			c->flags |= TF_ACKNOW;
		rte_pktmbuf_free(g->m);
		break;
	}
	return true;
}

/* Segment arrival in a synchronized state or SYN-RECEIVED (RFC 9293
 * §3.10.7.4), its steps in order. */
int
tcp_input_sync(struct tcp_conn *c, struct tcp_seg *g)
{
	struct tcp_stack *s = c->stack;
	int rc;

	rc = tcp_sync_paws(c, g);
	if (rc != TCP_IN_NEXT)
		return rc;
	rc = tcp_syn_rcvd_syn(c, g);
	if (rc != TCP_IN_NEXT)
		return rc;
	rc = tcp_sync_check_seq(c, g);
	if (rc != TCP_IN_NEXT)
		return rc;
	/* RFC 7323 §4.3 (R3): remember the timestamp to echo. */
	if ((c->flags & TF_TS) && g->o.has_ts &&
	    SEQ_LEQ(g->seq, c->last_ack_sent)) {
		c->ts_recent = g->o.tsval;
		c->ts_recent_age = s->now;
	}
	c->last_rx = s->now;
	rc = tcp_sync_check_flags(c, g);
	if (rc != TCP_IN_NEXT)
		return rc;
	if (c->state == TCP_SYN_RECEIVED) {
		rc = tcp_syn_rcvd_ack(c, g);
		if (rc != TCP_IN_NEXT)
			return rc;
	}
	rc = tcp_ack(c, g);
	if (rc == -2) {
		rte_pktmbuf_free(g->m);
		return 0;
	}
	if (rc < 0) {
		rte_pktmbuf_free(g->m);
		return -EINVAL;
	}
	rc = tcp_sync_fin_acked(c, g);
	if (rc != TCP_IN_NEXT)
		return rc;
	if (!tcp_sync_text(c, g))
		return 0;
	tcp_output(c);
	if ((c->flags & TF_DELACK) && c->delack_at == 0)
		c->delack_at = s->now + s->cfg.delack_us;
	tcp_timer_sched(c);
	return 0;
}

int
tcp_input(struct tcp_stack *s, struct rte_mbuf *m, uint32_t src_ip_be,
	  uint32_t dst_ip_be, uint64_t now)
{
	const struct rte_tcp_hdr *th;
	struct tcp_seg g;
	struct tcp_key k;
	struct tcp_conn *c;
	uint64_t ck = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	void *data;

	if (now > s->now)
		s->now = now;
	s->stats.seg_in++;
	if (m->pkt_len < sizeof(*th) || m->data_len < sizeof(*th)) {
		tcp_drop(s, m, TCP_DROP_SHORT);
		return -EINVAL;
	}
	th = rte_pktmbuf_mtod(m, const struct rte_tcp_hdr *);
	g.hlen = (th->data_off >> 4) * 4;
	if (g.hlen < sizeof(*th) || g.hlen > m->data_len) {
		tcp_drop(s, m, TCP_DROP_SHORT);
		return -EINVAL;
	}
	if (ck == RTE_MBUF_F_RX_L4_CKSUM_BAD) {
		tcp_drop(s, m, TCP_DROP_CKSUM);
		return -EINVAL;
	}
	if (ck != RTE_MBUF_F_RX_L4_CKSUM_GOOD) {
		struct {
			uint32_t src, dst;
			uint8_t zero, proto;
			uint16_t len;
		} __rte_packed ph = { src_ip_be, dst_ip_be, 0, IPPROTO_TCP,
				      rte_cpu_to_be_16((uint16_t)m->pkt_len) };
		uint16_t raw = 0;
		uint32_t sum;

		tcp_cksum_mbuf(m, 0, m->pkt_len, &raw);
		sum = (uint32_t)raw + rte_raw_cksum(&ph, sizeof(ph));
		sum = (sum & 0xffff) + (sum >> 16);
		if (sum != 0xffff) {
			tcp_drop(s, m, TCP_DROP_CKSUM);
			return -EINVAL;
		}
	}
	if (tcp_parse_opts(th, &g.o) < 0) {
		tcp_drop(s, m, TCP_DROP_SHORT);
		return -EINVAL;
	}
	g.m = m;
	g.seq = rte_be_to_cpu_32(th->sent_seq);
	g.ack = rte_be_to_cpu_32(th->recv_ack);
	g.win = rte_be_to_cpu_16(th->rx_win);
	g.flags = th->tcp_flags;
	g.len = m->pkt_len - g.hlen;
	k.rip = src_ip_be;
	k.lip = dst_ip_be;
	k.rport = th->src_port;
	k.lport = th->dst_port;

	if (rte_hash_lookup_data(s->conns, &k, &data) < 0)
		return tcp_input_listen(s, &k, &g);
	c = data;
	s->stats.seg_conn++;
	if (c->flags & TF_DEAD) {
		rte_pktmbuf_free(m);
		return 0;
	}
	switch (c->state) {
	case TCP_TIME_WAIT:
		return tcp_input_tw(c, &k, &g);
	case TCP_SYN_SENT:
		return tcp_input_syn_sent(c, &g);
	default:
		return tcp_input_sync(c, &g);
	}
}
