/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * What the AVX-512 K-quant kernel files share (kq_avx512.c, the f32 path;
 * kq_avx512_int.c, the several-row Q8_K path; kq_avx512_q8k.c, the
 * one-row Q8_K path): the f16 read of a block's scales, the Q6_K block
 * decoded into vectors, the Q4_K scales and mins in one vector, the input
 * permutations that match a 64-byte load of weight nibbles, and the scale
 * lanes of two packed dot products. Static inline, compiled with each
 * file's AVX-512 flags.
 */
#ifndef FFN_KQ_AVX512_H
#define FFN_KQ_AVX512_H

#include <immintrin.h>

#include "kq_internal.h"

static inline float
f16(const uint8_t *p)
{
	return _cvtsh_ss(kq_rd16(p));
}

/*
 * Q6_K block -> 4 vectors of 64 unsigned 6-bit values in value order
 * (spec/vindex.md §2.4).
 * ggml planar, per half of 128: ql[0..63] low nibbles are values 0..63,
 * high nibbles 64..127; qh[l] fields 0..3 go to l, l+32, l+64, l+96.
 * LARQL-private, per 64 values: ql byte k holds values 2k, 2k+1 (widen to
 * 16 bits, move the high nibble to the high byte); qh byte i/4 field i%4
 * is picked per byte by vpmultishiftqb (VBMI) from qwords holding the two
 * qh bytes of their 8 values, rotated so the field lands in bits 4-5.
 */
static inline void
q6_decode_z(const uint8_t *b, enum ffn_kq_q6_layout q6, __m512i qv[4])
{
	const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30);

	if (q6 == FFN_KQ_Q6_GGML) {
		/* 16-bit lanes 0..15 (bytes 0..31) and 16..31 */
		const __m512i sh_a = _mm512_inserti64x4(_mm512_set1_epi16(4),
						_mm256_set1_epi16(2), 1);
		const __m512i sh_b = _mm512_inserti64x4(_mm512_setzero_si512(),
						_mm256_set1_epi16(2), 1);

		for (int n = 0; n < 2; n++) {
			__m512i l = _mm512_loadu_si512(b + KQ6_QL + 64 * n);
			__m512i h = _mm512_broadcast_i64x4(_mm256_loadu_si256(
				(const __m256i *)(b + KQ6_QH + 32 * n)));

			qv[2 * n] = _mm512_or_si512(_mm512_and_si512(l, m4),
				_mm512_and_si512(_mm512_sllv_epi16(h, sh_a),
						 m30));
			qv[2 * n + 1] = _mm512_or_si512(_mm512_and_si512(
				_mm512_srli_epi16(l, 4), m4),
				_mm512_and_si512(_mm512_srlv_epi16(h, sh_b),
						 m30));
		}
		return;
	}
	{
		/* 128-bit lane k = values 16k..16k+15 of the 64: qword 2k
		 * gets qh bytes 4k, 4k+1; qword 2k+1 gets 4k+2, 4k+3 */
		const __m512i sel = _mm512_set_epi64(
			0x0f0e, 0x0d0c, 0x0b0a, 0x0908,
			0x0706, 0x0504, 0x0302, 0x0100);
		/* byte j of a qword: field at bit 8*(j/4) + 2*(j%4), minus 4
		 * (mod 64) so it lands in bits 4-5 */
		const __m512i ctl = _mm512_set1_epi64(0x0a08060402003e3cLL);
		const __m512i k0f = _mm512_set1_epi16(0x0f0f);

		for (int t = 0; t < 4; t++) {
			__m512i w = _mm512_cvtepu8_epi16(_mm256_loadu_si256(
				(const __m256i *)(b + KQ6_QL + 32 * t)));
			__m512i lo = _mm512_and_si512(_mm512_or_si512(w,
				_mm512_slli_epi16(w, 4)), k0f);
			__m512i h = _mm512_shuffle_epi8(_mm512_broadcast_i32x4(
				_mm_loadu_si128((const __m128i *)
						(b + KQ6_QH + 16 * t))), sel);

			qv[t] = _mm512_or_si512(lo, _mm512_and_si512(
				_mm512_multishift_epi64_epi8(ctl, h), m30));
		}
	}
}

/*
 * Half n (values 128n..128n+127) of a Q6_K block as two vectors of 64
 * unsigned 6-bit values, for the Q8_K kernels that dot them with inputs in
 * a matching order:
 * LARQL-private, lo byte k = value 128n + 2k, hi byte k = 128n + 2k + 1
 * (the input permuted by kq_perm_q6k_private): byte k needs qh byte k/2,
 * field bits 0-1 / 2-3 (k even) or 4-5 / 6-7 (k odd); each qword holds the
 * 4 qh bytes of its 8 output bytes and vpmultishiftqb picks each field
 * (offset - 4 mod 64) into bits 4-5.
 * ggml planar, lo = values 128n + 0..63, hi = 128n + 64..127 (the input as
 * is): low nibbles then high nibbles; qh[l] fields 0..3 go to l, l+32,
 * l+64, l+96.
 */
static inline void
kq_q6_half(const uint8_t *b, enum ffn_kq_q6_layout q6, int n, __m512i *lo,
	   __m512i *hi)
{
	const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30);
	__m512i l = _mm512_loadu_si512(b + KQ6_QL + 64 * n);
	__m512i e, o;

	if (q6 == FFN_KQ_Q6_PRIVATE) {
		__m512i h4 = _mm512_cvtepu32_epi64(_mm256_loadu_si256(
			(const __m256i *)(b + KQ6_QH + 32 * n)));

		e = _mm512_multishift_epi64_epi8(
			_mm512_set1_epi64(0x1814100c0804003cLL), h4);
		o = _mm512_multishift_epi64_epi8(
			_mm512_set1_epi64(0x1a16120e0a06023eLL), h4);
	} else {
		__m512i h = _mm512_broadcast_i64x4(_mm256_loadu_si256(
			(const __m256i *)(b + KQ6_QH + 32 * n)));

		e = _mm512_mask_slli_epi16(_mm512_slli_epi16(h, 4),
					   0xffff0000u, h, 2);
		o = _mm512_mask_srli_epi16(h, 0xffff0000u, h, 2);
	}
	*lo = _mm512_or_si512(_mm512_and_si512(l, m4),
			      _mm512_and_si512(e, m30));
	*hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4),
			      _mm512_and_si512(o, m30));
}

/*
 * Q4_K scales and mins (kq_q4k_scales) in a vector, without a round trip
 * through memory: bytes 0..7 sc[0..7], bytes 8..15 m[0..7]. 32-bit lanes
 * of s = [u0, u1, u2]: [u0 & 63s, (u2 & 15s) | (u0 >> 6 & 3s) << 4,
 * u1 & 63s, (u2 >> 4 & 15s) | (u1 >> 6 & 3s) << 4].
 */
static inline __m128i
q4k_scales_v(const uint8_t *blk)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(blk + KQ4_S));
	__m128i p = _mm_srlv_epi32(_mm_shuffle_epi32(v, 0x98),	/* 0,2,1,2 */
				   _mm_setr_epi32(0, 0, 0, 4));
	__m128i q = _mm_shuffle_epi32(v, 0x50);			/* 0,0,1,1 */
	__m128i lo = _mm_and_si128(p, _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f,
						     0x3f3f3f3f, 0x0f0f0f0f));
	__m128i hi = _mm_and_si128(_mm_slli_epi32(_mm_srli_epi32(q, 6), 4),
				   _mm_setr_epi32(0, 0x30303030, 0,
						  0x30303030));

	return _mm_or_si128(lo, hi);
}

/*
 * Q4_K: a 64-byte load of qs[64k..64k+63] gives, in its low nibbles, the
 * values 128k + 0..31 and 128k + 64..95, in its high nibbles 128k +
 * 32..63 and 128k + 96..127 (vindex.md §2.4). So the input's 32-byte
 * chunks go in the order 0, 2, 1, 3, 4, 6, 5, 7.
 */
static inline void
kq_perm_q4k(const uint8_t *q8, size_t nb, uint8_t *ap)
{
	static const uint8_t ord[8] = { 0, 2, 1, 3, 4, 6, 5, 7 };

	for (size_t b = 0; b < nb; b++)
		for (int c = 0; c < 8; c++)
			_mm256_storeu_si256((__m256i *)(ap + 256 * b + 32 * c),
				_mm256_loadu_si256((const __m256i *)
					(q8 + 256 * b + 32 * ord[c])));
}

/*
 * Q6_K, LARQL-private arrangement: 64 bytes of ql hold the values
 * 128n + 2k in their low nibbles and 128n + 2k + 1 in their high ones, so
 * the input goes as [even values | odd values] per 128.
 */
static inline void
kq_perm_q6k_private(const uint8_t *q8, size_t nb, uint8_t *ap)
{
	__m512i ie = _mm512_set_epi8(
		126, 124, 122, 120, 118, 116, 114, 112, 110, 108, 106, 104,
		102, 100, 98, 96, 94, 92, 90, 88, 86, 84, 82, 80, 78, 76, 74,
		72, 70, 68, 66, 64, 62, 60, 58, 56, 54, 52, 50, 48, 46, 44, 42,
		40, 38, 36, 34, 32, 30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10,
		8, 6, 4, 2, 0);
	__m512i io = _mm512_add_epi8(ie, _mm512_set1_epi8(1));

	for (size_t h = 0; h < 2 * nb; h++) {
		__m512i a0 = _mm512_loadu_si512(q8 + 128 * h);
		__m512i a1 = _mm512_loadu_si512(q8 + 128 * h + 64);

		_mm512_storeu_si512(ap + 128 * h,
				    _mm512_permutex2var_epi8(a0, ie, a1));
		_mm512_storeu_si512(ap + 128 * h + 64,
				    _mm512_permutex2var_epi8(a0, io, a1));
	}
}

/* vpshufb control for packs_epi32 of two dpbusd results whose i32 lanes
 * hold sub-blocks (s0 | s2) and (s1 | s3) by 256-bit halves: i16 lanes of
 * 128-bit lanes 0-1 <- byte s0 x4 then s1 x4, of lanes 2-3 <- s2, s3. */
static inline __m512i
kq_sc_ctl2(int s0, int s1, int s2, int s3)
{
	__m128i a = _mm_setr_epi16((short)(0x8000 | s0), (short)(0x8000 | s0),
		(short)(0x8000 | s0), (short)(0x8000 | s0),
		(short)(0x8000 | s1), (short)(0x8000 | s1),
		(short)(0x8000 | s1), (short)(0x8000 | s1));
	__m128i c = _mm_setr_epi16((short)(0x8000 | s2), (short)(0x8000 | s2),
		(short)(0x8000 | s2), (short)(0x8000 | s2),
		(short)(0x8000 | s3), (short)(0x8000 | s3),
		(short)(0x8000 | s3), (short)(0x8000 | s3));

	return _mm512_inserti64x4(_mm512_castsi256_si512(
		_mm256_set_m128i(a, a)), _mm256_set_m128i(c, c), 1);
}

#endif /* FFN_KQ_AVX512_H */
