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
#include <string.h>
#include <sys/mman.h>

#include "ffn.h"
#include "quant.h"

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

struct rf_layer {
	float *w[3];
	uint16_t *h[3];
	struct ffn_model *m[2];	/* f32, f16 */
};

static int
rf_make(struct rf_layer *L, unsigned H, unsigned nf)
{
	size_t n = (size_t)nf * H;
	struct ffn_layer l[2];
	int c, d;

	memset(l, 0, sizeof(l));
	for (c = 0; c < 3; c++) {
		L->w[c] = bench_alloc(n * 4);
		L->h[c] = bench_alloc(n * 2);
		if (!L->w[c] || !L->h[c])
			return -1;
		bench_fill(L->w[c], n, c == 2 ? 1.0f / 120 : 1.0f / 64,
			   c + 1);
		quant_f32_to_f16(L->h[c], L->w[c], n);
	}
	for (d = 0; d < 2; d++) {
		struct ffn_mat *a[3] = { &l[d].gate, &l[d].up, &l[d].down };

		l[d].nf = nf;
		l[d].layout = FFN_LAYOUT_INTERLEAVED;
		for (c = 0; c < 3; c++)
			*a[c] = (struct ffn_mat){
				d ? (void *)L->h[c] : (void *)L->w[c],
				(size_t)H * (d ? 2 : 4), nf, H,
				d ? FFN_DT_F16 : FFN_DT_F32 };
		if (ffn_model_wrap(H, FFN_ACT_SILU, &l[d], 1, &L->m[d]))
			return -1;
	}
	return 0;
}

static void
rf_free(struct rf_layer *L, size_t n)
{
	int c;

	for (c = 0; c < 2; c++)
		ffn_model_free(L->m[c]);
	for (c = 0; c < 3; c++) {
		munmap(L->w[c], n * 4);
		munmap(L->h[c], n * 2);
	}
}

int
bench_roofline(const char *name, unsigned H, unsigned nf, int iters)
{
	static const enum ffn_isa isas[] = { FFN_ISA_AVX2, FFN_ISA_AVX512 };
	const enum ffn_isa was = ffn_active_isa();
	const size_t n = (size_t)nf * H;
	const float *xp[RF_MAX_ROWS];
	float *yp[RF_MAX_ROWS];
	double tb[RF_NR];
	struct rf_layer L;
	struct ffn_scratch *s;
	float *x, *y;
	unsigned i, r;
	int blas_done = 0, rc = 0;

	memset(&L, 0, sizeof(L));
	x = malloc((size_t)RF_MAX_ROWS * H * 4);
	y = malloc((size_t)RF_MAX_ROWS * H * 4);
	if (!x || !y || rf_make(&L, H, nf) != 0) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	s = ffn_scratch_new(L.m[0], RF_MAX_ROWS, -1);
	if (s == NULL) {
		fprintf(stderr, "ffn_scratch_new failed\n");
		return 1;
	}
	bench_fill(x, (size_t)RF_MAX_ROWS * H, 1.0f, 99);
	for (r = 0; r < RF_MAX_ROWS; r++) {
		xp[r] = x + (size_t)r * H;
		yp[r] = y + (size_t)r * H;
	}
	for (i = 0; i < RF_NR; i++)
		tb[i] = 1e30;
	printf("\n== roofline, %s: hidden %u, intermediate %u, one layer "
	       "(f32 %.0f MB, f16 %.0f MB)\n", name, H, nf, n * 12 / 1e6,
	       n * 6 / 1e6);
	for (unsigned k = 0; k < sizeof(isas) / sizeof(isas[0]); k++) {
		double t[2][RF_NR], bw = 0, fma, worst[2] = { 0, 0 };
		int rises[2] = { 0, 0 };

		if (!ffn_isa_supported(isas[k]) || ffn_select_isa(isas[k]))
			continue;
		fma = bench_fma_peak(iters);
		for (i = 0; i < RF_NR; i++)
			t[0][i] = t[1][i] = 1e30;
		for (int it = 0; it <= iters; it++) {
			double b = bench_stream_bw(L.w, n, 1);

			if (it > 0 && b > bw)
				bw = b;
			for (i = 0; i < RF_NR; i++) {
				ffn_model_set_engine(L.m[0], FFN_ENGINE_KERNEL,
						     0);
				rf_min(&t[0][i], it, rf_time(L.m[0], s, xp, yp,
							    rf_rows[i]));
				rf_min(&t[1][i], it, rf_time(L.m[1], s, xp, yp,
							    rf_rows[i]));
				if (blas_done)
					continue;
				ffn_model_set_engine(L.m[0], FFN_ENGINE_BLAS,
						     0);
				rf_min(&tb[i], it, rf_time(L.m[0], s, xp, yp,
							  rf_rows[i]));
			}
		}
		blas_done = 1;
		printf("kernels %s: FMA peak %.2f G floats/s, stream read "
		       "%.2f GB/s (1 core, this run)\n",
		       ffn_isa_name(isas[k]), fma / 1e9, bw / 1e9);
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
					printf(" %12.2f %16.2f", tb[i] * 1e3,
					       tb[i] / t[d][i]);
				printf("\n");
			}
		printf("  worst ratio: f32 %.2f, f16 %.2f (goal <= 1.25); "
		       "per-row time rose (> 3%%) at %d f32 and %d f16 "
		       "steps\n", worst[0], worst[1], rises[0], rises[1]);
	}
	if (ffn_select_isa(was))
		rc = 1;
	ffn_scratch_free(s);
	rf_free(&L, n);
	free(x);
	free(y);
	return rc;
}
