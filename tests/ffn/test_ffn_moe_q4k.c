/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Q4_K experts at a real block size (ffn_moe.h, spec/moe.md §1, §5.3):
 * random experts with H = 512, I = 300 (so S = 512 and down's columns
 * I..S-1 are padding) against a float64 reference on the dequantised
 * weights, on f32 and Q8_K rows, several rows at once, copied and mapped
 * (payloads at an offset that is not a multiple of 4); and kquant's
 * ffn_kq_layer_forward_q8k_in() that the Q8_K route uses.
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
#include <cmocka.h>

#include "ffn_kq.h"
#include "ffn_moe.h"
#include "moe_test_util.h"
#include "test_rng.h"

/* the activation the experts use (spec/moe.md §1), for kquant directly */
static void
act_gelu(float *g, const float *u, size_t n)
{
	ffn_act_mul(FFN_ACT_GELU_TANH, g, u, n);
}

#define RH 512u
#define RI 300u
#define RS 512u
#define RE 3u
#define RR 5u

static const char rnd_index[] =
	"{\"version\": 2, \"model\": \"t/rnd\", \"family\": \"gemma4\","
	" \"num_layers\": 2, \"hidden_size\": 512, \"intermediate_size\": 8,"
	" \"vocab_size\": 4, \"embed_scale\": 1.0, \"layers\": [],"
	" \"down_top_k\": 1, \"model_config\": {\"model_type\": \"gemma4\","
	" \"moe\": {\"num_experts\": 3, \"moe_intermediate_size\": 300,"
	" \"hybrid\": true}}}";

/* The LYRW file of RE random experts; layer 1 has none. Payloads start
 * at an offset that is not a multiple of 4 (the table is what counts). */
static void
make_random(char *d, size_t dl)
{
	size_t gub = 144 * (2 * RI * RH / 256), dnb = 144 * RH * RS / 256;
	size_t len = 24 + 32 * RE + 3 + RE * (gub + dnb), at = 24 + 32 * RE + 3;
	uint8_t *f = calloc(1, len);
	float *row = malloc(RH * sizeof(float));
	uint64_t rng = test_rng_seed(23);
	uint32_t e, r, c;

	assert_non_null(tu_tmpdir(d, dl));
	assert_int_equal(tu_write_str(d, "index.json", rnd_index), 0);
	mkdir_layers(d);
	memcpy(f, "LYRW", 4);
	put32(f + 4, 1);
	put32(f + 8, 4);
	put32(f + 12, RE);
	put32(f + 16, RI);
	put32(f + 20, RH);
	for (e = 0; e < RE; e++) {
		uint8_t *t = f + 24 + 32 * e;

		put64(t, at);
		put64(t + 8, gub);
		/* [2I, H] rows: H % 256 == 0, so row by row is the
		 * flattened sequence of §5.3 */
		for (r = 0; r < 2 * RI; r++) {
			for (c = 0; c < RH; c++)
				row[c] = test_rng_uniform(&rng, -0.2f, 0.25f);
			ffn_kq_quantize_row(FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, row,
					    RH, f + at + r * 288);
		}
		at += gub;
		put64(t + 16, at);
		put64(t + 24, dnb);
		/* [H, S]: I values, zero to S */
		for (r = 0; r < RH; r++) {
			for (c = 0; c < RI; c++)
				row[c] = test_rng_uniform(&rng, -0.25f, 0.25f);
			ffn_kq_quantize_row(FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, row,
					    RI, f + at + r * 288);
		}
		at += dnb;
	}
	assert_int_equal(at, len);
	assert_int_equal(tu_write(d, "layers/layer_00.weights", f, len), 0);
	free(row);
	free(f);
}

/* float64 y_e(x) on the dequantised weights of expert e (spec §1, §5.3) */
static void
ref_expert(const char *d, uint32_t e, const float *x, double *y)
{
	char p[128];
	FILE *fp;
	uint8_t tab[32];
	uint64_t gof, dof;
	size_t gub = 144 * (2 * RI * RH / 256), dnb = 144 * RH * RS / 256;
	uint8_t *gu = malloc(gub), *dn = malloc(dnb);
	float *G = malloc(2 * RI * RH * sizeof(float));
	float *D = malloc(RH * RS * sizeof(float));
	double a[RI];
	uint32_t i, j;

	snprintf(p, sizeof(p), "%s/layers/layer_00.weights", d);
	fp = fopen(p, "rb");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, 24 + 32 * e, SEEK_SET), 0);
	assert_int_equal(fread(tab, 1, 32, fp), 32);
	memcpy(&gof, tab, 8);
	memcpy(&dof, tab + 16, 8);
	assert_int_equal(fseek(fp, (long)gof, SEEK_SET), 0);
	assert_int_equal(fread(gu, 1, gub, fp), gub);
	assert_int_equal(fseek(fp, (long)dof, SEEK_SET), 0);
	assert_int_equal(fread(dn, 1, dnb, fp), dnb);
	fclose(fp);
	ffn_kq_dequant_row(FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, gu, gub / 144, G);
	ffn_kq_dequant_row(FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, dn, dnb / 144, D);
	for (i = 0; i < RI; i++) {
		double g = 0, u = 0;

		for (j = 0; j < RH; j++) {
			g += (double)G[i * RH + j] * x[j];
			u += (double)G[(RI + i) * RH + j] * x[j];
		}
		a[i] = 0.5 * g * (1 + tanh(0.7978846 * (g + 0.044715 * g * g * g)))
		       * u;
	}
	for (j = 0; j < RH; j++) {
		double t = 0;

		for (i = 0; i < RI; i++)
			t += (double)D[j * RS + i] * a[i];
		y[j] = t;
	}
	free(gu);
	free(dn);
	free(G);
	free(D);
}

static void
near_ref(const float *y, const double *ref, double rel)
{
	double mx = 0, err = 0;
	uint32_t j;

	for (j = 0; j < RH; j++) {
		mx = fmax(mx, fabs(ref[j]));
		err = fmax(err, fabs(y[j] - ref[j]));
	}
	assert_true(mx > 0);
	if (getenv("MOE_TEST_VERBOSE"))
		print_message("max|err| / max|ref| %.3g\n", err / mx);
	if (err > rel * mx)
		fail_msg("max|err| %g > %g * max|ref| %g", err, rel, mx);
}

/* Every expert of m and mm (the same file copied and mapped) on RR
 * rows, f32 and Q8_K, with the kquant kernel set now selected. */
static void
check_experts(const char *d, const struct ffn_moe *m,
	      const struct ffn_moe *mm, const float *x, const uint8_t *xq,
	      struct ffn_moe_scratch *s)
{
	size_t qrow = 2 * FFN_KQ_Q8K_BYTES;
	float *y = malloc(RR * RH * 4), *ym = malloc(RR * RH * 4);
	float *y1 = malloc(RH * 4), *xd = malloc(RH * 4);
	double ref[RH];
	uint32_t e, r, j;

	for (e = 0; e < RE; e++) {
		/* f32 rows: each against float64, several rows as each alone */
		assert_int_equal(ffn_moe_expert(m, 0, e, x, RR, y, s), 0);
		assert_int_equal(ffn_moe_expert(mm, 0, e, x, RR, ym, s), 0);
		assert_memory_equal(y, ym, RR * RH * 4);
		for (r = 0; r < RR; r++) {
			ref_expert(d, e, x + r * RH, ref);
			near_ref(y + r * RH, ref, 1e-4);
			assert_int_equal(ffn_moe_expert(m, 0, e, x + r * RH, 1,
							y1, s), 0);
			near_ref(y1, ref, 1e-4);
			/* one row takes kquant's own kernel (scales factored
			 * out, ffn_kq.h): the same sum in another order */
			for (j = 0; j < RH; j++)
				ref[j] = y[r * RH + j];
			near_ref(y1, ref, 1e-5);
		}
		/* Q8_K rows: against float64 on the dequantised input */
		assert_int_equal(ffn_moe_expert_q8k(m, 0, e, xq, RR, y, s), 0);
		assert_int_equal(ffn_moe_expert_q8k(mm, 0, e, xq, RR, ym, s),
				 0);
		assert_memory_equal(y, ym, RR * RH * 4);
		for (r = 0; r < RR; r++) {
			ffn_kq_dequant_q8k(xq + r * qrow, RH, xd);
			ref_expert(d, e, xd, ref);
			near_ref(y + r * RH, ref, 1e-4);
		}
	}
	free(y);
	free(ym);
	free(y1);
	free(xd);
}

/* float64 sum_k w_k y_{e_k}(x) */
static void
ref_mix(const char *d, const struct ffn_moe_pair *p, unsigned k,
	const float *x, double *mix)
{
	double ref[RH];
	unsigned i, j;

	for (j = 0; j < RH; j++)
		mix[j] = 0;
	for (i = 0; i < k; i++) {
		ref_expert(d, p[i].expert, x, ref);
		for (j = 0; j < RH; j++)
			mix[j] += p[i].weight * ref[j];
	}
}

static void
test_random_q4k(void **state)
{
	struct ffn_moe_load_opts lo = { .numa_node = -1,
					.placement = FFN_PLACE_MMAP };
	uint64_t rng = test_rng_seed(7);
	size_t qrow = 2 * FFN_KQ_Q8K_BYTES;
	float *x = malloc(RR * RH * 4), xd[RH], out[RH];
	uint8_t *xq = malloc(RR * qrow);
	double mix[RH];
	struct ffn_moe *m, *mm;
	struct ffn_moe_scratch *s;
	struct ffn_moe_pair p[2] = { { 2, 0.6f }, { 0, -0.4f } };
	unsigned bad, r, j;
	char d[64];
	int isa;

	(void)state;
	make_random(d, sizeof(d));
	m = load_ok(d, NULL);
	assert_string_equal(ffn_moe_info(m)->kind, "q4k");
	assert_int_equal(ffn_moe_info(m)->experts_loaded, RE);
	assert_int_equal(ffn_moe_info(m)->bytes_loaded,
			 RE * 144 * (2 * RI * RH + RH * RS) / 256);
	assert_int_equal(ffn_moe_info(m)->placement, FFN_PLACE_COPY);
	assert_int_equal(ffn_moe_info(m)->norms, 0);
	assert_true(ffn_moe_has_layer(m, 0));
	assert_false(ffn_moe_has_layer(m, 1));
	mm = load_ok(d, &lo);
	assert_int_equal(ffn_moe_info(mm)->placement, FFN_PLACE_MMAP);
	assert_int_equal(ffn_moe_info(mm)->pages, FFN_PAGES_FILE);
	s = ffn_moe_scratch_new(m, RR, -1);
	assert_non_null(s);
	for (j = 0; j < RR * RH; j++)
		x[j] = test_rng_uniform(&rng, -2.0f, 2.0f);
	for (r = 0; r < RR; r++)
		ffn_kq_quantize_q8k(x + r * RH, RH, xq + r * qrow);
	/* every kquant kernel set the CPU has, the highest last */
	for (isa = 0; isa < FFN_KQ_ISA_COUNT; isa++)
		if (ffn_kq_select((enum ffn_kq_isa)isa) == 0)
			check_experts(d, m, mm, x, xq, s);
	/* the batch, both inputs, against the float64 sum */
	ref_mix(d, p, 2, x, mix);
	assert_int_equal(ffn_moe_mix(m, 0, x, NULL, p, 2, out, &bad, s), 0);
	near_ref(out, mix, 1e-4);
	assert_int_equal(ffn_moe_mix(mm, 0, NULL, xq, p, 2, out, &bad, s), 0);
	ffn_kq_dequant_q8k(xq, RH, xd);
	ref_mix(d, p, 2, xd, mix);
	near_ref(out, mix, 1e-4);
	ffn_moe_scratch_free(s);
	ffn_moe_free(m);
	ffn_moe_free(mm);
	tu_rmtree(d);
	free(x);
	free(xq);
}

/* kquant's ffn_kq_layer_forward_q8k_in() (Q8_K dots for gate and up, f32
 * down) against the f32 path on the dequantised Q8_K rows: the same
 * values, summed in other orders. Its scratch is the f32 path's. */
static void
test_kq_q8k_in(void **state)
{
	uint64_t rng = test_rng_seed(11);
	size_t rb = ffn_kq_row_bytes(FFN_KQ_Q4_K, RH), qrow = 2 * FFN_KQ_Q8K_BYTES;
	uint8_t *g = malloc(RI * rb), *u = malloc(RI * rb), *dn = malloc(RH * rb);
	float *x = malloc(RR * RH * 4), *xd = malloc(RR * RH * 4);
	float *y = malloc(RR * RH * 4), *yf = malloc(RR * RH * 4), row[RH];
	uint8_t *xq = malloc(RR * qrow);
	struct ffn_kq_layer l = {
		.gate = g, .up = u, .down = dn, .gate_fmt = FFN_KQ_Q4_K,
		.up_fmt = FFN_KQ_Q4_K, .down_fmt = FFN_KQ_Q4_K, .nf = RI,
		.hidden = RH,
	};
	size_t sl = ffn_kq_layer_scratch(&l, RR, FFN_KQ_PATH_F32);
	void *sc = malloc(sl);
	double ref[RH];
	uint32_t i, j, r;
	int isa;

	(void)state;
	for (i = 0; i < RI; i++) {
		for (j = 0; j < RH; j++)
			row[j] = test_rng_uniform(&rng, -0.2f, 0.25f);
		ffn_kq_quantize_row(FFN_KQ_Q4_K, 0, row, RH, g + i * rb);
		for (j = 0; j < RH; j++)
			row[j] = test_rng_uniform(&rng, -0.25f, 0.2f);
		ffn_kq_quantize_row(FFN_KQ_Q4_K, 0, row, RH, u + i * rb);
	}
	for (j = 0; j < RH; j++) {
		for (i = 0; i < RI; i++)
			row[i] = test_rng_uniform(&rng, -0.25f, 0.25f);
		ffn_kq_quantize_row(FFN_KQ_Q4_K, 0, row, RI, dn + j * rb);
	}
	for (j = 0; j < RR * RH; j++)
		x[j] = test_rng_uniform(&rng, -3.0f, 3.0f);
	for (r = 0; r < RR; r++) {
		ffn_kq_quantize_q8k(x + r * RH, RH, xq + r * qrow);
		ffn_kq_dequant_q8k(xq + r * qrow, RH, xd + r * RH);
	}
	for (isa = 0; isa < FFN_KQ_ISA_COUNT; isa++) {
		if (ffn_kq_select((enum ffn_kq_isa)isa) != 0)
			continue;
		assert_int_equal(ffn_kq_layer_forward_q8k_in(&l, act_gelu, xq,
				 RR, y, RH, sc, sl), 0);
		assert_int_equal(ffn_kq_layer_forward(&l, FFN_KQ_PATH_F32,
				 act_gelu, xd, RH, RR, yf, RH, sc, sl), 0);
		for (r = 0; r < RR; r++) {
			for (j = 0; j < RH; j++)
				ref[j] = yf[r * RH + j];
			near_ref(y + r * RH, ref, 1e-5);
		}
		assert_int_equal(ffn_kq_layer_forward_q8k_in(&l, act_gelu, xq,
				 RR, y, RH, sc, sl - 1), -ENOSPC);
	}
	free(g);
	free(u);
	free(dn);
	free(x);
	free(xd);
	free(y);
	free(yf);
	free(xq);
	free(sc);
}

/*
 * kq_q8k for experts (ffn_moe_set_kq_q8k): f32 rows then take the Q8_K
 * path, quantised as the Q8_K route's rows are (ffn_kq_quantize_q8k), so
 * the two routes agree bit for bit, in every kernel set alike (the Q8_K
 * path is exact integer sums, ffn_kq.h). The inner activation is
 * quantised too: the answer moves from the f32 path's, within the
 * reference's own tolerance of float64 (spec/moe.md §1: ~1%; here up to
 * 1.9% of the largest value), and off again gives the f32 path's answer
 * back. A scratch made before the switch covers the Q8_K path.
 */
static void
test_kq_q8k_experts(void **state)
{
	uint64_t rng = test_rng_seed(29);
	size_t qrow = 2 * FFN_KQ_Q8K_BYTES, n = RR * RH * 4;
	float *x = malloc(n), *y = malloc(n), *yq = malloc(n);
	float *yf = malloc(n), *y0 = malloc(n), *yb = malloc(n);
	uint8_t *xq = malloc(RR * qrow);
	struct ffn_moe_scratch *s;
	struct ffn_moe *m;
	double ref[RH];
	uint32_t e, j, r;
	char d[64];
	int isa, first;

	(void)state;
	make_random(d, sizeof(d));
	m = load_ok(d, NULL);
	s = ffn_moe_scratch_new(m, RR, -1);
	assert_non_null(s);
	assert_int_equal(ffn_moe_info(m)->kq_q8k, 0);
	for (j = 0; j < RR * RH; j++)
		x[j] = test_rng_uniform(&rng, -2.0f, 2.0f);
	for (r = 0; r < RR; r++)
		ffn_kq_quantize_q8k(x + r * RH, RH, xq + r * qrow);
	for (e = 0; e < RE; e++) {
		ffn_moe_set_kq_q8k(m, 0);
		assert_int_equal(ffn_moe_expert(m, 0, e, x, RR, yf, s), 0);
		ffn_moe_set_kq_q8k(m, 1);
		assert_int_equal(ffn_moe_info(m)->kq_q8k, 1);
		first = 1;
		for (isa = 0; isa < FFN_KQ_ISA_COUNT; isa++) {
			if (ffn_kq_select((enum ffn_kq_isa)isa) != 0)
				continue;
			assert_int_equal(ffn_moe_expert(m, 0, e, x, RR, y, s),
					 0);
			assert_int_equal(ffn_moe_expert_q8k(m, 0, e, xq, RR,
							    yq, s), 0);
			assert_memory_equal(y, yq, n);
			if (first)
				memcpy(y0, y, n);
			else
				assert_memory_equal(y, y0, n);
			first = 0;
		}
		assert_false(first);
		assert_true(memcmp(y, yf, n) != 0);
		for (r = 0; r < RR; r++) {
			ref_expert(d, e, x + r * RH, ref);
			near_ref(y + r * RH, ref, 3e-2);
		}
		ffn_moe_set_kq_q8k(m, 0);
		assert_int_equal(ffn_moe_info(m)->kq_q8k, 0);
		assert_int_equal(ffn_moe_expert(m, 0, e, x, RR, yb, s), 0);
		assert_memory_equal(yb, yf, n);
	}
	ffn_moe_scratch_free(s);
	ffn_moe_free(m);
	tu_rmtree(d);
	free(x);
	free(y);
	free(yq);
	free(yf);
	free(y0);
	free(yb);
	free(xq);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_q4k),
		cmocka_unit_test(test_kq_q8k_in),
		cmocka_unit_test(test_kq_q8k_experts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
