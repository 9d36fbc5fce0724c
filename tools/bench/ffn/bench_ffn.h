/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-ffn's measuring helpers (bench_ffn.c), shared by its sections.
 */
#ifndef BENCH_FFN_H
#define BENCH_FFN_H

#include <stddef.h>
#include <stdint.h>

#include "ffn.h"

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

/** One synthetic layer, interleaved, in f32 and in f16 weights. */
struct bench_layer {
	float *w[3];		/**< gate, up, down, f32 [nf, H] */
	uint16_t *h[3];		/**< the same in f16 */
	struct ffn_layer l[2];	/**< descriptors: f32, f16 */
	struct ffn_model *m[2];	/**< models: f32, f16 */
};

/** Allocate, fill and wrap L (nf x H): 0, -ENOMEM, or -EINVAL (wrap). */
int bench_layer_make(struct bench_layer *L, unsigned H, unsigned nf);
/** Free what bench_layer_make made of L (nf x H). */
void bench_layer_free(struct bench_layer *L, unsigned H, unsigned nf);

#endif
