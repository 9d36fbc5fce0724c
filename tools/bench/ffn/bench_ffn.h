/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-ffn's measuring helpers (bench_ffn.c), shared by its sections.
 */
#ifndef BENCH_FFN_H
#define BENCH_FFN_H

#include <stddef.h>
#include <stdint.h>

/** This thread's CPU time, seconds. */
double bench_now(void);
/** Anonymous mapping advised for huge pages; NULL on failure. */
void *bench_alloc(size_t len);
/** Deterministic fill in [-scale, scale). */
void bench_fill(float *p, size_t n, float scale, uint64_t seed);
/** Best of iters: the active kernel set's FMA peak, floats/s (0: scalar). */
double bench_fma_peak(int iters);
/** Best of iters: bytes/s of one core summing the three matrices. */
double bench_stream_bw(float *const m[3], size_t n, int iters);

#endif
