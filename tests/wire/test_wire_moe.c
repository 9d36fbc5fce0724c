/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * lib/wire's expert wire (wire_moe.h) against spec/moe.md: the §6 frames
 * byte for byte, every truncation point (§3.6, §4), hostile counts, the
 * Q8_K layout (§3.5), the §7 negotiation table, the vector codecs and
 * the guard (JSON: test_wire_moe_json.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "quant.h"
#include "wire_moe.h"
#include "wire_test_util.h"

/* ---- §6 frames ---- */

static const char LAYER_REQ[] =
	"00000000 04000000 02000000 0000803f 000000c0 0000003f 00004040"
	"01000000 0000803e 00000000 0000403f";
static const char LAYER_RESP[] =
	"04000000 0000c03f f08dc63f 40da8e3e f400ed3f 8056e0be";
static const char F16_REQ[] =
	"00000000 04000000 02000000 003c 00c0 0038 0042"
	"01000000 0000803e 00000000 0000403f";
static const char F16_RESP[] = "04000000 0000c03f 343e 7734 683f 03b7";
static const char MULTI_REQ[] =
	"01000000 00000000 04000000 02000000 0000803f 000000c0 0000003f "
	"00004040 01000000 00000000 0000803e 0000403f";
static const char MULTI_RESP[] =
	"01000000 00000000 04000000 f08dc63f 40da8e3e f400ed3f 8056e0be";
static const char BATCH_REQ[] =
	"02000000 04000000 00000000 00000000 0000803f 000000c0 0000003f "
	"00004040 00000000 01000000 0000803f 000000c0 0000003f 00004040";
static const char BATCH_RESP[] =
	"02000000 04000000 0000c03f"
	"00000000 00000000 55f31140 e2d4403e a3001e40 e2d440be"
	"00000000 01000000 80f822bf d6140d3f 00000000 ab0698bf";

static const float X[4] = { 1.0f, -2.0f, 0.5f, 3.0f };

static float
f32_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* §6 "out" and the unweighted y_0, y_1 */
static const uint32_t OUT_BITS[4] = {
	0x3fc68df0, 0x3e8eda40, 0x3fed00f4, 0xbee05680 };
static const uint32_t Y0_BITS[4] = {
	0x4011f355, 0x3e40d4e2, 0x401e00a3, 0xbe40d4e2 };
static const uint32_t Y1_BITS[4] = {
	0xbf22f880, 0x3f0d14d6, 0x00000000, 0xbf9806ab };

static void
vals(const uint32_t *bits, float *out)
{
	for (int i = 0; i < 4; i++)
		out[i] = f32_bits(bits[i]);
}

/* ---- decoders behind one signature, for the truncation sweeps ---- */

enum dec { D_LAYER_F32, D_LAYER_F16, D_LAYER_I8, D_MULTI_F32, D_MULTI_Q8K,
	   D_BATCH };

static int
decode(enum dec d, const void *b, size_t len, struct wire_error *e)
{
	struct wire_moe_task t;
	uint32_t n, h;

	switch (d) {
	case D_LAYER_F32:
		return wire_moe_layer_decode(&t, b, len, WIRE_MOE_IN_F32, e);
	case D_LAYER_F16:
		return wire_moe_layer_decode(&t, b, len, WIRE_MOE_IN_F16, e);
	case D_LAYER_I8:
		return wire_moe_layer_decode(&t, b, len, WIRE_MOE_IN_I8, e);
	case D_MULTI_F32:
		return wire_moe_multi_check(b, len, WIRE_MOE_IN_F32, &n, e);
	case D_MULTI_Q8K:
		return wire_moe_multi_check(b, len, WIRE_MOE_IN_Q8K, &n, e);
	default:
		return wire_moe_batch_check(b, len, &n, &h, e);
	}
}

static const char *const TRUNC[] = {
	[D_LAYER_F32] = "layer-batch request truncated",
	[D_LAYER_F16] = "layer-batch-f16 request truncated",
	[D_LAYER_I8] = "layer-batch-i8 request truncated",
	[D_MULTI_F32] = "multi-layer-batch request truncated",
	[D_MULTI_Q8K] = "multi-layer-batch-q8k request truncated",
	[D_BATCH] = "binary expert request truncated",
};

/* Every prefix shorter than the frame is its route's "truncated"; the
 * frame and anything longer decode. Exact-size copies for ASan. */
static void
sweep(enum dec d, const uint8_t *body, size_t len)
{
	struct wire_error e;

	for (size_t l = 0; l <= len + 3; l++) {
		uint8_t *c = exact_copy(body, l);
		int rc;

		if (l > len)
			memset(c + len, 0xab, l - len);
		memset(&e, 0, sizeof(e));
		rc = decode(d, c, l, &e);
		if (l < len) {
			assert_int_equal(rc, -EINVAL);
			assert_int_equal(e.status, 400);
			assert_false(e.text);
			assert_string_equal(e.msg, TRUNC[d]);
		} else {
			assert_int_equal(rc, 0);
		}
		free(c);
	}
}

/* ---- §6 request frames, decoded ---- */

static void
check_pairs(const struct wire_moe_task *t)
{
	uint32_t e;
	float w;

	assert_int_equal(t->k, 2);
	wire_moe_task_pair(t, 0, &e, &w);
	assert_int_equal(e, 1);
	assert_true(w == 0.25f);
	wire_moe_task_pair(t, 1, &e, &w);
	assert_int_equal(e, 0);
	assert_true(w == 0.75f);
}

static void
test_section6_layer(void **state)
{
	uint8_t b[128];
	size_t n = hex_bytes(LAYER_REQ, b);
	struct wire_moe_task t;
	struct wire_error e;
	float x[4];

	(void)state;
	assert_int_equal(n, 44);
	assert_int_equal(wire_moe_layer_decode(&t, b, n, WIRE_MOE_IN_F32, &e),
			 0);
	assert_int_equal(t.layer, 0);
	assert_int_equal(t.hidden, 4);
	assert_int_equal(t.in, WIRE_MOE_IN_F32);
	assert_ptr_equal(t.x, b + 12);
	assert_int_equal(t.x_len, 16);
	check_pairs(&t);
	wire_moe_task_x(&t, x);
	assert_memory_equal(x, X, sizeof(X));
	sweep(D_LAYER_F32, b, n);

	n = hex_bytes(F16_REQ, b);
	assert_int_equal(n, 36);
	assert_int_equal(wire_moe_layer_decode(&t, b, n, WIRE_MOE_IN_F16, &e),
			 0);
	assert_int_equal(t.hidden, 4);
	assert_int_equal(t.x_len, 8);
	check_pairs(&t);
	wire_moe_task_x(&t, x);
	assert_memory_equal(x, X, sizeof(X));
	sweep(D_LAYER_F16, b, n);
	/* an odd address widens the same (unaligned path) */
	{
		uint8_t odd[64];

		memcpy(odd + 1, b, n);
		assert_int_equal(wire_moe_layer_decode(&t, odd + 1, n,
					WIRE_MOE_IN_F16, &e), 0);
		wire_moe_task_x(&t, x);
		assert_memory_equal(x, X, sizeof(X));
	}
}

static void
test_section6_multi_batch(void **state)
{
	uint8_t b[128];
	size_t n = hex_bytes(MULTI_REQ, b), pos = 4;
	struct wire_moe_task t;
	struct wire_moe_item it;
	struct wire_error e;
	uint32_t cnt, hid;
	float x[4], w;

	(void)state;
	assert_int_equal(n, 48);
	assert_int_equal(wire_moe_multi_check(b, n, WIRE_MOE_IN_F32, &cnt, &e),
			 0);
	assert_int_equal(cnt, 1);
	wire_moe_multi_next(b, &pos, WIRE_MOE_IN_F32, &t);
	assert_int_equal(pos, 48);
	assert_int_equal(t.layer, 0);
	assert_int_equal(t.hidden, 4);
	check_pairs(&t);
	wire_moe_task_x(&t, x);
	assert_memory_equal(x, X, sizeof(X));
	sweep(D_MULTI_F32, b, n);

	n = hex_bytes(BATCH_REQ, b);
	assert_int_equal(n, 56);
	assert_int_equal(wire_moe_batch_check(b, n, &cnt, &hid, &e), 0);
	assert_int_equal(cnt, 2);
	assert_int_equal(hid, 4);
	for (uint32_t i = 0; i < 2; i++) {
		wire_moe_batch_item(b, hid, i, &it);
		assert_int_equal(it.layer, 0);
		assert_int_equal(it.expert, i);
		for (int k = 0; k < 4; k++) {
			memcpy(&w, it.x + 4 * k, 4);
			assert_true(w == X[k]);
		}
	}
	sweep(D_BATCH, b, n);
	/* n = 0 is valid in 8 bytes */
	memset(b, 0, 8);
	b[4] = 7;
	assert_int_equal(wire_moe_batch_check(b, 8, &cnt, &hid, &e), 0);
	assert_int_equal(cnt, 0);
}

/* ---- §6 answers, encoded ---- */

static void
test_section6_answers(void **state)
{
	uint8_t want[128], got[128];
	float out[4], y0[4], y1[4];
	size_t n;

	(void)state;
	vals(OUT_BITS, out);
	vals(Y0_BITS, y0);
	vals(Y1_BITS, y1);

	n = hex_bytes(LAYER_RESP, want);
	assert_int_equal(n, WIRE_MOE_LAYER_HDR +
			 wire_moe_vec_bytes(WIRE_FMT_F32, 4));
	wire_moe_layer_resp_hdr(got, 4, 1.5f);
	wire_moe_vec_encode(WIRE_FMT_F32, out, 4, got + 8);
	assert_memory_equal(got, want, n);

	n = hex_bytes(F16_RESP, want);
	assert_int_equal(n, WIRE_MOE_LAYER_HDR +
			 wire_moe_vec_bytes(WIRE_FMT_F16, 4));
	wire_moe_layer_resp_hdr(got, 4, 1.5f);
	wire_moe_vec_encode(WIRE_FMT_F16, out, 4, got + 8);
	assert_memory_equal(got, want, n);

	n = hex_bytes(MULTI_RESP, want);
	assert_int_equal(n, 28);
	wire_moe_multi_resp_count(got, 1);
	wire_moe_multi_resp_task(got + 4, 0, 4);
	wire_moe_vec_encode(WIRE_FMT_F32, out, 4, got + 12);
	assert_memory_equal(got, want, n);

	n = hex_bytes(BATCH_RESP, want);
	assert_int_equal(wire_moe_batch_resp_size(2, 4), n);
	memset(got, 0xee, sizeof(got));
	wire_moe_batch_resp_hdr(got, 2, 4, 1.5f);
	memcpy(wire_moe_batch_resp_item(got, 4, 0, 0, 0), y0, 16);
	memcpy(wire_moe_batch_resp_item(got, 4, 1, 0, 1), y1, 16);
	assert_memory_equal(got, want, n);
	/* the empty batch: 12 bytes, hidden written 0 */
	assert_int_equal(wire_moe_batch_resp_size(0, 4), 12);
	wire_moe_batch_resp_hdr(got, 0, 4, 1.5f);
	hex_bytes("00000000 00000000 0000c03f", want);
	assert_memory_equal(got, want, 12);
	/* sizes that do not fit are 0 */
	if (sizeof(size_t) == 8) {
		assert_int_equal(wire_moe_batch_resp_size(UINT32_MAX,
							  UINT32_MAX), 0);
		assert_int_equal(wire_moe_batch_resp_size(UINT32_MAX, 1),
				 12 + 12 * (uint64_t)UINT32_MAX);
	}
	/* multi n = 0 is the 4-byte body */
	wire_moe_multi_resp_count(got, 0);
	assert_memory_equal(got, "\0\0\0\0", 4);
}

/* ---- i8 requests (§7), sweeps of built frames ---- */

static void
test_i8_layer(void **state)
{
	struct bb b = { .n = 0 };
	struct wire_moe_task t;
	struct wire_error e;
	float x[3];

	(void)state;
	bb_u32(&b, 7);
	bb_u32(&b, 3);
	bb_u32(&b, 1);
	bb_f32(&b, 0.5f);	/* scale */
	bb_f32(&b, 0.25f);	/* zero_point */
	bb_u8(&b, 2);
	bb_u8(&b, 0xff);	/* -1 */
	bb_u8(&b, 0x80);	/* -128 */
	bb_u32(&b, 9);
	bb_f32(&b, -1.0f);
	assert_int_equal(b.n, 12 + 11 + 8);
	assert_int_equal(wire_moe_layer_decode(&t, b.b, b.n, WIRE_MOE_IN_I8,
					       &e), 0);
	assert_int_equal(t.layer, 7);
	assert_int_equal(t.x_len, 11);
	wire_moe_task_x(&t, x);
	assert_true(x[0] == 1.25f);
	assert_true(x[1] == -0.25f);
	assert_true(x[2] == -63.75f);
	{
		uint32_t id;
		float w;

		wire_moe_task_pair(&t, 0, &id, &w);
		assert_int_equal(id, 9);
		assert_true(w == -1.0f);
	}
	sweep(D_LAYER_I8, b.b, b.n);
	/* hidden 0: the 8-byte row header is still there */
	b.n = 0;
	bb_u32(&b, 0);
	bb_u32(&b, 0);
	bb_u32(&b, 0);
	bb_f32(&b, 1.0f);
	bb_f32(&b, 0.0f);
	assert_int_equal(wire_moe_in_bytes(WIRE_MOE_IN_I8, 0), 8);
	sweep(D_LAYER_I8, b.b, b.n);
}

/* ---- hostile counts (§3.6) ---- */

static void
expect_trunc(enum dec d, const uint8_t *body, size_t len)
{
	struct wire_error e;
	uint8_t *c = exact_copy(body, len);

	assert_int_equal(decode(d, c, len, &e), -EINVAL);
	assert_int_equal(e.status, 400);
	assert_string_equal(e.msg, TRUNC[d]);
	free(c);
}

static void
test_hostile_counts(void **state)
{
	static const uint32_t big[] = { 0xFFFFFFFFu, 0x80000000u, 0x40000000u,
					0x3FFFFFFFu, 0x10000000u, 1000000 };
	struct bb b;

	(void)state;
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		for (int which = 0; which < 2; which++) {
			/* layer: hidden or K huge, a few bytes */
			for (enum dec d = D_LAYER_F32; d <= D_LAYER_I8; d++) {
				b.n = 0;
				bb_u32(&b, 0);
				bb_u32(&b, which ? 4 : big[i]);
				bb_u32(&b, which ? big[i] : 1);
				for (int k = 0; k < 16; k++)
					bb_u32(&b, 0);
				expect_trunc(d, b.b, b.n);
			}
			/* multi: n huge, or one task with hidden or ne huge */
			for (enum dec d = D_MULTI_F32; d <= D_MULTI_Q8K; d++) {
				b.n = 0;
				bb_u32(&b, big[i]);
				expect_trunc(d, b.b, b.n);
				bb_u32(&b, 1);
				bb_u32(&b, which ? 256 : big[i]);
				bb_u32(&b, which ? big[i] : 0);
				for (int k = 0; k < 16; k++)
					bb_u32(&b, 0);
				expect_trunc(d, b.b, b.n);
				b.b[0] = 1;
				b.b[1] = b.b[2] = b.b[3] = 0;
				expect_trunc(d, b.b, b.n);
			}
			/* batch: n, hidden huge */
			b.n = 0;
			bb_u32(&b, which ? big[i] : 1);
			bb_u32(&b, which ? 0 : big[i]);
			for (int k = 0; k < 8; k++)
				bb_u32(&b, 0);
			expect_trunc(D_BATCH, b.b, b.n);
			b.n = 0;
			bb_u32(&b, big[i]);
			bb_u32(&b, big[i]);
			expect_trunc(D_BATCH, b.b, b.n);
		}
	}
	/* sizes never wrap */
	assert_int_equal(wire_moe_in_bytes(WIRE_MOE_IN_F32, UINT64_MAX), 0);
	assert_int_equal(wire_moe_in_bytes(WIRE_MOE_IN_F16, UINT64_MAX), 0);
	assert_int_equal(wire_moe_in_bytes(WIRE_MOE_IN_I8, UINT64_MAX), 0);
	assert_int_equal(wire_moe_in_bytes(WIRE_MOE_IN_Q8K, UINT64_MAX), 0);
	assert_int_equal(wire_moe_in_bytes(WIRE_MOE_IN_F32, UINT32_MAX),
			 4 * (uint64_t)UINT32_MAX);
}

/* ---- multi-layer with several tasks, and Q8_K (3.4, 3.5) ---- */

static void
put_task(struct bb *b, uint32_t layer, uint32_t hidden, uint32_t ne,
	 float base)
{
	bb_u32(b, layer);
	bb_u32(b, hidden);
	bb_u32(b, ne);
	for (uint32_t i = 0; i < hidden; i++)
		bb_f32(b, base + (float)i);
	for (uint32_t i = 0; i < ne; i++)
		bb_u32(b, 100 + i);
	for (uint32_t i = 0; i < ne; i++)
		bb_f32(b, 0.5f * (float)(i + 1));
}

static void
test_multi_tasks(void **state)
{
	static const uint32_t L[] = { 3, 1, 5, 3 }, H[] = { 2, 0, 3, 0 },
			      NE[] = { 0, 2, 1, 0 };
	struct bb b = { .n = 0 };
	struct wire_moe_task t;
	struct wire_error e;
	uint32_t n, id;
	size_t pos = 4;
	float x[4], w;

	(void)state;
	bb_u32(&b, 4);
	for (int i = 0; i < 4; i++)
		put_task(&b, L[i], H[i], NE[i], 10.0f * (float)i);
	assert_int_equal(wire_moe_multi_check(b.b, b.n, WIRE_MOE_IN_F32, &n,
					       &e), 0);
	assert_int_equal(n, 4);
	for (int i = 0; i < 4; i++) {
		wire_moe_multi_next(b.b, &pos, WIRE_MOE_IN_F32, &t);
		assert_int_equal(t.layer, L[i]);
		assert_int_equal(t.hidden, H[i]);
		assert_int_equal(t.k, NE[i]);
		wire_moe_task_x(&t, x);
		for (uint32_t k = 0; k < H[i]; k++)
			assert_true(x[k] == 10.0f * (float)i + (float)k);
		for (uint32_t k = 0; k < NE[i]; k++) {
			wire_moe_task_pair(&t, k, &id, &w);
			assert_int_equal(id, 100 + k);
			assert_true(w == 0.5f * (float)(k + 1));
		}
	}
	assert_int_equal(pos, b.n);
	sweep(D_MULTI_F32, b.b, b.n);
	/* n = 0 */
	b.n = 0;
	bb_u32(&b, 0);
	sweep(D_MULTI_F32, b.b, b.n);
	sweep(D_MULTI_Q8K, b.b, b.n);
}

static struct bb qb;	/* big enough for a 512-value task */

static void
put_q8k_task(struct bb *b, uint32_t layer, uint32_t hidden, uint32_t ne)
{
	uint32_t nb = hidden / 256;

	bb_u32(b, layer);
	bb_u32(b, hidden);
	bb_u32(b, ne);
	for (uint32_t i = 0; i < hidden; i++)
		bb_u8(b, (uint8_t)(int8_t)((int)(i % 255) - 127));
	for (uint32_t k = 0; k < nb; k++)
		bb_f32(b, 0.5f + (float)k);
	for (uint32_t k = 0; k < 8 * nb; k++)
		bb_u16(b, (uint16_t)k);
	for (uint32_t i = 0; i < ne; i++)
		bb_u32(b, 7 + i);
	for (uint32_t i = 0; i < ne; i++)
		bb_f32(b, -0.25f);
}

static void
test_q8k_layout(void **state)
{
	static const uint32_t H[] = { 512, 300, 255, 0 };
	struct wire_moe_task t;
	struct wire_error e;
	static float x[512];
	uint32_t n, id;
	size_t pos = 4;
	float w;

	(void)state;
	assert_int_equal(wire_moe_in_bytes(WIRE_MOE_IN_Q8K, 512),
			 512 + 4 * 2 + 16 * 2);
	assert_int_equal(wire_moe_in_bytes(WIRE_MOE_IN_Q8K, 300), 300 + 20);
	assert_int_equal(wire_moe_in_bytes(WIRE_MOE_IN_Q8K, 255), 255);
	assert_int_equal(wire_moe_in_bytes(WIRE_MOE_IN_Q8K, 0), 0);
	qb.n = 0;
	bb_u32(&qb, 4);
	for (int i = 0; i < 4; i++)
		put_q8k_task(&qb, (uint32_t)i, H[i], (uint32_t)i + 1);
	assert_int_equal(wire_moe_multi_check(qb.b, qb.n, WIRE_MOE_IN_Q8K, &n,
					      &e), 0);
	assert_int_equal(n, 4);
	for (int i = 0; i < 4; i++) {
		uint32_t nb = H[i] / 256;

		wire_moe_multi_next(qb.b, &pos, WIRE_MOE_IN_Q8K, &t);
		assert_int_equal(t.hidden, H[i]);
		assert_int_equal(t.in, WIRE_MOE_IN_Q8K);
		assert_int_equal(t.x_len, H[i] + 20 * nb);
		assert_int_equal(t.k, i + 1);
		wire_moe_task_x(&t, x);
		for (uint32_t k = 0; k < H[i]; k++) {
			float q = (float)((int)(k % 255) - 127);
			/* values past the last whole block have no d: 0 */
			float want = k / 256 < nb ?
				     (0.5f + (float)(k / 256)) * q : 0.0f;

			assert_true(x[k] == want);
		}
		for (uint32_t k = 0; k < t.k; k++) {
			wire_moe_task_pair(&t, k, &id, &w);
			assert_int_equal(id, 7 + k);
			assert_true(w == -0.25f);
		}
	}
	assert_int_equal(pos, qb.n);
	sweep(D_MULTI_Q8K, qb.b, qb.n);
}

/* ---- §7 negotiation ---- */

#define LAYER_CT "application/x-larql-experts-layer"
#define MULTI_CT "application/x-larql-experts-multi-layer"

static void
test_negotiation(void **state)
{
	static const char *const i8tok[] = { LAYER_CT "-i8", MULTI_CT "-i8" };
	static const char *const f16tok[] = { LAYER_CT "-f16",
					      MULTI_CT "-f16" };
	char accept[256];

	(void)state;
	for (int fam = 0; fam < WIRE_MOE_FAMILY_COUNT; fam++) {
		int n_own = fam == WIRE_MOE_LAYER ? 3 : 1;

		for (int own = 0; own < n_own; own++)
		for (int a = 0; a < 5; a++)
		for (int i8 = 0; i8 < 2; i8++)
		for (int f16 = 0; f16 < 2; f16++) {
			struct wire_opts o = { .f16 = f16, .i8 = i8 };
			bool has_i8 = a == 1 || a == 3, has_f16 = a >= 2 &&
							 a <= 3;
			enum wire_fmt want, got;
			const char *acc = accept;

			switch (a) {
			case 0: acc = NULL; break;
			case 1: strcpy(accept, i8tok[fam]); break;
			case 2: strcpy(accept, f16tok[fam]); break;
			case 3: sprintf(accept, "%s, %s, %s", i8tok[fam],
					f16tok[fam], fam ? MULTI_CT :
					LAYER_CT);
				break;
			default: /* the other family's tokens: not ours */
				sprintf(accept, "%s, %s", i8tok[!fam],
					f16tok[!fam]);
			}
			want = has_i8 && i8 ? WIRE_FMT_I8 :
			       has_f16 && f16 ? WIRE_FMT_F16 :
			       (enum wire_fmt)own;
			got = wire_moe_response_format(fam, own, acc,
					acc ? strlen(acc) : 0, &o);
			assert_int_equal(got, want);
		}
	}
	/* a byte outside visible ASCII: the field counts as absent */
	{
		struct wire_opts o = { .f16 = true, .i8 = true };
		const char v[] = LAYER_CT "-i8\x80";

		assert_int_equal(wire_moe_response_format(WIRE_MOE_LAYER,
				WIRE_FMT_F32, v, strlen(v), &o), WIRE_FMT_F32);
		/* only len bytes are searched */
		assert_int_equal(wire_moe_response_format(WIRE_MOE_LAYER,
				WIRE_FMT_F32, LAYER_CT "-f16", 20, &o),
				WIRE_FMT_F32);
		/* case-sensitive */
		assert_int_equal(wire_moe_response_format(WIRE_MOE_LAYER,
				WIRE_FMT_F32, "APPLICATION/X-LARQL-EXPERTS-"
				"LAYER-F16", 40, &o), WIRE_FMT_F32);
	}
	assert_string_equal(wire_moe_content_type(WIRE_MOE_LAYER,
			    WIRE_FMT_F32), LAYER_CT);
	assert_string_equal(wire_moe_content_type(WIRE_MOE_LAYER,
			    WIRE_FMT_F16), LAYER_CT "-f16");
	assert_string_equal(wire_moe_content_type(WIRE_MOE_LAYER,
			    WIRE_FMT_I8), LAYER_CT "-i8");
	assert_string_equal(wire_moe_content_type(WIRE_MOE_MULTI,
			    WIRE_FMT_F32), MULTI_CT);
	assert_string_equal(wire_moe_content_type(WIRE_MOE_MULTI,
			    WIRE_FMT_F16), MULTI_CT "-f16");
	assert_string_equal(wire_moe_content_type(WIRE_MOE_MULTI,
			    WIRE_FMT_I8), MULTI_CT "-i8");
	assert_null(wire_moe_content_type(WIRE_MOE_LAYER, WIRE_FMT_JSON));
	assert_null(wire_moe_content_type(WIRE_MOE_MULTI, WIRE_FMT_NONE));
	assert_null(wire_moe_content_type(WIRE_MOE_FAMILY_COUNT,
					  WIRE_FMT_F32));
}

/* ---- vectors (§7) and the guard ---- */

static uint32_t rng = 12345;

static float
rnd(void)
{
	rng = rng * 1103515245u + 12345u;
	return ((float)(rng >> 8) / 16777216.0f - 0.5f) * 200.0f;
}

static void
test_vec_encode(void **state)
{
	static const uint32_t H[] = { 1, 2, 3, 4, 5, 63, 64, 65, 66, 130, 257 };
	float src[300];
	uint8_t ref[1400], got[1400];

	(void)state;
	for (size_t c = 0; c < sizeof(H) / sizeof(H[0]); c++) {
		uint32_t h = H[c];

		for (uint32_t i = 0; i < h; i++)
			src[i] = rnd();
		if (h > 3)
			src[h / 2] = NAN;
		assert_int_equal(wire_moe_vec_bytes(WIRE_FMT_F32, h), 4 * h);
		assert_int_equal(wire_moe_vec_bytes(WIRE_FMT_F16, h), 2 * h);
		assert_int_equal(wire_moe_vec_bytes(WIRE_FMT_I8, h), 8 + h);
		/* f32 */
		wire_moe_vec_encode(WIRE_FMT_F32, src, h, got + 1);
		assert_memory_equal(got + 1, src, 4 * h);
		/* f16, aligned, odd address and in place */
		for (uint32_t i = 0; i < h; i++) {
			uint16_t v = quant_f32_to_f16_1(src[i]);

			memcpy(ref + 2 * i, &v, 2);
		}
		wire_moe_vec_encode(WIRE_FMT_F16, src, h, got);
		assert_memory_equal(got, ref, 2 * h);
		wire_moe_vec_encode(WIRE_FMT_F16, src, h, got + 1);
		assert_memory_equal(got + 1, ref, 2 * h);
		{
			float *in = (float *)(void *)(got + 64);

			memcpy(in, src, 4 * h);
			wire_moe_vec_encode(WIRE_FMT_F16, in, h, in);
			assert_memory_equal(in, ref, 2 * h);
		}
		/* i8: lib/quant's row, separate and in place */
		quant_f32_to_i8_rows(ref, src, 1, h);
		wire_moe_vec_encode(WIRE_FMT_I8, src, h, got + 3);
		assert_memory_equal(got + 3, ref, 8 + h);
		{
			/* an exact buffer of max(4h, 8 + h) bytes */
			size_t cap = 4 * h > 8 + h ? 4 * h : 8 + h;
			uint8_t *buf = malloc(cap);

			memcpy(buf, src, 4 * h);
			wire_moe_vec_encode(WIRE_FMT_I8, (float *)buf, h, buf);
			assert_memory_equal(buf, ref, 8 + h);
			free(buf);
		}
	}
	/* all zeros, and hidden 0 (nothing written, no i8 header) */
	memset(src, 0, sizeof(src));
	quant_f32_to_i8_rows(ref, src, 1, 5);
	memcpy(got, src, 20);
	wire_moe_vec_encode(WIRE_FMT_I8, (float *)(void *)got, 5, got);
	assert_memory_equal(got, ref, 13);
	memset(got, 0x5a, 16);
	for (int f = WIRE_FMT_F32; f <= WIRE_FMT_I8; f++) {
		assert_int_equal(wire_moe_vec_bytes(f, 0), 0);
		wire_moe_vec_encode(f, src, 0, got);
	}
	for (int i = 0; i < 16; i++)
		assert_int_equal(got[i], 0x5a);
	assert_int_equal(wire_moe_vec_bytes(WIRE_FMT_JSON, 4), 0);
}

static void
test_f16_guard(void **state)
{
	float v[3] = { 1.0f, 65519.99f, -3.0f };

	(void)state;
	assert_false(wire_moe_f16_overflows(v, 3));
	v[1] = nextafterf(65520.0f, 0.0f);
	assert_false(wire_moe_f16_overflows(v, 3));
	assert_int_equal(quant_f32_to_f16_1(v[1]), 0x7bff);
	v[1] = 65520.0f;
	assert_true(wire_moe_f16_overflows(v, 3));
	assert_int_equal(quant_f32_to_f16_1(v[1]), 0x7c00);
	v[1] = -65520.0f;
	assert_true(wire_moe_f16_overflows(v, 3));
	v[1] = 3.4e38f;
	assert_true(wire_moe_f16_overflows(v, 3));
	v[1] = INFINITY;
	assert_false(wire_moe_f16_overflows(v, 3));
	v[1] = -INFINITY;
	assert_false(wire_moe_f16_overflows(v, 3));
	v[1] = NAN;
	assert_false(wire_moe_f16_overflows(v, 3));
	assert_false(wire_moe_f16_overflows(v, 0));
	v[2] = 1e5f;
	assert_true(wire_moe_f16_overflows(v, 3));
	assert_false(wire_moe_f16_overflows(v, 2));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_section6_layer),
		cmocka_unit_test(test_section6_multi_batch),
		cmocka_unit_test(test_section6_answers),
		cmocka_unit_test(test_i8_layer),
		cmocka_unit_test(test_hostile_counts),
		cmocka_unit_test(test_multi_tasks),
		cmocka_unit_test(test_q8k_layout),
		cmocka_unit_test(test_negotiation),
		cmocka_unit_test(test_vec_encode),
		cmocka_unit_test(test_f16_guard),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
