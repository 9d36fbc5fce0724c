/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * What bench-moe's files share: the options, the host's floors, one
 * loaded expert vindex (bench_moe.c), the timed sections
 * (bench_moe_time.c) and the WAN arithmetic (bench_moe_wire.c).
 */
#ifndef BENCH_MOE_H
#define BENCH_MOE_H

#include <stddef.h>
#include <stdint.h>

#include "ffn_moe.h"

struct bm_opts {
	uint32_t H;		/**< hidden */
	uint32_t I;		/**< expert width */
	uint32_t E;		/**< experts in the layer */
	uint32_t K;		/**< pairs per layer batch (top-k) */
	uint32_t iters;		/**< timed calls per figure */
	uint32_t layers;	/**< layers of the WAN sweep */
	uint32_t f32_experts;	/**< experts of the f32 vindex (0: none) */
	const char *vindex;	/**< an existing Q4_K vindex, or NULL */
	int quick;		/**< the CI smoke shape */
	size_t stream_bytes;	/**< buffer of the read floor */
};

/** The host's floors, measured once in the run. */
struct bm_floors {
	double read_bw;		/**< streaming read, bytes/s, one core */
	double fma;		/**< f32 multiply-adds/s (kquant's ISA) */
	double idot;		/**< u8 x i8 multiply-adds/s */
};

/** One loaded expert vindex and what a call needs beside it. */
struct bm_model {
	const char *label;		/**< "q4k", "f32" */
	struct ffn_moe *m;
	const struct ffn_moe_info *info;
	struct ffn_moe_scratch *s;
	uint32_t E, H, I;
	uint32_t *order;		/**< [E] a fixed random order */
	uint32_t next;			/**< cursor in order */
	size_t xbytes;			/**< weight bytes of one expert */
	/** Each held expert's matrices as address ranges (gate, up, down),
	 * for the read-only rows; n_reg 0 when unknown. */
	unsigned n_reg;
	size_t reg_bytes[3];
};

/** This thread's CPU time, seconds (the machine is shared). */
double bm_cpu_now(void);

/** Zeroed n bytes on a cache line; exits on failure. */
void *bm_alloc(size_t n);

/** Deterministic uniform values in (-1, 1). */
void bm_fill(float *p, size_t n, uint64_t seed);

/** The next expert of m's order (wraps: every expert in turn). */
uint32_t bm_next(struct bm_model *m);

/** A streaming read of the bytes [p, p + n) (any alignment); a sum
 * to keep it from being optimised away. */
double bm_read(const void *p, size_t n);

/** Start address of region r (< n_reg) of expert e. */
const void *bm_region(const struct bm_model *m, uint32_t e, unsigned r);

/** Median, min and 90th percentile of t[n] (sorted in place). */
void bm_stats(double *t, size_t n, double *med, double *min, double *p90);

/** Section 1: the layer batch of K experts. 0 or 1 (printed). */
int bm_layer_batch(const struct bm_opts *o, const struct bm_floors *f,
		   struct bm_model *q4k, struct bm_model *f32);

/** Section 2: rows per expert. 0 or 1 (printed). */
int bm_rows(const struct bm_opts *o, const struct bm_floors *f,
	    struct bm_model *q4k);

/** Section 3: WAN bytes per token (arithmetic). */
void bm_wire(const struct bm_opts *o);

#endif
