/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * FFN compute (spec/wire.md §1) and features mode (§6) over a loaded model:
 * engine choice (our kernels or OpenBLAS), activation, scratch.
 */
#include <errno.h>
#include <math.h>
#include <numa.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "ffn_priv.h"
#include "kq_ffn.h"

/*
 * Passes of at least this many rows go to OpenBLAS sgemm on f32 layers
 * under FFN_ENGINE_AUTO; 0: never. tools/bench/ffn (bench-ffn --table),
 * one core, AVX-512, Llama-8B and Gemma-3-4B layer sizes: our kernels beat
 * single-threaded OpenBLAS at every row count measured (1..64; sgemv by
 * 10-20% at 1 row, sgemm by 1.4-3x at 2..64), so AUTO never picks it.
 * ffn_model_set_engine() overrides this (FFN_ENGINE_BLAS, or a threshold).
 */
#define FFN_BLAS_MIN_ROWS_DEFAULT 0

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

/* ---- activation (spec/wire.md §1), libm semantics ---- */

void
ffn_act_mul(enum ffn_act act, float *g, const float *u, size_t n)
{
	size_t i;

	if (act == FFN_ACT_GELU_TANH) {
		for (i = 0; i < n; i++) {
			float v = g[i];
			float t = tanhf(0.7978846f *
					(v + 0.044715f * v * v * v));

			g[i] = 0.5f * v * (1.0f + t) * u[i];
		}
	} else {
		for (i = 0; i < n; i++) {
			float v = g[i];

			g[i] = v / (1.0f + expf(-v)) * u[i];
		}
	}
}

/* ---- scratch ---- */

static void *
scratch_alloc(size_t len, int node, int *numa)
{
	void *p;

	if (numa_available() >= 0) {
		if (node < 0)
			node = ffn_mem_current_node();
		p = numa_alloc_onnode(len, node < 0 ? 0 : node);
		if (p != NULL) {
			*numa = 1;
			return p;
		}
	}
	*numa = 0;
	if (posix_memalign(&p, 64, len) != 0)
		return NULL;
	return p;
}

struct ffn_scratch *
ffn_scratch_new(const struct ffn_model *m, unsigned max_rows, int numa_node)
{
	struct ffn_scratch *s;
	size_t nfb, hb;
	uint8_t *p;

	if (max_rows == 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->max_rows = max_rows;
	s->max_nf = m->info.max_features;
	s->hidden = m->info.hidden;
	/* 64-byte multiples so each array starts on a cache line */
	nfb = ((size_t)max_rows * s->max_nf * 4 + 63) & ~(size_t)63;
	hb = ((size_t)max_rows * s->hidden * 4 + 63) & ~(size_t)63;
	s->bytes = 2 * nfb + 2 * hb + (((size_t)s->max_nf * 4 + 63) & ~63ul);
	s->kq_len = ffn_kq_scratch_bytes(m, max_rows);
	s->bytes += s->kq_len;
	p = scratch_alloc(s->bytes, numa_node, &s->numa);
	if (p == NULL) {
		free(s);
		return NULL;
	}
	s->g = (float *)p;
	s->u = (float *)(p + nfb);
	s->xb = (float *)(p + 2 * nfb);
	s->yb = (float *)(p + 2 * nfb + hb);
	s->ids = (uint32_t *)(p + 2 * nfb + 2 * hb);
	s->kq = s->kq_len ? p + s->bytes - s->kq_len : NULL;
	return s;
}

void
ffn_scratch_free(struct ffn_scratch *s)
{
	if (s == NULL)
		return;
	if (s->numa)
		numa_free(s->g, s->bytes);
	else
		free(s->g);
	free(s);
}

/* ---- compute ---- */

static int
is_f32(const struct ffn_layer *ly)
{
	return ly->gate.dtype == FFN_DT_F32 && ly->up.dtype == FFN_DT_F32 &&
	       ly->down.dtype == FFN_DT_F32;
}

static int
is_dense(const struct ffn_mat *w)
{
	return w->dtype == FFN_DT_F32 || w->dtype == FFN_DT_F16;
}

/*
 * OpenBLAS path (f32 only). One row: sgemv; more: gather X, sgemm, scatter
 * (cblas wants a fixed row stride; the rows are arbitrary pointers).
 */
static void
pass_blas(const struct ffn_model *m, const struct ffn_layer *ly,
	  const float *const *x, float *const *y, unsigned R,
	  struct ffn_scratch *s)
{
	const int H = (int)m->info.hidden, nf = (int)ly->nf;
	const float *G = ly->gate.data, *U = ly->up.data, *D = ly->down.data;
	unsigned r;

	if (R == 1) {
		cblas_sgemv(CblasRowMajor, CblasNoTrans, nf, H, 1.0f, G, H,
			    x[0], 1, 0.0f, s->g, 1);
		cblas_sgemv(CblasRowMajor, CblasNoTrans, nf, H, 1.0f, U, H,
			    x[0], 1, 0.0f, s->u, 1);
		ffn_act_mul(m->info.act, s->g, s->u, (size_t)nf);
		cblas_sgemv(CblasRowMajor, CblasTrans, nf, H, 1.0f, D, H,
			    s->g, 1, 0.0f, y[0], 1);
		return;
	}
	for (r = 0; r < R; r++)
		memcpy(s->xb + (size_t)r * H, x[r], (size_t)H * 4);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)R, nf, H,
		    1.0f, s->xb, H, G, H, 0.0f, s->g, nf);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)R, nf, H,
		    1.0f, s->xb, H, U, H, 0.0f, s->u, nf);
	ffn_act_mul(m->info.act, s->g, s->u, (size_t)R * nf);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)R, H, nf,
		    1.0f, s->g, nf, D, H, 0.0f, s->yb, H);
	for (r = 0; r < R; r++)
		memcpy(y[r], s->yb + (size_t)r * H, (size_t)H * 4);
}

static void
pass_kernel(const struct ffn_model *m, const struct ffn_layer *ly,
	    const float *const *x, float *const *y, unsigned R,
	    struct ffn_scratch *s)
{
	const struct ffn_kernels *k = ffn_kernels_active();
	size_t nf = ly->nf;

	/* every x row is consumed here, before down writes any y row */
	k->matvec(&ly->gate, x, R, s->g, nf);
	k->matvec(&ly->up, x, R, s->u, nf);
	ffn_act_mul(m->info.act, s->g, s->u, (size_t)R * nf);
	k->down(&ly->down, s->g, nf, R, y);
}

static int
use_blas(const struct ffn_model *m, const struct ffn_layer *ly, unsigned R)
{
	unsigned min = m->blas_min_rows ? m->blas_min_rows :
					  FFN_BLAS_MIN_ROWS_DEFAULT;

	if (!is_f32(ly) || m->engine == FFN_ENGINE_KERNEL)
		return 0;
	return m->engine == FFN_ENGINE_BLAS || (min > 0 && R >= min);
}

int
ffn_compute(const struct ffn_model *m, unsigned layer,
	    const float *const *x, float *const *y, unsigned rows,
	    struct ffn_scratch *s)
{
	const struct ffn_layer *ly = ffn_model_layer(m, layer);
	unsigned done;

	if (ly == NULL)
		return -ERANGE;
	if (s == NULL || ly->nf > s->max_nf || m->info.hidden != s->hidden)
		return -EINVAL;
	if (ly->layout == FFN_LAYOUT_Q4K)
		return ffn_kq_compute(m, layer, x, y, rows, s);
	if (!is_dense(&ly->gate) || !is_dense(&ly->up) ||
	    !is_dense(&ly->down))
		return -ENOTSUP;
	for (done = 0; done < rows;) {
		unsigned R = rows - done;

		if (R > s->max_rows)
			R = s->max_rows;
		if (use_blas(m, ly, R))
			pass_blas(m, ly, x + done, y + done, R, s);
		else
			pass_kernel(m, ly, x + done, y + done, R, s);
		done += R;
	}
	return 0;
}

/* ---- feature slices (issue 4: one layer split across workers) ---- */

unsigned
ffn_part_align(const struct ffn_model *m, unsigned layer)
{
	const struct ffn_layer *ly = ffn_model_layer(m, layer);

	if (ly == NULL)
		return 0;
	/* K-quant: down rows are [H, pad256(nf)] in blocks of 256 features
	 * (spec/vindex.md §2.4); a slice must be whole blocks of them. */
	return ly->layout == FFN_LAYOUT_Q4K ? FFN_KQ_QK : 1;
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
	const struct ffn_layer *ly = ffn_model_layer(m, layer);
	struct ffn_layer sl;
	unsigned done, align;

	if (ly == NULL)
		return -ERANGE;
	if (s == NULL || ly->nf > s->max_nf || m->info.hidden != s->hidden)
		return -EINVAL;
	align = ffn_part_align(m, layer);
	if (f0 >= f1 || f1 > ly->nf || f0 % align != 0 ||
	    (f1 % align != 0 && f1 != ly->nf))
		return -EINVAL;
	if (ly->layout == FFN_LAYOUT_Q4K)
		return ffn_kq_compute_part(m, layer, f0, f1, x, y, rows, s);
	if (!is_dense(&ly->gate) || !is_dense(&ly->up) ||
	    !is_dense(&ly->down))
		return -ENOTSUP;
	/* Dense: gate, up and feature-major down are [nf, H], so a slice is
	 * the rows [f0, f1) of each, a smaller layer the passes take as is. */
	sl = *ly;
	sl.nf = f1 - f0;
	sl.gate.data = (const uint8_t *)ly->gate.data +
		       (size_t)f0 * ly->gate.row_bytes;
	sl.gate.rows = sl.nf;
	sl.up.data = (const uint8_t *)ly->up.data +
		     (size_t)f0 * ly->up.row_bytes;
	sl.up.rows = sl.nf;
	sl.down.data = (const uint8_t *)ly->down.data +
		       (size_t)f0 * ly->down.row_bytes;
	sl.down.rows = sl.nf;
	for (done = 0; done < rows;) {
		unsigned R = rows - done;

		if (R > s->max_rows)
			R = s->max_rows;
		if (use_blas(m, &sl, R))
			pass_blas(m, &sl, x + done, y + done, R, s);
		else
			pass_kernel(m, &sl, x + done, y + done, R, s);
		done += R;
	}
	return 0;
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
	const struct ffn_layer *ly = ffn_model_layer(m, layer);
	unsigned n, i;

	if (ly == NULL)
		return -ERANGE;
	if (s == NULL || ly->nf > s->max_nf || m->info.hidden != s->hidden)
		return -EINVAL;
	if (ly->layout == FFN_LAYOUT_Q4K) {
		int rc = ffn_kq_gate(m, layer, x, s->g, s);

		if (rc < 0)
			return rc;
	} else if (!is_dense(&ly->gate)) {
		return -ENOTSUP;
	} else {
		ffn_kernels_active()->matvec(&ly->gate, &x, 1, s->g, ly->nf);
	}
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
