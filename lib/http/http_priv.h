/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_HTTP_PRIV_H
#define FFN_HTTP_PRIV_H

/* Shared between the head (http_parse.c) and body (http_body.c) halves. */

#include "http.h"

/* parser states (struct http_parser.state) */
enum {
	ST_HEAD = 0,
	ST_BODY_CL,		/* chunk_left bytes of Content-Length body */
	ST_CH_SIZE,		/* chunk-size hex digits */
	ST_CH_EXT,		/* after the size: BWS / extensions to CR */
	ST_CH_SIZE_LF,		/* LF ending the chunk-size line */
	ST_CH_DATA,		/* chunk_left data bytes */
	ST_CH_DATA_CR,		/* CRLF after chunk data */
	ST_CH_DATA_LF,
	ST_CH_TR_START,		/* start of a trailer line or final CRLF */
	ST_CH_TR_LINE,		/* in a trailer field line */
	ST_CH_TR_LF,		/* LF ending a trailer line */
	ST_CH_END_LF,		/* LF of the final empty line */
	ST_COMPLETE,
	ST_ERROR,
};

/* Enter the error state with status and message; returns HTTP_EV_ERROR. */
int http_fail(struct http_parser *p, int status, const char *msg);
/* Hex digit value, or -1. */
int http_hexval(int c);
/* A Content-Length value (1*DIGIT, or a list of identical ones) into
 * *len, *has set; a second field must agree with the first. 0, -EINVAL
 * (not a number, past 2^64 - 1), -EEXIST (differs from the first). The
 * request and the response parser share it. */
int http_content_length(const char *v, size_t n, bool *has, uint64_t *len);
/* http_feed() in a body state. */
int http_feed_body(struct http_parser *p, const uint8_t *d, size_t len,
		size_t *used);

#endif
