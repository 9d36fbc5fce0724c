/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Helpers shared by the tests of lib/quant: a seeded generator, the list
 * of kernels this CPU offers, bit access to floats.
 */
#ifndef FFN_QUANT_TEST_H
#define FFN_QUANT_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "quant.h"

/* splitmix64: fixed seeds make every failure reproducible. */
static inline uint64_t
qt_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline float
qt_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static inline uint32_t
qt_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/*
 * The SIMD kernels this CPU offers (never the scalar reference, which they
 * are compared with). Returns how many were stored in ks.
 */
static inline int
qt_simd_kernels(const struct quant_kernels *ks[QUANT_ISA_COUNT])
{
	int cnt = 0;

	for (int isa = QUANT_ISA_SCALAR + 1; isa < QUANT_ISA_COUNT; isa++) {
		const struct quant_kernels *k = quant_kernels_get(isa);

		if (k != NULL)
			ks[cnt++] = k;
	}
	return cnt;
}

/* Hex of bytes, for failure messages. */
static inline const char *
qt_hex(const void *p, size_t len, char *buf, size_t cap)
{
	const uint8_t *b = p;
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < len && o + 3 < cap; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%02x", b[i]);
	return buf;
}

#endif /* FFN_QUANT_TEST_H */
