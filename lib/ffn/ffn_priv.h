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
	float *g;		/* [rp][max_nf]: gate dots, then a (rp:
				 * max_rows rounded up to FFN_ROWS_ALIGN) */
	float *u;		/* [rp][max_nf] */
	float *xb;		/* [rp][H]: rows gathered for an
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
 *
 * mm_pack (NULL: none of the mm_ kernels): R rows of H floats into xt
 *         (rp x H floats, in the set's own order: the rows transposed
 *         and padded with zero rows); returns rp, R rounded up to
 *         mm_align.
 * matmat: the matvec product with the rows in the vector lanes, for
 *         batches of mm_min_rows rows or more (ffn_dense.c):
 *         ot[f * rp + r] = Σ_h W[f][h] · x[r][h] for f < nf, r < rp,
 *         from mm_pack's xt. Each output is summed in h order.
 * mm_down (with matmat): down from activations in matmat's layout:
 *         y[r][h] = Σ_f at[f * rp + r] · D[f][h] for h < H, r < R <= rp
 *         (overwrites y).
 */
struct ffn_kernels {
	enum ffn_isa isa;
	const char *name;
	void (*matvec)(const struct ffn_mat *w, const float *const *x,
		       unsigned rows, float *out, size_t ostride);
	void (*down)(const struct ffn_mat *d, const float *a, size_t astride,
		     unsigned rows, float *const *y);
	unsigned (*mm_pack)(const float *const *x, unsigned rows, unsigned h,
			    float *xt);
	void (*matmat)(const struct ffn_mat *w, const float *xt, unsigned rp,
		       float *ot);
	void (*mm_down)(const struct ffn_mat *d, const float *at,
			unsigned rp, unsigned rows, float *const *y);
	unsigned mm_align;	/* <= FFN_ROWS_ALIGN, divides it */
	unsigned mm_min_rows;
	/* g[i] = act(g[i]) · u[i], i < n (ffn_act_tmpl.h: the same bits in
	 * every set) */
	void (*act_mul)(enum ffn_act act, float *g, const float *u,
			size_t n);
};

/* The scratch's g, u and xb hold max_rows rounded up to this. */
#define FFN_ROWS_ALIGN 16u

extern const struct ffn_kernels ffn_kernels_scalar;
extern const struct ffn_kernels ffn_kernels_avx2;
extern const struct ffn_kernels ffn_kernels_avx512;

const struct ffn_kernels *ffn_kernels_active(void);

/* Placement (ffn_mem.c). */
void *ffn_mem_alloc(size_t len, int node, int no_huge, enum ffn_pages *pages,
		    int *bound);
void ffn_mem_free(void *p, size_t len);
int ffn_mem_current_node(void);
void *ffn_mem_scratch_alloc(size_t len, int node, int *numa);
void ffn_mem_scratch_free(void *p, size_t len, int numa);

#endif /* FFN_PRIV_H */
