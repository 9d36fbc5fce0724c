/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * lib/ffn compute: the hand-checkable model of spec/vindex.md §3, random
 * models against a double-precision reference, features mode.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <numa.h>

#include "ffn.h"
#include "ffn_test_util.h"
#include "vindex_write.h"

static const enum vw_layout layouts[] = {
	VW_FEATURE_MAJOR, VW_INTERLEAVED, VW_DENSE,
};
static const enum ffn_layout ffn_layouts[] = {
	FFN_LAYOUT_FEATURE_MAJOR, FFN_LAYOUT_INTERLEAVED, FFN_LAYOUT_DENSE,
};

/* spec/vindex.md §3 table, x = [1, -2, 0.5, 3]. */
static const float ex_x[4] = { 1, -2, 0.5f, 3 };
static const float ex_silu[2][4] = {
	{ 1.827646f, 0.9536234f, -6.794814f, -4.013545f },
	{ 0.6224593f, 0, 0.6131809f, -8.573167f },
};
static const float ex_gelu[2][4] = {
	{ 2.102980f, 0.1816092f, -6.998768f, -4.714178f },
	{ 0.6914280f, 0, 0.6997858f, -8.989088f },
};

/*
 * Tolerance for the §3 table: the table has 7 significant digits (rounding
 * error <= 5e-7 at |v| < 10) and f32 evaluation adds a few ulp of
 * |v| < 10 (~1e-6); 4e-6 absolute covers both with margin, while any
 * wrong weight or activation moves a value by > 1e-2.
 */
#define EX_TOL 4e-6f

static void
select_best(void)
{
	int isa;

	for (isa = FFN_ISA_COUNT - 1; isa >= 0; isa--)
		if (ffn_select_isa(isa) == 0)
			return;
}

static struct ffn_model *
load_dir(const char *dir, const struct ffn_load_opts *o)
{
	struct ffn_model *m = NULL;
	char err[512];
	int rc = ffn_model_load(dir, o, &m, err, sizeof(err));

	if (rc != 0)
		fail_msg("load %s: %d %s", dir, rc, err);
	return m;
}

static void
check_example(const char *dir, const char *family, int f16, int li)
{
	const float (*want)[4] = strcmp(family, "gemma3") ? ex_silu : ex_gelu;
	int isa, eng;

	for (isa = 0; isa < FFN_ISA_COUNT; isa++) {
		if (!ffn_isa_supported(isa))
			continue;
		assert_int_equal(ffn_select_isa(isa), 0);
		for (eng = FFN_ENGINE_KERNEL; eng <= FFN_ENGINE_BLAS; eng++) {
			struct ffn_model *m = load_dir(dir, NULL);
			struct ffn_scratch *s = ffn_scratch_new(m, 4, -1);
			const struct ffn_info *in = ffn_model_info(m);
			float y[3][4], zero[4] = { 0 };
			const float *xs[3] = { ex_x, zero, ex_x };
			float *ys[3] = { y[0], y[1], y[2] };
			unsigned L;
			int h;

			assert_non_null(s);
			assert_int_equal(in->layout, ffn_layouts[li]);
			assert_int_equal(in->act, strcmp(family, "gemma3") ?
					 FFN_ACT_SILU : FFN_ACT_GELU_TANH);
			assert_string_equal(in->dtype, f16 ? "f16" : "f32");
			ffn_model_set_engine(m, eng, 0);
			for (L = 0; L < 2; L++) {
				/* one row, then a batch of 3 with a zero row */
				assert_int_equal(ffn_compute(m, L, xs, ys, 1,
							     s), 0);
				for (h = 0; h < 4; h++)
					assert_float_equal(y[0][h], want[L][h],
							   EX_TOL);
				memset(y, 0x7f, sizeof(y));
				assert_int_equal(ffn_compute(m, L, xs, ys, 3,
							     s), 0);
				for (h = 0; h < 4; h++) {
					assert_float_equal(y[0][h], want[L][h],
							   EX_TOL);
					assert_true(y[1][h] == 0.0f);
					assert_float_equal(y[2][h], want[L][h],
							   EX_TOL);
				}
			}
			ffn_scratch_free(s);
			ffn_model_free(m);
		}
	}
	select_best();
}

/* vindex.md §3: every layout, both activations, f32 and f16 files. */
static void
test_example_table(void **state)
{
	static const char *const fams[] = { "llama", "gemma3" };
	char dir[64];
	int li, fi, f16;

	(void)state;
	for (li = 0; li < 3; li++)
		for (fi = 0; fi < 2; fi++)
			for (f16 = 0; f16 < 2; f16++) {
				struct vw_opts o;
				char err[256];

				vw_defaults(&o);
				o.example = 1;
				o.layout = layouts[li];
				o.model_type = o.family = fams[fi];
				o.f16 = f16;	/* §3 values are exact in f16 */
				assert_non_null(tu_tmpdir(dir, sizeof(dir)));
				assert_int_equal(vw_write(dir, &o, err,
							  sizeof(err)), 0);
				check_example(dir, fams[fi], f16, li);
				tu_rmtree(dir);
			}
}

/* ---- random models against a double reference ---- */

static double
act_d(int gelu, double g)
{
	if (gelu)
		return 0.5 * g * (1 + tanh(0.7978846 * (g + 0.044715 * g * g * g)));
	return g / (1 + exp(-g));
}

/*
 * Reference y (double) and a per-element error bound for an f32
 * evaluation. With gamma_n = n*eps (eps = 2^-24, the classic bound of
 * summing n products in f32 in any order):
 *   |dg_f| <= gamma_H * Σ_h |G_fh x_h| (= Sg_f), likewise du_f with Su_f;
 *   |da_f| <= 1.2 |u_f| dg_f + |act(g_f)| du_f + 8 eps |a_f|
 *     (|act'| <= 1.13 for SiLU and GELU-tanh; activation and product
 *     roundings a few eps);
 *   |dy_h| <= Σ_f |D_hf| da_f + gamma_nf Σ_f |D_hf a_f|.
 * Weights are compared as stored (f16 files: the f16 values), so weight
 * rounding is not an error. Doubled for second-order terms. Real errors
 * are ~sqrt(n) smaller; a wrong weight, row or activation is off by
 * orders of magnitude more.
 */
static void
reference(const struct vw_opts *o, unsigned L, int gelu, const float *x,
	  double *y, double *tol)
{
	unsigned H = o->hidden, nf = vw_nf(o, L), f, h;
	float *G = malloc((size_t)nf * H * 4), *U = malloc((size_t)nf * H * 4);
	float *D = malloc((size_t)nf * H * 4);
	double *a = calloc(nf, sizeof(double)), *da = calloc(nf, sizeof(double));
	const double eps = 0x1p-24;

	assert_true(G && U && D && a && da);
	vw_layer(o, L, G, U, D);
	for (f = 0; f < nf; f++) {
		double g = 0, u = 0, sg = 0, su = 0;

		for (h = 0; h < H; h++) {
			g += (double)G[f * H + h] * x[h];
			u += (double)U[f * H + h] * x[h];
			sg += fabs((double)G[f * H + h] * x[h]);
			su += fabs((double)U[f * H + h] * x[h]);
		}
		a[f] = act_d(gelu, g) * u;
		da[f] = 1.2 * fabs(u) * H * eps * sg +
			fabs(act_d(gelu, g)) * H * eps * su +
			8 * eps * fabs(a[f]);
	}
	for (h = 0; h < H; h++) {
		double s = 0, bound = 0, abs_sum = 0;

		for (f = 0; f < nf; f++) {
			double d = D[(size_t)h * nf + f];

			s += d * a[f];
			bound += fabs(d) * da[f];
			abs_sum += fabs(d * a[f]);
		}
		y[h] = s;
		tol[h] = 2 * (bound + nf * eps * abs_sum) + 1e-30;
	}
	free(G);
	free(U);
	free(D);
	free(a);
	free(da);
}

static void
random_rows(float *x, unsigned R, unsigned H, uint64_t seed)
{
	unsigned h;

	vw_normal(x, (size_t)R * H, 1.0f, seed);
	for (h = 0; h < H; h += 11)
		x[h] *= 8.0f;	/* a few large channels, as in residuals */
}

/* Compute R = 1..NR rows of each layer (NR 17), or only the batches of
 * Rs (NR: the largest); compare with the reference. */
static void
check_rows(const struct vw_opts *o, const char *dir, int gelu,
	   enum ffn_engine eng, unsigned max_rows, const unsigned *Rs,
	   unsigned nRs, unsigned NR)
{
	struct ffn_model *m = load_dir(dir, NULL);
	struct ffn_scratch *s = ffn_scratch_new(m, max_rows, -1);
	unsigned H = o->hidden, L, R, r, h;
	float *x = malloc((size_t)NR * H * 4), *y = malloc((size_t)NR * H * 4);
	double *ref = malloc((size_t)NR * H * 8);
	double *tol = malloc((size_t)NR * H * 8);
	const float **xp = malloc(NR * sizeof(*xp));
	float **yp = malloc(NR * sizeof(*yp));
	unsigned i;

	assert_true(s && x && y && ref && tol && xp && yp);
	ffn_model_set_engine(m, eng, 0);
	for (L = 0; L < o->layers; L++) {
		random_rows(x, NR, H, 100 + L);
		for (r = 0; r < NR; r++)
			reference(o, L, gelu, x + r * H, ref + r * H,
				  tol + r * H);
		for (i = 0; i < (Rs ? nRs : NR); i++) {
			R = Rs ? Rs[i] : i + 1;
			/* rows in scrambled order: any pointers are fine */
			for (r = 0; r < R; r++) {
				unsigned k = r % 2 ? R - 1 - r / 2 : r / 2;

				xp[r] = x + k * H;
				yp[r] = y + k * H;
			}
			memset(y, 0xff, (size_t)NR * H * 4);
			assert_int_equal(ffn_compute(m, L, xp, yp, R, s), 0);
			for (r = 0; r < R; r++)
				for (h = 0; h < H; h++) {
					double d = fabs(y[r * H + h] -
							ref[r * H + h]);

					if (!(d <= tol[r * H + h]))
						fail_msg("isa %s eng %d L %u R %u row %u h %u: %.9g vs %.9g (tol %.3g)",
							 ffn_isa_name(ffn_active_isa()),
							 eng, L, R, r, h,
							 y[r * H + h],
							 ref[r * H + h],
							 tol[r * H + h]);
				}
		}
	}
	free(x);
	free(y);
	free(ref);
	free(tol);
	free(xp);
	free(yp);
	ffn_scratch_free(s);
	ffn_model_free(m);
}

static void
check_random(const struct vw_opts *o, const char *dir, int gelu,
	     enum ffn_engine eng, unsigned max_rows)
{
	check_rows(o, dir, gelu, eng, max_rows, NULL, 0, 17);
}

/*
 * Widths differ per layer (19 and 33 leave rows over after the one-row
 * kernels' 4 streams). H = 37, 61 and 64 exercise vector tails: 61 also
 * takes the single-vector step between the two-vector loop and the tail
 * (AVX-512: 32 + 16 + 13; AVX2: 48 + 8 + 5).
 */
static void
test_random_vs_double(void **state)
{
	static const unsigned widths[3] = { 19, 40, 33 };
	static const unsigned hiddens[3] = { 37, 61, 64 };
	char dir[64];
	int hi, li, f16, gelu, isa;

	(void)state;
	for (hi = 0; hi < 3; hi++)
		for (li = 0; li < 3; li++)
			for (f16 = 0; f16 < 2; f16++)
				for (gelu = 0; gelu < 2; gelu++) {
					struct vw_opts o;
					char err[256];

					vw_defaults(&o);
					o.hidden = hiddens[hi];
					o.layers = 3;
					o.widths = widths;
					o.layout = layouts[li];
					o.f16 = f16;
					o.model_type = gelu ? "gemma3" : "llama";
					o.seed = 7 + hi * 100 + li * 10 + f16;
					assert_non_null(tu_tmpdir(dir,
								  sizeof(dir)));
					assert_int_equal(vw_write(dir, &o, err,
								  sizeof(err)),
							 0);
					for (isa = 0; isa < FFN_ISA_COUNT;
					     isa++) {
						if (ffn_select_isa(isa) != 0)
							continue;
						check_random(&o, dir, gelu,
							     FFN_ENGINE_KERNEL,
							     17);
					}
					select_best();
					/* OpenBLAS (f32 layouts; f16 falls
					 * back to our kernels) */
					check_random(&o, dir, gelu,
						     FFN_ENGINE_BLAS, 17);
					/* passes of 5 rows: 17 = 5+5+5+2 */
					check_random(&o, dir, gelu,
						     FFN_ENGINE_AUTO, 5);
					tu_rmtree(dir);
				}
}

/*
 * Batches past 16 rows take the rows-in-lanes kernels (mm_pack, matmat,
 * mm_down): whole and partial row vectors, one and several sweeps,
 * feature blocks with a partial last one (nf 150), both activations,
 * f32 and f16, every kernel set, against the double reference, in one
 * pass and in passes of 48 rows.
 */
static void
test_batches_vs_double(void **state)
{
	static const unsigned Rs[] = { 16, 17, 24, 31, 48, 64, 65, 100, 130 };
	static const unsigned widths[2] = { 150, 37 };
	char dir[64];
	int f16, gelu, isa;

	(void)state;
	for (f16 = 0; f16 < 2; f16++)
		for (gelu = 0; gelu < 2; gelu++) {
			struct vw_opts o;
			char err[256];

			vw_defaults(&o);
			o.hidden = 77;
			o.layers = 2;
			o.widths = widths;
			o.layout = VW_FEATURE_MAJOR;
			o.f16 = f16;
			o.model_type = gelu ? "gemma3" : "llama";
			o.seed = 11 + f16 * 2 + gelu;
			assert_non_null(tu_tmpdir(dir, sizeof(dir)));
			assert_int_equal(vw_write(dir, &o, err, sizeof(err)),
					 0);
			for (isa = 0; isa < FFN_ISA_COUNT; isa++) {
				if (ffn_select_isa(isa) != 0)
					continue;
				check_rows(&o, dir, gelu, FFN_ENGINE_KERNEL,
					   130, Rs, 9, 130);
				check_rows(&o, dir, gelu, FFN_ENGINE_KERNEL,
					   48, Rs, 9, 130);
			}
			select_best();
			tu_rmtree(dir);
		}
}

/* A layer subset locates layers by prefix sums of the earlier widths. */
static void
test_layer_subset_and_mmap(void **state)
{
	static const unsigned widths[4] = { 24, 17, 50, 9 };
	char dir[64], err[256];
	int li, pl;

	(void)state;
	for (li = 0; li < 3; li++)
		for (pl = 0; pl < 2; pl++) {
			struct vw_opts o;
			struct ffn_load_opts lo;
			struct ffn_model *m;
			struct ffn_scratch *s;
			const struct ffn_info *in;
			float x[3 * 40], y[3 * 40];
			double ref[40], tol[40];
			unsigned L, r, h;

			vw_defaults(&o);
			o.hidden = 40;
			o.layers = 4;
			o.widths = widths;
			o.layout = layouts[li];
			o.f16 = 1;
			assert_non_null(tu_tmpdir(dir, sizeof(dir)));
			assert_int_equal(vw_write(dir, &o, err, sizeof(err)), 0);
			ffn_load_opts_default(&lo);
			lo.first_layer = 1;
			lo.last_layer = 2;
			lo.placement = pl ? FFN_PLACE_MMAP : FFN_PLACE_COPY;
			m = load_dir(dir, &lo);
			in = ffn_model_info(m);
			assert_int_equal(in->first_layer, 1);
			assert_int_equal(in->last_layer, 2);
			assert_int_equal(in->max_features, 50);
			assert_int_equal(in->num_layers, 4);
			assert_int_equal(in->placement, lo.placement);
			if (pl) {
				assert_int_equal(in->pages, FFN_PAGES_FILE);
			} else {
				/* copied: some page size was obtained, on
				 * the local node when the system has NUMA */
				assert_true(in->pages == FFN_PAGES_NORMAL ||
					    in->pages == FFN_PAGES_THP ||
					    in->pages == FFN_PAGES_HUGETLB);
				if (numa_available() >= 0)
					assert_true(in->numa_node >= 0);
			}
			/* gate f16 always; up/down f16 only in §2.3 */
			assert_int_equal(in->bytes_loaded,
					 (17 + 50) * 40 *
					 (li == 0 ? 2 + 4 + 4 :
					  li == 1 ? 12 : 6));
			assert_null(ffn_model_layer(m, 0));
			assert_null(ffn_model_layer(m, 3));
			assert_int_equal(ffn_model_layer(m, 2)->nf, 50);
			s = ffn_scratch_new(m, 3, -1);
			assert_non_null(s);
			random_rows(x, 3, 40, 5);
			assert_int_equal(ffn_compute_strided(m, 0, x, 40, y, 40,
							     1, s), -ERANGE);
			assert_int_equal(ffn_compute_strided(m, 3, x, 40, y, 40,
							     1, s), -ERANGE);
			for (L = 1; L <= 2; L++) {
				float xi[3 * 40];

				random_rows(x, 3, 40, 50 + L);
				memcpy(xi, x, sizeof(x));
				/* in place: y rows are the x rows */
				assert_int_equal(ffn_compute_strided(m, L, xi,
								     40, xi, 40,
								     3, s), 0);
				for (r = 0; r < 3; r++) {
					reference(&o, L, 0, x + r * 40, ref,
						  tol);
					for (h = 0; h < 40; h++)
						assert_true(fabs(xi[r * 40 + h] -
								 ref[h]) <=
							    tol[h]);
				}
			}
			ffn_scratch_free(s);
			ffn_model_free(m);
			tu_rmtree(dir);
		}
}

/* spec/wire.md §6: |gate·x| descending, ties by lower id, signed scores. */
static void
test_features_order(void **state)
{
	struct vw_opts o;
	struct ffn_model *m;
	struct ffn_scratch *s;
	char dir[64], err[256];
	uint32_t ids[8];
	float sc[8];
	const float x1[4] = { 2, 0, 0, -2 };
	int isa;

	(void)state;
	vw_defaults(&o);
	o.example = 1;
	assert_non_null(tu_tmpdir(dir, sizeof(dir)));
	assert_int_equal(vw_write(dir, &o, err, sizeof(err)), 0);
	m = load_dir(dir, NULL);
	s = ffn_scratch_new(m, 1, -1);
	assert_non_null(s);
	for (isa = 0; isa < FFN_ISA_COUNT; isa++) {
		if (ffn_select_isa(isa) != 0)
			continue;
		/* layer 0: G·x = [1, -2, 3.5] */
		assert_int_equal(ffn_features(m, 0, ex_x, 8, ids, sc, s), 3);
		assert_int_equal(ids[0], 2);
		assert_int_equal(ids[1], 1);
		assert_int_equal(ids[2], 0);
		assert_true(sc[0] == 3.5f && sc[1] == -2.0f && sc[2] == 1.0f);
		/* layer 1, x1: G·x = [1, -1, 2]: tie |1| -> id 0 before 1 */
		assert_int_equal(ffn_features(m, 1, x1, 3, ids, sc, s), 3);
		assert_int_equal(ids[0], 2);
		assert_int_equal(ids[1], 0);
		assert_int_equal(ids[2], 1);
		assert_true(sc[0] == 2.0f && sc[1] == 1.0f && sc[2] == -1.0f);
		/* top_k < nf truncates */
		assert_int_equal(ffn_features(m, 1, x1, 1, ids, sc, s), 1);
		assert_int_equal(ids[0], 2);
		assert_int_equal(ffn_features(m, 5, x1, 1, ids, sc, s),
				 -ERANGE);
	}
	select_best();
	ffn_scratch_free(s);
	ffn_model_free(m);
	tu_rmtree(dir);
}

/* Features mode on a wider random layer: a total order, scores = G·x. */
static void
test_features_random(void **state)
{
	struct vw_opts o;
	struct ffn_model *m;
	struct ffn_scratch *s;
	char dir[64], err[256];
	uint32_t ids[300];
	float sc[300], x[37], *G, *U, *D;
	uint8_t seen[300];
	int isa, n, i;

	(void)state;
	vw_defaults(&o);
	o.hidden = 37;
	o.intermediate = 300;
	o.layers = 1;
	o.f16 = 1;
	assert_non_null(tu_tmpdir(dir, sizeof(dir)));
	assert_int_equal(vw_write(dir, &o, err, sizeof(err)), 0);
	G = malloc(300 * 37 * 4);
	U = malloc(300 * 37 * 4);
	D = malloc(300 * 37 * 4);
	assert_true(G && U && D);
	vw_layer(&o, 0, G, U, D);
	random_rows(x, 1, 37, 3);
	m = load_dir(dir, NULL);
	s = ffn_scratch_new(m, 1, -1);
	assert_non_null(s);
	for (isa = 0; isa < FFN_ISA_COUNT; isa++) {
		if (ffn_select_isa(isa) != 0)
			continue;
		n = ffn_features(m, 0, x, 8092, ids, sc, s);
		assert_int_equal(n, 300);
		memset(seen, 0, sizeof(seen));
		for (i = 0; i < n; i++) {
			double ref = 0, bound = 0;
			int h;

			assert_true(ids[i] < 300 && !seen[ids[i]]);
			seen[ids[i]] = 1;
			for (h = 0; h < 37; h++) {
				ref += (double)G[ids[i] * 37 + h] * x[h];
				bound += fabs((double)G[ids[i] * 37 + h] * x[h]);
			}
			/* f32 dot of 37 terms: |err| <= 37 eps Σ|terms| */
			assert_true(fabs(sc[i] - ref) <= 37 * 0x1p-24 * bound);
			if (i > 0)
				assert_true(fabsf(sc[i - 1]) > fabsf(sc[i]) ||
					    (fabsf(sc[i - 1]) == fabsf(sc[i]) &&
					     ids[i - 1] < ids[i]));
		}
		/* top_k 10 is the head of the full order */
		assert_int_equal(ffn_features(m, 0, x, 10, ids + 100, sc, s),
				 10);
		assert_memory_equal(ids + 100, ids, 10 * sizeof(uint32_t));
	}
	select_best();
	free(G);
	free(U);
	free(D);
	ffn_scratch_free(s);
	ffn_model_free(m);
	tu_rmtree(dir);
}

/* ffn_model_wrap: caller-owned weights (as bench-ffn uses) compute alike. */
static void
test_wrap(void **state)
{
	struct vw_opts o;
	struct ffn_layer ly[2];
	struct ffn_model *m;
	struct ffn_scratch *s;
	float G[2][12], U[2][12], Wd[12], D[2][12], y[4];
	unsigned L, f, h;

	(void)state;
	vw_defaults(&o);
	o.example = 1;
	memset(ly, 0, sizeof(ly));
	for (L = 0; L < 2; L++) {
		vw_layer(&o, L, G[L], U[L], Wd);
		for (f = 0; f < 3; f++)	/* down feature-major: Wdᵀ */
			for (h = 0; h < 4; h++)
				D[L][f * 4 + h] = Wd[h * 3 + f];
		ly[L].nf = 3;
		ly[L].gate = (struct ffn_mat){ G[L], 16, 3, 4, FFN_DT_F32 };
		ly[L].up = (struct ffn_mat){ U[L], 16, 3, 4, FFN_DT_F32 };
		ly[L].down = (struct ffn_mat){ D[L], 16, 3, 4, FFN_DT_F32 };
	}
	assert_int_equal(ffn_model_wrap(4, FFN_ACT_GELU_TANH, ly, 2, &m), 0);
	assert_int_equal(ffn_model_info(m)->max_features, 3);
	s = ffn_scratch_new(m, 1, -1);
	assert_non_null(s);
	for (L = 0; L < 2; L++) {
		assert_int_equal(ffn_compute_strided(m, L, ex_x, 4, y, 4, 1, s),
				 0);
		for (h = 0; h < 4; h++)
			assert_float_equal(y[h], ex_gelu[L][h], EX_TOL);
	}
	assert_int_equal(ffn_compute_strided(m, 2, ex_x, 4, y, 4, 1, s),
			 -ERANGE);
	ffn_scratch_free(s);
	ffn_model_free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_table),
		cmocka_unit_test(test_random_vs_double),
		cmocka_unit_test(test_batches_vs_double),
		cmocka_unit_test(test_layer_subset_and_mmap),
		cmocka_unit_test(test_features_order),
		cmocka_unit_test(test_features_random),
		cmocka_unit_test(test_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
