/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * lib/ffn internals: the model, the scratch, the per-ISA kernel table.
 * The weight kinds and their engines are ffn_kind.h's; what an engine
 * keeps of its own hangs off the model (eng_data) and the scratch
 * (eng_buf), so this header knows no engine's types.
 */
#ifndef FFN_PRIV_H
#define FFN_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "ffn.h"

/** A read-only file mapping kept for FFN_PLACE_MMAP. */
struct ffn_map {
	void *addr;
	size_t len;
};

#define FFN_MAX_MAPS 4

struct ffn_model {
	struct ffn_info info;
	struct ffn_layer *layers;	/* [last - first + 1] */
	void *arena;			/* copied weights (one mapping) */
	size_t arena_len;
	int arena_numa;			/* arena bound with mbind */
	struct ffn_map maps[FFN_MAX_MAPS];	/* FFN_PLACE_MMAP */
	enum ffn_engine engine;		/* dense f32: kernels or OpenBLAS */
	unsigned blas_min_rows;
	/* the engine of the model's kind (ffn_kind.h): one payload, so one
	 * kind, per model (§2) */
	const struct ffn_eng *eng;
	void *eng_data;			/* its load's state (K-quant: the
					 * struct ffn_kq_model) */
};

struct ffn_scratch {
	unsigned max_rows;
	uint32_t max_nf;
	uint32_t hidden;
	size_t bytes;
	float *g;		/* [max_rows][max_nf]: gate dots, then a */
	float *u;		/* [max_rows][max_nf] */
	float *xb;		/* [max_rows][H]: rows gathered for an
				 * engine that wants a fixed stride */
	float *yb;		/* [max_rows][H]: its result, or Q8_K
				 * rows dequantised (ffn_dense.c) */
	uint32_t *ids;		/* [max_nf]: features mode */
	void *eng_buf;		/* the engine's own (eng->scratch bytes) */
	size_t eng_len;
	int numa;		/* allocated with numa_alloc_onnode */
};

/**
 * One ISA's kernels. Dense weights only (f32/f16); any H >= 1.
 *
 * matvec: out[r * ostride + f] = Σ_h W[f][h] · x[r][h] for f < nf, r < R.
 * down:   y[r][h] = Σ_f a[r * astride + f] · D[f][h] for h < H, r < R
 *         (overwrites y).
 * Each weight byte is read from memory once per call; rows are blocked
 * in registers and the weight tile is reused from cache across blocks.
 */
struct ffn_kernels {
	enum ffn_isa isa;
	const char *name;
	void (*matvec)(const struct ffn_mat *w, const float *const *x,
		       unsigned rows, float *out, size_t ostride);
	void (*down)(const struct ffn_mat *d, const float *a, size_t astride,
		     unsigned rows, float *const *y);
};

extern const struct ffn_kernels ffn_kernels_scalar;
extern const struct ffn_kernels ffn_kernels_avx2;
extern const struct ffn_kernels ffn_kernels_avx512;

const struct ffn_kernels *ffn_kernels_active(void);

/* Placement (ffn_mem.c). */
void *ffn_mem_alloc(size_t len, int node, int no_huge, enum ffn_pages *pages,
		    int *bound);
void ffn_mem_free(void *p, size_t len);
int ffn_mem_current_node(void);

/* Activation of g (in place) times u: a = act(g) ⊙ u (spec/wire.md §1). */
void ffn_act_mul(enum ffn_act act, float *g, const float *u, size_t n);

#endif /* FFN_PRIV_H */
