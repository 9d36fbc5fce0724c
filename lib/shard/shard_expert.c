/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The layer-batch and multi-layer expert routes (spec/moe.md §3.2-§3.5,
 * §4, §7) and the checks and compute every expert route shares.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"
#include "shard_expert_priv.h"
#include "shard_walk_priv.h"

struct ffn_moe_scratch *
shard_moe_scratch(struct shard_unit *u, unsigned int lcore)
{
	struct ffn_moe_scratch **s = &u->moe_scratch[lcore % SHARD_MAX_LCORE];

	/* One writer per lcore index (shard.h): no lock. Made here, on
	 * the lcore that uses it, so its memory is that lcore's node. */
	if (*s == NULL && u->moe != NULL)
		*s = ffn_moe_scratch_new(u->moe, SHARD_MOE_ROWS, -1);
	return *s;
}

double
shard_moe_ms_since(uint64_t t0_ns)
{
	return (double)(shard_now_ns() - t0_ns) / 1e6;
}

static uint32_t
moe_hidden(const struct shard_unit *u)
{
	return u->moe_hidden ? u->moe_hidden : u->facts.hidden;
}

int
shard_moe_task_check(const struct shard_unit *u,
		     const struct wire_moe_task *t, struct wire_error *err)
{
	uint32_t e;
	float w;

	if (!shard_moe_loaded(u))
		return wire_error_set(err, 404, "no model loaded");
	if (t->hidden == 0)
		return 0;	/* §4: 200 with an empty vector */
	if (t->hidden != moe_hidden(u))
		return wire_error_set(err, 400,
			"residual length %u != hidden_size %u", t->hidden,
			moe_hidden(u));
	if (!u->moe_hybrid)
		return wire_error_set(err, 400, "model is not a hybrid MoE "
			"\u2014 no expert endpoints available");
	/* §1: a pair whose weight is 0 (either sign) is skipped without
	 * looking its expert up; any other must be held, or the sum would
	 * be partial (the reference's silent skip, §4). */
	for (uint32_t k = 0; k < t->k; k++) {
		wire_moe_task_pair(t, k, &e, &w);
		if (w == 0.0f)
			continue;
		if (!shard_moe_held(u, t->layer, e))
			return wire_error_set(err, 400,
				"expert %u of layer %u is not held by this "
				"shard", e, t->layer);
	}
	return 0;
}

int
shard_moe_task_run(struct shard_unit *u, const struct wire_moe_task *t,
		   float *out, unsigned int lcore)
{
	struct shard_stats *st = &u->stats[lcore % SHARD_MAX_LCORE];
	struct ffn_moe_pair *p;
	struct ffn_moe_scratch *s;
	float *h = NULL;
	unsigned int n = 0, bad;
	int rc;

	if (t->hidden == 0)
		return 0;
	/* K is bounded by the body (8 bytes a pair on the wire). */
	p = malloc(((size_t)t->k + 1) * sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	for (uint32_t k = 0; k < t->k; k++) {
		wire_moe_task_pair(t, k, &p[k].expert, &p[k].weight);
		n += p[k].weight != 0.0f;
	}
	if (n == 0) {
		/* §4: K 0 or every weight 0: zeros, no expert looked up */
		memset(out, 0, (size_t)t->hidden * sizeof(float));
		free(p);
		return 0;
	}
	s = shard_moe_scratch(u, lcore);
	if (s == NULL) {
		free(p);
		return -ENOMEM;
	}
	if (t->in != WIRE_MOE_IN_Q8K) {
		h = malloc((size_t)t->hidden * sizeof(float));
		if (h == NULL) {
			free(p);
			return -ENOMEM;
		}
		/* §1: the raw x, normed once per request */
		wire_moe_task_x(t, h);
		ffn_moe_norm(u->moe, t->layer, h, h);
	}
	rc = ffn_moe_mix(u->moe, t->layer, h,
			 t->in == WIRE_MOE_IN_Q8K ? t->x : NULL, p, t->k, out,
			 &bad, s);
	free(h);
	free(p);
	if (rc == 0) {
		st->expert_rows += n;
		st->expert_runs += n;
	}
	return rc;
}

int
shard_moe_one(struct shard_unit *u, uint32_t layer, uint32_t e,
	      const float *x, float *y, unsigned int lcore)
{
	struct ffn_moe_scratch *s = shard_moe_scratch(u, lcore);
	struct shard_stats *st = &u->stats[lcore % SHARD_MAX_LCORE];
	float *h;
	int rc;

	if (s == NULL)
		return -ENOMEM;
	h = malloc((size_t)u->moe_hidden * sizeof(float));
	if (h == NULL)
		return -ENOMEM;
	ffn_moe_norm(u->moe, layer, x, h);
	rc = ffn_moe_expert(u->moe, layer, e, h, 1, y, s);
	free(h);
	if (rc == 0) {
		st->expert_rows++;
		st->expert_runs++;
	}
	return rc;
}

/*
 * §7: the answer's format, then the precision guard: f16 chosen by
 * Accept for a route whose own format is not f16, and some finite value
 * would narrow to +-Inf: the answer goes in f32 (its Content-Type says
 * so), counted. n vectors of hidden[i] floats at v[i].
 */
enum wire_fmt
shard_moe_answer_format(struct shard_unit *u, const struct shard_http_req *rq,
			enum wire_moe_family fam, enum wire_fmt own,
			const float *const *v, const uint32_t *hidden,
			uint32_t n, unsigned int lcore)
{
	enum wire_fmt fmt = wire_moe_response_format(fam, own, rq->accept,
						     rq->accept_len,
						     &u->wire);

	if (fmt != WIRE_FMT_F16 || own == WIRE_FMT_F16 || !u->f16_guard)
		return fmt;
	for (uint32_t i = 0; i < n; i++)
		if (wire_moe_f16_overflows(v[i], hidden[i])) {
			u->stats[lcore % SHARD_MAX_LCORE].f16_guard++;
			return WIRE_FMT_F32;
		}
	return fmt;
}

/* One layer-batch request: the batched path with one request, so a
 * request alone and in a batch are the same code. */
void
shard_expert_layer(struct shard_unit *u, const struct shard_http_req *rq,
		   struct shard_resp *resp, const struct shard_ctx *ctx)
{
	shard_expert_layers(u, &rq, &resp, 1, ctx);
}

void
shard_expert_multi(struct shard_unit *u, const struct shard_http_req *rq,
		   struct shard_resp *resp, const struct shard_ctx *ctx)
{
	uint64_t t0 = shard_now_ns();
	const struct shard_route_def *d;
	struct wire_moe_task t;
	struct wire_error err;
	enum wire_moe_family fam;
	enum wire_fmt own, fmt;
	enum wire_moe_in in;
	uint32_t n = 0, *hid = NULL, *lay = NULL;
	const float **vec = NULL;
	float *f32 = NULL;
	uint8_t *body = NULL;
	size_t pos, len, vals = 0, at;

	d = &shard_routes[resp->route];
	fam = d->moe_fam;
	own = d->moe_own;
	in = d->moe_in;
	if (wire_moe_multi_check(rq->body, rq->body_len, in, &n, &err) < 0) {
		shard_resp_wire_error(resp, &err);
		return;
	}
	/* Every task is checked before any is computed: one bad task
	 * fails the whole request (§4). n is bounded by the body (each
	 * task has at least 12 bytes), so these are too. */
	hid = malloc(((size_t)n + 1) * sizeof(*hid));
	lay = malloc(((size_t)n + 1) * sizeof(*lay));
	vec = malloc(((size_t)n + 1) * sizeof(*vec));
	if (hid == NULL || lay == NULL || vec == NULL)
		goto nomem;
	pos = 4;
	for (uint32_t i = 0; i < n; i++) {
		wire_moe_multi_next(rq->body, &pos, in, &t);
		/* §7: on the Q8_K route, hidden must be whole blocks */
		if (in == WIRE_MOE_IN_Q8K && t.hidden % 256 != 0) {
			wire_error_set(&err, 400, "q8k activation needs "
				"hidden_size divisible by 256 (got %u)",
				t.hidden);
			goto fail;
		}
		if (shard_moe_task_check(u, &t, &err) < 0)
			goto fail;
		hid[i] = t.hidden;
		lay[i] = t.layer;
		vals += t.hidden;
	}
	f32 = malloc((vals + 1) * sizeof(float));
	if (f32 == NULL)
		goto nomem;
	pos = 4;
	at = 0;
	for (uint32_t i = 0; i < n; i++) {
		wire_moe_multi_next(rq->body, &pos, in, &t);
		vec[i] = f32 + at;
		if (shard_moe_task_run(u, &t, f32 + at, ctx->lcore) < 0) {
			wire_error_set(&err, 500, "expert compute failed");
			goto fail;
		}
		at += t.hidden;
	}
	fmt = shard_moe_answer_format(u, rq, fam, own, vec, hid, n,
				      ctx->lcore);
	len = 4;
	for (uint32_t i = 0; i < n; i++)
		len += 8 + wire_moe_vec_bytes(fmt, hid[i]);
	body = malloc(len);
	if (body == NULL)
		goto nomem;
	wire_moe_multi_resp_count(body, n);
	at = 4;
	for (uint32_t i = 0; i < n; i++) {
		wire_moe_multi_resp_task(body + at, lay[i], hid[i]);
		wire_moe_vec_encode(fmt, vec[i], hid[i], body + at + 8);
		at += 8 + wire_moe_vec_bytes(fmt, hid[i]);
	}
	shard_resp_heap(resp, wire_moe_content_type(fam, fmt), (char *)body,
			len);
	shard_count_latency(&u->stats[ctx->lcore % SHARD_MAX_LCORE],
			    shard_moe_ms_since(t0));
	goto out;
nomem:
	wire_error_set(&err, 503, "out of memory");
fail:
	shard_resp_wire_error(resp, &err);
out:
	free(f32);
	free(vec);
	free(lay);
	free(hid);
}
