/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Dense FFN kernels written once over a vector abstraction; included by
 * ffn_kern_avx2.c and ffn_kern_avx512.c, each compiled for its ISA, which
 * define before including:
 *   V, VL (floats per vector), VZERO(), VLOADF(p), VLOADH(p) (f16 -> f32),
 *   VFMA(a, b, c) = a*b + c, VBCAST(f), VSTORE(p, v), VREDUCE(v),
 *   VLOADF_T(p, n), VLOADH_T(p, n), VSTORE_T(p, v, n) for n < VL values,
 *   MV_NF(R), MV_NR, DN_NW(R), DN_NR (register tile shapes), KNAME, KISA.
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

/* out[j * ostride + i] = W[i] . x[j] for NF weight rows, NR input rows. */
AI void
mv_tile(const uint8_t *w, size_t rb, unsigned H, int f16,
	const float *const *x, float *out, size_t ostride, const int NF,
	const int NR)
{
	V acc[NF][NR];
	const float *xr[NR];
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
		V xv[NR];

#pragma GCC unroll 8
		for (j = 0; j < NR; j++)
			xv[j] = VLOADF(xr[j] + h);
#pragma GCC unroll 8
		for (i = 0; i < NF; i++) {
			V wv = ldw(w + i * rb, h, f16);

#pragma GCC unroll 8
			for (j = 0; j < NR; j++)
				acc[i][j] = VFMA(wv, xv[j], acc[i][j]);
		}
	}
	if (h < H) {
		unsigned n = H - h;
		V xv[NR];

#pragma GCC unroll 8
		for (j = 0; j < NR; j++)
			xv[j] = VLOADF_T(xr[j] + h, n);
#pragma GCC unroll 8
		for (i = 0; i < NF; i++) {
			V wv = ldw_t(w + i * rb, h, n, f16);

#pragma GCC unroll 8
			for (j = 0; j < NR; j++)
				acc[i][j] = VFMA(wv, xv[j], acc[i][j]);
		}
	}
#pragma GCC unroll 8
	for (i = 0; i < NF; i++)
#pragma GCC unroll 8
		for (j = 0; j < NR; j++)
			out[j * ostride + i] = VREDUCE(acc[i][j]);
}

#define MV_CASES(F16)							\
	case 0x81: mv_tile(w, rb, H, F16, x, out, os, 8, 1); break;	\
	case 0x41: mv_tile(w, rb, H, F16, x, out, os, 4, 1); break;	\
	case 0x42: mv_tile(w, rb, H, F16, x, out, os, 4, 2); break;	\
	case 0x43: mv_tile(w, rb, H, F16, x, out, os, 4, 3); break;	\
	case 0x44: mv_tile(w, rb, H, F16, x, out, os, 4, 4); break;	\
	case 0x21: mv_tile(w, rb, H, F16, x, out, os, 2, 1); break;	\
	case 0x22: mv_tile(w, rb, H, F16, x, out, os, 2, 2); break;	\
	case 0x23: mv_tile(w, rb, H, F16, x, out, os, 2, 3); break;	\
	case 0x24: mv_tile(w, rb, H, F16, x, out, os, 2, 4); break;	\
	case 0x25: mv_tile(w, rb, H, F16, x, out, os, 2, 5); break;	\
	case 0x26: mv_tile(w, rb, H, F16, x, out, os, 2, 6); break;	\
	case 0x27: mv_tile(w, rb, H, F16, x, out, os, 2, 7); break;	\
	case 0x28: mv_tile(w, rb, H, F16, x, out, os, 2, 8); break;	\
	case 0x11: mv_tile(w, rb, H, F16, x, out, os, 1, 1); break;	\
	case 0x12: mv_tile(w, rb, H, F16, x, out, os, 1, 2); break;	\
	case 0x13: mv_tile(w, rb, H, F16, x, out, os, 1, 3); break;	\
	case 0x14: mv_tile(w, rb, H, F16, x, out, os, 1, 4); break;	\
	case 0x15: mv_tile(w, rb, H, F16, x, out, os, 1, 5); break;	\
	case 0x16: mv_tile(w, rb, H, F16, x, out, os, 1, 6); break;	\
	case 0x17: mv_tile(w, rb, H, F16, x, out, os, 1, 7); break;	\
	case 0x18: mv_tile(w, rb, H, F16, x, out, os, 1, 8); break;	\
	default: break;

static void
mv_f32(int sel, const uint8_t *w, size_t rb, unsigned H,
       const float *const *x, float *out, size_t os)
{
	switch (sel) {
	MV_CASES(0)
	}
}

static void
mv_f16(int sel, const uint8_t *w, size_t rb, unsigned H,
       const float *const *x, float *out, size_t os)
{
	switch (sel) {
	MV_CASES(1)
	}
}

static void
matvec(const struct ffn_mat *w, const float *const *x, unsigned R,
       float *out, size_t ostride)
{
	void (*mv)(int, const uint8_t *, size_t, unsigned,
		   const float *const *, float *, size_t) =
		w->dtype == FFN_DT_F16 ? mv_f16 : mv_f32;
	const uint8_t *base = w->data;
	const size_t rb = w->row_bytes;
	const unsigned nf = w->rows, H = w->cols;
	const unsigned NF = MV_NF(R);
	unsigned f, r0;

	/* features outermost: a weight row is fetched once for all rows */
	for (f = 0; f < nf;) {
		unsigned tf = nf - f >= NF ? NF : 1;

		for (r0 = 0; r0 < R; r0 += MV_NR) {
			unsigned nr = R - r0 < MV_NR ? R - r0 : MV_NR;

			mv((int)(tf << 4 | nr), base + f * rb, rb, H, x + r0,
			   out + r0 * ostride + f, ostride);
		}
		f += tf;
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
	V acc[NR][NW];
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
		V wv[NW];

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

#define DN_ARGS(F16) d, rb, fc, h, F16, a, as, y, first, tail
#define DN_CASES(F16)							\
	case 0x81: dn_tile(DN_ARGS(F16), 8, 1); break;			\
	case 0x41: dn_tile(DN_ARGS(F16), 4, 1); break;			\
	case 0x42: dn_tile(DN_ARGS(F16), 4, 2); break;			\
	case 0x43: dn_tile(DN_ARGS(F16), 4, 3); break;			\
	case 0x44: dn_tile(DN_ARGS(F16), 4, 4); break;			\
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

/* Features per block: the block's rows are the concurrent DRAM streams. */
#define DN_FB 32u

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
	unsigned f0, r0;
	size_t h;

	for (f0 = 0; f0 < nf; f0 += DN_FB) {
		unsigned fc = nf - f0 < DN_FB ? nf - f0 : DN_FB;
		int first = f0 == 0;
		const uint8_t *d = base + f0 * rb;
		const float *af = a + f0;

		for (h = 0; h + NW * VL <= H; h += NW * VL)
			for (r0 = 0; r0 < R; r0 += DN_NR) {
				unsigned nr = R - r0 < DN_NR ? R - r0 : DN_NR;

				dn((int)(NW << 4 | nr), d, rb, fc, h,
				   af + r0 * as, as, y + r0, first, 0);
			}
		for (; h + VL <= H; h += VL)
			for (r0 = 0; r0 < R; r0 += DN_NR) {
				unsigned nr = R - r0 < DN_NR ? R - r0 : DN_NR;

				dn((int)(1 << 4 | nr), d, rb, fc, h,
				   af + r0 * as, as, y + r0, first, 0);
			}
		if (h < H)
			for (r0 = 0; r0 < R; r0 += DN_NR) {
				unsigned nr = R - r0 < DN_NR ? R - r0 : DN_NR;

				dn((int)(1 << 4 | nr), d, rb, fc, h,
				   af + r0 * as, as, y + r0, first,
				   (unsigned)(H - h));
			}
	}
}

const struct ffn_kernels KNAME = {
	.isa = KISA,
	.name = KSTR,
	.matvec = matvec,
	.down = down,
};

#endif /* FFN_KERN_TMPL_H */
