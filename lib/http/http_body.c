/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * Request bodies (RFC 9112 §6, §7): Content-Length bodies and the chunked
 * coding, streamed from the input straight into the caller's buffer.
 */

#include <errno.h>
#include <string.h>

#include "http_priv.h"

int
http_body_buf(struct http_parser *p, void *buf, uint64_t cap)
{
	struct http_request *r = &p->req;

	if (cap < r->body_len || (!r->chunked && cap < r->content_length))
		return -EINVAL;
	p->body = buf;
	p->body_cap = cap;
	p->body_set = true;
	p->body_discard = false;
	if (p->pending == HTTP_EV_NEED_BUF)
		p->pending = 0;
	return 0;
}

void
http_body_discard(struct http_parser *p)
{
	p->body = NULL;
	p->body_cap = 0;
	p->body_set = true;
	p->body_discard = true;
	if (p->pending == HTTP_EV_NEED_BUF)
		p->pending = 0;
}

uint64_t
http_body_want(struct http_parser *p, uint8_t **dst)
{
	uint64_t room;

	if ((p->state != ST_BODY_CL && p->state != ST_CH_DATA) ||
	    p->pending || !p->body_set)
		return 0;
	if (p->body_discard) {
		*dst = NULL;
		return p->chunk_left;
	}
	room = p->body_cap - p->req.body_len;
	*dst = p->body + p->req.body_len;
	return room < p->chunk_left ? room : p->chunk_left;
}

static void
body_advance(struct http_parser *p, uint64_t n)
{
	p->req.body_len += n;
	p->chunk_left -= n;
	if (p->chunk_left == 0)
		p->state = p->state == ST_BODY_CL ? ST_COMPLETE
						  : ST_CH_DATA_CR;
}

void
http_body_commit(struct http_parser *p, uint64_t n)
{
	body_advance(p, n);
	if (p->state == ST_COMPLETE)	/* next http_feed() says DONE */
		p->pending = HTTP_EV_DONE;
}

/* One byte of chunk framing (RFC 9112 §7.1). Returns 0 or an event. */
static int
chunk_byte(struct http_parser *p, uint8_t c)
{
	struct http_request *r = &p->req;
	int h;

	switch (p->state) {
	case ST_CH_SIZE:
		h = http_hexval(c);
		if (h >= 0) {
			if (p->chunk_left >> 60)
				return http_fail(p, 400, "chunk size overflow");
			p->chunk_left = (p->chunk_left << 4) | h;
			p->chunk_digits = 1;
			break;
		}
		if (!p->chunk_digits)
			return http_fail(p, 400, "malformed chunk size");
		p->state = ST_CH_EXT;
		/* fall through */
	case ST_CH_EXT:
		/* chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS value ] ):
		 * skipped (§7.1.1). Before the first ';' only BWS may follow
		 * the size ("1a 2" is refused, not read as 0x1a); after it
		 * only CTLs are refused. chunk_digits 2: ';' seen. */
		if (c == '\r') {
			p->state = ST_CH_SIZE_LF;
			break;
		}
		if (p->chunk_digits == 1) {
			if (c == ';')
				p->chunk_digits = 2;
			else if (c != ' ' && c != '\t')
				return http_fail(p, 400, "malformed chunk size");
			break;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return http_fail(p, 400, "malformed chunk extension");
		break;
	case ST_CH_SIZE_LF:
		if (c != '\n')
			return http_fail(p, 400, "bare CR in chunk size line");
		if (p->chunk_left > p->max_body - r->body_len)
			return http_fail(p, 413, "request body too large");
		p->chunk_line = 0;
		p->chunk_digits = 0;
		p->state = p->chunk_left ? ST_CH_DATA : ST_CH_TR_START;
		break;
	case ST_CH_DATA_CR:
		if (c != '\r')
			return http_fail(p, 400, "chunk data not followed by CRLF");
		p->state = ST_CH_DATA_LF;
		break;
	case ST_CH_DATA_LF:
		if (c != '\n')
			return http_fail(p, 400, "chunk data not followed by CRLF");
		p->state = ST_CH_SIZE;
		p->chunk_line = 0;
		break;
	case ST_CH_TR_START:
		if (c == '\r') {
			p->state = ST_CH_END_LF;
			break;
		}
		p->state = ST_CH_TR_LINE;
		/* fall through */
	case ST_CH_TR_LINE:
		/* trailer fields are read and discarded (§7.1.2) */
		if (c == '\r') {
			p->state = ST_CH_TR_LF;
			break;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return http_fail(p, 400, "invalid character in trailer");
		break;
	case ST_CH_TR_LF:
		if (c != '\n')
			return http_fail(p, 400, "bare CR in trailer");
		p->state = ST_CH_TR_START;
		break;
	case ST_CH_END_LF:
		if (c != '\n')
			return http_fail(p, 400, "bare CR in trailer");
		p->state = ST_COMPLETE;
		return HTTP_EV_DONE;
	}
	if (p->state == ST_CH_SIZE || p->state == ST_CH_EXT ||
	    p->state == ST_CH_SIZE_LF) {
		if (++p->chunk_line > HTTP_CHUNK_LINE_MAX)
			return http_fail(p, 400, "chunk size line too long");
	} else if (p->state >= ST_CH_TR_START && p->state <= ST_CH_END_LF) {
		if (++p->trailer_len > p->head_cap)
			return http_fail(p, 431, "trailer fields too large");
	}
	return 0;
}

int
http_feed_body(struct http_parser *p, const uint8_t *d, size_t len,
		size_t *used)
{
	size_t i = 0, n;
	uint64_t want;
	uint8_t *dst;
	int rc;

	if (!p->body_set) {
		/* the caller skipped http_body_buf()/discard(): say so */
		p->pending = HTTP_EV_NEED_BUF;
		return HTTP_EV_NEED_BUF;
	}
	while (i < len) {
		if (p->state == ST_BODY_CL || p->state == ST_CH_DATA) {
			want = http_body_want(p, &dst);
			if (want == 0) {
				p->pending = HTTP_EV_NEED_BUF;
				*used = i;
				return HTTP_EV_NEED_BUF;
			}
			n = len - i < want ? len - i : want;
			if (dst != NULL)
				memcpy(dst, d + i, n);
			body_advance(p, n);
			i += n;
			if (p->state == ST_COMPLETE) {
				*used = i;
				return HTTP_EV_DONE;
			}
			continue;
		}
		rc = chunk_byte(p, d[i]);
		if (rc < 0) {
			*used = i;
			return rc;
		}
		i++;
		if (rc == HTTP_EV_DONE) {
			*used = i;
			return rc;
		}
	}
	*used = i;
	return HTTP_EV_MORE;
}
