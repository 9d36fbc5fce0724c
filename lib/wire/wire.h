/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_WIRE_H
#define FFN_WIRE_H

/**
 * @file
 * The LARQL remote-FFN wire: negotiation, binary frames, JSON path
 * (spec/wire.md §3-§6 is the definition; section numbers below refer to it).
 * Plain C: no DPDK, no mbufs. Nothing on the binary path allocates or
 * copies a payload except into the caller's f32 buffer (request) and the
 * in-place narrowing of the compute's output (response).
 *
 * Request flow (binary):
 *   wire_request_format(Content-Type)       -> binary? which payload format
 *   wire_req_decode(body)                   -> header, layer list, payload view
 *   wire_req_validate(req, model facts)     -> later rows of the §4 table
 *   wire_req_payload_view(req)              -> f32 rows in place, or NULL:
 *   wire_req_payload_f32(req, dst)          -> seq_len x hidden f32 rows
 * Response flow (binary), fmt = wire_response_format(Accept, opts):
 *   per result i (any order, any lcore):
 *     slot_i = caller memory of wire_slot_size(fmt, seq_len, hidden) bytes
 *     compute writes seq_len x hidden f32 rows at wire_slot_f32(slot_i, ...)
 *     wire_slot_finish(slot_i, ..., &iov[1 + i])   (narrows in place)
 *   wire_frame_finish(&frame, iov, n, latency_ms) -> frame.iov/iovcnt/len
 * Every error is a struct wire_error: HTTP status + exact message; the body
 * is wire_error_json() with Content-Type application/json (§4).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Formats and negotiation (§3, §5.1)                                 */
/* ------------------------------------------------------------------ */

/**
 * The format of a walk-ffn body, in either direction: the three binary
 * number formats (§3, §5) and the JSON path (§6). One enum for every
 * layer: counters, metrics labels and responses index by it. A new format
 * is one name here and one row of wire_neg.c's table, plus its codec.
 * The binary formats come first (below WIRE_FMT_JSON).
 */
enum wire_fmt {
	WIRE_FMT_NONE = -1,	/**< no walk-ffn body (errors, small routes) */
	WIRE_FMT_F32 = 0,	/**< application/x-larql-ffn */
	WIRE_FMT_F16,		/**< application/x-larql-ffn-f16 */
	WIRE_FMT_I8,		/**< application/x-larql-ffn-i8 */
	WIRE_FMT_JSON,		/**< application/json (§6) */
	WIRE_FMT_COUNT
};

/** Server switches for response formats (§5.1). */
struct wire_opts {
	bool f16;	/**< f16 responses enabled (default true) */
	bool i8;	/**< i8 responses enabled (default false, opt-in) */
};

/** Set the reference server's defaults: f16 on, i8 off. */
void wire_opts_default(struct wire_opts *o);

/**
 * Apply the reference's environment variables, by presence (§5.1):
 * LARQL_I8_WIRE set -> i8 = true; LARQL_F16_WIRE_DISABLE set -> f16 = false.
 * Absent variables leave o unchanged (so config keys can be applied first
 * or after, as the caller decides).
 */
void wire_opts_apply_env(struct wire_opts *o);

/** The bare Content-Type of fmt ("application/x-larql-ffn[-f16|-i8]",
 * "application/json"); NULL for WIRE_FMT_NONE or out of range. */
const char *wire_fmt_content_type(enum wire_fmt fmt);

/** Short name: "f32", "f16", "i8", "json"; "none" out of range. */
const char *wire_fmt_name(enum wire_fmt fmt);

/** Whether the server answers in fmt under o (§5.1: f16 and i8 have
 * switches; f32 and JSON are always on). */
bool wire_fmt_enabled(const struct wire_opts *o, enum wire_fmt fmt);

/**
 * Classify a request by its Content-Type value (§3). ct may be NULL
 * (header absent); len is its length (no NUL needed).
 * Returns true for a binary request and sets *fmt to the payload format
 * (substring tests, case-sensitive, in the spec's order: -i8, -f16, else
 * f32); false for the JSON path (*fmt untouched: a caller that wants one
 * answer sets it to WIRE_FMT_JSON first).
 * A value holding a byte outside visible ASCII (0x20-0x7e) and HTAB is
 * treated as absent, as the reference's HeaderValue::to_str() does.
 */
bool wire_request_format(const char *ct, size_t len, enum wire_fmt *fmt);

/**
 * Response format from the request's Accept (§5.1). accept may be NULL
 * (no Accept header -> f32). Never fails (no 406).
 *
 * "First value only" (§5.1): the reference takes the FIRST Accept header
 * field (HeaderMap::get) and runs substring tests over that whole field
 * value, commas included; it does not split on ','. So the caller passes
 * the first Accept field line's value, and with the default client Accept
 * "application/x-larql-ffn-i8, application/x-larql-ffn-f16,
 * application/x-larql-ffn" the answer is i8 when o->i8, else f16 when
 * o->f16, else f32. Non-visible-ASCII values count as absent (as above).
 */
enum wire_fmt wire_response_format(const char *accept, size_t len,
				   const struct wire_opts *o);

/* ------------------------------------------------------------------ */
/* Errors (§4)                                                        */
/* ------------------------------------------------------------------ */

#define WIRE_ERR_MSG_MAX 512

/** An HTTP status and the exact message of the reference server. */
struct wire_error {
	int status;			/**< 400, 404, 500, 503, ... */
	/** A framework error (spec/moe.md §4): the body is msg itself as
	 * text/plain; charset=utf-8, not {"error":msg}. */
	bool text;
	char msg[WIRE_ERR_MSG_MAX];	/**< UTF-8, NUL-terminated */
};

/** Fill e (printf format; truncated to fit; e->text false). Returns
 * -EINVAL always, so callers can write
 * `return wire_error_set(e, 400, "...")`. */
int wire_error_set(struct wire_error *e, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * Write the error body {"error":"MSG"} (JSON string escaping as
 * serde_json: \" \\ \b \f \n \r \t, other controls \u00xx; UTF-8 and '/'
 * as is) into buf of cap bytes, NUL-terminated.
 * Returns the body length (without NUL), or -ENOSPC when cap is too small
 * (6 * strlen(msg) + 13 always suffices).
 */
int wire_error_json(const struct wire_error *e, char *buf, size_t cap);

/* ------------------------------------------------------------------ */
/* Binary request (§3, §4)                                            */
/* ------------------------------------------------------------------ */

#define WIRE_BATCH_MARKER 0xFFFFFFFFu
#define WIRE_REQ_HDR_MIN 16u	/**< shortest legal body (§4 row 1) */

/**
 * A structurally decoded binary request. Points into the body (no copy):
 * the body must outlive it.
 */
struct wire_req {
	enum wire_fmt fmt;	/**< payload format (from Content-Type) */
	bool batch;		/**< body started with WIRE_BATCH_MARKER */
	uint32_t n_layers;	/**< 1 (single) or K (batch; may be 0) */
	uint32_t seq_len;
	uint32_t flags;		/**< bit 0: full output */
	uint32_t top_k;		/**< ignored for the result (§1) */
	const uint8_t *payload;	/**< rest of the body; any alignment */
	size_t payload_len;
	/**
	 * Values the payload decodes to: f32 len/4, f16 len/2, i8
	 * rows * row_values (0 for an empty i8 payload, as the reference).
	 */
	uint64_t n_values;
	uint32_t i8_rows;	/**< i8: max(seq_len, 1) rows, else 0 */
	uint64_t i8_row_values;	/**< i8: values per row (len/rows - 8) */
	/* private: use wire_req_layer() */
	uint32_t layer_;	/**< single: the layer */
	const uint8_t *layers_;	/**< batch: K u32 LE, possibly unaligned */
};

/** Layer i (0 <= i < r->n_layers) in request order; duplicates kept. */
uint32_t wire_req_layer(const struct wire_req *r, uint32_t i);

/**
 * Structural decode of a binary body of len bytes whose payload format is
 * fmt (from wire_request_format). Needs no model. Runs the §4 checks up to
 * and including "flags bit 0 clear", in the table's order, with its exact
 * statuses and messages. Returns 0 and fills r, or -EINVAL and fills err.
 * body may be NULL when len is 0.
 */
int wire_req_decode(struct wire_req *r, const void *body, size_t len,
		    enum wire_fmt fmt, struct wire_error *err);

/** The model/shard facts the later checks of §4 need. */
struct wire_model {
	bool loaded;		/**< false -> 404 "no model loaded" */
	uint32_t hidden;	/**< hidden_size */
	uint32_t num_layers;	/**< the model's total layer count */
	bool owns_all;		/**< no owned range: every layer is served */
	uint32_t first, last;	/**< owned layers, inclusive (unless owns_all) */
};

/**
 * The §4 checks that need the model, in the table's order: no model (404),
 * seq_len*hidden overflow, value count, seq_len == 0, every layer owned,
 * then every layer < num_layers. (503 loader and 500 are the caller's.)
 * Returns 0, or -EINVAL (or -ENOENT for 404) with err filled.
 * After 0: seq_len >= 1, n_values == seq_len * hidden, layers all valid.
 */
int wire_req_validate(const struct wire_req *r, const struct wire_model *m,
		      struct wire_error *err);

/**
 * Decode the payload of a validated request into dst (dst_values floats,
 * at least r->n_values; any f32 alignment, no overlap with the body).
 * f32: memcpy; f16, i8: lib/quant (i8 value = q * scale). Returns 0, or
 * -ENOSPC when dst is too small.
 */
int wire_req_payload_f32(const struct wire_req *r, float *dst,
			 size_t dst_values);

/**
 * Zero-copy alternative for f32 payloads: the payload itself as n_values
 * floats when r->fmt is f32 and the payload is 4-byte aligned (it is when
 * the body is: the payload starts at 16 or 20 + 4K); NULL otherwise, and
 * then wire_req_payload_f32() is the way.
 */
const float *wire_req_payload_view(const struct wire_req *r);

/* ------------------------------------------------------------------ */
/* Binary response, zero copy (§5.2, §5.3)                            */
/* ------------------------------------------------------------------ */

#define WIRE_RESP_HDR_LEN 12u	/**< frame header and per-result header */
#define WIRE_SLOT_ALIGN 64u

/**
 * Bytes of one result slot for fmt, seq_len rows of hidden values: room
 * for the f32 rows the compute writes, the 12-byte header in front of the
 * payload, and the narrowing. Always a multiple of WIRE_SLOT_ALIGN, so
 * slots laid back to back from an aligned base stay aligned.
 * Returns 0 when seq_len or hidden is 0, when seq_len * hidden does not
 * fit the u32 num_values field, or on size overflow.
 */
size_t wire_slot_size(enum wire_fmt fmt, uint32_t seq_len, uint32_t hidden);

/**
 * Where the compute writes its seq_len x hidden f32 rows (row-major) in a
 * slot of wire_slot_size() bytes. 64-byte aligned when slot is.
 * NULL when wire_slot_size() would be 0.
 */
float *wire_slot_f32(void *slot, enum wire_fmt fmt, uint32_t seq_len,
		     uint32_t hidden);

/**
 * Finish a result whose f32 rows are in place: narrow them in place to
 * fmt (f16 round-nearest-even; i8 per row, §5.3), write the 12-byte header
 * [layer][seq_len][num_values = seq_len*hidden] right in front of the
 * payload, and set *iov to header + payload (one contiguous range inside
 * the slot). Touches only the slot and *iov (safe from any lcore).
 * Returns 0, or -EINVAL when wire_slot_size() would be 0.
 */
int wire_slot_finish(void *slot, enum wire_fmt fmt, uint32_t layer,
		     uint32_t seq_len, uint32_t hidden, struct iovec *iov);

/** A finished response body: iovcnt ranges, len bytes in all. */
struct wire_frame {
	uint8_t hdr[WIRE_RESP_HDR_LEN];	/**< batch frame header lives here */
	const struct iovec *iov;	/**< first range of the body */
	unsigned int iovcnt;
	size_t len;			/**< total body bytes */
};

/**
 * Assemble the response (§5.2). iov has n_results + 1 entries; iov[1 + i]
 * is result i's range from wire_slot_finish (request order). latency_ms is
 * converted to f32 (round to nearest, as Rust's `as f32`).
 * - n_results == 1: single frame. The slot's header word at offset 8
 *   becomes latency_ms; frame->iov = &iov[1], iovcnt 1 (one contiguous
 *   range: no frame header copy).
 * - otherwise (0 or >= 2): batch frame. frame->hdr = [0xFFFFFFFF][n]
 *   [latency_ms]; iov[0] is set to it; frame->iov = iov, iovcnt n + 1.
 * frame must outlive the send (iov[0] points into it).
 * Returns 0, or -EOVERFLOW when the total length overflows size_t.
 */
int wire_frame_finish(struct wire_frame *frame, struct iovec *iov,
		      uint32_t n_results, double latency_ms);

/* ------------------------------------------------------------------ */
/* JSON path (§6). May allocate (bounded by the body size).           */
/* ------------------------------------------------------------------ */
/*
 * Requests are read by a strict RFC 8259 parser that follows serde_json
 * (wire_json_req.c): what serde refuses is refused (NaN, 1e999, raw
 * control characters, bad UTF-8, lone surrogates, a known field twice,
 * nesting past 127, trailing bytes), numbers are read as serde reads
 * them. Known difference: the DETAIL of a syntax error is ours ("... at
 * byte N"), serde's says "at line L column C".
 */

/** A parsed JSON request. Free with wire_json_req_free(). */
struct wire_json_req {
	bool has_layer;		/**< "layer" present (and not null) */
	uint64_t layer;
	bool has_layers;	/**< "layers" present (and not null); wins */
	uint64_t *layers;	/**< n_layers entries (malloc) */
	size_t n_layers;
	float *residual;	/**< n_residual values (malloc), f32 */
	size_t n_residual;
	uint64_t seq_len;	/**< default 1 */
	uint64_t top_k;		/**< default 8092 */
	bool full_output;	/**< default false */
	bool moe_layer;		/**< default false; spec/wire.md §6 */
};

/**
 * Parse a JSON request body (one object, trailing whitespace only); the
 * body needs no terminating NUL. Unknown keys are checked and ignored; a
 * known key twice is an error (serde's "duplicate field"); null counts as absent only for layer and
 * layers (Option<> in the reference; null seq_len/top_k/full_output is a
 * type error there too). Errors are 400 "invalid JSON: DETAIL" (syntax,
 * missing `residual`, wrong types: layer(s)/seq_len/top_k must be
 * non-negative integers, residual finite numbers, full_output a boolean).
 * Missing layer and layers is NOT an error here: the reference reports it
 * later, in wire_json_req_validate's order.
 * Returns 0, -EINVAL (err filled, 400) or -ENOMEM (err filled, 500).
 * On error nothing needs freeing (r is zeroed).
 */
int wire_json_req_parse(struct wire_json_req *r, const char *body,
			size_t len, struct wire_error *err);

/** Free what wire_json_req_parse allocated; r is zeroed. */
void wire_json_req_free(struct wire_json_req *r);

/** Number of layers to compute: layers wins over layer; 0 if neither. */
size_t wire_json_req_n_layers(const struct wire_json_req *r);
/** Layer i of the effective list. */
uint64_t wire_json_req_layer(const struct wire_json_req *r, size_t i);

/**
 * The reference's checks for a JSON request, in its order: no model (404),
 * full_output: seq_len*hidden overflow, residual count (features mode:
 * exactly hidden values, message with seq_len=1), full_output: seq_len
 * == 0, "must provide 'layer' or 'layers'", owned, < num_layers, then
 * full_output with moe_layer: 400, this shard serves no MoE layer
 * (spec/wire.md §6; features mode ignores moe_layer).
 * Returns 0, or -EINVAL / -ENOENT with err filled.
 */
int wire_json_req_validate(const struct wire_json_req *r,
			   const struct wire_model *m, struct wire_error *err);

/**
 * Format an f32 result value as the reference does (serde_json through
 * json!(): the f32 widened to f64, shortest round-trip digits in ryu's
 * layout: "0.25", "1.0", "100.0", "0.10000000149011612", "1e-7",
 * "1.5e300"; non-finite -> "null"). buf needs 32 bytes; returns length.
 */
int wire_json_fmt_f64(char *buf, double v);

/**
 * Full-output response (§6). n_results results, result i = layer layers[i]
 * with outputs[i] holding n_values (= seq_len*hidden) f32 values.
 * n_results == 1 -> {"latency_ms":F,"layer":L,"output":[...],"seq_len":S}
 * otherwise -> {"latency_ms":F,"results":[{"layer":L,"output":[...],
 * "seq_len":S},...],"seq_len":S}. Keys sorted as the reference emits them;
 * latency_ms rounded to 0.1 (round half away from zero).
 * On success *out is a malloc'd NUL-terminated body (caller frees) of
 * *out_len bytes; returns 0 or -ENOMEM / -EOVERFLOW.
 */
int wire_json_full_output(const uint64_t *layers,
			  const float *const *outputs, size_t n_results,
			  uint64_t seq_len, size_t n_values,
			  double latency_ms, char **out, size_t *out_len);

/** One features-mode result: the top-k features of one layer. */
struct wire_features {
	uint64_t layer;
	const uint32_t *ids;	/**< feature ids, ranked by |score| desc */
	const float *scores;	/**< raw signed gate dot products */
	size_t k;
};

/**
 * Features-mode response (§6). Scores are rounded here as the reference
 * does: roundf(s * 100.0f) / 100.0f in f32, then printed as
 * wire_json_fmt_f64. n_results == 1 ->
 * {"features":[...],"latency_ms":F,"layer":L,"scores":[...]}
 * otherwise {"latency_ms":F,"results":[{"features":...,"layer":...,
 * "scores":...},...]}. Allocation and return as wire_json_full_output.
 */
int wire_json_features(const struct wire_features *res, size_t n_results,
		       double latency_ms, char **out, size_t *out_len);


/* ------------------------------------------------------------------ */
/* Q8_K input route (POST /v1/walk-ffn-q8k; issue 6 gives the frames)  */
/* ------------------------------------------------------------------ */

/** Response Content-Type of the Q8_K route. */
#define WIRE_Q8K_CONTENT_TYPE "application/x-larql-ffn-q8k-batch"
/** Values per Q8_K block (llama.cpp's QK_K). */
#define WIRE_Q8K_BLOCK 256u

/**
 * One entry of a Q8_K request, pointing into the body:
 * u32 layer, u32 n_blocks, i8 qs[n_blocks*256], f32 d[n_blocks],
 * i16 sums[n_blocks*8] (per-32 sums; not needed to dequantise).
 */
struct wire_q8k_entry {
	uint32_t layer;
	uint32_t n_blocks;
	const int8_t *qs;
	const uint8_t *d;	/**< n_blocks f32 LE, any alignment */
};

/**
 * Validate a whole Q8_K request body against the model: structure
 * (truncation, trailing bytes), n_blocks*256 == hidden for every entry
 * (where the reference crashes), then layer ownership and range with the
 * messages of spec/wire.md §4. Returns 0 and *n_entries, or -EINVAL /
 * -ENOENT with err filled (400 / 404 no model).
 */
int wire_q8k_validate(const void *body, size_t len,
		      const struct wire_model *m, uint32_t *n_entries,
		      struct wire_error *err);

/**
 * Entry i of a body wire_q8k_validate() accepted (walks the entries:
 * call in order, passing the previous *pos; start with *pos = 4).
 */
void wire_q8k_entry(const void *body, size_t *pos,
		    struct wire_q8k_entry *e);

/** Bytes of the response for n entries of hidden outputs (0: overflow):
 * u32 n, then per entry u32 layer, u32 hidden, f32 output[hidden]. */
size_t wire_q8k_resp_size(uint32_t n, uint32_t hidden);

/** Write the response headers around outputs the compute put at
 * wire_q8k_resp_out(buf, i, hidden); entry i (< n) answers layer
 * layers_i, and its call writes the count n too. */
float *wire_q8k_resp_out(void *buf, uint32_t i, uint32_t hidden);
void wire_q8k_resp_entry(void *buf, uint32_t n, uint32_t i, uint32_t layer,
			 uint32_t hidden);
/** Write the count n alone: the whole answer when n is 0. */
void wire_q8k_resp_count(void *buf, uint32_t n);

#ifdef __cplusplus
}
#endif

#endif /* FFN_WIRE_H */
