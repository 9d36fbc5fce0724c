/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * lib/ffn dense kernels called directly: every SIMD kernel set against
 * the scalar reference (ffn_kern_scalar.c) for rows 1..17 (1..130 on
 * fewer shapes) and widths that are not a multiple of any vector length,
 * so each register tile shape (6 x 4 and 3 x 4 matvec tiles, the 8-row
 * f16 down tile, 4 x 4 and 4 x 3 down blocks and the one-row stream
 * kernels) and every tail path runs.
 *
 * Bound: both sides sum n products in f32, each within gamma_n =
 * n * 2^-24 times the sum of |products| of the exact value (any order),
 * so they differ by at most 2 gamma_n that sum. A wrong weight, row,
 * stride or tail is off by a whole product, orders of magnitude more.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ffn.h"
#include "ffn_priv.h"
#include "test_rng.h"

#define MAX_R 17u
#define MANY_R 130u

/* |v| in [2^-6, 2^2), either sign: normal f16, exact in f32 */
static uint16_t
rand_f16(uint64_t *rng)
{
	uint32_t r = test_rng_u32(rng);

	return (uint16_t)((r & 0x8000u) | ((9u + (r >> 16) % 8u) << 10) |
			  ((r >> 3) & 0x3ffu));
}

static float
f16_val(uint16_t b)
{
	float v = ldexpf(1.0f + (float)(b & 0x3ffu) / 1024.0f,
			 (int)((b >> 10) & 0x1fu) - 15);

	return b & 0x8000u ? -v : v;
}

/* multiples of 1/2500 in [-4, 4] */
static float
rand_f32(uint64_t *rng)
{
	return ((float)test_rng_below(rng, 20001u) - 10000.0f) / 2500.0f;
}

/* Weights [rows][cols] with row_bytes padded by 8 bytes (not dense). */
static void
make_mat(uint64_t *rng, struct ffn_mat *m, float *vals, unsigned rows,
	 unsigned cols, int f16)
{
	size_t es = f16 ? 2 : 4, rb = (size_t)cols * es + 8, i, j;
	uint8_t *p = malloc(rows * rb);

	assert_non_null(p);
	for (i = 0; i < rows; i++)
		for (j = 0; j < cols; j++) {
			if (f16) {
				uint16_t b = rand_f16(rng);

				memcpy(p + i * rb + j * 2, &b, 2);
				vals[i * cols + j] = f16_val(b);
			} else {
				float v = rand_f32(rng);

				memcpy(p + i * rb + j * 4, &v, 4);
				vals[i * cols + j] = v;
			}
		}
	*m = (struct ffn_mat){ .data = p, .row_bytes = rb, .rows = rows,
			       .cols = cols,
			       .dtype = f16 ? FFN_DT_F16 : FFN_DT_F32 };
}

static void
check(const char *what, const struct ffn_kernels *k, int f16, unsigned H,
      unsigned nf, unsigned R, unsigned r, unsigned i, float got, float ref,
      double bound)
{
	if (!(fabs((double)got - ref) <= bound))
		fail_msg("%s %s f16 %d H %u nf %u R %u row %u at %u: %.9g vs scalar %.9g (bound %.3g)",
			 what, k->name, f16, H, nf, R, r, i, got, ref, bound);
}

static void
check_matvec(uint64_t *rng, const struct ffn_kernels *k, int f16, unsigned H,
	     unsigned nf, unsigned max_r)
{
	const double eps = 0x1p-24;
	const size_t os = nf + 5;	/* output rows not packed */
	float *wv = malloc((size_t)nf * H * 4);
	float *x = malloc((size_t)max_r * H * 4);
	float *out = malloc(max_r * os * 4), *ref = malloc(max_r * os * 4);
	const float **xp = malloc(max_r * sizeof(*xp));
	struct ffn_mat m;
	unsigned R, r, f, h;

	assert_true(wv && x && out && ref && xp);
	make_mat(rng, &m, wv, nf, H, f16);
	for (h = 0; h < max_r * H; h++)
		x[h] = rand_f32(rng);
	for (R = 1; R <= max_r; R++) {
		/* rows in reverse order: any pointers are fine */
		for (r = 0; r < R; r++)
			xp[r] = x + (size_t)(R - 1 - r) * H;
		memset(out, 0xff, max_r * os * 4);
		k->matvec(&m, xp, R, out, os);
		ffn_kernels_scalar.matvec(&m, xp, R, ref, os);
		for (r = 0; r < R; r++)
			for (f = 0; f < nf; f++) {
				double s = 0;

				for (h = 0; h < H; h++)
					s += fabs((double)wv[f * H + h] *
						  xp[r][h]);
				check("matvec", k, f16, H, nf, R, r, f,
				      out[r * os + f], ref[r * os + f],
				      2 * H * eps * s + 1e-30);
			}
	}
	free((void *)m.data);
	free(wv);
	free(x);
	free(out);
	free(ref);
	free(xp);
}

/*
 * mm_pack + matmat (rows in the vector lanes): every row count rp =
 * mm_align .. max_r rounded up, as whole row vectors, so each sweep of
 * 1..MM_NV vectors and each tile shape runs; odd multiples of mm_align
 * with one padding row (which must come out zero), even ones full. The
 * outputs against the scalar matvec of the same rows.
 */
static void
check_matmat(uint64_t *rng, const struct ffn_kernels *k, int f16, unsigned H,
	     unsigned nf, unsigned max_r)
{
	const double eps = 0x1p-24;
	const unsigned al = k->mm_align;
	const unsigned max_rp = (max_r + al - 1) / al * al;
	float *wv = malloc((size_t)nf * H * 4);
	float *x = malloc((size_t)max_rp * H * 4);
	float *xt = malloc((size_t)max_rp * H * 4);
	float *ot = malloc((size_t)max_rp * nf * 4);
	float *ref = malloc((size_t)max_rp * nf * 4);
	const float **xp = malloc(max_rp * sizeof(*xp));
	struct ffn_mat m;
	unsigned rp, R, r, f, h;

	assert_true(al > 0 && k->mm_pack && k->matmat);
	assert_true(wv && x && xt && ot && ref && xp);
	make_mat(rng, &m, wv, nf, H, f16);
	for (h = 0; h < max_rp * H; h++)
		x[h] = rand_f32(rng);
	for (rp = al; rp <= max_rp; rp += al) {
		R = rp / al % 2 ? rp - 1 : rp;
		/* rows in reverse order: any pointers are fine */
		for (r = 0; r < R; r++)
			xp[r] = x + (size_t)(R - 1 - r) * H;
		memset(xt, 0xff, (size_t)max_rp * H * 4);
		assert_int_equal(k->mm_pack(xp, R, H, xt), rp);
		memset(ot, 0xff, (size_t)max_rp * nf * 4);
		k->matmat(&m, xt, rp, ot);
		ffn_kernels_scalar.matvec(&m, xp, R, ref, nf);
		for (f = 0; f < nf; f++) {
			if (R < rp && ot[(size_t)f * rp + R] != 0.0f)
				fail_msg("matmat %s f16 %d H %u nf %u rp %u: padding row gave %g at %u",
					 k->name, f16, H, nf, rp,
					 ot[(size_t)f * rp + R], f);
			for (r = 0; r < R; r++) {
				double s = 0;

				for (h = 0; h < H; h++)
					s += fabs((double)wv[f * H + h] *
						  xp[r][h]);
				check("matmat", k, f16, H, nf, rp, r, f,
				      ot[(size_t)f * rp + r], ref[r * nf + f],
				      2 * H * eps * s + 1e-30);
			}
		}
	}
	free((void *)m.data);
	free(wv);
	free(x);
	free(xt);
	free(ot);
	free(ref);
	free(xp);
}

static void
check_down(uint64_t *rng, const struct ffn_kernels *k, int f16, unsigned H,
	   unsigned nf, unsigned max_r)
{
	const double eps = 0x1p-24;
	const size_t as = nf + 3;	/* activation rows not packed */
	float *dv = malloc((size_t)nf * H * 4);
	float *a = malloc(max_r * as * 4);
	float *y = malloc((size_t)max_r * H * 4);
	float *ref = malloc((size_t)max_r * H * 4);
	float **yp = malloc(max_r * sizeof(*yp));
	float **rp = malloc(max_r * sizeof(*rp));
	struct ffn_mat m;
	unsigned R, r, f, h;

	assert_true(dv && a && y && ref && yp && rp);
	make_mat(rng, &m, dv, nf, H, f16);
	for (f = 0; f < max_r * as; f++)
		a[f] = rand_f32(rng);
	for (R = 1; R <= max_r; R++) {
		/* y rows scrambled, as ffn_compute callers may pass them */
		for (r = 0; r < R; r++) {
			unsigned q = r % 2 ? R - 1 - r / 2 : r / 2;

			yp[r] = y + (size_t)q * H;
			rp[r] = ref + (size_t)q * H;
		}
		memset(y, 0xff, (size_t)max_r * H * 4);	/* down overwrites */
		k->down(&m, a, as, R, yp);
		ffn_kernels_scalar.down(&m, a, as, R, rp);
		for (r = 0; r < R; r++)
			for (h = 0; h < H; h++) {
				double s = 0;

				for (f = 0; f < nf; f++)
					s += fabs((double)a[r * as + f] *
						  dv[f * H + h]);
				check("down", k, f16, H, nf, R, r, h, yp[r][h],
				      rp[r][h], 2 * nf * eps * s + 1e-30);
			}
	}
	free((void *)m.data);
	free(dv);
	free(a);
	free(y);
	free(ref);
	free(yp);
	free(rp);
}

/*
 * mm_down (activations in matmat's [nf][rp] layout) for rows 1..max_r:
 * every row block shape (1..MMD_NR rows), feature blocks of MMD_KC with
 * a partial last one when nf is large, whole and single vectors and the
 * tail of H; against the scalar down of the same activations.
 */
static void
check_mm_down(uint64_t *rng, const struct ffn_kernels *k, int f16,
	      unsigned H, unsigned nf, unsigned max_r)
{
	const double eps = 0x1p-24;
	const unsigned al = k->mm_align;
	const unsigned max_rp = (max_r + al - 1) / al * al;
	float *dv = malloc((size_t)nf * H * 4);
	float *a = malloc((size_t)max_r * nf * 4);
	float *at = malloc((size_t)max_rp * nf * 4);
	float *y = malloc((size_t)max_r * H * 4);
	float *ref = malloc((size_t)max_r * H * 4);
	float **yp = malloc(max_r * sizeof(*yp));
	float **rp = malloc(max_r * sizeof(*rp));
	struct ffn_mat m;
	unsigned R, r, f, h;

	assert_true(k->mm_down != NULL);
	assert_true(dv && a && at && y && ref && yp && rp);
	make_mat(rng, &m, dv, nf, H, f16);
	for (f = 0; f < max_r * nf; f++)
		a[f] = rand_f32(rng);
	for (R = 1; R <= max_r; R++) {
		const unsigned p = (R + al - 1) / al * al;

		/* padding lanes hold garbage: no output may read them */
		for (f = 0; f < nf; f++)
			for (r = 0; r < p; r++)
				at[(size_t)f * p + r] = r < R ? a[r * nf + f] :
							1e30f;
		for (r = 0; r < R; r++) {
			unsigned q = r % 2 ? R - 1 - r / 2 : r / 2;

			yp[r] = y + (size_t)q * H;
			rp[r] = ref + (size_t)q * H;
		}
		memset(y, 0xff, (size_t)max_r * H * 4);	/* overwritten */
		k->mm_down(&m, at, p, R, yp);
		ffn_kernels_scalar.down(&m, a, nf, R, rp);
		for (r = 0; r < R; r++)
			for (h = 0; h < H; h++) {
				double s = 0;

				for (f = 0; f < nf; f++)
					s += fabs((double)a[r * nf + f] *
						  dv[f * H + h]);
				check("mm_down", k, f16, H, nf, R, r, h,
				      yp[r][h], rp[r][h],
				      2 * nf * eps * s + 1e-30);
			}
	}
	free((void *)m.data);
	free(dv);
	free(a);
	free(at);
	free(y);
	free(ref);
	free(yp);
	free(rp);
}

/* Every kernel set this CPU runs, both dtypes, rows 1..max_r; returns
 * the number of sets run (an x86-64 without AVX2 would test nothing). */
static int
check_sets(uint64_t *rng, unsigned H, unsigned nf, unsigned max_r)
{
	static const struct ffn_kernels *const ks[] = {
		&ffn_kernels_avx2, &ffn_kernels_avx512,
	};
	unsigned ki;
	int f16, ran = 0;

	for (ki = 0; ki < 2; ki++) {
		if (!ffn_isa_supported(ks[ki]->isa))
			continue;
		ran++;
		for (f16 = 0; f16 < 2; f16++) {
			check_matvec(rng, ks[ki], f16, H, nf, max_r);
			check_matmat(rng, ks[ki], f16, H, nf, max_r);
			check_down(rng, ks[ki], f16, H, nf, max_r);
			check_mm_down(rng, ks[ki], f16, H, nf, max_r);
		}
	}
	return ran;
}

/*
 * H: below one vector, tails after whole 48-float (8-row down) and
 * 64-float (4 x 4 down) chunks, single vectors between chunk and tail.
 * nf: down blocks of 16 features with a partial last block; matvec
 * chunks of 3, 4 and 6 features with rows left over.
 */
static void
test_simd_vs_scalar(void **state)
{
	static const unsigned Hs[] = { 13, 37, 61, 200, 250, 1001 };
	static const unsigned nfs[] = { 19, 40, 53 };
	uint64_t rng = test_rng_seed(1);
	unsigned hi, ni;

	(void)state;
	for (hi = 0; hi < sizeof(Hs) / sizeof(Hs[0]); hi++)
		for (ni = 0; ni < sizeof(nfs) / sizeof(nfs[0]); ni++)
			assert_true(check_sets(&rng, Hs[hi], nfs[ni],
					       MAX_R) > 0);
}

/*
 * Batches up to 130 rows (issue 14): every row count from 1, so each
 * number of whole row blocks and every partial last block of each tile
 * shape runs, over a few H / nf pairs with tails (fewer shapes than
 * above: the scalar reference grows with the square of the rows).
 */
static void
test_many_rows(void **state)
{
	static const unsigned shapes[][2] = {
		{ 13, 19 }, { 61, 53 }, { 200, 40 }, { 1001, 19 },
	};
	uint64_t rng = test_rng_seed(2);
	unsigned si;

	(void)state;
	for (si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++)
		assert_true(check_sets(&rng, shapes[si][0], shapes[si][1],
				       MANY_R) > 0);
}

/*
 * matmat over H wider than one chunk of a sweep (MM_XT_BYTES: 1024
 * columns for a 64-row AVX-512 sweep, 2560 for a 24-row AVX2 one, 4096
 * for one AVX-512 row vector), so the accumulators are stored and
 * reloaded between chunks, with an f16 block tail in the last one; and
 * mm_down over several feature blocks, with and without a tail of H.
 */
static void
test_matmat_chunks(void **state)
{
	static const struct ffn_kernels *const ks[] = {
		&ffn_kernels_avx2, &ffn_kernels_avx512,
	};
	uint64_t rng = test_rng_seed(3);
	unsigned ki;
	int f16, ran = 0;

	(void)state;
	for (ki = 0; ki < 2; ki++) {
		if (!ffn_isa_supported(ks[ki]->isa))
			continue;
		ran++;
		for (f16 = 0; f16 < 2; f16++) {
			check_matmat(&rng, ks[ki], f16, 4133, 13, 64);
			/* 300 features: blocks of 128, 128 and 44 */
			check_mm_down(&rng, ks[ki], f16, 77, 300, 30);
			/* whole vectors to the last column (no tail), and
			 * rows on both sides of mm_down's L2 stream (f32 to
			 * 32 rows, f16 to 16) */
			check_mm_down(&rng, ks[ki], f16, 96, 300, 40);
		}
	}
	assert_true(ran > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simd_vs_scalar),
		cmocka_unit_test(test_many_rows),
		cmocka_unit_test(test_matmat_chunks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
