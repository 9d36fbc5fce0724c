/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-ffn --act: a = act(g) · u over one pass of 64 rows x nf features,
 * as ffn_dense.c applies it between gate/up and down, with libm's tanhf
 * and expf (spec/wire.md §1 written out, what lib/ffn did before
 * ffn_act_tmpl.h) against ffn_act_mul with each kernel set the host
 * runs; rounds interleave every variant, best of iters (thread CPU
 * time). The gate values are spread over [-8, 8].
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_ffn.h"
#include "bench_ffn_act.h"

#define ACT_ROWS 64u

static void
libm_act_mul(enum ffn_act act, float *g, const float *u, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		float v = g[i];

		g[i] = (act == FFN_ACT_GELU_TANH ?
			0.5f * v * (1.0f + tanhf(0.7978846f *
					(v + 0.044715f * v * v * v))) :
			v / (1.0f + expf(-v))) * u[i];
	}
}

int
bench_act(const char *name, unsigned nf, int iters)
{
	static const enum ffn_isa isas[] = {
		FFN_ISA_SCALAR, FFN_ISA_AVX2, FFN_ISA_AVX512,
	};
	const size_t n = (size_t)ACT_ROWS * nf;
	const enum ffn_isa was = ffn_active_isa();
	float *g0 = malloc(n * 4), *g = malloc(n * 4), *u = malloc(n * 4);
	double best[2][4];
	unsigned a, v, k;
	int it;

	if (g0 == NULL || g == NULL || u == NULL) {
		fprintf(stderr, "bench-ffn --act: out of memory\n");
		free(g0);
		free(g);
		free(u);
		return 1;
	}
	bench_fill(g0, n, 8.0f, 3);
	bench_fill(u, n, 1.0f, 4);
	for (a = 0; a < 2; a++)
		for (v = 0; v < 4; v++)
			best[a][v] = INFINITY;
	for (it = 0; it < iters; it++)
		for (a = 0; a < 2; a++)
			for (v = 0; v < 4; v++) {
				double t;

				/* v 0: libm; 1..3: the sets of isas[] */
				if (v > 0 && ffn_select_isa(isas[v - 1]) != 0)
					continue;
				memcpy(g, g0, n * 4);
				t = bench_now();
				if (v == 0)
					libm_act_mul(a, g, u, n);
				else
					ffn_act_mul(a, g, u, n);
				t = bench_now() - t;
				if (t < best[a][v])
					best[a][v] = t;
			}
	ffn_select_isa(was);
	printf("\n== activation, %s: one pass of %u rows x %u features "
	       "(%zu values), best of %d\n", name, ACT_ROWS, nf, n, iters);
	printf("  act        libm ms  ns/value");
	for (k = 0; k < 3; k++)
		if (ffn_isa_supported(isas[k]))
			printf("  %7s ms  x libm", ffn_isa_name(isas[k]));
	printf("\n");
	for (a = 0; a < 2; a++) {
		printf("  %-9s %8.3f  %8.2f", a ? "gelu-tanh" : "silu",
		       best[a][0] * 1e3, best[a][0] * 1e9 / (double)n);
		for (k = 0; k < 3; k++)
			if (ffn_isa_supported(isas[k]))
				printf("  %10.3f  %6.1f", best[a][k + 1] * 1e3,
				       best[a][0] / best[a][k + 1]);
		printf("\n");
	}
	free(g0);
	free(g);
	free(u);
	return 0;
}
