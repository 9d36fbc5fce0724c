/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef LARQL_CLIENT_H
#define LARQL_CLIENT_H

/**
 * @file
 * Client side of the LARQL remote-FFN wire (spec/wire.md §3-§5): encode
 * binary requests (f32/f16/i8, single or batch frame), decode responses by
 * their Content-Type; and a minimal blocking HTTP/1.1 client over kernel
 * sockets (keep-alive, Content-Length bodies only), in the manner of Redis
 * anet.c: every failure leaves a message naming the call and why in
 * c->err. Number conversions are lib/quant's (§5.3).
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LC_BATCH_MARKER 0xFFFFFFFFu
#define LC_TOP_K 8092u
#define LC_F16_MAX 65504.0f

enum lc_fmt { LC_F32 = 0, LC_F16, LC_I8, LC_FMT_COUNT };

/** "f32", "f16", "i8". */
const char *lc_fmt_name(enum lc_fmt f);
/** Parse a format name; returns the format or -EINVAL. */
int lc_fmt_parse(const char *s);
/** The bare Content-Type of a format (§3, §5.1). */
const char *lc_fmt_ctype(enum lc_fmt f);
/** What a client sends in Accept to prefer a format (§5.1). */
const char *lc_fmt_accept(enum lc_fmt f);
/** The number format a Content-Type names (substring tests, §3). */
enum lc_fmt lc_fmt_of_ctype(const char *ct);

/** Payload bytes of seq_len rows of hidden values (§3, §5.2). */
size_t lc_payload_bytes(enum lc_fmt f, uint32_t seq_len, uint32_t hidden);

/**
 * Encode a binary request (§3) into buf. A batch frame is written when
 * nlayers != 1 or batch is set. x holds seq_len * hidden f32 values.
 * Returns the body length, or -ENOSPC when cap is too small.
 */
ssize_t lc_encode_request(void *buf, size_t cap, const uint32_t *layers,
			  uint32_t nlayers, int batch, uint32_t seq_len,
			  uint32_t hidden, const float *x, enum lc_fmt f);

/** What the server decodes from x sent as f (x itself for f32). */
void lc_roundtrip(float *dst, const float *x, uint32_t seq_len,
		  uint32_t hidden, enum lc_fmt f);

struct lc_result {
	uint32_t layer;
	uint32_t seq_len;
	uint32_t num_values;
	float *values;		/**< num_values f32, points into the store */
};

struct lc_response {
	float latency_ms;
	int batch;		/**< 1 when the frame was a batch frame */
	uint32_t n;
	struct lc_result *r;
	float *store;
};

/**
 * Decode a binary response body of format f (§5.2). hidden is checked
 * against the frame when nonzero (a single frame's width is otherwise
 * derived from its length). Returns 0, -EBADMSG on a malformed frame (err
 * says what), -ENOMEM.
 */
int lc_decode_response(struct lc_response *out, const void *body,
		       size_t len, enum lc_fmt f, uint32_t hidden,
		       char *err, size_t errlen);
void lc_response_free(struct lc_response *r);

/**
 * A §6 JSON request in full-output mode ("layers", "residual", "seq_len",
 * "full_output": true), malloc'd; NULL when out of memory.
 */
char *lc_json_request(const uint32_t *layers, uint32_t nlayers,
		      uint32_t seq_len, uint32_t hidden, const float *x,
		      size_t *len);
/** Decode a §6 full-output JSON response (one result or "results"). */
int lc_json_decode(struct lc_response *r, const void *body, size_t len,
		   char *err, size_t errlen);

/* ---- HTTP/1.1 client -------------------------------------------------- */

struct lc_http {
	int fd;
	char host[256];
	char port[16];
	char err[512];
	uint8_t *buf;		/**< response head + body, reused */
	size_t cap, len;
	uint64_t bytes_out;	/**< everything written, headers included */
	uint64_t bytes_in;
	unsigned requests;	/**< on the current connection */
	unsigned connects;	/**< connections opened so far */
};

struct lc_http_resp {
	int status;
	char ctype[128];
	const uint8_t *body;	/**< valid until the next request */
	size_t body_len;
	size_t head_len;
	size_t req_len;		/**< bytes of the request, head + body */
};

/** Split "http://host[:port][/...]"; returns 0 or -EINVAL. */
int lc_url_parse(const char *url, char *host, size_t hlen, char *port,
		 size_t plen);
/** Prepare a client for url (no connection yet). 0 or -EINVAL. */
int lc_http_init(struct lc_http *c, const char *url);
/**
 * One request/response exchange; (re)connects as needed and retries once
 * when a kept-alive connection turns out to be closed. Returns 0 (any HTTP
 * status) or -errno with c->err set.
 */
int lc_http_request(struct lc_http *c, const char *method, const char *path,
		    const char *ctype, const char *accept, const void *body,
		    size_t len, struct lc_http_resp *resp);
void lc_http_close(struct lc_http *c);

/**
 * GET /v1/stats; stores hidden_size and layers (the model's count). Returns
 * 0 or a negative value with c->err set.
 */
int lc_http_stats(struct lc_http *c, uint32_t *hidden, uint32_t *layers);


/* ---- small helpers shared by the tools ---------------------------- */

/** CLOCK_MONOTONIC in milliseconds. */
double lc_now_ms(void);

/** A seeded N(0,1) source (xorshift64*, Box-Muller): the same seed gives
 *  the same sequence in every tool. */
struct lc_rng {
	uint64_t s;
};
void lc_rng_seed(struct lc_rng *r, uint64_t seed);
float lc_rng_normal(struct lc_rng *r);

#endif /* LARQL_CLIENT_H */
