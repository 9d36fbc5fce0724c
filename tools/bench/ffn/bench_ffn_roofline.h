/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-ffn --roofline (bench_ffn_roofline.c): each row count's time
 * against the host's own floors, every kernel set the host has.
 */
#ifndef BENCH_FFN_ROOFLINE_H
#define BENCH_FFN_ROOFLINE_H

/** One shape, f32 and f16 weights. 0, or 1 on failure. */
int bench_roofline(const char *name, unsigned H, unsigned nf, int iters);

#endif
