/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Private to lib/ffn/kquant: the per-ISA kernel table and block helpers
 * shared by the scalar reference and the SIMD kernels.
 */
#ifndef FFN_KQ_INTERNAL_H
#define FFN_KQ_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ffn_kq.h"

/*
 * Kernel contract: rows [0, nrows) of w (row i at w + i * row_bytes, nb
 * blocks each) against R <= FFN_KQ_RMAX input rows; result for row i and
 * input r goes to y[r * ldy + i].
 * f32 inputs: row r at x + r * ldx with nb * 256 readable values (the
 * driver provides a zero-padded copy when the caller's rows are shorter).
 * Q8_K inputs: R consecutive wire-layout rows of nb blocks.
 */
struct ffn_kq_kernels {
	enum ffn_kq_isa isa;
	const char *name;
	/* xs: NULL, or (only when R == 1) the sums of x over each
	 * 32 values (nb * 8 floats), for kernels that factor out the mins */
	void (*q4k_f32)(const uint8_t *w, size_t row_bytes, size_t nrows,
			size_t nb, const float *x, const float *xs, size_t ldx,
			size_t R, float *y, size_t ldy);
	void (*q6k_f32)(const uint8_t *w, size_t row_bytes, size_t nrows,
			size_t nb, enum ffn_kq_q6_layout q6, const float *x,
			size_t ldx, size_t R, float *y, size_t ldy);
	void (*q4k_q8k)(const uint8_t *w, size_t row_bytes, size_t nrows,
			size_t nb, const uint8_t *q8, size_t R,
			float *y, size_t ldy);
	/* s16: NULL, or per input row the sums of its Q8_K values over each
	 * 16 (nb * 16 int16 per row, rows consecutive), so kernels can apply
	 * the -32 offset of Q6_K once per block */
	void (*q6k_q8k)(const uint8_t *w, size_t row_bytes, size_t nrows,
			size_t nb, enum ffn_kq_q6_layout q6, const uint8_t *q8,
			const int16_t *s16, size_t R, float *y, size_t ldy);
};

extern const struct ffn_kq_kernels ffn_kq_kernels_scalar;
extern const struct ffn_kq_kernels ffn_kq_kernels_avx2;
extern const struct ffn_kq_kernels ffn_kq_kernels_avx512;

/* AVX-512 one-input-row Q8_K kernels (kq_avx512_q8k.c): 0, or -1 when
 * the row is too long for them (the caller falls back). */
int ffn_kq_avx512_q4k_q8k_1(const uint8_t *w, size_t row_bytes, size_t nrows,
			    size_t nb, const uint8_t *q8, float *y);
int ffn_kq_avx512_q6k_q8k_1(const uint8_t *w, size_t row_bytes, size_t nrows,
			    size_t nb, enum ffn_kq_q6_layout q6,
			    const uint8_t *q8, const int16_t *s16, float *y);
/* The same kernels for two input rows (results at y and y + ldy), each
 * block decoded once for both. */
int ffn_kq_avx512_q4k_q8k_2(const uint8_t *w, size_t row_bytes, size_t nrows,
			    size_t nb, const uint8_t *q8, float *y,
			    size_t ldy);
int ffn_kq_avx512_q6k_q8k_2(const uint8_t *w, size_t row_bytes, size_t nrows,
			    size_t nb, enum ffn_kq_q6_layout q6,
			    const uint8_t *q8, const int16_t *s16, float *y,
			    size_t ldy);

/* AVX-512 Q8_K kernels for any number of input rows (kq_avx512_int.c),
 * the q4k_q8k / q6k_q8k of ffn_kq_kernels_avx512. */
void ffn_kq_avx512_q4k_q8k(const uint8_t *w, size_t row_bytes, size_t nrows,
			   size_t nb, const uint8_t *q8, size_t R, float *y,
			   size_t ldy);
void ffn_kq_avx512_q6k_q8k(const uint8_t *w, size_t row_bytes, size_t nrows,
			   size_t nb, enum ffn_kq_q6_layout q6,
			   const uint8_t *q8, const int16_t *s16, size_t R,
			   float *y, size_t ldy);

/* AVX2 Q8_K kernels for 2..FFN_KQ_RMAX input rows (kq_avx2_q8k_rows.c;
 * kq_avx2.c takes them from 3 rows). */
void ffn_kq_avx2_q4k_q8k_rows(const uint8_t *w, size_t row_bytes,
			      size_t nrows, size_t nb, const uint8_t *q8,
			      size_t R, float *y, size_t ldy);
void ffn_kq_avx2_q6k_q8k_rows(const uint8_t *w, size_t row_bytes,
			      size_t nrows, size_t nb,
			      enum ffn_kq_q6_layout q6, const uint8_t *q8,
			      size_t R, float *y, size_t ldy);

/* The one-row AVX2 ones (kq_avx2_q8k.c). */
int ffn_kq_avx2_q4k_q8k_1(const uint8_t *w, size_t row_bytes, size_t nrows,
			  size_t nb, const uint8_t *q8, float *y);
int ffn_kq_avx2_q6k_q8k_1(const uint8_t *w, size_t row_bytes, size_t nrows,
			  size_t nb, enum ffn_kq_q6_layout q6,
			  const uint8_t *q8, const int16_t *s16, float *y);

/*
 * The AVX-512 one-input-row Q8_K kernels (kq_avx512_q8k.c) process
 * FFN_KQ_STREAMS weight rows together, taken from as many far-apart chunks
 * of the matrix (rows f, f + q, ..., q = nrows / FFN_KQ_STREAMS; then the
 * nrows % FFN_KQ_STREAMS last rows), so that each is one long sequential
 * DRAM stream across many rows, as lib/ffn's one-row f16 kernel
 * (mv_streams, ffn_kern_tmpl.h). bench-kquant's "read only" rows read in
 * the same order (one block of each stream in turn). The AVX2 kernels
 * still read one row at a time: on AVX2 the kernels are compute-bound and
 * four interleaved rows ran slower (16 ymm registers).
 */
#ifndef FFN_KQ_STREAMS
#define FFN_KQ_STREAMS 4
#endif

/* Q4_K block field offsets (vindex.md §2.4). */
#define KQ4_D		0
#define KQ4_DMIN	2
#define KQ4_S		4
#define KQ4_QS		16
/* Q6_K block field offsets. */
#define KQ6_QL		0
#define KQ6_QH		128
#define KQ6_SC		192
#define KQ6_D		208

static inline uint16_t
kq_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

/*
 * Q4_K: the 6-bit scales and mins of the 8 sub-blocks of 32 values
 * (vindex.md §2.4), unpacked four at a time in 32-bit words:
 * sc[0..3] = s[0..3] & 63, m[0..3] = s[4..7] & 63,
 * sc[4..7] = (s[8..11] & 15) | (s[0..3] >> 6) << 4,
 * m[4..7] = (s[8..11] >> 4) | (s[4..7] >> 6) << 4.
 */
static inline void
kq_q4k_scales(const uint8_t *s, uint8_t sc[8], uint8_t m[8])
{
	const uint32_t k63 = 0x3f3f3f3f, k15 = 0x0f0f0f0f, k3 = 0x03030303;
	uint32_t u[3], o[4];

	memcpy(u, s, 12);
	o[0] = u[0] & k63;
	o[1] = (u[2] & k15) | (((u[0] >> 6) & k3) << 4);
	o[2] = u[1] & k63;
	o[3] = ((u[2] >> 4) & k15) | (((u[1] >> 6) & k3) << 4);
	memcpy(sc, o, 8);
	memcpy(m, o + 2, 8);
}

/* Q6_K: the unsigned 6-bit values (0..63) of one block, in value order. */
static inline void
kq_q6k_decode_u8(const uint8_t *b, enum ffn_kq_q6_layout q6, uint8_t q[256])
{
	const uint8_t *ql = b + KQ6_QL, *qh = b + KQ6_QH;

	if (q6 == FFN_KQ_Q6_PRIVATE) {
		for (int i = 0; i < 256; i++) {
			int lo = (i & 1) ? ql[i / 2] >> 4 : ql[i / 2] & 15;
			int hi = (qh[i / 4] >> (2 * (i % 4))) & 3;

			q[i] = (uint8_t)(lo | hi << 4);
		}
		return;
	}
	for (int n = 0; n < 2; n++) {
		const uint8_t *l = ql + 64 * n, *h = qh + 32 * n;
		uint8_t *o = q + 128 * n;

		for (int i = 0; i < 32; i++) {
			o[i] = (uint8_t)((l[i] & 15) | ((h[i] >> 0) & 3) << 4);
			o[i + 32] = (uint8_t)((l[i + 32] & 15) |
					      ((h[i] >> 2) & 3) << 4);
			o[i + 64] = (uint8_t)((l[i] >> 4) |
					      ((h[i] >> 4) & 3) << 4);
			o[i + 96] = (uint8_t)((l[i + 32] >> 4) |
					      ((h[i] >> 6) & 3) << 4);
		}
	}
}

/* Q8_K wire row of nb blocks: qs, then d[nb], then sums[nb * 8]. */
static inline const int8_t *
kq_q8_qs(const uint8_t *row, size_t nb, size_t b)
{
	(void)nb;
	return (const int8_t *)row + 256 * b;
}

static inline float
kq_q8_d(const uint8_t *row, size_t nb, size_t b)
{
	float d;

	memcpy(&d, row + 256 * nb + 4 * b, sizeof(d));
	return d;
}

static inline const uint8_t *
kq_q8_sums(const uint8_t *row, size_t nb, size_t b)
{
	return row + 260 * nb + 16 * b;
}

static inline int16_t
kq_q8_sum(const uint8_t *row, size_t nb, size_t b, int j)
{
	int16_t s;

	memcpy(&s, kq_q8_sums(row, nb, b) + 2 * j, sizeof(s));
	return s;
}

/*
 * The per-block float combination of the integer path. Written once so that
 * every ISA rounds the same way (files are built with -ffp-contract=off).
 */
static inline float
kq_q4k_q8k_combine(float acc, float dx, float d, float dmin, int32_t isc,
		   int32_t imin)
{
	return acc + (dx * d) * (float)isc - (dx * dmin) * (float)imin;
}

static inline float
kq_q6k_q8k_combine(float acc, float dx, float d, int32_t isum)
{
	return acc + (dx * d) * (float)isum;
}

#endif /* FFN_KQ_INTERNAL_H */
