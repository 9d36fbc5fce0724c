/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Q6_K block -> 256 unsigned 6-bit values in value order, with AVX2
 * instructions (spec/vindex.md §2.4, both bit arrangements). Included by
 * the AVX2 and AVX-512 kernel files, which compile it with their flags.
 */
#ifndef FFN_KQ_SIMD_Q6_H
#define FFN_KQ_SIMD_Q6_H

#include <immintrin.h>

#include "kq_internal.h"

/* ggml planar: per half of 128 values, ql[l] / ql[l+32] nibbles and the
 * four 2-bit fields of qh[l] give values l, l+32, l+64, l+96. */
static inline void
kq_q6_decode_ggml(const uint8_t *b, __m256i out[8])
{
	const __m256i m4 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);

	for (int n = 0; n < 2; n++) {
		const uint8_t *ql = b + KQ6_QL + 64 * n;
		__m256i l0 = _mm256_loadu_si256((const __m256i *)ql);
		__m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
		__m256i h = _mm256_loadu_si256(
			(const __m256i *)(b + KQ6_QH + 32 * n));
		__m256i *o = out + 4 * n;

		o[0] = _mm256_or_si256(_mm256_and_si256(l0, m4),
			_mm256_and_si256(_mm256_slli_epi16(h, 4), m30));
		o[1] = _mm256_or_si256(_mm256_and_si256(l1, m4),
			_mm256_and_si256(_mm256_slli_epi16(h, 2), m30));
		o[2] = _mm256_or_si256(
			_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
			_mm256_and_si256(h, m30));
		o[3] = _mm256_or_si256(
			_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
			_mm256_and_si256(_mm256_srli_epi16(h, 2), m30));
	}
}

/* The 2-bit field (i % 4) of each replicated qh byte, moved to bits 4-5.
 * 16-bit shifts are safe: only bits 4-5 of each byte are kept, and those
 * come from the byte itself for these shift amounts. */
static inline __m256i
kq_q6_private_hi(__m256i rep)
{
	const __m256i m0 = _mm256_set1_epi32(0x00000030);
	const __m256i m1 = _mm256_set1_epi32(0x00003000);
	const __m256i m2 = _mm256_set1_epi32(0x00300000);
	const __m256i m3 = _mm256_set1_epi32(0x30000000);

	return _mm256_or_si256(
		_mm256_or_si256(
			_mm256_and_si256(_mm256_slli_epi16(rep, 4), m0),
			_mm256_and_si256(_mm256_slli_epi16(rep, 2), m1)),
		_mm256_or_si256(
			_mm256_and_si256(rep, m2),
			_mm256_and_si256(_mm256_srli_epi16(rep, 2), m3)));
}

/* LARQL-private: value i has nibble (i & 1) of ql[i/2] and field i % 4 of
 * qh[i/4]. 64 values per step: 32 ql bytes, 16 qh bytes. */
static inline void
kq_q6_decode_private(const uint8_t *b, __m256i out[8])
{
	const __m256i m4 = _mm256_set1_epi8(15);
	const __m256i rep0 = _mm256_setr_epi8(
		0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3,
		4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7);
	const __m256i rep1 = _mm256_add_epi8(rep0, _mm256_set1_epi8(8));

	for (int t = 0; t < 4; t++) {
		__m256i v = _mm256_loadu_si256(
			(const __m256i *)(b + KQ6_QL + 32 * t));
		__m256i lo = _mm256_and_si256(v, m4);
		__m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
		__m256i a = _mm256_unpacklo_epi8(lo, hi);
		__m256i c = _mm256_unpackhi_epi8(lo, hi);
		__m256i n0 = _mm256_permute2x128_si256(a, c, 0x20);
		__m256i n1 = _mm256_permute2x128_si256(a, c, 0x31);
		__m256i h = _mm256_broadcastsi128_si256(_mm_loadu_si128(
			(const __m128i *)(b + KQ6_QH + 16 * t)));
		out[2 * t] = _mm256_or_si256(n0,
			kq_q6_private_hi(_mm256_shuffle_epi8(h, rep0)));
		out[2 * t + 1] = _mm256_or_si256(n1,
			kq_q6_private_hi(_mm256_shuffle_epi8(h, rep1)));
	}
}

/* The 256 values as 8 vectors of 32, in value order. */
static inline void
kq_q6_decode_regs(const uint8_t *b, enum ffn_kq_q6_layout q6, __m256i o[8])
{
	if (q6 == FFN_KQ_Q6_PRIVATE)
		kq_q6_decode_private(b, o);
	else
		kq_q6_decode_ggml(b, o);
}

static inline void
kq_q6_decode_simd(const uint8_t *b, enum ffn_kq_q6_layout q6, uint8_t q[256])
{
	__m256i o[8];

	kq_q6_decode_regs(b, q6, o);
	for (int i = 0; i < 8; i++)
		_mm256_storeu_si256((__m256i *)(q + 32 * i), o[i]);
}

#endif /* FFN_KQ_SIMD_Q6_H */
