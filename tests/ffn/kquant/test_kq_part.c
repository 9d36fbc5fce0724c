/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Feature slices of K-quant layers (ffn_compute_part, issue 4): a vindex
 * written by mkvindex --quant q4k (H = 300; widths 600 = two whole
 * blocks and a partial one, and 100 < one block) is split on 256-feature
 * blocks; on both paths (f32 inputs, Q8_K inputs) the slices' sum equals
 * ffn_compute, and on the f32 path each slice equals a double-precision
 * reference over the dequantised weights of its own features.
 *
 * Bound: relative L2 1e-4. The f32 kernels' error is a few 2^-23 times
 * the sums of magnitudes over at most 600 terms (ffn_kq.h), ~1e-6 of the
 * result here; on the Q8_K path a slice quantises its activations to the
 * same blocks as the whole layer (slices start on blocks), so only the
 * order of the f32 sums differs. A slice off by a block, or a missing
 * block, is wrong by its whole share: tens of per cent.
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

#include "ffn.h"
#include "ffn_kq.h"
#include "kq_fixture.h"

#define H 300
#define ROWS 3
#define TOL 1e-4
static const unsigned widths[2] = { 600, 100 };
static char dir[64];

static int
setup(void **state)
{
	struct vw_opts o = kq_fixture_opts(H, 2, widths, 11);

	(void)state;
	return kq_fixture_write(dir, sizeof(dir), "kq-part", &o,
				FFN_KQ_Q6_PRIVATE);
}

static int
teardown(void **state)
{
	(void)state;
	kq_fixture_remove(dir);
	return 0;
}

/* rows x cols dequantised (cols values of each padded row kept). */
static double *
dequant(const struct ffn_mat *w)
{
	size_t nb = FFN_KQ_NBLOCKS(w->cols);
	enum ffn_kq_fmt fmt = w->dtype == FFN_DT_Q4K ? FFN_KQ_Q4_K
						     : FFN_KQ_Q6_K;
	float *row = malloc(nb * FFN_KQ_QK * sizeof(float));
	double *out = malloc((size_t)w->rows * w->cols * sizeof(double));

	assert_non_null(row);
	assert_non_null(out);
	for (uint32_t r = 0; r < w->rows; r++) {
		ffn_kq_dequant_row(fmt, FFN_KQ_Q6_PRIVATE,
				   (const uint8_t *)w->data + r * w->row_bytes,
				   nb, row);
		for (uint32_t c = 0; c < w->cols; c++)
			out[(size_t)r * w->cols + c] = row[c];
	}
	free(row);
	return out;
}

static double
rel_l2(const float *y, const double *ref, size_t n)
{
	double num = 0, den = 0;

	for (size_t i = 0; i < n; i++) {
		num += (y[i] - ref[i]) * (y[i] - ref[i]);
		den += ref[i] * ref[i];
	}
	return sqrt(num / den);
}

/* Exact partial of [f0, f1) for x over the dequantised weights (SiLU:
 * mkvindex's default family). ref has H values. */
static void
reference(const struct ffn_layer *ly, const double *G, const double *U,
	  const double *D, unsigned f0, unsigned f1, const float *x,
	  double *ref)
{
	for (unsigned h = 0; h < H; h++)
		ref[h] = 0;
	for (unsigned f = f0; f < f1; f++) {
		double g = 0, u = 0, a;

		for (unsigned k = 0; k < H; k++) {
			g += G[(size_t)f * H + k] * x[k];
			u += U[(size_t)f * H + k] * x[k];
		}
		a = g / (1 + exp(-g)) * u;
		for (unsigned h = 0; h < H; h++)	/* down is [H, nf] */
			ref[h] += D[(size_t)h * ly->nf + f] * a;
	}
}

static void
test_partitions(void **state)
{
	struct ffn_model *m;
	char err[256];
	static float x[ROWS][H], whole[ROWS][H], part[ROWS][H], sum[ROWS][H];
	const float *xp[ROWS];
	float *wp[ROWS], *pp[ROWS];
	double ref[H], dsum[H];

	(void)state;
	assert_int_equal(ffn_model_load(dir, NULL, &m, err, sizeof(err)), 0);
	for (int r = 0; r < ROWS; r++) {
		for (int h = 0; h < H; h++)
			x[r][h] = (float)sin(0.23 * h * (r + 1) + r);
		xp[r] = x[r];
		wp[r] = whole[r];
		pp[r] = part[r];
	}
	for (unsigned L = 0; L < 2; L++) {
		const struct ffn_layer *ly = ffn_model_layer(m, L);
		double *G = dequant(&ly->gate), *U = dequant(&ly->up);
		double *D = dequant(&ly->down);

		assert_int_equal(ffn_part_align(m, L), 256);
		for (int q8 = 0; q8 < 2; q8++) {
			/* 2 rows per pass: 3 rows take two */
			struct ffn_scratch *s = ffn_scratch_new(m, 2, -1);

			ffn_model_set_kq_q8k(m, q8);
			assert_int_equal(ffn_compute(m, L, xp, wp, ROWS, s), 0);
			for (unsigned n = 1; n <= 4; n++) {
				unsigned covered = 0;

				memset(sum, 0, sizeof(sum));
				for (unsigned i = 0; i < n; i++) {
					unsigned f0, f1;

					assert_int_equal(ffn_part_range(m, L,
						i, n, &f0, &f1), 0);
					assert_int_equal(f0, covered);
					assert_true(f0 % 256 == 0 ||
						    f0 == ly->nf);
					assert_true(f1 % 256 == 0 ||
						    f1 == ly->nf);
					covered = f1;
					if (f0 == f1)
						continue;
					assert_int_equal(ffn_compute_part(m, L,
						f0, f1, xp, pp, ROWS, s), 0);
					for (int r = 0; r < ROWS; r++) {
						for (int h = 0; h < H; h++)
							sum[r][h] += part[r][h];
						if (q8)
							continue;
						reference(ly, G, U, D, f0, f1,
							  x[r], ref);
						assert_true(rel_l2(part[r], ref,
								   H) < TOL);
					}
				}
				assert_int_equal(covered, ly->nf);
				for (int r = 0; r < ROWS; r++) {
					for (int h = 0; h < H; h++)
						dsum[h] = whole[r][h];
					if (rel_l2(sum[r], dsum, H) >= TOL)
						fail_msg("layer %u q8k %d n %u "
							 "row %d: %g", L, q8,
							 n, r, rel_l2(sum[r],
							 dsum, H));
				}
			}
			ffn_scratch_free(s);
		}
		free(G);
		free(U);
		free(D);
	}
	ffn_model_free(m);
}

/* A wrong block offset would show: the middle block alone differs from
 * the first block alone (guards against a window that ignores f0). */
static void
test_blocks_differ(void **state)
{
	struct ffn_model *m;
	struct ffn_scratch *s;
	char err[256];
	static float x[H], a[H], b[H];
	const float *xp[1] = { x };
	float *ap[1] = { a }, *bp[1] = { b };
	double ref[H];

	(void)state;
	assert_int_equal(ffn_model_load(dir, NULL, &m, err, sizeof(err)), 0);
	s = ffn_scratch_new(m, 1, -1);
	for (int h = 0; h < H; h++)
		x[h] = (float)cos(0.31 * h);
	assert_int_equal(ffn_compute_part(m, 0, 0, 256, xp, ap, 1, s), 0);
	assert_int_equal(ffn_compute_part(m, 0, 256, 512, xp, bp, 1, s), 0);
	for (int h = 0; h < H; h++)
		ref[h] = a[h];
	assert_true(rel_l2(b, ref, H) > 0.1);
	ffn_scratch_free(s);
	ffn_model_free(m);
}

static void
test_bad_slices(void **state)
{
	struct ffn_model *m;
	struct ffn_scratch *s;
	char err[256];
	static float x[H], y[H];
	const float *xp[1] = { x };
	float *yp[1] = { y };
	unsigned f0, f1;

	(void)state;
	assert_int_equal(ffn_model_load(dir, NULL, &m, err, sizeof(err)), 0);
	s = ffn_scratch_new(m, 1, -1);
	/* not on blocks of 256 features */
	assert_int_equal(ffn_compute_part(m, 0, 100, 256, xp, yp, 1, s),
			 -EINVAL);
	assert_int_equal(ffn_compute_part(m, 0, 0, 300, xp, yp, 1, s),
			 -EINVAL);
	assert_int_equal(ffn_compute_part(m, 0, 512, 601, xp, yp, 1, s),
			 -EINVAL);
	assert_int_equal(ffn_compute_part(m, 0, 512, 512, xp, yp, 1, s),
			 -EINVAL);
	assert_int_equal(ffn_compute_part(m, 2, 0, 256, xp, yp, 1, s),
			 -ERANGE);
	/* the last slice ends at nf, inside a block */
	assert_int_equal(ffn_compute_part(m, 0, 512, 600, xp, yp, 1, s), 0);
	assert_int_equal(ffn_compute_part(m, 1, 0, 100, xp, yp, 1, s), 0);
	/* one block, two slices: the second is empty */
	assert_int_equal(ffn_part_range(m, 1, 1, 2, &f0, &f1), 0);
	assert_int_equal(f0, 100);
	assert_int_equal(f1, 100);
	ffn_scratch_free(s);
	ffn_model_free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_partitions),
		cmocka_unit_test(test_blocks_differ),
		cmocka_unit_test(test_bad_slices),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
