/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-quant: speed of the wire conversions (spec/wire.md §5.3), every
 * kernel of every ISA this CPU offers, measured side by side in one run:
 * - one 4096-value row in cache: ns per row, and speed-up over the scalar
 *   reference;
 * - a large array (default 64 MiB of f32) out of cache: bytes read plus
 *   bytes written per second, as a share of what memcpy() moves per second
 *   (it reads and writes the same buffer size), measured in the same rounds.
 * Timings are minima over rounds, which interleave all items so that
 * noise from other processes hits them alike; large arrays are timed per
 * 1 MiB chunk (see main) so that one preemption spoils one chunk only.
 *
 * usage: bench-quant [MiB of f32 for the large array, default 64]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quant.h"

#define ROW 4096
#define CHUNK (256 * 1024)	/* values per timed piece of a large array */
#define ROUNDS_ROW 41
#define ROUNDS_BIG 15

enum op { OP_F16, OP_F16W, OP_I8, OP_I8W, OP_COUNT };

static const char *const op_names[OP_COUNT] = {
	[OP_F16] = "f32->f16", [OP_F16W] = "f16->f32",
	[OP_I8] = "f32->i8", [OP_I8W] = "i8->f32",
};

struct bufs {
	size_t n;		/* values */
	size_t rows;		/* i8 rows of ROW values */
	float *f32;		/* n values of input */
	float *f32_out;		/* n values of output */
	uint16_t *f16;		/* n f16 values */
	uint8_t *i8;		/* rows i8 rows */
};

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *
alloc_touch(size_t bytes)
{
	void *p = aligned_alloc(64, (bytes + 63) & ~(size_t)63);

	if (p == NULL) {
		fprintf(stderr, "bench-quant: cannot allocate %zu bytes\n",
			bytes);
		exit(1);
	}
	memset(p, 0x11, bytes); /* fault the pages in before timing */
	return p;
}

static void
bufs_init(struct bufs *b, size_t n)
{
	uint64_t s = 42;

	b->n = n;
	b->rows = n / ROW;
	b->f32 = alloc_touch(n * 4);
	b->f32_out = alloc_touch(n * 4);
	b->f16 = alloc_touch(n * 2);
	b->i8 = alloc_touch(b->rows * QUANT_I8_ROW_BYTES(ROW));
	for (size_t i = 0; i < n; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		/* activations roughly in [-8, 8) */
		b->f32[i] = (float)((int32_t)(s >> 32)) / (float)(1 << 28);
	}
	quant_kernels_scalar.f32_to_f16(b->f16, b->f32, n);
	quant_kernels_scalar.f32_to_i8_rows(b->i8, b->f32, b->rows, ROW);
}

/* One kernel over values [v, v + cnt) of b (whole i8 rows). */
static void
run(const struct quant_kernels *k, enum op op, struct bufs *b, size_t v,
    size_t cnt)
{
	size_t r = v / ROW;
	uint8_t *i8 = b->i8 + r * QUANT_I8_ROW_BYTES(ROW);

	switch (op) {
	case OP_F16:
		k->f32_to_f16(b->f16 + v, b->f32 + v, cnt);
		break;
	case OP_F16W:
		k->f16_to_f32(b->f32_out + v, b->f16 + v, cnt);
		break;
	case OP_I8:
		k->f32_to_i8_rows(i8, b->f32 + v, cnt / ROW, ROW);
		break;
	default:
		k->i8_rows_to_f32(b->f32_out + v, i8, cnt / ROW, ROW);
		break;
	}
}

/* Bytes read plus bytes written by one run over b. */
static double
traffic(enum op op, const struct bufs *b)
{
	double i8 = (double)b->rows * QUANT_I8_ROW_BYTES(ROW);

	switch (op) {
	case OP_F16:
	case OP_F16W:
		return (double)b->n * 6;
	default:
		return (double)b->n * 4 + i8;
	}
}

/*
 * Minimum time of one call of k/op over b's first cnt values, in ns:
 * batches of about 100 us, so that a batch a scheduler tick hits is
 * simply not the minimum.
 */
static double
time_row(const struct quant_kernels *k, enum op op, struct bufs *b,
	 int batch)
{
	double t = now_ns();

	for (int i = 0; i < batch; i++) {
		run(k, op, b, 0, ROW);
		__asm__ volatile("" ::: "memory");
	}
	return (now_ns() - t) / batch;
}

/* Every kernel's best times over the rounds, and what they run on. */
struct bq {
	size_t mib, chunks;		/* large array: 1 MiB chunks */
	const struct quant_kernels *ks[QUANT_ISA_COUNT];
	int nk;
	double row_ns[QUANT_ISA_COUNT][OP_COUNT];
	int batch[QUANT_ISA_COUNT][OP_COUNT];	/* calls per row timing */
	double *big_ns[QUANT_ISA_COUNT][OP_COUNT];	/* per chunk */
	double *memcpy_ns;				/* per chunk */
	struct bufs row, big;
};

/* Buffers, kernels, batch sizes; every minimum at +inf. 0 or -ENOMEM. */
static int
bq_setup(struct bq *q, size_t mib)
{
	q->mib = mib;
	q->chunks = mib; /* 1 MiB of f32 each */
	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++)
		if ((q->ks[q->nk] = quant_kernels_get(isa)) != NULL)
			q->nk++;
	bufs_init(&q->row, ROW);
	bufs_init(&q->big, q->chunks * CHUNK);
	q->memcpy_ns = calloc(q->chunks, sizeof(double));
	for (int k = 0; k < q->nk; k++)
		for (int op = 0; op < OP_COUNT; op++) {
			double t = time_row(q->ks[k], op, &q->row, 10);

			q->row_ns[k][op] = 1e300;
			q->batch[k][op] = t > 1e5 ? 1 : (int)(1e5 / t);
			q->big_ns[k][op] = calloc(q->chunks, sizeof(double));
			if (q->big_ns[k][op] == NULL)
				return -ENOMEM;
			for (size_t c = 0; c < q->chunks; c++)
				q->big_ns[k][op][c] = 1e300;
		}
	if (q->memcpy_ns == NULL)
		return -ENOMEM;
	for (size_t c = 0; c < q->chunks; c++)
		q->memcpy_ns[c] = 1e300;
	return 0;
}

/* In cache: the same 4096-value row again and again. */
static void
bq_time_rows(struct bq *q)
{
	for (int r = 0; r < ROUNDS_ROW; r++)
		for (int k = 0; k < q->nk; k++)
			for (int op = 0; op < OP_COUNT; op++) {
				double t = time_row(q->ks[k], op, &q->row,
						    q->batch[k][op]);

				if (t < q->row_ns[k][op])
					q->row_ns[k][op] = t;
			}
}

/*
 * Out of cache: each pass streams the whole array; each 1 MiB chunk
 * is timed on its own and keeps its minimum over the rounds, and
 * the chunk minima are summed, so preemption in one pass only costs
 * the chunks it hit. memcpy is measured the same way, in turn.
 */
static void
bq_time_big(struct bq *q)
{
	struct bufs *big = &q->big;

	for (int r = 0; r < ROUNDS_BIG; r++) {
		for (size_t c = 0; c < q->chunks; c++) {
			double t = now_ns();

			memcpy(big->f32_out + c * CHUNK, big->f32 + c * CHUNK,
			       CHUNK * 4);
			__asm__ volatile("" ::: "memory");
			t = now_ns() - t;
			if (t < q->memcpy_ns[c])
				q->memcpy_ns[c] = t;
		}
		for (int k = 0; k < q->nk; k++)
			for (int op = 0; op < OP_COUNT; op++)
				for (size_t c = 0; c < q->chunks; c++) {
					double t = now_ns();

					run(q->ks[k], op, big, c * CHUNK,
					    CHUNK);
					__asm__ volatile("" ::: "memory");
					t = now_ns() - t;
					if (t < q->big_ns[k][op][c])
						q->big_ns[k][op][c] = t;
				}
	}
}

static void
bq_print(const struct bq *q)
{
	double mc = 0;

	for (size_t c = 0; c < q->chunks; c++)
		mc += q->memcpy_ns[c];

	double memcpy_bps = (double)q->big.n * 8 / mc * 1e9;

	printf("bench-quant: row = %d values in cache (min of %d batches "
	       "of ~100 us); large = %zu MiB of f32 (sum over 1 MiB chunks "
	       "of the min of %d passes)\n", ROW, ROUNDS_ROW, q->mib,
	       ROUNDS_BIG);
	printf("memcpy %zu MiB: %.2f GB/s (read + written)\n", q->mib,
	       memcpy_bps / 1e9);
	printf("%-9s %-7s %10s %9s %12s %10s\n", "kernel", "isa", "ns/row",
	       "x scalar", "large GB/s", "vs memcpy");
	for (int op = 0; op < OP_COUNT; op++)
		for (int k = 0; k < q->nk; k++) {
			double t = 0;

			for (size_t c = 0; c < q->chunks; c++)
				t += q->big_ns[k][op][c];

			double bps = traffic(op, &q->big) / t * 1e9;

			printf("%-9s %-7s %10.1f %8.1fx %12.2f %9.0f%%\n",
			       op_names[op], q->ks[k]->name,
			       q->row_ns[k][op],
			       q->row_ns[0][op] / q->row_ns[k][op], bps / 1e9,
			       100.0 * bps / memcpy_bps);
		}
	printf("active kernels: %s\n", quant_active_name());
}

int
main(int argc, char **argv)
{
	static struct bq q;
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;

	if (mib < 1)
		mib = 1;
	if (bq_setup(&q, mib) < 0)
		return 1;
	bq_time_rows(&q);
	bq_time_big(&q);
	bq_print(&q);
	return 0;
}
