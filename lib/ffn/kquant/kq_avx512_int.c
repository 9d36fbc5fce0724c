/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * AVX-512 VNNI Q8_K kernels for several input rows (one input row:
 * kq_avx512_q8k.c, which these call first). Built with the flags of
 * kq_avx512.c, whose kernel table holds them. vpmaddubsw + VNNI vpdpwssd
 * integer sums, the per-block float combination of kq_internal.h in block
 * order: equal to the scalar reference bit for bit.
 */
#include <immintrin.h>

#include "kq_avx512.h"
#include "kq_internal.h"

static inline int32_t
hsum128(__m128i v)
{
	v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4e));
	v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0xb1));
	return _mm_cvtsi128_si32(v);
}

/*
 * Integer path. Per 64 values: vpmaddubsw (u8 weights x i8 inputs, pairs,
 * exact in i16) then VNNI vpdpwssd (pairs x the sub-block's scale into
 * i32). Sums are exact, so the result equals the scalar reference.
 */

/* i16 lanes 0..15 <- scale 2g, 16..31 <- scale 2g+1 (Q4_K, 32 values per
 * scale); or lanes 8k..8k+7 <- scale 4c+k (Q6_K, 16 values per scale). */
static inline __m512i
scale_lanes(__m512i s16, int first, int per)
{
	__m512i idx = _mm512_srli_epi16(_mm512_cvtepu8_epi16(_mm256_setr_epi8(
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
		16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31)),
		per == 32 ? 4 : 3);

	return _mm512_permutexvar_epi16(_mm512_add_epi16(idx,
		_mm512_set1_epi16((short)first)), s16);
}

/* Lane r = sum of the 8 lanes of v[r]: eight horizontal sums at once. */
static inline __m256i
hsum8x8(const __m256i v[8])
{
	__m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]),
				      _mm256_hadd_epi32(v[2], v[3]));
	__m256i c = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]),
				      _mm256_hadd_epi32(v[6], v[7]));

	return _mm256_add_epi32(_mm256_permute2x128_si256(a, c, 0x20),
				_mm256_permute2x128_si256(a, c, 0x31));
}

/* Lane r = sum of the 4 lanes of v[r]. */
static inline __m256i
hsum8x4(const __m128i v[8])
{
	return _mm256_setr_m128i(
		_mm_hadd_epi32(_mm_hadd_epi32(v[0], v[1]),
			       _mm_hadd_epi32(v[2], v[3])),
		_mm_hadd_epi32(_mm_hadd_epi32(v[4], v[5]),
			       _mm_hadd_epi32(v[6], v[7])));
}

static inline __m256i
fold512(__m512i v)
{
	return _mm256_add_epi32(_mm512_castsi512_si256(v),
				_mm512_extracti64x4_epi64(v, 1));
}

/* Byte offsets of the d of block 0 of rows 0..7 (rows >= R: row 0). */
static inline __m256i
d_offsets(size_t nb, size_t R)
{
	int32_t o[8];

	for (size_t r = 0; r < 8; r++)
		o[r] = (int32_t)((r < R ? r : 0) * nb * FFN_KQ_Q8K_BYTES +
				 256 * nb);
	return _mm256_loadu_si256((const __m256i *)o);
}

/*
 * Several input rows: the integer sums of all rows are reduced together
 * and combined in one vector, lane r doing exactly the scalar's
 * acc + (dx*d)*isc - (dx*dmin)*imin (no FMA): equal bit for bit.
 */
static void
q4k_q8k_rows(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	     const uint8_t *q8, size_t R, float *y, size_t ldy)
{
	const __m512i m4 = _mm512_set1_epi8(15);
	size_t q8_row = nb * FFN_KQ_Q8K_BYTES;
	__m256i doff = d_offsets(nb, R);

	for (size_t i = 0; i < nrows; i++) {
		const uint8_t *row = w + i * row_bytes;
		__m256 acc = _mm256_setzero_ps();
		float out[8];

		for (size_t b = 0; b < nb; b++) {
			const uint8_t *blk = row + b * FFN_KQ_Q4K_BYTES;
			float d = f16(blk + KQ4_D), dmin = f16(blk + KQ4_DMIN);
			__m128i scm = q4k_scales_v(blk);
			__m512i qv[4], sv[4], s16 = _mm512_castsi128_si512(
				_mm_cvtepu8_epi16(scm));
			__m128i mv = _mm_cvtepu8_epi16(_mm_srli_si128(scm, 8));
			__m256i sr[8], isc;
			__m128i mr[8];
			__m256 dx;
			for (int g = 0; g < 4; g++) {
				__m512i q = _mm512_broadcast_i64x4(
					_mm256_loadu_si256((const __m256i *)
						(blk + KQ4_QS + 32 * g)));

				qv[g] = _mm512_and_si512(_mm512_mask_srli_epi16(
					q, 0xffff0000u, q, 4), m4);
				sv[g] = scale_lanes(s16, 2 * g, 32);
			}
			for (size_t r = 0; r < 8; r++) {
				const uint8_t *in = q8 + r * q8_row;
				const int8_t *a = kq_q8_qs(in, nb, b);
				__m512i s = _mm512_setzero_si512();

				if (r >= R) {
					sr[r] = _mm256_setzero_si256();
					mr[r] = _mm_setzero_si128();
					continue;
				}
				for (int g = 0; g < 4; g++)
					s = _mm512_dpwssd_epi32(s,
						_mm512_maddubs_epi16(qv[g],
						_mm512_loadu_si512(a + 64 * g)),
						sv[g]);
				sr[r] = fold512(s);
				mr[r] = _mm_madd_epi16(mv, _mm_loadu_si128(
					(const __m128i *)kq_q8_sums(in, nb, b)));
			}
			isc = hsum8x8(sr);
			dx = _mm256_i32gather_ps((const float *)(q8 + 4 * b),
						 doff, 1);
			acc = _mm256_sub_ps(_mm256_add_ps(acc, _mm256_mul_ps(
				_mm256_mul_ps(dx, _mm256_set1_ps(d)),
				_mm256_cvtepi32_ps(isc))), _mm256_mul_ps(
				_mm256_mul_ps(dx, _mm256_set1_ps(dmin)),
				_mm256_cvtepi32_ps(hsum8x4(mr))));
		}
		_mm256_storeu_ps(out, acc);
		for (size_t r = 0; r < R; r++)
			y[r * ldy + i] = out[r];
	}
}

void
ffn_kq_avx512_q4k_q8k(const uint8_t *w, size_t row_bytes, size_t nrows,
		      size_t nb, const uint8_t *q8, size_t R, float *y,
		      size_t ldy)
{
	if (R > 1) {
		q4k_q8k_rows(w, row_bytes, nrows, nb, q8, R, y, ldy);
		return;
	}
	if (ffn_kq_avx512_q4k_q8k_1(w, row_bytes, nrows, nb, q8, y) == 0)
		return;
	const __m512i m4 = _mm512_set1_epi8(15);
	size_t q8_row = nb * FFN_KQ_Q8K_BYTES;

	for (size_t i = 0; i < nrows; i++) {
		const uint8_t *row = w + i * row_bytes;
		float acc[FFN_KQ_RMAX] = {0};

		for (size_t b = 0; b < nb; b++) {
			const uint8_t *blk = row + b * FFN_KQ_Q4K_BYTES;
			float d = f16(blk + KQ4_D), dmin = f16(blk + KQ4_DMIN);
			__m128i scm = q4k_scales_v(blk);
			__m512i qv[4], sv[4], s16 = _mm512_castsi128_si512(
				_mm_cvtepu8_epi16(scm));
			__m128i mv = _mm_cvtepu8_epi16(_mm_srli_si128(scm, 8));
			for (int g = 0; g < 4; g++) {
				/* [qs | qs], high half shifted: values
				 * 64g .. 64g+63 in order */
				__m512i q = _mm512_broadcast_i64x4(
					_mm256_loadu_si256((const __m256i *)
						(blk + KQ4_QS + 32 * g)));

				qv[g] = _mm512_and_si512(_mm512_mask_srli_epi16(
					q, 0xffff0000u, q, 4), m4);
				sv[g] = scale_lanes(s16, 2 * g, 32);
			}
			for (size_t r = 0; r < R; r++) {
				const uint8_t *in = q8 + r * q8_row;
				const int8_t *a = kq_q8_qs(in, nb, b);
				__m512i s = _mm512_setzero_si512();
				int32_t isc, imin;

				for (int g = 0; g < 4; g++)
					s = _mm512_dpwssd_epi32(s,
						_mm512_maddubs_epi16(qv[g],
						_mm512_loadu_si512(a + 64 * g)),
						sv[g]);
				/* both horizontal sums at once:
				 * [isc, imin, isc, imin] */
				{
					__m256i t8 = _mm256_add_epi32(
						_mm512_castsi512_si256(s),
						_mm512_extracti64x4_epi64(s, 1));
					__m128i h = _mm_hadd_epi32(
						_mm_add_epi32(
						_mm256_castsi256_si128(t8),
						_mm256_extracti128_si256(t8, 1)),
						_mm_madd_epi16(mv, _mm_loadu_si128(
						(const __m128i *)
						kq_q8_sums(in, nb, b))));

					h = _mm_hadd_epi32(h, h);
					isc = _mm_cvtsi128_si32(h);
					imin = _mm_extract_epi32(h, 1);
				}
				acc[r] = kq_q4k_q8k_combine(acc[r],
					kq_q8_d(in, nb, b), d, dmin, isc, imin);
			}
		}
		for (size_t r = 0; r < R; r++)
			y[r * ldy + i] = acc[r];
	}
}

/* Several input rows, as q4k_q8k_rows: lane r is the scalar's
 * acc + (dx*d)*isum with isum = sum q*a*sc - 32 * sum sc * (sum of a). */
static void
q6k_q8k_rows(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	     enum ffn_kq_q6_layout q6, const uint8_t *q8, const int16_t *s16,
	     size_t R, float *y, size_t ldy)
{
	size_t q8_row = nb * FFN_KQ_Q8K_BYTES;
	const __m512i k32 = _mm512_set1_epi8(32);
	__m256i doff = d_offsets(nb, R);

	for (size_t i = 0; i < nrows; i++) {
		const uint8_t *row = w + i * row_bytes;
		__m256 acc = _mm256_setzero_ps();
		float out[8];

		for (size_t b = 0; b < nb; b++) {
			const uint8_t *blk = row + b * FFN_KQ_Q6K_BYTES;
			float d = f16(blk + KQ6_D);
			__m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(
				(const __m128i *)(blk + KQ6_SC)));
			__m512i sv[4], qv[4];
			__m256i sr[8], cr[8], corr;
			__m256 dx;

			q6_decode_z(blk, q6, qv);
			for (int c = 0; c < 4; c++)
				sv[c] = scale_lanes(_mm512_castsi256_si512(sc16),
						    4 * c, 16);
			for (size_t r = 0; r < 8; r++) {
				const uint8_t *in = q8 + r * q8_row;
				const int8_t *a = kq_q8_qs(in, nb, b);
				__m512i sz = _mm512_setzero_si512();
				__m512i cz = _mm512_setzero_si512();

				if (r >= R) {
					sr[r] = cr[r] = _mm256_setzero_si256();
					continue;
				}
				for (int c = 0; c < 4; c++) {
					__m512i av = _mm512_loadu_si512(
						a + 64 * c);

					sz = _mm512_dpwssd_epi32(sz,
						_mm512_maddubs_epi16(qv[c], av),
						sv[c]);
					if (s16 == NULL)
						cz = _mm512_dpwssd_epi32(cz,
							_mm512_maddubs_epi16(
							k32, av), sv[c]);
				}
				sr[r] = fold512(sz);
				cr[r] = s16 != NULL ? _mm256_madd_epi16(sc16,
					_mm256_loadu_si256((const __m256i *)
					(s16 + 16 * (r * nb + b)))) :
					fold512(cz);
			}
			corr = hsum8x8(cr);
			if (s16 != NULL)
				corr = _mm256_slli_epi32(corr, 5);
			dx = _mm256_i32gather_ps((const float *)(q8 + 4 * b),
						 doff, 1);
			acc = _mm256_add_ps(acc, _mm256_mul_ps(
				_mm256_mul_ps(dx, _mm256_set1_ps(d)),
				_mm256_cvtepi32_ps(_mm256_sub_epi32(
					hsum8x8(sr), corr))));
		}
		_mm256_storeu_ps(out, acc);
		for (size_t r = 0; r < R; r++)
			y[r * ldy + i] = out[r];
	}
}

void
ffn_kq_avx512_q6k_q8k(const uint8_t *w, size_t row_bytes, size_t nrows,
		      size_t nb, enum ffn_kq_q6_layout q6, const uint8_t *q8,
		      const int16_t *s16, size_t R, float *y, size_t ldy)
{
	if (R > 1) {
		q6k_q8k_rows(w, row_bytes, nrows, nb, q6, q8, s16, R, y, ldy);
		return;
	}
	if (ffn_kq_avx512_q6k_q8k_1(w, row_bytes, nrows, nb, q6, q8, s16,
				    y) == 0)
		return;
	size_t q8_row = nb * FFN_KQ_Q8K_BYTES;
	const __m512i k32 = _mm512_set1_epi8(32);

	for (size_t i = 0; i < nrows; i++) {
		const uint8_t *row = w + i * row_bytes;
		float acc[FFN_KQ_RMAX] = {0};

		for (size_t b = 0; b < nb; b++) {
			const uint8_t *blk = row + b * FFN_KQ_Q6K_BYTES;
			float d = f16(blk + KQ6_D);
			__m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(
				(const __m128i *)(blk + KQ6_SC)));
			__m512i sv[4], qv[4];

			q6_decode_z(blk, q6, qv);
			for (int c = 0; c < 4; c++)
				sv[c] = scale_lanes(_mm512_castsi256_si512(sc16),
						    4 * c, 16);
			for (size_t r = 0; r < R; r++) {
				const uint8_t *in = q8 + r * q8_row;
				const int8_t *a = kq_q8_qs(in, nb, b);
				__m512i s = _mm512_setzero_si512();
				int32_t isum;

				/* q (0..63) * a pairs fit in i16 */
				for (int c = 0; c < 4; c++)
					s = _mm512_dpwssd_epi32(s,
						_mm512_maddubs_epi16(qv[c],
						_mm512_loadu_si512(a + 64 * c)),
						sv[c]);
				isum = _mm512_reduce_add_epi32(s);
				/* the -32: sum_g sc_g * 32 * (sum of a) */
				if (s16 != NULL) {
					__m256i t = _mm256_madd_epi16(sc16,
						_mm256_loadu_si256(
						(const __m256i *)(s16 +
						16 * (r * nb + b))));

					isum -= 32 * (int32_t)hsum128(
						_mm_add_epi32(
						_mm256_castsi256_si128(t),
						_mm256_extracti128_si256(t, 1)));
				} else {
					__m512i c32 = _mm512_setzero_si512();

					for (int c = 0; c < 4; c++)
						c32 = _mm512_dpwssd_epi32(c32,
							_mm512_maddubs_epi16(
							k32, _mm512_loadu_si512(
							a + 64 * c)), sv[c]);
					isum -= _mm512_reduce_add_epi32(c32);
				}
				acc[r] = kq_q6k_q8k_combine(acc[r],
					kq_q8_d(in, nb, b), d, isum);
			}
		}
		for (size_t r = 0; r < R; r++)
			y[r * ldy + i] = acc[r];
	}
}
