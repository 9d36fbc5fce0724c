/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * AVX-512 (F/BW/VL/DQ) dense FFN kernels; f16 weights widened with
 * vcvtph2ps inside the dot products. Compiled with -mavx512*; only
 * called when the CPU has them (ffn_compute.c).
 */
#include <immintrin.h>

#define V __m512
#define VL 16
#define VZERO() _mm512_setzero_ps()
#define VLOADF(p) _mm512_loadu_ps(p)
#define VLOADH(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VBCAST(f) _mm512_set1_ps(f)
#define VSTORE(p, v) _mm512_storeu_ps(p, v)
#define VREDUCE(v) _mm512_reduce_add_ps(v)
#define TMASK(n) ((__mmask16)((1u << (n)) - 1))
#define VLOADF_T(p, n) _mm512_maskz_loadu_ps(TMASK(n), p)
#define VLOADH_T(p, n) \
	_mm512_cvtph_ps(_mm256_maskz_loadu_epi16(TMASK(n), p))
#define VSTORE_T(p, v, n) _mm512_mask_storeu_ps(p, TMASK(n), v)
/* the activation's (ffn_act_tmpl.h) */
#define VMUL(a, b) _mm512_mul_ps(a, b)
#define VADD(a, b) _mm512_add_ps(a, b)
#define VDIV(a, b) _mm512_div_ps(a, b)
#define VMAX(a, b) _mm512_max_ps(a, b)
#define VMIN(a, b) _mm512_min_ps(a, b)
#define VRINT(a) _mm512_roundscale_ps(a, \
	_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define VPOW2(n) _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32( \
	_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23))

/*
 * 32 zmm. matvec: 6 features x 4 rows (24 accumulators, 4 x, 1 weight)
 * from 3 rows on, 4 x 4 for 2 rows; down: 4 vectors x 4 rows, and 3
 * vectors x 8 rows for f16 in groups of 8 rows (DN8_NW); one row has its
 * own streaming kernels (mv_streams, dn_streams). Figures below.
 *
 * The 8-row f16 ceiling (Zen 5 VM, H 4096 x 14336, measured by rdtsc-free
 * CPU-time microbenchmarks): peak is 6.6 G zmm FMA/s, so one matrix x 8
 * rows is >= 4.5 ms of FMAs and the layer >= 13.4 ms; with weights in L2
 * matvec runs at 84% of that peak and down at ~67%. From DRAM each matrix
 * takes about compute + memory time (~8 ms): the streams do not overlap
 * the FMAs. Tried without a gain that held (all within this machine's
 * +-10% noise or worse):
 *   - matvec 3 features x 8 rows in one pass (x as FMA memory operand):
 *     10-15% slower; x rows 16 KiB apart alias one L1 set, padding them
 *     helps but it stays slower than 4 x 4;
 *   - matvec prefetch of the next tile's rows (into L1 or L2), spread
 *     over the row blocks; matvec H in 256..1024-float segments with all
 *     row blocks per segment (shorter DRAM idle phases): no change;
 *   - down 3 vectors x 8 rows with the h loop inside one call per block:
 *     +6..13% with D in L2, none from DRAM with y rows contiguous (D rows
 *     8 KiB and y rows 16 KiB apart share L1 sets); DN_FB 8: no change.
 *
 * Second round (same VM, interleaved A/B runs of kernel variants linked
 * into one binary, order rotated per round, median of 30 paired ratios;
 * "x" = time of the variant / time of what is kept):
 *   - kept: down prefetches each block row DN_PFD ahead (ffn_kern_tmpl.h):
 *     8-row down 0.67-0.79x (Gemma size), 0.78-0.95x (Llama size);
 *   - down, each chunk of the block widened (f16) or copied (f32) into a
 *     contiguous L1 buffer before the row blocks use it: f16 1.0x, f32
 *     1.1x; DN_FB 8 / 24 / 32 with the new prefetch: 1.0-1.27x;
 *   - matvec prefetch spread over the row blocks (each block prefetches
 *     half of the tile's streams): f32 1.04-1.2x, f16 ~1.0x; prefetcht1
 *     instead of t0: f16 1.12x; nta = t0; MV_PFD 1024/3072/4096/8192: not
 *     better than 2048; f16 prefetching once per line instead of once
 *     per vector: 1.0x;
 *   - matvec 2 features x 8 rows (each weight vector loaded and widened
 *     once for all 8 rows): 2.1-2.2x (8 x loads per 16 FMAs, from L2);
 *   - matvec H in 256/512/1024-float segments taken by 8 tiles in turn,
 *     so x (16 KiB per segment at 8 rows) stays in L1, accumulators
 *     spilled between segments: f32 1.24-1.37x, f16 1.05-1.2x from DRAM
 *     and 1.04-1.19x with weights in L2 (the weight rows become 2 KiB
 *     pieces 32 streams wide).
 * Where the time goes (gate alone, Llama size, f16): 1 row 2.7-2.8 ms;
 * 8 rows with weights in L2 (scaled) 4.7 ms = 91% of FMA peak (f32: 64%),
 * so vcvtph2ps, done once per 4-row block, is not the limit; 8 rows from
 * DRAM 6.8-7.0 ms, i.e. 2.4-2.5x of one row. The same bytes at H 1024 x
 * 57344 (x rows 4 KiB, L1-resident with the tile) run 8 rows f16 in 2.1x
 * of one row, so part of the loss is x re-read from L2 per tile while the
 * weight lines arrive, but every way found to keep x in L1 broke the long
 * weight streams. 8 rows f16 <= 2x of 1 row needs the DRAM time hidden
 * almost entirely under FMAs running at >= 90% of peak.
 *
 * Third round (s4-f16; same method, medians of 11-41 paired rounds, the
 * VM often loaded by other work: identical 1-row code measured 0.8-1.1x,
 * so only repeated results were kept). Kept:
 *   - matvec 6 x 4 tiles instead of 4 x 4: x is read from L2 once per 24
 *     FMAs instead of 16. Gate alone, Llama size, 8 rows: f16 0.85x, f32
 *     0.92x; with the weights in L2 (nf 96) f16 runs at 94% of FMA peak
 *     (4 x 4: 84%), f32 0.87x (f32 is L2-bandwidth bound: 10 lines per
 *     24 FMAs). 5 x 4: 0.92x. Full layer 0.91-0.93x f16, 0.94-0.95x f32
 *     at both sizes. 2 rows keep 4 x 4 (6 x 4: 1.04-1.07x there);
 *   - down, f16, 8 rows: dn_tile8 (8 x 3 accumulators, weight vector
 *     widened once for 8 rows): 0.91-0.93x at both sizes (f32: 1.01-1.10x,
 *     so f32 keeps 4 x 4);
 *   - f16 matvec prefetches the next tile's rows spread evenly over all
 *     row blocks, into L1 (MV_PFN, ffn_kern_tmpl.h): full layer f16
 *     0.91-0.95x (Gemma), 0.94-1.0x (Llama); gate alone 0.86-0.97x. The
 *     same into L2 (prefetcht1): 0.92-1.05x; nta: 0.93-1.02x; 2 tiles
 *     ahead: 0.94-1.09x; f32: 1.03-1.15x.
 * Dropped:
 *   - matvec 7 x 4 and 8 x 4 (x of some rows reloaded from L1 per FMA):
 *     0.97-1.0x from DRAM, 1.05-1.15x in L2;
 *   - 8 x 3 tiles (3-row blocks, so Gemma's x block, 30 KiB, stays in
 *     L1): 1.09-1.14x f16, 1.09-1.17x f32;
 *   - segmented matvec: two adjacent 6-feature tiles per 512-float
 *     segment, each 4-row block running over both tiles (x segment reused
 *     from L1 by the second tile, weight segment by the second block,
 *     accumulators parked in L1): with weights in L2 1.0x, from DRAM
 *     f16 1.11-1.14x, f32 1.07x; with in-stream prefetch 2 KiB ahead in
 *     block 0: 1.12x (the 12 weight streams advance in 1 KiB bursts);
 *     with each block prefetching half of the next segment (as MV_PFN):
 *     Llama size 1.06-1.10x, Gemma 0.96-0.98x (segments of 256 / 1024
 *     floats: 1.0-1.11x / 1.11-1.12x): not a win at both sizes;
 *   - f16 matvec snaking: odd tiles run their row blocks in reverse and
 *     h downwards, so the end of the last block's x rows is still in L1
 *     when the next tile starts: gate 0.95x at both sizes in one run,
 *     then Llama size gate 0.99x and full layer 1.0x twice (Gemma layer
 *     0.955x): Gemma's 4-row x block (40 KiB) nearly fits L1, Llama's
 *     (64 KiB) does not; with the next-tile prefetch mirrored: 0.97-1.01x;
 *   - far prefetch of the weight streams into L2 (prefetcht1 8, 16 or
 *     32 KiB ahead, once per line, beside the 2 KiB prefetcht0): 1.10-1.13x
 *     f16, 1.05-1.10x f32; MV_PFD 0: 1.0x, 1024: 0.98x, 4096: 1.07x;
 *   - down DN_FB 24 / 32 / 64 with dn_tile8: 1.02-1.07x / 1.09-1.23x /
 *     1.34-1.50x (more interleaved streams); dn_tile8 with 2 vectors (one
 *     line per row per chunk): f16 1.0x, f32 1.10x; DN_PFD 256: 0.99x,
 *     1024: 1.07x, 2048: 1.15x; prefetcht2 instead of t0: 1.15x; the
 *     next 16-row block (one contiguous region) prefetched sequentially,
 *     spread over the chunks, instead of DN_PFD: prefetcht0 1.04-1.08x,
 *     prefetcht1 1.30-1.52x (with DN_FB 32: 1.61-1.78x). On this VM
 *     prefetcht1 lost wherever it was tried;
 *   - down over H ranges of 480 or 960 floats (y of 8 rows, 15-30 KiB,
 *     kept in L1 across all feature blocks; each row read in 1-2 KiB
 *     pieces, the next block's piece prefetched): 1.48-1.54x (Llama),
 *     1.13-1.15x (Gemma). Short pieces of many rows lose to the streams.
 * Where the time goes now (Llama size, 8 rows f16, quiet spells): gate
 * 6.0-6.5 ms from DRAM against 4.7 ms with the weights in L2; down
 * 6.4-6.8 ms against 5.9 ms in L2 (76% of FMA peak: each 16-feature block
 * reloads and stores the 24 y accumulators per 384 FMAs); layer ~20 ms
 * against 8.7 ms for one row, 2.2-2.3x. The FMA floor alone is 13.4 ms
 * (1.5x): <= 2x needs >= 75% of peak with DRAM hidden.
 *
 * Fourth round (s6; gate alone, old and new kernels in one binary,
 * interleaved, median of 15-31 per-round ratios, weights flushed from
 * the caches before each call):
 *   - the spread prefetch computed its offset with two 64-bit divides per
 *     h step; now quotient and remainder are carried: 0.99-1.03x alone,
 *     but it is what lets the next change pay (with the divides: 1.01x);
 *   - kept: MV_ADJ, tiles of 6 adjacent rows when the prefetch is spread
 *     (f16, two or more row blocks), so the next tile is one contiguous
 *     block: 8 rows f16 0.86-0.96x (Llama size, typically 0.92x), 0.87-
 *     0.97x (Gemma size); 12 rows 0.98x, 16 rows 0.92x. Adjacent rows
 *     lost where the prefetch is not spread (one row block: 2 rows 1.34x,
 *     3-4 rows 1.13-1.19x; f32 8 rows 1.09x), so those keep the chunks;
 *   - x rows contiguous (as a request's) or padded by 64-128 B: the same.
 * In the whole layer the gain is inside this VM's noise: the memory
 * itself changed speed between runs of one hour (8 rows f32 31 -> 40 ms),
 * and 8 rows f16 measured 1.73-2.15x of one row in paired bench-ffn runs
 * of the old and new kernels.
 */
#ifndef MV_NF
#define MV_NF(R) ((R) <= 2 ? 4u : 6u)
#define MV_NR 4u
#endif
#ifndef DN_NW
#define DN_NW(R) ((R) == 1 ? 8u : 4u)
#define DN_NR 4u
#endif
#ifndef DN8_NW
#define DN8_NW 3
#endif
#ifndef MV_PFN
#define MV_PFN 1
#endif
#ifndef MV_ADJ
#define MV_ADJ 1
#endif

/*
 * matmat (ffn_mm_tmpl.h): 6 weight rows x 4 row vectors (64 rows) per
 * tile, 24 accumulators + 4 x vectors + 1 broadcast; fewer row vectors
 * take more weight rows, keeping 16-24 accumulators. One row vector (16
 * rows) takes 8, not 16: 16 row pointers do not fit in the registers
 * (they were reloaded from the stack every column), and 16 rows 4 KiB
 * apart (f32, H 4096) share one 12-way L1 set. 8 accumulators still
 * cover the FMA latency. 16 -> 8: gate at 16 rows 1.28x faster at
 * H 4096, 1.07x at H 2560 (docs/PERFORMANCE.md, 2026-12-07).
 */
#define MM_NV 4u
#define MM_NF(nv) ((nv) == 1 ? 8 : (nv) == 2 ? 12 : (nv) == 3 ? 8 : 6)
#ifndef MM_MIN_ROWS
#define MM_MIN_ROWS 16u
#endif
/* mm_down: 12 rows x 2 vectors, 24 accumulators + 2 weights + 1 broadcast */
#define MMD_NW 2u
#define MMD_NR 12u

#define KNAME ffn_kernels_avx512
#define KISA FFN_ISA_AVX512
#define KSTR "avx512"

#include "ffn_kern_tmpl.h"
