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
#include "kq_rows.h"

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

/*
 * Lane r = sum of the 16 lanes of s[r]. Interleaved adds at full width
 * (each 128-bit lane then holds partial sums of s[0..3] and of s[4..7]),
 * then the 128-bit lanes: 24 instructions, where folding each to 256
 * bits and a tree of vphaddd (3 micro-ops each on AMD) took 37.
 */
static inline __m256i
hsum8x16(const __m512i s[8])
{
	__m512i t[4], u0, u1, v, w;

	for (int k = 0; k < 4; k++)
		t[k] = _mm512_add_epi32(
			_mm512_unpacklo_epi32(s[2 * k], s[2 * k + 1]),
			_mm512_unpackhi_epi32(s[2 * k], s[2 * k + 1]));
	u0 = _mm512_add_epi32(_mm512_unpacklo_epi64(t[0], t[1]),
			      _mm512_unpackhi_epi64(t[0], t[1]));
	u1 = _mm512_add_epi32(_mm512_unpacklo_epi64(t[2], t[3]),
			      _mm512_unpackhi_epi64(t[2], t[3]));
	/* 128-bit lanes [u0 0+1, u0 2+3, u1 0+1, u1 2+3] */
	v = _mm512_add_epi32(_mm512_shuffle_i32x4(u0, u1, 0x88),
			     _mm512_shuffle_i32x4(u0, u1, 0xdd));
	w = _mm512_shuffle_i32x4(v, v, 0xd8);	/* lanes 0, 2, 1, 3 */
	return _mm256_add_epi32(_mm512_castsi512_si256(w),
				_mm512_extracti64x4_epi64(w, 1));
}

/*
 * Several input rows. Per block the weights are decoded once (two 64-byte
 * loads, the nibbles masked) and the scales laid out once; per input row
 * four vpdpbusd (u8 weights x i8 inputs, sums of 4, |.| <= 4 * 15 * 128:
 * exact in i16), two vpackssdw and two VNNI vpdpwssd with the scales: six
 * multiply micro-ops per 256 values where vpmaddubsw and a vpdpwssd per 64
 * took eight. The input rows are permuted once per window into the order
 * of the nibbles (kq_perm_q4k), as the one-row kernel's. The sums of all
 * rows are reduced together and combined in one vector, lane r doing
 * exactly the scalar's acc + (dx*d)*isc - (dx*dmin)*imin (no FMA): equal
 * bit for bit.
 */
static void
q4k_q8k_rows(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	     const uint8_t *q8, size_t R, float *y, size_t ldy)
{
	const __m512i m4 = _mm512_set1_epi8(15), z = _mm512_setzero_si512();
	const __m512i ctl0 = kq_sc_ctl2(0, 1, 2, 3);
	const __m512i ctl1 = kq_sc_ctl2(4, 5, 6, 7);
	size_t q8_row = nb * FFN_KQ_Q8K_BYTES;
	struct kq_q8_win win __attribute__((aligned(64)));
	struct kq_pf pf;

	for (size_t b0 = 0; b0 < nb; b0 += KQ_WIN) {
		size_t n = nb - b0 < KQ_WIN ? nb - b0 : KQ_WIN;

		kq_win_prep(q8, nb, R, b0, n, 1, &win);
		kq_pf_start(&pf, w, row_bytes, b0, n, FFN_KQ_Q4K_BYTES);
		for (size_t r = 0; r < R; r++)
			kq_perm_q4k((const uint8_t *)kq_q8_qs(q8 + r * q8_row,
				    nb, b0), n, win.a[r][0]);
		for (size_t i = 0; i < nrows; i++) {
			const uint8_t *row = w + i * row_bytes;
			__m256 acc = kq_acc_in(y, ldy, i, R, b0);

			for (size_t bw = 0; bw < n; bw++) {
				const uint8_t *blk = row + (b0 + bw) *
						     FFN_KQ_Q4K_BYTES;
				float d = f16(blk + KQ4_D);
				float dmin = f16(blk + KQ4_DMIN);
				__m128i scm = q4k_scales_v(blk);
				__m512i bc = _mm512_broadcast_i32x4(scm);
				__m512i sv0 = _mm512_shuffle_epi8(bc, ctl0);
				__m512i sv1 = _mm512_shuffle_epi8(bc, ctl1);
				__m512i q0 = _mm512_loadu_si512(blk + KQ4_QS);
				__m512i q1 = _mm512_loadu_si512(blk + KQ4_QS +
								64);
				__m512i l0 = _mm512_and_si512(q0, m4);
				__m512i h0 = _mm512_and_si512(
					_mm512_srli_epi16(q0, 4), m4);
				__m512i l1 = _mm512_and_si512(q1, m4);
				__m512i h1 = _mm512_and_si512(
					_mm512_srli_epi16(q1, 4), m4);
				__m128i mv = _mm_cvtepu8_epi16(
					_mm_srli_si128(scm, 8));
				__m512i sr[8];
				__m256i imin;
				__m256 dx = _mm256_load_ps(win.dx[bw]);

				kq_pf_next(&pf, row_bytes, n, FFN_KQ_Q4K_BYTES);
#pragma GCC unroll 8
				for (size_t r = 0; r < 8; r++) {
					const uint8_t *a = win.a[r][bw];
					__m512i p01, p23;

					sr[r] = z;
					if (r >= R)
						continue;
					p01 = _mm512_packs_epi32(
						_mm512_dpbusd_epi32(z, l0,
						_mm512_load_si512(a)),
						_mm512_dpbusd_epi32(z, h0,
						_mm512_load_si512(a + 64)));
					p23 = _mm512_packs_epi32(
						_mm512_dpbusd_epi32(z, l1,
						_mm512_load_si512(a + 128)),
						_mm512_dpbusd_epi32(z, h1,
						_mm512_load_si512(a + 192)));
					sr[r] = _mm512_dpwssd_epi32(
						_mm512_dpwssd_epi32(z, p01,
						sv0), p23, sv1);
				}
				imin = kq_win_mins(&win, bw, mv);
				acc = _mm256_sub_ps(_mm256_add_ps(acc,
					_mm256_mul_ps(_mm256_mul_ps(dx,
					_mm256_set1_ps(d)), _mm256_cvtepi32_ps(
					hsum8x16(sr)))), _mm256_mul_ps(
					_mm256_mul_ps(dx, _mm256_set1_ps(dmin)),
					_mm256_cvtepi32_ps(imin)));
			}
			kq_acc_out(acc, y, ldy, i, R);
		}
	}
}

void
ffn_kq_avx512_q4k_q8k(const uint8_t *w, size_t row_bytes, size_t nrows,
		      size_t nb, const uint8_t *q8, size_t R, float *y,
		      size_t ldy)
{
	if (R == 2 && ffn_kq_avx512_q4k_q8k_2(w, row_bytes, nrows, nb, q8,
					      y, ldy) == 0)
		return;
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

/*
 * i16 lane 8k + j (128-bit lane k) of the scales of half n of a Q6_K block
 * for the packed dot products of q6k_q8k_rows: LARQL-private, groups
 * 8n + 2k + (j / 2) % 2 (the even and odd values of 8 consecutive ones);
 * ggml, groups 8n + k + 4 (j / 4) (values 64 apart).
 */
static inline __m512i
q6_sc_idx(enum ffn_kq_q6_layout q6, int n)
{
	short v[32];

	for (int l = 0; l < 32; l++) {
		int k = l / 8, j = l % 8;

		v[l] = (short)(q6 == FFN_KQ_Q6_PRIVATE ?
			8 * n + 2 * k + (j / 2) % 2 : 8 * n + k + 4 * (j / 4));
	}
	return _mm512_loadu_si512(v);
}

/*
 * Several input rows, Q6_K: per half of 128 values, the low and high
 * nibbles with their 2 high bits (values 0..63) as two vectors, each
 * against its input values with vpdpbusd (sums of 4, |.| <= 4 * 63 * 128:
 * exact in i16), packed and multiplied by the group scales with vpdpwssd,
 * as q4k_q8k_rows. The -32 of every value is sum_g sc_g S_g, S_g the sums
 * of the input's groups of 16, for all rows in four vpmaddwd per block.
 * Lane r does exactly the scalar's acc + (dx*d)*isum: equal bit for bit.
 */
static void
q6k_q8k_rows(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	     enum ffn_kq_q6_layout q6, const uint8_t *q8, size_t R, float *y,
	     size_t ldy)
{
	const __m512i z = _mm512_setzero_si512();
	const __m512i six0 = q6_sc_idx(q6, 0), six1 = q6_sc_idx(q6, 1);
	const int priv = q6 == FFN_KQ_Q6_PRIVATE;
	size_t q8_row = nb * FFN_KQ_Q8K_BYTES;
	struct kq_q8_win win __attribute__((aligned(64)));
	struct kq_pf pf;

	for (size_t b0 = 0; b0 < nb; b0 += KQ_WIN) {
		size_t n = nb - b0 < KQ_WIN ? nb - b0 : KQ_WIN;

		kq_win_prep(q8, nb, R, b0, n, 0, &win);
		kq_pf_start(&pf, w, row_bytes, b0, n, FFN_KQ_Q6K_BYTES);
		kq_win_s6(q8, nb, R, b0, n, &win);
		for (size_t r = 0; priv && r < R; r++)
			kq_perm_q6k_private((const uint8_t *)kq_q8_qs(q8 +
				r * q8_row, nb, b0), n, win.a[r][0]);
		for (size_t i = 0; i < nrows; i++) {
			const uint8_t *row = w + i * row_bytes;
			__m256 acc = kq_acc_in(y, ldy, i, R, b0);

			for (size_t bw = 0; bw < n; bw++) {
				const uint8_t *blk = row + (b0 + bw) *
						     FFN_KQ_Q6K_BYTES;
				float d = f16(blk + KQ6_D);
				__m512i sc = _mm512_castsi256_si512(
					_mm256_cvtepi8_epi16(_mm_loadu_si128(
					(const __m128i *)(blk + KQ6_SC))));
				__m512i sv0 = _mm512_permutexvar_epi16(six0,
								       sc);
				__m512i sv1 = _mm512_permutexvar_epi16(six1,
								       sc);
				__m512i v[4], sr[8], c = z;
				__m256i corr;
				__m256 dx = _mm256_load_ps(win.dx[bw]);

				kq_pf_next(&pf, row_bytes, n, FFN_KQ_Q6K_BYTES);
				for (int h = 0; h < 2; h++)
					kq_q6_half(blk, q6, h, &v[2 * h],
						   &v[2 * h + 1]);
#pragma GCC unroll 8
				for (size_t r = 0; r < 8; r++) {
					const uint8_t *a = priv ?
						win.a[r][bw] :
						(const uint8_t *)kq_q8_qs(q8 +
						r * q8_row, nb, b0 + bw);
					__m512i p0, p1;

					sr[r] = z;
					if (r >= R)
						continue;
					p0 = _mm512_packs_epi32(
						_mm512_dpbusd_epi32(z, v[0],
						_mm512_loadu_si512(a)),
						_mm512_dpbusd_epi32(z, v[1],
						_mm512_loadu_si512(a + 64)));
					p1 = _mm512_packs_epi32(
						_mm512_dpbusd_epi32(z, v[2],
						_mm512_loadu_si512(a + 128)),
						_mm512_dpbusd_epi32(z, v[3],
						_mm512_loadu_si512(a + 192)));
					sr[r] = _mm512_dpwssd_epi32(
						_mm512_dpwssd_epi32(z, p0,
						sv0), p1, sv1);
				}
				/* zmm j: group pairs 2j, 2j+1, i.e. i32
				 * lanes 2j and 2j+1 of the scales */
				for (int j = 0; j < 4; j++)
					c = _mm512_add_epi32(c,
						_mm512_madd_epi16(
						_mm512_load_si512(
						win.s6[bw][j]),
						_mm512_permutexvar_epi32(
						_mm512_inserti64x4(
						_mm512_set1_epi32(2 * j),
						_mm256_set1_epi32(2 * j + 1),
						1), sc)));
				corr = _mm256_slli_epi32(_mm256_add_epi32(
					_mm512_castsi512_si256(c),
					_mm512_extracti64x4_epi64(c, 1)), 5);
				acc = _mm256_add_ps(acc, _mm256_mul_ps(
					_mm256_mul_ps(dx, _mm256_set1_ps(d)),
					_mm256_cvtepi32_ps(_mm256_sub_epi32(
						hsum8x16(sr), corr))));
			}
			kq_acc_out(acc, y, ldy, i, R);
		}
	}
}

void
ffn_kq_avx512_q6k_q8k(const uint8_t *w, size_t row_bytes, size_t nrows,
		      size_t nb, enum ffn_kq_q6_layout q6, const uint8_t *q8,
		      const int16_t *s16, size_t R, float *y, size_t ldy)
{
	if (R == 2 && ffn_kq_avx512_q6k_q8k_2(w, row_bytes, nrows, nb, q6,
					      q8, s16, y, ldy) == 0)
		return;
	if (R > 1) {
		q6k_q8k_rows(w, row_bytes, nrows, nb, q6, q8, R, y, ldy);
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
