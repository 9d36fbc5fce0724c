/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FC_EXPERT_H
#define FC_EXPERT_H

/**
 * @file
 * ffn-client --expert-route: one call on an expert route of
 * spec/moe.md §2 (layer-batch[-f16|-i8], multi-layer-batch[-q8k],
 * expert-batch binary, the single JSON expert route, topology), the
 * answer decoded by its Content-Type (§3, §7) and, with --verify MODEL,
 * recomputed locally with lib/ffn's ffn_moe (§1).
 */

#include <stdint.h>

#include "larql_client.h"

/** What the command line asks of an expert call. */
struct fc_expert_opts {
	const char *url;
	const char *route;	/**< --expert-route */
	const char *experts;	/**< --experts "e:w,e:w", or NULL: routed */
	const char *input;	/**< --input FILE, or NULL: rng */
	const char *verify;	/**< --verify MODEL_DIR, or NULL */
	struct lc_rng *rng;	/**< --random's */
	const uint32_t *layers;	/**< --layer / --layers (tasks, multi) */
	uint32_t nlayers;
	uint32_t hidden;	/**< 0: GET /v1/stats */
	uint32_t num_experts;	/**< 0: GET /v1/expert/topology */
	uint32_t top_k;		/**< routed pairs [8] */
	int wire;		/**< enum lc_fmt asked for (Accept) */
	double max_err;		/**< < 0: the answer format's bound */
	unsigned int show;
};

/** Run it: 0 ok, 1 failure, 2 bad usage, 3 above the error bound. */
int fc_expert_main(const struct fc_expert_opts *o);

#endif /* FC_EXPERT_H */
