/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * AVX-512 VNNI Q8_K kernels for one or two input rows (the
 * /v1/walk-ffn-q8k and kq_q8k serving path, spec/wire.md §2): four weight
 * rows from far-apart chunks of the matrix at a time (FFN_KQ_STREAMS,
 * kq_internal.h), one block of each in turn, the four rows in the lanes
 * of one vector. Two input rows share each decoded block.
 *
 * Why they are shaped so: one row streams the weights once, so the kernel
 * must spend fewer cycles per block than memory needs to deliver it
 * (144 B Q4_K, 210 B Q6_K). The input row is permuted once per call into
 * the order in which the weight nibbles come out of a 64-byte load, so the
 * weights need one AND (and a shift) per 64 values and no shuffles. With
 * the four rows in the lanes, the per-block horizontal sums, the scales,
 * the f16 d/dmin and the float combination of four rows take one vector
 * op each, and the input block is loaded once for the four (weights in
 * L2, Zen 5: Q4_K 2304-byte rows 31 -> 41 GB/s, Q6_K 10-KiB rows 38 -> 54
 * GB/s against four blocks of one row per step).
 *
 * Integer sums are exact and each block's float combination is the one of
 * kq_internal.h, applied in block order per row (lane): the results equal
 * the scalar reference bit for bit (ffn_kq.h).
 */
#include <immintrin.h>

#include "kq_avx512.h"
#include "kq_internal.h"

/* Blocks of an input row the stack permutation holds (64 KiB): rows up
 * to 65536 values (FFN widths such as Gemma 2/3 27B's 36864 included). */
#define KQ512_PERM_BLOCKS 256

/* The kernels take four rows at a time, one per far-apart stream. */
_Static_assert(FFN_KQ_STREAMS == 4, "kq_avx512_q8k.c reads 4 streams");

/*
 * The scales and mins of four Q4_K blocks (kq_q4k_scales, vindex.md §2.4)
 * in one vector: 128-bit lane k holds sc[0..7] then m[0..7] of block k.
 */
static inline __m512i
q4k_scales4(const uint8_t *b0, const uint8_t *b1, const uint8_t *b2,
	    const uint8_t *b3)
{
	__m512i v = _mm512_castsi128_si512(_mm_loadu_si128(
		(const __m128i *)(b0 + KQ4_S)));
	__m512i p, q, lo, hi;

	v = _mm512_inserti32x4(v, _mm_loadu_si128(
		(const __m128i *)(b1 + KQ4_S)), 1);
	v = _mm512_inserti32x4(v, _mm_loadu_si128(
		(const __m128i *)(b2 + KQ4_S)), 2);
	v = _mm512_inserti32x4(v, _mm_loadu_si128(
		(const __m128i *)(b3 + KQ4_S)), 3);
	/* per lane, words [u0, u2 >> 0, u1, u2 >> 4] and [u0, u0, u1, u1] */
	p = _mm512_srlv_epi32(_mm512_shuffle_epi32(v, 0x98),
			      _mm512_set4_epi32(4, 0, 0, 0));
	q = _mm512_shuffle_epi32(v, 0x50);
	lo = _mm512_and_si512(p, _mm512_set4_epi32(0x0f0f0f0f, 0x3f3f3f3f,
						   0x0f0f0f0f, 0x3f3f3f3f));
	hi = _mm512_and_si512(_mm512_slli_epi32(_mm512_srli_epi32(q, 6), 4),
			      _mm512_set4_epi32(0x30303030, 0, 0x30303030, 0));
	return _mm512_or_si512(lo, hi);
}

/* Lane k = sum of the 16 lanes of s[k], k = 0..3: the four vectors are
 * interleaved and added at full width first (each 128-bit lane then holds
 * partial sums of s[0..3]), then the four 128-bit lanes are added. */
static inline __m128i
hsum4x16(const __m512i s[4])
{
	__m512i t01 = _mm512_add_epi32(_mm512_unpacklo_epi32(s[0], s[1]),
				       _mm512_unpackhi_epi32(s[0], s[1]));
	__m512i t23 = _mm512_add_epi32(_mm512_unpacklo_epi32(s[2], s[3]),
				       _mm512_unpackhi_epi32(s[2], s[3]));
	__m512i u = _mm512_add_epi32(_mm512_unpacklo_epi64(t01, t23),
				     _mm512_unpackhi_epi64(t01, t23));
	__m256i h = _mm256_add_epi32(_mm512_castsi512_si256(u),
				     _mm512_extracti64x4_epi64(u, 1));

	return _mm_add_epi32(_mm256_castsi256_si128(h),
			     _mm256_extracti128_si256(h, 1));
}

/* Lane k = sum of the 4 lanes of 128-bit lane k of v. */
static inline __m128i
hsum4x4(__m512i v)
{
	v = _mm512_add_epi32(v, _mm512_shuffle_epi32(v, 0x4e));
	v = _mm512_add_epi32(v, _mm512_shuffle_epi32(v, 0xb1));
	return _mm512_castsi512_si128(_mm512_permutexvar_epi32(
		_mm512_setr_epi32(0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12,
				  0, 4, 8, 12), v));
}

/* f16 pair at p (d, dmin) of four blocks -> [d0..d3], [dmin0..dmin3]. */
static inline void
dd4(const uint8_t *b0, const uint8_t *b1, const uint8_t *b2,
    const uint8_t *b3, int off, __m128 *d, __m128 *dm)
{
	int32_t w0, w1, w2, w3;
	__m256 f;

	memcpy(&w0, b0 + off, 4);
	memcpy(&w1, b1 + off, 4);
	memcpy(&w2, b2 + off, 4);
	memcpy(&w3, b3 + off, 4);
	f = _mm256_permutevar8x32_ps(_mm256_cvtph_ps(_mm_setr_epi32(w0, w1,
		w2, w3)), _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
	*d = _mm256_castps256_ps128(f);
	*dm = _mm256_extractf128_ps(f, 1);
}

/*
 * Block b of four Q4_K rows W[0..3] against NI (1 or 2, a constant of
 * the caller) permuted inputs ap[i], added to acc[i] (lane r: row r) as
 * kq_q4k_q8k_combine does; the block is decoded once for both. Lanes are
 * rows, so the scales, the horizontal sums and the float combination of
 * the four rows are done in one vector each, and an input is loaded once
 * for the four. Each row's own load instructions (the r loop is unrolled) keep a
 * constant stride the prefetchers follow: rolled, one load jumping between
 * the four streams ran Q4_K rows 3x slower from DRAM (same speed in L2).
 * Four adjacent rows in the lanes instead of far-apart ones: 1.6-1.8x
 * slower from DRAM (medians, Zen 5 VM: 4096 x 14336 Q4_K 3.8 vs 2.1 ms,
 * 4096 x 14336 Q6_K 5.5 vs 3.5 ms).
 */
static inline __attribute__((always_inline)) void
q4k_blk4(const uint8_t *const W[4], size_t b, const int NI,
	 const uint8_t *const ap[2], const float *const dx[2],
	 const uint8_t *const bsums[2], const __m512i ctl[4], __m512i ctlm,
	 __m128 acc[2])
{
	const __m512i m4 = _mm512_set1_epi8(15);
	const uint8_t *B[4];
	__m512i av[2][4], scm, s[2][4];
	__m128 d, dm;

	for (int i = 0; i < NI; i++)
		for (int k = 0; k < 4; k++)
			av[i][k] = _mm512_loadu_si512(ap[i] + 256 * b + 64 * k);
#pragma GCC unroll 4
	for (int r = 0; r < 4; r++)
		B[r] = W[r] + b * FFN_KQ_Q4K_BYTES;
	scm = q4k_scales4(B[0], B[1], B[2], B[3]);
#pragma GCC unroll 4
	for (int r = 0; r < 4; r++) {
		const uint8_t *qs = B[r] + KQ4_QS;
		__m512i bc = _mm512_shuffle_i32x4(scm, scm, 0x55 * r);
		__m512i q0 = _mm512_loadu_si512(qs);
		__m512i q1 = _mm512_loadu_si512(qs + 64);
		__m512i l0 = _mm512_and_si512(q0, m4);
		__m512i h0 = _mm512_and_si512(_mm512_srli_epi16(q0, 4), m4);
		__m512i l1 = _mm512_and_si512(q1, m4);
		__m512i h1 = _mm512_and_si512(_mm512_srli_epi16(q1, 4), m4);
		__m512i sv0 = _mm512_shuffle_epi8(bc, ctl[0]);
		__m512i sv1 = _mm512_shuffle_epi8(bc, ctl[1]);
		const __m512i z0 = _mm512_setzero_si512();

		/* sums of 4 products, |.| <= 4 * 15 * 128: exact in i16, so
		 * two vectors pack into one before the scales multiply */
		for (int i = 0; i < NI; i++) {
			__m512i p01 = _mm512_packs_epi32(
				_mm512_dpbusd_epi32(z0, l0, av[i][0]),
				_mm512_dpbusd_epi32(z0, h0, av[i][1]));
			__m512i p23 = _mm512_packs_epi32(
				_mm512_dpbusd_epi32(z0, l1, av[i][2]),
				_mm512_dpbusd_epi32(z0, h1, av[i][3]));

			s[i][r] = _mm512_dpwssd_epi32(_mm512_dpwssd_epi32(z0,
				p01, sv0), p23, sv1);
		}
	}
	dd4(B[0], B[1], B[2], B[3], KQ4_D, &d, &dm);
	for (int i = 0; i < NI; i++) {
		__m128 dxv = _mm_set1_ps(dx[i][b]);
		__m128i isc = hsum4x16(s[i]);
		/* mins: m_j (bytes 8..15 of each lane, widened) x the
		 * input's sums_j of block b, the same for the four rows */
		__m128i imin = hsum4x4(_mm512_madd_epi16(_mm512_shuffle_epi8(
			scm, ctlm), _mm512_broadcast_i32x4(_mm_loadu_si128(
			(const __m128i *)(bsums[i] + 16 * b)))));

		acc[i] = _mm_sub_ps(_mm_add_ps(acc[i], _mm_mul_ps(
			_mm_mul_ps(dxv, d), _mm_cvtepi32_ps(isc))),
			_mm_mul_ps(_mm_mul_ps(dxv, dm),
			_mm_cvtepi32_ps(imin)));
	}
}

/*
 * NI (1 or 2) input rows, Q4_K weights: NI = 2 decodes each block once
 * for both (the several-row kernel's per-block reduction for 8 lanes cost
 * more than the dots at 2 rows). Results for input i go to y + i * ldy.
 */
static inline __attribute__((always_inline)) void
q4k_q8k_n(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	  const uint8_t *q8, const int NI, uint8_t *const ap[2], float *y,
	  size_t ldy)
{
	const uint8_t *apc[2] = { ap[0], ap[1] };
	const float *dx[2];
	const uint8_t *bsums[2];
	__m512i ctl[4], ctlm;
	size_t q = nrows / 4;

	for (int i = 0; i < NI; i++) {
		const uint8_t *in = q8 + i * nb * FFN_KQ_Q8K_BYTES;

		dx[i] = (const float *)(const void *)(in + 256 * nb);
		bsums[i] = in + 260 * nb;
		kq_perm_q4k(in, nb, ap[i]);
	}
	/* packed sums of sub-blocks: 128-bit lanes 0-1 (0, 1), 2-3 (2, 3),
	 * and (4, 5), (6, 7) */
	ctl[0] = kq_sc_ctl2(0, 1, 2, 3);
	ctl[1] = kq_sc_ctl2(4, 5, 6, 7);
	ctlm = _mm512_broadcast_i32x4(_mm_setr_epi8(8, -1, 9, -1, 10, -1,
		11, -1, 12, -1, 13, -1, 14, -1, 15, -1));
	/* rows f, q + f, 2q + f, 3q + f: four streams (kq_internal.h), then
	 * the nrows % 4 left (the last one repeated in the unused lanes) */
	for (size_t f = 0; f < q + (nrows % 4 != 0); f++) {
		const uint8_t *W[4];
		size_t ri[4];
		__m128 acc[2] = { _mm_setzero_ps(), _mm_setzero_ps() };
		float out[4];

		for (size_t r = 0; r < 4; r++) {
			ri[r] = f < q ? r * q + f : 4 * q + r;
			if (ri[r] >= nrows)
				ri[r] = nrows - 1;
			W[r] = w + ri[r] * row_bytes;
		}
		for (size_t b = 0; b < nb; b++)
			q4k_blk4(W, b, NI, apc, dx, bsums, ctl, ctlm, acc);
		for (int i = 0; i < NI; i++) {
			_mm_storeu_ps(out, acc[i]);
			for (size_t r = 0; r < 4; r++)
				y[i * ldy + ri[r]] = out[r];
		}
	}
}

/* One input row, Q4_K weights. Returns -1 (nothing done) when the row is
 * too long for the stack permutation. */
int
ffn_kq_avx512_q4k_q8k_1(const uint8_t *w, size_t row_bytes, size_t nrows,
			size_t nb, const uint8_t *q8, float *y)
{
	uint8_t ap[256 * KQ512_PERM_BLOCKS] __attribute__((aligned(64)));
	uint8_t *aps[2] = { ap, ap };

	if (nb > KQ512_PERM_BLOCKS)
		return -1;
	q4k_q8k_n(w, row_bytes, nrows, nb, q8, 1, aps, y, 0);
	return 0;
}

/* Two input rows (consecutive Q8_K rows at q8), as the one-row kernel;
 * -1 when the rows are too long. */
int
ffn_kq_avx512_q4k_q8k_2(const uint8_t *w, size_t row_bytes, size_t nrows,
			size_t nb, const uint8_t *q8, float *y, size_t ldy)
{
	uint8_t ap[2][256 * KQ512_PERM_BLOCKS] __attribute__((aligned(64)));
	uint8_t *aps[2] = { ap[0], ap[1] };

	if (nb > KQ512_PERM_BLOCKS)
		return -1;
	q4k_q8k_n(w, row_bytes, nrows, nb, q8, 2, aps, y, ldy);
	return 0;
}

/* d (f16 at KQ6_D) of four blocks. */
static inline __m128
d4(const uint8_t *const B[4])
{
	return _mm_cvtph_ps(_mm_setr_epi16((short)kq_rd16(B[0] + KQ6_D),
		(short)kq_rd16(B[1] + KQ6_D), (short)kq_rd16(B[2] + KQ6_D),
		(short)kq_rd16(B[3] + KQ6_D), 0, 0, 0, 0));
}

/*
 * One Q6_K block against NI (1 or 2) inputs a[i] (permuted for the
 * private arrangement, as is for ggml) and ns[i] (minus the input's sums
 * over each 16 values): z[i] = the exact sum_g sc_g sum_k (q_k - 32) a_k
 * in 16 lanes. The block is decoded once for the NI inputs.
 */
static inline __attribute__((always_inline)) void
q6k_block(const uint8_t *blk, enum ffn_kq_q6_layout q6, const int NI,
	  const uint8_t *const a[2], const int16_t *const ns[2], __m512i z[2])
{
	const __m512i iota = _mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24,
		23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8,
		7, 6, 5, 4, 3, 2, 1, 0);
	__m512i sc16 = _mm512_castsi256_si512(_mm256_cvtepi8_epi16(
		_mm_loadu_si128((const __m128i *)(blk + KQ6_SC))));

	/* the -32 of every value: sum_g (32 sc_g) (-sum of its 16 a) */
	for (int i = 0; i < NI; i++)
		z[i] = _mm512_dpwssd_epi32(_mm512_setzero_si512(),
			_mm512_slli_epi16(sc16, 5), _mm512_castsi256_si512(
			_mm256_loadu_si256((const __m256i *)ns[i])));
	for (int n = 0; n < 2; n++) {
		__m512i lo, hi;

		kq_q6_half(blk, q6, n, &lo, &hi);
		if (q6 == FFN_KQ_Q6_PRIVATE) {
			/* i16 lane m: values 4m..4m+3 (the two maddubs
			 * lanes m: 4m, 4m+2 and 4m+1, 4m+3), scale
			 * 8n + m/4 */
			__m512i sv = _mm512_permutexvar_epi16(_mm512_add_epi16(
				_mm512_srli_epi16(iota, 2), _mm512_set1_epi16(
				(short)(8 * n))), sc16);

			for (int i = 0; i < NI; i++)
				z[i] = _mm512_dpwssd_epi32(z[i],
					_mm512_add_epi16(_mm512_maddubs_epi16(
					lo, _mm512_loadu_si512(a[i] + 128 * n)),
					_mm512_maddubs_epi16(hi,
					_mm512_loadu_si512(a[i] + 128 * n +
							   64))), sv);
		} else {
			/* i16 lane m: values 2m, 2m+1 (+64 for hi),
			 * scale 8n + m/8 (+4) */
			__m512i svl = _mm512_permutexvar_epi16(_mm512_add_epi16(
				_mm512_srli_epi16(iota, 3), _mm512_set1_epi16(
				(short)(8 * n))), sc16);
			__m512i svh = _mm512_permutexvar_epi16(_mm512_add_epi16(
				_mm512_srli_epi16(iota, 3), _mm512_set1_epi16(
				(short)(8 * n + 4))), sc16);

			for (int i = 0; i < NI; i++) {
				z[i] = _mm512_dpwssd_epi32(z[i],
					_mm512_maddubs_epi16(lo,
					_mm512_loadu_si512(a[i] + 128 * n)),
					svl);
				z[i] = _mm512_dpwssd_epi32(z[i],
					_mm512_maddubs_epi16(hi,
					_mm512_loadu_si512(a[i] + 128 * n +
							   64)), svh);
			}
		}
	}
}

/* Block b of four Q6_K rows W[0..3] against NI inputs, added to acc[i]
 * (lane r: row r) as kq_q6k_q8k_combine does; as q4k_blk4. */
static inline __attribute__((always_inline)) void
q6k_blk4(const uint8_t *const W[4], size_t b, enum ffn_kq_q6_layout q6,
	 const int NI, const uint8_t *const ap[2], const int16_t *const ns[2],
	 const float *const dx[2], __m128 acc[2])
{
	const uint8_t *B[4];
	const uint8_t *a[2] = { ap[0] + 256 * b, ap[1] + 256 * b };
	const int16_t *nsb[2] = { ns[0] + 16 * b, ns[1] + 16 * b };
	__m512i s[2][4], z[2];
	__m128 d;

#pragma GCC unroll 4
	for (int r = 0; r < 4; r++) {
		B[r] = W[r] + b * FFN_KQ_Q6K_BYTES;
		q6k_block(B[r], q6, NI, a, nsb, z);
		for (int i = 0; i < NI; i++)
			s[i][r] = z[i];
	}
	d = d4(B);
	for (int i = 0; i < NI; i++)
		acc[i] = _mm_add_ps(acc[i], _mm_mul_ps(_mm_mul_ps(
			_mm_set1_ps(dx[i][b]), d), _mm_cvtepi32_ps(
			hsum4x16(s[i]))));
}

/* All rows of a Q6_K matrix in four streams (see the Q4_K kernel), NI
 * inputs; input i's results at y + i * ldy. */
static inline __attribute__((always_inline)) void
q6k_mat(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	enum ffn_kq_q6_layout q6, const int NI, const uint8_t *const ap[2],
	const int16_t *const ns[2], const float *const dx[2], float *y,
	size_t ldy)
{
	size_t q = nrows / 4;

	for (size_t f = 0; f < q + (nrows % 4 != 0); f++) {
		const uint8_t *W[4];
		size_t ri[4];
		__m128 acc[2] = { _mm_setzero_ps(), _mm_setzero_ps() };
		float out[4];

		for (size_t r = 0; r < 4; r++) {
			ri[r] = f < q ? r * q + f : 4 * q + r;
			if (ri[r] >= nrows)
				ri[r] = nrows - 1;
			W[r] = w + ri[r] * row_bytes;
		}
		for (size_t b = 0; b < nb; b++)
			q6k_blk4(W, b, q6, NI, ap, ns, dx, acc);
		for (int i = 0; i < NI; i++) {
			_mm_storeu_ps(out, acc[i]);
			for (size_t r = 0; r < 4; r++)
				y[i * ldy + ri[r]] = out[r];
		}
	}
}

/* NI (1 or 2) input rows of Q6_K: the inputs' negated per-16 sums, the
 * private arrangement's permutation, then the matrix per layout. */
static inline __attribute__((always_inline)) void
q6k_q8k_n(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	  enum ffn_kq_q6_layout q6, const uint8_t *q8, const int16_t *s16,
	  const int NI, uint8_t *const ap[2], int16_t *const ns[2], float *y,
	  size_t ldy)
{
	const uint8_t *a[2];
	const int16_t *nsc[2] = { ns[0], ns[1] };
	const float *dx[2];

	for (int i = 0; i < NI; i++) {
		const uint8_t *in = q8 + i * nb * FFN_KQ_Q8K_BYTES;

		dx[i] = (const float *)(const void *)(in + 256 * nb);
		for (size_t k = 0; k < 16 * nb; k++)
			ns[i][k] = (int16_t)-s16[i * 16 * nb + k];
		a[i] = in;
		if (q6 == FFN_KQ_Q6_PRIVATE) {
			kq_perm_q6k_private(in, nb, ap[i]);
			a[i] = ap[i];
		}
	}
	if (NI == 1) {
		a[1] = a[0];
		nsc[1] = nsc[0];
		dx[1] = dx[0];
	}
	if (q6 == FFN_KQ_Q6_PRIVATE)
		q6k_mat(w, row_bytes, nrows, nb, FFN_KQ_Q6_PRIVATE, NI, a, nsc,
			dx, y, ldy);
	else
		q6k_mat(w, row_bytes, nrows, nb, FFN_KQ_Q6_GGML, NI, a, nsc,
			dx, y, ldy);
}

/* One input row, Q6_K weights; s16: the input's sums over each 16 values
 * (nb * 16). -1 when the row is too long or s16 is missing. */
int
ffn_kq_avx512_q6k_q8k_1(const uint8_t *w, size_t row_bytes, size_t nrows,
			size_t nb, enum ffn_kq_q6_layout q6, const uint8_t *q8,
			const int16_t *s16, float *y)
{
	uint8_t ap[256 * KQ512_PERM_BLOCKS] __attribute__((aligned(64)));
	int16_t ns[16 * KQ512_PERM_BLOCKS] __attribute__((aligned(64)));
	uint8_t *aps[2] = { ap, ap };
	int16_t *nss[2] = { ns, ns };

	if (nb > KQ512_PERM_BLOCKS || s16 == NULL)
		return -1;
	q6k_q8k_n(w, row_bytes, nrows, nb, q6, q8, s16, 1, aps, nss, y, 0);
	return 0;
}

/* Two input rows (s16: both rows' sums, nb * 16 each), as the one-row
 * kernel; -1 when the rows are too long or s16 is missing. */
int
ffn_kq_avx512_q6k_q8k_2(const uint8_t *w, size_t row_bytes, size_t nrows,
			size_t nb, enum ffn_kq_q6_layout q6, const uint8_t *q8,
			const int16_t *s16, float *y, size_t ldy)
{
	uint8_t ap[2][256 * KQ512_PERM_BLOCKS] __attribute__((aligned(64)));
	int16_t ns[2][16 * KQ512_PERM_BLOCKS] __attribute__((aligned(64)));
	uint8_t *aps[2] = { ap[0], ap[1] };
	int16_t *nss[2] = { ns[0], ns[1] };

	if (nb > KQ512_PERM_BLOCKS || s16 == NULL)
		return -1;
	q6k_q8k_n(w, row_bytes, nrows, nb, q6, q8, s16, 2, aps, nss, y, ldy);
	return 0;
}
