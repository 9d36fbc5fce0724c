/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-ffn --split (bench_ffn_split.c): one row, one layer split across
 * 2 pinned threads vs 1 row on 1 thread, wall time, side by side.
 */
#ifndef BENCH_FFN_SPLIT_H
#define BENCH_FFN_SPLIT_H

/** One shape (f32 and f16 weights). 0, or 1 on failure. */
int bench_split(const char *name, unsigned H, unsigned nf, int iters);

#endif
