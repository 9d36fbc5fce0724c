/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Binary request decode and the checks of spec/wire.md §4, in the table's
 * order with the reference server's exact statuses and messages.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "quant.h"
#include "wire_priv.h"

int
wire_error_set(struct wire_error *e, int status, const char *fmt, ...)
{
	va_list ap;

	e->status = status;
	e->text = false;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int
wire_json_str(char *buf, size_t cap, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

#define PUT(c) do { if (o + 1 >= cap) return -ENOSPC; buf[o++] = (c); } while (0)
	PUT('"');
	for (const unsigned char *s = (const unsigned char *)str; *s; s++) {
		unsigned char c = *s;

		/* serde_json's escapes; everything else, UTF-8 included, as is */
		switch (c) {
		case '"': PUT('\\'); PUT('"'); break;
		case '\\': PUT('\\'); PUT('\\'); break;
		case '\b': PUT('\\'); PUT('b'); break;
		case '\f': PUT('\\'); PUT('f'); break;
		case '\n': PUT('\\'); PUT('n'); break;
		case '\r': PUT('\\'); PUT('r'); break;
		case '\t': PUT('\\'); PUT('t'); break;
		default:
			if (c < 0x20) {
				PUT('\\'); PUT('u'); PUT('0'); PUT('0');
				PUT(hex[c >> 4]); PUT(hex[c & 15]);
			} else {
				PUT((char)c);
			}
		}
	}
	PUT('"');
#undef PUT
	buf[o] = '\0';
	return (int)o;
}

int
wire_error_json(const struct wire_error *e, char *buf, size_t cap)
{
	static const char head[] = "{\"error\":";
	int n;

	if (cap < sizeof(head))
		return -ENOSPC;
	memcpy(buf, head, sizeof(head) - 1);
	n = wire_json_str(buf + sizeof(head) - 1, cap - (sizeof(head) - 1),
			  e->msg);
	if (n < 0 || (size_t)n + sizeof(head) >= cap)
		return -ENOSPC;
	n += sizeof(head) - 1;
	buf[n++] = '}';
	buf[n] = '\0';
	return n;
}

uint32_t
wire_req_layer(const struct wire_req *r, uint32_t i)
{
	return r->batch ? wire_le32(r->layers_ + 4 * (size_t)i) : r->layer_;
}

int
wire_req_decode(struct wire_req *r, const void *body, size_t len,
		enum wire_fmt fmt, struct wire_error *err)
{
	const uint8_t *b = body;
	size_t hdr_end;	/* end of the layer (list), before seq_len */

	memset(r, 0, sizeof(*r));
	r->fmt = fmt;
	if (len < WIRE_REQ_HDR_MIN)
		return wire_error_set(err, 400,
			"binary: body too short (need \u2265 16 bytes)");
	if (wire_le32(b) == WIRE_BATCH_MARKER) {
		uint32_t k = wire_le32(b + 4);
		/* 8 + 4K fits in 64 bits for every u32 K */
		uint64_t list_end = 8 + 4 * (uint64_t)k;

		if ((uint64_t)len < list_end)
			return wire_error_set(err, 400,
				"binary batch: body too short for %" PRIu32
				" layer indices", k);
		r->batch = true;
		r->n_layers = k;
		r->layers_ = b + 8;
		hdr_end = (size_t)list_end;
	} else {
		r->n_layers = 1;
		r->layer_ = wire_le32(b);
		hdr_end = 4;
	}
	if (len - hdr_end < 12)
		return wire_error_set(err, 400,
			"binary: truncated fixed header (seq_len/flags/top_k)");
	r->seq_len = wire_le32(b + hdr_end);
	r->flags = wire_le32(b + hdr_end + 4);
	r->top_k = wire_le32(b + hdr_end + 8);
	r->payload = b + hdr_end + 12;
	r->payload_len = len - hdr_end - 12;

	switch (fmt) {
	case WIRE_FMT_F32:
		if (r->payload_len % 4 != 0)
			return wire_error_set(err, 400,
				"binary: residual byte length is not a multiple of 4");
		r->n_values = r->payload_len / 4;
		break;
	case WIRE_FMT_F16:
		if (r->payload_len % 2 != 0)
			return wire_error_set(err, 400,
				"f16 binary request: residual byte length is not a multiple of f16");
		r->n_values = r->payload_len / 2;
		break;
	case WIRE_FMT_I8: {
		/* §3: hidden = payload_len / max(seq_len, 1) - 8. An empty
		 * payload is 0 bytes per position: the §4 row "leaves no
		 * residual data" (the spec's table has no exception). */
		uint32_t rows = r->seq_len > 0 ? r->seq_len : 1;
		size_t per_row;

		if (r->payload_len % rows != 0)
			return wire_error_set(err, 400,
				"i8 binary request: payload of %zu bytes is not a multiple of seq_len %" PRIu32,
				r->payload_len, rows);
		per_row = r->payload_len / rows;
		if (per_row <= QUANT_I8_ROW_HDR)
			return wire_error_set(err, 400,
				"i8 binary request: %zu bytes per position leaves no residual data after the 8-byte scale/zero header",
				per_row);
		r->i8_rows = rows;
		r->i8_row_values = per_row - QUANT_I8_ROW_HDR;
		r->n_values = (uint64_t)rows * r->i8_row_values; /* <= len */
		break;
	}
	default:
		return wire_error_set(err, 500, "unknown wire format %d",
				      (int)fmt);
	}
	if (!(r->flags & 1u))
		return wire_error_set(err, 400,
			"binary wire format requires full_output = true");
	return 0;
}

static uint64_t
layer_at(const struct wire_layers *l, size_t i)
{
	if (l->le32 != NULL)
		return wire_le32(l->le32 + 4 * i);
	if (l->u64 != NULL)
		return l->u64[i];
	return l->single;
}

int
wire_validate_common(const struct wire_model *m, uint64_t seq_len,
		     uint64_t n_values, bool full_output,
		     const struct wire_layers *l, struct wire_error *err)
{
	uint64_t hidden = m->hidden;
	uint64_t expected;

	if (!m->loaded) {
		wire_error_set(err, 404, "no model loaded");
		return -ENOENT;
	}
	/* validate_residual: features mode wants exactly hidden values. */
	if (full_output) {
		if (__builtin_mul_overflow(seq_len, hidden, &expected))
			return wire_error_set(err, 400,
					      "seq_len * hidden overflow");
	} else {
		expected = hidden;
	}
	if (n_values != expected)
		return wire_error_set(err, 400,
			"residual has %" PRIu64 " elements, expected %" PRIu64
			" (seq_len=%" PRIu64 " * hidden_size=%" PRIu64 ")",
			n_values, expected, full_output ? seq_len : 1,
			hidden);
	if (full_output && seq_len == 0)
		return wire_error_set(err, 400, "seq_len must be >= 1");
	if (!l->present)
		return wire_error_set(err, 400,
				      "must provide 'layer' or 'layers'");
	/* validate_owned runs over all layers before any range check. */
	for (size_t i = 0; !m->owns_all && i < l->n; i++) {
		uint64_t layer = layer_at(l, i);

		if (layer < m->first || layer > m->last)
			return wire_error_set(err, 400,
				"layer %" PRIu64 " not served by this shard (owned: %" PRIu32 "\u2013%" PRIu32 ")",
				layer, m->first, m->last);
	}
	for (size_t i = 0; i < l->n; i++) {
		uint64_t layer = layer_at(l, i);

		if (layer >= m->num_layers)
			return wire_error_set(err, 400,
				"layer %" PRIu64 " out of range (num_layers = %" PRIu32 ")",
				layer, m->num_layers);
	}
	return 0;
}

int
wire_req_validate(const struct wire_req *r, const struct wire_model *m,
		  struct wire_error *err)
{
	struct wire_layers l = {
		.present = true,
		.n = r->n_layers,
		.single = r->layer_,
		.le32 = r->batch ? r->layers_ : NULL,
	};

	/* The binary path is always full output (decode checked flags). */
	return wire_validate_common(m, r->seq_len, r->n_values, true, &l, err);
}

int
wire_req_payload_f32(const struct wire_req *r, float *dst, size_t dst_values)
{
	if (dst_values < r->n_values)
		return -ENOSPC;
	switch (r->fmt) {
	case WIRE_FMT_F32:
		/* The body may sit at any alignment: memcpy, not a cast. */
		memcpy(dst, r->payload, (size_t)r->n_values * 4);
		return 0;
	case WIRE_FMT_F16: {
		const uint8_t *p = r->payload;
		size_t n = (size_t)r->n_values;

		if (((uintptr_t)p & 1u) == 0) {
			quant_f16_to_f32(dst, (const uint16_t *)(const void *)p,
					 n);
			return 0;
		}
		/* Odd address: bounce through an aligned stack buffer. */
		for (size_t done = 0; done < n;) {
			uint16_t tmp[512];
			size_t c = n - done < 512 ? n - done : 512;

			memcpy(tmp, p + 2 * done, 2 * c);
			quant_f16_to_f32(dst + done, tmp, c);
			done += c;
		}
		return 0;
	}
	case WIRE_FMT_I8:
		if (r->n_values == 0)
			return 0;
		quant_i8_rows_to_f32(dst, r->payload, r->i8_rows,
				     (size_t)r->i8_row_values);
		return 0;
	default:
		return -EINVAL;
	}
}

const float *
wire_req_payload_view(const struct wire_req *r)
{
	if (r->fmt != WIRE_FMT_F32 || ((uintptr_t)r->payload & 3u) != 0)
		return NULL;
	return (const float *)(const void *)r->payload;
}
