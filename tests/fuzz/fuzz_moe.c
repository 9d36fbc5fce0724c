/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * libFuzzer harness: the expert wire of spec/moe.md (lib/wire,
 * wire_moe.h): every request decoder, and for what decodes, the answers
 * built from it (the "compute" is the identity: each output is the
 * decoded input).
 *
 * Input: 1 control byte, then the body (an exact-size heap copy).
 *   [0] bits 0-2 the decoder: 0 layer-batch (f32), 1 layer-batch-f16,
 *       2 layer-batch-i8, 3 multi-layer-batch (f32), 4 multi-layer-
 *       batch-q8k, 5 /v1/expert/batch binary, 6 the single route's JSON,
 *       7 the batch route's JSON; bits 3-7 the latency written.
 *
 * Invariants: a refused frame is shorter than §3's formula (computed
 * again here) and gets its route's exact message; an accepted one fits;
 * every answer has the size of §3/§7; f16 and i8 vectors are lib/quant's
 * (in place and not); JSON errors have the §4 status, kind and prefix; a
 * JSON residual written by the answer writer reads back bit for bit.
 */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"
#include "wire_moe.h"
#include "fuzz_util.h"

static const char *const trunc_msg[] = {
	"layer-batch request truncated",
	"layer-batch-f16 request truncated",
	"layer-batch-i8 request truncated",
	"multi-layer-batch request truncated",
	"multi-layer-batch-q8k request truncated",
	"binary expert request truncated",
};

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* §3.2 / §3.3 / §7 / §3.5 residual bytes, from the spec's text. */
static uint64_t
x_bytes(enum wire_moe_in in, uint64_t h)
{
	switch (in) {
	case WIRE_MOE_IN_F32: return 4 * h;
	case WIRE_MOE_IN_F16: return 2 * h;
	case WIRE_MOE_IN_I8: return 8 + h;
	default: return h + 4 * (h / 256) + 16 * (h / 256);
	}
}

/* Encode v as every format, separately and in place, against lib/quant. */
static void
check_vec(const float *v, uint32_t h)
{
	size_t cap = 4 * (size_t)h > 8 + (size_t)h ? 4 * (size_t)h :
		     8 + (size_t)h;
	uint8_t *a = malloc(cap + 1), *b = malloc(cap + 1);

	FZ_CHECK(a != NULL && b != NULL);
	FZ_CHECK(wire_moe_vec_bytes(WIRE_FMT_F32, h) == 4 * (size_t)h);
	FZ_CHECK(wire_moe_vec_bytes(WIRE_FMT_F16, h) == 2 * (size_t)h);
	FZ_CHECK(wire_moe_vec_bytes(WIRE_FMT_I8, h) ==
		 (h ? 8 + (size_t)h : 0));
	if (h == 0) {
		wire_moe_vec_encode(WIRE_FMT_I8, v, 0, a);
		goto out;
	}
	wire_moe_vec_encode(WIRE_FMT_F16, v, h, a + 1);	/* odd address */
	for (uint32_t i = 0; i < h; i++) {
		uint16_t x = quant_f32_to_f16_1(v[i]), y;

		memcpy(&y, a + 1 + 2 * (size_t)i, 2);
		FZ_CHECK(x == y);
	}
	memcpy(b, v, 4 * (size_t)h);
	wire_moe_vec_encode(WIRE_FMT_F16, (float *)(void *)b, h, b);
	FZ_CHECK(memcmp(a + 1, b, 2 * (size_t)h) == 0);
	quant_f32_to_i8_rows(a, v, 1, h);
	memcpy(b, v, 4 * (size_t)h);
	wire_moe_vec_encode(WIRE_FMT_I8, (float *)(void *)b, h, b);
	FZ_CHECK(memcmp(a, b, 8 + (size_t)h) == 0);
	wire_moe_vec_encode(WIRE_FMT_I8, v, h, b + 1);
	FZ_CHECK(memcmp(a, b + 1, 8 + (size_t)h) == 0);
	{
		bool big = false;

		for (uint32_t i = 0; i < h; i++)
			big |= isfinite(v[i]) &&
			       isinf(quant_f16_to_f32_1(
					quant_f32_to_f16_1(v[i])));
		FZ_CHECK(wire_moe_f16_overflows(v, h) == big);
	}
out:
	free(a);
	free(b);
}

/* A decoded task: x, pairs and the answers built from x. */
static void
check_task(const struct wire_moe_task *t, const uint8_t *body, size_t len)
{
	float *x = malloc(4 * (size_t)t->hidden + 1);
	uint32_t id;
	float w;

	FZ_CHECK(x != NULL);
	FZ_CHECK(t->x >= body && t->x_len == x_bytes(t->in, t->hidden));
	FZ_CHECK((size_t)(t->x - body) + t->x_len + 8 * (size_t)t->k <= len);
	wire_moe_task_x(t, x);
	for (uint32_t i = 0; i < t->k; i++)
		wire_moe_task_pair(t, i, &id, &w);
	if (t->in == WIRE_MOE_IN_F32)
		FZ_CHECK(memcmp(x, t->x, 4 * (size_t)t->hidden) == 0);
	check_vec(x, t->hidden);
	free(x);
}

static void
expect_trunc(int rc, const struct wire_error *e, int route)
{
	FZ_CHECK(rc == -EINVAL && e->status == 400 && !e->text);
	FZ_CHECK(strcmp(e->msg, trunc_msg[route]) == 0);
}

static void
fuzz_layer(const uint8_t *b, size_t len, enum wire_moe_in in, int route,
	   float lat)
{
	struct wire_moe_task t;
	struct wire_error e;
	int rc = wire_moe_layer_decode(&t, b, len, in, &e);
	bool fits = len >= 12 && len >= 12 + x_bytes(in, le32(b + 4)) +
				8 * (uint64_t)le32(b + 8);
	uint8_t hdr[WIRE_MOE_LAYER_HDR];

	if (!fits) {
		expect_trunc(rc, &e, route);
		return;
	}
	FZ_CHECK(rc == 0);
	FZ_CHECK(t.layer == le32(b) && t.hidden == le32(b + 4) &&
		 t.k == le32(b + 8) && t.x == b + 12 && t.in == in);
	check_task(&t, b, len);
	wire_moe_layer_resp_hdr(hdr, t.hidden, lat);
	FZ_CHECK(le32(hdr) == t.hidden);
}

static void
fuzz_multi(const uint8_t *b, size_t len, enum wire_moe_in in, int route)
{
	struct wire_moe_task t;
	struct wire_error e;
	uint32_t n;
	size_t pos = 4;
	/* §3.4 / §3.5 walked again from the text */
	bool fits = len >= 4;
	uint64_t p = 4;

	for (uint32_t i = 0; fits && i < le32(b); i++) {
		if (len - p < 12) {
			fits = false;
			break;
		}
		uint64_t need = 12 + x_bytes(in, le32(b + p + 4)) +
				8 * (uint64_t)le32(b + p + 8);
		if (len - p < need)
			fits = false;
		else
			p += need;
	}
	int rc = wire_moe_multi_check(b, len, in, &n, &e);

	if (!fits) {
		expect_trunc(rc, &e, route);
		return;
	}
	FZ_CHECK(rc == 0 && n == le32(b));
	for (uint32_t i = 0; i < n; i++) {
		size_t at = pos;

		wire_moe_multi_next(b, &pos, in, &t);
		FZ_CHECK(t.x == b + at + 12 && pos <= len);
		check_task(&t, b, len);
	}
	FZ_CHECK(pos == p);
}

static void
fuzz_batch(const uint8_t *b, size_t len, float lat)
{
	struct wire_moe_item it;
	struct wire_error e;
	uint32_t n, h;
	int rc = wire_moe_batch_check(b, len, &n, &h, &e);
	bool fits = len >= 8 && (len - 8) / (8 + 4 * (uint64_t)le32(b + 4)) >=
				le32(b);
	size_t size;
	uint8_t *r;

	if (!fits) {
		expect_trunc(rc, &e, 5);
		return;
	}
	FZ_CHECK(rc == 0 && n == le32(b) && h == le32(b + 4));
	size = wire_moe_batch_resp_size(n, h);
	FZ_CHECK(size == 12 + (uint64_t)n * (8 + 4 * (uint64_t)h));
	FZ_CHECK(size <= len + 4);	/* the answer is the request's size */
	r = malloc(size);
	FZ_CHECK(r != NULL);
	wire_moe_batch_resp_hdr(r, n, h, lat);
	for (uint32_t i = 0; i < n; i++) {
		wire_moe_batch_item(b, h, i, &it);
		FZ_CHECK(it.x + 4 * (size_t)h <= b + len);
		memcpy(wire_moe_batch_resp_item(r, h, i, it.layer, it.expert),
		       it.x, 4 * (size_t)h);
	}
	/* the answer is the request with latency inserted */
	FZ_CHECK(le32(r) == n && le32(r + 4) == (n ? h : 0));
	FZ_CHECK(memcmp(r + 12, b + 8, size - 12) == 0);
	free(r);
}

/* The single route's body again, from an answer's "output" array. */
static void
reread(const float *v, size_t n)
{
	char *out, *body;
	size_t len, m;
	float *back;
	struct wire_error e;
	bool finite = true;

	FZ_CHECK(wire_moe_json_single_resp(v, n, 1.5, &out, &len) == 0);
	FZ_CHECK(strlen(out) == len);
	for (size_t i = 0; i < n; i++)
		finite &= isfinite(v[i]) != 0;
	if (!finite) {
		free(out);
		return;
	}
	/* {"output":[...],"latency_ms":1.5} -> {"residual":[...]} */
	body = malloc(len + 8);
	FZ_CHECK(body != NULL);
	char *end = strstr(out, "],\"latency_ms\"");

	FZ_CHECK(end != NULL);
	m = (size_t)(end - (out + 10)) + 1;
	memcpy(body, "{\"residual\":", 12);
	memcpy(body + 12, out + 10, m);
	body[12 + m] = '}';
	FZ_CHECK(wire_moe_json_single(body, 13 + m, &back, &len, &e) == 0);
	FZ_CHECK(len == n);
	FZ_CHECK(n == 0 || memcmp(back, v, 4 * n) == 0);
	free(back);
	free(body);
	free(out);
}

static void
fuzz_json_single(const uint8_t *b, size_t len)
{
	struct wire_error e;
	float *r;
	size_t n;
	int rc = wire_moe_json_single((const char *)b, len, &r, &n, &e);

	if (rc != 0) {
		FZ_CHECK(rc == -EINVAL || rc == -ENOMEM);
		if (rc == -ENOMEM)
			return;
		FZ_CHECK(e.text);
		FZ_CHECK((e.status == 400 && strncmp(e.msg, "Failed to parse "
			  "the request body as JSON: ", 42) == 0) ||
			 (e.status == 422 && strncmp(e.msg, "Failed to "
			  "deserialize the JSON body into the target type: ",
			  58) == 0));
		return;
	}
	FZ_CHECK(n <= len);
	reread(r, n);
	free(r);
}

static void
fuzz_json_batch(const uint8_t *b, size_t len, float lat)
{
	struct wire_moe_json_item *it;
	struct wire_error e;
	size_t n, len_out;
	char *out;
	int rc = wire_moe_json_batch((const char *)b, len, &it, &n, &e);

	if (rc != 0) {
		FZ_CHECK(rc == -EINVAL || rc == -ENOMEM);
		if (rc == -EINVAL)
			FZ_CHECK(e.status == 400 && !e.text &&
				 strncmp(e.msg, "JSON parse: ", 12) == 0);
		return;
	}
	FZ_CHECK(n <= len);
	for (size_t i = 0; i < n; i++) {
		const float *o = it[i].residual;

		/* inside the one block, after the items */
		FZ_CHECK((const void *)o >= (const void *)(it + n));
		FZ_CHECK(wire_moe_json_batch_resp(&it[i].layer, &it[i].expert,
						  &o, 1, it[i].n, lat, &out,
						  &len_out) == 0);
		FZ_CHECK(strlen(out) == len_out);
		free(out);
		reread(it[i].residual, it[i].n);
	}
	free(it);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t ctl, *b;
	float lat;
	size_t len;

	if (size < 1)
		return 0;
	ctl = data[0];
	len = size - 1;
	lat = (float)(ctl >> 3) / 3.0f;
	b = malloc(len ? len : 1);	/* exact size: ASan sees over-reads */
	if (b == NULL)
		return 0;
	memcpy(b, data + 1, len);
	switch (ctl & 7) {
	case 0: fuzz_layer(b, len, WIRE_MOE_IN_F32, 0, lat); break;
	case 1: fuzz_layer(b, len, WIRE_MOE_IN_F16, 1, lat); break;
	case 2: fuzz_layer(b, len, WIRE_MOE_IN_I8, 2, lat); break;
	case 3: fuzz_multi(b, len, WIRE_MOE_IN_F32, 3); break;
	case 4: fuzz_multi(b, len, WIRE_MOE_IN_Q8K, 4); break;
	case 5: fuzz_batch(b, len, lat); break;
	case 6: fuzz_json_single(b, len); break;
	default: fuzz_json_batch(b, len, lat); break;
	}
	free(b);
	return 0;
}
