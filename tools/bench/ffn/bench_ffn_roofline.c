/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-ffn --roofline (issue 14): one layer's ffn_compute() at 1 to 128
 * rows, f32 and f16 weights, with every kernel set this host runs, each
 * time against the two floors a batch cannot beat:
 *   read floor: the layer's weight bytes at the streaming read rate
 *               measured in the same rounds (bench_stream_bw);
 *   FMA floor:  3 x nf x H multiply-adds per row at the set's FMA peak,
 *               measured in registers in this run (bench_fma_peak).
 * ratio = time / max(read floor, FMA floor): 1.00 is the roofline. f32
 * rows also time OpenBLAS (sgemv/sgemm, one thread) in the same rounds.
 * Every figure is taken once per round and keeps its best over the
 * rounds (round 0 warms), so the ratios compare the same spells of a
 * shared machine.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ffn.h"

#include "bench_ffn.h"
#include "bench_ffn_roofline.h"

#define RF_MAX_ROWS 128u

static const unsigned rf_rows[] = { 1, 2, 4, 8, 16, 32, 64, 128 };
#define RF_NR (sizeof(rf_rows) / sizeof(rf_rows[0]))

static double
rf_time(struct ffn_model *m, struct ffn_scratch *s, const float *const *xp,
	float *const *yp, unsigned R)
{
	double t = bench_now();

	if (ffn_compute(m, 0, xp, yp, R, s) != 0) {
		fprintf(stderr, "ffn_compute failed (%u rows)\n", R);
		exit(1);
	}
	return bench_now() - t;
}

static void
rf_min(double *best, int round, double t)
{
	if (round > 0 && t < *best)
		*best = t;
}

/* What every kernel set's rounds share. */
struct rf_run {
	struct bench_layer L;
	struct ffn_scratch *s;
	const float *xp[RF_MAX_ROWS];
	float *yp[RF_MAX_ROWS];
	double tb[RF_NR];	/* OpenBLAS, f32, timed with the first set */
	int blas_done;
	size_t n;		/* nf x H */
};

/* The rounds of the active kernel set: t[dtype][row count], *bw. */
static void
rf_measure(struct rf_run *r, int iters, double t[2][RF_NR], double *bw)
{
	struct ffn_model *m32 = r->L.m[0], *m16 = r->L.m[1];
	unsigned i;

	*bw = 0;
	for (i = 0; i < RF_NR; i++)
		t[0][i] = t[1][i] = 1e30;
	for (int it = 0; it <= iters; it++) {
		double b = bench_stream_bw(r->L.w, r->n, 1);

		if (it > 0 && b > *bw)
			*bw = b;
		for (i = 0; i < RF_NR; i++) {
			ffn_model_set_engine(m32, FFN_ENGINE_KERNEL, 0);
			rf_min(&t[0][i], it, rf_time(m32, r->s, r->xp, r->yp,
						    rf_rows[i]));
			rf_min(&t[1][i], it, rf_time(m16, r->s, r->xp, r->yp,
						    rf_rows[i]));
			if (r->blas_done)
				continue;
			ffn_model_set_engine(m32, FFN_ENGINE_BLAS, 0);
			rf_min(&r->tb[i], it, rf_time(m32, r->s, r->xp, r->yp,
						     rf_rows[i]));
		}
	}
}

/* The table of one kernel set, against its floors. */
static void
rf_print(const struct rf_run *r, enum ffn_isa isa, double fma, double bw,
	 double t[2][RF_NR])
{
	double worst[2] = { 0, 0 };
	int rises[2] = { 0, 0 };
	size_t n = r->n;
	unsigned i;

	printf("kernels %s: FMA peak %.2f G floats/s, stream read "
	       "%.2f GB/s (1 core, this run)\n",
	       ffn_isa_name(isa), fma / 1e9, bw / 1e9);
	printf("  dtype rows        ms  ms/row  read-floor  FMA-floor"
	       "  ratio  OpenBLAS ms  OpenBLAS/kernel\n");
	for (int d = 0; d < 2; d++)
		for (i = 0; i < RF_NR; i++) {
			double rd = n * 3.0 * (d ? 2 : 4) / bw;
			double fl = 3.0 * n * rf_rows[i] / fma;
			double q = t[d][i] / (rd > fl ? rd : fl);

			if (q > worst[d])
				worst[d] = q;
			/* 3% is this VM's round-to-round noise */
			if (i > 0 && t[d][i] / rf_rows[i] >
			    1.03 * t[d][i - 1] / rf_rows[i - 1])
				rises[d]++;
			printf("  %-5s %4u %9.2f %7.3f %11.2f %10.2f "
			       "%6.2f", d ? "f16" : "f32", rf_rows[i],
			       t[d][i] * 1e3,
			       t[d][i] * 1e3 / rf_rows[i], rd * 1e3,
			       fl * 1e3, q);
			if (d == 0)
				printf(" %12.2f %16.2f", r->tb[i] * 1e3,
				       r->tb[i] / t[d][i]);
			printf("\n");
		}
	printf("  worst ratio: f32 %.2f, f16 %.2f (goal <= 1.25); "
	       "per-row time rose (> 3%%) at %d f32 and %d f16 "
	       "steps\n", worst[0], worst[1], rises[0], rises[1]);
}

int
bench_roofline(const char *name, unsigned H, unsigned nf, int iters)
{
	static const enum ffn_isa isas[] = { FFN_ISA_AVX2, FFN_ISA_AVX512 };
	const enum ffn_isa was = ffn_active_isa();
	struct rf_run *r = calloc(1, sizeof(*r));
	float *x, *y;
	unsigned i;
	int rc = 0;

	x = malloc((size_t)RF_MAX_ROWS * H * 4);
	y = malloc((size_t)RF_MAX_ROWS * H * 4);
	if (!r || !x || !y || bench_layer_make(&r->L, H, nf) != 0) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	r->n = (size_t)nf * H;
	r->s = ffn_scratch_new(r->L.m[0], RF_MAX_ROWS, -1);
	if (r->s == NULL) {
		fprintf(stderr, "ffn_scratch_new failed\n");
		return 1;
	}
	bench_fill(x, (size_t)RF_MAX_ROWS * H, 1.0f, 99);
	for (i = 0; i < RF_MAX_ROWS; i++) {
		r->xp[i] = x + (size_t)i * H;
		r->yp[i] = y + (size_t)i * H;
	}
	for (i = 0; i < RF_NR; i++)
		r->tb[i] = 1e30;
	printf("\n== roofline, %s: hidden %u, intermediate %u, one layer "
	       "(f32 %.0f MB, f16 %.0f MB)\n", name, H, nf, r->n * 12 / 1e6,
	       r->n * 6 / 1e6);
	for (unsigned k = 0; k < sizeof(isas) / sizeof(isas[0]); k++) {
		double t[2][RF_NR], bw, fma;

		if (!ffn_isa_supported(isas[k]) || ffn_select_isa(isas[k]))
			continue;
		fma = bench_fma_peak(iters);
		rf_measure(r, iters, t, &bw);
		r->blas_done = 1;
		rf_print(r, isas[k], fma, bw, t);
	}
	if (ffn_select_isa(was))
		rc = 1;
	ffn_scratch_free(r->s);
	bench_layer_free(&r->L, H, nf);
	free(r);
	free(x);
	free(y);
	return rc;
}
