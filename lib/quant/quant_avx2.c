/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * AVX2 + F16C + FMA kernels for spec/wire.md §5.3. Compiled with
 * -mavx2 -mf16c -mfma (lib/quant/meson.build) and reached only through
 * quant_kernels_get() after the CPU check; must give exactly the bytes of
 * quant_scalar.c for every input. Tails shorter than a block go through a
 * zero-padded block on the stack, so they use the same instructions.
 */
#include <string.h>

#include <immintrin.h>

#include "quant.h"
#include "quant_isa.h"

/* Values per block in the i8 and f16 loops: four ymm registers. */
#define BLK 32

/*
 * vcvtps2ph with imm 0: round to nearest even, per spec/wire.md §5.3.
 * In place (dst == src) the store of block i (bytes 2i..2i+63) never
 * reaches floats not yet loaded (bytes from 4i + 128 on).
 */
static void
avx2_f32_to_f16(uint16_t *dst, const float *src, size_t n)
{
	size_t i = 0;

	for (; i + BLK <= n; i += BLK) {
		__m256 a = _mm256_loadu_ps(src + i);
		__m256 b = _mm256_loadu_ps(src + i + 8);
		__m256 c = _mm256_loadu_ps(src + i + 16);
		__m256 d = _mm256_loadu_ps(src + i + 24);

		_mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(a, 0));
		_mm_storeu_si128((__m128i *)(dst + i + 8),
				 _mm256_cvtps_ph(b, 0));
		_mm_storeu_si128((__m128i *)(dst + i + 16),
				 _mm256_cvtps_ph(c, 0));
		_mm_storeu_si128((__m128i *)(dst + i + 24),
				 _mm256_cvtps_ph(d, 0));
	}
	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(dst + i),
				 _mm256_cvtps_ph(_mm256_loadu_ps(src + i), 0));
	if (i < n) {
		float in[8] = { 0 };
		uint16_t out[8];

		/* Read the whole tail before writing any of it (in place). */
		memcpy(in, src + i, (n - i) * sizeof(float));
		_mm_storeu_si128((__m128i *)out,
				 _mm256_cvtps_ph(_mm256_loadu_ps(in), 0));
		memcpy(dst + i, out, (n - i) * sizeof(uint16_t));
	}
}

/* vcvtph2ps is exact for every input (NaN quieted as the reference). */
static void
avx2_f16_to_f32(float *dst, const uint16_t *src, size_t n)
{
	size_t i = 0;

	for (; i + BLK <= n; i += BLK) {
		__m128i a = _mm_loadu_si128((const __m128i *)(src + i));
		__m128i b = _mm_loadu_si128((const __m128i *)(src + i + 8));
		__m128i c = _mm_loadu_si128((const __m128i *)(src + i + 16));
		__m128i d = _mm_loadu_si128((const __m128i *)(src + i + 24));

		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(a));
		_mm256_storeu_ps(dst + i + 8, _mm256_cvtph_ps(b));
		_mm256_storeu_ps(dst + i + 16, _mm256_cvtph_ps(c));
		_mm256_storeu_ps(dst + i + 24, _mm256_cvtph_ps(d));
	}
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(
			_mm_loadu_si128((const __m128i *)(src + i))));
	if (i < n) {
		uint16_t in[8] = { 0 };
		float out[8];

		memcpy(in, src + i, (n - i) * sizeof(uint16_t));
		_mm256_storeu_ps(out, _mm256_cvtph_ps(
			_mm_loadu_si128((const __m128i *)in)));
		memcpy(dst + i, out, (n - i) * sizeof(float));
	}
}

/*
 * max|x| with NaN ignored, as fmaxf from 0 (spec/wire.md §5.3). vmaxps
 * returns its second operand when either is NaN, so the accumulator goes
 * second: a NaN |x| leaves it unchanged. max is exact, so the order of the
 * lanes does not matter. Padding with 0 does not change the result.
 */
static float
avx2_max_abs(const float *x, size_t n)
{
	const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
	__m256 m0 = _mm256_setzero_ps(), m1 = m0, m2 = m0, m3 = m0;
	size_t i = 0;

	for (; i + BLK <= n; i += BLK) {
		m0 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + i),
						 absmask), m0);
		m1 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + i + 8),
						 absmask), m1);
		m2 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + i + 16),
						 absmask), m2);
		m3 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + i + 24),
						 absmask), m3);
	}
	for (; i + 8 <= n; i += 8)
		m0 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + i),
						 absmask), m0);
	if (i < n) {
		float in[8] = { 0 };

		memcpy(in, x + i, (n - i) * sizeof(float));
		m1 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(in), absmask),
				   m1);
	}
	/* None of m0..m3 holds a NaN: max of them in any order is exact. */
	m0 = _mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3));
	__m128 h = _mm_max_ps(_mm256_castps256_ps128(m0),
			      _mm256_extractf128_ps(m0, 1));
	h = _mm_max_ps(h, _mm_movehl_ps(h, h));
	h = _mm_max_ss(h, _mm_movehdup_ps(h));
	return _mm_cvtss_f32(h);
}

/*
 * q = roundf(clamp(v / scale, -127, 127)) as int32 lanes; NaN gives
 * 0x80000000 (see below). Worked on |v|, the sign put back last: the
 * division, the clamp and roundf are all symmetric about 0.
 * - True division (vdivps): a reciprocal changes some results (§5.3).
 * - Rounding half away from zero of a = |v| / scale >= 0: trunc(a + P)
 *   with P = 0.49999997f = 0.5 - 2^-25, the sum rounded to nearest. For
 *   0 <= a < 2^23, m = floor(a), s = spacing of the floats in [m, m + 1):
 *   if a - m >= 0.5, a + P >= m + 1 - 2^-25, which rounds to m + 1 (the
 *   float below m + 1 is at least 2^-24 away; at m = 0 the tie goes to the
 *   even 1.0); if a - m < 0.5, a <= m + 0.5 - s, so a + P <= m + 1 - s -
 *   2^-25, below the midpoint m + 1 - s/2, and stays under m + 1 (for
 *   m = 0, a + P <= 1 - 2^-24). (P = 0.5 would give 1 for 0.49999997.)
 *   The slow test checks every q in [-127, 127].
 * - vpsignd negates where v < 0 and gives 0 where v = +0 (a is 0 there,
 *   or NaN for 0/0, which must give 0 too).
 * - NaN: vminps returns its second operand when either is NaN, so with a
 *   second a NaN stays NaN through the clamp, becomes 0x80000000 in
 *   vcvttps2dq (vpsignd leaves it so: -0x80000000 wraps to itself), -128
 *   in the packs, and avx2_quantise32 turns that (which no number gives)
 *   into 0.
 */
static inline __m256i
avx2_quantise8(__m256 v, __m256 scale)
{
	__m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);

	a = _mm256_div_ps(a, scale);
	a = _mm256_min_ps(_mm256_set1_ps(127.0f), a);
	a = _mm256_add_ps(a, _mm256_set1_ps(0.49999997f));
	return _mm256_sign_epi32(_mm256_cvttps_epi32(a),
				 _mm256_castps_si256(v));
}

/* 32 values as 32 int8, in order (NaN -> 0). */
static inline __m256i
avx2_quantise32(const float *x, __m256 scale)
{
	__m256i a = avx2_quantise8(_mm256_loadu_ps(x), scale);
	__m256i b = avx2_quantise8(_mm256_loadu_ps(x + 8), scale);
	__m256i c = avx2_quantise8(_mm256_loadu_ps(x + 16), scale);
	__m256i d = avx2_quantise8(_mm256_loadu_ps(x + 24), scale);
	/*
	 * packs work per 128-bit lane: the bytes come out as dwords
	 * a0 b0 c0 d0 a1 b1 c1 d1 (each 4 bytes); the permute restores order.
	 * Numbers do not saturate: they are within [-127, 127].
	 */
	__m256i p = _mm256_packs_epi16(_mm256_packs_epi32(a, b),
				       _mm256_packs_epi32(c, d));

	/* NaN lanes saturated to -128, which no number gives: -> 0. */
	p = _mm256_andnot_si256(_mm256_cmpeq_epi8(p, _mm256_set1_epi8(-128)),
				p);
	return _mm256_permutevar8x32_epi32(p,
		_mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/*
 * Inputs of at least this many bytes store their i8 values with
 * non-temporal 32-byte stores, as quant_avx512.c does (see there: an
 * output line out of cache is otherwise read before it is written).
 */
#define QUANT_NT_MIN (512u * 1024)

/*
 * In place (src == dst + 8 * rows), row r's bytes go at most to where its
 * own floats start, and each block is loaded before it is stored (see
 * quant.h); the header is written after the row is read.
 */
static void
avx2_f32_to_i8_rows(void *dst, const float *src, size_t rows, size_t n)
{
	uint8_t *out = dst;
	const int nt = rows * n * 4 >= QUANT_NT_MIN;

	for (size_t r = 0; r < rows; r++) {
		const float *row = src + r * n;
		float max_abs = avx2_max_abs(row, n);
		float scale = max_abs == 0.0f ? 1.0f : max_abs / 127.0f;
		const float zero = 0.0f;
		__m256 vs = _mm256_set1_ps(scale);
		uint8_t *q = out + QUANT_I8_ROW_HDR;
		/* Prefetching past the last row is harmless, never a fault. */
		const float *next = row + n;
		size_t i = 0;

		if (nt) {
			/* values up to where q + i is 32-byte aligned */
			size_t head = (size_t)(-(uintptr_t)q & 31);

			if (head > n)
				head = n;
			if (head > 0) {
				float in[BLK] = { 0 };
				uint8_t b[BLK];

				memcpy(in, row, head * sizeof(float));
				_mm256_storeu_si256((__m256i *)b,
						    avx2_quantise32(in, vs));
				memcpy(q, b, head);
			}
			for (i = head; i + BLK <= n; i += BLK) {
				_mm_prefetch((const char *)(next + i),
					     _MM_HINT_T0);
				_mm_prefetch((const char *)(next + i + 16),
					     _MM_HINT_T0);
				_mm256_stream_si256((__m256i *)(q + i),
						    avx2_quantise32(row + i, vs));
			}
		}
		for (; i + BLK <= n; i += BLK) {
			/*
			 * Fetch the next row's block (two lines) while this
			 * row is quantised, so its max pass finds it cached.
			 */
			_mm_prefetch((const char *)(next + i), _MM_HINT_T0);
			_mm_prefetch((const char *)(next + i + 16),
				     _MM_HINT_T0);
			_mm256_storeu_si256((__m256i *)(q + i),
					    avx2_quantise32(row + i, vs));
		}
		if (i < n) {
			float in[BLK] = { 0 };
			uint8_t b[BLK];

			memcpy(in, row + i, (n - i) * sizeof(float));
			_mm256_storeu_si256((__m256i *)b,
					    avx2_quantise32(in, vs));
			memcpy(q + i, b, n - i);
		}
		memcpy(out, &scale, 4);
		memcpy(out + 4, &zero, 4);
		out += QUANT_I8_ROW_BYTES(n);
	}
	if (nt)
		_mm_sfence();
}

/* value = (float)q * scale: one rounding, as the reference. */
static void
avx2_i8_rows_to_f32(float *dst, const void *src, size_t rows, size_t n)
{
	const uint8_t *in = src;

	for (size_t r = 0; r < rows; r++, in += QUANT_I8_ROW_BYTES(n)) {
		const uint8_t *q = in + QUANT_I8_ROW_HDR;
		float *o = dst + r * n;
		float scale;
		size_t i = 0;

		memcpy(&scale, in, 4);
		__m256 vs = _mm256_set1_ps(scale);

		for (; i + 8 <= n; i += 8) {
			__m128i b = _mm_loadl_epi64((const __m128i *)(q + i));

			_mm256_storeu_ps(o + i, _mm256_mul_ps(_mm256_cvtepi32_ps(
				_mm256_cvtepi8_epi32(b)), vs));
		}
		if (i < n) {
			uint8_t b[16] = { 0 };
			float f[8];

			memcpy(b, q + i, n - i);
			_mm256_storeu_ps(f, _mm256_mul_ps(_mm256_cvtepi32_ps(
				_mm256_cvtepi8_epi32(
					_mm_loadl_epi64((const __m128i *)b))),
				vs));
			memcpy(o + i, f, (n - i) * sizeof(float));
		}
	}
}

const struct quant_kernels quant_kernels_avx2 = {
	.isa = QUANT_ISA_AVX2,
	.name = "avx2",
	.f32_to_f16 = avx2_f32_to_f16,
	.f16_to_f32 = avx2_f16_to_f32,
	.f32_to_i8_rows = avx2_f32_to_i8_rows,
	.i8_rows_to_f32 = avx2_i8_rows_to_f32,
};
