/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * §9.1's vindex_hash: what the reference computes with Rust's
 * DefaultHasher, SipHash-1-3 with both keys 0 (Aumasson and Bernstein,
 * "SipHash: a fast short-input PRF", 2012: c = 1 compression round,
 * d = 3 finalisation rounds).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"

static inline uint64_t
rotl(uint64_t x, unsigned int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND(v0, v1, v2, v3) do {					\
	v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);	\
	v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);	\
} while (0)

static inline uint64_t
le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

uint64_t
grid_siphash13(const void *data, size_t n)
{
	/* The constants XORed with k0 = k1 = 0 ("somepseudorandomlygeneratedbytes"). */
	uint64_t v0 = 0x736f6d6570736575ull, v1 = 0x646f72616e646f6dull;
	uint64_t v2 = 0x6c7967656e657261ull, v3 = 0x7465646279746573ull;
	const uint8_t *p = data;
	uint64_t b = (uint64_t)n << 56, m;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		m = le64(p + i);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (size_t j = 0; i + j < n; j++)
		b |= (uint64_t)p[i + j] << (8 * j);
	v3 ^= b;
	SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

int
grid_vindex_hash(const char *model_id, uint64_t num_layers, char out[17])
{
	size_t len = strlen(model_id);
	uint8_t *buf = malloc(len + 9), *p = buf;

	if (buf == NULL)
		return -ENOMEM;
	/* Rust's Hash for str writes its bytes then 0xff; for usize, its 8
	 * bytes in native (little-endian) order. */
	memcpy(p, model_id, len);
	p += len;
	*p++ = 0xff;
	for (int i = 0; i < 8; i++)
		*p++ = (uint8_t)(num_layers >> (8 * i));
	snprintf(out, 17, "%016llx",
		 (unsigned long long)grid_siphash13(buf, (size_t)(p - buf)));
	free(buf);
	return 0;
}

const char *
grid_model_id(const char *model)
{
	const char *s = strrchr(model, '/');

	return s != NULL ? s + 1 : model;
}
