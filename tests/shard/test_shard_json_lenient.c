/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * JSON that is not JSON (RFC 8259) through shard_handle: the reference
 * (serde_json) refuses it with 400 "invalid JSON: ..." (spec/wire.md §6).
 * json-c 0.16, which lib/wire used to parse requests with, accepted all of
 * it even with JSON_TOKENER_STRICT and clamped integers beyond 64 bits;
 * lib/wire's own parser (wire_json_req.c) follows serde. Model:
 * vindex.md §3 (hidden 4, 2 layers).
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

#define AUTH "Bearer " ST_KEY

static int
post(struct shard_unit *u, const char *ct, const void *body, size_t len)
{
	struct shard_http_req rq;
	struct shard_resp r;
	int status;

	st_req(&rq, HTTP_M_POST, "/v1/walk-ffn", ct, NULL, AUTH, body, len);
	shard_handle(u, &rq, &r, &shard_mem_heap, NULL, 0);
	status = r.status;
	shard_resp_release(&r);
	return status;
}

static int
post_json(struct shard_unit *u, const char *json)
{
	return post(u, CT_JSON, json, strlen(json));
}

/*
 * NaN, Infinity and numbers beyond f64 are not JSON (RFC 8259 §6), and
 * the reference (serde_json) refuses the whole body with 400 "invalid
 * JSON: ..." wherever they appear, in an ignored key too (§6: malformed
 * JSON -> 400); likewise raw control characters in strings, "1.",
 * bytes that are not UTF-8, single-quoted keys, a NUL in a key and bytes
 * after a NUL. json-c 0.16 accepts all of these even with
 * JSON_TOKENER_STRICT.
 */
static void
test_json_not_rfc8259_refused(void **state)
{
	struct st_env *e = *state;
	static const char *const t[] = {
		"{\"residual\": [1,-2,0.5,3], \"layer\": 0, \"y\": NaN}",
		"{\"residual\": [1,-2,0.5,3], \"layer\": 0, \"y\": "
		"[Infinity]}",
		"{\"residual\": [1,-2,0.5,3], \"layer\": 0, \"y\": "
		"{\"z\": -Infinity}}",
		"{\"residual\": [1,-2,0.5,3], \"layer\": 0, \"y\": 1e999}",
		/* the same leniency elsewhere: a raw control character in
		 * a string (§7 says escape it) and "1." (no digit after
		 * the point, §6) */
		"{\"residual\": [1,-2,0.5,3], \"layer\": 0, \"y\": \"a\x01\"}",
		"{\"residual\": [1,-2,0.5,3], \"layer\": 0, \"y\": \"a\tb\"}",
		"{\"residual\": [1.,-2,0.5,3], \"layer\": 0}",
		/* an overlong UTF-8 form (C0 AF for '/'): not UTF-8 */
		"{\"residual\": [1,-2,0.5,3], \"layer\": 0, \"\xc0\xaf\": 1}",
		/* single-quoted keys (json-c checks quotes of values only) */
		"{'residual': [1,-2,0.5,3], 'layer': 0}",
		/* "residual\u0000x" is another key than "residual": json-c
		 * cuts keys at the NUL, so it is read as "residual" */
		"{\"residual\\u0000x\": [1,-2,0.5,3], \"layer\": 0}",
	};
	/* trailing bytes after a NUL (json-c stops at the first NUL, and
	 * lib/wire does not check the parse end against the length) */
	static const char nul_tail[] = "{\"residual\": [1,-2,0.5,3], "
		"\"layer\": 0}\0{\"garbage";

	int wrong = 0, st;

	/* every case is tried and named before the test fails */
	st = post(e->u, CT_JSON, nul_tail, sizeof(nul_tail) - 1);
	if (st != 400) {
		print_error("%d for a NUL and bytes after the object\n", st);
		wrong++;
	}
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		st = post_json(e->u, t[i]);
		if (st != 400) {
			print_error("%d for %s\n", st, t[i]);
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
}

/*
 * An integer beyond u64/i64 in "residual" is the number it spells (serde
 * reads it as an f64: -99999999999999999999 is -1e20). json-c clamps it
 * to INT64_MIN / UINT64_MAX, so the shard silently computes with
 * -9.22e18 / 1.84e19 and answers 200 with other scores (features
 * mode: gate . x, finite at these magnitudes).
 */
static void
test_json_big_integer_residual(void **state)
{
	struct st_env *e = *state;
	static const char *const pairs[][2] = {
		{ "{\"residual\": [-99999999999999999999,0,0,0], \"layer\": 0}",
		  "{\"residual\": [-1e20,0,0,0], \"layer\": 0}" },
		{ "{\"residual\": [99999999999999999999,0,0,0], \"layer\": 0}",
		  "{\"residual\": [1e20,0,0,0], \"layer\": 0}" },
	};

	for (size_t i = 0; i < 2; i++) {
		char *out[2];

		for (int k = 0; k < 2; k++) {
			struct shard_http_req rq;
			struct shard_resp r;
			const char *o;

			st_req(&rq, HTTP_M_POST, "/v1/walk-ffn", CT_JSON,
			       NULL, AUTH, pairs[i][k], strlen(pairs[i][k]));
			shard_handle(e->u, &rq, &r, &shard_mem_heap, NULL, 0);
			assert_int_equal(r.status, 200);
			out[k] = (char *)st_flat(&r);
			assert_non_null(out[k]);
			shard_resp_release(&r);
			/* compare from "layer" on (scores): latency differs */
			o = strstr(out[k], "\"layer\"");
			assert_non_null(o);
			memmove(out[k], o, strlen(o) + 1);
		}
		assert_string_equal(out[0], out[1]);
		free(out[0]);
		free(out[1]);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_not_rfc8259_refused),
		cmocka_unit_test(test_json_big_integer_residual),
	};

	st_filter();
	return cmocka_run_group_tests(tests, setup, teardown);
}
