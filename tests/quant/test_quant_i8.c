/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * i8 kernels (spec/wire.md §5.3): every SIMD kernel gives the scalar
 * reference's bytes for random rows and the edge cases, in place and out
 * of place; the worked frames of §8; decoding is exact.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "quant_test.h"

#define GUARD 64
#define GUARD_BYTE 0xa5

/*
 * Quantise rows x n values with kernel k out of place and in place and
 * check both against the scalar reference, and that nothing past the
 * output (out of place) or past the buffer (in place) is written.
 */
static void
check_rows(const struct quant_kernels *k, const float *src, size_t rows,
	   size_t n)
{
	size_t bytes = rows * QUANT_I8_ROW_BYTES(n);
	size_t head = QUANT_I8_HEADROOM(rows);
	size_t fbytes = rows * n * 4;
	uint8_t *ref = malloc(bytes);
	uint8_t *out = malloc(bytes + 1 + GUARD);
	uint8_t *buf = malloc(head + fbytes + GUARD);
	char hex[2][96];

	assert_non_null(ref);
	assert_non_null(out);
	assert_non_null(buf);
	quant_kernels_scalar.f32_to_i8_rows(ref, src, rows, n);

	memset(out, GUARD_BYTE, bytes + 1 + GUARD);
	k->f32_to_i8_rows(out + 1, src, rows, n); /* unaligned headers */
	for (size_t b = 0; b < bytes; b++)
		if (out[1 + b] != ref[b]) {
			size_t r = b / QUANT_I8_ROW_BYTES(n);
			size_t o = r * QUANT_I8_ROW_BYTES(n);
			size_t l = QUANT_I8_ROW_BYTES(n) < 40 ?
				   QUANT_I8_ROW_BYTES(n) : 40;

			fail_msg("%s i8 rows=%zu n=%zu byte %zu: %s, "
				 "reference %s", k->name, rows, n, b,
				 qt_hex(out + 1 + o, l, hex[0], 96),
				 qt_hex(ref + o, l, hex[1], 96));
		}
	assert_int_equal(out[0], GUARD_BYTE);
	for (size_t b = 1 + bytes; b < bytes + 1 + GUARD; b++)
		assert_int_equal(out[b], GUARD_BYTE);

	memset(buf, GUARD_BYTE, head + fbytes + GUARD);
	memcpy(buf + head, src, fbytes);
	k->f32_to_i8_rows(buf, (const float *)(buf + head), rows, n);
	if (memcmp(buf, ref, bytes) != 0)
		fail_msg("%s i8 in place differs, rows=%zu n=%zu", k->name,
			 rows, n);
	for (size_t b = head + fbytes; b < head + fbytes + GUARD; b++)
		assert_int_equal(buf[b], GUARD_BYTE);
	free(ref);
	free(out);
	free(buf);
}

/* check_rows for every kernel, the scalar one included (its in place). */
static void
check_all(const float *src, size_t rows, size_t n)
{
	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++) {
		const struct quant_kernels *k = quant_kernels_get(isa);

		if (k != NULL)
			check_rows(k, src, rows, n);
	}
}

/* Random finite values of one kind (see the cases). */
static void
fill_kind(float *x, size_t cnt, uint64_t seed, unsigned int kind)
{
	for (size_t i = 0; i < cnt; i++) {
		uint64_t r = qt_rand(&seed);

		switch (kind) {
		case 0: /* activations: roughly uniform in [-8, 8) */
			x[i] = (float)((int64_t)(r >> 11) - (1ll << 52)) /
			       (float)(1ll << 49);
			break;
		case 1: /* any finite bit pattern */
			x[i] = qt_f32((uint32_t)r & 0xff7fffffu);
			break;
		case 2: /* small exponents spread over ~2^40 */
			x[i] = ldexpf((float)(r >> 40) / 16777216.0f,
				      (int)((r >> 8) % 40) - 20);
			if (r & 1)
				x[i] = -x[i];
			break;
		default: /* small integers and halves: ties after division */
			x[i] = (float)((int)((r >> 20) % 509) - 254) * 0.5f;
			break;
		}
	}
}

/* fill_kind with a kind picked by the seed. */
static void
fill_random(float *x, size_t cnt, uint64_t seed)
{
	uint64_t s = seed;

	fill_kind(x, cnt, seed, (unsigned int)(qt_rand(&s) % 4));
}

static void
test_i8_random_rows(void **state)
{
	static const size_t lens[] = {
		71, 95, 96, 97, 127, 128, 129, 255, 256, 257, 1000,
		2048, 2560, 4095, 4096, 4097,
	};
	float *x = malloc(3 * 4097 * sizeof(float));

	assert_non_null(x);
	for (size_t n = 1; n <= 70; n++)
		for (uint64_t s = 0; s < 8; s++) {
			size_t rows = 1 + (size_t)(s % 3);

			for (size_t r = 0; r < rows; r++)
				fill_random(x + r * n, n, n * 1000 + s * 10 + r);
			check_all(x, rows, n);
		}
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
		for (uint64_t s = 0; s < 8; s++) {
			size_t n = lens[l], rows = 1 + (size_t)(s % 3);

			for (size_t r = 0; r < rows; r++)
				fill_random(x + r * n, n, n * 7919 + s * 10 + r);
			check_all(x, rows, n);
		}
	free(x);
	(void)state;
}

/* One quantised value of a row, through the kernel k, out of place. */
static int8_t
q_of(const struct quant_kernels *k, const float *x, size_t n, size_t i)
{
	uint8_t out[QUANT_I8_ROW_HDR + 256];

	assert_true(n <= 256);
	k->f32_to_i8_rows(out, x, 1, n);
	return (int8_t)out[QUANT_I8_ROW_HDR + i];
}

static float
scale_of(const struct quant_kernels *k, const float *x, size_t n)
{
	uint8_t out[QUANT_I8_ROW_HDR + 256];
	float s;

	k->f32_to_i8_rows(out, x, 1, n);
	memcpy(&s, out, 4);
	return s;
}

/*
 * Exact ties after division: max 127 gives scale 1.0, so v is q itself;
 * roundf rounds half away from zero, and 0.49999997 (where trunc(q + 0.5)
 * goes wrong) stays 0. Checked at every lane position and row length.
 */
static void
test_i8_ties(void **state)
{
	static const float v[] = {
		0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 126.5f, -126.5f,
		0.49999997f, -0.49999997f, 1.4999999f, -1.4999999f,
		0.50000006f, 126.49999f, 0.0f, -0.0f, 63.5f, -63.5f,
	};
	static const int8_t want[] = {
		1, -1, 2, -2, 3, -3, 127, -127,
		0, 0, 1, -1,
		1, 126, 0, 0, 64, -64,
	};
	const size_t nv = sizeof(v) / sizeof(v[0]);
	float x[80];

	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++) {
		const struct quant_kernels *k = quant_kernels_get(isa);

		if (k == NULL)
			continue;
		for (size_t n = 2; n <= 80; n += 13)
			for (size_t j = 0; j < nv; j++)
				for (size_t pos = 0; pos < n; pos += 5) {
					for (size_t i = 0; i < n; i++)
						x[i] = 0.0f;
					x[(pos + 1) % n] = 127.0f;
					x[pos] = v[j];
					assert_true(scale_of(k, x, n) == 1.0f);
					if (q_of(k, x, n, pos) != want[j])
						fail_msg("%s q(%a) = %d, want "
							 "%d (n=%zu pos=%zu)",
							 k->name, (double)v[j],
							 q_of(k, x, n, pos),
							 want[j], n, pos);
					check_all(x, 1, n);
				}
		/* Ties that come from the division: scale 2, v = 1 -> 0.5. */
		float y[3] = { 254.0f, 1.0f, -3.0f };

		assert_true(scale_of(k, y, 3) == 2.0f);
		assert_int_equal(q_of(k, y, 3, 1), 1);
		assert_int_equal(q_of(k, y, 3, 2), -2);
	}
	(void)state;
}

/* The edge cases of spec/wire.md §5.3, each at several lengths/positions. */
static void
test_i8_edge_cases(void **state)
{
	const float nan = qt_f32(0x7fc00000), snan = qt_f32(0xff800001);
	const float inf = INFINITY;
	static const size_t lens[] = {
		1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100,
	};
	float x[100];

	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		size_t n = lens[l];

		for (size_t pos = 0; pos < n; pos += (n > 8 ? n / 5 : 1)) {
			/* NaN amid values: ignored by max, quantised to 0. */
			fill_random(x, n, 77 + n);
			x[pos] = nan;
			check_all(x, 1, n);
			x[pos] = snan;
			check_all(x, 1, n);
			/* ±Inf: max_abs = Inf, finite -> 0, Inf -> NaN -> 0. */
			fill_random(x, n, 78 + n);
			x[pos] = (pos & 1) ? -inf : inf;
			check_all(x, 1, n);
			/* ±FLT_MAX with values near it. */
			fill_random(x, n, 79 + n);
			x[pos] = (pos & 1) ? FLT_MAX : -FLT_MAX;
			x[(pos + 1) % n] = FLT_MAX / 3.0f;
			check_all(x, 1, n);
			/* Subnormals only: max/127 underflows (scale 0, -> ±127). */
			for (size_t i = 0; i < n; i++)
				x[i] = qt_f32((uint32_t)(i * 7 % 5) |
					      (i & 1 ? 0x80000000u : 0));
			x[pos] = qt_f32(0x00000005);
			check_all(x, 1, n);
			/* Subnormal max where max/127 is itself subnormal. */
			for (size_t i = 0; i < n; i++)
				x[i] = qt_f32(0x00400000u - (uint32_t)i * 4097u);
			x[pos] = -qt_f32(0x007fffff);
			check_all(x, 1, n);
			/* Only a NaN and zeros: max 0 -> scale 1. */
			memset(x, 0, n * sizeof(float));
			x[pos] = nan;
			check_all(x, 1, n);
		}
		/* All zero (and -0): scale 1.0, zero point 0, all q 0. */
		for (size_t i = 0; i < n; i++)
			x[i] = (i & 1) ? -0.0f : 0.0f;
		check_all(x, 1, n);
		for (int isa = 0; isa < QUANT_ISA_COUNT; isa++) {
			const struct quant_kernels *k = quant_kernels_get(isa);
			uint8_t out[QUANT_I8_ROW_HDR + 100];
			static const uint8_t hdr[8] = { 0, 0, 0x80, 0x3f };

			if (k == NULL)
				continue;
			k->f32_to_i8_rows(out, x, 1, n);
			assert_memory_equal(out, hdr, 8);
			for (size_t i = 0; i < n; i++)
				assert_int_equal(out[8 + i], 0);
		}
	}
	/* Specific results of the tricky rows, through every kernel. */
	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++) {
		const struct quant_kernels *k = quant_kernels_get(isa);
		float a[4] = { 3.0f, -inf, nan, inf };
		float b[3] = { qt_f32(1), -qt_f32(1), 0.0f }; /* scale 0 */
		float c[2] = { FLT_MAX, -FLT_MAX };

		if (k == NULL)
			continue;
		assert_true(isinf(scale_of(k, a, 4)));
		for (size_t i = 0; i < 4; i++)
			assert_int_equal(q_of(k, a, 4, i), 0);
		assert_true(scale_of(k, b, 3) == 0.0f);
		assert_int_equal(q_of(k, b, 3, 0), 127);
		assert_int_equal(q_of(k, b, 3, 1), -127);
		assert_int_equal(q_of(k, b, 3, 2), 0);
		assert_int_equal(q_of(k, c, 2, 0), 127);
		assert_int_equal(q_of(k, c, 2, 1), -127);
		/* A signalling NaN is ignored like a quiet one (quant.h). */
		float d[2] = { snan, 2.0f }, e[1] = { snan };

		assert_true(scale_of(k, d, 2) == 2.0f / 127.0f);
		assert_int_equal(q_of(k, d, 2, 0), 0);
		assert_int_equal(q_of(k, d, 2, 1), 127);
		assert_true(scale_of(k, e, 1) == 1.0f);
		assert_int_equal(q_of(k, e, 1, 0), 0);
	}
	(void)state;
}

/*
 * spec/wire.md §5.3 transcribed here, independently of quant_scalar.c:
 * max_abs over non-NaN |x| from 0, scale = max_abs / 127.0f (1.0f for 0),
 * q = roundf(clamp(v / scale, -127, 127)), NaN -> 0. Every kernel, the
 * scalar reference included, must give these bytes: the SIMD-vs-scalar
 * tests alone would pass if all kernels shared one misreading.
 */
static void
spec_i8_row(uint8_t *out, const float *x, size_t n)
{
	float max_abs = 0.0f, scale;
	const float zero = 0.0f;

	for (size_t i = 0; i < n; i++)
		if (!isnan(x[i]) && fabsf(x[i]) > max_abs)
			max_abs = fabsf(x[i]);
	scale = max_abs == 0.0f ? 1.0f : max_abs / 127.0f;
	memcpy(out, &scale, 4);
	memcpy(out + 4, &zero, 4);
	for (size_t i = 0; i < n; i++) {
		float q = x[i] / scale;

		if (isnan(q)) {
			out[8 + i] = 0;
			continue;
		}
		q = fminf(fmaxf(q, -127.0f), 127.0f);
		out[8 + i] = (uint8_t)(int8_t)roundf(q);
	}
}

/* Is v / s different from v * (1 / s) after roundf? (Test data search.) */
static int
div_differs(float v, float s)
{
	volatile float r = 1.0f / s;

	return roundf(v / s) != roundf(v * r);
}

static void
test_i8_spec_transcription(void **state)
{
	uint8_t want[QUANT_I8_ROW_BYTES(300)], got[QUANT_I8_ROW_BYTES(300)];
	float x[300];
	uint64_t seed = 5301;
	int witnesses = 0;

	/* Rows where dividing and multiplying by 1/scale round differently:
	 * a kernel using a reciprocal must fail here (§5.3's note). */
	for (int tries = 0; tries < 200000 && witnesses < 8; tries++) {
		float max = 1.0f + (float)(qt_rand(&seed) >> 40) / 16777216.0f;
		float s = max / 127.0f;
		float q = (float)(int)(qt_rand(&seed) % 127) + 0.5f;
		float v = q * s;

		if (!div_differs(v, s))
			continue;
		x[0] = max;
		x[1] = v;
		x[2] = -v;
		spec_i8_row(want, x, 3);
		for (int isa = 0; isa < QUANT_ISA_COUNT; isa++) {
			const struct quant_kernels *k = quant_kernels_get(isa);

			if (k == NULL)
				continue;
			k->f32_to_i8_rows(got, x, 1, 3);
			if (memcmp(got, want, QUANT_I8_ROW_BYTES(3)) != 0)
				fail_msg("%s: max %a v %a: q %d, §5.3 %d",
					 k->name, (double)max, (double)v,
					 (int8_t)got[9], (int8_t)want[9]);
		}
		witnesses++;
	}
	assert_int_equal(witnesses, 8);
	/* Random rows of every kind and length 1..300, and specials. */
	for (size_t n = 1; n <= 300; n += (n < 40 ? 1 : 29)) {
		for (unsigned kind = 0; kind < 4; kind++) {
			fill_kind(x, n, n * 31 + kind, kind);
			if (n > 3 && kind == 1) {
				x[n / 2] = qt_f32(0x7fc00000);
				x[n / 3] = -0.0f;
			}
			spec_i8_row(want, x, n);
			for (int isa = 0; isa < QUANT_ISA_COUNT; isa++) {
				const struct quant_kernels *k =
					quant_kernels_get(isa);

				if (k == NULL)
					continue;
				k->f32_to_i8_rows(got, x, 1, n);
				if (memcmp(got, want, QUANT_I8_ROW_BYTES(n)))
					fail_msg("%s: n %zu kind %u differs "
						 "from §5.3", k->name, n, kind);
			}
		}
	}
	(void)state;
}

/* In place vs out of place for many shapes (check_rows does both). */
static void
test_i8_in_place_shapes(void **state)
{
	float *x = malloc(5 * 4096 * sizeof(float));

	assert_non_null(x);
	for (size_t rows = 1; rows <= 5; rows++)
		for (size_t n = 1; n <= 70; n++) {
			for (size_t r = 0; r < rows; r++)
				fill_random(x + r * n, n, 500 + rows * 100 + n);
			check_all(x, rows, n);
		}
	fill_random(x, 5 * 4096, 4096);
	check_all(x, 5, 4096);
	free(x);
	(void)state;
}

/*
 * Arrays of 512 KiB and more take the AVX-512 kernel's non-temporal
 * stores (quant_avx512.c): rows whose 64-byte boundaries fall at every
 * offset (n odd, headers unaligned out of place), in place and out.
 */
static void
test_i8_large_arrays(void **state)
{
	static const size_t shapes[][2] = {
		{ 32, 4096 }, { 45, 3001 }, { 1, 131072 + 37 },
	};
	float *x = malloc((131072 + 37) * sizeof(float) * 2);

	assert_non_null(x);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		size_t rows = shapes[s][0], n = shapes[s][1];

		assert_true(rows * n * 4 >= 512 * 1024);
		fill_random(x, rows * n, 900 + s);
		check_all(x, rows, n);
	}
	free(x);
	(void)state;
}

/* spec/wire.md §8: the i8 single payload and the batch rows, hidden 4/2. */
static void
test_i8_worked_frames(void **state)
{
	static const uint8_t single[] = {
		0x26, 0x93, 0x49, 0x3f, 0, 0, 0, 0, 0x00, 0xfe, 0x7f, 0x00,
	};
	static const uint8_t batch[] = {
		0x06, 0x83, 0x41, 0x3c, 0, 0, 0, 0, 0x15, 0x81,
		0x26, 0x93, 0x49, 0x3f, 0, 0, 0, 0, 0x7f, 0x00,
	};
	static const uint8_t zero2[] = {
		0x00, 0x00, 0x80, 0x3f, 0, 0, 0, 0, 0x00, 0x00,
	};
	const float out[4] = { 0.25f, -1.5f, 100.0f, -0.001f };
	const float two[4] = { 0.25f, -1.5f, 100.0f, -0.001f };
	const float z[2] = { 0.0f, 0.0f };

	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++) {
		const struct quant_kernels *k = quant_kernels_get(isa);
		uint8_t frame[12 + QUANT_I8_HEADROOM(1) + 16];
		uint8_t b[QUANT_I8_HEADROOM(2) + 16];
		uint8_t o[20];
		uint32_t layer = 5, seq_len = 1;
		float lat = 7.3f;
		static const uint8_t hdr[12] = {
			5, 0, 0, 0, 1, 0, 0, 0, 0x9a, 0x99, 0xe9, 0x40,
		};

		if (k == NULL)
			continue;
		/* Single: in place behind the frame header, as the shard. */
		memcpy(frame, &layer, 4);
		memcpy(frame + 4, &seq_len, 4);
		memcpy(frame + 8, &lat, 4);
		memcpy(frame + 12 + QUANT_I8_HEADROOM(1), out, 16);
		k->f32_to_i8_rows(frame + 12,
				  (const float *)(frame + 12 +
						  QUANT_I8_HEADROOM(1)), 1, 4);
		assert_memory_equal(frame, hdr, 12);
		assert_memory_equal(frame + 12, single, sizeof(single));
		/* Batch: two results of one row of 2 each, and as 2 rows. */
		k->f32_to_i8_rows(o, two, 1, 2);
		k->f32_to_i8_rows(o + 10, two + 2, 1, 2);
		assert_memory_equal(o, batch, sizeof(batch));
		memcpy(b + QUANT_I8_HEADROOM(2), two, 16);
		k->f32_to_i8_rows(b, (const float *)(b + QUANT_I8_HEADROOM(2)),
				  2, 2);
		assert_memory_equal(b, batch, sizeof(batch));
		/* An all-zero row of two values. */
		k->f32_to_i8_rows(o, z, 1, 2);
		assert_memory_equal(o, zero2, sizeof(zero2));
		/* The same through the dispatcher. */
		assert_int_equal(quant_select(isa), 0);
		quant_f32_to_i8_rows(o, out, 1, 4);
		assert_memory_equal(o, single, sizeof(single));
	}
	assert_int_equal(quant_limit(QUANT_ISA_COUNT - 1), 0);
	(void)state;
}

/*
 * Decode: (float)q * scale exactly, for every q (-128 included, which a
 * peer may send), scales of every kind, unaligned headers, every length.
 */
static void
test_i8_decode_exact(void **state)
{
	static const uint32_t scales[] = {
		0x3f800000, 0x3c418306, 0x3f499326, 0x00000001, 0x00400000,
		0x7f7fffff, 0x7f800000, 0x7fc00000, 0x80000000, 0xbf000000,
		0x3b012345,
	};
	const size_t ns = sizeof(scales) / sizeof(scales[0]);
	uint64_t seed = 8;
	uint8_t *in = malloc(4 * QUANT_I8_ROW_BYTES(300));
	float *ref = malloc(4 * 300 * sizeof(float));
	float *out = malloc(4 * 300 * sizeof(float) + GUARD);

	assert_non_null(in);
	assert_non_null(ref);
	assert_non_null(out);
	for (size_t n = 1; n <= 300; n += (n < 80 ? 1 : 37)) {
		for (size_t rows = 1; rows <= 4; rows++) {
			uint8_t *p = in;

			for (size_t r = 0; r < rows; r++) {
				uint32_t s = scales[(n + r) % ns];

				memcpy(p, &s, 4);
				memset(p + 4, 0, 4);
				for (size_t i = 0; i < n; i++)
					p[8 + i] = (uint8_t)(r == 0 && i < 256 ?
						i : qt_rand(&seed));
				p += QUANT_I8_ROW_BYTES(n);
			}
			quant_kernels_scalar.i8_rows_to_f32(ref, in, rows, n);
			for (size_t r = 0; r < rows; r++) {
				const uint8_t *row = in + r *
						     QUANT_I8_ROW_BYTES(n);
				float s;

				memcpy(&s, row, 4);
				for (size_t i = 0; i < n; i++) {
					float v = (float)(int8_t)row[8 + i] * s;

					assert_int_equal(qt_bits(ref[r * n + i]),
							 qt_bits(v));
				}
			}
			for (int isa = 1; isa < QUANT_ISA_COUNT; isa++) {
				const struct quant_kernels *k =
					quant_kernels_get(isa);
				size_t fb = rows * n * sizeof(float);

				if (k == NULL)
					continue;
				memset(out, GUARD_BYTE, fb + GUARD);
				k->i8_rows_to_f32(out, in, rows, n);
				if (memcmp(out, ref, fb) != 0)
					fail_msg("%s decode differs rows=%zu "
						 "n=%zu", k->name, rows, n);
				for (size_t b = fb; b < fb + GUARD; b++)
					assert_int_equal(((uint8_t *)out)[b],
							 GUARD_BYTE);
			}
		}
	}
	free(in);
	free(ref);
	free(out);
	(void)state;
}

/* decode(encode(x)) is within half a step of x for finite rows. */
static void
test_i8_round_trip_bound(void **state)
{
	float x[4096], y[4096];
	uint8_t q[QUANT_I8_ROW_BYTES(4096)];

	for (uint64_t s = 0; s < 16; s++) {
		size_t n = s < 8 ? 4096 : 1 + s * 11;
		float scale;

		/* Not kind 1: x - y could overflow near FLT_MAX. */
		fill_kind(x, n, s, s % 3 == 0 ? 0 : s % 3 == 1 ? 2 : 3);
		quant_f32_to_i8_rows(q, x, 1, n);
		quant_i8_rows_to_f32(y, q, 1, n);
		memcpy(&scale, q, 4);
		for (size_t i = 0; i < n; i++)
			/* Half a step, plus two f32 roundings of ~127 steps. */
			assert_true(fabsf(y[i] - x[i]) <= scale * 0.5001f);
	}
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_i8_random_rows),
		cmocka_unit_test(test_i8_ties),
		cmocka_unit_test(test_i8_edge_cases),
		cmocka_unit_test(test_i8_spec_transcription),
		cmocka_unit_test(test_i8_in_place_shapes),
		cmocka_unit_test(test_i8_large_arrays),
		cmocka_unit_test(test_i8_worked_frames),
		cmocka_unit_test(test_i8_decode_exact),
		cmocka_unit_test(test_i8_round_trip_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
