/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * AVX2 one-input-row Q8_K kernels (vpmaddubsw / vpmaddwd), for CPUs
 * without AVX-512: one weight row at a time, four blocks per step, as
 * kq_avx512_q8k.c and for the same reasons (one row streams the weights
 * once, so cycles per block must stay below memory's time per block).
 * - Q4_K: a 32-byte load of qs gives sub-blocks 2g and 2g+1 in value
 *   order, so the input is used as it is; each sub-block's scale vector is
 *   one vpshufb of the block's unpacked scales.
 * - Q6_K LARQL-private: the input is permuted once per call to [even |
 *   odd] values per 64, the order of the low and high nibbles of 32 ql
 *   bytes, so no value has to be moved; ggml planar is in value order.
 * - the horizontal sums of four blocks are reduced together, and the
 *   -32 of Q6_K is one vpmaddwd of 32*scale with the negated input sums.
 * Integer sums are exact and each block's float combination is
 * kq_internal.h's, in block order: equal to the scalar reference bit for
 * bit.
 */
#include <immintrin.h>

#include "kq_internal.h"

#define KQ2_PERM_BLOCKS 256	/* 64 KiB of stack: nf up to 65536 */

/* Lane k = sum of the 8 lanes of s[k], k = 0..3. */
static inline __m128i
hsum4x8(const __m256i s[4])
{
	__m256i a01 = _mm256_add_epi32(_mm256_unpacklo_epi32(s[0], s[1]),
				       _mm256_unpackhi_epi32(s[0], s[1]));
	__m256i a23 = _mm256_add_epi32(_mm256_unpacklo_epi32(s[2], s[3]),
				       _mm256_unpackhi_epi32(s[2], s[3]));
	__m256i c = _mm256_add_epi32(_mm256_unpacklo_epi64(a01, a23),
				     _mm256_unpackhi_epi64(a01, a23));

	return _mm_add_epi32(_mm256_castsi256_si128(c),
			     _mm256_extracti128_si256(c, 1));
}

/* Q4_K scales (kq_q4k_scales): bytes 0..7 sc, 8..15 m. */
static inline __m128i
q4k_scales_v(const uint8_t *blk)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(blk + KQ4_S));
	__m128i p = _mm_srlv_epi32(_mm_shuffle_epi32(v, 0x98),
				   _mm_setr_epi32(0, 0, 0, 4));
	__m128i q = _mm_shuffle_epi32(v, 0x50);
	__m128i lo = _mm_and_si128(p, _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f,
						     0x3f3f3f3f, 0x0f0f0f0f));
	__m128i hi = _mm_and_si128(_mm_slli_epi32(_mm_srli_epi32(q, 6), 4),
				   _mm_setr_epi32(0, 0x30303030, 0,
						  0x30303030));

	return _mm_or_si128(lo, hi);
}

/* vpshufb control: every i16 lane <- byte j, zero-extended. */
static inline __m256i
bcast_ctl(int j)
{
	return _mm256_set1_epi16((short)(0x8000 | j));
}

static inline float
q4k_row(const uint8_t *row, size_t nb, const uint8_t *q8, const float *dx,
	const uint8_t *bsums)
{
	const __m256i m4 = _mm256_set1_epi8(15);
	const __m256i ctlm = _mm256_broadcastsi128_si256(_mm_setr_epi8(
		8, -1, 9, -1, 10, -1, 11, -1, 12, -1, 13, -1, 14, -1, 15, -1));
	float acc = 0.0f;

	for (size_t b = 0; b < nb; b += 4) {
		size_t bn = nb - b < 4 ? nb - b : 4;
		const uint8_t *B[4];
		__m256i s[4];
		__m128i mn[4];
		__m128 p, q, d, dm, dxv;
		float pq[8];

		for (size_t k = 0; k < 4; k++) {
			size_t bk = b + (k < bn ? k : bn - 1);
			const uint8_t *blk = row + bk * FFN_KQ_Q4K_BYTES;
			const int8_t *a = (const int8_t *)q8 + 256 * bk;
			__m256i bc = _mm256_broadcastsi128_si256(
				q4k_scales_v(blk));
			__m256i z = _mm256_setzero_si256();

			B[k] = blk;
			if (k >= bn) {	/* a partial group: only its blocks */
				s[k] = _mm256_setzero_si256();
				mn[k] = _mm_setzero_si128();
				continue;
			}
			for (int g = 0; g < 4; g++) {
				__m256i qv = _mm256_loadu_si256((const __m256i *)
					(blk + KQ4_QS + 32 * g));

				/* pairs of q*a fit in i16: 2*15*128 */
				z = _mm256_add_epi32(z, _mm256_madd_epi16(
					_mm256_maddubs_epi16(_mm256_and_si256(
					qv, m4), _mm256_loadu_si256(
					(const __m256i *)(a + 64 * g))),
					_mm256_shuffle_epi8(bc,
						bcast_ctl(2 * g))));
				z = _mm256_add_epi32(z, _mm256_madd_epi16(
					_mm256_maddubs_epi16(_mm256_and_si256(
					_mm256_srli_epi16(qv, 4), m4),
					_mm256_loadu_si256((const __m256i *)
						(a + 64 * g + 32))),
					_mm256_shuffle_epi8(bc,
						bcast_ctl(2 * g + 1))));
			}
			s[k] = z;
			/* mins m_j x the input's sums over sub-block j */
			mn[k] = _mm_madd_epi16(_mm256_castsi256_si128(
				_mm256_shuffle_epi8(bc, ctlm)), _mm_loadu_si128(
				(const __m128i *)(bsums + 16 * bk)));
		}
		{
			int32_t w[4];
			__m256 f;

			for (int k = 0; k < 4; k++)
				memcpy(&w[k], B[k] + KQ4_D, 4);
			f = _mm256_permutevar8x32_ps(_mm256_cvtph_ps(
				_mm_loadu_si128((const __m128i *)w)),
				_mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
			d = _mm256_castps256_ps128(f);
			dm = _mm256_extractf128_ps(f, 1);
		}
		dxv = _mm_maskload_ps(dx + b, _mm_cmpgt_epi32(
			_mm_set1_epi32((int)bn), _mm_setr_epi32(0, 1, 2, 3)));
		/* kq_q4k_q8k_combine, four blocks at once, then in order */
		p = _mm_mul_ps(_mm_mul_ps(dxv, d), _mm_cvtepi32_ps(hsum4x8(s)));
		q = _mm_mul_ps(_mm_mul_ps(dxv, dm), _mm_cvtepi32_ps(
			_mm_hadd_epi32(_mm_hadd_epi32(mn[0], mn[1]),
				       _mm_hadd_epi32(mn[2], mn[3]))));
		_mm_storeu_ps(pq, p);
		_mm_storeu_ps(pq + 4, q);
		for (size_t k = 0; k < bn; k++)
			acc = (acc + pq[k]) - pq[4 + k];
	}
	return acc;
}

int
ffn_kq_avx2_q4k_q8k_1(const uint8_t *w, size_t row_bytes, size_t nrows,
		      size_t nb, const uint8_t *q8, float *y)
{
	const float *dx = (const float *)(const void *)(q8 + 256 * nb);

	for (size_t i = 0; i < nrows; i++)
		y[i] = q4k_row(w + i * row_bytes, nb, q8, dx, q8 + 260 * nb);
	return 0;
}

/* LARQL-private: per 64 values, [even values | odd values]. */
static void
perm_q6k_private(const uint8_t *q8, size_t nb, uint8_t *ap)
{
	/* per 128-bit lane: even bytes, then odd bytes */
	const __m256i sel = _mm256_broadcastsi128_si256(_mm_setr_epi8(
		0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));

	for (size_t t = 0; t < 4 * nb; t++) {
		__m256i v0 = _mm256_shuffle_epi8(_mm256_loadu_si256(
			(const __m256i *)(q8 + 64 * t)), sel);
		__m256i v1 = _mm256_shuffle_epi8(_mm256_loadu_si256(
			(const __m256i *)(q8 + 64 * t + 32)), sel);
		/* qwords: v0 = [e0 o0 e1 o1], v1 = [e2 o2 e3 o3] */
		__m256i e = _mm256_unpacklo_epi64(v0, v1);	/* e0 e2 e1 e3 */
		__m256i o = _mm256_unpackhi_epi64(v0, v1);	/* o0 o2 o1 o3 */

		_mm256_storeu_si256((__m256i *)(ap + 64 * t),
				    _mm256_permute4x64_epi64(e, 0xd8));
		_mm256_storeu_si256((__m256i *)(ap + 64 * t + 32),
				    _mm256_permute4x64_epi64(o, 0xd8));
	}
}

/* The i16 scale vectors of a Q6_K block from its 16 int8 scales:
 * lo = i32 lanes (sc_j, sc_j) for j = 0..3 | 8..11, hi for 4..7 | 12..15. */
static inline void
q6_scale_pairs(const uint8_t *blk, __m256i *lo, __m256i *hi, __m256i *sc16)
{
	*sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(
		(const __m128i *)(blk + KQ6_SC)));
	*lo = _mm256_unpacklo_epi16(*sc16, *sc16);
	*hi = _mm256_unpackhi_epi16(*sc16, *sc16);
}

/* Exact sum_g sc_g sum_i (q_i - 32) a_i of one Q6_K block in 8 lanes. */
static inline __m256i
q6k_block(const uint8_t *blk, enum ffn_kq_q6_layout q6, const uint8_t *a,
	  const int16_t *ns)
{
	const __m256i m4 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);
	__m256i slo, shi, sc16, z;

	q6_scale_pairs(blk, &slo, &shi, &sc16);
	/* the -32 of every value: sum_g (32 sc_g) (-sum of its 16 a) */
	z = _mm256_madd_epi16(_mm256_slli_epi16(sc16, 5),
			      _mm256_loadu_si256((const __m256i *)ns));
	if (q6 == FFN_KQ_Q6_PRIVATE) {
		/* even bytes: the field of value 2k is bits 0-1 of qh byte
		 * k/2 (k even) or bits 4-5 (k odd); of 2k+1 bits 2-3 / 6-7 */
		const __m256i ev = _mm256_set1_epi16(0x0030);
		const __m256i od = _mm256_set1_epi16(0x3000);
		const __m256i dup = _mm256_setr_epi8(
			0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7,
			8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14,
			15, 15);

		for (int t = 0; t < 4; t++) {
			__m256i l = _mm256_loadu_si256((const __m256i *)
				(blk + KQ6_QL + 32 * t));
			__m256i h = _mm256_broadcastsi128_si256(_mm_loadu_si128(
				(const __m128i *)(blk + KQ6_QH + 16 * t)));
			__m256i d, lo, hi, sv;

			/* lane 0: qh bytes 0..7 doubled, lane 1: 8..15 */
			d = _mm256_shuffle_epi8(h, dup);
			lo = _mm256_or_si256(_mm256_and_si256(l, m4),
				_mm256_or_si256(_mm256_and_si256(
				_mm256_slli_epi16(d, 4), ev),
				_mm256_and_si256(d, od)));
			hi = _mm256_or_si256(_mm256_and_si256(
				_mm256_srli_epi16(l, 4), m4),
				_mm256_or_si256(_mm256_and_si256(
				_mm256_slli_epi16(d, 2), ev),
				_mm256_and_si256(_mm256_srli_epi16(d, 2), od)));
			/* i16 lane m: values 64t + 4m..4m+3, scale 4t + m/4:
			 * i32 lanes (sc, sc) pairs of 4t .. 4t+3 */
			sv = _mm256_permutevar8x32_epi32((t & 1) ? shi : slo,
				(t & 2) ? _mm256_setr_epi32(4, 4, 5, 5, 6, 6,
							    7, 7) :
				_mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
			z = _mm256_add_epi32(z, _mm256_madd_epi16(
				_mm256_add_epi16(
				_mm256_maddubs_epi16(lo, _mm256_loadu_si256(
					(const __m256i *)(a + 64 * t))),
				_mm256_maddubs_epi16(hi, _mm256_loadu_si256(
					(const __m256i *)(a + 64 * t + 32)))),
				sv));
		}
		return z;
	}
	for (int n = 0; n < 2; n++) {
		const uint8_t *ql = blk + KQ6_QL + 64 * n;
		__m256i l0 = _mm256_loadu_si256((const __m256i *)ql);
		__m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
		__m256i h = _mm256_loadu_si256(
			(const __m256i *)(blk + KQ6_QH + 32 * n));
		__m256i v[4];

		/* ggml planar: values l, l+32, l+64, l+96 of the half */
		v[0] = _mm256_or_si256(_mm256_and_si256(l0, m4),
			_mm256_and_si256(_mm256_slli_epi16(h, 4), m30));
		v[1] = _mm256_or_si256(_mm256_and_si256(l1, m4),
			_mm256_and_si256(_mm256_slli_epi16(h, 2), m30));
		v[2] = _mm256_or_si256(
			_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
			_mm256_and_si256(h, m30));
		v[3] = _mm256_or_si256(
			_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
			_mm256_and_si256(_mm256_srli_epi16(h, 2), m30));
		for (int c = 0; c < 4; c++) {
			/* 32 values 128n + 32c..: groups 8n + 2c, 8n + 2c + 1;
			 * pairs j = 4n + c of slo (n = 0, c < 2 / n = 1 ...)*/
			int j = 4 * n + c;	/* pair of groups 2j, 2j+1 */
			__m256i src = (j & 2) ? shi : slo;
			int base = (j & 4) ? 4 : 0;
			int o = 2 * (j & 1);
			__m256i sv = _mm256_permutevar8x32_epi32(src,
				_mm256_setr_epi32(base + o, base + o, base + o,
					base + o, base + o + 1, base + o + 1,
					base + o + 1, base + o + 1));

			z = _mm256_add_epi32(z, _mm256_madd_epi16(
				_mm256_maddubs_epi16(v[c], _mm256_loadu_si256(
				(const __m256i *)(a + 128 * n + 32 * c))), sv));
		}
	}
	return z;
}

static inline __attribute__((always_inline)) float
q6k_row(const uint8_t *row, size_t nb, enum ffn_kq_q6_layout q6,
	const uint8_t *ap, const int16_t *ns, const float *dx)
{
	float acc = 0.0f;

	for (size_t b = 0; b < nb; b += 4) {
		size_t bn = nb - b < 4 ? nb - b : 4;
		uint16_t dh[8] = { 0 };
		__m256i s[4];
		__m128 p;
		float pv[4];

		for (size_t k = 0; k < 4; k++) {
			size_t bk = b + (k < bn ? k : bn - 1);
			const uint8_t *blk = row + bk * FFN_KQ_Q6K_BYTES;

			dh[k] = kq_rd16(blk + KQ6_D);
			/* a partial group computes only its blocks */
			s[k] = k < bn ? q6k_block(blk, q6, ap + 256 * bk,
						  ns + 16 * bk) :
					_mm256_setzero_si256();
		}
		p = _mm_mul_ps(_mm_mul_ps(_mm_maskload_ps(dx + b,
			_mm_cmpgt_epi32(_mm_set1_epi32((int)bn),
					_mm_setr_epi32(0, 1, 2, 3))),
			_mm_cvtph_ps(_mm_loadu_si128((const __m128i *)dh))),
			_mm_cvtepi32_ps(hsum4x8(s)));
		_mm_storeu_ps(pv, p);
		for (size_t k = 0; k < bn; k++)
			acc = acc + pv[k];	/* kq_q6k_q8k_combine, in order */
	}
	return acc;
}

int
ffn_kq_avx2_q6k_q8k_1(const uint8_t *w, size_t row_bytes, size_t nrows,
		      size_t nb, enum ffn_kq_q6_layout q6, const uint8_t *q8,
		      const int16_t *s16, float *y)
{
	uint8_t ap[256 * KQ2_PERM_BLOCKS] __attribute__((aligned(32)));
	int16_t ns[16 * KQ2_PERM_BLOCKS] __attribute__((aligned(32)));
	const float *dx = (const float *)(const void *)(q8 + 256 * nb);

	if (nb > KQ2_PERM_BLOCKS || s16 == NULL)
		return -1;
	for (size_t i = 0; i < 16 * nb; i++)
		ns[i] = (int16_t)-s16[i];
	if (q6 == FFN_KQ_Q6_PRIVATE) {
		perm_q6k_private(q8, nb, ap);
		for (size_t i = 0; i < nrows; i++)
			y[i] = q6k_row(w + i * row_bytes, nb, FFN_KQ_Q6_PRIVATE,
				       ap, ns, dx);
	} else {
		for (size_t i = 0; i < nrows; i++)
			y[i] = q6k_row(w + i * row_bytes, nb, FFN_KQ_Q6_GGML,
				       q8, ns, dx);
	}
	return 0;
}
