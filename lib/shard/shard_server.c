/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * HTTP/1.1 connections on the kernel-bypass TCP: parse (lib/http), answer
 * through the request lifecycle (shard.h), send responses in request order
 * with their bodies by reference. Everything here runs on the network lcore
 * that owns the connection.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_log.h>
#include <rte_mbuf.h>

#include "shard_srv_priv.h"
#include "shard_walk_priv.h"

/* Bytes a chunked body starts with; it doubles as it grows. */
#define CHUNKED_START (64u << 10)


/* ---- pends ---------------------------------------------------------- */

/* One more in a counter this lcore alone writes: a plain increment,
 * stored with release so that another thread's acquire load of it is
 * never ahead of what it counts (no locked instruction needed). */
static inline void
count_one(uint64_t *c)
{
	__atomic_store_n(c, *c + 1, __ATOMIC_RELEASE);
}

static struct shard_pend *
pend_get(struct shard_netlc *lc, struct shard_conn *c)
{
	struct shard_pend *p = lc->free_pend;

	if (p != NULL)
		lc->free_pend = p->next;
	else
		p = malloc(sizeof(*p));
	if (p == NULL)
		return NULL;
	memset(p, 0, sizeof(*p));
	p->lc = lc;
	p->conn = c;
	p->su = c->su;
	p->job.resp.fmt_out = WIRE_FMT_NONE;
	/* In flight until shard_pend_try_free (the grid's heartbeat and
	 * its unassign wait, spec/wire.md §9.3-4). Release: a reader on
	 * another thread sees the count no earlier than it is true. */
	count_one(&p->su->u->stats[lc->lcore_id % SHARD_MAX_LCORE].reqs_begun);
	return p;
}

/* Free p once nothing refers to it: handed to TCP (or its connection is
 * gone), every zero-copy range released, no worker holding its job. */
void
shard_pend_try_free(struct shard_netlc *lc, struct shard_pend *p)
{
	if ((!p->queued && p->conn != NULL) || p->refs > 0 || p->in_flight)
		return;
	shard_resp_release(&p->resp);
	if (p->body != NULL)
		p->su->mem.free(p->su->mem.arg, p->body);
	p->body = NULL;
	count_one(&p->su->u->stats[lc->lcore_id % SHARD_MAX_LCORE].reqs_ended);
	p->next = lc->free_pend;
	lc->free_pend = p;
}

/* ---- requests ------------------------------------------------------- */

static void
pend_ready_error(struct shard_pend *p, int status, const char *msg,
		 enum shard_route route)
{
	p->resp.route = route;
	p->resp.fmt_out = WIRE_FMT_NONE;
	if (status == 401) {
		p->resp.status = 401; /* empty body (issue 4) */
	} else if (status == 429) {
		/* larql-server's rate limit answers so: plain text. */
		p->resp.status = 429;
		p->resp.content_type = "text/plain; charset=utf-8";
		p->resp.one.iov_base = (void *)(uintptr_t)msg;
		p->resp.one.iov_len = strlen(msg);
		p->resp.iov = &p->resp.one;
		p->resp.iovcnt = 1;
		p->resp.len = p->resp.one.iov_len;
	} else if (shard_routes[route].text_errors && status == 413) {
		/* spec/moe.md §4: the reference's body limit, in text */
		shard_resp_text(&p->resp, 413, "Failed to buffer the request "
				"body: length limit exceeded");
	} else {
		shard_resp_error(&p->resp, status, msg);
	}
	shard_count(p->su->u, &p->resp, p->body_in, p->lc->lcore_id);
	p->ready = true;
}

/* The compute queue is full (sized for every request the connection limits
 * admit, shard_lcore.c, unless capped): 503 with Retry-After (RFC 9110
 * §15.6.4), counted by status in /metrics. */
static void
pend_queue_full(struct shard_pend *p)
{
	pend_ready_error(p, 503, "compute queue full", p->resp.route);
	p->resp.retry_after_s = 1;
}

static void
enqueue(struct shard_conn *c, struct shard_pend *p)
{
	p->next = NULL;
	if (c->q_tail != NULL)
		c->q_tail->next = p;
	else
		c->q_head = p;
	c->q_tail = p;
	c->q_len++;
}

/* HTTP_EV_HEAD: route the request, decide what its body needs. 0: read
 * on (into p->body, or dropped); 1: answer now without reading the body,
 * then close; -ENOMEM: no pend to answer with. */
static int
on_head(struct shard_conn *c)
{
	struct http_request *rq = &c->hp.req;
	struct shard_srv_unit *su = c->su;
	struct shard_pend *p = pend_get(c->lc, c);
	const struct shard_route_def *d;
	enum shard_route route;
	int status = 0;

	if (p == NULL)
		return -ENOMEM;
	c->cur = p;
	p->head_only = rq->method == HTTP_M_HEAD;
	route = shard_route(su->u, rq->method, rq->path.p, rq->path.len,
			    &status);
	d = &shard_routes[route];
	p->resp.route = route;
	p->fmt_in = shard_req_fmt(rq->content_type.len ?
				  rq->content_type.p : NULL,
				  rq->content_type.len);
	if (d->throttle &&
	    (p->resp.retry_after_s = shard_conn_admit(c, rq)) != 0)
		p->reject = 429;
	else if (route == SHARD_R_NONE)
		p->reject = status;
	if (p->reject == 405)
		p->resp.allow = shard_route_allow(rq->path.p, rq->path.len);
	else if (!shard_authorized(su->u, route, rq->authorization.p,
				   rq->authorization.len))
		p->reject = 401;
	if (!rq->has_body)
		return 0;
	/* A route with its own, lower limit (the single expert route's
	 * 2 MiB, spec/moe.md §2): 413 without reading the body in. */
	if (!p->reject && d->body && d->max_body &&
	    !rq->chunked && rq->content_length > d->max_body)
		p->reject = 413;
	if (!p->reject && d->body) {
		p->body_cap = rq->chunked ? CHUNKED_START :
			      rq->content_length;
		p->body = su->mem.alloc(su->mem.arg, p->body_cap);
		if (p->body == NULL)
			p->reject = 503;
	}
	if (p->body == NULL) {
		/* The answer does not need the body. RFC 9110 §10.1.1: a
		 * client that expects 100-continue holds the body back, so
		 * waiting for it would hang; the final answer goes now.
		 * Whether the client then sends the body is its choice, so
		 * the framing after it is unknown: close (RFC 9112 §9.6).
		 * Otherwise read and drop it: the connection stays usable. */
		if (rq->expect_continue)
			return 1;
		http_body_discard(&c->hp);
		return 0;
	}
	http_body_buf(&c->hp, p->body, p->body_cap);
	/* RFC 9110 §10.1.1: tell the client to go on, once no earlier
	 * response is due (interim responses must not jump it): now, or
	 * when they are out (conn_send). */
	if (rq->expect_continue) {
		if (c->q_head == NULL)
			shard_conn_send_continue(c);
		else
			c->continue_owed = true;
	}
	return 0;
}

/* HTTP_EV_NEED_BUF: a chunked body outgrew its buffer; double it.
 * Returns 0, or the status to answer once the body is read and dropped:
 * 413 past max_body, 503 when memory is short, as RFC 9110 §15.6.4
 * has it for a temporary condition of the server (the client may retry;
 * 413 would tell it the body itself is refused). */
int
shard_conn_need_buf(struct shard_conn *c)
{
	struct shard_pend *p = c->cur;
	struct shard_srv_unit *su = c->su;
	const struct shard_route_def *d = &shard_routes[p->resp.route];
	uint64_t have = c->hp.req.body_len, cap = p->body_cap * 2;
	uint64_t max = su->lim.max_body;
	void *nb;

	if (d->max_body && d->max_body < max)
		max = d->max_body;
	if (cap > max)
		cap = max;
	if (cap <= have)
		return 413; /* the parser's limit answers 413 first */
	nb = su->mem.alloc(su->mem.arg, cap);
	if (nb == NULL)
		return 503;
	memcpy(nb, p->body, have);
	su->mem.free(su->mem.arg, p->body);
	p->body = nb;
	p->body_cap = cap;
	return http_body_buf(&c->hp, nb, cap) == 0 ? 0 : 413;
}

/* Copy what shard_handle() needs of rq into p (the head buffer is
 * reused by the next request); -1 when a header is too long to copy, and
 * the request is then handled here. */
static int
whole_job(struct shard_pend *p, const struct shard_http_req *rq)
{
	struct shard_job *j = &p->job;
	const struct shard_route_def *d = &shard_routes[p->resp.route];
	char *dst[4] = { p->rq_ct, p->rq_accept, p->rq_auth, p->rq_path };
	const char *src[4] = { rq->content_type, rq->accept,
			       rq->authorization, rq->path };
	size_t len[4] = { rq->content_type_len, rq->accept_len,
			  rq->authorization_len, rq->path_len };
	const char *out[4];

	/* A route with parameters needs the request's path (it lives in
	 * the head buffer); the others take the route's own. */
	if (d->match == NULL) {
		src[3] = d->path;
		len[3] = strlen(d->path);
	}
	for (int i = 0; i < 4; i++) {
		if (len[i] >= sizeof(p->rq_ct))
			return -1;
		if (src[i] != NULL)
			memcpy(dst[i], src[i], len[i]);
		out[i] = src[i] != NULL ? dst[i] : NULL;
	}
	memset(j, 0, sizeof(*j));
	j->u = p->su->u;
	j->whole = true;
	j->owner = p;
	j->rq = *rq;
	j->rq.path = out[3];
	j->rq.path_len = len[3];
	j->rq.content_type = out[0];
	j->rq.accept = out[1];
	j->rq.authorization = out[2];
	return 0;
}

/* A front's answer (issue 19), on this lcore: sent like a worker's. */
static void
front_done(void *arg, struct front_answer *a)
{
	struct shard_pend *p = arg;
	struct shard_resp *r = &p->resp;

	r->status = a->status;
	r->content_type = a->content_type;
	r->iov = a->iov;
	r->iovcnt = a->iovcnt;
	r->len = a->len;
	r->fmt_out = a->fmt_out;
	r->release = a->release;
	r->release_arg = a->release_arg;
	p->in_flight = false;
	shard_count(p->su->u, r, p->body_in, p->lc->lcore_id);
	p->ready = true;
	if (p->conn == NULL) {
		shard_pend_try_free(p->lc, p);
		return;
	}
	shard_conn_send(p->conn);
}

/* A route a front unit forwards to its shards (shard_routes[].fans_out):
 * the body stays with p until the answer is released. */
static void
front_forward(struct shard_pend *p, const struct shard_http_req *rq)
{
	struct shard_netlc *lc = p->lc;
	struct front_answer now;
	struct front_req fr = {
		.kind = p->resp.route == SHARD_R_STATS ? FRONT_K_STATS :
			FRONT_K_WALK,
		.fmt_in = p->fmt_in,
		.body = rq->body,
		.body_len = rq->body_len,
		.accept = rq->accept,
		.accept_len = rq->accept_len,
	};
	unsigned int ui;

	for (ui = 0; ui < lc->n_units && lc->units[ui] != p->su; ui++)
		;
	p->in_flight = true;
	if (front_submit(lc->front[ui], &fr, front_done, p, &now) == 1)
		front_done(p, &now);
}

static void
on_done(struct shard_conn *c)
{
	struct shard_netlc *lc = c->lc;
	struct shard_srv_unit *su = c->su;
	struct http_request *hr = &c->hp.req;
	struct shard_pend *p = c->cur;
	struct shard_http_req rq = {
		.method = hr->method,
		.path = hr->path.p, .path_len = hr->path.len,
		.content_type = hr->content_type.len ? hr->content_type.p :
				NULL,
		.content_type_len = hr->content_type.len,
		.fmt_in = p->fmt_in,
		.accept = hr->accept.len ? hr->accept.p : NULL,
		.accept_len = hr->accept.len,
		.authorization = hr->authorization.p,
		.authorization_len = hr->authorization.len,
		.body = p->body,
		.body_len = p->body ? hr->body_len : 0,
		.t_body_ns = shard_now_ns(),
	};
	const struct shard_route_def *d = &shard_routes[p->resp.route];
	unsigned int ui;

	c->cur = NULL;
	c->body_start_ns = 0;	/* the body is in: its clock stops */
	c->continue_owed = false;
	p->keep_alive = hr->keep_alive;
	p->body_in = rq.body_len;
	enqueue(c, p);
	if (!p->keep_alive) {
		c->closing = true;
		c->stop_rx = true;
	}
	if (p->reject) {
		pend_ready_error(p, p->reject, shard_status_msg(p->reject),
				 p->resp.route);
		return;
	}
	if (d->fans_out && su->u->front != NULL) {
		front_forward(p, &rq);
		return;
	}
	if (d->batch && p->fmt_in != WIRE_FMT_JSON) {
		if (shard_walk_prepare(su->u, &rq, &p->job, &p->resp, &su->mem,
				       lc->lcore_id) < 0) {
			shard_count(su->u, &p->resp, p->body_in, lc->lcore_id);
			p->ready = true;
			return;
		}
		p->is_job = true;
		p->job.owner = p;
		if (su->jobs != NULL) {
			p->in_flight = true;
			if (rte_ring_enqueue(su->jobs, &p->job) != 0) {
				p->in_flight = false;
				shard_resp_release(&p->job.resp);
				pend_queue_full(p);
			}
		} else if (lc->n_local < SHARD_LOCAL_JOBS) {
			p->in_flight = true;
			lc->local[lc->n_local++] = &p->job;
		} else {
			shard_resp_release(&p->job.resp);
			pend_queue_full(p);
		}
		return;
	}
	if (su->jobs != NULL && d->compute && whole_job(p, &rq) == 0) {
		/* JSON and Q8_K walk-ffn compute too: to a worker, so the
		 * network lcore never blocks on compute (issue 4). */
		p->in_flight = true;
		if (rte_ring_enqueue(su->jobs, &p->job) == 0)
			return;
		p->in_flight = false;
		pend_queue_full(p);
		return;
	}
	if (su->jobs == NULL && d->handle_many != NULL &&
	    lc->n_local < SHARD_LOCAL_JOBS && whole_job(p, &rq) == 0) {
		/* Single-lcore mode: a request that batches across requests
		 * (expert layer batches, issue 23) waits for the end of the
		 * RX burst, computed with the others of that burst. */
		p->in_flight = true;
		lc->local[lc->n_local++] = &p->job;
		return;
	}
	for (ui = 0; ui < lc->n_units && lc->units[ui] != su; ui++)
		;
	shard_handle(su->u, &rq, &p->resp, &su->mem,
		     ui < lc->n_units ? lc->scratch[ui] : NULL, lc->lcore_id);
	p->ready = true;
}

void
shard_conn_job_done(struct shard_netlc *lc, struct shard_job *job)
{
	struct shard_pend *p = job->owner;
	struct shard_conn *c = p->conn;

	p->in_flight = false;
	p->resp = job->resp;
	if (p->resp.iov == &job->resp.one)
		p->resp.iov = &p->resp.one;
	job->resp.mem = NULL;
	job->resp.heap = NULL;
	if (!job->whole)	/* shard_handle() counted the others */
		shard_count(p->su->u, &p->resp, p->body_in, lc->lcore_id);
	p->ready = true;
	if (c == NULL) {
		shard_pend_try_free(lc, p);
		return;
	}
	shard_conn_send(c);
}

/* ---- input ---------------------------------------------------------- */

static void
drop_hold(struct shard_conn *c)
{
	if (c->hold != NULL)
		rte_pktmbuf_free(c->hold);
	c->hold = NULL;
	c->hold_off = 0;
}

/* The route a parse error is answered for: a body over max_body (413,
 * from the head's Content-Length) of a route whose framework errors are
 * text (the expert routes, spec/moe.md §4) is its route's, so it is
 * answered in text and counted there; any other is before routing. */
static enum shard_route
parse_error_route(struct shard_conn *c)
{
	const struct http_request *rq = &c->hp.req;
	enum shard_route r;
	int status = 0;

	if (c->hp.status != 413 || rq->path.len == 0)
		return SHARD_R_NONE;
	r = shard_route(c->su->u, rq->method, rq->path.p, rq->path.len,
			&status);
	return shard_routes[r].text_errors ? r : SHARD_R_NONE;
}

/* Consume held input until it is gone, the pipeline is full, or the
 * connection stops reading. */
static void
conn_process(struct shard_conn *c)
{
	uint32_t consumed = 0;

	/* Events come one per http_feed(); a pending one (DONE after a head
	 * without body) needs a call with no bytes, so the loop runs until
	 * the parser wants more input and none is held. */
	while (!c->stop_rx && c->q_len < c->su->lim.pipeline_depth) {
		struct rte_mbuf *seg = c->hold;
		const uint8_t *data = NULL;
		size_t len = 0, used = 0;
		int ev, rc;

		if (seg != NULL) {
			data = rte_pktmbuf_mtod_offset(seg, uint8_t *,
						       c->hold_off);
			len = seg->data_len - c->hold_off;
		}
		ev = http_feed(&c->hp, data, len, &used);
		c->hold_off += (uint32_t)used;
		consumed += (uint32_t)used;
		if (ev < 0) {
			struct shard_pend *p = c->cur ? c->cur :
					       pend_get(c->lc, c);

			c->cur = NULL;
			c->body_start_ns = 0;
			if (p != NULL) {
				enqueue(c, p);
				pend_ready_error(p, c->hp.status, c->hp.err,
						 parse_error_route(c));
			}
			/* Framing is lost: answer, then close. */
			c->closing = true;
			c->stop_rx = true;
			break;
		}
		if (ev == HTTP_EV_HEAD) {
			c->head_start_ns = 0;
			rc = on_head(c);
			if (rc < 0) {
				c->stop_rx = true;
				c->closing = true;
			} else if (rc > 0) {
				/* answered from the head, then closed */
				c->hp.req.keep_alive = false;
				on_done(c);
			} else if (c->hp.req.has_body) {
				/* The body's deadline runs from here (after
				 * the 100 Continue, when on_head sent one). */
				shard_body_clock_start(c, shard_lc_now(c->lc));
			}
		} else if (ev == HTTP_EV_NEED_BUF) {
			int st = shard_conn_need_buf(c);

			if (st != 0) {
				c->cur->reject = st;
				http_body_discard(&c->hp);
			}
		} else if (ev == HTTP_EV_DONE) {
			on_done(c);
			http_next(&c->hp);
		}
		if (seg != NULL && c->hold_off == seg->data_len) {
			struct rte_mbuf *next = seg->next;

			if (next != NULL) {
				next->nb_segs = seg->nb_segs - 1;
				next->pkt_len = seg->pkt_len - seg->data_len;
			}
			seg->next = NULL;
			seg->nb_segs = 1;
			rte_pktmbuf_free_seg(seg);
			c->hold = next;
			c->hold_off = 0;
		}
		if (ev == HTTP_EV_MORE && c->hold == NULL)
			break;
	}
	if (c->stop_rx)
		drop_hold(c);
	if (consumed)
		tcp_recved(c->tc, consumed);
	if (c->head_start_ns == 0 && !c->stop_rx &&
	    http_parser_in_head(&c->hp))
		c->head_start_ns = shard_lc_now(c->lc);
	shard_conn_send(c);
}

/* ---- TCP callbacks -------------------------------------------------- */

static int
on_accepted(void *listen_arg, struct tcp_conn *tc, void **conn_arg)
{
	struct shard_listener *l = listen_arg;
	struct shard_netlc *lc = l->lc;
	struct shard_srv_unit *su = l->su;
	struct shard_conn *c;

	if (lc->n_conns >= su->lim.max_connections * lc->n_units)
		return -EMFILE;
	c = calloc(1, sizeof(*c) + su->lim.max_header);
	if (c == NULL)
		return -ENOMEM;
	c->tc = tc;
	c->lc = lc;
	c->su = su;
	c->l = l;
	c->active_ns = shard_lc_now(lc);
	http_parser_init(&c->hp, c->head_buf, su->lim.max_header,
			 su->lim.max_body);
	tcp_set_manual_recv(tc, true);
	c->next_c = lc->conns;
	if (lc->conns != NULL)
		lc->conns->prev_c = c;
	lc->conns = c;
	lc->n_conns++;
	*conn_arg = c;
	return 0;
}

static void
on_data(void *arg, struct tcp_conn *tc, struct rte_mbuf *m)
{
	struct shard_conn *c = arg;

	(void)tc;
	c->active_ns = shard_lc_now(c->lc);
	if (c->stop_rx) {
		tcp_recved(c->tc, m->pkt_len);
		rte_pktmbuf_free(m);
		return;
	}
	if (c->hold == NULL) {
		c->hold = m;
		c->hold_off = 0;
	} else if (rte_pktmbuf_chain(c->hold, m) != 0) {
		/* More segments held than an mbuf chain can count: the
		 * peer pipelines far past our depth. */
		rte_pktmbuf_free(m);
		c->stop_rx = true;
		c->closing = true;
	}
	conn_process(c);
}

static void
on_eof(void *arg, struct tcp_conn *tc)
{
	struct shard_conn *c = arg;

	(void)tc;
	/* Answer what was asked, then close (RFC 9112 §9.6). */
	c->closing = true;
	conn_process(c);
}

static void
on_sent(void *arg, struct tcp_conn *tc, uint32_t acked)
{
	struct shard_conn *c = arg;

	(void)tc;
	(void)acked;
	if (c->hold != NULL)
		conn_process(c);
	else
		shard_conn_send(c);
}

static void
on_closed(void *arg, struct tcp_conn *tc, int reason)
{
	(void)tc;
	(void)reason;
	shard_conn_destroy(arg);
}

static const struct tcp_ops conn_ops = {
	.accepted = on_accepted,
	.data = on_data,
	.eof = on_eof,
	.sent = on_sent,
	.closed = on_closed,
};

void
shard_conn_destroy(struct shard_conn *c)
{
	struct shard_netlc *lc = c->lc;
	struct shard_pend *p = c->q_head;

	while (p != NULL) {
		struct shard_pend *next = p->next;

		p->conn = NULL;
		p->next = NULL;
		shard_pend_try_free(lc, p);
		p = next;
	}
	if (c->cur != NULL) {
		c->cur->conn = NULL;
		shard_pend_try_free(lc, c->cur);
	}
	drop_hold(c);
	if (c->prev_c != NULL)
		c->prev_c->next_c = c->next_c;
	else
		lc->conns = c->next_c;
	if (c->next_c != NULL)
		c->next_c->prev_c = c->prev_c;
	lc->n_conns--;
	free(c);
}

int
shard_conn_listen(struct shard_netlc *lc)
{
	for (unsigned int i = 0; i < lc->n_units; i++) {
		int rc;

		lc->lst[i].lc = lc;
		lc->lst[i].su = lc->units[i];
		rc = shard_listener_rl_init(&lc->lst[i]);
		if (rc < 0) {
			RTE_LOG(ERR, USER1, "lcore %u: rate limit of port "
				"%u: %s\n", lc->lcore_id,
				lc->units[i]->listen, strerror(-rc));
			return rc;
		}
		/* Half-open connections may take half of the table:
		 * bursts of real connects (a cookie handshake whose ACK is
		 * lost cannot complete) stay out of SYN cookies, while a
		 * flood (RFC 4987) turns to cookies long before it could
		 * fill the table and lock real clients out. */
		uint32_t backlog = lc->units[i]->lim.max_connections / 2;

		rc = tcp_listen(lc->tcp, lc->units[i]->listen,
				backlog > 16 ? backlog : 16, &conn_ops,
				&lc->lst[i]);
		if (rc < 0) {
			RTE_LOG(ERR, USER1, "lcore %u: tcp_listen(%u): %s\n",
				lc->lcore_id, lc->units[i]->listen,
				strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* A head not complete after header_timeout_ms (slowloris), or a body
 * after body_timeout_ms (shard_timeout.c): RFC 9110 §15.5.9, 408 Request
 * Timeout with Connection: close, then close. Only called with nothing
 * queued, so no byte of another response is on the wire for this
 * request. Without a pend to answer with: reset. */
void
shard_conn_timeout(struct shard_conn *c, const char *msg)
{
	struct shard_pend *p = c->cur != NULL ? c->cur : pend_get(c->lc, c);

	c->head_start_ns = 0;
	c->body_start_ns = 0;
	c->cur = NULL;
	if (p == NULL) {
		shard_conn_abort(c);
		return;
	}
	p->keep_alive = false;
	enqueue(c, p);
	pend_ready_error(p, 408, msg, p->resp.route);
	c->closing = true;
	c->stop_rx = true;
	drop_hold(c);
	shard_conn_send(c);	/* closes once the answer is handed to TCP */
}

void
shard_conn_close(struct shard_conn *c)
{
	tcp_close(c->tc);
	shard_conn_destroy(c);
}

void
shard_conn_abort(struct shard_conn *c)
{
	tcp_abort(c->tc);
	shard_conn_destroy(c);
}

void
shard_conn_close_all(struct shard_netlc *lc)
{
	while (lc->conns != NULL)
		shard_conn_close(lc->conns);
}
