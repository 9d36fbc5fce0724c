/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Expert weights of a hybrid-MoE vindex (ffn_moe.h, spec/moe.md): the
 * hand-checkable example of §6 from its bytes (Q4_K and F32 files), the
 * LYRW checks of §5.3 field by field, index.json (§5.1), ownership (§2)
 * and the layer batch's rules (§1). Q4_K experts at a real block size:
 * test_ffn_moe_q4k.c.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "ffn_kq.h"
#include "ffn_moe.h"
#include "moe_test_util.h"

/* ---- §6: the example vindex, from the page's bytes ---- */

static const char index_fmt[] =
	"{\"version\": 2, \"model\": \"example/tiny-moe\", \"family\": \"gemma4\",\n"
	" \"num_layers\": 1, \"hidden_size\": 4, \"intermediate_size\": 8,\n"
	" \"vocab_size\": 4, \"embed_scale\": 2.0, \"layers\": [], \"down_top_k\": 1,\n"
	" \"has_model_weights\": true, \"quant\": \"q4k\", \"ffn_layout\": \"per_layer\",\n"
	" \"model_config\": {\"model_type\": \"%s\", \"head_dim\": 2, \"num_q_heads\": 2,\n"
	"   \"num_kv_heads\": 1, \"rope_base\": 10000.0,\n"
	"   \"moe\": {\"num_experts\": 2, \"top_k\": 2, \"shared_expert\": false,\n"
	"           \"router_type\": \"gemma4_top_k_softmax\",\n"
	"           %s \"hybrid\": %s}}}\n";

static const char manifest[] =
	"[{\"key\":\"layers.0.pre_feedforward_layernorm_2.weight\",\"kind\":\"vector\","
	"\"shape\":[4],\"offset\":0,\"length\":16,\"file\":\"norms.bin\"}]";

static const char norms_hex[] = "00000040 0000003f 0000c03f 0000803f";

static const char q4k_head_hex[] =
	"4c 59 52 57 01 00 00 00 04 00 00 00 02 00 00 00"
	"20 00 00 00 04 00 00 00 58 00 00 00 00 00 00 00"
	"90 00 00 00 00 00 00 00 e8 00 00 00 00 00 00 00"
	"40 02 00 00 00 00 00 00 28 03 00 00 00 00 00 00"
	"90 00 00 00 00 00 00 00 b8 03 00 00 00 00 00 00"
	"40 02 00 00 00 00 00 00";

static const char f32_hex[] =
	"4c 59 52 57 01 00 00 00 00 00 00 00 02 00 00 00"
	"02 00 00 00 04 00 00 00 58 00 00 00 00 00 00 00"
	"40 00 00 00 00 00 00 00 98 00 00 00 00 00 00 00"
	"20 00 00 00 00 00 00 00 b8 00 00 00 00 00 00 00"
	"40 00 00 00 00 00 00 00 f8 00 00 00 00 00 00 00"
	"20 00 00 00 00 00 00 00 00 00 80 3f 00 00 00 00"
	"00 00 00 00 00 00 00 00 00 00 00 00 00 00 80 3f"
	"00 00 00 00 00 00 00 00 00 00 80 3f 00 00 80 3f"
	"00 00 80 3f 00 00 80 3f 00 00 00 00 00 00 00 00"
	"00 00 80 3f 00 00 80 bf 00 00 80 3f 00 00 00 00"
	"00 00 00 00 00 00 80 3f 00 00 80 3f 00 00 80 3f"
	"00 00 00 00 00 00 80 bf 00 00 00 00 00 00 00 00"
	"00 00 80 3f 00 00 00 00 00 00 00 3f 00 00 00 00"
	"00 00 00 00 00 00 00 3f 00 00 00 40 00 00 00 00"
	"00 00 00 00 00 00 00 00 00 00 00 00 00 00 80 3f"
	"00 00 00 00 00 00 00 00 00 00 00 00 00 00 80 3f"
	"00 00 80 3f 00 00 00 00 00 00 00 00 00 00 00 00"
	"00 00 80 bf 00 00 80 3f";

/* The 10 blocks of §6 in file order: their non-0x22 qs bytes
 * (position, value), ended by a position of -1. */
static const int q4k_blocks[10][9][2] = {
	{ {0, 0x24}, {5, 0x24}, {64, 0x24}, {65, 0x24}, {66, 0x24},
	  {67, 0x24}, {70, 0x24}, {71, 0x20}, {-1, 0} },	/* e0 gate_up */
	{ {0, 0x24}, {-1, 0} },					/* e0 down r0 */
	{ {1, 0x24}, {-1, 0} },
	{ {0, 0x24}, {1, 0x24}, {-1, 0} },
	{ {1, 0x20}, {-1, 0} },
	{ {2, 0x24}, {4, 0x23}, {7, 0x23}, {64, 0x26}, {69, 0x24},
	  {-1, 0} },						/* e1 gate_up */
	{ {1, 0x24}, {-1, 0} },					/* e1 down r0 */
	{ {0, 0x24}, {-1, 0} },
	{ {-1, 0} },
	{ {0, 0x20}, {1, 0x24}, {-1, 0} },
};

static const float ex_x[4] = { 1.0f, -2.0f, 0.5f, 3.0f };
static const uint32_t ex_out[4] = {
	0x3fc68df0, 0x3e8eda40, 0x3fed00f4, 0xbee05680,
};
static const float ex_y0[4] = { 2.28048f, 0.188312f, 2.46879f, -0.188312f };
static const float ex_y1[4] = { -0.636604f, 0.551099f, 0.0f, -1.18770f };

static size_t
unhex(const char *s, uint8_t *out)
{
	size_t n = 0;
	unsigned v;

	while (*s) {
		if (*s == ' ') {
			s++;
			continue;
		}
		assert_int_equal(sscanf(s, "%2x", &v), 1);
		out[n++] = (uint8_t)v;
		s += 2;
	}
	return n;
}

static uint32_t
bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/* Distance in units in the last place between two finite floats. */
static uint32_t
ulps(float a, float b)
{
	int32_t ia = (int32_t)bits(a), ib = (int32_t)bits(b);

	if (ia < 0)
		ia = INT32_MIN - ia;
	if (ib < 0)
		ib = INT32_MIN - ib;
	return ia > ib ? (uint32_t)(ia - ib) : (uint32_t)(ib - ia);
}

/* The §6 out within 2 ulp: its bits are the reference's, computed with
 * libm tanhf; lib/ffn's activation (ffn_act_mul, ffn_act_tmpl.h) is
 * within a few ulp of that (here y_1[0] and y_1[3] are 1 ulp off, so is
 * out[3]) and spec/moe.md §1 compares with a tolerance. */
static void
check_out(const float *out)
{
	for (int i = 0; i < 4; i++) {
		float want;

		memcpy(&want, &ex_out[i], 4);
		if (ulps(out[i], want) > 2)
			fail_msg("out[%d] %08x, want %08x", i, bits(out[i]),
				 ex_out[i]);
	}
}

static void
write_index(const char *d, const char *type, const char *width,
	    const char *hybrid)
{
	char buf[2048];

	snprintf(buf, sizeof(buf), index_fmt, type, width, hybrid);
	assert_int_equal(tu_write_str(d, "index.json", buf), 0);
}

static size_t
q4k_file(uint8_t *f)
{
	size_t n = unhex(q4k_head_hex, f);

	assert_int_equal(n, 88);
	for (int b = 0; b < 10; b++) {
		uint8_t *blk = f + n;
		static const char pre[] =
			"00 38 00 38 01 01 01 01 02 02 02 02 21 21 21 21";

		unhex(pre, blk);
		memset(blk + 16, 0x22, 128);
		for (int i = 0; q4k_blocks[b][i][0] >= 0; i++)
			blk[16 + q4k_blocks[b][i][0]] =
				(uint8_t)q4k_blocks[b][i][1];
		n += 144;
	}
	assert_int_equal(n, 1528);
	return n;
}

/* The §6 vindex in a fresh directory: Q4_K (I = 32) or F32 (I = 2). */
static void
make_example(char *d, size_t dl, int f32)
{
	uint8_t f[1600], nb[16];

	assert_non_null(tu_tmpdir(d, dl));
	write_index(d, "gemma4",
		    f32 ? "\"moe_intermediate_size\": 2,"
			: "\"moe_intermediate_size\": 32,", "true");
	assert_int_equal(tu_write_str(d, "weight_manifest.json", manifest), 0);
	assert_int_equal(unhex(norms_hex, nb), 16);
	assert_int_equal(tu_write(d, "norms.bin", nb, 16), 0);
	mkdir_layers(d);
	if (f32)
		assert_int_equal(unhex(f32_hex, f), 280);
	assert_int_equal(tu_write(d, "layers/layer_00.weights", f,
				  f32 ? 280 : q4k_file(f)), 0);
}

static void
check_example(const char *d, const char *kind, float *out)
{
	struct ffn_moe *m = load_ok(d, NULL);
	const struct ffn_moe_info *in = ffn_moe_info(m);
	struct ffn_moe_scratch *s = ffn_moe_scratch_new(m, 4, -1);
	struct ffn_moe_pair p[2] = { { 1, 0.25f }, { 0, 0.75f } };
	float h[4], y[4];
	unsigned bad = 99;

	assert_non_null(s);
	assert_string_equal(in->kind, kind);
	assert_string_equal(in->model_id, "tiny-moe");
	assert_string_equal(in->model, "example/tiny-moe");
	assert_int_equal(in->num_experts, 2);
	assert_int_equal(in->hidden, 4);
	assert_int_equal(in->experts_loaded, 2);
	assert_int_equal(in->norms, 1);
	assert_int_equal(in->layer_files, 1);
	assert_true(in->bytes_loaded > 0);
	assert_true(ffn_moe_has_layer(m, 0));
	assert_false(ffn_moe_has_layer(m, 1));
	ffn_moe_norm(m, 0, ex_x, h);
	assert_float_equal(h[0], 1.05963f, 1e-5);
	assert_float_equal(h[1], -0.529813f, 1e-5);
	assert_float_equal(h[3], 1.58944f, 1e-5);
	assert_int_equal(ffn_moe_expert(m, 0, 0, h, 1, y, s), 0);
	for (int i = 0; i < 4; i++)
		assert_float_equal(y[i], ex_y0[i], 1e-5 * fabsf(ex_y0[i]) + 1e-6);
	assert_int_equal(ffn_moe_expert(m, 0, 1, h, 1, y, s), 0);
	for (int i = 0; i < 4; i++)
		assert_float_equal(y[i], ex_y1[i], 1e-5 * fabsf(ex_y1[i]) + 1e-6);
	assert_int_equal(ffn_moe_mix(m, 0, h, NULL, p, 2, out, &bad, s), 0);
	check_out(out);
	/* kq_q8k is for the "q4k" kind only: f32 and q4k-f32 compute as
	 * before (ffn_moe_set_kq_q8k) */
	assert_int_equal(in->kq_q8k, 0);
	ffn_moe_set_kq_q8k(m, 1);
	assert_int_equal(in->kq_q8k, 0);
	assert_int_equal(ffn_moe_expert(m, 0, 1, h, 1, y, s), 0);
	for (int i = 0; i < 4; i++)
		assert_float_equal(y[i], ex_y1[i], 1e-5 * fabsf(ex_y1[i]) + 1e-6);
	ffn_moe_set_kq_q8k(m, 0);
	/* the norm in place */
	memcpy(y, ex_x, sizeof(y));
	ffn_moe_norm(m, 0, y, y);
	assert_memory_equal(y, h, sizeof(h));
	/* H = 4: no Q8_K route */
	assert_int_equal(ffn_moe_expert_q8k(m, 0, 0, y, 1, h, s), -EINVAL);
	ffn_moe_scratch_free(s);
	ffn_moe_free(m);
}

/* With every kernel set of lib/ffn the CPU has (the highest last). */
static void
test_example_f32(void **state)
{
	float out[4];
	char d[64];

	(void)state;
	make_example(d, sizeof(d), 1);
	for (int isa = 0; isa < FFN_ISA_COUNT; isa++) {
		if (!ffn_isa_supported((enum ffn_isa)isa))
			continue;
		assert_int_equal(ffn_select_isa((enum ffn_isa)isa), 0);
		check_example(d, "f32", out);
	}
	tu_rmtree(d);
}

/* Both are f32 computations of the same exactly representable weights:
 * the Q4_K file (I = 32, dequantised exactly, the extra rows zero) gives
 * the F32 file's bits. */
static void
test_example_q4k(void **state)
{
	float out[4], o32[4];
	char d[64];

	(void)state;
	make_example(d, sizeof(d), 0);
	check_example(d, "q4k-f32", out);
	tu_rmtree(d);
	make_example(d, sizeof(d), 1);
	check_example(d, "f32", o32);
	tu_rmtree(d);
	assert_memory_equal(out, o32, sizeof(out));
}

/* §5.2: an f16 norm gives the same h; an entry out of its file is
 * ignored (no norm: h = x). */
static void
test_norms(void **state)
{
	static const uint16_t nf16[4] = { 0x4000, 0x3800, 0x3e00, 0x3c00 };
	struct ffn_moe *m;
	float h[4], h32[4];
	char d[64];

	(void)state;
	make_example(d, sizeof(d), 1);
	m = load_ok(d, NULL);
	ffn_moe_norm(m, 0, ex_x, h32);
	ffn_moe_free(m);
	assert_int_equal(tu_write(d, "norms.bin", nf16, 8), 0);
	assert_int_equal(tu_write_str(d, "weight_manifest.json",
		"[{\"key\":\"layers.0.pre_feedforward_layernorm_2.weight\","
		"\"kind\":\"vector\",\"shape\":[4],\"offset\":0,\"length\":8,"
		"\"file\":\"norms.bin\"}]"), 0);
	m = load_ok(d, NULL);
	ffn_moe_norm(m, 0, ex_x, h);
	assert_memory_equal(h, h32, sizeof(h));
	ffn_moe_free(m);
	assert_int_equal(tu_write_str(d, "weight_manifest.json",
		"[{\"key\":\"layers.0.pre_feedforward_layernorm_2.weight\","
		"\"kind\":\"vector\",\"shape\":[4],\"offset\":4,\"length\":8,"
		"\"file\":\"norms.bin\"}]"), 0);
	m = load_ok(d, NULL);
	assert_int_equal(ffn_moe_info(m)->norms, 0);
	ffn_moe_norm(m, 0, ex_x, h);
	assert_memory_equal(h, ex_x, sizeof(h));
	ffn_moe_free(m);
	tu_rmtree(d);
}

/* ---- §5.3: every field of a layer file, and a missing file ---- */

static void
expect_bad(const char *d, int code, const char *field)
{
	struct ffn_moe *m = NULL;
	char err[512] = "";
	int rc = ffn_moe_load(d, NULL, &m, err, sizeof(err));

	if (rc != code || strstr(err, "layers/layer_00.weights") == NULL ||
	    strstr(err, field) == NULL)
		fail_msg("want %d naming '%s', got %d: %s", code, field, rc,
			 err);
	assert_null(m);
}

static void
test_lyrw_checks(void **state)
{
	static const struct {
		size_t at;	/* field offset */
		int w64;
		uint64_t v;
		int code;
		const char *msg;
	} cases[] = {
		{ 0, 0, 0x57525958, FFN_ERR_SHAPE, "magic 58" },
		{ 4, 0, 2, FFN_ERR_SHAPE, "format_version 2, expected 1" },
		{ 8, 0, 9, FFN_ERR_MODEL, "quant_format 9" },
		{ 8, 0, 7, FFN_ERR_MODEL, "quant_format 7 (FP4)" },
		{ 8, 0, 1, FFN_ERR_MODEL, "quant_format 1 (F16)" },
		{ 12, 0, 3, FFN_ERR_SHAPE, "num_entries 3, expected 2" },
		{ 16, 0, 3, FFN_ERR_SHAPE, "intermediate 3, expected 2" },
		{ 20, 0, 8, FFN_ERR_SHAPE, "hidden 8, expected 4" },
		{ 24 + 32 + 8, 1, 65, FFN_ERR_SHAPE,
		  "expert 1 gate_up_bytes 65, expected 64" },
		{ 24 + 24, 1, 48, FFN_ERR_SHAPE,
		  "expert 0 down_bytes 48, expected 4096 or 32" },
		{ 24 + 32, 1, 250, FFN_ERR_SHORT, "expert 1 gate_up range" },
		{ 24 + 32 + 16, 1, 249, FFN_ERR_SHORT, "expert 1 down range" },
		{ 24, 1, UINT64_MAX - 8, FFN_ERR_SHORT,
		  "expert 0 gate_up range" },
	};
	uint8_t f[280], g[280];
	char d[64];
	size_t i;

	(void)state;
	make_example(d, sizeof(d), 1);
	assert_int_equal(unhex(f32_hex, f), 280);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(g, f, sizeof(g));
		if (cases[i].w64)
			put64(g + cases[i].at, cases[i].v);
		else
			put32(g + cases[i].at, (uint32_t)cases[i].v);
		assert_int_equal(tu_write(d, "layers/layer_00.weights", g,
					  sizeof(g)), 0);
		expect_bad(d, cases[i].code, cases[i].msg);
	}
	/* truncated: inside the header, inside the table, inside a payload */
	assert_int_equal(tu_write(d, "layers/layer_00.weights", f, 10), 0);
	expect_bad(d, FFN_ERR_SHORT, "10 bytes, expected at least the 24-byte");
	assert_int_equal(tu_write(d, "layers/layer_00.weights", f, 87), 0);
	expect_bad(d, FFN_ERR_SHORT, "87 bytes, expected at least 88");
	assert_int_equal(tu_write(d, "layers/layer_00.weights", f, 279), 0);
	expect_bad(d, FFN_ERR_SHORT, "expert 1 down range");
	assert_int_equal(tu_write(d, "layers/layer_00.weights", f, 0), 0);
	expect_bad(d, FFN_ERR_SHORT, "0 bytes");
	tu_rmtree(d);
}

static void
test_missing_layer_file(void **state)
{
	struct ffn_moe_pair p[1] = { { 0, 1.0f } };
	struct ffn_moe_scratch *s;
	struct ffn_moe *m;
	float out[4], h[4] = { 1, 2, 3, 4 };
	unsigned bad = 9;
	char d[64];

	(void)state;
	make_example(d, sizeof(d), 1);
	assert_int_equal(tu_unlink(d, "layers/layer_00.weights"), 0);
	m = load_ok(d, NULL);
	s = ffn_moe_scratch_new(m, 1, -1);
	assert_non_null(s);
	assert_int_equal(ffn_moe_info(m)->experts_loaded, 0);
	assert_int_equal(ffn_moe_info(m)->layer_files, 0);
	assert_false(ffn_moe_has_layer(m, 0));
	assert_false(ffn_moe_held(m, 0, 0));
	assert_int_equal(ffn_moe_expert(m, 0, 0, h, 1, out, s), -ERANGE);
	assert_int_equal(ffn_moe_mix(m, 0, h, NULL, p, 1, out, &bad, s),
			 -ERANGE);
	assert_int_equal(bad, 0);
	ffn_moe_scratch_free(s);
	ffn_moe_free(m);
	tu_rmtree(d);
}

/* Dimensions index.json claims but no file backs (fuzz-moe-vindex):
 * with no layer file nothing is placed, and a norm entry out of its
 * file is ignored (§5.2), so neither may allocate by I x H or
 * num_layers x H (2^43 and 2^34 bytes here) and fail the load. */
static void
test_huge_dims_no_files(void **state)
{
	static const char idx[] =
		"{\"model\": \"x/huge\", \"num_layers\": 4096,"
		" \"hidden_size\": 1048576,"
		" \"model_config\": {\"model_type\": \"gemma4\","
		" \"moe\": {\"num_experts\": 4,"
		" \"moe_intermediate_size\": 1048576, \"hybrid\": true}}}";
	struct ffn_moe *m;
	char d[64];

	(void)state;
	make_example(d, sizeof(d), 1);
	assert_int_equal(tu_unlink(d, "layers/layer_00.weights"), 0);
	assert_int_equal(tu_write_str(d, "index.json", idx), 0);
	assert_int_equal(tu_write_str(d, "weight_manifest.json",
		"[{\"key\":\"layers.0.pre_feedforward_layernorm_2.weight\","
		"\"kind\":\"vector\",\"shape\":[1048576],\"offset\":0,"
		"\"length\":4194304,\"file\":\"norms.bin\"}]"), 0);
	m = load_ok(d, NULL);
	assert_int_equal(ffn_moe_info(m)->hidden, 1048576);
	assert_int_equal(ffn_moe_info(m)->experts_loaded, 0);
	assert_int_equal(ffn_moe_info(m)->norms, 0);
	assert_string_equal(ffn_moe_info(m)->kind, "none");
	ffn_moe_free(m);
	tu_rmtree(d);
}

/* ---- §5.1: index.json ---- */

static void
test_index(void **state)
{
	struct ffn_moe *m = NULL;
	char d[64], err[512];

	(void)state;
	make_example(d, sizeof(d), 1);
	assert_int_equal(ffn_moe_is_hybrid(d, err, sizeof(err)), 1);
	write_index(d, "llama", "\"moe_intermediate_size\": 2,", "false");
	assert_int_equal(ffn_moe_is_hybrid(d, err, sizeof(err)), 0);
	assert_int_equal(ffn_moe_load(d, NULL, &m, err, sizeof(err)),
			 FFN_ERR_MODEL);
	assert_non_null(strstr(err, "not a hybrid MoE"));
	assert_non_null(strstr(err, "'llama'"));
	write_index(d, "gemma4", "\"moe_intermediate_size\": 2,", "false");
	assert_int_equal(ffn_moe_is_hybrid(d, err, sizeof(err)), 0);
	assert_int_equal(ffn_moe_load(d, NULL, &m, err, sizeof(err)),
			 FFN_ERR_MODEL);
	assert_non_null(strstr(err, "hybrid false (expected true)"));
	write_index(d, "gemma4_text", "", "true");
	assert_int_equal(ffn_moe_is_hybrid(d, err, sizeof(err)), 1);
	assert_int_equal(ffn_moe_load(d, NULL, &m, err, sizeof(err)),
			 FFN_ERR_KEY);
	assert_non_null(strstr(err, "moe_intermediate_size"));
	write_index(d, "gemma4", "\"moe_intermediate_size\": 0,", "true");
	assert_int_equal(ffn_moe_load(d, NULL, &m, err, sizeof(err)),
			 FFN_ERR_KEY);
	assert_non_null(strstr(err, "moe_intermediate_size' is 0"));
	assert_null(m);
	assert_int_equal(tu_write_str(d, "index.json", "{nope"), 0);
	assert_int_equal(ffn_moe_is_hybrid(d, err, sizeof(err)),
			 FFN_ERR_JSON);
	tu_rmtree(d);
	assert_int_equal(ffn_moe_is_hybrid(d, err, sizeof(err)), FFN_ERR_IO);
	assert_non_null(strstr(err, "index.json"));
}

/* ---- §2: ownership ---- */

static void
test_own_range(void **state)
{
	static const char *const bad[] = {
		"7-3", "x", "1-", "", "  ", "-3", "3-x", "3 4", "4294967296",
		"1-99999999999", "3-7-9",
	};
	struct ffn_moe_own o;
	char err[256];
	size_t i;

	(void)state;
	assert_int_equal(ffn_moe_own_range(&o, "3-7", err, sizeof(err)), 0);
	assert_int_equal(o.kind, FFN_MOE_OWN_RANGE);
	assert_int_equal(o.first, 3);
	assert_int_equal(o.last, 7);
	assert_int_equal(ffn_moe_own_range(&o, " 3 - 7 ", err, sizeof(err)),
			 0);
	assert_int_equal(o.first, 3);
	assert_int_equal(o.last, 7);
	assert_true(ffn_moe_own_has(&o, 40, 3));
	assert_true(ffn_moe_own_has(&o, 0, 7));
	assert_false(ffn_moe_own_has(&o, 0, 8));
	assert_false(ffn_moe_own_has(&o, 0, 2));
	assert_int_equal(ffn_moe_own_range(&o, "5", err, sizeof(err)), 0);
	assert_int_equal(o.first, 5);
	assert_int_equal(o.last, 5);
	assert_int_equal(ffn_moe_own_range(&o, "0-4294967295", err,
					   sizeof(err)), 0);
	assert_int_equal(o.last, UINT32_MAX);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(ffn_moe_own_range(&o, bad[i], err,
						   sizeof(err)), -EINVAL);
		assert_true(strlen(err) > 0);
	}
	assert_int_equal(ffn_moe_own_range(&o, "7-3", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "start 7 > end 3"));
	assert_true(ffn_moe_own_has(NULL, 1, 1));
}

static void
test_own_units(void **state)
{
	static const struct {
		const char *json, *msg;
	} bad[] = {
		{ "{\"layer_experts\": {\"0\": [[5, 3]]}}", "end 3 < start 5" },
		{ "{\"layer_experts\": {\"x1\": [[0, 3]]}}", "\"x1\" is not a decimal" },
		{ "{\"layer_experts\": {\"-1\": [[0, 3]]}}", "\"-1\" is not a decimal" },
		{ "{\"layer_experts\": {\"\": [[0, 3]]}}", "is not a decimal" },
		{ "{\"layer_experts\": {\"0\": [[0, 3, 4]]}}", "not a pair" },
		{ "{\"layer_experts\": {\"0\": [[0, -3]]}}", "not in 0.." },
		{ "{\"layer_experts\": {\"0\": [[0, 1.5]]}}", "not a pair" },
		{ "{\"layer_experts\": {\"0\": 3}}", "not a list" },
		{ "{\"layer_experts\": [1]}", "no \"layer_experts\" object" },
		{ "{\"units\": {}}", "no \"layer_experts\" object" },
		{ "[1, 2]", "not a JSON object" },
		{ "{nope", "not JSON" },
	};
	struct ffn_moe_own o;
	char d[64], p[128], err[512];
	size_t i;

	(void)state;
	assert_non_null(tu_tmpdir(d, sizeof(d)));
	snprintf(p, sizeof(p), "%s/units.json", d);
	assert_int_equal(tu_write_str(d, "units.json",
		"{\"other\": 1, \"layer_experts\": {\"0\": [[0, 0]],"
		" \"2\": [[1, 1], [3, 4]], \"3\": []}}"), 0);
	assert_int_equal(ffn_moe_own_units(&o, p, err, sizeof(err)), 0);
	assert_int_equal(o.kind, FFN_MOE_OWN_UNITS);
	assert_int_equal(o.n_layers, 3);	/* "3" owns nothing */
	assert_true(ffn_moe_own_has(&o, 0, 0));
	assert_false(ffn_moe_own_has(&o, 0, 1));
	assert_false(ffn_moe_own_has(&o, 1, 0));
	assert_true(ffn_moe_own_has(&o, 2, 1));
	assert_false(ffn_moe_own_has(&o, 2, 2));
	assert_true(ffn_moe_own_has(&o, 2, 3));
	assert_true(ffn_moe_own_has(&o, 2, 4));
	assert_false(ffn_moe_own_has(&o, 3, 0));
	assert_false(ffn_moe_own_has(&o, 4, 0));
	ffn_moe_own_free(&o);
	assert_int_equal(o.kind, FFN_MOE_OWN_ALL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(tu_write_str(d, "units.json", bad[i].json), 0);
		err[0] = '\0';
		assert_int_equal(ffn_moe_own_units(&o, p, err, sizeof(err)),
				 -EINVAL);
		if (strstr(err, p) == NULL || strstr(err, bad[i].msg) == NULL)
			fail_msg("%s: want '%s', got '%s'", bad[i].json,
				 bad[i].msg, err);
	}
	snprintf(p, sizeof(p), "%s/none.json", d);
	assert_int_equal(ffn_moe_own_units(&o, p, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "none.json"));
	tu_rmtree(d);
}

/* Only owned experts are loaded; others are not held. */
static void
test_own_load(void **state)
{
	struct ffn_moe_load_opts lo = { .numa_node = -1 };
	struct ffn_moe_own o;
	struct ffn_moe *m;
	char d[64], p[128], err[256];

	(void)state;
	make_example(d, sizeof(d), 1);
	assert_int_equal(ffn_moe_own_range(&o, "1-5", err, sizeof(err)), 0);
	lo.own = &o;
	m = load_ok(d, &lo);
	assert_int_equal(ffn_moe_info(m)->experts_loaded, 1);
	assert_false(ffn_moe_held(m, 0, 0));
	assert_true(ffn_moe_held(m, 0, 1));
	assert_false(ffn_moe_held(m, 0, 2));
	assert_false(ffn_moe_held(m, 1, 1));
	ffn_moe_free(m);
	snprintf(p, sizeof(p), "%s/u.json", d);
	assert_int_equal(tu_write_str(d, "u.json",
		"{\"layer_experts\": {\"0\": [[0, 0]], \"7\": [[0, 9]]}}"), 0);
	assert_int_equal(ffn_moe_own_units(&o, p, err, sizeof(err)), 0);
	m = load_ok(d, &lo);
	assert_int_equal(ffn_moe_info(m)->experts_loaded, 1);
	assert_true(ffn_moe_held(m, 0, 0));
	assert_false(ffn_moe_held(m, 0, 1));
	ffn_moe_free(m);
	ffn_moe_own_free(&o);
	/* a layer file owning nothing is not read: a broken one loads */
	assert_int_equal(ffn_moe_own_range(&o, "2-3", err, sizeof(err)), 0);
	assert_int_equal(tu_write(d, "layers/layer_00.weights", "xx", 2), 0);
	m = load_ok(d, &lo);
	assert_int_equal(ffn_moe_info(m)->experts_loaded, 0);
	assert_true(ffn_moe_has_layer(m, 0));
	ffn_moe_free(m);
	tu_rmtree(d);
}

/* ---- §1: the layer batch's rules ---- */

static void
test_mix_rules(void **state)
{
	struct ffn_moe *m;
	struct ffn_moe_scratch *s;
	float h[4], y0[4], out[4];
	unsigned bad;
	char d[64];
	int i;

	(void)state;
	make_example(d, sizeof(d), 1);
	m = load_ok(d, NULL);
	s = ffn_moe_scratch_new(m, 2, -1);
	ffn_moe_norm(m, 0, ex_x, h);
	assert_int_equal(ffn_moe_expert(m, 0, 0, h, 1, y0, s), 0);
	{	/* w = 0 of either sign: skipped without a look-up */
		struct ffn_moe_pair p[4] = {
			{ 77, 0.0f }, { 1, 0.25f }, { 1000, -0.0f },
			{ 0, 0.75f },
		};

		assert_int_equal(ffn_moe_mix(m, 0, h, NULL, p, 4, out, &bad, s),
				 0);
		check_out(out);
	}
	{	/* not held, w != 0: nothing computed, *bad its index */
		struct ffn_moe_pair p[3] = { { 0, 0.5f }, { 1, 0.0f },
					     { 2, 1e-30f } };

		for (i = 0; i < 4; i++)
			out[i] = 42.0f;
		bad = 9;
		assert_int_equal(ffn_moe_mix(m, 0, h, NULL, p, 3, out, &bad, s),
				 -ERANGE);
		assert_int_equal(bad, 2);
		assert_true(out[0] == 42.0f && out[3] == 42.0f);
		assert_int_equal(ffn_moe_mix(m, 1, h, NULL, p, 1, out, &bad, s),
				 -ERANGE);
		assert_int_equal(bad, 0);
	}
	{	/* served from the mapping (gate_up in place): same bits */
		struct ffn_moe_load_opts lo = { .numa_node = -1,
						.placement = FFN_PLACE_MMAP };
		struct ffn_moe_pair p[2] = { { 1, 0.25f }, { 0, 0.75f } };
		struct ffn_moe *mm = load_ok(d, &lo);
		float o2[4];

		assert_int_equal(ffn_moe_info(mm)->placement, FFN_PLACE_MMAP);
		assert_int_equal(ffn_moe_mix(m, 0, h, NULL, p, 2, out, &bad, s),
				 0);
		assert_int_equal(ffn_moe_mix(mm, 0, h, NULL, p, 2, o2, &bad, s),
				 0);
		assert_memory_equal(out, o2, sizeof(out));
		ffn_moe_free(mm);
	}
	{	/* listed twice counts twice: 0.5 y0 + 0.5 y0 = y0 exactly */
		struct ffn_moe_pair p[2] = { { 0, 0.5f }, { 0, 0.5f } };

		assert_int_equal(ffn_moe_mix(m, 0, h, NULL, p, 2, out, &bad, s),
				 0);
		assert_memory_equal(out, y0, sizeof(out));
	}
	/* K = 0: zeros */
	for (i = 0; i < 4; i++)
		out[i] = 42.0f;
	assert_int_equal(ffn_moe_mix(m, 0, h, NULL, NULL, 0, out, &bad, s), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(bits(out[i]), 0);
	{	/* NaN is not skipped */
		struct ffn_moe_pair p[2] = { { 1, NAN }, { 0, 0.75f } };

		assert_int_equal(ffn_moe_mix(m, 0, h, NULL, p, 2, out, &bad, s),
				 0);
		for (i = 0; i < 4; i++)
			assert_true(isnan(out[i]));
	}
	/* more rows than the scratch */
	{
		float hh[12] = { 0 }, yy[12];

		assert_int_equal(ffn_moe_expert(m, 0, 0, hh, 3, yy, s),
				 -ENOSPC);
		assert_int_equal(ffn_moe_expert(m, 0, 0, hh, 2, yy, s), 0);
		assert_memory_equal(yy, yy + 4, 4 * sizeof(float));
	}
	ffn_moe_scratch_free(s);
	ffn_moe_free(m);
	tu_rmtree(d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_f32),
		cmocka_unit_test(test_example_q4k),
		cmocka_unit_test(test_norms),
		cmocka_unit_test(test_lyrw_checks),
		cmocka_unit_test(test_missing_layer_file),
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_own_range),
		cmocka_unit_test(test_huge_dims_no_files),
		cmocka_unit_test(test_own_units),
		cmocka_unit_test(test_own_load),
		cmocka_unit_test(test_mix_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
