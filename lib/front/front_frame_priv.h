/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_FRONT_FRAME_PRIV_H
#define FFN_FRONT_FRAME_PRIV_H

/*
 * Helpers shared by front_plan.c, front_merge.c and front_json.c; not part
 * of the contract (front_frame.h).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "front_frame.h"

/* Frames are little-endian and bodies may be unaligned (spec/wire.md §3):
 * byte-wise, never a cast. */
static inline uint32_t
front_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline void
front_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Round up to the 64 bytes every front_alloc block is aligned to. */
static inline size_t
front_align64(size_t v)
{
	return (v + 63) & ~(size_t)63;
}

/*
 * A forward cursor over a gather: reading results in order costs one walk
 * over the ranges, not one per result. pos is the offset of range i.
 */
struct front_gcur {
	const struct front_gather *g;
	unsigned int i;
	size_t pos;
};

void front_gcur_init(struct front_gcur *c, const struct front_gather *g);
/* As front_gather_copy / front_gather_ranges, from the cursor: off must
 * not be below the offset of the last range used (seeks forward only). */
int front_gcur_copy(struct front_gcur *c, size_t off, void *dst, size_t len);
int front_gcur_ranges(struct front_gcur *c, size_t off, size_t len,
		      struct iovec *out, unsigned int cap);

/* ---- JSON scanner (front_json_scan.c) ----------------------------------- */

/* Bytes b[0, len), read from i. */
struct front_jscan {
	const char *b;
	size_t len, i;
};

/* A member of an object: offsets into the scanned bytes. */
struct front_jmember {
	size_t key, key_len;	/* the key with its quotes */
	size_t val, val_len;	/* the value, no surrounding space */
};

/* serde_json allows 127 levels of nesting (its remaining_depth of 128
 * must stay above 0): a container inside 127 others is refused */
#define FRONT_JSON_MAX_DEPTH 127

/* Skip JSON whitespace. */
void front_jws(struct front_jscan *s);
/* Whether the next byte is c. */
bool front_jat(const struct front_jscan *s, char c);
/* Pass one value at s->i (no leading space) inside depth containers;
 * 0, or -1 on a syntax error. */
int front_jvalue(struct front_jscan *s, int depth);
/* Walk an object: front_jopen() passes space and '{' (0 or -1); then
 * front_jnext() gives 1 and *m per member (first: true for the first
 * call), 0 after the '}', -1 on a syntax error; front_jend() checks that
 * only space follows (0 or -1). */
int front_jopen(struct front_jscan *s);
int front_jnext(struct front_jscan *s, bool first, struct front_jmember *m);
int front_jend(struct front_jscan *s);
/* Whether m's key unescapes to the ASCII name ("lay\u0065r" is "layer",
 * as serde compares decoded keys). */
bool front_jkey_is(const char *b, const struct front_jmember *m,
		   const char *name);
/* serde's as_u64() of a number's text: the value of an integer without
 * sign, fraction or exponent that fits u64; else 0 (unwrap_or(0)). */
uint64_t front_jas_u64(const char *v, size_t len);

#endif /* FFN_FRONT_FRAME_PRIV_H */
