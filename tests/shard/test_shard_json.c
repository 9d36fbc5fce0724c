/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * shard_handle on the JSON path (spec/wire.md §6), the small routes
 * (/v1/stats, /v1/health, /metrics: §2, issue 4), authorization through
 * shard_handle and the counters behind /metrics. Model: spec/vindex.md §3.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "shard_test_util.h"

#define CT_JSON "application/json"
#define CT_F32 "application/x-larql-ffn"
#define CT_F16 "application/x-larql-ffn-f16"

static const char *jstr(struct json_object *o, const char *k);
static int64_t jint(struct json_object *o, const char *k);

static int
setup(void **state)
{
	return st_env_setup(state, NULL);
}

#define teardown st_env_teardown

/* One request through shard_handle; returns the flat body. */
static char *
call(struct shard_unit *u, int method, const char *path, const char *ct,
     const char *accept, const char *auth, const void *body, size_t len,
     struct shard_resp *r)
{
	struct shard_http_req rq;
	uint8_t *flat;

	st_req(&rq, method, path, ct, accept, auth, body, len);
	shard_handle(u, &rq, r, &shard_mem_heap, NULL, 0);
	flat = st_flat(r);
	assert_non_null(flat);
	return (char *)flat;
}

static char *
post_json(struct shard_unit *u, const char *json, struct shard_resp *r)
{
	return call(u, HTTP_M_POST, "/v1/walk-ffn", CT_JSON, NULL, NULL, json,
		    strlen(json), r);
}

/* Check the body is {"latency_ms":F<rest> with F a number >= 0 rounded
 * to 0.1 (§6); returns <rest>. */
static const char *
skip_latency(const char *body, const char *key_before)
{
	const char *p = body;
	char *end;
	double ms;

	if (key_before != NULL) {
		assert_memory_equal(p, key_before, strlen(key_before));
		p += strlen(key_before);
	} else {
		assert_memory_equal(p, "{", 1);
		p++;
	}
	assert_memory_equal(p, "\"latency_ms\":", 13);
	p += 13;
	ms = strtod(p, &end);
	assert_true(end > p);
	assert_true(ms >= 0.0);
	assert_float_equal(ms * 10.0, round(ms * 10.0), 1e-6);
	return end;
}

/* The f32 answer of the binary path, as the JSON path must print it. */
static void
output_text(struct shard_unit *u, uint32_t L, char *out, size_t cap)
{
	struct st_body b;
	struct shard_resp r;
	char *f;
	size_t o = 0;

	st_body_alloc(&b, 64, 0);
	st_single(&b, L, 1, 1, st_x, 16);
	f = call(u, HTTP_M_POST, "/v1/walk-ffn", CT_F32, NULL, NULL, b.p,
		 b.len, &r);
	assert_int_equal(r.status, 200);
	out[o++] = '[';
	for (int i = 0; i < 4; i++) {
		char num[32];

		wire_json_fmt_f64(num, st_getf((uint8_t *)f + 12 + 4 * i));
		o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? "," : "",
				      num);
		/* The table of vindex.md §3 too. */
		assert_float_equal(strtod(num, NULL), st_y[L][i], 1e-5);
	}
	snprintf(out + o, cap - o, "]");
	free(f);
	shard_resp_release(&r);
	st_body_free(&b);
}

/* full_output: one result and several (§6 shapes, keys sorted). */
static void
test_json_full_output(void **state)
{
	struct st_env *e = *state;
	char o0[256], o1[256], want[1024];
	struct shard_resp r;
	char *body;

	output_text(e->u, 0, o0, sizeof(o0));
	output_text(e->u, 1, o1, sizeof(o1));

	body = post_json(e->u, "{\"layer\": 1, \"residual\": [1, -2, 0.5, 3],"
			 " \"seq_len\": 1, \"top_k\": 8092, "
			 "\"full_output\": true, \"extra\": {\"x\": 1}}", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, CT_JSON);
	assert_int_equal(r.fmt_out, WIRE_FMT_JSON);
	snprintf(want, sizeof(want), ",\"layer\":1,\"output\":%s,"
		 "\"seq_len\":1}", o1);
	assert_string_equal(skip_latency(body, NULL), want);
	free(body);
	shard_resp_release(&r);

	/* "layers" wins over "layer"; a duplicate is computed twice. */
	body = post_json(e->u, "{\"layer\": 5, \"layers\": [0, 1, 0], "
			 "\"residual\": [1, -2, 0.5, 3], "
			 "\"full_output\": true}", &r);
	assert_int_equal(r.status, 200);
	snprintf(want, sizeof(want), ",\"results\":[{\"layer\":0,\"output\":"
		 "%s,\"seq_len\":1},{\"layer\":1,\"output\":%s,\"seq_len\":1},"
		 "{\"layer\":0,\"output\":%s,\"seq_len\":1}],\"seq_len\":1}",
		 o0, o1, o0);
	assert_string_equal(skip_latency(body, NULL), want);
	free(body);
	shard_resp_release(&r);

	/* seq_len 2: the second (zero) row gives zeros. */
	body = post_json(e->u, "{\"layer\": 0, \"seq_len\": 2, \"residual\": "
			 "[1, -2, 0.5, 3, 0, 0, 0, 0], \"full_output\": true}",
			 &r);
	assert_int_equal(r.status, 200);
	{
		struct json_object *o = json_tokener_parse(body), *out, *v;

		assert_non_null(o);
		assert_int_equal(json_object_object_length(o), 4);
		assert_int_equal(jint(o, "layer"), 0);
		assert_int_equal(jint(o, "seq_len"), 2);
		assert_true(json_object_object_get_ex(o, "output", &out));
		assert_int_equal(json_object_array_length(out), 8);
		for (int i = 0; i < 8; i++) {
			v = json_object_array_get_idx(out, i);
			assert_float_equal(json_object_get_double(v),
					   i < 4 ? st_y[0][i] : 0.0, 1e-5);
		}
		json_object_put(o);
	}
	snprintf(want, sizeof(want), ",\"layer\":0,\"output\":[%.*s,",
		 (int)strlen(o0) - 2, o0 + 1);
	assert_non_null(strstr(body, want));
	free(body);
	shard_resp_release(&r);
}

/* Features mode (§6): top_k by |gate·x|, signed scores to 2 decimals.
 * G0·x = [1, -2, 3.5], G1·x = [0.5, 1.5, 3] (vindex.md §3). */
static void
test_json_features(void **state)
{
	struct st_env *e = *state;
	struct shard_resp r;
	const char *rest;
	char *body;

	body = post_json(e->u, "{\"layer\": 0, \"residual\": [1, -2, 0.5, 3],"
			 " \"top_k\": 2}", &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.fmt_out, WIRE_FMT_JSON);
	rest = skip_latency(body, "{\"features\":[2,1],");
	assert_string_equal(rest, ",\"layer\":0,\"scores\":[3.5,-2.0]}");
	free(body);
	shard_resp_release(&r);

	/* Default top_k 8092 is more than nf: all 3 features. */
	body = post_json(e->u, "{\"layers\": [0, 1], \"residual\": "
			 "[1, -2, 0.5, 3], \"full_output\": false}", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(skip_latency(body, NULL),
		",\"results\":[{\"features\":[2,1,0],\"layer\":0,\"scores\":"
		"[3.5,-2.0,1.0]},{\"features\":[2,1,0],\"layer\":1,"
		"\"scores\":[3.0,1.5,0.5]}]}");
	free(body);
	shard_resp_release(&r);

	/* An empty "layers" is zero results: the several-results shape. */
	body = post_json(e->u, "{\"layers\": [], \"residual\": "
			 "[1, -2, 0.5, 3]}", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(skip_latency(body, NULL), ",\"results\":[]}");
	free(body);
	shard_resp_release(&r);
	body = post_json(e->u, "{\"layers\": [], \"residual\": "
			 "[1, -2, 0.5, 3], \"full_output\": true}", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(skip_latency(body, NULL),
			    ",\"results\":[],\"seq_len\":1}");
	free(body);
	shard_resp_release(&r);
}

static void
expect_json_error(struct shard_unit *u, const char *req, int status,
		  const char *want_body, size_t prefix_only)
{
	struct shard_resp r;
	char *body = post_json(u, req, &r);

	assert_int_equal(r.status, status);
	assert_string_equal(r.content_type, CT_JSON);
	assert_int_equal(r.fmt_out, WIRE_FMT_NONE);
	if (prefix_only)
		assert_memory_equal(body, want_body, prefix_only);
	else
		assert_string_equal(body, want_body);
	free(body);
	shard_resp_release(&r);
}

/* JSON errors (§6) through shard_handle. */
static void
test_json_errors(void **state)
{
	struct st_env *e = *state;
	static const char inv[] = "{\"error\":\"invalid JSON: ";

	expect_json_error(e->u, "{\"residual\": [1, 2, 3, 4], "
			  "\"full_output\": true}", 400,
			  "{\"error\":\"must provide 'layer' or 'layers'\"}",
			  0);
	expect_json_error(e->u, "{\"layer\": 0, \"residual\": [1, 2, 3]}",
			  400, "{\"error\":\"residual has 3 elements, expected "
			  "4 (seq_len=1 * hidden_size=4)\"}", 0);
	expect_json_error(e->u, "{\"layer\": 0, \"residual\": [1, 2, 3, 4],"
			  " \"seq_len\": 0, \"full_output\": true}", 400,
			  "{\"error\":\"residual has 4 elements, expected 0 "
			  "(seq_len=0 * hidden_size=4)\"}", 0);
	expect_json_error(e->u, "{\"layer\": 0, \"residual\": [],"
			  " \"seq_len\": 0, \"full_output\": true}", 400,
			  "{\"error\":\"seq_len must be >= 1\"}", 0);
	e->u->facts.loaded = false;
	expect_json_error(e->u, "{\"layer\": 0, \"residual\": [1, 2, 3, 4]}",
			  404, "{\"error\":\"no model loaded\"}", 0);
	e->u->facts.loaded = true;
	expect_json_error(e->u, "{\"layer\": 0", 400, inv, strlen(inv));
	expect_json_error(e->u, "{\"layer\": 0}", 400, inv, strlen(inv));
	expect_json_error(e->u, "", 400, inv, strlen(inv));
	/* No Content-Type at all is the JSON path too (§3). */
	{
		struct shard_resp r;
		char *body = call(e->u, HTTP_M_POST, "/v1/walk-ffn", NULL,
				  NULL, NULL, st_x, 16, &r);

		assert_int_equal(r.status, 400);
		assert_memory_equal(body, inv, strlen(inv));
		free(body);
		shard_resp_release(&r);
	}
}

/* head (ending in "[0") then ",1,0,1,...": 64 layers, then "]}"; returns
 * where the "]" is. */
#define LAYERS64_MAX 256
static size_t
layers64(char *req, const char *head)
{
	size_t o = strlen(head);

	assert_true(o + 63 * 2 + 16 <= LAYERS64_MAX);
	memcpy(req, head, o);
	for (int i = 1; i < 64; i++) {
		req[o++] = ',';
		req[o++] = (char)('0' + (i & 1));
	}
	memcpy(req + o, "]}", 3);
	return o;
}

/*
 * The shard's response limit (u->max_response, spec/wire.md §4 last
 * paragraph) bounds the JSON path too: the router fans requests out to
 * shards as JSON (§6), and a full_output request makes the shard hold
 * n_layers x seq_len x hidden f32 values plus their text: a few KB of
 * JSON must not make it allocate and compute without bound where the
 * same request as binary is refused with 413.
 */
static void
test_json_response_limit(void **state)
{
	struct st_env *e = *state;
	char req[LAYERS64_MAX];
	struct shard_resp r;
	char *body;

	layers64(req, "{\"residual\": [1, -2, 0.5, 3], "
		 "\"full_output\": true, \"layers\": [0");
	e->u->max_response = 256;	/* 64 results of 16 bytes: over */
	body = post_json(e->u, req, &r);
	e->u->max_response = 1ull << 30;
	assert_int_equal(r.status, 413);
	assert_string_equal(r.content_type, CT_JSON);
	assert_memory_equal(body, "{\"error\":\"", 10);
	free(body);
	shard_resp_release(&r);
}

/*
 * Features mode (full_output false) is bounded by the same limit: each
 * listed layer costs a gate pass and k (id, score) pairs, so a JSON body
 * of a few KB listing a layer thousands of times must not make the shard
 * allocate nl x k pairs and compute without bound (head-of-line blocking
 * every connection on that lcore). Counted as 8 bytes a feature (a u32
 * id and an f32 score), the binary-equivalent size.
 */
static void
test_json_features_response_limit(void **state)
{
	struct st_env *e = *state;
	char req[LAYERS64_MAX];
	struct shard_resp r;
	size_t o;
	char *body;

	o = layers64(req, "{\"residual\": [1, -2, 0.5, 3], \"layers\": [0");
	/* 64 layers x 3 features x 8 bytes = 1536: over */
	e->u->max_response = 256;
	body = post_json(e->u, req, &r);
	assert_int_equal(r.status, 413);
	assert_string_equal(r.content_type, CT_JSON);
	assert_string_equal(body, "{\"error\":\"response of 64 layers x 3 "
		"features exceeds the shard's limit of 256 bytes\"}");
	free(body);
	shard_resp_release(&r);
	/* one layer (24 bytes) is within it; top_k 1 makes 64 layers fit */
	body = post_json(e->u, "{\"layer\": 0, \"residual\": [1, -2, 0.5, "
			 "3]}", &r);
	assert_int_equal(r.status, 200);
	free(body);
	shard_resp_release(&r);
	memcpy(req + o, "],\"top_k\":0}", 13);
	body = post_json(e->u, req, &r);
	assert_int_equal(r.status, 413);	/* 0 features still cost a pass */
	free(body);
	shard_resp_release(&r);
	memcpy(req + o, "],\"top_k\":1}", 13);
	e->u->max_response = 64 * 8;
	body = post_json(e->u, req, &r);
	e->u->max_response = 1ull << 30;
	assert_int_equal(r.status, 200);
	free(body);
	shard_resp_release(&r);
}

static struct json_object *
get_json(struct shard_unit *u, const char *path, struct shard_resp *r)
{
	char *body = call(u, HTTP_M_GET, path, NULL, NULL, NULL, NULL, 0, r);
	struct json_object *o = json_tokener_parse(body);

	assert_int_equal(r->status, 200);
	assert_string_equal(r->content_type, CT_JSON);
	assert_non_null(o);
	assert_true(json_object_is_type(o, json_type_object));
	free(body);
	shard_resp_release(r);
	return o;
}

static const char *
jstr(struct json_object *o, const char *k)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, k, &v));
	assert_true(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

static int64_t
jint(struct json_object *o, const char *k)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, k, &v));
	assert_true(json_object_is_type(v, json_type_int));
	return json_object_get_int64(v);
}

/* /v1/stats (§2): the required keys with the model's values; layers is
 * the model's count even for a unit owning one layer. */
static void
test_stats(void **state)
{
	struct st_env *e = *state;
	struct shard_unit *part = calloc(1, sizeof(*part));
	struct json_object *o, *ol;
	struct shard_resp r;

	o = get_json(e->u, "/v1/stats", &r);
	assert_string_equal(jstr(o, "model"), "synthetic-llama-4");
	assert_string_equal(jstr(o, "family"), "llama");
	assert_string_equal(jstr(o, "mode"), "ffn-service");
	assert_int_equal(jint(o, "layers"), 2);
	assert_int_equal(jint(o, "hidden_size"), 4);
	assert_int_equal(jint(o, "features_per_layer"), 3);
	assert_string_equal(jstr(o, "dtype"), "f32");
	json_object_put(o);

	assert_non_null(part);
	assert_int_equal(st_unit(part, e->dir, 1, 1, NULL), 0);
	o = get_json(part, "/v1/stats", &r);
	assert_int_equal(jint(o, "layers"), 2);
	assert_int_equal(jint(o, "hidden_size"), 4);
	assert_true(json_object_object_get_ex(o, "owned_layers", &ol));
	assert_int_equal(jint(ol, "first"), 1);
	assert_int_equal(jint(ol, "last"), 1);
	json_object_put(o);
	shard_unit_fini(part);

	/* An f16 model says dtype "f16". */
	{
		struct vw_opts vo;
		char dir[64], err[256];

		snprintf(dir, sizeof(dir), "/tmp/shard_test_XXXXXX");
		assert_non_null(mkdtemp(dir));
		vw_defaults(&vo);
		vo.hidden = 8;
		vo.intermediate = 16;
		vo.layers = 5;
		vo.f16 = 1;
		assert_int_equal(vw_write(dir, &vo, err, sizeof(err)), 0);
		assert_int_equal(st_unit(part, dir, 2, 3, NULL), 0);
		o = get_json(part, "/v1/stats", &r);
		assert_string_equal(jstr(o, "dtype"), "f16");
		assert_string_equal(jstr(o, "model"), "synthetic-llama-8");
		assert_int_equal(jint(o, "layers"), 5);
		assert_int_equal(jint(o, "hidden_size"), 8);
		assert_int_equal(jint(o, "features_per_layer"), 16);
		json_object_put(o);
		shard_unit_fini(part);
		st_rmtree(dir);
	}
	free(part);
}

/* /v1/models: the reference's OpenAI-style list of the one model, with
 * "created" when the unit started and the larql extras (larql-server
 * routes/models.rs). */
static void
test_models(void **state)
{
	struct st_env *e = *state;
	struct json_object *o, *data, *m, *v;
	struct shard_resp r;
	time_t before = time(NULL);
	int64_t created;

	o = get_json(e->u, "/v1/models", &r);
	assert_string_equal(jstr(o, "object"), "list");
	assert_true(json_object_object_get_ex(o, "data", &data));
	assert_true(json_object_is_type(data, json_type_array));
	assert_int_equal(json_object_array_length(data), 1);
	m = json_object_array_get_idx(data, 0);
	assert_string_equal(jstr(m, "id"), "synthetic-llama-4");
	assert_string_equal(jstr(m, "object"), "model");
	assert_string_equal(jstr(m, "owned_by"), "larql");
	assert_string_equal(jstr(m, "path"), "/v1");
	/* 2 layers x 3 features */
	assert_int_equal(jint(m, "features"), 6);
	assert_true(json_object_object_get_ex(m, "loaded", &v));
	assert_true(json_object_get_boolean(v));
	/* The unit was made by setup, before this test, within a minute. */
	created = jint(m, "created");
	assert_true(created <= (int64_t)before + 1);
	assert_true(created >= (int64_t)before - 60);
	json_object_put(o);
}

/* One walk of each kind on a fresh unit, then the counters. */
static void
test_health_and_metrics(void **state)
{
	struct st_env *e = *state;
	struct shard_unit *u = calloc(1, sizeof(*u));
	static const char js[] = "{\"layer\": 1, \"residual\": "
		"[1, -2, 0.5, 3], \"full_output\": true}";
	struct json_object *o;
	struct st_body b;
	struct shard_resp r;
	size_t in_bytes = 0;
	char *t, line[256];

	assert_non_null(u);
	assert_int_equal(st_unit(u, e->dir, -1, -1, NULL), 0);
	o = get_json(u, "/v1/health", &r);
	assert_int_equal(json_object_object_length(o), 3);
	assert_string_equal(jstr(o, "status"), "ok");
	assert_true(jint(o, "uptime_seconds") >= 0);
	assert_int_equal(jint(o, "requests_served"), 0);
	json_object_put(o);

	st_body_alloc(&b, 64, 0);
	st_batch(&b, (const uint32_t[]){ 0, 1 }, 2, 1, 1, st_x, 16);
	free(call(u, HTTP_M_POST, "/v1/walk-ffn", CT_F32, NULL, NULL, b.p,
		  b.len, &r));				/* f32 out, 2 layers */
	assert_int_equal(r.status, 200);
	shard_resp_release(&r);
	in_bytes += b.len;
	st_single(&b, 0, 1, 1, st_x, 16);
	free(call(u, HTTP_M_POST, "/v1/walk-ffn", CT_F32, CT_F16, NULL, b.p,
		  b.len, &r));				/* f16 out */
	assert_int_equal(r.status, 200);
	shard_resp_release(&r);
	in_bytes += b.len;
	free(post_json(u, js, &r));			/* json out */
	assert_int_equal(r.status, 200);
	shard_resp_release(&r);
	in_bytes += strlen(js);
	free(call(u, HTTP_M_POST, "/v1/walk-ffn", CT_F32, NULL, NULL, b.p,
		  10, &r));				/* 400 */
	assert_int_equal(r.status, 400);
	shard_resp_release(&r);
	in_bytes += 10;
	free(call(u, HTTP_M_GET, "/nope", NULL, NULL, NULL, NULL, 0, &r));
	shard_resp_release(&r);
	free(call(u, HTTP_M_GET, "/v1/walk-ffn", NULL, NULL, NULL, NULL, 0,
		  &r));
	shard_resp_release(&r);
	st_body_free(&b);

	o = get_json(u, "/v1/health", &r);
	assert_int_equal(jint(o, "requests_served"), 3);
	json_object_put(o);

	t = call(u, HTTP_M_GET, "/metrics", NULL, NULL, NULL, NULL, 0, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "text/plain; version=0.0.4");
#define HAS(...) do { snprintf(line, sizeof(line), __VA_ARGS__); \
	assert_non_null(strstr(t, line)); } while (0)
#define HASNT(s) assert_null(strstr(t, (s)))
	HAS("\nffn_requests_total{shard=\"t0\",route=\"walk-ffn\","
	    "status=\"200\"} 3\n");
	HAS("\nffn_requests_total{shard=\"t0\",route=\"walk-ffn\","
	    "status=\"400\"} 1\n");
	HAS("\nffn_requests_total{shard=\"t0\",route=\"health\","
	    "status=\"200\"} 2\n");
	HAS("\nffn_requests_total{shard=\"t0\",route=\"other\","
	    "status=\"404\"} 1\n");
	HAS("\nffn_requests_total{shard=\"t0\",route=\"other\","
	    "status=\"405\"} 1\n");
	HASNT("route=\"metrics\"");	/* counted after its body is made */
	HASNT("route=\"stats\"");
	HAS("direction=\"in\",format=\"f32\"} 3\n");
	HAS("direction=\"in\",format=\"json\"} 1\n");
	HAS("direction=\"in\",format=\"f16\"} 0\n");
	HAS("direction=\"out\",format=\"f32\"} 1\n");
	HAS("direction=\"out\",format=\"f16\"} 1\n");
	HAS("direction=\"out\",format=\"i8\"} 0\n");
	HAS("direction=\"out\",format=\"json\"} 1\n");
	HAS("\nffn_layers_computed_total{shard=\"t0\"} 4\n");
	HAS("\nffn_rows_computed_total{shard=\"t0\"} 4\n");
	HAS("\nffn_body_bytes_total{shard=\"t0\",direction=\"in\"} %zu\n",
	    in_bytes);
	HAS("\nffn_compute_ms_count{shard=\"t0\"} 3\n");
	free(t);
	shard_resp_release(&r);

	t = call(u, HTTP_M_GET, "/metrics", NULL, NULL, NULL, NULL, 0, &r);
	HAS("\nffn_requests_total{shard=\"t0\",route=\"metrics\","
	    "status=\"200\"} 1\n");
	free(t);
	shard_resp_release(&r);
#undef HAS
#undef HASNT
	shard_unit_fini(u);
	free(u);
}

static size_t
extra(void *arg, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "%s", (const char *)arg);
}

/* metrics_extra is appended; metrics_enabled false → 404 (issue 4). */
static void
test_metrics_switches(void **state)
{
	struct st_env *e = *state;
	struct shard_resp r;
	char *t;

	e->u->metrics_extra = extra;
	e->u->metrics_extra_arg = "net_rx_packets_total 42\n";
	t = call(e->u, HTTP_M_GET, "/metrics", NULL, NULL, NULL, NULL, 0, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(t, "\nnet_rx_packets_total 42\n"));
	free(t);
	shard_resp_release(&r);
	e->u->metrics_extra = NULL;

	e->u->metrics_enabled = false;
	t = call(e->u, HTTP_M_GET, "/metrics", NULL, NULL, NULL, NULL, 0, &r);
	assert_int_equal(r.status, 404);
	assert_string_equal(r.content_type, CT_JSON);
	assert_int_equal(r.route, SHARD_R_NONE);
	assert_null(strstr(t, "ffn_"));
	free(t);
	shard_resp_release(&r);
	e->u->metrics_enabled = true;
}

/* Auth through shard_handle: 401 with an empty body on every route but
 * health; the right key passes. */
static void
test_auth_handle(void **state)
{
	struct st_env *e = *state;
	struct shard_unit *u = calloc(1, sizeof(*u));
	struct st_body b;
	struct shard_resp r;
	char *t;

	assert_non_null(u);
	assert_int_equal(st_unit(u, e->dir, -1, -1, ST_KEY), 0);
	st_body_alloc(&b, 64, 0);
	st_single(&b, 0, 1, 1, st_x, 16);
	for (int k = 0; k < 3; k++) {
		const char *auth = k == 0 ? NULL : k == 1 ?
			"Bearer wrong" : "Bearer " ST_KEY "x";

		free(call(u, HTTP_M_POST, "/v1/walk-ffn", CT_F32, NULL, auth,
			  b.p, b.len, &r));
		assert_int_equal(r.status, 401);
		assert_int_equal(r.len, 0);
		assert_int_equal(r.iovcnt, 0);
		assert_null(r.content_type);
		shard_resp_release(&r);
		/* Every GET route of the table that says auth. */
		for (int q = 0; q < SHARD_R_COUNT; q++) {
			const struct shard_route_def *d = &shard_routes[q];

			if (d->path == NULL || d->method != HTTP_M_GET ||
			    !d->auth)
				continue;
			free(call(u, HTTP_M_GET, d->path, NULL, NULL, auth,
				  NULL, 0, &r));
			assert_int_equal(r.status, 401);
			assert_int_equal(r.len, 0);
			shard_resp_release(&r);
		}
	}
	free(call(u, HTTP_M_GET, "/v1/health", NULL, NULL, NULL, NULL, 0,
		  &r));
	assert_int_equal(r.status, 200);
	shard_resp_release(&r);
	free(call(u, HTTP_M_POST, "/v1/walk-ffn", CT_F32, NULL,
		  "Bearer " ST_KEY, b.p, b.len, &r));
	assert_int_equal(r.status, 200);
	assert_int_equal(r.len, 28);
	shard_resp_release(&r);
	/* 404 before auth: an unknown path says 404 without a key. */
	free(call(u, HTTP_M_GET, "/nope", NULL, NULL, NULL, NULL, 0, &r));
	assert_int_equal(r.status, 404);
	shard_resp_release(&r);
	t = call(u, HTTP_M_GET, "/metrics", NULL, NULL, "Bearer " ST_KEY,
		 NULL, 0, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(t, "route=\"walk-ffn\",status=\"401\"} 3\n"));
	assert_non_null(strstr(t, "route=\"stats\",status=\"401\"} 3\n"));
	assert_non_null(strstr(t, "route=\"metrics\",status=\"401\"} 3\n"));
	assert_non_null(strstr(t, "route=\"models\",status=\"401\"} 3\n"));
	assert_non_null(strstr(t, "route=\"walk-ffn\",status=\"200\"} 1\n"));
	free(t);
	shard_resp_release(&r);
	st_body_free(&b);
	shard_unit_fini(u);
	free(u);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_full_output),
		cmocka_unit_test(test_json_features),
		cmocka_unit_test(test_json_errors),
		cmocka_unit_test(test_json_response_limit),
		cmocka_unit_test(test_json_features_response_limit),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_models),
		cmocka_unit_test(test_health_and_metrics),
		cmocka_unit_test(test_metrics_switches),
		cmocka_unit_test(test_auth_handle),
	};

	st_filter();
	return cmocka_run_group_tests(tests, setup, teardown);
}
