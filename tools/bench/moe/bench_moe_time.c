/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-moe's timed sections (bench_moe.h):
 *   1. one layer batch of K experts (spec/moe.md §1, what
 *      /v1/experts/layer-batch computes): ffn_moe_norm + ffn_moe_mix on
 *      the f32 route, ffn_moe_mix on a Q8_K row (the -q8k route: the
 *      client sends h normed and quantised, so neither is timed), and a
 *      plain read of the same experts' bytes, side by side;
 *   2. ffn_moe_expert / ffn_moe_expert_q8k on R rows of one expert.
 * Every call takes the next experts of a fixed random order of all E
 * (bench_moe.c), so an expert comes back only after all the others: its
 * bytes come from memory, as a shard's do when requests pick experts at
 * random. Each call is timed on its own (thread CPU time); a figure is
 * the median of iters calls after one untimed pass over all experts.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_moe.h"
#include "ffn_kq.h"

enum bm_path {
	BM_F32 = 0,	/* f32 h (norm + mix, or ffn_moe_expert) */
	BM_Q8K,		/* a Q8_K row (mix with hq, ffn_moe_expert_q8k) */
	BM_READ,	/* read the experts' bytes, compute nothing */
	BM_KQ,		/* f32 h with kq_q8k (ffn_moe_set_kq_q8k): h and
			 * the inner activation in Q8_K, integer dots */
};

static volatile double sink;

/* Bytes between two uses of an expert beyond which they come from
 * memory: several times any last-level cache a core sees today. */
#define BM_FROM_MEMORY 256e6

/* The inputs of one model: x, its norm h, h in Q8_K, out, pairs. */
struct bm_in {
	float *x, *h, *out, *y;
	void *hq;
	struct ffn_moe_pair *p;
	float *w;
};

static void
in_make(struct bm_in *in, const struct bm_model *b, unsigned K,
	unsigned rows)
{
	size_t qrow = FFN_KQ_NBLOCKS(b->H) * FFN_KQ_Q8K_BYTES;
	float sum = 0;

	in->x = bm_alloc((size_t)rows * b->H * sizeof(float));
	in->h = bm_alloc((size_t)rows * b->H * sizeof(float));
	in->y = bm_alloc((size_t)rows * b->H * sizeof(float));
	in->out = bm_alloc((size_t)b->H * sizeof(float));
	in->hq = bm_alloc(rows * qrow);
	in->p = bm_alloc(K * sizeof(*in->p));
	in->w = bm_alloc(K * sizeof(float));
	bm_fill(in->x, (size_t)rows * b->H, 7);
	/* rows normed as the shard norms them; Q8_K as the client sends */
	for (unsigned r = 0; r < rows; r++) {
		ffn_moe_norm(b->m, 0, in->x + (size_t)r * b->H,
			     in->h + (size_t)r * b->H);
		if (b->H % FFN_KQ_QK == 0)
			ffn_kq_quantize_q8k(in->h + (size_t)r * b->H, b->H,
					    (uint8_t *)in->hq + r * qrow);
	}
	/* router-like weights: positive, summing to 1 */
	bm_fill(in->w, K, 11);
	for (unsigned k = 0; k < K; k++) {
		in->w[k] = 1.0f + in->w[k] * in->w[k];
		sum += in->w[k];
	}
	for (unsigned k = 0; k < K; k++)
		in->w[k] /= sum;
}

static void
in_free(struct bm_in *in)
{
	free(in->x);
	free(in->h);
	free(in->y);
	free(in->out);
	free(in->hq);
	free(in->p);
	free(in->w);
}

/* One layer batch of path on the next K experts; its time, or < 0. */
static double
batch_once(struct bm_model *b, enum bm_path path, unsigned K,
	   struct bm_in *in)
{
	unsigned bad = 0;
	double t;
	int rc = 0;

	for (unsigned k = 0; k < K; k++) {
		in->p[k].expert = bm_next(b);
		in->p[k].weight = in->w[k];
	}
	t = bm_cpu_now();
	switch (path) {
	case BM_F32:
	case BM_KQ:	/* ffn_moe_set_kq_q8k() set by the caller */
		ffn_moe_norm(b->m, 0, in->x, in->h);
		rc = ffn_moe_mix(b->m, 0, in->h, NULL, in->p, K, in->out,
				 &bad, b->s);
		break;
	case BM_Q8K:
		rc = ffn_moe_mix(b->m, 0, NULL, in->hq, in->p, K, in->out,
				 &bad, b->s);
		break;
	case BM_READ:
		for (unsigned k = 0; k < K; k++)
			for (unsigned r = 0; r < b->n_reg; r++)
				sink += bm_read(bm_region(b, in->p[k].expert,
							  r),
						b->reg_bytes[r]);
		break;
	}
	t = bm_cpu_now() - t;
	if (rc < 0) {
		fprintf(stderr, "bench-moe: ffn_moe_mix: %d (pair %u)\n", rc,
			bad);
		return -1;
	}
	return t;
}

/* iters timed calls after a pass over all experts: t[iters]. */
static int
batch_run(struct bm_model *b, enum bm_path path, unsigned K,
	  unsigned iters, struct bm_in *in, double *t)
{
	unsigned warm = (b->E + K - 1) / K;

	for (unsigned i = 0; i < warm + iters; i++) {
		double s = batch_once(b, path, K, in);

		if (s < 0)
			return 1;
		if (i >= warm)
			t[i - warm] = s;
	}
	return 0;
}

static void
batch_row(const char *label, const char *input, double *t, unsigned n,
	  double bytes, double bw)
{
	double med, min, p90;

	bm_stats(t, n, &med, &min, &p90);
	printf("  %-6s %-22s %8.3f  (%.3f .. %.3f) %8.2f %8.0f%%\n", label,
	       input, med * 1e3, min * 1e3, p90 * 1e3, bytes / med / 1e9,
	       100.0 * bytes / med / bw);
}

/* The rows of one model: f32 h, Q8_K h (when H allows), read only. */
static int
batch_model(const struct bm_opts *o, const struct bm_floors *f,
	    struct bm_model *b, double *t)
{
	static const char *const input[] = {
		"f32 x (norm + mix)", "Q8_K h (mix, hq)",
		"read only (same bytes)", "f32 x, kq_q8k = on",
	};
	unsigned K = o->K < b->E ? o->K : b->E;
	double bytes = (double)K * b->xbytes;
	struct bm_in in;
	int rc = 0;

	in_make(&in, b, K, 1);
	for (int p = BM_F32; p <= BM_KQ && rc == 0; p++) {
		if ((p == BM_Q8K && b->H % FFN_KQ_QK) ||
		    (p == BM_READ && b->n_reg == 0))
			continue;
		/* kq_q8k applies to Q4_K experts only (ffn_moe.h) */
		ffn_moe_set_kq_q8k(b->m, p == BM_KQ);
		if (p == BM_KQ && !b->info->kq_q8k)
			continue;
		rc = batch_run(b, p, K, o->iters, &in, t);
		if (rc == 0)
			batch_row(b->label, input[p], t, o->iters, bytes,
				  f->read_bw);
	}
	ffn_moe_set_kq_q8k(b->m, 0);
	in_free(&in);
	return rc;
}

int
bm_layer_batch(const struct bm_opts *o, const struct bm_floors *f,
	       struct bm_model *q4k, struct bm_model *f32)
{
	struct bm_model *ms[2] = { q4k, f32 };
	double *t = bm_alloc(o->iters * sizeof(double));
	int rc = 0;

	printf("\n== 1. One layer batch, K = %u (spec/moe.md §1: "
	       "/v1/experts/layer-batch's compute), one thread\n", o->K);
	for (int i = 0; i < 2; i++) {
		struct bm_model *b = ms[i];
		unsigned K;
		double dist;

		if (b == NULL)
			continue;
		K = o->K < b->E ? o->K : b->E;
		dist = (double)(b->E - 1) * b->xbytes;
		printf("  %s: each call takes the next %u of a fixed random "
		       "order of all %u experts: an expert comes back every "
		       "%.1f calls, %.0f MB later (%s). Read floor %u x "
		       "%.2f MB = %.1f MB at %.2f GB/s = %.3f ms\n",
		       b->label, K, b->E, (double)b->E / K, dist / 1e6,
		       dist >= BM_FROM_MEMORY ? "from memory" :
		       "few enough to stay in the caches: not a memory figure",
		       K, b->xbytes / 1e6,
		       (double)K * b->xbytes / 1e6, f->read_bw / 1e9,
		       K * b->xbytes / f->read_bw * 1e3);
	}
	printf("  expert input                   ms/call  (min .. p90)"
	       "       GB/s  of read floor (target >= 80%%)\n");
	for (int i = 0; i < 2 && rc == 0; i++)
		if (ms[i] != NULL)
			rc = batch_model(o, f, ms[i], t);
	free(t);
	return rc;
}

/* ---- 2. rows per expert ---- */

static const unsigned rows_r[] = { 1, 2, 4, 8, 16 };
#define ROWS_N (sizeof(rows_r) / sizeof(rows_r[0]))

static int
rows_run(struct bm_model *b, enum bm_path path, unsigned R,
	 unsigned iters, struct bm_in *in, double *t)
{
	unsigned warm = b->E < 16 ? b->E : 16;

	for (unsigned i = 0; i < warm + iters; i++) {
		uint32_t e = bm_next(b);
		double s = bm_cpu_now();
		int rc = path != BM_Q8K ?
			ffn_moe_expert(b->m, 0, e, in->h, R, in->y, b->s) :
			ffn_moe_expert_q8k(b->m, 0, e, in->hq, R, in->y,
					   b->s);

		s = bm_cpu_now() - s;
		if (rc < 0) {
			fprintf(stderr, "bench-moe: ffn_moe_expert%s: %d "
				"(%u rows)\n", path != BM_Q8K ? "" : "_q8k",
				rc, R);
			return 1;
		}
		if (i >= warm)
			t[i - warm] = s;
	}
	return 0;
}

int
bm_rows(const struct bm_opts *o, const struct bm_floors *f,
	struct bm_model *b)
{
	double macs = 3.0 * b->I * b->H, rd = b->xbytes / f->read_bw;
	double *t = bm_alloc(o->iters * sizeof(double));
	struct bm_in in;
	int rc = 0;

	printf("\n== 2. Rows per expert (cross-request batching): "
	       "ffn_moe_expert (f32 h), ffn_moe_expert_q8k (Q8_K h) and "
	       "ffn_moe_expert with kq_q8k on (f32 h, Q8_K path) on "
	       "R rows of one %s expert, the next expert of the order "
	       "each call (%s)\n", b->info->kind,
	       (double)(b->E - 1) * b->xbytes >= BM_FROM_MEMORY ?
	       "from memory" : "in the caches: too few experts");
	printf("  one expert: %.2f MB, read floor %.3f ms; 3 x %u x %u = "
	       "%.2f M multiply-adds per row, compute floor per row "
	       "%.3f ms (f32 h: FMAs at %.1f G/s), %.3f ms (Q8_K h: gate "
	       "and up integer dots at %.1f G/s, down FMAs) or %.3f ms "
	       "(kq_q8k: all integer dots)\n",
	       b->xbytes / 1e6, rd * 1e3, b->I, b->H, macs / 1e6,
	       f->fma > 0 ? macs / f->fma * 1e3 : 0, f->fma / 1e9,
	       f->fma > 0 ? (2 * macs / 3 / f->idot + macs / 3 / f->fma) *
	       1e3 : 0, f->idot / 1e9,
	       f->idot > 0 ? macs / f->idot * 1e3 : 0);
	printf("  input  rows   ms/call  (min .. p90)       us/row     "
	       "rows/s  x R=1  read-floor  comp-floor  of read  of comp\n");
	in_make(&in, b, 1, rows_r[ROWS_N - 1]);
	for (int p = BM_F32; p <= BM_KQ && rc == 0; p++) {
		double r1 = 0;

		if (p == BM_READ || (p == BM_Q8K && b->H % FFN_KQ_QK))
			continue;
		/* kq_q8k applies to Q4_K experts only (ffn_moe.h) */
		ffn_moe_set_kq_q8k(b->m, p == BM_KQ);
		if (p == BM_KQ && !b->info->kq_q8k)
			continue;
		for (size_t i = 0; i < ROWS_N && rc == 0; i++) {
			unsigned R = rows_r[i];
			double med, min, p90, cf = 0, rate;

			rc = rows_run(b, p, R, o->iters, &in, t);
			if (rc)
				break;
			bm_stats(t, o->iters, &med, &min, &p90);
			if (f->fma > 0)
				cf = p == BM_F32 ? macs * R / f->fma :
				     p == BM_KQ ? macs * R / f->idot :
				     R * (2 * macs / 3 / f->idot +
					  macs / 3 / f->fma);
			rate = R / med;
			if (i == 0)
				r1 = rate;
			printf("  %-5s %5u %9.3f  (%.3f .. %.3f) %9.1f %10.0f"
			       " %6.2f %11.3f %11.3f %7.0f%% %7.0f%%\n",
			       p == BM_F32 ? "f32" : p == BM_Q8K ? "q8k" :
			       "kq", R, med * 1e3,
			       min * 1e3, p90 * 1e3, med * 1e6 / R, rate,
			       rate / r1, rd * 1e3, cf * 1e3, 100 * rd / med,
			       100 * cf / med);
		}
	}
	ffn_moe_set_kq_q8k(b->m, 0);
	printf("  kq: f32 h with kq_q8k = on\n");
	printf("  of read / of comp = floor / time: 100%% is the roofline "
	       "(the larger of the two is the bound); the compute floor counts "
	       "multiply-adds only (no block decode, scales, "
	       "activation)\n");
	in_free(&in);
	free(t);
	return rc;
}
