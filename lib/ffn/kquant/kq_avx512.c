/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * AVX-512 (F/BW/VL/VNNI/VBMI) K-quant kernels. Built with -mavx512f
 * -mavx512bw -mavx512vl -mavx512vnni -mavx512vbmi -mfma -mf16c
 * -ffp-contract=off; chosen at run
 * time (kq.c). Each weight block is decoded once for all input rows.
 * f32 path: within the bound of ffn_kq.h of the scalar reference.
 * Q8_K path: vpmaddubsw + VNNI vpdpwssd integer sums, the per-block float combination of
 * kq_internal.h in block order: equal to the scalar reference bit for bit.
 */
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

static void
q4k_q8k(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	const uint8_t *q8, size_t R, float *y, size_t ldy)
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

static void
q6k_q8k(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	enum ffn_kq_q6_layout q6, const uint8_t *q8, const int16_t *s16,
	size_t R, float *y, size_t ldy)
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

const struct ffn_kq_kernels ffn_kq_kernels_avx512 = {
	.isa = FFN_KQ_ISA_AVX512,
	.name = "avx512",
	.q4k_f32 = q4k_f32,
	.q6k_f32 = q6k_f32,
	.q4k_q8k = q4k_q8k,
	.q6k_q8k = q6k_q8k,
};
