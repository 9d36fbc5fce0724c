/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * [front NAME] (issue 19): a unit with no model that forwards each layer
 * range to its shards. Its values and defaults, the layout lines (sorted,
 * covering the layers from 0 without a gap or an overlap), the shard key
 * overrides and conf_front_key(), every static error (file, line, key,
 * value, reason), the runtime check of the shard keys, the --check plan,
 * and conf_secret_read(), the one reader of "env:"/"file:"/literal keys
 * (grid_key's too).
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

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (b) << 16 | (c) << 8 | (d))

/* A minimal front: lines 6-9 (EAL and PORT0 are lines 1-5). */
#define FRONT_F "[front f]\nlisten = 8080\nnet_lcores = 0\n" \
	"0-3 = 198.18.10.5:8080\n"				/* 6-9 */
#define FBASE EAL PORT0 FRONT_F

static const char cover[] = "ranges must cover the model's layers without "
	"gaps or overlaps";

/* configs/front-dev.conf, for users to copy, parses as it says. */
static void
test_shipped_front_dev(void **state)
{
	const struct conf_unit *u;
	struct conf c;

	(void)state;
	conf_load_shipped("front-dev.conf", &c);
	assert_int_equal(c.n_units, 1);
	u = &c.units[0];
	assert_true(u->front);
	assert_string_equal(u->name, "edge");
	assert_int_equal(c.ports[0].addr, IP(198, 18, 0, 1));
	assert_int_equal(u->listen, 8080);
	assert_int_equal(u->num_layers, 34);
	assert_int_equal(u->n_ranges, 2);
	assert_int_equal(u->ranges[0].first, 0);
	assert_int_equal(u->ranges[0].last, 16);
	assert_int_equal(u->ranges[0].n_rep, 2);
	assert_int_equal(u->ranges[0].ip[0], IP(198, 18, 0, 2));
	assert_int_equal(u->ranges[0].ip[1], IP(198, 18, 0, 3));
	assert_int_equal(u->ranges[0].port[1], 8080);
	assert_int_equal(u->ranges[1].first, 17);
	assert_int_equal(u->ranges[1].last, 33);
	assert_int_equal(u->ranges[1].n_rep, 1);
	assert_int_equal(u->ranges[1].ip[0], IP(198, 18, 0, 4));
	assert_string_equal(u->shard_key, "env:LARQL_SHARD_KEY");
	conf_free(&c);
}

/* A config of one front and no shard loads, with the defaults. */
static void
test_defaults(void **state)
{
	const struct conf_unit *u;
	struct conf c;

	(void)state;
	conf_expect_ok(FBASE, &c);
	assert_int_equal(c.n_units, 1);
	u = &c.units[0];
	assert_true(u->front);
	assert_string_equal(u->name, "f");
	assert_string_equal(u->section, "front f");
	assert_string_equal(u->model, "");
	assert_false(u->has_layers);
	assert_true(u->single_lcore);
	assert_int_equal(u->net_lcores.count, 1);
	assert_true(u->f16);
	assert_false(u->i8);
	assert_int_equal(u->max_body, 64ull << 20);
	assert_int_equal(u->num_layers, 0);
	assert_int_equal(u->n_ranges, 1);
	assert_int_equal(u->ranges[0].first, 0);
	assert_int_equal(u->ranges[0].last, 3);
	assert_int_equal(u->ranges[0].n_rep, 1);
	assert_int_equal(u->ranges[0].ip[0], IP(198, 18, 10, 5));
	assert_int_equal(u->ranges[0].port[0], 8080);
	assert_string_equal(u->shard_key, "");
	assert_int_equal(u->n_shard_keys, 0);
	assert_int_equal(u->hop_timeout_ms, 5000);
	assert_int_equal(u->health_interval_ms, 1000);
	assert_int_equal(u->shard_connections, 4);
	assert_int_equal(u->shard_pipeline, 8);
	assert_null(conf_front_key(u, IP(198, 18, 10, 5), 8080));
	/* one network lcore of the front on port 0: one queue */
	assert_int_equal(c.ports[0].rx_queues, 1);
	conf_free(&c);
	/* the units share the port: a shard next to the front */
	conf_expect_ok(FBASE "[shard a]\nmodel = m\nlayers = 0-3\n"
		"listen = 8081\nnet_lcores = 1\n", &c);
	assert_int_equal(c.n_units, 2);
	assert_true(c.units[0].front);
	assert_false(c.units[1].front);
	assert_int_equal(c.ports[0].rx_queues, 2);
	conf_free(&c);
}

/* Every key a front has, at the ends of their ranges. */
static void
test_values(void **state)
{
	const struct conf_unit *u;
	struct conf c;

	(void)state;
	conf_expect_ok(EAL PORT0 "[front edge-1]\nlisten = 9000\nport = 0\n"
		"net_lcores = 1-2\nf16 = off\ni8 = on\nmax_body = 1M\n"
		"max_header = 16K\nmax_connections = 10\npipeline_depth = 4\n"
		"idle_timeout_ms = 1000\nheader_timeout_ms = 2000\n"
		"body_timeout_ms = 3000\nbody_min_rate = 0\n"
		"send_timeout_ms = 4000\napi_key = client-key\n"
		"rate_limit = 5/min\ntrust_forwarded_for = on\n"
		"num_layers = 65536\nshard_key = s3cret\n"
		"hop_timeout_ms = 600000\nhealth_interval_ms = 100\n"
		"shard_connections = 64\nshard_pipeline = 1\n"
		"0-65535 = 203.0.113.9:1 | 203.0.113.10:65535\n", &c);
	u = &c.units[0];
	assert_true(u->front);
	assert_int_equal(u->listen, 9000);
	assert_int_equal(u->net_lcores.count, 2);
	assert_false(u->f16);
	assert_true(u->i8);
	assert_int_equal(u->max_body, 1 << 20);
	assert_int_equal(u->max_header, 16 << 10);
	assert_int_equal(u->max_connections, 10);
	assert_int_equal(u->pipeline_depth, 4);
	assert_int_equal(u->idle_timeout_ms, 1000);
	assert_int_equal(u->header_timeout_ms, 2000);
	assert_int_equal(u->body_timeout_ms, 3000);
	assert_int_equal(u->body_min_rate, 0);
	assert_int_equal(u->send_timeout_ms, 4000);
	assert_true(u->has_api_key);
	assert_string_equal(u->api_key, "client-key");
	assert_int_equal(u->rate_limit_n, 5);
	assert_int_equal(u->rate_limit_period_s, 60);
	assert_true(u->trust_forwarded_for);
	assert_int_equal(u->num_layers, 65536);
	assert_string_equal(u->shard_key, "s3cret");
	assert_int_equal(u->hop_timeout_ms, 600000);
	assert_int_equal(u->health_interval_ms, 100);
	assert_int_equal(u->shard_connections, 64);
	assert_int_equal(u->shard_pipeline, 1);
	assert_int_equal(u->ranges[0].last, 65535);
	assert_int_equal(u->ranges[0].port[0], 1);
	assert_int_equal(u->ranges[0].port[1], 65535);
	assert_int_equal(u->ranges[0].ip[1], IP(203, 0, 113, 10));
	assert_string_equal(conf_front_key(u, IP(203, 0, 113, 9), 1),
			    "s3cret");
	conf_free(&c);
}

/* Layout lines in any order are stored by first layer; "N" is one
 * layer; spaces around '-' and '|'; four replicas is the limit. */
static void
test_sorted(void **state)
{
	const struct conf_unit *u;
	struct conf c;

	(void)state;
	conf_expect_ok(EAL PORT0 "[front f]\nlisten = 8080\nnet_lcores = 0\n"
		"20 - 33 = 198.18.10.9:1\n"
		"17-19=198.18.10.8:1|198.18.10.7:1\n"
		"num_layers = 34\n"
		"0-16 = 198.18.10.3:80 | 198.18.10.4:80 |198.18.10.5:80| "
		"198.18.10.6:80\n", &c);
	u = &c.units[0];
	assert_int_equal(u->n_ranges, 3);
	assert_int_equal(u->ranges[0].first, 0);
	assert_int_equal(u->ranges[0].last, 16);
	assert_int_equal(u->ranges[0].n_rep, CONF_FRONT_MAX_REPLICAS);
	assert_int_equal(u->ranges[0].ip[0], IP(198, 18, 10, 3));
	assert_int_equal(u->ranges[0].ip[3], IP(198, 18, 10, 6));
	assert_int_equal(u->ranges[1].first, 17);
	assert_int_equal(u->ranges[1].last, 19);
	assert_int_equal(u->ranges[1].n_rep, 2);
	assert_int_equal(u->ranges[1].ip[0], IP(198, 18, 10, 8));
	assert_int_equal(u->ranges[1].ip[1], IP(198, 18, 10, 7));
	assert_int_equal(u->ranges[2].first, 20);
	assert_int_equal(u->ranges[2].last, 33);
	conf_free(&c);
	/* single layers, reversed */
	conf_expect_ok(EAL PORT0 "[front f]\nlisten = 8080\nnet_lcores = 0\n"
		"2 = 198.18.10.9:1\n1 = 198.18.10.9:1\n0 = 198.18.10.9:1\n",
		&c);
	u = &c.units[0];
	assert_int_equal(u->n_ranges, 3);
	for (unsigned int i = 0; i < 3; i++) {
		assert_int_equal(u->ranges[i].first, i);
		assert_int_equal(u->ranges[i].last, i);
	}
	conf_free(&c);
}

/* CONF_FRONT_MAX_RANGES one-layer ranges load; one more does not. */
static void
test_max_ranges(void **state)
{
	char text[8192];
	size_t n;
	struct conf c;

	(void)state;
	n = snprintf(text, sizeof(text), "%s", FBASE);
	/* FBASE has 0-3; 63 more (4..66), in reverse */
	for (unsigned int l = 66; l >= 4; l--)
		n += snprintf(text + n, sizeof(text) - n,
			"%u = 198.18.10.5:8080\n", l);
	conf_expect_ok(text, &c);
	assert_int_equal(c.units[0].n_ranges, CONF_FRONT_MAX_RANGES);
	for (unsigned int i = 1; i < CONF_FRONT_MAX_RANGES; i++)
		assert_int_equal(c.units[0].ranges[i].first, i + 3);
	conf_free(&c);
	/* line 73: the 65th range */
	snprintf(text + n, sizeof(text) - n, "67 = 198.18.10.5:8080\n");
	conf_expect_error(text, ":73: [front f] 67: \"198.18.10.5:8080\": "
		"more than 64 layer ranges (CONF_FRONT_MAX_RANGES)");
}

/* "shard_key IPV4:PORT" over shard_key, and conf_front_key(). */
static void
test_overrides(void **state)
{
	const struct conf_unit *u;
	struct conf c;

	(void)state;
	conf_expect_ok(EAL PORT0 "[front f]\nlisten = 8080\nnet_lcores = 0\n"
		"0-16 = 198.18.0.2:8080 | 198.18.0.3:8080\n"
		"17-33 = 198.18.0.4:8080\n"
		"shard_key = env:ALL\n"
		"shard_key 198.18.0.4:8080 = file:/etc/k4\n"
		"shard_key  198.18.0.3:8080 = literal-3\n", &c);
	u = &c.units[0];
	assert_int_equal(u->n_shard_keys, 2);
	assert_int_equal(u->shard_keys[0].ip, IP(198, 18, 0, 4));
	assert_int_equal(u->shard_keys[0].port, 8080);
	assert_string_equal(u->shard_keys[0].key, "file:/etc/k4");
	assert_int_equal(u->shard_keys[1].ip, IP(198, 18, 0, 3));
	assert_string_equal(u->shard_keys[1].key, "literal-3");
	assert_string_equal(conf_front_key(u, IP(198, 18, 0, 2), 8080),
			    "env:ALL");
	assert_string_equal(conf_front_key(u, IP(198, 18, 0, 3), 8080),
			    "literal-3");
	assert_string_equal(conf_front_key(u, IP(198, 18, 0, 4), 8080),
			    "file:/etc/k4");
	/* a shard the front does not know: the default */
	assert_string_equal(conf_front_key(u, IP(198, 18, 0, 4), 8081),
			    "env:ALL");
	conf_free(&c);
	/* overrides without shard_key: the others get none */
	conf_expect_ok(FBASE "4 = 198.18.10.6:1\n"
		"shard_key 198.18.10.6:1 = only-this\n", &c);
	u = &c.units[0];
	assert_null(conf_front_key(u, IP(198, 18, 10, 5), 8080));
	assert_string_equal(conf_front_key(u, IP(198, 18, 10, 6), 1),
			    "only-this");
	conf_free(&c);
}

/* CONF_FRONT_MAX_KEYS overrides load; one more does not. */
static void
test_max_overrides(void **state)
{
	char text[8192];
	size_t n;
	struct conf c;

	(void)state;
	n = snprintf(text, sizeof(text), "%s", EAL PORT0 "[front f]\n"
		"listen = 8080\nnet_lcores = 0\n0 = 198.18.10.1:1");
	for (unsigned int p = 2; p <= CONF_FRONT_MAX_REPLICAS; p++)
		n += snprintf(text + n, sizeof(text) - n, " | 198.18.10.1:%u",
			p);
	n += snprintf(text + n, sizeof(text) - n, "\n");
	/* 17 ranges of 4 replicas (ports 1..68): line 9 to 25 */
	for (unsigned int l = 1; l <= 16; l++) {
		n += snprintf(text + n, sizeof(text) - n, "%u = ", l);
		for (unsigned int p = 1; p <= CONF_FRONT_MAX_REPLICAS; p++)
			n += snprintf(text + n, sizeof(text) - n,
				"%s198.18.10.1:%u", p > 1 ? " | " : "",
				l * CONF_FRONT_MAX_REPLICAS + p);
		n += snprintf(text + n, sizeof(text) - n, "\n");
	}
	for (unsigned int p = 1; p <= CONF_FRONT_MAX_KEYS; p++)
		n += snprintf(text + n, sizeof(text) - n,
			"shard_key 198.18.10.1:%u = k%u\n", p, p);
	conf_expect_ok(text, &c);
	assert_int_equal(c.units[0].n_ranges, 17);
	assert_int_equal(c.units[0].n_shard_keys, CONF_FRONT_MAX_KEYS);
	assert_string_equal(conf_front_key(&c.units[0], IP(198, 18, 10, 1),
					   16), "k16");
	conf_free(&c);
	/* line 42 */
	snprintf(text + n, sizeof(text) - n,
		"shard_key 198.18.10.1:17 = k17\n");
	conf_expect_error(text, ":42: [front f] shard_key 198.18.10.1:17: "
		"more than 16 shard_key IPV4:PORT overrides "
		"(CONF_FRONT_MAX_KEYS)");
}

/* Sections: names, the shared namespace, the unit count, required keys,
 * the keys a front does not have. */
static void
test_err_section(void **state)
{
	(void)state;
	conf_expect_error(EAL PORT0 "[front f.1]\n",
		":6: [front f.1]: front name not [A-Za-z0-9_-]{1,31}");
	conf_expect_error(BASE "[front a]\nlisten = 8081\nnet_lcores = 1\n"
		"0 = 198.18.10.5:1\n",
		":11: [front a]: name a already used by [shard a] (shards and "
		"fronts share names)");
	conf_expect_error(FBASE "[shard f]\nmodel = m\nlayers = 0\n"
		"listen = 8081\nnet_lcores = 1\n",
		":10: [shard f]: name f already used by [front f] (shards and "
		"fronts share names)");
	conf_expect_error(FBASE "[front  f]\n",
		":10: [front  f]: front f defined twice");
	conf_expect_error(EAL PORT0 "[front f]\nnet_lcores = 0\n"
		"0 = 198.18.10.5:1\n",
		":6: [front f]: missing required key \"listen\"");
	conf_expect_error(EAL PORT0 "[front f]\nlisten = 8080\n"
		"0 = 198.18.10.5:1\n",
		":6: [front f]: missing required key \"net_lcores\"");
	conf_expect_error(EAL PORT0 "[front f]\nlisten = 8080\n"
		"net_lcores = 0\n",
		":6: [front f]: no layer ranges (lines \"A-B = IPV4:PORT[ | "
		"IPV4:PORT ...]\" that say which shards serve which layers)");
	conf_expect_error(FBASE "lisen = 1\n",
		":10: [front f] lisen: unknown key");
	conf_expect_error(FBASE "shard_key@198.18.10.5:8080 = k\n",
		":10: [front f] shard_key@198.18.10.5:8080: unknown key");
}

static void
test_err_shard_keys(void **state)
{
	static const char *const keys[] = {
		"model = m", "layers = 0-3", "worker_lcores = 1",
		"numa_node = 0", "mmap_weights = on", "batch_max_rows = 8",
		"batch_wait_us = 10", "split_min_rows = 0",
		"q6k_layout = ggml", "experts = 0-7",
		"expert_units = u.json", "f16_guard = on", "kq_q8k = on",
		"join = http://a:1", "public_url = http://a:1",
		"grid_key = k", "grid_heartbeat_ms = 1000",
	};
	char text[1024], want[256], name[64];

	(void)state;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(name, sizeof(name), "%.*s",
			 (int)strcspn(keys[i], " "), keys[i]);
		snprintf(text, sizeof(text), "%s%s\n", FBASE, keys[i]);
		snprintf(want, sizeof(want), ":10: [front f] %s: not a "
			 "[front] key (a front serves no model: it belongs "
			 "in a [shard NAME])", name);
		conf_expect_error(text, want);
	}
}

/* The range keys and the replica lists. */
static void
test_err_layout_lines(void **state)
{
	(void)state;
	conf_expect_error(FBASE "4-x = 198.18.10.5:1\n",
		":10: [front f] 4-x: \"198.18.10.5:1\": not a layer range "
		"\"A-B\" or \"N\" (a front's layout line: \"A-B = "
		"IPV4:PORT[ | IPV4:PORT ...]\")");
	conf_expect_error(FBASE "4-5-6 = 198.18.10.5:1\n",
		":10: [front f] 4-5-6: \"198.18.10.5:1\": not a layer range "
		"\"A-B\" or \"N\" (a front's layout line: \"A-B = "
		"IPV4:PORT[ | IPV4:PORT ...]\")");
	conf_expect_error(FBASE "9-4 = 198.18.10.5:1\n",
		":10: [front f] 9-4: \"198.18.10.5:1\": first layer > last "
		"layer");
	conf_expect_error(FBASE "4-65536 = 198.18.10.5:1\n",
		":10: [front f] 4-65536: \"198.18.10.5:1\": layer 65536 "
		"beyond 65535");
	conf_expect_error(FBASE "4 =\n",
		":10: [front f] 4: \"\": empty value (IPV4:PORT[ | "
		"IPV4:PORT ...])");
	conf_expect_error(FBASE "4 = 198.18.10.5\n",
		":10: [front f] 4: \"198.18.10.5\": 198.18.10.5: not "
		"IPV4:PORT");
	conf_expect_error(FBASE "4 = host:80\n",
		":10: [front f] 4: \"host:80\": host:80: not IPV4:PORT");
	conf_expect_error(FBASE "4 = 198.18.10.5:1 198.18.10.6:1\n",
		":10: [front f] 4: \"198.18.10.5:1 198.18.10.6:1\": "
		"198.18.10.5:1 198.18.10.6:1: not IPV4:PORT");
	conf_expect_error(FBASE "4 = 198.18.10.5:0\n",
		":10: [front f] 4: \"198.18.10.5:0\": 198.18.10.5:0: port not "
		"in 1..65535");
	conf_expect_error(FBASE "4 = 198.18.10.5:65536\n",
		":10: [front f] 4: \"198.18.10.5:65536\": "
		"198.18.10.5:65536: port not in 1..65535");
	conf_expect_error(FBASE "4 = 224.0.0.1:80\n",
		":10: [front f] 4: \"224.0.0.1:80\": 224.0.0.1:80: not a "
		"unicast host address");
	conf_expect_error(FBASE "4 = 127.0.0.1:80\n",
		":10: [front f] 4: \"127.0.0.1:80\": 127.0.0.1:80: not a "
		"unicast host address");
	conf_expect_error(FBASE "4 = 198.18.10.5:1 || 198.18.10.6:1\n",
		":10: [front f] 4: \"198.18.10.5:1 || 198.18.10.6:1\": an "
		"empty address in the list (IPV4:PORT separated by '|')");
	conf_expect_error(FBASE "4 = 198.18.10.5:1 |\n",
		":10: [front f] 4: \"198.18.10.5:1 |\": an empty address in "
		"the list (IPV4:PORT separated by '|')");
	conf_expect_error(FBASE "4 = 198.18.10.5:1 | 198.18.10.6:2 | "
		"198.18.10.5:1\n",
		":10: [front f] 4: \"198.18.10.5:1 | 198.18.10.6:2 | "
		"198.18.10.5:1\": replica 198.18.10.5:1 listed twice");
	conf_expect_error(FBASE "4 = 198.18.10.5:1 | 198.18.10.5:2 | "
		"198.18.10.5:3 | 198.18.10.5:4 | 198.18.10.5:5\n",
		":10: [front f] 4: \"198.18.10.5:1 | 198.18.10.5:2 | "
		"198.18.10.5:3 | 198.18.10.5:4 | 198.18.10.5:5\": more than "
		"4 replicas (CONF_FRONT_MAX_REPLICAS)");
}

/* Coverage: from 0, no gap, no overlap, to num_layers - 1. */
static void
test_err_cover(void **state)
{
	char want[CONF_ERR_MAX];

	(void)state;
	/* gap: said at the range after it */
	snprintf(want, sizeof(want), ":10: [front f] 5-9: \"198.18.10.5:1\": "
		"%s: layer 4 is in no range (between 0-3 at line 9 and 5-9)",
		cover);
	conf_expect_error(FBASE "5-9 = 198.18.10.5:1\n", want);
	snprintf(want, sizeof(want), ":11: [front f] 8-9: \"198.18.10.5:1\": "
		"%s: layers 4-7 are in no range (between 0-3 at line 9 and "
		"8-9)", cover);
	conf_expect_error(FBASE "20 = 198.18.10.5:1\n8-9 = 198.18.10.5:1\n",
		want);
	/* overlap: said at the line read later, naming the other */
	snprintf(want, sizeof(want), ":10: [front f] 3-9: \"198.18.10.5:1\": "
		"%s: 3-9 and 0-3 (line 9) both have layer 3", cover);
	conf_expect_error(FBASE "3-9 = 198.18.10.5:1\n", want);
	snprintf(want, sizeof(want), ":10: [front f] 1 - 2: "
		"\"198.18.10.6:1\": %s: 1 - 2 and 0-3 (line 9) both have "
		"layers 1-2", cover);
	conf_expect_error(FBASE "1 - 2 = 198.18.10.6:1\n", want);
	/* the same range twice, written differently */
	snprintf(want, sizeof(want), ":10: [front f] 0 -3: \"198.18.10.6:1\": "
		"%s: 0 -3 and 0-3 (line 9) both have layers 0-3", cover);
	conf_expect_error(FBASE "0 -3 = 198.18.10.6:1\n", want);
	/* the earlier line is the later range: still the later line */
	snprintf(want, sizeof(want), ":10: [front f] 0-5: \"198.18.10.6:1\": "
		"%s: 0-5 and 4-9 (line 9) both have layers 4-5", cover);
	conf_expect_error(EAL PORT0 "[front f]\nlisten = 8080\n"
		"net_lcores = 0\n4-9 = 198.18.10.5:1\n0-5 = 198.18.10.6:1\n",
		want);
	/* not from 0 */
	snprintf(want, sizeof(want), ":9: [front f] 1-3: \"198.18.10.5:1\": "
		"%s: layer 0 is in no range (the first range, 1-3, must "
		"start at 0)", cover);
	conf_expect_error(EAL PORT0 "[front f]\nlisten = 8080\n"
		"net_lcores = 0\n1-3 = 198.18.10.5:1\n", want);
	snprintf(want, sizeof(want), ":10: [front f] 7-9: \"198.18.10.5:1\": "
		"%s: layers 0-6 are in no range (the first range, 7-9, must "
		"start at 0)", cover);
	conf_expect_error(EAL PORT0 "[front f]\nlisten = 8080\n"
		"net_lcores = 0\n10 = 198.18.10.5:1\n7-9 = 198.18.10.5:1\n",
		want);
	/* num_layers: the last range ends at num_layers - 1 */
	snprintf(want, sizeof(want), ":10: [front f] num_layers: \"6\": "
		"%s: layers 4-5 are in no range (the last range, 0-3 at line "
		"9, must end at num_layers - 1)", cover);
	conf_expect_error(FBASE "num_layers = 6\n", want);
	snprintf(want, sizeof(want), ":10: [front f] num_layers: \"5\": "
		"%s: layer 4 is in no range (the last range, 0-3 at line 9, "
		"must end at num_layers - 1)", cover);
	conf_expect_error(FBASE "num_layers = 5\n", want);
	snprintf(want, sizeof(want), ":10: [front f] num_layers: \"3\": "
		"%s: the last range, 0-3 at line 9, goes past the model's "
		"last layer 2 (num_layers - 1)", cover);
	conf_expect_error(FBASE "num_layers = 3\n", want);
	conf_expect_error(FBASE "num_layers = 0\n",
		":10: [front f] num_layers: \"0\": out of range 1..65536");
	conf_expect_error(FBASE "num_layers = 65537\n",
		":10: [front f] num_layers: \"65537\": out of range "
		"1..65536");
}

/* The shards' side: keys, overrides, numbers. */
static void
test_err_shard_side(void **state)
{
	(void)state;
	conf_expect_error(FBASE "shard_key 198.18.10.6:8080 = k\n",
		":10: [front f] shard_key 198.18.10.6:8080: 198.18.10.6:8080 "
		"is not a replica of this front (no layout line lists it)");
	conf_expect_error(FBASE "shard_key 198.18.10.5 = k\n",
		":10: [front f] shard_key 198.18.10.5: not \"shard_key "
		"IPV4:PORT\": 198.18.10.5: not IPV4:PORT");
	conf_expect_error(FBASE "shard_key 198.18.10.5:0 = k\n",
		":10: [front f] shard_key 198.18.10.5:0: not \"shard_key "
		"IPV4:PORT\": 198.18.10.5:0: port not in 1..65535");
	conf_expect_error(FBASE "shard_key 198.18.10.5:8080 = k\n"
		"shard_key  198.18.10.5:8080 = k2\n",
		":11: [front f] shard_key  198.18.10.5:8080: a second key "
		"for 198.18.10.5:8080 (first at line 10)");
	conf_expect_error(FBASE "shard_key 198.18.10.5:8080 =\n",
		":10: [front f] shard_key 198.18.10.5:8080: empty value");
	conf_expect_error(FBASE "shard_key 198.18.10.5:8080 = a key\n",
		":10: [front f] shard_key 198.18.10.5:8080: not a bearer "
		"token (A-Z a-z 0-9 - . _ ~ + / and trailing =), nor "
		"env:NAME or file:PATH");
	conf_expect_error(FBASE "shard_key = k=y\n",
		":10: [front f] shard_key: not a bearer token (A-Z a-z 0-9 - "
		". _ ~ + / and trailing =), nor env:NAME or file:PATH");
	conf_expect_error(FBASE "shard_key =\n",
		":10: [front f] shard_key: empty value");
	conf_expect_error(FBASE "hop_timeout_ms = 0\n",
		":10: [front f] hop_timeout_ms: \"0\": out of range "
		"1..600000");
	conf_expect_error(FBASE "hop_timeout_ms = 600001\n",
		":10: [front f] hop_timeout_ms: \"600001\": out of range "
		"1..600000");
	conf_expect_error(FBASE "health_interval_ms = 99\n",
		":10: [front f] health_interval_ms: \"99\": out of range "
		"100..600000");
	conf_expect_error(FBASE "health_interval_ms = 600001\n",
		":10: [front f] health_interval_ms: \"600001\": out of range "
		"100..600000");
	conf_expect_error(FBASE "shard_connections = 0\n",
		":10: [front f] shard_connections: \"0\": out of range 1..64");
	conf_expect_error(FBASE "shard_connections = 65\n",
		":10: [front f] shard_connections: \"65\": out of range "
		"1..64");
	conf_expect_error(FBASE "shard_pipeline = 0\n",
		":10: [front f] shard_pipeline: \"0\": out of range 1..64");
	conf_expect_error(FBASE "shard_pipeline = 65\n",
		":10: [front f] shard_pipeline: \"65\": out of range 1..64");
}

/* A front against the other units and its port, as a shard. */
static void
test_err_cross(void **state)
{
	(void)state;
	conf_expect_error(BASE "[front f]\nlisten = 8080\nnet_lcores = 1\n"
		"0 = 198.18.10.5:1\n",
		":12: [front f] listen: \"8080\": already used by [shard a] on "
		"[port 0]");
	conf_expect_error(BASE "[front f]\nlisten = 8081\nnet_lcores = 0\n"
		"0 = 198.18.10.5:1\n",
		":13: [front f] net_lcores: \"0\": lcore 0 already used by "
		"[shard a]");
	conf_expect_error(FBASE "[shard a]\nmodel = m\nlayers = 0\n"
		"listen = 8081\nnet_lcores = 0\n",
		":14: [shard a] net_lcores: \"0\": lcore 0 already used by "
		"[front f]");
	conf_expect_error(EAL PORT0 "[front f]\nlisten = 8080\nport = 1\n"
		"net_lcores = 0\n0 = 198.18.10.5:1\n",
		":8: [front f] port: \"1\": no [port 1] section");
	/* the front itself as a replica: [port 0] is 198.18.10.2 */
	conf_expect_error(FBASE "4-7 = 198.18.10.6:80 | 198.18.10.2:8080\n",
		":10: [front f] 4-7: \"198.18.10.6:80 | 198.18.10.2:8080\": a "
		"replica is this front itself ([port 0] address, listen "
		"8080): it would forward to itself");
	/* as a shard: only the rate limit reads X-Forwarded-For */
	conf_expect_error(FBASE "trust_forwarded_for = on\n",
		":10: [front f] trust_forwarded_for: \"on\": only the rate "
		"limit reads X-Forwarded-For: set rate_limit too, or drop "
		"this key");
	conf_expect_error(FBASE "api_key = a b\n",
		":10: [front f] api_key: not a bearer token (A-Z a-z 0-9 - . "
		"_ ~ + / and trailing =)");
}

/* conf_check_runtime reads a front's keys; the error names the line. */
static void
test_runtime(void **state)
{
	struct conf_facts f = { 0 };
	char err[CONF_ERR_MAX], want[CONF_ERR_MAX];
	char path[] = "/tmp/ffn-front-key-XXXXXX", spec[64];
	struct conf c;
	FILE *fp;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	fputs("from-file\n", fp);
	fclose(fp);
	snprintf(spec, sizeof(spec), "file:%s", path);
	conf_expect_ok(FBASE "shard_key = env:FRONT_TEST_KEY\n"
		"4 = 198.18.10.6:1 | 198.18.10.7:1\n"
		"shard_key 198.18.10.6:1 = file:/nonexistent/k\n", &c);
	/* the default first */
	unsetenv("FRONT_TEST_KEY");
	assert_int_equal(conf_check_runtime(&c, &f, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want), "%s:10: [front f] shard_key: "
		 "\"env:FRONT_TEST_KEY\": environment variable FRONT_TEST_KEY "
		 "is not set", c.path);
	assert_string_equal(err, want);
	setenv("FRONT_TEST_KEY", "from-env", 1);
	assert_int_equal(conf_check_runtime(&c, &f, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want), "%s:12: [front f] shard_key "
		 "198.18.10.6:1: \"file:/nonexistent/k\": "
		 "fopen(/nonexistent/k): No such file or directory", c.path);
	assert_string_equal(err, want);
	/* the override made to read */
	snprintf(c.units[0].shard_keys[0].key,
		 sizeof(c.units[0].shard_keys[0].key), "%s", spec);
	assert_int_equal(conf_check_runtime(&c, &f, err, sizeof(err)), 0);
	/* a key read that no shard's api_key can be */
	setenv("FRONT_TEST_KEY", "two words", 1);
	assert_int_equal(conf_check_runtime(&c, &f, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want), "%s:10: [front f] shard_key: "
		 "\"env:FRONT_TEST_KEY\": the key read is not a bearer token "
		 "(A-Z a-z 0-9 - . _ ~ + / and trailing =): no shard's "
		 "api_key can match it", c.path);
	assert_string_equal(err, want);
	unsetenv("FRONT_TEST_KEY");
	unlink(path);
	conf_free(&c);
}

/* A front has no model: model_layers is never asked about it. */
static int model_calls;

static int
fake_model_layers(const char *dir, void *arg, char *why, size_t whylen)
{
	(void)dir;
	(void)arg;
	(void)why;
	(void)whylen;
	model_calls++;
	return 4;
}

/* its lcores may be on any node: no weights */
static int
fake_lcore_socket(unsigned int lcore, void *arg)
{
	(void)arg;
	return lcore == 0 ? 1 : -1;
}

static void
test_runtime_facts(void **state)
{
	struct conf_facts f = { .lcore_socket = fake_lcore_socket,
				.model_layers = fake_model_layers };
	char err[CONF_ERR_MAX], want[CONF_ERR_MAX];
	struct conf c;

	(void)state;
	conf_expect_ok(FBASE, &c);
	model_calls = 0;
	assert_int_equal(conf_check_runtime(&c, &f, err, sizeof(err)), 0);
	assert_int_equal(model_calls, 0);
	conf_free(&c);
	conf_expect_ok(EAL PORT0 "[front f]\nlisten = 8080\n"
		"net_lcores = 0-1\n0 = 198.18.10.5:1\n", &c);
	assert_int_equal(conf_check_runtime(&c, &f, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want), "%s:8: [front f] net_lcores: \"0-1\": "
		 "lcore 1 is not enabled in EAL (see [eal] args -l)", c.path);
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
	conf_expect_ok(EAL PORT0 "[front edge]\nlisten = 8080\n"
		"net_lcores = 0\nnum_layers = 34\n"
		"17-33 = 198.18.0.4:8080\n"
		"0-16 = 198.18.0.2:8080 | 198.18.0.3:8080\n"
		"shard_key = env:SECRET_NAME\n"
		"shard_key 198.18.0.3:8080 = file:/etc/k\n"
		"shard_key 198.18.0.4:8080 = LiteralSecret\n"
		"hop_timeout_ms = 250\n", &c);
	f = fmemopen(buf, sizeof(buf) - 1, "w");
	assert_non_null(f);
	conf_print_plan(&c, f);
	fclose(f);
	assert_non_null(strstr(buf,
		"  front edge: 198.18.10.2:8080 (port 0)\n"
		"    lcores 0: network and forwarding (no model)\n"
		"    layers 0-33 in 2 ranges; num_layers 34\n"
		"    layers 0-16: 198.18.0.2:8080 (key from the environment) |"
		" 198.18.0.3:8080 (key from a file)\n"
		"    layers 17-33: 198.18.0.4:8080 (key in the config)\n"
		"    shards: hop timeout 250 ms, health every 1000 ms, 4 "
		"connections per lcore per shard, 8 requests in flight each\n"
		"    wire: f32, f16 on, i8 off\n"
		"    limits: body 64 MiB, header 8 KiB, 4096 connections, "
		"pipeline 16, idle 60000 ms, header 10000 ms, body 20000 ms "
		"(+1 s per 500 bytes), send 60000 ms; auth none\n"));
	/* never the key itself */
	assert_null(strstr(buf, "LiteralSecret"));
	assert_null(strstr(buf, "SECRET_NAME"));
	assert_null(strstr(buf, "/etc/k"));
	conf_free(&c);
	conf_expect_ok(FBASE, &c);
	f = fmemopen(buf, sizeof(buf) - 1, "w");
	conf_print_plan(&c, f);
	fclose(f);
	assert_non_null(strstr(buf,
		"    layers 0-3 in 1 range; num_layers not set (the model's "
		"count unchecked)\n"
		"    layers 0-3: 198.18.10.5:8080 (no key)\n"));
	conf_free(&c);
}

/* conf_secret_read, the one reader of grid_key and shard_key (it was
 * lib/grid's grid_key_read; its tests came along). */
static void
test_secret_read(void **state)
{
	char key[CONF_STR_MAX], why[256], path[] = "/tmp/conf-key-XXXXXX";
	char spec[64], big[CONF_STR_MAX + 8];
	FILE *f;
	int fd;

	(void)state;
	assert_int_equal(conf_secret_read("s3cret", key, sizeof(key), why,
					  sizeof(why)), 0);
	assert_string_equal(key, "s3cret");
	assert_int_equal(conf_secret_read("", key, sizeof(key), why,
					  sizeof(why)), -EINVAL);
	assert_string_equal(why, "empty");
	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(conf_secret_read(big, key, sizeof(key), why,
					  sizeof(why)), -EINVAL);
	assert_string_equal(why, "too long");
	assert_int_equal(conf_secret_read("a\x7f", key, sizeof(key), why,
					  sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "0x7f"));

	setenv("CONF_TEST_KEY", "from-env", 1);
	assert_int_equal(conf_secret_read("env:CONF_TEST_KEY", key,
					  sizeof(key), why, sizeof(why)), 0);
	assert_string_equal(key, "from-env");
	unsetenv("CONF_TEST_KEY");
	assert_int_equal(conf_secret_read("env:CONF_TEST_KEY", key,
					  sizeof(key), why, sizeof(why)),
			 -ENOENT);
	assert_string_equal(why, "environment variable CONF_TEST_KEY is not "
			    "set");
	setenv("CONF_TEST_KEY", "", 1);
	assert_int_equal(conf_secret_read("env:CONF_TEST_KEY", key,
					  sizeof(key), why, sizeof(why)),
			 -ENOENT);
	assert_string_equal(why, "environment variable CONF_TEST_KEY is "
			    "empty");
	setenv("CONF_TEST_KEY", big, 1);
	assert_int_equal(conf_secret_read("env:CONF_TEST_KEY", key,
					  sizeof(key), why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "environment variable CONF_TEST_KEY: longer "
			    "than 255 bytes");
	unsetenv("CONF_TEST_KEY");

	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("from-file\r\nsecond line\n", f);
	fclose(f);
	snprintf(spec, sizeof(spec), "file:%s", path);
	assert_int_equal(conf_secret_read(spec, key, sizeof(key), why,
					  sizeof(why)), 0);
	assert_string_equal(key, "from-file");
	/* no line end at all */
	f = fopen(path, "w");
	fputs("last", f);
	fclose(f);
	assert_int_equal(conf_secret_read(spec, key, sizeof(key), why,
					  sizeof(why)), 0);
	assert_string_equal(key, "last");
	f = fopen(path, "w");
	fputs("\n", f);
	fclose(f);
	assert_int_equal(conf_secret_read(spec, key, sizeof(key), why,
					  sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "empty first line"));
	f = fopen(path, "w");
	fclose(f);
	assert_int_equal(conf_secret_read(spec, key, sizeof(key), why,
					  sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "empty first line"));
	f = fopen(path, "w");
	fputs("a\tb\n", f);
	fclose(f);
	/* a byte an HTTP header value cannot carry */
	assert_int_equal(conf_secret_read(spec, key, sizeof(key), why,
					  sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "0x09"));
	f = fopen(path, "w");
	fputs(big, f);
	fclose(f);
	assert_int_equal(conf_secret_read(spec, key, sizeof(key), why,
					  sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "first line longer than 254 bytes"));
	unlink(path);
	assert_int_equal(conf_secret_read("file:/nonexistent/k", key,
					  sizeof(key), why, sizeof(why)),
			 -ENOENT);
	assert_string_equal(why, "fopen(/nonexistent/k): No such file or "
			    "directory");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_front_dev),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_sorted),
		cmocka_unit_test(test_max_ranges),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_max_overrides),
		cmocka_unit_test(test_err_section),
		cmocka_unit_test(test_err_shard_keys),
		cmocka_unit_test(test_err_layout_lines),
		cmocka_unit_test(test_err_cover),
		cmocka_unit_test(test_err_shard_side),
		cmocka_unit_test(test_err_cross),
		cmocka_unit_test(test_runtime),
		cmocka_unit_test(test_runtime_facts),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_secret_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
