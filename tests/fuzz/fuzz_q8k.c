/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * libFuzzer harness: the Q8_K frames of POST /v1/walk-ffn-q8k (lib/wire,
 * wire_q8k.c; spec/wire.md §2, issue 6): request validation, the entry
 * walk, and the response built for what validates, decoded again here.
 *
 * Input: 6 control bytes, then the body.
 *   [0] bit 0 no model loaded, bit 1 the shard owns every layer, bit 2
 *       hidden_size is [1-2] as is (else 256 * (1 + [1] % 4), a whole
 *       number of blocks), bits 3-7 alignment of the body (0..31 bytes)
 *   [1-2] hidden_size
 *   [3] num_layers  [4] first owned  [5] last owned
 *
 * Request: u32 n, then per entry u32 layer, u32 n_blocks,
 * i8 qs[n_blocks * 256], f32 d[n_blocks], i16 sums[n_blocks * 8].
 * Response: u32 n, then per entry u32 layer, u32 hidden, f32 out[hidden].
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"
#include "fuzz_util.h"

static void
check_error(const struct wire_error *e, const struct wire_model *m)
{
	size_t n = strlen(e->msg);
	char *buf;

	FZ_CHECK(e->status == (m->loaded ? 400 : 404));
	FZ_CHECK(n > 0 && n < WIRE_ERR_MSG_MAX);
	buf = malloc(6 * n + 13);
	FZ_CHECK(buf != NULL);
	FZ_CHECK(wire_error_json(e, buf, 6 * n + 13) > 0);
	free(buf);
}

/* The "compute": the dequantised input, d * q per block (llama.cpp). */
static void
dequant(const struct wire_q8k_entry *e, float *out)
{
	for (uint32_t b = 0; b < e->n_blocks; b++) {
		float d = fz_lef32(e->d + 4 * (size_t)b);

		for (uint32_t i = 0; i < WIRE_Q8K_BLOCK; i++)
			out[(size_t)b * WIRE_Q8K_BLOCK + i] =
				d * e->qs[(size_t)b * WIRE_Q8K_BLOCK + i];
	}
}

static void
accepted(const uint8_t *body, size_t len, const struct wire_model *m,
	 uint32_t n)
{
	size_t pos = 4, sz = wire_q8k_resp_size(n, m->hidden), rpos;
	uint32_t *layers = malloc((n ? n : 1) * sizeof(*layers));
	uint8_t *resp;

	FZ_CHECK(layers != NULL);
	FZ_CHECK(fz_le32(body) == n);
	FZ_CHECK(sz == 4 + (size_t)n * (8 + 4 * (size_t)m->hidden));
	resp = malloc(sz);
	FZ_CHECK(resp != NULL);
	/* as walk_q8k() (lib/shard/shard_walk.c): the count alone first,
	 * the whole answer when n is 0 (wire_q8k_resp_entry writes entry
	 * i < n only: its header lies past wire_q8k_resp_size(0, hidden)) */
	wire_q8k_resp_count(resp, n);
	for (uint32_t i = 0; i < n; i++) {
		struct wire_q8k_entry e;
		size_t start = pos;
		float *out;

		wire_q8k_entry(body, &pos, &e);
		/* the entry is the bytes the validation walked */
		FZ_CHECK(pos <= len && pos > start);
		FZ_CHECK(e.layer == fz_le32(body + start));
		FZ_CHECK(e.n_blocks == fz_le32(body + start + 4));
		FZ_CHECK((uint64_t)e.n_blocks * WIRE_Q8K_BLOCK == m->hidden);
		FZ_CHECK((const uint8_t *)e.qs == body + start + 8);
		FZ_CHECK(e.d == body + start + 8 +
			 (size_t)e.n_blocks * WIRE_Q8K_BLOCK);
		FZ_CHECK(pos - start ==
			 8 + (size_t)e.n_blocks * (256 + 4 + 16));
		FZ_CHECK(e.layer < m->num_layers);
		FZ_CHECK(m->owns_all ||
			 (e.layer >= m->first && e.layer <= m->last));
		layers[i] = e.layer;
		out = wire_q8k_resp_out(resp, i, m->hidden);
		FZ_CHECK((uint8_t *)out >= resp + 12);
		FZ_CHECK((uint8_t *)(out + m->hidden) <= resp + sz);
		dequant(&e, out);
		wire_q8k_resp_entry(resp, n, i, e.layer, m->hidden);
	}
	FZ_CHECK(pos == len);

	/* decode the response as a client would */
	FZ_CHECK(fz_le32(resp) == n);
	rpos = 4;
	pos = 4;
	for (uint32_t i = 0; i < n; i++) {
		struct wire_q8k_entry e;
		float *want = malloc(4 * (size_t)m->hidden + 4);

		FZ_CHECK(want != NULL);
		wire_q8k_entry(body, &pos, &e);
		dequant(&e, want);
		FZ_CHECK(rpos + 8 + 4 * (size_t)m->hidden <= sz);
		FZ_CHECK(fz_le32(resp + rpos) == layers[i]);
		FZ_CHECK(fz_le32(resp + rpos + 4) == m->hidden);
		FZ_CHECK(memcmp(resp + rpos + 8, want,
				4 * (size_t)m->hidden) == 0);
		rpos += 8 + 4 * (size_t)m->hidden;
		free(want);
	}
	FZ_CHECK(rpos == sz);
	free(resp);
	free(layers);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	uint8_t fl = fz_u8(&f);
	uint16_t h = fz_u16(&f);
	struct wire_model m = {
		.loaded = !(fl & 1),
		.owns_all = (fl & 2) != 0,
		.hidden = (fl & 4) ? h : 256u * (1 + (h & 0xff) % 4),
	};
	struct wire_error err = { 0 };
	uint32_t n = UINT32_MAX;
	struct fz_buf b;

	m.num_layers = fz_u8(&f);
	m.first = fz_u8(&f);
	m.last = fz_u8(&f);
	if (fz_buf_copy(&b, f.p, f.n, fl >> 3) != 0)
		return 0;
	if (wire_q8k_validate(f.n ? b.p : NULL, f.n, &m, &n, &err) != 0) {
		FZ_CHECK(n == UINT32_MAX);	/* untouched on error */
		check_error(&err, &m);
	} else {
		FZ_CHECK(m.loaded && f.n >= 4);
		FZ_CHECK(m.hidden % WIRE_Q8K_BLOCK == 0 || n == 0);
		accepted(b.p, f.n, &m, n);
	}
	free(b.base);
	return 0;
}
