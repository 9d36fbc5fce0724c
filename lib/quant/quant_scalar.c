/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Scalar reference for spec/wire.md §5.3. Every SIMD kernel must produce
 * exactly these bytes; keep this file obviously correct, not fast.
 */
#include <math.h>
#include <string.h>

#include "quant.h"

static inline uint32_t
f32_bits(float v)
{
	uint32_t u;

	memcpy(&u, &v, sizeof(u));
	return u;
}

static inline float
bits_f32(uint32_t u)
{
	float v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

/*
 * IEEE 754 binary32 -> binary16, round to nearest, ties to even, with the
 * bit results of x86 F16C vcvtps2ph (imm 0) for every input: overflow to
 * Inf, NaN quieted with the top 10 payload bits kept.
 */
uint16_t
quant_f32_to_f16_1(float v)
{
	uint32_t x = f32_bits(v);
	uint32_t sign = (x >> 16) & 0x8000u;
	uint32_t exp = (x >> 23) & 0xffu;
	uint32_t man = x & 0x7fffffu;

	if (exp == 0xffu) {
		if (man == 0)
			return (uint16_t)(sign | 0x7c00u);
		return (uint16_t)(sign | 0x7e00u | (man >> 13));
	}
	/* Unbiased exponent, rebiased for f16 (bias 15). */
	int32_t e = (int32_t)exp - 127 + 15;

	if (e >= 0x1f)
		return (uint16_t)(sign | 0x7c00u);
	if (e <= 0) {
		/* f16 subnormal or zero: value = m * 2^-24. */
		if (e < -10)
			return (uint16_t)sign; /* below half the smallest */
		uint32_t m = man | 0x800000u; /* implicit bit */
		uint32_t shift = (uint32_t)(14 - e); /* 14..24 */
		uint32_t q = m >> shift;
		uint32_t rem = m & ((1u << shift) - 1);
		uint32_t half = 1u << (shift - 1);

		if (rem > half || (rem == half && (q & 1u)))
			q++;
		return (uint16_t)(sign | q); /* q may carry into exp 1 */
	}
	uint32_t q = ((uint32_t)e << 10) | (man >> 13);
	uint32_t rem = man & 0x1fffu;

	if (rem > 0x1000u || (rem == 0x1000u && (q & 1u)))
		q++; /* may carry into the exponent, up to Inf: correct */
	return (uint16_t)(sign | q);
}

float
quant_f16_to_f32_1(uint16_t h)
{
	uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu;
	uint32_t man = h & 0x3ffu;

	if (exp == 0x1fu) /* Inf, or NaN quieted as vcvtph2ps does */
		return bits_f32(sign | 0x7f800000u |
				(man ? 0x400000u | (man << 13) : 0));
	if (exp == 0) {
		if (man == 0)
			return bits_f32(sign);
		/* Subnormal: normalise. */
		int32_t e = -1;

		do {
			man <<= 1;
			e++;
		} while (!(man & 0x400u));
		man &= 0x3ffu;
		return bits_f32(sign | ((uint32_t)(127 - 15 - e) << 23) |
				(man << 13));
	}
	return bits_f32(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

static void
scalar_f32_to_f16(uint16_t *dst, const float *src, size_t n)
{
	/* Forward order: dst[i] (bytes 2i..2i+1) never passes src[i]. */
	for (size_t i = 0; i < n; i++) {
		float v = src[i];

		dst[i] = quant_f32_to_f16_1(v);
	}
}

static void
scalar_f16_to_f32(float *dst, const uint16_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = quant_f16_to_f32_1(src[i]);
}

/*
 * spec/wire.md §5.3: max|x| from 0 with every NaN ignored, as fmaxf does
 * for quiet NaNs and Rust's f32::max (the reference server) for all NaNs.
 * Not fmaxf itself: glibc's returns a quiet NaN for a signalling NaN
 * argument (IEEE 754-2008 maxNum), which would make the whole row NaN.
 */
static float
row_scale(const float *src, size_t n)
{
	float max_abs = 0.0f;

	for (size_t i = 0; i < n; i++) {
		float a = fabsf(src[i]);

		if (a > max_abs) /* false for NaN */
			max_abs = a;
	}
	return max_abs == 0.0f ? 1.0f : max_abs / 127.0f;
}

static inline int8_t
quantise_one(float v, float scale)
{
	float q = v / scale;

	if (isnan(q))
		return 0;
	if (q > 127.0f)
		q = 127.0f;
	if (q < -127.0f)
		q = -127.0f;
	return (int8_t)roundf(q);
}

static void
scalar_f32_to_i8_rows(void *dst, const float *src, size_t rows, size_t n)
{
	uint8_t *out = dst;

	for (size_t r = 0; r < rows; r++) {
		const float *row = src + r * n;
		float scale = row_scale(row, n);
		const float zero = 0.0f;

		/*
		 * In place, out is 8*(rows-r) bytes or more behind row, so the
		 * data bytes out[8 + i] never reach row[i + 1] before it is
		 * read; the header is written last for symmetry with SIMD
		 * kernels that must read a row before writing it.
		 */
		for (size_t i = 0; i < n; i++) {
			float v = row[i];

			out[QUANT_I8_ROW_HDR + i] = (uint8_t)quantise_one(v,
									  scale);
		}
		memcpy(out, &scale, 4);
		memcpy(out + 4, &zero, 4);
		out += QUANT_I8_ROW_BYTES(n);
	}
}

static void
scalar_i8_rows_to_f32(float *dst, const void *src, size_t rows, size_t n)
{
	const uint8_t *in = src;

	for (size_t r = 0; r < rows; r++) {
		float scale;

		memcpy(&scale, in, 4);
		for (size_t i = 0; i < n; i++)
			dst[r * n + i] = (float)(int8_t)in[QUANT_I8_ROW_HDR + i] *
					 scale;
		in += QUANT_I8_ROW_BYTES(n);
	}
}

const struct quant_kernels quant_kernels_scalar = {
	.isa = QUANT_ISA_SCALAR,
	.name = "scalar",
	.f32_to_f16 = scalar_f32_to_f16,
	.f16_to_f32 = scalar_f16_to_f32,
	.f32_to_i8_rows = scalar_f32_to_i8_rows,
	.i8_rows_to_f32 = scalar_i8_rows_to_f32,
};
