/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * ffn-routes: the route table shard_routes[] (lib/shard/shard.h), one
 * JSON object per line, for tests that cover every route without a list
 * of their own (tests/e2e/appliance/conformance.py, issue 24):
 *
 *   {"path": "/v1/health", "target": "/v1/health", "method": "GET",
 *    "allow": "GET, HEAD", "auth": false, "body": false}
 *
 * "target" is a request target for the route: its path, with each
 * {parameter} of a pattern route (/v1/expert/{layer}/{expert_id}) as 0.
 * Rows with a path only (SHARD_R_NONE, the unknown path, has none).
 * "allow" is shard_route_allow(path): what a 405 or OPTIONS lists.
 */
#include <stdio.h>
#include <string.h>

#include "http.h"
#include "shard.h"

/* s as a JSON string (RFC 8259 §7); the table's strings are ASCII. */
static void
put_str(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* A target of the route's path: every {parameter} becomes "0". */
static void
put_target(const char *path)
{
	char t[256];
	size_t o = 0;

	for (const char *s = path; *s != '\0' && o + 2 < sizeof(t); s++) {
		if (*s == '{') {
			const char *e = strchr(s, '}');

			if (e != NULL) {
				t[o++] = '0';
				s = e;
				continue;
			}
		}
		t[o++] = *s;
	}
	t[o] = '\0';
	put_str(t);
}

int
main(int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: ffn-routes\n"
			"Prints shard_routes[] as one JSON object per line.\n");
		return 2;
	}
	for (int r = 0; r < SHARD_R_COUNT; r++) {
		const struct shard_route_def *d = &shard_routes[r];
		const char *m = http_method_name(d->method);
		const char *allow;

		if (d->path == NULL)
			continue;
		allow = shard_route_allow(d->path, strlen(d->path));
		fputs("{\"path\": ", stdout);
		put_str(d->path);
		fputs(", \"target\": ", stdout);
		put_target(d->path);
		fputs(", \"method\": ", stdout);
		put_str(m != NULL ? m : "");
		fputs(", \"allow\": ", stdout);
		put_str(allow != NULL ? allow : "");
		printf(", \"auth\": %s, \"body\": %s}\n",
		       d->auth ? "true" : "false",
		       d->body ? "true" : "false");
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
