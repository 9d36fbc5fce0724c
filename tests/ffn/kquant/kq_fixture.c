/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kq_fixture.h"

struct vw_opts
kq_fixture_opts(unsigned hidden, unsigned layers, const unsigned *widths,
		uint64_t seed)
{
	struct vw_opts o;

	vw_defaults(&o);
	o.hidden = hidden;
	o.layers = layers;
	o.widths = widths;
	o.seed = seed;
	return o;
}

int
kq_fixture_write(char *dir, size_t dirlen, const char *name,
		 const struct vw_opts *o, enum ffn_kq_q6_layout q6)
{
	struct vw_q4k_opts q = { q6, 0 };
	char err[256];

	if ((size_t)snprintf(dir, dirlen, "/tmp/%s-XXXXXX", name) >= dirlen ||
	    mkdtemp(dir) == NULL) {
		perror("kq_fixture_write: mkdtemp");
		return -1;
	}
	if (vw_write_q4k(dir, o, &q, err, sizeof(err)) != 0) {
		fprintf(stderr, "kq_fixture_write %s: %s\n", dir, err);
		return -1;
	}
	return 0;
}

void
kq_fixture_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[512];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}
