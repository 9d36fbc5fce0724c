/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * AVX-512 (F, BW, VL) kernels for spec/wire.md §5.3. Compiled with
 * -mavx512f -mavx512bw -mavx512vl (lib/quant/meson.build) and reached only
 * through quant_kernels_get() after the CPU check; must give exactly the
 * bytes of quant_scalar.c for every input. Tails use masked loads and
 * stores: masked-off lanes are neither read (no fault) nor written.
 */
#include <string.h>

#include <immintrin.h>

#include "quant.h"
#include "quant_isa.h"

/*
 * Inputs of at least this many bytes are narrowed to i8 with
 * non-temporal 64-byte stores. An i8 output out of cache otherwise costs
 * a read of each line before it is written (RFO): 6 bytes of DRAM traffic
 * per value instead of 5, which capped the large-array rate near 5/6 of
 * memcpy's (whose rep movsb does not read the destination): measured 81%
 * of memcpy before, 90-91% with these stores. Arrays this large are past
 * L2 (1 MiB here, half of it input), so little is lost by not leaving the
 * output in cache; smaller ones (one response of a few rows) keep plain
 * stores, and so do the bytes before the first 64-byte boundary of a row.
 */
#define QUANT_NT_MIN (512u * 1024)

/* Values per block: four zmm registers. */
#define BLK 64

static inline __mmask16
tail_mask(size_t left)
{
	return (__mmask16)((1u << left) - 1u); /* left < 16 */
}

/*
 * vcvtps2ph with imm 0: round to nearest even, per spec/wire.md §5.3.
 * In place (dst == src) the store of block i (bytes 2i..2i+127) never
 * reaches floats not yet loaded (bytes from 4i + 256 on).
 */
static void
avx512_f32_to_f16(uint16_t *dst, const float *src, size_t n)
{
	size_t i = 0;

	for (; i + BLK <= n; i += BLK) {
		__m512 a = _mm512_loadu_ps(src + i);
		__m512 b = _mm512_loadu_ps(src + i + 16);
		__m512 c = _mm512_loadu_ps(src + i + 32);
		__m512 d = _mm512_loadu_ps(src + i + 48);

		_mm256_storeu_si256((__m256i *)(dst + i),
				    _mm512_cvtps_ph(a, 0));
		_mm256_storeu_si256((__m256i *)(dst + i + 16),
				    _mm512_cvtps_ph(b, 0));
		_mm256_storeu_si256((__m256i *)(dst + i + 32),
				    _mm512_cvtps_ph(c, 0));
		_mm256_storeu_si256((__m256i *)(dst + i + 48),
				    _mm512_cvtps_ph(d, 0));
	}
	for (; i + 16 <= n; i += 16)
		_mm256_storeu_si256((__m256i *)(dst + i),
				    _mm512_cvtps_ph(_mm512_loadu_ps(src + i), 0));
	if (i < n) {
		__mmask16 k = tail_mask(n - i);
		__m512 v = _mm512_maskz_loadu_ps(k, src + i);

		_mm256_mask_storeu_epi16(dst + i, k, _mm512_cvtps_ph(v, 0));
	}
}

/* vcvtph2ps is exact for every input (NaN quieted as the reference). */
static void
avx512_f16_to_f32(float *dst, const uint16_t *src, size_t n)
{
	size_t i = 0;

	for (; i + BLK <= n; i += BLK) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(src + i));
		__m256i b = _mm256_loadu_si256((const __m256i *)(src + i + 16));
		__m256i c = _mm256_loadu_si256((const __m256i *)(src + i + 32));
		__m256i d = _mm256_loadu_si256((const __m256i *)(src + i + 48));

		_mm512_storeu_ps(dst + i, _mm512_cvtph_ps(a));
		_mm512_storeu_ps(dst + i + 16, _mm512_cvtph_ps(b));
		_mm512_storeu_ps(dst + i + 32, _mm512_cvtph_ps(c));
		_mm512_storeu_ps(dst + i + 48, _mm512_cvtph_ps(d));
	}
	for (; i + 16 <= n; i += 16)
		_mm512_storeu_ps(dst + i, _mm512_cvtph_ps(
			_mm256_loadu_si256((const __m256i *)(src + i))));
	if (i < n) {
		__mmask16 k = tail_mask(n - i);

		_mm512_mask_storeu_ps(dst + i, k, _mm512_cvtph_ps(
			_mm256_maskz_loadu_epi16(k, src + i)));
	}
}

/*
 * max|x| with NaN ignored, as fmaxf from 0 (spec/wire.md §5.3). vmaxps
 * returns its second operand when either is NaN, so the accumulator goes
 * second: a NaN |x| leaves it unchanged. max is exact, so lane order does
 * not matter; masked-off tail lanes load as 0, which changes nothing.
 */
static float
avx512_max_abs(const float *x, size_t n)
{
	__m512 m0 = _mm512_setzero_ps(), m1 = m0, m2 = m0, m3 = m0;
	size_t i = 0;

	for (; i + BLK <= n; i += BLK) {
		m0 = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + i)), m0);
		m1 = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + i + 16)),
				   m1);
		m2 = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + i + 32)),
				   m2);
		m3 = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + i + 48)),
				   m3);
	}
	for (; i + 16 <= n; i += 16)
		m0 = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + i)), m0);
	if (i < n)
		m1 = _mm512_max_ps(_mm512_abs_ps(
			_mm512_maskz_loadu_ps(tail_mask(n - i), x + i)), m1);
	/* No NaN is left in m0..m3: the reduction order is free. */
	m0 = _mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3));
	return _mm512_reduce_max_ps(m0);
}

/*
 * q = roundf(clamp(v / scale, -127, 127)), NaN -> 0, as int32 lanes whose
 * low byte is the i8 (vpmovdb truncates).
 * - True division (vdivps): a reciprocal changes some results (§5.3).
 * - vmaxps/vminps return their second operand when either is NaN: with q
 *   second, a NaN q stays NaN through the clamp.
 * - Rounding half away from zero: y = q + copysign(0.5, q) rounded toward
 *   zero, then truncated. Rounding toward zero never carries y across an
 *   integer (integers up to 2^24 are floats), so trunc(RZ(y)) = trunc(y),
 *   which is floor(q + 0.5) for q >= 0 and ceil(q - 0.5) for q < 0: exactly
 *   roundf(q). (Rounding the sum to nearest instead, trunc(q + 0.5), would
 *   give 1 for 0.49999997.)
 * - NaN: the add keeps it, vcvttps2dq gives 0x80000000, whose low byte,
 *   kept by vpmovdb, is 0.
 */
static inline __m512i
avx512_quantise16(__m512 v, __m512 scale)
{
	const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
	const __m512i half = _mm512_set1_epi32(0x3f000000); /* 0.5f */
	__m512 q = _mm512_div_ps(v, scale);

	q = _mm512_min_ps(_mm512_set1_ps(127.0f),
			  _mm512_max_ps(_mm512_set1_ps(-127.0f), q));
	/* (q & sign) | 0.5: imm 0xf8 is A | (B & C). */
	__m512 h = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(half,
		_mm512_castps_si512(q), sign, 0xf8));

	q = _mm512_add_round_ps(q, h, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
	return _mm512_cvttps_epi32(q);
}

/* Fetch a block (four lines) of the next row while this row is quantised,
 * so the next row's max pass finds it cached. */
static inline void
avx512_prefetch_block(const float *p)
{
	_mm_prefetch((const char *)p, _MM_HINT_T0);
	_mm_prefetch((const char *)(p + 16), _MM_HINT_T0);
	_mm_prefetch((const char *)(p + 32), _MM_HINT_T0);
	_mm_prefetch((const char *)(p + 48), _MM_HINT_T0);
}

/* BLK values quantised into the 64 bytes of one zmm, in order. */
static inline __m512i
avx512_quantise64(const float *p, __m512 vs)
{
	__m512i v = _mm512_castsi128_si512(_mm512_cvtepi32_epi8(
		avx512_quantise16(_mm512_loadu_ps(p), vs)));

	v = _mm512_inserti32x4(v, _mm512_cvtepi32_epi8(
		avx512_quantise16(_mm512_loadu_ps(p + 16), vs)), 1);
	v = _mm512_inserti32x4(v, _mm512_cvtepi32_epi8(
		avx512_quantise16(_mm512_loadu_ps(p + 32), vs)), 2);
	return _mm512_inserti32x4(v, _mm512_cvtepi32_epi8(
		avx512_quantise16(_mm512_loadu_ps(p + 48), vs)), 3);
}

/*
 * In place (src == dst + 8 * rows), row r's bytes go at most to where its
 * own floats start, and each block is loaded before it is stored (see
 * quant.h); the header is written after the row is read. A non-temporal
 * store covers 64 bytes of one row's values only, so it never reaches a
 * float not yet loaded either; the sfence orders those stores before
 * whatever the caller does next (e.g. hands the buffer to another lcore).
 */
static void
avx512_f32_to_i8_rows(void *dst, const float *src, size_t rows, size_t n)
{
	uint8_t *out = dst;
	const int nt = rows * n * 4 >= QUANT_NT_MIN;

	for (size_t r = 0; r < rows; r++) {
		const float *row = src + r * n;
		float max_abs = avx512_max_abs(row, n);
		float scale = max_abs == 0.0f ? 1.0f : max_abs / 127.0f;
		const float zero = 0.0f;
		__m512 vs = _mm512_set1_ps(scale);
		uint8_t *q = out + QUANT_I8_ROW_HDR;
		/* Prefetching past the last row is harmless, never a fault. */
		const float *next = row + n;
		size_t i = 0;

		if (nt) {
			/* 16 at a time up to where q + i is 64-byte aligned */
			size_t head = (size_t)(-(uintptr_t)q & 63);

			if (head > n)
				head = n;
			for (; i < head; i += 16) {
				__mmask16 k = head - i >= 16 ?
					      (__mmask16)0xffff :
					      tail_mask(head - i);
				__m512i v = avx512_quantise16(
					_mm512_maskz_loadu_ps(k, row + i), vs);

				_mm_mask_storeu_epi8(q + i, k,
						     _mm512_cvtepi32_epi8(v));
			}
			i = head;
			for (; i + BLK <= n; i += BLK) {
				avx512_prefetch_block(next + i);
				__m512i v = avx512_quantise64(row + i, vs);

				_mm512_stream_si512((void *)(q + i), v);
			}
		}
		for (; i + BLK <= n; i += BLK) {
			avx512_prefetch_block(next + i);
			__m512i a = avx512_quantise16(
				_mm512_loadu_ps(row + i), vs);
			__m512i b = avx512_quantise16(
				_mm512_loadu_ps(row + i + 16), vs);
			__m512i c = avx512_quantise16(
				_mm512_loadu_ps(row + i + 32), vs);
			__m512i d = avx512_quantise16(
				_mm512_loadu_ps(row + i + 48), vs);

			/* vpmovdb keeps the low byte (see above). */
			_mm_storeu_si128((__m128i *)(q + i),
					 _mm512_cvtepi32_epi8(a));
			_mm_storeu_si128((__m128i *)(q + i + 16),
					 _mm512_cvtepi32_epi8(b));
			_mm_storeu_si128((__m128i *)(q + i + 32),
					 _mm512_cvtepi32_epi8(c));
			_mm_storeu_si128((__m128i *)(q + i + 48),
					 _mm512_cvtepi32_epi8(d));
		}
		for (; i + 16 <= n; i += 16)
			_mm_storeu_si128((__m128i *)(q + i),
					 _mm512_cvtepi32_epi8(avx512_quantise16(
						 _mm512_loadu_ps(row + i), vs)));
		if (i < n) {
			__mmask16 k = tail_mask(n - i);
			__m512i v = avx512_quantise16(
				_mm512_maskz_loadu_ps(k, row + i), vs);

			_mm_mask_storeu_epi8(q + i, k, _mm512_cvtepi32_epi8(v));
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
avx512_i8_rows_to_f32(float *dst, const void *src, size_t rows, size_t n)
{
	const uint8_t *in = src;

	for (size_t r = 0; r < rows; r++, in += QUANT_I8_ROW_BYTES(n)) {
		const uint8_t *q = in + QUANT_I8_ROW_HDR;
		float *o = dst + r * n;
		float scale;
		size_t i = 0;

		memcpy(&scale, in, 4);
		__m512 vs = _mm512_set1_ps(scale);

		for (; i + 64 <= n; i += 64) {
			__m512i b = _mm512_loadu_si512(q + i);

			_mm512_storeu_ps(o + i, _mm512_mul_ps(_mm512_cvtepi32_ps(
				_mm512_cvtepi8_epi32(
					_mm512_castsi512_si128(b))), vs));
			_mm512_storeu_ps(o + i + 16, _mm512_mul_ps(
				_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
					_mm512_extracti32x4_epi32(b, 1))), vs));
			_mm512_storeu_ps(o + i + 32, _mm512_mul_ps(
				_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
					_mm512_extracti32x4_epi32(b, 2))), vs));
			_mm512_storeu_ps(o + i + 48, _mm512_mul_ps(
				_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
					_mm512_extracti32x4_epi32(b, 3))), vs));
		}
		for (; i + 16 <= n; i += 16) {
			__m128i b = _mm_loadu_si128((const __m128i *)(q + i));

			_mm512_storeu_ps(o + i, _mm512_mul_ps(_mm512_cvtepi32_ps(
				_mm512_cvtepi8_epi32(b)), vs));
		}
		if (i < n) {
			__mmask16 k = tail_mask(n - i);
			__m128i b = _mm_maskz_loadu_epi8(k, q + i);

			_mm512_mask_storeu_ps(o + i, k, _mm512_mul_ps(
				_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b)), vs));
		}
	}
}

const struct quant_kernels quant_kernels_avx512 = {
	.isa = QUANT_ISA_AVX512,
	.name = "avx512",
	.f32_to_f16 = avx512_f32_to_f16,
	.f16_to_f32 = avx512_f16_to_f32,
	.f32_to_i8_rows = avx512_f32_to_i8_rows,
	.i8_rows_to_f32 = avx512_i8_rows_to_f32,
};
