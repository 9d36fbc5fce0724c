/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The input side of the several-row Q8_K kernels (kq_avx512_int.c and
 * kq_avx2_q8k_rows.c): per block they need the d of the R <= 8 input rows,
 * for Q4_K the rows' 8 block sums, for Q6_K their 16 group sums, and (the
 * AVX-512 ones) the values in the order the weights decode to. Laid out
 * once per call for a window of blocks, each is one aligned load per
 * block, where a gather of the d and per-row loads and horizontal sums of
 * the sums cost more than the block's integer dots. Rows past R repeat
 * row 0; their results are not stored. Also the kernels' software
 * prefetch cursor. Static inline (AVX2 instructions).
 */
#ifndef FFN_KQ_ROWS_H
#define FFN_KQ_ROWS_H

#include <immintrin.h>

#include "kq_internal.h"

/*
 * Blocks per window. The window's input rows are read once per weight row,
 * so all 8 of them (8 x 16 x 256 B = 32 KiB) stay in L1 beside the
 * streaming weights; each weight row is read in runs of 16 blocks (2.3 KiB
 * Q4_K, 3.3 KiB Q6_K), long enough for the prefetchers.
 */
#ifndef KQ_WIN
#define KQ_WIN 16
#endif

struct kq_q8_win {
	float dx[KQ_WIN][8];
	/* Q4_K: sp[b][k] = sums 2k, 2k+1 of rows 0..7, as i16 pairs */
	int16_t sp[KQ_WIN][4][16];
	/* Q6_K: zmm j of block b holds, for the group pairs 2j (low 256
	 * bits) and 2j+1 (high), the i16 pairs (S_r,2k, S_r,2k+1) of rows
	 * r = 0..7, where S_r,g = sum of the 16 values of group g */
	int16_t s6[KQ_WIN][4][32];
	/* the rows' values in the order the weight nibbles come out of a
	 * 64-byte load (Q4_K; Q6_K LARQL-private), rows < R only */
	uint8_t a[8][KQ_WIN][256];
};

/* The blocks [b0, b0 + n) of the R Q8_K rows at q8 (nb blocks each). */
static inline void
kq_win_prep(const uint8_t *q8, size_t nb, size_t R, size_t b0, size_t n,
	    int sums, struct kq_q8_win *w)
{
	for (size_t r = 0; r < 8; r++) {
		const uint8_t *in = q8 + (r < R ? r : 0) * nb *
					 FFN_KQ_Q8K_BYTES;

		for (size_t b = 0; b < n; b++) {
			w->dx[b][r] = kq_q8_d(in, nb, b0 + b);
			for (int k = 0; sums && k < 4; k++) {
				w->sp[b][k][2 * r] =
					kq_q8_sum(in, nb, b0 + b, 2 * k);
				w->sp[b][k][2 * r + 1] =
					kq_q8_sum(in, nb, b0 + b, 2 * k + 1);
			}
		}
	}
}

/* Q6_K: the window's per-16 sums in the pairs of kq_q8_win.s6. */
static inline void
kq_win_s6(const uint8_t *q8, size_t nb, size_t R, size_t b0, size_t n,
	  struct kq_q8_win *w)
{
	for (size_t r = 0; r < 8; r++) {
		const uint8_t *in = q8 + (r < R ? r : 0) * nb *
					 FFN_KQ_Q8K_BYTES;

		for (size_t b = 0; b < n; b++) {
			const int8_t *a = kq_q8_qs(in, nb, b0 + b);

			for (int g = 0; g < 16; g++) {
				int t = 0;

				for (int l = 0; l < 16; l++)
					t += a[16 * g + l];
				/* pair k = g / 2 sits in zmm k / 2, half
				 * k % 2, lanes 2r + g % 2 */
				w->s6[b][g / 4][16 * ((g / 2) % 2) + 2 * r +
						g % 2] = (int16_t)t;
			}
		}
	}
}

/*
 * Software prefetch for the several-row kernels. They read a matrix in
 * (row, window) runs of n blocks; the cursor runs KQ_PF_BYTES ahead in
 * that order. The hardware prefetchers alone left the DRAM stream at
 * 5-8 GB/s at 8 rows (Zen 5: Q6_K 2560 x 10240 from DRAM 5.6 ns a row-block,
 * in L2 2.0).
 */
#ifndef KQ_PF_BYTES
#define KQ_PF_BYTES 2560
#endif

struct kq_pf {
	const uint8_t *row;	/* the run the cursor is in */
	size_t bw;		/* its block in the run */
};

static inline void
kq_pf_start(struct kq_pf *p, const uint8_t *w, size_t row_bytes, size_t b0,
	    size_t n, size_t bb)
{
	size_t d = KQ_PF_BYTES / bb;

	p->row = w + (d / n) * row_bytes + b0 * bb;
	p->bw = d % n;
}

/* Prefetch the block the cursor is at (lines covering bb bytes), then
 * move it one block on. */
static inline void
kq_pf_next(struct kq_pf *p, size_t row_bytes, size_t n, size_t bb)
{
	const char *a = (const char *)(p->row + p->bw * bb);

	for (size_t o = 0; o < bb + 63; o += 64)
		_mm_prefetch(a + o, _MM_HINT_T0);
	if (++p->bw == n) {
		p->bw = 0;
		p->row += row_bytes;
	}
}

/* Q4_K mins of the 8 rows, lane r: sum_j m_j sums_j, from mv (m_0..7 as
 * i16) and the window's pairs of block bw. */
static inline __m256i
kq_win_mins(const struct kq_q8_win *w, size_t bw, __m128i mv)
{
	__m256i imin = _mm256_setzero_si256();

	for (int k = 0; k < 4; k++)
		imin = _mm256_add_epi32(imin, _mm256_madd_epi16(
			_mm256_load_si256((const __m256i *)w->sp[bw][k]),
			_mm256_permutevar8x32_epi32(_mm256_castsi128_si256(mv),
						    _mm256_set1_epi32(k))));
	return imin;
}

/* Row i's outputs so far (0 in the first window): the block loop goes on
 * from them, so windows round exactly as one pass over the row. */
static inline __m256
kq_acc_in(const float *y, size_t ldy, size_t i, size_t R, size_t b0)
{
	float a[8] = { 0 };

	for (size_t r = 0; b0 > 0 && r < R; r++)
		a[r] = y[r * ldy + i];
	return _mm256_loadu_ps(a);
}

static inline void
kq_acc_out(__m256 acc, float *y, size_t ldy, size_t i, size_t R)
{
	float out[8];

	_mm256_storeu_ps(out, acc);
	for (size_t r = 0; r < R; r++)
		y[r * ldy + i] = out[r];
}

#endif
