/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The JSON path (spec/wire.md §6): the request's accessors (its parser is
 * wire_json_req.c) and the response bodies, written by hand so that keys,
 * number layout and escaping are the reference's (serde_json::json!,
 * whose maps are sorted and whose f32 values are widened to f64 before
 * printing).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire_priv.h"

/* ---------------- request (parsed in wire_json_req.c) ---------------- */

void
wire_json_req_free(struct wire_json_req *r)
{
	free(r->layers);
	free(r->residual);
	memset(r, 0, sizeof(*r));
}

size_t
wire_json_req_n_layers(const struct wire_json_req *r)
{
	if (r->has_layers)
		return r->n_layers;
	return r->has_layer ? 1 : 0;
}

uint64_t
wire_json_req_layer(const struct wire_json_req *r, size_t i)
{
	return r->has_layers ? r->layers[i] : r->layer;
}

int
wire_json_req_validate(const struct wire_json_req *r,
		       const struct wire_model *m, struct wire_error *err)
{
	struct wire_layers l = {
		.present = r->has_layers || r->has_layer,
		.n = wire_json_req_n_layers(r),
		.u64 = r->has_layers ? r->layers : &r->layer,
	};

	int rc = wire_validate_common(m, r->seq_len, r->n_residual,
				      r->full_output, &l, err);

	/* spec/wire.md §6: a hybrid-MoE client asks for the whole MoE
	 * layer; a 200 with the plain FFN would pass for it. */
	if (rc == 0 && r->full_output && r->moe_layer)
		return wire_error_set(err, 400, "moe_layer=true but server "
				      "has no --moe-shards configured");
	return rc;
}

/* ---------------- numbers ---------------- */

/*
 * Shortest decimal that reads back as v (the digits ryu and Python's
 * repr produce): the fewest significant digits p for which glibc's
 * correctly rounded "%.*e" round-trips through strtod. Round-tripping is
 * monotone in p (the p-digit string is also a p+1-digit candidate), so
 * a binary search over 1..17 finds it. Returns the digit count; digits
 * holds them (no dot), *e10 the exponent of the first digit.
 */
static int
shortest_digits(double v, char digits[24], int *e10)
{
	char buf[40];
	int lo = 1, hi = 17;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		snprintf(buf, sizeof(buf), "%.*e", mid - 1, v);
		if (strtod(buf, NULL) == v)
			hi = mid;
		else
			lo = mid + 1;
	}
	snprintf(buf, sizeof(buf), "%.*e", lo - 1, v);
	/* buf: d[.ddd]e[+-]XX */
	int n = 0;
	const char *p = buf;

	for (; *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[n++] = *p;
	*e10 = atoi(p + 1);
	while (n > 1 && digits[n - 1] == '0')
		n--;
	digits[n] = '\0';
	return n;
}

/*
 * Shortest digits d (len of them, no point) with the point after kk
 * digits, at buf + o, in ryu's layout as serde_json prints it: plain
 * while -kmin < kk <= kmax (f64: 16 and 5, f32: 13 and 6), else with an
 * exponent. NUL-terminated; returns the new length.
 */
int
wire_json_layout(char *buf, int o, const char *d, int len, int kk,
		 int kmax, int kmin)
{
	if (kk >= len && kk <= kmax) {
		/* 1234e7 -> 12340000000.0 */
		memcpy(buf + o, d, len);
		o += len;
		for (int i = len; i < kk; i++)
			buf[o++] = '0';
		buf[o++] = '.';
		buf[o++] = '0';
	} else if (kk > 0 && kk <= kmax) {
		/* 1234e-2 -> 12.34 */
		memcpy(buf + o, d, kk);
		o += kk;
		buf[o++] = '.';
		memcpy(buf + o, d + kk, len - kk);
		o += len - kk;
	} else if (kk > -kmin && kk <= 0) {
		/* 1234e-6 -> 0.001234 */
		buf[o++] = '0';
		buf[o++] = '.';
		for (int i = kk; i < 0; i++)
			buf[o++] = '0';
		memcpy(buf + o, d, len);
		o += len;
	} else {
		/* 1e30, 1.234e-33: exponent without '+' */
		buf[o++] = d[0];
		if (len > 1) {
			buf[o++] = '.';
			memcpy(buf + o, d + 1, len - 1);
			o += len - 1;
		}
		o += sprintf(buf + o, "e%d", kk - 1);
	}
	buf[o] = '\0';
	return o;
}

int
wire_json_fmt_f64(char *buf, double v)
{
	char d[24];
	int o = 0, e10, len;

	if (!isfinite(v)) {
		memcpy(buf, "null", 5);	/* serde_json: non-finite -> null */
		return 4;
	}
	if (signbit(v))
		buf[o++] = '-';
	v = fabs(v);
	if (v == 0) {
		memcpy(buf + o, "0.0", 4);
		return o + 3;
	}
	len = shortest_digits(v, d, &e10);
	/* decimal point after e10 + 1 digits (ryu's format64 bounds) */
	return wire_json_layout(buf, o, d, len, e10 + 1, 16, 5);
}

/* ---------------- response bodies ---------------- */

struct jbuf {
	char *p;
	size_t len, cap;
	int err;
};

static void
jb_reserve(struct jbuf *b, size_t more)
{
	size_t need;
	char *n;

	if (b->err)
		return;
	if (__builtin_add_overflow(b->len, more + 1, &need)) {
		b->err = -EOVERFLOW;
		return;
	}
	if (need <= b->cap)
		return;
	if (need < 2 * b->cap)
		need = 2 * b->cap;
	n = realloc(b->p, need);
	if (n == NULL) {
		b->err = -ENOMEM;
		return;
	}
	b->p = n;
	b->cap = need;
}

static void
jb_put(struct jbuf *b, const char *s)
{
	size_t n = strlen(s);

	jb_reserve(b, n);
	if (b->err)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
jb_u64(struct jbuf *b, uint64_t v)
{
	char t[24];

	snprintf(t, sizeof(t), "%" PRIu64, v);
	jb_put(b, t);
}

static void
jb_f64(struct jbuf *b, double v)
{
	char t[32];

	wire_json_fmt_f64(t, v);
	jb_put(b, t);
}

static void
jb_latency(struct jbuf *b, double ms)
{
	/* reference: (latency_ms * 10.0).round() / 10.0, an f64 */
	jb_put(b, "\"latency_ms\":");
	jb_f64(b, round(ms * 10.0) / 10.0);
}

static int
jb_finish(struct jbuf *b, char **out, size_t *out_len)
{
	if (b->err) {
		free(b->p);
		return b->err;
	}
	*out = b->p;
	*out_len = b->len;
	return 0;
}

static void
jb_floats(struct jbuf *b, const float *v, size_t n)
{
	jb_put(b, "[");
	/* worst case 24 bytes per value: reserve once */
	if (n < SIZE_MAX / 26)
		jb_reserve(b, n * 26);
	for (size_t i = 0; i < n; i++) {
		if (i)
			jb_put(b, ",");
		jb_f64(b, (double)v[i]);	/* json!() widens f32 */
	}
	jb_put(b, "]");
}

/* {"layer":L,"output":[...],"seq_len":S} without the braces */
static void
jb_full_fields(struct jbuf *b, uint64_t layer, const float *out, size_t n,
	       uint64_t seq_len)
{
	jb_put(b, "\"layer\":");
	jb_u64(b, layer);
	jb_put(b, ",\"output\":");
	jb_floats(b, out, n);
	jb_put(b, ",\"seq_len\":");
	jb_u64(b, seq_len);
}

int
wire_json_full_output(const uint64_t *layers, const float *const *outputs,
		      size_t n_results, uint64_t seq_len, size_t n_values,
		      double latency_ms, char **out, size_t *out_len)
{
	struct jbuf b = { 0 };

	jb_put(&b, "{");
	jb_latency(&b, latency_ms);
	if (n_results == 1) {
		jb_put(&b, ",");
		jb_full_fields(&b, layers[0], outputs[0], n_values, seq_len);
	} else {
		jb_put(&b, ",\"results\":[");
		for (size_t i = 0; i < n_results; i++) {
			jb_put(&b, i ? ",{" : "{");
			jb_full_fields(&b, layers[i], outputs[i], n_values,
				       seq_len);
			jb_put(&b, "}");
		}
		jb_put(&b, "],\"seq_len\":");
		jb_u64(&b, seq_len);
	}
	jb_put(&b, "}");
	return jb_finish(&b, out, out_len);
}

static void
jb_feature_lists(struct jbuf *b, const struct wire_features *f, bool ids)
{
	jb_put(b, "[");
	for (size_t i = 0; i < f->k; i++) {
		if (i)
			jb_put(b, ",");
		if (ids) {
			jb_u64(b, f->ids[i]);
		} else {
			/* reference: (s * 100.0).round() / 100.0 in f32 */
			float s = roundf(f->scores[i] * 100.0f) / 100.0f;

			jb_f64(b, (double)s);
		}
	}
	jb_put(b, "]");
}

int
wire_json_features(const struct wire_features *res, size_t n_results,
		   double latency_ms, char **out, size_t *out_len)
{
	struct jbuf b = { 0 };

	if (n_results == 1) {
		jb_put(&b, "{\"features\":");
		jb_feature_lists(&b, &res[0], true);
		jb_put(&b, ",");
		jb_latency(&b, latency_ms);
		jb_put(&b, ",\"layer\":");
		jb_u64(&b, res[0].layer);
		jb_put(&b, ",\"scores\":");
		jb_feature_lists(&b, &res[0], false);
		jb_put(&b, "}");
	} else {
		jb_put(&b, "{");
		jb_latency(&b, latency_ms);
		jb_put(&b, ",\"results\":[");
		for (size_t i = 0; i < n_results; i++) {
			jb_put(&b, i ? ",{\"features\":" : "{\"features\":");
			jb_feature_lists(&b, &res[i], true);
			jb_put(&b, ",\"layer\":");
			jb_u64(&b, res[i].layer);
			jb_put(&b, ",\"scores\":");
			jb_feature_lists(&b, &res[i], false);
			jb_put(&b, "}");
		}
		jb_put(&b, "]}");
	}
	return jb_finish(&b, out, out_len);
}
