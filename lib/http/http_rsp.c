/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * Incremental HTTP/1.1 response parser (http.h, "response parser"),
 * RFC 9112. The head is copied into the struct's bounded buffer until its
 * empty line, then parsed in one pass, so the grammar code never sees a
 * partial line and the outcome never depends on how the input was split.
 * The body is not copied: each call says where its piece's body bytes are.
 */

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "http.h"
#include "http_priv.h"

/* tchar of RFC 9110 §5.6.2 */
static const uint8_t tchar[256] = {
	['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1,
	['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1,
	['`'] = 1, ['|'] = 1, ['~'] = 1,
	['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1,
};

/* field-content and reason-phrase bytes (RFC 9110 §5.5, RFC 9112 §4):
 * HTAB, SP, VCHAR, obs-text */
static const uint8_t fvchar[256] = {
	['\t'] = 1, [0x20 ... 0x7e] = 1, [0x80 ... 0xff] = 1,
};

/* Connection options seen (RFC 9112 §9.3) */
#define CONN_CLOSE 1u
#define CONN_KEEP_ALIVE 2u

/* What the field lines said, decided on once the head is read. */
struct rsp_fields {
	unsigned int conn;	/* CONN_* */
	bool te;		/* Transfer-Encoding present */
	bool ctype;		/* Content-Type present */
};

void
http_rsp_reset(struct http_rsp *r)
{
	r->no_body = false;
	r->state = HTTP_RSP_HEAD;
	r->status = 0;
	r->minor = 1;
	r->keep_alive = true;
	r->has_length = false;
	r->ctype_truncated = false;
	r->content_length = 0;
	r->body_got = 0;
	r->ctype_len = 0;
	r->ctype[0] = '\0';
	r->err = 0;
	r->head_len = 0;
	r->head_fill = 0;
}

/* a[0..n) equals the lowercase literal lit, ASCII case-folded */
static bool
ieq(const char *a, size_t n, const char *lit)
{
	size_t i;

	if (strlen(lit) != n)
		return false;
	for (i = 0; i < n; i++)
		if ((a[i] >= 'A' && a[i] <= 'Z' ? a[i] + 32 : a[i]) != lit[i])
			return false;
	return true;
}

/* Trim OWS (RFC 9110 §5.6.3) off both ends of [*a, *b). */
static void
trim(const char *s, size_t *a, size_t *b)
{
	while (*a < *b && (s[*a] == ' ' || s[*a] == '\t'))
		(*a)++;
	while (*b > *a && (s[*b - 1] == ' ' || s[*b - 1] == '\t'))
		(*b)--;
}

/* status-line = HTTP-version SP status-code SP [ reason-phrase ]
 * (RFC 9112 §4). The SP before an empty reason may be missing (servers
 * omit it); the reason is checked, not kept (§4: a client SHOULD ignore
 * it). */
static int
parse_status(struct http_rsp *r, const char *s, size_t n)
{
	size_t i;

	if (n < 12 || memcmp(s, "HTTP/1.", 7) != 0 ||
	    s[7] < '0' || s[7] > '9' || s[8] != ' ')
		return -EBADMSG;
	for (i = 9; i < 12; i++)
		if (s[i] < '0' || s[i] > '9')
			return -EBADMSG;
	if (n > 12 && s[12] != ' ')
		return -EBADMSG;
	for (i = 13; i < n; i++)
		if (!fvchar[(uint8_t)s[i]])
			return -EBADMSG;
	r->minor = s[7] - '0';
	r->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
	/* RFC 9110 §15: the valid status codes are 100..599 */
	if (r->status < 100 || r->status > 599)
		return -EBADMSG;
	return 0;
}

/* Connection = #connection-option (RFC 9110 §7.6.1): note close and
 * keep-alive; the elements are trimmed, empty ones skipped. */
static void
parse_connection(const char *v, size_t n, struct rsp_fields *f)
{
	size_t i = 0;

	while (i < n) {
		size_t a = i, b;

		while (i < n && v[i] != ',')
			i++;
		b = i;
		if (i < n)
			i++;
		trim(v, &a, &b);
		if (ieq(v + a, b - a, "close"))
			f->conn |= CONN_CLOSE;
		else if (ieq(v + a, b - a, "keep-alive"))
			f->conn |= CONN_KEEP_ALIVE;
	}
}

/* field-line = field-name ":" OWS field-value OWS (RFC 9112 §5) */
static int
parse_field(struct http_rsp *r, const char *s, size_t n,
		struct rsp_fields *f)
{
	size_t i = 0, a, b;

	/* obs-fold: a line starting with SP/HTAB (RFC 9112 §5.2; a gateway
	 * may discard the response) */
	if (s[0] == ' ' || s[0] == '\t')
		return -EBADMSG;
	/* field-name = token; no whitespace before the colon (§5.1) */
	while (i < n && tchar[(uint8_t)s[i]])
		i++;
	if (i == 0 || i >= n || s[i] != ':')
		return -EBADMSG;
	/* field-value: no CTL but HTAB (RFC 9110 §5.5) */
	for (a = i + 1; a < n; a++)
		if (!fvchar[(uint8_t)s[a]])
			return -EBADMSG;
	a = i + 1;
	b = n;
	trim(s, &a, &b);

	if (ieq(s, i, "content-length")) {
		return http_content_length(s + a, b - a, &r->has_length,
					   &r->content_length) == 0 ?
		       0 : -EBADMSG;
	} else if (ieq(s, i, "content-type")) {
		size_t vl = b - a;

		/* a singleton field (RFC 9110 §8.3): two are ambiguous */
		if (f->ctype)
			return -EBADMSG;
		f->ctype = true;
		if (vl > HTTP_RSP_CTYPE_MAX) {
			vl = HTTP_RSP_CTYPE_MAX;
			r->ctype_truncated = true;
		}
		memcpy(r->ctype, s + a, vl);
		r->ctype[vl] = '\0';
		r->ctype_len = vl;
	} else if (ieq(s, i, "connection")) {
		parse_connection(s + a, b - a, f);
	} else if (ieq(s, i, "transfer-encoding")) {
		f->te = true;
	}
	return 0;
}

/* The head [0, head_len) is complete, its last line empty: parse it and
 * choose the body's framing (RFC 9112 §6.3). */
static int
parse_head(struct http_rsp *r)
{
	const char *p = r->head, *end = r->head + r->head_len;
	struct rsp_fields f = { 0 };
	bool first = true;
	int rc;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le;

		if (nl == NULL)
			return -EBADMSG;
		/* CRLF or a bare LF ends a line (§2.2 MAY) */
		le = nl;
		if (le > p && le[-1] == '\r')
			le--;
		/* a bare CR MUST be rejected or replaced (§2.2): rejected
		 * (the byte classes below reject it as well; this is the
		 * rule, stated once) */
		if (memchr(p, '\r', (size_t)(le - p)) != NULL)
			return -EBADMSG;
		/* the empty line (none may come before the status line) */
		if (le == p)
			break;
		if (first) {
			rc = parse_status(r, p, (size_t)(le - p));
			first = false;
		} else {
			rc = parse_field(r, p, (size_t)(le - p), &f);
		}
		if (rc < 0)
			return rc;
		p = nl + 1;
	}
	if (first)
		return -EBADMSG;
	/* A sender MUST NOT send both (§6.2); §6.3 item 3: an error. */
	if (f.te && r->has_length)
		return -EBADMSG;
	/* persistence, §9.3 */
	if (f.conn & CONN_CLOSE)
		r->keep_alive = false;
	else if (r->minor >= 1)
		r->keep_alive = true;
	else
		r->keep_alive = (f.conn & CONN_KEEP_ALIVE) != 0;
	/* §6.3 item 1: the answer to HEAD, and 1xx, 204, 304, end after the
	 * head whatever their fields say. */
	if (r->no_body || r->status < 200 || r->status == 204 ||
	    r->status == 304) {
		r->content_length = 0;
		return 0;
	}
	if (f.te)		/* §6.3 item 4: chunked or until close */
		return -ENOTSUP;
	if (!r->has_length)	/* §6.3 item 8: until close */
		return -ENOTSUP;
	return 0;
}

/* The end of the head in head[0, head_fill), searching from `from`: the
 * length up to and including the empty line ("\n\n" or "\n\r\n"), or 0. */
static size_t
head_end(const struct http_rsp *r, size_t from)
{
	size_t i;

	for (i = from; i < r->head_fill; i++) {
		if (r->head[i] != '\n')
			continue;
		if (i >= 1 && r->head[i - 1] == '\n')
			return i + 1;
		if (i >= 2 && r->head[i - 1] == '\r' && r->head[i - 2] == '\n')
			return i + 1;
	}
	return 0;
}

static int
fail(struct http_rsp *r, int err)
{
	r->err = err;
	return err;
}

int
http_rsp_feed(struct http_rsp *r, const uint8_t *p, size_t n,
		const uint8_t **body, size_t *body_len)
{
	size_t used = 0;

	if (body != NULL)
		*body = NULL;
	if (body_len != NULL)
		*body_len = 0;
	if (r->err != 0)
		return r->err;
	if (n > INT_MAX)
		n = INT_MAX;
	while (r->state == HTTP_RSP_HEAD && used < n) {
		size_t old = r->head_fill, take = n - used, e;
		int rc;

		if (take > HTTP_RSP_HEAD_MAX - old)
			take = HTTP_RSP_HEAD_MAX - old;
		if (take == 0)
			return fail(r, -E2BIG);
		memcpy(r->head + old, p + used, take);
		r->head_fill = old + take;
		e = head_end(r, old >= 2 ? old - 2 : 0);
		if (e == 0) {
			used += take;
			if (r->head_fill == HTTP_RSP_HEAD_MAX)
				return fail(r, -E2BIG);
			continue;
		}
		used += e - old;
		r->head_len = e;
		rc = parse_head(r);
		if (rc < 0)
			return fail(r, rc);
		if (r->status < 200) {
			/* Interim response (RFC 9110 §15.2): the final one
			 * follows on the same connection, to the same
			 * request. */
			bool no_body = r->no_body;

			http_rsp_reset(r);
			r->no_body = no_body;
			continue;
		}
		r->state = r->content_length == 0 ? HTTP_RSP_DONE :
			   HTTP_RSP_BODY;
	}
	if (r->state == HTTP_RSP_BODY && used < n) {
		uint64_t want = r->content_length - r->body_got;
		size_t take = n - used;

		if (take > want)
			take = (size_t)want;
		if (body != NULL)
			*body = p + used;
		if (body_len != NULL)
			*body_len = take;
		r->body_got += take;
		used += take;
		if (r->body_got == r->content_length)
			r->state = HTTP_RSP_DONE;
	}
	return (int)used;
}
