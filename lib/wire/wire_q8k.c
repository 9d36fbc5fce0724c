/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The Q8_K input route (POST /v1/walk-ffn-q8k). Frames from issue 6:
 * request  u32 n_entries, then per entry u32 layer, u32 n_blocks,
 *          i8 qs[n_blocks*256], f32 d[n_blocks], i16 sums[n_blocks*8];
 * response u32 n_entries, then per entry u32 layer, u32 hidden,
 *          f32 output[hidden].
 * Clients try it before /v1/walk-ffn and fall back on any error
 * (spec/wire.md §2), so every check answers 400 with a JSON error.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "wire.h"

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Bytes of an entry's arrays for n blocks: qs, d, sums. */
static uint64_t
entry_bytes(uint32_t n_blocks)
{
	return (uint64_t)n_blocks * (WIRE_Q8K_BLOCK + 4 + 8 * 2);
}

int
wire_q8k_validate(const void *body, size_t len, const struct wire_model *m,
		  uint32_t *n_entries, struct wire_error *err)
{
	const uint8_t *b = body;
	uint32_t n;
	size_t pos = 4;

	if (!m->loaded) {
		wire_error_set(err, 404, "no model loaded");
		return -ENOENT;
	}
	if (len < 4)
		return wire_error_set(err, 400, "q8k: body too short "
				      "(need \u2265 4 bytes)");
	n = le32(b);
	/* Structure first, so a truncated body is 400 whatever it holds. */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t nb;

		if (len - pos < 8)
			return wire_error_set(err, 400, "q8k: entry %" PRIu32
				" truncated in its header (body of %zu bytes)",
				i, len);
		nb = le32(b + pos + 4);
		if ((uint64_t)nb * WIRE_Q8K_BLOCK != m->hidden)
			return wire_error_set(err, 400, "q8k: entry %" PRIu32
				" has %" PRIu32 " blocks of 256 values, "
				"hidden_size is %" PRIu32, i, nb, m->hidden);
		if (len - pos - 8 < entry_bytes(nb))
			return wire_error_set(err, 400, "q8k: entry %" PRIu32
				" truncated: needs %" PRIu64 " bytes after "
				"its header", i, entry_bytes(nb));
		pos += 8 + (size_t)entry_bytes(nb);
	}
	if (pos != len)
		return wire_error_set(err, 400, "q8k: %zu bytes after the "
				      "last entry", len - pos);
	/* Then every layer owned, then in range, as walk-ffn (§4). */
	for (int pass = 0; pass < 2; pass++) {
		pos = 4;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t layer = le32(b + pos);

			if (pass == 0 && !m->owns_all &&
			    (layer < m->first || layer > m->last))
				return wire_error_set(err, 400, "layer %" PRIu32
					" not served by this shard (owned: %"
					PRIu32 "\u2013%" PRIu32 ")", layer,
					m->first, m->last);
			if (pass == 1 && layer >= m->num_layers)
				return wire_error_set(err, 400, "layer %" PRIu32
					" out of range (num_layers = %" PRIu32
					")", layer, m->num_layers);
			pos += 8 + (size_t)entry_bytes(le32(b + pos + 4));
		}
	}
	*n_entries = n;
	return 0;
}

void
wire_q8k_entry(const void *body, size_t *pos, struct wire_q8k_entry *e)
{
	const uint8_t *p = (const uint8_t *)body + *pos;

	e->layer = le32(p);
	e->n_blocks = le32(p + 4);
	e->qs = (const int8_t *)(p + 8);
	e->d = p + 8 + (size_t)e->n_blocks * WIRE_Q8K_BLOCK;
	*pos += 8 + (size_t)entry_bytes(e->n_blocks);
}

size_t
wire_q8k_resp_size(uint32_t n, uint32_t hidden)
{
	uint64_t per = 8 + 4 * (uint64_t)hidden;

	if (n != 0 && per > (SIZE_MAX - 4) / n)
		return 0;
	return 4 + (size_t)n * (size_t)per;
}

float *
wire_q8k_resp_out(void *buf, uint32_t i, uint32_t hidden)
{
	return (float *)((uint8_t *)buf + 4 + (size_t)i *
			 (8 + 4 * (size_t)hidden) + 8);
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

void
wire_q8k_resp_count(void *buf, uint32_t n)
{
	put32(buf, n);
}

void
wire_q8k_resp_entry(void *buf, uint32_t n, uint32_t i, uint32_t layer,
		    uint32_t hidden)
{
	uint8_t *e = (uint8_t *)wire_q8k_resp_out(buf, i, hidden) - 8;

	put32(buf, n);
	put32(e, layer);
	put32(e + 4, hidden);
}
