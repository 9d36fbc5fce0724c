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
 * Timings are the minimum over rounds, which interleave all items so that
 * noise from other processes hits them alike.
 *
 * usage: bench-quant [MiB of f32 for the large array, default 64]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quant.h"

#define ROW 4096
#define ROW_BATCH 2000	/* calls per timed batch, in cache */
#define ROUNDS_ROW 15
#define ROUNDS_BIG 7

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

static void
run(const struct quant_kernels *k, enum op op, struct bufs *b)
{
	switch (op) {
	case OP_F16:
		k->f32_to_f16(b->f16, b->f32, b->n);
		break;
	case OP_F16W:
		k->f16_to_f32(b->f32_out, b->f16, b->n);
		break;
	case OP_I8:
		k->f32_to_i8_rows(b->i8, b->f32, b->rows, ROW);
		break;
	default:
		k->i8_rows_to_f32(b->f32_out, b->i8, b->rows, ROW);
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

int
main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	const struct quant_kernels *ks[QUANT_ISA_COUNT];
	double row_ns[QUANT_ISA_COUNT][OP_COUNT];
	double big_ns[QUANT_ISA_COUNT][OP_COUNT];
	double memcpy_ns = 1e300;
	struct bufs row, big;
	int nk = 0;

	if (mib < 1)
		mib = 1;
	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++)
		if ((ks[nk] = quant_kernels_get(isa)) != NULL)
			nk++;
	bufs_init(&row, ROW);
	bufs_init(&big, mib * 1024 * 1024 / 4);
	for (int k = 0; k < nk; k++)
		for (int op = 0; op < OP_COUNT; op++)
			row_ns[k][op] = big_ns[k][op] = 1e300;

	/* In cache: batches of ROW_BATCH calls on the same 4096-value row. */
	for (int r = 0; r < ROUNDS_ROW; r++)
		for (int k = 0; k < nk; k++)
			for (int op = 0; op < OP_COUNT; op++) {
				run(ks[k], op, &row); /* warm */
				double t = now_ns();

				for (int i = 0; i < ROW_BATCH; i++) {
					run(ks[k], op, &row);
					__asm__ volatile("" ::: "memory");
				}
				t = (now_ns() - t) / ROW_BATCH;
				if (t < row_ns[k][op])
					row_ns[k][op] = t;
			}

	/* Out of cache: memcpy and every kernel once per round. */
	for (int r = 0; r < ROUNDS_BIG; r++) {
		double t = now_ns();

		memcpy(big.f32_out, big.f32, big.n * 4);
		__asm__ volatile("" ::: "memory");
		t = now_ns() - t;
		if (t < memcpy_ns)
			memcpy_ns = t;
		for (int k = 0; k < nk; k++)
			for (int op = 0; op < OP_COUNT; op++) {
				t = now_ns();
				run(ks[k], op, &big);
				__asm__ volatile("" ::: "memory");
				t = now_ns() - t;
				if (t < big_ns[k][op])
					big_ns[k][op] = t;
			}
	}

	double memcpy_bps = (double)big.n * 8 / memcpy_ns * 1e9;

	printf("bench-quant: row = %d values in cache (min of %d x %d calls); "
	       "large = %zu MiB f32 (min of %d)\n", ROW, ROUNDS_ROW, ROW_BATCH,
	       mib, ROUNDS_BIG);
	printf("memcpy %zu MiB: %.2f GB/s (read + written)\n", mib,
	       memcpy_bps / 1e9);
	printf("%-9s %-7s %10s %9s %12s %10s\n", "kernel", "isa", "ns/row",
	       "x scalar", "large GB/s", "vs memcpy");
	for (int op = 0; op < OP_COUNT; op++)
		for (int k = 0; k < nk; k++) {
			double bps = traffic(op, &big) / big_ns[k][op] * 1e9;

			printf("%-9s %-7s %10.1f %8.1fx %12.2f %9.0f%%\n",
			       op_names[op], ks[k]->name, row_ns[k][op],
			       row_ns[0][op] / row_ns[k][op], bps / 1e9,
			       100.0 * bps / memcpy_bps);
		}
	printf("active kernels: %s\n", quant_active_name());
	return 0;
}
