/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* The expected answer frame (lg_frame.h), spec/wire.md §5.2. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "larql_client.h"
#include "lg_frame.h"

static void
put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static int
add_check(struct lg_frame *f, uint32_t off, const uint32_t *v, unsigned int n)
{
	struct lg_check *c = realloc(f->chk, (f->nchk + 1) * sizeof(*c));

	if (c == NULL)
		return -ENOMEM;
	f->chk = c;
	c = &f->chk[f->nchk++];
	c->off = off;
	c->len = 4 * n;
	for (unsigned int i = 0; i < n; i++)
		put_u32(c->bytes + 4 * i, v[i]);
	return 0;
}

int
lg_frame_expect(struct lg_frame *f, int fmt, const uint32_t *layers,
		uint32_t nlayers, uint32_t seq_len, uint32_t hidden)
{
	/* Per result payload: f32 4M, f16 2M, i8 max(seq,1)*(8+hidden). */
	size_t pl = lc_payload_bytes((enum lc_fmt)fmt, seq_len, hidden);
	uint32_t v[3];
	int rc;

	memset(f, 0, sizeof(*f));
	f->fmt = fmt;
	if (nlayers == 1) {
		/* layer, seq_len, latency_ms, payload */
		f->body_len = 12 + pl;
		v[0] = layers[0];
		v[1] = seq_len;
		return add_check(f, 0, v, 2);
	}
	/* marker, n, latency_ms, then per result layer, seq_len,
	 * num_values (a count of values, also for f16 and i8), payload */
	f->body_len = 12 + (uint64_t)nlayers * (12 + pl);
	v[0] = LC_BATCH_MARKER;
	v[1] = nlayers;
	rc = add_check(f, 0, v, 2);
	for (uint32_t i = 0; rc == 0 && i < nlayers; i++) {
		v[0] = layers[i];
		v[1] = seq_len;
		v[2] = seq_len * hidden;
		rc = add_check(f, (uint32_t)(12 + i * (12 + pl)), v, 3);
	}
	return rc;
}

void
lg_frame_free(struct lg_frame *f)
{
	free(f->chk);
	f->chk = NULL;
	f->nchk = 0;
}

int
lg_frame_check(const struct lg_frame *f, uint32_t *cursor, uint64_t off,
	       const uint8_t *p, size_t n)
{
	int bad = 0;

	while (*cursor < f->nchk) {
		const struct lg_check *c = &f->chk[*cursor];
		uint64_t cend = (uint64_t)c->off + c->len, end = off + n;
		uint64_t s = c->off > off ? c->off : off;
		uint64_t e = cend < end ? cend : end;

		if (c->off >= end)
			break;
		if (s < e && memcmp(p + (s - off), c->bytes + (s - c->off),
				    e - s) != 0)
			bad = -1;
		if (cend > end)
			break;	/* the rest of it comes in the next piece */
		(*cursor)++;
	}
	return bad;
}
