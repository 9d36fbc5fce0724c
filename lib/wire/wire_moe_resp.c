/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Answers of the layer and multi-layer expert routes (spec/moe.md §3.2-
 * §3.5) and their negotiation (§7): one row per route family, the
 * formats' switches from wire_neg.c's table, the vector codecs from
 * lib/quant (wire.md §5.3).
 */
#include <math.h>
#include <string.h>

#include "quant.h"
#include "wire_moe.h"
#include "wire_priv.h"

/* §7: a family's answer types; the f16 and i8 ones are also the Accept
 * tokens that ask for them. No token contains another family's. */
static const char *const fams[WIRE_MOE_FAMILY_COUNT][WIRE_FMT_JSON] = {
	[WIRE_MOE_LAYER] = {
		[WIRE_FMT_F32] = "application/x-larql-experts-layer",
		[WIRE_FMT_F16] = "application/x-larql-experts-layer-f16",
		[WIRE_FMT_I8] = "application/x-larql-experts-layer-i8",
	},
	[WIRE_MOE_MULTI] = {
		[WIRE_FMT_F32] = "application/x-larql-experts-multi-layer",
		[WIRE_FMT_F16] = "application/x-larql-experts-multi-layer-f16",
		[WIRE_FMT_I8] = "application/x-larql-experts-multi-layer-i8",
	},
};

/* §7's rules in order: i8, then f16; f32 is never asked for. */
static const enum wire_fmt asked_order[] = { WIRE_FMT_I8, WIRE_FMT_F16 };

enum wire_fmt
wire_moe_response_format(enum wire_moe_family fam, enum wire_fmt own,
			 const char *accept, size_t len,
			 const struct wire_opts *o)
{
	/* The first Accept field, whole, by substring (wire.md §5.1); a
	 * value with a byte outside visible ASCII counts as absent. */
	if ((int)fam < 0 || fam >= WIRE_MOE_FAMILY_COUNT ||
	    !wire_header_usable(accept, len))
		return own;
	for (size_t i = 0; i < sizeof(asked_order) / sizeof(asked_order[0]);
	     i++) {
		enum wire_fmt f = asked_order[i];

		if (wire_fmt_enabled(o, f) &&
		    wire_contains(accept, len, fams[fam][f]))
			return f;
	}
	return own;
}

const char *
wire_moe_content_type(enum wire_moe_family fam, enum wire_fmt fmt)
{
	if ((int)fam < 0 || fam >= WIRE_MOE_FAMILY_COUNT || (int)fmt < 0 ||
	    fmt >= WIRE_FMT_JSON)
		return NULL;
	return fams[fam][fmt];
}

size_t
wire_moe_vec_bytes(enum wire_fmt fmt, uint32_t hidden)
{
	if (hidden == 0)
		return 0;	/* §7: empty in every format, no i8 header */
	switch (fmt) {
	case WIRE_FMT_F32:
		return 4 * (size_t)hidden;
	case WIRE_FMT_F16:
		return 2 * (size_t)hidden;
	case WIRE_FMT_I8:
		return QUANT_I8_ROW_BYTES(hidden);
	default:
		return 0;
	}
}

/* Values per call of the chunked in-place i8 encoder below. */
#define I8_CHUNK 64

/*
 * i8 in place with dst == src. lib/quant narrows in place only when the
 * f32 row starts QUANT_I8_HEADROOM(1) = 8 bytes after the i8 row, and a
 * buffer of max(4h, 8 + h) bytes has no room to move it there. So the
 * row goes through the kernel in chunks, each led by the row's max|v|:
 * the kernel's scale (max|v| / 127, NaN ignored) is then the whole
 * row's, and each q depends only on its value and the scale, so the
 * bytes are the one-call bytes. Chunk c's q land at 8 + i; a chunk is
 * copied out before it is written over, and for i >= 3 byte 8 + i lies
 * in a value already copied. The header goes last, over values 0, 1.
 */
static void
i8_in_place(float *v, uint32_t h)
{
	uint8_t *out = (uint8_t *)v;
	float lead = 0.0f, in[1 + I8_CHUNK];
	uint8_t q[QUANT_I8_ROW_BYTES(1 + I8_CHUNK)];
	uint8_t hdr[QUANT_I8_ROW_HDR] = { 0 };

	for (uint32_t i = 0; i < h; i++)
		if (fabsf(v[i]) > lead)	/* false for NaN, as the kernel */
			lead = fabsf(v[i]);
	/* chunks of I8_CHUNK >= 3 values: the first copies values 0..2 */
	for (uint32_t i = 0; i < h; i += I8_CHUNK) {
		uint32_t c = h - i < I8_CHUNK ? h - i : I8_CHUNK;

		in[0] = lead;
		memcpy(in + 1, v + i, (size_t)c * 4);
		quant_f32_to_i8_rows(q, in, 1, 1 + c);
		if (i == 0)
			memcpy(hdr, q, sizeof(hdr));
		memcpy(out + QUANT_I8_ROW_HDR + i, q + QUANT_I8_ROW_HDR + 1, c);
	}
	memcpy(out, hdr, sizeof(hdr));
}

void
wire_moe_vec_encode(enum wire_fmt fmt, const float *src, uint32_t hidden,
		    void *dst)
{
	if (hidden == 0)
		return;
	switch (fmt) {
	case WIRE_FMT_F32:
		if ((const void *)src != dst)
			memcpy(dst, src, 4 * (size_t)hidden);
		return;
	case WIRE_FMT_F16:
		/* wire.md §5.3: nearest-even, overflow to +-Inf */
		if (((uintptr_t)dst & 1) == 0) {
			quant_f32_to_f16(dst, src, hidden);
			return;
		}
		for (uint32_t i = 0; i < hidden; i++) {	/* odd address */
			uint16_t h = quant_f32_to_f16_1(src[i]);

			memcpy((uint8_t *)dst + 2 * (size_t)i, &h, 2);
		}
		return;
	case WIRE_FMT_I8:
		/* wire.md §5.3, one row: [scale][zero_point 0][q] */
		if ((const void *)src == dst)
			i8_in_place((float *)dst, hidden);
		else
			quant_f32_to_i8_rows(dst, src, 1, hidden);
		return;
	default:
		return;
	}
}

bool
wire_moe_f16_overflows(const float *v, size_t n)
{
	/* §7's guard: the f16 rounding of a finite |v| >= 65520 (half-way
	 * between 65504 and the next step, 65536) is +-Inf */
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]) && fabsf(v[i]) >= 65520.0f)
			return true;
	return false;
}

void
wire_moe_layer_resp_hdr(void *buf, uint32_t hidden, float latency_ms)
{
	uint32_t u;

	memcpy(&u, &latency_ms, sizeof(u));
	wire_put_le32(buf, hidden);
	wire_put_le32((uint8_t *)buf + 4, u);
}

void
wire_moe_multi_resp_count(void *buf, uint32_t n)
{
	wire_put_le32(buf, n);
}

void
wire_moe_multi_resp_task(void *at, uint32_t layer, uint32_t hidden)
{
	wire_put_le32(at, layer);
	wire_put_le32((uint8_t *)at + 4, hidden);
}
