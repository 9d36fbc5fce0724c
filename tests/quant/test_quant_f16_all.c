/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Suite 'slow': f32 -> f16 of all 2^32 input bit patterns, every SIMD
 * kernel against the scalar reference (spec/wire.md §5.3), bit for bit.
 * The scalar reference itself was checked against F16C the same way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "quant_test.h"

#define CHUNK (1u << 16)

static void
test_f32_to_f16_all_inputs(void **state)
{
	const struct quant_kernels *ks[QUANT_ISA_COUNT];
	int nk = qt_simd_kernels(ks);
	uint32_t *in = malloc(CHUNK * 4);
	uint16_t *ref = malloc(CHUNK * 2);
	uint16_t *out = malloc(CHUNK * 2);
	uint64_t checked = 0;

	assert_non_null(in);
	assert_non_null(ref);
	assert_non_null(out);
	assert_true(nk > 0); /* the dispatch test says which must exist */
	for (uint64_t base = 0; base < (1ull << 32); base += CHUNK) {
		for (uint32_t i = 0; i < CHUNK; i++)
			in[i] = (uint32_t)base + i;
		quant_kernels_scalar.f32_to_f16(ref, (const float *)in, CHUNK);
		for (int k = 0; k < nk; k++) {
			ks[k]->f32_to_f16(out, (const float *)in, CHUNK);
			if (memcmp(out, ref, CHUNK * 2) == 0)
				continue;
			for (uint32_t i = 0; i < CHUNK; i++)
				if (out[i] != ref[i])
					fail_msg("%s f32_to_f16(%08x) = %04x, "
						 "reference %04x", ks[k]->name,
						 in[i], out[i], ref[i]);
		}
		checked += CHUNK;
	}
	assert_true(checked == (1ull << 32));
	print_message("all 2^32 inputs equal for %d SIMD kernel set(s):",
		      nk);
	for (int k = 0; k < nk; k++)
		print_message(" %s", ks[k]->name);
	print_message("\n");
	free(in);
	free(ref);
	free(out);
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f32_to_f16_all_inputs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
