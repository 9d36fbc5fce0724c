/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * The response parser (http_rsp_feed) against RFC 9112: every input is fed
 * whole, byte by byte and in two pieces at every offset (some in three at
 * every pair of offsets), and every way must give the same transcript:
 * the responses completed, their fields and bodies, and the error. Each
 * piece is a heap copy of exactly its length, so the _san build catches
 * any read past it.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "http.h"

#define MAX_RESP 8

/* A completed response as the caller sees it. */
struct seen {
	int status;
	int minor;
	bool keep_alive;
	bool has_length;
	bool ctype_truncated;
	uint64_t content_length;
	size_t ctype_len;
	char ctype[HTTP_RSP_CTYPE_MAX + 1];
	size_t blen;
	char body[256];
};

/* Everything a caller can observe, zero-filled so runs compare with
 * memcmp. */
struct transcript {
	int nresp;			/* responses completed */
	int err;			/* 0, or the error returned */
	bool partial;			/* ended inside a response */
	struct seen r[MAX_RESP];
};

/* Feed s[0, len) in pieces ending at cuts[] (sorted, then len). Response
 * i answers a HEAD request when bit i of head_mask is set. */
static void
run(const char *s, size_t len, const size_t *cuts, size_t ncuts,
	unsigned int head_mask, struct transcript *t)
{
	struct http_rsp *r = malloc(sizeof(*r));
	size_t off = 0, since_reset = 0;

	assert_non_null(r);
	memset(t, 0, sizeof(*t));
	http_rsp_reset(r);
	r->no_body = (head_mask & 1) != 0;
	for (size_t c = 0; c <= ncuts && t->err == 0; c++) {
		size_t end = c < ncuts ? cuts[c] : len, n = end - off;
		uint8_t *piece = malloc(n ? n : 1), *p = piece;

		assert_non_null(piece);
		memcpy(piece, s + off, n);
		off = end;
		while (n > 0) {
			const uint8_t *b = (const uint8_t *)"x";
			size_t bl = 99;
			int rc = http_rsp_feed(r, p, n, &b, &bl);

			if (rc < 0) {
				t->err = rc;
				assert_null(b);
				assert_int_equal(bl, 0);
				break;
			}
			assert_true(t->nresp < MAX_RESP);
			/* all of it, unless the response ended inside */
			if (r->state != HTTP_RSP_DONE)
				assert_int_equal(rc, n);
			assert_true(rc > 0);
			if (bl == 0) {
				assert_null(b);
			} else {
				struct seen *o = &t->r[t->nresp];

				/* body bytes: the consumed part's tail */
				assert_ptr_equal(b + bl, p + rc);
				assert_true(o->blen + bl <= sizeof(o->body));
				memcpy(o->body + o->blen, b, bl);
				o->blen += bl;
			}
			assert_int_equal(r->body_got, t->r[t->nresp].blen);
			p += rc;
			n -= (size_t)rc;
			since_reset += (size_t)rc;
			if (r->state == HTTP_RSP_DONE) {
				struct seen *o = &t->r[t->nresp];

				/* fed again, a complete one takes nothing */
				assert_int_equal(http_rsp_feed(r, p, n, NULL,
					NULL), 0);
				o->status = r->status;
				o->minor = r->minor;
				o->keep_alive = r->keep_alive;
				o->has_length = r->has_length;
				o->ctype_truncated = r->ctype_truncated;
				o->content_length = r->content_length;
				o->ctype_len = r->ctype_len;
				assert_int_equal(strlen(r->ctype),
					r->ctype_len);
				memcpy(o->ctype, r->ctype, r->ctype_len + 1);
				t->nresp++;
				http_rsp_reset(r);
				r->no_body = (head_mask >> t->nresp & 1) != 0;
				since_reset = 0;
			}
		}
		free(piece);
	}
	if (t->err != 0) {
		/* sticky: fed again, the same error */
		assert_int_equal(http_rsp_feed(r, (const uint8_t *)"\r\n", 2,
			NULL, NULL), t->err);
	} else {
		t->partial = since_reset > 0;
	}
	free(r);
}

/* Whole, byte by byte, and two pieces at every offset (three at every
 * pair of offsets if `pairs`): all must agree. Returns the whole run. */
static void
run_all(const char *s, size_t len, unsigned int head_mask, bool pairs,
	struct transcript *whole)
{
	struct transcript *t = malloc(sizeof(*t));
	size_t *cuts = malloc((len + 1) * sizeof(*cuts));

	assert_non_null(t);
	assert_non_null(cuts);
	run(s, len, NULL, 0, head_mask, whole);
	for (size_t i = 0; i < len; i++)
		cuts[i] = i + 1;
	run(s, len, cuts, len, head_mask, t);
	assert_memory_equal(t, whole, sizeof(*t));
	for (size_t i = 0; i <= len; i++) {
		cuts[0] = i;
		run(s, len, cuts, 1, head_mask, t);
		assert_memory_equal(t, whole, sizeof(*t));
		for (size_t j = i; pairs && j <= len; j++) {
			cuts[1] = j;
			run(s, len, cuts, 2, head_mask, t);
			assert_memory_equal(t, whole, sizeof(*t));
		}
	}
	free(cuts);
	free(t);
}

/* One string, every split; its outcome. */
static void
all(const char *s, unsigned int head_mask, struct transcript *t)
{
	run_all(s, strlen(s), head_mask, false, t);
}

/* The error of a single response fed in every split (0: none). */
static int
err_of(const char *s)
{
	struct transcript t;

	all(s, 0, &t);
	return t.err;
}

static const char resp_f16[] =
	"HTTP/1.1 200 OK\r\n"
	"content-type: application/x-larql-ffn-f16\r\n"
	"Content-Length: 20\r\n"
	"Connection: keep-alive\r\n"
	"\r\n"
	"0123456789abcdefghij";

static void
test_every_split(void **state)
{
	struct transcript t;

	(void)state;
	run_all(resp_f16, sizeof(resp_f16) - 1, 0, true, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.nresp, 1);
	assert_false(t.partial);
	assert_int_equal(t.r[0].status, 200);
	assert_int_equal(t.r[0].minor, 1);
	assert_true(t.r[0].keep_alive);
	assert_true(t.r[0].has_length);
	assert_string_equal(t.r[0].ctype, "application/x-larql-ffn-f16");
	assert_int_equal(t.r[0].ctype_len, 27);
	assert_false(t.r[0].ctype_truncated);
	assert_int_equal(t.r[0].content_length, 20);
	assert_int_equal(t.r[0].blen, 20);
	assert_memory_equal(t.r[0].body, "0123456789abcdefghij", 20);

	/* cut short anywhere: nothing complete, no error */
	for (size_t n = 1; n < sizeof(resp_f16) - 1; n++) {
		run(resp_f16, n, NULL, 0, 0, &t);
		assert_int_equal(t.nresp, 0);
		assert_int_equal(t.err, 0);
		assert_true(t.partial);
	}
}

static void
test_pipelined(void **state)
{
	static const char s[] =
		"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
		"HTTP/1.1 204 No Content\r\n\r\n"
		"HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n"
		"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
		"Content-Length: 2\r\nConnection: close\r\n\r\n{}";
	struct transcript t;
	struct http_rsp r;
	size_t first;

	(void)state;
	all(s, 0, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.nresp, 4);
	assert_false(t.partial);
	assert_int_equal(t.r[0].status, 200);
	assert_memory_equal(t.r[0].body, "abc", 3);
	assert_int_equal(t.r[1].status, 204);
	assert_int_equal(t.r[1].blen, 0);
	/* 304: its Content-Length is not a body (RFC 9112 §6.3 item 1) */
	assert_int_equal(t.r[2].status, 304);
	assert_true(t.r[2].has_length);
	assert_int_equal(t.r[2].content_length, 0);
	assert_int_equal(t.r[2].blen, 0);
	assert_int_equal(t.r[3].status, 404);
	assert_false(t.r[3].keep_alive);
	assert_string_equal(t.r[3].ctype, "application/json");
	assert_memory_equal(t.r[3].body, "{}", 2);

	/* in one piece, the first call stops at the first's end */
	http_rsp_reset(&r);
	first = strlen("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc");
	assert_int_equal(http_rsp_feed(&r, (const uint8_t *)s, sizeof(s) - 1,
		NULL, NULL), first);
	assert_int_equal(r.state, HTTP_RSP_DONE);
	assert_int_equal(http_rsp_feed(&r, (const uint8_t *)s + first, 1,
		NULL, NULL), 0);
	http_rsp_reset(&r);
	assert_int_equal(http_rsp_feed(&r, (const uint8_t *)s + first,
		sizeof(s) - 1 - first, NULL, NULL),
		strlen("HTTP/1.1 204 No Content\r\n\r\n"));
	assert_int_equal(r.status, 204);

	/* an empty piece: nothing */
	http_rsp_reset(&r);
	assert_int_equal(http_rsp_feed(&r, (const uint8_t *)s, 0, NULL,
		NULL), 0);
	assert_int_equal(r.state, HTTP_RSP_HEAD);
}

static void
test_head_answer(void **state)
{
	/* RFC 9112 §6.3 item 1: the answer to HEAD ends after its head,
	 * Content-Length and Transfer-Encoding notwithstanding */
	static const char head_get[] =
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		"Content-Length: 20\r\n\r\n"
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
	static const char chunked[] =
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
	static const char no_length[] = "HTTP/1.1 200 OK\r\n\r\n";
	static const char interim[] = "HTTP/1.1 100 Continue\r\n\r\n"
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
	struct transcript t;

	(void)state;
	/* HEAD, then GET on the same connection */
	all(head_get, 1, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.nresp, 2);
	assert_false(t.partial);
	assert_int_equal(t.r[0].status, 200);
	assert_true(t.r[0].has_length);
	assert_int_equal(t.r[0].content_length, 0);
	assert_int_equal(t.r[0].blen, 0);
	assert_string_equal(t.r[0].ctype, "application/json");
	assert_int_equal(t.r[1].blen, 2);
	/* the same bytes to a GET: the first takes the second's head as its
	 * body, and what is left is not a response head */
	all(head_get, 0, &t);
	assert_int_equal(t.nresp, 1);
	assert_int_equal(t.r[0].blen, 20);
	assert_int_equal(t.err, -EBADMSG);

	all(chunked, 1, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.nresp, 1);
	assert_int_equal(err_of(chunked), -ENOTSUP);
	all(no_length, 1, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.nresp, 1);
	assert_int_equal(err_of(no_length), -ENOTSUP);
	/* no_body outlives the interim response's reset */
	all(interim, 1, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.nresp, 1);
	assert_int_equal(t.r[0].status, 200);
	assert_false(t.partial);

	/* reset clears it */
	{
		struct http_rsp r;

		http_rsp_reset(&r);
		r.no_body = true;
		http_rsp_reset(&r);
		assert_false(r.no_body);
	}
}

static void
test_no_body_statuses(void **state)
{
	static const char s204[] = "HTTP/1.1 204 No Content\r\n"
		"Content-Length: 5\r\n\r\n"
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx";
	static const char interim[] = "HTTP/1.1 100 Continue\r\n\r\n"
		"HTTP/1.1 204 No Content\r\n\r\n";
	/* 1xx are skipped, fields and all; the final one is reported */
	static const char hints[] = "HTTP/1.1 103 Early Hints\r\n"
		"Link: </a.css>; rel=preload\r\nContent-Type: text/css\r\n"
		"Connection: close\r\nContent-Length: 7\r\n\r\n"
		"HTTP/1.1 100 Continue\r\n\r\n"
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
	static const char interim_bad[] = "HTTP/1.1 100 Continue\r\n"
		"Bad Field: x\r\n\r\nHTTP/1.1 200 OK\r\n"
		"Content-Length: 0\r\n\r\n";
	struct transcript t;

	(void)state;
	all(s204, 0, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.nresp, 2);
	assert_int_equal(t.r[0].status, 204);
	assert_int_equal(t.r[0].content_length, 0);
	assert_int_equal(t.r[0].blen, 0);
	assert_int_equal(t.r[1].status, 200);
	assert_memory_equal(t.r[1].body, "x", 1);

	all(interim, 0, &t);
	assert_int_equal(t.nresp, 1);
	assert_int_equal(t.r[0].status, 204);

	all(hints, 0, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.nresp, 1);
	assert_int_equal(t.r[0].status, 200);
	assert_true(t.r[0].keep_alive);
	assert_int_equal(t.r[0].ctype_len, 0);
	assert_memory_equal(t.r[0].body, "ok", 2);

	/* an interim head is parsed all the same */
	assert_int_equal(err_of(interim_bad), -EBADMSG);
	/* an interim response alone: in progress, nothing complete */
	all("HTTP/1.1 100 Continue\r\n\r\n", 0, &t);
	assert_int_equal(t.nresp, 0);
	assert_int_equal(t.err, 0);
}

/* keep_alive of a one-line response with the given version and fields */
static bool
keep_alive(const char *version, const char *fields)
{
	char buf[512];
	struct transcript t;

	snprintf(buf, sizeof(buf), "%s 200 OK\r\n%sContent-Length: 0\r\n\r\n",
		version, fields);
	all(buf, 0, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.nresp, 1);
	return t.r[0].keep_alive;
}

static void
test_persistence(void **state)
{
	(void)state;
	/* RFC 9112 §9.3 */
	assert_true(keep_alive("HTTP/1.1", ""));
	assert_false(keep_alive("HTTP/1.1", "Connection: close\r\n"));
	assert_false(keep_alive("HTTP/1.1", "Connection: CLOSE\r\n"));
	assert_false(keep_alive("HTTP/1.1",
		"Connection: keep-alive, close\r\n"));
	/* close wins in any order, over several lines */
	assert_false(keep_alive("HTTP/1.1",
		"Connection: close\r\nConnection: keep-alive\r\n"));
	assert_false(keep_alive("HTTP/1.0",
		"Connection: close\r\nConnection: keep-alive\r\n"));
	assert_true(keep_alive("HTTP/1.1", "Connection: upgrade\r\n"));
	assert_true(keep_alive("HTTP/1.1", "Connection: closed\r\n"));
	assert_true(keep_alive("HTTP/1.1", "Connection: ,, ,\r\n"));
	assert_false(keep_alive("HTTP/1.0", ""));
	assert_true(keep_alive("HTTP/1.0", "Connection: keep-alive\r\n"));
	assert_true(keep_alive("HTTP/1.0", "connection:Keep-Alive \r\n"));
	assert_false(keep_alive("HTTP/1.0", "Connection: upgrade\r\n"));
	/* HTTP/1.x, x > 1: as 1.1 */
	assert_true(keep_alive("HTTP/1.2", ""));
}

static void
test_minor(void **state)
{
	struct transcript t;

	(void)state;
	all("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 0, &t);
	assert_int_equal(t.r[0].minor, 0);
	all("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, &t);
	assert_int_equal(t.r[0].minor, 1);
}

static void
test_content_length(void **state)
{
	struct transcript t;

	(void)state;
#define CL(v) "HTTP/1.1 200 OK\r\nContent-Length: " v "\r\n\r\n"
	assert_int_equal(err_of(CL("-1")), -EBADMSG);
	assert_int_equal(err_of(CL("+1")), -EBADMSG);
	assert_int_equal(err_of(CL("1x")), -EBADMSG);
	assert_int_equal(err_of(CL("0x10")), -EBADMSG);
	assert_int_equal(err_of(CL("1 2")), -EBADMSG);
	assert_int_equal(err_of(CL("")), -EBADMSG);
	assert_int_equal(err_of(CL("1,")), -EBADMSG);
	assert_int_equal(err_of(CL(",1")), -EBADMSG);
	assert_int_equal(err_of(CL("1,,1")), -EBADMSG);
	/* 2^64 and beyond */
	assert_int_equal(err_of(CL("18446744073709551616")), -EBADMSG);
	assert_int_equal(err_of(CL("18446744073709551620")), -EBADMSG);
	assert_int_equal(err_of(CL("99999999999999999999999")), -EBADMSG);
	/* differing values, as a list or in two fields (§6.3 item 5) */
	assert_int_equal(err_of(CL("1, 2")), -EBADMSG);
	assert_int_equal(err_of("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
		"Content-Length: 2\r\n\r\nx"), -EBADMSG);
	/* a bad one even where no body follows */
	assert_int_equal(err_of("HTTP/1.1 204 No Content\r\n"
		"Content-Length: -1\r\n\r\n"), -EBADMSG);

	/* identical values are one (RFC 9110 §8.6) */
	all(CL("2, 2") "ab", 0, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.r[0].content_length, 2);
	all("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
		"content-length:2\r\n\r\nab", 0, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.r[0].blen, 2);
	all(CL(" \t007 ") "1234567", 0, &t);
	assert_int_equal(t.r[0].content_length, 7);
	/* 2^64-1 is a number: the body is awaited */
	all(CL("18446744073709551615") "xyz", 0, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.nresp, 0);
	assert_true(t.partial);
	all(CL("0"), 0, &t);
	assert_int_equal(t.nresp, 1);
	assert_int_equal(t.r[0].blen, 0);
#undef CL
}

static void
test_framing_unsupported(void **state)
{
	(void)state;
	/* RFC 9112 §6.3 item 4: chunked (or until close) */
	assert_int_equal(err_of("HTTP/1.1 200 OK\r\n"
		"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
		-ENOTSUP);
	assert_int_equal(err_of("HTTP/1.1 200 OK\r\n"
		"transfer-encoding: gzip\r\n\r\n"), -ENOTSUP);
	/* item 8: no length, read until close */
	assert_int_equal(err_of("HTTP/1.1 200 OK\r\n\r\nabc"), -ENOTSUP);
	assert_int_equal(err_of("HTTP/1.0 200 OK\r\n\r\nabc"), -ENOTSUP);
	/* both: an error in any response (§6.2, §6.3 item 3) */
	assert_int_equal(err_of("HTTP/1.1 200 OK\r\n"
		"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"),
		-EBADMSG);
	assert_int_equal(err_of("HTTP/1.1 204 No Content\r\n"
		"Content-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n"),
		-EBADMSG);
	/* a 204 or 304 with Transfer-Encoding: no body, nothing to frame */
	assert_int_equal(err_of("HTTP/1.1 304 Not Modified\r\n"
		"Transfer-Encoding: chunked\r\n\r\n"), 0);
}

/* A response whose head is exactly `head` bytes long (a filler field). */
static char *
head_of(size_t head, const char *rest)
{
	static const char pre[] = "HTTP/1.1 200 OK\r\nX: ";
	static const char post[] = "\r\nContent-Length: 1\r\n\r\n";
	size_t fill = head - (sizeof(pre) - 1) - (sizeof(post) - 1);
	char *s = malloc(head + strlen(rest) + 1);

	assert_non_null(s);
	memcpy(s, pre, sizeof(pre) - 1);
	memset(s + sizeof(pre) - 1, 'a', fill);
	memcpy(s + sizeof(pre) - 1 + fill, post, sizeof(post) - 1);
	strcpy(s + head, rest);
	return s;
}

static void
test_head_limit(void **state)
{
	struct transcript t;
	char *s, *two;

	(void)state;
	s = head_of(HTTP_RSP_HEAD_MAX, "z");
	all(s, 0, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.nresp, 1);
	assert_memory_equal(t.r[0].body, "z", 1);
	free(s);

	s = head_of(HTTP_RSP_HEAD_MAX + 1, "z");
	assert_int_equal(err_of(s), -E2BIG);
	free(s);

	/* a head that never ends */
	s = head_of(HTTP_RSP_HEAD_MAX + 100, "");
	s[HTTP_RSP_HEAD_MAX + 10] = '\0';
	assert_int_equal(err_of(s), -E2BIG);
	free(s);

	/* an interim head and the final one are bounded each on its own */
	s = head_of(HTTP_RSP_HEAD_MAX, "z");
	two = malloc(strlen(s) + 64);
	assert_non_null(two);
	strcpy(two, "HTTP/1.1 100 Continue\r\n\r\n");
	strcat(two, s);
	all(two, 0, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.nresp, 1);
	free(two);
	free(s);
}

static void
test_line_endings(void **state)
{
	struct transcript t;

	(void)state;
	/* a bare LF ends a line (RFC 9112 §2.2 MAY), mixed with CRLF too */
	all("HTTP/1.1 200 OK\nContent-Length: 1\n\nx", 0, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.nresp, 1);
	assert_int_equal(t.r[0].content_length, 1);
	all("HTTP/1.1 200 OK\r\nContent-Length: 1\n\r\nx", 0, &t);
	assert_int_equal(t.nresp, 1);
	all("HTTP/1.1 200 OK\nContent-Length: 1\r\n\nx", 0, &t);
	assert_int_equal(t.nresp, 1);

	/* a bare CR is an error (§2.2), wherever it is */
	assert_int_equal(err_of("HTTP/1.1 200 OK\rX: 1\r\n"
		"Content-Length: 0\r\n\r\n"), -EBADMSG);
	assert_int_equal(err_of("HTTP/1.1 200 OK\r\nX: a\rb\r\n"
		"Content-Length: 0\r\n\r\n"), -EBADMSG);
	assert_int_equal(err_of("HTTP/1.1 200 OK\r\nX: a\r\r\n"
		"Content-Length: 0\r\n\r\n"), -EBADMSG);
	assert_int_equal(err_of("HTTP/1.1 200 OK\r\n"
		"Content-Length: 0\r\n\r\r\n\r\n"), -EBADMSG);
	assert_int_equal(err_of("HTTP/1.1 200 O\rK\r\n"
		"Content-Length: 0\r\n\r\n"), -EBADMSG);
	/* no empty line before the status line (that is a request's
	 * §2.2 robustness rule, not a response's) */
	assert_int_equal(err_of("\r\nHTTP/1.1 200 OK\r\n"
		"Content-Length: 0\r\n\r\n"), -EBADMSG);
	assert_int_equal(err_of("\n\n"), -EBADMSG);
}

static void
test_fields_strict(void **state)
{
	static const char nul[] = "HTTP/1.1 200 OK\r\nX: a\0b\r\n"
		"Content-Length: 0\r\n\r\n";
	struct transcript t;

	(void)state;
#define F(f) "HTTP/1.1 200 OK\r\n" f "Content-Length: 0\r\n\r\n"
	/* obs-fold (RFC 9112 §5.2) */
	assert_int_equal(err_of(F("X: a\r\n b\r\n")), -EBADMSG);
	assert_int_equal(err_of(F("X: a\r\n\tb\r\n")), -EBADMSG);
	assert_int_equal(err_of("HTTP/1.1 200 OK\r\n Content-Length: 0\r\n"
		"\r\n"), -EBADMSG);
	/* whitespace before the colon (§5.1), non-token names */
	assert_int_equal(err_of(F("Content-Length : 1\r\n")), -EBADMSG);
	assert_int_equal(err_of(F("X\t: 1\r\n")), -EBADMSG);
	assert_int_equal(err_of(F("X Y: 1\r\n")), -EBADMSG);
	assert_int_equal(err_of(F("X(1): 1\r\n")), -EBADMSG);
	assert_int_equal(err_of(F(": 1\r\n")), -EBADMSG);
	assert_int_equal(err_of(F("NoColon\r\n")), -EBADMSG);
	/* CTLs in a value (RFC 9110 §5.5); HTAB and obs-text are fine */
	assert_int_equal(err_of(F("X: a\x01z\r\n")), -EBADMSG);
	assert_int_equal(err_of(F("X: a\x7fz\r\n")), -EBADMSG);
	/* a NUL (strlen would stop at it: the length given) */
	run_all(nul, sizeof(nul) - 1, 0, false, &t);
	assert_int_equal(t.err, -EBADMSG);
	assert_int_equal(err_of(F("X: a\tb\xc3\xa9\r\n")), 0);
	assert_int_equal(err_of(F("X:\r\n")), 0);
	assert_int_equal(err_of(F("!#$%&'*+-.^_`|~09aZ: v\r\n")), 0);
#undef F
}

static void
test_status_line(void **state)
{
	struct transcript t;

	(void)state;
#define S(l) l "\r\nContent-Length: 0\r\n\r\n"
	assert_int_equal(err_of(S("HTTP/2 200 OK")), -EBADMSG);
	assert_int_equal(err_of(S("HTTP/2.0 200 OK")), -EBADMSG);
	assert_int_equal(err_of(S("HTTP/0.9 200 OK")), -EBADMSG);
	assert_int_equal(err_of(S("http/1.1 200 OK")), -EBADMSG);
	assert_int_equal(err_of(S("HTTP/1.1 20 OK")), -EBADMSG);
	assert_int_equal(err_of(S("HTTP/1.1 2000 OK")), -EBADMSG);
	assert_int_equal(err_of(S("HTTP/1.1 200OK")), -EBADMSG);
	assert_int_equal(err_of(S("HTTP/1.1  200 OK")), -EBADMSG);
	assert_int_equal(err_of(S("HTTP/1.1 2x0 OK")), -EBADMSG);
	assert_int_equal(err_of(S("HTTP/1.1 099 Low")), -EBADMSG);
	assert_int_equal(err_of(S("HTTP/1.1 600 High")), -EBADMSG);
	assert_int_equal(err_of(S("HTTP/1.1 200 O\x01K")), -EBADMSG);
	assert_int_equal(err_of(S(" HTTP/1.1 200 OK")), -EBADMSG);
	/* the reason may be empty, its SP missing (§4) */
	assert_int_equal(err_of(S("HTTP/1.1 200")), 0);
	assert_int_equal(err_of(S("HTTP/1.1 200 ")), 0);
	assert_int_equal(err_of(S("HTTP/1.1 599 Any \tthing \xe2\x80\x94")),
		0);
	all(S("HTTP/1.1 599 X"), 0, &t);
	assert_int_equal(t.r[0].status, 599);
#undef S
}

static void
test_content_type(void **state)
{
	char buf[512], v[200];
	struct transcript t;

	(void)state;
	all("HTTP/1.1 200 OK\r\nContent-Type: \t Application/JSON; "
		"charset=utf-8 \t\r\nContent-Length: 0\r\n\r\n", 0, &t);
	assert_int_equal(t.err, 0);
	/* as received, OWS trimmed */
	assert_string_equal(t.r[0].ctype, "Application/JSON; charset=utf-8");
	assert_int_equal(t.r[0].ctype_len, 31);
	/* absent, empty */
	all("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, &t);
	assert_int_equal(t.r[0].ctype_len, 0);
	assert_string_equal(t.r[0].ctype, "");
	all("HTTP/1.1 200 OK\r\nContent-Type:\r\nContent-Length: 0\r\n\r\n",
		0, &t);
	assert_int_equal(t.err, 0);
	assert_int_equal(t.r[0].ctype_len, 0);
	/* a repeat is ambiguous (RFC 9110 §8.3) */
	assert_int_equal(err_of("HTTP/1.1 200 OK\r\nContent-Type: a/b\r\n"
		"content-type: a/b\r\nContent-Length: 0\r\n\r\n"), -EBADMSG);

	/* exactly the bound: whole */
	memset(v, 'x', sizeof(v));
	memcpy(v, "application/", 12);
	v[HTTP_RSP_CTYPE_MAX] = '\0';
	snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\nContent-Type: %s\r\n"
		"Content-Length: 0\r\n\r\n", v);
	all(buf, 0, &t);
	assert_int_equal(t.r[0].ctype_len, HTTP_RSP_CTYPE_MAX);
	assert_false(t.r[0].ctype_truncated);
	assert_string_equal(t.r[0].ctype, v);
	/* one more: cut to the bound and flagged */
	v[HTTP_RSP_CTYPE_MAX] = 'y';
	v[HTTP_RSP_CTYPE_MAX + 1] = '\0';
	snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\nContent-Type: %s\r\n"
		"Content-Length: 0\r\n\r\n", v);
	all(buf, 0, &t);
	assert_int_equal(t.err, 0);
	assert_true(t.r[0].ctype_truncated);
	assert_int_equal(t.r[0].ctype_len, HTTP_RSP_CTYPE_MAX);
	assert_memory_equal(t.r[0].ctype, v, HTTP_RSP_CTYPE_MAX);
	assert_int_equal(t.r[0].ctype[HTTP_RSP_CTYPE_MAX], '\0');
	/* and the next response starts unflagged */
	{
		struct http_rsp r;
		int n = (int)strlen(buf);

		http_rsp_reset(&r);
		assert_int_equal(http_rsp_feed(&r, (const uint8_t *)buf,
			(size_t)n, NULL, NULL), n);
		assert_true(r.ctype_truncated);
		http_rsp_reset(&r);
		assert_false(r.ctype_truncated);
		assert_int_equal(r.ctype_len, 0);
	}
}

static void
test_sticky_error(void **state)
{
	static const char bad[] = "HTTP/1.1 200 OK\r\nX : 1\r\n\r\n";
	static const char good[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
		"\r\n";
	struct http_rsp r;

	(void)state;
	http_rsp_reset(&r);
	assert_int_equal(http_rsp_feed(&r, (const uint8_t *)bad,
		sizeof(bad) - 1, NULL, NULL), -EBADMSG);
	/* framing is lost: a good response after it is not read */
	assert_int_equal(http_rsp_feed(&r, (const uint8_t *)good,
		sizeof(good) - 1, NULL, NULL), -EBADMSG);
	assert_int_equal(http_rsp_feed(&r, (const uint8_t *)good, 0, NULL,
		NULL), -EBADMSG);
	http_rsp_reset(&r);
	assert_int_equal(http_rsp_feed(&r, (const uint8_t *)good,
		sizeof(good) - 1, NULL, NULL), sizeof(good) - 1);
	assert_int_equal(r.state, HTTP_RSP_DONE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_split),
		cmocka_unit_test(test_pipelined),
		cmocka_unit_test(test_head_answer),
		cmocka_unit_test(test_no_body_statuses),
		cmocka_unit_test(test_persistence),
		cmocka_unit_test(test_minor),
		cmocka_unit_test(test_content_length),
		cmocka_unit_test(test_framing_unsupported),
		cmocka_unit_test(test_head_limit),
		cmocka_unit_test(test_line_endings),
		cmocka_unit_test(test_fields_strict),
		cmocka_unit_test(test_status_line),
		cmocka_unit_test(test_content_type),
		cmocka_unit_test(test_sticky_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
