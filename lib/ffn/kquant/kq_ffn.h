/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * lib/ffn internal: the K-quant payload (spec/vindex.md §2.4) behind the
 * ffn_model API. ffn_load.c calls ffn_kq_model_load() when the layout is
 * FFN_LAYOUT_Q4K; ffn_compute.c sends Q4K layers to ffn_kq_compute().
 */
#ifndef FFN_KQ_FFN_H
#define FFN_KQ_FFN_H

#include "ffn_priv.h"

/**
 * Load the owned layers (m->info first..last, H set; m->layers allocated)
 * from dir's interleaved_q4k.bin + manifest. nf[L] = num_features of layer
 * L (index.json). Fills m->layers, m->kq and the placement fields of
 * m->info. Returns 0 or FFN_ERR_KQUANT / FFN_ERR_NOMEM / FFN_ERR_NUMA with
 * a message naming the manifest entry at fault.
 */
int ffn_kq_model_load(struct ffn_model *m, const char *dir,
		      const uint32_t *nf, const struct ffn_load_opts *o,
		      char *err, size_t errlen);

/** Scratch bytes the K-quant layers of m need for max_rows rows. */
size_t ffn_kq_scratch_bytes(const struct ffn_model *m, unsigned max_rows);

/** ffn_compute() for a K-quant layer (rows gathered through s->xb/yb). */
int ffn_kq_compute(const struct ffn_model *m, unsigned layer,
		   const float *const *x, float *const *y, unsigned rows,
		   struct ffn_scratch *s);

/** ffn_compute_part() for a K-quant layer (slice checked by the caller). */
int ffn_kq_compute_part(const struct ffn_model *m, unsigned layer,
			unsigned f0, unsigned f1, const float *const *x,
			float *const *y, unsigned rows, struct ffn_scratch *s);

/** Gate dots of a K-quant layer for features mode: g[f], f < nf. */
int ffn_kq_gate(const struct ffn_model *m, unsigned layer, const float *x,
		float *g, struct ffn_scratch *s);

#endif
