/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_SHARD_PROM_H
#define FFN_SHARD_PROM_H

/*
 * The one Prometheus text writer of lib/shard (exposition format 0.0.4):
 * the unit's families (shard_unit.c) and the network lcores' TCP and net
 * counters (shard_metrics.c) are written through it.
 *
 * The format wants all samples of one family in one group, after its
 * "# HELP" and "# TYPE" lines, and a label set only once; so callers
 * write a family once with all its samples (every lcore's), never lcore
 * by lcore.
 *
 * Two kinds of buffer: a growing heap one (shard_prom_heap), which fails
 * only when memory does, and a caller's fixed one (shard_prom_fixed),
 * which takes whole lines only: a line that does not fit ends the text
 * there, so a reader never sees half a sample.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct shard_prom {
	char *p;
	size_t len, cap;
	bool grow;		/**< heap buffer: realloc as needed */
	bool stop;		/**< full (fixed) or out of memory (heap) */
};

/** Write into buf[cap] (NUL-terminated while there is room). */
void shard_prom_fixed(struct shard_prom *b, char *buf, size_t cap);

/** A heap buffer of cap bytes to start; -ENOMEM. */
int shard_prom_heap(struct shard_prom *b, size_t cap);

/** The heap text and its length; NULL (and freed) when memory ran out. */
char *shard_prom_take(struct shard_prom *b, size_t *len);

/** Room for n more bytes at b->p + b->len (heap buffers grow); false
 * when there is none. The caller adds what it wrote to b->len. */
bool shard_prom_reserve(struct shard_prom *b, size_t n);

/** One line (or several whole ones) of text. */
void shard_prom_line(struct shard_prom *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** A family's "# HELP" and "# TYPE" lines. */
void shard_prom_family(struct shard_prom *b, const char *name,
		       const char *type, const char *help);

/** A family of one counter sample labelled shard="shard". */
void shard_prom_counter(struct shard_prom *b, const char *name,
			const char *help, const char *shard, uint64_t v);

#endif /* FFN_SHARD_PROM_H */
