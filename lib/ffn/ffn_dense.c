/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The dense engine (ffn_kind.h): f32 and f16 weights of spec/vindex.md
 * §2.1-§2.3, held as gate, up and feature-major down [nf, H] (ffn.h), and
 * computed (spec/wire.md §1) by our per-ISA kernels or, for f32 under
 * ffn_model_set_engine(), OpenBLAS.
 */
#include <errno.h>
#include <string.h>

#include <cblas.h>

#include "ffn_kind.h"
#include "ffn_kq.h"		/* the Q8_K wire row (spec/wire.md §2) */
#include "ffn_priv.h"

/*
 * Passes of at least this many rows go to OpenBLAS sgemm on f32 layers
 * under FFN_ENGINE_AUTO; 0: never. tools/bench/ffn (bench-ffn --table),
 * one core, AVX-512, Llama-8B and Gemma-3-4B layer sizes: our kernels beat
 * single-threaded OpenBLAS at every row count measured (1..64; sgemv by
 * 10-20% at 1 row, sgemm by 1.4-3x at 2..64), so AUTO never picks it.
 * ffn_model_set_engine() overrides this (FFN_ENGINE_BLAS, or a threshold).
 */
#define FFN_BLAS_MIN_ROWS_DEFAULT 0

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

/*
 * Many rows (k->mm_pack, ffn_priv.h): the rows transposed once into xt
 * (xb; R x H moves against R x 3 H nf FMAs), gate and up into gt and ut
 * ([nf][rp], in g and u), the activation on those, and down from gt.
 */
static void
pass_mm(const struct ffn_kernels *k, const struct ffn_model *m,
	const struct ffn_layer *ly, const float *const *x, float *const *y,
	unsigned R, struct ffn_scratch *s)
{
	float *xt = s->xb, *gt = s->g, *ut = s->u;
	unsigned rp = k->mm_pack(x, R, m->info.hidden, xt);

	k->matmat(&ly->gate, xt, rp, gt);
	k->matmat(&ly->up, xt, rp, ut);
	ffn_act_mul(m->info.act, gt, ut, (size_t)ly->nf * rp);
	k->mm_down(&ly->down, gt, rp, R, y);
}

static void
pass_kernel(const struct ffn_model *m, const struct ffn_layer *ly,
	    const float *const *x, float *const *y, unsigned R,
	    struct ffn_scratch *s)
{
	const struct ffn_kernels *k = ffn_kernels_active();
	size_t nf = ly->nf;

	if (k->mm_pack != NULL && R >= k->mm_min_rows) {
		pass_mm(k, m, ly, x, y, R, s);
		return;
	}
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

static int
dense_part(const struct ffn_model *m, unsigned li, unsigned f0, unsigned f1,
	   const float *const *x, float *const *y, unsigned rows,
	   struct ffn_scratch *s)
{
	const struct ffn_layer *ly = &m->layers[li];
	struct ffn_layer sl;
	unsigned done;

	/* ffn_model_wrap() takes what it is given: say so, do not guess */
	if (!is_dense(&ly->gate) || !is_dense(&ly->up) ||
	    !is_dense(&ly->down))
		return -ENOTSUP;
	/* Gate, up and feature-major down are [nf, H], so a slice is the
	 * rows [f0, f1) of each, a smaller layer the passes take as is. */
	if (f0 != 0 || f1 != ly->nf) {
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
		ly = &sl;
	}
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

/* Q8_K rows (spec/wire.md §2) on dense weights: dequantised, then as f32
 * rows. */
static int
dense_q8k(const struct ffn_model *m, unsigned li, const void *xq,
	  float *const *y, unsigned rows, struct ffn_scratch *s)
{
	size_t H = m->info.hidden;
	size_t qrow = FFN_KQ_NBLOCKS(H) * FFN_KQ_Q8K_BYTES;
	unsigned nf = m->layers[li].nf, done, r;
	int rc;

	for (done = 0; done < rows;) {
		const uint8_t *in = (const uint8_t *)xq + done * qrow;
		const float *xp[64];
		unsigned R = rows - done;

		if (R > s->max_rows)
			R = s->max_rows;
		if (R > 64)
			R = 64;		/* xp */
		/* dequantised rows in yb, which a pass reads (or copies to
		 * xb) before it writes yb or y */
		for (r = 0; r < R; r++) {
			ffn_kq_dequant_q8k(in + r * qrow, H, s->yb + r * H);
			xp[r] = s->yb + r * H;
		}
		rc = dense_part(m, li, 0, nf, xp, y + done, R, s);
		if (rc < 0)
			return rc;
		done += R;
	}
	return 0;
}

static int
dense_gate(const struct ffn_model *m, unsigned li, const float *x, float *g,
	   struct ffn_scratch *s)
{
	const struct ffn_layer *ly = &m->layers[li];

	if (!is_dense(&ly->gate))
		return -ENOTSUP;
	ffn_kernels_active()->matvec(&ly->gate, &x, 1, g, ly->nf);
	return 0;
}

static size_t
dense_scratch(const struct ffn_model *m, unsigned max_rows)
{
	/* g, u, xb, yb of struct ffn_scratch are all it needs */
	(void)m;
	(void)max_rows;
	return 0;
}

const struct ffn_eng ffn_eng_dense = {
	.part_align = 1,	/* any rows of [nf, H] matrices */
	.unload = NULL,		/* the model's arena and maps: ffn_model.c */
	.scratch = dense_scratch,
	.part = dense_part,
	.q8k = dense_q8k,
	.gate = dense_gate,
};
