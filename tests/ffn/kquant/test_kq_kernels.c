/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * K-quant block decode and kernels (lib/ffn/kquant, spec/vindex.md §2.4):
 * hand-built blocks with exact expected values, both Q6_K arrangements,
 * random blocks against the scalar reference in every ISA the CPU has,
 * partial last blocks, and the Q8_K integer path.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "ffn_kq.h"
#include "kq_test_util.h"

/* ISAs to exercise: every one the CPU supports (the scalar always). */
static int
isa_next(int isa)
{
	for (isa++; isa < FFN_KQ_ISA_COUNT; isa++)
		if (ffn_kq_select(isa) == 0)
			return isa;
	return -1;
}
#define FOR_EACH_ISA(isa) \
	for (int isa = (ffn_kq_select(FFN_KQ_ISA_SCALAR), 0); isa >= 0; \
	     isa = isa_next(isa))

static void
test_f16(void **state)
{
	(void)state;
	assert_true(ffn_kq_f16_to_f32(0x3c00) == 1.0f);
	assert_true(ffn_kq_f16_to_f32(0xb800) == -0.5f);
	assert_true(ffn_kq_f16_to_f32(0x0001) == 0x1p-24f);
	assert_true(ffn_kq_f16_to_f32(0x7bff) == 65504.0f);
	assert_int_equal(ffn_kq_f32_to_f16(1.0f), 0x3c00);
	assert_int_equal(ffn_kq_f32_to_f16(0x1p-24f), 0x0001);
	/* 1 + 2^-11 is a tie between 1 and 1 + 2^-10: to even */
	assert_int_equal(ffn_kq_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
	assert_int_equal(ffn_kq_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
	assert_int_equal(ffn_kq_f32_to_f16(70000.0f), 0x7c00);
	for (uint32_t h = 0; h < 0x7c00; h++)
		assert_int_equal(ffn_kq_f32_to_f16(ffn_kq_f16_to_f32(h)), h);
}

/*
 * Q4_K hand block: d = 0.5, dmin = 0.25, sc = {1,2,3,4,5,40,7,8},
 * m = {0,1,2,3,4,5,33,7} (40 and 33 need the packed high bits), every qs
 * byte 0x21: sub-blocks 2g hold q = 1, sub-blocks 2g+1 hold q = 2.
 * Values per sub-block: 0.5, 1.75, 1, 3.25, 1.5, 38.75, -4.75, 6.25.
 */
static void
q4k_hand_block(uint8_t b[144])
{
	static const uint8_t s[12] = { 0x01, 0x82, 0x03, 0x04, 0x00, 0x01,
				       0x82, 0x03, 0x45, 0x58, 0x17, 0x78 };

	b[0] = 0x00; b[1] = 0x38;	/* d = 0.5 */
	b[2] = 0x00; b[3] = 0x34;	/* dmin = 0.25 */
	memcpy(b + 4, s, 12);
	memset(b + 16, 0x21, 128);
}

/* Q6_K hand block: d = 0.5, scales[g] = g - 8, every q = 33 (q-32 = 1):
 * ql bytes 0x11 and qh bytes 0xaa in both arrangements. */
static void
q6k_hand_block(uint8_t b[210])
{
	memset(b, 0x11, 128);
	memset(b + 128, 0xaa, 64);
	for (int g = 0; g < 16; g++)
		b[192 + g] = (uint8_t)(int8_t)(g - 8);
	b[208] = 0x00; b[209] = 0x38;
}

static void
test_hand_q4k_decode(void **state)
{
	static const float sub[8] = { 0.5f, 1.75f, 1.0f, 3.25f, 1.5f, 38.75f,
				      -4.75f, 6.25f };
	uint8_t b[144];
	float y[256];

	(void)state;
	q4k_hand_block(b);
	ffn_kq_dequant_row(FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, b, 1, y);
	for (int i = 0; i < 256; i++)
		assert_true(y[i] == sub[i / 32]);
}

static void
test_hand_q6k_decode(void **state)
{
	uint8_t b[210];
	float y[256];

	(void)state;
	q6k_hand_block(b);
	for (int lay = 0; lay < 2; lay++) {
		ffn_kq_dequant_row(FFN_KQ_Q6_K, lay, b, 1, y);
		for (int i = 0; i < 256; i++)
			assert_true(y[i] == 0.5f * (float)(i / 16 - 8));
	}
}

/* A 2-row matrix (Q4_K hand row, then a second Q4_K row with dmin = 0:
 * d = 1, all sc = 1, q = 1 / 2 as above -> sub-block values 1, 2) against
 * x0 = all ones and x1 = +1 on values 0..127, -1 on 128..255. */
static void
test_hand_matvec(void **state)
{
	uint8_t w[2 * 144], w6[2 * 210];
	float x[2 * 256], y[4];
	struct ffn_kq_mat m = { w, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, 2, 256 };
	struct ffn_kq_mat m6 = { w6, FFN_KQ_Q6_K, FFN_KQ_Q6_PRIVATE, 2, 256 };
	uint8_t q8[2 * FFN_KQ_Q8K_BYTES];

	(void)state;
	q4k_hand_block(w);
	q4k_hand_block(w + 144);
	w[144 + 2] = 0; w[144 + 3] = 0;	/* dmin = 0 */
	w[144 + 0] = 0x00; w[144 + 1] = 0x3c;	/* d = 1 */
	memcpy(w + 144 + 4, (uint8_t[12]){ 1, 1, 1, 1, 0, 0, 0, 0,
					   1, 1, 1, 1 }, 12);
	q6k_hand_block(w6);
	q6k_hand_block(w6 + 210);
	w6[210 + 192 + 15] = 0;		/* last group of row 1 -> 0 */
	for (int i = 0; i < 256; i++) {
		x[i] = 1.0f;
		x[256 + i] = i < 128 ? 1.0f : -1.0f;
	}
	FOR_EACH_ISA(isa) {
		assert_int_equal(ffn_kq_matvec_f32(&m, 0, 2, x, 256, 2, y, 2,
						   NULL, 0), 0);
		/* 32 * sum(sub); 32 * (first 4 - last 4) */
		assert_true(y[0] == 1544.0f);
		assert_true(y[1] == 32.0f * 12.0f);
		assert_true(y[2] == -1128.0f);
		assert_true(y[3] == 0.0f);
		assert_int_equal(ffn_kq_matvec_f32(&m6, 0, 2, x, 256, 2, y, 2,
						   NULL, 0), 0);
		/* 8 * sum(g - 8) = -64; row 1 without group 15: -64 - 56 */
		assert_true(y[0] == -64.0f);
		assert_true(y[1] == -120.0f);
		/* x1: 8 * (sum_{g<8} - sum_{g>=8}) = 8 * (-36 - 28) */
		assert_true(y[2] == -512.0f);
		assert_true(y[3] == -512.0f + 56.0f);
		/* Q8_K of all ones: d = -1/127, q = -127: exact result */
		ffn_kq_quantize_q8k(x, 256, q8);
		ffn_kq_quantize_q8k(x + 256, 256, q8 + FFN_KQ_Q8K_BYTES);
		assert_int_equal(ffn_kq_matvec_q8k(&m6, 0, 2, q8, 2, y, 2), 0);
		assert_float_equal(y[0], -64.0f, 1e-4);
		assert_float_equal(y[3], -456.0f, 1e-3);
		assert_int_equal(ffn_kq_matvec_q8k(&m, 0, 2, q8, 2, y, 2), 0);
		assert_float_equal(y[0], 1544.0f, 1e-3);
		assert_float_equal(y[2], -1128.0f, 1e-3);
	}
}

/* Q6_K arrangements: encode value i as q = i % 64 by each spec formula;
 * each decodes right with its own arrangement and wrong with the other. */
static void
encode_q6_ramp(uint8_t b[210], enum ffn_kq_q6_layout lay)
{
	memset(b, 0, 210);
	for (int g = 0; g < 16; g++)
		b[192 + g] = 1;
	b[208] = 0x00; b[209] = 0x3c;	/* d = 1 */
	if (lay == FFN_KQ_Q6_PRIVATE) {
		for (int i = 0; i < 256; i++) {
			int q = i % 64;

			b[i / 2] |= (uint8_t)((q & 15) << (i % 2 ? 4 : 0));
			b[128 + i / 4] |= (uint8_t)((q >> 4) << (2 * (i % 4)));
		}
		return;
	}
	for (int i = 0; i < 256; i++) {
		int q = i % 64, n = i / 128, j = i % 128, l = j % 32;
		int quarter = j / 32;	/* 0: ql[l] lo, 1: ql[l+32] lo, ... */
		uint8_t *ql = b + 64 * n, *qh = b + 128 + 32 * n;

		ql[l + (quarter & 1) * 32] |= (uint8_t)((q & 15) <<
							(quarter >= 2 ? 4 : 0));
		qh[l] |= (uint8_t)((q >> 4) << (2 * quarter));
	}
}

static void
test_q6k_arrangements(void **state)
{
	uint8_t b[210];
	float y[256], x[256], yy[2];

	(void)state;
	for (int lay = 0; lay < 2; lay++) {
		int differs = 0;

		encode_q6_ramp(b, lay);
		ffn_kq_dequant_row(FFN_KQ_Q6_K, lay, b, 1, y);
		for (int i = 0; i < 256; i++)
			assert_true(y[i] == (float)(i % 64 - 32));
		ffn_kq_dequant_row(FFN_KQ_Q6_K, !lay, b, 1, y);
		for (int i = 0; i < 256; i++)
			differs |= y[i] != (float)(i % 64 - 32);
		assert_true(differs);
		/* kernels: x = e_k picks value k exactly */
		FOR_EACH_ISA(isa) {
			struct ffn_kq_mat m = { b, FFN_KQ_Q6_K, lay, 1, 256 };

			for (int k = 0; k < 256; k++) {
				memset(x, 0, sizeof(x));
				x[k] = 1.0f;
				assert_int_equal(ffn_kq_matvec_f32(&m, 0, 1, x,
					256, 1, yy, 1, NULL, 0), 0);
				assert_true(yy[0] == (float)(k % 64 - 32));
			}
		}
	}
}

/* Quantise then dequantise: each arrangement round-trips its own. */
static void
test_quantize_roundtrip(void **state)
{
	uint64_t rng = test_rng_seed(7);
	float x[300], y[512];
	uint8_t b[2 * 210];

	(void)state;
	for (int i = 0; i < 300; i++)
		x[i] = test_rng_uniform(&rng, -2.0f, 1.0f);
	for (int f = 0; f < 2; f++)
		for (int lay = 0; lay < 2; lay++) {
			float emax = 0;

			ffn_kq_quantize_row(f, lay, x, 300, b);
			ffn_kq_dequant_row(f, lay, b, 2, y);
			for (int i = 0; i < 300; i++)
				emax = fmaxf(emax, fabsf(y[i] - x[i]));
			/* Q4_K step <= 3/15 -> error <= 0.1 (+ scale
			 * rounding); Q6_K step 2/31 */
			assert_true(emax < (f == FFN_KQ_Q4_K ? 0.15f : 0.06f));
		}
}

/* Random blocks: scalar == dequantise-then-dot exactly; every ISA within
 * the stated bound of the exact value; Q8_K identical in every ISA. */
static void
run_random(uint64_t *rng, enum ffn_kq_fmt fmt, enum ffn_kq_q6_layout lay,
	   uint32_t rows, uint32_t cols, size_t R)
{
	size_t nb = FFN_KQ_NBLOCKS(cols), pc = nb * 256;
	size_t rb = ffn_kq_row_bytes(fmt, cols);
	uint8_t *w = malloc(rows * rb);
	float *a = malloc(pc * sizeof(float)), *b = malloc(pc * sizeof(float));
	float *deq = malloc(pc * sizeof(float));
	float *x = malloc(R * cols * sizeof(float));
	float *y = malloc(R * rows * sizeof(float));
	float *yq = malloc(R * rows * sizeof(float));
	float *yqs = malloc(R * rows * sizeof(float));
	uint8_t *q8 = malloc(R * nb * FFN_KQ_Q8K_BYTES);
	size_t sl = ffn_kq_matvec_f32_scratch(cols, R);
	void *scratch = malloc(sl + 1);
	struct ffn_kq_mat m = { w, fmt, lay, rows, cols };

	kt_random_blocks(rng, fmt, w, rows * nb);
	for (size_t i = 0; i < R * cols; i++)
		x[i] = test_rng_uniform(rng, -1.0f, 1.0f);
	for (size_t r = 0; r < R; r++)
		ffn_kq_quantize_q8k(x + r * cols, cols,
				    q8 + r * nb * FFN_KQ_Q8K_BYTES);
	FOR_EACH_ISA(isa) {
		/* NaN: an output a kernel leaves unwritten cannot pass for
		 * the previous ISA's */
		memset(y, 0xff, R * rows * sizeof(float));
		memset(yq, 0xff, R * rows * sizeof(float));
		assert_int_equal(ffn_kq_matvec_f32(&m, 0, rows, x, cols, R, y,
						   rows, scratch, sl), 0);
		assert_int_equal(ffn_kq_matvec_q8k(&m, 0, rows, q8, R, yq,
						   rows), 0);
		if (isa == FFN_KQ_ISA_SCALAR)
			memcpy(yqs, yq, R * rows * sizeof(float));
		else
			assert_memory_equal(yq, yqs, R * rows * sizeof(float));
		for (uint32_t i = 0; i < rows; i++) {
			kt_decode_parts(fmt, lay, w + i * rb, nb, a, b);
			ffn_kq_dequant_row(fmt, lay, w + i * rb, nb, deq);
			for (size_t k = 0; k < pc; k++)
				assert_true(deq[k] == a[k] - b[k]);
			for (size_t r = 0; r < R; r++) {
				const float *xr = x + r * cols;
				double bound, e = kt_dot_exact(a, b, xr, cols,
							       &bound);
				float got = y[r * rows + i];

				if (isa == FFN_KQ_ISA_SCALAR) {
					float s = 0;

					for (size_t k = 0; k < cols; k++)
						s += deq[k] * xr[k];
					assert_true(got == s);
				}
				assert_true(fabs((double)got - e) <= bound);
			}
		}
	}
	free(w); free(a); free(b); free(deq); free(x); free(y); free(yq);
	free(yqs); free(q8); free(scratch);
}

/*
 * Every input-row count a kernel instance is specialised for (1..8) and
 * past one pass (9, 17), odd and even weight rows (the f32 path takes
 * them in pairs, an odd last one paired with itself), and rows longer
 * than one window of the several-row Q8_K kernels.
 */
static void
test_every_row_count(void **state)
{
	uint64_t rng = test_rng_seed(17);
	(void)state;
	for (size_t R = 1; R <= 9; R++) {
		run_random(&rng, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, 7, 520, R);
		run_random(&rng, FFN_KQ_Q6_K, FFN_KQ_Q6_PRIVATE, 6, 520, R);
		run_random(&rng, FFN_KQ_Q6_K, FFN_KQ_Q6_GGML, 5, 520, R);
	}
	run_random(&rng, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, 3, 256, 17);
	run_random(&rng, FFN_KQ_Q6_K, FFN_KQ_Q6_PRIVATE, 3, 256, 17);
	/* 129 blocks: the several-row Q8_K kernels' windows of 16 blocks,
	 * the last one partial (the Q6_K ones meet them in test_random_q6k) */
	run_random(&rng, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, 3, 33000, 3);
}

static void
test_random_q4k(void **state)
{
	uint64_t rng = test_rng_seed(11);
	(void)state;
	run_random(&rng, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, 37, 512, 1);
	run_random(&rng, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, 23, 300, 1);
	run_random(&rng, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, 19, 300, 3);
	run_random(&rng, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, 9, 777, 8);
	run_random(&rng, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, 5, 200, 11);
	/* one input row: whole groups of 4 blocks, a partial group, a long
	 * row, and one longer than the one-row kernels' input permutation
	 * (256 blocks), which falls back */
	run_random(&rng, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, 7, 2048, 1);
	run_random(&rng, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, 5, 1500, 1);
	run_random(&rng, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, 3, 1800, 1);
	run_random(&rng, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, 2, 33000, 1);
	run_random(&rng, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, 2, 66000, 1);
}

static void
test_random_q6k(void **state)
{
	uint64_t rng = test_rng_seed(13);
	(void)state;
	for (int lay = 0; lay < 2; lay++) {
		run_random(&rng, FFN_KQ_Q6_K, lay, 37, 512, 1);
		run_random(&rng, FFN_KQ_Q6_K, lay, 23, 300, 1);
		run_random(&rng, FFN_KQ_Q6_K, lay, 19, 300, 3);
		run_random(&rng, FFN_KQ_Q6_K, lay, 9, 777, 8);
		run_random(&rng, FFN_KQ_Q6_K, lay, 5, 200, 11);
		/* 8 rows x 129 blocks: past the driver's stack of per-16
		 * input sums (the several-row kernels make their own), and
		 * windows of 16 blocks, the last one partial */
		run_random(&rng, FFN_KQ_Q6_K, lay, 2, 33000, 8);
		run_random(&rng, FFN_KQ_Q6_K, lay, 7, 2048, 1);
		run_random(&rng, FFN_KQ_Q6_K, lay, 5, 1500, 1);
		run_random(&rng, FFN_KQ_Q6_K, lay, 3, 1800, 1);
		run_random(&rng, FFN_KQ_Q6_K, lay, 2, 33000, 1);
		run_random(&rng, FFN_KQ_Q6_K, lay, 2, 66000, 1);
	}
}

/*
 * One input row: the Q8_K kernels take the rows in FFN_KQ_STREAMS (4)
 * far-apart chunks, then the nrows % 4 left over one at a time. Row
 * counts around multiples of the chunk count (1 row: only left-overs; 4,
 * 8: none left over), with whole and partial groups of 4 blocks per row,
 * against the scalar reference in every ISA (run_random: Q8_K bit-exact).
 */
static void
test_stream_rows(void **state)
{
	uint64_t rng = test_rng_seed(19);
	static const uint32_t rows[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13,
					 66, 67 };
	static const uint32_t cols[] = { 256, 700, 1024, 2560 };

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
			run_random(&rng, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE,
				   rows[i], cols[c], 1);
			run_random(&rng, FFN_KQ_Q6_K, FFN_KQ_Q6_PRIVATE,
				   rows[i], cols[c], 1);
			run_random(&rng, FFN_KQ_Q6_K, FFN_KQ_Q6_GGML, rows[i],
				   cols[c], 1);
		}
}

/* The Q8_K path against the f32 path on the same weights: the only
 * difference is the 8-bit input quantisation, |x - xq| <= max|x| / 254
 * per block, so |y - yq| <= sum_k |w_k| max|x| / 254 (+ rounding). */
static void
test_q8k_accuracy(void **state)
{
	uint64_t rng = test_rng_seed(17);
	const uint32_t rows = 16, cols = 1000;
	size_t nb = FFN_KQ_NBLOCKS(cols);
	float *x = malloc(cols * sizeof(float)), y[16], yq[16];
	float *deq = malloc(nb * 256 * sizeof(float));
	uint8_t *q8 = malloc(nb * FFN_KQ_Q8K_BYTES);
	size_t sl = ffn_kq_matvec_f32_scratch(cols, 1);
	void *scratch = malloc(sl);

	(void)state;
	for (uint32_t i = 0; i < cols; i++)
		x[i] = test_rng_uniform(&rng, -1.0f, 1.0f);
	ffn_kq_quantize_q8k(x, cols, q8);
	for (int fmt = 0; fmt < 2; fmt++) {
		size_t rb = ffn_kq_row_bytes(fmt, cols);
		uint8_t *w = malloc(rows * rb);
		struct ffn_kq_mat m = { w, fmt, FFN_KQ_Q6_GGML, rows, cols };

		kt_random_blocks(&rng, fmt, w, rows * nb);
		FOR_EACH_ISA(isa) {
			assert_int_equal(ffn_kq_matvec_f32(&m, 0, rows, x, cols,
					1, y, rows, scratch, sl), 0);
			assert_int_equal(ffn_kq_matvec_q8k(&m, 0, rows, q8, 1,
					yq, rows), 0);
			for (uint32_t i = 0; i < rows; i++) {
				double l1 = 0;

				ffn_kq_dequant_row(fmt, FFN_KQ_Q6_GGML,
						   w + i * rb, nb, deq);
				for (uint32_t k = 0; k < cols; k++)
					l1 += fabs(deq[k]);
				assert_true(fabs(y[i] - yq[i]) <=
					    l1 / 254.0 * 1.01 + 1e-4);
			}
		}
		free(w);
	}
	free(x); free(deq); free(q8); free(scratch);
}

/* Q8_K layout: sums are per 32 values; the llama.cpp block converts. */
static void
test_q8k_layout(void **state)
{
	uint64_t rng = test_rng_seed(19);
	float x[300];
	uint8_t row[2 * FFN_KQ_Q8K_BYTES], row2[2 * FFN_KQ_Q8K_BYTES];
	uint8_t ggml[2 * 292];

	(void)state;
	for (int i = 0; i < 300; i++)
		x[i] = test_rng_uniform(&rng, -3.0f, 2.0f);
	ffn_kq_quantize_q8k(x, 300, row);
	for (int b = 0; b < 2; b++) {
		const int8_t *qs = (const int8_t *)row + 256 * b;
		float d;

		memcpy(&d, row + 512 + 4 * b, 4);
		for (int j = 0; j < 8; j++) {
			int16_t s, want = 0;

			memcpy(&s, row + 520 + 16 * b + 2 * j, 2);
			for (int l = 0; l < 32; l++)
				want += qs[32 * j + l];
			assert_int_equal(s, want);
		}
		for (int i = 0; i < 256; i++) {
			int k = 256 * b + i;

			if (k >= 300)
				assert_int_equal(qs[i], 0);
			else
				assert_true(fabsf(qs[i] * d - x[k]) <=
					    fabsf(d) * 0.5f * 1.0001f);
		}
		/* the same block as llama.cpp block_q8_K: d, qs, bsums[16] */
		memcpy(ggml + 292 * b, &d, 4);
		memcpy(ggml + 292 * b + 4, qs, 256);
		for (int j = 0; j < 16; j++) {
			int16_t s = 0;

			for (int l = 0; l < 16; l++)
				s += qs[16 * j + l];
			memcpy(ggml + 292 * b + 260 + 2 * j, &s, 2);
		}
	}
	ffn_kq_q8k_from_ggml(ggml, 2, row2);
	assert_memory_equal(row, row2, sizeof(row));
	{
		float xd[300], d;

		ffn_kq_dequant_q8k(row, 300, xd);
		for (int i = 0; i < 300; i++) {
			memcpy(&d, row + 512 + 4 * (i / 256), 4);
			assert_true(xd[i] == d * ((const int8_t *)row)[i]);
			assert_true(fabsf(xd[i] - x[i]) <=
				    fabsf(d) * 0.5f * 1.0001f);
		}
	}
}

/* Inputs beyond cols are never read: x ends at a PROT_NONE page. */
static void
test_no_read_past_cols(void **state)
{
	uint64_t rng = test_rng_seed(23);
	const uint32_t cols = 300, rows = 7;
	long pg = sysconf(_SC_PAGESIZE);
	size_t xbytes = 2 * cols * sizeof(float);
	size_t span = ((xbytes + pg - 1) / pg + 1) * pg;
	uint8_t *map = mmap(NULL, span, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	float *x, y[2 * 7];
	size_t rb = ffn_kq_row_bytes(FFN_KQ_Q4_K, cols);
	uint8_t *w = malloc(rows * rb), *w6 = malloc(rows * 2 * 210);
	size_t sl = ffn_kq_matvec_f32_scratch(cols, 2);
	void *scratch = malloc(sl);

	(void)state;
	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map + span - pg, pg, PROT_NONE), 0);
	x = (float *)(map + span - pg - xbytes);
	for (uint32_t i = 0; i < 2 * cols; i++)
		x[i] = test_rng_uniform(&rng, -1.0f, 1.0f);
	kt_random_blocks(&rng, FFN_KQ_Q4_K, w, rows * 2);
	kt_random_blocks(&rng, FFN_KQ_Q6_K, w6, rows * 2);
	FOR_EACH_ISA(isa) {
		struct ffn_kq_mat m = { w, FFN_KQ_Q4_K, 0, rows, cols };
		struct ffn_kq_mat m6 = { w6, FFN_KQ_Q6_K, 1, rows, cols };

		assert_int_equal(ffn_kq_matvec_f32(&m, 0, rows, x, cols, 2, y,
						   rows, scratch, sl), 0);
		assert_int_equal(ffn_kq_matvec_f32(&m6, 0, rows, x, cols, 2, y,
						   rows, scratch, sl), 0);
		assert_int_equal(ffn_kq_matvec_f32(&m, 0, rows, x, cols, 2, y,
						   rows, scratch, sl - 1),
				 -ENOSPC);
	}
	munmap(map, span);
	free(w); free(w6); free(scratch);
}

/* A row range computes exactly the same values as the whole matrix. */
static void
test_row_range(void **state)
{
	uint64_t rng = test_rng_seed(29);
	const uint32_t rows = 20, cols = 512;
	size_t rb = ffn_kq_row_bytes(FFN_KQ_Q4_K, cols);
	uint8_t *w = malloc(rows * rb);
	float x[512], y[20], ys[20];
	struct ffn_kq_mat m = { w, FFN_KQ_Q4_K, 0, rows, cols };

	(void)state;
	kt_random_blocks(&rng, FFN_KQ_Q4_K, w, rows * 2);
	for (int i = 0; i < 512; i++)
		x[i] = test_rng_uniform(&rng, -1, 1);
	assert_int_equal(ffn_kq_matvec_f32(&m, 0, rows, x, 512, 1, y, rows,
					   NULL, 0), 0);
	assert_int_equal(ffn_kq_matvec_f32(&m, 5, 13, x, 512, 1, ys, 8,
					   NULL, 0), 0);
	assert_memory_equal(ys, y + 5, 8 * sizeof(float));
	assert_int_equal(ffn_kq_matvec_f32(&m, 5, 21, x, 512, 1, ys, 8,
					   NULL, 0), -EINVAL);
	free(w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f16),
		cmocka_unit_test(test_hand_q4k_decode),
		cmocka_unit_test(test_hand_q6k_decode),
		cmocka_unit_test(test_hand_matvec),
		cmocka_unit_test(test_q6k_arrangements),
		cmocka_unit_test(test_quantize_roundtrip),
		cmocka_unit_test(test_random_q4k),
		cmocka_unit_test(test_random_q6k),
		cmocka_unit_test(test_every_row_count),
		cmocka_unit_test(test_stream_rows),
		cmocka_unit_test(test_q8k_accuracy),
		cmocka_unit_test(test_q8k_layout),
		cmocka_unit_test(test_no_read_past_cols),
		cmocka_unit_test(test_row_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
