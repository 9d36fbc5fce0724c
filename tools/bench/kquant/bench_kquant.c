/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-kquant: time of one FFN layer y = W_down (act(W_gate x) * W_up x)
 * with K-quant weights (Q4_K gate/up + Q6_K down, as LARQL writes them;
 * and all-Q4_K), on the f32 and the Q8_K integer paths, against dense f16
 * and f32 weights, one core, side by side in one run. Also a streaming-read
 * bandwidth measured in the same run, to turn times into effective weight
 * bytes/s and a fraction of what memory can deliver.
 *
 * The dense layers run lib/ffn's own kernels (the pass ffn_compute makes
 * with FFN_ENGINE_KERNEL: matvec gate, matvec up, act, down), on the
 * best ISA the CPU has.
 *
 * Best and median thread CPU time of the reps are printed, each with its
 * ratio to f16 (best/best, median/median), so the spread shows. The "read
 * only" rows read the K-quant bytes in the one-row Q8_K kernels' order
 * (the floor memory puts under them); a line before each size gives those
 * kernels' speed with the weights in L2 (is compute the limit?).
 *
 * Usage: bench-kquant [reps] [H:nf ...]   (default 5, 4096:14336 2560:10240)
 * BENCH_KQ_ISA=scalar|avx2|avx512 forces the K-quant kernels;
 * BENCH_KQ_ROWS=1 or 8 runs only that many input rows.
 */
#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "ffn_kq.h"
#include "ffn_priv.h"
#include "kq_internal.h"

#include "bench_kquant.h"

void
bkq_silu(float *g, const float *u, size_t n)
{
	ffn_act_mul(FFN_ACT_SILU, g, u, n);
}

/* Thread CPU time: the machine is shared, and time-slicing by other
 * users' processes would otherwise dominate (wall time is printed too). */
double
bkq_cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void *
bkq_big_alloc(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	(void)madvise(p, n, MADV_HUGEPAGE);
	return p;
}

/*
 * Inputs, outputs and scratch on cache lines, as the engine's scratch
 * (ffn_scratch_new) puts them: from malloc's 16-byte alignment every
 * 64-byte input load of the AVX-512 kernels splits two lines, which ran
 * the several-row f32 path up to 1.8x slower than it serves.
 */
void *
bkq_cl_alloc(size_t n)
{
	void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);

	if (p == NULL) {
		perror("aligned_alloc");
		exit(1);
	}
	return p;
}

static uint64_t rng = 88172645463325252ull;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* Random blocks with moderate scales: timing does not depend on values. */
void
bkq_fill_blocks(enum ffn_kq_fmt fmt, uint8_t *p, size_t nblocks)
{
	size_t bb = ffn_kq_block_bytes(fmt);
	uint16_t d = ffn_kq_f32_to_f16(1e-3f);

	for (size_t i = 0; i < nblocks * bb; i += 4) {
		uint32_t r = rnd();

		memcpy(p + i, &r, nblocks * bb - i < 4 ? nblocks * bb - i : 4);
	}
	for (size_t i = 0; i < nblocks; i++) {
		uint8_t *b = p + i * bb;

		if (fmt == FFN_KQ_Q4_K) {
			memcpy(b, &d, 2);
			memcpy(b + 2, &d, 2);
		} else {
			memcpy(b + 208, &d, 2);
		}
	}
}

/* --- dense layers through lib/ffn's own kernels (ffn_priv.h) ------------- */

struct dense_layer {
	struct ffn_mat g, u, d;	/* [nf,H], [nf,H], down feature-major [nf,H] */
	size_t H, nf;
};

static void
dense_init(struct dense_layer *l, void *base, int f16, size_t H, size_t nf)
{
	size_t es = f16 ? 2 : 4, m = nf * H * es;
	struct ffn_mat *mm[3] = { &l->g, &l->u, &l->d };

	for (int c = 0; c < 3; c++) {
		mm[c]->data = (uint8_t *)base + c * m;
		mm[c]->row_bytes = H * es;
		mm[c]->rows = (uint32_t)nf;
		mm[c]->cols = (uint32_t)H;
		mm[c]->dtype = f16 ? FFN_DT_F16 : FFN_DT_F32;
	}
	l->H = H;
	l->nf = nf;
}

/* What ffn_compute's kernel pass does (the dense engine, lib/ffn/ffn_dense.c). */
static void
dense_forward(const struct dense_layer *l, const float *x, size_t R,
	      float *g, float *u, float *y)
{
	const struct ffn_kernels *k = ffn_kernels_active();
	const float *xp[8];
	float *yp[8];

	for (size_t r = 0; r < R; r++) {
		xp[r] = x + r * l->H;
		yp[r] = y + r * l->H;
	}
	k->matvec(&l->g, xp, (unsigned)R, g, l->nf);
	k->matvec(&l->u, xp, (unsigned)R, u, l->nf);
	ffn_act_mul(FFN_ACT_SILU, g, u, R * l->nf);
	k->down(&l->d, g, l->nf, (unsigned)R, yp);
}

/* Keeps the read-only passes from being optimised away. */
static volatile double read_sink;
/* Read before every timed case to evict the caches. */
static const uint8_t *evict;
static size_t evict_len = 256u << 20;

/* One streaming read of n bytes (sum of 64-byte lines). */
__attribute__((target("avx512f")))
static double
read_only(const uint8_t *p, size_t n)
{
	__m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
	size_t i = 0;

	for (; i + 256 <= n; i += 256) {
		a0 = _mm512_add_pd(a0, _mm512_loadu_pd(p + i));
		a1 = _mm512_add_pd(a1, _mm512_loadu_pd(p + i + 64));
		a2 = _mm512_add_pd(a2, _mm512_loadu_pd(p + i + 128));
		a3 = _mm512_add_pd(a3, _mm512_loadu_pd(p + i + 192));
	}
	return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a0, a1),
						  _mm512_add_pd(a2, a3)));
}

/* The bytes [p, p + bb) in 64-byte loads (integer adds: any bytes). */
__attribute__((target("avx512f"), always_inline))
static inline __m512i
read_block(const uint8_t *p, size_t bb, __m512i acc)
{
#pragma GCC unroll 4
	for (size_t j = 0; j + 64 <= bb; j += 64)
		acc = _mm512_add_epi64(acc, _mm512_loadu_si512(p + j));
	if (bb % 64)
		acc = _mm512_add_epi64(acc, _mm512_loadu_si512(p + bb - 64));
	return acc;
}

/*
 * Read a K-quant matrix of nrows rows of nb blocks of bb bytes in the
 * order the one-row AVX-512 Q8_K kernels do (FFN_KQ_STREAMS far-apart
 * chunks, kq_internal.h): row f of each chunk, one block of each chunk in
 * turn, then the rows left over. As in the kernels, each stream has its
 * own load instructions (the loops are unrolled): one load jumping between
 * the streams loses the prefetchers and would make the floor too slow.
 */
__attribute__((target("avx512f"), always_inline))
static inline double
read_kq_mat_bb(const uint8_t *p, size_t nrows, size_t nb, const size_t bb)
{
	const size_t rb = nb * bb, q = nrows / FFN_KQ_STREAMS;
	__m512i acc = _mm512_setzero_si512();
	int64_t out[8];

	for (size_t f = 0; f < q; f++) {
		const uint8_t *r[FFN_KQ_STREAMS];

#pragma GCC unroll 8
		for (size_t k = 0; k < FFN_KQ_STREAMS; k++)
			r[k] = p + (k * q + f) * rb;
		for (size_t b = 0; b < nb; b++)
#pragma GCC unroll 8
			for (size_t k = 0; k < FFN_KQ_STREAMS; k++)
				acc = read_block(r[k] + b * bb, bb, acc);
	}
	for (size_t i = FFN_KQ_STREAMS * q * rb; i < nrows * rb; i += bb)
		acc = read_block(p + i, bb, acc);
	_mm512_storeu_si512(out, acc);
	return (double)(out[0] ^ out[7]);
}

__attribute__((target("avx512f")))
static double
read_kq_mat(const uint8_t *p, size_t nrows, size_t nb, size_t bb)
{
	if (bb == FFN_KQ_Q4K_BYTES)
		return read_kq_mat_bb(p, nrows, nb, FFN_KQ_Q4K_BYTES);
	return read_kq_mat_bb(p, nrows, nb, FFN_KQ_Q6K_BYTES);
}

/* Streaming read of n bytes (sum of 64-byte lines), best of reps: GB/s. */
__attribute__((target("avx512f")))
static double
read_bandwidth512(const uint8_t *p, size_t n, int reps, double *sink)
{
	double best = 0;

	for (int k = 0; k < reps; k++) {
		__m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
		double t = bkq_cpu_now();

		for (size_t i = 0; i + 256 <= n; i += 256) {
			a0 = _mm512_add_pd(a0, _mm512_load_pd(p + i));
			a1 = _mm512_add_pd(a1, _mm512_load_pd(p + i + 64));
			a2 = _mm512_add_pd(a2, _mm512_load_pd(p + i + 128));
			a3 = _mm512_add_pd(a3, _mm512_load_pd(p + i + 192));
		}
		t = bkq_cpu_now() - t;
		*sink += _mm512_reduce_add_pd(_mm512_add_pd(
			_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3)));
		if (n / t / 1e9 > best)
			best = n / t / 1e9;
	}
	return best;
}

/* The same in 32-byte loads, for AVX2-only hosts (--roofline). */
__attribute__((target("avx2")))
static double
read_bandwidth256(const uint8_t *p, size_t n, int reps, double *sink)
{
	double best = 0;

	for (int k = 0; k < reps; k++) {
		__m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
		double t = bkq_cpu_now(), o[4];

		for (size_t i = 0; i + 128 <= n; i += 128) {
			a0 = _mm256_add_pd(a0, _mm256_load_pd((const double *)
							     (p + i)));
			a1 = _mm256_add_pd(a1, _mm256_load_pd((const double *)
							     (p + i + 32)));
			a2 = _mm256_add_pd(a2, _mm256_load_pd((const double *)
							     (p + i + 64)));
			a3 = _mm256_add_pd(a3, _mm256_load_pd((const double *)
							     (p + i + 96)));
		}
		t = bkq_cpu_now() - t;
		_mm256_storeu_pd(o, _mm256_add_pd(_mm256_add_pd(a0, a1),
						  _mm256_add_pd(a2, a3)));
		*sink += o[0] + o[1] + o[2] + o[3];
		if (n / t / 1e9 > best)
			best = n / t / 1e9;
	}
	return best;
}

static double
read_bandwidth(const uint8_t *p, size_t n, int reps, double *sink)
{
	if (__builtin_cpu_supports("avx512f"))
		return read_bandwidth512(p, n, reps, sink);
	return read_bandwidth256(p, n, reps, sink);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The last two cases only read the K-quant layers' bytes (gate, up, down
 * in order, each in the order of the one-row Q8_K kernels' streams, as
 * the compute does): the floor memory puts under the q8k-path in the same
 * run, and their "vs f16" the best ratio possible.
 */
#define NCASE 8
static const char *const case_name[NCASE] = {
	"f32 (lib/ffn)", "f16 (lib/ffn)", "Q4K+Q6K f32-path", "Q4K+Q6K q8k-path",
	"Q4K all  f32-path", "Q4K all  q8k-path", "Q4K+Q6K read only",
	"Q4K all  read only",
};

/*
 * Is compute the limit? The one-row Q8_K kernels on a matrix of the
 * layer's row length small enough to stay in L2 (~300-400 KB), called
 * again and again: weight bytes per second with no DRAM in the way, to
 * set beside the streaming bandwidth. fmt rows of nb blocks.
 */
static double
hot_gbs(enum ffn_kq_fmt fmt, size_t cols, const float *x, int f32)
{
	size_t nb = FFN_KQ_NBLOCKS(cols), rb = ffn_kq_row_bytes(fmt, cols);
	size_t rows = (384u << 10) / rb < 8 ? 8 : (384u << 10) / rb, reps;
	uint8_t *w = bkq_big_alloc(rows * rb);
	uint8_t *q8 = bkq_cl_alloc(nb * FFN_KQ_Q8K_BYTES);
	float *y = bkq_cl_alloc(rows * sizeof(float));
	struct ffn_kq_mat m = { w, fmt, FFN_KQ_Q6_PRIVATE, (uint32_t)rows,
				(uint32_t)cols };
	double best = 1e30;

	bkq_fill_blocks(fmt, w, rows * nb);
	ffn_kq_quantize_q8k(x, cols, q8);
	(void)ffn_kq_matvec_q8k(&m, 0, (uint32_t)rows, q8, 1, y, rows);
	for (int k = 0; k < 7; k++) {
		double t = bkq_cpu_now();

		/* ~4 MB of weight reads per timing (cols % 256 == 0: the
		 * f32 path needs no scratch) */
		for (reps = 0; reps * rows * rb < (4u << 20); reps++)
			if (f32)
				(void)ffn_kq_matvec_f32(&m, 0, (uint32_t)rows,
					x, cols, 1, y, rows, NULL, 0);
			else
				(void)ffn_kq_matvec_q8k(&m, 0, (uint32_t)rows,
					q8, 1, y, rows);
		t = (bkq_cpu_now() - t) / (double)reps;
		if (t < best)
			best = t;
	}
	read_sink += y[0];
	munmap(w, rows * rb);
	free(q8);
	free(y);
	return (double)(rows * rb) / best / 1e9;
}

/* One size's layers, every case's weights, and the buffers they use. */
struct kq_bench {
	size_t H, nf, nbh, nbn, dense;
	size_t gq, d6, d4;		/* Q4K gate (= up), Q6K / Q4K down */
	float *wf;			/* f32 gate, up, down */
	uint16_t *wh;			/* the same in f16 */
	uint8_t *q;			/* Q4K gate, up; Q6K, Q4K down */
	float *x, *y, *g, *u;		/* up to 8 rows */
	struct dense_layer df, dh;
	struct ffn_kq_layer k6, k4;	/* Q4K+Q6K, all Q4K */
	size_t bytes[NCASE];		/* weight bytes each case reads */
	void *s;			/* K-quant scratch of sl bytes */
	size_t sl;
};

static void
kq_setup(struct kq_bench *b, size_t H, size_t nf)
{
	size_t nbh = FFN_KQ_NBLOCKS(H), nbn = FFN_KQ_NBLOCKS(nf);
	size_t dense = nf * H;
	size_t gq = nf * nbh * FFN_KQ_Q4K_BYTES;
	size_t d6 = H * nbn * FFN_KQ_Q6K_BYTES, d4 = H * nbn * FFN_KQ_Q4K_BYTES;
	uint8_t *q;
	size_t sl, sl2;

	*b = (struct kq_bench){ .H = H, .nf = nf, .nbh = nbh, .nbn = nbn,
		.dense = dense, .gq = gq, .d6 = d6, .d4 = d4,
		.bytes = { 3 * dense * 4, 3 * dense * 2, 2 * gq + d6,
			   2 * gq + d6, 2 * gq + d4, 2 * gq + d4,
			   2 * gq + d6, 2 * gq + d4 } };
	b->wf = bkq_big_alloc(3 * dense * sizeof(float));
	b->wh = bkq_big_alloc(3 * dense * sizeof(uint16_t));
	b->q = q = bkq_big_alloc(2 * gq + d6 + d4);
	b->x = bkq_cl_alloc(8 * H * sizeof(float));
	b->y = bkq_cl_alloc(8 * H * 4);
	b->g = bkq_cl_alloc(8 * nf * 4);
	b->u = bkq_cl_alloc(8 * nf * 4);
	b->k6 = (struct ffn_kq_layer){ q, q + gq, q + 2 * gq, FFN_KQ_Q4_K,
		FFN_KQ_Q4_K, FFN_KQ_Q6_K, FFN_KQ_Q6_PRIVATE, nf, H };
	b->k4 = (struct ffn_kq_layer){ q, q + gq, q + 2 * gq + d6, FFN_KQ_Q4_K,
		FFN_KQ_Q4_K, FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, nf, H };
	sl = ffn_kq_layer_scratch(&b->k6, 8, FFN_KQ_PATH_Q8K);
	sl2 = ffn_kq_layer_scratch(&b->k6, 8, FFN_KQ_PATH_F32);
	b->s = bkq_cl_alloc(sl > sl2 ? sl : sl2);
	b->sl = sl2 > sl ? sl2 : sl;
	dense_init(&b->df, b->wf, 0, H, nf);
	dense_init(&b->dh, b->wh, 1, H, nf);
	for (size_t i = 0; i < 3 * dense; i++) {
		float v = (float)(int32_t)rnd() * 0x1p-36f;

		b->wf[i] = v;
		b->wh[i] = ffn_kq_f32_to_f16(v);
	}
	bkq_fill_blocks(FFN_KQ_Q4_K, q, 2 * nf * nbh);
	bkq_fill_blocks(FFN_KQ_Q6_K, q + 2 * gq, H * nbn);
	bkq_fill_blocks(FFN_KQ_Q4_K, q + 2 * gq + d6, H * nbn);
	for (size_t i = 0; i < 8 * H; i++)
		b->x[i] = (float)(int32_t)rnd() * 0x1p-31f;
	for (size_t i = 0; i < nf; i++)	/* activations for hot_gbs */
		b->g[i] = (float)(int32_t)rnd() * 0x1p-31f;
}

static void
kq_teardown(struct kq_bench *b)
{
	munmap(b->wf, 3 * b->dense * sizeof(float));
	munmap(b->wh, 3 * b->dense * sizeof(uint16_t));
	munmap(b->q, 2 * b->gq + b->d6 + b->d4);
	free(b->x); free(b->y); free(b->g); free(b->u); free(b->s);
}

/* Case c (case_name) on R rows of b's input. */
static void
kq_case(struct kq_bench *b, int c, size_t R)
{
	size_t H = b->H, nf = b->nf, gq = b->gq;

	switch (c) {
	case 0: dense_forward(&b->df, b->x, R, b->g, b->u, b->y); break;
	case 1: dense_forward(&b->dh, b->x, R, b->g, b->u, b->y); break;
	case 2: case 3: case 4: case 5:
		ffn_kq_layer_forward(c < 4 ? &b->k6 : &b->k4,
			(c & 1) ? FFN_KQ_PATH_Q8K : FFN_KQ_PATH_F32,
			bkq_silu, b->x, H, R, b->y, H, b->s, b->sl);
		break;
	case 6: case 7:
		read_sink += read_kq_mat(b->q, nf, b->nbh, FFN_KQ_Q4K_BYTES);
		read_sink += read_kq_mat(b->q + gq, nf, b->nbh,
					 FFN_KQ_Q4K_BYTES);
		read_sink += c == 6 ?
			read_kq_mat(b->q + 2 * gq, H, b->nbn,
				    FFN_KQ_Q6K_BYTES) :
			read_kq_mat(b->q + 2 * gq + b->d6, H, b->nbn,
				    FFN_KQ_Q4K_BYTES);
		break;
	}
}

/* Every case reps times on R rows: best CPU and wall time, median CPU. */
static void
kq_time(struct kq_bench *b, size_t R, int reps, double best[NCASE],
	double wall[NCASE], double med[NCASE])
{
	double *all = malloc((size_t)reps * NCASE * sizeof(double));

	for (int c = 0; c < NCASE; c++)
		best[c] = wall[c] = 1e30;
	/* interleave the cases so that noise hits them alike */
	for (int k = 0; k < reps; k++)
		for (int c = 0; c < NCASE; c++) {
			double t, tw;

			/* start each case with cold caches, as a layer is
			 * when a shard serves many: a layer of 51 MB can
			 * otherwise still be partly in L3 from the case
			 * before */
			read_sink += read_only(evict, evict_len);
			t = bkq_cpu_now();
			tw = now();
			kq_case(b, c, R);
			t = bkq_cpu_now() - t;
			tw = now() - tw;
			all[c * reps + k] = t;
			if (t < best[c])
				best[c] = t;
			if (tw < wall[c])
				wall[c] = tw;
		}
	for (int c = 0; c < NCASE; c++) {
		qsort(all + c * reps, (size_t)reps, sizeof(double),
		      cmp_double);
		med[c] = all[c * reps + reps / 2];
	}
	free(all);
}

static void
bench_size(size_t H, size_t nf, int reps, double bw)
{
	static const size_t rows[2] = { 1, 8 };
	struct kq_bench b;
	float *x, *g;

	kq_setup(&b, H, nf);
	x = b.x;
	g = b.g;
	printf("\nH %zu, nf %zu: one-row q8k kernels with the weights in L2 "
	       "(compute only): Q4K gate/up rows %.1f GB/s, Q6K down rows "
	       "%.1f GB/s, Q4K down rows %.1f GB/s (streaming read %.1f)\n",
	       H, nf, hot_gbs(FFN_KQ_Q4_K, H, x, 0),
	       hot_gbs(FFN_KQ_Q6_K, nf, g, 0), hot_gbs(FFN_KQ_Q4_K, nf, g, 0),
	       bw);
	if (H % 256 == 0 && nf % 256 == 0)
		printf("  the same, f32 path: %.1f, %.1f, %.1f GB/s\n",
		       hot_gbs(FFN_KQ_Q4_K, H, x, 1),
		       hot_gbs(FFN_KQ_Q6_K, nf, g, 1),
		       hot_gbs(FFN_KQ_Q4_K, nf, g, 1));
	for (int ri = 0; ri < 2; ri++) {
		size_t R = rows[ri];
		double best[NCASE], wall[NCASE], med[NCASE];

		if (getenv("BENCH_KQ_ROWS") != NULL &&
		    (size_t)atoi(getenv("BENCH_KQ_ROWS")) != R)
			continue;
		kq_time(&b, R, reps, best, wall, med);
		printf("\nH %zu, nf %zu, %zu row%s (best of %d, one core, "
		       "kernels kq %s, ffn %s; times: thread CPU)\n", H, nf, R,
		       R > 1 ? "s" : "", reps, ffn_kq_isa_name(),
		       ffn_isa_name(ffn_active_isa()));
		printf("  %-20s %9s %9s %9s %10s %7s %9s %9s %9s\n",
		       "weights", "cpu ms", "wall ms", "MB", "GB/s eff",
		       "of bw", "vs f16", "med ms", "med vs");
		for (int c = 0; c < NCASE; c++) {
			double gbs = b.bytes[c] / best[c] / 1e9;

			printf("  %-20s %9.2f %9.2f %9.1f %10.2f %6.0f%% "
			       "%8.2fx %9.2f %8.2fx\n", case_name[c],
			       best[c] * 1e3, wall[c] * 1e3, b.bytes[c] / 1e6,
			       gbs, 100 * gbs / bw, best[1] / best[c],
			       med[c] * 1e3, med[1] / med[c]);
		}
	}
	kq_teardown(&b);
}

int
main(int argc, char **argv)
{
	int roof = argc > 1 && !strcmp(argv[1], "--roofline");
	int reps;
	size_t n = 1u << 29;
	uint8_t *buf;
	double bw, sink = 0;
	int rc = 0;

	argc -= roof;
	argv += roof;
	reps = argc > 1 ? atoi(argv[1]) : roof ? 3 : 5;
	if (argc > 1 && (argv[1][0] < '0' || argv[1][0] > '9')) {
		fprintf(stderr, "usage: bench-kquant [--roofline] [reps] "
			"[H:nf ...] (default 5, or 3 with --roofline; "
			"4096:14336 2560:10240)\n"
			"env: BENCH_KQ_ISA=scalar|avx2|avx512, "
			"BENCH_KQ_ROWS=1|8 (not with --roofline, which runs "
			"every kernel set and 1-128 rows)\n");
		return 2;
	}
	if (reps < 1)
		reps = 1;
	/* BENCH_KQ_ISA=scalar|avx2|avx512 forces the K-quant kernels */
	if (getenv("BENCH_KQ_ISA") != NULL) {
		const char *v = getenv("BENCH_KQ_ISA");
		int isa = !strcmp(v, "avx512") ? FFN_KQ_ISA_AVX512 :
			  !strcmp(v, "avx2") ? FFN_KQ_ISA_AVX2 :
			  FFN_KQ_ISA_SCALAR;

		if (ffn_kq_select(isa) < 0) {
			fprintf(stderr, "bench-kquant: %s not supported\n", v);
			return 1;
		}
	}
	/* --roofline runs the K-quant kernels alone: AVX2 hosts too */
	if (!roof && (!__builtin_cpu_supports("avx512f") ||
		      !__builtin_cpu_supports("f16c"))) {
		fprintf(stderr, "bench-kquant: needs AVX-512F and F16C for the "
			"dense reference kernels\n");
		return 1;
	}
	buf = bkq_big_alloc(n);
	memset(buf, 1, n);
	bw = read_bandwidth(buf, n, 3, &sink);
	evict = buf;	/* kept: its first 256 MiB evict the caches */
	printf("streaming read, one core: %.2f GB/s (512 MiB, best of 3, "
	       "CPU time)\n", bw);
	if (argc > 2) {
		for (int i = 2; i < argc && rc == 0; i++) {
			size_t H, nf;

			if (sscanf(argv[i], "%zu:%zu", &H, &nf) != 2)
				continue;
			if (roof)
				rc = bkq_roofline(H, nf, reps, bw * 1e9);
			else
				bench_size(H, nf, reps, bw);
		}
	} else if (roof) {
		rc = bkq_roofline(2560, 10240, reps, bw * 1e9);
		if (rc == 0)
			rc = bkq_roofline(4096, 14336, reps, bw * 1e9);
	} else {
		bench_size(4096, 14336, reps, bw);
		bench_size(2560, 10240, reps, bw);
	}
	munmap(buf, n);
	return rc ? rc : sink == 12345.0;
}
