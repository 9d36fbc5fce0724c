/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * Hostile input to the request parser, beyond the grammar cases of
 * test_http_parse.c: numbers at and past 64 bits in Content-Length and
 * chunk sizes, chunk extensions at their limit, NUL, bare CR/LF and
 * obs-fold in every position, duplicate and conflicting framing fields,
 * garbage pipelined after a valid request, Expect variants, the Host
 * value (RFC 9112 §3.2), and a stream of random valid requests (fixed
 * seed) fed in random chunk sizes whose bodies must come out exactly.
 * Every case is fed whole, split at every point and byte by byte, each
 * chunk against a guard page (harness.c); this file also runs under
 * ASan + UBSan (tests/http/meson.build).
 */

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "harness.h"
#include "test_rng.h"

#define S(lit) lit, sizeof(lit) - 1

static const struct drive_opts dflt = { 0 };

static void
expect_ok(const struct drive_opts *o, const char *req, size_t len,
		int nreq)
{
	struct outcome out;

	drive_all_splits(o, req, len, &out);
	if (out.status != 0)
		print_error("%d %s for: %.*s\n", out.status, out.err,
			(int)len, req);
	assert_int_equal(out.status, 0);
	assert_int_equal(out.requests, nreq);
	assert_int_equal(out.consumed, len);
}

static void
expect_err(const struct drive_opts *o, const char *req, size_t len,
		int nreq, int status, const char *msg)
{
	struct outcome out;

	drive_all_splits(o, req, len, &out);
	if (out.status != status)
		print_error("got %d %s for: %.*s\n", out.status, out.err,
			(int)len, req);
	assert_int_equal(out.final_ev, HTTP_EV_ERROR);
	assert_int_equal(out.requests, nreq);
	assert_int_equal(out.status, status);
	if (msg != NULL)
		assert_string_equal(out.err, msg);
}

#define POST "POST / HTTP/1.1\r\nHost: a\r\n"
#define CH POST "Transfer-Encoding: chunked\r\n\r\n"

static void
test_content_length_numbers(void **state)
{
	/* leading zeros are the same number (RFC 9110 §8.6: 1*DIGIT) */
	expect_ok(&dflt, S(POST "Content-Length: 0003\r\n\r\nabc"), 1);
	expect_ok(&dflt, S(POST "Content-Length: 3\r\nContent-Length: 003"
		"\r\n\r\nabc"), 1);
	expect_ok(&dflt, S(POST "Content-Length: 3,3 , 3\r\n\r\nabc"), 1);
	/* the largest u64 is a valid number, too large a body; one past
	 * it cannot be held: never wraps to a small body */
	expect_err(&dflt, S(POST "Content-Length: 18446744073709551615\r\n"
		"\r\n"), 0, 413, "request body too large");
	expect_err(&dflt, S(POST "Content-Length: 18446744073709551610\r\n"
		"\r\n"), 0, 413, "request body too large");
	expect_err(&dflt, S(POST "Content-Length: 18446744073709551616\r\n"
		"\r\n"), 0, 400, "invalid Content-Length");
	expect_err(&dflt, S(POST "Content-Length: 36893488147419103232\r\n"
		"\r\n"), 0, 400, "invalid Content-Length");
	expect_err(&dflt, S(POST "Content-Length: 1e3\r\n\r\n"), 0, 400,
		"invalid Content-Length");
	expect_err(&dflt, S(POST "Content-Length: 1\x00\r\n\r\n"), 0, 400,
		"invalid character in header");
	expect_err(&dflt, S(POST "Content-Length: 1\r\nContent-Length: 2"
		"\r\n\r\n"), 0, 400, "conflicting Content-Length");
	expect_err(&dflt, S(POST "Content-Length: 0\r\nContent-Length: 00"
		"\r\nContent-Length: 1\r\n\r\n"), 0, 400,
		"conflicting Content-Length");
	/* CL + TE in either order and spelling */
	expect_err(&dflt, S(POST "content-length: 0\r\ntransfer-encoding: "
		"CHUNKED\r\n\r\n0\r\n\r\n"), 0, 400,
		"both Content-Length and Transfer-Encoding");
}

static void
test_chunk_size_numbers(void **state)
{
	/* 16 hex digits fit; the value still bows to max_body */
	expect_err(&dflt, S(CH "ffffffffffffffff\r\n"), 0, 413,
		"request body too large");
	expect_err(&dflt, S(CH "8000000000000000\r\n"), 0, 413,
		"request body too large");
	/* leading zeros do not count towards overflow */
	expect_ok(&dflt, S(CH "00000000000000000000000001\r\nx\r\n0\r\n\r\n"),
		1);
	expect_err(&dflt, S(CH "1ffffffffffffffff\r\n"), 0, 400,
		"chunk size overflow");
	/* a size that would sum past max_body over several chunks */
	{
		struct drive_opts small = { .max_body = 4 };

		expect_err(&small, S(CH "2\r\nab\r\n2\r\ncd\r\n1\r\n"), 0, 413,
			"request body too large");
		expect_ok(&small, S(CH "2\r\nab\r\n2\r\ncd\r\n0\r\n\r\n"), 1);
	}
	expect_err(&dflt, S(CH "-1\r\n"), 0, 400, "malformed chunk size");
	expect_err(&dflt, S(CH "0x1\r\n"), 0, 400, "malformed chunk size");
	expect_err(&dflt, S(CH " 1\r\n"), 0, 400, "malformed chunk size");
	expect_err(&dflt, S(CH "\r\n"), 0, 400, "malformed chunk size");
	expect_err(&dflt, S(CH "1\x00\r\n"), 0, 400, "malformed chunk size");
}

static void
test_chunk_extensions(void **state)
{
	char req[4096];
	size_t n, room;

	expect_ok(&dflt, S(CH "1 ;a=b ; c=\"d;e\"\r\nx\r\n0;z\r\n\r\n"), 1);
	expect_ok(&dflt, S(CH "1;\x80\xff\r\nx\r\n0\r\n\r\n"), 1);
	expect_err(&dflt, S(CH "1;a\x00\r\n"), 0, 400,
		"malformed chunk extension");
	expect_err(&dflt, S(CH "1;a\nx"), 0, 400,
		"malformed chunk extension");
	expect_err(&dflt, S(CH "1;a\r\r\n"), 0, 400,
		"bare CR in chunk size line");
	/* exactly HTTP_CHUNK_LINE_MAX bytes of size line (CR included)
	 * pass; one more is 400 */
	n = snprintf(req, sizeof(req), CH "1;");
	room = HTTP_CHUNK_LINE_MAX - 3;	/* "1;" + ext + CR */
	memset(req + n, 'e', room);
	n += room;
	n += snprintf(req + n, sizeof(req) - n, "\r\nx\r\n0\r\n\r\n");
	expect_ok(&dflt, req, n, 1);
	n = snprintf(req, sizeof(req), CH "1;");
	memset(req + n, 'e', room + 1);
	n += room + 1;
	n += snprintf(req + n, sizeof(req) - n, "\r\nx\r\n0\r\n\r\n");
	expect_err(&dflt, req, n, 0, 400, "chunk size line too long");
}

static void
test_line_breaks_everywhere(void **state)
{
	static const char *const bad[] = {
		"GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nX: a\nb\r\n\r\n",
		"GET /\r HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\n\n",
		"GET / HTTP/1.1\r\nHost: a\r\n\r\r\n",
		"\r\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"\r\n\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
	};
	static const char *const fold[] = {
		"GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n\t2\r\n\r\n",
		"GET / HTTP/1.1\r\n\tHost: a\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n 0\r\n\r\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_err(&dflt, bad[i], strlen(bad[i]), 0, 400, NULL);
	for (size_t i = 0; i < sizeof(fold) / sizeof(fold[0]); i++)
		expect_err(&dflt, fold[i], strlen(fold[i]), 0, 400,
			"obsolete line folding");
	/* NUL in each part of the head */
	expect_err(&dflt, S("G\x00T / HTTP/1.1\r\nHost: a\r\n\r\n"), 0, 400,
		"malformed request line: method");
	expect_err(&dflt, S("GET /\x00 HTTP/1.1\r\nHost: a\r\n\r\n"), 0, 400,
		"malformed request target");
	expect_err(&dflt, S("GET / HTTP/1.1\x00\r\nHost: a\r\n\r\n"), 0, 400,
		"malformed HTTP version");
	expect_err(&dflt, S("\x00GET / HTTP/1.1\r\nHost: a\r\n\r\n"), 0, 400,
		"malformed request line: method");
	/* many empty lines before a request: each ignored (§2.2) */
	expect_ok(&dflt, S("\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"),
		1);
}

static void
test_pipelined_garbage(void **state)
{
	/* the valid request completes; the garbage after it fails alone */
	expect_err(&dflt, S("GET / HTTP/1.1\r\nHost: a\r\n\r\nGARBAGE\r\n\r\n"),
		1, 400, "malformed request line: method");
	expect_err(&dflt, S(POST "Content-Length: 2\r\n\r\nabXYZ / HTTP/1.1"
		"\r\n\r\n"), 1, 400, "missing Host");
	expect_err(&dflt, S(CH "1\r\nx\r\n0\r\n\r\n\x00\xff\r\n\r\n"), 1,
		400, "malformed request line: method");
	expect_err(&dflt, S(CH "0\r\n\r\n\r\n\n"), 1, 400,
		"bare LF in request head");
	/* a body one byte longer than announced is the next request
	 * ("bGET" would be a valid method: 405 at the route) */
	expect_err(&dflt, S(POST "Content-Length: 1\r\n\r\na("
		"GET / HTTP/1.1\r\nHost: a\r\n\r\n"), 1, 400,
		"malformed request line: method");
	/* three valid requests back to back, then garbage */
	expect_err(&dflt, S("GET / HTTP/1.1\r\nHost: a\r\n\r\n"
		CH "3\r\nabc\r\n0\r\n\r\n"
		POST "Content-Length: 1\r\n\r\nz"
		"\x16\x03\x01\x02\x00\r\n\r\n"), 3, 400,
		"malformed request line: method");
	/* (the head is judged once complete: garbage without a line end
	 * waits under the header timeout, http_parser_in_head(), or runs
	 * into the head limit) */
}

static void
test_expect_variants(void **state)
{
	struct outcome out;

	drive_all_splits(&dflt, S(POST "Expect: 100-CONTINUE\r\n"
		"Content-Length: 1\r\n\r\nx"), &out);
	assert_int_equal(out.requests, 1);
	assert_non_null(strstr(out.log, "expect=1"));
	drive_all_splits(&dflt, S("POST / HTTP/1.0\r\nExpect: 100-continue"
		"\r\nContent-Length: 1\r\n\r\nx"), &out);
	assert_int_equal(out.requests, 1);
	assert_non_null(strstr(out.log, "expect=0"));
	expect_ok(&dflt, S(POST "Expect:  100-continue \t\r\n\r\n"), 1);
	expect_err(&dflt, S(POST "Expect: 100-continue, x\r\n\r\n"), 0, 417,
		"unsupported expectation");
	expect_err(&dflt, S(POST "Expect:\r\n\r\n"), 0, 417,
		"unsupported expectation");
	expect_err(&dflt, S(POST "Expect: 200-ok\r\n\r\n"), 0, 417,
		"unsupported expectation");
	expect_err(&dflt, S(POST "Expect: 100-continue\r\nExpect: x\r\n\r\n"),
		0, 417, "unsupported expectation");
}

static void
test_long_names_and_values(void **state)
{
	/* a field of name and value at the head limit, exactly */
	static const char pre[] = "GET / HTTP/1.1\r\nHost: a\r\n";
	struct drive_opts o = { .head_cap = 512 };
	char req[1024];
	size_t n = sizeof(pre) - 1, name = 200, val;

	memcpy(req, pre, n);
	memset(req + n, 'N', name);
	n += name;
	req[n++] = ':';
	val = 512 - n - 4;	/* CRLF ending the field, CRLF ending the head */
	memset(req + n, 'v', val);
	n += val;
	memcpy(req + n, "\r\n\r\n", 4);
	n += 4;
	assert_int_equal(n, 512);
	expect_ok(&o, req, n, 1);
	o.head_cap = 511;
	expect_err(&o, req, n, 0, 431, "request header fields too large");
	/* a 4 KB field name alone, in a default 8 KB head */
	n = sizeof(pre) - 1;
	memcpy(req, pre, n);
	memset(req + n, 'x', 900);
	n += 900;
	memcpy(req + n, ": 1\r\n\r\n", 7);
	expect_ok(&dflt, req, n + 7, 1);
}

/*
 * RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status
 * code to any HTTP/1.1 request message that lacks a Host header field and
 * to any request message that contains more than one Host header field
 * line or a Host header field with an invalid field value."
 * Host = uri-host [ ":" port ] (RFC 9110 §7.2, RFC 3986 §3.2.2).
 */
static void
test_host_value(void **state)
{
	static const char *const ok[] = {
		"a", "shard-1.example", "198.18.10.2:8080", "[::1]:80",
		"[2001:db8::1]", "a%41b", "x_y~z!$&'()*+,;=", "",
		"a:",
	};
	static const char *const bad[] = {
		"a b", "a/b", "a@b", "a?b", "a#b", "\"a\"", "a:80:90",
		"a:8x", "[::1", "[::1]x", "a\x80", "a\\b", "<a>", "a{b}",
		"%zz",
	};
	char req[256];
	int n;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		n = snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: %s\r\n"
			"\r\n", ok[i]);
		expect_ok(&dflt, req, n, 1);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: %s\r\n"
			"\r\n", bad[i]);
		expect_err(&dflt, req, n, 0, 400, "invalid Host");
	}
	/* an HTTP/1.0 request's Host is held to the same syntax */
	expect_err(&dflt, S("GET / HTTP/1.0\r\nHost: a b\r\n\r\n"), 0, 400,
		"invalid Host");
}

/* RFC 9112 §3.2.2: "a server MUST accept the absolute-form in
 * requests"; the authority is the host, the Host field is ignored. */
static void
test_absolute_form(void **state)
{
	static const struct {
		const char *target;
		const char *log;	/* the part of the harness log */
	} ok[] = {
		{ "http://shard:8080/v1/health",
		  "target='http://shard:8080/v1/health' path='/v1/health' "
		  "query=(none) host='shard:8080'" },
		{ "HTTPS://[::1]/v1/walk-ffn?a=%20",
		  "target='HTTPS://[::1]/v1/walk-ffn?a=%20' path='/v1/walk-ffn' "
		  "query='a=%20' host='[::1]'" },
		{ "http://a", "path='/' query=(none) host='a'" },
		{ "http://a?x=1", "path='/' query='x=1' host='a'" },
	};
	static const char *const bad[] = {
		"http://", "http:///x", "http://u@a/", "http://a/#f",
		"http://a b/", "ftp://a/", "http:/a/", "http://a/%zz",
		"http://[::1/", "a:80",
	};
	struct outcome out;
	char req[256];
	int n;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: "
			"other\r\n\r\n", ok[i].target);
		drive_all_splits(&dflt, req, n, &out);
		assert_int_equal(out.status, 0);
		assert_int_equal(out.requests, 1);
		if (strstr(out.log, ok[i].log) == NULL)
			print_error("%s\n", out.log);
		assert_non_null(strstr(out.log, ok[i].log));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: a"
			"\r\n\r\n", bad[i]);
		expect_err(&dflt, req, n, 0, 400, NULL);
	}
	/* Host is still required in HTTP/1.1 (§3.2), not in 1.0 */
	expect_err(&dflt, S("GET http://a/ HTTP/1.1\r\n\r\n"), 0, 400,
		"missing Host");
	drive_all_splits(&dflt, S("GET http://a/ HTTP/1.0\r\n\r\n"), &out);
	assert_int_equal(out.requests, 1);
	assert_non_null(strstr(out.log, "host='a'"));
}

/* --- a stream of random valid requests ------------------------------- */

struct gen {
	char *buf;
	size_t len, cap;
	char *want;		/* expected body lines, as the harness logs */
	size_t wlen, wcap;
};

static void
put(struct gen *g, const void *p, size_t n)
{
	assert_true(g->len + n <= g->cap);
	memcpy(g->buf + g->len, p, n);
	g->len += n;
}

static void
putf(struct gen *g, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < g->cap - g->len);
	g->len += n;
}

static void
want_body(struct gen *g, const uint8_t *b, size_t n)
{
	int k = snprintf(g->want + g->wlen, g->wcap - g->wlen,
		" body_len=%zu data=", n);

	g->wlen += k;
	for (size_t i = 0; i < n; i++)
		g->wlen += snprintf(g->want + g->wlen, g->wcap - g->wlen,
			"%02x", b[i]);
	g->wlen += snprintf(g->want + g->wlen, g->wcap - g->wlen, "\n");
	assert_true(g->wlen < g->wcap);
}

/* One valid request with a random body and random framing. */
static void
gen_request(struct gen *g, uint64_t *rng)
{
	uint8_t body[96];
	size_t n = test_rng_below(rng, sizeof(body));
	int chunked = test_rng_below(rng, 2);

	for (size_t i = 0; i < n; i++)
		body[i] = (uint8_t)test_rng_u32(rng);
	putf(g, "POST /v1/walk-ffn?q=%u HTTP/1.1\r\nhOsT: s\r\n",
		test_rng_u32(rng));
	if (test_rng_below(rng, 2))
		putf(g, "X-Pad-%u: %.*s\r\n", test_rng_below(rng, 100),
			(int)test_rng_below(rng, 40),
			"................................................");
	if (test_rng_below(rng, 2))
		putf(g, "Expect: 100-continue\r\n");
	if (chunked) {
		size_t o = 0;

		putf(g, "Transfer-Encoding: %s\r\n\r\n",
			test_rng_below(rng, 2) ? "chunked" : "ChUnKeD");
		while (o < n) {
			size_t c = 1 + test_rng_below(rng, n - o);

			putf(g, "%s%zx%s\r\n",
				test_rng_below(rng, 2) ? "000" : "", c,
				test_rng_below(rng, 2) ? " ;e=\"v\"" : "");
			put(g, body + o, c);
			put(g, "\r\n", 2);
			o += c;
		}
		putf(g, "0\r\n%s\r\n",
			test_rng_below(rng, 2) ? "T: x\r\n" : "");
	} else {
		putf(g, "Content-Length: %zu\r\n\r\n", n);
		put(g, body, n);
	}
	want_body(g, body, n);
}

static void
test_random_valid_stream(void **state)
{
	static const struct drive_opts modes[] = {
		{ .mode = BODY_PARSER_COPY, .chunked_buf0 = 1 },
		{ .mode = BODY_CALLER_COPY, .chunked_buf0 = 7 },
	};
	struct gen g = { .cap = 1 << 16, .wcap = 1 << 17 };
	struct outcome *out = malloc(sizeof(*out));
	uint64_t rng = test_rng_seed(0xda942042e4dd58b5ull);
	size_t cuts[512];
	const int nreq = 12;	/* the harness log holds 8 KB */

	g.buf = malloc(g.cap);
	g.want = malloc(g.wcap);
	assert_non_null(g.buf);
	assert_non_null(g.want);
	for (int round = 0; round < 60; round++) {
		g.len = 0;
		g.wlen = 0;
		for (int r = 0; r < nreq; r++)
			gen_request(&g, &rng);
		g.want[g.wlen] = '\0';
		for (size_t m = 0; m < 2; m++) {
			/* random chunk sizes, 1 to 300 bytes */
			size_t nc = 0, at = 0;

			while (nc < 512) {
				at += 1 + test_rng_below(&rng, 300);
				if (at >= g.len)
					break;
				cuts[nc++] = at;
			}
			drive(&modes[m], g.buf, g.len, cuts, nc, out);
			assert_int_equal(out->status, 0);
			assert_int_equal(out->requests, nreq);
			assert_int_equal(out->consumed, g.len);
			/* every body, in order, byte for byte */
			{
				const char *p = out->log, *w = g.want;

				while (*w) {
					const char *wl = strchr(w, '\n');
					size_t k = wl - w + 1;
					char line[512];

					assert_true(k < sizeof(line));
					memcpy(line, w, k);
					line[k] = '\0';
					p = strstr(p, line);
					assert_non_null(p);
					p += k;
					w += k;
				}
			}
		}
	}
	free(g.buf);
	free(g.want);
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_content_length_numbers),
		cmocka_unit_test(test_chunk_size_numbers),
		cmocka_unit_test(test_chunk_extensions),
		cmocka_unit_test(test_line_breaks_everywhere),
		cmocka_unit_test(test_pipelined_garbage),
		cmocka_unit_test(test_expect_variants),
		cmocka_unit_test(test_long_names_and_values),
		cmocka_unit_test(test_host_value),
		cmocka_unit_test(test_absolute_form),
		cmocka_unit_test(test_random_valid_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
