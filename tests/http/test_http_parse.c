/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * Request parser: valid requests fed whole, split at every point, byte by
 * byte, each chunk against a guard page; invalid inputs from the RFC 9112
 * grammar; request smuggling cases; chunked bodies; pipelining; limits.
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

#define S(lit) lit, sizeof(lit) - 1

static const struct drive_opts dflt = { 0 };

static void
expect_ok(const struct drive_opts *o, const char *req, size_t len,
		int nreq, const char *log_expect)
{
	struct outcome out;

	drive_all_splits(o, req, len, &out);
	assert_int_equal(out.status, 0);
	assert_int_equal(out.requests, nreq);
	assert_int_equal(out.consumed, len);
	if (log_expect != NULL)
		assert_string_equal(out.log, log_expect);
}

static void
expect_err(const struct drive_opts *o, const char *req, size_t len,
		int status, const char *msg)
{
	struct outcome out;

	drive_all_splits(o, req, len, &out);
	assert_int_equal(out.final_ev, HTTP_EV_ERROR);
	assert_int_equal(out.status, status);
	assert_string_equal(out.err, msg);
}

/* --- valid requests --------------------------------------------------- */

static void
test_get_health(void **state)
{
	expect_ok(&dflt, S("GET /v1/health HTTP/1.1\r\nHost: shard\r\n\r\n"),
		1,
		"REQ m=1 method='GET' target='/v1/health' path='/v1/health'"
		" query=(none) host='shard' ct=(none) accept=(none)"
		" auth=(none) minor=1 ka=1 expect=0 chunked=0 body=0"
		" cl=0/0 head_len=40 body_len=0 data=\n");
}

/* RFC 9112 §3.2.4: "OPTIONS * HTTP/1.1" asks about the server as a
 * whole; the target and the path are "*", every split alike. */
static void
test_options_asterisk(void **state)
{
	expect_ok(&dflt, S("OPTIONS * HTTP/1.1\r\nHost: shard\r\n\r\n"),
		1,
		"REQ m=6 method='OPTIONS' target='*' path='*'"
		" query=(none) host='shard' ct=(none) accept=(none)"
		" auth=(none) minor=1 ka=1 expect=0 chunked=0 body=0"
		" cl=0/0 head_len=35 body_len=0 data=\n");
}

static void
test_post_binary_body(void **state)
{
	/* the body holds CR, LF, NUL: the parser must not look at it */
	static const char req[] =
		"POST /v1/walk-ffn?x=1 HTTP/1.1\r\n"
		"Host: 198.18.10.2:8080\r\n"
		"Content-Type:application/x-larql-ffn\r\n"
		"Accept:  application/x-larql-ffn;fmt=f16 \t\r\n"
		"Authorization: Bearer k3y\r\n"
		"Content-Length: 6\r\n"
		"\r\n"
		"\r\n\0\xff\r\n";
	const char *log =
		"REQ m=3 method='POST' target='/v1/walk-ffn?x=1'"
		" path='/v1/walk-ffn' query='x=1' host='198.18.10.2:8080'"
		" ct='application/x-larql-ffn'"
		" accept='application/x-larql-ffn;fmt=f16'"
		" auth='Bearer k3y' minor=1 ka=1 expect=0 chunked=0 body=1"
		" cl=1/6 head_len=186 body_len=6 data=0d0a00ff0d0a\n";
	struct drive_opts o = { .mode = BODY_CALLER_COPY };

	expect_ok(&dflt, req, sizeof(req) - 1, 1, log);
	/* the caller-copy path (http_body_want/commit) sees the same */
	expect_ok(&o, req, sizeof(req) - 1, 1, log);
}

/* X-Forwarded-For: the last line's value (the rate limit reads its last
 * element: shard_rl_addr_xff), whatever the case of the name. */
static void
test_forwarded_for(void **state)
{
	expect_ok(&dflt, S("GET /v1/stats HTTP/1.1\r\nHost: a\r\n"
		"X-Forwarded-For: 192.0.2.1\r\n"
		"x-forwarded-for:  198.18.3.9, 198.18.3.7 \r\n\r\n"), 1,
		"REQ m=1 method='GET' target='/v1/stats' path='/v1/stats'"
		" query=(none) host='a' ct=(none) accept=(none)"
		" auth=(none) xff='198.18.3.9, 198.18.3.7' minor=1 ka=1"
		" expect=0 chunked=0 body=0 cl=0/0 head_len=106 body_len=0"
		" data=\n");
}

static void
test_chunked_ext_trailers(void **state)
{
	static const char req[] =
		"POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n"
		"Transfer-Encoding: Chunked\r\n\r\n"
		"3;name=val;flag\r\nabc\r\n"
		"0A \t; ext=\"quoted;x\"\r\n0123456789\r\n"
		"0001\r\nZ\r\n"
		"0;last\r\nX-Trailer: t\r\nOther: u\r\n\r\n";
	struct drive_opts grow = { .chunked_buf0 = 1 };
	struct drive_opts caller = { .mode = BODY_CALLER_COPY,
		.chunked_buf0 = 2 };
	struct outcome out;

	expect_ok(&dflt, req, sizeof(req) - 1, 1, NULL);
	drive(&dflt, req, sizeof(req) - 1, NULL, 0, &out);
	assert_non_null(strstr(out.log, " chunked=1 body=1 cl=0/0"));
	assert_non_null(strstr(out.log,
		"body_len=14 data=616263303132333435363738395a\n"));
	/* a one-byte buffer doubled on each HTTP_EV_NEED_BUF */
	expect_ok(&grow, req, sizeof(req) - 1, 1, out.log);
	expect_ok(&caller, req, sizeof(req) - 1, 1, out.log);
}

static void
test_leading_crlf_ignored(void **state)
{
	struct outcome out;

	/* RFC 9112 §2.2: empty lines before the request line */
	expect_ok(&dflt, S("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"), 1,
		NULL);
	drive(&dflt, S("\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"), NULL, 0,
		&out);
	assert_non_null(strstr(out.log, "head_len=27"));
}

static void
test_identical_content_length_is_one(void **state)
{
	struct outcome out;

	expect_ok(&dflt, S("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2"
		"\r\ncontent-length: 2\r\n\r\nhi"), 1, NULL);
	expect_ok(&dflt, S("POST / HTTP/1.1\r\nHost: a\r\n"
		"Content-Length: 2 , 2\r\n\r\nhi"), 1, NULL);
	drive(&dflt, S("POST / HTTP/1.1\r\nHost: a\r\n"
		"Content-Length: 2, 2\r\n\r\nhi"), NULL, 0, &out);
	assert_non_null(strstr(out.log, "cl=1/2"));
	assert_non_null(strstr(out.log, "data=6869\n"));
}

static void
test_pipelined_in_one_chunk(void **state)
{
	static const char req[] =
		"GET /v1/stats HTTP/1.1\r\nHost: a\r\n\r\n"
		"POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n"
		"Content-Length: 3\r\n\r\nxyz"
		"POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n"
		"Transfer-Encoding: chunked\r\n\r\n1\r\nq\r\n0\r\n\r\n"
		"GET /v1/health HTTP/1.1\r\nHost: a\r\nConnection: close"
		"\r\n\r\n";
	struct outcome out;
	const char *a, *b, *c, *d;

	expect_ok(&dflt, req, sizeof(req) - 1, 4, NULL);
	drive(&dflt, req, sizeof(req) - 1, NULL, 0, &out);
	/* in order, each with its own body and persistence */
	a = strstr(out.log, "target='/v1/stats'");
	b = strstr(out.log, "data=78797a\n");
	c = strstr(out.log, "data=71\n");
	d = strstr(out.log, "target='/v1/health'");
	assert_true(a && b && c && d && a < b && b < c && c < d);
	assert_non_null(strstr(d, "ka=0"));
}

static void
test_pipelined_tail_is_next_request(void **state)
{
	/* a partial second request after a complete first one: consumed
	 * counts the first wholly and the second's bytes as taken */
	struct outcome out;

	expect_ok(&dflt, S("GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /x HTT"), 1,
		NULL);
	drive(&dflt, S("GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /x HTT"), NULL,
		0, &out);
	assert_int_equal(out.final_ev, HTTP_EV_MORE);
}

static void
test_keep_alive_rules(void **state)
{
	static const struct {
		const char *req;
		int ka;
	} t[] = {
		/* RFC 9112 §9.3 */
		{ "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 1 },
		{ "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", 0 },
		{ "GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, CLOSE"
		  "\r\n\r\n", 0 },
		{ "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n"
		  "Connection: close\r\n\r\n", 0 },
		{ "GET / HTTP/1.0\r\n\r\n", 0 },
		{ "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", 1 },
		{ "GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n",
		  0 },
		/* HTTP/1.2 is served as 1.1 */
		{ "GET / HTTP/1.2\r\nHost: a\r\n\r\n", 1 },
	};
	struct outcome out;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		drive_all_splits(&dflt, t[i].req, strlen(t[i].req), &out);
		assert_int_equal(out.requests, 1);
		assert_non_null(strstr(out.log, t[i].ka ? "ka=1" : "ka=0"));
	}
}

static void
test_expect_100_continue(void **state)
{
	struct outcome out;

	drive_all_splits(&dflt, S("POST / HTTP/1.1\r\nHost: a\r\n"
		"Expect: 100-Continue\r\nContent-Length: 1\r\n\r\nz"), &out);
	assert_non_null(strstr(out.log, "expect=1"));
	/* RFC 9110 §10.1.1: ignored in HTTP/1.0 */
	drive_all_splits(&dflt, S("POST / HTTP/1.0\r\n"
		"Expect: 100-continue\r\nContent-Length: 1\r\n\r\nz"), &out);
	assert_int_equal(out.requests, 1);
	assert_non_null(strstr(out.log, "expect=0"));
	expect_err(&dflt, S("POST / HTTP/1.1\r\nHost: a\r\n"
		"Expect: 200-ok\r\n\r\n"), 417, "unsupported expectation");
}

static void
test_head_event_before_body(void **state)
{
	/* the head is reported before any body byte arrives, so the
	 * caller can answer 100 Continue (or reject) first */
	static const char req[] = "POST / HTTP/1.1\r\nHost: a\r\n"
		"Expect: 100-continue\r\nContent-Length: 4\r\n\r\n";
	char head[256];
	struct http_parser p;
	uint8_t body[4];
	size_t used;

	http_parser_init(&p, head, sizeof(head), 0);
	assert_int_equal(http_feed(&p, req, sizeof(req) - 1, &used),
		HTTP_EV_HEAD);
	assert_int_equal(used, sizeof(req) - 1);
	assert_true(p.req.expect_continue);
	assert_int_equal(http_feed(&p, "", 0, &used), HTTP_EV_NEED_BUF);
	assert_int_equal(http_body_buf(&p, body, 3), -EINVAL);
	assert_int_equal(http_body_buf(&p, body, 4), 0);
	assert_int_equal(http_feed(&p, "ab", 2, &used), HTTP_EV_MORE);
	assert_int_equal(http_feed(&p, "cdGET", 5, &used), HTTP_EV_DONE);
	assert_int_equal(used, 2);
	assert_memory_equal(body, "abcd", 4);
	/* feeding again without http_next() is a caller bug: it fails
	 * rather than spinning */
	assert_int_equal(http_feed(&p, "GET", 3, &used), HTTP_EV_ERROR);
}

static void
test_discard_body_keeps_framing(void **state)
{
	struct drive_opts o = { .mode = BODY_DISCARD };
	struct outcome out;

	drive_all_splits(&o, S("POST / HTTP/1.1\r\nHost: a\r\n"
		"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
		"POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi"
		"GET /3 HTTP/1.1\r\nHost: a\r\n\r\n"), &out);
	assert_int_equal(out.requests, 3);
	assert_non_null(strstr(out.log, "body_len=5 data=(discarded)"));
	assert_non_null(strstr(out.log, "target='/3'"));
}

/* --- invalid: grammar -------------------------------------------------- */

struct bad {
	const char *req;
	int status;
	const char *msg;
};

static void
run_bad(const struct drive_opts *o, const struct bad *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		print_message("bad[%zu]: %d %s\n", i, t[i].status, t[i].msg);
		expect_err(o, t[i].req, strlen(t[i].req), t[i].status,
			t[i].msg);
	}
}

static void
test_bad_request_line(void **state)
{
	static const struct bad t[] = {
		{ "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "malformed request line: method" },
		{ " GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "malformed request line: method" },
		{ "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "malformed request line: method" },
		{ "GET /\r\nHost: a\r\n\r\n", 400,
		  "malformed request line: no version" },
		{ "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "malformed request target" },
		{ "GET ftp://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "malformed request target" },
		/* asterisk-form is for OPTIONS only (RFC 9112 §3.2.4) */
		{ "GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "malformed request target" },
		{ "POST * HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "malformed request target" },
		{ "OPTIONS *x HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "malformed request target" },
		{ "OPTIONS ** HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "malformed request target" },
		{ "GET /a#frag HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "malformed request target" },
		{ "GET /%zz HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "malformed request target" },
		{ "GET /%4 HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "malformed request target" },
		{ "GET /\x80 HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "malformed request target" },
		{ "GET / http/1.1\r\nHost: a\r\n\r\n", 400,
		  "malformed HTTP version" },
		{ "GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400,
		  "malformed HTTP version" },
		{ "GET / HTTP/11\r\nHost: a\r\n\r\n", 400,
		  "malformed HTTP version" },
		{ "GET / HTTP/1.x\r\nHost: a\r\n\r\n", 400,
		  "malformed HTTP version" },
		{ "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505,
		  "HTTP version not supported" },
		{ "GET / HTTP/0.9\r\nHost: a\r\n\r\n", 505,
		  "HTTP version not supported" },
	};

	run_bad(&dflt, t, sizeof(t) / sizeof(t[0]));
}

static void
test_bad_fields(void **state)
{
	static const struct bad t[] = {
		{ "GET / HTTP/1.1\nHost: a\n\n", 400,
		  "bare LF in request head" },
		{ "GET / HTTP/1.1\r\nHost: a\n\r\n", 400,
		  "bare LF in request head" },
		{ "\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "bare LF in request head" },
		{ "GET / HTTP/1.1\rHost: a\r\n\r\n", 400,
		  "bare CR in request head" },
		{ "GET / HTTP/1.1\r\nHost: a\r\r\n\r\n", 400,
		  "bare CR in request head" },
		{ "\rGET / HTTP/1.1\r\nHost: a\r\n\r\n", 400,
		  "bare CR in request head" },
		{ "GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n  2\r\n\r\n", 400,
		  "obsolete line folding" },
		{ "GET / HTTP/1.1\r\n Host: a\r\n\r\n", 400,
		  "obsolete line folding" },
		{ "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400,
		  "whitespace between field name and colon" },
		{ "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", 400,
		  "whitespace between field name and colon" },
		{ "GET / HTTP/1.1\r\nHost: a\r\n: x\r\n\r\n", 400,
		  "empty header field name" },
		{ "GET / HTTP/1.1\r\nHost: a\r\nX-A b\r\n\r\n", 400,
		  "malformed header field" },
		{ "GET / HTTP/1.1\r\nHost: a\r\nX(A): b\r\n\r\n", 400,
		  "malformed header field" },
		{ "GET / HTTP/1.1\r\nHost: a\r\nX: \x01\r\n\r\n", 400,
		  "invalid character in header" },
		{ "GET / HTTP/1.1\r\nHost: a\r\nX: a\x7f\r\n\r\n", 400,
		  "invalid character in header" },
		{ "GET / HTTP/1.1\r\n\r\n", 400, "missing Host" },
		{ "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400,
		  "duplicate Host" },
		/* RFC 9112 §3.2: more than one Host is 400 in 1.0 too */
		{ "GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", 400,
		  "duplicate Host" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Type: a\r\n"
		  "Content-Type: b\r\n\r\n", 400, "duplicate Content-Type" },
		{ "GET / HTTP/1.1\r\nHost: a\r\nAuthorization: a\r\n"
		  "Authorization: b\r\n\r\n", 400, "duplicate Authorization" },
	};

	run_bad(&dflt, t, sizeof(t) / sizeof(t[0]));
}

static void
test_nul_in_header(void **state)
{
	/* a NUL cannot go through strlen-based tables: fed explicitly */
	expect_err(&dflt, S("GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n"), 400,
		"invalid character in header");
	expect_err(&dflt, S("GET / HTTP/1.1\r\nHo\0st: a\r\n\r\n"), 400,
		"malformed header field");
}

static void
test_bad_content_length(void **state)
{
	static const struct bad t[] = {
		{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n",
		  400, "invalid Content-Length" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
		  400, "invalid Content-Length" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n",
		  400, "invalid Content-Length" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n",
		  400, "invalid Content-Length" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1 2\r\n\r\n",
		  400, "invalid Content-Length" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x10\r\n\r\n",
		  400, "invalid Content-Length" },
		{ "POST / HTTP/1.1\r\nHost: a\r\n"
		  "Content-Length: 99999999999999999999999\r\n\r\n",
		  400, "invalid Content-Length" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1,\r\n\r\n",
		  400, "invalid Content-Length" },
	};

	run_bad(&dflt, t, sizeof(t) / sizeof(t[0]));
}

/* --- smuggling (RFC 9112 §6.1, §6.3, §11.2) --------------------------- */

static void
test_smuggling(void **state)
{
	static const struct bad t[] = {
		{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
		  "Transfer-Encoding: chunked\r\n\r\n", 400,
		  "both Content-Length and Transfer-Encoding" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked"
		  "\r\nContent-Length: 5\r\n\r\n", 400,
		  "both Content-Length and Transfer-Encoding" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
		  "Content-Length: 6\r\n\r\n", 400,
		  "conflicting Content-Length" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 6\r\n\r\n",
		  400, "conflicting Content-Length" },
		{ "POST / HTTP/1.1\r\nHost: a\r\n"
		  "Transfer-Encoding: chunked, chunked\r\n\r\n", 400,
		  "chunked is not the final coding" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked"
		  "\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
		  "chunked is not the final coding" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip"
		  "\r\n\r\n", 400, "chunked is not the final coding" },
		{ "POST / HTTP/1.1\r\nHost: a\r\n"
		  "Transfer-Encoding: chunked, gzip\r\n\r\n", 400,
		  "chunked is not the final coding" },
		{ "POST / HTTP/1.1\r\nHost: a\r\n"
		  "Transfer-Encoding: gzip, chunked\r\n\r\n", 501,
		  "unsupported transfer coding" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n"
		  "Transfer-Encoding: chunked\r\n\r\n", 501,
		  "unsupported transfer coding" },
		{ "POST / HTTP/1.1\r\nHost: a\r\n"
		  "Transfer-Encoding: chunked;q=1\r\n\r\n", 400,
		  "malformed Transfer-Encoding" },
		{ "POST / HTTP/1.1\r\nHost: a\r\n"
		  "Transfer-Encoding: \"chunked\"\r\n\r\n", 400,
		  "malformed Transfer-Encoding" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked"
		  "\r\n  ,gzip\r\n\r\n", 400, "obsolete line folding" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked"
		  "\r\n\r\n", 400, "whitespace between field name and colon" },
		{ "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
		  400, "Transfer-Encoding in an HTTP/1.0 request" },
	};

	run_bad(&dflt, t, sizeof(t) / sizeof(t[0]));
}

/* --- chunked framing ---------------------------------------------------- */

static void
test_bad_chunked(void **state)
{
#define CH "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
	static const struct bad t[] = {
		{ CH "zz\r\n", 400, "malformed chunk size" },
		{ CH ";x\r\n", 400, "malformed chunk size" },
		{ CH "1a 2\r\n", 400, "malformed chunk size" },
		{ CH "1\nx", 400, "malformed chunk size" },
		{ CH "1\r\r", 400, "bare CR in chunk size line" },
		{ CH "1;a\x01\r\n", 400, "malformed chunk extension" },
		{ CH "1\r\nxy", 400, "chunk data not followed by CRLF" },
		{ CH "1\r\nx\rz", 400, "chunk data not followed by CRLF" },
		/* 17 hex digits do not fit 64 bits */
		{ CH "10000000000000000\r\n", 400, "chunk size overflow" },
		{ CH "0\r\nX: \x01\r\n\r\n", 400,
		  "invalid character in trailer" },
		{ CH "0\r\nX: 1\r\r", 400, "bare CR in trailer" },
		{ CH "0\r\n\rx", 400, "bare CR in trailer" },
	};

	run_bad(&dflt, t, sizeof(t) / sizeof(t[0]));
}

static void
test_chunk_line_limit(void **state)
{
	char req[4096];
	size_t n = snprintf(req, sizeof(req), CH "1;");

	memset(req + n, 'e', HTTP_CHUNK_LINE_MAX);
	n += HTTP_CHUNK_LINE_MAX;
	expect_err(&dflt, req, n, 400, "chunk size line too long");
}

/* --- limits -------------------------------------------------------------- */

static void
test_limits(void **state)
{
	struct drive_opts small = { .head_cap = 64, .max_body = 10 };
	static const struct bad t[] = {
		/* request line alone over the head limit */
		{ "GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "aaaaaaaaaaa HTTP/1.1\r\nHost: a\r\n\r\n", 414,
		  "request line too long" },
		{ "GET / HTTP/1.1\r\nHost: a\r\nX: bbbbbbbbbbbbbbbbbbbbbbbbbbb"
		  "bbbbbbbbbbbbbb\r\n\r\n", 431,
		  "request header fields too large" },
		{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n",
		  413, "request body too large" },
		{ CH "b\r\n", 413, "request body too large" },
		{ CH "5\r\n12345\r\n6\r\n", 413, "request body too large" },
		{ CH "fffffffffffffff\r\n", 413, "request body too large" },
		{ CH "0\r\nX: cccccccccccccccccccccccccccccccccccccccccccccccc"
		  "cccccccccccccc\r\n\r\n", 431, "trailer fields too large" },
	};

	run_bad(&small, t, sizeof(t) / sizeof(t[0]));
	/* exactly at the limits passes */
	expect_ok(&small, S("POST / HTTP/1.1\r\nHost: a\r\n"
		"Content-Length: 10\r\n\r\n0123456789"), 1, NULL);
	expect_ok(&small, S(CH "a\r\n0123456789\r\n0\r\n\r\n"), 1, NULL);
	/* the default body limit is 64 MiB, as the reference */
	expect_ok(&dflt, S("POST / HTTP/1.1\r\nHost: a\r\n"
		"Content-Length: 0\r\n\r\n"), 1, NULL);
	expect_err(&dflt, S("POST / HTTP/1.1\r\nHost: a\r\n"
		"Content-Length: 67108865\r\n\r\n"), 413,
		"request body too large");
#undef CH
}

static void
test_head_limit_exact(void **state)
{
	/* a head of exactly head_cap bytes fits; one more does not */
	static const char req[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	struct drive_opts fit = { .head_cap = sizeof(req) - 1 };
	struct drive_opts over = { .head_cap = sizeof(req) - 2 };

	expect_ok(&fit, S(req), 1, NULL);
	expect_err(&over, S(req), 431, "request header fields too large");
}

static void
test_request_line_limit(void **state)
{
	/* RFC 9112 §3: the request line over the head limit is 414, down to
	 * its last byte (the LF); once it fits, the fields overflow: 431 */
	static const char req[] = "GET /abcdef HTTP/1.1\r\nHost: a\r\n\r\n";
	const uint32_t line = sizeof("GET /abcdef HTTP/1.1\r\n") - 1;
	struct drive_opts o = { .head_cap = line - 1 };

	expect_err(&o, S(req), 414, "request line too long");
	o.head_cap = 8;
	expect_err(&o, S(req), 414, "request line too long");
	/* leading empty lines are not part of the request line (§2.2) */
	o.head_cap = line - 1;
	expect_err(&o, S("\r\n\r\nGET /abcdef HTTP/1.1\r\nHost: a\r\n\r\n"),
		414, "request line too long");
	o.head_cap = line;
	expect_err(&o, S(req), 431, "request header fields too large");
}

static void
test_str_eq(void **state)
{
	struct http_str s = { "Application/JSON", 16 }, none = { NULL, 0 };

	assert_true(http_str_eq(s, "application/json"));
	assert_false(http_str_eq(s, "application/jso"));
	assert_false(http_str_eq(none, ""));
	assert_true(http_str_contains(s, "tion/J"));
	assert_false(http_str_contains(s, "tion/j"));	/* case-sensitive */
	assert_false(http_str_contains(s, "Application/JSON;"));
	assert_true(http_str_contains(s, ""));
	assert_false(http_str_contains(none, ""));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_health),
		cmocka_unit_test(test_options_asterisk),
		cmocka_unit_test(test_post_binary_body),
		cmocka_unit_test(test_forwarded_for),
		cmocka_unit_test(test_chunked_ext_trailers),
		cmocka_unit_test(test_leading_crlf_ignored),
		cmocka_unit_test(test_identical_content_length_is_one),
		cmocka_unit_test(test_pipelined_in_one_chunk),
		cmocka_unit_test(test_pipelined_tail_is_next_request),
		cmocka_unit_test(test_keep_alive_rules),
		cmocka_unit_test(test_expect_100_continue),
		cmocka_unit_test(test_head_event_before_body),
		cmocka_unit_test(test_discard_body_keeps_framing),
		cmocka_unit_test(test_bad_request_line),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_nul_in_header),
		cmocka_unit_test(test_bad_content_length),
		cmocka_unit_test(test_smuggling),
		cmocka_unit_test(test_bad_chunked),
		cmocka_unit_test(test_chunk_line_limit),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_head_limit_exact),
		cmocka_unit_test(test_request_line_limit),
		cmocka_unit_test(test_str_eq),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
