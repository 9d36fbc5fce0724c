/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Helpers shared by the lib/ffn tests: temporary vindex directories.
 */
#ifndef FFN_TEST_UTIL_H
#define FFN_TEST_UTIL_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
tu_rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* Remove a directory tree made by tu_tmpdir(). */
static inline void
tu_rmtree(const char *dir)
{
	nftw(dir, tu_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh directory under /tmp; buf holds its path. */
static inline char *
tu_tmpdir(char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/ffn_test_XXXXXX");
	return mkdtemp(buf);
}

/* Write text (or, when len is given, bytes) to dir/name. */
static inline int
tu_write(const char *dir, const char *name, const void *data, size_t len)
{
	char path[4096];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL)
		return -1;
	n = fwrite(data, 1, len, f);
	fclose(f);
	return n == len ? 0 : -1;
}

static inline int
tu_write_str(const char *dir, const char *name, const char *s)
{
	return tu_write(dir, name, s, strlen(s));
}

static inline int
tu_truncate(const char *dir, const char *name, off_t len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return truncate(path, len);
}

static inline int
tu_unlink(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return unlink(path);
}

#endif /* FFN_TEST_UTIL_H */
