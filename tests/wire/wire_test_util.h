/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Helpers for the lib/wire tests: little-endian body building and hex.
 */
#ifndef WIRE_TEST_UTIL_H
#define WIRE_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bb {
	uint8_t b[4096];
	size_t n;
};

static inline void
bb_u32(struct bb *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b->b[b->n++] = (uint8_t)(v >> (8 * i));
}

static inline void
bb_f32(struct bb *b, float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	bb_u32(b, u);
}

static inline void
bb_u16(struct bb *b, uint16_t v)
{
	b->b[b->n++] = (uint8_t)v;
	b->b[b->n++] = (uint8_t)(v >> 8);
}

static inline void
bb_u8(struct bb *b, uint8_t v)
{
	b->b[b->n++] = v;
}

/* Parse "05000000 01000000 ..." (spaces ignored) into out; returns bytes. */
static inline size_t
hex_bytes(const char *hex, uint8_t *out)
{
	size_t n = 0;

	while (*hex) {
		if (*hex == ' ' || *hex == '\n') {
			hex++;
			continue;
		}
		unsigned int v;

		sscanf(hex, "%2x", &v);
		out[n++] = (uint8_t)v;
		hex += 2;
	}
	return n;
}

/* An exact-size heap copy, so that sanitizers see any over-read. */
static inline uint8_t *
exact_copy(const void *p, size_t n)
{
	uint8_t *c = malloc(n ? n : 1);

	if (n)
		memcpy(c, p, n);
	return c;
}

#endif
