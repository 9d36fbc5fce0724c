/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * libFuzzer harness: the JSON request of spec/wire.md §6 (lib/wire,
 * wire_json_req.c), its validation, and the JSON responses built from
 * what validates.
 *
 * Input: 7 control bytes, then the body.
 *   [0] bit 0 no model loaded, bit 1 the shard owns every layer, bit 2
 *       hidden_size is taken from the request (so that validation can
 *       pass), bits 3-7 alignment of the body (0..31 bytes)
 *   [1-2] hidden_size (0 reads as 1)
 *   [3] num_layers  [4] first owned  [5] last owned
 *   [6] latency in 1/3 ms
 *
 * Round trips: a parsed request is written out again (every value as the
 * server prints numbers, wire_json_fmt_f64) and must parse to the same
 * fields, bit for bit; each response body must be JSON (json-c reads it)
 * holding the values given, as wire_json_fmt_f64 promises (shortest
 * digits that read back to the same f64).
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "wire.h"
#include "fuzz_util.h"

/* Results of one response; each repeats the whole output. */
#define MAX_RESULTS 8
/* Features per result in features mode. */
#define MAX_K 64

static uint32_t
bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static void
check_error(const struct wire_error *e)
{
	size_t n = strlen(e->msg);
	char *buf;
	int r;

	FZ_CHECK(e->status == 400 || e->status == 404 || e->status == 500);
	FZ_CHECK(n > 0 && n < WIRE_ERR_MSG_MAX);
	buf = malloc(6 * n + 13);
	FZ_CHECK(buf != NULL);
	r = wire_error_json(e, buf, 6 * n + 13);
	FZ_CHECK(r > 0 && buf[r] == '\0');
	free(buf);
}

/* wire_json_fmt_f64: shortest round trip, "null" when not finite. */
static void
check_fmt(double v)
{
	char buf[32];
	int n = wire_json_fmt_f64(buf, v);

	FZ_CHECK(n > 0 && n < 32 && buf[n] == '\0' && strlen(buf) == (size_t)n);
	if (!isfinite(v)) {
		FZ_CHECK(strcmp(buf, "null") == 0);
		return;
	}
	FZ_CHECK(strtod(buf, NULL) == v);
	FZ_CHECK(signbit(strtod(buf, NULL)) == signbit(v));
}

struct sbuf {
	char *p;
	size_t len, cap;
};

static void
put(struct sbuf *s, const char *t)
{
	size_t n = strlen(t);

	if (s->len + n + 1 > s->cap) {
		s->cap = (s->len + n + 1) * 2;
		s->p = realloc(s->p, s->cap);
		FZ_CHECK(s->p != NULL);
	}
	memcpy(s->p + s->len, t, n + 1);
	s->len += n;
}

static void
put_u64(struct sbuf *s, uint64_t v)
{
	char t[24];

	snprintf(t, sizeof(t), "%" PRIu64, v);
	put(s, t);
}

/* The request written out again; false if a value cannot be (a residual
 * that overflowed f32 prints as null). */
static bool
reserialise(const struct wire_json_req *r, struct sbuf *s)
{
	char t[32];

	put(s, "{\"residual\":[");
	for (size_t i = 0; i < r->n_residual; i++) {
		if (!isfinite(r->residual[i]))
			return false;
		wire_json_fmt_f64(t, (double)r->residual[i]);
		if (i)
			put(s, ",");
		put(s, t);
	}
	put(s, "]");
	if (r->has_layer) {
		put(s, ",\"layer\":");
		put_u64(s, r->layer);
	}
	if (r->has_layers) {
		put(s, ", \"layers\" : [ ");
		for (size_t i = 0; i < r->n_layers; i++) {
			if (i)
				put(s, " ,");
			put_u64(s, r->layers[i]);
		}
		put(s, "]");
	}
	put(s, ",\"seq_len\":");
	put_u64(s, r->seq_len);
	put(s, ",\"top_k\":");
	put_u64(s, r->top_k);
	put(s, r->full_output ? ",\"full_output\":true" :
				",\"full_output\":false");
	put(s, r->moe_layer ? ",\"moe_layer\":true}\n" :
			      ",\"moe_layer\":false}\n");
	return true;
}

static void
check_same(const struct wire_json_req *a, const struct wire_json_req *b)
{
	FZ_CHECK(a->n_residual == b->n_residual);
	for (size_t i = 0; i < a->n_residual; i++)
		FZ_CHECK(bits(a->residual[i]) == bits(b->residual[i]));
	FZ_CHECK(a->has_layer == b->has_layer);
	FZ_CHECK(!a->has_layer || a->layer == b->layer);
	FZ_CHECK(a->has_layers == b->has_layers);
	FZ_CHECK(a->n_layers == b->n_layers);
	for (size_t i = 0; i < a->n_layers; i++)
		FZ_CHECK(a->layers[i] == b->layers[i]);
	FZ_CHECK(a->seq_len == b->seq_len);
	FZ_CHECK(a->top_k == b->top_k);
	FZ_CHECK(a->full_output == b->full_output);
	FZ_CHECK(a->moe_layer == b->moe_layer);
}

/* A JSON number (or null) of a response against the f64 it stands for. */
static void
check_num(json_object *o, double want)
{
	if (!isfinite(want)) {
		FZ_CHECK(o == NULL);
		return;
	}
	FZ_CHECK(json_object_is_type(o, json_type_double) ||
		 json_object_is_type(o, json_type_int));
	if (json_object_is_type(o, json_type_double))
		FZ_CHECK(json_object_get_double(o) == want);
	else	/* an integer: only "0" style values print without a dot */
		FZ_CHECK((double)json_object_get_int64(o) == want);
}

static json_object *
field(json_object *o, const char *key)
{
	json_object *v = NULL;

	FZ_CHECK(json_object_object_get_ex(o, key, &v));
	return v;
}

static void
check_latency(json_object *top, double ms)
{
	check_num(field(top, "latency_ms"), round(ms * 10.0) / 10.0);
}

static json_object *
parse_body(const char *body, size_t len)
{
	struct json_tokener *tok = json_tokener_new_ex(64);
	json_object *o;

	FZ_CHECK(tok != NULL);
	FZ_CHECK(strlen(body) == len);
	o = json_tokener_parse_ex(tok, body, (int)len);
	FZ_CHECK(o != NULL && json_tokener_get_error(tok) ==
		 json_tokener_success);
	FZ_CHECK(json_object_is_type(o, json_type_object));
	json_tokener_free(tok);
	return o;
}

static void
check_full(json_object *res, uint64_t layer, const float *x, size_t n,
	   uint64_t seq_len)
{
	json_object *out = field(res, "output");

	/* json-c reads integers as int64 (larger ones clamp) */
	FZ_CHECK(layer > INT64_MAX ||
		 (uint64_t)json_object_get_int64(field(res, "layer")) == layer);
	FZ_CHECK(seq_len > INT64_MAX ||
		 (uint64_t)json_object_get_int64(field(res, "seq_len")) ==
		 seq_len);
	FZ_CHECK(json_object_is_type(out, json_type_array));
	FZ_CHECK(json_object_array_length(out) == n);
	for (size_t i = 0; i < n; i++)
		check_num(json_object_array_get_idx(out, i), (double)x[i]);
}

static void
full_output(const struct wire_json_req *r, double latency)
{
	size_t n = wire_json_req_n_layers(r);
	size_t k = n < MAX_RESULTS ? n : MAX_RESULTS;
	const float *outs[MAX_RESULTS];
	uint64_t layers[MAX_RESULTS];
	json_object *top, *res;
	size_t len;
	char *body;

	for (size_t i = 0; i < k; i++) {
		layers[i] = wire_json_req_layer(r, i);
		outs[i] = r->residual;
	}
	FZ_CHECK(wire_json_full_output(layers, outs, k, r->seq_len,
				       r->n_residual, latency, &body,
				       &len) == 0);
	top = parse_body(body, len);
	check_latency(top, latency);
	if (k == 1) {
		check_full(top, layers[0], r->residual, r->n_residual,
			   r->seq_len);
	} else {
		res = field(top, "results");
		FZ_CHECK(json_object_array_length(res) == k);
		for (size_t i = 0; i < k; i++)
			check_full(json_object_array_get_idx(res, i),
				   layers[i], r->residual, r->n_residual,
				   r->seq_len);
	}
	json_object_put(top);
	free(body);
}

static void
check_features(json_object *res, const struct wire_features *f)
{
	json_object *ids = field(res, "features"), *sc = field(res, "scores");

	FZ_CHECK(json_object_array_length(ids) == f->k);
	FZ_CHECK(json_object_array_length(sc) == f->k);
	for (size_t i = 0; i < f->k; i++) {
		float s = roundf(f->scores[i] * 100.0f) / 100.0f;

		FZ_CHECK(json_object_get_int64(json_object_array_get_idx(ids,
			 i)) == f->ids[i]);
		check_num(json_object_array_get_idx(sc, i), (double)s);
	}
}

static void
features(const struct wire_json_req *r, double latency)
{
	size_t n = wire_json_req_n_layers(r);
	size_t nres = n < MAX_RESULTS ? n : MAX_RESULTS;
	size_t k = r->n_residual < MAX_K ? r->n_residual : MAX_K;
	struct wire_features f[MAX_RESULTS];
	uint32_t ids[MAX_K];
	json_object *top, *res;
	size_t len;
	char *body;

	for (size_t i = 0; i < k; i++)
		ids[i] = (uint32_t)(k - i) * 2654435761u;
	for (size_t i = 0; i < nres; i++) {
		f[i].layer = wire_json_req_layer(r, i);
		f[i].ids = ids;
		f[i].scores = r->residual;
		f[i].k = k;
	}
	FZ_CHECK(wire_json_features(f, nres, latency, &body, &len) == 0);
	top = parse_body(body, len);
	check_latency(top, latency);
	if (nres == 1) {
		check_features(top, &f[0]);
	} else {
		res = field(top, "results");
		FZ_CHECK(json_object_array_length(res) == nres);
		for (size_t i = 0; i < nres; i++)
			check_features(json_object_array_get_idx(res, i),
				       &f[i]);
	}
	json_object_put(top);
	free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	uint8_t fl = fz_u8(&f);
	uint16_t hidden = fz_u16(&f);
	struct wire_model m = {
		.loaded = !(fl & 1),
		.hidden = hidden ? hidden : 1,
		.owns_all = (fl & 2) != 0,
	};
	struct wire_json_req r, r2;
	struct wire_error err = { 0 };
	struct sbuf s = { 0 };
	double latency;
	struct fz_buf b;
	int rc;

	m.num_layers = fz_u8(&f);
	m.first = fz_u8(&f);
	m.last = fz_u8(&f);
	latency = fz_u8(&f) / 3.0;
	if (fz_buf_copy(&b, f.p, f.n, fl >> 3) != 0)
		return 0;
	rc = wire_json_req_parse(&r, (const char *)b.p, f.n, &err);
	free(b.base);
	if (rc != 0) {
		FZ_CHECK(rc == -EINVAL || rc == -ENOMEM);
		FZ_CHECK(err.status == (rc == -EINVAL ? 400 : 500));
		FZ_CHECK(strncmp(err.msg, "invalid JSON: ", 14) == 0 ||
			 rc == -ENOMEM);
		check_error(&err);
		/* wire.h: on error nothing needs freeing (r is zeroed) */
		FZ_CHECK(r.residual == NULL && r.layers == NULL);
		return 0;
	}

	/* what a parsed request holds */
	FZ_CHECK(r.residual != NULL);
	FZ_CHECK(!r.has_layers || r.n_layers == 0 || r.layers != NULL);
	FZ_CHECK(r.has_layers || r.n_layers == 0);
	FZ_CHECK(wire_json_req_n_layers(&r) ==
		 (r.has_layers ? r.n_layers : r.has_layer ? 1 : 0));
	for (size_t i = 0; i < r.n_residual; i++) {
		/* JSON has no NaN; an f64 beyond f32 becomes +-inf */
		FZ_CHECK(!isnan(r.residual[i]));
		check_fmt((double)r.residual[i]);
	}

	if (reserialise(&r, &s)) {
		FZ_CHECK(wire_json_req_parse(&r2, s.p, s.len, &err) == 0);
		check_same(&r, &r2);
		wire_json_req_free(&r2);
	}
	free(s.p);

	if (!(fl & 4)) {
		/* hidden_size as given */
	} else if (r.full_output && r.seq_len > 0 &&
		   r.n_residual % r.seq_len == 0 &&
		   r.n_residual / r.seq_len > 0 &&
		   r.n_residual / r.seq_len <= UINT32_MAX) {
		m.hidden = (uint32_t)(r.n_residual / r.seq_len);
	} else if (!r.full_output && r.n_residual > 0 &&
		   r.n_residual <= UINT32_MAX) {
		m.hidden = (uint32_t)r.n_residual;
	}
	rc = wire_json_req_validate(&r, &m, &err);
	if (rc != 0) {
		FZ_CHECK((rc == -ENOENT) == !m.loaded);
		FZ_CHECK(err.status == (m.loaded ? 400 : 404));
		check_error(&err);
	} else {
		size_t n = wire_json_req_n_layers(&r);

		FZ_CHECK(m.loaded);
		for (size_t i = 0; i < n; i++) {
			uint64_t l = wire_json_req_layer(&r, i);

			FZ_CHECK(l < m.num_layers);
			FZ_CHECK(m.owns_all || (l >= m.first && l <= m.last));
		}
		if (r.full_output) {
			/* spec/wire.md §6: no MoE layer is served here */
			FZ_CHECK(!r.moe_layer);
			FZ_CHECK(r.seq_len >= 1);
			FZ_CHECK(r.n_residual == r.seq_len * m.hidden);
			full_output(&r, latency);
		} else {
			FZ_CHECK(r.n_residual == m.hidden);
			features(&r, latency);
		}
	}
	wire_json_req_free(&r);
	FZ_CHECK(r.residual == NULL && r.layers == NULL);
	return 0;
}
