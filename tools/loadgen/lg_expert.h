/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef LG_EXPERT_H
#define LG_EXPERT_H

/**
 * @file
 * ffn-loadgen's expert requests (spec/moe.md, issue 23): layer batches
 * on POST /v1/experts/layer-batch[-f16|-i8] (§3.2, §3.3, §7 i8), routed
 * as a real client routes (§2 "What the reference client sends"), and
 * the answers they must get (§3.2, §7). The codecs are lib/wire's
 * (wire_moe.h). Plain C, no DPDK: lg_expert_setup.c prepares the HTTP
 * requests from these bodies.
 *
 * Every request is a function of (seed, index) alone: its residual x in
 * [-1, 1), its router logits, hence its pairs. So --verify-body holds
 * every answer to the first answer to the same request.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lg_frame.h"

/** Distinct requests prepared per target (picked round robin). */
#define LG_EXPERT_POOL 8	/* at least; one per client if more */
/** Pairs per request at most (--top-k). */
#define LG_EXPERT_MAX_K 256

/** The layer-batch routes (spec/moe.md §2, §7). */
enum lg_expert_route {
	LG_XR_LAYER = 0,	/**< /v1/experts/layer-batch, f32 x */
	LG_XR_LAYER_F16,	/**< ...-f16, f16 x */
	LG_XR_LAYER_I8,		/**< ...-i8, [scale][zero][i8] x */
	LG_XR_COUNT
};

/** "layer-batch", "layer-batch-f16", "layer-batch-i8" -> route, or
 * -EINVAL. */
int lg_expert_route_parse(const char *s);
const char *lg_expert_route_name(int route);
/** The route's path: "/v1/experts/layer-batch[-f16|-i8]". */
const char *lg_expert_path(int route);
/** The request's Content-Type (the route's own type, as the reference
 * client sends it). */
const char *lg_expert_req_ctype(int route);

/**
 * What goes in Accept for an answer in wire (enum lc_fmt: f32, f16, i8):
 * the layer family's token of that format (§7 table).
 */
const char *lg_expert_accept(int wire);

/**
 * The answer's format (enum lc_fmt) the negotiation of §7 gives for
 * that Accept on route, the shard having f16 and i8 on (rule 1: i8
 * token -> i8; rule 2: f16 token -> f16; else the route's own format).
 */
int lg_expert_answer_fmt(int route, int wire);
/** Its Content-Type (the family's type of that format). */
const char *lg_expert_answer_ctype(int fmt);

/** One request of the pool. */
struct lg_expert_spec {
	int route;
	uint32_t hidden;
	uint32_t layer;
	uint32_t num_experts;	/**< E: the router's width */
	uint32_t first, last;	/**< owned expert ids, inclusive */
	uint32_t top_k;
	uint32_t seed;
	uint32_t index;		/**< which request of the pool */
};

/** Experts the router may pick for sp: owned and below E. */
uint32_t lg_expert_owned(const struct lg_expert_spec *sp);

/**
 * The request's residual (hidden values in [-1, 1)) and routing: router
 * logits, softmax over the E experts, the top-k of the owned ones (ties:
 * the lower id), their probabilities renormalised to sum 1, in top-k
 * order (§1: the shard uses them as sent). *k = min(top_k, owned).
 * x may be NULL. Returns 0, or -EINVAL (no owned expert, E or top_k 0
 * or above LG_EXPERT_MAX_K).
 */
int lg_expert_draw(const struct lg_expert_spec *sp, float *x, uint32_t *ids,
		   float *w, uint32_t *k);

/**
 * The request body of sp (§3.2, §3.3 or §7 i8), malloc'd in *body.
 * Returns its length, or -EINVAL / -ENOMEM.
 */
ssize_t lg_expert_body(const struct lg_expert_spec *sp, uint8_t **body);

/**
 * Expect a layer-batch answer of hidden values in fmt (enum lc_fmt):
 * [hidden][latency_ms][vector], 8 + wire_moe_vec_bytes bytes; hidden is
 * the field checked. f->expert is set: lg_frame_values_close() compares
 * such answers with lg_expert_values_close().
 */
int lg_expert_frame_expect(struct lg_frame *f, int fmt, uint32_t hidden);

/**
 * lg_frame_values_close() of two layer-batch answers: one row, the
 * tolerance of its format (f32 1e-5, f16 2^-10 + 1e-5, i8 2/127 of the
 * row's largest |value|, + 1e-6). 1 agree, 0 not.
 */
int lg_expert_values_close(const struct lg_frame *f, const uint8_t *ref,
			   const uint8_t *body, double *worst);

#endif /* LG_EXPERT_H */
