/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * AVX2 (+FMA, F16C) K-quant kernels. Built with -mavx2 -mfma -mf16c
 * -ffp-contract=off; chosen at run time (kq.c). Each weight block is
 * decoded once for all input rows.
 * f32 path: within the bound of ffn_kq.h of the scalar reference.
 * Q8_K path: vpmaddubsw / vpmaddwd integer sums and the per-block float
 * combination of kq_internal.h: equal to the scalar reference bit for bit.
 */
#include <immintrin.h>

#include "kq_internal.h"
#include "kq_simd_q6.h"

static inline float
f16(const uint8_t *p)
{
	return _cvtsh_ss(kq_rd16(p));
}

static inline float
hsum_ps(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v),
			      _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

static inline int32_t
hsum_epi32(__m256i v)
{
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v),
				  _mm256_extracti128_si256(v, 1));

	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
	return _mm_cvtsi128_si32(s);
}

/*
 * Several input rows, f32 path: two weight rows' blocks decoded into L1
 * (wb0, wb1), then dotted with the input rows four at a time, each vector
 * of wb loaded once per four rows and each input vector once per two
 * weight rows: 8 accumulators, 6 loads per 8 FMAs. One weight row at a
 * time with a load of each operand per FMA ran 8 rows 1.45x slower for
 * Q4_K and 1.3x for Q6_K, 2 rows about the same (Zen 5, 10240 x 2560).
 * The empty asm keeps each input vector in a register (GCC folds it into
 * both FMAs instead).
 */
static inline __attribute__((always_inline)) void
dot2_n(const float *wb0, const float *wb1, const float *xb, size_t ldx,
       __m256 *acc0, __m256 *acc1, const size_t n)
{
	/* 2n chains; with n <= 2, odd and even vectors take separate
	 * chains (c0, c1), or the FMA latency would be the bound */
	const int split = n <= 2;
	__m256 a0[4], a1[4], c0[2], c1[2];

	for (size_t r = 0; r < n; r++) {
		a0[r] = acc0[r];
		a1[r] = acc1[r];
		if (split)
			c0[r] = c1[r] = _mm256_setzero_ps();
	}
	for (int k = 0; k < 256; k += 8) {
		__m256 w0 = _mm256_load_ps(wb0 + k);
		__m256 w1 = _mm256_load_ps(wb1 + k);

		for (size_t r = 0; r < n; r++) {
			__m256 xv = _mm256_loadu_ps(xb + r * ldx + k);

			__asm__("" : "+x"(xv));
			if (split && (k & 8)) {
				c0[r] = _mm256_fmadd_ps(w0, xv, c0[r]);
				c1[r] = _mm256_fmadd_ps(w1, xv, c1[r]);
			} else {
				a0[r] = _mm256_fmadd_ps(w0, xv, a0[r]);
				a1[r] = _mm256_fmadd_ps(w1, xv, a1[r]);
			}
		}
	}
	for (size_t r = 0; r < n; r++) {
		acc0[r] = split ? _mm256_add_ps(a0[r], c0[r]) : a0[r];
		acc1[r] = split ? _mm256_add_ps(a1[r], c1[r]) : a1[r];
	}
}

/* Block b of the decoded pair against R input rows, four at a time. */
static void
dot2(const float *wb0, const float *wb1, const float *x, size_t ldx,
     size_t R, size_t b, __m256 *acc0, __m256 *acc1)
{
	for (size_t r = 0; r < R; r += 4) {
		const float *xb = x + r * ldx + 256 * b;

		switch (R - r) {
		case 1: dot2_n(wb0, wb1, xb, ldx, acc0 + r, acc1 + r, 1); break;
		case 2: dot2_n(wb0, wb1, xb, ldx, acc0 + r, acc1 + r, 2); break;
		case 3: dot2_n(wb0, wb1, xb, ldx, acc0 + r, acc1 + r, 3); break;
		default: dot2_n(wb0, wb1, xb, ldx, acc0 + r, acc1 + r, 4); break;
		}
	}
}

/*
 * Weight rows in pairs (an odd last row paired with itself), each block
 * of the two decoded once by decode() for all R input rows.
 */
static inline __attribute__((always_inline)) void
rows_f32(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	 size_t bb, enum ffn_kq_q6_layout q6,
	 void (*decode)(const uint8_t *, enum ffn_kq_q6_layout, float *),
	 const float *x, size_t ldx, size_t R, float *y, size_t ldy)
{
	float wb0[256] __attribute__((aligned(32)));
	float wb1[256] __attribute__((aligned(32)));
	__m256 acc0[FFN_KQ_RMAX], acc1[FFN_KQ_RMAX];

	for (size_t i = 0; i < nrows; i += 2) {
		const uint8_t *r0 = w + i * row_bytes;
		const uint8_t *r1 = i + 1 < nrows ? r0 + row_bytes : r0;

		for (size_t r = 0; r < R; r++)
			acc0[r] = acc1[r] = _mm256_setzero_ps();
		for (size_t b = 0; b < nb; b++) {
			decode(r0 + b * bb, q6, wb0);
			decode(r1 + b * bb, q6, wb1);
			dot2(wb0, wb1, x, ldx, R, b, acc0, acc1);
		}
		for (size_t r = 0; r < R; r++) {
			y[r * ldy + i] = hsum_ps(acc0[r]);
			if (i + 1 < nrows)
				y[r * ldy + i + 1] = hsum_ps(acc1[r]);
		}
	}
}

/* Q4_K block -> wb[256]: q * (d sc_j) - dmin m_j. */
static inline __attribute__((always_inline)) void
q4k_block_f32(const uint8_t *blk, enum ffn_kq_q6_layout q6, float *wb)
{
	const __m256i m4 = _mm256_set1_epi8(15);
	uint8_t qb[256] __attribute__((aligned(32)));
	float d = f16(blk + KQ4_D), dmin = f16(blk + KQ4_DMIN);
	uint8_t sc[8], m[8];

	(void)q6;
	kq_q4k_scales(blk + KQ4_S, sc, m);
	for (int g = 0; g < 4; g++) {
		__m256i q = _mm256_loadu_si256(
			(const __m256i *)(blk + KQ4_QS + 32 * g));

		_mm256_store_si256((__m256i *)(qb + 64 * g),
				   _mm256_and_si256(q, m4));
		_mm256_store_si256((__m256i *)(qb + 64 * g + 32),
			_mm256_and_si256(_mm256_srli_epi16(q, 4), m4));
	}
	for (int j = 0; j < 8; j++) {
		__m256 dl = _mm256_set1_ps(d * sc[j]);
		__m256 ml = _mm256_set1_ps(dmin * m[j]);

		for (int k = 0; k < 32; k += 8) {
			__m256 qf = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
				_mm_loadl_epi64((const __m128i *)
						(qb + 32 * j + k))));

			_mm256_store_ps(wb + 32 * j + k,
					_mm256_fmsub_ps(qf, dl, ml));
		}
	}
}

/* Q6_K block -> wb[256]: (d sc_g) * (q - 32). */
static inline __attribute__((always_inline)) void
q6k_block_f32(const uint8_t *blk, enum ffn_kq_q6_layout q6, float *wb)
{
	const __m256i k32 = _mm256_set1_epi32(32);
	uint8_t q[256] __attribute__((aligned(32)));
	const int8_t *sc = (const int8_t *)(blk + KQ6_SC);
	float d = f16(blk + KQ6_D);

	kq_q6_decode_simd(blk, q6, q);
	for (int k = 0; k < 256; k += 8) {
		__m256i v = _mm256_sub_epi32(_mm256_cvtepu8_epi32(
			_mm_loadl_epi64((const __m128i *)(q + k))), k32);

		_mm256_store_ps(wb + k, _mm256_mul_ps(
			_mm256_set1_ps(d * (float)sc[k / 16]),
			_mm256_cvtepi32_ps(v)));
	}
}

/* One input row: sum_j (d sc_j) sum q x - (dmin m_j) xs_j (see kq.c). */
static void
q4k_f32_1(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	  const float *x, const float *xs, float *y)
{
	const __m256i m4 = _mm256_set1_epi32(15);

	for (size_t i = 0; i < nrows; i++) {
		const uint8_t *row = w + i * row_bytes;
		/* one chain per group of 64 (one chain of 8 FMAs per block
		 * made the FMA latency the bound) */
		__m256 acc[4], accm = _mm256_setzero_ps();

		for (int g = 0; g < 4; g++)
			acc[g] = _mm256_setzero_ps();
		for (size_t b = 0; b < nb; b++) {
			const uint8_t *blk = row + b * FFN_KQ_Q4K_BYTES;
			const float *xb = x + 256 * b;
			float d = f16(blk + KQ4_D), dmin = f16(blk + KQ4_DMIN);
			uint8_t sc[8], m[8];
			float scf[8];

			kq_q4k_scales(blk + KQ4_S, sc, m);
			_mm256_storeu_ps(scf, _mm256_mul_ps(_mm256_set1_ps(d),
				_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
				_mm_loadl_epi64((const __m128i *)sc)))));
			accm = _mm256_fmadd_ps(_mm256_mul_ps(
				_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(
				_mm256_cvtepu8_epi32(_mm_loadl_epi64(
				(const __m128i *)m)))),
				_mm256_loadu_ps(xs + 8 * b), accm);
			for (int g = 0; g < 4; g++) {
				const uint8_t *qs = blk + KQ4_QS + 32 * g;
				const float *xg = xb + 64 * g;
				__m256 s1 = _mm256_setzero_ps();
				__m256 s2 = _mm256_setzero_ps();

				for (int k = 0; k < 32; k += 8) {
					__m256i z = _mm256_cvtepu8_epi32(
						_mm_loadl_epi64((const __m128i *)
								(qs + k)));

					s1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(
						_mm256_and_si256(z, m4)),
						_mm256_loadu_ps(xg + k), s1);
					s2 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(
						_mm256_srli_epi32(z, 4)),
						_mm256_loadu_ps(xg + 32 + k), s2);
				}
				acc[g] = _mm256_fmadd_ps(s1,
					_mm256_set1_ps(scf[2 * g]), acc[g]);
				acc[g] = _mm256_fmadd_ps(s2,
					_mm256_set1_ps(scf[2 * g + 1]), acc[g]);
			}
		}
		y[i] = hsum_ps(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]),
					     _mm256_add_ps(acc[2], acc[3]))) -
		       hsum_ps(accm);
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

/*
 * One input row: q - 32 (bytes) and d*sc go through a small L1 buffer,
 * each 8 values are a widening load, a conversion, a multiply by x and an
 * FMA with a broadcast scale (no dequantised 1 KiB block in between).
 */
static void
q6k_f32_1(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	  enum ffn_kq_q6_layout q6, const float *x, float *y)
{
	const __m256i k32b = _mm256_set1_epi8(32);

	for (size_t i = 0; i < nrows; i++) {
		const uint8_t *row = w + i * row_bytes;
		/* 8 chains: 4 FMAs per chain per block, not latency-bound */
		__m256 acc[8];

		for (int c = 0; c < 8; c++)
			acc[c] = _mm256_setzero_ps();
		for (size_t b = 0; b < nb; b++) {
			const uint8_t *blk = row + b * FFN_KQ_Q6K_BYTES;
			const float *xb = x + 256 * b;
			int8_t qb[256] __attribute__((aligned(32)));
			float dsc[16] __attribute__((aligned(32)));
			__m128i sc = _mm_loadu_si128((const __m128i *)
						     (blk + KQ6_SC));
			__m256 d = _mm256_set1_ps(f16(blk + KQ6_D));
			__m256i o[8];

			kq_q6_decode_regs(blk, q6, o);
			for (int c = 0; c < 8; c++)
				_mm256_store_si256((__m256i *)(qb + 32 * c),
					_mm256_sub_epi8(o[c], k32b));
			_mm256_store_ps(dsc, _mm256_mul_ps(d, _mm256_cvtepi32_ps(
				_mm256_cvtepi8_epi32(sc))));
			_mm256_store_ps(dsc + 8, _mm256_mul_ps(d,
				_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
				_mm_srli_si128(sc, 8)))));
			for (int k = 0; k < 32; k++)
				acc[k & 7] = _mm256_fmadd_ps(_mm256_mul_ps(
					_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
					_mm_loadl_epi64((const __m128i *)
						(qb + 8 * k)))),
					_mm256_loadu_ps(xb + 8 * k)),
					_mm256_set1_ps(dsc[k / 2]), acc[k & 7]);
		}
		y[i] = hsum_ps(_mm256_add_ps(
			_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]),
				      _mm256_add_ps(acc[2], acc[3])),
			_mm256_add_ps(_mm256_add_ps(acc[4], acc[5]),
				      _mm256_add_ps(acc[6], acc[7]))));
	}
}

static void
q6k_f32(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	enum ffn_kq_q6_layout q6, const float *x, size_t ldx, size_t R,
	float *y, size_t ldy)
{
	if (R == 1) {
		q6k_f32_1(w, row_bytes, nrows, nb, q6, x, y);
		return;
	}
	rows_f32(w, row_bytes, nrows, nb, FFN_KQ_Q6K_BYTES, q6, q6k_block_f32,
		 x, ldx, R, y, ldy);
}

static void
q4k_q8k(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	const uint8_t *q8, size_t R, float *y, size_t ldy)
{
	const __m256i m4 = _mm256_set1_epi8(15);
	size_t q8_row = nb * FFN_KQ_Q8K_BYTES;

	/* 3..8 rows: kq_avx2_q8k_rows.c; 2 rows ran 1.5x slower there (a
	 * block's fixed cost shared by too few rows), so they stay here */
	if (R > 2) {
		ffn_kq_avx2_q4k_q8k_rows(w, row_bytes, nrows, nb, q8, R, y,
					 ldy);
		return;
	}
	if (R == 1 && ffn_kq_avx2_q4k_q8k_1(w, row_bytes, nrows, nb, q8,
					    y) == 0)
		return;
	for (size_t i = 0; i < nrows; i++) {
		const uint8_t *row = w + i * row_bytes;
		float acc[FFN_KQ_RMAX] = {0};

		for (size_t b = 0; b < nb; b++) {
			const uint8_t *blk = row + b * FFN_KQ_Q4K_BYTES;
			float d = f16(blk + KQ4_D), dmin = f16(blk + KQ4_DMIN);
			uint8_t sc[8], m[8];
			__m256i qv[8], sv[8];
			__m128i mv;

			kq_q4k_scales(blk + KQ4_S, sc, m);
			mv = _mm_cvtepu8_epi16(_mm_loadl_epi64(
				(const __m128i *)m));
			for (int g = 0; g < 4; g++) {
				__m256i q = _mm256_loadu_si256(
					(const __m256i *)(blk + KQ4_QS + 32 * g));

				qv[2 * g] = _mm256_and_si256(q, m4);
				qv[2 * g + 1] = _mm256_and_si256(
					_mm256_srli_epi16(q, 4), m4);
			}
			for (int j = 0; j < 8; j++)
				sv[j] = _mm256_set1_epi16(sc[j]);
			for (size_t r = 0; r < R; r++) {
				const uint8_t *in = q8 + r * q8_row;
				const int8_t *a = kq_q8_qs(in, nb, b);
				__m256i s = _mm256_setzero_si256();
				int32_t imin;

				for (int j = 0; j < 8; j++) {
					/* pairs of q*a fit in i16: 2*15*127 */
					__m256i p = _mm256_maddubs_epi16(qv[j],
						_mm256_loadu_si256(
						(const __m256i *)(a + 32 * j)));

					s = _mm256_add_epi32(s,
						_mm256_madd_epi16(p, sv[j]));
				}
				{
					__m128i t = _mm_madd_epi16(mv,
						_mm_loadu_si128((const __m128i *)
						kq_q8_sums(in, nb, b)));

					t = _mm_add_epi32(t,
						_mm_shuffle_epi32(t, 0x4e));
					t = _mm_add_epi32(t,
						_mm_shuffle_epi32(t, 0xb1));
					imin = _mm_cvtsi128_si32(t);
				}
				acc[r] = kq_q4k_q8k_combine(acc[r],
					kq_q8_d(in, nb, b), d, dmin,
					hsum_epi32(s), imin);
			}
		}
		for (size_t r = 0; r < R; r++)
			y[r * ldy + i] = acc[r];
	}
}

static void
q6k_q8k(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	enum ffn_kq_q6_layout q6, const uint8_t *q8, const int16_t *s16,
	size_t R, float *y, size_t ldy)
{
	size_t q8_row = nb * FFN_KQ_Q8K_BYTES;
	uint8_t q[256] __attribute__((aligned(32)));
	const __m256i k32 = _mm256_set1_epi8(32);

	if (R > 2) {
		ffn_kq_avx2_q6k_q8k_rows(w, row_bytes, nrows, nb, q6, q8, R,
					 y, ldy);
		return;
	}
	if (R == 1 && ffn_kq_avx2_q6k_q8k_1(w, row_bytes, nrows, nb, q6, q8,
					    s16, y) == 0)
		return;
	for (size_t i = 0; i < nrows; i++) {
		const uint8_t *row = w + i * row_bytes;
		float acc[FFN_KQ_RMAX] = {0};

		for (size_t b = 0; b < nb; b++) {
			const uint8_t *blk = row + b * FFN_KQ_Q6K_BYTES;
			const int8_t *sc = (const int8_t *)(blk + KQ6_SC);
			float d = f16(blk + KQ6_D);
			__m256i sv[8], sc16 = _mm256_cvtepi8_epi16(
				_mm_loadu_si128((const __m128i *)sc));

			kq_q6_decode_simd(blk, q6, q);
			/* 32 values = 16 i16 pair sums: 8 for group 2c, 8 for
			 * group 2c + 1 */
			for (int c = 0; c < 8; c++)
				sv[c] = _mm256_setr_m128i(
					_mm_set1_epi16(sc[2 * c]),
					_mm_set1_epi16(sc[2 * c + 1]));
			for (size_t r = 0; r < R; r++) {
				const uint8_t *in = q8 + r * q8_row;
				const int8_t *a = kq_q8_qs(in, nb, b);
				__m256i s = _mm256_setzero_si256();
				__m256i c32 = _mm256_setzero_si256();
				int32_t isum;

				for (int c = 0; c < 8; c++) {
					__m256i av = _mm256_loadu_si256(
						(const __m256i *)(a + 32 * c));
					/* q*a pairs <= 2*63*127 fit in i16 */
					__m256i p = _mm256_maddubs_epi16(
						_mm256_load_si256((const __m256i *)
							(q + 32 * c)), av);

					s = _mm256_add_epi32(s,
						_mm256_madd_epi16(p, sv[c]));
					if (s16 == NULL)
						c32 = _mm256_add_epi32(c32,
							_mm256_madd_epi16(
							_mm256_maddubs_epi16(
							k32, av), sv[c]));
				}
				/* the -32: sum_g sc_g * 32 * (sum of a) */
				isum = hsum_epi32(s);
				if (s16 != NULL)
					isum -= 32 * hsum_epi32(_mm256_madd_epi16(
						sc16, _mm256_loadu_si256(
						(const __m256i *)(s16 +
						16 * (r * nb + b)))));
				else
					isum -= hsum_epi32(c32);
				acc[r] = kq_q6k_q8k_combine(acc[r],
					kq_q8_d(in, nb, b), d, isum);
			}
		}
		for (size_t r = 0; r < R; r++)
			y[r * ldy + i] = acc[r];
	}
}

const struct ffn_kq_kernels ffn_kq_kernels_avx2 = {
	.isa = FFN_KQ_ISA_AVX2,
	.name = "avx2",
	.q4k_f32 = q4k_f32,
	.q6k_f32 = q6k_f32,
	.q4k_q8k = q4k_q8k,
	.q6k_q8k = q6k_q8k,
};
