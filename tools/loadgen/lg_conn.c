/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* ffn-loadgen: connections, the token walk, response validation. */

#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "lg.h"

#define RECONNECT_DELAY_NS (100ull * 1000 * 1000)

static const char *const err_names[LG_E_COUNT] = {
	[LG_E_CONNECT] = "connect",
	[LG_E_RESET] = "reset",
	[LG_E_TIMEOUT] = "timeout",
	[LG_E_CLOSED] = "closed",
	[LG_E_STATUS] = "status",
	[LG_E_HTTP] = "bad_http",
	[LG_E_CTYPE] = "bad_ctype",
	[LG_E_LENGTH] = "bad_length",
	[LG_E_FIELD] = "bad_field",
	[LG_E_SEND] = "send",
	[LG_E_BODY] = "bad_body",
};

const char *
lg_err_name(enum lg_err e)
{
	return err_names[e];
}

void
lg_count_err(enum lg_err e)
{
	LGW->all.err[e]++;
	if (LGW->recording)
		LGW->win.err[e]++;
}

static void conn_connect(struct lg_conn *k);
static void client_send(struct lg_client *cl);

/* Non-fan-out: the target's pool entry of the token (clients start at
 * different entries, each walks the pool round robin). */
static const struct lg_req *
step_req(const struct lg_client *cl, unsigned int step)
{
	return lg.fanout ? &LGW->sreq[step] :
			   &LGW->treq[cl->conn[0].target * lg.npool +
				      (cl->id + cl->pick) % lg.npool];
}

static struct lg_conn *
step_conn(struct lg_client *cl, unsigned int step)
{
	return lg.fanout ? &cl->conn[lg.step_conn[step]] : &cl->conn[0];
}

/* The token in progress is over (done or failed): next one. */
static void
client_idle(struct lg_client *cl, uint64_t restart_ns)
{
	if (!cl->active)
		return;
	cl->active = false;
	cl->want_send = false;
	if (lg.rate > 0)
		LGW->idle[LGW->nidle++] = cl->id;
	else
		cl->restart_ns = restart_ns;
	if (lg.rate == 0 && !LGW->stopping && restart_ns <= LGW->now)
		lg_client_start(cl, LGW->now);
}

/* Drop k: abort (RST) on errors, FIN otherwise.  An outstanding request
 * fails the token with error e (or is silently dropped when e < 0). */
static void
conn_drop(struct lg_conn *k, int e, bool rst, uint64_t retry_delay)
{
	struct lg_client *cl = k->cl;
	bool was_busy = k->busy;

	if (k->tc != NULL) {
		tcp_set_arg(k->tc, NULL);
		if (rst)
			tcp_abort(k->tc);
		else
			tcp_close(k->tc);
	}
	k->tc = NULL;
	k->state = LG_DOWN;
	k->busy = false;
	k->retry_ns = LGW->now + retry_delay;
	if (e >= 0)
		lg_count_err((enum lg_err)e);
	if (was_busy || (cl->active && cl->want_send &&
			 step_conn(cl, cl->step) == k && e >= 0))
		client_idle(cl, LGW->now + retry_delay);
}

static void
on_connected(void *arg, struct tcp_conn *c)
{
	struct lg_conn *k = arg;

	(void)c;
	if (k == NULL)
		return;
	k->state = LG_UP;
	LGW->all.connects++;
	if (k->cl->active && k->cl->want_send &&
	    step_conn(k->cl, k->cl->step) == k)
		client_send(k->cl);
}

/* A complete response on k: judge it, then walk on. */
static void
conn_response(struct lg_conn *k)
{
	struct lg_client *cl = k->cl;
	const struct lg_req *q = k->req;
	struct http_rsp *r = &k->resp;
	uint64_t now = net_now_ns();
	const struct lg_frame *f = lg_frame_pick(r->ctype, q->ctype, &q->frame,
						 q->guard_ctype, &q->guard);
	double worst = 0;
	int e = k->bad;

	LGW->now = now;
	if (e < 0 && (r->status < 200 || r->status > 299)) {
		e = LG_E_STATUS;
		LGW->all.status[r->status]++;
		if (LGW->recording)
			LGW->win.status[r->status]++;
	}
	if (e < 0 && f == NULL)
		e = LG_E_CTYPE;
	if (e < 0 && q->binary && r->content_length != f->body_len)
		e = LG_E_LENGTH;
	/* values are held to the reference in the negotiated format only */
	if (e < 0 && q->ref != NULL && f == &q->frame) {
		/* The first valid answer becomes the reference (unless
		 * given), the others are held to it. */
		if (!q->ref->set) {
			memcpy(q->ref->bytes, k->cap, q->ref->len);
			q->ref->set = true;
		} else if (lg_frame_values_close(&q->frame, q->ref->bytes,
						 k->cap, &worst) != 1) {
			e = LG_E_BODY;
		}
	}
	if (e >= 0) {
		/* The connection may be out of step: start afresh. */
		conn_drop(k, e, true, 0);
		return;
	}
	k->busy = false;
	if (LGW->recording) {
		LGW->win.requests++;
		LGW->win.per_target[q->target]++;
		if (q->binary)
			LGW->win.validated++;
		if (f == &q->guard)
			LGW->win.guard_f32++;
		if (q->ref != NULL && f == &q->frame) {
			LGW->win.bodies++;
			if (worst > LGW->win.body_worst)
				LGW->win.body_worst = worst;
		}
		lg_hist_record(&LGW->win.req_lat,
			       lg_latency(k->sched_ns, now));
		lg_hist_record(&LGW->win.svc_lat,
			       lg_latency(k->sent_ns, now));
	}
	/* The progress line covers the warm-up too. */
	lg_hist_record(&LGW->run_lat, lg_latency(k->sched_ns, now));
	LGW->all.requests++;
	if (!r->keep_alive)
		conn_drop(k, -1, false, 0);
	if (++cl->step < lg.nsteps) {
		lg_origin_next_step(&cl->orig, now);
		client_send(cl);
		return;
	}
	if (LGW->recording) {
		LGW->win.tokens++;
		lg_hist_record(&LGW->win.tok_lat,
			       lg_latency(cl->orig.tok, now));
	}
	LGW->all.tokens++;
	client_idle(cl, now);
}

/* --verify-body: keep the answer body whole (conn_response judges its
 * values against the reference); a copy, but only in this mode. */
static void
body_bytes(struct lg_conn *k, uint64_t off, const uint8_t *p, size_t n)
{
	uint64_t len = k->req->ref->len;

	/* Longer than the frame: bad_length at the end; keep what fits. */
	if (off < len)
		memcpy(k->cap + off, p, RTE_MIN((uint64_t)n, len - off));
}

static void
on_data(void *arg, struct tcp_conn *c, struct rte_mbuf *m)
{
	struct lg_conn *k = arg;
	struct rte_mbuf *seg;

	if (k == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	LGW->all.bytes_in += m->pkt_len;
	if (LGW->recording)
		LGW->win.bytes_in += m->pkt_len;
	/* k->tc == c: an error drops c, and k may reconnect at once (closed
	 * loop): what is left of c's bytes is not the new connection's. */
	for (seg = m; seg != NULL && k->tc == c; seg = seg->next) {
		const uint8_t *p = rte_pktmbuf_mtod(seg, const uint8_t *);
		size_t n = seg->data_len;

		while (n > 0 && k->tc == c) {
			const uint8_t *b;
			const struct lg_frame *f;
			size_t bl;
			uint64_t boff = k->resp.body_got;
			bool ok;
			int rc;

			if (!k->busy) {
				/* Bytes nobody asked for. */
				conn_drop(k, LG_E_HTTP, true, 0);
				break;
			}
			rc = http_rsp_feed(&k->resp, p, n, &b, &bl);
			if (rc < 0) {
				conn_drop(k, LG_E_HTTP, true, 0);
				break;
			}
			/* Only a 2xx body is the frame: an error's is its
			 * JSON, judged by its status (conn_response). */
			ok = k->resp.status >= 200 && k->resp.status <= 299;
			/* the head is in: its Content-Type says which frame
			 * (none: bad_ctype, judged by conn_response) */
			f = ok && bl > 0 && k->req->binary ?
			    lg_frame_pick(k->resp.ctype, k->req->ctype,
					  &k->req->frame, k->req->guard_ctype,
					  &k->req->guard) : NULL;
			if (f != NULL &&
			    lg_frame_check(f, &k->chk_i, boff, b, bl) < 0 &&
			    k->bad < 0)
				k->bad = LG_E_FIELD;
			if (ok && bl > 0 && k->req->ref != NULL && k->bad < 0 &&
			    f == &k->req->frame)
				body_bytes(k, boff, b, bl);
			p += rc;
			n -= (size_t)rc;
			if (k->resp.state == HTTP_RSP_DONE)
				conn_response(k);
		}
	}
	rte_pktmbuf_free(m);
}

static void
on_eof(void *arg, struct tcp_conn *c)
{
	struct lg_conn *k = arg;

	(void)c;
	if (k == NULL)
		return;
	if (k->busy) {
		conn_drop(k, LG_E_CLOSED, false, 0);
	} else {
		LGW->all.idle_closes++;
		conn_drop(k, -1, false, 0);
	}
}

static void
on_closed(void *arg, struct tcp_conn *c, int reason)
{
	struct lg_conn *k = arg;
	int e = -1;

	(void)c;
	if (k == NULL)
		return;
	k->tc = NULL;	/* the stack freed it */
	if (k->state == LG_CONNECTING)
		e = LG_E_CONNECT;
	else if (k->busy)
		e = reason == TCP_CLOSE_RESET ? LG_E_RESET :
		    reason == TCP_CLOSE_TIMEOUT ? LG_E_TIMEOUT : LG_E_CLOSED;
	else
		LGW->all.idle_closes++;
	conn_drop(k, e, false, e == LG_E_CONNECT ? RECONNECT_DELAY_NS : 0);
}

static const struct tcp_ops lg_ops = {
	.connected = on_connected,
	.data = on_data,
	.eof = on_eof,
	.closed = on_closed,
};

static void
conn_connect(struct lg_conn *k)
{
	const struct lg_target *t = &lg.target[k->target];
	int rc;

	if (k->state != LG_DOWN || k->retry_ns > LGW->now)
		return;
	rc = tcp_connect(LGW->tcp[t->via], t->ip_be, t->port, &lg_ops, k,
			 &k->tc);
	if (rc < 0) {
		k->tc = NULL;
		lg_count_err(LG_E_CONNECT);
		k->retry_ns = LGW->now + RECONNECT_DELAY_NS;
		return;
	}
	k->state = LG_CONNECTING;
	k->deadline_ns = LGW->now + lg.timeout_ns;
}

static void
release_nop(void *arg)
{
	(void)arg;
}

/* Send the current step's request (or wait for its connection). */
static void
client_send(struct lg_client *cl)
{
	struct lg_conn *k = step_conn(cl, cl->step);
	const struct lg_req *q = step_req(cl, cl->step);
	struct iovec iov;

	if (k->state != LG_UP) {
		cl->want_send = true;
		conn_connect(k);
		return;
	}
	cl->want_send = false;
	iov.iov_base = q->buf;
	iov.iov_len = q->len;
	/* The request bytes never change: zero copy, nothing to release. */
	if (tcp_send_iov(k->tc, &iov, 1, release_nop, NULL) < 0) {
		conn_drop(k, LG_E_SEND, true, 0);
		client_idle(cl, LGW->now + RECONNECT_DELAY_NS);
		return;
	}
	tcp_flush(k->tc);
	k->busy = true;
	k->req = q;
	k->sched_ns = lg_origin_sent(&cl->orig, LGW->now);
	k->sent_ns = LGW->now;
	k->deadline_ns = LGW->now + lg.timeout_ns;
	k->chk_i = 0;
	k->bad = -1;
	http_rsp_reset(&k->resp);
	LGW->all.sent++;
	LGW->all.bytes_out += q->len;
	if (LGW->recording) {
		LGW->win.sent++;
		LGW->win.bytes_out += q->len;
	}
}

void
lg_client_start(struct lg_client *cl, uint64_t sched_ns)
{
	cl->active = true;
	cl->step = 0;
	cl->pick++;
	lg_origin_token(&cl->orig, sched_ns);
	client_send(cl);
}

void
lg_client_hold(struct lg_client *cl)
{
	for (unsigned int j = 0; j < cl->nconn && !LGW->stopping; j++)
		conn_connect(&cl->conn[j]);
}

void
lg_housekeep(uint64_t now)
{
	LGW->now = now;
	for (unsigned int i = 0; i < LGW->nclients; i++) {
		struct lg_client *cl = &LGW->clients[i];

		for (unsigned int j = 0; j < cl->nconn; j++) {
			struct lg_conn *k = &cl->conn[j];

			if (k->state == LG_CONNECTING && now > k->deadline_ns)
				conn_drop(k, LG_E_CONNECT, true,
					  RECONNECT_DELAY_NS);
			else if (k->busy && now > k->deadline_ns)
				conn_drop(k, LG_E_TIMEOUT, true, 0);
		}
		if (cl->held)
			lg_client_hold(cl);
		else if (cl->active && cl->want_send)
			conn_connect(step_conn(cl, cl->step));
		else if (!cl->active && lg.rate == 0 && !LGW->stopping &&
			 cl->restart_ns <= now)
			lg_client_start(cl, now);
	}
}

void
lg_close_all(void)
{
	for (unsigned int i = 0; i < LGW->nclients; i++)
		for (unsigned int j = 0; j < LGW->clients[i].nconn; j++) {
			struct lg_conn *k = &LGW->clients[i].conn[j];

			k->busy = false;
			if (k->tc != NULL) {
				tcp_set_arg(k->tc, NULL);
				tcp_close(k->tc);
				k->tc = NULL;
			}
			k->state = LG_DOWN;
		}
}

/* Also read by the main lcore for the progress line while w runs: a
 * snapshot, off by the few connections changing meanwhile. */
unsigned int
lg_busy(const struct lg_worker *w)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < w->nclients; i++)
		for (unsigned int j = 0; j < w->clients[i].nconn; j++)
			n += w->clients[i].conn[j].busy;
	return n;
}

unsigned int
lg_up(const struct lg_worker *w)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < w->nclients; i++)
		for (unsigned int j = 0; j < w->clients[i].nconn; j++)
			n += w->clients[i].conn[j].state == LG_UP;
	return n;
}
