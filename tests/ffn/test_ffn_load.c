/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * lib/ffn load errors: each yields its ffn_error code and a message that
 * names the file, layer or key at fault (spec/vindex.md §1, §2).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ffn.h"
#include "ffn_test_util.h"
#include "vindex_write.h"

/* The §3 model's index.json with one part replaced by the test. */
#define IDX_HEAD "{\"num_layers\": 2, \"hidden_size\": 4, " \
	"\"intermediate_size\": 3, "
#define IDX_LAYERS "\"layers\": [{\"layer\": 0, \"num_features\": 3, " \
	"\"offset\": 0, \"length\": 48}, {\"layer\": 1, " \
	"\"num_features\": 3, \"offset\": 48, \"length\": 48}]"
#define IDX_MC "\"model_config\": {\"model_type\": \"llama\"}"

static char dir[64];

/* A fresh example vindex (§3) in the given layout for each test. */
static int
setup_layout(enum vw_layout layout, int f16)
{
	struct vw_opts o;
	char err[256];

	vw_defaults(&o);
	o.example = 1;
	o.layout = layout;
	o.f16 = f16;
	if (tu_tmpdir(dir, sizeof(dir)) == NULL)
		return -1;
	return vw_write(dir, &o, err, sizeof(err));
}

static int
setup_fm(void **state)
{
	(void)state;
	return setup_layout(VW_FEATURE_MAJOR, 0);
}

static int
setup_il(void **state)
{
	(void)state;
	return setup_layout(VW_INTERLEAVED, 0);
}

static int
setup_dense(void **state)
{
	(void)state;
	return setup_layout(VW_DENSE, 1);
}

static int
teardown(void **state)
{
	(void)state;
	tu_rmtree(dir);
	return 0;
}

/* Load with opts; expect code (0: success) and each needle in the message. */
static void
expect_fail(const struct ffn_load_opts *o, int code, const char *n1,
	    const char *n2)
{
	struct ffn_model *m = (struct ffn_model *)1;
	char err[512];
	int rc = ffn_model_load(dir, o, &m, err, sizeof(err));

	if (rc != code)
		fail_msg("expected %d (%s), got %d: '%s'", code,
			 ffn_strerror(code), rc, err);
	if (code == 0) {
		assert_non_null(m);
		ffn_model_free(m);
		return;
	}
	assert_null(m);
	if (n1 && strstr(err, n1) == NULL)
		fail_msg("message '%s' lacks '%s'", err, n1);
	if (n2 && strstr(err, n2) == NULL)
		fail_msg("message '%s' lacks '%s'", err, n2);
}

static void
expect_index(const char *json, int code, const char *n1, const char *n2)
{
	assert_int_equal(tu_write_str(dir, "index.json", json), 0);
	expect_fail(NULL, code, n1, n2);
}

static void
test_loads_ok(void **state)
{
	struct ffn_model *m = NULL;
	char err[256];

	(void)state;
	/* the minimal index.json of vindex.md §3 */
	assert_int_equal(tu_write_str(dir, "index.json",
		"{\"num_layers\": 2, \"hidden_size\": 4, "
		"\"intermediate_size\": 3, \"dtype\": \"f32\", "
		"\"quant\": \"none\", " IDX_MC ", " IDX_LAYERS "}"), 0);
	assert_int_equal(ffn_model_load(dir, NULL, &m, err, sizeof(err)), 0);
	assert_non_null(m);
	assert_int_equal(ffn_model_info(m)->hidden, 4);
	assert_int_equal(ffn_model_info(m)->bytes_loaded, 2 * 3 * 48);
	assert_string_equal(ffn_model_info(m)->model_type, "llama");
	ffn_model_free(m);
}

static void
test_missing_index(void **state)
{
	(void)state;
	assert_int_equal(tu_unlink(dir, "index.json"), 0);
	expect_fail(NULL, FFN_ERR_IO, "index.json", NULL);
}

static void
test_bad_json(void **state)
{
	(void)state;
	expect_index("{\"num_layers\": 2,", FFN_ERR_JSON, "index.json",
		     "invalid JSON");
	expect_index("[1, 2]", FFN_ERR_KEY, "index.json", "object");
}

static void
test_missing_keys(void **state)
{
	(void)state;
	expect_index(IDX_HEAD IDX_LAYERS "}", FFN_ERR_KEY, "model_config",
		     NULL);
	expect_index(IDX_HEAD "\"model_config\": {}, " IDX_LAYERS "}",
		     FFN_ERR_KEY, "model_type", NULL);
	expect_index("{\"num_layers\": 2, " IDX_MC ", " IDX_LAYERS "}",
		     FFN_ERR_KEY, "hidden_size", NULL);
	expect_index("{\"hidden_size\": 4, " IDX_MC ", " IDX_LAYERS "}",
		     FFN_ERR_KEY, "num_layers", NULL);
	expect_index(IDX_HEAD IDX_MC "}", FFN_ERR_KEY, "layers", NULL);
	expect_index(IDX_HEAD IDX_MC ", \"layers\": [{\"layer\": 0, "
		     "\"offset\": 0}, {\"layer\": 1, \"num_features\": 3, "
		     "\"offset\": 48}]}", FFN_ERR_KEY, "layers[0]",
		     "num_features");
	expect_index(IDX_HEAD IDX_MC ", \"dtype\": \"bf16\", " IDX_LAYERS "}",
		     FFN_ERR_KEY, "dtype", "bf16");
	expect_index(IDX_HEAD IDX_MC ", \"hidden_size\": \"4\", "
		     IDX_LAYERS "}", FFN_ERR_KEY, "hidden_size", NULL);
	/* §2.1 gate rows are located by layers[L].offset */
	expect_index(IDX_HEAD IDX_MC ", \"layers\": [{\"layer\": 0, "
		     "\"num_features\": 3, \"offset\": 0}, {\"layer\": 1, "
		     "\"num_features\": 3}]}", FFN_ERR_KEY, "layer 1",
		     "offset");
}

static void
test_refused_models(void **state)
{
	(void)state;
	expect_index(IDX_HEAD "\"model_config\": {\"model_type\": \"gpt2\"}, "
		     IDX_LAYERS "}", FFN_ERR_MODEL, "gpt2", NULL);
	expect_index(IDX_HEAD "\"model_config\": {\"model_type\": "
		     "\"starcoder2\"}, " IDX_LAYERS "}", FFN_ERR_MODEL,
		     "starcoder2", NULL);
	expect_index(IDX_HEAD IDX_MC ", \"fp4\": {\"block\": 32}, "
		     IDX_LAYERS "}", FFN_ERR_FP4, "fp4", NULL);
	expect_index(IDX_HEAD IDX_MC ", \"quant\": \"q4k\", " IDX_LAYERS "}",
		     FFN_ERR_KQUANT, "q4k", NULL);
	expect_index(IDX_HEAD IDX_MC ", \"quant\": \"q8\", " IDX_LAYERS "}",
		     FFN_ERR_KEY, "quant", "q8");
}

/* §1: family does not choose the activation; model_type does. */
static void
test_activation_choice(void **state)
{
	static const struct {
		const char *type;
		enum ffn_act act;
	} cases[] = {
		{ "gemma", FFN_ACT_GELU_TANH },
		{ "gemma2", FFN_ACT_GELU_TANH },
		{ "gemma3_text", FFN_ACT_GELU_TANH },
		{ "gemma4", FFN_ACT_GELU_TANH },
		{ "gemmax", FFN_ACT_SILU },
		{ "llama", FFN_ACT_SILU },
		{ "qwen2", FFN_ACT_SILU },
	};
	char json[1024];
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ffn_model *m = NULL;

		snprintf(json, sizeof(json), IDX_HEAD "\"family\": \"gemma3\", "
			 "\"model_config\": {\"model_type\": \"%s\"}, "
			 IDX_LAYERS "}", cases[i].type);
		assert_int_equal(tu_write_str(dir, "index.json", json), 0);
		assert_int_equal(ffn_model_load(dir, NULL, &m, NULL, 0), 0);
		assert_int_equal(ffn_model_info(m)->act, cases[i].act);
		ffn_model_free(m);
	}
}

static void
test_layer_errors(void **state)
{
	struct ffn_load_opts o;

	(void)state;
	expect_index(IDX_HEAD IDX_MC ", \"layers\": [{\"layer\": 0, "
		     "\"num_features\": 3, \"offset\": 0}]}", FFN_ERR_LAYER,
		     "layer 1", "no entry");
	expect_index(IDX_HEAD IDX_MC ", \"layers\": [{\"layer\": 0, "
		     "\"num_features\": 3, \"offset\": 0}, {\"layer\": 1, "
		     "\"num_features\": 0, \"offset\": 48}]}", FFN_ERR_LAYER,
		     "layer 1", "num_features 0");
	expect_index(IDX_HEAD IDX_MC ", \"layers\": [{\"layer\": 0, "
		     "\"num_features\": 3, \"offset\": 0}, {\"layer\": 2, "
		     "\"num_features\": 3, \"offset\": 48}]}", FFN_ERR_LAYER,
		     "layer 2", "num_layers");
	/* the first owned layer is checked like the others */
	expect_index(IDX_HEAD IDX_MC ", \"layers\": [{\"layer\": 1, "
		     "\"num_features\": 3, \"offset\": 48}]}", FFN_ERR_LAYER,
		     "layer 0", "no entry");
	expect_index(IDX_HEAD IDX_MC ", \"layers\": [{\"layer\": 0, "
		     "\"num_features\": 0, \"offset\": 0}, {\"layer\": 1, "
		     "\"num_features\": 3, \"offset\": 48}]}", FFN_ERR_LAYER,
		     "layer 0", "num_features 0");
	/* entries are keyed by layer (§1): one listed twice is ambiguous */
	expect_index(IDX_HEAD IDX_MC ", \"layers\": [{\"layer\": 0, "
		     "\"num_features\": 3, \"offset\": 0}, {\"layer\": 1, "
		     "\"num_features\": 3, \"offset\": 48}, {\"layer\": 0, "
		     "\"num_features\": 3, \"offset\": 48}]}", FFN_ERR_LAYER,
		     "layer 0", "twice");
	/* and not by position: listed 1, 0 loads like 0, 1 */
	expect_index(IDX_HEAD IDX_MC ", \"layers\": [{\"layer\": 1, "
		     "\"num_features\": 3, \"offset\": 48}, {\"layer\": 0, "
		     "\"num_features\": 3, \"offset\": 0}]}", 0, NULL, NULL);
	expect_index(IDX_HEAD IDX_MC ", " IDX_LAYERS "}", 0, NULL, NULL);
	ffn_load_opts_default(&o);
	o.first_layer = 1;
	o.last_layer = 2;
	expect_fail(&o, FFN_ERR_RANGE, "1..2", NULL);
	o.first_layer = 1;
	o.last_layer = 0;
	expect_fail(&o, FFN_ERR_RANGE, NULL, NULL);
	/* layer 0 unowned but needed for layer 1's prefix sum P_1 */
	assert_int_equal(tu_write_str(dir, "index.json", IDX_HEAD IDX_MC
		", \"layers\": [{\"layer\": 1, \"num_features\": 3, "
		"\"offset\": 48}]}"), 0);
	o.first_layer = 1;
	o.last_layer = 1;
	expect_fail(&o, FFN_ERR_LAYER, "layer 0", "needed");
}

static void
test_missing_payload(void **state)
{
	struct ffn_load_opts o;

	(void)state;
	assert_int_equal(tu_unlink(dir, "up_features.bin"), 0);
	expect_fail(NULL, FFN_ERR_PAYLOAD, "no FFN payload", NULL);
	ffn_load_opts_default(&o);
	o.layout = FFN_LAYOUT_FEATURE_MAJOR;
	expect_fail(&o, FFN_ERR_IO, "up_features.bin", NULL);
	/* only a K-quant payload present */
	assert_int_equal(tu_write(dir, "interleaved_q4k.bin", "x", 1), 0);
	expect_fail(NULL, FFN_ERR_KQUANT, "interleaved_q4k.bin", NULL);
}

static void
test_short_files(void **state)
{
	(void)state;
	assert_int_equal(tu_truncate(dir, "down_features.bin", 95), 0);
	expect_fail(NULL, FFN_ERR_SHORT, "down_features.bin", "layer 1");
	assert_int_equal(tu_truncate(dir, "up_features.bin", 40), 0);
	expect_fail(NULL, FFN_ERR_SHORT, "up_features.bin", "layer 0");
	assert_int_equal(tu_truncate(dir, "gate_vectors.bin", 0), 0);
	expect_fail(NULL, FFN_ERR_SHORT, "gate_vectors.bin", "layer 0");
}

static void
test_shape_mismatch(void **state)
{
	(void)state;
	/* length says 2 features' worth, num_features says 3 */
	expect_index(IDX_HEAD IDX_MC ", \"layers\": [{\"layer\": 0, "
		     "\"num_features\": 3, \"offset\": 0, \"length\": 32}, "
		     "{\"layer\": 1, \"num_features\": 3, \"offset\": 48}]}",
		     FFN_ERR_SHAPE, "layer 0", "length");
}

static void
test_interleaved_short(void **state)
{
	(void)state;
	assert_int_equal(tu_truncate(dir, "interleaved.bin", 287), 0);
	expect_fail(NULL, FFN_ERR_SHORT, "interleaved.bin", "layer 1");
}

static const char man_ok_l0[] =
	"{\"key\": \"model.layers.0.mlp.up_proj.weight\", \"kind\": \"tensor\", "
	"\"shape\": [3, 4], \"offset\": 0, \"length\": 24, \"file\": \"up_weights.bin\"},"
	"{\"key\": \"layers.0.mlp.down_proj.weight\", \"kind\": \"tensor\", "
	"\"shape\": [4, 3], \"offset\": 0, \"length\": 24, \"file\": \"down_weights.bin\"},";

static void
expect_manifest(const char *l1, int code, const char *n1, const char *n2)
{
	char buf[2048];

	snprintf(buf, sizeof(buf), "[%s%s]", man_ok_l0, l1);
	assert_int_equal(tu_write_str(dir, "weight_manifest.json", buf), 0);
	expect_fail(NULL, code, n1, n2);
}

#define UP1(shape, off, len, file) \
	"{\"key\": \"layers.1.mlp.up_proj.weight\", \"kind\": \"tensor\", " \
	"\"shape\": " shape ", \"offset\": " off ", \"length\": " len \
	", \"file\": \"" file "\"},"
#define DN1_OK "{\"key\": \"layers.1.mlp.down_proj.weight\", " \
	"\"kind\": \"tensor\", \"shape\": [4, 3], \"offset\": 24, " \
	"\"length\": 24, \"file\": \"down_weights.bin\"}"

static void
test_manifest_errors(void **state)
{
	struct ffn_model *m = NULL;

	(void)state;
	/* the dense example loads (keys may carry a "model." prefix) */
	expect_manifest(UP1("[3, 4]", "24", "24", "up_weights.bin") DN1_OK,
			0, NULL, NULL);
	assert_int_equal(ffn_model_load(dir, NULL, &m, NULL, 0), 0);
	assert_int_equal(ffn_model_info(m)->layout, FFN_LAYOUT_DENSE);
	ffn_model_free(m);
	expect_manifest(UP1("[4, 3]", "24", "24", "up_weights.bin") DN1_OK,
			FFN_ERR_SHAPE, "layers.1.mlp.up_proj.weight",
			"shape [4, 3]");
	expect_manifest(UP1("[3, 4]", "24", "48", "up_weights.bin") DN1_OK,
			FFN_ERR_SHAPE, "layers.1.mlp.up_proj.weight",
			"length");
	expect_manifest(UP1("[3, 4]", "32", "24", "up_weights.bin") DN1_OK,
			FFN_ERR_SHORT, "layers.1.mlp.up_proj.weight",
			"up_weights.bin");
	expect_manifest(UP1("[3, 4]", "24", "24", "nope.bin") DN1_OK,
			FFN_ERR_IO, "nope.bin", NULL);
	expect_manifest("{\"key\": \"x\", \"shape\": [1, 1], \"offset\": 0, "
			"\"length\": 2, \"file\": \"up_weights.bin\"},"
			DN1_OK, FFN_ERR_KEY, "layers.1.mlp.up_proj.weight",
			"no entry");
	expect_manifest(UP1("[3]", "24", "24", "up_weights.bin") DN1_OK,
			FFN_ERR_KEY, "layers.1.mlp.up_proj.weight", "shape");
	assert_int_equal(tu_write_str(dir, "weight_manifest.json", "[{"), 0);
	expect_fail(NULL, FFN_ERR_JSON, "weight_manifest.json", NULL);
	assert_int_equal(tu_unlink(dir, "weight_manifest.json"), 0);
	expect_fail(NULL, FFN_ERR_IO, "weight_manifest.json", NULL);
}

static void
test_numa_node(void **state)
{
	struct ffn_load_opts o;

	(void)state;
	ffn_load_opts_default(&o);
	o.numa_node = 999;
	expect_fail(&o, FFN_ERR_NUMA, "999", NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_loads_ok, setup_fm,
						teardown),
		cmocka_unit_test_setup_teardown(test_missing_index, setup_fm,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_json, setup_fm,
						teardown),
		cmocka_unit_test_setup_teardown(test_missing_keys, setup_fm,
						teardown),
		cmocka_unit_test_setup_teardown(test_refused_models, setup_fm,
						teardown),
		cmocka_unit_test_setup_teardown(test_activation_choice,
						setup_fm, teardown),
		cmocka_unit_test_setup_teardown(test_layer_errors, setup_fm,
						teardown),
		cmocka_unit_test_setup_teardown(test_missing_payload,
						setup_fm, teardown),
		cmocka_unit_test_setup_teardown(test_short_files, setup_fm,
						teardown),
		cmocka_unit_test_setup_teardown(test_shape_mismatch, setup_fm,
						teardown),
		cmocka_unit_test_setup_teardown(test_interleaved_short,
						setup_il, teardown),
		cmocka_unit_test_setup_teardown(test_manifest_errors,
						setup_dense, teardown),
		cmocka_unit_test_setup_teardown(test_numa_node, setup_fm,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
