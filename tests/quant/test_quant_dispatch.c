/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Run-time choice of kernels: an ISA is offered exactly when the CPU has
 * it, the best is active by default, quant_select() refuses what is not
 * offered, quant_limit() falls back cleanly to the scalar reference.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "quant_test.h"

/*
 * What the CPU offers, asked independently of lib/quant (libgcc's
 * __builtin_cpu_supports also requires the OS to enable the registers).
 * On a CPU that has an ISA, the build must have its kernels: a build that
 * silently lost a kernel file fails here rather than testing less.
 */
static int
cpu_offers(int isa)
{
	__builtin_cpu_init();
	switch (isa) {
	case QUANT_ISA_SCALAR:
		return 1;
	case QUANT_ISA_AVX2:
		return __builtin_cpu_supports("avx2") &&
		       __builtin_cpu_supports("f16c") &&
		       __builtin_cpu_supports("fma");
	case QUANT_ISA_AVX512:
		return __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512bw") &&
		       __builtin_cpu_supports("avx512vl");
	default:
		return 0;
	}
}

static void
test_offered_iff_cpu_has(void **state)
{
	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++) {
		const struct quant_kernels *k = quant_kernels_get(isa);

		if (cpu_offers(isa)) {
			if (k == NULL)
				fail_msg("CPU has %s, quant offers no kernels",
					 quant_isa_name(isa));
			assert_int_equal(k->isa, isa);
			assert_string_equal(k->name, quant_isa_name(isa));
			assert_non_null(k->f32_to_f16);
			assert_non_null(k->f16_to_f32);
			assert_non_null(k->f32_to_i8_rows);
			assert_non_null(k->i8_rows_to_f32);
		} else {
			assert_null(k);
			assert_int_equal(quant_select(isa), -ENOTSUP);
		}
	}
	assert_null(quant_kernels_get(QUANT_ISA_COUNT));
	assert_null(quant_kernels_get((enum quant_isa)-1));
	(void)state;
}

/* Runs first in its own process: nothing selected yet. */
static void
test_default_is_best(void **state)
{
	int best = QUANT_ISA_SCALAR;

	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++)
		if (cpu_offers(isa))
			best = isa;
	assert_int_equal(quant_kernels_active()->isa, best);
	assert_string_equal(quant_active_name(), quant_isa_name(best));
	(void)state;
}

static void
test_select(void **state)
{
	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++) {
		if (!cpu_offers(isa))
			continue;
		assert_int_equal(quant_select(isa), 0);
		assert_int_equal(quant_kernels_active()->isa, isa);
	}
	assert_int_equal(quant_select(QUANT_ISA_COUNT), -EINVAL);
	assert_int_equal(quant_select((enum quant_isa)-1), -EINVAL);
	assert_int_equal(quant_limit(QUANT_ISA_COUNT - 1), 0);
	(void)state;
}

/* Pretend the CPU has nothing: -ENOTSUP, scalar active, same results. */
static void
test_limit_falls_back(void **state)
{
	const float x[5] = { 1.0f, -2.0f, 0.5f, 3.0f, 65520.0f };
	static const uint16_t h_want[5] = {
		0x3c00, 0xc000, 0x3800, 0x4200, 0x7c00,
	};
	uint16_t h[5];
	uint8_t q[QUANT_I8_ROW_BYTES(5)];
	uint8_t q_best[QUANT_I8_ROW_BYTES(5)];

	quant_f32_to_i8_rows(q_best, x, 1, 5);
	assert_int_equal(quant_limit(QUANT_ISA_SCALAR), 0);
	for (int isa = QUANT_ISA_SCALAR + 1; isa < QUANT_ISA_COUNT; isa++) {
		assert_null(quant_kernels_get(isa));
		assert_int_equal(quant_select(isa), -ENOTSUP);
	}
	assert_ptr_equal(quant_kernels_active(), &quant_kernels_scalar);
	assert_string_equal(quant_active_name(), "scalar");
	quant_f32_to_f16(h, x, 5);
	assert_memory_equal(h, h_want, sizeof(h));
	quant_f32_to_i8_rows(q, x, 1, 5);
	assert_memory_equal(q, q_best, sizeof(q));

	if (cpu_offers(QUANT_ISA_AVX2)) {
		assert_int_equal(quant_limit(QUANT_ISA_AVX2), 0);
		assert_int_equal(quant_kernels_active()->isa, QUANT_ISA_AVX2);
		assert_null(quant_kernels_get(QUANT_ISA_AVX512));
	}
	assert_int_equal(quant_limit(QUANT_ISA_COUNT), -EINVAL);
	assert_int_equal(quant_limit(QUANT_ISA_COUNT - 1), 0);
	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++)
		assert_int_equal(quant_kernels_get(isa) != NULL,
				 cpu_offers(isa));
	(void)state;
}

static void
test_names(void **state)
{
	assert_string_equal(quant_isa_name(QUANT_ISA_SCALAR), "scalar");
	assert_string_equal(quant_isa_name(QUANT_ISA_AVX2), "avx2");
	assert_string_equal(quant_isa_name(QUANT_ISA_AVX512), "avx512");
	assert_null(quant_isa_name(QUANT_ISA_COUNT));
	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++)
		assert_int_equal(quant_isa_from_name(quant_isa_name(isa)), isa);
	assert_int_equal(quant_isa_from_name("avx"), -EINVAL);
	assert_int_equal(quant_isa_from_name(""), -EINVAL);
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_is_best),
		cmocka_unit_test(test_offered_iff_cpu_has),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_limit_falls_back),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
