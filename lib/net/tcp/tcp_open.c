/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Opening and the end of a connection's life on input: LISTEN with SYN
 * cookies (RFC 9293 §3.10.7.2, RFC 4987), SYN-SENT (§3.10.7.3), option
 * negotiation (RFC 7323, RFC 2018), and TIME-WAIT. */

#include <errno.h>

#include <rte_byteorder.h>

#include "tcp_priv.h"

/* Negotiate options of a SYN (RFC 7323 §1.3, RFC 2018 §2, RFC 9293
 * §3.7.1): what we offer (c->flags) and the peer sent. */
static void
tcp_syn_options(struct tcp_conn *c, const struct tcp_opts *o)
{
	struct tcp_stack *s = c->stack;
	uint16_t peer = o->has_mss ? o->mss : TCP_DEFAULT_MSS;

	c->mss = RTE_MAX(RTE_MIN(peer, s->mss), (uint16_t)64);
	if ((c->flags & TF_WS) && o->has_ws) {
		c->snd_wscale = o->ws;
	} else {
		c->flags &= ~TF_WS;
		c->snd_wscale = 0;
		c->rcv_wscale = 0;
	}
	if (!o->sack_ok)
		c->flags &= ~TF_SACK;
	if ((c->flags & TF_TS) && o->has_ts) {
		c->ts_recent = o->tsval;
		c->ts_recent_age = s->now;
	} else {
		c->flags &= ~TF_TS;
	}
}

void
tcp_offer_options(struct tcp_conn *c)
{
	const struct tcp_stack_config *cfg = &c->stack->cfg;

	if (!cfg->no_wscale) {
		c->flags |= TF_WS;
		c->rcv_wscale = tcp_wscale_for(cfg->rcv_buf);
	}
	if (!cfg->no_sack)
		c->flags |= TF_SACK;
	if (!cfg->no_timestamps)
		c->flags |= TF_TS;
}

/* Deliver in-order payload m (len bytes). False if the conn died. */
/* ---- LISTEN (RFC 9293 §3.10.7.2) and SYN cookies ---- */

static void
tcp_rst_reply(struct tcp_stack *s, const struct tcp_key *k,
	      const struct tcp_seg *g)
{
	if (g->flags & TCP_F_RST)
		return;
	if (g->flags & TCP_F_ACK)
		tcp_send_rst_for(s, k, g->ack, 0, TCP_F_RST);
	else
		tcp_send_rst_for(s, k, 0, g->seq + g->len +
				 !!(g->flags & TCP_F_SYN) +
				 !!(g->flags & TCP_F_FIN),
				 TCP_F_RST | TCP_F_ACK);
}

/* Passive open done: hand the connection to the app. */
bool
tcp_accept(struct tcp_conn *c, struct tcp_listener *l)
{
	void *carg;
	int rc = 0;

	if (l == NULL) {	/* listener went away */
		tcp_send_ctl(c, TCP_F_RST | TCP_F_ACK);
		tcp_conn_free(c);
		return false;
	}
	carg = l->arg;
	c->stack->stats.passive_opens++;
	if (l->ops->accepted != NULL) {
		c->flags |= TF_IN_CB;
		rc = l->ops->accepted(l->arg, c, &carg);
		if (!tcp_cb_leave(c))
			return false;
	}
	if (rc < 0) {
		tcp_send_ctl(c, TCP_F_RST | TCP_F_ACK);
		tcp_conn_free(c);
		return false;
	}
	c->ops = l->ops;
	c->arg = carg;
	return true;
}

static struct tcp_conn *
tcp_passive_conn(struct tcp_stack *s, const struct tcp_key *k, uint32_t irs,
		 uint32_t iss)
{
	struct tcp_conn *c = tcp_conn_alloc(s, k);

	if (c == NULL) {
		s->stats.drops[TCP_DROP_NOMEM]++;
		return NULL;
	}
	c->irs = irs;
	c->rcv_nxt = irs + 1;
	c->last_ack_sent = c->rcv_nxt;
	c->rcv_adv = c->rcv_nxt;
	c->iss = iss;
	c->snd_una = iss;
	c->snd_nxt = iss + 1;
	c->snd_max = iss + 1;
	c->snd_end = iss + 1;
	c->sq_seq = iss + 1;
	c->recover = iss;
	c->snd_wl1 = irs;
	c->snd_wl2 = iss;
	return c;
}

/* RFC 7323 §2-3, RFC 2018 §2 for a connection made from a SYN cookie
 * (RFC 4987 §3.6): timestamps, SACK and window scale. */
static void
tcp_cookie_options(struct tcp_conn *c, const struct tcp_seg *g)
{
	struct tcp_stack *s = c->stack;

	if (g->o.has_ts && g->o.tsecr != 0 && !s->cfg.no_timestamps) {
		/* Options the cookie's TSval carried (see
		 * tcp_send_synack_cookie). */
		uint32_t b = g->o.tsecr & 0x3f;

		c->flags |= TF_TS;
		c->ts_recent = g->o.tsval;
		c->ts_recent_age = s->now;
		c->ts_offset = g->o.tsecr - (uint32_t)(s->now / 1000) + 64;
		if (b & 0x10)
			c->flags |= TF_SACK;
		if ((b & 0xf) != 0xf) {
			c->flags |= TF_WS;
			c->snd_wscale = RTE_MIN(b & 0xf,
						(uint32_t)TCP_MAX_WSCALE);
			c->rcv_wscale = tcp_wscale_for(s->cfg.rcv_buf);
		}
	}
}

/* RFC 4987 §3.6, RFC 9293 §3.10.7.2: an ACK in LISTEN, maybe the third
 * segment of a cookie handshake; a valid one opens the connection. */
static int
tcp_listen_cookie_ack(struct tcp_stack *s, const struct tcp_key *k,
		      struct tcp_listener *l, struct tcp_seg *g)
{
	struct tcp_conn *c;
	uint16_t mss;

	/* No cookie sent lately: no cookie handshake to complete, the ACK
	 * is one for no connection like any other (Linux: no
	 * SYNCOOKIESFAILED count, a RST). */
	if (!tcp_cookie_recent(s, l)) {
		tcp_rst_reply(s, k, g);
		tcp_drop(s, g->m, TCP_DROP_NO_CONN);
		return -ENOTCONN;
	}
	/* Maybe the third segment of a cookie handshake. */
	if (tcp_cookie_check(s, k, g->seq - 1, g->ack - 1, &mss) < 0) {
		tcp_rst_reply(s, k, g);
		tcp_drop(s, g->m, TCP_DROP_COOKIE);
		return -ENOTCONN;
	}
	if (s->nr_conns >= s->cfg.max_conns) {
		tcp_drop(s, g->m, TCP_DROP_CONN_LIMIT);
		return -EMFILE;
	}
	c = tcp_passive_conn(s, k, g->seq - 1, g->ack - 1);
	if (c == NULL) {
		rte_pktmbuf_free(g->m);
		return -ENOMEM;
	}
	s->stats.syncookies_ok++;
	c->flags |= TF_COOKIE;
	c->mss = RTE_MIN(mss, s->mss);
	tcp_cookie_options(c, g);
	c->snd_wnd = g->win << c->snd_wscale;
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = g->seq;
	c->snd_wl2 = g->ack;
	c->snd_una = g->ack;
	c->rcv_adv = c->rcv_nxt + RTE_MIN(s->cfg.rcv_buf, 65535u);
	tcp_cc_init(c);
	tcp_conn_set_state(c, TCP_ESTABLISHED);
	if (!tcp_accept(c, l)) {
		rte_pktmbuf_free(g->m);
		return 0;
	}
	return tcp_input_sync(c, g);
}

/* RFC 9293 §3.10.7.2 (third check): a SYN in LISTEN; with the backlog
 * full a cookie answers it statelessly (RFC 4987 §3.6). */
static int
tcp_listen_syn(struct tcp_stack *s, const struct tcp_key *k,
	       struct tcp_listener *l, struct tcp_seg *g)
{
	struct tcp_conn *c;
	uint16_t mss;

	if (l->syn_rcvd >= l->backlog) {
		/* Backlog full: answer statelessly (RFC 4987 §3.6). */
		mss = g->o.has_mss ? RTE_MIN(g->o.mss, s->mss) : TCP_DEFAULT_MSS;
		tcp_cookie_sent(s, l);
		tcp_send_synack_cookie(s, k, tcp_cookie_make(s, k, g->seq, mss),
				       g->seq + 1, &g->o);
		s->stats.drops[TCP_DROP_BACKLOG]++;
		rte_pktmbuf_free(g->m);
		return 0;
	}
	c = tcp_passive_conn(s, k, g->seq, tcp_isn(s, k));
	if (c == NULL) {
		rte_pktmbuf_free(g->m);
		return -ENOMEM;
	}
	tcp_offer_options(c);
	tcp_syn_options(c, &g->o);
	c->snd_wnd = g->win;	/* a SYN's window is never scaled */
	c->max_snd_wnd = g->win;
	c->listener = l;
	l->syn_rcvd++;
	tcp_conn_set_state(c, TCP_SYN_RECEIVED);
	tcp_cc_init(c);
	tcp_send_segment(c, c->iss, 0, TCP_F_SYN | TCP_F_ACK);
	tcp_rearm_rto(c);
	rte_pktmbuf_free(g->m);	/* data on a SYN is not kept */
	return 0;
}

/* Segment arrival for no connection: LISTEN or CLOSED (RFC 9293
 * §3.10.7.1-2). */
int
tcp_input_listen(struct tcp_stack *s, const struct tcp_key *k,
		 struct tcp_seg *g)
{
	struct tcp_listener *l = tcp_listener_find(s,
					rte_be_to_cpu_16(k->lport));

	if (g->flags & TCP_F_RST) {
		tcp_drop(s, g->m, TCP_DROP_NO_CONN);
		return -ENOTCONN;
	}
	if (l == NULL) {
		tcp_rst_reply(s, k, g);
		tcp_drop(s, g->m, TCP_DROP_NO_CONN);
		return -ENOTCONN;
	}
	if ((g->flags & (TCP_F_SYN | TCP_F_ACK)) == TCP_F_ACK)
		return tcp_listen_cookie_ack(s, k, l, g);
	if ((g->flags & (TCP_F_SYN | TCP_F_ACK | TCP_F_FIN)) != TCP_F_SYN) {
		tcp_drop(s, g->m, TCP_DROP_NO_CONN);
		return -ENOTCONN;
	}
	if (s->nr_conns >= s->cfg.max_conns) {
		tcp_drop(s, g->m, TCP_DROP_CONN_LIMIT);
		return -EMFILE;
	}
	return tcp_listen_syn(s, k, l, g);
}

/* ---- SYN-SENT (RFC 9293 §3.10.7.3) ---- */

int
tcp_input_syn_sent(struct tcp_conn *c, struct tcp_seg *g)
{
	struct tcp_stack *s = c->stack;
	bool ack_ok = false;

	if (g->flags & TCP_F_ACK) {
		if (SEQ_LEQ(g->ack, c->iss) || SEQ_GT(g->ack, c->snd_max)) {
			if (!(g->flags & TCP_F_RST))
				tcp_send_rst_for(s, &c->key, g->ack, 0,
						 TCP_F_RST);
			tcp_drop(s, g->m, TCP_DROP_BAD_ACK);
			return -EINVAL;
		}
		ack_ok = true;
	}
	if (g->flags & TCP_F_RST) {
		rte_pktmbuf_free(g->m);
		if (ack_ok) {
			s->stats.resets_in++;
			tcp_conn_terminate(c, TCP_CLOSE_REFUSED);
			return 0;
		}
		s->stats.drops[TCP_DROP_RST_INVALID]++;
		return -EINVAL;
	}
	if (!(g->flags & TCP_F_SYN)) {
		tcp_drop(s, g->m, TCP_DROP_NO_CONN);
		return -EINVAL;
	}
	rte_pktmbuf_free(g->m);
	c->irs = g->seq;
	c->rcv_nxt = g->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	tcp_syn_options(c, &g->o);
	c->snd_wnd = g->win;
	c->max_snd_wnd = g->win;
	c->snd_wl1 = g->seq;
	c->snd_wl2 = g->ack;
	tcp_cc_init(c);
	if (!ack_ok) {	/* simultaneous open */
		tcp_conn_set_state(c, TCP_SYN_RECEIVED);
		tcp_send_segment(c, c->iss, 0, TCP_F_SYN | TCP_F_ACK);
		tcp_rearm_rto(c);
		return 0;
	}
	c->snd_una = g->ack;
	if (c->retries == 0)
		tcp_rtt_sample(c, (uint32_t)(s->now - (c->rto_at - c->rto)));
	c->retries = 0;
	c->rto_at = 0;
	tcp_established(c);
	c->flags |= TF_ACKNOW;
	if (c->ops != NULL && c->ops->connected != NULL && tcp_cb_enter(c)) {
		c->ops->connected(c->arg, c);
		if (!tcp_cb_leave(c))
			return 0;
	}
	tcp_output(c);
	tcp_timer_sched(c);
	return 0;
}

/* ---- TIME-WAIT ---- */

int
tcp_input_tw(struct tcp_conn *c, const struct tcp_key *k, struct tcp_seg *g)
{
	struct tcp_stack *s = c->stack;

	if (g->flags & TCP_F_RST) {	/* RFC 1337: ignore */
		rte_pktmbuf_free(g->m);
		return 0;
	}
	if ((g->flags & (TCP_F_SYN | TCP_F_ACK)) == TCP_F_SYN &&
	    SEQ_GT(g->seq, c->rcv_nxt)) {
		/* A new incarnation may reuse the pair (RFC 9293 §3.6.1). */
		tcp_conn_free(c);
		return tcp_input_listen(s, k, g);
	}
	if (g->flags & TCP_F_FIN) {
		/* The peer did not get our last ACK: repeat, restart 2MSL. */
		tcp_send_ctl(c, TCP_F_ACK);
		c->idle_at = s->now + s->cfg.time_wait_us;
		tcp_timer_sched(c);
	} else if (g->len > 0) {
		/* An old retransmission (our last ACK was lost): ACK it,
		 * as for any unacceptable segment (RFC 9293 §3.10.7.4). */
		tcp_send_ctl(c, TCP_F_ACK);
	}
	rte_pktmbuf_free(g->m);
	return 0;
}

