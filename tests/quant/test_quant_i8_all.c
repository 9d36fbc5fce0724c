/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Suite 'slow': f32 -> i8 of every f32 value a row can hold, for rows of
 * several max|x| (hence scales), every SIMD kernel against the scalar
 * reference (spec/wire.md §5.3), bit for bit. With max 127 the scale is 1
 * and q = v exactly, so that case checks clamping and rounding half away
 * from zero on every float in [-127, 127]; the others check the division
 * (normal, subnormal and zero scales, and scale = Inf).
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "quant_test.h"

#define N 4096		/* values per row: [±max, 4095 values] */
#define ROWS 64		/* rows per batch */

struct batch {
	float *x;
	uint8_t *ref;
	uint8_t *out;
	size_t fill;	/* values in x, row headers included */
	uint64_t checked;
	uint32_t max_bits;
};

static void
batch_run(struct batch *b, const struct quant_kernels **ks, int nk)
{
	size_t rows = (b->fill + N - 1) / N;
	size_t bytes = rows * QUANT_I8_ROW_BYTES(N);

	if (b->fill == 0)
		return;
	/* Pad the last row with zeros: they change neither max nor result. */
	for (; b->fill < rows * N; b->fill++)
		b->x[b->fill] = 0.0f;
	quant_kernels_scalar.f32_to_i8_rows(b->ref, b->x, rows, N);
	for (int k = 0; k < nk; k++) {
		ks[k]->f32_to_i8_rows(b->out, b->x, rows, N);
		if (memcmp(b->out, b->ref, bytes) == 0)
			continue;
		for (size_t i = 0; i < bytes; i++) {
			size_t r = i / QUANT_I8_ROW_BYTES(N);
			size_t c = i % QUANT_I8_ROW_BYTES(N);

			if (b->out[i] == b->ref[i])
				continue;
			if (c < QUANT_I8_ROW_HDR)
				fail_msg("%s max %08x: row header differs",
					 ks[k]->name, b->max_bits);
			fail_msg("%s max %08x: q(%08x) = %d, reference %d",
				 ks[k]->name, b->max_bits,
				 qt_bits(b->x[r * N + c - QUANT_I8_ROW_HDR]),
				 (int8_t)b->out[i], (int8_t)b->ref[i]);
		}
	}
	b->fill = 0;
}

static void
batch_add(struct batch *b, uint32_t bits, const struct quant_kernels **ks,
	  int nk)
{
	if (b->fill % N == 0) {
		/* Row start: ±max, so the row's scale is max / 127. */
		b->x[b->fill] = qt_f32(b->max_bits ^
				       ((b->fill / N & 1) ? 0x80000000u : 0));
		b->fill++;
	}
	b->x[b->fill++] = qt_f32(bits);
	b->checked++;
	if (b->fill == ROWS * N)
		batch_run(b, ks, nk);
}

/* Every v with |v| <= max (both signs), and every NaN. */
static uint64_t
check_max(uint32_t max_bits, const struct quant_kernels **ks, int nk)
{
	struct batch b = { .max_bits = max_bits };

	b.x = malloc(ROWS * N * sizeof(float));
	b.ref = malloc(ROWS * QUANT_I8_ROW_BYTES(N));
	b.out = malloc(ROWS * QUANT_I8_ROW_BYTES(N));
	assert_non_null(b.x);
	assert_non_null(b.ref);
	assert_non_null(b.out);
	for (uint32_t s = 0; s < 2; s++) {
		uint32_t sign = s ? 0x80000000u : 0;

		for (uint32_t a = 0; a <= (max_bits & 0x7fffffffu); a++) {
			if (a == 0x7f800000u)
				break; /* ±Inf only as the max itself */
			batch_add(&b, sign | a, ks, nk);
		}
		for (uint32_t a = 0x7f800001u; a <= 0x7fffffffu; a++)
			batch_add(&b, sign | a, ks, nk);
	}
	batch_run(&b, ks, nk);
	free(b.x);
	free(b.ref);
	free(b.out);
	return b.checked;
}

static void
test_f32_to_i8_all_values(void **state)
{
	static const uint32_t maxes[] = {
		0x42fe0000, /* 127: scale 1, q = v */
		0x42c80000, /* 100: the worked frame's scale, 100/127 */
		0x3a83126f, /* 0.001 */
		0x7f7fffff, /* FLT_MAX */
		0x00012345, /* subnormal max, subnormal scale */
		0x0000003f, /* 63 * 2^-149: max / 127 rounds to 0 */
		0x7f800000, /* Inf: finite -> 0, NaN -> 0 */
	};
	const struct quant_kernels *ks[QUANT_ISA_COUNT];
	int nk = qt_simd_kernels(ks);

	assert_true(nk > 0); /* the dispatch test says which must exist */
	for (size_t m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++) {
		uint64_t c = check_max(maxes[m], ks, nk);

		print_message("max %08x: %llu values equal\n", maxes[m],
			      (unsigned long long)c);
	}
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f32_to_i8_all_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
