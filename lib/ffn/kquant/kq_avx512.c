/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * AVX-512 (F/BW/VL/VNNI/VBMI) K-quant kernels. Built with -mavx512f
 * -mavx512bw -mavx512vl -mavx512vnni -mavx512vbmi -mfma -mf16c
 * -ffp-contract=off; chosen at run
 * time (kq.c). Each weight block is decoded once for all input rows.
 * f32 path (here): within the bound of ffn_kq.h of the scalar reference.
 * Q8_K path (kq_avx512_int.c for several input rows, kq_avx512_q8k.c for
 * one): integer sums, equal to the scalar reference bit for bit.
 */
#include <immintrin.h>

#include "kq_avx512.h"
#include "kq_internal.h"

/*
 * Dot the dequantised block wb[256] with R input blocks: each weight
 * vector is loaded once for all rows, the R accumulators stay in
 * registers (R is a constant in each instance), two per row when few rows
 * would leave the FMA chains latency-bound.
 */
static inline __attribute__((always_inline)) void
dot_rows_n(const float *wb, const float *x, size_t ldx, size_t b,
	   __m512 *acc, const size_t R)
{
	__m512 a0[FFN_KQ_RMAX], a1[FFN_KQ_RMAX];
	const float *xb = x + 256 * b;

	for (size_t r = 0; r < R; r++) {
		a0[r] = acc[r];
		a1[r] = _mm512_setzero_ps();
	}
	for (int k = 0; k < 256; k += 32) {
		__m512 w0 = _mm512_load_ps(wb + k);
		__m512 w1 = _mm512_load_ps(wb + k + 16);

		for (size_t r = 0; r < R; r++) {
			a0[r] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(
				xb + r * ldx + k), a0[r]);
			if (R <= 4)
				a1[r] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(
					xb + r * ldx + k + 16), a1[r]);
			else
				a0[r] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(
					xb + r * ldx + k + 16), a0[r]);
		}
	}
	for (size_t r = 0; r < R; r++)
		acc[r] = R <= 4 ? _mm512_add_ps(a0[r], a1[r]) : a0[r];
}

static void
dot_rows(const float *wb, const float *x, size_t ldx, size_t R, size_t b,
	 __m512 *acc)
{
	switch (R) {
	case 1: dot_rows_n(wb, x, ldx, b, acc, 1); break;
	case 2: dot_rows_n(wb, x, ldx, b, acc, 2); break;
	case 3: dot_rows_n(wb, x, ldx, b, acc, 3); break;
	case 4: dot_rows_n(wb, x, ldx, b, acc, 4); break;
	case 5: dot_rows_n(wb, x, ldx, b, acc, 5); break;
	case 6: dot_rows_n(wb, x, ldx, b, acc, 6); break;
	case 7: dot_rows_n(wb, x, ldx, b, acc, 7); break;
	default: dot_rows_n(wb, x, ldx, b, acc, 8); break;
	}
}

static inline void
store_rows(__m512 *acc, size_t R, float *y, size_t ldy, size_t i)
{
	for (size_t r = 0; r < R; r++)
		y[r * ldy + i] = _mm512_reduce_add_ps(acc[r]);
}

/* Dequantise one Q4_K block into wb[256] (FMA: q * d*sc - dmin*m). */
static inline __attribute__((always_inline)) void
q4k_block_f32(const uint8_t *blk, enum ffn_kq_q6_layout q6, float *wb)
{
	const __m256i m4 = _mm256_set1_epi8(15);
	float d = f16(blk + KQ4_D), dmin = f16(blk + KQ4_DMIN);
	uint8_t sc[8], m[8];

	(void)q6;
	kq_q4k_scales(blk + KQ4_S, sc, m);
	for (int g = 0; g < 4; g++) {
		__m256i q = _mm256_loadu_si256(
			(const __m256i *)(blk + KQ4_QS + 32 * g));
		__m256i lo = _mm256_and_si256(q, m4);
		__m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
		__m512 d1 = _mm512_set1_ps(d * sc[2 * g]);
		__m512 m1 = _mm512_set1_ps(dmin * m[2 * g]);
		__m512 d2 = _mm512_set1_ps(d * sc[2 * g + 1]);
		__m512 m2 = _mm512_set1_ps(dmin * m[2 * g + 1]);
		float *o = wb + 64 * g;

#define CVT(v, half) _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32( \
		_mm256_extracti128_si256((v), (half))))
		_mm512_store_ps(o, _mm512_fmsub_ps(CVT(lo, 0), d1, m1));
		_mm512_store_ps(o + 16, _mm512_fmsub_ps(CVT(lo, 1), d1, m1));
		_mm512_store_ps(o + 32, _mm512_fmsub_ps(CVT(hi, 0), d2, m2));
		_mm512_store_ps(o + 48, _mm512_fmsub_ps(CVT(hi, 1), d2, m2));
#undef CVT
	}
}

/* Dequantise one Q6_K block into wb[256]: (d*sc) * (q - 32). */
static inline __attribute__((always_inline)) void
q6k_block_f32(const uint8_t *blk, enum ffn_kq_q6_layout q6, float *wb)
{
	const int8_t *sc = (const int8_t *)(blk + KQ6_SC);
	__m512 dsc = _mm512_mul_ps(_mm512_set1_ps(f16(blk + KQ6_D)),
		_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
		_mm_loadu_si128((const __m128i *)sc))));
	const __m512i k32b = _mm512_set1_epi8(32);
	__m512i qv[4];

	q6_decode_z(blk, q6, qv);
	for (int c = 0; c < 4; c++) {
		__m512i v = _mm512_sub_epi8(qv[c], k32b);

#define GROUP(k) _mm512_store_ps(wb + 64 * c + 16 * (k), _mm512_mul_ps( \
		_mm512_permutexvar_ps(_mm512_set1_epi32(4 * c + (k)), dsc), \
		_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32( \
			_mm512_extracti32x4_epi32(v, (k))))))
		GROUP(0);
		GROUP(1);
		GROUP(2);
		GROUP(3);
#undef GROUP
	}
}

/* Two weight rows against R input rows: each x vector loaded once. */
static inline __attribute__((always_inline)) void
dot_rows2_n(const float *wb0, const float *wb1, const float *x, size_t ldx,
	    size_t b, __m512 *acc0, __m512 *acc1, const size_t R)
{
	__m512 a0[FFN_KQ_RMAX], a1[FFN_KQ_RMAX];
	const float *xb = x + 256 * b;

	for (size_t r = 0; r < R; r++) {
		a0[r] = acc0[r];
		a1[r] = acc1[r];
	}
	for (int k = 0; k < 256; k += 16) {
		__m512 w0 = _mm512_load_ps(wb0 + k);
		__m512 w1 = _mm512_load_ps(wb1 + k);

		for (size_t r = 0; r < R; r++) {
			__m512 xv = _mm512_loadu_ps(xb + r * ldx + k);

			a0[r] = _mm512_fmadd_ps(w0, xv, a0[r]);
			a1[r] = _mm512_fmadd_ps(w1, xv, a1[r]);
		}
	}
	for (size_t r = 0; r < R; r++) {
		acc0[r] = a0[r];
		acc1[r] = a1[r];
	}
}

static void
dot_rows2(const float *wb0, const float *wb1, const float *x, size_t ldx,
	  size_t R, size_t b, __m512 *acc0, __m512 *acc1)
{
	switch (R) {
	case 1: dot_rows2_n(wb0, wb1, x, ldx, b, acc0, acc1, 1); break;
	case 2: dot_rows2_n(wb0, wb1, x, ldx, b, acc0, acc1, 2); break;
	case 3: dot_rows2_n(wb0, wb1, x, ldx, b, acc0, acc1, 3); break;
	case 4: dot_rows2_n(wb0, wb1, x, ldx, b, acc0, acc1, 4); break;
	case 5: dot_rows2_n(wb0, wb1, x, ldx, b, acc0, acc1, 5); break;
	case 6: dot_rows2_n(wb0, wb1, x, ldx, b, acc0, acc1, 6); break;
	case 7: dot_rows2_n(wb0, wb1, x, ldx, b, acc0, acc1, 7); break;
	default: dot_rows2_n(wb0, wb1, x, ldx, b, acc0, acc1, 8); break;
	}
}

/*
 * Several input rows: weight rows in pairs, each block dequantised once
 * into an L1 buffer and dotted with all input rows.
 */
static inline __attribute__((always_inline)) void
rows_f32(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	 size_t bb, enum ffn_kq_q6_layout q6,
	 void (*decode)(const uint8_t *, enum ffn_kq_q6_layout, float *),
	 const float *x, size_t ldx, size_t R, float *y, size_t ldy)
{
	float wb0[256] __attribute__((aligned(64)));
	float wb1[256] __attribute__((aligned(64)));
	__m512 acc0[FFN_KQ_RMAX], acc1[FFN_KQ_RMAX];
	size_t i = 0;

	for (; i + 1 < nrows; i += 2) {
		const uint8_t *r0 = w + i * row_bytes, *r1 = r0 + row_bytes;

		for (size_t r = 0; r < R; r++)
			acc0[r] = acc1[r] = _mm512_setzero_ps();
		for (size_t b = 0; b < nb; b++) {
			decode(r0 + b * bb, q6, wb0);
			decode(r1 + b * bb, q6, wb1);
			dot_rows2(wb0, wb1, x, ldx, R, b, acc0, acc1);
		}
		store_rows(acc0, R, y, ldy, i);
		store_rows(acc1, R, y, ldy, i + 1);
	}
	if (i < nrows) {
		const uint8_t *r0 = w + i * row_bytes;

		for (size_t r = 0; r < R; r++)
			acc0[r] = _mm512_setzero_ps();
		for (size_t b = 0; b < nb; b++) {
			decode(r0 + b * bb, q6, wb0);
			dot_rows(wb0, x, ldx, R, b, acc0);
		}
		store_rows(acc0, R, y, ldy, i);
	}
}

/*
 * One input row: sum_j (d sc_j) sum_l q x - (dmin m_j) xs_j, so each value
 * costs a conversion and an FMA; the mins meet the x sums once per block.
 */
static void
q4k_f32_1(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	  const float *x, const float *xs, float *y)
{
	const __m512i m4 = _mm512_set1_epi32(15);

	for (size_t i = 0; i < nrows; i++) {
		const uint8_t *row = w + i * row_bytes;
		/* one chain per group of 64: 2 FMAs per chain per block
		 * (one chain of 8 made the FMA latency the bound) */
		__m512 acc[4] = { _mm512_setzero_ps(), _mm512_setzero_ps(),
				  _mm512_setzero_ps(), _mm512_setzero_ps() };
		__m256 accm = _mm256_setzero_ps();

		for (size_t b = 0; b < nb; b++) {
			const uint8_t *blk = row + b * FFN_KQ_Q4K_BYTES;
			const float *xb = x + 256 * b;
			float d = f16(blk + KQ4_D), dmin = f16(blk + KQ4_DMIN);
			__m128i scm = q4k_scales_v(blk);
			__m256 scf, mf;
			float sb[8] __attribute__((aligned(32)));

			scf = _mm256_mul_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(
				_mm256_cvtepu8_epi32(scm)));
			mf = _mm256_mul_ps(_mm256_set1_ps(dmin),
				_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
				_mm_srli_si128(scm, 8))));
			accm = _mm256_fmadd_ps(mf, _mm256_loadu_ps(xs + 8 * b),
					       accm);
			/* scales via L1: broadcast loads, not lane extracts */
			_mm256_store_ps(sb, scf);
			for (int g = 0; g < 4; g++) {
				const uint8_t *qs = blk + KQ4_QS + 32 * g;
				const float *xg = xb + 64 * g;
				/* 16 bytes -> 16 lanes: low nibbles are values
				 * 64g + l, high nibbles 64g + 32 + l */
				__m512i z0 = _mm512_cvtepu8_epi32(
					_mm_loadu_si128((const __m128i *)qs));
				__m512i z1 = _mm512_cvtepu8_epi32(
					_mm_loadu_si128((const __m128i *)
							(qs + 16)));
				__m512 s1, s2;

				s1 = _mm512_mul_ps(_mm512_cvtepi32_ps(
					_mm512_and_si512(z0, m4)),
					_mm512_loadu_ps(xg));
				s1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(
					_mm512_and_si512(z1, m4)),
					_mm512_loadu_ps(xg + 16), s1);
				s2 = _mm512_mul_ps(_mm512_cvtepi32_ps(
					_mm512_srli_epi32(z0, 4)),
					_mm512_loadu_ps(xg + 32));
				s2 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(
					_mm512_srli_epi32(z1, 4)),
					_mm512_loadu_ps(xg + 48), s2);
				acc[g] = _mm512_fmadd_ps(s1, _mm512_set1_ps(
					sb[2 * g]), acc[g]);
				acc[g] = _mm512_fmadd_ps(s2, _mm512_set1_ps(
					sb[2 * g + 1]), acc[g]);
			}
		}
		{
			__m128 t = _mm_add_ps(_mm256_castps256_ps128(accm),
					      _mm256_extractf128_ps(accm, 1));

			t = _mm_hadd_ps(t, t);
			t = _mm_hadd_ps(t, t);
			y[i] = _mm512_reduce_add_ps(_mm512_add_ps(
				_mm512_add_ps(acc[0], acc[1]),
				_mm512_add_ps(acc[2], acc[3]))) -
			       _mm_cvtss_f32(t);
		}
	}
}

static void
q4k_f32(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	const float *x, const float *xs, size_t ldx, size_t R, float *y,
	size_t ldy)
{
	if (xs != NULL) {
		q4k_f32_1(w, row_bytes, nrows, nb, x, xs, y);
		return;
	}
	rows_f32(w, row_bytes, nrows, nb, FFN_KQ_Q4K_BYTES, FFN_KQ_Q6_PRIVATE,
		 q4k_block_f32, x, ldx, R, y, ldy);
}

static void
q6k_f32(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	enum ffn_kq_q6_layout q6, const float *x, size_t ldx, size_t R,
	float *y, size_t ldy)
{
	const __m512i k32b = _mm512_set1_epi8(32);

	if (R > 1) {
		rows_f32(w, row_bytes, nrows, nb, FFN_KQ_Q6K_BYTES, q6,
			 q6k_block_f32, x, ldx, R, y, ldy);
		return;
	}

	/* one row: q - 32 and d*sc go through a small L1 buffer, so each
	 * group of 16 values is a widening load, a conversion, a multiply by
	 * x and an FMA with a broadcast load of its scale (no extracts or
	 * permutes per group) */
	for (size_t i = 0; i < nrows; i++) {
		const uint8_t *row = w + i * row_bytes;
		/* 4 chains: 4 FMAs per chain per block, not latency-bound */
		__m512 acc[4] = { _mm512_setzero_ps(), _mm512_setzero_ps(),
				  _mm512_setzero_ps(), _mm512_setzero_ps() };

		for (size_t b = 0; b < nb; b++) {
			const uint8_t *blk = row + b * FFN_KQ_Q6K_BYTES;
			const float *xb = x + 256 * b;
			int8_t qb[256] __attribute__((aligned(64)));
			float dsc[16] __attribute__((aligned(64)));
			__m512i qv[4];

			q6_decode_z(blk, q6, qv);
			for (int c = 0; c < 4; c++)
				_mm512_store_si512(qb + 64 * c,
					_mm512_sub_epi8(qv[c], k32b));
			_mm512_store_ps(dsc, _mm512_mul_ps(_mm512_set1_ps(
				f16(blk + KQ6_D)), _mm512_cvtepi32_ps(
				_mm512_cvtepi8_epi32(_mm_loadu_si128(
				(const __m128i *)(blk + KQ6_SC))))));
			for (int g = 0; g < 16; g++)
				acc[g & 3] = _mm512_fmadd_ps(_mm512_mul_ps(
					_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
					_mm_load_si128((const __m128i *)
						(qb + 16 * g)))),
					_mm512_loadu_ps(xb + 16 * g)),
					_mm512_set1_ps(dsc[g]), acc[g & 3]);
		}
		y[i] = _mm512_reduce_add_ps(_mm512_add_ps(
			_mm512_add_ps(acc[0], acc[1]),
			_mm512_add_ps(acc[2], acc[3])));
	}
}

const struct ffn_kq_kernels ffn_kq_kernels_avx512 = {
	.isa = FFN_KQ_ISA_AVX512,
	.name = "avx512",
	.q4k_f32 = q4k_f32,
	.q6k_f32 = q6k_f32,
	.q4k_q8k = ffn_kq_avx512_q4k_q8k,
	.q6k_q8k = ffn_kq_avx512_q6k_q8k,
};
