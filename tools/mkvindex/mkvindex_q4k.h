/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_MKVINDEX_Q4K_H
#define FFN_MKVINDEX_Q4K_H

/**
 * @file
 * Writes a synthetic K-quant vindex (spec/vindex.md §2.4): index.json with
 * "quant": "q4k", interleaved_q4k.bin and interleaved_q4k_manifest.json.
 * The weights are vw_layer()'s (same seed, same values as the dense
 * layouts), quantised with lib/ffn/kquant's quantisers: gate and up Q4_K,
 * down Q6_K in the chosen bit arrangement (or Q4_K). Rows are zero-padded
 * to multiples of 256 values, as LARQL does.
 */

#include "ffn_kq.h"
#include "vindex_write.h"

struct vw_q4k_opts {
	enum ffn_kq_q6_layout q6;	/**< Q6_K arrangement of down */
	int down_q4k;			/**< 1: down in Q4_K, not Q6_K */
};

/** Write dir (created if missing) from o (f16 and layout ignored). */
int vw_write_q4k(const char *dir, const struct vw_opts *o,
		 const struct vw_q4k_opts *q, char *err, size_t errlen);

#endif /* FFN_MKVINDEX_Q4K_H */
