/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Response heads, Date, reason phrases and JSON error bodies: exact bytes. */

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "http.h"

/* RFC 9110 §5.6.7's own example instant */
#define T_EXAMPLE ((time_t)784111777)

static void
test_date_imf_fixdate(void **state)
{
	char d[30];

	http_date_fmt(d, T_EXAMPLE);
	assert_string_equal(d, "Sun, 06 Nov 1994 08:49:37 GMT");
	http_date_fmt(d, 0);
	assert_string_equal(d, "Thu, 01 Jan 1970 00:00:00 GMT");
	http_date_fmt(d, (time_t)1798761599);	/* 2026-12-31 23:59:59 */
	assert_string_equal(d, "Thu, 31 Dec 2026 23:59:59 GMT");
}

static void
test_date_cache_per_second(void **state)
{
	struct http_date_cache c = { 0 };
	const char *a;

	a = http_date_get(&c, T_EXAMPLE);
	assert_string_equal(a, "Sun, 06 Nov 1994 08:49:37 GMT");
	assert_ptr_equal(http_date_get(&c, T_EXAMPLE), a);
	assert_string_equal(http_date_get(&c, T_EXAMPLE + 1),
		"Sun, 06 Nov 1994 08:49:38 GMT");
	/* a zeroed cache at the epoch still formats once */
	memset(&c, 0, sizeof(c));
	assert_string_equal(http_date_get(&c, 0),
		"Thu, 01 Jan 1970 00:00:00 GMT");
}

static void
test_head_ok_keep_alive(void **state)
{
	char buf[512], d[30];
	struct http_response r = {
		.status = 200,
		.content_type = "application/x-larql-ffn-f16",
		.content_length = 4104,
		.keep_alive = true,
		.date = d,
	};
	static const char want[] =
		"HTTP/1.1 200 OK\r\n"
		"Content-Type: application/x-larql-ffn-f16\r\n"
		"Content-Length: 4104\r\n"
		"Connection: keep-alive\r\n"
		"Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
		"\r\n";

	http_date_fmt(d, T_EXAMPLE);
	assert_int_equal(http_write_head(buf, sizeof(buf), &r),
		sizeof(want) - 1);
	assert_memory_equal(buf, want, sizeof(want) - 1);
}

static void
test_head_error_close_extra(void **state)
{
	char buf[512];
	struct http_response r = {
		.status = 413,
		.content_type = "application/json",
		.content_length = 34,
		.keep_alive = false,
		.extra = "WWW-Authenticate: Bearer\r\n",
	};
	static const char want[] =
		"HTTP/1.1 413 Content Too Large\r\n"
		"Content-Type: application/json\r\n"
		"Content-Length: 34\r\n"
		"Connection: close\r\n"
		"WWW-Authenticate: Bearer\r\n"
		"\r\n";

	assert_int_equal(http_write_head(buf, sizeof(buf), &r),
		sizeof(want) - 1);
	assert_memory_equal(buf, want, sizeof(want) - 1);
}

static void
test_head_no_body_no_type(void **state)
{
	char buf[128];
	struct http_response r = { .status = 401, .keep_alive = true };
	static const char want[] =
		"HTTP/1.1 401 Unauthorized\r\n"
		"Content-Length: 0\r\n"
		"Connection: keep-alive\r\n"
		"\r\n";

	assert_int_equal(http_write_head(buf, sizeof(buf), &r),
		sizeof(want) - 1);
	assert_memory_equal(buf, want, sizeof(want) - 1);
	/* one byte short of head + NUL is refused */
	assert_int_equal(http_write_head(buf, sizeof(want) - 1, &r), -ENOSPC);
	assert_int_equal(http_write_head(buf, sizeof(want), &r),
		sizeof(want) - 1);
}

static void
test_head_length_digits(void **state)
{
	char buf[128];
	struct http_response r = { .status = 200, .keep_alive = false };
	static const char want[] =
		"HTTP/1.1 200 OK\r\n"
		"Content-Length: 18446744073709551615\r\n"
		"Connection: close\r\n"
		"\r\n";

	r.content_length = UINT64_MAX;
	assert_int_equal(http_write_head(buf, sizeof(buf), &r),
		sizeof(want) - 1);
	assert_string_equal(buf, want);
	r.content_length = 10;
	assert_int_equal(http_write_head(buf, sizeof(buf), &r),
		sizeof(want) - 1 - 18);
	assert_non_null(strstr(buf, "\r\nContent-Length: 10\r\n"));
}

static void
test_continue(void **state)
{
	char buf[32];

	assert_int_equal(http_write_continue(buf, sizeof(buf)), 25);
	assert_memory_equal(buf, "HTTP/1.1 100 Continue\r\n\r\n", 25);
	assert_int_equal(http_write_continue(buf, 24), -ENOSPC);
}

static void
test_reasons(void **state)
{
	static const struct {
		int s;
		const char *r;
	} t[] = {
		{ 100, "Continue" }, { 200, "OK" }, { 400, "Bad Request" },
		{ 401, "Unauthorized" }, { 404, "Not Found" },
		{ 405, "Method Not Allowed" }, { 413, "Content Too Large" },
		{ 417, "Expectation Failed" },
		{ 431, "Request Header Fields Too Large" },
		{ 500, "Internal Server Error" }, { 501, "Not Implemented" },
		{ 503, "Service Unavailable" },
		{ 505, "HTTP Version Not Supported" }, { 299, "Unknown" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_string_equal(http_reason(t[i].s), t[i].r);
}

static void
test_json_error_escaping(void **state)
{
	char buf[256];
	/* spec/wire.md §4 message with U+2265, passed through as UTF-8 */
	static const char msg1[] =
		"binary: body too short (need \xe2\x89\xa5 16 bytes)";
	static const char want1[] =
		"{\"error\":\"binary: body too short (need \xe2\x89\xa5 16"
		" bytes)\"}";

	assert_int_equal(http_json_error(buf, sizeof(buf), msg1),
		sizeof(want1) - 1);
	assert_string_equal(buf, want1);
	assert_int_equal(http_json_error(buf, sizeof(buf),
		"a\"b\\c\nd\re\tf\x01g\x1fh\bi\fj"), 48);
	assert_string_equal(buf, "{\"error\":\"a\\\"b\\\\c\\nd\\re\\tf"
		"\\u0001g\\u001fh\\bi\\fj\"}");
	assert_int_equal(http_json_error(buf, sizeof(buf), ""), 12);
	assert_string_equal(buf, "{\"error\":\"\"}");
	/* exactly fitting without the NUL is fine; one less is not */
	assert_int_equal(http_json_error(buf, 12, ""), 12);
	assert_int_equal(http_json_error(buf, 11, ""), -ENOSPC);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_date_imf_fixdate),
		cmocka_unit_test(test_date_cache_per_second),
		cmocka_unit_test(test_head_ok_keep_alive),
		cmocka_unit_test(test_head_error_close_extra),
		cmocka_unit_test(test_head_no_body_no_type),
		cmocka_unit_test(test_head_length_digits),
		cmocka_unit_test(test_continue),
		cmocka_unit_test(test_reasons),
		cmocka_unit_test(test_json_error_escaping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
