/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* ffn-loadgen's expert requests and answers (lg_expert.h), spec/moe.md. */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "larql_client.h"
#include "lg_expert.h"
#include "quant.h"
#include "wire.h"
#include "wire_moe.h"

static const struct {
	const char *name;
	enum wire_fmt own;	/* its own answer format (§7) */
	enum wire_moe_in in;	/* its residual's encoding */
} routes[LG_XR_COUNT] = {
	[LG_XR_LAYER] = { "layer-batch", WIRE_FMT_F32, WIRE_MOE_IN_F32 },
	[LG_XR_LAYER_F16] = { "layer-batch-f16", WIRE_FMT_F16,
			      WIRE_MOE_IN_F16 },
	[LG_XR_LAYER_I8] = { "layer-batch-i8", WIRE_FMT_I8, WIRE_MOE_IN_I8 },
};

static const char *const paths[LG_XR_COUNT] = {
	"/v1/experts/layer-batch",
	"/v1/experts/layer-batch-f16",
	"/v1/experts/layer-batch-i8",
};

int
lg_expert_route_parse(const char *s)
{
	for (int r = 0; r < LG_XR_COUNT; r++)
		if (strcmp(s, routes[r].name) == 0)
			return r;
	return -EINVAL;
}

const char *
lg_expert_route_name(int route)
{
	return routes[route].name;
}

const char *
lg_expert_path(int route)
{
	return paths[route];
}

const char *
lg_expert_req_ctype(int route)
{
	/* The clients send the route's own type (§2); the shard does not
	 * read it on these routes. */
	return wire_moe_content_type(WIRE_MOE_LAYER, routes[route].own);
}

/* enum lc_fmt and enum wire_fmt number f32, f16, i8 alike. */
const char *
lg_expert_accept(int wire)
{
	return wire_moe_content_type(WIRE_MOE_LAYER, (enum wire_fmt)wire);
}

int
lg_expert_answer_fmt(int route, int wire)
{
	const struct wire_opts on = { .f16 = true, .i8 = true };
	const char *acc = lg_expert_accept(wire);

	return (int)wire_moe_response_format(WIRE_MOE_LAYER,
					     routes[route].own, acc,
					     strlen(acc), &on);
}

const char *
lg_expert_answer_ctype(int fmt)
{
	return wire_moe_content_type(WIRE_MOE_LAYER, (enum wire_fmt)fmt);
}

/* A stream of its own per (seed, index, what): splitmix-style mixing of
 * the three into a nonzero xorshift32 state. */
static uint32_t
stream(uint32_t seed, uint32_t index, uint32_t what)
{
	uint64_t z = ((uint64_t)seed << 32 | index) + 0x9e3779b97f4a7c15ull *
		     (what + 1);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (uint32_t)z ? (uint32_t)z : 0x9e3779b9u;
}

/* xorshift32, in [-1, 1) (as make_input of lg_main.c). */
static float
next_unit(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return (float)((double)*s / 2147483648.0 - 1.0);
}

uint32_t
lg_expert_owned(const struct lg_expert_spec *sp)
{
	uint32_t last = sp->last < sp->num_experts ? sp->last :
			sp->num_experts - 1;

	if (sp->num_experts == 0 || sp->first > last)
		return 0;
	return last - sp->first + 1;
}

int
lg_expert_draw(const struct lg_expert_spec *sp, float *x, uint32_t *ids,
	       float *w, uint32_t *k)
{
	uint32_t n = lg_expert_owned(sp), kk, s;
	double *p, mx = -INFINITY, sum = 0, sel = 0;

	if (n == 0 || sp->top_k == 0 || sp->top_k > LG_EXPERT_MAX_K)
		return -EINVAL;
	kk = sp->top_k < n ? sp->top_k : n;
	if (x != NULL) {
		s = stream(sp->seed, sp->index, 0);
		for (uint32_t i = 0; i < sp->hidden; i++)
			x[i] = next_unit(&s);
	}
	/* Router logits in [-4, 4), softmax over all E (§2: the client
	 * routes over every expert, then picks among the shard's). */
	p = malloc(sp->num_experts * sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	s = stream(sp->seed, sp->index, 1);
	for (uint32_t e = 0; e < sp->num_experts; e++) {
		p[e] = 4.0 * next_unit(&s);
		mx = fmax(mx, p[e]);
	}
	for (uint32_t e = 0; e < sp->num_experts; e++) {
		p[e] = exp(p[e] - mx);
		sum += p[e];
	}
	/* Top-k of the owned, largest first (selection: k is small). */
	for (uint32_t j = 0; j < kk; j++) {
		uint32_t best = UINT32_MAX;

		for (uint32_t e = sp->first; e < sp->first + n; e++) {
			bool taken = false;

			for (uint32_t i = 0; i < j && !taken; i++)
				taken = ids[i] == e;
			if (!taken && (best == UINT32_MAX || p[e] > p[best]))
				best = e;
		}
		ids[j] = best;
		sel += p[best] / sum;
	}
	/* Renormalise the selected probabilities to sum 1. */
	for (uint32_t j = 0; j < kk; j++)
		w[j] = (float)(p[ids[j]] / sum / sel);
	free(p);
	*k = kk;
	return 0;
}

static void
put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

ssize_t
lg_expert_body(const struct lg_expert_spec *sp, uint8_t **body)
{
	uint32_t ids[LG_EXPERT_MAX_K], k;
	float w[LG_EXPERT_MAX_K];
	enum wire_moe_in in = routes[sp->route].in;
	uint64_t xb = wire_moe_in_bytes(in, sp->hidden);
	float *x = malloc((sp->hidden + 1) * sizeof(*x));
	uint8_t *b = NULL;
	size_t len;
	int rc;

	if (x == NULL)
		return -ENOMEM;
	rc = lg_expert_draw(sp, x, ids, w, &k);
	len = 12 + xb + 8 * (size_t)k;
	if (rc == 0 && (b = malloc(len)) == NULL)
		rc = -ENOMEM;
	if (rc < 0) {
		free(x);
		return rc;
	}
	/* §3.2: layer, hidden, K, the residual, K (expert_id, weight) */
	put_u32(b, sp->layer);
	put_u32(b + 4, sp->hidden);
	put_u32(b + 8, k);
	/* f32 as is, f16 nearest-even, i8 [scale][zero 0][q]: the encodings
	 * of an answer vector are the residual's (§3.3, §7). */
	wire_moe_vec_encode((enum wire_fmt)routes[sp->route].own, x,
			    sp->hidden, b + 12);
	for (uint32_t j = 0; j < k; j++) {
		uint32_t wb;

		memcpy(&wb, &w[j], 4);
		put_u32(b + 12 + xb + 8 * j, ids[j]);
		put_u32(b + 12 + xb + 8 * j + 4, wb);
	}
	free(x);
	*body = b;
	return (ssize_t)len;
}

int
lg_expert_frame_expect(struct lg_frame *f, int fmt, uint32_t hidden)
{
	memset(f, 0, sizeof(*f));
	f->fmt = fmt;
	f->expert = true;
	f->body_len = WIRE_MOE_LAYER_HDR +
		      wire_moe_vec_bytes((enum wire_fmt)fmt, hidden);
	f->chk = calloc(1, sizeof(*f->chk));
	if (f->chk == NULL)
		return -ENOMEM;
	f->nchk = 1;
	f->chk->off = 0;	/* hidden, as in the request (§3.2) */
	f->chk->len = 4;
	put_u32(f->chk->bytes, hidden);
	return 0;
}

/* An answer's vector as f32 (n values of fmt at p, unaligned). */
static void
decode_vec(int fmt, const uint8_t *p, uint32_t n, float *dst)
{
	if (fmt == LC_F32) {
		memcpy(dst, p, 4 * (size_t)n);
	} else if (fmt == LC_F16) {
		for (uint32_t i = 0; i < n; i++) {
			uint16_t h;

			memcpy(&h, p + 2 * (size_t)i, 2);
			dst[i] = quant_f16_to_f32_1(h);
		}
	} else {
		quant_i8_rows_to_f32(dst, p, 1, n);
	}
}

int
lg_expert_values_close(const struct lg_frame *f, const uint8_t *ref,
		       const uint8_t *body, double *worst)
{
	uint32_t n;
	float *a, *b;
	double tol, m = 0, w = 0;
	int rc = 1;

	memcpy(&n, ref, 4);	/* checked == the request's hidden */
	if (n == 0 || WIRE_MOE_LAYER_HDR + wire_moe_vec_bytes(
			(enum wire_fmt)f->fmt, n) != f->body_len)
		return -EBADMSG;
	a = malloc(2 * (size_t)n * sizeof(*a));
	if (a == NULL)
		return -ENOMEM;
	b = a + n;
	decode_vec(f->fmt, ref + WIRE_MOE_LAYER_HDR, n, a);
	decode_vec(f->fmt, body + WIRE_MOE_LAYER_HDR, n, b);
	tol = f->fmt == LC_F32 ? 1e-5 : f->fmt == LC_F16 ?
	      1.0 / 1024 + 1e-5 : 2.0 / 127;
	for (uint32_t i = 0; i < n; i++)
		m = fmax(m, fabs(a[i]));
	for (uint32_t i = 0; i < n; i++) {
		double d = fabs((double)b[i] - a[i]);

		if (!(d <= tol * m + 1e-6))
			rc = 0;	/* NaN too */
		if (m > 0 && d / m > w)
			w = d / m;
	}
	free(a);
	if (worst != NULL)
		*worst = w;
	return rc;
}
