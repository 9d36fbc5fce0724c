/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_FRONT_FRAME_H
#define FFN_FRONT_FRAME_H

/**
 * @file
 * The fan-out front's frames (issue 19), without sockets or mbufs: how a
 * client's walk-ffn request is split by owner into sub-requests, and how
 * the shards' answers become the one answer the client negotiated.
 *
 * Binary (spec/wire.md §3, §5.2): every sub-request carries the same rows
 * (the client's payload, by reference) and the layers its shard owns, in
 * the client's order. The shards' answers are merged in the client's layer
 * order; their f16 and i8 payload bytes are referenced, never decoded and
 * re-encoded. Only a shard that answered wider than the client's format
 * (f32 where f16 was negotiated, f32 or f16 where i8 was) has its payload
 * narrowed here (spec/wire.md §5.3), and that is counted.
 *
 * JSON (spec/wire.md §6, §7): as the reference router fans out, with the
 * client's members kept byte for byte.
 *
 * Answers arrive in pieces (TCP segments): a body is a front_gather, a
 * list of ranges in order. Plain C, no DPDK.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most layer ranges (owners) of one front. */
#define FRONT_MAX_RANGES 64

/** The owners: range i holds layers first[i]..last[i] (inclusive). The
 * ranges are sorted, disjoint and contiguous from 0 (lib/conf checks). */
struct front_layout {
	unsigned int n;
	uint32_t first[FRONT_MAX_RANGES];
	uint32_t last[FRONT_MAX_RANGES];
};

/** The range that owns layer, or -1 (beyond the last range). */
int front_layout_owner(const struct front_layout *l, uint32_t layer);

/* ---- bodies in pieces ----------------------------------------------- */

/** A body as ranges, in order; len is their sum. */
struct front_gather {
	const struct iovec *iov;
	unsigned int n;
	size_t len;
};

/** Copy bytes [off, off + len) of g into dst. 0, or -ERANGE past g. */
int front_gather_copy(const struct front_gather *g, size_t off, void *dst,
		      size_t len);

/** Write into out (cap entries) the ranges of g that cover
 * [off, off + len), in order. Their count, or -ERANGE past g, -ENOSPC
 * when cap is too small. len 0: 0. */
int front_gather_ranges(const struct front_gather *g, size_t off,
			size_t len, struct iovec *out, unsigned int cap);

/** How many ranges front_gather_ranges() gives for [off, off + len)
 * (empty ranges of g are never given); 0 past g. */
unsigned int front_gather_count(const struct front_gather *g, size_t off,
				size_t len);

/* ---- memory --------------------------------------------------------- */

/** Where the front's per-request memory comes from: buffers that go to
 * the NIC (headers, narrowed payloads) must be DPDK memory there; tests
 * use the heap. alloc returns 64-byte aligned memory or NULL. */
struct front_alloc {
	void *(*alloc)(void *arg, size_t size);
	void (*free)(void *arg, void *p);
	void *arg;
};

/** aligned_alloc/free, for tools and tests (size 0 gives a block). */
extern const struct front_alloc front_alloc_heap;

/* ---- binary: split ---------------------------------------------------- */

/** One sub-request: its range's layers of the client's request, in the
 * client's order, then the client's payload (by reference). */
struct front_sub {
	unsigned int range;		/**< index in the layout */
	uint32_t n_layers;
	const uint8_t *hdr;		/**< the frame up to the payload */
	uint32_t hdr_len;		/**< 16 (single form) or 20 + 4K */
};

/**
 * A client's binary request split by owner. A sub with one layer is sent
 * in the single form (its shard answers a single frame, §5.2), one with
 * several in the batch form. When every layer has one owner, the one sub
 * is the client's own frame header (the request goes as it came).
 */
struct front_plan {
	uint32_t n_layers;		/**< the client's results */
	uint32_t seq_len;
	enum wire_fmt fmt_in;		/**< the payload's format */
	const uint8_t *payload;		/**< the client's, sent to every sub */
	size_t payload_len;
	unsigned int n_sub;
	struct front_sub sub[FRONT_MAX_RANGES];
	/** Client result i comes from sub res_sub[i], where it is result
	 * res_idx[i] (in plan memory). */
	uint16_t *res_sub;
	uint32_t *res_idx;
	uint32_t *layer;		/**< client layer i */
	void *mem;			/**< the plan's memory (alloc) */
};

/**
 * Split rq (decoded from body, wire_req_decode, and validated,
 * wire_req_validate) by the owners in l. Subs are in the order their
 * owners first appear in the client's layer list; a layer listed twice
 * stays twice. rq->n_layers 0 gives n_sub 0 and no memory (mem, res_sub,
 * res_idx, layer NULL; the empty batch answers it, which
 * front_merge_binary() also builds). Memory from a, one block (free with
 * front_plan_free). The plan points into body (the one-owner header, the
 * payload): body must outlive it. Returns 0; -ENOMEM; -EINVAL with err
 * (400) when a layer has no owner, before any allocation:
 * "layer {L} out of range (num_layers = {N})", N the last range's last + 1.
 */
int front_plan_binary(struct front_plan *p, const struct wire_req *rq,
		      const uint8_t *body, const struct front_layout *l,
		      const struct front_alloc *a, struct wire_error *err);
void front_plan_free(struct front_plan *p, const struct front_alloc *a);

/* ---- binary: merge ---------------------------------------------------- */

/** One shard's 200 answer to sub i. */
struct front_sub_answer {
	enum wire_fmt fmt;		/**< from its Content-Type (exact bare
					 *   binary type; else WIRE_FMT_NONE) */
	struct front_gather body;
};

/** The client's answer: iovcnt ranges of len bytes, memory to free. */
struct front_merged {
	struct iovec *iov;		/**< in mem */
	unsigned int iovcnt;
	size_t len;
	uint32_t narrowed;		/**< results narrowed here */
	void *mem;
};

/**
 * Merge the answers ans[0..p->n_sub) into the client's frame (§5.2) in
 * out_fmt: one result → single frame, else batch (no result: the empty
 * batch); latency_ms, converted to f32 as Rust's `as f32`, in the frame
 * header; per result [layer][seq_len][num_values] then its payload.
 * Payloads in out_fmt are referenced (the answers' bodies must outlive
 * the send); wider ones are narrowed (f32 → f16, f32 → i8, f16 → i8 via
 * the f16 values) into new memory and counted in out->narrowed. Headers
 * and narrowed payloads live in one block from a, with out->iov; ranges
 * of it that follow each other are one iovec.
 * Each answer is checked against its sub first, answers in sub order:
 * a binary format not narrower than out_fmt, frame shape (single when
 * the sub has one layer, else a batch of its n_layers), every layer in
 * order, seq_len and num_values (= seq_len * hidden), payload sizes, no
 * byte left over. A departure: -EPROTO, *bad the sub, err (status 502)
 * "malformed answer: WHAT"; nothing allocated. -EINVAL when out_fmt is
 * not binary or hidden is 0; -ENOMEM. 0 on success (free with
 * front_merged_free).
 */
int front_merge_binary(const struct front_plan *p,
		       const struct front_sub_answer *ans,
		       enum wire_fmt out_fmt, uint32_t hidden,
		       double latency_ms, const struct front_alloc *a,
		       struct front_merged *out, struct wire_error *err,
		       unsigned int *bad);
void front_merged_free(struct front_merged *m, const struct front_alloc *a);

/** The binary format a shard's answer Content-Type (len bytes, no NUL
 * needed; ct may be NULL) names: the whole bare type equal to one of
 * wire_fmt_content_type's, ASCII case-insensitive (RFC 9110 §8.3.1),
 * parameters after ';' and spaces around the type ignored;
 * WIRE_FMT_JSON for application/json; else WIRE_FMT_NONE. */
enum wire_fmt front_answer_fmt(const char *ct, size_t len);

/** The Accept sent to shards for a client answer in fmt: the client
 * type list that makes a shard answer fmt when it can (§5.1), e.g.
 * "application/x-larql-ffn-f16, application/x-larql-ffn" for f16 (a
 * shard with f16 off answers f32, which the merge narrows). NULL when
 * fmt is not a binary format. */
const char *front_accept_for(enum wire_fmt fmt);

/* ---- JSON (§6, §7) ---------------------------------------------------- */

/** The layers of a JSON request grouped by owner. */
struct front_json_plan {
	unsigned int n_sub;
	unsigned int range[FRONT_MAX_RANGES];
	uint32_t n_layers[FRONT_MAX_RANGES];
	uint32_t *layers[FRONT_MAX_RANGES];	/**< client order, in mem */
	void *mem;
};

/**
 * Group n layers (the request's, wire_json_req_layer order) by owner,
 * subs in order of first appearance, duplicates kept. Memory from a
 * (free with front_json_plan_free). 0, -ENOMEM, or -EINVAL with err:
 * 400 "empty layer list" (n 0, as the reference router), 400
 * "layer {L} out of range (num_layers = {N})" (L may exceed u32).
 */
int front_json_plan(struct front_json_plan *jp, const uint64_t *layers,
		    size_t n, const struct front_layout *l,
		    const struct front_alloc *a, struct wire_error *err);
void front_json_plan_free(struct front_json_plan *jp,
			  const struct front_alloc *a);

/**
 * The body of a JSON sub-request, as the reference router builds it: the
 * client's object (len bytes, already accepted by wire_json_req_parse)
 * with its top-level "layer" and "layers" members removed (keys compared
 * unescaped: "lay\u0065r" is "layer") and one added, first: "layer":L
 * for one layer, "layers":[...] for several; every other member byte for
 * byte (from its key to the end of its value, space inside kept), in
 * order, joined by ','. *out from a (free with a->free), NUL-terminated,
 * *out_len bytes without the NUL. 0, -ENOMEM, -EINVAL (not one strict
 * JSON object; nothing allocated).
 */
int front_json_sub_body(const char *body, size_t len, const uint32_t *layers,
			uint32_t n, const struct front_alloc *a, char **out,
			size_t *out_len);

/**
 * Merge the shards' JSON answers ans[0..n) as the reference router does
 * (§7): the elements of each answer's "results" array, or else the
 * answer itself when it has a top-level "layer", stable-sorted by their
 * "layer" read as serde's as_u64() (anything else: 0);
 * {"latency_ms":M,"results":[...]} with M the largest number among the
 * answers' latency_ms (0.0 when none is larger), (M * 10).round() / 10 in
 * serde's float text. Elements (and whole answers, without the space
 * around them) are copied byte for byte; a repeated key counts by its
 * last occurrence, as in a serde map. *out from a (free with a->free),
 * NUL-terminated. 0, -ENOMEM, or -EPROTO with *bad (the first bad
 * answer) and err (502) "malformed answer: WHAT" for an answer that is
 * not one strict JSON object or has neither an array "results" nor a
 * "layer".
 */
int front_json_merge(const struct front_gather *ans, unsigned int n,
		     const struct front_alloc *a, char **out, size_t *out_len,
		     struct wire_error *err, unsigned int *bad);

#ifdef __cplusplus
}
#endif

#endif /* FFN_FRONT_FRAME_H */
