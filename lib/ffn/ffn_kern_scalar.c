/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Scalar reference kernels: the definition the SIMD kernels are tested
 * against (within the f32 summation-order bound; see tests/ffn).
 */
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

const struct ffn_kernels ffn_kernels_scalar = {
	.isa = FFN_ISA_SCALAR,
	.name = "scalar",
	.matvec = matvec_scalar,
	.down = down_scalar,
};
