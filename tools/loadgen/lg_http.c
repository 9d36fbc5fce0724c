/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Incremental HTTP/1.1 response parser (lg_http.h), RFC 9112. */

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "lg_http.h"

void
lg_resp_reset(struct lg_resp *r)
{
	r->state = LG_RESP_HEAD;
	r->status = 0;
	r->minor = 1;
	r->keep_alive = true;
	r->has_length = false;
	r->content_length = 0;
	r->body_got = 0;
	r->ctype[0] = '\0';
	r->head_len = 0;
	r->head_fill = 0;
}

/* Trim optional whitespace (RFC 9110 §5.6.3 OWS) on both ends. */
static void
trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
		(*e)--;
}

/* Does the comma-separated list [s, e) hold token tok (case-insensitive)? */
static bool
list_has(const char *s, const char *e, const char *tok)
{
	size_t tl = strlen(tok);

	while (s < e) {
		const char *c = memchr(s, ',', (size_t)(e - s));
		const char *ts = s, *te = c ? c : e;

		trim(&ts, &te);
		if ((size_t)(te - ts) == tl && strncasecmp(ts, tok, tl) == 0)
			return true;
		s = c ? c + 1 : e;
	}
	return false;
}

static int
parse_status(struct lg_resp *r, const char *s, const char *e)
{
	/* "HTTP/1.x SP 3DIGIT SP reason" (RFC 9112 §4; reason may be
	 * empty, and some servers omit the space before it). */
	if (e - s < 12 || memcmp(s, "HTTP/1.", 7) != 0 ||
	    s[7] < '0' || s[7] > '9' || s[8] != ' ')
		return -EBADMSG;
	for (int i = 9; i < 12; i++)
		if (s[i] < '0' || s[i] > '9')
			return -EBADMSG;
	if (e - s > 12 && s[12] != ' ')
		return -EBADMSG;
	r->minor = s[7] - '0';
	r->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
	if (r->status < 100)
		return -EBADMSG;
	/* HTTP/1.0 closes unless told otherwise (RFC 9112 §9.3). */
	r->keep_alive = r->minor >= 1;
	return 0;
}

static int
parse_header(struct lg_resp *r, const char *s, const char *e)
{
	const char *colon = memchr(s, ':', (size_t)(e - s));
	const char *ns = s, *ne, *vs, *ve;
	size_t nl;

	if (colon == NULL || colon == s)
		return -EBADMSG;
	ne = colon;
	/* No whitespace between name and colon (RFC 9112 §5.1). */
	if (ne[-1] == ' ' || ne[-1] == '\t')
		return -EBADMSG;
	nl = (size_t)(ne - ns);
	vs = colon + 1;
	ve = e;
	trim(&vs, &ve);
	if (nl == 14 && strncasecmp(ns, "Content-Length", 14) == 0) {
		uint64_t v = 0;

		if (vs == ve)
			return -EBADMSG;
		for (const char *q = vs; q < ve; q++) {
			if (*q < '0' || *q > '9' || v > (UINT64_MAX - 9) / 10)
				return -EBADMSG;
			v = v * 10 + (uint64_t)(*q - '0');
		}
		/* Differing repeats are an error (RFC 9112 §6.3 p5). */
		if (r->has_length && r->content_length != v)
			return -EBADMSG;
		r->has_length = true;
		r->content_length = v;
	} else if (nl == 12 && strncasecmp(ns, "Content-Type", 12) == 0) {
		size_t vl = (size_t)(ve - vs);

		if (vl >= sizeof(r->ctype))
			vl = sizeof(r->ctype) - 1;
		memcpy(r->ctype, vs, vl);
		r->ctype[vl] = '\0';
	} else if (nl == 10 && strncasecmp(ns, "Connection", 10) == 0) {
		if (list_has(vs, ve, "close"))
			r->keep_alive = false;
		else if (list_has(vs, ve, "keep-alive"))
			r->keep_alive = true;
	} else if (nl == 17 && strncasecmp(ns, "Transfer-Encoding", 17) == 0) {
		return -ENOTSUP;
	}
	return 0;
}

/* The head [0, head_len) is complete: parse it and choose the framing. */
static int
parse_head(struct lg_resp *r)
{
	const char *p = r->head, *end = r->head + r->head_len;
	bool first = true;
	int rc;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le;

		if (nl == NULL)
			return -EBADMSG;
		le = nl;
		if (le > p && le[-1] == '\r')
			le--;
		if (le == p)	/* the blank line */
			break;
		if (first) {
			rc = parse_status(r, p, le);
			first = false;
		} else if (*p == ' ' || *p == '\t') {
			rc = -EBADMSG;	/* obs-fold: rejected (RFC 9112 §5.2) */
		} else {
			rc = parse_header(r, p, le);
		}
		if (rc < 0)
			return rc;
		p = nl + 1;
	}
	if (first)
		return -EBADMSG;
	/* RFC 9112 §6.3: 1xx, 204 and 304 have no body. */
	if ((r->status >= 100 && r->status < 200) || r->status == 204 ||
	    r->status == 304) {
		r->content_length = 0;
		return 0;
	}
	if (!r->has_length)
		return -ENOTSUP;	/* body until close: not for a load test */
	return 0;
}

/* Find the end of the head in head[0, head_fill), searching from `from`;
 * returns the length including the blank line, or 0. */
static size_t
head_end(const struct lg_resp *r, size_t from)
{
	for (size_t i = from; i < r->head_fill; i++) {
		if (r->head[i] != '\n')
			continue;
		if (i >= 1 && r->head[i - 1] == '\n')
			return i + 1;
		if (i >= 2 && r->head[i - 1] == '\r' && r->head[i - 2] == '\n')
			return i + 1;
	}
	return 0;
}

int
lg_resp_feed(struct lg_resp *r, const uint8_t *p, size_t n,
	     const uint8_t **body, size_t *body_len)
{
	size_t used = 0;

	if (body != NULL)
		*body = NULL;
	if (body_len != NULL)
		*body_len = 0;
	while (r->state == LG_RESP_HEAD && used < n) {
		size_t old = r->head_fill, take = n - used, e;
		int rc;

		if (take > LG_HEAD_MAX - old)
			take = LG_HEAD_MAX - old;
		if (take == 0)
			return -E2BIG;
		memcpy(r->head + old, p + used, take);
		r->head_fill = old + take;
		e = head_end(r, old >= 2 ? old - 2 : 0);
		if (e == 0) {
			used += take;
			if (r->head_fill == LG_HEAD_MAX)
				return -E2BIG;
			continue;
		}
		used += e - old;
		r->head_len = e;
		rc = parse_head(r);
		if (rc < 0)
			return rc;
		if (r->status >= 100 && r->status < 200) {
			/* Interim response (RFC 9110 §15.2): the final one
			 * follows on the same connection. */
			lg_resp_reset(r);
			continue;
		}
		r->state = r->content_length == 0 ? LG_RESP_DONE :
			   LG_RESP_BODY;
	}
	if (r->state == LG_RESP_BODY && used < n) {
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
			r->state = LG_RESP_DONE;
	}
	return (int)used;
}
