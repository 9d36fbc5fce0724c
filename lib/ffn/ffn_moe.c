/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * What an expert shard computes (spec/moe.md §1): the pre-experts
 * RMSNorm, one expert on rows of h (through the expert's kind,
 * ffn_moe_kind.c), and the layer batch out = Σ_k w_k y_{e_k}(h).
 *
 * The norm and the batch sum are specified to the rounding: each product
 * rounded on its own, then added. A compiler allowed to contract (GCC's
 * default -ffp-contract=fast in GNU C modes; clang's "on" within one
 * expression) would fuse x*x + s or w*y + out into one FMA wherever the
 * target has one (-march=native, an FMA-capable -mcpu), rounding once and
 * changing the bits. So those products go through a volatile temporary:
 * the product is stored, rounded to f32, and loaded as an opaque value,
 * whatever the flags. It costs H stores and loads per term, against
 * 3 I H multiply-adds of the expert behind the term.
 */
#include <errno.h>
#include <math.h>
#include <numa.h>
#include <stdlib.h>
#include <string.h>

#include "ffn_kq.h"
#include "ffn_moe_priv.h"

static size_t
align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

/* ---- scratch ---- */


/* The largest need of any kind held: every layer may be asked for. */
static size_t
kinds_scratch(const struct ffn_moe *m, unsigned rows)
{
	size_t need = 0, n;
	uint32_t L;

	for (L = 0; L < m->nl; L++) {
		if (m->layers[L].kind == NULL)
			continue;
		n = m->layers[L].kind->scratch(m, rows);
		if (n > need)
			need = n;
	}
	return need;
}

struct ffn_moe_scratch *
ffn_moe_scratch_new(const struct ffn_moe *m, unsigned max_rows,
		    int numa_node)
{
	struct ffn_moe_scratch *s;
	size_t yb, xb, gb, pb, at;
	uint8_t *p;

	if (m == NULL || max_rows == 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->max_rows = max_rows;
	s->H = m->H;
	yb = align64((size_t)m->H * sizeof(float));
	xb = align64((size_t)max_rows * m->H * sizeof(float));
	gb = align64((size_t)max_rows * m->I * sizeof(float));
	pb = align64((size_t)max_rows * sizeof(void *));
	s->eng_len = align64(kinds_scratch(m, max_rows));
	s->bytes = yb + xb + 2 * gb + 2 * pb + s->eng_len;
	p = ffn_mem_scratch_alloc(s->bytes, numa_node, &s->numa);
	if (p == NULL) {
		free(s);
		return NULL;
	}
	s->y = (float *)p;
	at = yb;
	s->xd = (float *)(p + at);
	at += xb;
	s->g = (float *)(p + at);
	at += gb;
	s->u = (float *)(p + at);
	at += gb;
	s->xp = (const float **)(void *)(p + at);
	at += pb;
	s->yp = (float **)(void *)(p + at);
	at += pb;
	s->eng = s->eng_len ? p + at : NULL;
	return s;
}

void
ffn_moe_scratch_free(struct ffn_moe_scratch *s)
{
	if (s == NULL)
		return;
	ffn_mem_scratch_free(s->y, s->bytes, s->numa);
	free(s);
}

/* ---- the pre-experts norm (§1) ---- */

void
ffn_moe_norm(const struct ffn_moe *m, uint32_t layer, const float *x,
	     float *h)
{
	const float *n;
	float s = 0.0f, r;
	uint32_t i, H;

	if (m == NULL || x == NULL || h == NULL)
		return;
	H = m->H;
	n = layer < m->nl ? m->layers[layer].norm : NULL;
	if (n == NULL) {	/* no vector for the layer: h = x */
		if (h != x)
			memmove(h, x, (size_t)H * sizeof(float));
		return;
	}
	/* s = Σ x_i² in f32, index order, each square rounded (never
	 * fused into the sum: see the top of this file) */
	for (i = 0; i < H; i++) {
		volatile float sq = x[i] * x[i];

		s += sq;
	}
	r = sqrtf(s / (float)H + FFN_MOE_NORM_EPS);
	/* (x_i / r) * n_i as written: division, then the weight as stored
	 * (no +1 offset, Gemma 4) */
	for (i = 0; i < H; i++)
		h[i] = (x[i] / r) * n[i];
}

/* ---- one expert ---- */

static int
expert_args(const struct ffn_moe *m, uint32_t layer, uint32_t e,
	    const void *in, unsigned rows, const float *y,
	    const struct ffn_moe_scratch *s)
{
	if (m == NULL || in == NULL || y == NULL || s == NULL ||
	    s->H != m->H)
		return -EINVAL;
	if (!ffn_moe_held(m, layer, e))
		return -ERANGE;
	if (rows > s->max_rows)
		return -ENOSPC;
	return 0;
}

int
ffn_moe_expert(const struct ffn_moe *m, uint32_t layer, uint32_t e,
	       const float *h, unsigned rows, float *y,
	       struct ffn_moe_scratch *s)
{
	const struct ffn_moe_layer *ly;
	int rc = expert_args(m, layer, e, h, rows, y, s);

	if (rc < 0 || rows == 0)
		return rc;
	ly = &m->layers[layer];
	return ly->kind->forward(m, &ly->x[e], h, rows, y, s);
}

int
ffn_moe_expert_q8k(const struct ffn_moe *m, uint32_t layer, uint32_t e,
		   const void *hq, unsigned rows, float *y,
		   struct ffn_moe_scratch *s)
{
	const struct ffn_moe_layer *ly;
	int rc = expert_args(m, layer, e, hq, rows, y, s);

	if (rc < 0)
		return rc;
	/* Q8_K rows are whole 256-value blocks of h (spec/moe.md §3.5) */
	if (m->H % FFN_KQ_QK != 0)
		return -EINVAL;
	if (rows == 0)
		return 0;
	ly = &m->layers[layer];
	return ly->kind->forward_q8k(m, &ly->x[e], hq, rows, y, s);
}

/* ---- the layer batch (§1) ---- */

int
ffn_moe_mix(const struct ffn_moe *m, uint32_t layer, const float *h,
	    const void *hq, const struct ffn_moe_pair *p, unsigned k,
	    float *out, unsigned *bad, struct ffn_moe_scratch *s)
{
	unsigned i;
	uint32_t j;
	int rc;

	if (m == NULL || out == NULL || s == NULL || s->H != m->H ||
	    (k > 0 && p == NULL) || (h == NULL && hq == NULL))
		return -EINVAL;
	/* Every weighted pair held before anything is computed: a shard
	 * never returns a partial sum as if whole (§1). w == 0 of either
	 * sign is skipped without a look-up; NaN != 0, so it is not. */
	for (i = 0; i < k; i++) {
		if (p[i].weight == 0.0f)
			continue;
		if (!ffn_moe_held(m, layer, p[i].expert)) {
			if (bad != NULL)
				*bad = i;
			return -ERANGE;
		}
	}
	if (hq != NULL && m->H % FFN_KQ_QK != 0)
		return -EINVAL;
	for (j = 0; j < m->H; j++)
		out[j] = 0.0f;
	/* start from 0, add fl(w_k y_k) in list order, a pair listed twice
	 * counting twice */
	for (i = 0; i < k; i++) {
		float w = p[i].weight;

		if (w == 0.0f)
			continue;
		rc = hq != NULL ?
			ffn_moe_expert_q8k(m, layer, p[i].expert, hq, 1, s->y,
					   s) :
			ffn_moe_expert(m, layer, p[i].expert, h, 1, s->y, s);
		if (rc < 0)
			return rc;
		ffn_moe_add(out, w, s->y, m->H);
	}
	return 0;
}

void
ffn_moe_add(float *out, float w, const float *y, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++) {
		/* rounded product, then the add: never one FMA */
		volatile float t = w * y[j];

		out[j] += t;
	}
}
