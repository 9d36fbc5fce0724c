/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Scalar reference of the K-quant kernels (spec/vindex.md §2.4). Built
 * with -ffp-contract=off so that dequantise-then-dot and the fused kernels
 * below round identically: the fused f32 kernels dequantise each block with
 * ffn_kq_dequant_row's formula and accumulate in value order.
 */
#include <math.h>
#include <string.h>

#include "kq_internal.h"

float
ffn_kq_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 31, man = h & 1023, bits;
	float f;

	if (exp == 0) {
		/* zero or subnormal: man * 2^-24, exact in f32 */
		f = (float)man * 0x1p-24f;
		return sign ? -f : f;
	}
	if (exp == 31)
		bits = sign | 0x7f800000u | (man << 13);
	else
		bits = sign | ((exp + 112) << 23) | (man << 13);
	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint16_t
ffn_kq_f32_to_f16(float f)
{
	uint32_t x, sign, man;
	int exp;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000;
	exp = (int)((x >> 23) & 255);
	man = x & 0x7fffff;
	if (exp == 255)
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
	exp -= 112;		/* rebias 127 -> 15 */
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		/* subnormal f16 (or zero): shift in the implicit bit */
		uint32_t m, shift, r, half;

		if (exp < -10)
			return (uint16_t)sign;
		m = man | 0x800000;
		shift = (uint32_t)(14 - exp);
		r = m >> shift;
		half = 1u << (shift - 1);
		if ((m & ((half << 1) - 1)) > half ||
		    ((m & ((half << 1) - 1)) == half && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	{
		uint32_t r = ((uint32_t)exp << 10) | (man >> 13);
		uint32_t rem = man & 0x1fff;

		/* round to nearest even; a carry into the exponent is right */
		if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
}

static void
q4k_dequant_block(const uint8_t *b, float y[256])
{
	float d = ffn_kq_f16_to_f32(kq_rd16(b + KQ4_D));
	float dmin = ffn_kq_f16_to_f32(kq_rd16(b + KQ4_DMIN));
	const uint8_t *qs = b + KQ4_QS;
	uint8_t sc[8], m[8];

	kq_q4k_scales(b + KQ4_S, sc, m);
	for (int g = 0; g < 4; g++) {
		float d1 = d * sc[2 * g], m1 = dmin * m[2 * g];
		float d2 = d * sc[2 * g + 1], m2 = dmin * m[2 * g + 1];

		for (int l = 0; l < 32; l++) {
			uint8_t q = qs[32 * g + l];

			y[64 * g + l] = d1 * (float)(q & 15) - m1;
			y[64 * g + 32 + l] = d2 * (float)(q >> 4) - m2;
		}
	}
}

static void
q6k_dequant_block(const uint8_t *b, enum ffn_kq_q6_layout q6, float y[256])
{
	float d = ffn_kq_f16_to_f32(kq_rd16(b + KQ6_D));
	const int8_t *sc = (const int8_t *)(b + KQ6_SC);
	uint8_t q[256];

	kq_q6k_decode_u8(b, q6, q);
	for (int i = 0; i < 256; i++)
		y[i] = (d * (float)sc[i / 16]) * (float)((int)q[i] - 32);
}

void
ffn_kq_dequant_row(enum ffn_kq_fmt fmt, enum ffn_kq_q6_layout q6,
		   const void *blocks, size_t nb, float *y)
{
	const uint8_t *b = blocks;

	for (size_t i = 0; i < nb; i++) {
		if (fmt == FFN_KQ_Q4_K)
			q4k_dequant_block(b + i * FFN_KQ_Q4K_BYTES, y + 256 * i);
		else
			q6k_dequant_block(b + i * FFN_KQ_Q6K_BYTES, q6,
					  y + 256 * i);
	}
}

static void
q4k_f32(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	const float *x, const float *xs, size_t ldx, size_t R, float *y,
	size_t ldy)
{
	float blk[256];

	for (size_t i = 0; i < nrows; i++) {
		const uint8_t *row = w + i * row_bytes;
		float acc[FFN_KQ_RMAX] = {0};

		for (size_t b = 0; b < nb; b++) {
			q4k_dequant_block(row + b * FFN_KQ_Q4K_BYTES, blk);
			for (size_t r = 0; r < R; r++) {
				const float *xb = x + r * ldx + 256 * b;

				for (int k = 0; k < 256; k++)
					acc[r] += blk[k] * xb[k];
			}
		}
		for (size_t r = 0; r < R; r++)
			y[r * ldy + i] = acc[r];
	}
}

static void
q6k_f32(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	enum ffn_kq_q6_layout q6, const float *x, size_t ldx, size_t R,
	float *y, size_t ldy)
{
	float blk[256];

	for (size_t i = 0; i < nrows; i++) {
		const uint8_t *row = w + i * row_bytes;
		float acc[FFN_KQ_RMAX] = {0};

		for (size_t b = 0; b < nb; b++) {
			q6k_dequant_block(row + b * FFN_KQ_Q6K_BYTES, q6, blk);
			for (size_t r = 0; r < R; r++) {
				const float *xb = x + r * ldx + 256 * b;

				for (int k = 0; k < 256; k++)
					acc[r] += blk[k] * xb[k];
			}
		}
		for (size_t r = 0; r < R; r++)
			y[r * ldy + i] = acc[r];
	}
}

static void
q4k_q8k(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	const uint8_t *q8, size_t R, float *y, size_t ldy)
{
	size_t q8_row = nb * FFN_KQ_Q8K_BYTES;

	for (size_t i = 0; i < nrows; i++) {
		const uint8_t *row = w + i * row_bytes;

		for (size_t r = 0; r < R; r++) {
			const uint8_t *in = q8 + r * q8_row;
			float acc = 0.0f;

			for (size_t b = 0; b < nb; b++) {
				const uint8_t *blk = row + b * FFN_KQ_Q4K_BYTES;
				const uint8_t *qs = blk + KQ4_QS;
				const int8_t *a = kq_q8_qs(in, nb, b);
				uint8_t sc[8], m[8];
				int32_t isc = 0, imin = 0;

				kq_q4k_scales(blk + KQ4_S, sc, m);
				for (int g = 0; g < 4; g++) {
					int32_t s1 = 0, s2 = 0;

					for (int l = 0; l < 32; l++) {
						uint8_t q = qs[32 * g + l];

						s1 += (q & 15) * a[64 * g + l];
						s2 += (q >> 4) * a[64 * g + 32 + l];
					}
					isc += sc[2 * g] * s1 + sc[2 * g + 1] * s2;
				}
				for (int j = 0; j < 8; j++)
					imin += m[j] * kq_q8_sum(in, nb, b, j);
				acc = kq_q4k_q8k_combine(acc,
					kq_q8_d(in, nb, b),
					ffn_kq_f16_to_f32(kq_rd16(blk + KQ4_D)),
					ffn_kq_f16_to_f32(kq_rd16(blk + KQ4_DMIN)),
					isc, imin);
			}
			y[r * ldy + i] = acc;
		}
	}
}

static void
q6k_q8k(const uint8_t *w, size_t row_bytes, size_t nrows, size_t nb,
	enum ffn_kq_q6_layout q6, const uint8_t *q8, const int16_t *s16,
	size_t R, float *y, size_t ldy)
{
	size_t q8_row = nb * FFN_KQ_Q8K_BYTES;
	uint8_t q[256];

	for (size_t i = 0; i < nrows; i++) {
		const uint8_t *row = w + i * row_bytes;
		float acc[FFN_KQ_RMAX] = {0};

		for (size_t b = 0; b < nb; b++) {
			const uint8_t *blk = row + b * FFN_KQ_Q6K_BYTES;
			const int8_t *sc = (const int8_t *)(blk + KQ6_SC);
			float d = ffn_kq_f16_to_f32(kq_rd16(blk + KQ6_D));

			kq_q6k_decode_u8(blk, q6, q);
			for (size_t r = 0; r < R; r++) {
				const uint8_t *in = q8 + r * q8_row;
				const int8_t *a = kq_q8_qs(in, nb, b);
				int32_t isum = 0;

				for (int g = 0; g < 16; g++) {
					int32_t s = 0;

					for (int l = 0; l < 16; l++)
						s += ((int)q[16 * g + l] - 32) *
						     a[16 * g + l];
					isum += sc[g] * s;
				}
				acc[r] = kq_q6k_q8k_combine(acc[r],
					kq_q8_d(in, nb, b), d, isum);
			}
		}
		for (size_t r = 0; r < R; r++)
			y[r * ldy + i] = acc[r];
	}
}

const struct ffn_kq_kernels ffn_kq_kernels_scalar = {
	.isa = FFN_KQ_ISA_SCALAR,
	.name = "scalar",
	.q4k_f32 = q4k_f32,
	.q6k_f32 = q6k_f32,
	.q4k_q8k = q4k_q8k,
	.q6k_q8k = q6k_q8k,
};
