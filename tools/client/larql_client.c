/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Wire codec of the client (spec/wire.md §3, §5). The HTTP part is in
 * lc_http.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include <quant.h>

#include "larql_client.h"

static const char *const fmt_names[LC_FMT_COUNT] = { "f32", "f16", "i8" };
static const char *const fmt_ctypes[LC_FMT_COUNT] = {
	"application/x-larql-ffn",
	"application/x-larql-ffn-f16",
	"application/x-larql-ffn-i8",
};
/* §5.1: what LARQL clients send for each preference. */
static const char *const fmt_accepts[LC_FMT_COUNT] = {
	"application/x-larql-ffn",
	"application/x-larql-ffn-f16, application/x-larql-ffn",
	"application/x-larql-ffn-i8, application/x-larql-ffn-f16, "
	"application/x-larql-ffn",
};

const char *
lc_fmt_name(enum lc_fmt f)
{
	return f < LC_FMT_COUNT ? fmt_names[f] : "?";
}

int
lc_fmt_parse(const char *s)
{
	int i;

	for (i = 0; i < LC_FMT_COUNT; i++)
		if (strcmp(s, fmt_names[i]) == 0)
			return i;
	return -EINVAL;
}

const char *
lc_fmt_ctype(enum lc_fmt f)
{
	return fmt_ctypes[f];
}

const char *
lc_fmt_accept(enum lc_fmt f)
{
	return fmt_accepts[f];
}

enum lc_fmt
lc_fmt_of_ctype(const char *ct)
{
	/* §3: i8 first, then f16, else f32. */
	if (strstr(ct, fmt_ctypes[LC_I8]) != NULL)
		return LC_I8;
	if (strstr(ct, fmt_ctypes[LC_F16]) != NULL)
		return LC_F16;
	return LC_F32;
}

size_t
lc_payload_bytes(enum lc_fmt f, uint32_t seq_len, uint32_t hidden)
{
	size_t m = (size_t)seq_len * hidden;

	switch (f) {
	case LC_F16:
		return 2 * m;
	case LC_I8:
		return (size_t)(seq_len ? seq_len : 1) *
			QUANT_I8_ROW_BYTES(hidden);
	default:
		return 4 * m;
	}
}

static void
put_u32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static uint32_t
get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		(uint32_t)p[3] << 24;
}

static float
get_f32(const uint8_t *p)
{
	uint32_t u = get_u32(p);
	float v;

	memcpy(&v, &u, 4);
	return v;
}

static void
encode_payload(uint8_t *p, const float *x, uint32_t seq_len,
	       uint32_t hidden, enum lc_fmt f)
{
	size_t m = (size_t)seq_len * hidden;

	switch (f) {
	case LC_F16: {
		uint16_t h;
		size_t i;

		for (i = 0; i < m; i++) {
			h = quant_f32_to_f16_1(x[i]);
			p[2 * i] = h;
			p[2 * i + 1] = h >> 8;
		}
		break;
	}
	case LC_I8:
		quant_f32_to_i8_rows(p, x, seq_len, hidden);
		break;
	default:
		memcpy(p, x, 4 * m);	/* little-endian host (x86, arm64) */
	}
}

ssize_t
lc_encode_request(void *buf, size_t cap, const uint32_t *layers,
		  uint32_t nlayers, int batch, uint32_t seq_len,
		  uint32_t hidden, const float *x, enum lc_fmt f)
{
	uint8_t *p = buf;
	size_t head, need;
	uint32_t i;

	if (nlayers != 1)
		batch = 1;
	head = batch ? 8 + 4 * (size_t)nlayers + 12 : 16;
	need = head + lc_payload_bytes(f, seq_len, hidden);
	if (need > cap)
		return -ENOSPC;
	if (batch) {
		put_u32(p, LC_BATCH_MARKER);
		put_u32(p + 4, nlayers);
		for (i = 0; i < nlayers; i++)
			put_u32(p + 8 + 4 * i, layers[i]);
		p += 8 + 4 * nlayers;
	} else {
		put_u32(p, layers[0]);
		p += 4;
	}
	put_u32(p, seq_len);
	put_u32(p + 4, 1);	/* flags: full output (§3) */
	put_u32(p + 8, LC_TOP_K);
	if (seq_len > 0)
		encode_payload(p + 12, x, seq_len, hidden, f);
	return (ssize_t)need;
}

void
lc_roundtrip(float *dst, const float *x, uint32_t seq_len, uint32_t hidden,
	     enum lc_fmt f)
{
	size_t m = (size_t)seq_len * hidden, i;
	uint8_t *tmp;

	if (f == LC_F32) {
		memmove(dst, x, 4 * m);
		return;
	}
	if (f == LC_F16) {
		for (i = 0; i < m; i++)
			dst[i] = quant_f16_to_f32_1(quant_f32_to_f16_1(x[i]));
		return;
	}
	tmp = malloc(lc_payload_bytes(f, seq_len, hidden));
	if (tmp == NULL)
		abort();
	quant_f32_to_i8_rows(tmp, x, seq_len, hidden);
	quant_i8_rows_to_f32(dst, tmp, seq_len, hidden);
	free(tmp);
}

/* Decode one payload of seq_len x hidden values at p (len bytes left). */
static int
decode_payload(float *dst, const uint8_t *p, size_t left, enum lc_fmt f,
	       uint32_t seq_len, uint32_t hidden, size_t *used)
{
	size_t m = (size_t)seq_len * hidden, i;

	*used = lc_payload_bytes(f, seq_len, hidden);
	if (*used > left)
		return -EBADMSG;
	switch (f) {
	case LC_F16:
		for (i = 0; i < m; i++)
			dst[i] = quant_f16_to_f32_1((uint16_t)(p[2 * i] |
							     p[2 * i + 1] << 8));
		break;
	case LC_I8:
		if (seq_len > 0 && hidden > 0)
			quant_i8_rows_to_f32(dst, p, seq_len, hidden);
		break;
	default:
		for (i = 0; i < m; i++)
			dst[i] = get_f32(p + 4 * i);
	}
	return 0;
}

static int
bad(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "malformed response: %s", what);
	return -EBADMSG;
}

int
lc_decode_response(struct lc_response *out, const void *body, size_t len,
		   enum lc_fmt f, uint32_t hidden, char *err, size_t errlen)
{
	const uint8_t *p = body;
	size_t off, used, total = 0;
	uint32_t i, n;

	memset(out, 0, sizeof(*out));
	if (len < 12)
		return bad(err, errlen, "shorter than 12 bytes");
	out->latency_ms = get_f32(p + 8);
	if (get_u32(p) != LC_BATCH_MARKER) {
		uint32_t seq = get_u32(p + 4), rows = seq ? seq : 1, h;
		size_t plen = len - 12;

		if (f == LC_F32)
			h = seq ? plen / 4 / seq : 0;
		else if (f == LC_F16)
			h = seq ? plen / 2 / seq : 0;
		else
			h = plen / rows > 8 ? plen / rows - 8 : 0;
		if (hidden && h != hidden)
			return bad(err, errlen, "single frame width differs "
				   "from hidden_size");
		if (lc_payload_bytes(f, seq, h) != plen)
			return bad(err, errlen, "single frame payload length");
		out->n = 1;
		out->r = calloc(1, sizeof(*out->r));
		out->store = malloc(4 * ((size_t)seq * h + 1));
		if (out->r == NULL || out->store == NULL)
			return -ENOMEM;
		out->r[0].layer = get_u32(p);
		out->r[0].seq_len = seq;
		out->r[0].num_values = seq * h;
		out->r[0].values = out->store;
		return decode_payload(out->store, p + 12, plen, f, seq, h,
				      &used);
	}
	out->batch = 1;
	n = get_u32(p + 4);
	/* First pass: validate and size the store. */
	for (off = 12, i = 0; i < n; i++) {
		uint32_t seq, nv;

		if (len - off < 12)
			return bad(err, errlen, "batch entry header truncated");
		seq = get_u32(p + off + 4);
		nv = get_u32(p + off + 8);
		if ((seq == 0 && nv != 0) || (seq && nv % seq))
			return bad(err, errlen, "num_values not seq_len x "
				   "hidden");
		if (hidden && seq && nv / seq != hidden)
			return bad(err, errlen, "batch entry width differs "
				   "from hidden_size");
		used = lc_payload_bytes(f, seq, seq ? nv / seq : 0);
		if (len - off - 12 < used)
			return bad(err, errlen, "batch entry payload truncated");
		off += 12 + used;
		total += nv;
	}
	if (off != len)
		return bad(err, errlen, "trailing bytes after the batch");
	out->n = n;
	out->r = calloc(n ? n : 1, sizeof(*out->r));
	out->store = malloc(4 * (total + 1));
	if (out->r == NULL || out->store == NULL)
		return -ENOMEM;
	for (off = 12, total = 0, i = 0; i < n; i++) {
		struct lc_result *r = &out->r[i];

		r->layer = get_u32(p + off);
		r->seq_len = get_u32(p + off + 4);
		r->num_values = get_u32(p + off + 8);
		r->values = out->store + total;
		decode_payload(r->values, p + off + 12, len - off - 12, f,
			       r->seq_len,
			       r->seq_len ? r->num_values / r->seq_len : 0,
			       &used);
		off += 12 + used;
		total += r->num_values;
	}
	return 0;
}

void
lc_response_free(struct lc_response *r)
{
	free(r->r);
	free(r->store);
	memset(r, 0, sizeof(*r));
}

double
lc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void
lc_rng_seed(struct lc_rng *r, uint64_t seed)
{
	r->s = seed * 0x9E3779B97F4A7C15ull + 1;
}

static double
lc_rng_unit(struct lc_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return ((r->s * 2685821657736338717ull) >> 11) *
		(1.0 / 9007199254740992.0);
}

float
lc_rng_normal(struct lc_rng *r)
{
	double u = lc_rng_unit(r), w = lc_rng_unit(r);

	if (u < 1e-300)
		u = 1e-300;
	return (float)(sqrt(-2 * log(u)) * cos(2 * M_PI * w));
}
