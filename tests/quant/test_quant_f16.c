/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * f16 kernels (spec/wire.md §5.3): every SIMD kernel gives the scalar
 * reference's bits, out of place and in place, for every length; the
 * worked frame of §8. (All 2^32 f32 inputs: test_quant_f16_all, 'slow'.)
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "quant_test.h"

#define GUARD 64
#define GUARD_BYTE 0xa5

/* f16 -> f32: all 65536 inputs, every ISA, bit for bit. */
static void
test_f16_to_f32_all_inputs(void **state)
{
	const struct quant_kernels *ks[QUANT_ISA_COUNT];
	int nk = qt_simd_kernels(ks);
	uint16_t *in = malloc(65536 * sizeof(*in));
	float *ref = malloc(65536 * sizeof(*ref));
	float *out = malloc(65536 * sizeof(*out));

	assert_non_null(in);
	assert_non_null(ref);
	assert_non_null(out);
	for (uint32_t h = 0; h < 65536; h++)
		in[h] = (uint16_t)h;
	quant_kernels_scalar.f16_to_f32(ref, in, 65536);
	for (uint32_t h = 0; h < 65536; h++)
		assert_int_equal(qt_bits(ref[h]),
				 qt_bits(quant_f16_to_f32_1((uint16_t)h)));
	for (int k = 0; k < nk; k++) {
		memset(out, 0, 65536 * sizeof(*out));
		ks[k]->f16_to_f32(out, in, 65536);
		for (uint32_t h = 0; h < 65536; h++)
			if (qt_bits(out[h]) != qt_bits(ref[h]))
				fail_msg("%s f16_to_f32(%04x) = %08x, "
					 "reference %08x", ks[k]->name, h,
					 qt_bits(out[h]), qt_bits(ref[h]));
	}
	free(in);
	free(ref);
	free(out);
	(void)state;
}

/* f16 -> f32 at every length 0..200 and offset: tails and no overrun. */
static void
test_f16_to_f32_lengths(void **state)
{
	const struct quant_kernels *ks[QUANT_ISA_COUNT];
	int nk = qt_simd_kernels(ks);
	uint64_t seed = 16;
	uint16_t in[256];
	float ref[256], out[256 + GUARD];

	for (size_t i = 0; i < 256; i++)
		in[i] = (uint16_t)qt_rand(&seed);
	for (int k = 0; k < nk; k++)
		for (size_t off = 0; off < 3; off++)
			for (size_t n = 0; n <= 200; n++) {
				quant_kernels_scalar.f16_to_f32(ref,
							       in + off, n);
				memset(out, GUARD_BYTE, sizeof(out));
				ks[k]->f16_to_f32(out + off, in + off, n);
				assert_memory_equal(out + off, ref,
						    n * sizeof(float));
				for (size_t b = (off + n) * 4;
				     b < sizeof(out); b++)
					assert_int_equal(
						((uint8_t *)out)[b],
						GUARD_BYTE);
				for (size_t b = 0; b < off * 4; b++)
					assert_int_equal(
						((uint8_t *)out)[b],
						GUARD_BYTE);
			}
	(void)state;
}

/* Inputs that exercise every f16 path: specials, boundaries, random. */
static void
fill_f32_patterns(uint32_t *x, size_t n, uint64_t seed)
{
	static const uint32_t special[] = {
		0x00000000, 0x80000000, 0x7f800000, 0xff800000,
		0x7fc00000, 0xffc00000, 0x7f800001, 0x7fbfffff, 0xff812345,
		0x00000001, 0x807fffff, 0x33000000, 0x33000001, 0xb3000000,
		0x33800000, 0x387fc000, 0x387fe000, 0x38800000, 0x477fe000,
		0x477fefff, 0x477ff000, 0xc77ff000, 0x7f7fffff, 0x3f800000,
		0x3f801000, 0x3f803000, 0x3f801001, 0x3eaaaaab,
	};
	size_t ns = sizeof(special) / sizeof(special[0]);

	for (size_t i = 0; i < n; i++) {
		uint64_t r = qt_rand(&seed);

		if (i < ns)
			x[i] = special[i];
		else if (r & 1)
			/* Around the f16 range, where rounding matters. */
			x[i] = ((uint32_t)(r >> 8) & 0x80001fffu) |
			       ((0x30u + (uint32_t)((r >> 40) % 0x20)) << 23) |
			       ((uint32_t)(r >> 20) & 0x7fe000u);
		else
			x[i] = (uint32_t)(r >> 16);
	}
}

/* f32 -> f16, every length 0..200 and 4096 + k, out of place and in place. */
static void
test_f32_to_f16_lengths_in_place(void **state)
{
	const struct quant_kernels *ks[QUANT_ISA_COUNT];
	int nk = qt_simd_kernels(ks);
	const size_t max = 4096 + 70;
	uint32_t *src = malloc(max * 4);
	uint16_t *ref = malloc(max * 2);
	uint8_t *out = malloc(max * 4 + GUARD);
	uint8_t *buf = malloc(max * 4 + GUARD);

	assert_non_null(src);
	assert_non_null(ref);
	assert_non_null(out);
	assert_non_null(buf);
	fill_f32_patterns(src, max, 32);
	for (int k = 0; k < nk; k++)
		for (size_t n = 0; n <= max; n = n < 200 ? n + 1 :
		     n < 4096 ? 4096 : n + 1) {
			const float *s = (const float *)src;

			quant_kernels_scalar.f32_to_f16(ref, s, n);
			for (size_t i = 0; i < n; i++)
				assert_int_equal(ref[i],
						 quant_f32_to_f16_1(s[i]));
			/* Out of place, unaligned dst, guard after. */
			memset(out, GUARD_BYTE, max * 4 + GUARD);
			ks[k]->f32_to_f16((uint16_t *)(out + 2), s, n);
			if (memcmp(out + 2, ref, n * 2) != 0)
				fail_msg("%s f32_to_f16 differs, n=%zu",
					 ks[k]->name, n);
			assert_int_equal(out[0], GUARD_BYTE);
			assert_int_equal(out[1], GUARD_BYTE);
			for (size_t b = 2 + n * 2; b < 2 + n * 2 + GUARD; b++)
				assert_int_equal(out[b], GUARD_BYTE);
			/* In place: f16 in the first 2n bytes of the f32s. */
			memset(buf, GUARD_BYTE, max * 4 + GUARD);
			memcpy(buf, src, n * 4);
			ks[k]->f32_to_f16((uint16_t *)buf, (const float *)buf,
					  n);
			if (memcmp(buf, ref, n * 2) != 0)
				fail_msg("%s f32_to_f16 in place differs, "
					 "n=%zu", ks[k]->name, n);
			for (size_t b = n * 4; b < n * 4 + GUARD; b++)
				assert_int_equal(buf[b], GUARD_BYTE);
		}
	free(src);
	free(ref);
	free(out);
	free(buf);
	(void)state;
}

/* The scalar in-place form agrees with its out-of-place form too. */
static void
test_f32_to_f16_scalar_in_place(void **state)
{
	uint32_t src[300];
	uint16_t ref[300];
	uint32_t buf[300];

	fill_f32_patterns(src, 300, 48);
	for (size_t n = 1; n <= 300; n++) {
		quant_kernels_scalar.f32_to_f16(ref, (const float *)src, n);
		memcpy(buf, src, n * 4);
		quant_kernels_scalar.f32_to_f16((uint16_t *)buf,
						(const float *)buf, n);
		assert_memory_equal(buf, ref, n * 2);
	}
	(void)state;
}

/*
 * spec/wire.md §5.3 f16, from values computed outside this library
 * (numpy's float16 cast, correct round-to-nearest-even; NaNs as F16C
 * and quant.h give them): round to nearest even at every boundary,
 * overflow to ±Inf (no clamping), f32 subnormals to ±0, small normals to
 * f16 subnormals, sign of zero kept, NaN stays a quiet NaN. Every kernel,
 * the scalar reference included, so a CPU without F16C (where only the
 * scalar code runs) is held to the spec and not only to itself.
 */
static void
test_f32_to_f16_spec_values(void **state)
{
	static const uint32_t cases[][2] = {
		{ 0x3f800000, 0x3c00 }, /* 1 */
		{ 0x80000000, 0x8000 }, /* -0: sign kept */
		{ 0x477fe000, 0x7bff }, /* 65504, the largest f16 */
		{ 0x477fefff, 0x7bff }, /* just below the halfway point */
		{ 0x477ff000, 0x7c00 }, /* 65520: tie to even -> +Inf */
		{ 0xc77ff000, 0xfc00 }, /* -65520 -> -Inf */
		{ 0x7f7fffff, 0x7c00 }, /* FLT_MAX -> +Inf, not 65504 */
		{ 0x7f800000, 0x7c00 }, /* +Inf */
		{ 0xff800000, 0xfc00 }, /* -Inf */
		{ 0x00000001, 0x0000 }, /* f32 subnormal -> +0 */
		{ 0x807fffff, 0x8000 }, /* f32 subnormal -> -0 */
		{ 0x33800000, 0x0001 }, /* 2^-24, the smallest f16 */
		{ 0x33000000, 0x0000 }, /* 2^-25: tie to even -> 0 */
		{ 0x33000001, 0x0001 }, /* above the tie -> 2^-24 */
		{ 0xb3000001, 0x8001 },
		{ 0x33c00000, 0x0002 }, /* 1.5 * 2^-24: tie to even -> 2 */
		{ 0x38000000, 0x0200 }, /* 2^-15: f16 subnormal */
		{ 0x387fc000, 0x03ff }, /* rounds within the subnormals */
		{ 0x387fe000, 0x0400 }, /* rounds up to the smallest normal */
		{ 0x38800000, 0x0400 }, /* 2^-14 */
		{ 0x3f801000, 0x3c00 }, /* 1 + 2^-11: tie to even, down */
		{ 0x3f803000, 0x3c02 }, /* 1 + 3 * 2^-11: tie to even, up */
		{ 0x3f801001, 0x3c01 }, /* above the tie */
		{ 0x3eaaaaab, 0x3555 }, /* 1/3 */
		{ 0x3b000000, 0x1800 }, /* 2^-9 */
		{ 0x7fc00000, 0x7e00 }, /* quiet NaN */
		{ 0xffc00000, 0xfe00 },
		{ 0x7f800001, 0x7e00 }, /* signalling NaN -> quiet */
		{ 0x7fbfffff, 0x7fff }, /* top 10 payload bits kept */
	};
	const size_t nc = sizeof(cases) / sizeof(cases[0]);
	float x[sizeof(cases) / sizeof(cases[0])];
	uint16_t h[sizeof(cases) / sizeof(cases[0])];

	for (size_t i = 0; i < nc; i++) {
		x[i] = qt_f32(cases[i][0]);
		if (quant_f32_to_f16_1(x[i]) != cases[i][1])
			fail_msg("quant_f32_to_f16_1(%08x) = %04x, spec %04x",
				 cases[i][0], quant_f32_to_f16_1(x[i]),
				 cases[i][1]);
	}
	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++) {
		const struct quant_kernels *k = quant_kernels_get(isa);

		if (k == NULL)
			continue;
		k->f32_to_f16(h, x, nc);
		for (size_t i = 0; i < nc; i++)
			if (h[i] != cases[i][1])
				fail_msg("%s f32_to_f16(%08x) = %04x, spec %04x",
					 k->name, cases[i][0], h[i],
					 cases[i][1]);
	}
	(void)state;
}

/*
 * spec/wire.md §8: output [0.25, -1.5, 100, -0.001] as f16 is
 * 0034 00be 4056 1994, after layer 5, seq_len 1, latency 7.3.
 */
static void
test_f16_worked_frame(void **state)
{
	static const uint8_t want[] = {
		0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
		0x9a, 0x99, 0xe9, 0x40,
		0x00, 0x34, 0x00, 0xbe, 0x40, 0x56, 0x19, 0x94,
	};
	const float out[4] = { 0.25f, -1.5f, 100.0f, -0.001f };
	char hex[64];

	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++) {
		const struct quant_kernels *k = quant_kernels_get(isa);
		uint8_t frame[12 + 16];
		uint32_t layer = 5, seq_len = 1;
		float lat = 7.3f;

		if (k == NULL)
			continue; /* the dispatch test checks which exist */
		memcpy(frame, &layer, 4);
		memcpy(frame + 4, &seq_len, 4);
		memcpy(frame + 8, &lat, 4);
		memcpy(frame + 12, out, sizeof(out));
		/* In place, as the shard narrows its output buffer. */
		k->f32_to_f16((uint16_t *)(frame + 12),
			      (const float *)(frame + 12), 4);
		if (memcmp(frame, want, sizeof(want)) != 0)
			fail_msg("%s: frame %s", k->name,
				 qt_hex(frame, sizeof(want), hex, sizeof(hex)));
		/* Through the dispatcher, out of place. */
		uint16_t h[4];

		assert_int_equal(quant_select(isa), 0);
		quant_f32_to_f16(h, out, 4);
		assert_memory_equal(h, want + 12, 8);
	}
	/*
	 * §8's batch response (layer 5 -> [0.25, -1.5], layer 20 ->
	 * [100, -0.001], hidden 2) as f16: each result's payload narrowed in
	 * place after its own header, num_values still 2.
	 */
	static const uint8_t batch_want[] = {
		0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0x9a, 0x99, 0xe9, 0x40,
		0x05, 0, 0, 0, 0x01, 0, 0, 0, 0x02, 0, 0, 0, 0x00, 0x34,
		0x00, 0xbe,
		0x14, 0, 0, 0, 0x01, 0, 0, 0, 0x02, 0, 0, 0, 0x40, 0x56,
		0x19, 0x94,
	};

	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++) {
		const struct quant_kernels *k = quant_kernels_get(isa);
		uint8_t frame[sizeof(batch_want)];
		float res[2];

		if (k == NULL)
			continue;
		memcpy(frame, batch_want, 24); /* frame and first headers */
		memcpy(res, out, 8);
		k->f32_to_f16((uint16_t *)res, res, 2);
		memcpy(frame + 24, res, 4);
		memcpy(frame + 28, batch_want + 28, 12);
		memcpy(res, out + 2, 8);
		k->f32_to_f16((uint16_t *)res, res, 2);
		memcpy(frame + 40, res, 4);
		assert_memory_equal(frame, batch_want, sizeof(batch_want));
	}
	/* Widening the f16 back: exact values of the rounded numbers. */
	float back[4];

	quant_f16_to_f32(back, (const uint16_t *)(want + 12), 4);
	assert_true(back[0] == 0.25f && back[1] == -1.5f && back[2] == 100.0f);
	assert_true(back[3] == -0.0010004043579101562f);
	assert_int_equal(quant_limit(QUANT_ISA_COUNT - 1), 0);
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f16_to_f32_all_inputs),
		cmocka_unit_test(test_f16_to_f32_lengths),
		cmocka_unit_test(test_f32_to_f16_lengths_in_place),
		cmocka_unit_test(test_f32_to_f16_scalar_in_place),
		cmocka_unit_test(test_f16_worked_frame),
		cmocka_unit_test(test_f32_to_f16_spec_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
