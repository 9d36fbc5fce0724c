/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * AVX2 Q8_K kernels for several input rows (2..8; one row:
 * kq_avx2_q8k.c). Built with the flags of kq_avx2.c, whose kernel table
 * calls them from 3 rows: at 2 a block's fixed cost (scales, the 8-lane
 * reduction and combination) is shared by too few rows, and the per-row
 * loop of kq_avx2.c ran 1.5x faster.
 *
 * Why they are shaped so: 16 ymm registers. A block decoded whole (8
 * vectors) with its 8 scale vectors fills them, so the rows' sums spilled
 * and each row was reduced and combined on its own (a horizontal sum, the
 * mins, a scalar combination: as many instructions as its dots). Here the
 * block goes 32 values at a time (one weight vector, one scale vector) to
 * the 8 rows' accumulators, which stay in registers; then the 8 sums are
 * reduced together into one vector (lane r: row r), the mins of all rows
 * come from the window's sums (kq_rows.h) and one vector combination does
 * every row. The window keeps the rows' values in L1 and a cursor
 * prefetches the weights.
 *
 * Integer sums are exact and lane r combines exactly as the scalar's
 * kq_q4k_q8k_combine / kq_q6k_q8k_combine (no FMA): equal to the scalar
 * reference bit for bit.
 */
#include <immintrin.h>

#include "kq_internal.h"
#include "kq_rows.h"
#include "kq_simd_q6.h"

static inline float
f16(const uint8_t *p)
{
	return _cvtsh_ss(kq_rd16(p));
}

/* Lane r = sum of the 8 lanes of s[r]: interleaved adds per 128-bit lane,
 * then the two lanes (no vphaddd: 3 micro-ops each on AMD). */
static inline __m256i
hsum8x8(const __m256i s[8])
{
	__m256i a[4], b0, b1;

	for (int k = 0; k < 4; k++)
		a[k] = _mm256_add_epi32(
			_mm256_unpacklo_epi32(s[2 * k], s[2 * k + 1]),
			_mm256_unpackhi_epi32(s[2 * k], s[2 * k + 1]));
	b0 = _mm256_add_epi32(_mm256_unpacklo_epi64(a[0], a[1]),
			      _mm256_unpackhi_epi64(a[0], a[1]));
	b1 = _mm256_add_epi32(_mm256_unpacklo_epi64(a[2], a[3]),
			      _mm256_unpackhi_epi64(a[2], a[3]));
	return _mm256_add_epi32(_mm256_permute2x128_si256(b0, b1, 0x20),
				_mm256_permute2x128_si256(b0, b1, 0x31));
}

/* 32 values (weights qv, scale sv) into the accumulators of rows < R;
 * a: row 0's 32 values, rows q8_row apart. Pairs of q*a fit in i16
 * (2 * 63 * 128). */
static inline __attribute__((always_inline)) void
dot32(__m256i qv, __m256i sv, const int8_t *a, size_t q8_row, size_t R,
      __m256i s[8])
{
#pragma GCC unroll 8
	for (size_t r = 0; r < 8; r++)
		if (r < R)
			s[r] = _mm256_add_epi32(s[r], _mm256_madd_epi16(
				_mm256_maddubs_epi16(qv, _mm256_loadu_si256(
				(const __m256i *)(a + r * q8_row))), sv));
}

void
ffn_kq_avx2_q4k_q8k_rows(const uint8_t *w, size_t row_bytes, size_t nrows,
			 size_t nb, const uint8_t *q8, size_t R, float *y,
			 size_t ldy)
{
	const __m256i m4 = _mm256_set1_epi8(15);
	size_t q8_row = nb * FFN_KQ_Q8K_BYTES;
	struct kq_q8_win win __attribute__((aligned(64)));
	struct kq_pf pf;

	for (size_t b0 = 0; b0 < nb; b0 += KQ_WIN) {
		size_t n = nb - b0 < KQ_WIN ? nb - b0 : KQ_WIN;

		kq_win_prep(q8, nb, R, b0, n, 1, &win);
		kq_pf_start(&pf, w, row_bytes, b0, n, FFN_KQ_Q4K_BYTES);
		for (size_t i = 0; i < nrows; i++) {
			const uint8_t *row = w + i * row_bytes;
			__m256 acc = kq_acc_in(y, ldy, i, R, b0);

			for (size_t bw = 0; bw < n; bw++) {
				size_t b = b0 + bw;
				const uint8_t *blk = row + b * FFN_KQ_Q4K_BYTES;
				const int8_t *a = kq_q8_qs(q8, nb, b);
				float d = f16(blk + KQ4_D);
				float dmin = f16(blk + KQ4_DMIN);
				uint8_t sc[8], m[8];
				__m256i s[8];
				__m256 dx = _mm256_load_ps(win.dx[bw]);

				kq_pf_next(&pf, row_bytes, n, FFN_KQ_Q4K_BYTES);
				kq_q4k_scales(blk + KQ4_S, sc, m);
				for (int r = 0; r < 8; r++)
					s[r] = _mm256_setzero_si256();
				/* sub-block j: the low (j even) or high (j
				 * odd) nibbles of qs[32 (j/2) ..], values
				 * 32j.. (vindex.md §2.4) */
				for (int j = 0; j < 8; j++) {
					const uint8_t *qs = blk + KQ4_QS +
							    32 * (j / 2);
					__m256i q = _mm256_loadu_si256(
						(const __m256i *)qs);

					if (j & 1)
						q = _mm256_srli_epi16(q, 4);
					dot32(_mm256_and_si256(q, m4),
					      _mm256_set1_epi16(sc[j]),
					      a + 32 * j, q8_row, R, s);
				}
				acc = _mm256_sub_ps(_mm256_add_ps(acc,
					_mm256_mul_ps(_mm256_mul_ps(dx,
					_mm256_set1_ps(d)), _mm256_cvtepi32_ps(
					hsum8x8(s)))), _mm256_mul_ps(
					_mm256_mul_ps(dx, _mm256_set1_ps(dmin)),
					_mm256_cvtepi32_ps(kq_win_mins(&win, bw,
					_mm_cvtepu8_epi16(_mm_loadl_epi64(
					(const __m128i *)m))))));
			}
			kq_acc_out(acc, y, ldy, i, R);
		}
	}
}

void
ffn_kq_avx2_q6k_q8k_rows(const uint8_t *w, size_t row_bytes, size_t nrows,
			 size_t nb, enum ffn_kq_q6_layout q6,
			 const uint8_t *q8, size_t R, float *y, size_t ldy)
{
	size_t q8_row = nb * FFN_KQ_Q8K_BYTES;
	uint8_t q[256] __attribute__((aligned(32)));
	struct kq_q8_win win __attribute__((aligned(64)));
	struct kq_pf pf;

	for (size_t b0 = 0; b0 < nb; b0 += KQ_WIN) {
		size_t n = nb - b0 < KQ_WIN ? nb - b0 : KQ_WIN;

		kq_win_prep(q8, nb, R, b0, n, 0, &win);
		kq_win_s6(q8, nb, R, b0, n, &win);
		kq_pf_start(&pf, w, row_bytes, b0, n, FFN_KQ_Q6K_BYTES);
		for (size_t i = 0; i < nrows; i++) {
			const uint8_t *row = w + i * row_bytes;
			__m256 acc = kq_acc_in(y, ldy, i, R, b0);

			for (size_t bw = 0; bw < n; bw++) {
				size_t b = b0 + bw;
				const uint8_t *blk = row + b * FFN_KQ_Q6K_BYTES;
				const int8_t *sc = (const int8_t *)(blk +
								    KQ6_SC);
				const int8_t *a = kq_q8_qs(q8, nb, b);
				float d = f16(blk + KQ6_D);
				__m256i sc16 = _mm256_cvtepi8_epi16(
					_mm_loadu_si128((const __m128i *)sc));
				__m256i s[8], corr = _mm256_setzero_si256();
				__m256 dx = _mm256_load_ps(win.dx[bw]);

				kq_pf_next(&pf, row_bytes, n, FFN_KQ_Q6K_BYTES);
				kq_q6_decode_simd(blk, q6, q);
				for (int r = 0; r < 8; r++)
					s[r] = _mm256_setzero_si256();
				/* 32 values: 16 i16 pair sums, 8 for group
				 * 2c, 8 for group 2c + 1 */
				for (int c = 0; c < 8; c++) {
					const __m256i *qc = (const __m256i *)
						(q + 32 * c);

					dot32(_mm256_load_si256(qc),
					      _mm256_setr_m128i(
					      _mm_set1_epi16(sc[2 * c]),
					      _mm_set1_epi16(sc[2 * c + 1])),
					      a + 32 * c, q8_row, R, s);
				}
				/* the -32 of every value, all rows: group
				 * pairs 2j (low half of s6[bw][j]) and 2j+1
				 * (high half) are i32 lanes 2j, 2j+1 of the
				 * scales */
				for (int j = 0; j < 4; j++) {
					const __m256i *p = (const __m256i *)
						win.s6[bw][j];

					corr = _mm256_add_epi32(corr,
						_mm256_add_epi32(
						_mm256_madd_epi16(
						_mm256_load_si256(p),
						_mm256_permutevar8x32_epi32(
						sc16, _mm256_set1_epi32(
						2 * j))), _mm256_madd_epi16(
						_mm256_load_si256(p + 1),
						_mm256_permutevar8x32_epi32(
						sc16, _mm256_set1_epi32(
						2 * j + 1)))));
				}
				acc = _mm256_add_ps(acc, _mm256_mul_ps(
					_mm256_mul_ps(dx, _mm256_set1_ps(d)),
					_mm256_cvtepi32_ps(_mm256_sub_epi32(
					hsum8x8(s), _mm256_slli_epi32(corr,
					5)))));
			}
			kq_acc_out(acc, y, ldy, i, R);
		}
	}
}
