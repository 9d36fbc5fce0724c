/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_opt.h"

/* One number at s, up to a stop character ('\0' or ','); *next past it. */
static int
parse_u64(const char *s, char stop, uint64_t *v, const char **next)
{
	char *end;

	/* strtoull skips blanks and takes "-1" as 2^64-1: refuse both. */
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || (*end != '\0' && *end != stop))
		return -EINVAL;
	*next = end;
	return 0;
}

int
tool_opt_u64(const char *tool, const char *opt, const char *arg,
	     uint64_t *out)
{
	const char *next;
	uint64_t v;

	if (parse_u64(arg, '\0', &v, &next) < 0) {
		fprintf(stderr, "%s: %s: \"%s\" is not a whole number\n",
			tool, opt, arg);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int
u32_item(const char *tool, const char *opt, const char *arg, char stop,
	 uint32_t min, uint32_t max, uint32_t *out, const char **next)
{
	uint64_t v;
	int bad = parse_u64(arg, stop, &v, next) < 0;

	if (bad || v < min || v > max) {
		int len = (int)strcspn(arg, stop ? "," : "");

		fprintf(stderr, "%s: %s: \"%.*s\" is not a whole number in "
			"[%u, %u]\n", tool, opt, len, arg, min, max);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

int
tool_opt_u32(const char *tool, const char *opt, const char *arg,
	     uint32_t min, uint32_t max, uint32_t *out)
{
	const char *next;

	return u32_item(tool, opt, arg, '\0', min, max, out, &next);
}

uint32_t
tool_opt_u32_or_exit(const char *tool, const char *opt, const char *arg,
		     uint32_t min, uint32_t max)
{
	uint32_t v;

	if (tool_opt_u32(tool, opt, arg, min, max, &v) < 0)
		exit(2);
	return v;
}

int
tool_opt_u32_list(const char *tool, const char *opt, const char *arg,
		  uint32_t min, uint32_t max, uint32_t *out, unsigned int cap)
{
	const char *s = arg, *next;
	unsigned int n = 0;

	for (;;) {
		if (n == cap) {
			fprintf(stderr, "%s: %s: more than %u items\n", tool,
				opt, cap);
			return -EINVAL;
		}
		if (u32_item(tool, opt, s, ',', min, max, &out[n], &next) < 0)
			return -EINVAL;
		n++;
		if (*next == '\0')
			return (int)n;
		s = next + 1;
	}
}

int
tool_opt_double(const char *tool, const char *opt, const char *arg,
		double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || !isfinite(v) ||
	    v < min || v > max) {
		fprintf(stderr, "%s: %s: \"%s\" is not a number in [%g, %g]\n",
			tool, opt, arg, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}
