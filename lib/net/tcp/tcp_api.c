/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Application calls on a connection: queueing data (copied or by
 * reference), flushing, half-close, close, abort, receive flow control. */

#include <errno.h>
#include <string.h>

#include <rte_memory.h>

#include "tcp_priv.h"

/* Bytes of an application buffer per extbuf mbuf (buf_len is 16 bits). */
#define TCP_EXT_CHUNK 32768

static bool
tcp_can_send(const struct tcp_conn *c)
{
	if (c->flags & (TF_FIN_QUEUED | TF_APP_CLOSED | TF_GONE))
		return false;
	switch (c->state) {
	case TCP_SYN_SENT:
	case TCP_SYN_RECEIVED:
	case TCP_ESTABLISHED:
	case TCP_CLOSE_WAIT:
		return true;
	default:
		return false;
	}
}

uint32_t
tcp_send_space(const struct tcp_conn *c)
{
	uint32_t lim = c->stack->cfg.snd_buf;

	return c->sq_bytes < lim ? lim - c->sq_bytes : 0;
}

static void
tcp_sq_append(struct tcp_conn *c, struct rte_mbuf *m)
{
	m->next = NULL;
	if (c->sq_tail != NULL)
		c->sq_tail->next = m;
	else
		c->sq_head = m;
	c->sq_tail = m;
}

int
tcp_send(struct tcp_conn *c, const void *data, uint32_t len)
{
	struct tcp_stack *s = c->stack;
	const uint8_t *p = data;
	uint32_t n, done = 0;
	struct rte_mbuf *t = c->sq_tail;

	if (!tcp_can_send(c))
		return -EPIPE;
	n = RTE_MIN(len, tcp_send_space(c));
	/* Fill the tail copy buffer first (only one tcp_send allocated:
	 * an app's mbuf may be shared). */
	if (t != NULL && t == c->sq_copy && rte_pktmbuf_tailroom(t) > 0) {
		uint32_t k = RTE_MIN(n, (uint32_t)rte_pktmbuf_tailroom(t));

		memcpy(rte_pktmbuf_mtod_offset(t, uint8_t *, t->data_len),
		       p, k);
		t->data_len += k;
		t->pkt_len += k;
		done = k;
	}
	while (done < n) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(s->cfg.pool);
		uint32_t k;

		if (m == NULL)
			break;
		m->data_off = 0;	/* never sent itself: no headroom */
		k = RTE_MIN(n - done, (uint32_t)rte_pktmbuf_tailroom(m));
		memcpy(rte_pktmbuf_mtod(m, uint8_t *), p + done, k);
		m->data_len = k;
		m->pkt_len = k;
		tcp_sq_append(c, m);
		c->sq_copy = m;
		done += k;
	}
	c->snd_end += done;
	c->sq_bytes += done;
	if (done == 0 && n > 0)
		return -ENOMEM;
	return done;
}

int
tcp_send_mbuf(struct tcp_conn *c, struct rte_mbuf *m)
{
	uint32_t total = m->pkt_len;

	if (!tcp_can_send(c))
		return -EPIPE;
	if (total > tcp_send_space(c))
		return -ENOBUFS;
	/* Each segment joins the queue on its own; empty ones go. */
	while (m != NULL) {
		struct rte_mbuf *nx = m->next;

		m->next = NULL;
		m->nb_segs = 1;
		m->pkt_len = m->data_len;
		if (m->data_len == 0)
			rte_pktmbuf_free_seg(m);
		else
			tcp_sq_append(c, m);
		m = nx;
	}
	c->snd_end += total;
	c->sq_bytes += total;
	return 0;
}

static void
tcp_ext_free(void *addr, void *opaque)
{
	struct tcp_ext *x = opaque;

	RTE_SET_USED(addr);
	x->release(x->arg);
	rte_mempool_put(x->pool, x);
}

int
tcp_send_iov(struct tcp_conn *c, const struct iovec *iov, int cnt,
	     tcp_release_fn release, void *arg)
{
	struct tcp_stack *s = c->stack;
	struct rte_mbuf *first = NULL, *last = NULL, *m;
	struct tcp_ext *x;
	uint64_t total = 0;
	uint32_t pieces = 0;
	int i;

	if (!tcp_can_send(c))
		return -EPIPE;
	for (i = 0; i < cnt; i++) {
		total += iov[i].iov_len;
		pieces += (iov[i].iov_len + TCP_EXT_CHUNK - 1) / TCP_EXT_CHUNK;
	}
	if (total > tcp_send_space(c))
		return -ENOBUFS;
	if (total == 0) {
		if (release != NULL)
			release(arg);
		return 0;
	}
	if (rte_mempool_get(s->ext_pool, (void **)&x) < 0)
		return -ENOMEM;
	/* Allocate everything before attaching: on failure nothing refers
	 * to the app's buffers and release is not called. */
	for (uint32_t k = 0; k < pieces; k++) {
		m = rte_pktmbuf_alloc(s->cfg.pool);
		if (m == NULL) {
			while (first != NULL) {
				m = first->next;
				first->next = NULL;
				rte_pktmbuf_free_seg(first);
				first = m;
			}
			rte_mempool_put(s->ext_pool, x);
			return -ENOMEM;
		}
		m->next = NULL;
		if (last != NULL)
			last->next = m;
		else
			first = m;
		last = m;
	}
	x->pool = s->ext_pool;
	x->release = release;
	x->arg = arg;
	x->shinfo.free_cb = tcp_ext_free;
	x->shinfo.fcb_opaque = x;
	rte_mbuf_ext_refcnt_set(&x->shinfo, pieces);
	m = first;
	for (i = 0; i < cnt; i++) {
		uint8_t *base = iov[i].iov_base;
		size_t off = 0;

		while (off < iov[i].iov_len) {
			uint16_t k = RTE_MIN(iov[i].iov_len - off,
					     (size_t)TCP_EXT_CHUNK);
			struct rte_mbuf *nx = m->next;

			rte_pktmbuf_attach_extbuf(m, base + off,
				rte_mem_virt2iova(base + off), k, &x->shinfo);
			m->data_len = k;
			m->pkt_len = k;
			tcp_sq_append(c, m);
			off += k;
			m = nx;
		}
	}
	c->snd_end += total;
	c->sq_bytes += total;
	return 0;
}

void
tcp_flush(struct tcp_conn *c)
{
	if (c->flags & TF_GONE)
		return;
	tcp_now(c->stack);	/* what it sends is timed from now */
	if (c->flags & TF_DELACK)
		c->flags |= TF_ACKNOW;
	tcp_output(c);
	tcp_timer_sched(c);
}

void
tcp_flush_after_rx(struct tcp_conn *c)
{
	if ((c->flags & TF_GONE) || c->on_ackwait)
		return;
	TAILQ_INSERT_TAIL(&c->stack->ackwait, c, ackwait);
	c->on_ackwait = 1;
}

void
tcp_flush_after_rx_cancel(struct tcp_conn *c)
{
	tcp_ackwait_remove(c);
}

int
tcp_shutdown(struct tcp_conn *c)
{
	if (c->flags & TF_GONE)
		return -ENOTCONN;
	if (c->flags & TF_FIN_QUEUED)
		return 0;
	switch (c->state) {
	case TCP_SYN_SENT:
	case TCP_SYN_RECEIVED:
		c->flags |= TF_FIN_QUEUED;	/* sent once established */
		return 0;
	case TCP_ESTABLISHED:
		tcp_conn_set_state(c, TCP_FIN_WAIT_1);
		break;
	case TCP_CLOSE_WAIT:
		tcp_conn_set_state(c, TCP_LAST_ACK);
		break;
	default:
		return -ENOTCONN;
	}
	c->flags |= TF_FIN_QUEUED;
	tcp_now(c->stack);
	tcp_output(c);
	tcp_timer_sched(c);
	return 0;
}

void
tcp_close(struct tcp_conn *c)
{
	if (c->flags & TF_GONE)
		return;
	c->flags |= TF_APP_CLOSED;
	c->last_progress = tcp_now(c->stack);
	if (c->state == TCP_SYN_SENT) {
		tcp_conn_free(c);
		return;
	}
	tcp_shutdown(c);
}

void
tcp_abort(struct tcp_conn *c)
{
	if (c->flags & TF_GONE)
		return;
	c->flags |= TF_APP_CLOSED;
	if (c->state != TCP_SYN_SENT)
		tcp_send_ctl(c, TCP_F_RST | TCP_F_ACK);
	tcp_conn_free(c);
}

void
tcp_set_manual_recv(struct tcp_conn *c, bool on)
{
	if (on)
		c->flags |= TF_MANUAL_RCV;
	else
		c->flags &= ~TF_MANUAL_RCV;
}

void
tcp_recved(struct tcp_conn *c, uint32_t len)
{
	uint32_t old, now, mss = c->mss;

	if (c->flags & TF_GONE)
		return;
	c->rcv_held -= RTE_MIN(len, c->rcv_held);
	if (c->state < TCP_ESTABLISHED || c->state == TCP_TIME_WAIT)
		return;
	old = SEQ_GT(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	now = tcp_rcv_window(c);
	/* Window update only when it matters (receiver SWS avoidance,
	 * RFC 9293 §3.8.6.2.2). */
	if ((old < mss && now >= mss) ||
	    now >= old + RTE_MIN(c->stack->cfg.rcv_buf / 2, 2 * mss))
		tcp_send_ctl(c, TCP_F_ACK);
}
