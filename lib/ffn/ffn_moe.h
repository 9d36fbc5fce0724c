/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_MOE_H
#define FFN_MOE_H

/**
 * @file
 * Expert weights of a hybrid-MoE vindex (spec/moe.md §5) and their
 * compute (§1). Plain C, no DPDK; part of lib/ffn.
 *
 *   ffn_moe_own_*()     which experts a shard owns (--experts A-B or
 *                       the reference's --units JSON, spec/moe.md §2)
 *   ffn_moe_load()      index.json + weight_manifest.json/norms.bin +
 *                       layers/layer_LL.weights (LYRW), owned experts
 *                       only, validated as §5.3 says
 *   ffn_moe_norm()      the pre-experts RMSNorm (§1, no +1 offset)
 *   ffn_moe_expert()    y_e = D_e (gelu_tanh(G_e h) * U_e h), rows of h
 *   ffn_moe_mix()       a layer batch: out = sum_k w_k y_{e_k}(h)
 *
 * Expert kinds are rows of one table (ffn_moe_kind.c), keyed by the
 * LYRW quant_format tag: Q4_K (tag 4, computed by lib/ffn/kquant's
 * fused kernels when H is a multiple of 256, so rows are whole blocks;
 * otherwise dequantised exactly to f32 at load) and F32 (tag 0, the
 * appliance extension). Any other tag refuses the vindex at load.
 *
 * Thread safety: a loaded struct ffn_moe is read-only; any number of
 * threads may compute on it at once, each with its own scratch.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ffn.h"

#ifdef __cplusplus
extern "C" {
#endif

/** eps of the pre-experts RMSNorm (spec/moe.md §1). */
#define FFN_MOE_NORM_EPS 1e-6f

/* ---- ownership (spec/moe.md §2 "Ownership") ---- */

enum ffn_moe_own_kind {
	FFN_MOE_OWN_ALL = 0,	/**< every expert of every layer */
	FFN_MOE_OWN_RANGE,	/**< ids first..last in every layer */
	FFN_MOE_OWN_UNITS,	/**< per layer ranges (--units JSON) */
};

/** An inclusive range of expert ids. */
struct ffn_moe_range {
	uint32_t first, last;
};

struct ffn_moe_own {
	enum ffn_moe_own_kind kind;
	uint32_t first, last;		/**< FFN_MOE_OWN_RANGE */
	/** FFN_MOE_OWN_UNITS: layer L (< n_layers) owns the ranges
	 * r[off[L] .. off[L + 1]); layers >= n_layers own nothing. */
	uint32_t n_layers;
	uint32_t *off;			/**< n_layers + 1 entries (malloc) */
	struct ffn_moe_range *r;	/**< (malloc) */
};

/**
 * Parse "A-B" (or "A"; spaces around the numbers allowed, A <= B, each
 * < 2^32) into a FFN_MOE_OWN_RANGE ownership. Returns 0 or -EINVAL with
 * err saying what is wrong with the text.
 */
int ffn_moe_own_range(struct ffn_moe_own *o, const char *text, char *err,
		      size_t errlen);

/**
 * Read the reference's --units file:
 *   {"layer_experts": {"0": [[0,31]], "1": [[0,15],[64,79]]}}
 * per layer (decimal string key) a list of inclusive [start, end]
 * ranges. Unknown top-level keys are ignored. Errors (-EINVAL, -ENOENT,
 * -ENOMEM) with err naming the file and what is wrong: not JSON, no
 * "layer_experts" object, a key that is not a decimal layer number, a
 * range that is not two non-negative integers, end < start.
 */
int ffn_moe_own_units(struct ffn_moe_own *o, const char *path, char *err,
		      size_t errlen);

/** Release what ffn_moe_own_units() allocated; o becomes OWN_ALL. */
void ffn_moe_own_free(struct ffn_moe_own *o);

/** Whether o owns expert e of layer (no model needed). */
bool ffn_moe_own_has(const struct ffn_moe_own *o, uint32_t layer,
		     uint32_t e);

/* ---- weights ---- */

struct ffn_moe_load_opts {
	const struct ffn_moe_own *own;	/**< NULL: every expert */
	int numa_node;			/**< -1: the calling thread's node */
	enum ffn_placement placement;	/**< copy, or serve the mapping */
	int no_hugepages;
};

/** What the loader found (start-up log, /v1/expert/topology, stats). */
struct ffn_moe_info {
	char model[128];		/**< index.json "model" */
	char model_id[128];		/**< its last '/'-separated part */
	char model_type[64];		/**< model_config.model_type */
	uint32_t num_layers;		/**< index.json num_layers */
	uint32_t hidden;		/**< H */
	uint32_t num_experts;		/**< E (model_config.moe) */
	uint32_t width;			/**< I, moe_intermediate_size */
	uint32_t top_k;			/**< informational */
	const char *kind;		/**< "q4k" or "f32" (the files' tag);
					 *   "q4k-f32" when Q4_K was
					 *   dequantised (H % 256 != 0) */
	uint32_t layer_files;		/**< layers with a layer file */
	uint32_t norms;			/**< layers with a pre-experts norm */
	uint64_t experts_loaded;	/**< (layer, expert) pairs held */
	uint64_t bytes_loaded;		/**< weight bytes held */
	double load_ms;			/**< wall time of ffn_moe_load */
	enum ffn_placement placement;
	enum ffn_pages pages;
	int numa_node;
	int kq_q8k;			/**< 1: Q4_K experts take the Q8_K
					 *   integer path for every input
					 *   (ffn_moe_set_kq_q8k) */
};

struct ffn_moe;
struct ffn_moe_scratch;

/**
 * Whether the vindex in dir is a hybrid MoE (index.json
 * model_config.model_type starts with "gemma4" and model_config.moe.hybrid
 * is true). 1 yes, 0 no, or a negative ffn_error (index.json unreadable)
 * with err filled. Cheap: reads index.json only.
 */
int ffn_moe_is_hybrid(const char *dir, char *err, size_t errlen);

/**
 * Load the owned experts of the hybrid-MoE vindex in dir. Validates
 * index.json (§5.1: a hybrid MoE with num_experts >= 1 and
 * moe_intermediate_size >= 1: else FFN_ERR_MODEL / FFN_ERR_KEY), the
 * norms of the manifest (§5.2: an entry out of its file is ignored) and
 * every present layer file that holds an owned expert, everything §5.3
 * lists: magic, format_version 1, a known tag (else FFN_ERR_MODEL),
 * num_entries == E, intermediate == I, hidden == H, each size equal to
 * its formula, each range inside the file (FFN_ERR_SHAPE /
 * FFN_ERR_SHORT). The message names the file, the field, what it holds
 * and what was expected. A missing layer file is not an error: that
 * layer holds no expert. An ownership that names experts >= E or layers
 * >= num_layers is not an error either (they are simply not held).
 * Returns 0 and *out, or a negative ffn_error.
 */
int ffn_moe_load(const char *dir, const struct ffn_moe_load_opts *o,
		 struct ffn_moe **out, char *err, size_t errlen);

void ffn_moe_free(struct ffn_moe *m);

/**
 * kq_q8k for experts (the config key of the same name), off after load:
 * on, Q4_K experts (kind "q4k") quantise h and the inner activation to
 * Q8_K and take the integer kernels on every route, as the reference
 * computes them (spec/moe.md §1, "Numerics": within ~1% relative per
 * element of exact f32); off, f32 h takes the f32 path and Q8_K h the
 * integer kernels for gate and up only. Other kinds compute as before;
 * ffn_moe_info().kq_q8k says whether it applies. Set it before compute
 * starts (the flag is read without synchronisation); a scratch made
 * before covers both paths.
 */
void ffn_moe_set_kq_q8k(struct ffn_moe *m, int on);

const struct ffn_moe_info *ffn_moe_info(const struct ffn_moe *m);

/** Whether expert e of layer is held (file present, e < E, owned). */
bool ffn_moe_held(const struct ffn_moe *m, uint32_t layer, uint32_t e);

/** Whether layer has a layer file (and so may hold experts). */
bool ffn_moe_has_layer(const struct ffn_moe *m, uint32_t layer);

/* ---- compute ---- */

/** Per-thread work memory for up to max_rows rows per call. */
struct ffn_moe_scratch *ffn_moe_scratch_new(const struct ffn_moe *m,
					    unsigned max_rows,
					    int numa_node);
void ffn_moe_scratch_free(struct ffn_moe_scratch *s);

/**
 * The pre-experts RMSNorm of one row (spec/moe.md §1): s = sum x_i^2 in
 * f32 in index order, r = sqrt(s / H + 1e-6), h_i = (x_i / r) * n_i;
 * h = x when the layer has no norm vector. h may equal x.
 */
void ffn_moe_norm(const struct ffn_moe *m, uint32_t layer, const float *x,
		  float *h);

/**
 * y row r = y_e(h row r) for r < rows (rows of H floats at a stride of
 * H), h already normed. Q4_K experts take the f32 path (no input
 * quantisation), or with ffn_moe_set_kq_q8k() the Q8_K path. rows <= the
 * scratch's max_rows. y must not overlap h.
 * Returns 0, -ERANGE (expert not held), -EINVAL, -ENOSPC (scratch).
 */
int ffn_moe_expert(const struct ffn_moe *m, uint32_t layer, uint32_t e,
		   const float *h, unsigned rows, float *y,
		   struct ffn_moe_scratch *s);

/**
 * ffn_moe_expert() for rows already normed and quantised to Q8_K (the
 * wire layout of kquant/ffn_kq.h: i8 qs[nb*256], f32 d[nb], i16
 * sums[nb*8], nb = H / 256; rows consecutive). Q4_K experts dot them
 * with integer instructions for gate and up; the inner activation stays
 * f32 for down (it is not re-quantised, unlike the reference, which
 * costs about 0.5%), unless ffn_moe_set_kq_q8k() made it Q8_K too, the
 * reference's own numerics. F32 experts take them dequantised
 * (h_i = d[i/256] * qs[i]). Needs H % 256 == 0 (else -EINVAL).
 */
int ffn_moe_expert_q8k(const struct ffn_moe *m, uint32_t layer, uint32_t e,
		       const void *hq, unsigned rows, float *y,
		       struct ffn_moe_scratch *s);

/** One (expert, weight) pair of a layer batch. */
struct ffn_moe_pair {
	uint32_t expert;
	float weight;
};

/**
 * A layer batch on one normed row (spec/moe.md §1): out = sum over the
 * pairs with weight != 0 (either sign; NaN is not skipped) of
 * w_k * y_{e_k}(h), starting from 0 and adding fl(w_k * y) in list order
 * (multiply and add rounded separately, never fused). A pair listed twice
 * counts twice. K == 0 or all weights 0: out is H zeros.
 * Every pair with weight != 0 must be held: else nothing is computed,
 * *bad = its index and -ERANGE. hq: NULL for an f32 h, else the row in
 * Q8_K (h then unused) as ffn_moe_expert_q8k(). out must not overlap h.
 */
int ffn_moe_mix(const struct ffn_moe *m, uint32_t layer, const float *h,
		const void *hq, const struct ffn_moe_pair *p, unsigned k,
		float *out, unsigned *bad, struct ffn_moe_scratch *s);

/**
 * One term of a layer batch's sum (§1): out[i] += fl(w * y[i]) for
 * i < n, the product rounded before the add (never fused), so a caller
 * that computes the experts of several requests together (grouped by
 * expert) and then adds each request's terms in its list order gets
 * ffn_moe_mix()'s sum.
 */
void ffn_moe_add(float *out, float w, const float *y, uint32_t n);

#ifdef __cplusplus
}
#endif

#endif /* FFN_MOE_H */
