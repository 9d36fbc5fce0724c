/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * What every expert route shares (spec/moe.md §4's checks, one expert
 * on one row, the §7 answer format and guard, the lcore's scratch); the
 * routes are shard_expert_many.c (layer and multi-layer batches) and
 * shard_expert_batch.c (single, batch, topology).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"
#include "shard_expert_priv.h"
#include "shard_walk_priv.h"

struct ffn_moe_scratch *
shard_moe_scratch(struct shard_unit *u, unsigned int lcore)
{
	struct ffn_moe_scratch **s = &u->moe_scratch[lcore % SHARD_MAX_LCORE];

	/* One writer per lcore index (shard.h): no lock. Made here, on
	 * the lcore that uses it, so its memory is that lcore's node. */
	if (*s == NULL && u->moe != NULL)
		*s = ffn_moe_scratch_new(u->moe, SHARD_MOE_ROWS, -1);
	return *s;
}

double
shard_moe_ms_since(uint64_t t0_ns)
{
	return (double)(shard_now_ns() - t0_ns) / 1e6;
}

static uint32_t
moe_hidden(const struct shard_unit *u)
{
	return u->moe_hidden ? u->moe_hidden : u->facts.hidden;
}

int
shard_moe_task_check(const struct shard_unit *u,
		     const struct wire_moe_task *t, struct wire_error *err)
{
	uint32_t e;
	float w;

	if (!shard_moe_loaded(u))
		return wire_error_set(err, 404, "no model loaded");
	if (t->hidden == 0)
		return 0;	/* §4: 200 with an empty vector */
	if (t->hidden != moe_hidden(u))
		return wire_error_set(err, 400,
			"residual length %u != hidden_size %u", t->hidden,
			moe_hidden(u));
	if (!u->moe_hybrid)
		return wire_error_set(err, 400, "model is not a hybrid MoE "
			"\u2014 no expert endpoints available");
	/* §1: a pair whose weight is 0 (either sign) is skipped without
	 * looking its expert up; any other must be held, or the sum would
	 * be partial (the reference's silent skip, §4). */
	for (uint32_t k = 0; k < t->k; k++) {
		wire_moe_task_pair(t, k, &e, &w);
		if (w == 0.0f)
			continue;
		if (!shard_moe_held(u, t->layer, e))
			return wire_error_set(err, 400,
				"expert %u of layer %u is not held by this "
				"shard", e, t->layer);
	}
	return 0;
}

int
shard_moe_one(struct shard_unit *u, uint32_t layer, uint32_t e,
	      const float *x, float *y, unsigned int lcore)
{
	struct ffn_moe_scratch *s = shard_moe_scratch(u, lcore);
	struct shard_stats *st = &u->stats[lcore % SHARD_MAX_LCORE];
	float *h;
	int rc;

	if (s == NULL)
		return -ENOMEM;
	h = malloc((size_t)u->moe_hidden * sizeof(float));
	if (h == NULL)
		return -ENOMEM;
	ffn_moe_norm(u->moe, layer, x, h);
	rc = ffn_moe_expert(u->moe, layer, e, h, 1, y, s);
	free(h);
	if (rc == 0)
		shard_count_expert_run(st, 1);
	return rc;
}

/*
 * §7: the answer's format, then the precision guard: f16 chosen by
 * Accept for a route whose own format is not f16, and some finite value
 * would narrow to +-Inf: the answer goes in f32 (its Content-Type says
 * so), counted. n vectors of hidden[i] floats at v[i].
 */
enum wire_fmt
shard_moe_answer_format(struct shard_unit *u, const struct shard_http_req *rq,
			enum wire_moe_family fam, enum wire_fmt own,
			const float *const *v, const uint32_t *hidden,
			uint32_t n, unsigned int lcore)
{
	enum wire_fmt fmt = wire_moe_response_format(fam, own, rq->accept,
						     rq->accept_len,
						     &u->wire);

	if (fmt != WIRE_FMT_F16 || own == WIRE_FMT_F16 || !u->f16_guard)
		return fmt;
	for (uint32_t i = 0; i < n; i++)
		if (wire_moe_f16_overflows(v[i], hidden[i])) {
			u->stats[lcore % SHARD_MAX_LCORE].f16_guard++;
			return WIRE_FMT_F32;
		}
	return fmt;
}
