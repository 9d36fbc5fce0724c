/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The JSON path (spec/wire.md §6): request parsing and its errors, the
 * reference's validation order, response bodies in both modes and shapes,
 * and number formatting as serde_json's json!() prints f32 values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "wire.h"

static const struct wire_model model4 = {
	.loaded = true, .hidden = 4, .num_layers = 34,
	.owns_all = false, .first = 0, .last = 33,
};

static int
parse(const char *s, struct wire_json_req *r, struct wire_error *e)
{
	/* exact-size copy without NUL: the parser must not need one */
	size_t n = strlen(s);
	char *c = malloc(n ? n : 1);
	int rc;

	memcpy(c, s, n);
	memset(e, 0, sizeof(*e));
	rc = wire_json_req_parse(r, c, n, e);
	free(c);
	return rc;
}

static void
expect_parse_err(const char *body, const char *msg)
{
	struct wire_json_req r;
	struct wire_error e;

	assert_int_equal(parse(body, &r, &e), -EINVAL);
	assert_int_equal(e.status, 400);
	if (msg != NULL)
		assert_string_equal(e.msg, msg);
	else
		assert_memory_equal(e.msg, "invalid JSON: ", 14);
	assert_null(r.residual);
	assert_null(r.layers);
}

static void
test_parse_full_request(void **state)
{
	struct wire_json_req r;
	struct wire_error e;

	(void)state;
	assert_int_equal(parse("{\"layer\": 26, \"layers\": [0, 1], "
			       "\"residual\": [1, -2.5, 0.1, 3e2], "
			       "\"seq_len\": 1, \"top_k\": 8092, "
			       "\"full_output\": true, \"extra\": {\"a\": [null]}}\n",
			       &r, &e), 0);
	assert_true(r.has_layer);
	assert_int_equal(r.layer, 26);
	assert_true(r.has_layers);
	/* layers wins over layer */
	assert_int_equal(wire_json_req_n_layers(&r), 2);
	assert_int_equal(wire_json_req_layer(&r, 0), 0);
	assert_int_equal(wire_json_req_layer(&r, 1), 1);
	assert_int_equal(r.n_residual, 4);
	assert_true(r.residual[0] == 1.0f && r.residual[1] == -2.5f &&
		    r.residual[2] == 0.1f && r.residual[3] == 300.0f);
	assert_int_equal(r.seq_len, 1);
	assert_int_equal(r.top_k, 8092);
	assert_true(r.full_output);
	assert_int_equal(wire_json_req_validate(&r, &model4, &e), 0);
	wire_json_req_free(&r);
	assert_null(r.residual);
}

static void
test_parse_defaults(void **state)
{
	struct wire_json_req r;
	struct wire_error e;

	(void)state;
	assert_int_equal(parse("{\"residual\":[],\"layer\":null,"
			       "\"layers\":null}", &r, &e), 0);
	assert_false(r.has_layer);
	assert_false(r.has_layers);
	assert_int_equal(wire_json_req_n_layers(&r), 0);
	assert_int_equal(r.seq_len, 1);
	assert_int_equal(r.top_k, 8092);
	assert_false(r.full_output);
	assert_int_equal(r.n_residual, 0);
	wire_json_req_free(&r);
	/* layer alone */
	assert_int_equal(parse("{\"residual\":[0,0,0,0],\"layer\":7}", &r, &e),
			 0);
	assert_int_equal(wire_json_req_n_layers(&r), 1);
	assert_int_equal(wire_json_req_layer(&r, 0), 7);
	wire_json_req_free(&r);
}

static void
test_parse_errors(void **state)
{
	(void)state;
	expect_parse_err("", "invalid JSON: EOF while parsing");
	expect_parse_err("{\"residual\":[1]", "invalid JSON: EOF while parsing");
	expect_parse_err("{\"residual\":[1,]}", NULL);
	expect_parse_err("{\"residual\":[1]} x", NULL);
	expect_parse_err("{\"residual\":[1]}{}", NULL);
	expect_parse_err("[1,2]", "invalid JSON: expected an object");
	expect_parse_err("{\"layer\":1}",
			 "invalid JSON: missing field `residual`");
	expect_parse_err("{\"residual\":null}",
			 "invalid JSON: 'residual' must be an array of numbers");
	expect_parse_err("{\"residual\":[1,\"a\"]}",
			 "invalid JSON: 'residual' must be an array of numbers");
	expect_parse_err("{\"residual\":[1e400]}",
			 "invalid JSON: 'residual' number out of range");
	expect_parse_err("{\"residual\":[NaN]}", NULL);
	expect_parse_err("{\"residual\":[],\"layer\":-1}",
			 "invalid JSON: 'layer' must be a non-negative integer");
	expect_parse_err("{\"residual\":[],\"layer\":1.0}",
			 "invalid JSON: 'layer' must be a non-negative integer");
	expect_parse_err("{\"residual\":[],\"layers\":3}",
			 "invalid JSON: 'layers' must be an array of non-negative integers");
	expect_parse_err("{\"residual\":[],\"layers\":[1,-2]}",
			 "invalid JSON: 'layers' must be an array of non-negative integers");
	expect_parse_err("{\"residual\":[],\"seq_len\":\"2\"}",
			 "invalid JSON: 'seq_len' must be a non-negative integer");
	expect_parse_err("{\"residual\":[],\"seq_len\":null}",
			 "invalid JSON: 'seq_len' must be a non-negative integer");
	expect_parse_err("{\"residual\":[],\"top_k\":-5}",
			 "invalid JSON: 'top_k' must be a non-negative integer");
	expect_parse_err("{\"residual\":[],\"full_output\":1}",
			 "invalid JSON: 'full_output' must be a boolean");
	expect_parse_err("{\"residual\":[],\"moe_layer\":\"yes\"}",
			 "invalid JSON: 'moe_layer' must be a boolean");
	expect_parse_err("{\"residual\":[],\"moe_layer\":null}",
			 "invalid JSON: 'moe_layer' must be a boolean");
	expect_parse_err("{\"residual\":[],\"moe_layer\":true,"
			 "\"moe_layer\":true}",
			 "invalid JSON: duplicate field `moe_layer`");
	/* invalid UTF-8 in a string */
	expect_parse_err("{\"residual\":[],\"x\":\"\xff\"}", NULL);
}

/* serde_json's reading of numbers, keys and strings (wire_json_req.c). */
static void
test_parse_serde_rules(void **state)
{
	struct wire_json_req r;
	struct wire_error e;
	char deep[2 * 130 + 64];
	size_t o;

	(void)state;
	/* integers: i64/u64 straight to f32; beyond 64 bits an f64 */
	assert_int_equal(parse("{\"residual\":[-9223372036854775808,"
			       "18446744073709551615,18446744073709551616,"
			       "-99999999999999999999,-0,-0.0,1e-400,"
			       "16777217]}", &r, &e), 0);
	assert_int_equal(r.n_residual, 8);
	assert_true(r.residual[0] == -9223372036854775808.0f);
	assert_true(r.residual[1] == 18446744073709551616.0f);
	assert_true(r.residual[2] == 18446744073709551616.0f);
	assert_true(r.residual[3] == -1e20f);
	assert_false(signbit(r.residual[4]));	/* -0 is the integer 0 */
	assert_true(signbit(r.residual[5]) && r.residual[5] == 0.0f);
	assert_true(r.residual[6] == 0.0f);	/* underflow is 0 */
	assert_true(r.residual[7] == 16777216.0f);	/* rounded to even */
	wire_json_req_free(&r);
	/* an escaped key is the key it spells; a NUL makes another key */
	assert_int_equal(parse("{\"resid\\u0075al\":[1],\"l\\u0061yer\":3,"
			       "\"layers\\u0000\":\"x\"}", &r, &e), 0);
	assert_int_equal(r.layer, 3);
	assert_false(r.has_layers);
	wire_json_req_free(&r);
	/* strings: a surrogate pair and 4-byte UTF-8 are fine */
	assert_int_equal(parse("{\"residual\":[],\"x\":\"\\ud83d\\ude00"
			       "\xf0\x9f\x98\x80\"}", &r, &e), 0);
	wire_json_req_free(&r);
	expect_parse_err("{\"residual\":[],\"x\":\"\\ud83d\"}",
			 "invalid JSON: lone surrogate in escape at byte 20");
	expect_parse_err("{\"residual\":[],\"x\":\"\\ude00\"}",
			 "invalid JSON: lone surrogate in escape at byte 20");
	expect_parse_err("{\"residual\":[],\"x\":\"\xed\xa0\x80\"}",
			 "invalid JSON: invalid UTF-8 at byte 20");
	expect_parse_err("{\"residual\":[],\"x\":\"\xc0\xaf\"}",
			 "invalid JSON: invalid UTF-8 at byte 20");
	expect_parse_err("{\"residual\":[],\"x\":\"a\tb\"}",
			 "invalid JSON: control character in a string at byte 21");
	/* numbers that are not JSON, anywhere */
	expect_parse_err("{\"residual\":[],\"x\":1.}",
			 "invalid JSON: invalid number at byte 21");
	expect_parse_err("{\"residual\":[],\"x\":01}",
			 "invalid JSON: expected `,` or `}` at byte 20");
	expect_parse_err("{\"residual\":[],\"x\":[1e999]}",
			 "invalid JSON: number out of range at byte 20");
	expect_parse_err("{\"residual\":[],\"x\":NaN}", NULL);
	expect_parse_err("{\"residual\":[],\"x\":-Infinity}", NULL);
	expect_parse_err("{\"residual\":[],\"layer\":18446744073709551616}",
			 "invalid JSON: 'layer' must be a non-negative integer");
	/* a field twice is refused; a key twice that is not ours is not */
	expect_parse_err("{\"residual\":[],\"layer\":1,\"layer\":2}",
			 "invalid JSON: duplicate field `layer`");
	assert_int_equal(parse("{\"residual\":[],\"x\":1,\"x\":2}", &r, &e),
			 0);
	wire_json_req_free(&r);
	/* anything but whitespace after the object, a NUL too */
	expect_parse_err("{\"residual\":[]}\x01",
			 "invalid JSON: trailing characters at byte 15");
	expect_parse_err("{'residual':[]}",
			 "invalid JSON: key must be a string at byte 1");
	/* nesting: serde's recursion limit, 127 levels with the object */
	for (int depth = 127; depth <= 128; depth++) {
		o = (size_t)sprintf(deep, "{\"residual\":[],\"x\":");
		for (int i = 1; i < depth; i++)
			deep[o++] = '[';
		for (int i = 1; i < depth; i++)
			deep[o++] = ']';
		strcpy(deep + o, "}");
		if (depth == 127) {
			assert_int_equal(parse(deep, &r, &e), 0);
			wire_json_req_free(&r);
		} else {
			expect_parse_err(deep, "invalid JSON: recursion limit "
					 "exceeded at byte 145");
		}
	}
}

static void
expect_validate(const char *body, const struct wire_model *m, int rc,
		int status, const char *msg)
{
	struct wire_json_req r;
	struct wire_error e;

	assert_int_equal(parse(body, &r, &e), 0);
	assert_int_equal(wire_json_req_validate(&r, m, &e), rc);
	if (rc != 0) {
		assert_int_equal(e.status, status);
		assert_string_equal(e.msg, msg);
	}
	wire_json_req_free(&r);
}

static void
test_validate_order(void **state)
{
	struct wire_model m = model4;

	(void)state;
	m.loaded = false;
	expect_validate("{\"residual\":[]}", &m, -ENOENT, 404,
			"no model loaded");
	/* seq_len * hidden overflows usize: 2^62 * 4 */
	expect_validate("{\"residual\":[1],\"layer\":0,"
			"\"seq_len\":4611686018427387904,\"full_output\":true}",
			&model4, -EINVAL, 400, "seq_len * hidden overflow");
	/* features mode: exactly hidden values, seq_len ignored (=1) */
	expect_validate("{\"residual\":[1,2,3],\"layer\":0,"
			"\"seq_len\":4611686018427387904}", &model4, -EINVAL,
			400,
			"residual has 3 elements, expected 4 (seq_len=1 * hidden_size=4)");
	expect_validate("{\"residual\":[1,2,3],\"layer\":0,\"seq_len\":2,"
			"\"full_output\":true}", &model4, -EINVAL, 400,
			"residual has 3 elements, expected 8 (seq_len=2 * hidden_size=4)");
	expect_validate("{\"residual\":[],\"layer\":0,\"seq_len\":0,"
			"\"full_output\":true}", &model4, -EINVAL, 400,
			"seq_len must be >= 1");
	/* features mode with seq_len 0 is not checked */
	expect_validate("{\"residual\":[1,2,3,4],\"layer\":0,\"seq_len\":0}",
			&model4, 0, 0, NULL);
	/* missing layers comes after the residual checks */
	expect_validate("{\"residual\":[1,2,3]}", &model4, -EINVAL, 400,
			"residual has 3 elements, expected 4 (seq_len=1 * hidden_size=4)");
	expect_validate("{\"residual\":[1,2,3,4]}", &model4, -EINVAL, 400,
			"must provide 'layer' or 'layers'");
	/* an empty list is a valid (empty) request */
	expect_validate("{\"residual\":[1,2,3,4],\"layers\":[]}", &model4, 0, 0,
			NULL);
	m = model4;
	m.first = 2;
	m.last = 5;
	expect_validate("{\"residual\":[1,2,3,4],\"layers\":[2,6,100]}", &m,
			-EINVAL, 400,
			"layer 6 not served by this shard (owned: 2\xe2\x80\x93" "5)");
	/* a single "layer", and the first of "layers" */
	expect_validate("{\"residual\":[1,2,3,4],\"layer\":1}", &m, -EINVAL,
			400,
			"layer 1 not served by this shard (owned: 2\xe2\x80\x93" "5)");
	expect_validate("{\"residual\":[1,2,3,4],\"layers\":[6,2]}", &m,
			-EINVAL, 400,
			"layer 6 not served by this shard (owned: 2\xe2\x80\x93" "5)");
	m.owns_all = true;
	expect_validate("{\"residual\":[1,2,3,4],\"layer\":34}", &m, -EINVAL,
			400, "layer 34 out of range (num_layers = 34)");
	expect_validate("{\"residual\":[1,2,3,4],\"layers\":[2,18446744073709551615]}",
			&m, -EINVAL, 400,
			"layer 18446744073709551615 out of range (num_layers = 34)");
}

/* spec/wire.md §6: "moe_layer": true with full_output is a 400 after the
 * residual, layer and ownership checks; features mode ignores it. */
static void
test_validate_moe_layer(void **state)
{
	struct wire_model m = model4;
	const char *moe = "moe_layer=true but server has no --moe-shards "
			  "configured";

	(void)state;
	m.first = 2;
	m.last = 5;
	expect_validate("{\"residual\":[1,2,3,4],\"layer\":2,"
			"\"full_output\":true,\"moe_layer\":true}", &m,
			-EINVAL, 400, moe);
	expect_validate("{\"moe_layer\":true,\"layers\":[2,3],"
			"\"residual\":[1,2,3,4,5,6,7,8],\"seq_len\":2,"
			"\"full_output\":true}", &m, -EINVAL, 400, moe);
	/* The earlier checks come first. */
	expect_validate("{\"residual\":[1,2,3],\"layer\":2,"
			"\"full_output\":true,\"moe_layer\":true}", &m,
			-EINVAL, 400,
			"residual has 3 elements, expected 4 (seq_len=1 * hidden_size=4)");
	expect_validate("{\"residual\":[1,2,3,4],"
			"\"full_output\":true,\"moe_layer\":true}", &m,
			-EINVAL, 400, "must provide 'layer' or 'layers'");
	expect_validate("{\"residual\":[1,2,3,4],\"layer\":6,"
			"\"full_output\":true,\"moe_layer\":true}", &m,
			-EINVAL, 400,
			"layer 6 not served by this shard (owned: 2\xe2\x80\x93" "5)");
	/* Features mode, or moe_layer false: no MoE error. */
	expect_validate("{\"residual\":[1,2,3,4],\"layer\":2,"
			"\"moe_layer\":true}", &m, 0, 0, NULL);
	expect_validate("{\"residual\":[1,2,3,4],\"layer\":2,"
			"\"full_output\":true,\"moe_layer\":false}", &m, 0,
			0, NULL);
}

static void
expect_fmt(double v, const char *want)
{
	char buf[32];
	int n = wire_json_fmt_f64(buf, v);

	assert_string_equal(buf, want);
	assert_int_equal(n, (int)strlen(want));
}

static void
test_number_format(void **state)
{
	(void)state;
	/* f32 values widened to f64 as serde_json's json!() prints them */
	expect_fmt((double)0.25f, "0.25");
	expect_fmt((double)1.0f, "1.0");
	expect_fmt((double)100.0f, "100.0");
	expect_fmt((double)-1.5f, "-1.5");
	expect_fmt((double)0.1f, "0.10000000149011612");
	expect_fmt((double)-0.001f, "-0.0010000000474974513");
	expect_fmt((double)1e-7f, "1.0000000116860974e-7");
	expect_fmt(0.0, "0.0");
	expect_fmt(-0.0, "-0.0");
	expect_fmt(7.3, "7.3");
	/* ryu: plain up to 16 integer digits, then scientific */
	expect_fmt(1e15, "1000000000000000.0");
	expect_fmt(1234567890123456.0, "1234567890123456.0");
	expect_fmt(1e16, "1e16");
	expect_fmt(1e17, "1e17");
	expect_fmt(1.5e300, "1.5e300");
	expect_fmt(0.0001, "0.0001");
	expect_fmt(0.00001, "0.00001");
	expect_fmt(0.000001, "1e-6");
	expect_fmt(0.0000012, "1.2e-6");
	expect_fmt(123456789012345680.0, "1.2345678901234568e17");
	expect_fmt(5e-324, "5e-324");
	expect_fmt(1.7976931348623157e308, "1.7976931348623157e308");
	expect_fmt(NAN, "null");
	expect_fmt(-INFINITY, "null");
}

static void
expect_body(int rc, char *got, size_t len, const char *want)
{
	assert_int_equal(rc, 0);
	assert_string_equal(got, want);
	assert_int_equal(len, strlen(want));
	free(got);
}

static void
test_full_output_bodies(void **state)
{
	static const float a[4] = { 0.25f, -1.5f, 100.0f, -0.001f };
	static const float b[4] = { 1.0f, NAN, INFINITY, 0.1f };
	const float *outs[2] = { a, b };
	uint64_t layers[2] = { 5, 20 };
	char *s;
	size_t n;
	int rc;

	(void)state;
	rc = wire_json_full_output(layers, outs, 1, 1, 4, 7.34, &s, &n);
	expect_body(rc, s, n,
		"{\"latency_ms\":7.3,\"layer\":5,"
		"\"output\":[0.25,-1.5,100.0,-0.0010000000474974513],"
		"\"seq_len\":1}");
	rc = wire_json_full_output(layers, outs, 2, 2, 2, 12.0, &s, &n);
	expect_body(rc, s, n,
		"{\"latency_ms\":12.0,\"results\":["
		"{\"layer\":5,\"output\":[0.25,-1.5],\"seq_len\":2},"
		"{\"layer\":20,\"output\":[1.0,null],\"seq_len\":2}],"
		"\"seq_len\":2}");
	/* zero results: the multi shape */
	rc = wire_json_full_output(layers, outs, 0, 1, 4, 0.04, &s, &n);
	expect_body(rc, s, n,
		"{\"latency_ms\":0.0,\"results\":[],\"seq_len\":1}");
	/* non-finite -> null; latency rounds half away from zero */
	rc = wire_json_full_output(layers + 1, outs + 1, 1, 1, 4, 0.25, &s, &n);
	expect_body(rc, s, n,
		"{\"latency_ms\":0.3,\"layer\":20,"
		"\"output\":[1.0,null,null,0.10000000149011612],"
		"\"seq_len\":1}");
}

static void
test_features_bodies(void **state)
{
	static const uint32_t ids0[3] = { 17, 3, 9000 };
	static const float sc0[3] = { 1.2345f, -0.005f, 0.125f };
	static const uint32_t ids1[1] = { 4 };
	static const float sc1[1] = { -2.675f };
	struct wire_features res[2] = {
		{ .layer = 26, .ids = ids0, .scores = sc0, .k = 3 },
		{ .layer = 27, .ids = ids1, .scores = sc1, .k = 1 },
	};
	char *s;
	size_t n;
	int rc;

	(void)state;
	/* scores: roundf(s * 100) / 100 in f32, printed widened */
	rc = wire_json_features(res, 1, 3.14159, &s, &n);
	expect_body(rc, s, n,
		"{\"features\":[17,3,9000],\"latency_ms\":3.1,\"layer\":26,"
		"\"scores\":[1.2300000190734863,-0.009999999776482582,"
		"0.12999999523162842]}");
	rc = wire_json_features(res, 2, 1.0, &s, &n);
	expect_body(rc, s, n,
		"{\"latency_ms\":1.0,\"results\":["
		"{\"features\":[17,3,9000],\"layer\":26,"
		"\"scores\":[1.2300000190734863,-0.009999999776482582,"
		"0.12999999523162842]},"
		"{\"features\":[4],\"layer\":27,"
		"\"scores\":[-2.680000066757202]}]}");
	res[1].k = 0;
	rc = wire_json_features(res + 1, 1, 0.0, &s, &n);
	expect_body(rc, s, n,
		"{\"features\":[],\"latency_ms\":0.0,\"layer\":27,"
		"\"scores\":[]}");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_full_request),
		cmocka_unit_test(test_parse_defaults),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_serde_rules),
		cmocka_unit_test(test_validate_order),
		cmocka_unit_test(test_validate_moe_layer),
		cmocka_unit_test(test_number_format),
		cmocka_unit_test(test_full_output_bodies),
		cmocka_unit_test(test_features_bodies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
