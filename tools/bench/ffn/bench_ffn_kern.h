/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-ffn --kernels (bench_ffn_kern.c): the many-row kernels alone.
 */
#ifndef BENCH_FFN_KERN_H
#define BENCH_FFN_KERN_H

/** matmat and mm_down of one shape, f32 and f16 weights, every kernel
 * set the host runs. 0, or 1 on failure. */
int bench_kern(const char *name, unsigned H, unsigned nf, int iters);

#endif
