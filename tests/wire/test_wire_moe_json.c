/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * lib/wire's expert JSON (wire_moe.h) against spec/moe.md §2 and §4: the
 * f32 number layout, the single and batch bodies with every error kind
 * (status, framework text or JSON, message prefix), and the answers.
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

#include "wire_moe.h"
#include "wire_test_util.h"

static const float X[4] = { 1.0f, -2.0f, 0.5f, 3.0f };

/* spec/moe.md §6: the unweighted y_0, y_1 */
static const uint32_t Y0_BITS[4] = {
	0x4011f355, 0x3e40d4e2, 0x401e00a3, 0xbe40d4e2 };
static const uint32_t Y1_BITS[4] = {
	0xbf22f880, 0x3f0d14d6, 0x00000000, 0xbf9806ab };

static uint32_t rng = 12345;

static float
f32_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static void
vals(const uint32_t *bits, float *out)
{
	for (int i = 0; i < 4; i++)
		out[i] = f32_bits(bits[i]);
}

/* ---- JSON (§2, §4) ---- */

static void
expect_fmt32(float v, const char *want)
{
	char buf[32];
	int n = wire_json_fmt_f32(buf, v);

	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
}

static void
test_fmt_f32(void **state)
{
	(void)state;
	expect_fmt32(0.0f, "0.0");
	expect_fmt32(-0.0f, "-0.0");
	expect_fmt32(1.0f, "1.0");
	expect_fmt32(-2.0f, "-2.0");
	expect_fmt32(0.1f, "0.1");
	expect_fmt32(0.5f, "0.5");
	expect_fmt32(1.5f, "1.5");
	expect_fmt32(100.0f, "100.0");
	expect_fmt32(1e-7f, "1e-7");
	expect_fmt32(1e-6f, "0.000001");
	expect_fmt32(1.25e-6f, "0.00000125");
	expect_fmt32(1.5e-7f, "1.5e-7");
	expect_fmt32(1e12f, "1000000000000.0");
	expect_fmt32(1e13f, "1e13");
	expect_fmt32(1.5e13f, "1.5e13");
	expect_fmt32(16777216.0f, "16777216.0");
	expect_fmt32(123456.79f, "123456.79");
	expect_fmt32(3.4028235e38f, "3.4028235e38");
	expect_fmt32(-3.4028235e38f, "-3.4028235e38");
	expect_fmt32(1.4e-45f, "1e-45");
	expect_fmt32(1.17549435e-38f, "1.1754944e-38");
	expect_fmt32(-0.6366043f, "-0.6366043");
	expect_fmt32(0.3f, "0.3");
	expect_fmt32(2.0f / 3.0f, "0.6666667");
	expect_fmt32(NAN, "null");
	expect_fmt32(INFINITY, "null");
	expect_fmt32(-INFINITY, "null");
	/* §6's y_1 as the single route prints it */
	expect_fmt32(f32_bits(0xbf22f880), "-0.6366043");
	expect_fmt32(f32_bits(0x3f0d14d6), "0.5510992");
	expect_fmt32(f32_bits(0xbf9806ab), "-1.1877035");
	/* every formatted value reads back as itself */
	for (int i = 0; i < 20000; i++) {
		uint32_t u;
		float f, g;
		char buf[32];

		rng = rng * 1103515245u + 12345u;
		u = rng ^ (rng << 13);
		f = f32_bits(u);
		if (!isfinite(f))
			continue;
		assert_true(wire_json_fmt_f32(buf, f) <= 17);
		g = strtof(buf, NULL);
		assert_memory_equal(&f, &g, 4);
	}
}

static const char SYN[] = "Failed to parse the request body as JSON: ";
static const char DATA[] =
	"Failed to deserialize the JSON body into the target type: ";

static void
expect_single_err(const char *body, int status, const char *prefix)
{
	struct wire_error e;
	float *r = (float *)0x1;
	size_t n = 77;
	char *c = (char *)exact_copy(body, strlen(body));

	assert_int_equal(wire_moe_json_single(c, strlen(body), &r, &n, &e),
			 -EINVAL);
	free(c);
	if (e.status != status || strncmp(e.msg, prefix, strlen(prefix)))
		fail_msg("%s: %d %s", body, e.status, e.msg);
	assert_true(e.text);
	assert_ptr_equal(r, (float *)0x1);
	assert_int_equal(n, 77);
}

static void
test_json_single(void **state)
{
	static const char *const syntax[] = {
		"", "   ", "{", "{\"residual\":[1,2]", "{\"residual\":[1,2]} x",
		"{\"residual\":[tru]}", "{\"residual\":[1e999]}",
		"{\"residual\":[1,]}", "{\"residual\":[01]}", "x",
		"{\"residual\":[1],}", "{\"x\":nul,\"residual\":[]}",
		"{\"residual\":[1 2]}", "{'residual':[1]}",
		"{\"residual\":[\"a]}", "{\"residual\":[1]}{}",
	};
	static const char *const data[] = {
		"{}", "{\"x\":1}", "{\"residual\":null}", "{\"residual\":1}",
		"{\"residual\":[1,\"a\"]}", "{\"residual\":[null]}",
		"{\"residual\":[[1]]}", "{\"residual\":{}",
		"{\"residual\":[true]",
		"{\"residual\":[],\"residual\":[]}", "[1]", "\"x\"", "1",
		"null", "{\"x\":1} junk",
	};
	struct wire_error e;
	float *r;
	size_t n;
	const char *ok = "{\"x\":{\"a\":[1,{\"b\":null}]},\"residual\":"
			 "[1, -2 ,0.5e0,3E0,-0.0,1e-50],\"y\":\"\\u00e9\"}";

	(void)state;
	assert_int_equal(wire_moe_json_single("{\"residual\":[1,-2,0.5,3]}",
			 25, &r, &n, &e), 0);
	assert_int_equal(n, 4);
	assert_memory_equal(r, X, sizeof(X));
	free(r);
	assert_int_equal(wire_moe_json_single(ok, strlen(ok), &r, &n, &e), 0);
	assert_int_equal(n, 6);
	assert_true(r[2] == 0.5f && r[3] == 3.0f);
	assert_true(r[4] == 0.0f && signbit(r[4]));
	assert_true(r[5] == 0.0f);
	free(r);
	assert_int_equal(wire_moe_json_single(" {\"residual\":[]} \n", 18, &r,
					      &n, &e), 0);
	assert_int_equal(n, 0);
	free(r);
	for (size_t i = 0; i < sizeof(syntax) / sizeof(syntax[0]); i++)
		expect_single_err(syntax[i], 400, SYN);
	for (size_t i = 0; i < sizeof(data) / sizeof(data[0]); i++)
		expect_single_err(data[i], 422, DATA);
}

static void
expect_batch_err(const char *body)
{
	struct wire_error e;
	struct wire_moe_json_item *it = (void *)0x1;
	size_t n = 77;
	char *c = (char *)exact_copy(body, strlen(body));

	assert_int_equal(wire_moe_json_batch(c, strlen(body), &it, &n, &e),
			 -EINVAL);
	free(c);
	if (e.status != 400 || strncmp(e.msg, "JSON parse: ", 12))
		fail_msg("%s: %d %s", body, e.status, e.msg);
	assert_false(e.text);
	assert_ptr_equal(it, (void *)0x1);
}

static void
test_json_batch(void **state)
{
	static const char *const bad[] = {
		"", "{}", "[]", "{\"requests\":null}", "{\"requests\":{}}",
		"{\"requests\":[{\"layer\":0,\"expert_id\":1}]}",
		"{\"requests\":[{\"layer\":0,\"residual\":[]}]}",
		"{\"requests\":[{\"expert_id\":0,\"residual\":[]}]}",
		"{\"requests\":[{\"layer\":-1,\"expert_id\":0,\"residual\":[]}]}",
		"{\"requests\":[{\"layer\":1.5,\"expert_id\":0,"
		"\"residual\":[]}]}",
		"{\"requests\":[{\"layer\":18446744073709551616,"
		"\"expert_id\":0,\"residual\":[]}]}",
		"{\"requests\":[{\"layer\":0,\"expert_id\":0,\"residual\":"
		"\"x\"}]}",
		"{\"requests\":[{\"layer\":0,\"layer\":0,\"expert_id\":0,"
		"\"residual\":[]}]}",
		"{\"requests\":[],\"requests\":[]}",
		"{\"requests\":[1]}", "{\"requests\":[]} x",
		"{\"requests\":[{\"layer\":0,\"expert_id\":0,\"residual\":[1,]}]}",
	};
	const char *ok = "{\"requests\":[{\"layer\":0,\"expert_id\":1,"
			 "\"residual\":[1,-2,0.5,3]},{\"expert_id\":3,"
			 "\"z\":[1],\"layer\":18446744073709551615,"
			 "\"residual\":[]},{\"layer\":2,\"expert_id\":0,"
			 "\"residual\":[7]}],\"extra\":{}}";
	struct wire_moe_json_item *it;
	struct wire_error e;
	size_t n;
	char *c = (char *)exact_copy(ok, strlen(ok));

	(void)state;
	assert_int_equal(wire_moe_json_batch(c, strlen(ok), &it, &n, &e), 0);
	free(c);
	assert_int_equal(n, 3);
	assert_int_equal(it[0].layer, 0);
	assert_int_equal(it[0].expert, 1);
	assert_int_equal(it[0].n, 4);
	assert_memory_equal(it[0].residual, X, sizeof(X));
	assert_int_equal(it[1].layer, UINT64_MAX);
	assert_int_equal(it[1].expert, 3);
	assert_int_equal(it[1].n, 0);
	assert_int_equal(it[2].layer, 2);
	assert_int_equal(it[2].n, 1);
	assert_true(it[2].residual[0] == 7.0f);
	/* one block: the values follow the items */
	assert_ptr_equal(it[0].residual, (float *)(void *)(it + 3));
	assert_ptr_equal(it[2].residual, it[0].residual + 4);
	free(it);
	assert_int_equal(wire_moe_json_batch("{\"requests\":[]}", 15, &it, &n,
					     &e), 0);
	assert_int_equal(n, 0);
	free(it);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_batch_err(bad[i]);
}

static void
test_json_answers(void **state)
{
	float y0[4], y1[4];
	const float *outs[2] = { y0, y1 };
	const uint64_t layers[2] = { 0, 0 }, experts[2] = { 0, 1 };
	char *out;
	size_t len;

	(void)state;
	vals(Y0_BITS, y0);
	vals(Y1_BITS, y1);
	/* §6 single */
	assert_int_equal(wire_moe_json_single_resp(y1, 4, 1.5, &out, &len),
			 0);
	assert_string_equal(out, "{\"output\":[-0.6366043,0.5510992,0.0,"
			    "-1.1877035],\"latency_ms\":1.5}");
	assert_int_equal(len, strlen(out));
	free(out);
	/* latency an f64, unrounded */
	assert_int_equal(wire_moe_json_single_resp(y1, 0, 0.123456789012,
						   &out, &len), 0);
	assert_string_equal(out, "{\"output\":[],\"latency_ms\":"
			    "0.123456789012}");
	free(out);
	/* batch: latency an f32 */
	assert_int_equal(wire_moe_json_batch_resp(layers, experts, outs, 2, 4,
						  0.1f, &out, &len), 0);
	assert_string_equal(out, "{\"results\":[{\"layer\":0,\"expert_id\":0,"
			    "\"output\":[2.2804768,0.18831208,2.4687889,"
			    "-0.18831208]},{\"layer\":0,\"expert_id\":1,"
			    "\"output\":[-0.6366043,0.5510992,0.0,-1.1877035]"
			    "}],\"latency_ms\":0.1}");
	assert_int_equal(len, strlen(out));
	free(out);
	assert_int_equal(wire_moe_json_batch_resp(NULL, NULL, NULL, 0, 0,
						  1.5f, &out, &len), 0);
	assert_string_equal(out, "{\"results\":[],\"latency_ms\":1.5}");
	free(out);
	/* worst-case numbers fill their room exactly */
	{
		float w[3] = { -1.23456789e-6f, -1.17549435e-38f, NAN };

		assert_int_equal(wire_moe_json_single_resp(w, 3, -1e300, &out,
							   &len), 0);
		assert_int_equal(len, strlen(out));
		free(out);
	}
	/* topology */
	assert_int_equal(wire_moe_json_topology("tiny-moe", 2, 1, 0, 1, &out,
						&len), 0);
	assert_string_equal(out, "{\"model_id\":\"tiny-moe\",\"num_experts\":2,"
			    "\"num_layers\":1,\"owned_start\":0,"
			    "\"owned_end\":1}");
	free(out);
	assert_int_equal(wire_moe_json_topology("a\"b\\c\n\x01\xc3\xa9", 0,
				UINT32_MAX, 5, 9, &out, &len), 0);
	assert_string_equal(out, "{\"model_id\":\"a\\\"b\\\\c\\n\\u0001\xc3\xa9"
			    "\",\"num_experts\":0,\"num_layers\":4294967295,"
			    "\"owned_start\":5,\"owned_end\":9}");
	assert_int_equal(len, strlen(out));
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_f32),
		cmocka_unit_test(test_json_single),
		cmocka_unit_test(test_json_batch),
		cmocka_unit_test(test_json_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
