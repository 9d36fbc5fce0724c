/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The front's client requests (front.h): one call per request, split by
 * owner (front_frame.h), its sub-requests sent by front_up.c, the
 * answers merged into the one the client negotiated.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "front_priv.h"

/* ---- front ---------------------------------------------------------------- */

static int
shard_index(struct front *f, const struct front_replica *r)
{
	unsigned int s;

	for (s = 0; s < f->n_shards; s++)
		if (f->shard[s].ip_be == r->ip_be &&
		    f->shard[s].port == r->port)
			return (int)s;
	if (s == FRONT_MAX_SHARDS)
		return -ENOSPC;
	f->shard[s].ip_be = r->ip_be;
	f->shard[s].port = r->port;
	if (r->key != NULL) {
		if (strlen(r->key) >= sizeof(f->shard[s].key))
			return -E2BIG;
		f->shard[s].has_key = true;
		snprintf(f->shard[s].key, sizeof(f->shard[s].key), "%s",
			 r->key);
	}
	{
		const uint8_t *a = (const uint8_t *)&r->ip_be;
		char label[sizeof(f->shard[s].label)];

		snprintf(label, sizeof(label), "%u.%u.%u.%u:%u", a[0], a[1],
			 a[2], a[3], r->port);
		memcpy(f->shard[s].label, label, sizeof(label));
		snprintf(f->shard[s].url, sizeof(f->shard[s].url),
			 "http://%s", label);
	}
	f->n_shards++;
	return (int)s;
}

int
front_create(struct front **out, const struct front_conf *c, char *err,
	     size_t errlen)
{
	struct front *f;

	if (c->layout.n == 0 || c->layout.n > FRONT_MAX_RANGES ||
	    c->mem.alloc == NULL) {
		snprintf(err, errlen, "front %s: no layer ranges", c->name);
		return -EINVAL;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	snprintf(f->name, sizeof(f->name), "%s", c->name);
	f->layout = c->layout;
	for (unsigned int r = 0; r < c->layout.n; r++) {
		if (c->n_rep[r] == 0 || c->n_rep[r] > FRONT_MAX_REPLICAS) {
			snprintf(err, errlen, "front %s: range %u has %u "
				 "replicas", c->name, r, c->n_rep[r]);
			free(f);
			return -EINVAL;
		}
		f->n_rep[r] = c->n_rep[r];
		for (unsigned int i = 0; i < c->n_rep[r]; i++) {
			int s = shard_index(f, &c->rep[r][i]);

			if (s < 0) {
				snprintf(err, errlen, "front %s: %s", c->name,
					 s == -E2BIG ? "shard key too long" :
					 "too many shards");
				free(f);
				return -EINVAL;
			}
			f->rep[r][i] = (uint16_t)s;
		}
	}
	f->num_layers = c->num_layers;
	f->wire = c->wire;
	f->hop_ns = (uint64_t)(c->hop_timeout_ms ? c->hop_timeout_ms : 5000)
		    * 1000000ull;
	f->health_ns = (uint64_t)(c->health_interval_ms ?
				  c->health_interval_ms : 1000) * 1000000ull;
	f->conns = c->conns ? c->conns : 4;
	if (f->conns > FR_MAX_CONNS)
		f->conns = FR_MAX_CONNS;
	f->pipeline = c->pipeline ? c->pipeline : 8;
	f->mem = c->mem;
	*out = f;
	return 0;
}

void
front_destroy(struct front *f)
{
	if (f == NULL)
		return;
	for (unsigned int l = 0; l < FRONT_MAX_LCORE; l++)
		rte_free(f->st[l]);
	free(f);
}

void
front_set_alloc(struct front *f, const struct front_alloc *a)
{
	f->mem = *a;
}

uint32_t
front_max_conns(const struct front *f)
{
	return f->n_shards * f->conns;
}

struct front_lcore *
front_lcore_create(struct front *f, struct tcp_stack *tcp,
		   unsigned int lcore_id, int socket)
{
	struct front_lcore *fl;

	if (lcore_id >= FRONT_MAX_LCORE || f->st[lcore_id] != NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	fl = rte_zmalloc_socket("front_lcore", sizeof(*fl), 64, socket);
	if (fl == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	fl->st = rte_zmalloc_socket("front_stats", sizeof(*fl->st), 64,
				    socket);
	if (fl->st == NULL) {
		rte_free(fl);
		rte_errno = ENOMEM;
		return NULL;
	}
	fl->f = f;
	fl->tcp = tcp;
	fl->lcore_id = lcore_id;
	fl->socket = socket;
	for (unsigned int s = 0; s < f->n_shards; s++) {
		fl->up[s].fl = fl;
		fl->up[s].idx = s;
		fl->up[s].state = FR_DOWN;
		fl->up[s].backoff_ns = f->health_ns;
		snprintf(fl->up[s].why, sizeof(fl->up[s].why),
			 "not reached yet");
	}
	f->st[lcore_id] = fl->st;
	return fl;
}

void
front_lcore_close(struct front_lcore *fl)
{
	if (fl != NULL && !fl->closed)
		fr_conn_close_all(fl);
}

void
front_lcore_destroy(struct front_lcore *fl)
{
	if (fl == NULL)
		return;
	front_lcore_close(fl);
	/* the counters stay with the front (front_metrics) */
	rte_free(fl);
}

void
front_lcore_poll(struct front_lcore *fl, uint64_t now_ns)
{
	/* The caller's clock only spaces the checks; deadlines are on
	 * CLOCK_MONOTONIC (fr_now), as the answers' latencies. */
	if (now_ns < fl->next_check_ns)
		return;
	fl->next_check_ns = now_ns + 1000000ull;
	fr_up_check(fl, fr_now());
}

/* ---- calls ---------------------------------------------------------------- */

static void
call_free(struct fr_call *call)
{
	const struct front_alloc *a = &call->fl->f->mem;

	for (unsigned int i = 0; i < call->n_sub; i++)
		fr_sub_free_answer(&call->sub[i]);
	if (call->plan.mem != NULL)
		front_plan_free(&call->plan, a);
	if (call->jplan.mem != NULL)
		front_json_plan_free(&call->jplan, a);
	for (unsigned int i = 0; i < FRONT_MAX_RANGES; i++) {
		if (call->jbody[i] != NULL)
			a->free(a->arg, call->jbody[i]);
		free(call->lin[i]);
	}
	if (call->merged.mem != NULL)
		front_merged_free(&call->merged, a);
	if (call->heap != NULL)
		a->free(a->arg, call->heap);
	free(call);
}

static void
call_release(void *arg)
{
	struct fr_call *call = arg;

	call->held = false;
	fr_call_check(call);
}

/* The answer is an error: {"error":"msg"} (spec/wire.md §4's shape). */
static void
call_error(struct fr_call *call, int status, const char *msg)
{
	const struct front_alloc *a = &call->fl->f->mem;
	struct wire_error e;
	size_t cap;
	int n;

	wire_error_set(&e, status, "%s", msg);
	cap = 6 * strlen(e.msg) + 16;
	if (call->heap != NULL)
		a->free(a->arg, call->heap);
	call->heap = a->alloc(a->arg, cap);
	memset(&call->ans, 0, sizeof(call->ans));
	call->ans.status = status;
	call->ans.fmt_out = WIRE_FMT_NONE;
	if (call->heap == NULL ||
	    (n = wire_error_json(&e, call->heap, cap)) < 0) {
		call->ans.content_type = NULL;
		return;	/* the status alone */
	}
	call->ans.content_type = "application/json";
	call->one.iov_base = call->heap;
	call->one.iov_len = (size_t)n;
	call->ans.iov = &call->one;
	call->ans.iovcnt = 1;
	call->ans.len = (size_t)n;
}

/* The call's answer is decided as a failure: the subs not answered are
 * orphans (answers read and dropped); those not sent yet never are. */
static void
call_fail(struct fr_call *call)
{
	call->failed = true;
	for (unsigned int i = 0; i < call->n_sub; i++) {
		struct fr_sub *sub = &call->sub[i];

		if (sub->answered)
			continue;
		sub->orphan = true;
		fr_sub_unwait(sub);
	}
}

static void
call_fail_msg(struct fr_call *call, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
call_fail_msg(struct fr_call *call, int status, const char *fmt, ...)
{
	char msg[WIRE_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	call_error(call, status, msg);
	call_fail(call);
}

/* The answer is sub's own (status, type and body unchanged). */
static void
call_pass(struct fr_call *call, struct fr_sub *sub)
{
	memset(&call->ans, 0, sizeof(call->ans));
	call->ans.status = sub->status;
	call->ans.content_type = sub->ctype[0] != '\0' ? sub->ctype : NULL;
	call->ans.iov = sub->iov;
	call->ans.iovcnt = sub->n;
	call->ans.len = sub->len;
	call->ans.fmt_out = WIRE_FMT_NONE;
}

/* A merge's failure (rc < 0) made the call's answer: a shard's malformed
 * answer (sub bad) is its 502, anything else the front's 500. */
static bool
merge_failed(struct fr_call *call, int rc, const struct wire_error *e,
	     unsigned int bad)
{
	struct front_lcore *fl = call->fl;

	if (rc == -EPROTO && bad < call->n_sub) {
		struct fr_up *up = call->sub[bad].up;

		fl->st->sh[up->idx].errors[FR_E_MALFORMED]++;
		call_fail_msg(call, 502, "shard %s: %s",
			      fl->f->shard[up->idx].url, e->msg);
		return true;
	}
	if (rc < 0) {
		call_fail_msg(call, 500, "front: cannot merge the answers: %s",
			      strerror(-rc));
		return true;
	}
	return false;
}

static void
merge_binary(struct fr_call *call)
{
	struct front_lcore *fl = call->fl;
	struct front_sub_answer ans[FRONT_MAX_RANGES];
	struct wire_error e;
	unsigned int bad = 0;
	double ms = (double)(fr_now() - call->t0_ns) / 1e6;
	int rc;

	for (unsigned int i = 0; i < call->n_sub; i++) {
		ans[i].fmt = call->sub[i].fmt;
		ans[i].body.iov = call->sub[i].iov;
		ans[i].body.n = call->sub[i].n;
		ans[i].body.len = call->sub[i].len;
	}
	wire_error_set(&e, 502, "malformed answer");
	rc = front_merge_binary(&call->plan, ans, call->out_fmt, fl->hidden,
				ms, &fl->f->mem, &call->merged, &e, &bad);
	if (merge_failed(call, rc, &e, bad))
		return;
	fl->st->narrowed += call->merged.narrowed;
	memset(&call->ans, 0, sizeof(call->ans));
	call->ans.status = 200;
	call->ans.content_type = wire_fmt_content_type(call->out_fmt);
	call->ans.iov = call->merged.iov;
	call->ans.iovcnt = call->merged.iovcnt;
	call->ans.len = call->merged.len;
	call->ans.fmt_out = call->out_fmt;
}

static void
merge_json(struct fr_call *call)
{
	struct front_lcore *fl = call->fl;
	const struct front_alloc *a = &fl->f->mem;
	struct front_gather g[FRONT_MAX_RANGES];
	struct iovec one[FRONT_MAX_RANGES];
	struct wire_error e;
	unsigned int bad = 0;
	char *out = NULL;
	size_t len = 0;
	int rc;

	/* The JSON path is not the fast one: each answer made contiguous
	 * for the merge. */
	for (unsigned int i = 0; i < call->n_sub; i++) {
		struct fr_sub *sub = &call->sub[i];
		struct front_gather sg = { sub->iov, sub->n, sub->len };

		call->lin[i] = malloc(sub->len + 1);
		if (call->lin[i] == NULL) {
			call_fail_msg(call, 500, "front: out of memory");
			return;
		}
		front_gather_copy(&sg, 0, call->lin[i], sub->len);
		one[i].iov_base = call->lin[i];
		one[i].iov_len = sub->len;
		g[i].iov = &one[i];
		g[i].n = 1;
		g[i].len = sub->len;
	}
	wire_error_set(&e, 502, "malformed answer");
	rc = front_json_merge(g, call->n_sub, a, &out, &len, &e, &bad);
	if (merge_failed(call, rc, &e, bad))
		return;
	call->heap = out;
	memset(&call->ans, 0, sizeof(call->ans));
	call->ans.status = 200;
	call->ans.content_type = "application/json";
	call->one.iov_base = out;
	call->one.iov_len = len;
	call->ans.iov = &call->one;
	call->ans.iovcnt = 1;
	call->ans.len = len;
	call->ans.fmt_out = WIRE_FMT_NONE;
}

/* Every sub answered 200: the client's answer. */
static void
call_merge(struct fr_call *call)
{
	if (call->kind == FRONT_K_STATS ||
	    (call->json && call->n_sub == 1)) {
		/* forwarded as it is (the reference router too) */
		call_pass(call, &call->sub[0]);
		return;
	}
	if (call->json)
		merge_json(call);
	else
		merge_binary(call);
}

void
fr_call_check(struct fr_call *call)
{
	if (!call->delivered && !call->submitting &&
	    (call->failed || call->left == 0) && call->sends == 0) {
		call->delivered = true;
		call->held = true;
		call->ans.release = call_release;
		call->ans.release_arg = call;
		/* The server may send the answer and release it inside
		 * done() (an empty body goes at once): call_release's
		 * own check frees the call then, so nothing here may
		 * touch it after done(). */
		call->done(call->arg, &call->ans);
		return;
	}
	if (call->delivered && !call->held && call->sends == 0 &&
	    call->queued == 0)
		call_free(call);
}

void
fr_sub_answered(struct fr_sub *sub)
{
	struct fr_call *call = sub->call;

	sub->answered = true;
	if (!sub->orphan) {
		call->left--;
		if (sub->status != 200) {
			/* The shard's own error, unchanged (issue 19). */
			call_pass(call, sub);
			call_fail(call);
		} else if (call->left == 0) {
			call_merge(call);
		}
	}
	fr_call_check(call);
}

void
fr_sub_failed(struct fr_sub *sub, enum fr_err err, const char *why)
{
	struct fr_call *call = sub->call;
	struct front *f = call->fl->f;

	sub->answered = true;
	if (!sub->orphan) {
		call->left--;
		/* the reference router's wording: "shard {url}: {err}",
		 * 504 for its per-hop deadline, else 502 */
		call_fail_msg(call, err == FR_E_TIMEOUT ? 504 : 502,
			      "shard %s: %s", f->shard[sub->up->idx].url, why);
	}
	fr_call_check(call);
}

static struct fr_call *
call_new(struct front_lcore *fl, unsigned int n_sub, const struct front_req *rq,
	 front_done_fn done, void *arg)
{
	struct fr_call *call;

	call = calloc(1, sizeof(*call) + n_sub * sizeof(call->sub[0]));
	if (call == NULL)
		return NULL;
	call->fl = fl;
	call->done = done;
	call->arg = arg;
	call->kind = rq->kind;
	call->json = rq->fmt_in == WIRE_FMT_JSON;
	call->t0_ns = fr_now();
	call->submitting = true;
	call->n_sub = n_sub;
	call->left = n_sub;
	for (unsigned int i = 0; i < n_sub; i++) {
		call->sub[i].call = call;
		call->sub[i].idx = i;
		call->sub[i].kind = rq->kind == FRONT_K_STATS ? FR_S_STATS :
				    FR_S_WALK;
		call->sub[i].attempts = 1;
	}
	return call;
}

/* An answer decided at once, with no call: the static 500. */
static int
answer_nomem(struct front_answer *now)
{
	static const char body[] = "{\"error\":\"front: out of memory\"}";
	static struct iovec one = { (void *)(uintptr_t)body,
				    sizeof(body) - 1 };

	memset(now, 0, sizeof(*now));
	now->status = 500;
	now->content_type = "application/json";
	now->iov = &one;
	now->iovcnt = 1;
	now->len = sizeof(body) - 1;
	now->fmt_out = WIRE_FMT_NONE;
	return 1;
}

/* Send every sub; a range with no usable replica fails the call. */
static void
call_start(struct fr_call *call)
{
	struct front_lcore *fl = call->fl;
	struct front *f = fl->f;

	for (unsigned int i = 0; i < call->n_sub && !call->failed; i++) {
		struct fr_sub *sub = &call->sub[i];
		unsigned int s = f->rep[sub->range][0];

		if (fr_sub_start(fl, sub, -1) == 0)
			continue;
		sub->answered = true;
		call->left--;
		call_fail_msg(call, 502, "shard %s: %s", f->shard[s].url,
			      fl->up[s].why);
	}
}

/* End of front_submit: the answer now, or 0 (done() follows). */
static int
call_submitted(struct fr_call *call, struct front_answer *now)
{
	call->submitting = false;
	if (!call->failed && call->left > 0) {
		fr_call_check(call);
		return 0;
	}
	if (call->sends > 0) {
		/* decided, but a body is still referenced: done() follows */
		return 0;
	}
	call->delivered = true;
	call->held = true;
	call->ans.release = call_release;
	call->ans.release_arg = call;
	*now = call->ans;
	return 1;
}

static int
submit_error(struct front_lcore *fl, const struct front_req *rq, int status,
	     const char *msg, struct front_answer *now)
{
	struct fr_call *call = call_new(fl, 0, rq, NULL, NULL);

	if (call == NULL)
		return answer_nomem(now);
	call_error(call, status, msg);
	call->failed = true;
	return call_submitted(call, now);
}

static int
submit_stats(struct front_lcore *fl, const struct front_req *rq,
	     front_done_fn done, void *arg, struct front_answer *now)
{
	struct front *f = fl->f;
	struct fr_call *call;

	/* The reference router: the first shard that answers. Here the
	 * first range with a healthy replica. */
	for (unsigned int r = 0; r < f->layout.n; r++)
		for (unsigned int i = 0; i < f->n_rep[r]; i++) {
			if (fl->up[f->rep[r][i]].state != FR_UP)
				continue;
			call = call_new(fl, 1, rq, done, arg);
			if (call == NULL)
				return answer_nomem(now);
			call->sub[0].range = r;
			call_start(call);
			return call_submitted(call, now);
		}
	return submit_error(fl, rq, 503, "no shard reachable", now);
}

static int
submit_json(struct front_lcore *fl, const struct front_req *rq,
	    front_done_fn done, void *arg, struct front_answer *now)
{
	struct front *f = fl->f;
	struct wire_json_req jr;
	struct wire_error e;
	struct front_json_plan jp;
	struct fr_call *call;
	uint64_t *layers;
	size_t n;
	int rc;

	/* Only what the split needs, as the reference router: the layers
	 * (its errors: invalid JSON, neither layer nor layers, an empty
	 * list). The rest (residual, seq_len) is each shard's to check,
	 * and its 4xx reaches the client unchanged. */
	rc = wire_json_req_parse(&jr, (const char *)rq->body, rq->body_len,
				 &e);
	if (rc != 0)
		return submit_error(fl, rq, e.status, e.msg, now);
	if (!jr.has_layer && !jr.has_layers) {
		wire_json_req_free(&jr);
		return submit_error(fl, rq, 400,
				    "must provide 'layer' or 'layers'", now);
	}
	n = wire_json_req_n_layers(&jr);
	layers = malloc((n ? n : 1) * sizeof(*layers));
	if (layers == NULL) {
		wire_json_req_free(&jr);
		return answer_nomem(now);
	}
	for (size_t i = 0; i < n; i++)
		layers[i] = wire_json_req_layer(&jr, i);
	wire_json_req_free(&jr);
	rc = front_json_plan(&jp, layers, n, &f->layout, &f->mem, &e);
	free(layers);
	if (rc == -ENOMEM)
		return answer_nomem(now);
	if (rc != 0)
		return submit_error(fl, rq, e.status, e.msg, now);
	call = call_new(fl, jp.n_sub, rq, done, arg);
	if (call == NULL) {
		front_json_plan_free(&jp, &f->mem);
		return answer_nomem(now);
	}
	call->jplan = jp;
	for (unsigned int i = 0; i < jp.n_sub; i++) {
		struct fr_sub *sub = &call->sub[i];

		sub->range = jp.range[i];
		if (jp.n_sub == 1) {
			/* one owner: the body goes as it came */
			sub->body[0].iov_base = (void *)(uintptr_t)rq->body;
			sub->body[0].iov_len = rq->body_len;
		} else {
			if (front_json_sub_body((const char *)rq->body,
					rq->body_len, jp.layers[i],
					jp.n_layers[i], &f->mem,
					&call->jbody[i], &call->jlen[i]) != 0) {
				call_fail_msg(call, 500,
					      "front: out of memory");
				break;
			}
			sub->body[0].iov_base = call->jbody[i];
			sub->body[0].iov_len = call->jlen[i];
		}
		sub->body_n = 1;
		sub->body_len = sub->body[0].iov_len;
	}
	if (!call->failed)
		call_start(call);
	return call_submitted(call, now);
}

static int
submit_binary(struct front_lcore *fl, const struct front_req *rq,
	      front_done_fn done, void *arg, struct front_answer *now)
{
	struct front *f = fl->f;
	struct wire_req wr;
	struct wire_error e;
	struct wire_model m = {
		.loaded = true, .hidden = fl->hidden,
		.num_layers = fl->num_layers, .owns_all = true,
	};
	struct front_plan plan;
	struct fr_call *call;
	int rc;

	/* spec/wire.md §4, in its order, with the shard's messages: the
	 * front answers what no shard would take. */
	if (wire_req_decode(&wr, rq->body, rq->body_len, rq->fmt_in, &e) != 0 ||
	    wire_req_validate(&wr, &m, &e) != 0)
		return submit_error(fl, rq, e.status, e.msg, now);
	rc = front_plan_binary(&plan, &wr, rq->body, &f->layout, &f->mem, &e);
	if (rc == -ENOMEM)
		return answer_nomem(now);
	if (rc != 0)
		return submit_error(fl, rq, e.status, e.msg, now);
	call = call_new(fl, plan.n_sub, rq, done, arg);
	if (call == NULL) {
		front_plan_free(&plan, &f->mem);
		return answer_nomem(now);
	}
	call->plan = plan;
	call->out_fmt = wire_response_format(rq->accept, rq->accept_len,
					     &f->wire);
	for (unsigned int i = 0; i < plan.n_sub; i++) {
		struct fr_sub *sub = &call->sub[i];

		sub->range = plan.sub[i].range;
		sub->body[0].iov_base = (void *)(uintptr_t)plan.sub[i].hdr;
		sub->body[0].iov_len = plan.sub[i].hdr_len;
		sub->body_n = 1;
		if (plan.payload_len > 0) {
			sub->body[1].iov_base =
				(void *)(uintptr_t)plan.payload;
			sub->body[1].iov_len = plan.payload_len;
			sub->body_n = 2;
		}
		sub->body_len = plan.sub[i].hdr_len + plan.payload_len;
	}
	if (plan.n_sub == 0)
		call_merge(call);	/* K = 0: the empty batch, here */
	else
		call_start(call);
	return call_submitted(call, now);
}

int
front_submit(struct front_lcore *fl, const struct front_req *rq,
	     front_done_fn done, void *arg, struct front_answer *now)
{
	if (fl->closed)
		return submit_error(fl, rq, 503, "front stopping", now);
	if (rq->kind == FRONT_K_STATS)
		return submit_stats(fl, rq, done, arg, now);
	if (rq->fmt_in == WIRE_FMT_JSON)
		return submit_json(fl, rq, done, arg, now);
	/* the binary checks need the model's hidden size */
	if (!fl->have_facts)
		return submit_error(fl, rq, 503, "no shard reachable", now);
	return submit_binary(fl, rq, done, arg, now);
}
