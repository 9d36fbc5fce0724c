/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Private to the expert routes (shard_expert*.c): the checks of
 * spec/moe.md §4 that several routes share, and the unit's expert state.
 */
#ifndef FFN_SHARD_EXPERT_PRIV_H
#define FFN_SHARD_EXPERT_PRIV_H

#include "shard.h"
#include "wire_moe.h"

/* §4 "no model loaded": neither dense layers nor experts. */
static inline bool
shard_moe_loaded(const struct shard_unit *u)
{
	return u->facts.loaded || u->moe != NULL;
}

/* Whether expert e of layer is held by the unit. */
static inline bool
shard_moe_held(const struct shard_unit *u, uint32_t layer, uint32_t e)
{
	return u->moe != NULL && ffn_moe_held(u->moe, layer, e);
}

/* This lcore's expert scratch (made on its first use), NULL when out of
 * memory or the unit holds no expert. */
struct ffn_moe_scratch *shard_moe_scratch(struct shard_unit *u,
					  unsigned int lcore);

/* The layer-batch checks of §4 for one task, after its frame was read:
 * no model (404), hidden != H (400, hidden 0 passes), not a hybrid MoE,
 * then every pair with w != 0 held. 0 or -EINVAL with err. */
int shard_moe_task_check(const struct shard_unit *u,
			 const struct wire_moe_task *t,
			 struct wire_error *err);

/* One expert on one raw row (the single and batch routes): y = y_e(norm
 * x). 0 or negative (500). */
int shard_moe_one(struct shard_unit *u, uint32_t layer, uint32_t e,
		  const float *x, float *y, unsigned int lcore);

/* Rows an lcore's expert scratch takes per call: one expert's rows of
 * concurrent requests are computed in passes of this many. */
#define SHARD_MOE_ROWS 16

/* §7: the answer's format on a layer or multi-layer route, then the
 * precision guard over the n vectors (hidden[i] floats at v[i]). */
enum wire_fmt shard_moe_answer_format(struct shard_unit *u,
				      const struct shard_http_req *rq,
				      enum wire_moe_family fam,
				      enum wire_fmt own,
				      const float *const *v,
				      const uint32_t *hidden, uint32_t n,
				      unsigned int lcore);

/* Milliseconds since t0_ns. */
double shard_moe_ms_since(uint64_t t0_ns);

#endif /* FFN_SHARD_EXPERT_PRIV_H */
