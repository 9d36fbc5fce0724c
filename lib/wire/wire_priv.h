/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Internal to lib/wire: the §4 model checks shared by the binary and the
 * JSON paths (the reference runs the same validate_residual /
 * collect_scan_layers / validate_owned for both).
 */
#ifndef FFN_WIRE_PRIV_H
#define FFN_WIRE_PRIV_H

#include "wire.h"

/* A layer list in one of the forms the two paths hold. */
struct wire_layers {
	bool present;		/* false: neither 'layer' nor 'layers' */
	size_t n;
	uint32_t single;	/* n == 1 and both lists NULL */
	const uint8_t *le32;	/* binary batch list, unaligned u32 LE */
	const uint64_t *u64;	/* JSON list */
};

int wire_validate_common(const struct wire_model *m, uint64_t seq_len,
			 uint64_t n_values, bool full_output,
			 const struct wire_layers *l, struct wire_error *err);

static inline uint32_t
wire_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline void
wire_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

#endif /* FFN_WIRE_PRIV_H */
