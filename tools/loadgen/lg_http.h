/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef LG_HTTP_H
#define LG_HTTP_H

/**
 * @file
 * Incremental HTTP/1.1 response parser for ffn-loadgen (RFC 9112): status
 * line, Content-Length, Content-Type, Connection.  lib/http parses requests
 * only.  Bytes arrive in arbitrary pieces (TCP segments, mbuf chain
 * segments); the head is buffered until its blank line, the body is never
 * copied: each call hands back where the body bytes of this piece are.
 * Plain C, no DPDK.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LG_HEAD_MAX 4096
#define LG_CTYPE_MAX 96

enum lg_resp_state {
	LG_RESP_HEAD = 0,	/**< reading the status line and headers */
	LG_RESP_BODY,		/**< head parsed, reading Content-Length bytes */
	LG_RESP_DONE,		/**< complete: read the fields, then reset */
};

struct lg_resp {
	enum lg_resp_state state;
	int status;			/**< 100..599 */
	int minor;			/**< HTTP/1.<minor> */
	bool keep_alive;		/**< connection may carry another one */
	bool has_length;
	uint64_t content_length;
	uint64_t body_got;		/**< body bytes seen so far */
	char ctype[LG_CTYPE_MAX];	/**< Content-Type, "" when absent */
	size_t head_len;		/**< bytes of the head, blank line incl. */
	size_t head_fill;
	char head[LG_HEAD_MAX];
};

/** Ready for a new response. */
void lg_resp_reset(struct lg_resp *r);

/**
 * Feed n bytes at p.  Returns how many were consumed (fewer than n only
 * when the response completed inside this piece: the rest belongs to the
 * next response), or a negative value:
 *   -EBADMSG  malformed status line or header, or a bad Content-Length;
 *   -E2BIG    head longer than LG_HEAD_MAX;
 *   -ENOTSUP  a body framing this parser does not do (chunked, or neither
 *             Content-Length nor a status without body).
 * *body and *body_len (may be NULL) receive the body bytes inside the
 * consumed part (a pointer into p, *body_len 0 when none).
 */
int lg_resp_feed(struct lg_resp *r, const uint8_t *p, size_t n,
		 const uint8_t **body, size_t *body_len);

#endif /* LG_HTTP_H */
