/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * Incremental HTTP/1.1 request parser (RFC 9112). The head is copied into
 * the caller's bounded buffer while scanning for its end (an empty line);
 * it is then parsed in one pass from that buffer, so the grammar code never
 * sees a partial line. Body framing (Content-Length, chunked) is a byte
 * state machine over the input; body data is copied straight to the
 * caller's buffer.
 */

#include <errno.h>
#include <string.h>

#include "http_priv.h"


/* tchar of RFC 9110 §5.6.2 */
static const uint8_t tchar[256] = {
	['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1,
	['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1,
	['`'] = 1, ['|'] = 1, ['~'] = 1,
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
	['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
	['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
	['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
	['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	['Y'] = 1, ['Z'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1,
	['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
	['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
	['y'] = 1, ['z'] = 1,
};

/* field-content bytes (RFC 9110 §5.5): HTAB, SP, VCHAR, obs-text */
static const uint8_t fvchar[256] = {
	['\t'] = 1, [0x20 ... 0x7e] = 1, [0x80 ... 0xff] = 1,
};

/* origin-form target bytes (RFC 3986 pchar, "/", "?"; '%' checked apart) */
static const uint8_t tgchar[256] = {
	/* VCHAR but " # < > \\ ^ ` { | } */
	['!'] = 1, ['$' ... ';'] = 1, ['='] = 1, ['?' ... '['] = 1,
	[']'] = 1, ['_'] = 1, ['a' ... 'z'] = 1, ['~'] = 1,
};

int
http_fail(struct http_parser *p, int status, const char *msg)
{
	p->state = ST_ERROR;
	p->status = status;
	p->err = msg;
	return HTTP_EV_ERROR;
}

static int
lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

static bool
mem_ieq(const char *a, size_t n, const char *lit)
{
	size_t i;

	if (strlen(lit) != n)
		return false;
	for (i = 0; i < n; i++)
		if (lower((uint8_t)a[i]) != lower((uint8_t)lit[i]))
			return false;
	return true;
}

/* a[0..n) equals the lowercase literal lit[0..n), ASCII case-folded */
static inline bool
mem_ieq_n(const char *a, const char *lit, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((a[i] | 0x20) != lit[i])
			return false;
	return true;
}

bool
http_str_eq(struct http_str s, const char *lit)
{
	return s.p != NULL && mem_ieq(s.p, s.len, lit);
}

bool
http_str_contains(struct http_str s, const char *lit)
{
	return s.p != NULL && memmem(s.p, s.len, lit, strlen(lit)) != NULL;
}

int
http_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = lower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

void
http_parser_init(struct http_parser *p, char *head_buf, uint32_t head_cap,
		uint64_t max_body)
{
	memset(p, 0, sizeof(*p));
	p->head = head_buf;
	p->head_cap = head_cap;
	p->max_body = max_body ? max_body : HTTP_MAX_BODY_DEFAULT;
	p->state = ST_HEAD;
}

void
http_next(struct http_parser *p)
{
	char *head = p->head;
	uint32_t cap = p->head_cap;
	uint64_t max_body = p->max_body;

	http_parser_init(p, head, cap, max_body);
}

bool
http_parser_idle(const struct http_parser *p)
{
	return p->state == ST_HEAD && p->req.head_len == 0 && !p->lead_cr;
}

bool
http_parser_in_head(const struct http_parser *p)
{
	return p->state == ST_HEAD && !http_parser_idle(p);
}

/* --- head ------------------------------------------------------------- */

/* pchar / "/" / "?" bytes of a target (RFC 3986), '%' HEXDIG HEXDIG */
static bool
target_chars_ok(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint8_t c = s[i];

		if (c == '%') {
			if (i + 2 >= n)
				return false;
			if (http_hexval((uint8_t)s[i + 1]) < 0 ||
			    http_hexval((uint8_t)s[i + 2]) < 0)
				return false;
			i += 2;
			continue;
		}
		if (!tgchar[c])
			return false;
	}
	return true;
}

/* request-target, origin-form: absolute-path [ "?" query ] (RFC 9112
 * §3.2.1, RFC 3986 pchar / "/" / "?"). */
static bool
target_ok(const char *s, size_t n)
{
	return n > 0 && s[0] == '/' && target_chars_ok(s, n);
}

/* Host = uri-host [ ":" port ] (RFC 9110 §7.2; RFC 3986 §3.2.2-3):
 * reg-name / IPv4address bytes (unreserved, pct-encoded, sub-delims), or
 * an IP-literal in brackets; port = *DIGIT. Empty is allowed (§7.2: a
 * target without authority). */
static bool
host_ok(const char *v, size_t n)
{
	static const uint8_t regc[256] = {
		['a' ... 'z'] = 1, ['A' ... 'Z'] = 1, ['0' ... '9'] = 1,
		['-'] = 1, ['.'] = 1, ['_'] = 1, ['~'] = 1, ['!'] = 1,
		['$'] = 1, ['&'] = 1, ['\''] = 1, ['('] = 1, [')'] = 1,
		['*'] = 1, ['+'] = 1, [','] = 1, [';'] = 1, ['='] = 1,
	};
	size_t i = 0;

	if (n > 0 && v[0] == '[') {
		/* IP-literal: hex, ':', '.', and IPvFuture's characters */
		for (i = 1; i < n && v[i] != ']'; i++)
			if (!regc[(uint8_t)v[i]] && v[i] != ':')
				return false;
		if (i >= n)
			return false;
		i++;
	} else {
		for (; i < n && v[i] != ':'; i++) {
			if (v[i] == '%') {
				if (i + 2 >= n ||
				    http_hexval((uint8_t)v[i + 1]) < 0 ||
				    http_hexval((uint8_t)v[i + 2]) < 0)
					return false;
				i += 2;
			} else if (!regc[(uint8_t)v[i]]) {
				return false;
			}
		}
	}
	if (i == n)
		return true;
	if (v[i] != ':')
		return false;
	for (i++; i < n; i++)
		if (v[i] < '0' || v[i] > '9')
			return false;
	return true;
}

/* The methods we know: their names, both ways. */
static const struct {
	const char *name;
	enum http_method m;
} method_tab[] = {
	{ "GET", HTTP_M_GET }, { "HEAD", HTTP_M_HEAD },
	{ "POST", HTTP_M_POST }, { "PUT", HTTP_M_PUT },
	{ "DELETE", HTTP_M_DELETE }, { "OPTIONS", HTTP_M_OPTIONS },
};

static enum http_method
method_of(const char *s, size_t n)
{
	size_t i;

	/* methods are case-sensitive (RFC 9110 §9.1) */
	for (i = 0; i < sizeof(method_tab) / sizeof(method_tab[0]); i++)
		if (strlen(method_tab[i].name) == n &&
		    memcmp(method_tab[i].name, s, n) == 0)
			return method_tab[i].m;
	return HTTP_M_OTHER;
}

const char *
http_method_name(enum http_method m)
{
	for (size_t i = 0; i < sizeof(method_tab) / sizeof(method_tab[0]);
	     i++)
		if (method_tab[i].m == m)
			return method_tab[i].name;
	return NULL;
}

/* request-line = method SP request-target SP HTTP-version (RFC 9112 §3) */
static int
parse_request_line(struct http_parser *p, const char *s, size_t n,
		struct http_str *authority)
{
	struct http_request *r = &p->req;
	size_t i = 0, t0, t1;

	while (i < n && tchar[(uint8_t)s[i]])
		i++;
	if (i == 0 || i >= n || s[i] != ' ')
		return http_fail(p, 400, "malformed request line: method");
	r->method_str.p = s;
	r->method_str.len = i;
	r->method = method_of(s, i);
	t0 = ++i;
	while (i < n && s[i] != ' ')
		i++;
	t1 = i;
	if (i >= n)
		return http_fail(p, 400, "malformed request line: no version");
	r->target.p = s + t0;
	r->target.len = t1 - t0;
	/* absolute-form (RFC 9112 §3.2.2: a server MUST accept it): the
	 * authority is the host (§3.2.2: the Host field is then ignored),
	 * the rest an origin-form target, "/" if empty (RFC 9110 §4.2.3) */
	if (t1 - t0 >= 7 && (mem_ieq(s + t0, 7, "http://") ||
	    (t1 - t0 >= 8 && mem_ieq(s + t0, 8, "https://")))) {
		size_t a0 = t0 + ((s[t0 + 4] | 0x20) == 's' ? 8 : 7);

		for (i = a0; i < t1 && s[i] != '/' && s[i] != '?'; i++)
			;
		/* RFC 9110 §4.2.1, §4.2.4: no empty host, no userinfo */
		if (i == a0 || !host_ok(s + a0, i - a0) ||
		    !target_chars_ok(s + i, t1 - i))
			return http_fail(p, 400, "malformed request target");
		authority->p = s + a0;
		authority->len = i - a0;
		t0 = i;
	} else if (t1 - t0 == 1 && s[t0] == '*') {
		/* asterisk-form (RFC 9112 §3.2.4): only for a server-wide
		 * OPTIONS; the path is then "*" */
		if (r->method != HTTP_M_OPTIONS)
			return http_fail(p, 400, "malformed request target");
	} else if (!target_ok(s + t0, t1 - t0)) {
		return http_fail(p, 400, "malformed request target");
	}
	r->path.p = s + t0;
	r->path.len = t1 - t0;
	for (i = t0; i < t1; i++) {
		if (s[i] == '?') {
			r->path.len = i - t0;
			r->query.p = s + i + 1;
			r->query.len = t1 - i - 1;
			break;
		}
	}
	if (r->path.len == 0) {
		r->path.p = "/";
		r->path.len = 1;
	}
	/* HTTP-version = "HTTP" "/" DIGIT "." DIGIT (RFC 9112 §2.3) */
	s += t1 + 1;
	n -= t1 + 1;
	if (n != 8 || memcmp(s, "HTTP/", 5) != 0 || s[6] != '.' ||
	    s[5] < '0' || s[5] > '9' || s[7] < '0' || s[7] > '9')
		return http_fail(p, 400, "malformed HTTP version");
	if (s[5] != '1')
		return http_fail(p, 505, "HTTP version not supported");
	r->minor = s[7] == '0' ? 0 : 1;
	return 0;
}

int
http_content_length(const char *v, size_t n, bool *has, uint64_t *len)
{
	size_t i = 0;

	for (;;) {
		uint64_t x = 0;
		size_t d = 0;

		while (i < n && (v[i] == ' ' || v[i] == '\t'))
			i++;
		while (i < n && v[i] >= '0' && v[i] <= '9') {
			/* exact: up to UINT64_MAX is a number (a request's
			 * then gets its 413) */
			if (x > UINT64_MAX / 10 || (x == UINT64_MAX / 10 &&
			    (uint64_t)(v[i] - '0') > UINT64_MAX % 10))
				return -EINVAL;
			x = x * 10 + (uint64_t)(v[i] - '0');
			i++;
			d++;
		}
		if (d == 0)
			return -EINVAL;
		while (i < n && (v[i] == ' ' || v[i] == '\t'))
			i++;
		if (i < n && v[i] != ',')
			return -EINVAL;
		/* RFC 9110 §8.6: identical values may be taken as one;
		 * differing ones are an error (RFC 9112 §6.3 item 5) */
		if (*has && *len != x)
			return -EEXIST;
		*has = true;
		*len = x;
		if (i >= n)
			return 0;
		i++;	/* ',' */
	}
}

/* Iterate over the elements of a #list value (RFC 9110 §5.6.1): each
 * element trimmed, empty ones skipped. Returns false at the end. */
static bool
list_next(const char *v, size_t n, size_t *pos, const char **e, size_t *el)
{
	size_t i = *pos, a, b;

	for (;;) {
		if (i >= n)
			return false;
		a = i;
		while (i < n && v[i] != ',')
			i++;
		b = i;
		if (i < n)
			i++;
		while (a < b && (v[a] == ' ' || v[a] == '\t'))
			a++;
		while (b > a && (v[b - 1] == ' ' || v[b - 1] == '\t'))
			b--;
		if (b > a) {
			*pos = i;
			*e = v + a;
			*el = b - a;
			return true;
		}
	}
}

static int
parse_transfer_encoding(struct http_parser *p, const char *v, size_t n,
		bool *te_seen, bool *te_unknown)
{
	struct http_request *r = &p->req;
	size_t pos = 0, el, k;
	const char *e;

	*te_seen = true;
	while (list_next(v, n, &pos, &e, &el)) {
		/* transfer-coding = token *( OWS ";" OWS transfer-parameter ) */
		for (k = 0; k < el && tchar[(uint8_t)e[k]]; k++)
			;
		if (k == 0)
			return http_fail(p, 400, "malformed Transfer-Encoding");
		if (r->chunked)	/* something after chunked (RFC 9112 §6.3) */
			return http_fail(p, 400, "chunked is not the final coding");
		if (mem_ieq(e, k, "chunked")) {
			if (k != el)	/* chunked takes no parameters */
				return http_fail(p, 400,
					"malformed Transfer-Encoding");
			r->chunked = true;
		} else {
			*te_unknown = true;
		}
	}
	return 0;
}

static int
parse_field(struct http_parser *p, const char *s, size_t n,
		bool *te_seen, bool *te_unknown, int *hosts)
{
	struct http_request *r = &p->req;
	size_t i = 0, a, b;
	const char *v;
	size_t vn;

	/* obs-fold: a line starting with SP/HTAB (RFC 9112 §5.2) */
	if (s[0] == ' ' || s[0] == '\t')
		return http_fail(p, 400, "obsolete line folding");
	while (i < n && tchar[(uint8_t)s[i]])
		i++;
	if (i >= n || s[i] != ':') {
		size_t j = i;

		while (j < n && (s[j] == ' ' || s[j] == '\t'))
			j++;
		if (j > i && j < n && s[j] == ':')	/* §5.1 MUST 400 */
			return http_fail(p, 400,
				"whitespace between field name and colon");
		return http_fail(p, 400, "malformed header field");
	}
	if (i == 0)
		return http_fail(p, 400, "empty header field name");
	/* field-value = *field-content; no CTL but HTAB (RFC 9110 §5.5) */
	for (a = i + 1; a < n; a++)
		if (!fvchar[(uint8_t)s[a]])
			return http_fail(p, 400, "invalid character in header");
	a = i + 1;
	b = n;
	while (a < b && (s[a] == ' ' || s[a] == '\t'))
		a++;
	while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t'))
		b--;
	v = s + a;
	vn = b - a;

	/* dispatch on the name's length: one compare per field, not eight */
#define IS(name) (i == sizeof(name) - 1 && mem_ieq_n(s, name, i))
	if (i != 4 && i != 6 && i != 10 && i != 12 && i != 13 && i != 14 &&
	    i != 15 && i != 17)
		return 0;
	if (IS("content-length")) {
	{
		int rc = http_content_length(v, vn,
				&p->req.has_content_length,
				&p->req.content_length);

		if (rc == -EEXIST)
			return http_fail(p, 400, "conflicting Content-Length");
		if (rc < 0)
			return http_fail(p, 400, "invalid Content-Length");
		return 0;
	}
	} else if (IS("transfer-encoding")) {
		return parse_transfer_encoding(p, v, vn, te_seen, te_unknown);
	} else if (IS("host")) {
		/* RFC 9112 §3.2: an invalid Host value MUST be 400 */
		if (!host_ok(v, vn))
			return http_fail(p, 400, "invalid Host");
		(*hosts)++;
		r->host.p = v;
		r->host.len = vn;
	} else if (IS("content-type")) {
		if (r->content_type.p != NULL)
			return http_fail(p, 400, "duplicate Content-Type");
		r->content_type.p = v;
		r->content_type.len = vn;
	} else if (IS("accept")) {
		if (r->accept.p == NULL) {
			r->accept.p = v;
			r->accept.len = vn;
		}
	} else if (IS("authorization")) {
		if (r->authorization.p != NULL)
			return http_fail(p, 400, "duplicate Authorization");
		r->authorization.p = v;
		r->authorization.len = vn;
	} else if (IS("x-forwarded-for")) {
		/* The last line: a proxy appends the peer it saw to the
		 * last element, and lines combine in order (RFC 9110 §5.3). */
		r->forwarded_for.p = v;
		r->forwarded_for.len = vn;
	} else if (IS("connection")) {
		size_t pos = 0, el;
		const char *e;

		while (list_next(v, vn, &pos, &e, &el)) {
			if (mem_ieq(e, el, "close"))
				p->conn |= 1;	/* close */
			else if (mem_ieq(e, el, "keep-alive"))
				p->conn |= 2;	/* keep-alive */
		}
	} else if (IS("expect")) {
		if (!mem_ieq(v, vn, "100-continue"))
			return http_fail(p, 417, "unsupported expectation");
		/* RFC 9110 §10.1.1: ignored in an HTTP/1.0 request */
		r->expect_continue = r->minor == 1;
	}
#undef IS
	return 0;
}

/* The whole head is in p->head[0..head_len), every line ending in CRLF
 * (checked while scanning), the last line empty. */
static int
parse_head(struct http_parser *p)
{
	struct http_request *r = &p->req;
	const char *s = p->head, *end = p->head + r->head_len - 2;
	const char *eol;
	struct http_str authority = { NULL, 0 };
	bool te_seen = false, te_unknown = false;
	int hosts = 0, rc;

	eol = memchr(s, '\r', end - s + 2);
	rc = parse_request_line(p, s, eol - s, &authority);
	if (rc < 0)
		return rc;
	for (s = eol + 2; s < end; s = eol + 2) {
		eol = memchr(s, '\r', end - s);
		rc = parse_field(p, s, eol - s, &te_seen, &te_unknown, &hosts);
		if (rc < 0)
			return rc;
	}
	/* RFC 9112 §3.2: a request with more than one Host is 400 in any
	 * version; HTTP/1.1 also needs one */
	if (hosts > 1)
		return http_fail(p, 400, "duplicate Host");
	if (r->minor == 1 && hosts == 0)
		return http_fail(p, 400, "missing Host");
	if (authority.p != NULL)		/* RFC 9112 §3.2.2 */
		r->host = authority;
	if (te_seen) {
		if (r->minor == 0)		/* RFC 9112 §6.1 */
			return http_fail(p, 400,
				"Transfer-Encoding in an HTTP/1.0 request");
		if (r->has_content_length)	/* RFC 9112 §6.3 item 3 */
			return http_fail(p, 400,
				"both Content-Length and Transfer-Encoding");
		if (!r->chunked)		/* RFC 9112 §6.3 item 4 */
			return http_fail(p, 400, "chunked is not the final coding");
		if (te_unknown)			/* RFC 9112 §6.1 */
			return http_fail(p, 501, "unsupported transfer coding");
	}
	if (r->has_content_length && r->content_length > p->max_body)
		return http_fail(p, 413, "request body too large");
	/* persistence, RFC 9112 §9.3 */
	if (p->conn & 1)
		r->keep_alive = false;
	else if (r->minor == 1)
		r->keep_alive = true;
	else
		r->keep_alive = (p->conn & 2) != 0;
	r->has_body = r->chunked || r->content_length > 0;
	if (r->chunked) {
		p->state = ST_CH_SIZE;
	} else if (r->content_length > 0) {
		p->state = ST_BODY_CL;
		p->chunk_left = r->content_length;
	} else {
		p->state = ST_COMPLETE;
	}
	return 0;
}

/* Copy head bytes into the bounded buffer until the empty line; CRLF
 * only (bare CR or LF is 400, RFC 9112 §2.2). Works a line at a time
 * (memchr), yet fails at the same byte as a byte-wise scan would, so the
 * outcome never depends on how the input was split: at byte k, first the
 * head limit (414 in the request line, 431 after it), then the
 * line-ending rules. */
static int
scan_head(struct http_parser *p, const uint8_t *d, size_t len, size_t *used)
{
	struct http_request *r = &p->req;
	size_t i = 0;

	while (i < len) {
		const uint8_t *s = d + i, *nl, *cr;
		size_t seg, bad, fit;
		const char *why = NULL;

		if (r->head_len == 0) {
			/* §2.2: ignore empty lines before the request line */
			if (p->lead_cr) {
				if (s[0] != '\n')
					goto bare_cr;
				p->lead_cr = 0;
				i++;
				continue;
			}
			if (s[0] == '\r') {
				p->lead_cr = 1;
				i++;
				continue;
			}
			if (s[0] == '\n')
				goto bare_lf;
		}
		nl = memchr(s, '\n', len - i);
		seg = nl ? (size_t)(nl - s) + 1 : len - i;
		/* the first byte breaking the CRLF rule, or seg */
		bad = seg;
		if (p->prev_cr && s[0] != '\n') {
			bad = 0;
			why = "bare CR in request head";
		} else {
			cr = memchr(s, '\r', seg);
			if (cr != NULL && (size_t)(cr - s) + 1 < seg &&
			    cr[1] != '\n') {
				bad = cr - s + 1;
				why = "bare CR in request head";
			} else if (nl != NULL && (seg == 1 ? !p->prev_cr :
					s[seg - 2] != '\r')) {
				bad = seg - 1;
				why = "bare LF in request head";
			}
		}
		fit = p->head_cap - r->head_len;
		if (fit < seg && fit <= bad) {
			*used = i + fit;
			/* RFC 9112 §3: a request-target longer than we parse
			 * MUST be 414; the request line is still open while
			 * line_start is 0. Header fields: 431 (RFC 6585 §5). */
			if (p->line_start == 0)
				return http_fail(p, 414, "request line too long");
			return http_fail(p, 431, "request header fields too large");
		}
		if (why != NULL) {
			*used = i + bad;
			return http_fail(p, 400, why);
		}
		memcpy(p->head + r->head_len, s, seg);
		r->head_len += seg;
		i += seg;
		if (nl == NULL) {
			p->prev_cr = s[seg - 1] == '\r';
			continue;
		}
		p->prev_cr = 0;
		if (r->head_len - p->line_start == 2) {
			*used = i;
			return 1;
		}
		p->line_start = r->head_len;
	}
	*used = len;
	return 0;
bare_cr:
	*used = i;
	return http_fail(p, 400, "bare CR in request head");
bare_lf:
	*used = i;
	return http_fail(p, 400, "bare LF in request head");
}

int
http_feed(struct http_parser *p, const void *data, size_t len, size_t *used)
{
	const uint8_t *d = data;
	int rc;

	*used = 0;
	if (p->state == ST_ERROR)
		return HTTP_EV_ERROR;
	if (p->pending) {
		rc = p->pending;
		if (rc == HTTP_EV_NEED_BUF)	/* until a buffer is given */
			return rc;
		p->pending = 0;
		return rc;
	}
	if (p->state == ST_HEAD) {
		rc = scan_head(p, d, len, used);
		if (rc <= 0)
			return rc;
		rc = parse_head(p);
		if (rc < 0)
			return rc;
		if (p->state == ST_COMPLETE)
			p->pending = HTTP_EV_DONE;
		return HTTP_EV_HEAD;
	}
	if (p->state == ST_COMPLETE)	/* a caller bug: fail, not spin */
		return http_fail(p, 500, "request parser fed after DONE");
	return http_feed_body(p, d, len, used);
}
