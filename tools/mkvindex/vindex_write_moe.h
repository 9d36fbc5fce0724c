/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_VINDEX_WRITE_MOE_H
#define FFN_VINDEX_WRITE_MOE_H

/**
 * @file
 * Writes synthetic hybrid-MoE vindexes (spec/moe.md §5), deterministic by
 * seed: index.json with the §5.1 keys, weight_manifest.json + norms.bin
 * with the §5.2 vectors of every layer (the pre-experts norm the shard
 * needs and what a client needs to route and combine),
 * layers/layer_{LL}.weights in LYRW (§5.3, Q4_K or F32), and the
 * embeddings.bin and tokenizer.json the reference needs to boot (§5.4).
 * The dense FFN of the hybrid layers is the K-quant payload of
 * mkvindex_q4k.h (index.json "quant" must be "q4k", §5.1), unless
 * no_dense: then "layers" is [] and there is no dense payload.
 *
 * Expert weights: G_e, U_e N(0, 1/H), D_e N(0, 1/I), each (layer, expert,
 * matrix) from its own stream, so a layer's experts do not depend on
 * which layers get a file. Q4_K is lib/ffn/kquant's quantiser on the
 * flattened gate_up (a final partial block zero-filled) and on each down
 * row padded to S = pad256(I).
 */

#include <stddef.h>

#include "mkvindex_q4k.h"
#include "vindex_write.h"

/** LYRW quant_format tags (spec/moe.md §5.3). */
#define VW_LYRW_F32	0u
#define VW_LYRW_Q4K	4u

struct vw_moe_opts {
	unsigned experts;	/**< E, model_config.moe.num_experts */
	unsigned width;		/**< I, moe_intermediate_size */
	unsigned top_k;		/**< informational */
	unsigned tag;		/**< VW_LYRW_Q4K or VW_LYRW_F32 */
	unsigned first, last;	/**< layers with a layer file (inclusive) */
	int no_dense;		/**< expert-only: "layers": [] */
};

/**
 * Write the hybrid-MoE vindex of o (hidden, layers, intermediate,
 * widths, model_type, family, seed, vocab: 0 means 16) and m to dir
 * (created if missing). 0 or -errno with err set.
 */
int vw_write_moe(const char *dir, const struct vw_opts *o,
		 const struct vw_q4k_opts *q, const struct vw_moe_opts *m,
		 char *err, size_t errlen);

/**
 * Write spec/moe.md §6's example to dir: tag VW_LYRW_Q4K gives the
 * reference-servable files (I = 32, the 1528-byte layer file), tag
 * VW_LYRW_F32 the 280-byte F32 variant (I = 2, down unpadded).
 * 0 or -errno with err set.
 */
int vw_write_moe_example(const char *dir, unsigned tag, char *err,
			 size_t errlen);

#endif /* FFN_VINDEX_WRITE_MOE_H */
