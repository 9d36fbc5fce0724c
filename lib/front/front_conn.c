/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The front's connections to a shard, per lcore (front.h): requests sent
 * (head copied, body by reference), keep-alive pipelined connections
 * opened as the load needs them, answers read off the TCP segments
 * without a copy, a connection's end and what it carried.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_priv.h"

static const uint64_t lat_le_us[FR_LAT_BUCKETS - 1] = {
	100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000,
	1000000,
};

int
fr_head(char *buf, size_t cap, const struct front *f, unsigned int s,
	const char *method, const char *path, const char *ctype,
	const char *accept, size_t body_len)
{
	const struct fr_shard *sh = &f->shard[s];
	int n;

	/* RFC 9112 §3.2: Host is required in HTTP/1.1 requests. */
	n = snprintf(buf, cap, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path,
		     sh->label);
	if (ctype != NULL)
		n += snprintf(buf + n, cap - (size_t)n,
			      "Content-Type: %s\r\n", ctype);
	if (accept != NULL)
		n += snprintf(buf + n, cap - (size_t)n, "Accept: %s\r\n",
			      accept);
	if (sh->has_key)
		n += snprintf(buf + n, cap - (size_t)n,
			      "Authorization: Bearer %s\r\n", sh->key);
	n += snprintf(buf + n, cap - (size_t)n,
		      "Content-Length: %zu\r\n\r\n", body_len);
	return n < (int)cap ? n : -ENOSPC;
}

/* ---- answer bytes ------------------------------------------------------ */

void
fr_sub_free_answer(struct fr_sub *sub)
{
	for (unsigned int i = 0; i < sub->n; i++)
		rte_pktmbuf_free_seg(sub->seg[i]);
	free(sub->iov);
	free(sub->seg);
	sub->iov = NULL;
	sub->seg = NULL;
	sub->n = sub->cap = 0;
	sub->len = 0;
}

/* Keep [p, p + n) of seg as the next range of sub's answer: the segment
 * is referenced (one reference per range), not copied. */
static int
answer_add(struct fr_sub *sub, const uint8_t *p, size_t n,
	   struct rte_mbuf *seg)
{
	if (sub->n == sub->cap) {
		unsigned int cap = sub->cap ? sub->cap * 2 : 8;
		struct iovec *iov = realloc(sub->iov, cap * sizeof(*iov));
		struct rte_mbuf **sg;

		if (iov == NULL)
			return -ENOMEM;
		sub->iov = iov;
		sg = realloc(sub->seg, cap * sizeof(*sg));
		if (sg == NULL)
			return -ENOMEM;
		sub->seg = sg;
		sub->cap = cap;
	}
	rte_mbuf_refcnt_update(seg, 1);
	sub->iov[sub->n].iov_base = (void *)(uintptr_t)p;
	sub->iov[sub->n].iov_len = n;
	sub->seg[sub->n] = seg;
	sub->n++;
	sub->len += n;
	return 0;
}

/* ---- connections ---------------------------------------------------------- */

static void on_connected(void *arg, struct tcp_conn *tc);
static void on_data(void *arg, struct tcp_conn *tc, struct rte_mbuf *m);
static void on_eof(void *arg, struct tcp_conn *tc);
static void on_closed(void *arg, struct tcp_conn *tc, int reason);

static const struct tcp_ops up_ops = {
	.connected = on_connected,
	.data = on_data,
	.eof = on_eof,
	.closed = on_closed,
};

static void
send_released(void *arg)
{
	struct fr_call *call = arg;

	call->sends--;
	fr_call_check(call);
}

/* Send sub on c: the head copied, the body by reference. 0, or -ENOBUFS
 * when c has no room now (nothing sent). */
static int
conn_send(struct fr_conn *c, struct fr_sub *sub)
{
	struct front_lcore *fl = c->up->fl;
	struct front *f = fl->f;
	struct fr_call *call = sub->call;
	char head[768];
	const char *method = "GET", *path = "/v1/stats", *ct = NULL;
	const char *accept = NULL;
	int n;

	switch (sub->kind) {
	case FR_S_WALK:
		method = "POST";
		path = "/v1/walk-ffn";
		ct = call->json ? "application/json" :
		     wire_fmt_content_type(call->plan.fmt_in);
		if (!call->json)
			accept = front_accept_for(call->out_fmt);
		break;
	case FR_S_PROBE_HEALTH:
		path = "/v1/health";
		break;
	default:
		break;
	}
	n = fr_head(head, sizeof(head), f, c->up->idx, method, path, ct,
		    accept, sub->body_len);
	if (n < 0)
		return n;
	if (tcp_send_space(c->tc) < (uint32_t)n + sub->body_len)
		return -ENOBUFS;
	if (tcp_send(c->tc, head, (uint32_t)n) != n)
		return -ENOBUFS;
	if (sub->body_n > 0) {
		call->sends++;
		if (tcp_send_iov(c->tc, sub->body, (int)sub->body_n,
				 send_released, call) != 0) {
			/* The head is queued without its body: this
			 * connection's stream is no longer ours to use. */
			call->sends--;
			return -EPIPE;
		}
	}
	tcp_flush(c->tc);
	sub->conn = c;
	sub->sent_ns = fr_now();
	sub->deadline_ns = (sub->t_first_ns ? sub->t_first_ns :
			    sub->sent_ns) + f->hop_ns;
	if (c->q_tail != NULL)
		c->q_tail->next = sub;
	else
		c->q_head = sub;
	c->q_tail = sub;
	sub->next = NULL;
	c->q_len++;
	fl->st->sh[c->up->idx].requests++;
	return 0;
}

static struct fr_conn *
conn_open(struct fr_up *up)
{
	struct front_lcore *fl = up->fl;
	const struct fr_shard *sh = &fl->f->shard[up->idx];
	struct fr_conn *c;
	int rc;

	if (up->n_conns >= fl->f->conns || fl->closed)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->up = up;
	http_rsp_reset(&c->rsp);
	rc = tcp_connect(fl->tcp, sh->ip_be, sh->port, &up_ops, c, &c->tc);
	if (rc < 0) {
		snprintf(up->why, sizeof(up->why), "connect: %s",
			 strerror(-rc));
		free(c);
		return NULL;
	}
	c->t0_ns = fr_now();
	up->conn[up->n_conns++] = c;
	return c;
}

/* Send what waits for up on its connections: the open one with the
 * shortest pipeline below the limit; another connection opened (up to
 * conns) when all are busy, so a shard's requests spread over them. */
void
fr_up_pump(struct fr_up *up)
{
	struct front *f = up->fl->f;

	while (up->w_head != NULL) {
		struct fr_conn *best = NULL;
		unsigned int connecting = 0;
		struct fr_sub *sub;
		int rc;

		for (unsigned int i = 0; i < up->n_conns; i++) {
			struct fr_conn *c = up->conn[i];

			if (!c->open) {
				connecting++;
				continue;
			}
			if (c->closing || c->q_len >= f->pipeline)
				continue;
			if (best == NULL || c->q_len < best->q_len)
				best = c;
		}
		if ((best == NULL || best->q_len > 0) && connecting == 0)
			conn_open(up);
		if (best == NULL)
			return;
		/* Off the wait queue first: a sent sub's link is its
		 * connection's pipeline (conn_send). */
		sub = up->w_head;
		up->w_head = sub->next;
		if (up->w_head == NULL)
			up->w_tail = NULL;
		sub->next = NULL;
		rc = conn_send(best, sub);
		if (rc == 0)
			continue;
		if (rc == -ENOBUFS && best->q_len == 0) {
			/* Larger than a connection's send buffer. */
			fr_sub_unqueue(sub);
			fr_sub_fail(sub, FR_E_RESET, "request larger than the "
				    "connection's send buffer");
			continue;
		}
		/* back in front: sent when answers free the room, or on
		 * another connection (this one goes: its stream holds a
		 * head without its body) */
		sub->next = up->w_head;
		up->w_head = sub;
		if (up->w_tail == NULL)
			up->w_tail = sub;
		if (rc == -ENOBUFS)
			return;
		fr_conn_drop(best, FR_E_RESET, "send failed", true);
	}
}

/* Take c out of its shard's list. */
static void
conn_unlink(struct fr_conn *c)
{
	struct fr_up *up = c->up;

	for (unsigned int i = 0; i < up->n_conns; i++)
		if (up->conn[i] == c) {
			up->conn[i] = up->conn[--up->n_conns];
			break;
		}
}

/*
 * c is gone (closed by the peer, reset, failed, or given up): what it
 * carried is sent again (no answer byte yet) or failed (err, why). With
 * abort_tcp the TCP connection is reset here. c is freed.
 */
void
fr_conn_drop(struct fr_conn *c, enum fr_err err, const char *why,
	  bool abort_tcp)
{
	struct fr_up *up = c->up;
	struct fr_sub *sub = c->q_head, *next;
	bool began = c->got_bytes;
	char msg[128];

	conn_unlink(c);
	if (abort_tcp && c->tc != NULL)
		tcp_abort(c->tc);
	c->tc = NULL;
	c->q_head = c->q_tail = NULL;
	for (; sub != NULL; sub = next) {
		next = sub->next;
		fr_sub_unqueue(sub);
		if (began) {
			/* Part of its answer came: not idempotent to
			 * repeat from here (the client may get it twice
			 * in a retry's race), so it fails. */
			began = false;
			fr_sub_free_answer(sub);
			snprintf(msg, sizeof(msg), "%s mid-answer", why);
			fr_sub_fail(sub, err, msg);
			continue;
		}
		fr_sub_retry(sub, err, why);
	}
	free(c);
	fr_up_pump(up);
}

static void
on_connected(void *arg, struct tcp_conn *tc)
{
	struct fr_conn *c = arg;

	(void)tc;
	c->open = true;
	fr_up_pump(c->up);
}

/* c's pipeline, never read by the shard, back at the head of its wait
 * queue (still queued: the counts stay). */
static void
requeue_unread(struct fr_conn *c)
{
	struct fr_up *up = c->up;
	struct fr_sub *first = c->q_head, *last = c->q_tail, *s;

	if (first == NULL || c->got_bytes)
		return;
	for (s = first; s != NULL; s = s->next)
		s->conn = NULL;
	last->next = up->w_head;
	up->w_head = first;
	if (up->w_tail == NULL)
		up->w_tail = last;
	c->q_head = c->q_tail = NULL;
	c->q_len = 0;
}

/* An answer is whole: hand it over and send what waits. */
static void
answer_done(struct fr_conn *c)
{
	struct fr_sub *sub = c->q_head;
	struct front_lcore *fl = c->up->fl;
	struct fr_shard_stats *ss = &fl->st->sh[c->up->idx];
	uint64_t us = (fr_now() - sub->sent_ns) / 1000;
	unsigned int b;
	size_t ctl;

	c->q_head = sub->next;
	if (c->q_head == NULL)
		c->q_tail = NULL;
	c->q_len--;
	c->got_bytes = false;
	sub->status = c->rsp.status;
	ctl = strnlen(c->rsp.ctype, sizeof(c->rsp.ctype));
	if (ctl >= sizeof(sub->ctype) || c->rsp.ctype_truncated)
		ctl = 0;	/* too long to be a type we know */
	memcpy(sub->ctype, c->rsp.ctype, ctl);
	sub->ctype[ctl] = '\0';
	sub->fmt = front_answer_fmt(sub->ctype, ctl);
	if (!c->rsp.keep_alive)
		c->closing = true;	/* RFC 9112 §9.6: the last one */
	http_rsp_reset(&c->rsp);
	ss->answers++;
	for (b = 0; b < FR_LAT_BUCKETS - 1 && us > lat_le_us[b]; b++)
		;
	ss->lat_hist[b]++;
	ss->lat_sum_us += us;
	fr_sub_unqueue(sub);
	if (sub->call == NULL) {
		fr_probe_answered(sub);
		return;
	}
	if (sub->status != 200)
		ss->errors[FR_E_STATUS]++;
	fr_sub_answered(sub);
}

static void
on_data(void *arg, struct tcp_conn *tc, struct rte_mbuf *m)
{
	struct fr_conn *c = arg;
	struct fr_up *up = c->up;
	struct rte_mbuf *seg;

	(void)tc;
	for (seg = m; seg != NULL; seg = seg->next) {
		const uint8_t *p = rte_pktmbuf_mtod(seg, const uint8_t *);
		size_t n = seg->data_len;

		while (n > 0) {
			struct fr_sub *sub = c->q_head;
			const uint8_t *b = NULL;
			size_t bl = 0;
			int rc;

			if (sub == NULL) {
				fr_conn_drop(c, FR_E_MALFORMED,
					  "bytes no request asked for", true);
				goto out;
			}
			rc = http_rsp_feed(&c->rsp, p, n, &b, &bl);
			if (rc < 0) {
				fr_conn_drop(c, FR_E_MALFORMED, rc == -ENOTSUP ?
					  "answer framing not supported" :
					  "malformed HTTP answer", true);
				goto out;
			}
			c->got_bytes = true;
			if (bl > 0 && answer_add(sub, b, bl, seg) < 0) {
				fr_conn_drop(c, FR_E_RESET, "out of memory",
					  true);
				goto out;
			}
			p += rc;
			n -= (size_t)rc;
			if (c->rsp.state == HTTP_RSP_DONE)
				answer_done(c);
		}
	}
	if (c->closing) {
		/* The shard said this answer was its last (RFC 9112 §9.6:
		 * it processes nothing after it): what was pipelined behind
		 * it was never read, and waits for another connection, in
		 * order, without counting as a failure or a retry. */
		requeue_unread(c);
		fr_conn_drop(c, FR_E_RESET, "connection closed", false);
		tcp_close(tc);
		goto out;
	}
	fr_up_pump(up);
out:
	rte_pktmbuf_free(m);
}

static void
on_eof(void *arg, struct tcp_conn *tc)
{
	struct fr_conn *c = arg;

	/* A shard closing an idle kept-alive connection is normal; one
	 * with requests pending loses them (sent again, or failed). */
	fr_conn_drop(c, FR_E_RESET, "connection closed", false);
	tcp_close(tc);
}

static void
on_closed(void *arg, struct tcp_conn *tc, int reason)
{
	struct fr_conn *c = arg;
	struct fr_up *up = c->up;
	const char *why;
	enum fr_err err = FR_E_RESET;
	bool was_open = c->open;

	(void)tc;
	c->tc = NULL;
	switch (reason) {
	case TCP_CLOSE_REFUSED:
		why = "connection refused";
		err = FR_E_CONNECT;
		break;
	case TCP_CLOSE_TIMEOUT:
		why = was_open ? "retransmissions timed out" :
		      "connect timed out";
		err = was_open ? FR_E_RESET : FR_E_CONNECT;
		break;
	case TCP_CLOSE_NORMAL:
		why = "connection closed";
		break;
	default:
		why = "connection reset";
		break;
	}
	if (reason != TCP_CLOSE_NORMAL)
		fr_up_fail(up, why);
	fr_conn_drop(c, err, why, false);
}

void
fr_conn_close_all(struct front_lcore *fl)
{
	fl->closed = true;
	for (unsigned int s = 0; s < fl->f->n_shards; s++) {
		struct fr_up *up = &fl->up[s];

		while (up->n_conns > 0)
			fr_conn_drop(up->conn[0], FR_E_RESET, "front stopping",
				  true);
		while (up->w_head != NULL) {
			struct fr_sub *sub = up->w_head;

			up->w_head = sub->next;
			if (up->w_head == NULL)
				up->w_tail = NULL;
			fr_sub_unqueue(sub);
			fr_sub_fail(sub, FR_E_RESET, "front stopping");
		}
	}
}
