/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Run-time choice of the quant kernels.
 */
#include <errno.h>

#include "quant.h"

static const struct quant_kernels *active;

const struct quant_kernels *
quant_kernels_get(enum quant_isa isa)
{
	switch (isa) {
	case QUANT_ISA_SCALAR:
		return &quant_kernels_scalar;
	default:
		return NULL;
	}
}

const struct quant_kernels *
quant_kernels_active(void)
{
	if (active == NULL) {
		for (int isa = QUANT_ISA_COUNT - 1; isa >= 0; isa--) {
			const struct quant_kernels *k = quant_kernels_get(isa);

			if (k != NULL) {
				active = k;
				break;
			}
		}
	}
	return active;
}

int
quant_select(enum quant_isa isa)
{
	const struct quant_kernels *k = quant_kernels_get(isa);

	if (k == NULL)
		return -ENOTSUP;
	active = k;
	return 0;
}

void
quant_f32_to_f16(uint16_t *dst, const float *src, size_t n)
{
	quant_kernels_active()->f32_to_f16(dst, src, n);
}

void
quant_f16_to_f32(float *dst, const uint16_t *src, size_t n)
{
	quant_kernels_active()->f16_to_f32(dst, src, n);
}

void
quant_f32_to_i8_rows(void *dst, const float *src, size_t rows, size_t n)
{
	quant_kernels_active()->f32_to_i8_rows(dst, src, rows, n);
}

void
quant_i8_rows_to_f32(float *dst, const void *src, size_t rows, size_t n)
{
	quant_kernels_active()->i8_rows_to_f32(dst, src, rows, n);
}
