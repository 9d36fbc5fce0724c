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

static inline void
store_rows(const __m512 *acc, size_t R, float *y, size_t ldy, size_t i)
{
	for (size_t r = 0; r < R; r++)
		y[r * ldy + i] = _mm512_reduce_add_ps(acc[r]);
}

/*
 * Several input rows, f32 path: two weight rows at a time, each block
 * decoded in registers 16 values at a time and each vector used for the
 * R <= 8 input rows (2R accumulators). Decoding into an L1 buffer and
 * loading it back cost a store and a load per vector, and the decode took
 * 37% of the time (Zen 5, 10240 x 2560 Q4_K, 8 rows): in registers, 8
 * rows ran 1.5x, 2 and 4 rows 1.7x faster, Q6_K 1.1-1.25x, with the same
 * weights and the same FMA order as that buffer (outputs equal bit for
 * bit but for an odd last row, which now takes the pair's order).
 *
 * The empty asm keeps each input vector in a register: GCC otherwise
 * folds the load into both FMAs that use it, and the loads, not the FMAs,
 * become the bound (10% at 8 rows).
 */
#define KQ_PAIR_ROWS(W0, W1)						\
	for (size_t r = 0; r < R; r++) {				\
		__m512 xv = _mm512_loadu_ps(xb + r * ldx + k);		\
									\
		__asm__("" : "+v"(xv));					\
		a0[r] = _mm512_fmadd_ps((W0), xv, a0[r]);		\
		a1[r] = _mm512_fmadd_ps((W1), xv, a1[r]);		\
	}

/* d*sc and dmin*m of the 8 sub-blocks of a Q4_K block. */
static inline __attribute__((always_inline)) void
q4k_dm(const uint8_t *blk, float *dsc, float *dmm)
{
	__m128i scm = q4k_scales_v(blk);

	_mm256_store_ps(dsc, _mm256_mul_ps(_mm256_set1_ps(f16(blk + KQ4_D)),
		_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(scm))));
	_mm256_store_ps(dmm, _mm256_mul_ps(_mm256_set1_ps(
		f16(blk + KQ4_DMIN)), _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
		_mm_srli_si128(scm, 8)))));
}

/*
 * Block b of Q4_K rows B0, B1: a sub-block's 16 possible values
 * q * (d sc) - dmin m (one fmsub each) form one vector, and vpermps looks
 * each nibble up in it. vpermps reads the low 4 bits of an index, so the
 * low nibbles need no mask.
 */
static inline __attribute__((always_inline)) void
q4k_pair_n(const uint8_t *B0, const uint8_t *B1, enum ffn_kq_q6_layout q6,
	   const float *x, size_t ldx, size_t b, __m512 *acc0, __m512 *acc1,
	   const size_t R)
{
	const __m512 iota = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
					   11, 12, 13, 14, 15);
	float s0[8] __attribute__((aligned(32)));
	float m0[8] __attribute__((aligned(32)));
	float s1[8] __attribute__((aligned(32)));
	float m1[8] __attribute__((aligned(32)));
	__m512 a0[FFN_KQ_RMAX], a1[FFN_KQ_RMAX];
	const float *xb = x + 256 * b;

	(void)q6;
	q4k_dm(B0, s0, m0);
	q4k_dm(B1, s1, m1);
	for (size_t r = 0; r < R; r++) {
		a0[r] = acc0[r];
		a1[r] = acc1[r];
	}
	/* sub-block j: values 32j..32j+31, the low (j even) or high (j
	 * odd) nibbles of qs[32 (j/2) ..] (vindex.md §2.4) */
	for (int j = 0; j < 8; j++) {
		__m512 t0 = _mm512_fmsub_ps(iota, _mm512_set1_ps(s0[j]),
					    _mm512_set1_ps(m0[j]));
		__m512 t1 = _mm512_fmsub_ps(iota, _mm512_set1_ps(s1[j]),
					    _mm512_set1_ps(m1[j]));
		const uint8_t *q0 = B0 + KQ4_QS + 32 * (j / 2);
		const uint8_t *q1 = B1 + KQ4_QS + 32 * (j / 2);

		for (int h = 0; h < 2; h++) {
			__m512i i0 = _mm512_cvtepu8_epi32(_mm_loadu_si128(
				(const __m128i *)(q0 + 16 * h)));
			__m512i i1 = _mm512_cvtepu8_epi32(_mm_loadu_si128(
				(const __m128i *)(q1 + 16 * h)));
			int k = 32 * j + 16 * h;

			if (j & 1) {
				i0 = _mm512_srli_epi32(i0, 4);
				i1 = _mm512_srli_epi32(i1, 4);
			}
			KQ_PAIR_ROWS(_mm512_permutexvar_ps(i0, t0),
				     _mm512_permutexvar_ps(i1, t1))
		}
	}
	for (size_t r = 0; r < R; r++) {
		acc0[r] = a0[r];
		acc1[r] = a1[r];
	}
}

/* (d sc) of the 16 groups of a Q6_K block. */
static inline __attribute__((always_inline)) void
q6k_dsc(const uint8_t *blk, float *dsc)
{
	_mm512_store_ps(dsc, _mm512_mul_ps(_mm512_set1_ps(f16(blk + KQ6_D)),
		_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(
		(const __m128i *)(blk + KQ6_SC))))));
}

/* Block b of Q6_K rows B0, B1: (d sc_g) * (q - 32) per group of 16, the
 * product the L1 buffer held. */
static inline __attribute__((always_inline)) void
q6k_pair_n(const uint8_t *B0, const uint8_t *B1, enum ffn_kq_q6_layout q6,
	   const float *x, size_t ldx, size_t b, __m512 *acc0, __m512 *acc1,
	   const size_t R)
{
	const __m512i k32b = _mm512_set1_epi8(32);
	float d0[16] __attribute__((aligned(64)));
	float d1[16] __attribute__((aligned(64)));
	__m512i v0[4], v1[4];
	__m512 a0[FFN_KQ_RMAX], a1[FFN_KQ_RMAX];
	const float *xb = x + 256 * b;

	q6k_dsc(B0, d0);
	q6k_dsc(B1, d1);
	q6_decode_z(B0, q6, v0);
	q6_decode_z(B1, q6, v1);
	for (size_t r = 0; r < R; r++) {
		a0[r] = acc0[r];
		a1[r] = acc1[r];
	}
	/* group G of 16 values in 64-value chunk c (vextracti32x4 wants a
	 * literal lane: clang rejects even an unrolled loop's counter) */
#define Q6_GROUP(G) do {						\
		int k = 64 * c + 16 * (G);				\
									\
		KQ_PAIR_ROWS(_mm512_mul_ps(_mm512_set1_ps(d0[4 * c + (G)]), \
			_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(	\
			_mm512_extracti32x4_epi32(u0, (G))))),		\
			_mm512_mul_ps(_mm512_set1_ps(d1[4 * c + (G)]),	\
			_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(	\
			_mm512_extracti32x4_epi32(u1, (G))))))		\
	} while (0)
#pragma GCC unroll 4
	for (int c = 0; c < 4; c++) {
		__m512i u0 = _mm512_sub_epi8(v0[c], k32b);
		__m512i u1 = _mm512_sub_epi8(v1[c], k32b);

		Q6_GROUP(0);
		Q6_GROUP(1);
		Q6_GROUP(2);
		Q6_GROUP(3);
	}
#undef Q6_GROUP
	for (size_t r = 0; r < R; r++) {
		acc0[r] = a0[r];
		acc1[r] = a1[r];
	}
}
#undef KQ_PAIR_ROWS

/* One instance per R, so the accumulators stay in registers. */
#define KQ_PAIR_BY_R(NAME, N_FN)					\
static void								\
NAME(const uint8_t *B0, const uint8_t *B1, enum ffn_kq_q6_layout q6,	\
     const float *x, size_t ldx, size_t R, size_t b, __m512 *acc0,	\
     __m512 *acc1)							\
{									\
	switch (R) {							\
	case 1: N_FN(B0, B1, q6, x, ldx, b, acc0, acc1, 1); break;	\
	case 2: N_FN(B0, B1, q6, x, ldx, b, acc0, acc1, 2); break;	\
	case 3: N_FN(B0, B1, q6, x, ldx, b, acc0, acc1, 3); break;	\
	case 4: N_FN(B0, B1, q6, x, ldx, b, acc0, acc1, 4); break;	\
	case 5: N_FN(B0, B1, q6, x, ldx, b, acc0, acc1, 5); break;	\
	case 6: N_FN(B0, B1, q6, x, ldx, b, acc0, acc1, 6); break;	\
	case 7: N_FN(B0, B1, q6, x, ldx, b, acc0, acc1, 7); break;	\
	default: N_FN(B0, B1, q6, x, ldx, b, acc0, acc1, 8); break;	\
	}								\
}
KQ_PAIR_BY_R(q4k_pair, q4k_pair_n)
KQ_PAIR_BY_R(q6k_pair, q6k_pair_n)
#undef KQ_PAIR_BY_R

/*
 * Several input rows: weight rows in pairs through pair(); an odd last
 * row goes through it paired with itself (one row of thousands).
 */
static inline __attribute__((always_inline)) void
rows_f32(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	 size_t bb, enum ffn_kq_q6_layout q6,
	 void (*pair)(const uint8_t *, const uint8_t *, enum ffn_kq_q6_layout,
		      const float *, size_t, size_t, size_t, __m512 *,
		      __m512 *),
	 const float *x, size_t ldx, size_t R, float *y, size_t ldy)
{
	__m512 acc0[FFN_KQ_RMAX], acc1[FFN_KQ_RMAX];

	for (size_t i = 0; i < nrows; i += 2) {
		const uint8_t *r0 = w + i * row_bytes;
		const uint8_t *r1 = i + 1 < nrows ? r0 + row_bytes : r0;

		for (size_t r = 0; r < R; r++)
			acc0[r] = acc1[r] = _mm512_setzero_ps();
		for (size_t b = 0; b < nb; b++)
			pair(r0 + b * bb, r1 + b * bb, q6, x, ldx, R, b, acc0,
			     acc1);
		store_rows(acc0, R, y, ldy, i);
		if (i + 1 < nrows)
			store_rows(acc1, R, y, ldy, i + 1);
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
		 q4k_pair, x, ldx, R, y, ldy);
}

static void
q6k_f32(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	enum ffn_kq_q6_layout q6, const float *x, size_t ldx, size_t R,
	float *y, size_t ldy)
{
	const __m512i k32b = _mm512_set1_epi8(32);

	if (R > 1) {
		rows_f32(w, row_bytes, nrows, nb, FFN_KQ_Q6K_BYTES, q6,
			 q6k_pair, x, ldx, R, y, ldy);
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
