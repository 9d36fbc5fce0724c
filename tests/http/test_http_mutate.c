/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * Split invariance on damaged input: valid requests with a few bytes
 * replaced, deleted or repeated (a fixed-seed PRNG, so runs repeat) must
 * give the same outcome fed whole, at every split point and byte by byte,
 * without reading past any chunk (guard page). This reaches error paths
 * the hand-written cases do not name.
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "harness.h"
#include "test_rng.h"

static const char *const seeds[] = {
	"GET /v1/health HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\nContent-Type: "
	"application/x-larql-ffn\r\nContent-Length: 5\r\n\r\nhello",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
	"3;x=y\r\nabc\r\n1\r\nd\r\n0\r\nT: v\r\n\r\n",
	"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
	"GET /2 HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n",
	"\r\nPOST /x?y=%20 HTTP/1.1\r\nHost: b\r\nContent-Length: 1, 1\r\n"
	"Connection: close\r\n\r\nZ",
};

static const char interesting[] = "\r\n \t:;,0fF\x00\x7f\x80-=/";

static size_t
mutate(uint64_t *rng, const char *in, size_t n, char *out)
{
	int k, m = 1 + test_rng_below(rng, 3);

	memcpy(out, in, n);
	for (k = 0; k < m && n > 1; k++) {
		size_t at = test_rng_below(rng, n);

		switch (test_rng_below(rng, 4)) {
		case 0:	/* replace with an interesting byte */
			out[at] = interesting[test_rng_below(rng,
				sizeof(interesting) - 1)];
			break;
		case 1:	/* replace with any byte */
			out[at] = test_rng_u32(rng) & 0xff;
			break;
		case 2:	/* delete */
			memmove(out + at, out + at + 1, n - at - 1);
			n--;
			break;
		case 3:	/* repeat a byte */
			memmove(out + at + 1, out + at, n - at);
			n++;
			break;
		}
	}
	return n;
}

/* rounds mutations of each of seeds[], drawn from seed alone: a test
 * replays on its own, whatever ran before it. */
static void
run(const struct drive_opts *o, int rounds, uint64_t seed)
{
	uint64_t rng = test_rng_seed(seed);
	char buf[512];
	struct outcome out;
	size_t s, n;
	int r;

	for (s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		for (r = 0; r < rounds; r++) {
			n = mutate(&rng, seeds[s], strlen(seeds[s]), buf);
			drive_all_splits(o, buf, n, &out);
			/* an error always has a status and a message */
			if (out.final_ev == HTTP_EV_ERROR) {
				assert_true(out.status >= 400 &&
					out.status <= 505);
				assert_non_null(out.err);
			}
			assert_true(out.consumed <= n);
		}
	}
}

static void
test_mutated_default(void **state)
{
	static const struct drive_opts o = { 0 };

	run(&o, 120, 0x9e3779b97f4a7c15ull);
}

static void
test_mutated_tight_limits(void **state)
{
	/* small head and body limits: 431 and 413 paths under damage */
	static const struct drive_opts o = { .head_cap = 48, .max_body = 3,
		.chunked_buf0 = 1 };

	run(&o, 60, 0x6a09e667f3bcc908ull);
}

static void
test_mutated_caller_copy(void **state)
{
	static const struct drive_opts o = { .mode = BODY_CALLER_COPY,
		.chunked_buf0 = 2 };

	run(&o, 60, 0xbb67ae8584caa73bull);
}

static void
test_idle_and_in_head(void **state)
{
	char head[128];
	struct http_parser p;
	size_t used;

	http_parser_init(&p, head, sizeof(head), 0);
	assert_true(http_parser_idle(&p));
	assert_false(http_parser_in_head(&p));
	/* an empty line before the request already counts as started */
	assert_int_equal(http_feed(&p, "\r", 1, &used), HTTP_EV_MORE);
	assert_false(http_parser_idle(&p));
	assert_true(http_parser_in_head(&p));
	assert_int_equal(http_feed(&p, "\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
		28, &used), HTTP_EV_HEAD);
	assert_false(http_parser_in_head(&p));
	assert_int_equal(http_feed(&p, "", 0, &used), HTTP_EV_DONE);
	http_next(&p);
	assert_true(http_parser_idle(&p));
	assert_int_equal(http_feed(&p, "P", 1, &used), HTTP_EV_MORE);
	assert_true(http_parser_in_head(&p));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mutated_default),
		cmocka_unit_test(test_mutated_tight_limits),
		cmocka_unit_test(test_mutated_caller_copy),
		cmocka_unit_test(test_idle_and_in_head),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
