/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Unit tests of the client codec against spec/wire.md §8's worked frames,
 * and of the HTTP client's URL parsing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "larql_client.h"

static size_t
unhex(uint8_t *out, const char *s)
{
	size_t n = 0;
	unsigned v;

	while (*s) {
		if (*s == ' ' || *s == '\n') {
			s++;
			continue;
		}
		sscanf(s, "%2x", &v);
		out[n++] = v;
		s += 2;
	}
	return n;
}

static const float X[4] = { 1, -2, 0.5f, 3 };

static void
test_encode_single_f32(void **state)
{
	uint8_t buf[64], want[64];
	uint32_t L = 5;
	size_t n = unhex(want, "05000000 01000000 01000000 9c1f0000 "
			 "0000803f 000000c0 0000003f 00004040");

	(void)state;
	assert_int_equal(lc_encode_request(buf, sizeof(buf), &L, 1, 0, 1, 4, X,
					   LC_F32), n);
	assert_memory_equal(buf, want, n);
}

static void
test_encode_batch_f32(void **state)
{
	uint8_t buf[64], want[64];
	uint32_t L[2] = { 5, 20 };
	size_t n = unhex(want, "ffffffff 02000000 05000000 14000000 01000000 "
			 "01000000 9c1f0000 0000803f 000000c0 0000003f "
			 "00004040");

	(void)state;
	assert_int_equal(lc_encode_request(buf, sizeof(buf), L, 2, 0, 1, 4, X,
					   LC_F32), n);
	assert_memory_equal(buf, want, n);
}

static void
test_encode_too_small(void **state)
{
	uint8_t buf[31];
	uint32_t L = 5;

	(void)state;
	assert_int_equal(lc_encode_request(buf, sizeof(buf), &L, 1, 0, 1, 4, X,
					   LC_F32), -ENOSPC);
}

static void
test_encode_i8_payload(void **state)
{
	/* §8's i8 example as a request payload: [0.25,-1.5,100,-0.001]. */
	const float y[4] = { 0.25f, -1.5f, 100, -0.001f };
	uint8_t buf[64], want[32];
	uint32_t L = 5;
	size_t n = unhex(want, "2693493f 00000000 00 fe 7f 00");

	(void)state;
	assert_int_equal(lc_encode_request(buf, sizeof(buf), &L, 1, 0, 1, 4, y,
					   LC_I8), 16 + n);
	assert_memory_equal(buf + 16, want, n);
}

static void
check_single(const char *hex, enum lc_fmt f, const float *want, float tol)
{
	struct lc_response r;
	uint8_t body[64];
	size_t n = unhex(body, hex);
	char err[128];
	int i;

	assert_int_equal(lc_decode_response(&r, body, n, f, 4, err,
					    sizeof(err)), 0);
	assert_int_equal(r.batch, 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.r[0].layer, 5);
	assert_int_equal(r.r[0].seq_len, 1);
	assert_int_equal(r.r[0].num_values, 4);
	assert_true(r.latency_ms > 7.29f && r.latency_ms < 7.31f);
	for (i = 0; i < 4; i++)
		assert_true(r.r[0].values[i] >= want[i] - tol &&
			    r.r[0].values[i] <= want[i] + tol);
	lc_response_free(&r);
}

static void
test_decode_single(void **state)
{
	const float y[4] = { 0.25f, -1.5f, 100, -0.001f };
	const float y8[4] = { 0, -2 * (100.0f / 127), 100, 0 };

	(void)state;
	check_single("05000000 01000000 9a99e940 0000803e 0000c0bf 0000c842 "
		     "6f1283ba", LC_F32, y, 0);
	check_single("05000000 01000000 9a99e940 0034 00be 4056 1994", LC_F16,
		     y, 0.0001f);
	check_single("05000000 01000000 9a99e940 2693493f 00000000 00 fe 7f 00",
		     LC_I8, y8, 0.00001f);
}

static void
test_decode_batch_i8(void **state)
{
	struct lc_response r;
	uint8_t body[96];
	char err[128];
	size_t n = unhex(body, "ffffffff 02000000 9a99e940"
			 "05000000 01000000 02000000 0683413c 00000000 15 81"
			 "14000000 01000000 02000000 2693493f 00000000 7f 00");

	(void)state;
	assert_int_equal(lc_decode_response(&r, body, n, LC_I8, 2, err,
					    sizeof(err)), 0);
	assert_int_equal(r.batch, 1);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.r[0].layer, 5);
	assert_int_equal(r.r[1].layer, 20);
	assert_true(r.r[0].values[1] == -127 * (1.5f / 127));
	assert_true(r.r[1].values[0] == 127 * (100.0f / 127));
	lc_response_free(&r);
	/* A truncated batch is refused, not read past. */
	assert_int_equal(lc_decode_response(&r, body, n - 1, LC_I8, 2, err,
					    sizeof(err)), -EBADMSG);
	lc_response_free(&r);
}

static void
test_decode_empty_batch(void **state)
{
	struct lc_response r;
	uint8_t body[16];
	char err[128];
	size_t n = unhex(body, "ffffffff 00000000 00000000");

	(void)state;
	assert_int_equal(lc_decode_response(&r, body, n, LC_F32, 4, err,
					    sizeof(err)), 0);
	assert_int_equal(r.n, 0);
	lc_response_free(&r);
}

static void
test_formats(void **state)
{
	(void)state;
	assert_int_equal(lc_fmt_of_ctype("application/x-larql-ffn-i8"), LC_I8);
	assert_int_equal(lc_fmt_of_ctype("application/x-larql-ffn-f16; x=1"),
			 LC_F16);
	assert_int_equal(lc_fmt_of_ctype("application/x-larql-ffn"), LC_F32);
	assert_int_equal(lc_fmt_parse("i8"), LC_I8);
	assert_int_equal(lc_fmt_parse("bf16"), -EINVAL);
	assert_int_equal(lc_payload_bytes(LC_I8, 3, 4), 36);
	assert_int_equal(lc_payload_bytes(LC_F16, 3, 4), 24);
}

static void
test_url(void **state)
{
	char h[64], p[16];

	(void)state;
	assert_int_equal(lc_url_parse("http://127.0.0.1:18000/x", h, sizeof(h),
				      p, sizeof(p)), 0);
	assert_string_equal(h, "127.0.0.1");
	assert_string_equal(p, "18000");
	assert_int_equal(lc_url_parse("http://[::1]:81", h, sizeof(h), p,
				      sizeof(p)), 0);
	assert_string_equal(h, "::1");
	assert_string_equal(p, "81");
	assert_int_equal(lc_url_parse("shard", h, sizeof(h), p, sizeof(p)), 0);
	assert_string_equal(p, "80");
	assert_int_equal(lc_url_parse("http://:80", h, sizeof(h), p,
				      sizeof(p)), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_single_f32),
		cmocka_unit_test(test_encode_batch_f32),
		cmocka_unit_test(test_encode_too_small),
		cmocka_unit_test(test_encode_i8_payload),
		cmocka_unit_test(test_decode_single),
		cmocka_unit_test(test_decode_batch_i8),
		cmocka_unit_test(test_decode_empty_batch),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_url),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
