/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * libFuzzer harness: the binary request of spec/wire.md §3-§4 (lib/wire:
 * Content-Type classification, decode, validation, payload widening) and,
 * on what validates, the response of §5 built from it (slots narrowed in
 * place, single and batch frames), decoded again here from the spec.
 *
 * Input: 8 control bytes, optional header values, then the body.
 *   [0] bits 0-3 Content-Type (table below; 12-15: from the input),
 *       bits 4-7 Accept (likewise)
 *   [1] bit 0 f16 responses on, bit 1 i8 responses on, bit 2 no model
 *       loaded, bit 3 the shard owns every layer, bit 4 hidden_size is
 *       taken from the body (so that validation can pass),
 *       bits 5-7 alignment of the body (0..7 bytes past malloc's)
 *   [2-3] hidden_size (0 reads as 1)
 *   [4] num_layers  [5] first owned  [6] last owned
 *   [7] latency in 1/3 ms
 *   then, for a Content-Type or Accept from the input: a length byte
 *   (% 64) and that many bytes, Content-Type first.
 *
 * The "compute" is the identity: every result's rows are the request's
 * rows, so each response payload must be the narrowing of the request's
 * values by the rules of §5.3 (implemented again below, from the text).
 */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"
#include "wire.h"
#include "fuzz_util.h"

/* Results computed per request: each is a slot of the rows' size. */
#define MAX_RESULTS 16

static const char *const ctypes[12] = {
	"application/x-larql-ffn",
	"application/x-larql-ffn-f16",
	"application/x-larql-ffn-i8",
	"application/json",
	NULL,
	"application/x-larql-ffn; charset=binary",
	"application/x-larql-ffn-i8, application/x-larql-ffn-f16",
	"text/plain application/x-larql-ffn-f16",
	"application/x-larql-ffn\x7f",
	"Application/X-Larql-Ffn",
	"application/x-larql-ffn-f16\t",
	"",
};

static const char *const accepts[12] = {
	NULL,
	"application/x-larql-ffn",
	"application/x-larql-ffn-f16",
	"application/x-larql-ffn-i8",
	"application/x-larql-ffn-i8, application/x-larql-ffn-f16, "
	"application/x-larql-ffn",
	"application/x-larql-ffn-f16, application/x-larql-ffn",
	"*/*",
	"application/json",
	"application/x-larql-ffn-i8\x80",
	"",
	"application/x-larql-ffn-F16",
	"application/x-larql-ffn-i8;q=0",
};

static uint32_t
bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

/* A header value: from the table, or (sel >= 12) length-prefixed bytes
 * of the input. */
static const char *
header(struct fz *f, unsigned int sel, const char *const *tab,
       size_t *len)
{
	const char *v;

	if (sel < 12) {
		v = tab[sel];
		*len = v ? strlen(v) : 0;
		return v;
	}
	*len = fz_u8(f) % 64;
	if (*len > f->n)
		*len = f->n;
	v = (const char *)f->p;
	f->p += *len;
	f->n -= *len;
	return v;
}

static void
check_error(const struct wire_error *e)
{
	size_t n = strlen(e->msg);
	char *buf;
	int r;

	FZ_CHECK(e->status == 400 || e->status == 404);
	FZ_CHECK(n > 0 && n < WIRE_ERR_MSG_MAX);
	/* wire.h: 6 * strlen(msg) + 13 always suffices */
	buf = malloc(6 * n + 13);
	FZ_CHECK(buf != NULL);
	r = wire_error_json(e, buf, 6 * n + 13);
	FZ_CHECK(r > 0 && (size_t)r < 6 * n + 13 && buf[r] == '\0');
	FZ_CHECK(memcmp(buf, "{\"error\":\"", 10) == 0);
	FZ_CHECK(memcmp(buf + r - 2, "\"}", 2) == 0);
	FZ_CHECK(wire_error_json(e, buf, (size_t)r) == -ENOSPC);
	free(buf);
}

/* The decoded structure agrees with the bytes (§3). */
static void
check_decoded(const struct wire_req *r, const uint8_t *b, size_t len,
	      enum wire_fmt fmt)
{
	size_t hdr = r->batch ? 8 + 4 * (size_t)r->n_layers : 4;

	FZ_CHECK(r->fmt == fmt);
	FZ_CHECK(r->flags & 1u);
	FZ_CHECK(r->batch == (fz_le32(b) == WIRE_BATCH_MARKER));
	FZ_CHECK(r->batch || r->n_layers == 1);
	FZ_CHECK(hdr + 12 <= len);
	FZ_CHECK(r->seq_len == fz_le32(b + hdr));
	FZ_CHECK(r->flags == fz_le32(b + hdr + 4));
	FZ_CHECK(r->top_k == fz_le32(b + hdr + 8));
	FZ_CHECK(r->payload == b + hdr + 12);
	FZ_CHECK(r->payload_len == len - hdr - 12);
	for (uint32_t i = 0; i < r->n_layers; i++)
		FZ_CHECK(wire_req_layer(r, i) ==
			 fz_le32(r->batch ? b + 8 + 4 * (size_t)i : b));
	switch (fmt) {
	case WIRE_FMT_F32:
		FZ_CHECK(r->n_values * 4 == r->payload_len);
		break;
	case WIRE_FMT_F16:
		FZ_CHECK(r->n_values * 2 == r->payload_len);
		break;
	case WIRE_FMT_I8:
		FZ_CHECK(r->i8_rows == (r->seq_len ? r->seq_len : 1));
		FZ_CHECK(r->i8_row_values >= 1);
		FZ_CHECK((uint64_t)r->i8_rows * (8 + r->i8_row_values) ==
			 r->payload_len);
		FZ_CHECK(r->n_values == r->i8_rows * r->i8_row_values);
		break;
	}
}

/* wire_req_payload_f32 against the §3 definitions, value by value. */
static void
check_widened(const struct wire_req *r, const float *x)
{
	const uint8_t *p = r->payload;

	switch (r->fmt) {
	case WIRE_FMT_F32:
		FZ_CHECK(memcmp(x, p, r->n_values * 4) == 0);
		break;
	case WIRE_FMT_F16:
		for (uint64_t i = 0; i < r->n_values; i++) {
			uint16_t h = p[2 * i] | p[2 * i + 1] << 8;

			FZ_CHECK(bits(x[i]) ==
				 bits(quant_f16_to_f32_1(h)));
		}
		break;
	case WIRE_FMT_I8:
		for (uint32_t row = 0; row < r->i8_rows; row++) {
			const uint8_t *q = p + row * (8 + r->i8_row_values);
			float scale = fz_lef32(q);

			for (uint64_t i = 0; i < r->i8_row_values; i++) {
				float v = (float)(int8_t)q[8 + i] * scale;

				FZ_CHECK(bits(x[row * r->i8_row_values + i]) ==
					 bits(v));
			}
		}
		break;
	}
}

/* §5.3 i8, from the text: max_abs ignores NaN, scale = max_abs / 127
 * (1 when 0), q = v / scale clamped to [-127, 127], rounded half away
 * from zero, NaN -> 0. */
static void
i8_row_ref(const float *v, size_t n, float *scale, int8_t *q)
{
	float m = 0.0f;

	for (size_t i = 0; i < n; i++)
		m = fmaxf(m, fabsf(v[i]));
	*scale = m == 0.0f ? 1.0f : m / 127.0f;
	for (size_t i = 0; i < n; i++) {
		float t = v[i] / *scale;

		if (isnan(t))
			q[i] = 0;
		else
			q[i] = (int8_t)roundf(t < -127.0f ? -127.0f :
					      t > 127.0f ? 127.0f : t);
	}
}

/* One result's payload (§5.2) against the rows x narrowed to fmt. */
static void
check_payload(const uint8_t *pl, size_t plen, enum wire_fmt fmt,
	      const struct wire_req *r, const float *x, uint32_t hidden)
{
	uint64_t m = (uint64_t)r->seq_len * hidden;

	switch (fmt) {
	case WIRE_FMT_F32:
		FZ_CHECK(plen == 4 * m);
		FZ_CHECK(memcmp(pl, x, plen) == 0);
		break;
	case WIRE_FMT_F16:
		FZ_CHECK(plen == 2 * m);
		for (uint64_t i = 0; i < m; i++) {
			uint16_t h = pl[2 * i] | pl[2 * i + 1] << 8;

			FZ_CHECK(h == quant_f32_to_f16_1(x[i]));
			/* f16 in, f16 out: the same value back */
			if (r->fmt == WIRE_FMT_F16 && !isnan(x[i]))
				FZ_CHECK(h == (r->payload[2 * i] |
					       r->payload[2 * i + 1] << 8));
		}
		break;
	case WIRE_FMT_I8: {
		int8_t *q = malloc(hidden);

		FZ_CHECK(q != NULL);
		FZ_CHECK(plen == (uint64_t)r->seq_len * (8 + hidden));
		for (uint32_t row = 0; row < r->seq_len; row++) {
			const uint8_t *o = pl + (size_t)row * (8 + hidden);
			float scale;

			i8_row_ref(x + (size_t)row * hidden, hidden, &scale, q);
			FZ_CHECK(fz_le32(o) == bits(scale));
			FZ_CHECK(fz_le32(o + 4) == 0);	/* zero_point */
			FZ_CHECK(memcmp(o + 8, q, hidden) == 0);
		}
		free(q);
		break;
	}
	}
}

/* Build the response for a validated request, then decode it (§5.2). */
static void
respond(const struct wire_req *r, const float *x, uint32_t hidden,
	enum wire_fmt fmt, double latency)
{
	uint32_t n = r->n_layers < MAX_RESULTS ? r->n_layers : MAX_RESULTS;
	size_t ssz = wire_slot_size(fmt, r->seq_len, hidden);
	struct iovec iov[MAX_RESULTS + 1];
	void *slots[MAX_RESULTS] = { NULL };
	struct wire_frame frame;
	uint8_t *out, *o;
	size_t total = 0;

	FZ_CHECK(ssz > 0 && ssz % WIRE_SLOT_ALIGN == 0);
	for (uint32_t i = 0; i < n; i++) {
		float *rows;

		slots[i] = aligned_alloc(WIRE_SLOT_ALIGN, ssz);
		FZ_CHECK(slots[i] != NULL);
		rows = wire_slot_f32(slots[i], fmt, r->seq_len, hidden);
		FZ_CHECK(rows != NULL);
		FZ_CHECK((uintptr_t)rows % 64 == 0);
		FZ_CHECK((uint8_t *)rows + 4 * r->n_values <=
			 (uint8_t *)slots[i] + ssz);
		memcpy(rows, x, 4 * r->n_values);
		FZ_CHECK(wire_slot_finish(slots[i], fmt, wire_req_layer(r, i),
					  r->seq_len, hidden,
					  &iov[1 + i]) == 0);
		/* the result lies inside its slot */
		FZ_CHECK((uint8_t *)iov[1 + i].iov_base >= (uint8_t *)slots[i]);
		FZ_CHECK((uint8_t *)iov[1 + i].iov_base + iov[1 + i].iov_len <=
			 (uint8_t *)slots[i] + ssz);
	}
	FZ_CHECK(wire_frame_finish(&frame, iov, n, latency) == 0);
	FZ_CHECK(frame.iovcnt == (n == 1 ? 1 : n + 1));
	out = malloc(frame.len ? frame.len : 1);
	FZ_CHECK(out != NULL);
	for (unsigned int i = 0; i < frame.iovcnt; i++) {
		FZ_CHECK(total + frame.iov[i].iov_len <= frame.len);
		memcpy(out + total, frame.iov[i].iov_base,
		       frame.iov[i].iov_len);
		total += frame.iov[i].iov_len;
	}
	FZ_CHECK(total == frame.len);

	/* decode as a client would */
	o = out;
	if (n == 1) {
		FZ_CHECK(total >= 12);
		FZ_CHECK(fz_le32(o) == wire_req_layer(r, 0));
		FZ_CHECK(fz_le32(o + 4) == r->seq_len);
		FZ_CHECK(fz_le32(o + 8) == bits((float)latency));
		check_payload(o + 12, total - 12, fmt, r, x, hidden);
	} else {
		size_t pos = 12;

		FZ_CHECK(total >= 12);
		FZ_CHECK(fz_le32(o) == WIRE_BATCH_MARKER);
		FZ_CHECK(fz_le32(o + 4) == n);
		FZ_CHECK(fz_le32(o + 8) == bits((float)latency));
		for (uint32_t i = 0; i < n; i++) {
			size_t plen = iov[1 + i].iov_len - 12;

			FZ_CHECK(pos + 12 + plen <= total);
			FZ_CHECK(fz_le32(o + pos) == wire_req_layer(r, i));
			FZ_CHECK(fz_le32(o + pos + 4) == r->seq_len);
			FZ_CHECK(fz_le32(o + pos + 8) == r->n_values);
			check_payload(o + pos + 12, plen, fmt, r, x, hidden);
			pos += 12 + plen;
		}
		FZ_CHECK(pos == total);
	}
	free(out);
	for (uint32_t i = 0; i < n; i++)
		free(slots[i]);
}

static void
binary(const uint8_t *body, size_t len, enum wire_fmt fmt,
       struct wire_model *m, bool fit, enum wire_fmt rfmt, double latency)
{
	struct wire_error err = { 0 };
	struct wire_req r;
	const float *view;
	float *x;

	if (wire_req_decode(&r, len ? body : NULL, len, fmt, &err) != 0) {
		FZ_CHECK(err.status == 400);
		check_error(&err);
		return;
	}
	check_decoded(&r, body, len, fmt);
	if (fit && r.seq_len > 0 && r.n_values > 0 &&
	    r.n_values % r.seq_len == 0 && r.n_values / r.seq_len <= UINT32_MAX)
		m->hidden = (uint32_t)(r.n_values / r.seq_len);
	if (wire_req_validate(&r, m, &err) != 0) {
		check_error(&err);
		FZ_CHECK((err.status == 404) == !m->loaded);
		return;
	}
	/* what validation promises (wire.h) */
	FZ_CHECK(m->loaded);
	FZ_CHECK(r.seq_len >= 1);
	FZ_CHECK(r.n_values == (uint64_t)r.seq_len * m->hidden);
	for (uint32_t i = 0; i < r.n_layers; i++) {
		uint32_t l = wire_req_layer(&r, i);

		FZ_CHECK(l < m->num_layers);
		FZ_CHECK(m->owns_all || (l >= m->first && l <= m->last));
	}
	x = malloc(r.n_values * 4 + 4);
	FZ_CHECK(x != NULL);
	if (r.n_values > 0)
		FZ_CHECK(wire_req_payload_f32(&r, x, r.n_values - 1) ==
			 -ENOSPC);
	FZ_CHECK(wire_req_payload_f32(&r, x, r.n_values) == 0);
	check_widened(&r, x);
	view = wire_req_payload_view(&r);
	if (fmt == WIRE_FMT_F32 && ((uintptr_t)r.payload & 3) == 0)
		FZ_CHECK(view == (const float *)(const void *)r.payload);
	else
		FZ_CHECK(view == NULL);
	respond(&r, x, m->hidden, rfmt, latency);
	free(x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	uint8_t sel = fz_u8(&f), fl = fz_u8(&f);
	uint16_t hidden = fz_u16(&f);
	struct wire_model m = {
		.loaded = !(fl & 4),
		.hidden = hidden ? hidden : 1,
		.owns_all = (fl & 8) != 0,
	};
	struct wire_opts o = { .f16 = fl & 1, .i8 = (fl >> 1) & 1 };
	struct wire_error err = { 0 };
	struct wire_json_req jr;
	enum wire_fmt fmt = WIRE_FMT_F32, rfmt;
	const char *ct, *acc;
	size_t ctlen, acclen;
	double latency;
	struct fz_buf b;

	m.num_layers = fz_u8(&f);
	m.first = fz_u8(&f);
	m.last = fz_u8(&f);
	latency = fz_u8(&f) / 3.0;
	ct = header(&f, sel & 15, ctypes, &ctlen);
	acc = header(&f, sel >> 4, accepts, &acclen);

	rfmt = wire_response_format(acc, acclen, &o);
	FZ_CHECK(rfmt == WIRE_FMT_F32 || (rfmt == WIRE_FMT_F16 && o.f16) ||
		 (rfmt == WIRE_FMT_I8 && o.i8));
	FZ_CHECK(acc != NULL || rfmt == WIRE_FMT_F32);

	if (fz_buf_copy(&b, f.p, f.n, fl >> 5) != 0)
		return 0;
	if (wire_request_format(ct, ctlen, &fmt)) {
		FZ_CHECK(ct != NULL && memmem(ct, ctlen,
			 "application/x-larql-ffn", 23) != NULL);
		binary(b.p, f.n, fmt, &m, (fl & 16) != 0, rfmt, latency);
	} else if (wire_json_req_parse(&jr, (const char *)b.p, f.n,
				       &err) == 0) {
		/* §3: anything else is the JSON path (fuzz_json.c) */
		wire_json_req_free(&jr);
	}
	free(b.base);
	return 0;
}
