/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Sending a connection's answers in request order (RFC 9112 §9.3:
 * responses in the order of the requests), heads copied and result
 * bodies by reference. Runs on the network lcore that owns the
 * connection.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "shard_srv_priv.h"

/* iovecs handed to TCP per call. */
#define SEND_IOV_MAX 16

static void
pend_release_cb(void *arg)
{
	struct shard_pend *p = arg;

	p->refs--;
	shard_pend_try_free(p->lc, p);
}

/* The head of p's answer, written once into p->head. */
static void
pend_head(struct shard_conn *c, struct shard_pend *p)
{
	const struct shard_resp *r = &p->resp;
	/* Stopping (RFC 9112 §9.6): "close" goes on the last response of
	 * those received; one sent earlier would let the requests after it
	 * be answered on a connection said to be closing. */
	bool last = p->next == NULL && c->cur == NULL;
	struct http_response h = {
		.status = r->status,
		.content_type = r->content_type,
		.content_length = r->len,
		.keep_alive = p->keep_alive && !(c->lc->draining && last),
		.date = http_date_get(&c->lc->date, time(NULL)),
		/* RFC 9110 §15.5.2: a 401 names the scheme. */
		.extra = r->status == 401 ? "WWW-Authenticate: Bearer\r\n" :
			 NULL,
	};
	char extra[48];
	ssize_t n;

	if (r->retry_after_s != 0) {
		/* RFC 6585 §4 and RFC 9110 §10.2.3. */
		snprintf(extra, sizeof(extra), "Retry-After: %u\r\n",
			 r->retry_after_s);
		h.extra = extra;
	} else if (r->allow != NULL) {
		/* RFC 9110 §15.5.6: a 405 MUST list the methods; §10.2.1:
		 * so does an answer to OPTIONS. */
		snprintf(extra, sizeof(extra), "Allow: %s\r\n", r->allow);
		h.extra = extra;
	}
	n = http_write_head(p->head, sizeof(p->head), &h);
	if (n < 0)
		n = 0; /* cannot happen: fixed-size head */
	p->head_len = (uint32_t)n;
	if (n > 0 && !h.keep_alive) {
		/* RFC 9112 §9.6: no request after the one answered with
		 * "close" is processed. */
		c->closing = true;
		c->stop_rx = true;
	}
}

/* Copy bytes of a small heap body (JSON, errors). 1: the range is out,
 * 0: TCP took what it could, -1: the connection failed. */
static int
send_copied(struct shard_conn *c, struct shard_pend *p)
{
	const struct iovec *v = &p->resp.iov[p->iov_i];
	int n = tcp_send(c->tc, (char *)v->iov_base + p->iov_off,
			 (uint32_t)(v->iov_len - p->iov_off));

	if (n < 0)
		return -1;
	if (n == 0)
		return 0;
	p->iov_off += (size_t)n;
	if (p->iov_off == v->iov_len) {
		p->iov_i++;
		p->iov_off = 0;
	}
	return 1;
}

/* Hand result slots to TCP by reference, as much as it has room for;
 * released on ack (pend_release_cb). 1, 0 or -1 as send_copied. */
static int
send_by_ref(struct shard_conn *c, struct shard_pend *p)
{
	const struct shard_resp *r = &p->resp;
	struct iovec sub[SEND_IOV_MAX];
	uint32_t space = tcp_send_space(c->tc);
	size_t take = 0, off = p->iov_off;
	unsigned int k = 0, i = p->iov_i;
	int rc;

	while (k < SEND_IOV_MAX && i < r->iovcnt && take < space) {
		size_t len = r->iov[i].iov_len - off;

		if (len > space - take)
			len = space - take;
		sub[k].iov_base = (char *)r->iov[i].iov_base + off;
		sub[k].iov_len = len;
		take += len;
		k++;
		off += len;
		if (off == r->iov[i].iov_len) {
			i++;
			off = 0;
		}
	}
	if (k == 0)
		return 0;
	p->refs++;
	rc = tcp_send_iov(c->tc, sub, (int)k, pend_release_cb, p);
	if (rc < 0) {
		p->refs--;
		return rc == -ENOBUFS ? 0 : -1;
	}
	p->iov_i = i;
	p->iov_off = off;
	return 1;
}

/* Hand as much of p as TCP takes now. true when p is fully queued (or
 * the connection failed: it is then closing). */
static bool
send_pend(struct shard_conn *c, struct shard_pend *p)
{
	const struct shard_resp *r = &p->resp;

	if (p->head_len == 0) {
		pend_head(c, p);
		if (p->head_len == 0)
			return true;
	}
	while (p->head_off < p->head_len) {
		int n = tcp_send(c->tc, p->head + p->head_off,
				 p->head_len - p->head_off);

		if (n < 0) {
			c->closing = true;
			return true;
		}
		if (n == 0)
			return false;
		p->head_off += (uint32_t)n;
	}
	/* RFC 9110 §9.3.2, RFC 9112 §6.3: an answer to HEAD ends with its
	 * head, whatever its Content-Length says; body bytes would be read
	 * as the start of the next answer. */
	if (p->head_only)
		p->iov_i = r->iovcnt;
	while (p->iov_i < r->iovcnt) {
		/* job memory and a front's answers (the shards' segments)
		 * go by reference; small heap bodies are copied */
		int rc = r->mem == NULL && r->release == NULL ?
			 send_copied(c, p) : send_by_ref(c, p);

		if (rc < 0) {
			c->closing = true;
			return true;
		}
		if (rc == 0)
			return false;
	}
	return true;
}

/* The interim 100 (Continue), whole or not at all: a part of it would
 * corrupt the stream. Without room the client goes on after its own
 * wait (RFC 9110 §10.1.1). */
void
shard_conn_send_continue(struct shard_conn *c)
{
	char buf[64];
	ssize_t n = http_write_continue(buf, sizeof(buf));

	if (n > 0 && tcp_send_space(c->tc) >= (uint32_t)n &&
	    tcp_send(c->tc, buf, (uint32_t)n) == n)
		tcp_flush(c->tc);
}

void
shard_conn_send(struct shard_conn *c)
{
	struct shard_netlc *lc = c->lc;
	bool sent = false;

	while (c->q_head != NULL && c->q_head->ready) {
		struct shard_pend *p = c->q_head;

		if (!send_pend(c, p))
			break;
		sent = true;
		c->q_head = p->next;
		if (c->q_head == NULL)
			c->q_tail = NULL;
		c->q_len--;
		p->queued = true;
		p->next = NULL;
		shard_pend_try_free(lc, p);
	}
	if (c->continue_owed && c->q_head == NULL) {
		/* The answers ahead are out: the 100 withheld at the head
		 * (on_head) follows them, unless the client went on without
		 * it; the body's clock starts with it. */
		c->continue_owed = false;
		if (c->cur != NULL && !c->stop_rx && c->hp.req.body_len == 0) {
			shard_conn_send_continue(c);
			shard_body_clock_start(c, shard_lc_now(lc));
		}
	}
	/* An ACK owed for whole requests whose next answer is still being
	 * computed waits for that answer, which carries it (or for the
	 * stack's delayed-ACK timer, RFC 9293 §3.8.6.3): an ACK now was a
	 * second frame for nearly every request. The ACK of a request
	 * still arriving, whose sender may hold back its tail until then
	 * (Nagle, RFC 896), goes when the receive burst has been taken:
	 * one ACK for the segments of a burst, and none when the request
	 * is whole by then. Anything else goes now: data (an answer sent
	 * whole, or in part when send memory ran out: the rest follows
	 * its ACKs) and a close. */
	if (sent || c->closing || (c->q_head != NULL && c->q_head->ready))
		tcp_flush(c->tc);
	else if (c->cur != NULL || http_parser_in_head(&c->hp))
		tcp_flush_after_rx(c->tc);
	else if (c->q_head == NULL)
		tcp_flush(c->tc);
	else
		tcp_flush_after_rx_cancel(c->tc);
	if (c->closing && c->q_head == NULL && c->cur == NULL) {
		tcp_close(c->tc);
		shard_conn_destroy(c);
	}
}

