/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tool_opt.h"

/* Accepted: decimal and 0x hex, the range's ends. */
static void
test_u32_ok(void **state)
{
	uint32_t v = 7;

	(void)state;
	assert_int_equal(tool_opt_u32("t", "--n", "0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(tool_opt_u32("t", "--n", "10", 0, 10, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(tool_opt_u32("t", "--n", "0x10", 0, 100, &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(tool_opt_u32("t", "--n", "4294967295", 0,
				      UINT32_MAX, &v), 0);
	assert_int_equal(v, UINT32_MAX);
}

/* What strtoul alone lets through: each refused, *out untouched. */
static void
test_u32_refused(void **state)
{
	static const char *const bad[] = {
		"", "abc", "12x", " 5", "-1", "+5", "5 ", "11", "4294967296",
		"99999999999999999999999", "1,2",
	};
	uint32_t v = 7;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(tool_opt_u32("t", "--n", bad[i], 0, 10, &v),
				 -EINVAL);
		assert_int_equal(v, 7);
	}
	assert_int_equal(tool_opt_u32("t", "--n", "0", 1, 10, &v), -EINVAL);
	assert_int_equal(v, 7);
}

static void
test_u64(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(tool_opt_u64("t", "--seed", "18446744073709551615",
				      &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(tool_opt_u64("t", "--seed", "18446744073709551616",
				      &v), -EINVAL);
	assert_int_equal(tool_opt_u64("t", "--seed", "-1", &v), -EINVAL);
	assert_int_equal(tool_opt_u64("t", "--seed", "1e3", &v), -EINVAL);
	assert_true(v == UINT64_MAX);
}

static void
test_list(void **state)
{
	uint32_t out[3] = { 9, 9, 9 };

	(void)state;
	assert_int_equal(tool_opt_u32_list("t", "--l", "5", 0, 31, out, 3), 1);
	assert_int_equal(out[0], 5);
	assert_int_equal(tool_opt_u32_list("t", "--l", "1,0,31", 0, 31, out,
					   3), 3);
	assert_int_equal(out[0], 1);
	assert_int_equal(out[1], 0);
	assert_int_equal(out[2], 31);
	/* Empty items, junk, range, too many. */
	assert_int_equal(tool_opt_u32_list("t", "--l", "", 0, 31, out, 3),
			 -EINVAL);
	assert_int_equal(tool_opt_u32_list("t", "--l", "1,", 0, 31, out, 3),
			 -EINVAL);
	assert_int_equal(tool_opt_u32_list("t", "--l", ",1", 0, 31, out, 3),
			 -EINVAL);
	assert_int_equal(tool_opt_u32_list("t", "--l", "1,,2", 0, 31, out, 3),
			 -EINVAL);
	assert_int_equal(tool_opt_u32_list("t", "--l", "1,x", 0, 31, out, 3),
			 -EINVAL);
	assert_int_equal(tool_opt_u32_list("t", "--l", "1,32", 0, 31, out, 3),
			 -EINVAL);
	assert_int_equal(tool_opt_u32_list("t", "--l", "1,2,3,4", 0, 31, out,
					   3), -EINVAL);
}

static void
test_double(void **state)
{
	double v = 7;

	(void)state;
	assert_int_equal(tool_opt_double("t", "--r", "0.25", 0, 1, &v), 0);
	assert_true(v == 0.25);
	assert_int_equal(tool_opt_double("t", "--r", "1e-3", 0, 1, &v), 0);
	assert_true(v == 1e-3);
	assert_int_equal(tool_opt_double("t", "--r", "nan", 0, 1, &v),
			 -EINVAL);
	assert_int_equal(tool_opt_double("t", "--r", "inf", 0, 1e300, &v),
			 -EINVAL);
	assert_int_equal(tool_opt_double("t", "--r", "0.5x", 0, 1, &v),
			 -EINVAL);
	assert_int_equal(tool_opt_double("t", "--r", "", 0, 1, &v), -EINVAL);
	assert_int_equal(tool_opt_double("t", "--r", "2", 0, 1, &v), -EINVAL);
	assert_true(v == 1e-3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u32_ok),
		cmocka_unit_test(test_u32_refused),
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_double),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
