/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Hostile requests through shard_handle (no network, no EAL): malformed,
 * deeply nested and oversized JSON, NaN/Infinity literals, wrong types,
 * duplicate keys, damaged binary frames, odd routes and Authorization
 * values, plus fixed-seed mutations of valid requests. Whatever the input,
 * the answer is a clear one (spec/wire.md §4, §6): a 4xx with a JSON
 * {"error":"..."} body (401: empty), or a 200 whose body matches its
 * Content-Type; never a crash, a 5xx, or memory left behind (this test
 * also runs under valgrind, tests/shard/meson.build). Model: vindex.md
 * §3 (hidden 4, 2 layers, 3 features).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "shard_test_util.h"
#include "test_rng.h"

#define CT_JSON "application/json"
#define CT_F32 "application/x-larql-ffn"
#define CT_F16 "application/x-larql-ffn-f16"
#define CT_I8 "application/x-larql-ffn-i8"

static int
setup(void **state)
{
	return st_env_setup(state, ST_KEY);
}

#define teardown st_env_teardown

/* An error body is exactly one key, "error", a non-empty string. */
static void
check_error_body(const char *body, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o, *v;

	assert_non_null(tok);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
			       JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, body, (int)len);
	if (o == NULL)
		print_error("not JSON: %.*s\n", (int)len, body);
	assert_non_null(o);
	assert_int_equal(json_tokener_get_parse_end(tok), len);
	assert_true(json_object_is_type(o, json_type_object));
	assert_int_equal(json_object_object_length(o), 1);
	assert_true(json_object_object_get_ex(o, "error", &v));
	assert_true(json_object_is_type(v, json_type_string));
	assert_true(json_object_get_string_len(v) > 0);
	json_object_put(o);
	json_tokener_free(tok);
}

/* One request; the outcome must be clear. Returns the status. */
static int
run(struct shard_unit *u, int method, const char *path, size_t path_len,
    const char *ct, const char *accept, const char *auth, const void *body,
    size_t len)
{
	struct shard_http_req rq;
	struct shard_resp r;
	uint8_t *flat;
	int status;

	st_req(&rq, method, "", ct, accept, auth, body, len);
	rq.path = path;
	rq.path_len = path_len;
	shard_handle(u, &rq, &r, &shard_mem_heap, NULL, 0);
	status = r.status;
	flat = st_flat(&r);
	assert_non_null(flat);
	switch (status) {
	case 200:
		if (r.len == 0 && r.allow != NULL)	/* OPTIONS * */
			break;
		assert_non_null(r.content_type);
		if (strcmp(r.content_type, CT_JSON) == 0) {
			struct json_object *o = json_tokener_parse(
				(const char *)flat);

			assert_non_null(o);
			json_object_put(o);
		}
		break;
	case 401:	/* issue 4: an empty body */
		assert_int_equal(r.len, 0);
		break;
	case 400: case 404: case 405: case 413: case 501:
		assert_string_equal(r.content_type, CT_JSON);
		check_error_body((const char *)flat, r.len);
		break;
	default:
		print_error("status %d for a hostile request: %s\n", status,
			    (const char *)flat);
		fail();
	}
	free(flat);
	shard_resp_release(&r);
	shard_resp_release(&r);	/* idempotent */
	return status;
}

#define AUTH "Bearer " ST_KEY

static int
post(struct shard_unit *u, const char *ct, const void *body, size_t len)
{
	static const char path[] = "/v1/walk-ffn";

	return run(u, HTTP_M_POST, path, sizeof(path) - 1, ct, NULL, AUTH,
		   body, len);
}

static int
post_json(struct shard_unit *u, const char *json)
{
	return post(u, CT_JSON, json, strlen(json));
}

/* Hand-picked JSON bodies with the status spec/wire.md §6 gives them. */
static void
test_json_hostile(void **state)
{
	struct st_env *e = *state;
	static const struct {
		const char *json;
		int status;
	} t[] = {
		{ "", 400 }, { " ", 400 }, { "{", 400 }, { "}", 400 },
		{ "null", 400 }, { "[]", 400 }, { "\"x\"", 400 }, { "1", 400 },
		{ "{}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 0} x", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 0}", 200 },
		{ "\xef\xbb\xbf{\"residual\": [1,-2,0.5,3], \"layer\": 0}", 400 },
		/* non-finite literals and numbers (§6: serde refuses) */
		{ "{\"residual\": [NaN,-2,0.5,3], \"layer\": 0}", 400 },
		{ "{\"residual\": [Infinity,-2,0.5,3], \"layer\": 0}", 400 },
		{ "{\"residual\": [-Infinity,-2,0.5,3], \"layer\": 0}", 400 },
		{ "{\"residual\": [nan,-2,0.5,3], \"layer\": 0}", 400 },
		{ "{\"residual\": [1e400,-2,0.5,3], \"layer\": 0}", 400 },
		{ "{\"residual\": [-1e400,-2,0.5,3], \"layer\": 0}", 400 },
		{ "{\"residual\": [1e-400,-2,0.5,3], \"layer\": 0}", 200 },
		{ "{\"residual\": [1e38,-2,0.5,3], \"layer\": 0, "
		  "\"full_output\": true}", 200 },
		{ "{\"residual\": [99999999999999999999999,-2,0.5,3], "
		  "\"layer\": 0}", 200 },
		/* wrong types */
		{ "{\"residual\": \"1,2,3,4\", \"layer\": 0}", 400 },
		{ "{\"residual\": [\"1\",-2,0.5,3], \"layer\": 0}", 400 },
		{ "{\"residual\": [[1],-2,0.5,3], \"layer\": 0}", 400 },
		{ "{\"residual\": [null,-2,0.5,3], \"layer\": 0}", 400 },
		{ "{\"residual\": [true,-2,0.5,3], \"layer\": 0}", 400 },
		{ "{\"residual\": {}, \"layer\": 0}", 400 },
		{ "{\"residual\": null, \"layer\": 0}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": -1}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 1.0}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": \"0\"}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": true}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 2}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 4294967296}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": "
		  "18446744073709551615}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": "
		  "99999999999999999999}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layers\": 0}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layers\": [0, -1]}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layers\": [0, null]}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layers\": [[0]]}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 0, "
		  "\"seq_len\": null}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 0, "
		  "\"seq_len\": 1e3, \"full_output\": true}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 0, "
		  "\"seq_len\": 4611686018427387905, \"full_output\": true}",
		  400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 0, "
		  "\"top_k\": -1}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 0, "
		  "\"top_k\": 18446744073709551615}", 200 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 0, "
		  "\"full_output\": 1}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 0, "
		  "\"full_output\": \"true\"}", 400 },
		/* unknown keys are ignored (§6), whatever they hold */
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 0, "
		  "\"x\": [[[[{}]]], \"s\"], \"y\": {\"z\": 1e5}}", 200 },
		/* strings: bad escapes, raw controls, bad UTF-8 */
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 0, "
		  "\"x\": \"\\q\"}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 0, "
		  "\"x\": \"\xff\xfe\"}", 400 },
		/* comments, trailing commas, single quotes: not JSON */
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": 0, /* c */}", 400 },
		{ "{\"residual\": [1,-2,0.5,3,], \"layer\": 0}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layer\": '0'}", 400 },
		/* shapes */
		{ "{\"residual\": [1,-2,0.5], \"layer\": 0}", 400 },
		{ "{\"residual\": [], \"layer\": 0}", 400 },
		{ "{\"residual\": [1,-2,0.5,3]}", 400 },
		{ "{\"residual\": [1,-2,0.5,3], \"layers\": []}", 200 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int st = post_json(e->u, t[i].json);

		if (st != t[i].status)
			print_error("case %zu: %d, want %d: %s\n", i, st,
				    t[i].status, t[i].json);
		assert_int_equal(st, t[i].status);
	}
}

/* Deep nesting and huge arrays: bounded answers, no stack blow-up. */
static void
test_json_deep_and_huge(void **state)
{
	struct st_env *e = *state;
	size_t n = 100000, o = 0;
	char *b = malloc(16 * n + 128);

	assert_non_null(b);
	/* nesting far past json-c's depth limit, in a value and an
	 * ignored key */
	o = (size_t)sprintf(b, "{\"residual\": ");
	for (size_t i = 0; i < n; i++)
		b[o++] = '[';
	for (size_t i = 0; i < n; i++)
		b[o++] = ']';
	strcpy(b + o, ", \"layer\": 0}");
	assert_int_equal(post_json(e->u, b), 400);
	o = (size_t)sprintf(b, "{\"residual\": [1,-2,0.5,3], \"layer\": 0, "
			    "\"x\": ");
	for (size_t i = 0; i < n; i++)
		o += (size_t)sprintf(b + o, "{\"a\":");
	b[o] = '\0';
	assert_int_equal(post_json(e->u, b), 400);
	/* 100000 residual values for a hidden of 4: 400, not a compute */
	o = (size_t)sprintf(b, "{\"layer\": 0, \"residual\": [0");
	for (size_t i = 1; i < n; i++)
		o += (size_t)sprintf(b + o, ",%zu", i);
	strcpy(b + o, "]}");
	assert_int_equal(post_json(e->u, b), 400);
	/* the same many values as a full_output of seq_len 25000: valid */
	o = (size_t)sprintf(b, "{\"layer\": 0, \"seq_len\": %zu, "
			    "\"full_output\": true, \"residual\": [0", n / 4);
	for (size_t i = 1; i < n; i++)
		o += (size_t)sprintf(b + o, ",%zu", i % 7);
	strcpy(b + o, "]}");
	assert_int_equal(post_json(e->u, b), 200);
	/* 50000 layers in features mode: within the default 1 GiB limit,
	 * answered; with a small limit, 413 before any compute */
	o = (size_t)sprintf(b, "{\"residual\": [1,-2,0.5,3], \"layers\": [0");
	for (size_t i = 1; i < n / 2; i++)
		o += (size_t)sprintf(b + o, ",%zu", i & 1);
	strcpy(b + o, "]}");
	e->u->max_response = 1 << 16;
	assert_int_equal(post_json(e->u, b), 413);
	e->u->max_response = 1ull << 30;
	/* many duplicate keys: serde's derive refuses a field given twice
	 * (400 "duplicate field `layer`"), at the second one */
	o = (size_t)sprintf(b, "{");
	for (size_t i = 0; i < n / 8; i++)
		o += (size_t)sprintf(b + o, "\"layer\": 5, ");
	strcpy(b + o, "\"layer\": 1, \"residual\": [1,-2,0.5,3]}");
	assert_int_equal(post_json(e->u, b), 400);
	free(b);
}

static const char *const json_seeds[] = {
	"{\"layer\": 1, \"residual\": [1, -2, 0.5, 3], \"seq_len\": 1, "
	"\"top_k\": 2, \"full_output\": true}",
	"{\"layers\": [0, 1, 0], \"residual\": [1, -2, 0.5, 3]}",
	"{\"layer\": 0, \"seq_len\": 2, \"residual\": [1, -2, 0.5, 3, 0, 0, "
	"0, 0], \"full_output\": true, \"extra\": {\"x\": [1e5, \"s\"]}}",
};

static const char json_bytes[] = "{}[],:\"\\-+.0123456789eEtrufalsn \t\r\n"
	"\x00\x7f\x80\xc3\xff";

static size_t
mutate(uint64_t *rng, const uint8_t *in, size_t n, uint8_t *out,
       const char *alpha, size_t alen)
{
	int m = 1 + test_rng_below(rng, 4);

	memcpy(out, in, n);
	for (int k = 0; k < m && n > 1; k++) {
		size_t at = test_rng_below(rng, n);

		switch (test_rng_below(rng, 5)) {
		case 0:
			out[at] = (uint8_t)alpha[test_rng_below(rng, alen)];
			break;
		case 1:
			out[at] = (uint8_t)test_rng_u32(rng);
			break;
		case 2:
			memmove(out + at, out + at + 1, n - at - 1);
			n--;
			break;
		case 3:
			memmove(out + at + 1, out + at, n - at);
			n++;
			break;
		case 4:	/* truncate */
			n = at + 1;
			break;
		}
	}
	return n;
}

static void
test_json_mutated(void **state)
{
	struct st_env *e = *state;
	uint64_t rng = test_rng_seed(0x2545f4914f6cdd1dull);
	uint8_t buf[512];
	int count[600] = { 0 };

	for (size_t s = 0; s < sizeof(json_seeds) / sizeof(json_seeds[0]);
	     s++) {
		for (int r = 0; r < 400; r++) {
			size_t n = mutate(&rng, (const uint8_t *)json_seeds[s],
					  strlen(json_seeds[s]), buf,
					  json_bytes, sizeof(json_bytes) - 1);

			count[post(e->u, r & 1 ? CT_JSON : NULL, buf, n)]++;
		}
	}
	/* the damage reached both outcomes */
	assert_true(count[200] > 0);
	assert_true(count[400] > 0);
}

/* Binary frames: random and damaged, in every input format. */
static void
test_binary_mutated(void **state)
{
	struct st_env *e = *state;
	static const char *const cts[] = { CT_F32, CT_F16, CT_I8,
		CT_F32 "; charset=x", "application/x-larql-ffn-q8k" };
	static const uint32_t layers[] = { 0, 1, 0 };
	static const char bin_bytes[] = "\x00\x01\x02\x03\x04\xff\x7f\x80";
	uint64_t rng = test_rng_seed(0x9e3779b97f4a7c15ull);
	struct st_body seed[2], b;
	int count[600] = { 0 };

	st_body_alloc(&seed[0], 128, 0);
	st_body_alloc(&seed[1], 128, 0);
	st_body_alloc(&b, 1024, 1);	/* odd address: the unaligned path */
	st_single(&seed[0], 1, 1, 1, st_x, 16);
	st_batch(&seed[1], layers, 3, 1, 1, st_x, 16);
	for (int r = 0; r < 1500; r++) {
		const struct st_body *sd = &seed[r & 1];
		const char *ct = cts[test_rng_below(&rng, 5)];

		if (r % 7 == 0) {	/* pure noise */
			b.len = test_rng_below(&rng, 96);
			for (size_t i = 0; i < b.len; i++)
				b.p[i] = (uint8_t)test_rng_u32(&rng);
		} else {
			b.len = mutate(&rng, sd->p, sd->len, b.p, bin_bytes,
				       sizeof(bin_bytes) - 1);
		}
		count[post(e->u, ct, b.p, b.len)]++;
	}
	assert_true(count[200] > 0);
	assert_true(count[400] > 0);
	/* the Q8_K route takes the same damage */
	for (int r = 0; r < 300; r++) {
		static const char q8k[] = "/v1/walk-ffn-q8k";

		b.len = mutate(&rng, seed[r & 1].p, seed[r & 1].len, b.p,
			       bin_bytes, sizeof(bin_bytes) - 1);
		run(e->u, HTTP_M_POST, q8k, sizeof(q8k) - 1, NULL, NULL, AUTH,
		    b.p, b.len);
	}
	st_body_free(&b);
	st_body_free(&seed[0]);
	st_body_free(&seed[1]);
}

/* Routes, methods and Authorization values: 401/404/405, never more. */
static void
test_routes_and_auth(void **state)
{
	struct st_env *e = *state;
	static const char *const paths[] = {
		"/v1/walk-ffn", "/v1/walk-ffn/", "/v1/walk-ffn\0x",
		"/V1/WALK-FFN", "/v1/stats", "/v1/health", "/metrics", "",
		"/", "//v1/health", "/v1/health?x=1", "/v1/walk-ffn-q8k",
		"/v1/walk-ffn-q8", "/metrics/",
	};
	static const char *const auths[] = {
		AUTH, NULL, "", "Bearer", "Bearer ", "bearer " ST_KEY,
		"BEARER  " ST_KEY, "Bearer " ST_KEY "x", "Bearer " ST_KEY " ",
		"Bearer s3cret-ke", "Basic " ST_KEY, "Bearer\t" ST_KEY,
		"Bearer " ST_KEY "\0junk",
	};
	static const size_t path_len[] = { 12, 13, 14, 12, 9, 10, 8, 0, 1,
		11, 14, 16, 15, 9 };

	for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++)
		for (int m = HTTP_M_OTHER; m <= HTTP_M_OPTIONS; m++)
			for (size_t a = 0; a < sizeof(auths) / sizeof(auths[0]);
			     a++) {
				int st = run(e->u, m, paths[p], path_len[p],
					     NULL, NULL, auths[a], "{}", 2);
				/* (12 through strlen is the bare key) */
				bool authed = a == 0 || a == 5 || a == 6 ||
					      a == 12;

				/* only exact paths route; health needs no
				 * key; a wrong key never passes */
				if (st == 200 || st == 400)
					assert_true(authed || p == 5);
			}
	/* "Bearer KEY<NUL>junk" with its real length is not the key */
	assert_int_equal(run(e->u, HTTP_M_GET, "/v1/stats", 9, NULL, NULL,
			     auths[12], NULL, 0), 200);
	{
		struct shard_http_req rq;
		struct shard_resp r;

		st_req(&rq, HTTP_M_GET, "/v1/stats", NULL, NULL, NULL, NULL,
		       0);
		rq.authorization = auths[12];
		rq.authorization_len = sizeof("Bearer " ST_KEY "\0junk") - 1;
		shard_handle(e->u, &rq, &r, &shard_mem_heap, NULL, 0);
		assert_int_equal(r.status, 401);
		shard_resp_release(&r);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_hostile),
		cmocka_unit_test(test_json_deep_and_huge),
		cmocka_unit_test(test_json_mutated),
		cmocka_unit_test(test_binary_mutated),
		cmocka_unit_test(test_routes_and_auth),
	};

	st_filter();
	return cmocka_run_group_tests(tests, setup, teardown);
}
