/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The parts of the appliance's data path (shard_server.h) that need no
 * EAL: the drain deadline, and the /metrics text checked against the
 * rules of the Prometheus text format 0.0.4.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shard_server.h"
#include "shard_test_util.h"

/* A second stop request never makes the drain longer, only shorter
 * (app/ffn-shard: a second SIGTERM/Ctrl-C calls it with 0). */
static void
test_drain_deadline(void **state)
{
	uint64_t d;

	(void)state;
	/* The first request: now + drain. */
	d = shard_drain_deadline(1000, 5000, 0, 0);
	assert_true(d == 1000 + 5000000000ull);
	/* Later with the same drain: the first end stays. */
	assert_true(shard_drain_deadline(2000000000ull, 5000, 1, d) == d);
	/* drain 0 while stopping: now. */
	assert_true(shard_drain_deadline(2000000000ull, 0, 1, d) ==
		    2000000000ull);
	/* A shorter drain asked later ends before the first one. */
	assert_true(shard_drain_deadline(2000000000ull, 1000, 1, d) ==
		    3000000000ull);
	/* Not stopping yet: cur means nothing. */
	assert_true(shard_drain_deadline(10, 1, 0, 5) == 10 + 1000000ull);
}

/* The operator's signals (shard_server_signal): the first drains; the
 * same signal delivered twice within SHARD_SIGNAL_DUP_MS (timeout(1)
 * sends TERM to the child and to its group) changes nothing; a second
 * signal after that closes at once. */
static void
test_signal_drain(void **state)
{
	const uint64_t ms = 1000000ull, t0 = 7 * 1000 * ms;

	(void)state;
	assert_int_equal(shard_signal_drain(0, t0, 5000), 5000);
	/* The copy: microseconds later, or just inside the window. */
	assert_int_equal(shard_signal_drain(t0, t0 + 3000, 5000), -1);
	assert_int_equal(shard_signal_drain(t0, t0 +
			 SHARD_SIGNAL_DUP_MS * ms - 1, 5000), -1);
	/* An operator's second signal. */
	assert_int_equal(shard_signal_drain(t0, t0 +
			 SHARD_SIGNAL_DUP_MS * ms, 5000), 0);
	assert_int_equal(shard_signal_drain(t0, t0 + 4000 * ms, 5000), 0);
}

/* ---- /metrics ----------------------------------------------------------
 * prom_check(): the rules of the text format a scraper relies on. Every
 * sample belongs to a family (its name, or for a histogram/summary the
 * name less _bucket/_sum/_count) whose "# HELP" and "# TYPE" came
 * before it; the
 * samples and HELP/TYPE lines of one family form one group (a family
 * never comes back after another began); one TYPE and one HELP per
 * family; no sample name with the same label set twice. 0, or -1 with
 * the line and the rule in why.
 */
#define PC_MAX 512

struct pc_fam {
	char name[128];
	char type[32];
	bool help;
};

static int
prom_check(const char *text, char *why, size_t wlen)
{
	static struct pc_fam fam[PC_MAX];
	static char seen[PC_MAX * 8][512];
	unsigned int nf = 0, ns = 0, lineno = 0;
	int cur = -1;
	const char *p = text;

	while (*p != '\0') {
		const char *nl = strchr(p, '\n');
		char line[512], name[128], kw[8], type[32];
		size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
		int f = -1;

		lineno++;
		if (nl == NULL) {
			snprintf(why, wlen, "line %u: no final newline", lineno);
			return -1;
		}
		if (len >= sizeof(line)) {
			snprintf(why, wlen, "line %u: too long", lineno);
			return -1;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		p = nl + 1;
		if (line[0] == '#') {
			if (sscanf(line, "# %7s %127s %31s", kw, name,
				   type) < 2 || (strcmp(kw, "HELP") != 0 &&
						 strcmp(kw, "TYPE") != 0))
				continue;	/* a comment */
		} else {
			size_t n = strcspn(line, "{ ");
			char *v;

			if (n == 0 || n >= sizeof(name) || line[n] == '\0') {
				snprintf(why, wlen, "line %u: not a sample: "
					 "%.200s", lineno, line);
				return -1;
			}
			memcpy(name, line, n);
			name[n] = '\0';
			v = strrchr(line, ' ');
			if (v == NULL || strtod(v + 1, &v) < 0 || *v != '\0') {
				snprintf(why, wlen, "line %u: no value: %.200s",
					 lineno, line);
				return -1;
			}
			kw[0] = '\0';
		}
		/* the family of this line */
		for (unsigned int i = 0; i < nf && f < 0; i++) {
			size_t fl = strlen(fam[i].name);

			if (strcmp(fam[i].name, name) == 0)
				f = (int)i;
			else if (kw[0] == '\0' &&
				 (strcmp(fam[i].type, "histogram") == 0 ||
				  strcmp(fam[i].type, "summary") == 0) &&
				 strncmp(fam[i].name, name, fl) == 0 &&
				 (strcmp(name + fl, "_bucket") == 0 ||
				  strcmp(name + fl, "_sum") == 0 ||
				  strcmp(name + fl, "_count") == 0))
				f = (int)i;
		}
		if (f < 0) {
			if (kw[0] == '\0') {
				snprintf(why, wlen, "line %u: sample of %s "
					 "without a # TYPE before it", lineno,
					 name);
				return -1;
			}
			if (nf == PC_MAX)
				return -1;
			f = (int)nf++;
			snprintf(fam[f].name, sizeof(fam[f].name), "%s", name);
			fam[f].type[0] = '\0';
			fam[f].help = false;
		} else if (f != cur) {
			snprintf(why, wlen, "line %u: family %s again, after "
				 "%s began: its lines are not one group",
				 lineno, fam[f].name, fam[cur].name);
			return -1;
		}
		cur = f;
		if (strcmp(kw, "TYPE") == 0) {
			if (fam[f].type[0] != '\0') {
				snprintf(why, wlen, "line %u: second # TYPE of "
					 "%s", lineno, name);
				return -1;
			}
			snprintf(fam[f].type, sizeof(fam[f].type), "%s", type);
		} else if (strcmp(kw, "HELP") == 0) {
			if (fam[f].help) {
				snprintf(why, wlen, "line %u: second # HELP of "
					 "%s", lineno, name);
				return -1;
			}
			fam[f].help = true;
		} else {
			/* the sample's name and label set, once */
			size_t k = strcspn(line, " ");

			if (fam[f].type[0] == '\0' || !fam[f].help) {
				snprintf(why, wlen, "line %u: sample of %s "
					 "before its # %s", lineno, name,
					 fam[f].help ? "TYPE" : "HELP");
				return -1;
			}
			line[k] = '\0';
			for (unsigned int i = 0; i < ns; i++)
				if (strcmp(seen[i], line) == 0) {
					snprintf(why, wlen, "line %u: %.200s twice",
						 lineno, line);
					return -1;
				}
			if (ns == PC_MAX * 8)
				return -1;
			snprintf(seen[ns++], sizeof(seen[0]), "%s", line);
		}
	}
	return 0;
}

/* The checker itself: each rule it enforces, broken once. */
static void
test_prom_check_rules(void **state)
{
#define HT(n, t) "# HELP " n " A.\n# TYPE " n " " t "\n"
	static const char *const bad[] = {
		/* no TYPE */
		"# HELP a_total A.\na_total{x=\"1\"} 1\n",
		/* no HELP */
		"# TYPE a_total counter\na_total{x=\"1\"} 1\n",
		/* TYPE after the sample */
		"# HELP a_total A.\na_total 1\n# TYPE a_total counter\n",
		/* a family in two groups (what lcore by lcore printed) */
		HT("a_total", "counter") HT("b_total", "counter")
		"a_total{l=\"0\"} 1\nb_total{l=\"0\"} 1\na_total{l=\"1\"} 1\n",
		/* the same label set twice */
		HT("a_total", "counter")
		"a_total{l=\"0\"} 1\na_total{l=\"0\"} 2\n",
		/* two TYPEs */
		HT("a", "counter") "# TYPE a gauge\na 1\n",
		/* no value */
		HT("a", "counter") "a{l=\"0\"}\n",
	};
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(prom_check(bad[i], why, sizeof(why)), -1);
	assert_int_equal(prom_check(HT("h", "histogram")
		"h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\n"
		"h_count 2\n" HT("g", "gauge") "g 1\n", why, sizeof(why)), 0);
#undef HT
}

/* Two network lcores with something in every counter. */
static void
fake_stats(struct shard_netlc_stats st[2], struct net_stats *ns)
{
	uint64_t *v = (uint64_t *)ns;

	memset(st, 0, 2 * sizeof(*st));
	memset(ns, 0, sizeof(*ns));
	for (unsigned int i = 0; i < 2; i++) {
		uint64_t *t = (uint64_t *)&st[i].tcp;

		st[i].lcore_id = 3 * i + 1;	/* 1 and 4 */
		for (size_t k = 0; k < sizeof(st[i].tcp) / 8; k++)
			t[k] = 100 * (i + 1) + k;
	}
	for (unsigned int i = 0; i < net_stats_count(); i++)
		v[i] = i + 1;
}

static size_t
metrics_extra_fake(void *arg, char *buf, size_t cap)
{
	struct shard_netlc_stats st[2];
	struct net_stats ns;

	(void)arg;
	fake_stats(st, &ns);
	return shard_server_metrics_write(buf, cap, st, 2, &ns);
}

/* Each TCP family once, with HELP and TYPE, over both lcores. */
static void
test_metrics_tcp_two_lcores(void **state)
{
	struct shard_netlc_stats st[2];
	struct net_stats ns;
	static char buf[1 << 16];
	const char *fams[] = {
		"ffn_tcp_segments_total counter", "ffn_tcp_retransmits_total "
		"counter", "ffn_tcp_resets_total counter",
		"ffn_tcp_syncookies_total counter", "ffn_tcp_drops_total counter",
		"ffn_tcp_connections gauge", "ffn_net_total counter",
	};
	char why[256] = "";
	size_t len;

	(void)state;
	fake_stats(st, &ns);
	len = shard_server_metrics_write(buf, sizeof(buf), st, 2, &ns);
	assert_true(len > 0 && len < sizeof(buf));
	assert_int_equal(strlen(buf), len);
	if (prom_check(buf, why, sizeof(why)) < 0)
		fail_msg("%s\n%s", why, buf);
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		char t[96];

		snprintf(t, sizeof(t), "# TYPE %s\n", fams[i]);
		assert_non_null(strstr(buf, t));
	}
	/* both lcores' samples, values from their own counters */
	snprintf(why, sizeof(why), "ffn_tcp_segments_total{lcore=\"4\","
		 "dir=\"out\"} %llu\n", (unsigned long long)st[1].tcp.seg_out);
	assert_non_null(strstr(buf, why));
	snprintf(why, sizeof(why), "ffn_tcp_retransmits_total{lcore=\"1\"} "
		 "%llu\n", (unsigned long long)st[0].tcp.retransmits);
	assert_non_null(strstr(buf, why));
	snprintf(why, sizeof(why), "ffn_tcp_drops_total{lcore=\"4\","
		 "reason=\"%s\"} %llu\n", tcp_drop_reason_name(TCP_DROP_COOKIE),
		 (unsigned long long)st[1].tcp.drops[TCP_DROP_COOKIE]);
	assert_non_null(strstr(buf, why));
}

/* A buffer too small for all of it: whole lines, NUL-terminated. */
static void
test_metrics_tcp_truncated(void **state)
{
	struct shard_netlc_stats st[2];
	struct net_stats ns;
	char buf[300];
	size_t len;

	(void)state;
	fake_stats(st, &ns);
	len = shard_server_metrics_write(buf, sizeof(buf), st, 2, &ns);
	assert_true(len > 0 && len < sizeof(buf));
	assert_int_equal(strlen(buf), len);
	assert_int_equal(buf[len - 1], '\n');
}

/* The whole /metrics text of a unit (shard_metrics_text with the
 * server's counters as its extra) follows the format too. */
static void
test_metrics_whole_text(void **state)
{
	struct shard_unit u;
	char dir[64], why[256] = "", *text;
	size_t len = 0;

	(void)state;
	assert_int_equal(st_write_model(dir, sizeof(dir), 1), 0);
	assert_int_equal(st_unit(&u, dir, -1, -1, NULL), 0);
	u.metrics_extra = metrics_extra_fake;
	text = shard_metrics_text(&u, &len);
	assert_non_null(text);
	assert_non_null(strstr(text, "ffn_requests_total"));
	assert_non_null(strstr(text, "ffn_tcp_connections{lcore=\"4\""));
	if (prom_check(text, why, sizeof(why)) < 0)
		fail_msg("%s\n%s", why, text);
	free(text);
	shard_unit_fini(&u);
	st_rmtree(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drain_deadline),
		cmocka_unit_test(test_signal_drain),
		cmocka_unit_test(test_prom_check_rules),
		cmocka_unit_test(test_metrics_tcp_two_lcores),
		cmocka_unit_test(test_metrics_tcp_truncated),
		cmocka_unit_test(test_metrics_whole_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
