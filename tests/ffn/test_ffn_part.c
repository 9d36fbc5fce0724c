/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * lib/ffn feature slices (ffn_compute_part, issue 4): every slice against
 * a double-precision reference of its own features, and the sum of the
 * slices of a partition against ffn_compute, for f32 and f16 weights,
 * both activations, every ISA and engine, uneven nf, slices of one
 * feature, several rows in passes and in place; bad ranges refused.
 *
 * The bound (summation order only). With u = 2^-24, a dot of n terms in
 * f32 (FMA, any order) is within (n + 2) u Σ|terms| of the exact one, so
 * each a_f = act(g_f) u_f is off by at most
 *   δa_f = (H + 4) u (1.2 |u_f| Σ_k |G_fk x_k| + (|g_f| + 1) Σ_k |U_fk x_k|)
 *          + 8 u |a_f|
 * (|act'| < 1.2 and |act(g)| < |g| + 1 for SiLU and GELU-tanh; the last
 * term is the libm activation), and a slice of ns features is within
 *   T_h = Σ_{f in slice} |D_fh| ((ns + 4) u |a_f| + δa_f)
 * of the exact partial. We allow 2 T_h. Two results for the whole layer
 * (ffn_compute, the sum of the slices) then differ by at most 2 T_h(all)
 * plus the float sum of n partials, (n + 1) u Σ_f |a_f D_fh|. A missing,
 * doubled or shifted feature moves y by about |a_f D_fh| ~ Σ/nf, far
 * above these bounds for the sizes used (nf <= 300: ~2e-5 Σ vs Σ/300).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ffn.h"
#include "ffn_kq.h"	/* ffn_kq_f32_to_f16 / f16_to_f32 */
#include "test_rng.h"

#define U_EPS (1.0 / 16777216.0)	/* 2^-24 */
#define MAXR 3

struct fixture {
	unsigned H, nf;
	enum ffn_act act;
	int f16;
	float *G, *U, *D;		/* f32 weights (f16-rounded if f16) */
	uint16_t *Gh, *Uh, *Dh;		/* the f16 copies */
	struct ffn_model *m;
	float x[MAXR][512];
};

/* A wrapped layer of random weights and rows, drawn from seed. */
static void
fx_make(struct fixture *fx, unsigned H, unsigned nf, enum ffn_act act,
	int f16, uint64_t seed)
{
	uint64_t rng = test_rng_seed(seed);
	size_t n = (size_t)nf * H;
	struct ffn_layer ly;
	enum ffn_dtype dt = f16 ? FFN_DT_F16 : FFN_DT_F32;
	size_t rb = f16 ? H * 2 : H * 4;
	float *w[3];
	uint16_t **wh[3] = { &fx->Gh, &fx->Uh, &fx->Dh };

	memset(fx, 0, sizeof(*fx));
	fx->H = H;
	fx->nf = nf;
	fx->act = act;
	fx->f16 = f16;
	fx->G = malloc(n * 4);
	fx->U = malloc(n * 4);
	fx->D = malloc(n * 4);
	w[0] = fx->G;
	w[1] = fx->U;
	w[2] = fx->D;
	for (int k = 0; k < 3; k++) {
		assert_non_null(w[k]);
		*wh[k] = malloc(n * 2);
		assert_non_null(*wh[k]);
		for (size_t i = 0; i < n; i++) {
			float v = (float)(test_rng_uniform(&rng, -1.0f, 1.0f) *
					  2.0 / sqrt((double)H));

			(*wh[k])[i] = ffn_kq_f32_to_f16(v);
			w[k][i] = f16 ? ffn_kq_f16_to_f32((*wh[k])[i]) : v;
		}
	}
	for (int r = 0; r < MAXR; r++)
		for (unsigned h = 0; h < H; h++)
			fx->x[r][h] = test_rng_uniform(&rng, -2.0f, 2.0f);
	memset(&ly, 0, sizeof(ly));
	ly.nf = nf;
	ly.layout = FFN_LAYOUT_FEATURE_MAJOR;
	ly.gate = (struct ffn_mat){ f16 ? (void *)fx->Gh : fx->G, rb, nf, H,
				    dt };
	ly.up = (struct ffn_mat){ f16 ? (void *)fx->Uh : fx->U, rb, nf, H,
				  dt };
	ly.down = (struct ffn_mat){ f16 ? (void *)fx->Dh : fx->D, rb, nf, H,
				    dt };
	assert_int_equal(ffn_model_wrap(H, act, &ly, 1, &fx->m), 0);
}

static void
fx_free(struct fixture *fx)
{
	ffn_model_free(fx->m);
	free(fx->G); free(fx->U); free(fx->D);
	free(fx->Gh); free(fx->Uh); free(fx->Dh);
}

static double
act_d(enum ffn_act act, double g)
{
	if (act == FFN_ACT_GELU_TANH)
		return 0.5 * g * (1.0 + tanh(0.7978846 * (g + 0.044715 * g *
							   g * g)));
	return g / (1.0 + exp(-g));
}

/* Exact partial of [f0, f1) for row r into ref[H], its bound into tol[H]
 * (2 T_h above) and Σ_f |a_f D_fh| into mag[H]. */
static void
reference(const struct fixture *fx, int r, unsigned f0, unsigned f1,
	  double *ref, double *tol, double *mag)
{
	unsigned H = fx->H, ns = f1 - f0;
	const float *x = fx->x[r];

	for (unsigned h = 0; h < H; h++)
		ref[h] = tol[h] = mag[h] = 0;
	for (unsigned f = f0; f < f1; f++) {
		double g = 0, u = 0, sg = 0, su = 0, a, da;

		for (unsigned k = 0; k < H; k++) {
			double tg = (double)fx->G[(size_t)f * H + k] * x[k];
			double tu = (double)fx->U[(size_t)f * H + k] * x[k];

			g += tg;
			u += tu;
			sg += fabs(tg);
			su += fabs(tu);
		}
		a = act_d(fx->act, g) * u;
		da = (H + 4) * U_EPS * (1.2 * fabs(u) * sg +
					(fabs(g) + 1) * su) +
		     8 * U_EPS * fabs(a);
		for (unsigned h = 0; h < H; h++) {
			double d = fx->D[(size_t)f * H + h];

			ref[h] += a * d;
			mag[h] += fabs(a * d);
			tol[h] += 2 * fabs(d) * ((ns + 4) * U_EPS * fabs(a) +
						 da);
		}
	}
}

/*
 * Partition [0, nf) into n slices (ffn_part_range), compute each for
 * every row (rows in passes of max_rows), check each against its
 * reference and their sum against ffn_compute.
 */
static void
check_partition(struct fixture *fx, unsigned n, unsigned rows,
		unsigned max_rows)
{
	unsigned H = fx->H;
	struct ffn_scratch *s = ffn_scratch_new(fx->m, max_rows, -1);
	float whole[MAXR][512], part[MAXR][512], sum[MAXR][512];
	const float *xp[MAXR];
	float *wp[MAXR], *pp[MAXR];
	double ref[512], tol[512], mag[512];
	unsigned covered = 0;

	assert_non_null(s);
	for (unsigned r = 0; r < rows; r++) {
		xp[r] = fx->x[r];
		wp[r] = whole[r];
		pp[r] = part[r];
	}
	assert_int_equal(ffn_compute(fx->m, 0, xp, wp, rows, s), 0);
	memset(sum, 0, sizeof(sum));
	for (unsigned i = 0; i < n; i++) {
		unsigned f0, f1;

		assert_int_equal(ffn_part_range(fx->m, 0, i, n, &f0, &f1), 0);
		assert_int_equal(f0, covered);	/* contiguous, in order */
		covered = f1;
		if (f0 == f1)
			continue;
		assert_int_equal(ffn_compute_part(fx->m, 0, f0, f1, xp, pp,
						  rows, s), 0);
		for (unsigned r = 0; r < rows; r++) {
			reference(fx, (int)r, f0, f1, ref, tol, mag);
			for (unsigned h = 0; h < H; h++) {
				double e = fabs(part[r][h] - ref[h]);

				if (e > tol[h])
					fail_msg("nf %u slice [%u,%u) row %u "
						 "h %u: %g vs %g (tol %g)",
						 fx->nf, f0, f1, r, h,
						 part[r][h], ref[h], tol[h]);
				sum[r][h] += part[r][h];
			}
		}
	}
	assert_int_equal(covered, fx->nf);
	for (unsigned r = 0; r < rows; r++) {
		reference(fx, (int)r, 0, fx->nf, ref, tol, mag);
		for (unsigned h = 0; h < H; h++) {
			double t = 2 * tol[h] + (n + 1) * U_EPS * mag[h];

			if (fabs(sum[r][h] - whole[r][h]) > t)
				fail_msg("nf %u n %u row %u h %u: sum %g "
					 "whole %g (tol %g)", fx->nf, n, r, h,
					 sum[r][h], whole[r][h], t);
		}
	}
	ffn_scratch_free(s);
}

static void
test_partitions(void **state)
{
	static const unsigned shapes[][2] = {	/* H, nf */
		{ 64, 1 }, { 33, 7 }, { 64, 37 }, { 100, 300 },
	};
	static const unsigned parts[] = { 1, 2, 3, 5 };

	(void)state;
	for (int isa = 0; isa < FFN_ISA_COUNT; isa++) {
		if (!ffn_isa_supported(isa))
			continue;
		assert_int_equal(ffn_select_isa(isa), 0);
		for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]);
		     si++)
			for (int f16 = 0; f16 < 2; f16++)
				for (int act = 0; act < 2; act++) {
					struct fixture fx;

					fx_make(&fx, shapes[si][0],
						shapes[si][1], act, f16,
						1 + si);
					for (int eng = FFN_ENGINE_KERNEL;
					     eng <= FFN_ENGINE_BLAS; eng++) {
						ffn_model_set_engine(fx.m, eng,
								     0);
						for (size_t pi = 0; pi < 4; pi++)
							check_partition(&fx,
								parts[pi], 3,
								2);
						/* one row: BLAS takes sgemv */
						check_partition(&fx, 2, 1, 4);
					}
					fx_free(&fx);
				}
	}
}

/* Slices of one feature each: y = a_f D[f], nf slices summed. */
static void
test_single_features(void **state)
{
	(void)state;
	for (int f16 = 0; f16 < 2; f16++) {
		struct fixture fx;

		fx_make(&fx, 48, 29, FFN_ACT_SILU, f16, 11);
		check_partition(&fx, 29, 3, 3);
		/* more slices than features: the extra ones are empty */
		check_partition(&fx, 40, 1, 1);
		fx_free(&fx);
	}
}

/* In place, like ffn_compute: y rows may be the x rows. */
static void
test_in_place(void **state)
{
	struct fixture fx;
	struct ffn_scratch *s;
	float y[2][40], xin[2][40];
	const float *xp[2];
	float *yp[2];

	(void)state;
	fx_make(&fx, 40, 20, FFN_ACT_GELU_TANH, 0, 13);
	s = ffn_scratch_new(fx.m, 2, -1);
	for (int r = 0; r < 2; r++) {
		memcpy(xin[r], fx.x[r], sizeof(xin[r]));
		xp[r] = fx.x[r];
		yp[r] = y[r];
	}
	assert_int_equal(ffn_compute_part(fx.m, 0, 5, 17, xp, yp, 2, s), 0);
	xp[0] = xin[1];
	xp[1] = xin[0];
	yp[0] = xin[1];
	yp[1] = xin[0];
	assert_int_equal(ffn_compute_part(fx.m, 0, 5, 17, xp, yp, 2, s), 0);
	assert_memory_equal(xin[1], y[1], sizeof(y[1]));
	assert_memory_equal(xin[0], y[0], sizeof(y[0]));
	ffn_scratch_free(s);
	fx_free(&fx);
}

static void
test_bad_ranges(void **state)
{
	struct fixture fx;
	struct ffn_scratch *s;
	float y[16];
	const float *xp[1];
	float *yp[1] = { y };
	unsigned f0, f1;

	(void)state;
	fx_make(&fx, 16, 10, FFN_ACT_SILU, 0, 17);
	xp[0] = fx.x[0];
	s = ffn_scratch_new(fx.m, 1, -1);
	assert_int_equal(ffn_compute_part(fx.m, 0, 3, 3, xp, yp, 1, s),
			 -EINVAL);	/* empty */
	assert_int_equal(ffn_compute_part(fx.m, 0, 4, 3, xp, yp, 1, s),
			 -EINVAL);	/* reversed */
	assert_int_equal(ffn_compute_part(fx.m, 0, 0, 11, xp, yp, 1, s),
			 -EINVAL);	/* past nf */
	assert_int_equal(ffn_compute_part(fx.m, 0, 0, 10, xp, yp, 1, NULL),
			 -EINVAL);
	assert_int_equal(ffn_compute_part(fx.m, 1, 0, 10, xp, yp, 1, s),
			 -ERANGE);	/* layer not owned */
	assert_int_equal(ffn_compute_part(fx.m, 0, 9, 10, xp, yp, 1, s), 0);
	assert_int_equal(ffn_part_range(fx.m, 0, 2, 2, &f0, &f1), -EINVAL);
	assert_int_equal(ffn_part_range(fx.m, 0, 0, 0, &f0, &f1), -EINVAL);
	assert_int_equal(ffn_part_range(fx.m, 1, 0, 2, &f0, &f1), -ERANGE);
	assert_int_equal(ffn_part_align(fx.m, 0), 1);
	assert_int_equal(ffn_part_align(fx.m, 1), 0);
	/* 10 features in 3 slices: 4, 3, 3 */
	assert_int_equal(ffn_part_range(fx.m, 0, 0, 3, &f0, &f1), 0);
	assert_true(f0 == 0 && f1 == 4);
	assert_int_equal(ffn_part_range(fx.m, 0, 2, 3, &f0, &f1), 0);
	assert_true(f0 == 7 && f1 == 10);
	ffn_scratch_free(s);
	fx_free(&fx);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_partitions),
		cmocka_unit_test(test_single_features),
		cmocka_unit_test(test_in_place),
		cmocka_unit_test(test_bad_ranges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
