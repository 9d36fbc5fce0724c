/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * What bench-kquant's sections share (bench_kquant.c) and its roofline
 * section (bench_kquant_roofline.c).
 */
#ifndef BENCH_KQUANT_H
#define BENCH_KQUANT_H

#include <stddef.h>

#include "ffn_kq.h"

/** SiLU times up as the appliance applies it (ffn_act_mul). */
void bkq_silu(float *g, const float *u, size_t n);
/** This thread's CPU time, seconds. */
double bkq_cpu_now(void);
/** Anonymous mapping advised for huge pages; exits on failure. */
void *bkq_big_alloc(size_t n);
/** n bytes on a cache line, as the engine's scratch; exits on failure. */
void *bkq_cl_alloc(size_t n);
/** Random blocks of fmt with moderate scales. */
void bkq_fill_blocks(enum ffn_kq_fmt fmt, uint8_t *p, size_t nblocks);

/**
 * bench-kquant --roofline: one Q4_K gate/up + Q6_K down layer (H x nf) at
 * 1 to 128 rows on both paths and every kernel set the host runs, against
 * the read floor (bw: streaming read, bytes/s, this run) and the compute
 * floor. 0, or 1 on a failure (printed).
 */
int bkq_roofline(size_t H, size_t nf, int iters, double bw);

#endif
