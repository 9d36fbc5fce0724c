/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The Prometheus text writer (shard_prom.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "shard_prom.h"

void
shard_prom_fixed(struct shard_prom *b, char *buf, size_t cap)
{
	b->p = buf;
	b->len = 0;
	b->cap = cap;
	b->grow = false;
	b->stop = cap == 0;
	if (cap > 0)
		buf[0] = '\0';
}

int
shard_prom_heap(struct shard_prom *b, size_t cap)
{
	b->p = malloc(cap);
	b->len = 0;
	b->cap = cap;
	b->grow = true;
	b->stop = b->p == NULL;
	if (b->p == NULL)
		return -ENOMEM;
	b->p[0] = '\0';
	return 0;
}

char *
shard_prom_take(struct shard_prom *b, size_t *len)
{
	char *p = b->p;

	if (b->stop) {
		free(p);
		p = NULL;
	} else {
		*len = b->len;
	}
	b->p = NULL;
	return p;
}

bool
shard_prom_reserve(struct shard_prom *b, size_t n)
{
	size_t cap;
	char *np;

	if (b->stop)
		return false;
	if (n < b->cap - b->len)
		return true;
	if (!b->grow)
		return false;
	cap = b->cap * 2 + n;
	np = realloc(b->p, cap);
	if (np == NULL) {
		b->stop = true;
		return false;
	}
	b->p = np;
	b->cap = cap;
	return true;
}

void
shard_prom_line(struct shard_prom *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->stop)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < b->cap - b->len) {
		b->len += (size_t)n;
		return;
	}
	/* Did not fit: the text ends at the last whole line, unless the
	 * buffer grows (then write it again). */
	b->p[b->len] = '\0';
	if (n < 0 || !shard_prom_reserve(b, (size_t)n + 1)) {
		b->stop = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
shard_prom_family(struct shard_prom *b, const char *name, const char *type,
		  const char *help)
{
	shard_prom_line(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
			type);
}

void
shard_prom_counter(struct shard_prom *b, const char *name, const char *help,
		   const char *shard, uint64_t v)
{
	shard_prom_family(b, name, "counter", help);
	shard_prom_line(b, "%s{shard=\"%s\"} %llu\n", name, shard,
			(unsigned long long)v);
}
