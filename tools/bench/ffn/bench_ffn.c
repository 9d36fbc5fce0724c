/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-ffn: one FFN layer of synthetic weights in memory, at
 * Llama-8B-like (4096 x 14336) and Gemma-3-4B-like (2560 x 10240) sizes.
 * Prints, measured side by side in one run on one core:
 *   - streaming read bandwidth (vectorised sum over the f32 weights);
 *   - 1 row, f32 weights: time and bytes/s as % of that (target >= 85%);
 *   - the same on all cores at once: one pinned thread per online CPU,
 *     aggregate bytes/s of one-row compute vs aggregate streaming read,
 *     the two in alternating rounds;
 *   - 1 row, f16 weights: time ratio vs f32 (target <= 0.6x);
 *   - 8 rows batched vs 1 row (target <= 2x), OpenBLAS sgemm beside it;
 *   - the FMA floor: this core's peak FMA rate, measured in registers,
 *     and the time 8 rows of FMAs alone take at that rate, against the
 *     1-row times (8 rows of f16 weights cost the same FMAs as f32 while
 *     one row of f16 reads half the bytes, so the floor, not the memory,
 *     bounds how close 8 rows f16 can come to one row f16);
 *   - an engine table (our kernels vs OpenBLAS per row count), from
 *     which ffn_dense.c's FFN_BLAS_MIN_ROWS_DEFAULT is chosen.
 * Figures are the best of --iters runs of this thread's CPU time: on a
 * shared machine wall time mostly measures preemption (long calls are
 * preempted more often, which skews the ratios).
 */
#include <cblas.h>
#include <errno.h>
#include <getopt.h>
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "ffn.h"
#include "quant.h"

#include "bench_ffn.h"
#include "bench_peak.h"
#include "bench_ffn_act.h"
#include "bench_ffn_kern.h"
#include "bench_ffn_roofline.h"
#include "bench_ffn_split.h"

double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void *
bench_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_HUGEPAGE);
	return p;
}

/* Cheap deterministic fill: timing does not depend on the distribution. */
void
bench_fill(float *p, size_t n, float scale, uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t i;

	for (i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		p[i] = ((int32_t)(s >> 32) * 0x1p-31f) * scale;
	}
}

__attribute__((target("avx512f"))) static float
sum_avx512(const float *p, size_t n)
{
	__m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
	size_t i;

	for (i = 0; i + 64 <= n; i += 64) {
		a0 = _mm512_add_ps(a0, _mm512_loadu_ps(p + i));
		a1 = _mm512_add_ps(a1, _mm512_loadu_ps(p + i + 16));
		a2 = _mm512_add_ps(a2, _mm512_loadu_ps(p + i + 32));
		a3 = _mm512_add_ps(a3, _mm512_loadu_ps(p + i + 48));
	}
	a0 = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
	return _mm512_reduce_add_ps(a0);
}

__attribute__((target("avx2"))) static float
sum_avx2(const float *p, size_t n)
{
	__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
	float t[8], s = 0;
	size_t i;

	for (i = 0; i + 32 <= n; i += 32) {
		a0 = _mm256_add_ps(a0, _mm256_loadu_ps(p + i));
		a1 = _mm256_add_ps(a1, _mm256_loadu_ps(p + i + 8));
		a2 = _mm256_add_ps(a2, _mm256_loadu_ps(p + i + 16));
		a3 = _mm256_add_ps(a3, _mm256_loadu_ps(p + i + 24));
	}
	a0 = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
	_mm256_storeu_ps(t, a0);
	for (i = 0; i < 8; i++)
		s += t[i];
	return s;
}

static volatile float sink;

/* Best of iters: floats multiplied-and-added per second by the active
 * kernels' vector width (0 for the scalar kernels: no floor printed). */
double
bench_fma_peak(int iters)
{
	enum ffn_isa isa = ffn_active_isa();

	if (isa == FFN_ISA_SCALAR)
		return 0;
	return bench_peak_fma(isa == FFN_ISA_AVX512 ? BENCH_PEAK_AVX512 :
			      BENCH_PEAK_AVX2, iters);
}

/* Best-of-iters read bandwidth (bytes/s) over the three matrices. */
double
bench_stream_bw(float *const m[3], size_t n, int iters)
{
	double best = 1e30;
	int it, c;

	for (it = 0; it < iters; it++) {
		double t = bench_now();
		float s = 0;

		for (c = 0; c < 3; c++)
			s += ffn_isa_supported(FFN_ISA_AVX512) ?
			     sum_avx512(m[c], n) : sum_avx2(m[c], n);
		t = bench_now() - t;
		sink = s;
		if (t < best)
			best = t;
	}
	return 3.0 * n * 4 / best;
}

int
bench_layer_make(struct bench_layer *L, unsigned H, unsigned nf)
{
	size_t n = (size_t)nf * H;
	int c, d;

	memset(L, 0, sizeof(*L));
	for (c = 0; c < 3; c++) {
		L->w[c] = bench_alloc(n * 4);
		L->h[c] = bench_alloc(n * 2);
		if (!L->w[c] || !L->h[c])
			return -ENOMEM;
		bench_fill(L->w[c], n, c == 2 ? 1.0f / 120 : 1.0f / 64,
			   c + 1);
		quant_f32_to_f16(L->h[c], L->w[c], n);
	}
	for (d = 0; d < 2; d++) {
		struct ffn_layer *l = &L->l[d];
		struct ffn_mat *a[3] = { &l->gate, &l->up, &l->down };

		l->nf = nf;
		l->layout = FFN_LAYOUT_INTERLEAVED;
		for (c = 0; c < 3; c++)
			*a[c] = (struct ffn_mat){
				d ? (void *)L->h[c] : (void *)L->w[c],
				(size_t)H * (d ? 2 : 4), nf, H,
				d ? FFN_DT_F16 : FFN_DT_F32 };
		if (ffn_model_wrap(H, FFN_ACT_SILU, l, 1, &L->m[d]))
			return -EINVAL;
	}
	return 0;
}

void
bench_layer_free(struct bench_layer *L, unsigned H, unsigned nf)
{
	size_t n = (size_t)nf * H;
	int c;

	for (c = 0; c < 2; c++)
		ffn_model_free(L->m[c]);
	for (c = 0; c < 3; c++) {
		munmap(L->w[c], n * 4);
		munmap(L->h[c], n * 2);
	}
}

static double
wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* All cores: every thread (pinned to its CPU) runs the same work, each
 * on its own copy of the weights (as workers serving different layers
 * do: threads reading one copy share its cache lines in L3, and one
 * pulled the other along past twice the one-core rate), started
 * together; aggregate bytes / wall time, best of iters rounds. Each
 * round runs the plain read and then the one-row compute, so the two
 * figures are measured side by side: this VM's memory changes speed
 * from minute to minute, and two separate best-of runs compared one
 * spell with another. Wall time, not CPU time: the point is the node's
 * bandwidth with every core pulling at once. */
struct allc {
	pthread_barrier_t *go, *done;	/* shared by all threads */
	int cpu, rounds;
	int pin_err;			/* pthread_setaffinity_np's error */
	double start, end;		/* wall time around this phase's work */
	float *const *w;
	size_t n;
	struct ffn_model *m;
	float *x, *y;
	unsigned H;
};

static void *
allc_thread(void *arg)
{
	struct allc *a = arg;
	struct ffn_scratch *s = ffn_scratch_new(a->m, 1, -1);
	const float *xp[1] = { a->x };
	float *y = malloc((size_t)a->H * 4);
	float *yp[1] = { y };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	/* Fails when a cpuset excludes the CPU: the threads may then
	 * share CPUs, and the all-cores line would not mean what it says. */
	a->pin_err = pthread_setaffinity_np(pthread_self(), sizeof(set),
					    &set);
	for (int r = 0; r < a->rounds; r++) {
		float t = 0;

		/* phase 1: the plain read */
		pthread_barrier_wait(a->go);
		a->start = wall();
		for (int c = 0; c < 3; c++)
			t += ffn_isa_supported(FFN_ISA_AVX512) ?
			     sum_avx512(a->w[c], a->n) :
			     sum_avx2(a->w[c], a->n);
		sink = t;
		a->end = wall();
		pthread_barrier_wait(a->done);
		/* phase 2: one row computed */
		pthread_barrier_wait(a->go);
		a->start = wall();
		ffn_compute(a->m, 0, xp, yp, 1, s);
		a->end = wall();
		pthread_barrier_wait(a->done);
	}
	ffn_scratch_free(s);
	free(y);
	return NULL;
}

/* Aggregate bytes/s of ncpu threads each streaming bytes: *rd the plain
 * read of w, *fn one row of m, rounds alternating. */
static void
all_cores(int ncpu, float *const (*w)[3], size_t n,
	  struct ffn_model *const *m, float *x, unsigned H, size_t bytes,
	  int iters, double *rd, double *fn)
{
	struct allc a[ncpu];
	pthread_t th[ncpu];
	pthread_barrier_t go, done;
	double best[2] = { 1e30, 1e30 };

	pthread_barrier_init(&go, NULL, ncpu + 1);
	pthread_barrier_init(&done, NULL, ncpu + 1);
	for (int i = 0; i < ncpu; i++) {
		a[i] = (struct allc){ .cpu = i, .rounds = iters + 1,
				      .w = w[i], .n = n,
				      .m = m[i], .x = x, .H = H,
				      .go = &go, .done = &done };
	}
	for (int i = 0; i < ncpu; i++)
		pthread_create(&th[i], NULL, allc_thread, &a[i]);
	for (int r = 0; r < iters + 1; r++) {
		for (int ph = 0; ph < 2; ph++) {
			double t0 = 1e300, t1 = 0;

			/* The phase runs from the first thread's start to the
			 * last one's end, timed by the pinned threads: this
			 * thread shares a CPU with one of them and may run
			 * late after the barrier (timed here, a phase once
			 * measured a fifth of its length). */
			pthread_barrier_wait(&go);
			pthread_barrier_wait(&done);
			for (int i = 0; i < ncpu; i++) {
				t0 = a[i].start < t0 ? a[i].start : t0;
				t1 = a[i].end > t1 ? a[i].end : t1;
			}
			if (r > 0 && t1 - t0 < best[ph])  /* round 0 warms */
				best[ph] = t1 - t0;
		}
	}
	for (int i = 0; i < ncpu; i++) {
		pthread_join(th[i], NULL);
		if (a[i].pin_err != 0) {
			fprintf(stderr, "bench-ffn: pthread_setaffinity_np(CPU %d): %s: the all-cores threads are not pinned\n",
				i, strerror(a[i].pin_err));
		}
	}
	pthread_barrier_destroy(&go);
	pthread_barrier_destroy(&done);
	*rd = (double)ncpu * bytes / best[0];
	*fn = (double)ncpu * bytes / best[1];
}

/* The time of one ffn_compute() call of R rows (x, y: R rows of H). */
static double
time_once(struct ffn_model *m, struct ffn_scratch *s, float *x, float *y,
	  unsigned H, unsigned R)
{
	const float *xp[64] = { NULL };
	float *yp[64] = { NULL };
	unsigned r;
	double t;

	for (r = 0; r < R; r++) {
		xp[r] = x + (size_t)r * H;
		yp[r] = y + (size_t)r * H;
	}
	t = bench_now();
	if (ffn_compute(m, 0, xp, yp, R, s) != 0) {
		fprintf(stderr, "ffn_compute failed\n");
		exit(1);
	}
	return bench_now() - t;
}

/* *best = the least t of the rounds after round 0 (which warms). */
static void
keep_min(double *best, int round, double t)
{
	if (round > 0 && t < *best)
		*best = t;
}

/* Best time of one ffn_compute() call of R rows, after a warm call. */
static double
time_compute(struct ffn_model *m, struct ffn_scratch *s, float *x, float *y,
	     unsigned H, unsigned R, int iters)
{
	double best = 1e30;
	int it;

	for (it = 0; it <= iters; it++)
		keep_min(&best, it, time_once(m, s, x, y, H, R));
	return best;
}

/* bench's single-core figures: best of the rounds after round 0. */
struct bf_times {
	double bw;			/* streaming read, bytes/s */
	double t1, t8, t16, t816;	/* our kernels: rows, f32 or f16 */
	double t1b, t8b;		/* OpenBLAS, f32 */
};

/*
 * Every figure once per round, best of each over the rounds (round 0
 * warms): the ratios then compare the same spells of this VM's memory,
 * which changes speed from minute to minute; separate best-of runs of
 * each figure compared one spell with another.
 */
static void
time_rounds(const struct bench_layer *L, struct ffn_scratch *s, float *x,
	    float *y, unsigned H, unsigned nf, int iters, struct bf_times *t)
{
	struct ffn_model *m32 = L->m[0], *m16 = L->m[1];

	t->bw = 0;
	t->t1 = t->t8 = t->t16 = t->t816 = t->t1b = t->t8b = 1e30;
	for (int it = 0; it <= iters; it++) {
		double b = bench_stream_bw(L->w, (size_t)nf * H, 1);

		if (it > 0 && b > t->bw)
			t->bw = b;
		ffn_model_set_engine(m32, FFN_ENGINE_KERNEL, 0);
		keep_min(&t->t1, it, time_once(m32, s, x, y, H, 1));
		keep_min(&t->t8, it, time_once(m32, s, x, y, H, 8));
		keep_min(&t->t16, it, time_once(m16, s, x, y, H, 1));
		keep_min(&t->t816, it, time_once(m16, s, x, y, H, 8));
		ffn_model_set_engine(m32, FFN_ENGINE_BLAS, 0);
		keep_min(&t->t1b, it, time_once(m32, s, x, y, H, 1));
		keep_min(&t->t8b, it, time_once(m32, s, x, y, H, 8));
	}
}

/* The all-cores lines: thread 0 reads L's weights, every other its own
 * copy. 0, or 1 when out of memory. */
static int
all_cores_lines(const struct bench_layer *L, float *x, unsigned H,
		unsigned nf, int iters)
{
	size_t n = (size_t)nf * H, bytes32 = n * 4 * 3;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), c;
	float *wc[ncpu][3];
	struct ffn_layer lc[ncpu];
	struct ffn_model *mc[ncpu];
	double abw, afn;

	ffn_model_set_engine(L->m[0], FFN_ENGINE_KERNEL, 0);
	for (int i = 0; i < ncpu; i++) {
		struct ffn_mat *a[3] = { &lc[i].gate, &lc[i].up,
					 &lc[i].down };

		lc[i] = L->l[0];
		mc[i] = L->m[0];
		for (c = 0; c < 3; c++) {
			wc[i][c] = L->w[c];
			if (i == 0)
				continue;
			wc[i][c] = bench_alloc(n * 4);
			if (wc[i][c] == NULL) {
				fprintf(stderr, "out of memory\n");
				return 1;
			}
			memcpy(wc[i][c], L->w[c], n * 4);
			a[c]->data = wc[i][c];
		}
		if (i > 0 && ffn_model_wrap(H, FFN_ACT_SILU, &lc[i], 1,
					    &mc[i]))
			return 1;
		if (i > 0)
			ffn_model_set_engine(mc[i], FFN_ENGINE_KERNEL, 0);
	}
	all_cores(ncpu, wc, n, mc, x, H, bytes32, iters, &abw, &afn);
	for (int i = 1; i < ncpu; i++) {
		ffn_model_free(mc[i]);
		for (c = 0; c < 3; c++)
			munmap(wc[i][c], n * 4);
	}

	printf("stream read (%d cores)    : %6.2f GB/s aggregate\n",
	       ncpu, abw / 1e9);
	printf("1 row  f32 kernel x %d    : %6.2f GB/s aggregate  %5.1f%% of stream (target >= 85%%)\n",
	       ncpu, afn / 1e9, 100.0 * afn / abw);
	return 0;
}

/* The lines after the all-cores ones: f16, 8 rows, the FMA floor. */
static void
rows_lines(const struct bf_times *t, size_t n, double fma)
{
	double fl;

	printf("1 row  f16 kernel        : %8.2f ms  %5.2fx f32 time (target <= 0.6x)\n",
	       t->t16 * 1e3, t->t16 / t->t1);
	printf("8 rows f32 kernel        : %8.2f ms  %5.2fx 1 row (target <= 2x)\n",
	       t->t8 * 1e3, t->t8 / t->t1);
	printf("8 rows f32 OpenBLAS sgemm: %8.2f ms  %5.2fx 1-row kernel\n",
	       t->t8b * 1e3, t->t8b / t->t1);
	printf("8 rows f16 kernel        : %8.2f ms  %5.2fx 1-row f16, %5.2fx 1-row f32\n",
	       t->t816 * 1e3, t->t816 / t->t16, t->t816 / t->t1);
	if (fma > 0) {
		/* gate, up and down: 3 * nf * H multiply-adds per row */
		fl = 3.0 * n * 8 / fma;
		printf("FMA peak (1 core)        : %8.2f G floats/s (%s, in registers)\n",
		       fma / 1e9, ffn_isa_name(ffn_active_isa()));
		printf("8 rows, FMAs alone       : %8.2f ms  %5.2fx 1-row f16, %5.2fx 1-row f32 (floor)\n",
		       fl * 1e3, fl / t->t16, fl / t->t1);
	}
}

/* --table: kernel against OpenBLAS per row count, f32. */
static void
engine_table(struct ffn_model *m32, struct ffn_scratch *s, float *x,
	     float *y, unsigned H, int iters)
{
	static const unsigned rs[] = { 1, 2, 3, 4, 6, 8, 12, 16, 17,
				       24, 32, 48, 64 };
	unsigned i;

	printf("engine table, f32 (ms per call; per-row ms):\n");
	printf("  rows   kernel        OpenBLAS      faster\n");
	for (i = 0; i < sizeof(rs) / sizeof(rs[0]); i++) {
		double tk, tb;

		ffn_model_set_engine(m32, FFN_ENGINE_KERNEL, 0);
		tk = time_compute(m32, s, x, y, H, rs[i], iters);
		ffn_model_set_engine(m32, FFN_ENGINE_BLAS, 0);
		tb = time_compute(m32, s, x, y, H, rs[i], iters);
		printf("  %4u %8.2f (%5.2f) %8.2f (%5.2f)  %s\n", rs[i],
		       tk * 1e3, tk * 1e3 / rs[i], tb * 1e3,
		       tb * 1e3 / rs[i], tk <= tb ? "kernel" : "blas");
	}
}

static int
bench(const char *name, unsigned H, unsigned nf, int iters, int table)
{
	size_t n = (size_t)nf * H, bytes32 = n * 4 * 3;
	struct bench_layer L;
	struct ffn_scratch *s;
	struct bf_times t;
	float *x, *y;
	double fma;
	int rc;

	rc = bench_layer_make(&L, H, nf);
	if (rc < 0) {
		if (rc == -ENOMEM)
			fprintf(stderr, "out of memory\n");
		return 1;
	}
	s = ffn_scratch_new(L.m[0], 64, -1);
	x = malloc((size_t)64 * H * 4);
	y = malloc((size_t)64 * H * 4);
	if (!s || !x || !y)
		return 1;
	bench_fill(x, (size_t)64 * H, 1.0f, 99);
	time_rounds(&L, s, x, y, H, nf, iters, &t);
	fma = bench_fma_peak(iters);

	printf("\n== %s: hidden %u, intermediate %u, one layer, f32 %.0f MB, "
	       "f16 %.0f MB, kernels %s\n", name, H, nf, bytes32 / 1e6,
	       bytes32 / 2e6, ffn_isa_name(ffn_active_isa()));
	printf("stream read (1 core)     : %8.2f ms  %6.2f GB/s\n",
	       bytes32 / t.bw * 1e3, t.bw / 1e9);
	printf("1 row  f32 kernel        : %8.2f ms  %6.2f GB/s  %5.1f%% of stream (target >= 85%%)\n",
	       t.t1 * 1e3, bytes32 / t.t1 / 1e9, 100.0 * bytes32 / t.t1 / t.bw);
	printf("1 row  f32 OpenBLAS sgemv: %8.2f ms  %6.2f GB/s  %5.1f%% of stream\n",
	       t.t1b * 1e3, bytes32 / t.t1b / 1e9,
	       100.0 * bytes32 / t.t1b / t.bw);
	if (all_cores_lines(&L, x, H, nf, iters) != 0)
		return 1;
	rows_lines(&t, n, fma);
	if (table)
		engine_table(L.m[0], s, x, y, H, iters);
	ffn_scratch_free(s);
	bench_layer_free(&L, H, nf);
	free(x);
	free(y);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "size", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'i' },
		{ "isa", required_argument, NULL, 'a' },
		{ "table", no_argument, NULL, 't' },
		{ "split", no_argument, NULL, 'p' },
		{ "roofline", no_argument, NULL, 'r' },
		{ "act", no_argument, NULL, 'c' },
		{ "kernels", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct {
		const char *key, *name;
		unsigned H, nf;
	} sizes[] = {
		{ "gemma", "Gemma-3-4B-like", 2560, 10240 },
		{ "llama", "Llama-8B-like", 4096, 14336 },
	};
	const char *size = "both";
	int iters = 10, table = 0, split = 0, roof = 0, act = 0, kern = 0;
	int c, rc = 0;
	int ran = 0;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': size = optarg; break;
		case 'i': iters = atoi(optarg); break;
		case 't': table = 1; break;
		case 'p': split = 1; break;
		case 'r': roof = 1; break;
		case 'c': act = 1; break;
		case 'k': kern = 1; break;
		case 'a':
			if (ffn_select_isa(strcmp(optarg, "avx2") == 0 ?
					   FFN_ISA_AVX2 :
					   strcmp(optarg, "scalar") == 0 ?
					   FFN_ISA_SCALAR : FFN_ISA_AVX512)) {
				fprintf(stderr, "ISA %s not supported\n",
					optarg);
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: %s [--size llama|gemma|both] "
				"[--iters N] [--isa avx512|avx2|scalar] "
				"[--table] [--split] [--roofline] [--act] "
				"[--kernels]\n",
				argv[0]);
			return 2;
		}
	}
	if (iters < 1)
		iters = 1;
	/*
	 * Some hosts set OPENBLAS_CORETYPE (Haswell) or OPENBLAS_L2_SIZE:
	 * OpenBLAS would then run kernels it did not pick for this core and
	 * the comparison would be against less than its best. It reads them
	 * when it loads, so bench-ffn runs itself again without them.
	 */
	if (getenv("OPENBLAS_CORETYPE") || getenv("OPENBLAS_L2_SIZE")) {
		unsetenv("OPENBLAS_CORETYPE");
		unsetenv("OPENBLAS_L2_SIZE");
		execv("/proc/self/exe", argv);
		fprintf(stderr, "execv /proc/self/exe: %s\n", strerror(errno));
		return 1;
	}
	printf("OpenBLAS core: %s (its own pick: OPENBLAS_CORETYPE and "
	       "OPENBLAS_L2_SIZE unset)\n", openblas_get_corename());
	/* --roofline, --split, --act or --kernels: only that section
	 * (bench_ffn_roofline.c, bench_ffn_split.c, bench_ffn_act.c,
	 * bench_ffn_kern.c) */
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		const char *nm = sizes[i].name;
		unsigned H = sizes[i].H, nf = sizes[i].nf;

		if (strcmp(size, sizes[i].key) && strcmp(size, "both"))
			continue;
		rc |= roof ? bench_roofline(nm, H, nf, iters) :
		      split ? bench_split(nm, H, nf, iters) :
		      act ? bench_act(nm, nf, iters) :
		      kern ? bench_kern(nm, H, nf, iters) :
		      bench(nm, H, nf, iters, table);
		ran++;
	}
	if (ran == 0) {
		fprintf(stderr, "--size %s: not llama, gemma or both\n", size);
		return 2;
	}
	return rc;
}
