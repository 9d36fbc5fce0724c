/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-ffn --act (bench_ffn_act.c).
 */
#ifndef BENCH_FFN_ACT_H
#define BENCH_FFN_ACT_H

/** The activation of one pass (64 rows x nf features): libm against
 * ffn_act_mul on every kernel set the host runs. 0, or 1 on failure. */
int bench_act(const char *name, unsigned nf, int iters);

#endif
