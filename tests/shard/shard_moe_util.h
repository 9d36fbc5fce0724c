/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Request bodies of the expert routes for test_shard_experts.c
 * (spec/moe.md §3.2-§3.5, §7): layer batches in f32, f16 and i8,
 * multi-layer batches in f32 and Q8_K, with deterministic residuals.
 * Include after <cmocka.h> and shard_test_util.h.
 */
#ifndef SHARD_MOE_UTIL_H
#define SHARD_MOE_UTIL_H

#include <math.h>

#include "quant.h"

#define H 512
#define NE 8			/* experts in the model */
#define OWN_LAST 5		/* the unit holds experts 0..5 */
#define MAXQ 40			/* requests per test */

#define P_LB "/v1/experts/layer-batch"
#define P_LB16 "/v1/experts/layer-batch-f16"
#define P_LB8 "/v1/experts/layer-batch-i8"
#define P_ML "/v1/experts/multi-layer-batch"
#define P_MLQ "/v1/experts/multi-layer-batch-q8k"

#define T_LB "application/x-larql-experts-layer"
#define T_LB16 "application/x-larql-experts-layer-f16"
#define T_LB8 "application/x-larql-experts-layer-i8"
#define T_ML "application/x-larql-experts-multi-layer"
#define T_ML16 "application/x-larql-experts-multi-layer-f16"
#define T_ML8 "application/x-larql-experts-multi-layer-i8"

enum in { IN_F32, IN_F16, IN_I8, IN_Q8K };

/* A request under construction: its body is malloc'd. */
struct q {
	int method;
	const char *path;
	const char *ct;
	const char *accept;
	uint8_t *body;
	size_t len, cap;
};

struct set {
	struct q q[MAXQ];
	unsigned int n;
};

/* ---- bodies (spec/moe.md §3, §7) ---- */

static void
put(struct q *r, const void *p, size_t n)
{
	if (r->len + n > r->cap) {
		r->cap = (r->len + n) * 2 + 64;
		r->body = realloc(r->body, r->cap);
		assert_non_null(r->body);
	}
	memcpy(r->body + r->len, p, n);
	r->len += n;
}

#define put32(r, v) put((r), &(uint32_t){ (v) }, 4)
#define putf(r, v) put((r), &(float){ (v) }, 4)

/* A residual of hidden values, deterministic by seed, in [-2, 2). */
static void
residual(float *x, uint32_t hidden, uint32_t seed)
{
	uint32_t s = seed * 2654435761u + 1;

	for (uint32_t i = 0; i < hidden; i++) {
		s = s * 1664525u + 1013904223u;
		x[i] = (float)(s >> 8) / (float)(1u << 24) * 4.0f - 2.0f;
	}
}

/* The input of one layer batch as kind in encodes it. */
static void
put_input(struct q *r, enum in in, uint32_t hidden, uint32_t seed)
{
	float x[H * 2];
	uint32_t nb = hidden / 256;

	residual(x, hidden, seed);
	switch (in) {
	case IN_F32:
		put(r, x, 4 * (size_t)hidden);
		break;
	case IN_F16:
		for (uint32_t i = 0; i < hidden; i++) {
			uint16_t h = quant_f32_to_f16_1(x[i]);

			put(r, &h, 2);
		}
		break;
	case IN_I8:
		putf(r, 2.0f / 127.0f);		/* scale */
		putf(r, 0.25f);			/* zero point */
		for (uint32_t i = 0; i < hidden; i++) {
			int8_t v = (int8_t)lrintf(x[i] * 63.0f);

			put(r, &v, 1);
		}
		break;
	case IN_Q8K: {
		/* §3.5: qs (as a client quantises an h in [-2, 2)), d per
		 * block, sums per 32 */
		int8_t qs[H * 2];
		int16_t sums[H * 2 / 32];

		for (uint32_t i = 0; i < hidden; i++)
			qs[i] = (int8_t)lrintf(x[i] * 63.0f);
		put(r, qs, hidden);
		for (uint32_t b = 0; b < nb; b++)
			putf(r, 2.0f / 127.0f + (float)b / 1024.0f);
		for (uint32_t g = 0; g < nb * 8; g++) {
			int s = 0;

			for (int i = 0; i < 32; i++)
				s += qs[32 * g + i];
			sums[g] = (int16_t)s;
		}
		put(r, sums, 2 * 8 * (size_t)nb);
		break;
	}
	}
}

static struct q *
newq(struct set *s, int method, const char *path, const char *ct,
     const char *accept)
{
	struct q *r;

	assert_true(s->n < MAXQ);
	r = &s->q[s->n++];
	memset(r, 0, sizeof(*r));
	r->method = method;
	r->path = path;
	r->ct = ct;
	r->accept = accept;
	return r;
}

/* §3.2/3.3/§7: one layer batch of k pairs (e[i], w[i]). */
static struct q *
lb(struct set *s, enum in in, const char *accept, uint32_t layer,
   uint32_t hidden, uint32_t seed, unsigned int k, const uint32_t *e,
   const float *w)
{
	static const char *const path[] = { P_LB, P_LB16, P_LB8 };
	static const char *const ct[] = { T_LB, T_LB16, T_LB8 };
	struct q *r = newq(s, HTTP_M_POST, path[in], ct[in], accept);

	put32(r, layer);
	put32(r, hidden);
	put32(r, k);
	put_input(r, in, hidden, seed);
	for (unsigned int i = 0; i < k; i++) {
		put32(r, e[i]);
		putf(r, w[i]);
	}
	return r;
}

/* One task of a multi-layer body (§3.4/§3.5). */
struct task {
	uint32_t layer, hidden, seed;
	unsigned int ne;
	uint32_t e[20];
	float w[20];
};

static struct q *
ml(struct set *s, bool q8k, const char *accept, const struct task *t,
   unsigned int n)
{
	struct q *r = newq(s, HTTP_M_POST, q8k ? P_MLQ : P_ML, T_ML, accept);

	put32(r, n);
	for (unsigned int i = 0; i < n; i++) {
		put32(r, t[i].layer);
		put32(r, t[i].hidden);
		put32(r, t[i].ne);
		put_input(r, q8k ? IN_Q8K : IN_F32, t[i].hidden, t[i].seed);
		for (unsigned int k = 0; k < t[i].ne; k++)
			put32(r, t[i].e[k]);
		for (unsigned int k = 0; k < t[i].ne; k++)
			putf(r, t[i].w[k]);
	}
	return r;
}

static void
set_free(struct set *s)
{
	for (unsigned int i = 0; i < s->n; i++)
		free(s->q[i].body);
	s->n = 0;
}

#endif /* SHARD_MOE_UTIL_H */
