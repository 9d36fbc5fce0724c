/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Scalar reference kernels: the definition the SIMD kernels are tested
 * against (within the f32 summation-order bound; see tests/ffn).
 */
#include <math.h>
#include <string.h>

#include "ffn_priv.h"
#include "quant.h"

static inline float
elem(const struct ffn_mat *w, uint32_t r, uint32_t c)
{
	const uint8_t *row = (const uint8_t *)w->data + (size_t)r * w->row_bytes;

	if (w->dtype == FFN_DT_F16)
		return quant_f16_to_f32_1(((const uint16_t *)row)[c]);
	return ((const float *)row)[c];
}

static void
matvec_scalar(const struct ffn_mat *w, const float *const *x, unsigned R,
	      float *out, size_t ostride)
{
	uint32_t f, h;
	unsigned r;

	for (f = 0; f < w->rows; f++)
		for (r = 0; r < R; r++) {
			float acc = 0.0f;

			for (h = 0; h < w->cols; h++)
				acc += elem(w, f, h) * x[r][h];
			out[r * ostride + f] = acc;
		}
}

static void
down_scalar(const struct ffn_mat *d, const float *a, size_t astride,
	    unsigned R, float *const *y)
{
	uint32_t f, h;
	unsigned r;

	for (r = 0; r < R; r++) {
		memset(y[r], 0, (size_t)d->cols * sizeof(float));
		for (f = 0; f < d->rows; f++) {
			float av = a[r * astride + f];

			for (h = 0; h < d->cols; h++)
				y[r][h] += av * elem(d, f, h);
		}
	}
}

/* The activation (ffn_act_tmpl.h) one float at a time: each macro is
 * its SIMD twin's operation on one lane (fmaf is fused; the max/min
 * pick their second operand on a NaN, as vmaxps/vminps do). */
static inline float
pow2_scalar(float n)
{
	uint32_t b = (uint32_t)((int32_t)n + 127) << 23;
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

#define V float
#define VL 1
#define VLOADF(p) (*(p))
#define VSTORE(p, v) (*(p) = (v))
#define VFMA(a, b, c) fmaf(a, b, c)
#define VBCAST(f) (f)
#define VMUL(a, b) ((a) * (b))
#define VADD(a, b) ((a) + (b))
#define VDIV(a, b) ((a) / (b))
#define VMAX(a, b) ((a) > (b) ? (a) : (b))
#define VMIN(a, b) ((a) < (b) ? (a) : (b))
#define VRINT(a) rintf(a)
#define VPOW2(n) pow2_scalar(n)
#include "ffn_act_tmpl.h"

const struct ffn_kernels ffn_kernels_scalar = {
	.isa = FFN_ISA_SCALAR,
	.name = "scalar",
	.matvec = matvec_scalar,
	.down = down_scalar,
	.act_mul = act_mul,
};
