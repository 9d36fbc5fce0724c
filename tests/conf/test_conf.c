/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * Config files: the shipped configs parse and validate; every error class
 * names file, line, section, key, value and reason; runtime checks with
 * fake EAL/model facts; the --check plan; the EAL argv.
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


/* --- shipped configs -------------------------------------------------- */

static void
test_shipped_tap_dev(void **state)
{
	struct conf c;
	const struct conf_unit *u;

	conf_load_shipped("tap-dev.conf", &c);
	assert_int_equal(c.n_ports, 1);
	assert_int_equal(c.n_units, 1);
	assert_string_equal(c.ports[0].device, "net_tap0");
	assert_int_equal(c.ports[0].addr, (198u << 24) | (18 << 16) |
		(10 << 8) | 2);
	assert_int_equal(c.ports[0].prefix, 24);
	assert_int_equal(c.ports[0].rx_queues, 1);
	u = &c.units[0];
	assert_string_equal(u->name, "demo");
	assert_int_equal(u->listen, 8080);
	assert_true(u->single_lcore);
	assert_true(conf_lcores_has(&u->worker_lcores, 0));
	assert_int_equal(u->net_lcores.count, 1);
	assert_true(u->f16);
	assert_false(u->i8);
	assert_int_equal(u->max_body, 64ull << 20);
	assert_false(u->has_api_key);
	assert_non_null(strstr(c.eal_args, "--vdev net_tap0,iface=fsd0"));
	conf_free(&c);
}

static void
test_shipped_two_numa(void **state)
{
	struct conf c;

	conf_load_shipped("two-numa.conf", &c);
	assert_int_equal(c.n_ports, 2);
	assert_int_equal(c.n_units, 2);
	assert_false(c.units[0].single_lcore);
	assert_int_equal(c.units[0].worker_lcores.count, 5);
	assert_int_equal(c.units[1].numa_node, 1);
	assert_int_equal(c.ports[0].rx_queues, 2);
	assert_int_equal(c.ports[1].rx_queues, 2);
	assert_true(c.units[1].has_api_key);
	conf_free(&c);
}

static void
test_shipped_two_host(void **state)
{
	struct conf a, b;

	conf_load_shipped("two-host-a.conf", &a);
	conf_load_shipped("two-host-b.conf", &b);
	/* one model, complementary ranges */
	assert_string_equal(a.units[0].model, b.units[0].model);
	assert_int_equal(a.units[0].layer_first, 0);
	assert_int_equal(a.units[0].layer_last + 1, b.units[0].layer_first);
	assert_int_equal(b.units[0].layer_last, 29);
	conf_free(&a);
	conf_free(&b);
}

/* --- defaults and values ---------------------------------------------- */

static void
test_defaults(void **state)
{
	struct conf c;
	const struct conf_unit *u = &c.units[0];

	conf_expect_ok(BASE, &c);
	assert_string_equal(c.log_level, "info");
	assert_true(c.metrics);
	assert_int_equal(c.ports[0].mtu, 1500);
	assert_int_equal(c.ports[0].gateway, 0);
	assert_int_equal(u->port, 0);
	assert_int_equal(u->numa_node, 0);
	assert_true(u->f16);
	assert_false(u->i8);
	assert_int_equal(u->max_body, 64ull << 20);
	assert_int_equal(u->max_header, 8192);
	assert_int_equal(u->max_connections, 4096);
	assert_int_equal(u->pipeline_depth, 16);
	assert_int_equal(u->idle_timeout_ms, 60000);
	assert_int_equal(u->header_timeout_ms, 10000);
	assert_int_equal(u->body_timeout_ms, 20000);
	assert_int_equal(u->body_min_rate, 500);
	assert_int_equal(u->send_timeout_ms, 60000);
	assert_int_equal(u->rate_limit_n, 0);	/* no rate limit */
	assert_false(u->trust_forwarded_for);
	assert_int_equal(u->batch_max_rows, 64);
	assert_int_equal(u->batch_wait_us, 200);
	assert_int_equal(u->split_min_rows, 0);	/* never split */
	assert_int_equal(u->q6k_layout, CONF_Q6K_PRIVATE);
	assert_true(u->single_lcore);
	conf_free(&c);
}

static void
test_values(void **state)
{
	struct conf c;
	const struct conf_unit *u = &c.units[0];
	unsigned int l, n = 0;

	conf_expect_ok(EAL PORT0 "gateway = 198.18.10.1\nvlan = 7\n"
		"[shard a]\nmodel = m/\nlayers = 7\nlisten = 1\n"
		"net_lcores = 0-1,3 # comment\nworker_lcores = 2,10-11\n"
		"f16 = off\ni8 = Yes\nmax_body = 1G\nmax_header = 16KiB\n"
		"api_key = abc-_.~+/==\nq6k_layout = ggml\nnuma_node = 1\n"
		"split_min_rows = 4\nidle_timeout_ms = 86400000\n"
		"body_timeout_ms = 3600000\nbody_min_rate = 0\n"
		"send_timeout_ms = 86400000\n"
		"rate_limit = 600/min\ntrust_forwarded_for = on\n"
		"[log]\nlevel = debug\n[telemetry]\nmetrics = no\n", &c);
	assert_int_equal(c.ports[0].gateway, (198u << 24) | (18 << 16) |
		(10 << 8) | 1);
	assert_int_equal(c.ports[0].vlan, 7);
	assert_int_equal(u->layer_first, 7);
	assert_int_equal(u->layer_last, 7);
	assert_int_equal(u->net_lcores.count, 3);
	assert_true(conf_lcores_has(&u->net_lcores, 3));
	assert_false(conf_lcores_has(&u->net_lcores, 2));
	assert_false(u->single_lcore);
	for (l = conf_lcores_next(&u->worker_lcores, 0); l < CONF_MAX_LCORE;
	     l = conf_lcores_next(&u->worker_lcores, l + 1))
		n = n * 100 + l;
	assert_int_equal(n, 21011);	/* 2, 10, 11 */
	assert_false(u->f16);
	assert_true(u->i8);
	assert_int_equal(u->max_body, 1ull << 30);
	assert_int_equal(u->max_header, 16384);
	assert_string_equal(u->api_key, "abc-_.~+/==");
	assert_int_equal(u->q6k_layout, CONF_Q6K_GGML);
	assert_int_equal(u->split_min_rows, 4);
	assert_int_equal(u->numa_node, 1);
	/* the largest idle timeout: 24 h */
	assert_int_equal(u->idle_timeout_ms, 86400000);
	/* the longest body timeout, no min-rate extension */
	assert_int_equal(u->body_timeout_ms, 3600000);
	assert_int_equal(u->body_min_rate, 0);
	/* the longest send timeout: 24 h, as the idle one */
	assert_int_equal(u->send_timeout_ms, 86400000);
	assert_int_equal(u->rate_limit_n, 600);
	assert_int_equal(u->rate_limit_period_s, 60);
	assert_true(u->trust_forwarded_for);
	assert_string_equal(c.log_level, "debug");
	assert_false(c.metrics);
	conf_free(&c);
}

/* --- error classes, each with its line -------------------------------- */

static void
test_err_syntax(void **state)
{
	conf_expect_error(EAL "layers 0-3\n",
		":3: \"layers 0-3\": expected \"key = value\" or \"[section]\"");
	conf_expect_error("args = x\n" EAL, ":1: args: key outside any section");
	conf_expect_error(EAL "[port 0\n", ":3: [port 0: no closing ']'");
	conf_expect_error(EAL "[port 0] x\n", ":3: [port 0: text after ']'");
	conf_expect_error(EAL "[]\n", ":3: []: empty section name");
	conf_expect_error(EAL " = 1\n", ":3: no key before '='");
	conf_expect_error(EAL "[eal]\n", ":3: [eal]: duplicate section "
		"(first at line 1)");
	conf_expect_error(BASE "listen = 8081\n", ":11: [shard a] listen: "
		"duplicate key (first at line 9)");
}

static void
test_err_long_line(void **state)
{
	char text[1024];

	/* rte_cfgfile would refuse or truncate these: named here */
	snprintf(text, sizeof(text), EAL "[shard a]\nmodel = %0300d\n", 0);
	conf_expect_error(text, ":4: [shard a] model: value too long "
		"(max 255 characters)");
	snprintf(text, sizeof(text), EAL "[shard a]\nmodel = %0330d\n", 0);
	conf_expect_error(text, ":4: line too long (max 321 characters)");
}

static void
test_err_missing(void **state)
{
	conf_expect_error(EAL PORT0 "[shard a]\nlayers = 0-3\nlisten = 8080\n"
		"net_lcores = 0\n",
		":6: [shard a]: missing required key \"model\"");
	conf_expect_error(EAL "[port 0]\naddress = 198.18.10.2/24\n" UNIT_A,
		":3: [port 0]: missing required key \"device\"");
	conf_expect_error(PORT0 UNIT_A, ": missing section [eal]");
	conf_expect_error(EAL UNIT_A, ": no [port N] section");
	conf_expect_error(EAL PORT0,
		": no [shard NAME] or [front NAME] section");
	conf_expect_error("[eal]\n", ":1: [eal]: missing required key \"args\"");
}

static void
test_err_unknown(void **state)
{
	conf_expect_error(BASE "lyers = 0-3\n",
		":11: [shard a] lyers: unknown key");
	conf_expect_error(BASE "[shrad b]\nmodel = m\n",
		":11: [shrad b]: unknown section (eal, log, telemetry, "
		"port N, shard NAME, front NAME)");
	conf_expect_error(BASE "[port 9]\n", ":11: [port 9]: port index not 0..7");
	conf_expect_error(BASE "[port x]\n", ":11: [port x]: port index not 0..7");
	conf_expect_error(BASE "[shard a b]\n", ":11: [shard a b]: shard name "
		"not [A-Za-z0-9_-]{1,31}");
	conf_expect_error(BASE "[port  0]\n", ":11: [port  0]: port 0 defined "
		"twice");
	conf_expect_error(BASE "[shard  a]\n", ":11: [shard  a]: shard a defined "
		"twice");
	/* messages quote the section as written */
	conf_expect_error(BASE "[shard  b]\nmodel = m\nlayers = 2\nlisten = 1\n"
		"net_lcores = 1\n", ":13: [shard  b] layers: \"2\": overlaps "
		"[shard a] layers 0-3 of the same model");
}

static void
test_err_values(void **state)
{
	static const struct {
		const char *line;	/* added as line 11 of [shard a] */
		const char *want;
	} t[] = {
		{ "f16 = maybe", "[shard a] f16: \"maybe\": not on or off" },
		{ "max_body = 1T", "[shard a] max_body: \"1T\": not a size "
		  "(bytes, or with K, M, G)" },
		{ "max_body = 8G", "[shard a] max_body: \"8G\": out of range "
		  "1..4294967296 bytes" },
		{ "max_header = 100", "[shard a] max_header: \"100\": out of "
		  "range 256..1048576 bytes" },
		{ "pipeline_depth = 0", "[shard a] pipeline_depth: \"0\": out "
		  "of range 1..1024" },
		{ "pipeline_depth = -1", "[shard a] pipeline_depth: \"-1\": "
		  "not a number" },
		{ "batch_wait_us = 99999999999999999999", "[shard a] "
		  "batch_wait_us: \"99999999999999999999\": number too large" },
		{ "split_min_rows = 65537", "[shard a] split_min_rows: "
		  "\"65537\": out of range 0..65536" },
		{ "split_min_rows = 2x", "[shard a] split_min_rows: \"2x\": "
		  "not a number" },
		{ "numa_node = 32", "[shard a] numa_node: \"32\": out of range "
		  "0..31" },
		{ "q6k_layout = llama", "[shard a] q6k_layout: \"llama\": not "
		  "private or ggml" },
		{ "api_key =", "[shard a] api_key: empty value" },
		{ "api_key = a b", "[shard a] api_key: not a bearer token "
		  "(A-Z a-z 0-9 - . _ ~ + / and trailing =)" },
		{ "port = 1", "[shard a] port: \"1\": no [port 1] section" },
		{ "idle_timeout_ms = 86400001", "[shard a] idle_timeout_ms: "
		  "\"86400001\": out of range 1..86400000" },
		{ "idle_timeout_ms = 0", "[shard a] idle_timeout_ms: "
		  "\"0\": out of range 1..86400000" },
		{ "body_timeout_ms = 0", "[shard a] body_timeout_ms: "
		  "\"0\": out of range 1..3600000" },
		{ "body_timeout_ms = 3600001", "[shard a] body_timeout_ms: "
		  "\"3600001\": out of range 1..3600000" },
		{ "body_min_rate = 1000000001", "[shard a] body_min_rate: "
		  "\"1000000001\": out of range 0..1000000000" },
		{ "body_min_rate = 5k", "[shard a] body_min_rate: \"5k\": "
		  "not a number" },
		{ "send_timeout_ms = 0", "[shard a] send_timeout_ms: "
		  "\"0\": out of range 1..86400000" },
		{ "send_timeout_ms = 86400001", "[shard a] send_timeout_ms: "
		  "\"86400001\": out of range 1..86400000" },
		{ "send_timeout_ms = 1m", "[shard a] send_timeout_ms: "
		  "\"1m\": not a number" },
		{ "rate_limit = 100", "[shard a] rate_limit: \"100\": not a "
		  "rate \"N/sec\", \"N/min\" or \"N/hour\"" },
		{ "rate_limit = 100/day", "[shard a] rate_limit: \"100/day\": "
		  "not a rate \"N/sec\", \"N/min\" or \"N/hour\"" },
		{ "rate_limit = 10/s", "[shard a] rate_limit: \"10/s\": not a "
		  "rate \"N/sec\", \"N/min\" or \"N/hour\"" },
		{ "rate_limit = 0/sec", "[shard a] rate_limit: \"0/sec\": N "
		  "out of range 1..1000000000" },
		{ "rate_limit = 1000000001/hour", "[shard a] rate_limit: "
		  "\"1000000001/hour\": N out of range 1..1000000000" },
		{ "rate_limit = /min", "[shard a] rate_limit: \"/min\": not a "
		  "rate \"N/sec\", \"N/min\" or \"N/hour\"" },
		{ "trust_forwarded_for = on", "[shard a] trust_forwarded_for: "
		  "\"on\": only the rate limit reads X-Forwarded-For: set "
		  "rate_limit too, or drop this key" },
		{ "trust_forwarded_for = sometimes", "[shard a] "
		  "trust_forwarded_for: \"sometimes\": not on or off" },
	};
	char text[1024], want[512];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(text, sizeof(text), "%s%s\n", BASE, t[i].line);
		snprintf(want, sizeof(want), ":11: %s", t[i].want);
		conf_expect_error(text, want);
	}
}

static void
test_err_layers(void **state)
{
	conf_expect_error(EAL PORT0 "[shard a]\nmodel = m\nlayers = 5-2\n",
		":8: [shard a] layers: \"5-2\": first > last");
	conf_expect_error(EAL PORT0 "[shard a]\nmodel = m\nlayers = 0..3\n",
		":8: [shard a] layers: \"0..3\": not a layer range "
		"\"first-last\"");
	conf_expect_error(EAL PORT0 "[shard a]\nmodel = m\nlayers = 1-70000\n",
		":8: [shard a] layers: \"1-70000\": layer 70000 beyond 65535");
}

static void
test_err_lcores(void **state)
{
	static const struct {
		const char *v;
		const char *why;
	} t[] = {
		{ "0-3,x", "not an lcore list (e.g. 0-3,5)" },
		{ "0-", "not an lcore list (e.g. 0-3,5)" },
		{ "0 1", "not an lcore list (e.g. 0-3,5)" },
		{ "3-1", "lcore range first > last" },
		{ "1,0-2", "lcore 1 listed twice" },
		{ "128", "lcore 128 beyond 127" },
	};
	char text[512], want[256];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(text, sizeof(text), EAL PORT0 "[shard a]\n"
			"net_lcores = %s\n", t[i].v);
		snprintf(want, sizeof(want), ":7: [shard a] net_lcores: "
			"\"%s\": %s", t[i].v, t[i].why);
		conf_expect_error(text, want);
	}
}

static void
test_err_cross_unit(void **state)
{
	struct conf c;

	/* same model (trailing '/' ignored): layer ranges must not overlap */
	conf_expect_error(EAL PORT0 "[shard a]\nmodel = m\nlayers = 0-15\n"
		"listen = 1\nnet_lcores = 0\n[shard b]\nmodel = m/\n"
		"layers = 10-20\nlisten = 2\nnet_lcores = 1\n",
		":13: [shard b] layers: \"10-20\": overlaps [shard a] layers "
		"0-15 of the same model");
	/* another model may overlap */
	conf_expect_ok(EAL PORT0 "[shard a]\nmodel = m\nlayers = 0-15\n"
		"listen = 1\nnet_lcores = 0\n[shard b]\nmodel = n\n"
		"layers = 10-20\nlisten = 2\nnet_lcores = 1\n", &c);
	conf_free(&c);
	/* listen ports unique per port */
	conf_expect_error(BASE "[shard b]\nmodel = m\nlayers = 4\nlisten = 8080\n"
		"net_lcores = 1\n", ":14: [shard b] listen: \"8080\": already "
		"used by [shard a] on [port 0]");
	conf_expect_ok(BASE "[port 1]\ndevice = net_tap1\n"
		"address = 198.18.11.2/24\n[shard b]\nmodel = m\nlayers = 4\n"
		"listen = 8080\nport = 1\nnet_lcores = 1\n", &c);
	assert_int_equal(c.ports[1].rx_queues, 1);
	conf_free(&c);
	/* an lcore belongs to one unit */
	conf_expect_error(BASE "[shard b]\nmodel = m\nlayers = 4\nlisten = 1\n"
		"net_lcores = 1-2\nworker_lcores = 0\n",
		":16: [shard b] worker_lcores: \"0\": lcore 0 already used by "
		"[shard a]");
	conf_expect_error(BASE "[shard b]\nmodel = m\nlayers = 4\nlisten = 1\n"
		"net_lcores = 0\n", ":15: [shard b] net_lcores: \"0\": lcore 0 "
		"already used by [shard a]");
	/* net and worker lcores of a unit: equal (single) or disjoint */
	conf_expect_error(BASE "worker_lcores = 0-1\n",
		":11: [shard a] worker_lcores: \"0-1\": lcore 0 is also a "
		"network lcore (the same list for both means single-lcore "
		"mode)");
	conf_expect_ok(BASE "worker_lcores = 0\n", &c);
	assert_true(c.units[0].single_lcore);
	conf_free(&c);
}

static void
test_err_ports(void **state)
{
	conf_expect_error(EAL PORT0 "gateway = 198.18.11.1\n" UNIT_A,
		":6: [port 0] gateway: \"198.18.11.1\": not another host of "
		"198.18.10.2/24");
	conf_expect_error(EAL PORT0 "gateway = 198.18.10.2\n" UNIT_A,
		":6: [port 0] gateway: \"198.18.10.2\": not another host of "
		"198.18.10.2/24");
	conf_expect_error(EAL "[port 0]\ndevice = x\naddress = 198.18.10.0/24\n",
		":5: [port 0] address: \"198.18.10.0/24\": network or "
		"broadcast address of its subnet");
	conf_expect_error(EAL "[port 0]\ndevice = x\naddress = 198.18.10.2\n",
		":5: [port 0] address: \"198.18.10.2\": not address/prefix "
		"(e.g. 198.18.10.2/24)");
	conf_expect_error(EAL "[port 0]\ndevice = x\naddress = 198.18.010.2/24\n",
		":5: [port 0] address: \"198.18.010.2/24\": not an IPv4 "
		"address");
	conf_expect_error(EAL "[port 0]\ndevice = x\naddress = 224.0.0.1/24\n",
		":5: [port 0] address: \"224.0.0.1/24\": not a unicast host "
		"address");
	conf_expect_error(EAL "[port 0]\ndevice = x\naddress = 1.2.3.4/33\n",
		":5: [port 0] address: \"1.2.3.4/33\": prefix length not 1..32");
	conf_expect_error(BASE "[port 1]\ndevice = net_tap0\n"
		"address = 198.18.11.2/24\n", ":12: [port 1] device: "
		"\"net_tap0\": already used by [port 0]");
	conf_expect_error(BASE "[port 1]\ndevice = net_tap1\n"
		"address = 198.18.10.2/24\n", ":13: [port 1] address: "
		"\"198.18.10.2/24\": already used by [port 0]");
	conf_expect_error(EAL PORT0 "rx_queues = 2\n" UNIT_A,
		":6: [port 0] rx_queues: \"2\": must be 1: one per network "
		"lcore on this port");
	conf_expect_error(EAL PORT0 "mtu = 10000\n" UNIT_A,
		":6: [port 0] mtu: \"10000\": out of range 68..9000");
}

static void
test_err_no_file(void **state)
{
	struct conf c;
	char err[CONF_ERR_MAX];

	assert_int_equal(conf_load("/nonexistent/x.conf", &c, err,
		sizeof(err)), -ENOENT);
	assert_string_equal(err, "/nonexistent/x.conf: No such file or "
		"directory");
}

/* --- runtime checks with fake facts ------------------------------------ */

struct fake {
	int split;		/* first lcore of node 1 */
	int max_lcore;		/* lcores beyond are not enabled */
	int layers;
	const char *missing_dev;
	const char *bad_mtu_dev;	/* port_check refuses its mtu */
};

static int
fake_socket(unsigned int l, void *arg)
{
	const struct fake *f = arg;

	if ((int)l > f->max_lcore)
		return -1;
	return (int)l >= f->split ? 1 : 0;
}

static int
fake_port(const char *dev, void *arg)
{
	const struct fake *f = arg;

	return f->missing_dev && strcmp(dev, f->missing_dev) == 0 ?
		-ENODEV : 0;
}

static int
fake_layers(const char *dir, void *arg, char *why, size_t n)
{
	const struct fake *f = arg;

	if (f->layers < 0) {
		snprintf(why, n, "no index.json in %s", dir);
		return -ENOENT;
	}
	return f->layers;
}

static int
fake_port_check(const struct conf_port *p, void *arg, const char **key,
		char *why, size_t n)
{
	const struct fake *f = arg;

	if (f->bad_mtu_dev == NULL || strcmp(p->device, f->bad_mtu_dev) != 0)
		return 0;
	*key = "mtu";
	snprintf(why, n, "%u is above the interface's", p->mtu);
	return -EINVAL;
}

static int
check(const char *name, struct fake *fk, char *err)
{
	struct conf c;
	struct conf_facts f = { fake_socket, fake_port, fake_layers, fk,
				fake_port_check };
	int rc;

	conf_load_shipped(name, &c);
	rc = conf_check_runtime(&c, &f, err, CONF_ERR_MAX);
	conf_free(&c);
	return rc;
}

static void
test_runtime(void **state)
{
	struct fake fk = { .split = 32, .max_lcore = 63, .layers = 32 };
	char err[CONF_ERR_MAX];

	/* every shipped config passes on a machine that fits it */
	assert_int_equal(check("two-numa.conf", &fk, err), 0);
	assert_int_equal(check("two-host-a.conf", &fk, err), 0);
	assert_int_equal(check("two-host-b.conf", &fk, err), 0);
	assert_int_equal(check("tap-dev.conf", &fk, err), 0);
	fk.split = 35;	/* workers 34-39 of node1 partly on node 0 */
	assert_int_equal(check("two-numa.conf", &fk, err), -EINVAL);
	assert_string_equal(err, CONFIGS_DIR "/two-numa.conf:63: "
		"[shard node1] worker_lcores: \"34-39\": lcore 34 is on NUMA "
		"node 0, not numa_node 1");
	fk.split = 32;
	fk.max_lcore = 35;
	assert_int_equal(check("two-numa.conf", &fk, err), -EINVAL);
	assert_string_equal(err, CONFIGS_DIR "/two-numa.conf:63: "
		"[shard node1] worker_lcores: \"34-39\": lcore 36 is not "
		"enabled in EAL (see [eal] args -l)");
	fk.max_lcore = 63;
	fk.layers = 16;
	assert_int_equal(check("two-numa.conf", &fk, err), -EINVAL);
	assert_string_equal(err, CONFIGS_DIR "/two-numa.conf:58: "
		"[shard node1] layers: \"16-31\": the model has 16 layers "
		"(0-15)");
	fk.layers = -1;
	assert_int_equal(check("two-numa.conf", &fk, err), -EINVAL);
	assert_string_equal(err, CONFIGS_DIR "/two-numa.conf:42: "
		"[shard node0] model: \"/srv/models/model.vindex\": no "
		"index.json in /srv/models/model.vindex");
	fk.layers = 32;
	fk.missing_dev = "0000:af:00.0";
	assert_int_equal(check("two-numa.conf", &fk, err), -EINVAL);
	assert_string_equal(err, CONFIGS_DIR "/two-numa.conf:36: [port 1] "
		"device: \"0000:af:00.0\": no such port in EAL (bound to a "
		"DPDK driver? vdev in [eal] args?)");
	/* a --vdev EAL was asked for but has no port: its PMD refused it */
	fk.missing_dev = "net_tap0";
	assert_int_equal(check("tap-dev.conf", &fk, err), -EINVAL);
	assert_string_equal(err, CONFIGS_DIR "/tap-dev.conf:32: [port 0] "
		"device: \"net_tap0\": its --vdev in [eal] args did not "
		"probe: the PMD's message above says why");
	/* port_check's refusal names the key it gives, on its line */
	fk.missing_dev = NULL;
	fk.bad_mtu_dev = "net_tap0";
	assert_int_equal(check("tap-dev.conf", &fk, err), -EINVAL);
	assert_string_equal(err, CONFIGS_DIR "/tap-dev.conf:35: [port 0] "
		"mtu: \"1500\": 1500 is above the interface's");
	fk.bad_mtu_dev = NULL;
	/* single-lcore mode: the one lcore must be on the node */
	fk.split = 0;
	assert_int_equal(check("tap-dev.conf", &fk, err), -EINVAL);
	assert_non_null(strstr(err, "[shard demo] net_lcores: \"0\": lcore 0 "
		"is on NUMA node 1, not numa_node 0"));
}

/* --- plan and argv ------------------------------------------------------ */

static void
test_plan(void **state)
{
	struct conf c;
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	conf_load_shipped("two-numa.conf", &c);
	conf_print_plan(&c, f);
	fclose(f);
	assert_non_null(strstr(buf, "  port 0: 0000:3b:00.0  192.0.2.10/24  "
		"gateway 192.0.2.1  rxq 2 txq 2  mtu 9000  vlan none\n"));
	assert_non_null(strstr(buf, "  shard node1: 198.51.100.20:8080 "
		"(port 1)\n    model /srv/models/model.vindex, layers 16-31 "
		"(16), q6k layout private\n    NUMA node 1; network lcores "
		"32-33; worker lcores 34-39\n    wire: f32, f16 on, i8 off; "
		"batches of up to 64 rows, wait 200 us\n    layer split: "
		"jobs of 8+ rows, each layer's features across 6 workers\n"
		"    limits: body "
		"64 MiB, header 8 KiB, 4096 connections, pipeline 16, idle "
		"60000 ms, header 10000 ms, body 20000 ms (+1 s per 500 "
		"bytes), send 60000 ms; auth Bearer key\n"));
	assert_non_null(strstr(buf, "network lcores 1-2; worker lcores "
		"3-7\n    wire: f32, f16 on, i8 off; batches of up to 64 rows, "
		"wait 200 us\n    layer split: off\n"));
	free(buf);
	conf_free(&c);
	buf = NULL;
	f = open_memstream(&buf, &n);
	conf_load_shipped("tap-dev.conf", &c);
	conf_print_plan(&c, f);
	fclose(f);
	assert_non_null(strstr(buf, "    NUMA node 0; lcores 0: network and "
		"compute (single-lcore mode)\n"));
	free(buf);
	conf_free(&c);
}

static void
test_eal_argv(void **state)
{
	struct conf c;
	char buf[CONF_STR_MAX], *argv[16];

	conf_expect_ok("[eal]\nargs =  -l 0-1\t--vdev \"net_tap0,iface=a b\" "
		"-m 512 \n" PORT0 UNIT_A, &c);
	assert_int_equal(conf_eal_argv(&c, "ffn-shard", buf, argv, 16), 7);
	assert_string_equal(argv[0], "ffn-shard");
	assert_string_equal(argv[1], "-l");
	assert_string_equal(argv[2], "0-1");
	assert_string_equal(argv[3], "--vdev");
	assert_string_equal(argv[4], "net_tap0,iface=a b");
	assert_string_equal(argv[5], "-m");
	assert_string_equal(argv[6], "512");
	assert_int_equal(conf_eal_argv(&c, "ffn-shard", buf, argv, 4),
		-E2BIG);
	conf_free(&c);
}

static const char *
env_i8_only(const char *name)
{
	return strcmp(name, "LARQL_I8_WIRE") == 0 ? "" : NULL;
}

static const char *
env_both(const char *name)
{
	return "0";	/* presence counts, not the value */
}

static void
test_wire_env(void **state)
{
	struct conf c;

	conf_load_shipped("two-numa.conf", &c);
	assert_int_equal(conf_apply_wire_env(&c, env_i8_only), 1);
	assert_true(c.units[0].i8 && c.units[1].i8);
	assert_true(c.units[0].f16 && c.units[1].f16);
	assert_int_equal(conf_apply_wire_env(&c, env_both), 2);
	assert_false(c.units[0].f16 || c.units[1].f16);
	conf_free(&c);
	conf_load_shipped("tap-dev.conf", &c);
	unsetenv("LARQL_I8_WIRE");
	unsetenv("LARQL_F16_WIRE_DISABLE");
	assert_int_equal(conf_apply_wire_env(&c, NULL), 0);
	assert_false(c.units[0].i8);
	setenv("LARQL_F16_WIRE_DISABLE", "", 1);
	assert_int_equal(conf_apply_wire_env(&c, NULL), 1);
	assert_false(c.units[0].f16);
	unsetenv("LARQL_F16_WIRE_DISABLE");
	conf_free(&c);
}

/* --- experts (spec/moe.md §2, issue 23) -------------------------------- */

#define UNIT_X "[shard x]\nmodel = m\nlisten = 8080\nnet_lcores = 0\n"
								/* 6-9 */

static void
test_experts_keys(void **state)
{
	struct conf c;

	(void)state;
	/* layers optional with experts: an expert-only unit */
	conf_expect_ok(EAL PORT0 UNIT_X "experts =  2 - 5 \n", &c);
	assert_false(c.units[0].has_layers);
	assert_true(c.units[0].has_experts);
	assert_int_equal(c.units[0].expert_first, 2);
	assert_int_equal(c.units[0].expert_last, 5);
	assert_true(c.units[0].f16_guard);	/* on by default */
	assert_string_equal(c.units[0].expert_units, "");
	conf_free(&c);
	conf_expect_ok(EAL PORT0 UNIT_X "expert_units = u.json\n"
		  "f16_guard = off\n", &c);
	assert_false(c.units[0].has_experts);
	assert_string_equal(c.units[0].expert_units, "u.json");
	assert_false(c.units[0].f16_guard);
	conf_free(&c);
	/* dense and experts in one unit; a dense unit says it has layers */
	conf_expect_ok(BASE "experts = 7\n", &c);
	assert_true(c.units[0].has_layers);
	assert_int_equal(c.units[0].expert_first, 7);
	assert_int_equal(c.units[0].expert_last, 7);
	conf_free(&c);
	/* two expert-only units of one model do not "overlap" in layers */
	conf_expect_ok(EAL PORT0 UNIT_X
		  "experts = 0-3\n[shard y]\nmodel = m\nlisten = 8081\n"
		  "net_lcores = 1\nexperts = 4-7\n", &c);
	conf_free(&c);
	conf_expect_error(EAL PORT0 UNIT_X, ":6: [shard x]: missing required "
		"key \"layers\" (or experts / expert_units for an "
		"expert-only unit)");
	conf_expect_error(EAL PORT0 UNIT_X "experts = 0-3\nexpert_units = u\n",
		":11: [shard x] expert_units: \"u\": experts and "
		"expert_units are mutually exclusive \u2014 use experts for "
		"layer-uniform ranges, expert_units for fine-grained "
		"ownership");
	conf_expect_error(EAL PORT0 UNIT_X "experts = 5-2\n",
		":10: [shard x] experts: \"5-2\": first > last");
	conf_expect_error(EAL PORT0 UNIT_X "experts = 1-\n",
		":10: [shard x] experts: \"1-\": not an expert range "
		"\"first-last\"");
	conf_expect_error(EAL PORT0 UNIT_X "experts = a\n",
		":10: [shard x] experts: \"a\": not an expert range "
		"\"first-last\"");
	conf_expect_error(EAL PORT0 UNIT_X "experts = 0-4294967296\n",
		":10: [shard x] experts: \"0-4294967296\": expert id beyond "
		"4294967295");
	conf_expect_error(EAL PORT0 UNIT_X "experts = 1\nf16_guard = sure\n",
		":11: [shard x] f16_guard: \"sure\": not on or off");
}

static int
fake_experts(const struct conf_unit *u, void *arg, const char **key,
	     char *why, size_t n)
{
	(void)arg;
	if (strcmp(u->name, "x") != 0)
		return 0;
	*key = "model";
	snprintf(why, n, "not a hybrid-MoE vindex");
	return -EINVAL;
}

static void
test_experts_runtime(void **state)
{
	struct fake fk = { .split = 32, .max_lcore = 63, .layers = 32 };
	struct conf_facts f = { fake_socket, fake_port, fake_layers, &fk,
				fake_port_check, fake_experts };
	char err[CONF_ERR_MAX];
	const char *path;
	struct conf c;

	(void)state;
	/* the shipped expert config: a dense+experts and an expert-only
	 * unit, both through the callback */
	conf_load_shipped("experts-dev.conf", &c);
	assert_false(c.units[1].has_layers);
	assert_int_equal(c.units[1].expert_first, 8);
	assert_int_equal(conf_check_runtime(&c, &f, err, sizeof(err)), 0);
	conf_free(&c);
	/* the callback's refusal names its key, on that key's line; an
	 * expert-only unit's missing layers are not checked against the
	 * model */
	path = write_tmp(EAL PORT0 UNIT_X "experts = 0-3\n");
	assert_int_equal(conf_load(path, &c, err, sizeof(err)), 0);
	unlink(path);
	assert_int_equal(conf_check_runtime(&c, &f, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, ":7: [shard x] model: \"m\": not a "
			       "hybrid-MoE vindex"));
	conf_free(&c);
	/* not called for a unit without experts */
	path = write_tmp(BASE);
	assert_int_equal(conf_load(path, &c, err, sizeof(err)), 0);
	unlink(path);
	c.units[0].name[0] = 'x';
	assert_int_equal(conf_check_runtime(&c, &f, err, sizeof(err)), 0);
	conf_free(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_experts_keys),
		cmocka_unit_test(test_experts_runtime),
		cmocka_unit_test(test_shipped_tap_dev),
		cmocka_unit_test(test_shipped_two_numa),
		cmocka_unit_test(test_shipped_two_host),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_err_syntax),
		cmocka_unit_test(test_err_long_line),
		cmocka_unit_test(test_err_missing),
		cmocka_unit_test(test_err_unknown),
		cmocka_unit_test(test_err_values),
		cmocka_unit_test(test_err_layers),
		cmocka_unit_test(test_err_lcores),
		cmocka_unit_test(test_err_cross_unit),
		cmocka_unit_test(test_err_ports),
		cmocka_unit_test(test_err_no_file),
		cmocka_unit_test(test_runtime),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_eal_argv),
		cmocka_unit_test(test_wire_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
