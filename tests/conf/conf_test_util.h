/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * What the lib/conf tests share: config text written to a temporary file
 * (conf_load reads paths), and the lines of a minimal valid config.
 */
#ifndef CONF_TEST_UTIL_H
#define CONF_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_path[64];

/* n bytes of text in a new temporary file; its path (unlink it). */
static inline const char *
write_tmp_n(const char *text, size_t n)
{
	int fd;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/ffn-conf-XXXXXX");
	fd = mkstemp(tmp_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
	return tmp_path;
}

static inline const char *
write_tmp(const char *text)
{
	return write_tmp_n(text, strlen(text));
}

#ifdef CONF_TEST_EXPECT
/* Helpers of the tests that load whole configs (test_conf.c,
 * test_conf_grid.c; conf.h first). text must fail with exactly
 * "<path>" + want. */
static inline void
conf_expect_error(const char *text, const char *want)
{
	struct conf c;
	char err[CONF_ERR_MAX], full[CONF_ERR_MAX];
	const char *path = write_tmp(text);
	int rc = conf_load(path, &c, err, sizeof(err));

	unlink(path);	/* before any assert can end the test */
	assert_int_equal(rc, -EINVAL);
	snprintf(full, sizeof(full), "%s%s", path, want);
	assert_string_equal(err, full);
}

/* text loads into c (conf_free it). */
static inline void
conf_expect_ok(const char *text, struct conf *c)
{
	char err[CONF_ERR_MAX];
	const char *path = write_tmp(text);
	int rc = conf_load(path, c, err, sizeof(err));

	unlink(path);
	if (rc != 0)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
}

/* configs/NAME loads into c (CONFIGS_DIR from the build). */
static inline void
conf_load_shipped(const char *name, struct conf *c)
{
	char path[512], err[CONF_ERR_MAX];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", CONFIGS_DIR, name);
	rc = conf_load(path, c, err, sizeof(err));
	if (rc != 0)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
}
#endif

/* A minimal valid config; the comments give the line numbers. */
#define EAL "[eal]\nargs = -l 0-3 --no-pci\n"			/* 1-2 */
#define PORT0 "[port 0]\ndevice = net_tap0\naddress = 198.18.10.2/24\n"
								/* 3-5 */
#define UNIT_A "[shard a]\nmodel = m\nlayers = 0-3\nlisten = 8080\n" \
	"net_lcores = 0\n"					/* 6-10 */
#define BASE EAL PORT0 UNIT_A

#endif
