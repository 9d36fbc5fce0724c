/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_WIRE_MOE_H
#define FFN_WIRE_MOE_H

/**
 * @file
 * The expert wire (spec/moe.md §2-§4, §7): request frames, response
 * frames and their negotiation. Part of lib/wire; plain C, no model.
 *
 * Reading rule (§3.6): every length is checked against the body before
 * anything is sized by a wire count (n, hidden, K, ne), in 64-bit
 * arithmetic; a short body is the route's "truncated" error, never an
 * allocation. Decoders point into the body (no copy); multi-byte fields
 * are read unaligned, little-endian.
 *
 * One place per decision: the input encodings (f32, f16, i8, Q8_K) are
 * rows of one table (wire_moe.c), as are the route families' response
 * types (layer, multi-layer) and their negotiation (§7).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a task's residual is encoded on the wire. */
enum wire_moe_in {
	WIRE_MOE_IN_F32 = 0,	/**< hidden f32 (3.2, 3.4) */
	WIRE_MOE_IN_F16,	/**< hidden f16 (3.3) */
	WIRE_MOE_IN_I8,		/**< [scale f32][zero f32][hidden i8] (§7) */
	WIRE_MOE_IN_Q8K,	/**< qs[hidden] d[nb] sums[8 nb] (3.5), pre-normed */
	WIRE_MOE_IN_COUNT
};

/** The response families of §7 (their Content-Types differ). */
enum wire_moe_family {
	WIRE_MOE_LAYER = 0,	/**< application/x-larql-experts-layer[-f16|-i8] */
	WIRE_MOE_MULTI,		/**< application/x-larql-experts-multi-layer[...] */
	WIRE_MOE_FAMILY_COUNT
};

/** One layer batch (3.2, 3.3, §7 i8, or one task of 3.4 / 3.5). */
struct wire_moe_task {
	uint32_t layer;
	uint32_t hidden;
	uint32_t k;		/**< pairs (K, ne) */
	enum wire_moe_in in;
	const uint8_t *x;	/**< the residual's bytes, encoded as `in` */
	size_t x_len;		/**< its bytes: wire_moe_in_bytes(in, hidden) */
	/* private: use wire_moe_task_pair() */
	const uint8_t *ids_;
	const uint8_t *w_;
	size_t stride_;		/**< 8: (id, w) interleaved; 4: two arrays */
};

/** Bytes of a residual of hidden values encoded as in; 0 on overflow.
 * f32 4h, f16 2h, i8 8 + h, Q8_K h + 4 nb + 16 nb (nb = h / 256,
 * floor: §3.5). */
uint64_t wire_moe_in_bytes(enum wire_moe_in in, uint64_t hidden);

/** Pair i (< t->k) of a task: expert id and weight, as sent. */
void wire_moe_task_pair(const struct wire_moe_task *t, uint32_t i,
			uint32_t *expert, float *weight);

/**
 * Decode a task's residual to hidden f32 values in dst (f32 copied,
 * f16 widened exactly, i8 x = q * scale + zero_point in f32, §7; Q8_K
 * h = d[i/256] * qs[i]). dst must not overlap the body.
 */
void wire_moe_task_x(const struct wire_moe_task *t, float *dst);

/**
 * Decode a layer-batch body (3.2 f32, 3.3 f16, §7 i8; in says which).
 * Only the frame's length is checked here: a body shorter than
 * 12 + wire_moe_in_bytes(in, hidden) + 8K is 400
 * "layer-batch request truncated" ("layer-batch-f16 request truncated",
 * "layer-batch-i8 request truncated"); trailing bytes are ignored.
 * Returns 0, or -EINVAL with err filled.
 */
int wire_moe_layer_decode(struct wire_moe_task *t, const void *body,
			  size_t len, enum wire_moe_in in,
			  struct wire_error *err);

/**
 * Check a whole multi-layer body (3.4 when in is F32, 3.5 when Q8K):
 * n, then every task fits (400 "multi-layer-batch request truncated" /
 * "multi-layer-batch-q8k request truncated"). Returns 0 and *n, or
 * -EINVAL with err filled. Then wire_moe_multi_next() walks the tasks.
 */
int wire_moe_multi_check(const void *body, size_t len, enum wire_moe_in in,
			 uint32_t *n, struct wire_error *err);

/** The next task of a body wire_moe_multi_check() accepted: start with
 * *pos = 4 and call once per task, in order. */
void wire_moe_multi_next(const void *body, size_t *pos, enum wire_moe_in in,
			 struct wire_moe_task *t);

/* ---- /v1/expert/batch, binary (3.1) ---- */

/** One item of a binary expert batch, pointing into the body. */
struct wire_moe_item {
	uint32_t layer;
	uint32_t expert;
	const uint8_t *x;	/**< hidden f32, unaligned */
};

/**
 * Check a binary expert-batch body: at least 8 + n (8 + 4 hidden) bytes
 * (400 "binary expert request truncated"); trailing bytes ignored; n = 0
 * valid. Returns 0 with *n, *hidden, or -EINVAL with err filled.
 */
int wire_moe_batch_check(const void *body, size_t len, uint32_t *n,
			 uint32_t *hidden, struct wire_error *err);

/** Item i (< n) of a body wire_moe_batch_check() accepted. */
void wire_moe_batch_item(const void *body, uint32_t hidden, uint32_t i,
			 struct wire_moe_item *it);

/** Bytes of the binary batch answer: 12 + n (8 + 4 hidden); 0 on
 * overflow. Layout: n, hidden (0 when n = 0), latency_ms f32, then per
 * item layer, expert_id, hidden f32. */
size_t wire_moe_batch_resp_size(uint32_t n, uint32_t hidden);
/** Write the header (hidden is written 0 when n is 0). */
void wire_moe_batch_resp_hdr(void *buf, uint32_t n, uint32_t hidden,
			     float latency_ms);
/** Item i's header; returns where its hidden f32 outputs go. */
float *wire_moe_batch_resp_item(void *buf, uint32_t hidden, uint32_t i,
				uint32_t layer, uint32_t expert);

/* ---- responses of the layer and multi-layer routes (§3, §7) ---- */

/**
 * The answer's format on a layer or multi-layer route (§7): own is the
 * route's own format (WIRE_FMT_F32, F16 for layer-batch-f16, I8 for
 * layer-batch-i8). The first Accept field is searched by substring (as
 * wire.md §5.1): the family's i8 token with o->i8 -> I8; else its f16
 * token with o->f16 -> F16; else own. accept may be NULL.
 */
enum wire_fmt wire_moe_response_format(enum wire_moe_family fam,
				       enum wire_fmt own, const char *accept,
				       size_t len, const struct wire_opts *o);

/** The Content-Type of fmt (F32, F16, I8) in family fam; NULL else. */
const char *wire_moe_content_type(enum wire_moe_family fam,
				  enum wire_fmt fmt);

/** Bytes of one result vector of hidden values in fmt (§7): f32 4h,
 * f16 2h, i8 8 + h; 0 when hidden is 0 (every format: no i8 header). */
size_t wire_moe_vec_bytes(enum wire_fmt fmt, uint32_t hidden);

/**
 * Encode hidden f32 values as fmt into dst (wire_moe_vec_bytes bytes):
 * f32 as is, f16 round-nearest-even with overflow to +-Inf (wire.md
 * §5.3), i8 [scale][zero_point 0][q] as one row of wire.md §5.3.
 * dst may equal src (in place, narrowing); no other overlap.
 */
void wire_moe_vec_encode(enum wire_fmt fmt, const float *src,
			 uint32_t hidden, void *dst);

/** The precision guard's test (§7): whether narrowing some finite value
 * of v to f16 gives +-Inf. */
bool wire_moe_f16_overflows(const float *v, size_t n);

/** Layer-batch answer: [hidden][latency_ms f32][vector in fmt]. */
#define WIRE_MOE_LAYER_HDR 8u
void wire_moe_layer_resp_hdr(void *buf, uint32_t hidden, float latency_ms);

/** Multi-layer answer: [n] then per task [layer][hidden][vector]. */
void wire_moe_multi_resp_count(void *buf, uint32_t n);
void wire_moe_multi_resp_task(void *at, uint32_t layer, uint32_t hidden);

/* ---- JSON (single and batch routes, §2 "JSON shapes", §4) ---- */

/**
 * Format an f32 as the reference's expert JSON does: the shortest
 * decimal that round-trips as f32 ("-0.6366043", "0.0" for zero, "1.0",
 * "1e-7"); non-finite -> "null". buf needs 32 bytes; returns length.
 */
int wire_json_fmt_f32(char *buf, float v);

/**
 * The single route's body {"residual":[numbers]} (unknown keys ignored).
 * Syntax errors: 400 "Failed to parse the request body as JSON: DETAIL";
 * residual missing or not an array of numbers: 422 "Failed to
 * deserialize the JSON body into the target type: DETAIL". Both are
 * framework errors (err->text). *residual is malloc'd (n values).
 * Returns 0, -EINVAL or -ENOMEM (500) with err filled.
 */
int wire_moe_json_single(const char *body, size_t len, float **residual,
			 size_t *n, struct wire_error *err);

/** One item of a JSON expert batch. */
struct wire_moe_json_item {
	uint64_t layer;
	uint64_t expert;
	float *residual;	/**< n values, inside the batch's allocation */
	size_t n;
};

/**
 * The batch route's JSON body {"requests":[{"layer":L,"expert_id":E,
 * "residual":[...]},...]} (unknown keys ignored). Anything that does not
 * parse as that shape: 400 "JSON parse: DETAIL" (a LARQL-code error, JSON
 * body). *items is one malloc'd block (free() it), *n items.
 */
int wire_moe_json_batch(const char *body, size_t len,
			struct wire_moe_json_item **items, size_t *n,
			struct wire_error *err);

/** {"output":[H numbers],"latency_ms":F} (latency an f64, unrounded).
 * *out malloc'd; 0 or -ENOMEM. */
int wire_moe_json_single_resp(const float *y, size_t n, double latency_ms,
			      char **out, size_t *out_len);

/** {"results":[{"layer":L,"expert_id":E,"output":[...]},...],
 * "latency_ms":F} (latency as f32). outputs[i] holds hidden values. */
int wire_moe_json_batch_resp(const uint64_t *layers, const uint64_t *experts,
			     const float *const *outputs, size_t n,
			     size_t hidden, float latency_ms, char **out,
			     size_t *out_len);

/** {"model_id":S,"num_experts":N,"num_layers":L,"owned_start":A,
 * "owned_end":B} (model_id JSON-escaped). */
int wire_moe_json_topology(const char *model_id, uint32_t num_experts,
			   uint32_t num_layers, uint32_t start, uint32_t end,
			   char **out, size_t *out_len);

#ifdef __cplusplus
}
#endif

#endif /* FFN_WIRE_MOE_H */
