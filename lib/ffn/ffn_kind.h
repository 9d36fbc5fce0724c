/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * lib/ffn internal: the seam between the model API (ffn.h) and the
 * engines that hold and compute each kind of weights (issue 18).
 *
 * A weight kind is one payload of spec/vindex.md §2. ffn_kinds[]
 * (ffn_kind.c) has one row per kind, in §2's order of preference; the
 * loader, ffn_layout_name() (the "layout" of /v1/stats), the scratch
 * sizing and every compute entry point read a kind's row (or the engine
 * it names) and never switch on the layout. A kind names its engine: the
 * dense one (f32/f16, ffn_dense.c) serves §2.1-§2.3, the K-quant one
 * (ffn_eng_kq.c over lib/ffn/kquant) serves §2.4. Adding a kind is one
 * row here plus, when no engine fits, one engine.
 *
 * Plain C; no kquant/ header is needed to read this one.
 */
#ifndef FFN_KIND_H
#define FFN_KIND_H

#include <stddef.h>
#include <stdint.h>

#include "ffn.h"

struct ffn_model;
struct ffn_scratch;
struct ld;			/* a load in progress (ffn_load_priv.h) */

/*
 * How one kind of weights is held and computed. (Not enum ffn_engine,
 * which picks our kernels or OpenBLAS inside the dense engine.)
 *
 * The callers have checked the layer (owned) and the scratch (made for
 * this model); li is the owned layer's index (layer - first_layer).
 * Every x row is read before any y row is written (ffn.h's in-place
 * contract); no call allocates.
 */
struct ffn_eng {
	/* feature slices start on, and end on (or at nf), multiples of
	 * this (ffn_part_align, ffn.h) */
	unsigned part_align;
	/* release what the engine's load kept in m->eng_data (NULL: none) */
	void (*unload)(struct ffn_model *m);
	/* bytes of scratch of its own for max_rows rows (s->eng_buf) */
	size_t (*scratch)(const struct ffn_model *m, unsigned max_rows);
	/* y[r] = Σ_{f0 <= f < f1} a_f(x[r]) · D[f], in passes of at most
	 * s->max_rows rows; [0, nf) is ffn_compute(). Slice checked. */
	int (*part)(const struct ffn_model *m, unsigned li, unsigned f0,
		    unsigned f1, const float *const *x, float *const *y,
		    unsigned rows, struct ffn_scratch *s);
	/* ffn_compute_q8k(): rows consecutive Q8_K wire rows at xq */
	int (*q8k)(const struct ffn_model *m, unsigned li, const void *xq,
		   float *const *y, unsigned rows, struct ffn_scratch *s);
	/* gate dots of one row for features mode: g[f], f < nf */
	int (*gate)(const struct ffn_model *m, unsigned li, const float *x,
		    float *g, struct ffn_scratch *s);
};

extern const struct ffn_eng ffn_eng_dense;	/* ffn_dense.c */
extern const struct ffn_eng ffn_eng_kq;		/* ffn_eng_kq.c */

/* One weight kind: a payload of spec/vindex.md §2 and its engine. */
struct ffn_kind {
	enum ffn_layout layout;
	/* ffn_layout_name(): /v1/stats "layout", load messages */
	const char *name;
	/* payload files, NULL-terminated: under FFN_LAYOUT_AUTO the first
	 * row (§2 order) whose files all exist is loaded */
	const char *const *files;
	/* the JSON manifest its loader also reads, NULL if none (named in
	 * the "no FFN payload" message) */
	const char *manifest;
	/* index.json "quant" value that only this kind may serve (§2),
	 * NULL: none; err: the ffn_error when another layout is forced */
	const char *quant;
	int err;
	/* place the owned layers (m->layers allocated, info's layer range,
	 * H and layout set): each ffn_layer, info's bytes_loaded,
	 * placement, pages, numa_node. 0 or an ffn_error, l->err set. */
	int (*load)(struct ld *l);
	const struct ffn_eng *eng;
};

extern const struct ffn_kind ffn_kinds[];
extern const unsigned ffn_n_kinds;

/* The row of a layout, NULL for FFN_LAYOUT_AUTO or an unknown value. */
const struct ffn_kind *ffn_kind_of(enum ffn_layout layout);
/* The row whose index.json "quant" value is quant, or NULL. */
const struct ffn_kind *ffn_kind_quant(const char *quant);
/* The row's files (and manifest, when with_manifest) joined by " + ". */
void ffn_kind_files(const struct ffn_kind *k, int with_manifest, char *buf,
		    size_t len);

/* The loaders the rows name (ffn_load_payload.c, ffn_eng_kq.c). */
int ffn_load_interleaved(struct ld *l);		/* §2.2 */
int ffn_load_feature_major(struct ld *l);	/* §2.1 */
int ffn_load_dense(struct ld *l);		/* §2.3 */
int ffn_kq_eng_load(struct ld *l);		/* §2.4 */

#endif /* FFN_KIND_H */
