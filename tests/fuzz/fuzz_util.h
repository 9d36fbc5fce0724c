/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

/*
 * What the harnesses share: an invariant check that survives -DNDEBUG
 * (the project builds release, and a fuzzer that does not stop on a broken
 * invariant finds nothing), and a reader of the leading control bytes each
 * harness takes before the bytes under test.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A broken invariant is a crash: libFuzzer saves the input. */
#define FZ_CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: invariant broken: %s\n", \
			__FILE__, __LINE__, #cond); \
		abort(); \
	} \
} while (0)

/* Control bytes: past the end they read as 0, so every input is valid
 * and a short one is simply a default configuration. */
struct fz {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t
fz_u8(struct fz *f)
{
	uint8_t v = 0;

	if (f->n > 0) {
		v = f->p[0];
		f->p++;
		f->n--;
	}
	return v;
}

static inline uint16_t
fz_u16(struct fz *f)
{
	uint16_t lo = fz_u8(f);

	return lo | (uint16_t)fz_u8(f) << 8;
}

/* A deterministic generator for choices derived from a control seed
 * (split points, buffer sizes): xorshift32, never seeded with 0. */
static inline uint32_t
fz_rand(uint32_t *s)
{
	uint32_t x = *s ? *s : 0x9e3779b9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*s = x;
	return x;
}

/* A copy of n bytes in its own allocation, at an offset of off (0..63)
 * bytes from malloc's alignment: reads past the end hit ASan's redzone
 * and the harness picks the alignment (lib/wire must take any). */
struct fz_buf {
	void *base;
	uint8_t *p;
};

static inline int
fz_buf_copy(struct fz_buf *b, const void *src, size_t n, unsigned int off)
{
	off &= 63;
	/* exactly n bytes after p: no slack for an over-read to hide in */
	b->base = malloc(n + off);
	if (b->base == NULL)
		return -1;
	b->p = (uint8_t *)b->base + off;
	if (n > 0)
		memcpy(b->p, src, n);
	return 0;
}

/* Little-endian u32 and f32 at any alignment (spec/wire.md §3). */
static inline uint32_t
fz_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline float
fz_lef32(const uint8_t *p)
{
	uint32_t u = fz_le32(p);
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* A scratch directory of this process, "fuzz-NAME-XXXXXX" in /dev/shm
 * (files cost no disk there), else in /tmp. */
static inline void
fz_scratch_dir(char *dir, size_t cap, const char *name)
{
	snprintf(dir, cap, "/dev/shm/fuzz-%s-XXXXXX", name);
	if (mkdtemp(dir) == NULL) {
		snprintf(dir, cap, "/tmp/fuzz-%s-XXXXXX", name);
		FZ_CHECK(mkdtemp(dir) != NULL);
	}
}

#endif /* FUZZ_UTIL_H */
