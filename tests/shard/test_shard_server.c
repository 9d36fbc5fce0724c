/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The parts of the appliance's data path (shard_server.h) that need no
 * EAL: the TCP idle timeout derived from idle_timeout_ms.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shard_server.h"

/* idle_timeout_ms becomes the TCP stack's 32-bit µs timer: computed in
 * 64 bits, so a value past its range is refused rather than wrapped
 * (4294968 ms wrapped to 704 µs, 86400000 ms, 24 h, to ~500 s). */
static void
test_idle_timeout_us(void **state)
{
	uint32_t us = 12345;

	(void)state;
	assert_int_equal(shard_idle_timeout_us(60000, &us), 0);
	assert_int_equal(us, 60000000u);
	assert_int_equal(shard_idle_timeout_us(1, &us), 0);
	assert_int_equal(us, 1000u);
	/* the largest that fits: 4294967000 µs, ~71.6 min */
	assert_int_equal(SHARD_IDLE_TIMEOUT_MS_MAX, 4294967u);
	assert_int_equal(shard_idle_timeout_us(4294967, &us), 0);
	assert_int_equal(us, 4294967000u);
	us = 12345;
	assert_int_equal(shard_idle_timeout_us(4294968, &us), -ERANGE);
	assert_int_equal(us, 12345);
	assert_int_equal(shard_idle_timeout_us(86400000, &us), -ERANGE);
	assert_int_equal(shard_idle_timeout_us(UINT32_MAX, &us), -ERANGE);
	assert_int_equal(us, 12345);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_timeout_us),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
