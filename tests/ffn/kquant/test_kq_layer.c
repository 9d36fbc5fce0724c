/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * K-quant layer compute (spec/wire.md §1 over spec/vindex.md §2.4) and the
 * interleaved_q4k loader: sizes that are not multiples of 256, both
 * activations and Q6_K arrangements, the Q8_K path, and the manifest
 * checks with their messages.
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

#include "ffn_kq.h"
#include "kq_test_util.h"

#define H 300
#define NF0 200
#define NF1 100

struct qlayer {
	uint8_t *g, *u, *d;
	size_t gl, ul, dl;
	struct ffn_kq_layer l;
};

static void
make_layer(uint64_t *rng, struct qlayer *q, uint32_t nf, uint32_t hid,
	   enum ffn_kq_fmt down_fmt, enum ffn_kq_q6_layout lay)
{
	float *row = malloc(FFN_KQ_PAD256(nf > hid ? nf : hid) * sizeof(float));
	size_t rg = ffn_kq_row_bytes(FFN_KQ_Q4_K, hid);
	size_t rd = ffn_kq_row_bytes(down_fmt, nf);

	q->gl = q->ul = nf * rg;
	q->dl = hid * rd;
	q->g = malloc(q->gl);
	q->u = malloc(q->ul);
	q->d = malloc(q->dl);
	for (uint32_t f = 0; f < nf; f++) {
		for (uint32_t h = 0; h < hid; h++)
			row[h] = test_rng_uniform(rng, -0.2f, 0.3f);
		ffn_kq_quantize_row(FFN_KQ_Q4_K, lay, row, hid, q->g + f * rg);
		for (uint32_t h = 0; h < hid; h++)
			row[h] = test_rng_uniform(rng, -0.3f, 0.2f);
		ffn_kq_quantize_row(FFN_KQ_Q4_K, lay, row, hid, q->u + f * rg);
	}
	for (uint32_t h = 0; h < hid; h++) {
		for (uint32_t f = 0; f < nf; f++)
			row[f] = test_rng_uniform(rng, -0.25f, 0.25f);
		ffn_kq_quantize_row(down_fmt, lay, row, nf, q->d + h * rd);
	}
	q->l = (struct ffn_kq_layer){ q->g, q->u, q->d, FFN_KQ_Q4_K,
		FFN_KQ_Q4_K, down_fmt, lay, nf, hid };
	free(row);
}

static void
free_layer(struct qlayer *q)
{
	free(q->g);
	free(q->u);
	free(q->d);
}

/* The activations kquant is handed (ffn_kq_act_fn; lib/ffn passes its
 * own): spec/wire.md §1 in libm, index 1 GELU-tanh as ref_forward's. */
static void
act_silu(float *g, const float *u, size_t n)
{
	for (size_t i = 0; i < n; i++)
		g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

static void
act_gelu(float *g, const float *u, size_t n)
{
	for (size_t i = 0; i < n; i++)
		g[i] = 0.5f * g[i] * (1.0f + tanhf(0.7978846f * (g[i] +
			0.044715f * g[i] * g[i] * g[i]))) * u[i];
}

static const ffn_kq_act_fn acts[2] = { act_silu, act_gelu };

/* Reference in double from the dequantised weights (first cols values). */
static void
ref_forward(const struct ffn_kq_layer *l, int gelu, const float *x,
	    double *y)
{
	size_t nbh = FFN_KQ_NBLOCKS(l->hidden), nbn = FFN_KQ_NBLOCKS(l->nf);
	float *w = malloc(256 * (nbh > nbn ? nbh : nbn) * sizeof(float));
	double *a = malloc(l->nf * sizeof(double));

	for (uint32_t f = 0; f < l->nf; f++) {
		double g = 0, u = 0;

		ffn_kq_dequant_row(l->gate_fmt, l->q6, (const uint8_t *)l->gate +
			f * ffn_kq_row_bytes(l->gate_fmt, l->hidden), nbh, w);
		for (uint32_t h = 0; h < l->hidden; h++)
			g += (double)w[h] * x[h];
		ffn_kq_dequant_row(l->up_fmt, l->q6, (const uint8_t *)l->up +
			f * ffn_kq_row_bytes(l->up_fmt, l->hidden), nbh, w);
		for (uint32_t h = 0; h < l->hidden; h++)
			u += (double)w[h] * x[h];
		if (gelu)
			g = 0.5 * g * (1 + tanh(0.7978846 *
						(g + 0.044715 * g * g * g)));
		else
			g = g / (1 + exp(-g));
		a[f] = g * u;
	}
	for (uint32_t h = 0; h < l->hidden; h++) {
		double s = 0;

		ffn_kq_dequant_row(l->down_fmt, l->q6, (const uint8_t *)l->down +
			h * ffn_kq_row_bytes(l->down_fmt, l->nf), nbn, w);
		for (uint32_t f = 0; f < l->nf; f++)
			s += (double)w[f] * a[f];
		y[h] = s;
	}
	free(w);
	free(a);
}

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

static double
max_abs(const double *v, size_t n)
{
	double m = 0;

	for (size_t i = 0; i < n; i++)
		m = fmax(m, fabs(v[i]));
	return m;
}

/* H = 300, nf = 200: partial last blocks in gate/up (H) and down (nf). */
static void
test_layer_padding(void **state)
{
	uint64_t rng = test_rng_seed(101);
	const size_t R = 3;
	float x[3 * H], y[3 * H];
	double ref[H];

	(void)state;
	for (int i = 0; i < 3 * H; i++)
		x[i] = test_rng_uniform(&rng, -1.5f, 1.5f);
	for (int df = 0; df < 2; df++)
		for (int lay = 0; lay < 2; lay++) {
			struct qlayer q;

			make_layer(&rng, &q, NF0, H, df, lay);
			for (int act = 0; act < 2; act++) {
				size_t sl = ffn_kq_layer_scratch(&q.l, R,
							FFN_KQ_PATH_F32);
				void *s = malloc(sl);

				FOR_EACH_ISA(isa) {
					assert_int_equal(ffn_kq_layer_forward(
						&q.l, FFN_KQ_PATH_F32,
						acts[act], x,
						H, R, y, H, s, sl), 0);
					for (size_t r = 0; r < R; r++) {
						double mx;

						ref_forward(&q.l, act,
							    x + r * H, ref);
						mx = max_abs(ref, H);
						assert_true(mx > 0.1);
						for (int h = 0; h < H; h++)
							assert_true(fabs(
							y[r * H + h] - ref[h])
							<= 1e-5 * mx + 1e-6);
					}
				}
				free(s);
			}
			free_layer(&q);
		}
}

/* The Q8_K path stays close to the f32 path (8-bit inputs, twice). */
static void
test_layer_q8k(void **state)
{
	uint64_t rng = test_rng_seed(103);
	const size_t R = 2;
	float x[2 * H], y[2 * H], yq[2 * H];
	struct qlayer q;
	size_t sl, sq;
	void *s;

	(void)state;
	for (int i = 0; i < 2 * H; i++)
		x[i] = test_rng_uniform(&rng, -1.0f, 1.0f);
	make_layer(&rng, &q, NF0, H, FFN_KQ_Q6_K, FFN_KQ_Q6_PRIVATE);
	sl = ffn_kq_layer_scratch(&q.l, R, FFN_KQ_PATH_F32);
	sq = ffn_kq_layer_scratch(&q.l, R, FFN_KQ_PATH_Q8K);
	s = malloc(sl > sq ? sl : sq);
	FOR_EACH_ISA(isa) {
		double num = 0, den = 0;

		assert_int_equal(ffn_kq_layer_forward(&q.l, FFN_KQ_PATH_F32,
			act_silu, x, H, R, y, H, s, sl), 0);
		assert_int_equal(ffn_kq_layer_forward(&q.l, FFN_KQ_PATH_Q8K,
			act_silu, x, H, R, yq, H, s, sq), 0);
		for (int i = 0; i < 2 * H; i++) {
			num += (y[i] - yq[i]) * (double)(y[i] - yq[i]);
			den += (double)y[i] * y[i];
		}
		/* relative L2 error of 8-bit inputs: a few per cent at most */
		assert_true(den > 0);
		assert_true(sqrt(num / den) < 0.03);
		/* rows that arrive in Q8_K (the q8k wire route) give the
		 * same as quantising f32 rows here */
		{
			size_t qb = FFN_KQ_NBLOCKS(H) * FFN_KQ_Q8K_BYTES;
			uint8_t *xq = malloc(R * qb);
			float y2[2 * H];

			for (size_t r = 0; r < R; r++)
				ffn_kq_quantize_q8k(x + r * H, H, xq + r * qb);
			assert_int_equal(ffn_kq_layer_forward_q8k(&q.l,
				act_silu, xq, R, y2, H, s, sq), 0);
			assert_memory_equal(y2, yq, sizeof(y2));
			free(xq);
		}
	}
	free(s);
	free_layer(&q);
}

/* More rows than one kernel pass (FFN_KQ_RMAX): same as row by row. */
static void
test_layer_many_rows(void **state)
{
	uint64_t rng = test_rng_seed(107);
	const size_t R = 11;
	float *x = malloc(R * H * sizeof(float));
	float *y = malloc(R * H * sizeof(float)), y1[H];
	struct qlayer q;
	size_t sl;
	void *s;

	(void)state;
	for (size_t i = 0; i < R * H; i++)
		x[i] = test_rng_uniform(&rng, -1.0f, 1.0f);
	make_layer(&rng, &q, NF1, H, FFN_KQ_Q6_K, FFN_KQ_Q6_GGML);
	for (int path = 0; path < 2; path++) {
		sl = ffn_kq_layer_scratch(&q.l, R, path);
		s = malloc(sl);
		assert_int_equal(ffn_kq_layer_forward(&q.l, path,
			act_gelu, x, H, R, y, H, s, sl), 0);
		for (size_t r = 0; r < R; r++) {
			assert_int_equal(ffn_kq_layer_forward(&q.l, path,
				act_gelu, x + r * H, H, 1, y1, H,
				s, sl), 0);
			if (path == FFN_KQ_PATH_Q8K) {
				/* no path depends on R: identical */
				assert_memory_equal(y1, y + r * H, sizeof(y1));
				continue;
			}
			/* f32: one row takes the factored Q4_K kernel, a
			 * batch the shared-block one: same within rounding */
			float mx = 0;

			for (int h = 0; h < H; h++)
				mx = fmaxf(mx, fabsf(y1[h]));
			assert_true(mx > 0.01f);
			for (int h = 0; h < H; h++)
				assert_true(fabsf(y1[h] - y[r * H + h]) <=
					    1e-5f * mx);
		}
		assert_int_equal(ffn_kq_layer_forward(&q.l, path,
			act_gelu, x, H, R, y, H, s, sl - 1),
			-ENOSPC);
		/* the caller's activation is required (ffn_kq_act_fn) */
		assert_int_equal(ffn_kq_layer_forward(&q.l, path, NULL, x, H,
			R, y, H, s, sl), -EINVAL);
		free(s);
	}
	/* all-zero input rows give all-zero output (spec/vindex.md §3) */
	memset(x, 0, H * sizeof(float));
	sl = ffn_kq_layer_scratch(&q.l, 1, FFN_KQ_PATH_F32);
	s = malloc(sl);
	assert_int_equal(ffn_kq_layer_forward(&q.l, FFN_KQ_PATH_F32,
		act_silu, x, H, 1, y1, H, s, sl), 0);
	for (int h = 0; h < H; h++)
		assert_true(y1[h] == 0.0f);
	free(s);
	free(x);
	free(y);
	free_layer(&q);
}

/*
 * --- Loader -------------------------------------------------------------
 */

/* One manifest entry; omit drops keys, raw replaces the whole entry and
 * shape the "shape" value, to write each malformed case. */
enum { OMIT_KEY = 1, OMIT_FORMAT = 2, OMIT_SHAPE = 4, OMIT_OFFSET = 8,
       OMIT_LENGTH = 16 };

struct ment {
	char key[64];
	const char *fmt;
	long long rows, pcols, offset, length;
	int omit;
	const char *raw, *shape;
};

static char dir[64];
static struct qlayer lay0, lay1;
static struct ment good[6];
static long long bin_len;

static void
write_manifest(const struct ment *e, size_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, FFN_KQ_MANIFEST_NAME);
	f = fopen(path, "w");
	assert_non_null(f);
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n" : "", f);
		if (e[i].raw != NULL) {
			fputs(e[i].raw, f);
			continue;
		}
		fprintf(f, "{\"x\": 0");
		if (!(e[i].omit & OMIT_KEY))
			fprintf(f, ", \"key\": \"%s\"", e[i].key);
		if (e[i].shape != NULL)
			fprintf(f, ", \"shape\": %s", e[i].shape);
		else if (!(e[i].omit & OMIT_SHAPE))
			fprintf(f, ", \"shape\": [%lld, %lld]", e[i].rows,
				e[i].pcols);
		if (!(e[i].omit & OMIT_FORMAT))
			fprintf(f, ", \"format\": \"%s\"", e[i].fmt);
		if (!(e[i].omit & OMIT_OFFSET))
			fprintf(f, ", \"offset\": %lld", e[i].offset);
		if (!(e[i].omit & OMIT_LENGTH))
			fprintf(f, ", \"length\": %lld", e[i].length);
		fputc('}', f);
	}
	fputs("]\n", f);
	fclose(f);
}

static int
setup_vindex(void **state)
{
	uint64_t rng = test_rng_seed(109);
	static const char *const nm[3] = { "gate_proj", "up_proj",
					   "down_proj" };
	struct qlayer *ql[2] = { &lay0, &lay1 };
	char path[128];
	long long off = 0;
	FILE *f;

	(void)state;
	make_layer(&rng, &lay0, NF0, H, FFN_KQ_Q6_K, FFN_KQ_Q6_PRIVATE);
	make_layer(&rng, &lay1, NF1, H, FFN_KQ_Q6_K, FFN_KQ_Q6_PRIVATE);
	strcpy(dir, "/tmp/kq-test-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, FFN_KQ_BIN_NAME);
	f = fopen(path, "wb");
	if (f == NULL)
		return -1;
	for (int L = 0; L < 2; L++) {
		const uint8_t *p[3] = { ql[L]->g, ql[L]->u, ql[L]->d };
		size_t len[3] = { ql[L]->gl, ql[L]->ul, ql[L]->dl };
		uint32_t nf = ql[L]->l.nf;

		for (int c = 0; c < 3; c++) {
			struct ment *e = &good[3 * L + c];

			snprintf(e->key, sizeof(e->key),
				 "layers.%d.mlp.%s.weight", L, nm[c]);
			e->fmt = c < 2 ? "Q4_K" : "Q6_K";
			e->rows = c < 2 ? nf : H;
			e->pcols = c < 2 ? FFN_KQ_PAD256(H) : FFN_KQ_PAD256(nf);
			e->offset = off;
			e->length = (long long)len[c];
			fwrite(p[c], 1, len[c], f);
			off += (long long)len[c];
		}
	}
	fclose(f);
	bin_len = off;
	return 0;
}

static int
teardown_vindex(void **state)
{
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/%s", dir, FFN_KQ_BIN_NAME);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", dir, FFN_KQ_MANIFEST_NAME);
	unlink(path);
	rmdir(dir);
	free_layer(&lay0);
	free_layer(&lay1);
	return 0;
}

static const struct ffn_kq_layer_spec spec2[2] = { { 0, NF0 }, { 1, NF1 } };

static void
test_load_ok(void **state)
{
	uint64_t rng = test_rng_seed(113);
	float x[H], y[H], yl[H];
	char err[256];

	(void)state;
	write_manifest(good, 6);
	for (int x_i = 0; x_i < H; x_i++)
		x[x_i] = test_rng_uniform(&rng, -1, 1);
	for (int mode = 0; mode < 2; mode++) {
		struct ffn_kq_load_opts o = { mode, mode ? 0 : -1, mode,
					      FFN_KQ_Q6_PRIVATE };
		struct ffn_kq_model m;
		size_t sl;
		void *s;

		assert_int_equal(ffn_kq_load(&m, dir, spec2, 2, H, &o, err,
					     sizeof(err)), 0);
		assert_int_equal(m.n_layers, 2);
		assert_memory_equal(m.layers[0].gate, lay0.g, lay0.gl);
		assert_memory_equal(m.layers[0].up, lay0.u, lay0.ul);
		assert_memory_equal(m.layers[0].down, lay0.d, lay0.dl);
		assert_memory_equal(m.layers[1].down, lay1.d, lay1.dl);
		assert_int_equal(m.layers[1].nf, NF1);
		assert_int_equal(m.layers[1].down_fmt, FFN_KQ_Q6_K);
		assert_int_equal(m.layers[1].gate_fmt, FFN_KQ_Q4_K);
		sl = ffn_kq_layer_scratch(&m.layers[1], 1, FFN_KQ_PATH_F32);
		s = malloc(sl);
		assert_int_equal(ffn_kq_layer_forward(&m.layers[1],
			FFN_KQ_PATH_F32, act_silu, x, H, 1, yl, H, s,
			sl), 0);
		assert_int_equal(ffn_kq_layer_forward(&lay1.l, FFN_KQ_PATH_F32,
			act_silu, x, H, 1, y, H, s, sl), 0);
		assert_memory_equal(y, yl, sizeof(y));
		free(s);
		ffn_kq_unload(&m);
	}
	/* §2.4 allows down in Q4_K too */
	{
		struct ffn_kq_model m;
		struct ment e[6];

		memcpy(e, good, sizeof(e));
		e[2].fmt = "Q4_K";
		e[2].length = (long long)H * 1 * 144;
		write_manifest(e, 6);
		assert_int_equal(ffn_kq_load(&m, dir, spec2, 2, H, NULL, err,
					     sizeof(err)), 0);
		assert_int_equal(m.layers[0].down_fmt, FFN_KQ_Q4_K);
		assert_int_equal(m.layers[1].down_fmt, FFN_KQ_Q6_K);
		ffn_kq_unload(&m);
		write_manifest(good, 6);
	}
	/* only layer 1 */
	{
		struct ffn_kq_model m;
		const struct ffn_kq_layer_spec one = { 1, NF1 };

		assert_int_equal(ffn_kq_load(&m, dir, &one, 1, H, NULL, err,
					     sizeof(err)), 0);
		assert_memory_equal(m.layers[0].gate, lay1.g, lay1.gl);
		ffn_kq_unload(&m);
	}
}

/* Load with manifest e[0..n) and expect -EINVAL with a message naming the
 * manifest and holding each needle. */
static void
expect_bad(const struct ment *e, size_t n,
	   const struct ffn_kq_layer_spec *spec, size_t ns, const char *n1,
	   const char *n2)
{
	struct ffn_kq_model m;
	char err[256] = "";
	int rc;

	write_manifest(e, n);
	rc = ffn_kq_load(&m, dir, spec, ns, H, NULL, err, sizeof(err));
	if (rc != -EINVAL || strstr(err, n1) == NULL ||
	    (n2 && strstr(err, n2) == NULL))
		print_error("rc %d, message: %s\n", rc, err);
	assert_int_equal(rc, -EINVAL);
	/* every manifest error names the file, then the entry and reason */
	assert_non_null(strstr(err, FFN_KQ_MANIFEST_NAME));
	assert_non_null(strstr(err, n1));
	if (n2)
		assert_non_null(strstr(err, n2));
	assert_null(m.layers);
}

static void
test_load_errors(void **state)
{
	struct ment e[6];
	const struct ffn_kq_layer_spec bad_nf[2] = { { 0, NF0 }, { 1, 99 } };
	const struct ffn_kq_layer_spec l2 = { 2, 10 };

	(void)state;
#define RESET() memcpy(e, good, sizeof(e))
	RESET();
	e[4].rows = NF1 + 1;	/* layer 1 up: shape[0] != nf */
	e[4].length = (NF1 + 1) * 2 * 144;
	expect_bad(e, 6, spec2, 2, "entry 4 (layer 1 up)", "shape [101, 512]");
	RESET();
	e[2].pcols = 512;	/* layer 0 down: [H, pad256(nf)] = [300, 256] */
	e[2].length = 300LL * 2 * 210;
	expect_bad(e, 6, spec2, 2, "entry 2 (layer 0 down)",
		   "expected [300, 256]");
	RESET();
	e[1].fmt = "Q5_K";
	expect_bad(e, 6, spec2, 2, "entry 1 (layer 0 up)", "Q5_K");
	RESET();
	e[3].length -= 1;
	expect_bad(e, 6, spec2, 2, "entry 3 (layer 1 gate)", "length");
	RESET();
	e[5].offset = bin_len - e[5].length + 1;
	expect_bad(e, 6, spec2, 2, "entry 5 (layer 1 down)", "exceeds");
	RESET();
	e[0].pcols = 300;
	expect_bad(e, 6, spec2, 2, "entry 0 (layer 0 gate)",
		   "not a multiple of 256");
	RESET();
	e[4].omit = OMIT_OFFSET;
	expect_bad(e, 6, spec2, 2, "entry 4 (layer 1 up)", "\"offset\"");
	/* §2.4 entry by entry: every key required, formats per matrix */
	RESET();
	e[0].fmt = "Q6_K";	/* gate must be Q4_K */
	e[0].length = (long long)NF0 * 2 * 210;
	expect_bad(e, 6, spec2, 2, "entry 0 (layer 0 gate)",
		   "\"Q6_K\" not allowed for gate");
	RESET();
	e[4].fmt = "Q6_K";	/* up must be Q4_K */
	e[4].length = (long long)NF1 * 2 * 210;
	expect_bad(e, 6, spec2, 2, "entry 4 (layer 1 up)",
		   "\"Q6_K\" not allowed for up");
	RESET();
	e[3].omit = OMIT_KEY;
	expect_bad(e, 6, spec2, 2, "entry 3 (layer 1 gate)", "\"key\"");
	RESET();
	e[2].omit = OMIT_FORMAT;
	expect_bad(e, 6, spec2, 2, "entry 2 (layer 0 down)", "\"format\"");
	RESET();
	e[1].omit = OMIT_SHAPE;
	expect_bad(e, 6, spec2, 2, "entry 1 (layer 0 up)", "\"shape\"");
	RESET();
	e[1].shape = "[200, 512, 1]";
	expect_bad(e, 6, spec2, 2, "entry 1 (layer 0 up)", "\"shape\"");
	RESET();
	e[1].shape = "[200, \"512\"]";
	expect_bad(e, 6, spec2, 2, "entry 1 (layer 0 up)", "\"shape\"");
	RESET();
	e[1].shape = "[0, 512]";
	expect_bad(e, 6, spec2, 2, "entry 1 (layer 0 up)", "\"shape\"");
	RESET();
	e[0].shape = "[4294967296, 256]";
	expect_bad(e, 6, spec2, 2, "entry 0 (layer 0 gate)", "too large");
	RESET();
	e[5].omit = OMIT_LENGTH;
	expect_bad(e, 6, spec2, 2, "entry 5 (layer 1 down)", "\"length\"");
	RESET();
	e[3].offset = -144;
	expect_bad(e, 6, spec2, 2, "entry 3 (layer 1 gate)", "\"offset\"");
	RESET();
	e[1].raw = "[1, 2]";
	expect_bad(e, 6, spec2, 2, "entry 1 (layer 0 up)", "not an object");
	RESET();
	e[5].rows = H - 1;	/* down: shape[0] != H */
	e[5].length = (H - 1) * 1 * 210;
	expect_bad(e, 6, spec2, 2, "entry 5 (layer 1 down)",
		   "expected [300, 256]");
	RESET();
	e[0].pcols = 256;	/* gate: shape[1] != pad256(H) = 512 */
	e[0].length = NF0 * 1 * 144;
	expect_bad(e, 6, spec2, 2, "entry 0 (layer 0 gate)",
		   "expected [200, 512]");
	RESET();
	e[2].offset = 0x7fffffffffffffffLL;	/* offset + length overflows */
	expect_bad(e, 6, spec2, 2, "entry 2 (layer 0 down)", "exceeds");
	RESET();
	expect_bad(e, 5, spec2, 2, "5 entries", "3 per layer");
	RESET();
	expect_bad(e, 6, bad_nf, 2, "entry 3 (layer 1 gate)", "nf 99");
	RESET();
	expect_bad(e, 6, &l2, 1, "layer 2 needs entries 6..8", NULL);
	/* a layer outside spec is still checked on its own */
	RESET();
	e[5].length = 1;
	expect_bad(e, 6, spec2, 1, "entry 5 (layer 1 down)", "length 1");
#undef RESET
	{
		struct ffn_kq_model m;
		char err[256], path[128];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir,
			 FFN_KQ_MANIFEST_NAME);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs("{\"layers\": []}\n", f);
		fclose(f);
		assert_int_equal(ffn_kq_load(&m, dir, spec2, 2, H, NULL, err,
					     sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, FFN_KQ_MANIFEST_NAME));
		assert_non_null(strstr(err, "not a JSON array"));
	}
	{
		struct ffn_kq_model m;
		char err[256], path[128];

		snprintf(path, sizeof(path), "%s/%s", dir,
			 FFN_KQ_MANIFEST_NAME);
		unlink(path);
		assert_int_equal(ffn_kq_load(&m, dir, spec2, 2, H, NULL, err,
					     sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, FFN_KQ_MANIFEST_NAME));
		assert_int_equal(ffn_kq_load(&m, "/nonexistent-kq", spec2, 2,
					     H, NULL, err, sizeof(err)),
				 -ENOENT);
		assert_non_null(strstr(err, FFN_KQ_BIN_NAME));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layer_padding),
		cmocka_unit_test(test_layer_q8k),
		cmocka_unit_test(test_layer_many_rows),
	};
	const struct CMUnitTest load_tests[] = {
		cmocka_unit_test(test_load_ok),
		cmocka_unit_test(test_load_errors),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	return rc | cmocka_run_group_tests(load_tests, setup_vindex,
					   teardown_vindex);
}
