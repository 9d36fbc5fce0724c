/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * fuzz-vindex: the AVX-512 one- and two-input-row Q8_K kernels of
 * lib/ffn/kquant/kq_avx512_q8k.c, in place of that file, which clang 14
 * does not compile (_mm512_shuffle_i32x4 with an argument it cannot fold
 * to a constant). Each returns -1, "row too long", which kq_avx512_int.c
 * answers with its general kernel (kq_internal.h). The loader under test
 * never computes; only the link needs them.
 */

#include "fuzz_cpu.h"
#include "kq_internal.h"

int
ffn_kq_avx512_q4k_q8k_1(const uint8_t *w, size_t row_bytes, size_t nrows,
			size_t nb, const uint8_t *q8, float *y)
{
	(void)w, (void)row_bytes, (void)nrows, (void)nb, (void)q8, (void)y;
	return -1;
}

int
ffn_kq_avx512_q6k_q8k_1(const uint8_t *w, size_t row_bytes, size_t nrows,
			size_t nb, enum ffn_kq_q6_layout q6,
			const uint8_t *q8, const int16_t *s16, float *y)
{
	(void)w, (void)row_bytes, (void)nrows, (void)nb, (void)q6, (void)q8;
	(void)s16, (void)y;
	return -1;
}

int
ffn_kq_avx512_q4k_q8k_2(const uint8_t *w, size_t row_bytes, size_t nrows,
			size_t nb, const uint8_t *q8, float *y, size_t ldy)
{
	(void)w, (void)row_bytes, (void)nrows, (void)nb, (void)q8, (void)y;
	(void)ldy;
	return -1;
}

int
ffn_kq_avx512_q6k_q8k_2(const uint8_t *w, size_t row_bytes, size_t nrows,
			size_t nb, enum ffn_kq_q6_layout q6,
			const uint8_t *q8, const int16_t *s16, float *y,
			size_t ldy)
{
	(void)w, (void)row_bytes, (void)nrows, (void)nb, (void)q6, (void)q8;
	(void)s16, (void)y, (void)ldy;
	return -1;
}

/*
 * lib/ffn/ffn_compute.c asks __builtin_cpu_supports("f16c"), which clang 14
 * refuses (as lib/quant/quant.c does, see fuzz_quant.c); fuzz_cpu.h,
 * forced into lib/ffn's files, sends the queries here: every ISA but the
 * scalar one reads as absent, which is all a loader needs.
 */

int
fuzz_cpu_supports(const char *feature)
{
	(void)feature;
	return 0;
}
