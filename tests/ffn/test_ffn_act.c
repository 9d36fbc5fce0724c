/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The activation kernels (lib/ffn/ffn_act_tmpl.h): every SIMD set equal
 * to the scalar set bit for bit, for every tail length and the edges of
 * the float range; the scalar set within the bound ffn.h states of the
 * exact activation (spec/wire.md §1, in long double); ffn_act_mul, which
 * the dense path and the K-quant engine (ffn_eng_kq.c) both apply, on
 * every set.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ffn.h"
#include "ffn_priv.h"
#include "test_rng.h"

#define N_IN 4096u

static float
from_bits(uint32_t b)
{
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

static uint32_t
to_bits(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	return b;
}

/*
 * Inputs: the edges (zeros, infinities, NaN, the clamp's neighbours,
 * denormals, the largest floats), a dense run over [-30, 30], and random
 * bit patterns (every exponent).
 */
static void
make_inputs(uint64_t *rng, float *g)
{
	static const float edge[] = {
		0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 87.0f, -87.0f,
		88.0f, -88.0f, 88.5f, -88.5f, 89.0f, -89.0f, 1e-45f, -1e-45f,
		1e-39f, -1e-39f, 3.4e38f, -3.4e38f, 1e19f, -1e19f, 9.0f,
		-9.0f, 0.5f, -0.5f,
	};
	const unsigned ne = sizeof(edge) / sizeof(edge[0]);
	unsigned i;

	for (i = 0; i < N_IN; i++) {
		if (i < ne)
			g[i] = edge[i];
		else if (i < N_IN / 2)
			g[i] = -30.0f + 60.0f * (float)i / (N_IN / 2);
		else
			g[i] = from_bits(test_rng_u32(rng));
	}
}

/* Every SIMD set against the scalar one, bit for bit: both activations,
 * u random, every length up to 40 at every start up to 16 (all tails). */
static void
test_act_simd_bits(void **state)
{
	static const struct ffn_kernels *const ks[] = {
		&ffn_kernels_avx2, &ffn_kernels_avx512,
	};
	uint64_t rng = test_rng_seed(71);
	float g[N_IN], u[N_IN], ref[N_IN], out[N_IN];
	unsigned ki, act, n, o, i;
	int ran = 0;

	(void)state;
	make_inputs(&rng, g);
	for (i = 0; i < N_IN; i++)
		u[i] = (float)test_rng_below(&rng, 2001u) / 500.0f - 2.0f;
	for (ki = 0; ki < 2; ki++) {
		if (!ffn_isa_supported(ks[ki]->isa))
			continue;
		ran++;
		for (act = 0; act < 2; act++) {
			/* the whole array */
			memcpy(ref, g, sizeof(g));
			memcpy(out, g, sizeof(g));
			ffn_kernels_scalar.act_mul(act, ref, u, N_IN);
			ks[ki]->act_mul(act, out, u, N_IN);
			for (i = 0; i < N_IN; i++)
				if (to_bits(out[i]) != to_bits(ref[i]))
					fail_msg("%s act %u g %a u %a: %a, "
						 "scalar %a", ks[ki]->name,
						 act, g[i], u[i], out[i],
						 ref[i]);
			/* short runs: nothing written past n */
			for (o = 0; o < 16; o++)
				for (n = 1; n <= 40; n++) {
					memcpy(out, g, sizeof(g));
					ks[ki]->act_mul(act, out + o, u + o, n);
					for (i = 0; i < o + n + 16; i++)
						assert_int_equal(to_bits(
							out[i]), to_bits(
							i >= o && i < o + n ?
							ref[i] : g[i]));
				}
		}
	}
	/* an x86-64 without AVX2 has nothing to compare */
	assert_true(ran > 0 || !ffn_isa_supported(FFN_ISA_AVX2));
}

/*
 * The scalar set (so every set) against the exact activation, as ffn.h
 * states: relative error <= 4·2⁻²⁴ for SiLU (z = -g is exact) and
 * <= (4 + 4·min(|z|, 89))·2⁻²⁴ for GELU-tanh, z = -2c(g + k g³) (its
 * three roundings and its two rounded constants, each <= 2⁻²⁴, are
 * amplified |z| times by e^z). Results below 2⁻¹²⁶·max(1, |g|) count
 * as zero (past the clamp the answer is 0 where the exact one is that
 * small). The worst case seen is printed.
 */
static void
test_act_accuracy(void **state)
{
	uint64_t rng = test_rng_seed(72);
	static float g[N_IN * 16], a[N_IN * 16];
	const unsigned n = N_IN * 16;
	unsigned act, i;
	float one[1] = { 1.0f };
	double worst = 0;

	(void)state;
	for (i = 0; i < n; i += N_IN)
		make_inputs(&rng, g + i);
	for (act = 0; act < 2; act++) {
		memcpy(a, g, sizeof(g));
		for (i = 0; i < n; i++)
			ffn_kernels_scalar.act_mul(act, a + i, one, 1);
		for (i = 0; i < n; i++) {
			long double x = g[i], z, e, err, bound;

			if (!isfinite(g[i]))
				continue;
			z = act ? -2 * 0.7978846L * (x + 0.044715L * x * x * x)
				: -x;
			e = x / (1 + expl(z));
			err = fabsl((long double)a[i] - e);
			bound = (4 + (act ? 4 * fminl(fabsl(z), 89) : 0)) *
				0x1p-24L * fabsl(e) +
				0x1p-126L * fmaxl(1, fabsl(x));
			if (fabsl(e) > 1e-30L && err / bound > worst)
				worst = (double)(err / bound);
			if (!(err <= bound))
				fail_msg("act %u g %a: %a, exact %La (error "
					 "%Lg > %Lg)", act, g[i], a[i], e, err,
					 bound);
		}
		print_message("act %u: worst error %.2f of the bound\n", act,
			      worst);
	}
	/* the edges: NaN stays NaN, -inf as libm's (NaN for SiLU's
	 * -inf / inf), +inf stays +inf */
	for (act = 0; act < 2; act++) {
		float v[3] = { NAN, INFINITY, -INFINITY };
		float u3[3] = { 1.0f, 1.0f, 1.0f };

		ffn_kernels_scalar.act_mul(act, v, u3, 3);
		assert_true(isnan(v[0]));
		assert_true(isinf(v[1]) && v[1] > 0);
		assert_true(isnan(v[2]));
	}
}

/* ffn_act_mul runs the active set's kernel (the public entry point
 * every path calls), for each set the CPU has. */
static void
test_act_public(void **state)
{
	uint64_t rng = test_rng_seed(73);
	float g[N_IN], u[N_IN], ref[N_IN], out[N_IN];
	enum ffn_isa isa;
	unsigned act, i;

	(void)state;
	make_inputs(&rng, g);
	for (i = 0; i < N_IN; i++)
		u[i] = 1.0f + (float)i / N_IN;
	for (isa = FFN_ISA_SCALAR; isa < FFN_ISA_COUNT; isa++) {
		if (!ffn_isa_supported(isa))
			continue;
		assert_int_equal(ffn_select_isa(isa), 0);
		for (act = 0; act < 2; act++) {
			memcpy(ref, g, sizeof(g));
			memcpy(out, g, sizeof(g));
			ffn_kernels_scalar.act_mul(act, ref, u, N_IN);
			ffn_act_mul(act, out, u, N_IN);
			assert_memory_equal(out, ref, sizeof(out));
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_act_simd_bits),
		cmocka_unit_test(test_act_accuracy),
		cmocka_unit_test(test_act_public),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
