/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The expert wire's request frames (spec/moe.md §3.1-§3.6, §7 "i8
 * requests") and the binary expert batch's answer (§3.1). Every length
 * is checked against the body, in 64 bits, before anything is sized by
 * a wire count (§3.6); the decoders point into the body.
 */
#include <errno.h>
#include <string.h>

#include "quant.h"
#include "wire_moe.h"
#include "wire_priv.h"

static float
le_f32(const uint8_t *p)
{
	uint32_t u = wire_le32(p);
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* ---- the input encodings: one row each ---- */

static uint64_t
bytes_f32(uint64_t h)
{
	return h > UINT64_MAX / 4 ? 0 : 4 * h;
}

static uint64_t
bytes_f16(uint64_t h)
{
	return h > UINT64_MAX / 2 ? 0 : 2 * h;
}

static uint64_t
bytes_i8(uint64_t h)
{
	/* §7: [scale f32][zero_point f32][hidden i8], even for hidden 0 */
	return h > UINT64_MAX - QUANT_I8_ROW_HDR ? 0 : QUANT_I8_ROW_HDR + h;
}

static uint64_t
bytes_q8k(uint64_t h)
{
	/* §3.5: qs[h], d[nb] f32, sums[8 nb] i16, nb = floor(h / 256) */
	uint64_t nb = h / WIRE_Q8K_BLOCK;

	return h > UINT64_MAX / 2 ? 0 : h + 20 * nb;
}

static void
x_f32(const struct wire_moe_task *t, float *dst)
{
	memcpy(dst, t->x, (size_t)t->hidden * 4);
}

static void
x_f16(const struct wire_moe_task *t, float *dst)
{
	/* §3.3: widened exactly (every kernel gives the same bits) */
	if (((uintptr_t)t->x & 1) == 0) {
		quant_f16_to_f32(dst, (const uint16_t *)(const void *)t->x,
				 t->hidden);
		return;
	}
	for (uint32_t i = 0; i < t->hidden; i++)	/* odd address */
		dst[i] = quant_f16_to_f32_1((uint16_t)(t->x[2 * i] |
					    t->x[2 * i + 1] << 8));
}

static void
x_i8(const struct wire_moe_task *t, float *dst)
{
	/* §7: x = q * scale + zero_point, in f32, two roundings (lib/wire
	 * is built without FMA contraction: no -march, gnu11) */
	float scale = le_f32(t->x), zero = le_f32(t->x + 4);
	const int8_t *q = (const int8_t *)(t->x + QUANT_I8_ROW_HDR);

	for (uint32_t i = 0; i < t->hidden; i++) {
		float p = (float)q[i] * scale;

		dst[i] = p + zero;
	}
}

static void
x_q8k(const struct wire_moe_task *t, float *dst)
{
	/* §3.5 / §1: h_i = d[i/256] * qs[i], sums unused. Values past the
	 * last whole block (hidden not a multiple of 256, which the route
	 * refuses, §4) have no d: 0. */
	uint32_t nb = t->hidden / WIRE_Q8K_BLOCK;
	const int8_t *qs = (const int8_t *)t->x;
	const uint8_t *d = t->x + t->hidden;

	for (uint32_t i = 0; i < t->hidden; i++)
		dst[i] = i / WIRE_Q8K_BLOCK < nb ?
			 le_f32(d + 4 * (i / WIRE_Q8K_BLOCK)) * (float)qs[i] :
			 0.0f;
}

static const struct {
	uint64_t (*bytes)(uint64_t hidden);
	void (*decode)(const struct wire_moe_task *t, float *dst);
	const char *layer_trunc;	/* §4, the layer-batch route's */
	const char *multi_trunc;	/* §4, the multi-layer route's */
} ins[WIRE_MOE_IN_COUNT] = {
	[WIRE_MOE_IN_F32] = { bytes_f32, x_f32,
		"layer-batch request truncated",
		"multi-layer-batch request truncated" },
	[WIRE_MOE_IN_F16] = { bytes_f16, x_f16,
		"layer-batch-f16 request truncated", NULL },
	[WIRE_MOE_IN_I8] = { bytes_i8, x_i8,
		"layer-batch-i8 request truncated", NULL },
	[WIRE_MOE_IN_Q8K] = { bytes_q8k, x_q8k, NULL,
		"multi-layer-batch-q8k request truncated" },
};

static bool
in_ok(enum wire_moe_in in)
{
	return (int)in >= 0 && in < WIRE_MOE_IN_COUNT;
}

uint64_t
wire_moe_in_bytes(enum wire_moe_in in, uint64_t hidden)
{
	return in_ok(in) ? ins[in].bytes(hidden) : 0;
}

void
wire_moe_task_pair(const struct wire_moe_task *t, uint32_t i,
		   uint32_t *expert, float *weight)
{
	size_t o = (size_t)i * t->stride_;

	*expert = wire_le32(t->ids_ + o);
	*weight = le_f32(t->w_ + o);
}

void
wire_moe_task_x(const struct wire_moe_task *t, float *dst)
{
	if (t->hidden != 0 && in_ok(t->in))
		ins[t->in].decode(t, dst);
}

/* The fields of a task header at p; the frame from it must be checked. */
static void
task_at(struct wire_moe_task *t, const uint8_t *p, enum wire_moe_in in)
{
	t->layer = wire_le32(p);
	t->hidden = wire_le32(p + 4);
	t->k = wire_le32(p + 8);
	t->in = in;
	t->x = p + 12;
	t->x_len = (size_t)ins[in].bytes(t->hidden);
	t->ids_ = t->x + t->x_len;
}

int
wire_moe_layer_decode(struct wire_moe_task *t, const void *body,
		      size_t len, enum wire_moe_in in, struct wire_error *err)
{
	const uint8_t *b = body;
	uint64_t need;

	if (!in_ok(in) || ins[in].layer_trunc == NULL)
		return wire_error_set(err, 500, "no layer route for this "
				      "input encoding");
	if (len < 12)
		return wire_error_set(err, 400, "%s", ins[in].layer_trunc);
	/* §3.2: 12 + x + 8K; below 2^37 for every u32 hidden and K */
	need = 12 + ins[in].bytes(wire_le32(b + 4)) +
	       8 * (uint64_t)wire_le32(b + 8);
	if ((uint64_t)len < need)
		return wire_error_set(err, 400, "%s", ins[in].layer_trunc);
	task_at(t, b, in);
	t->w_ = t->ids_ + 4;	/* (id, w) interleaved */
	t->stride_ = 8;
	return 0;
}

/* ---- multi-layer (3.4, 3.5) ---- */

int
wire_moe_multi_check(const void *body, size_t len, enum wire_moe_in in,
		     uint32_t *n, struct wire_error *err)
{
	const uint8_t *b = body;
	uint32_t count;
	size_t pos = 4;

	if (!in_ok(in) || ins[in].multi_trunc == NULL)
		return wire_error_set(err, 500, "no multi-layer route for "
				      "this input encoding");
	if (len < 4)
		return wire_error_set(err, 400, "%s", ins[in].multi_trunc);
	count = wire_le32(b);
	/* Each task takes 12 bytes or more, so a hostile n ends this loop
	 * at the body's end, not after 2^32 turns. */
	for (uint32_t i = 0; i < count; i++) {
		uint64_t rest;

		if (len - pos < 12)
			return wire_error_set(err, 400, "%s",
					      ins[in].multi_trunc);
		/* x + 8 ne: below 2^37 for u32 hidden and ne */
		rest = ins[in].bytes(wire_le32(b + pos + 4)) +
		       8 * (uint64_t)wire_le32(b + pos + 8);
		if ((uint64_t)(len - pos - 12) < rest)
			return wire_error_set(err, 400, "%s",
					      ins[in].multi_trunc);
		pos += 12 + (size_t)rest;
	}
	*n = count;	/* trailing bytes ignored, as 3.1 and 3.2 */
	return 0;
}

void
wire_moe_multi_next(const void *body, size_t *pos, enum wire_moe_in in,
		    struct wire_moe_task *t)
{
	task_at(t, (const uint8_t *)body + *pos, in);
	/* 3.4: ids[ne] then weights[ne], two arrays */
	t->w_ = t->ids_ + 4 * (size_t)t->k;
	t->stride_ = 4;
	*pos += 12 + t->x_len + 8 * (size_t)t->k;
}

/* ---- /v1/expert/batch, binary (3.1) ---- */

int
wire_moe_batch_check(const void *body, size_t len, uint32_t *n,
		     uint32_t *hidden, struct wire_error *err)
{
	const uint8_t *b = body;
	uint64_t item;
	uint32_t count;

	if (len < 8)
		return wire_error_set(err, 400,
				      "binary expert request truncated");
	count = wire_le32(b);
	item = 8 + 4 * (uint64_t)wire_le32(b + 4);
	/* 8 + n (8 + 4 hidden) <= len, without the product (2^66) */
	if ((uint64_t)(len - 8) / item < count)
		return wire_error_set(err, 400,
				      "binary expert request truncated");
	*n = count;
	*hidden = wire_le32(b + 4);
	return 0;
}

void
wire_moe_batch_item(const void *body, uint32_t hidden, uint32_t i,
		    struct wire_moe_item *it)
{
	const uint8_t *p = (const uint8_t *)body + 8 +
			   (size_t)i * (8 + 4 * (size_t)hidden);

	it->layer = wire_le32(p);
	it->expert = wire_le32(p + 4);
	it->x = p + 8;
}

size_t
wire_moe_batch_resp_size(uint32_t n, uint32_t hidden)
{
	size_t item = 8 + 4 * (size_t)hidden, all;

	if (__builtin_mul_overflow((size_t)n, item, &all) ||
	    __builtin_add_overflow(all, (size_t)12, &all))
		return 0;
	return all;
}

void
wire_moe_batch_resp_hdr(void *buf, uint32_t n, uint32_t hidden,
			float latency_ms)
{
	uint8_t *b = buf;
	uint32_t u;

	memcpy(&u, &latency_ms, sizeof(u));
	wire_put_le32(b, n);
	wire_put_le32(b + 4, n ? hidden : 0);	/* §3.1: 0 when n = 0 */
	wire_put_le32(b + 8, u);
}

float *
wire_moe_batch_resp_item(void *buf, uint32_t hidden, uint32_t i,
			 uint32_t layer, uint32_t expert)
{
	uint8_t *p = (uint8_t *)buf + 12 +
		     (size_t)i * (8 + 4 * (size_t)hidden);

	wire_put_le32(p, layer);
	wire_put_le32(p + 4, expert);
	return (float *)(void *)(p + 8);
}
