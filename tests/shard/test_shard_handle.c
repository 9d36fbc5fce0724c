/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * shard_handle end to end on the binary path (spec/wire.md §3-§5) with
 * the hand-checkable model of spec/vindex.md §3: values from its table,
 * f16/i8 responses byte-equal to lib/quant's narrowing of the f32 answer,
 * batch frames, and every §4 error row with its exact body.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "quant.h"
#include "shard_test_util.h"

#define CT_F32 "application/x-larql-ffn"
#define CT_F16 "application/x-larql-ffn-f16"
#define CT_I8 "application/x-larql-ffn-i8"
#define ACCEPT_ALL CT_I8 ", " CT_F16 ", " CT_F32
#define ACCEPT_F16 CT_F16 ", " CT_F32

struct env {
	char dir[64];
	struct shard_unit *u;		/* whole model, no key */
	struct shard_unit *part;	/* owns layer 1 only */
};

static int
setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	if (e == NULL || st_write_model(e->dir, sizeof(e->dir), 1) < 0)
		return -1;
	e->u = calloc(1, sizeof(*e->u));
	e->part = calloc(1, sizeof(*e->part));
	if (e->u == NULL || e->part == NULL ||
	    st_unit(e->u, e->dir, -1, -1, NULL) < 0 ||
	    st_unit(e->part, e->dir, 1, 1, NULL) < 0)
		return -1;
	*state = e;
	return 0;
}

static int
teardown(void **state)
{
	struct env *e = *state;

	shard_unit_fini(e->u);
	shard_unit_fini(e->part);
	st_rmtree(e->dir);
	free(e->u);
	free(e->part);
	free(e);
	return 0;
}

/* POST /v1/walk-ffn with body b; returns the flat body (caller frees). */
static uint8_t *
walk(struct shard_unit *u, const char *ct, const char *accept,
     const struct st_body *b, struct shard_resp *r)
{
	struct shard_http_req rq;
	uint8_t *flat;

	st_req(&rq, HTTP_M_POST, "/v1/walk-ffn", ct, accept, NULL, b->p,
	       b->len);
	shard_handle(u, &rq, r, &shard_mem_heap, NULL, 0);
	flat = st_flat(r);
	assert_non_null(flat);
	return flat;
}

static void
expect_error(struct shard_unit *u, const char *ct, const struct st_body *b,
	     int status, const char *body)
{
	struct shard_resp r;
	uint8_t *flat = walk(u, ct, NULL, b, &r);

	assert_int_equal(r.status, status);
	assert_non_null(r.content_type);
	assert_string_equal(r.content_type, "application/json");
	assert_int_equal(r.fmt_out, WIRE_FMT_NONE);
	assert_string_equal((const char *)flat, body);
	assert_int_equal(r.len, strlen(body));
	free(flat);
	shard_resp_release(&r);
}

/* Single frame header (§5.2): layer, seq_len, a finite latency >= 0. */
static void
check_single_hdr(const uint8_t *f, uint32_t layer, uint32_t seq_len)
{
	float lat = st_getf(f + 8);

	assert_int_equal(st_get32(f), layer);
	assert_int_equal(st_get32(f + 4), seq_len);
	assert_true(isfinite(lat) && lat >= 0.0f);
}

/* f32 single, both layers, with no Accept and with the base type. */
static void
test_f32_single(void **state)
{
	struct env *e = *state;
	struct st_body b;
	struct shard_resp r;

	st_body_alloc(&b, 64, 0);
	for (uint32_t L = 0; L < 2; L++) {
		for (int a = 0; a < 2; a++) {
			uint8_t *f;

			st_single(&b, L, 1, 1, st_x, sizeof(st_x));
			f = walk(e->u, CT_F32, a ? CT_F32 : NULL, &b, &r);
			assert_int_equal(r.status, 200);
			assert_string_equal(r.content_type, CT_F32);
			assert_int_equal(r.fmt_out, WIRE_FMT_F32);
			assert_int_equal(r.len, 12 + 16);
			check_single_hdr(f, L, 1);
			for (int i = 0; i < 4; i++)
				assert_float_equal(st_getf(f + 12 + 4 * i),
						   st_y[L][i], 1e-5);
			free(f);
			shard_resp_release(&r);
		}
	}
	st_body_free(&b);
}

/* The f32 answer of layer L for x (seq_len rows), into y. */
static void
f32_answer(struct shard_unit *u, uint32_t L, const float *x,
	   uint32_t seq_len, float *y)
{
	struct st_body b;
	struct shard_resp r;
	uint8_t *f;

	st_body_alloc(&b, 16 + 16 * (size_t)seq_len, 0);
	st_single(&b, L, seq_len, 1, x, 16 * (size_t)seq_len);
	f = walk(u, CT_F32, NULL, &b, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.len, 12 + 16 * (size_t)seq_len);
	memcpy(y, f + 12, 16 * (size_t)seq_len);
	free(f);
	shard_resp_release(&r);
	st_body_free(&b);
}

/* f16 response (§5.1 rule 2): the f32 answer narrowed by lib/quant. */
static void
test_f16_response(void **state)
{
	struct env *e = *state;
	static const char *const accepts[] = { ACCEPT_F16, ACCEPT_ALL, CT_F16 };
	float x2[8], y[8];
	uint16_t h[8];
	struct st_body b;
	struct shard_resp r;

	memcpy(x2, st_x, 16);
	for (int i = 0; i < 4; i++)
		x2[4 + i] = -0.25f * st_x[i];
	st_body_alloc(&b, 64, 0);
	for (uint32_t L = 0; L < 2; L++) {
		f32_answer(e->u, L, x2, 2, y);
		quant_f32_to_f16(h, y, 8);
		for (size_t a = 0; a < 3; a++) {
			uint8_t *f;

			st_single(&b, L, 2, 1, x2, sizeof(x2));
			f = walk(e->u, CT_F32, accepts[a], &b, &r);
			assert_int_equal(r.status, 200);
			assert_string_equal(r.content_type, CT_F16);
			assert_int_equal(r.fmt_out, WIRE_FMT_F16);
			assert_int_equal(r.len, 12 + 16);
			check_single_hdr(f, L, 2);
			assert_memory_equal(f + 12, h, 16);
			free(f);
			shard_resp_release(&r);
		}
	}
	/* f16 disabled (LARQL_F16_WIRE_DISABLE): silently f32. */
	e->u->wire.f16 = false;
	st_single(&b, 0, 1, 1, st_x, 16);
	free(walk(e->u, CT_F32, ACCEPT_F16, &b, &r));
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, CT_F32);
	assert_int_equal(r.len, 12 + 16);
	shard_resp_release(&r);
	e->u->wire.f16 = true;
	st_body_free(&b);
}

/* i8 response (§5.1 rule 1, §5.3): only when enabled; per row
 * [scale][0][4 x i8], equal to lib/quant's rows of the f32 answer. */
static void
test_i8_response(void **state)
{
	struct env *e = *state;
	float x2[8], y[8];
	uint8_t q[2 * 12];
	struct st_body b;
	struct shard_resp r;
	uint8_t *f;

	memcpy(x2, st_x, 16);
	memset(x2 + 4, 0, 16);	/* an all-zero row: scale 1.0, q 0 */
	st_body_alloc(&b, 64, 0);
	/* Disabled (the default): the i8-first Accept falls back to f16. */
	st_single(&b, 1, 2, 1, x2, sizeof(x2));
	free(walk(e->u, CT_F32, ACCEPT_ALL, &b, &r));
	assert_string_equal(r.content_type, CT_F16);
	shard_resp_release(&r);
	e->u->wire.i8 = true;
	for (uint32_t L = 0; L < 2; L++) {
		f32_answer(e->u, L, x2, 2, y);
		quant_f32_to_i8_rows(q, y, 2, 4);
		st_single(&b, L, 2, 1, x2, sizeof(x2));
		f = walk(e->u, CT_F32, ACCEPT_ALL, &b, &r);
		assert_int_equal(r.status, 200);
		assert_string_equal(r.content_type, CT_I8);
		assert_int_equal(r.fmt_out, WIRE_FMT_I8);
		assert_int_equal(r.len, 12 + 2 * 12);
		check_single_hdr(f, L, 2);
		assert_memory_equal(f + 12, q, sizeof(q));
		/* The zero row: scale 1.0, zero_point 0, q all 0. */
		assert_float_equal(st_getf(f + 24), 1.0f, 0);
		assert_int_equal(st_get32(f + 28), 0);
		assert_int_equal(st_get32(f + 32), 0);
		free(f);
		shard_resp_release(&r);
	}
	e->u->wire.i8 = false;
	st_body_free(&b);
}

/* f16 and i8 request payloads (§3) decode to the same rows as the f32
 * payload of their decoded values: same answer bytes. */
static void
test_request_formats(void **state)
{
	struct env *e = *state;
	uint16_t h[4];
	uint8_t i8row[12];
	float xi[4], y[4];
	struct st_body b;
	struct shard_resp r;
	uint8_t *f;

	st_body_alloc(&b, 64, 0);
	quant_f32_to_f16(h, st_x, 4);	/* exact in f16 */
	st_single(&b, 0, 1, 1, h, sizeof(h));
	f = walk(e->u, CT_F16 "; charset=binary", NULL, &b, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.len, 28);
	for (int i = 0; i < 4; i++)
		assert_float_equal(st_getf(f + 12 + 4 * i), st_y[0][i], 1e-5);
	free(f);
	shard_resp_release(&r);

	quant_f32_to_i8_rows(i8row, st_x, 1, 4);
	quant_i8_rows_to_f32(xi, i8row, 1, 4);
	f32_answer(e->u, 1, xi, 1, y);
	st_single(&b, 1, 1, 1, i8row, sizeof(i8row));
	f = walk(e->u, CT_I8, NULL, &b, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.len, 28);
	assert_memory_equal(f + 12, y, 16);
	free(f);
	shard_resp_release(&r);
	st_body_free(&b);
}

/* Batch frames (§5.2): K = 0 → batch with n 0; K = 2; duplicates in
 * request order; K = 1 → a single frame (shape follows the results). */
static void
test_batch_frames(void **state)
{
	struct env *e = *state;
	static const uint32_t two[] = { 0, 1 }, dup[] = { 1, 0, 1 };
	struct st_body b;
	struct shard_resp r;
	uint8_t *f;

	st_body_alloc(&b, 128, 0);
	st_batch(&b, NULL, 0, 1, 1, st_x, 16);
	f = walk(e->u, CT_F32, NULL, &b, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, CT_F32);
	assert_int_equal(r.len, 12);
	assert_int_equal(st_get32(f), 0xFFFFFFFFu);
	assert_int_equal(st_get32(f + 4), 0);
	assert_true(st_getf(f + 8) >= 0.0f);
	free(f);
	shard_resp_release(&r);

	for (int k = 0; k < 2; k++) {
		const uint32_t *ls = k ? dup : two;
		uint32_t K = k ? 3 : 2;

		st_batch(&b, ls, K, 1, 1, st_x, 16);
		f = walk(e->u, CT_F32, NULL, &b, &r);
		assert_int_equal(r.status, 200);
		assert_int_equal(r.len, 12 + K * (12 + 16));
		assert_int_equal(st_get32(f), 0xFFFFFFFFu);
		assert_int_equal(st_get32(f + 4), K);
		for (uint32_t i = 0; i < K; i++) {
			const uint8_t *p = f + 12 + i * 28;

			assert_int_equal(st_get32(p), ls[i]);
			assert_int_equal(st_get32(p + 4), 1);
			assert_int_equal(st_get32(p + 8), 4);
			for (int v = 0; v < 4; v++)
				assert_float_equal(st_getf(p + 12 + 4 * v),
						   st_y[ls[i]][v], 1e-5);
		}
		free(f);
		shard_resp_release(&r);
	}

	st_batch(&b, dup, 1, 1, 1, st_x, 16);
	f = walk(e->u, CT_F32, NULL, &b, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.len, 28);
	check_single_hdr(f, 1, 1);
	assert_float_equal(st_getf(f + 12 + 12), st_y[1][3], 1e-5);
	free(f);
	shard_resp_release(&r);
	st_body_free(&b);
}

/* Batch i8 (§5.2): num_values is a count of values, payload rows of
 * 8 + hidden bytes. */
static void
test_batch_i8(void **state)
{
	struct env *e = *state;
	static const uint32_t two[] = { 1, 0 };
	uint8_t q[12];
	float y[4];
	struct st_body b;
	struct shard_resp r;
	uint8_t *f;

	e->u->wire.i8 = true;
	st_body_alloc(&b, 64, 0);
	st_batch(&b, two, 2, 1, 1, st_x, 16);
	f = walk(e->u, CT_F32, CT_I8, &b, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, CT_I8);
	assert_int_equal(r.len, 12 + 2 * (12 + 12));
	for (int i = 0; i < 2; i++) {
		const uint8_t *p = f + 12 + i * 24;

		f32_answer(e->u, two[i], st_x, 1, y);
		quant_f32_to_i8_rows(q, y, 1, 4);
		assert_int_equal(st_get32(p), two[i]);
		assert_int_equal(st_get32(p + 4), 1);
		assert_int_equal(st_get32(p + 8), 4);
		assert_memory_equal(p + 12, q, 12);
	}
	free(f);
	shard_resp_release(&r);
	e->u->wire.i8 = false;
	st_body_free(&b);
}

/* Every row of the §4 table through shard_handle, in the table's order
 * (each body trips exactly one row). */
static void
test_errors_table(void **state)
{
	struct env *e = *state;
	static const uint32_t three[] = { 0, 1, 0 };
	uint8_t raw[64] = { 0 };
	char want[256];
	struct st_body b;

	st_body_alloc(&b, 128, 0);
	memcpy(b.p, raw, 15);
	b.len = 15;
	expect_error(e->u, CT_F32, &b, 400, st_err_body(want, sizeof(want),
		     "binary: body too short (need \u2265 16 bytes)"));
	b.len = 0;
	expect_error(e->u, CT_F32, &b, 400, want);

	st_batch(&b, three, 3, 1, 1, NULL, 0);
	b.len = 16;	/* needs 8 + 12 */
	expect_error(e->u, CT_F32, &b, 400, st_err_body(want, sizeof(want),
		     "binary batch: body too short for 3 layer indices"));

	st_batch(&b, three, 1, 1, 1, NULL, 0);
	b.len = 12 + 11;
	expect_error(e->u, CT_F32, &b, 400, st_err_body(want, sizeof(want),
		     "binary: truncated fixed header (seq_len/flags/top_k)"));

	st_single(&b, 0, 1, 1, raw, 15);
	expect_error(e->u, CT_F32, &b, 400, st_err_body(want, sizeof(want),
		     "binary: residual byte length is not a multiple of 4"));

	st_single(&b, 0, 1, 1, raw, 7);
	expect_error(e->u, CT_F16, &b, 400, st_err_body(want, sizeof(want),
		     "f16 binary request: residual byte length is not a "
		     "multiple of f16"));

	st_single(&b, 0, 2, 1, raw, 25);
	expect_error(e->u, CT_I8, &b, 400, st_err_body(want, sizeof(want),
		     "i8 binary request: payload of 25 bytes is not a "
		     "multiple of seq_len 2"));

	st_single(&b, 0, 1, 1, raw, 8);
	expect_error(e->u, CT_I8, &b, 400, st_err_body(want, sizeof(want),
		     "i8 binary request: 8 bytes per position leaves no "
		     "residual data after the 8-byte scale/zero header"));

	st_single(&b, 0, 1, 0x6, st_x, 16);	/* bit 0 clear */
	expect_error(e->u, CT_F32, &b, 400, st_err_body(want, sizeof(want),
		     "binary wire format requires full_output = true"));

	e->u->facts.loaded = false;
	st_single(&b, 0, 1, 1, st_x, 16);
	expect_error(e->u, CT_F32, &b, 404, st_err_body(want, sizeof(want),
		     "no model loaded"));
	e->u->facts.loaded = true;

	st_single(&b, 0, 1, 1, st_x, 12);
	expect_error(e->u, CT_F32, &b, 400, st_err_body(want, sizeof(want),
		     "residual has 3 elements, expected 4 (seq_len=1 * "
		     "hidden_size=4)"));
	st_single(&b, 0, 3, 1, raw, 40);
	expect_error(e->u, CT_F32, &b, 400, st_err_body(want, sizeof(want),
		     "residual has 10 elements, expected 12 (seq_len=3 * "
		     "hidden_size=4)"));

	st_single(&b, 0, 0, 1, NULL, 0);
	expect_error(e->u, CT_F32, &b, 400, st_err_body(want, sizeof(want),
		     "seq_len must be >= 1"));

	st_single(&b, 0, 1, 1, st_x, 16);
	expect_error(e->part, CT_F32, &b, 400, st_err_body(want,
		     sizeof(want), "layer 0 not served by this shard "
		     "(owned: 1\u20131)"));
	st_batch(&b, three + 1, 2, 1, 1, st_x, 16);	/* [1, 0] */
	expect_error(e->part, CT_F32, &b, 400, want);
	st_single(&b, 7, 1, 1, st_x, 16);
	expect_error(e->part, CT_F32, &b, 400, st_err_body(want,
		     sizeof(want), "layer 7 not served by this shard "
		     "(owned: 1\u20131)"));
	st_body_free(&b);
}

/*
 * §4 "a layer ≥ the model's layer count": a unit over the whole model
 * (first/last -1, as ffn-frame runs without --layers) has no owned range,
 * like the reference without --layers (tests/e2e/pyref/wire.py
 * check_layers), so the message is the out-of-range one (shard_unit_init
 * once set facts.owns_all = false always, answering "layer 2 not served
 * by this shard (owned: 0–1)", which left this row of §4 unreachable).
 */
static void
test_error_out_of_range(void **state)
{
	struct env *e = *state;
	char want[256];
	struct st_body b;

	st_body_alloc(&b, 64, 0);
	st_single(&b, 2, 1, 1, st_x, 16);
	expect_error(e->u, CT_F32, &b, 400, st_err_body(want, sizeof(want),
		     "layer 2 out of range (num_layers = 2)"));
	st_body_free(&b);
}

/* A partial unit computes the layers it owns. */
static void
test_partial_unit_serves(void **state)
{
	struct env *e = *state;
	struct st_body b;
	struct shard_resp r;
	uint8_t *f;

	st_body_alloc(&b, 64, 0);
	st_single(&b, 1, 1, 1, st_x, 16);
	f = walk(e->part, CT_F32, NULL, &b, &r);
	assert_int_equal(r.status, 200);
	for (int i = 0; i < 4; i++)
		assert_float_equal(st_getf(f + 12 + 4 * i), st_y[1][i], 1e-5);
	free(f);
	shard_resp_release(&r);
	st_body_free(&b);
}

/* GELU-tanh for the Gemma family (spec/wire.md §1): the table's last
 * column of vindex.md §3, with model_type "gemma3". */
static void
test_gelu_model(void **state)
{
	static const float gelu[2][4] = {
		{ 2.102980f, 0.1816092f, -6.998768f, -4.714178f },
		{ 0.6914280f, 0.0f, 0.6997858f, -8.989088f },
	};
	struct shard_unit *g = calloc(1, sizeof(*g));
	struct vw_opts o;
	char dir[64], err[256];
	struct st_body b;
	struct shard_resp r;

	(void)state;
	assert_non_null(g);
	snprintf(dir, sizeof(dir), "/tmp/shard_test_XXXXXX");
	assert_non_null(mkdtemp(dir));
	vw_defaults(&o);
	o.example = 1;
	o.model_type = "gemma3";
	o.family = "gemma3";
	assert_int_equal(vw_write(dir, &o, err, sizeof(err)), 0);
	assert_int_equal(st_unit(g, dir, -1, -1, NULL), 0);
	st_body_alloc(&b, 64, 0);
	for (uint32_t L = 0; L < 2; L++) {
		uint8_t *f;

		st_single(&b, L, 1, 1, st_x, 16);
		f = walk(g, CT_F32, NULL, &b, &r);
		assert_int_equal(r.status, 200);
		for (int i = 0; i < 4; i++)
			assert_float_equal(st_getf(f + 12 + 4 * i),
					   gelu[L][i], 1e-5);
		free(f);
		shard_resp_release(&r);
	}
	st_body_free(&b);
	shard_unit_fini(g);
	free(g);
	st_rmtree(dir);
}

/* Routing errors through shard_handle: JSON bodies; q8k on a model whose
 * hidden is not a multiple of 256 is a 400 (test_shard_q8k.c has more). */
static void
test_route_errors(void **state)
{
	struct env *e = *state;
	static const struct {
		int method;
		const char *path;
		int status;
	} c[] = {
		{ HTTP_M_GET, "/nope", 404 },
		{ HTTP_M_GET, "/v1/stats/", 404 },
		{ HTTP_M_GET, "/v1/walk-ffn", 405 },
		{ HTTP_M_POST, "/v1/stats", 405 },
		{ HTTP_M_POST, "/v1/walk-ffn-q8k", 400 },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct shard_http_req rq;
		struct shard_resp r;
		uint8_t *f;

		st_req(&rq, c[i].method, c[i].path, CT_F32, NULL, NULL,
		       st_x, 16);
		shard_handle(e->u, &rq, &r, &shard_mem_heap, NULL, 0);
		assert_int_equal(r.status, c[i].status);
		assert_string_equal(r.content_type, "application/json");
		f = st_flat(&r);
		assert_non_null(f);
		assert_memory_equal(f, "{\"error\":\"", 10);
		assert_int_equal(f[r.len - 1], '}');
		free(f);
		shard_resp_release(&r);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f32_single),
		cmocka_unit_test(test_f16_response),
		cmocka_unit_test(test_i8_response),
		cmocka_unit_test(test_request_formats),
		cmocka_unit_test(test_batch_frames),
		cmocka_unit_test(test_batch_i8),
		cmocka_unit_test(test_errors_table),
		cmocka_unit_test(test_error_out_of_range),
		cmocka_unit_test(test_partial_unit_serves),
		cmocka_unit_test(test_gelu_model),
		cmocka_unit_test(test_route_errors),
	};

	st_filter();
	return cmocka_run_group_tests(tests, setup, teardown);
}
