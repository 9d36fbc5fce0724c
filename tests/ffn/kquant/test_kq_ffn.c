/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The K-quant payload through the ffn_model API (spec/vindex.md §2.4):
 * a vindex written by mkvindex --quant q4k (H = 300, widths 200 and 100,
 * so every last block is partial) is loaded by ffn_model_load and computed
 * by ffn_compute; the result is checked against the f32 weights it was
 * quantised from, for both Q6_K arrangements, both placements and both
 * paths; wrong arrangement, missing payload and bad manifests are refused.
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
static const unsigned widths[2] = { 200, 100 };
static char dir_priv[64], dir_ggml[64];

static struct vw_opts
opts(void)
{
	return kq_fixture_opts(H, 2, widths, 5);
}

static int
setup(void **state)
{
	struct vw_opts o = opts();

	(void)state;
	if (kq_fixture_write(dir_priv, sizeof(dir_priv), "kq-ffn", &o,
			     FFN_KQ_Q6_PRIVATE))
		return -1;
	return kq_fixture_write(dir_ggml, sizeof(dir_ggml), "kq-ffn", &o,
				FFN_KQ_Q6_GGML);
}

static int
teardown(void **state)
{
	(void)state;
	kq_fixture_remove(dir_priv);
	kq_fixture_remove(dir_ggml);
	return 0;
}

/* Relative L2 distance of ffn_compute (layer L, one x) from the f32
 * weights' exact result. */
static double
rel_err(struct ffn_model *m, unsigned L, const float *x, float *y)
{
	struct vw_opts o = opts();
	unsigned nf = widths[L];
	float *G = malloc(nf * H * 4), *U = malloc(nf * H * 4);
	float *Wd = malloc(nf * H * 4);
	double *a = malloc(nf * sizeof(double)), num = 0, den = 0;
	struct ffn_scratch *s = ffn_scratch_new(m, 4, -1);
	const float *xp[1] = { x };
	float *yp[1] = { y };

	assert_non_null(s);
	assert_int_equal(ffn_compute(m, L, xp, yp, 1, s), 0);
	vw_layer(&o, L, G, U, Wd);
	for (unsigned f = 0; f < nf; f++) {
		double g = 0, u = 0;

		for (unsigned h = 0; h < H; h++) {
			g += (double)G[f * H + h] * x[h];
			u += (double)U[f * H + h] * x[h];
		}
		a[f] = g / (1 + exp(-g)) * u;
	}
	for (unsigned h = 0; h < H; h++) {
		double r = 0;

		for (unsigned f = 0; f < nf; f++)
			r += (double)Wd[h * nf + f] * a[f];
		num += (y[h] - r) * (y[h] - r);
		den += r * r;
	}
	ffn_scratch_free(s);
	free(G); free(U); free(Wd); free(a);
	return sqrt(num / den);
}

static void
fill_x(float *x)
{
	for (int h = 0; h < H; h++)
		x[h] = (float)sin(0.37 * h + 1.0) * 2.0f;
}

static void
test_load_compute(void **state)
{
	float x[H], y[H];
	char err[256];

	(void)state;
	fill_x(x);
	for (int lay = 0; lay < 2; lay++)
		for (int place = 0; place < 2; place++)
			for (int q8 = 0; q8 < 2; q8++) {
				struct ffn_load_opts o;
				struct ffn_model *m;
				const struct ffn_info *in;

				ffn_load_opts_default(&o);
				o.placement = place ? FFN_PLACE_MMAP
						    : FFN_PLACE_COPY;
				o.q6k_ggml = lay;
				assert_int_equal(ffn_model_load(lay ? dir_ggml :
					dir_priv, &o, &m, err, sizeof(err)), 0);
				ffn_model_set_kq_q8k(m, q8);
				in = ffn_model_info(m);
				assert_int_equal(in->layout, FFN_LAYOUT_Q4K);
				assert_int_equal(in->q6k_ggml, lay);
				assert_int_equal(ffn_model_layer(m, 1)->down.dtype,
						 FFN_DT_Q6K);
				/* gate/up 2 x nf x 2 blocks x 144, down
				 * H x 1 block x 210, per layer */
				assert_int_equal(in->bytes_loaded,
					2 * 300 * 2 * 144 + 2 * 300 * 210);
				for (unsigned L = 0; L < 2; L++) {
					double e = rel_err(m, L, x, y);

					/* 4- and 6-bit weights (and 8-bit
					 * inputs): a few per cent */
					/* min/max 4-bit blocks of N(0, 1/H)
					 * weights: step ~ 5 sigma / 15, so
					 * ~10% rms per dot; three matrices */
					if (e >= 0.2)
						print_error("q6 %d place %d q8k "
							"%d layer %u: %.4f\n",
							lay, place, q8, L, e);
					assert_true(e < 0.2);
				}
				ffn_model_free(m);
			}
}

/* The arrangement matters: ggml blocks read as LARQL-private are wrong. */
static void
test_wrong_arrangement(void **state)
{
	float x[H], y[H];
	struct ffn_model *m;
	char err[256];

	(void)state;
	fill_x(x);
	assert_int_equal(ffn_model_load(dir_ggml, NULL, &m, err, sizeof(err)),
			 0);
	assert_true(rel_err(m, 0, x, y) > 1.0);
	assert_true(rel_err(m, 1, x, y) > 1.0);
	ffn_model_free(m);
}

/* In place, several rows, arbitrary row pointers: as row by row. */
static void
test_rows_in_place(void **state)
{
	float x[3][H], y1[3][H];
	struct ffn_model *m;
	struct ffn_scratch *s;
	char err[256];
	const float *xp[3];
	float *yp[3];

	(void)state;
	assert_int_equal(ffn_model_load(dir_priv, NULL, &m, err, sizeof(err)),
			 0);
	s = ffn_scratch_new(m, 2, -1);	/* 3 rows: two passes */
	assert_non_null(s);
	for (int r = 0; r < 3; r++) {
		for (int h = 0; h < H; h++)
			x[r][h] = (float)cos(0.11 * h * (r + 1));
		xp[0] = x[r];
		yp[0] = y1[r];
		assert_int_equal(ffn_compute(m, 1, xp, yp, 1, s), 0);
	}
	for (int r = 0; r < 3; r++) {
		xp[r] = x[2 - r];
		yp[r] = x[2 - r];	/* in place, reversed */
	}
	assert_int_equal(ffn_compute(m, 1, xp, yp, 3, s), 0);
	/* passes of 2 rows use the shared-block kernel, single rows the
	 * factored one: equal within rounding (ffn_kq.h) */
	for (int r = 0; r < 3; r++) {
		float mx = 0;

		for (int h = 0; h < H; h++)
			mx = fmaxf(mx, fabsf(y1[r][h]));
		assert_true(mx > 0.01f);
		for (int h = 0; h < H; h++)
			assert_true(fabsf(x[r][h] - y1[r][h]) <= 1e-5f * mx);
	}
	ffn_scratch_free(s);
	ffn_model_free(m);
}

/* Features mode ranks the K-quant gate dots. */
static void
test_features(void **state)
{
	float x[H], sc[5];
	uint32_t ids[5];
	struct ffn_model *m;
	struct ffn_scratch *s;
	char err[256];

	(void)state;
	fill_x(x);
	assert_int_equal(ffn_model_load(dir_priv, NULL, &m, err, sizeof(err)),
			 0);
	s = ffn_scratch_new(m, 1, -1);
	assert_int_equal(ffn_features(m, 0, x, 5, ids, sc, s), 5);
	for (int i = 1; i < 5; i++)
		assert_true(fabsf(sc[i - 1]) >= fabsf(sc[i]));
	ffn_scratch_free(s);
	ffn_model_free(m);
}

static void
test_refused(void **state)
{
	struct ffn_load_opts o;
	struct ffn_model *m;
	char err[256], p[160], *buf;
	FILE *f;
	long n;

	(void)state;
	/* quant q4k: no other layout may serve */
	ffn_load_opts_default(&o);
	o.layout = FFN_LAYOUT_DENSE;
	assert_int_equal(ffn_model_load(dir_priv, &o, &m, err, sizeof(err)),
			 FFN_ERR_KQUANT);
	assert_non_null(strstr(err, "q4k"));
	/* a manifest entry with the wrong shape is named */
	snprintf(p, sizeof(p), "%s/%s", dir_priv, FFN_KQ_MANIFEST_NAME);
	f = fopen(p, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	assert_int_equal(fread(buf, 1, n, f), n);
	fclose(f);
	{
		char *bad = strdup(buf), *at = strstr(bad, "[100, 512]");

		assert_non_null(at);
		memcpy(at, "[101, 512]", 10);
		f = fopen(p, "w");
		fputs(bad, f);
		fclose(f);
		free(bad);
	}
	assert_int_equal(ffn_model_load(dir_priv, NULL, &m, err, sizeof(err)),
			 FFN_ERR_KQUANT);
	assert_non_null(strstr(err, "entry 3 (layer 1 gate)"));
	/* owning only layer 0 does not excuse layer 1's entry */
	o.layout = FFN_LAYOUT_AUTO;
	o.first_layer = o.last_layer = 0;
	assert_int_equal(ffn_model_load(dir_priv, &o, &m, err, sizeof(err)),
			 FFN_ERR_KQUANT);
	f = fopen(p, "w");
	fputs(buf, f);
	fclose(f);
	free(buf);
	assert_int_equal(ffn_model_load(dir_priv, &o, &m, err, sizeof(err)),
			 0);
	assert_null(ffn_model_layer(m, 1));
	ffn_model_free(m);
	/* payload missing */
	snprintf(p, sizeof(p), "%s/%s", dir_ggml, FFN_KQ_BIN_NAME);
	unlink(p);
	assert_int_equal(ffn_model_load(dir_ggml, NULL, &m, err, sizeof(err)),
			 FFN_ERR_KQUANT);
	assert_non_null(strstr(err, FFN_KQ_BIN_NAME));
}

/* Rows that arrive in Q8_K: K-quant layers give the same bytes as the
 * integer path on f32 rows; dense layers as their dequantised rows. */
static void
test_compute_q8k(void **state)
{
	size_t qb = FFN_KQ_NBLOCKS(H) * FFN_KQ_Q8K_BYTES;
	uint8_t *xq = malloc(3 * qb);
	float x[3][H], xd[3][H], y[3][H], y2[3][H];
	const float *xp[3] = { x[0], x[1], x[2] };
	const float *xdp[3] = { xd[0], xd[1], xd[2] };
	float *yp[3] = { y[0], y[1], y[2] }, *y2p[3] = { y2[0], y2[1], y2[2] };
	struct vw_opts o = opts();
	struct ffn_model *m;
	struct ffn_scratch *s;
	char err[256], dd[64];

	(void)state;
	for (int r = 0; r < 3; r++) {
		for (int h = 0; h < H; h++)
			x[r][h] = (float)sin(0.29 * h * (r + 1) + r);
		ffn_kq_quantize_q8k(x[r], H, xq + r * qb);
		ffn_kq_dequant_q8k(xq + r * qb, H, xd[r]);
	}
	assert_int_equal(ffn_model_load(dir_priv, NULL, &m, err, sizeof(err)),
			 0);
	ffn_model_set_kq_q8k(m, 1);
	s = ffn_scratch_new(m, 2, -1);
	assert_int_equal(ffn_compute(m, 0, xp, yp, 3, s), 0);
	assert_int_equal(ffn_compute_q8k(m, 0, xq, y2p, 3, s), 0);
	assert_memory_equal(y, y2, sizeof(y));
	assert_int_equal(ffn_compute_q8k(m, 2, xq, y2p, 3, s), -ERANGE);
	ffn_scratch_free(s);
	ffn_model_free(m);
	/* a dense vindex of the same shape */
	strcpy(dd, "/tmp/kq-dense-XXXXXX");
	assert_non_null(mkdtemp(dd));
	o.layout = VW_FEATURE_MAJOR;
	assert_int_equal(vw_write(dd, &o, err, sizeof(err)), 0);
	assert_int_equal(ffn_model_load(dd, NULL, &m, err, sizeof(err)), 0);
	s = ffn_scratch_new(m, 2, -1);
	assert_int_equal(ffn_compute(m, 1, xdp, yp, 3, s), 0);
	assert_int_equal(ffn_compute_q8k(m, 1, xq, y2p, 3, s), 0);
	assert_memory_equal(y, y2, sizeof(y));
	ffn_scratch_free(s);
	ffn_model_free(m);
	kq_fixture_remove(dd);
	free(xq);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_compute),
		cmocka_unit_test(test_wrong_arrangement),
		cmocka_unit_test(test_rows_in_place),
		cmocka_unit_test(test_features),
		cmocka_unit_test(test_compute_q8k),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
