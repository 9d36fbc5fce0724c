/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * conf_check_runtime() with the facts EAL gives (conf_eal_*): a real EAL
 * on one lcore, no PCI, no hugepages, one net_null vdev.
 */

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <rte_eal.h>

#include "conf.h"

static char tmp_path[64];

static int
check_text(const char *text, char *err)
{
	struct conf c;
	struct conf_facts f = { conf_eal_lcore_socket, conf_eal_port_exists,
		NULL, NULL };
	int fd, rc;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/ffn-conf-XXXXXX");
	fd = mkstemp(tmp_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	rc = conf_load(tmp_path, &c, err, CONF_ERR_MAX);
	unlink(tmp_path);
	if (rc != 0)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	rc = conf_check_runtime(&c, &f, err, CONF_ERR_MAX);
	conf_free(&c);
	return rc;
}

#define CONF(dev, lcores) "[eal]\nargs = -l 0\n[port 0]\ndevice = " dev \
	"\naddress = 198.18.10.2/24\n[shard a]\nmodel = m\nlayers = 0\n" \
	"listen = 8080\nnet_lcores = " lcores "\n"

static void
test_eal_facts(void **state)
{
	char err[CONF_ERR_MAX], want[CONF_ERR_MAX];
	uint16_t pid;

	assert_int_equal(check_text(CONF("net_null0", "0"), err), 0);
	assert_int_equal(conf_eal_port_id("net_null0", &pid), 0);
	assert_int_equal(conf_eal_port_id("net_null1", &pid), -ENODEV);
	assert_int_equal(check_text(CONF("net_null1", "0"), err), -EINVAL);
	snprintf(want, sizeof(want), "%s:4: [port 0] device: \"net_null1\": "
		"no such port in EAL (bound to a DPDK driver? vdev in [eal] "
		"args?)", tmp_path);
	assert_string_equal(err, want);
	assert_int_equal(check_text(CONF("net_null0", "0-1"), err), -EINVAL);
	snprintf(want, sizeof(want), "%s:10: [shard a] net_lcores: \"0-1\": "
		"lcore 1 is not enabled in EAL (see [eal] args -l)", tmp_path);
	assert_string_equal(err, want);
	assert_int_equal(conf_eal_lcore_socket(0, NULL), 0);
	assert_int_equal(conf_eal_lcore_socket(1, NULL), -1);
	assert_int_equal(conf_eal_lcore_socket(100000, NULL), -1);
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

int
main(void)
{
	char prefix[64], rundir[1024];
	char *argv[] = { "test_conf_eal", "-l", "0", "--no-pci", "--no-huge",
		"-m", "64", "--no-telemetry", "--file-prefix", prefix,
		"--vdev", "net_null0", "--log-level", "*:error", NULL };
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eal_facts),
	};
	int rc;

	/* a unique runtime directory, removed on the way out */
	snprintf(prefix, sizeof(prefix), "fsconf%d", (int)getpid());
	if (rte_eal_init(14, argv) < 0) {
		fprintf(stderr, "rte_eal_init failed\n");
		return 1;
	}
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rte_eal_cleanup();
	nftw(rundir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	return rc;
}
