/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * Secrets kept out of the config (conf.h, conf_secret_read): a [shard]'s
 * grid_key, a [front]'s shard keys. The one reader of "env:NAME",
 * "file:PATH" and literal keys.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

int
conf_secret_read(const char *spec, char *key, size_t cap, char *why,
		size_t whylen)
{
	size_t n;

	if (strncmp(spec, "env:", 4) == 0) {
		const char *v = getenv(spec + 4);

		if (v == NULL || v[0] == '\0') {
			snprintf(why, whylen, "environment variable %s is "
				"%s", spec + 4, v == NULL ? "not set" :
				"empty");
			return -ENOENT;
		}
		if (strlen(v) >= cap) {
			snprintf(why, whylen, "environment variable %s: "
				"longer than %zu bytes", spec + 4, cap - 1);
			return -EINVAL;
		}
		snprintf(key, cap, "%s", v);
	} else if (strncmp(spec, "file:", 5) == 0) {
		FILE *f = fopen(spec + 5, "re");

		if (f == NULL) {
			snprintf(why, whylen, "fopen(%s): %s", spec + 5,
				strerror(errno));
			return -ENOENT;
		}
		if (fgets(key, (int)cap, f) == NULL)
			key[0] = '\0';
		fclose(f);
		n = strlen(key);
		if (n > 0 && key[n - 1] != '\n' && n == cap - 1) {
			snprintf(why, whylen, "%s: first line longer than "
				"%zu bytes", spec + 5, cap - 2);
			return -EINVAL;
		}
		while (n > 0 && (key[n - 1] == '\n' || key[n - 1] == '\r'))
			key[--n] = '\0';
		if (n == 0) {
			snprintf(why, whylen, "%s: empty first line",
				spec + 5);
			return -EINVAL;
		}
	} else {
		if (spec[0] == '\0' || strlen(spec) >= cap) {
			snprintf(why, whylen, "%s", spec[0] == '\0' ?
				"empty" : "too long");
			return -EINVAL;
		}
		snprintf(key, cap, "%s", spec);
	}
	/* header values (gRPC metadata, HTTP/1.1 Authorization) must be
	 * printable ASCII: no CR/LF that would split a header */
	for (const char *p = key; *p != '\0'; p++)
		if (*p < 0x20 || *p > 0x7e) {
			snprintf(why, whylen, "the key has a byte 0x%02x that "
				"an HTTP header value cannot carry",
				(unsigned char)*p);
			return -EINVAL;
		}
	return 0;
}
