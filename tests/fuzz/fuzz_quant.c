/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * lib/quant's four dispatching entry points, bound to the scalar kernels
 * (quant_scalar.c, compiled into the harness with the sanitizers), in
 * place of quant.c: clang 14 refuses quant.c's
 * __builtin_cpu_supports("f16c"), and the scalar kernels are the
 * reference the SIMD ones are tested against bit for bit (tests/quant).
 */

#include "quant.h"

void
quant_f32_to_f16(uint16_t *dst, const float *src, size_t n)
{
	quant_kernels_scalar.f32_to_f16(dst, src, n);
}

void
quant_f16_to_f32(float *dst, const uint16_t *src, size_t n)
{
	quant_kernels_scalar.f16_to_f32(dst, src, n);
}

void
quant_f32_to_i8_rows(void *dst, const float *src, size_t rows, size_t n)
{
	quant_kernels_scalar.f32_to_i8_rows(dst, src, rows, n);
}

void
quant_i8_rows_to_f32(float *dst, const void *src, size_t rows, size_t n)
{
	quant_kernels_scalar.i8_rows_to_f32(dst, src, rows, n);
}
