/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * Hostile config files: line endings (CRLF, bare CR, none at the end), a
 * byte order mark, bad numbers, unterminated quotes, unreadable paths, and
 * fixed-seed random damage to a valid file. Every outcome is a load or one
 * error line "FILE:LINE: ..." whose line exists in the file (or "FILE: "
 * for what concerns the whole file); never a crash, a hang or a leak (this
 * test also runs with AddressSanitizer + UBSan, tests/conf/meson.build).
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
#include "conf_test_util.h"
#include "test_rng.h"

static int
load_n(const char *text, size_t n, char *err)
{
	struct conf c;
	const char *path = write_tmp_n(text, n);
	int rc = conf_load(path, &c, err, CONF_ERR_MAX);

	unlink(path);
	if (rc == 0)
		conf_free(&c);
	return rc;
}

/* text must fail with exactly "<path>" + want */
static void
expect_error(const char *text, const char *want)
{
	char err[CONF_ERR_MAX], full[CONF_ERR_MAX + 64];
	int rc = load_n(text, strlen(text), err);

	assert_int_equal(rc, -EINVAL);
	snprintf(full, sizeof(full), "%s%s", tmp_path, want);
	assert_string_equal(err, full);
}

static void
expect_ok(const char *text)
{
	char err[CONF_ERR_MAX];
	int rc = load_n(text, strlen(text), err);

	if (rc != 0)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
}


/* LF, CRLF and a last line without its newline all read the same. */
static void
test_line_endings(void **state)
{
	static const char crlf[] = "[eal]\r\nargs = -l 0-3\r\n[port 0]\r\n"
		"device = net_tap0\r\naddress = 198.18.10.2/24\r\n"
		"[shard a]\r\nmodel = m\r\nlayers = 0-3\r\nlisten = 8080\r\n"
		"net_lcores = 0\r\n";

	expect_ok(crlf);
	expect_ok(BASE "f16 = off");	/* no newline at the end */
	expect_ok(BASE "\n\n   \n# c\n\t# c2\n");
	/* errors keep their line numbers with CRLF */
	expect_error("[eal]\r\nargs = -l 0\r\nargs = x\r\n",
		":3: [eal] args: duplicate key (first at line 2)");
}

/* A CR that does not end a line (old Mac files, pasted text) makes one
 * long line of several: say so, not "text after ']'". */
static void
test_bare_cr(void **state)
{
	expect_error("[eal]\rargs = -l 0\r", ":1: bare CR inside the line "
		"(line endings must be LF or CRLF)");
	expect_error(BASE "listen = 80\r80\n", ":11: bare CR inside the line "
		"(line endings must be LF or CRLF)");
}

/* A UTF-8 byte order mark (some editors write one): named as such. */
static void
test_bom(void **state)
{
	expect_error("\xef\xbb\xbf" BASE, ":1: the file starts with a UTF-8 "
		"byte order mark (save it without one)");
}

/* Numbers: decimal digits only, within range; the value and the key are
 * named. */
static void
test_bad_numbers(void **state)
{
	static const struct {
		const char *line;	/* added as line 11 of [shard a] */
		const char *want;
	} t[] = {
		{ "max_connections = 1e3", "[shard a] max_connections: "
		  "\"1e3\": not a number" },
		{ "max_connections = 0x10", "[shard a] max_connections: "
		  "\"0x10\": not a number" },
		{ "max_connections = -1", "[shard a] max_connections: "
		  "\"-1\": not a number" },
		{ "max_connections = +1", "[shard a] max_connections: "
		  "\"+1\": not a number" },
		{ "max_connections = 1.0", "[shard a] max_connections: "
		  "\"1.0\": not a number" },
		{ "max_connections = 1 000", "[shard a] max_connections: "
		  "\"1 000\": not a number" },
		{ "max_connections = 99999999999999999999",
		  "[shard a] max_connections: \"99999999999999999999\": "
		  "number too large" },
		{ "max_connections = 18446744073709551615",
		  "[shard a] max_connections: \"18446744073709551615\": "
		  "number too large" },
		{ "max_connections = 4294967297", "[shard a] max_connections: "
		  "\"4294967297\": out of range 1..1000000" },
		{ "max_connections =", "[shard a] max_connections: empty "
		  "value" },
		{ "max_connections = \"10\"", "[shard a] max_connections: "
		  "\"\"10\"\": not a number" },
		{ "max_body = 1e3", "[shard a] max_body: \"1e3\": not a size "
		  "(bytes, or with K, M, G)" },
		{ "max_body = 0x10", "[shard a] max_body: \"0x10\": not a size "
		  "(bytes, or with K, M, G)" },
		{ "max_body = 17179869184G", "[shard a] max_body: "
		  "\"17179869184G\": number too large" },
		{ "max_body = 4M4", "[shard a] max_body: \"4M4\": not a size "
		  "(bytes, or with K, M, G)" },
		{ "max_body = 0", "[shard a] max_body: \"0\": out of range "
		  "1..4294967296 bytes" },
		{ "batch_wait_us = ", "[shard a] batch_wait_us: empty value" },
		{ "numa_node = 4294967296", "[shard a] numa_node: "
		  "\"4294967296\": out of range 0..31" },
		{ "port = -0", "[shard a] port: \"-0\": not a number" },
	};
	char text[1024], want[512];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(text, sizeof(text), "%s%s\n", BASE, t[i].line);
		snprintf(want, sizeof(want), ":11: %s", t[i].want);
		expect_error(text, want);
	}
	/* the listen port of 16 bits: 65536 never wraps to 0 */
	expect_error(EAL PORT0 "[shard a]\nmodel = m\nlayers = 0-3\n"
		"listen = 65536\nnet_lcores = 0\n", ":9: [shard a] listen: "
		"\"65536\": out of range 1..65535");
}

/* [eal] args is split at blanks, "double quotes" group: an unterminated
 * quote would silently swallow the rest of the line into one argument. */
static void
test_eal_args_quote(void **state)
{
	expect_error("[eal]\nargs = -l 0 --vdev \"net_tap0,iface=a\n"
		PORT0 UNIT_A, ":2: [eal] args: \"-l 0 --vdev "
		"\"net_tap0,iface=a\": unterminated '\"'");
}

/* What cannot be read is named with the system's reason. */
static void
test_unreadable(void **state)
{
	struct conf c;
	char err[CONF_ERR_MAX], dir[] = "/tmp/ffn-conf-dir-XXXXXX", want[128];

	assert_non_null(mkdtemp(dir));
	assert_int_equal(conf_load(dir, &c, err, sizeof(err)), -EISDIR);
	rmdir(dir);
	snprintf(want, sizeof(want), "%s: Is a directory", dir);
	assert_string_equal(err, want);
	assert_int_equal(conf_load("", &c, err, sizeof(err)), -ENOENT);
}

/* Duplicate checks compare every entry with the earlier ones: a file of
 * a million keys would take hours. A config has a few hundred entries
 * (16 shards of ~25 keys, 8 ports); past 4096 it is refused, at once. */
static void
test_too_many_entries(void **state)
{
	size_t cap = 64 * 6000, n;
	char *text = malloc(cap);

	assert_non_null(text);
	n = snprintf(text, cap, "[eal]\nargs = -l 0\n[shard a]\n");
	for (int i = 0; n + 32 < cap && i < 6000; i++)
		n += snprintf(text + n, cap - n, "k%d = 1\n", i);
	expect_error(text, ":4097: more than 4096 sections and keys");
	/* sections count too */
	n = snprintf(text, cap, "[eal]\nargs = -l 0\n");
	for (int i = 0; n + 32 < cap && i < 6000; i++)
		n += snprintf(text + n, cap - n, "[s%d]\n", i);
	expect_error(text, ":4097: more than 4096 sections and keys");
	/* comments and empty lines are not entries */
	n = snprintf(text, cap, BASE);
	for (int i = 0; n + 32 < cap && i < 5000; i++)
		n += snprintf(text + n, cap - n, "# %d\n\n", i);
	expect_ok(text);
	free(text);
}

static const char interesting[] =
	"[]=#\\\"\n\r \t,-/.0159aAKMxe|:\x00\xff";

/* The outcome of any file: 0, or one line "PATH: ..." or "PATH:N: ..."
 * with 1 <= N <= lines of the file. */
static void
check_outcome(const char *text, size_t n, int rc, const char *err)
{
	size_t plen = strlen(tmp_path), lines = 1;
	const char *p;
	char *end;
	unsigned long line;

	if (rc == 0)
		return;
	assert_true(rc == -EINVAL || rc == -ENOMEM);
	for (size_t i = 0; i < n; i++)
		lines += text[i] == '\n';
	if (strncmp(err, tmp_path, plen) != 0 || err[plen] != ':')
		print_error("error without the path: %s\n", err);
	assert_memory_equal(err, tmp_path, plen);
	assert_int_equal(err[plen], ':');
	assert_null(strchr(err, '\n'));
	p = err + plen + 1;
	if (*p == ' ')		/* about the whole file */
		return;
	line = strtoul(p, &end, 10);
	if (end == p || *end != ':' || line < 1 || line > lines)
		print_error("bad line in: %s (file of %zu lines)\n", err,
			lines);
	assert_true(end > p && *end == ':');
	assert_true(line >= 1 && line <= lines);
	assert_true(strlen(end + 1) > 1);	/* a reason follows */
}

static void
test_random_damage(void **state)
{
	static const char *const seeds[] = {
		BASE,
		EAL "[log]\nlevel = debug\n[telemetry]\nmetrics = off\n"
		PORT0 "gateway = 198.18.10.1\nvlan = 7\nmtu = 9000\n"
		"[port 1]\ndevice = net_tap1\naddress = 198.18.11.2/24\n"
		UNIT_A "worker_lcores = 1-2\napi_key = abc=\n"
		"max_body = 16M\nf16 = on\ni8 = yes\n"
		"[shard b]\nmodel = m/\nlayers = 4-5\nlisten = 8080\n"
		"port = 1\nnet_lcores = 3,4\nq6k_layout = ggml # c\n",
		/* a front (issue 19): layout lines, key overrides */
		EAL PORT0 UNIT_A "[front f]\nlisten = 8081\n"
		"net_lcores = 1\n17 - 33 = 198.18.0.4:8080\n"
		"0-16 = 198.18.0.2:8080 | 198.18.0.3:1\nnum_layers = 34\n"
		"shard_key = env:K\nshard_key 198.18.0.3:1 = file:/k\n"
		"hop_timeout_ms = 900\n",
	};
	uint64_t rng = test_rng_seed(0x853c49e6748fea9bull);
	char buf[2048], err[CONF_ERR_MAX];
	int ok = 0, bad = 0;

	for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		size_t len = strlen(seeds[s]);

		for (int r = 0; r < 700; r++) {
			size_t n = len;
			int m = 1 + test_rng_below(&rng, 4), rc;

			memcpy(buf, seeds[s], n);
			for (int k = 0; k < m; k++) {
				size_t at = test_rng_below(&rng, n);

				switch (test_rng_below(&rng, 5)) {
				case 0:
					buf[at] = interesting[test_rng_below(
						&rng, sizeof(interesting) - 1)];
					break;
				case 1:
					buf[at] = (char)test_rng_u32(&rng);
					break;
				case 2:
					memmove(buf + at, buf + at + 1,
						n - at - 1);
					n--;
					break;
				case 3:	/* repeat a run of bytes */
				{
					size_t run = 1 +
						test_rng_below(&rng, 40);

					if (at + run > n)
						run = n - at;
					if (n + run > sizeof(buf))
						break;
					memmove(buf + at + run, buf + at,
						n - at);
					n += run;
					break;
				}
				case 4:	/* a long run: line limits */
				{
					size_t run = 200 +
						test_rng_below(&rng, 200);

					if (n + run > sizeof(buf))
						break;
					memmove(buf + at + run, buf + at,
						n - at);
					memset(buf + at,
						"a9 #"[test_rng_below(&rng, 4)],
						run);
					n += run;
					break;
				}
				}
			}
			rc = load_n(buf, n, err);
			check_outcome(buf, n, rc, err);
			rc == 0 ? ok++ : bad++;
		}
	}
	/* pure junk: random bytes, then random lines of the INI alphabet */
	for (int r = 0; r < 300; r++) {
		size_t n = test_rng_below(&rng, 600);
		int rc;

		for (size_t i = 0; i < n; i++)
			buf[i] = r % 2 ? (char)test_rng_u32(&rng) :
				interesting[test_rng_below(&rng,
						sizeof(interesting) - 1)];
		rc = load_n(buf, n, err);
		check_outcome(buf, n, rc, err);
		assert_int_not_equal(rc, 0);
	}
	/* the damage reached both outcomes */
	assert_true(ok > 0 && bad > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_endings),
		cmocka_unit_test(test_bare_cr),
		cmocka_unit_test(test_bom),
		cmocka_unit_test(test_bad_numbers),
		cmocka_unit_test(test_eal_args_quote),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_too_many_entries),
		cmocka_unit_test(test_random_damage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
