/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Unit test of the tools' local reference (vref) against vindex.md §3's
 * hand-checkable model, written here in the §2.1 and §2.2 layouts.
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
#include <unistd.h>

#include <cmocka.h>

#include "vref.h"

static const float G[2][3][4] = {
	{ { 1, 0, 0, 0 }, { 0, 1, 0, 0 }, { 0, 0, 1, 1 } },
	{ { 0.5f, 0, 0, 0 }, { 0, 0, 0, 0.5f }, { 1, -1, 0, 0 } },
};
static const float U[2][3][4] = {
	{ { 1, 1, 1, 1 }, { 0, 2, 0, 0 }, { 1, 0, 0, -1 } },
	{ { 2, 0, 0, 0 }, { 0, 0, 1, 0 }, { 0, 0, 0, 1 } },
};
/* W_down is [4, 3]; the files hold its transpose. */
static const float WD[2][4][3] = {
	{ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 }, { 1, 1, 1 } },
	{ { 1, 0, 0 }, { 0, 0, 0 }, { 0, 1, 0 }, { 0, 0, -1 } },
};
static const float X[4] = { 1, -2, 0.5f, 3 };
static const double SILU[2][4] = {
	{ 1.827646, 0.9536234, -6.794814, -4.013545 },
	{ 0.6224593, 0, 0.6131809, -8.573167 },
};
static const double GELU[2][4] = {
	{ 2.102980, 0.1816092, -6.998768, -4.714178 },
	{ 0.6914280, 0, 0.6997858, -8.989088 },
};

static void
put(FILE *f, const float *v, size_t n)
{
	assert_int_equal(fwrite(v, 4, n, f), n);
}

static void
put_downT(FILE *f, int L)
{
	float t[3][4];
	int r, c;

	for (r = 0; r < 4; r++)
		for (c = 0; c < 3; c++)
			t[c][r] = WD[L][r][c];
	put(f, &t[0][0], 12);
}

static FILE *
open_in(const char *dir, const char *name)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "wb");
	assert_non_null(f);
	return f;
}

/* Write the §3 model to a fresh directory in the given layout. */
static void
write_model(char *dir, size_t len, int interleaved, const char *model_type)
{
	FILE *f;
	int L;

	snprintf(dir, len, "/tmp/ffn-vref-test.XXXXXX");
	assert_non_null(mkdtemp(dir));
	f = open_in(dir, "index.json");
	fprintf(f, "{\"num_layers\": 2, \"hidden_size\": 4, "
		"\"intermediate_size\": 3, \"dtype\": \"f32\", \"quant\": "
		"\"none\", \"model_config\": {\"model_type\": \"%s\"}, "
		"\"layers\": [{\"layer\": 1, \"num_features\": 3, \"offset\": "
		"48, \"length\": 48}, {\"layer\": 0, \"num_features\": 3, "
		"\"offset\": 0, \"length\": 48}]}", model_type);
	fclose(f);
	if (interleaved) {
		f = open_in(dir, "interleaved.bin");
		for (L = 0; L < 2; L++) {
			put(f, &G[L][0][0], 12);
			put(f, &U[L][0][0], 12);
			put_downT(f, L);
		}
		fclose(f);
		return;
	}
	f = open_in(dir, "gate_vectors.bin");
	put(f, &G[0][0][0], 24);
	fclose(f);
	f = open_in(dir, "up_features.bin");
	put(f, &U[0][0][0], 24);
	fclose(f);
	f = open_in(dir, "down_features.bin");
	put_downT(f, 0);
	put_downT(f, 1);
	fclose(f);
}

static void
remove_model(const char *dir)
{
	static const char *const names[] = { "index.json", "interleaved.bin",
		"gate_vectors.bin", "up_features.bin", "down_features.bin" };
	char p[512];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

static void
check(int interleaved, const char *model_type, const double (*want)[4])
{
	char dir[64], err[256];
	struct vref v;
	double y[4];
	int L, h;

	write_model(dir, sizeof(dir), interleaved, model_type);
	assert_int_equal(vref_open(&v, dir, err, sizeof(err)), 0);
	assert_int_equal(v.layout,
			 interleaved ? VREF_INTERLEAVED : VREF_FEATURES);
	for (L = 0; L < 2; L++) {
		assert_int_equal(vref_ffn(&v, L, X, 1, y, err, sizeof(err)), 0);
		for (h = 0; h < 4; h++)
			assert_true(fabs(y[h] - want[L][h]) <=
				    2e-6 * fabs(want[L][h]) + 1e-6);
	}
	assert_int_equal(vref_ffn(&v, 2, X, 1, y, err, sizeof(err)), -ERANGE);
	vref_close(&v);
	remove_model(dir);
}

static void
test_features_silu(void **state)
{
	(void)state;
	check(0, "llama", SILU);
}

static void
test_features_gelu(void **state)
{
	(void)state;
	check(0, "gemma3", GELU);
}

static void
test_interleaved_silu(void **state)
{
	(void)state;
	check(1, "mistral", SILU);
}

static void
test_interleaved_gelu(void **state)
{
	(void)state;
	check(1, "gemma", GELU);
}

static void
test_missing_payload(void **state)
{
	char dir[64], err[256], p[512];
	struct vref v;

	(void)state;
	write_model(dir, sizeof(dir), 1, "llama");
	snprintf(p, sizeof(p), "%s/interleaved.bin", dir);
	unlink(p);
	assert_int_equal(vref_open(&v, dir, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no FFN payload"));
	remove_model(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_features_silu),
		cmocka_unit_test(test_features_gelu),
		cmocka_unit_test(test_interleaved_silu),
		cmocka_unit_test(test_interleaved_gelu),
		cmocka_unit_test(test_missing_payload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
