/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * The grid keys of [shard NAME] (issue 20, spec/wire.md §9): join,
 * public_url, grid_key, grid_heartbeat_ms. Their values, every static
 * error (file, line, key, value, reason), the runtime check's key at
 * fault, and the --check plan's line.
 */

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "conf.h"
#define CONF_TEST_EXPECT
#include "conf_test_util.h"

#ifndef CONFIGS_DIR
#error CONFIGS_DIR must be defined by the build
#endif

/* configs/grid-dev.conf, the README's pattern, parses as it says. */
static void
test_shipped_grid_dev(void **state)
{
	struct conf c;

	(void)state;
	conf_load_shipped("grid-dev.conf", &c);
	assert_int_equal(c.units[0].n_join, 1);
	assert_string_equal(c.units[0].join[0], "http://198.18.10.1:50052");
	assert_string_equal(c.units[0].grid_key, "env:LARQL_GRID_KEY");
	conf_free(&c);
}

static void
test_defaults(void **state)
{
	struct conf c;

	(void)state;
	conf_expect_ok(BASE, &c);
	assert_int_equal(c.units[0].n_join, 0);
	assert_string_equal(c.units[0].public_url, "");
	assert_string_equal(c.units[0].grid_key, "");
	assert_int_equal(c.units[0].grid_heartbeat_ms, 10000);	/* §9.3 */
	conf_free(&c);
}

static void
test_values(void **state)
{
	struct conf c;

	(void)state;
	conf_expect_ok(BASE "join = http://198.18.3.1:50052 ,http://router-b:9/"
		  " , http://r3.example:1\n"
		  "public_url = http://203.0.113.7:80\n"
		  "grid_key = env:GRID_KEY\ngrid_heartbeat_ms = 100\n", &c);
	assert_int_equal(c.units[0].n_join, 3);
	assert_string_equal(c.units[0].join[0], "http://198.18.3.1:50052");
	assert_string_equal(c.units[0].join[1], "http://router-b:9/");
	assert_string_equal(c.units[0].join[2], "http://r3.example:1");
	assert_string_equal(c.units[0].public_url, "http://203.0.113.7:80");
	assert_string_equal(c.units[0].grid_key, "env:GRID_KEY");
	assert_int_equal(c.units[0].grid_heartbeat_ms, 100);
	conf_free(&c);
	/* Four routers is the limit, not an error. */
	conf_expect_ok(BASE "join = http://a:1,http://a:2,http://a:3,http://a:4\n",
		  &c);
	assert_int_equal(c.units[0].n_join, CONF_MAX_JOIN);
	conf_free(&c);
}

static void
test_err_join(void **state)
{
	(void)state;
	conf_expect_error(BASE "join = https://198.18.3.1:50052\n",
		":11: [shard a] join: \"https://198.18.3.1:50052\": https is "
		"not supported: the grid port is plain HTTP/2 "
		"(spec/wire.md §9)");
	conf_expect_error(BASE "join = 198.18.3.1:50052\n",
		":11: [shard a] join: \"198.18.3.1:50052\": not "
		"http://HOST:PORT");
	conf_expect_error(BASE "join = http://r\n",
		":11: [shard a] join: \"http://r\": not http://HOST:PORT");
	conf_expect_error(BASE "join = http://:1\n",
		":11: [shard a] join: \"http://:1\": not http://HOST:PORT");
	conf_expect_error(BASE "join = http://r:0\n",
		":11: [shard a] join: \"http://r:0\": port not in 1..65535");
	conf_expect_error(BASE "join = http://r:65536\n",
		":11: [shard a] join: \"http://r:65536\": port not in "
		"1..65535");
	conf_expect_error(BASE "join = http://r:\n",
		":11: [shard a] join: \"http://r:\": port not in 1..65535");
	conf_expect_error(BASE "join = http://r:1x\n",
		":11: [shard a] join: \"http://r:1x\": port not in 1..65535");
	conf_expect_error(BASE "join = http://r:1/grid\n",
		":11: [shard a] join: \"http://r:1/grid\": not "
		"http://HOST:PORT (a path: the grid's service has a fixed "
		"one, spec/wire.md §9)");
	conf_expect_error(BASE "join = http://u@r:1\n",
		":11: [shard a] join: \"http://u@r:1\": not http://HOST:PORT "
		"(HOST: an IPv4 address or a name)");
	conf_expect_error(BASE "join = http://a:1,,http://b:2\n",
		":11: [shard a] join: \"http://a:1,,http://b:2\": an empty "
		"URL in the list");
	conf_expect_error(BASE "join = http://a:1,\n",
		":11: [shard a] join: \"http://a:1,\": an empty URL in the "
		"list");
	conf_expect_error(BASE "join = http://a:1, http://a:1\n",
		":11: [shard a] join: \"http://a:1, http://a:1\": a router "
		"listed twice (one stream per router, spec/wire.md §9.5)");
	conf_expect_error(BASE "join = http://a:1,http://a:2,http://a:3,"
		"http://a:4,http://a:5\n",
		":11: [shard a] join: \"http://a:1,http://a:2,http://a:3,"
		"http://a:4,http://a:5\": more than 4 routers "
		"(CONF_MAX_JOIN)");
}

static void
test_err_other_keys(void **state)
{
	(void)state;
	/* The other grid keys mean nothing without join: a typo'd or
	 * forgotten join must not pass silently. */
	conf_expect_error(BASE "public_url = http://a:1\n",
		":11: [shard a] public_url: \"http://a:1\": set without join "
		"(the grid keys belong to a unit that joins a router)");
	conf_expect_error(BASE "grid_key = env:K\n",
		":11: [shard a] grid_key: \"env:K\": set without join (the "
		"grid keys belong to a unit that joins a router)");
	conf_expect_error(BASE "grid_heartbeat_ms = 500\n",
		":11: [shard a] grid_heartbeat_ms: \"500\": set without join "
		"(the grid keys belong to a unit that joins a router)");
	conf_expect_error(BASE "join = http://a:1\ngrid_heartbeat_ms = 99\n",
		":12: [shard a] grid_heartbeat_ms: \"99\": out of range "
		"100..600000");
	conf_expect_error(BASE "join = http://a:1\ngrid_heartbeat_ms = 600001\n",
		":12: [shard a] grid_heartbeat_ms: \"600001\": out of range "
		"100..600000");
	conf_expect_error(BASE "join = http://a:1\npublic_url = https://a:1\n",
		":12: [shard a] public_url: \"https://a:1\": https is not "
		"supported: the grid port is plain HTTP/2 "
		"(spec/wire.md §9)");
	/* An expert-only unit has no layer range to announce (§9.1). */
	conf_expect_error(EAL PORT0 "[shard a]\nmodel = m\nexperts = 0-7\n"
		"listen = 8080\nnet_lcores = 0\njoin = http://a:1\n",
		":11: [shard a] join: \"http://a:1\": an expert-only unit "
		"cannot join: a grid announce names a layer range "
		"(spec/wire.md §9.1); set layers");
}

/* A runtime check that finds fault with the key it names. */
static const char *fault_key;
static int grid_checks;

static int
fake_grid_check(const struct conf_unit *u, void *arg, const char **key,
		char *why, size_t whylen)
{
	(void)u;
	(void)arg;
	grid_checks++;
	if (fault_key == NULL)
		return 0;
	*key = fault_key;
	snprintf(why, whylen, "fake reason");
	return -EINVAL;
}

static void
test_runtime(void **state)
{
	struct conf_facts f = { .grid_check = fake_grid_check };
	char err[CONF_ERR_MAX], want[CONF_ERR_MAX];
	struct conf c;

	(void)state;
	conf_expect_ok(BASE "join = http://a:1\ngrid_key = file:/nonexistent\n"
		  "[shard b]\nmodel = m2\nlayers = 0-1\nlisten = 8081\n"
		  "net_lcores = 1\n", &c);
	fault_key = NULL;
	grid_checks = 0;
	assert_int_equal(conf_check_runtime(&c, &f, err, sizeof(err)), 0);
	assert_int_equal(grid_checks, 1);	/* unit b does not join */
	fault_key = "grid_key";
	assert_int_equal(conf_check_runtime(&c, &f, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want), "%s:12: [shard a] grid_key: "
		 "\"file:/nonexistent\": fake reason", c.path);
	assert_string_equal(err, want);
	conf_free(&c);
}

static void
test_plan(void **state)
{
	char buf[4096] = "";
	struct conf c;
	FILE *f;

	(void)state;
	conf_expect_ok(BASE "join = http://198.18.3.1:50052, http://r2:9\n"
		  "grid_key = file:/etc/grid.key\ngrid_heartbeat_ms = 2000\n",
		  &c);
	f = fmemopen(buf, sizeof(buf) - 1, "w");
	assert_non_null(f);
	conf_print_plan(&c, f);
	fclose(f);
	assert_non_null(strstr(buf, "    grid: joins http://198.18.3.1:50052, "
		"http://r2:9 as http://198.18.10.2:8080; key from a file; "
		"heartbeat 2000 ms\n"));
	conf_free(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_grid_dev),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_err_join),
		cmocka_unit_test(test_err_other_keys),
		cmocka_unit_test(test_runtime),
		cmocka_unit_test(test_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
