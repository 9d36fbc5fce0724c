/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * lib/ffn internals of the expert weights (ffn_moe.h): the loaded model,
 * the scratch, and the expert kinds, rows of one table (ffn_moe_kind.c)
 * keyed by the LYRW quant_format tag (spec/moe.md §5.3). The loader
 * (ffn_moe_load.c) validates and places; the compute (ffn_moe.c) calls a
 * held expert's kind; nothing else switches on the tag.
 */
#ifndef FFN_MOE_PRIV_H
#define FFN_MOE_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "ffn_moe.h"
#include "ffn_priv.h"

struct ffn_moe_kind;

/** One held expert, as its kind placed it (gate NULL: not held). */
struct ffn_moe_x {
	const void *gate;	/**< [I, H] rows (f32 or whole Q4_K blocks) */
	const void *up;		/**< [I, H] */
	const void *down;	/**< the kind's orientation (see its row) */
};

struct ffn_moe_layer {
	const struct ffn_moe_kind *kind;  /**< NULL: no expert held */
	struct ffn_moe_x *x;		/**< [E] (malloc), or NULL */
	const float *norm;		/**< [H] pre-experts norm, or NULL */
	int has_file;			/**< layers/layer_LL.weights exists */
	void *map;			/**< FFN_PLACE_MMAP: the file */
	size_t map_len;
};

struct ffn_moe {
	struct ffn_moe_info info;
	uint32_t nl, E, I, H, S;	/**< S = pad256(I) (§5) */
	struct ffn_moe_layer *layers;	/**< [nl] */
	float *norms;			/**< [nl][H] (malloc) */
	void *arena;			/**< placed weights (ffn_mem_alloc) */
	size_t arena_len;
};

struct ffn_moe_scratch {
	unsigned max_rows;
	uint32_t H;
	size_t bytes;
	int numa;		/**< allocated with numa_alloc_onnode */
	float *y;		/**< [H]: one expert's output in ffn_moe_mix */
	float *xd;		/**< [max_rows][H]: Q8_K rows dequantised */
	float *g, *u;		/**< [max_rows][I]: f32 experts' gate, up */
	const float **xp;	/**< [max_rows] row pointers (f32 kernels) */
	float **yp;		/**< [max_rows] */
	void *eng;		/**< a kind's own (kind->scratch bytes) */
	size_t eng_len;
};

/**
 * An expert kind: a row of ffn_moe_kinds[] (ffn_moe_kind.c). The loader
 * takes the first row whose tag is the file's and whose fits() accepts H.
 */
struct ffn_moe_kind {
	uint32_t tag;		/**< LYRW quant_format (§5.3) */
	const char *name;	/**< ffn_moe_info.kind */
	const char *tag_name;	/**< the tag's name in messages */
	int (*fits)(uint32_t H);
	/** §5.3 sizes. down: alt 0 the padded [H, S], alt 1 another
	 * accepted size (0: none). */
	uint64_t (*gate_up_bytes)(uint64_t I, uint64_t H);
	uint64_t (*down_bytes)(uint64_t I, uint64_t H, uint64_t S, int alt);
	/** Arena bytes one placed expert needs (a multiple of 64); in_place:
	 * FFN_PLACE_MMAP and gu, the gate_up payload in the mapping, may be
	 * served where it lies. */
	size_t (*arena_bytes)(const struct ffn_moe *m, const void *gu,
			      int in_place);
	/** Place one expert: gu/dn its payloads in the file (dn_bytes long),
	 * dst arena_bytes() bytes (NULL when 0), tmp a float buffer of
	 * max(pad256(2 I H), H S) values. */
	void (*place)(const struct ffn_moe *m, const void *gu, const void *dn,
		      uint64_t dn_bytes, int in_place, void *dst, float *tmp,
		      struct ffn_moe_x *x);
	/** Weight bytes a held expert serves from (ffn_moe_info). */
	uint64_t (*held_bytes)(const struct ffn_moe *m);
	/** Whether ffn_moe_set_kq_q8k() applies: the kind's forward()
	 * can quantise h and the inner activation to Q8_K and take the
	 * integer kernels, as the reference does (spec/moe.md §1). */
	int q8k_path;
	/** Scratch bytes for rows rows on every path the kind takes. */
	size_t (*scratch)(const struct ffn_moe *m, unsigned rows);
	/** y rows = y_e(h rows) (spec/moe.md §1); 0 or -errno. */
	int (*forward)(const struct ffn_moe *m, const struct ffn_moe_x *x,
		       const float *h, unsigned rows, float *y,
		       struct ffn_moe_scratch *s);
	/** Same from Q8_K rows (H % 256 == 0, checked by the caller). */
	int (*forward_q8k)(const struct ffn_moe *m, const struct ffn_moe_x *x,
			   const void *hq, unsigned rows, float *y,
			   struct ffn_moe_scratch *s);
};

extern const struct ffn_moe_kind ffn_moe_kinds[];
extern const unsigned ffn_moe_n_kinds;

/** The row serving tag at hidden size H, or NULL (tag not supported). */
const struct ffn_moe_kind *ffn_moe_kind_of(uint32_t tag, uint32_t H);

/** The name of an LYRW quant_format tag ("Q4_K", "FP4", "?"). */
const char *ffn_moe_tag_name(uint32_t tag);

#endif /* FFN_MOE_PRIV_H */
