/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * FFN compute (spec/wire.md §1) and features mode (§6) over a loaded model:
 * the dense kernel set of this CPU, the activation, the scratch, and each
 * entry point's checks before it hands the layer to the engine of the
 * model's weight kind (ffn_kind.h).
 */
#include <errno.h>
#include <math.h>
#include <numa.h>
#include <stdlib.h>
#include <string.h>

#include "ffn_kind.h"
#include "ffn_priv.h"

/* ---- kernel choice ---- */

static const struct ffn_kernels *active;

int
ffn_isa_supported(enum ffn_isa isa)
{
	__builtin_cpu_init();
	switch (isa) {
	case FFN_ISA_SCALAR:
		return 1;
	case FFN_ISA_AVX2:
		return __builtin_cpu_supports("avx2") &&
		       __builtin_cpu_supports("fma") &&
		       __builtin_cpu_supports("f16c");
	case FFN_ISA_AVX512:
		return __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512bw") &&
		       __builtin_cpu_supports("avx512vl") &&
		       __builtin_cpu_supports("avx512dq") &&
		       __builtin_cpu_supports("f16c");
	default:
		return 0;
	}
}

static const struct ffn_kernels *
kernels_of(enum ffn_isa isa)
{
	static const struct ffn_kernels *const tab[FFN_ISA_COUNT] = {
		&ffn_kernels_scalar, &ffn_kernels_avx2, &ffn_kernels_avx512,
	};

	return (unsigned)isa < FFN_ISA_COUNT ? tab[isa] : NULL;
}

const struct ffn_kernels *
ffn_kernels_active(void)
{
	if (active == NULL) {
		int isa;

		for (isa = FFN_ISA_COUNT - 1; isa > 0; isa--)
			if (ffn_isa_supported(isa))
				break;
		active = kernels_of(isa);
	}
	return active;
}

int
ffn_select_isa(enum ffn_isa isa)
{
	if ((unsigned)isa >= FFN_ISA_COUNT || !ffn_isa_supported(isa))
		return -ENOTSUP;
	active = kernels_of(isa);
	return 0;
}

enum ffn_isa
ffn_active_isa(void)
{
	return ffn_kernels_active()->isa;
}

const char *
ffn_isa_name(enum ffn_isa isa)
{
	const struct ffn_kernels *k = kernels_of(isa);

	return k ? k->name : "?";
}

/* ---- activation (spec/wire.md §1): the active set's ---- */

void
ffn_act_mul(enum ffn_act act, float *g, const float *u, size_t n)
{
	ffn_kernels_active()->act_mul(act, g, u, n);
}

/* ---- scratch ---- */


struct ffn_scratch *
ffn_scratch_new(const struct ffn_model *m, unsigned max_rows, int numa_node)
{
	struct ffn_scratch *s;
	size_t nfb, hb, rp;
	uint8_t *p;

	if (max_rows == 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->max_rows = max_rows;
	s->max_nf = m->info.max_features;
	s->hidden = m->info.hidden;
	/* 64-byte multiples so each array starts on a cache line; g, u and
	 * xb hold the rows padded to FFN_ROWS_ALIGN (ffn_dense.c pass_mm) */
	rp = (max_rows + FFN_ROWS_ALIGN - 1) / FFN_ROWS_ALIGN * FFN_ROWS_ALIGN;
	nfb = ((size_t)rp * s->max_nf * 4 + 63) & ~(size_t)63;
	hb = ((size_t)rp * s->hidden * 4 + 63) & ~(size_t)63;
	s->bytes = 2 * nfb + 2 * hb + (((size_t)s->max_nf * 4 + 63) & ~63ul);
	s->eng_len = m->eng->scratch(m, max_rows);
	s->bytes += s->eng_len;
	p = ffn_mem_scratch_alloc(s->bytes, numa_node, &s->numa);
	if (p == NULL) {
		free(s);
		return NULL;
	}
	s->g = (float *)p;
	s->u = (float *)(p + nfb);
	s->xb = (float *)(p + 2 * nfb);
	s->yb = (float *)(p + 2 * nfb + hb);
	s->ids = (uint32_t *)(p + 2 * nfb + 2 * hb);
	s->eng_buf = s->eng_len ? p + s->bytes - s->eng_len : NULL;
	return s;
}

void
ffn_scratch_free(struct ffn_scratch *s)
{
	if (s == NULL)
		return;
	ffn_mem_scratch_free(s->g, s->bytes, s->numa);
	free(s);
}

/* ---- compute: dispatch to the engine of the model's kind ---- */

/* The owned layer's index, after the checks every entry point makes:
 * -ERANGE (not owned), -EINVAL (scratch not made for this model). */
static int
layer_index(const struct ffn_model *m, unsigned layer,
	    const struct ffn_scratch *s, const struct ffn_layer **out)
{
	const struct ffn_layer *ly = ffn_model_layer(m, layer);

	if (ly == NULL)
		return -ERANGE;
	if (s == NULL || ly->nf > s->max_nf || m->info.hidden != s->hidden)
		return -EINVAL;
	*out = ly;
	return (int)(layer - m->info.first_layer);
}

int
ffn_compute(const struct ffn_model *m, unsigned layer,
	    const float *const *x, float *const *y, unsigned rows,
	    struct ffn_scratch *s)
{
	const struct ffn_layer *ly;
	int li = layer_index(m, layer, s, &ly);

	if (li < 0)
		return li;
	/* the whole layer is its one slice */
	return m->eng->part(m, (unsigned)li, 0, ly->nf, x, y, rows, s);
}

int
ffn_compute_q8k(const struct ffn_model *m, unsigned layer, const void *xq,
		float *const *y, unsigned rows, struct ffn_scratch *s)
{
	const struct ffn_layer *ly;
	int li = layer_index(m, layer, s, &ly);

	if (li < 0)
		return li;
	if (xq == NULL || y == NULL)
		return -EINVAL;
	return m->eng->q8k(m, (unsigned)li, xq, y, rows, s);
}

/* ---- feature slices (issue 4: one layer split across workers) ---- */

unsigned
ffn_part_align(const struct ffn_model *m, unsigned layer)
{
	if (ffn_model_layer(m, layer) == NULL)
		return 0;
	return m->eng->part_align;
}

int
ffn_part_range(const struct ffn_model *m, unsigned layer, unsigned i,
	       unsigned n, unsigned *f0, unsigned *f1)
{
	const struct ffn_layer *ly = ffn_model_layer(m, layer);
	uint64_t align, units, b0, b1;

	if (ly == NULL)
		return -ERANGE;
	if (n == 0 || i >= n || f0 == NULL || f1 == NULL)
		return -EINVAL;
	align = ffn_part_align(m, layer);
	units = (ly->nf + align - 1) / align;
	/* near-equal shares of whole units (boundaries rounded up: the
	 * first slices get the spare, empty ones come last) */
	b0 = (units * i + n - 1) / n;
	b1 = (units * (i + 1) + n - 1) / n;
	*f0 = (unsigned)(b0 * align < ly->nf ? b0 * align : ly->nf);
	*f1 = (unsigned)(b1 * align < ly->nf ? b1 * align : ly->nf);
	return 0;
}

int
ffn_compute_part(const struct ffn_model *m, unsigned layer, unsigned f0,
		 unsigned f1, const float *const *x, float *const *y,
		 unsigned rows, struct ffn_scratch *s)
{
	const struct ffn_layer *ly;
	int li = layer_index(m, layer, s, &ly);
	unsigned align;

	if (li < 0)
		return li;
	align = m->eng->part_align;
	if (f0 >= f1 || f1 > ly->nf || f0 % align != 0 ||
	    (f1 % align != 0 && f1 != ly->nf))
		return -EINVAL;
	return m->eng->part(m, (unsigned)li, f0, f1, x, y, rows, s);
}

int
ffn_compute_strided(const struct ffn_model *m, unsigned layer,
		    const float *x, size_t x_stride, float *y,
		    size_t y_stride, unsigned rows, struct ffn_scratch *s)
{
	enum { CHUNK = 64 };
	const float *xp[CHUNK];
	float *yp[CHUNK];
	unsigned done, i;
	int rc;

	if (s == NULL)
		return -EINVAL;
	/*
	 * Chunks of at most one pass each. In place (x == y, equal strides)
	 * is safe: a chunk writes only its own rows, after reading them.
	 */
	for (done = 0; done < rows;) {
		unsigned n = rows - done, lim = CHUNK;

		if (s->max_rows < lim)
			lim = s->max_rows;
		if (n > lim)
			n = lim;
		for (i = 0; i < n; i++) {
			xp[i] = x + (done + i) * x_stride;
			yp[i] = y + (done + i) * y_stride;
		}
		rc = ffn_compute(m, layer, xp, yp, n, s);
		if (rc)
			return rc;
		done += n;
	}
	return 0;
}

/* ---- features mode (spec/wire.md §6) ---- */

/*
 * Rank order of features a and b (negative: a first): |dot| descending,
 * equal |dot| by lower id, NaN last. A total order, so the result does
 * not depend on the sort algorithm.
 */
static int
feature_before(const float *g, uint32_t ia, uint32_t ib)
{
	float va = fabsf(g[ia]), vb = fabsf(g[ib]);
	int na = isnan(va), nb = isnan(vb);

	if (na != nb)
		return na ? 0 : 1;
	if (!na && va != vb)
		return va > vb;
	return ia < ib;
}

/* Heap sort of ids by feature_before (in place: no allocation). */
static void
sift(uint32_t *ids, size_t i, size_t n, const float *g)
{
	for (;;) {
		size_t c = 2 * i + 1, m = i;
		uint32_t t;

		/* max-heap of "ranks later", so the sorted array ranks first */
		if (c < n && feature_before(g, ids[m], ids[c]))
			m = c;
		if (c + 1 < n && feature_before(g, ids[m], ids[c + 1]))
			m = c + 1;
		if (m == i)
			return;
		t = ids[i];
		ids[i] = ids[m];
		ids[m] = t;
		i = m;
	}
}

static void
sort_features(uint32_t *ids, size_t n, const float *g)
{
	size_t i;

	for (i = n / 2; i-- > 0;)
		sift(ids, i, n, g);
	for (i = n; i-- > 1;) {
		uint32_t t = ids[0];

		ids[0] = ids[i];
		ids[i] = t;
		sift(ids, 0, i, g);
	}
}

int
ffn_features(const struct ffn_model *m, unsigned layer, const float *x,
	     unsigned top_k, uint32_t *ids, float *scores,
	     struct ffn_scratch *s)
{
	const struct ffn_layer *ly;
	int li = layer_index(m, layer, s, &ly), rc;
	unsigned n, i;

	if (li < 0)
		return li;
	rc = m->eng->gate(m, (unsigned)li, x, s->g, s);
	if (rc < 0)
		return rc;
	for (i = 0; i < ly->nf; i++)
		s->ids[i] = i;
	sort_features(s->ids, ly->nf, s->g);
	n = top_k < ly->nf ? top_k : ly->nf;
	for (i = 0; i < n; i++) {
		ids[i] = s->ids[i];
		scores[i] = s->g[s->ids[i]];
	}
	return (int)n;
}
