/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Compute peaks (bench_peak.h): 12 independent accumulator chains (more
 * than latency x issue width on current x86), operands in registers, so
 * nothing but the execution units limits the rate. Thread CPU time: the
 * machine is shared. Each function carries its ISA's target attribute
 * (DPDK's pkg-config builds the rest for corei7).
 */
#include <immintrin.h>
#include <time.h>

#include "bench_peak.h"

#define PEAK_CHAINS 12
#define PEAK_ITERS (1u << 22)

static volatile float fsink;
static volatile int isink;

static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((target("avx512f"))) static double
fma_avx512(void)
{
	__m512 a[PEAK_CHAINS], m = _mm512_set1_ps(0.999999f),
	       c = _mm512_set1_ps(1e-7f);
	double t;

	for (int k = 0; k < PEAK_CHAINS; k++)
		a[k] = _mm512_set1_ps((float)k);
	t = cpu_now();
	for (unsigned i = 0; i < PEAK_ITERS; i++)
		for (int k = 0; k < PEAK_CHAINS; k++)
			a[k] = _mm512_fmadd_ps(a[k], m, c);
	t = cpu_now() - t;
	for (int k = 1; k < PEAK_CHAINS; k++)
		a[0] = _mm512_add_ps(a[0], a[k]);
	fsink = _mm512_reduce_add_ps(a[0]);
	return 16.0 * PEAK_ITERS * PEAK_CHAINS / t;
}

__attribute__((target("avx2,fma"))) static double
fma_avx2(void)
{
	__m256 a[PEAK_CHAINS], m = _mm256_set1_ps(0.999999f),
	       c = _mm256_set1_ps(1e-7f);
	float o[8];
	double t;

	for (int k = 0; k < PEAK_CHAINS; k++)
		a[k] = _mm256_set1_ps((float)k);
	t = cpu_now();
	for (unsigned i = 0; i < PEAK_ITERS; i++)
		for (int k = 0; k < PEAK_CHAINS; k++)
			a[k] = _mm256_fmadd_ps(a[k], m, c);
	t = cpu_now() - t;
	for (int k = 1; k < PEAK_CHAINS; k++)
		a[0] = _mm256_add_ps(a[0], a[k]);
	_mm256_storeu_ps(o, a[0]);
	fsink = o[0];
	return 8.0 * PEAK_ITERS * PEAK_CHAINS / t;
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static double
idot_avx512(void)
{
	__m512i a[PEAK_CHAINS], u = _mm512_set1_epi8(3),
		s = _mm512_set1_epi8(-5);
	double t;

	for (int k = 0; k < PEAK_CHAINS; k++)
		a[k] = _mm512_set1_epi32(k);
	t = cpu_now();
	for (unsigned i = 0; i < PEAK_ITERS; i++)
		for (int k = 0; k < PEAK_CHAINS; k++)
			a[k] = _mm512_dpbusd_epi32(a[k], u, s);
	t = cpu_now() - t;
	for (int k = 1; k < PEAK_CHAINS; k++)
		a[0] = _mm512_add_epi32(a[0], a[k]);
	isink = _mm512_reduce_add_epi32(a[0]);
	return 64.0 * PEAK_ITERS * PEAK_CHAINS / t;
}

__attribute__((target("avx2"))) static double
idot_avx2(void)
{
	__m256i a[PEAK_CHAINS], b[PEAK_CHAINS], u = _mm256_set1_epi8(3),
		one = _mm256_set1_epi16(1);
	int o[8];
	double t;

	for (int k = 0; k < PEAK_CHAINS; k++) {
		a[k] = _mm256_set1_epi32(k);
		b[k] = _mm256_set1_epi8((char)-k);
	}
	t = cpu_now();
	/* b feeds its own next product: nothing is loop-invariant */
	for (unsigned i = 0; i < PEAK_ITERS; i++)
		for (int k = 0; k < PEAK_CHAINS; k++) {
			b[k] = _mm256_maddubs_epi16(u, b[k]);
			a[k] = _mm256_add_epi32(a[k],
						_mm256_madd_epi16(b[k], one));
		}
	t = cpu_now() - t;
	for (int k = 1; k < PEAK_CHAINS; k++)
		a[0] = _mm256_add_epi32(a[0], a[k]);
	_mm256_storeu_si256((__m256i *)o, a[0]);
	isink = o[0];
	return 32.0 * PEAK_ITERS * PEAK_CHAINS / t;
}

static double
best_of(double (*f)(void), int iters)
{
	double best = 0;

	for (int it = 0; it < (iters > 0 ? iters : 1); it++) {
		double r = f();

		if (r > best)
			best = r;
	}
	return best;
}

double
bench_peak_fma(enum bench_peak_isa isa, int iters)
{
	return best_of(isa == BENCH_PEAK_AVX512 ? fma_avx512 : fma_avx2,
		       iters);
}

double
bench_peak_idot(enum bench_peak_isa isa, int iters)
{
	return best_of(isa == BENCH_PEAK_AVX512 ? idot_avx512 : idot_avx2,
		       iters);
}
