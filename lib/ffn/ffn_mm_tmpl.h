/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Many rows at once (issue 14): gate and up as a matrix product with the
 * batch's rows in the vector lanes. Included by ffn_kern_tmpl.h (so by
 * each ISA's file) after its vector macros, with the includer's
 *   MM_NV            row vectors per sweep (most),
 *   MM_NF(nv)        weight rows per tile for nv row vectors,
 *   MM_MIN_ROWS      rows from which ffn_dense.c takes this path.
 *
 * Why: from about 16 rows the FMAs, not DRAM, set the time, and the dot
 * product tiles of mv_tile then wait on L2 (each step loads its weight
 * and x vectors from L2: 10 lines per 24 FMAs for f32 on AVX-512, at
 * about 50% of FMA peak). Here the input is packed once per pass,
 * transposed (xt[h * rp + r], rp = rows rounded up to VL), and a tile
 * of NF weight rows x NV row vectors keeps NF x NV accumulators: each
 * step loads NV vectors of xt (from L1/L2, the same for every tile) and
 * broadcasts NF weights straight from their rows (f32) or from an
 * L1 block they were widened into (f16). Each weight is read from DRAM
 * once per sweep of MM_NV x VL rows, as NF sequential streams, and there
 * is no horizontal sum: lane r of acc[i][v] is output row v * VL + r.
 * H is taken in chunks whose xt slice stays in L2 (MM_XT_BYTES); the
 * accumulators go to ot between chunks.
 */
#ifndef FFN_MM_TMPL_H
#define FFN_MM_TMPL_H

/* xt bytes one chunk of a sweep reads (kept in L2 while the weight rows
 * stream past). */
#ifndef MM_XT_BYTES
#define MM_XT_BYTES (256u << 10)
#endif
/* f16 weights: columns widened per block (NF x MM_KB floats in L1). */
#ifndef MM_KB
#define MM_KB 256u
#endif
/*
 * Bytes ahead of the current column each weight row is prefetched, for
 * a tile of nv row vectors: 512, or 1024 for f32 tiles of 4 vectors.
 * bench-ffn --kernels (matmat from DRAM, 10240 x 2560, alternating
 * builds): against 1024 everywhere, 512 is 8% faster for f32 at 16-32
 * rows and 9-10% for f16 at every row count on AVX-512, and 2.5-4%
 * slower for f32 at 64-128 rows; the same within noise on AVX2 (whose
 * tiles have at most 3 vectors). 512 bytes are still at least 0.3 us of
 * a tile's FMAs ahead (about three DRAM latencies). Why f32 with 4
 * vectors wants more is not known (docs/PERFORMANCE.md, 2026-12-07).
 * Tried: a second prefetch per row into L2, 2-8 KiB ahead: f32 from
 * DRAM 0-7% slower at 16-64 rows (AVX-512, H 2560 and 4096).
 */
#ifndef MM_PFD
#define MM_PFD(f16, nv) (!(f16) && (nv) >= 4 ? 1024u : 512u)
#endif

#define MM_FMAX 16
#define MM_VMAX 4

/*
 * ot[i * rp + v * VL + l] (+)= Σ_{k < kn} W_i[k] · xt[k * NV * VL + v * VL
 * + l] for NF rows W_i rs bytes apart (w at column k0 of the first), NV
 * row vectors; first: the chunk at column 0 (accumulators start at zero).
 */
AI void
mm_tile(const uint8_t *w, size_t rs, unsigned kn, int f16, const float *xt,
	size_t rp, float *ot, int first, const int NF, const int NV)
{
	const size_t xs = (size_t)NV * VL;
	V acc[MM_FMAX][MM_VMAX];
	const float *wr[MM_FMAX];
	float wb[MM_FMAX * MM_KB] __attribute__((aligned(64)));
	unsigned k0, k;
	int i, v;

#pragma GCC unroll 16
	for (i = 0; i < NF; i++)
#pragma GCC unroll 4
		for (v = 0; v < NV; v++)
			acc[i][v] = first ? VZERO() :
				    VLOADF(ot + i * rp + v * VL);
	for (k0 = 0; k0 < kn; k0 += MM_KB) {
		const unsigned kb = kn - k0 < MM_KB ? kn - k0 : MM_KB;
		const float *x = xt + k0 * xs;

		if (f16) {
			/* widened once here, broadcast NV times below */
#pragma GCC unroll 16
			for (i = 0; i < NF; i++) {
				const uint16_t *s = (const uint16_t *)(w +
					i * rs) + k0;
				float *d = wb + i * MM_KB;

				for (k = 0; k + VL <= kb; k += VL) {
					if ((k & 31) == 0)
						__builtin_prefetch(
							(const uint8_t *)(s + k)
							+ MM_PFD(f16, NV), 0,
							3);
					VSTORE(d + k, VLOADH(s + k));
				}
				if (k < kb)
					VSTORE(d + k, VLOADH_T(s + k, kb - k));
				wr[i] = d;
			}
		} else {
#pragma GCC unroll 16
			for (i = 0; i < NF; i++)
				wr[i] = (const float *)(w + i * rs) + k0;
		}
		for (k = 0; k < kb; k++, x += xs) {
			V xv[MM_VMAX];

			/* one line of each f32 row per 16 columns */
			if (!f16 && (k & 15) == 0)
#pragma GCC unroll 16
				for (i = 0; i < NF; i++)
					__builtin_prefetch((const uint8_t *)
							   (wr[i] + k) +
							   MM_PFD(f16, NV),
							   0, 3);
#pragma GCC unroll 4
			for (v = 0; v < NV; v++)
				xv[v] = VLOADF(x + v * VL);
#pragma GCC unroll 16
			for (i = 0; i < NF; i++) {
				V b = VBCAST(wr[i][k]);

#pragma GCC unroll 4
				for (v = 0; v < NV; v++)
					acc[i][v] = VFMA(b, xv[v], acc[i][v]);
			}
		}
	}
#pragma GCC unroll 16
	for (i = 0; i < NF; i++)
#pragma GCC unroll 4
		for (v = 0; v < NV; v++)
			VSTORE(ot + i * rp + v * VL, acc[i][v]);
}

#define MM_ARGS(F16) w, rs, kn, F16, xt, rp, ot, first
#define MM_SEL(F16)							\
	do {								\
		if (nf == 1)						\
			switch (nv) {					\
			case 1: mm_tile(MM_ARGS(F16), 1, 1); break;	\
			case 2: mm_tile(MM_ARGS(F16), 1, 2); break;	\
			case 3: mm_tile(MM_ARGS(F16), 1, 3); break;	\
			default: mm_tile(MM_ARGS(F16), 1, 4); break;	\
			}						\
		else							\
			switch (nv) {					\
			case 1: mm_tile(MM_ARGS(F16), MM_NF(1), 1);	\
				break;					\
			case 2: mm_tile(MM_ARGS(F16), MM_NF(2), 2);	\
				break;					\
			case 3: mm_tile(MM_ARGS(F16), MM_NF(3), 3);	\
				break;					\
			default:					\
				if (MM_NV >= 4)				\
					mm_tile(MM_ARGS(F16), MM_NF(4), 4); \
				break;					\
			}						\
	} while (0)

/* nf: 1 or MM_NF(nv) */
static void
mm_f32(unsigned nf, unsigned nv, const uint8_t *w, size_t rs, unsigned kn,
       const float *xt, size_t rp, float *ot, int first)
{
	MM_SEL(0);
}

static void
mm_f16(unsigned nf, unsigned nv, const uint8_t *w, size_t rs, unsigned kn,
       const float *xt, size_t rp, float *ot, int first)
{
	MM_SEL(1);
}

/*
 * Vectors in the sweep that starts at vector v0 of nvt: as even as the
 * fewest sweeps of at most MM_NV allow (16 vectors with MM_NV 3 are
 * 3+3+3+3+2+2, not 3+3+3+3+3+1, whose last sweep of one vector reads
 * all the weights for 8 rows at a poor load-to-FMA ratio).
 */
static inline unsigned
mm_sweep(unsigned nvt, unsigned v0)
{
	const unsigned ns = (nvt + MM_NV - 1) / MM_NV, base = nvt / ns;
	const unsigned extra = nvt % ns;

	/* the first extra sweeps have base + 1 vectors */
	return v0 < extra * (base + 1) ? base + 1 : base;
}

/*
 * xt is packed per sweep: the rows of sweep v0 .. v0 + nv (vectors) are
 * one block of H x nv * VL floats, column k at k * nv * VL, so a sweep
 * reads one contiguous run (no L1 set conflicts from a wide stride, and
 * the prefetchers see one stream). Padding rows are zeros.
 */
static unsigned
mm_pack(const float *const *x, unsigned R, unsigned H, float *xt)
{
	const unsigned rp = (R + VL - 1) / VL * VL, nvt = rp / VL;
	unsigned v0, nv, r, w;
	size_t h;

	for (v0 = 0; v0 < nvt; v0 += nv) {
		float *blk = xt + (size_t)v0 * VL * H;

		nv = mm_sweep(nvt, v0);
		w = nv * VL;
		for (r = 0; r < w; r++) {
			const unsigned row = v0 * VL + r;

			if (row < R)
				for (h = 0; h < H; h++)
					blk[h * w + r] = x[row][h];
			else
				for (h = 0; h < H; h++)
					blk[h * w + r] = 0.0f;
		}
	}
	return rp;
}

static void
matmat(const struct ffn_mat *w, const float *xt, unsigned rp, float *ot)
{
	void (*mm)(unsigned, unsigned, const uint8_t *, size_t, unsigned,
		   const float *, size_t, float *, int) =
		w->dtype == FFN_DT_F16 ? mm_f16 : mm_f32;
	const size_t rb = w->row_bytes, es = w->dtype == FFN_DT_F16 ? 2 : 4;
	const unsigned nf = w->rows, H = w->cols, nvt = rp / VL;
	unsigned v0, nv, nft, kc, k0, kn, f;

	/* row sweeps of MM_NV vectors: the weights are read once per sweep */
	for (v0 = 0; v0 < nvt; v0 += nv) {
		const float *blk = xt + (size_t)v0 * VL * H;

		nv = mm_sweep(nvt, v0);
		nft = MM_NF(nv);
		kc = MM_XT_BYTES / (nv * VL * 4) / MM_KB * MM_KB;
		if (kc == 0)
			kc = MM_KB;
		for (k0 = 0; k0 < H; k0 += kc) {
			const float *xk = blk + (size_t)k0 * nv * VL;

			kn = H - k0 < kc ? H - k0 : kc;
			for (f = 0; f + nft <= nf; f += nft)
				mm(nft, nv, (const uint8_t *)w->data + f * rb +
				   k0 * es, rb, kn, xk, rp,
				   ot + (size_t)f * rp + v0 * VL, k0 == 0);
			for (; f < nf; f++)
				mm(1, nv, (const uint8_t *)w->data + f * rb +
				   k0 * es, rb, kn, xk, rp,
				   ot + (size_t)f * rp + v0 * VL, k0 == 0);
		}
	}
}

/*
 * Down for the same batch: y[r][h] = Σ_f at[f * rp + r] · D[f][h], at the
 * activations as gate and up left them ([nf][rp], a feature's rows
 * contiguous). Vectors run along h (D's rows are contiguous there); a
 * tile is NR rows x NW vectors, each step loads NW weight vectors (once
 * widened for NR rows) and broadcasts NR activations from one run of
 * at. Features go in blocks of MMD_KC, so the tile's y accumulators are
 * loaded and stored once per MMD_KC x NR x NW FMAs, and a block's slice
 * of D (MMD_KC rows x NW vectors) stays in L1 while every row block
 * uses it.
 *
 * The next slice of a block (MMD_KC lines or pairs, one per row, rb
 * apart) is prefetched into L1 by the first tile of this slice, one
 * feature's lines beside that feature's FMAs. As one burst per slice
 * the prefetches stalled on the L1 miss buffers while no FMA ran: 16
 * rows took 1.4-1.5x as long (probe, 10240 x 2560 and 10240 x 4096,
 * AVX-512 f32; 1.1-1.2x on AVX2), and spread out they made no row count
 * measured slower.
 * While few rows share each weight byte (MMD_STREAM_RPB), DRAM is the
 * limit and the prefetchers do not follow slices, so the first tile
 * also takes the next block (MMD_KC contiguous rows) into L2 in order,
 * its share per slice: a further 1.1-1.15x at 16 rows. At more rows it
 * cost up to 2% (docs/PERFORMANCE.md, 2026-12-07).
 *
 * A slice does not stay in L1 for the later row tiles: its MMD_KC rows
 * are rb apart, and with rb a multiple of 1 KiB (H a multiple of 256)
 * their lines fall in at most 8 of L1's 64 sets (4 KiB of address per
 * way). So from MMD_PACK_TILES row tiles on, the first tile also stores
 * the slice, as f32, into a contiguous block on the stack (MMD_KC x NW
 * vectors, 8-16 KiB) that the other tiles read instead: one store per
 * weight vector, and f16 is widened once per slice, not once per tile.
 * AVX2 (3 tiles from 16 rows): 1.07-1.15x at H 2560, 1.25-1.42x at H
 * 4096; AVX-512 from 25 rows: 0.97-1.06x. With two tiles, AVX-512 f32
 * at 16 rows lost up to 5%.
 */
#ifndef MMD_KC
#define MMD_KC 128u
#endif
/* rows per weight byte up to which the next block is streamed into L2
 * (f32: 32 rows, f16: 16) */
#define MMD_STREAM_RPB 8u
/* row tiles per slice from which the first packs the slice for the rest */
#define MMD_PACK_TILES 3u
/*
 * Tried: below 32 rows, the row kernel's down on the activations
 * transposed back. Paired roofline rounds (five Gemma, three Llama):
 * Gemma size 2-6% faster at 16 rows, Llama size 4-15% slower (f32), so
 * mm_down runs from mm_min_rows on (docs/PERFORMANCE.md, session 15).
 */
#define MMD_RMAX 12

/*
 * Weights from column hd of D's rows (rb bytes apart), outputs at column
 * h of y. pf: when not NULL, pfs bytes of it per feature (a line
 * whenever they reach one) go to L2, and the feature's row at column
 * hd + NW * VL (the next slice) to L1. pk: when not NULL, the weight
 * vectors as f32, NW * VL floats per feature (the packed slice).
 */
AI void
mmd_tile(const uint8_t *d, size_t rb, unsigned fc, size_t hd, size_t h,
	 int f16, const float *at, size_t rp, float *const *y, int first,
	 unsigned tail, const uint8_t *pf, size_t pfs, float *pk,
	 const int NW, const int NR)
{
	const size_t sb = NW * VL * (f16 ? 2 : 4), nx = (hd + NW * VL) *
		(f16 ? 2 : 4);
	size_t pc = 0, pe = 0;
	V acc[MMD_RMAX][2];
	unsigned f;
	int j, k;

#pragma GCC unroll 12
	for (j = 0; j < NR; j++)
#pragma GCC unroll 2
		for (k = 0; k < NW; k++)
			acc[j][k] = first ? VZERO() :
				    tail ? VLOADF_T(y[j] + h, tail) :
				    VLOADF(y[j] + h + k * VL);
	for (f = 0; f < fc; f++, d += rb, at += rp) {
		V wv[2];
		size_t o;

		if (pf != NULL) {
			for (pe += pfs; pc < pe; pc += 64)
				__builtin_prefetch(pf + pc, 0, 2);
			for (o = 0; o < sb; o += 64)
				__builtin_prefetch(d + nx + o, 0, 3);
		}

#pragma GCC unroll 2
		for (k = 0; k < NW; k++)
			wv[k] = tail ? ldw_t(d, hd, tail, f16) :
				ldw(d, hd + k * VL, f16);
		if (pk != NULL)
#pragma GCC unroll 2
			for (k = 0; k < NW; k++)
				VSTORE(pk + ((size_t)f * NW + k) * VL, wv[k]);
#pragma GCC unroll 12
		for (j = 0; j < NR; j++) {
			V b = VBCAST(at[j]);

#pragma GCC unroll 2
			for (k = 0; k < NW; k++)
				acc[j][k] = VFMA(wv[k], b, acc[j][k]);
		}
	}
#pragma GCC unroll 12
	for (j = 0; j < NR; j++)
#pragma GCC unroll 2
		for (k = 0; k < NW; k++) {
			if (tail)
				VSTORE_T(y[j] + h, acc[j][k], tail);
			else
				VSTORE(y[j] + h + k * VL, acc[j][k]);
		}
}

#define MMD_ARGS(F16) d, rb, fc, hd, h, F16, at, rp, y, first, tail, pf, \
	pfs, pk
/* tiles taller than MMD_NR are never asked for: not compiled */
#define MMD_CASE(F16, NW, NR)						\
	case NR:							\
		if (NR <= MMD_NR)					\
			mmd_tile(MMD_ARGS(F16), NW, NR);		\
		break
#define MMD_CASES(F16, NW)						\
	switch (nr) {							\
	MMD_CASE(F16, NW, 1); MMD_CASE(F16, NW, 2);			\
	MMD_CASE(F16, NW, 3); MMD_CASE(F16, NW, 4);			\
	MMD_CASE(F16, NW, 5); MMD_CASE(F16, NW, 6);			\
	MMD_CASE(F16, NW, 7); MMD_CASE(F16, NW, 8);			\
	MMD_CASE(F16, NW, 9); MMD_CASE(F16, NW, 10);			\
	MMD_CASE(F16, NW, 11); MMD_CASE(F16, NW, 12);			\
	default: break;							\
	}

/* nw: MMD_NW (whole vectors) or 1 (one vector, or a tail of tail) */
static void
mmd_f32(unsigned nw, unsigned nr, const uint8_t *d, size_t rb, unsigned fc,
	size_t hd, size_t h, const float *at, size_t rp, float *const *y,
	int first, unsigned tail, const uint8_t *pf, size_t pfs, float *pk)
{
	if (nw == 1)
		MMD_CASES(0, 1)
	else
		MMD_CASES(0, MMD_NW)
}

static void
mmd_f16(unsigned nw, unsigned nr, const uint8_t *d, size_t rb, unsigned fc,
	size_t hd, size_t h, const float *at, size_t rp, float *const *y,
	int first, unsigned tail, const uint8_t *pf, size_t pfs, float *pk)
{
	if (nw == 1)
		MMD_CASES(1, 1)
	else
		MMD_CASES(1, MMD_NW)
}

/*
 * One whole slice (columns h .. h + MMD_NW * VL) of a block, every row
 * tile: the first prefetches (pf, pfs) and, with pk, packs the slice,
 * which the others then read from pk (see above).
 */
static void
mmd_slice(int f16, unsigned R, const uint8_t *d, size_t rb, unsigned fc,
	  size_t h, const float *a, size_t rp, float *const *y, int first,
	  const uint8_t *pf, size_t pfs, float *pk)
{
	void (*dn)(unsigned, unsigned, const uint8_t *, size_t, unsigned,
		   size_t, size_t, const float *, size_t, float *const *, int,
		   unsigned, const uint8_t *, size_t, float *) =
		f16 ? mmd_f16 : mmd_f32;
	unsigned r0, nr;

	for (r0 = 0; r0 < R; r0 += nr) {
		nr = R - r0 < MMD_NR ? R - r0 : MMD_NR;
		if (r0 == 0)
			dn(MMD_NW, nr, d, rb, fc, h, h, a, rp, y, first, 0,
			   pf, pfs, pk);
		else if (pk != NULL)
			mmd_f32(MMD_NW, nr, (const uint8_t *)pk,
				MMD_NW * VL * 4, fc, 0, h, a + r0, rp, y + r0,
				first, 0, NULL, 0, NULL);
		else
			dn(MMD_NW, nr, d, rb, fc, h, h, a + r0, rp, y + r0,
			   first, 0, NULL, 0, NULL);
	}
}

static void
mm_down(const struct ffn_mat *dm, const float *at, unsigned rp, unsigned R,
	float *const *y)
{
	void (*dn)(unsigned, unsigned, const uint8_t *, size_t, unsigned,
		   size_t, size_t, const float *, size_t, float *const *, int,
		   unsigned, const uint8_t *, size_t, float *) =
		dm->dtype == FFN_DT_F16 ? mmd_f16 : mmd_f32;
	const size_t rb = dm->row_bytes, es = dm->dtype == FFN_DT_F16 ? 2 : 4;
	const unsigned nf = dm->rows, H = dm->cols;
	const size_t step = MMD_NW * VL, nst = (H + step - 1) / step;
	unsigned f0, fc, r0, nr;
	size_t h, o, s;
	const int stream = R <= MMD_STREAM_RPB * es;
	/* the slice packed by the first tile for the others (see above) */
	const int pack = R > (MMD_PACK_TILES - 1) * MMD_NR;
	float pkb[MMD_KC * MMD_NW * VL] __attribute__((aligned(64)));

	for (f0 = 0; f0 < nf; f0 += fc) {
		const uint8_t *d = (const uint8_t *)dm->data + f0 * rb;
		const float *a = at + (size_t)f0 * rp;
		const int first = f0 == 0;
		/* the next block: nb bytes from nd, pb of them per slice */
		const uint8_t *nd;
		size_t nb, pb;

		fc = nf - f0 < MMD_KC ? nf - f0 : MMD_KC;
		nd = d + fc * rb;
		nb = (size_t)(nf - f0 - fc < MMD_KC ? nf - f0 - fc : MMD_KC) *
		     rb;
		pb = (nb / nst + 63) & ~(size_t)63;
		for (h = 0, s = 0; h < H; h += step, s++) {
			const int last = h + step >= H;
			/* L2: none past the next block (L1: always) */
			const size_t pfs = s * pb < nb && stream ?
					   (pb + fc - 1) / fc : 0;

			/* the last slice has no next one to prefetch from
			 * its tiles: the next block's share goes at once */
			for (o = s * pb; last && stream && o < nb &&
			     o < (s + 1) * pb; o += 64)
				__builtin_prefetch(nd + o, 0, 2);
			if (h + step <= H) {
				mmd_slice(dm->dtype == FFN_DT_F16, R, d, rb, fc,
					  h, a, rp, y, first,
					  last ? NULL : nd + s * pb, pfs,
					  pack ? pkb : NULL);
				continue;
			}
			for (r0 = 0; r0 < R; r0 += nr) {
				nr = R - r0 < MMD_NR ? R - r0 : MMD_NR;
				/* the last columns: single vectors, then a
				 * partial one */
				for (o = h; o + VL <= H; o += VL)
					dn(1, nr, d, rb, fc, o, o, a + r0, rp,
					   y + r0, first, 0, NULL, 0, NULL);
				if (o < H)
					dn(1, nr, d, rb, fc, o, o, a + r0, rp,
					   y + r0, first, (unsigned)(H - o),
					   NULL, 0, NULL);
			}
		}
	}
}

#endif /* FFN_MM_TMPL_H */
