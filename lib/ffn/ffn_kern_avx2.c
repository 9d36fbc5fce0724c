/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * AVX2 + FMA + F16C dense FFN kernels; f16 weights widened with
 * vcvtph2ps inside the dot products. Compiled with -mavx2 -mfma -mf16c;
 * only called when the CPU has them (ffn_compute.c).
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

static inline __m256
avx2_loadf_t(const float *p, unsigned n)
{
	float b[8] = { 0 };

	memcpy(b, p, n * sizeof(float));
	return _mm256_loadu_ps(b);
}

static inline __m256
avx2_loadh_t(const void *p, unsigned n)
{
	uint16_t b[8] = { 0 };

	memcpy(b, p, n * sizeof(uint16_t));
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)b));
}

static inline void
avx2_store_t(float *p, __m256 v, unsigned n)
{
	float b[8];

	_mm256_storeu_ps(b, v);
	memcpy(p, b, n * sizeof(float));
}

static inline float
avx2_reduce(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v),
			      _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

#define V __m256
#define VL 8
#define VZERO() _mm256_setzero_ps()
#define VLOADF(p) _mm256_loadu_ps(p)
#define VLOADH(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VBCAST(f) _mm256_set1_ps(f)
#define VSTORE(p, v) _mm256_storeu_ps(p, v)
#define VREDUCE(v) avx2_reduce(v)
#define VLOADF_T(p, n) avx2_loadf_t(p, n)
#define VLOADH_T(p, n) avx2_loadh_t(p, n)
/* the activation's (ffn_act_tmpl.h) */
#define VMUL(a, b) _mm256_mul_ps(a, b)
#define VADD(a, b) _mm256_add_ps(a, b)
#define VDIV(a, b) _mm256_div_ps(a, b)
#define VMAX(a, b) _mm256_max_ps(a, b)
#define VMIN(a, b) _mm256_min_ps(a, b)
#define VRINT(a) \
	_mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define VPOW2(n) _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32( \
	_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23))
#define VSTORE_T(p, v, n) avx2_store_t(p, v, n)

/*
 * 16 ymm: tiles of 12 accumulators, + 3 weight vectors + 1 x vector (or
 * broadcast activation): matvec 3 features x 4 rows with the weight
 * vectors loaded first (MV_WFIRST), down 4 rows x 3 vectors. Each step
 * makes 7 loads per 12 FMAs; the 1 x 8 tiles before made 9 per 8 and
 * ran 1.5-2.2x slower from 8 rows on (Zen 5 running this set, Gemma
 * 2560 x 10240, old and new interleaved; commit 1933fd5). The roofline
 * of bench-ffn --roofline is in docs/PERFORMANCE.md.
 */
#define MV_WFIRST 1
#define MV_NF(R) ((R) <= 2 ? 4u : 3u)
#define MV_NR 4u
#define DN_NW(R) ((R) == 1 ? 8u : (R) == 2 ? 4u : 3u)
#define DN_NR 4u

/*
 * matmat (ffn_mm_tmpl.h): 4 weight rows x 3 row vectors (24 rows) per
 * tile, 12 accumulators + 3 x vectors + 1 broadcast.
 */
#define MM_NV 3u
#define MM_NF(nv) ((nv) == 1 ? 12 : (nv) == 2 ? 6 : 4)
#ifndef MM_MIN_ROWS
#define MM_MIN_ROWS 16u
#endif
/* mm_down: 6 rows x 2 vectors, 12 accumulators + 2 weights + 1 broadcast */
#define MMD_NW 2u
#define MMD_NR 6u

#define KNAME ffn_kernels_avx2
#define KISA FFN_ISA_AVX2
#define KSTR "avx2"

#include "ffn_kern_tmpl.h"
