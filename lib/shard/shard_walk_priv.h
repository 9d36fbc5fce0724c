/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Private to lib/shard's request lifecycle (shard_route.c, shard_resp.c,
 * shard_walk*.c, shard_split.c).
 */
#ifndef FFN_SHARD_WALK_PRIV_H
#define FFN_SHARD_WALK_PRIV_H

#include "shard.h"

/* Rows gathered for one compute pass; more rows make more passes. */
#define SHARD_PASS_ROWS 256

/* Count one compute pass of rows in the rows-per-pass histogram. */
void shard_count_batch(struct shard_stats *st, unsigned int rows);

/* Count one expert run over rows rows (issue 23): rows, runs and the
 * rows-per-run histogram. */
void shard_count_expert_run(struct shard_stats *st, unsigned int rows);

/* Count one request's compute time in the latency histogram. */
void shard_count_latency(struct shard_stats *st, double ms);

/* requests requests waited ns for layer's compute on lcore (one pass or
 * several of the same layer): to u->layer_time, when set (the grid's
 * per-layer latency, spec/wire.md §9.3). */
static inline void
shard_count_layer(struct shard_unit *u, unsigned int lcore, uint32_t layer,
		  uint64_t ns, unsigned int requests)
{
	if (u->layer_time != NULL && requests > 0)
		u->layer_time(u->layer_time_arg, lcore, layer, ns, requests);
}

/* A 200 whose body is one range at body (not owned: the caller sets
 * r->heap or r->mem). */
void shard_resp_one(struct shard_resp *r, const char *type, void *body,
		    size_t len);

/* The error a wire check found (spec/wire.md §4): its status and text. */
void shard_resp_wire_error(struct shard_resp *r, const struct wire_error *e);
/** Fill r with a framework error: msg as a text/plain; charset=utf-8
 * body (spec/moe.md §4; the reference's axum rejections). */
void shard_resp_text(struct shard_resp *r, int status, const char *msg);

/* Route handlers (shard_routes[], shard_route.c). */
void shard_walk_handle(struct shard_unit *u, const struct shard_http_req *rq,
		       struct shard_resp *resp, const struct shard_ctx *ctx);
void shard_walk_json(struct shard_unit *u, const struct shard_http_req *rq,
		     struct shard_resp *resp, const struct shard_ctx *ctx);
void shard_walk_q8k(struct shard_unit *u, const struct shard_http_req *rq,
		    struct shard_resp *resp, const struct shard_ctx *ctx);

#endif /* FFN_SHARD_WALK_PRIV_H */
