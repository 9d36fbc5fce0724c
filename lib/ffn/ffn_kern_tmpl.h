/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Dense FFN kernels written once over a vector abstraction; included by
 * ffn_kern_avx2.c and ffn_kern_avx512.c, each compiled for its ISA, which
 * define before including:
 *   V, VL (floats per vector), VZERO(), VLOADF(p), VLOADH(p) (f16 -> f32),
 *   VFMA(a, b, c) = a*b + c, VBCAST(f), VSTORE(p, v), VREDUCE(v),
 *   VLOADF_T(p, n), VLOADH_T(p, n), VSTORE_T(p, v, n) for n < VL values,
 *   MV_NF(R), MV_NR, DN_NW(R), DN_NR (register tile shapes), KNAME, KISA,
 *   optionally DN8_NW (vectors of the 8-row f16 down tile; 0 = none).
 *
 * Memory traffic is the cost (the FFN is bandwidth bound): each weight
 * byte is read from DRAM once per call. Rows are blocked in registers
 * (accumulators = tile features x tile rows, sized to the register file);
 * when rows exceed one block, the weight tile just read is reused from
 * L1/L2 for the next block.
 */
#ifndef FFN_KERN_TMPL_H
#define FFN_KERN_TMPL_H

#include <stdint.h>
#include <string.h>

#include "ffn_priv.h"

#define AI static inline __attribute__((always_inline))

/*
 * Several rows are compute bound: the prefetchers then fall behind and
 * DRAM waits add to the FMA time instead of overlapping it. mv_tile's
 * first row block prefetches each weight row MV_PFD bytes ahead (measured
 * 8 rows, H 4096 x 14336: 1024, 2048 and 4096 B all ~7% faster than none;
 * 2048 B into L1 best).
 */
#ifndef MV_PFD
#define MV_PFD 2048
#endif

AI V
ldw(const uint8_t *row, size_t h, int f16)
{
	return f16 ? VLOADH((const uint16_t *)row + h) :
		     VLOADF((const float *)row + h);
}

AI V
ldw_t(const uint8_t *row, size_t h, unsigned n, int f16)
{
	return f16 ? VLOADH_T((const uint16_t *)row + h, n) :
		     VLOADF_T((const float *)row + h, n);
}

/*
 * f16 weights, two or more row blocks: the first block reads the tile's
 * weights from DRAM and the later ones re-read them from cache, so with
 * MV_PFD prefetching DRAM was busy in the first block and idle after it.
 * Instead every block prefetches its share of the next tile's rows (the
 * next row of each chunk, contiguous with the current one), one line at
 * a time spread evenly over its h loop, so the weight streams flow at an
 * even rate while the FMAs run. Measured (8 rows, gate alone,
 * interleaved runs against MV_PFD in block 0): see ffn_kern_avx512.c.
 * f32 keeps MV_PFD (the spread prefetch measured 1.03-1.15x there), and
 * so does AVX2 (not measured there): MV_PFN is set by ffn_kern_avx512.c.
 */
#ifndef MV_PFN
#define MV_PFN 0
#endif

/*
 * With the spread prefetch (MV_PFN: f16, two or more row blocks) a tile
 * takes NF adjacent weight rows, one contiguous NF x H block, instead of
 * row j of NF far-apart chunks: the next tile, which the blocks prefetch
 * between them, is then the next contiguous block. Set by
 * ffn_kern_avx512.c, where it was measured (see there); one row keeps
 * its chunked streams (mv_streams), and so do one row block and f32,
 * where adjacent rows measured slower.
 */
#ifndef MV_ADJ
#define MV_ADJ 0
#endif

/*
 * Order of a tile step's loads. 0: the NR x vectors, then each weight
 * vector in turn (NF x NR accumulators + NR + 1 registers). 1: the NF
 * weight vectors, then each x vector in turn (+ NF + 1), which lets
 * AVX2's 16 ymm hold a 3 x 4 tile: 7 loads per 12 FMAs where its 1 x 8
 * tile took 9 per 8 (measured on Zen 5 running the AVX2 set, Gemma
 * 2560 x 10240, 16-128 rows: matvec 1.4-2.2x faster). AVX-512 keeps 0
 * (1 measured 3-15% slower there on its 6 x 4 tile).
 */
#ifndef MV_WFIRST
#define MV_WFIRST 0
#endif

/*
 * out[j * ostride + i * fs] = W_i . x[j] for NF weight rows W_i rs bytes
 * apart and NR input rows. pf = nb << 8 | b: row block b of nb (nb 0: no
 * prefetch); the next tile's rows start NF * rs (MV_ADJ: adjacent rows)
 * or rs / fs (chunked: the next row of each chunk) bytes after these.
 */
AI void
mv_tile(const uint8_t *w, size_t rs, unsigned H, int f16,
	const float *const *x, float *out, size_t ostride, size_t fs,
	int pf, const int NF, const int NR)
{
	/* fixed sizes, not VLAs, so the arrays live in registers */
	V acc[8][8];
	const float *xr[8];
	const size_t es = f16 ? 2 : 4, b = pf & 255, nb = (size_t)pf >> 8;
	const int spread = MV_PFN && f16 && nb >= 2;
	const size_t nrow = !spread ? 0 : MV_ADJ ? NF * rs : rs / fs;
	/*
	 * This block's share of the next tile: byte off = (b * H + h) * es
	 * / nb of each row at step h, kept as quotient and remainder so the
	 * loop does no division (two 64-bit divides per step cost more than
	 * the prefetching gained). A line is prefetched when off enters it.
	 */
	const size_t step = VL * es, d = spread ? nb : 1;
	const size_t dq = step / d, dr = step % d;
	size_t off = b * H * es / d, rem = b * H * es % d;
	size_t h;
	int i, j;

#pragma GCC unroll 8
	for (j = 0; j < NR; j++)
		xr[j] = x[j];
#pragma GCC unroll 16
	for (i = 0; i < NF; i++)
#pragma GCC unroll 16
		for (j = 0; j < NR; j++)
			acc[i][j] = VZERO();
	for (h = 0; h + VL <= H; h += VL) {
		V wv[8], xv[8];

		if (spread) {
			if ((off & 63) < dq)
#pragma GCC unroll 8
				for (i = 0; i < NF; i++)
					__builtin_prefetch(w + i * rs + nrow +
							   (off & ~(size_t)63),
							   0, 3);
			off += dq;
			rem += dr;
			if (rem >= d) {
				off++;
				rem -= d;
			}
		} else if (MV_PFD && nb && b == 0) {
#pragma GCC unroll 8
			for (i = 0; i < NF; i++)
				__builtin_prefetch(w + i * rs + MV_PFD + h * es,
						   0, 3);
		}
		if (MV_WFIRST) {
#pragma GCC unroll 8
			for (i = 0; i < NF; i++)
				wv[i] = ldw(w + i * rs, h, f16);
#pragma GCC unroll 8
			for (j = 0; j < NR; j++) {
				xv[0] = VLOADF(xr[j] + h);
#pragma GCC unroll 8
				for (i = 0; i < NF; i++)
					acc[i][j] = VFMA(wv[i], xv[0],
							 acc[i][j]);
			}
			continue;
		}
#pragma GCC unroll 8
		for (j = 0; j < NR; j++)
			xv[j] = VLOADF(xr[j] + h);
#pragma GCC unroll 8
		for (i = 0; i < NF; i++) {
			wv[0] = ldw(w + i * rs, h, f16);

#pragma GCC unroll 8
			for (j = 0; j < NR; j++)
				acc[i][j] = VFMA(wv[0], xv[j], acc[i][j]);
		}
	}
	if (h < H) {
		unsigned n = H - h;
		V xv[8];

#pragma GCC unroll 8
		for (j = 0; j < NR; j++)
			xv[j] = VLOADF_T(xr[j] + h, n);
#pragma GCC unroll 8
		for (i = 0; i < NF; i++) {
			V wv = ldw_t(w + i * rs, h, n, f16);

#pragma GCC unroll 8
			for (j = 0; j < NR; j++)
				acc[i][j] = VFMA(wv, xv[j], acc[i][j]);
		}
	}
#pragma GCC unroll 8
	for (i = 0; i < NF; i++)
#pragma GCC unroll 8
		for (j = 0; j < NR; j++)
			out[j * ostride + i * fs] = VREDUCE(acc[i][j]);
}

#ifndef S_STREAMS
#define S_STREAMS 4
#endif

/*
 * One input row: S_STREAMS rows rs bytes apart, two accumulators each
 * (8 independent FMA chains), out[i * os]. matvec() takes the rows from
 * S_STREAMS far-apart chunks of the matrix, so each is one long sequential
 * stream across many rows. Rows next to each other instead make streams
 * one row long (8 KiB at H 4096 f16), which the hardware prefetchers
 * restart at every row: measured (Zen 5, H 4096 x 14336) 8 adjacent rows
 * ran f16 at 24 GB/s, 4 chunked streams at 31 GB/s; f32 29 -> 35 GB/s.
 * 2, 3, 6, 8 or 16 streams were slower than 4.
 */
AI void
mv_streams(const uint8_t *w, size_t rs, unsigned H, int f16, const float *x,
	   float *out, size_t os)
{
	V acc[S_STREAMS], acc2[S_STREAMS];
	size_t h;
	int i;

#pragma GCC unroll 8
	for (i = 0; i < S_STREAMS; i++)
		acc[i] = acc2[i] = VZERO();
	for (h = 0; h + 2 * VL <= H; h += 2 * VL) {
		V x0 = VLOADF(x + h), x1 = VLOADF(x + h + VL);

#pragma GCC unroll 8
		for (i = 0; i < S_STREAMS; i++) {
			acc[i] = VFMA(ldw(w + i * rs, h, f16), x0, acc[i]);
			acc2[i] = VFMA(ldw(w + i * rs, h + VL, f16), x1,
				       acc2[i]);
		}
	}
	if (h + VL <= H) {
		V x0 = VLOADF(x + h);

#pragma GCC unroll 8
		for (i = 0; i < S_STREAMS; i++)
			acc[i] = VFMA(ldw(w + i * rs, h, f16), x0, acc[i]);
		h += VL;
	}
	if (h < H) {
		unsigned n = H - h;
		V x0 = VLOADF_T(x + h, n);

#pragma GCC unroll 8
		for (i = 0; i < S_STREAMS; i++)
			acc2[i] = VFMA(ldw_t(w + i * rs, h, n, f16), x0,
				       acc2[i]);
	}
#pragma GCC unroll 8
	for (i = 0; i < S_STREAMS; i++)
		out[i * os] = VREDUCE(acc[i] + acc2[i]);
}

#define MV_CASES(F16)							\
	case 0xf1: mv_streams(w, rs, H, F16, x[0], out, fs); break;	\
	case 0x61: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 6, 1); break; \
	case 0x62: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 6, 2); break; \
	case 0x63: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 6, 3); break; \
	case 0x64: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 6, 4); break; \
	case 0x31: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 3, 1); break; \
	case 0x32: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 3, 2); break; \
	case 0x33: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 3, 3); break; \
	case 0x34: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 3, 4); break; \
	case 0x41: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 4, 1); break; \
	case 0x42: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 4, 2); break; \
	case 0x43: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 4, 3); break; \
	case 0x44: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 4, 4); break; \
	case 0x21: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 2, 1); break; \
	case 0x22: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 2, 2); break; \
	case 0x23: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 2, 3); break; \
	case 0x24: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 2, 4); break; \
	case 0x25: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 2, 5); break; \
	case 0x26: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 2, 6); break; \
	case 0x27: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 2, 7); break; \
	case 0x28: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 2, 8); break; \
	case 0x11: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 1, 1); break; \
	case 0x12: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 1, 2); break; \
	case 0x13: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 1, 3); break; \
	case 0x14: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 1, 4); break; \
	case 0x15: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 1, 5); break; \
	case 0x16: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 1, 6); break; \
	case 0x17: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 1, 7); break; \
	case 0x18: mv_tile(w, rs, H, F16, x, out, os, fs, pf, 1, 8); break; \
	default: break;

static void
mv_f32(int sel, const uint8_t *w, size_t rs, unsigned H,
       const float *const *x, float *out, size_t os, size_t fs)
{
	int pf = sel >> 8;

	switch (sel & 0xff) {
	MV_CASES(0)
	}
}

static void
mv_f16(int sel, const uint8_t *w, size_t rs, unsigned H,
       const float *const *x, float *out, size_t os, size_t fs)
{
	int pf = sel >> 8;

	switch (sel & 0xff) {
	MV_CASES(1)
	}
}

static void
matvec(const struct ffn_mat *w, const float *const *x, unsigned R,
       float *out, size_t ostride)
{
	void (*mv)(int, const uint8_t *, size_t, unsigned,
		   const float *const *, float *, size_t, size_t) =
		w->dtype == FFN_DT_F16 ? mv_f16 : mv_f32;
	const uint8_t *base = w->data;
	const size_t rb = w->row_bytes;
	const unsigned nf = w->rows, H = w->cols;
	const unsigned NF = R == 1 ? S_STREAMS : MV_NF(R);
	const unsigned q = nf / NF;
	/* exactly when mv_tile spreads its prefetch (its nrow relies on it) */
	const int adj = MV_ADJ && MV_PFN && w->dtype == FFN_DT_F16 &&
			R > MV_NR;
	unsigned f, r0;

	/*
	 * A tile's NF weight rows are row j of NF far-apart chunks (rows
	 * i * q + j), so each is one long sequential stream (see mv_streams);
	 * with adj, rows f * NF .. f * NF + NF - 1 (see MV_ADJ).
	 * Features outermost: a weight row is fetched once for all rows.
	 */
	for (f = 0; f < q; f++) {
		const size_t tw = adj ? (size_t)f * NF : f;
		const size_t trs = adj ? rb : q * rb, tfs = adj ? 1 : q;

		if (R == 1) {
			mv(0xf1, base + f * rb, q * rb, H, x, out + f, 0, q);
			continue;
		}
		for (r0 = 0; r0 < R; r0 += MV_NR) {
			unsigned nr = R - r0 < MV_NR ? R - r0 : MV_NR;

			mv((int)(((R + MV_NR - 1) / MV_NR << 8 | r0 / MV_NR)
				 << 8 | NF << 4 | nr),
			   base + tw * rb, trs, H,
			   x + r0, out + r0 * ostride + tw, ostride, tfs);
		}
	}
	/* the nf % NF rows left over, one at a time */
	for (f = NF * q; f < nf; f++)
		for (r0 = 0; r0 < R; r0 += MV_NR) {
			unsigned nr = R - r0 < MV_NR ? R - r0 : MV_NR;

			mv((int)(1 << 4 | nr), base + f * rb, rb, H, x + r0,
			   out + r0 * ostride + f, ostride, 1);
		}
}

/*
 * y[j][h .. h + NW*VL) (+)= Σ_{f < fc} a[j][f] · D[f][h ..] for NR rows.
 * tail > 0: a single partial vector of tail values (NW must be 1).
 */
AI void
dn_tile(const uint8_t *d, size_t rb, unsigned fc, size_t h, int f16,
	const float *a, size_t as, float *const *y, int first, unsigned tail,
	const int NW, const int NR)
{
	V acc[8][8];
	unsigned f;
	int j, k;

#pragma GCC unroll 8
	for (j = 0; j < NR; j++)
#pragma GCC unroll 8
		for (k = 0; k < NW; k++)
			acc[j][k] = first ? VZERO() :
				    tail ? VLOADF_T(y[j] + h, tail) :
				    VLOADF(y[j] + h + k * VL);
	for (f = 0; f < fc; f++) {
		const uint8_t *row = d + f * rb;
		V wv[8];

#pragma GCC unroll 8
		for (k = 0; k < NW; k++)
			wv[k] = tail ? ldw_t(row, h, tail, f16) :
				ldw(row, h + k * VL, f16);
#pragma GCC unroll 8
		for (j = 0; j < NR; j++) {
			V av = VBCAST(a[j * as + f]);

#pragma GCC unroll 8
			for (k = 0; k < NW; k++)
				acc[j][k] = VFMA(wv[k], av, acc[j][k]);
		}
	}
#pragma GCC unroll 8
	for (j = 0; j < NR; j++)
#pragma GCC unroll 8
		for (k = 0; k < NW; k++) {
			if (tail)
				VSTORE_T(y[j] + h, acc[j][k], tail);
			else
				VSTORE(y[j] + h + k * VL, acc[j][k]);
		}
}

#ifndef DN8_NW
#define DN8_NW 0
#endif
/*
 * 8 rows at once: y[j][h .. h + NW*VL) (+)= sum_f at[f * 8 + j] D[f][h ..],
 * at = the block's activations transposed (one line per 2 features), so
 * each weight vector is loaded and widened once for all 8 rows instead
 * of once per 4-row block. Needs 8 x NW + NW + 1 vector registers (AVX-512:
 * NW = 3). Measured (8 rows, interleaved runs against 4 x 4 tiles): f16
 * down 0.91-0.93x at both sizes; f32 1.01-1.10x, so f32 keeps 4 x 4.
 */
AI void
dn_tile8(const uint8_t *d, size_t rb, unsigned fc, size_t h, int f16,
	 const float *at, float *const *y, int first, const int NW)
{
	V acc[8][4];
	unsigned f;
	int j, k;

#pragma GCC unroll 8
	for (j = 0; j < 8; j++)
#pragma GCC unroll 4
		for (k = 0; k < NW; k++)
			acc[j][k] = first ? VZERO() : VLOADF(y[j] + h + k * VL);
	for (f = 0; f < fc; f++) {
		const uint8_t *row = d + f * rb;
		V wv[4];

#pragma GCC unroll 4
		for (k = 0; k < NW; k++)
			wv[k] = ldw(row, h + k * VL, f16);
#pragma GCC unroll 8
		for (j = 0; j < 8; j++) {
			V av = VBCAST(at[f * 8 + j]);

#pragma GCC unroll 4
			for (k = 0; k < NW; k++)
				acc[j][k] = VFMA(wv[k], av, acc[j][k]);
		}
	}
#pragma GCC unroll 8
	for (j = 0; j < 8; j++)
#pragma GCC unroll 4
		for (k = 0; k < NW; k++)
			VSTORE(y[j] + h + k * VL, acc[j][k]);
}

static void
dn8_f16(const uint8_t *d, size_t rb, unsigned fc, size_t h, const float *at,
	float *const *y, int first)
{
	dn_tile8(d, rb, fc, h, 1, at, y, first, DN8_NW);
}

#define DN_ARGS(F16) d, rb, fc, h, F16, a, as, y, first, tail
#define DN_CASES(F16)							\
	case 0x81: dn_tile(DN_ARGS(F16), 8, 1); break;			\
	case 0x41: dn_tile(DN_ARGS(F16), 4, 1); break;			\
	case 0x42: dn_tile(DN_ARGS(F16), 4, 2); break;			\
	case 0x43: dn_tile(DN_ARGS(F16), 4, 3); break;			\
	case 0x44: dn_tile(DN_ARGS(F16), 4, 4); break;			\
	case 0x31: dn_tile(DN_ARGS(F16), 3, 1); break;			\
	case 0x32: dn_tile(DN_ARGS(F16), 3, 2); break;			\
	case 0x33: dn_tile(DN_ARGS(F16), 3, 3); break;			\
	case 0x34: dn_tile(DN_ARGS(F16), 3, 4); break;			\
	case 0x21: dn_tile(DN_ARGS(F16), 2, 1); break;			\
	case 0x22: dn_tile(DN_ARGS(F16), 2, 2); break;			\
	case 0x23: dn_tile(DN_ARGS(F16), 2, 3); break;			\
	case 0x24: dn_tile(DN_ARGS(F16), 2, 4); break;			\
	case 0x25: dn_tile(DN_ARGS(F16), 2, 5); break;			\
	case 0x26: dn_tile(DN_ARGS(F16), 2, 6); break;			\
	case 0x27: dn_tile(DN_ARGS(F16), 2, 7); break;			\
	case 0x28: dn_tile(DN_ARGS(F16), 2, 8); break;			\
	case 0x11: dn_tile(DN_ARGS(F16), 1, 1); break;			\
	case 0x12: dn_tile(DN_ARGS(F16), 1, 2); break;			\
	case 0x13: dn_tile(DN_ARGS(F16), 1, 3); break;			\
	case 0x14: dn_tile(DN_ARGS(F16), 1, 4); break;			\
	case 0x15: dn_tile(DN_ARGS(F16), 1, 5); break;			\
	case 0x16: dn_tile(DN_ARGS(F16), 1, 6); break;			\
	case 0x17: dn_tile(DN_ARGS(F16), 1, 7); break;			\
	case 0x18: dn_tile(DN_ARGS(F16), 1, 8); break;			\
	default: break;

static void
dn_f32(int sel, const uint8_t *d, size_t rb, unsigned fc, size_t h,
       const float *a, size_t as, float *const *y, int first, unsigned tail)
{
	switch (sel) {
	DN_CASES(0)
	}
}

static void
dn_f16(int sel, const uint8_t *d, size_t rb, unsigned fc, size_t h,
       const float *a, size_t as, float *const *y, int first, unsigned tail)
{
	switch (sel) {
	DN_CASES(1)
	}
}

/*
 * Features per block. A block is FB contiguous rows; the h-chunk loop
 * walks them as FB interleaved narrow streams (each row is read one chunk
 * at a time across the block's whole pass), which hardware prefetchers
 * follow poorly. Each chunk therefore prefetches the lines DN_PFD bytes
 * further along each of the block's rows (past the row end: the next
 * block's rows), so the DRAM requests are in flight while the FMAs of
 * the chunks between run. Measured (8 rows, H 4096 x 14336, interleaved
 * runs): down 0.78-0.93x the time of prefetching the next block
 * sequentially into L2 spread over the chunks (which measured the same
 * as no prefetch at all); 256, 512 and 1024 B all similar, 512 best.
 */
#ifndef DN_FB
#define DN_FB 16u
#endif
#ifndef DN_PFD
#define DN_PFD 512u
#endif

/* Lines starting in [off, off + len) of a block's fc rows, DN_PFD ahead. */
static inline void
prefetch_ahead(const uint8_t *d, size_t rb, unsigned fc, unsigned nfc,
	       size_t off, size_t len, size_t row_len)
{
	unsigned f;
	size_t o;

	if (!DN_PFD)
		return;
	off += DN_PFD;
	if (off >= row_len) {
		d += (size_t)fc * rb;
		fc = nfc;
		off -= row_len;
		if (off >= row_len)
			return;
	}
	/* once per line: AVX2 f16 chunks are 16 B */
	for (f = 0; f < fc; f++)
		for (o = (64 - (off & 63)) & 63; o < len; o += 64)
			__builtin_prefetch(d + f * rb + off + o, 0, 3);
}

/*
 * One row: y (H floats, in L1) (+)= sum_i a[i * as] D_i for S_STREAMS
 * rows D_i rs bytes apart, taken from far-apart chunks as in mv_streams
 * (measured: 8 adjacent rows f16 28 GB/s, 4 chunked streams 37 GB/s).
 */
AI void
dn_streams(const uint8_t *d, size_t rs, unsigned H, int f16, const float *a,
	   size_t as, float *y, int first)
{
	V av[S_STREAMS];
	size_t h;
	int i;

#pragma GCC unroll 8
	for (i = 0; i < S_STREAMS; i++)
		av[i] = VBCAST(a[i * as]);
	for (h = 0; h + VL <= H; h += VL) {
		V a0 = first ? VZERO() : VLOADF(y + h), a1 = VZERO();

		/* two chains: no FMA waits for the one before it */
#pragma GCC unroll 8
		for (i = 0; i + 1 < S_STREAMS; i += 2) {
			a0 = VFMA(ldw(d + i * rs, h, f16), av[i], a0);
			a1 = VFMA(ldw(d + (i + 1) * rs, h, f16), av[i + 1], a1);
		}
		if (S_STREAMS % 2)
			a0 = VFMA(ldw(d + (S_STREAMS - 1) * rs, h, f16),
				  av[S_STREAMS - 1], a0);
		VSTORE(y + h, a0 + a1);
	}
	if (h < H) {
		unsigned n = H - h;
		V a0 = first ? VZERO() : VLOADF_T(y + h, n);

#pragma GCC unroll 8
		for (i = 0; i < S_STREAMS; i++)
			a0 = VFMA(ldw_t(d + i * rs, h, n, f16), av[i], a0);
		VSTORE_T(y + h, a0, n);
	}
}

/* One row of D at a time (the nf % S_STREAMS left over; no padding). */
AI void
dn_single(const uint8_t *row, unsigned H, int f16, float av, float *y,
	  int first)
{
	V a = VBCAST(av);
	size_t h;

	for (h = 0; h + VL <= H; h += VL)
		VSTORE(y + h, VFMA(ldw(row, h, f16), a,
				   first ? VZERO() : VLOADF(y + h)));
	if (h < H)
		VSTORE_T(y + h, VFMA(ldw_t(row, h, H - h, f16), a,
				     first ? VZERO() : VLOADF_T(y + h, H - h)),
			 H - h);
}

AI void
dn_row1(const uint8_t *d, size_t rb, unsigned nf, unsigned H, int f16,
	const float *a, float *y)
{
	unsigned q = nf / S_STREAMS, f;

	/* row j of chunk i is row i * q + j */
	for (f = 0; f < q; f++)
		dn_streams(d + f * rb, q * rb, H, f16, a + f, q, y, f == 0);
	for (f = S_STREAMS * q; f < nf; f++)
		dn_single(d + (size_t)f * rb, H, f16, a[f], y, f == 0);
}

static void
dn1_f32(const uint8_t *d, size_t rb, unsigned nf, unsigned H, const float *a,
	float *y)
{
	dn_row1(d, rb, nf, H, 0, a, y);
}

static void
dn1_f16(const uint8_t *d, size_t rb, unsigned nf, unsigned H, const float *a,
	float *y)
{
	dn_row1(d, rb, nf, H, 1, a, y);
}

static void
down(const struct ffn_mat *dm, const float *a, size_t as, unsigned R,
     float *const *y)
{
	void (*dn)(int, const uint8_t *, size_t, unsigned, size_t,
		   const float *, size_t, float *const *, int, unsigned) =
		dm->dtype == FFN_DT_F16 ? dn_f16 : dn_f32;
	const uint8_t *base = dm->data;
	const size_t rb = dm->row_bytes;
	const unsigned nf = dm->rows, H = dm->cols;
	const unsigned NW = DN_NW(R);
	const size_t es = dm->dtype == FFN_DT_F16 ? 2 : 4;
	float at[DN_FB * 8];
	unsigned f0, r0;
	size_t h;

	if (R == 1) {
		(dm->dtype == FFN_DT_F16 ? dn1_f16 : dn1_f32)(base, rb, nf, H,
							      a, y[0]);
		return;
	}
	for (f0 = 0; f0 < nf; f0 += DN_FB) {
		unsigned fc = nf - f0 < DN_FB ? nf - f0 : DN_FB;
		int first = f0 == 0;
		const uint8_t *d = base + f0 * rb;
		const float *af = a + f0;
		unsigned nfc = nf - f0 - fc < DN_FB ? nf - f0 - fc : DN_FB;
		unsigned r8 = DN8_NW && es == 2 ? R & ~7u : 0, f, j;
		size_t h8 = 0;

		/* rows in groups of 8 over the widest chunks first */
		for (r0 = 0; r0 < r8; r0 += 8) {
			for (f = 0; f < fc; f++)
				for (j = 0; j < 8; j++)
					at[f * 8 + j] = af[(r0 + j) * as + f];
			for (h = 0; h + DN8_NW * VL <= H; h += DN8_NW * VL) {
				if (r0 == 0)
					prefetch_ahead(d, rb, fc, nfc, h * es,
						       DN8_NW * VL * es,
						       (size_t)H * es);
				dn8_f16(d, rb, fc, h, at, y + r0, first);
			}
			h8 = h;
		}
		for (h = 0; r8 < R && h + NW * VL <= H; h += NW * VL) {
			if (r8 == 0)
				prefetch_ahead(d, rb, fc, nfc, h * es,
					       NW * VL * es, (size_t)H * es);
			for (r0 = r8; r0 < R; r0 += DN_NR) {
				unsigned nr = R - r0 < DN_NR ? R - r0 : DN_NR;

				dn((int)(NW << 4 | nr), d, rb, fc, h,
				   af + r0 * as, as, y + r0, first, 0);
			}
		}
		/* rows of the 8-row groups past their last whole chunk */
		for (; h8 + VL <= H && r8; h8 += VL)
			for (r0 = 0; r0 < r8; r0 += DN_NR)
				dn((int)(1 << 4 | DN_NR), d, rb, fc, h8,
				   af + r0 * as, as, y + r0, first, 0);
		for (; r8 < R && h + VL <= H; h += VL)
			for (r0 = r8; r0 < R; r0 += DN_NR) {
				unsigned nr = R - r0 < DN_NR ? R - r0 : DN_NR;

				dn((int)(1 << 4 | nr), d, rb, fc, h,
				   af + r0 * as, as, y + r0, first, 0);
			}
		if (h8 < H && r8)
			for (r0 = 0; r0 < r8; r0 += DN_NR)
				dn((int)(1 << 4 | DN_NR), d, rb, fc, h8,
				   af + r0 * as, as, y + r0, first,
				   (unsigned)(H - h8));
		if (r8 < R && h < H)
			for (r0 = r8; r0 < R; r0 += DN_NR) {
				unsigned nr = R - r0 < DN_NR ? R - r0 : DN_NR;

				dn((int)(1 << 4 | nr), d, rb, fc, h,
				   af + r0 * as, as, y + r0, first,
				   (unsigned)(H - h));
			}
	}
}

#include "ffn_mm_tmpl.h"
#include "ffn_act_tmpl.h"

const struct ffn_kernels KNAME = {
	.isa = KISA,
	.name = KSTR,
	.matvec = matvec,
	.down = down,
	.mm_pack = mm_pack,
	.matmat = matmat,
	.mm_down = mm_down,
	.mm_align = VL,
	.mm_min_rows = MM_MIN_ROWS,
	.act_mul = act_mul,
};

#endif /* FFN_KERN_TMPL_H */
