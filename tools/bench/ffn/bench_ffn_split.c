/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-ffn --split: one row through one layer split across 2 threads
 * (issue 4: a layer's features cut into one slice per worker, partial
 * outputs summed, as lib/shard does for split_min_rows) against the same
 * row on 1 thread, measured side by side in one run: the two are
 * interleaved round by round and each keeps its best wall time. Wall
 * time, not CPU time: the point is the latency of one request. Both
 * threads are pinned, one per core (CPUs 0 and 1); the 1-thread case runs
 * on the first of them, dispatched the same way (a barrier), so both pay
 * the same hand-off. Kept apart from bench_ffn.c so the two merge apart.
 * Beside the wall times, each thread's CPU time for its share (split:
 * the larger of the two) shows what the split costs without the
 * preemption of a shared machine.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ffn.h"
#include "quant.h"

#include "bench_ffn_split.h"

enum { MODE_ONE = 0, MODE_SPLIT, MODE_QUIT };

struct split_bench {
	pthread_barrier_t go, done;
	int mode;			/* written by main before go */
	struct ffn_model *m;
	const float *x;
	float *part[2];			/* partial outputs */
	unsigned f0[2], f1[2];
	struct ffn_scratch *s[2];
	double cpu[2];			/* CPU seconds of the last round */
	int rc;
};

struct split_thread {
	struct split_bench *b;
	int idx, cpu;
};

static double
wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double
cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void
split_fill(float *p, size_t n, float scale, uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		p[i] = ((float)(s >> 40) / (float)(1 << 24) - 0.5f) * scale;
	}
}

static void *
split_thread_run(void *arg)
{
	struct split_thread *t = arg;
	struct split_bench *b = t->b;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	/* scratch on this thread's node, as a worker's */
	b->s[t->idx] = ffn_scratch_new(b->m, 1, -1);
	for (;;) {
		const float *xp[1] = { b->x };
		float *yp[1] = { b->part[t->idx] };
		int rc = 0;
		double c0;

		pthread_barrier_wait(&b->go);
		if (b->mode == MODE_QUIT)
			break;
		c0 = cpu_s();
		if (b->s[t->idx] == NULL)
			rc = -1;
		else if (b->mode == MODE_ONE && t->idx == 0)
			rc = ffn_compute(b->m, 0, xp, yp, 1, b->s[0]);
		else if (b->mode == MODE_SPLIT)
			rc = ffn_compute_part(b->m, 0, b->f0[t->idx],
					      b->f1[t->idx], xp, yp, 1,
					      b->s[t->idx]);
		if (rc != 0)
			b->rc = rc;
		b->cpu[t->idx] = cpu_s() - c0;
		pthread_barrier_wait(&b->done);
	}
	ffn_scratch_free(b->s[t->idx]);
	return NULL;
}

/* One round of mode; returns its wall time (seconds), *cpu the CPU
 * time of its (slowest) thread. */
static double
split_round(struct split_bench *b, int mode, float *y, unsigned H,
	    double *cpu)
{
	double t = wall_s();

	b->mode = mode;
	pthread_barrier_wait(&b->go);
	pthread_barrier_wait(&b->done);
	if (mode == MODE_SPLIT)	/* the last part's sum (lib/shard) */
		for (unsigned h = 0; h < H; h++)
			y[h] = b->part[0][h] + b->part[1][h];
	t = wall_s() - t;
	*cpu = mode == MODE_ONE || b->cpu[0] > b->cpu[1] ? b->cpu[0]
							 : b->cpu[1];
	return t;
}

/* One dtype of one shape: best 1-thread and split times over iters. */
static int
split_pair(const char *what, struct ffn_model *m, const float *x,
	   unsigned H, int iters, double *one, double *split, double cpu[2])
{
	struct split_bench b;
	struct split_thread t[2];
	pthread_t th[2];
	float *y = malloc((size_t)H * 4);

	memset(&b, 0, sizeof(b));
	b.m = m;
	b.x = x;
	b.part[0] = malloc((size_t)H * 4);
	b.part[1] = malloc((size_t)H * 4);
	if (y == NULL || b.part[0] == NULL || b.part[1] == NULL ||
	    ffn_part_range(m, 0, 0, 2, &b.f0[0], &b.f1[0]) ||
	    ffn_part_range(m, 0, 1, 2, &b.f0[1], &b.f1[1])) {
		fprintf(stderr, "split %s: setup failed\n", what);
		return 1;
	}
	pthread_barrier_init(&b.go, NULL, 3);
	pthread_barrier_init(&b.done, NULL, 3);
	for (int i = 0; i < 2; i++) {
		t[i] = (struct split_thread){ &b, i, i };
		pthread_create(&th[i], NULL, split_thread_run, &t[i]);
	}
	*one = *split = 1e30;
	split_round(&b, MODE_ONE, y, H, &cpu[0]);	/* warm both */
	split_round(&b, MODE_SPLIT, y, H, &cpu[1]);
	cpu[0] = cpu[1] = 1e30;
	for (int it = 0; it < iters; it++) {
		double ca, cs;
		double a = split_round(&b, MODE_ONE, y, H, &ca);
		double s = split_round(&b, MODE_SPLIT, y, H, &cs);

		if (a < *one)
			*one = a;
		if (s < *split)
			*split = s;
		if (ca < cpu[0])
			cpu[0] = ca;
		if (cs < cpu[1])
			cpu[1] = cs;
	}
	b.mode = MODE_QUIT;
	pthread_barrier_wait(&b.go);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&b.go);
	pthread_barrier_destroy(&b.done);
	free(b.part[0]);
	free(b.part[1]);
	free(y);
	if (b.rc != 0) {
		fprintf(stderr, "split %s: compute failed (%d)\n", what, b.rc);
		return 1;
	}
	return 0;
}

int
bench_split(const char *name, unsigned H, unsigned nf, int iters)
{
	size_t n = (size_t)nf * H;
	float *w[3], *x;
	uint16_t *h[3];
	struct ffn_layer l32, l16;
	struct ffn_model *m32 = NULL, *m16 = NULL;
	double one32, sp32, one16, sp16, c32[2], c16[2];
	int rc = 0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("\n== %s: layer split needs 2 CPUs; skipped\n", name);
		return 0;
	}
	for (int c = 0; c < 3; c++) {
		void *p = mmap(NULL, n * 4, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		void *q = mmap(NULL, n * 2, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED || q == MAP_FAILED) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		madvise(p, n * 4, MADV_HUGEPAGE);
		madvise(q, n * 2, MADV_HUGEPAGE);
		w[c] = p;
		h[c] = q;
		split_fill(w[c], n, c == 2 ? 1.0f / 120 : 1.0f / 64, c + 1);
		quant_f32_to_f16(h[c], w[c], n);
	}
	x = malloc((size_t)H * 4);
	if (x == NULL)
		return 1;
	split_fill(x, H, 1.0f, 99);
	memset(&l32, 0, sizeof(l32));
	l32.nf = nf;
	l32.layout = FFN_LAYOUT_INTERLEAVED;
	l16 = l32;
	{
		struct ffn_mat *a[3] = { &l32.gate, &l32.up, &l32.down };
		struct ffn_mat *b[3] = { &l16.gate, &l16.up, &l16.down };

		for (int c = 0; c < 3; c++) {
			*a[c] = (struct ffn_mat){ w[c], (size_t)H * 4, nf, H,
						  FFN_DT_F32 };
			*b[c] = (struct ffn_mat){ h[c], (size_t)H * 2, nf, H,
						  FFN_DT_F16 };
		}
	}
	if (ffn_model_wrap(H, FFN_ACT_SILU, &l32, 1, &m32) ||
	    ffn_model_wrap(H, FFN_ACT_SILU, &l16, 1, &m16))
		return 1;
	ffn_model_set_engine(m32, FFN_ENGINE_KERNEL, 0);
	rc |= split_pair("f32", m32, x, H, iters, &one32, &sp32, c32);
	rc |= split_pair("f16", m16, x, H, iters, &one16, &sp16, c16);
	if (rc == 0) {
		printf("\n== %s: hidden %u, intermediate %u: 1 row, one layer "
		       "split across 2 threads vs 1 row on 1 thread\n"
		       "   (wall time, best of %d interleaved rounds; threads "
		       "pinned to CPUs 0 and 1; kernels %s)\n", name, H, nf,
		       iters, ffn_isa_name(ffn_active_isa()));
		printf("                                wall                  "
		       "    CPU, slowest thread\n");
		printf("1 row  f32 on 1 thread        : %8.2f ms              "
		       "  %8.2f ms\n", one32 * 1e3, c32[0] * 1e3);
		printf("1 row  f32 split, 2 threads   : %8.2f ms  %5.2fx 1 "
		       "thread  %8.2f ms  %5.2fx (ideal 0.50x)\n", sp32 * 1e3,
		       sp32 / one32, c32[1] * 1e3, c32[1] / c32[0]);
		printf("1 row  f16 on 1 thread        : %8.2f ms              "
		       "  %8.2f ms\n", one16 * 1e3, c16[0] * 1e3);
		printf("1 row  f16 split, 2 threads   : %8.2f ms  %5.2fx 1 "
		       "thread  %8.2f ms  %5.2fx (ideal 0.50x)\n", sp16 * 1e3,
		       sp16 / one16, c16[1] * 1e3, c16[1] / c16[0]);
	}
	ffn_model_free(m32);
	ffn_model_free(m16);
	for (int c = 0; c < 3; c++) {
		munmap(w[c], n * 4);
		munmap(h[c], n * 2);
	}
	free(x);
	return rc;
}
