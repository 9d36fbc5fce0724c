/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-ffn --kernels (issue 14): the two kernels of a many-row pass
 * (ffn_mm_tmpl.h) alone, so a change to one is measured without the
 * other around it: matmat on the gate matrix and mm_down on the down
 * matrix, at 16, 32, 64 and 128 rows, f32 and f16 weights, with every
 * kernel set the host runs, each in G multiply-adds/s and as a share of
 * that set's FMA peak measured in the same run.
 *   DRAM: the whole matrix once (105-235 MB, far past any cache);
 *   hot:  its first KB_HOT_F features, repeated to the same number of
 *         multiply-adds, so the weights come from L2.
 * hot / DRAM is what memory costs the kernel; hot / peak, what its
 * instruction mix does. Every variant runs once per round, interleaved,
 * and keeps its best (thread CPU time), so the figures compare the same
 * spells of a shared machine.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ffn.h"
#include "ffn_priv.h"

#include "bench_ffn.h"
#include "bench_ffn_kern.h"

#define KB_MAX_ROWS 128u
#define KB_HOT_F 48u	/* whole tiles at every tile height (6, 8, 12) */

static const unsigned kb_rows[] = { 16, 32, 64, 128 };
#define KB_NR (sizeof(kb_rows) / sizeof(kb_rows[0]))

/* What every set's rounds share. */
struct kb_run {
	struct bench_layer L;
	float *x[KB_MAX_ROWS];	/* input rows, in xb */
	float *y[KB_MAX_ROWS];	/* mm_down's outputs, in yb */
	float *xb, *yb;
	float *xt;		/* mm_pack's rows, H x KB_MAX_ROWS */
	float *ot;		/* matmat's out, mm_down's in: nf x rows */
	unsigned H, nf;
};

/* One kernel on w (all nf rows, or KB_HOT_F repeated): seconds for nf. */
static double
kb_time(const struct kb_run *r, const struct ffn_kernels *k,
	const struct ffn_mat *w, int down, int hot, unsigned R)
{
	struct ffn_mat m = *w;
	unsigned reps = 1, i, rp;
	double t;

	rp = k->mm_pack((const float *const *)r->x, R, r->H, r->xt);
	if (hot) {
		m.rows = KB_HOT_F;
		reps = r->nf / KB_HOT_F;
	}
	t = bench_now();
	for (i = 0; i < reps; i++) {
		if (down)
			k->mm_down(&m, r->ot, rp, R, r->y);
		else
			k->matmat(&m, r->xt, rp, r->ot);
	}
	return (bench_now() - t) * r->nf / ((double)reps * m.rows);
}

/* One round: every variant once; round 0 warms. */
static void
kb_round(const struct kb_run *r, const struct ffn_kernels *k, int it,
	 double t[][KB_NR][2][2])
{
	unsigned d, i, kk, h;

	for (d = 0; d < 2; d++)
		for (i = 0; i < KB_NR; i++)
			for (kk = 0; kk < 2; kk++)
				for (h = 0; h < 2; h++) {
					const struct ffn_layer *l = &r->L.l[d];
					double v = kb_time(r, k, kk ? &l->down :
							   &l->gate, kk, h,
							   kb_rows[i]);

					if (it > 0 && v < t[d][i][kk][h])
						t[d][i][kk][h] = v;
				}
}

static void
kb_print(const struct kb_run *r, enum ffn_isa isa, double fma,
	 double t[][KB_NR][2][2])
{
	unsigned d, i, kk, h;

	printf("kernels %s: FMA peak %.2f G floats/s (1 core, this run); "
	       "G multiply-adds/s (share of peak)\n", ffn_isa_name(isa),
	       fma / 1e9);
	printf("  dtype rows     matmat DRAM         hot    mm_down DRAM"
	       "         hot\n");
	for (d = 0; d < 2; d++)
		for (i = 0; i < KB_NR; i++) {
			const double n = (double)r->nf * r->H * kb_rows[i];

			printf("  %s  %5u", d ? "f16" : "f32", kb_rows[i]);
			for (kk = 0; kk < 2; kk++)
				for (h = 0; h < 2; h++)
					printf("  %6.1f (%3.0f%%)",
					       n / t[d][i][kk][h] / 1e9,
					       100.0 * n /
					       t[d][i][kk][h] / fma);
			printf("\n");
		}
}

static void
kb_free(struct kb_run *r)
{
	bench_layer_free(&r->L, r->H, r->nf);
	free(r->xb);
	free(r->yb);
	free(r->xt);
	free(r->ot);
	free(r);
}

int
bench_kern(const char *name, unsigned H, unsigned nf, int iters)
{
	static const enum ffn_isa isas[] = { FFN_ISA_AVX2, FFN_ISA_AVX512 };
	const enum ffn_isa was = ffn_active_isa();
	struct kb_run *r = calloc(1, sizeof(*r));
	unsigned i, s;
	int rc = 0;

	if (r == NULL)
		goto nomem;
	r->H = H;
	r->nf = nf;
	if (bench_layer_make(&r->L, H, nf) != 0) {
		free(r);
		goto nomem;
	}
	r->xb = aligned_alloc(64, (size_t)H * KB_MAX_ROWS * 4);
	r->yb = aligned_alloc(64, (size_t)H * KB_MAX_ROWS * 4);
	r->xt = aligned_alloc(64, (size_t)H * KB_MAX_ROWS * 4);
	r->ot = aligned_alloc(64, (size_t)nf * KB_MAX_ROWS * 4);
	if (!r->xb || !r->yb || !r->xt || !r->ot) {
		kb_free(r);
		goto nomem;
	}
	bench_fill(r->xb, (size_t)H * KB_MAX_ROWS, 1.0f, 200);
	/* mm_down's activations: any values; matmat overwrites them */
	bench_fill(r->ot, (size_t)nf * KB_MAX_ROWS, 0.1f, 7);
	for (i = 0; i < KB_MAX_ROWS; i++) {
		r->x[i] = r->xb + (size_t)i * H;
		r->y[i] = r->yb + (size_t)i * H;
	}
	printf("\n== kernels alone, %s: gate and down %u x %u (f32 %.0f MB, "
	       "f16 %.0f MB each), hot: %u features repeated\n", name, nf, H,
	       (double)nf * H * 4 / 1e6, (double)nf * H * 2 / 1e6, KB_HOT_F);
	for (s = 0; s < sizeof(isas) / sizeof(isas[0]); s++) {
		const struct ffn_kernels *k;
		/* [dtype][rows][kernel: matmat, mm_down][DRAM, hot] */
		double t[2][KB_NR][2][2], fma;

		if (!ffn_isa_supported(isas[s]) || ffn_select_isa(isas[s]))
			continue;
		k = ffn_kernels_active();
		if (k->mm_pack == NULL)
			continue;
		fma = bench_fma_peak(iters);
		for (i = 0; i < sizeof(t) / sizeof(double); i++)
			(&t[0][0][0][0])[i] = 1e30;
		for (int it = 0; it <= iters; it++)
			kb_round(r, k, it, t);
		kb_print(r, isas[s], fma, t);
	}
	if (ffn_select_isa(was))
		rc = 1;
	kb_free(r);
	return rc;
nomem:
	fprintf(stderr, "bench-ffn --kernels: out of memory\n");
	return 1;
}
