/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_TEST_RNG_H
#define FFN_TEST_RNG_H
/*
 * The one pseudo-random source of the unit tests: xorshift64* (Vigna,
 * "An experimental exploration of Marsaglia's xorshift generators",
 * 2016). Deterministic, no libc state, so a failing case replays from
 * its seed. Each test keeps its own state; nothing here is global.
 *
 * Header-only: every function is static inline. A test links
 * test_common_dep (tests/meson.build) and includes "test_rng.h".
 */
#include <stdint.h>

/** A state from a seed: any seed works, 0 is mapped to a fixed one. */
static inline uint64_t
test_rng_seed(uint64_t seed)
{
	return seed ? seed : 0x9e3779b97f4a7c15ull;
}

/** The next 32 bits (the high half of the xorshift64* product). */
static inline uint32_t
test_rng_u32(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return (uint32_t)((*s * 0x2545f4914f6cdd1dull) >> 32);
}

/** Uniform in [0, n), n > 0 (modulo bias is harmless for tests). */
static inline uint32_t
test_rng_below(uint64_t *s, uint32_t n)
{
	return test_rng_u32(s) % n;
}

/** Uniform float in [lo, hi): 24 random mantissa bits. */
static inline float
test_rng_uniform(uint64_t *s, float lo, float hi)
{
	return lo + (hi - lo) * (float)(test_rng_u32(s) >> 8) * 0x1p-24f;
}

#endif /* FFN_TEST_RNG_H */
