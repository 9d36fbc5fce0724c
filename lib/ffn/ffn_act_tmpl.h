/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The activation times up, a = act(g) ⊙ u (spec/wire.md §1), one text
 * for every kernel set: included by ffn_kern_tmpl.h (AVX2, AVX-512) and
 * by ffn_kern_scalar.c (VL 1), each after its macros
 *   V VL VLOADF VSTORE VFMA VBCAST VMUL VADD VDIV VRINT VPOW2
 *   VMAX(a, b) = a > b ? a : b     VMIN(a, b) = a < b ? a : b
 *   VLOADF_T VSTORE_T              (VL > 1)
 * so every set computes the same float operations in the same order and
 * the SIMD results equal the scalar ones bit for bit (every product
 * that meets an addition is an explicit fused multiply-add, so
 * -ffp-contract cannot change one set alone).
 *
 * Why not libm: tanhf and expf took 13-26 and 2.3-4.3 ns a value here,
 * 9-17 ms of a 64-row Gemma-size pass of about 65 ms (bench-ffn --act);
 * this takes 0.2-0.5 ns a value.
 *
 * Both activations are g / (1 + e^z): SiLU z = -g; GELU-tanh, since
 * 0.5 (1 + tanh w) = 1 / (1 + e^(-2w)), z = -2 c (g + k g³) with c =
 * 0.7978846, k = 0.044715 (spec/wire.md §1). e^z is Cephes's expf:
 * z = n ln2 + r, |r| <= ln2 / 2, e^r by its degree-5 polynomial, 2^n put
 * into the exponent bits. z is clamped to [-87, 89] first: at the low
 * end 2^n stays normal and the answer is g; from z = 88.38 up 2^n is
 * +inf and the answer g / inf = 0, libm's limit (NaN for g = -inf, as
 * libm's inf / inf). tests/ffn/test_ffn_act.c states and checks the
 * error against the exact activation.
 */
#ifndef FFN_ACT_TMPL_H
#define FFN_ACT_TMPL_H

#define ACT_GK1 1.5957692f	/* 2 c */
#define ACT_GK3 0.071354816f	/* 2 c k */
#define ACT_ZLO (-87.0f)
#define ACT_ZHI 89.0f
#define ACT_LOG2E 1.44269504088896341f
/* ln 2 = LN2HI + LN2LO; LN2HI has few bits, so n LN2HI is exact */
#define ACT_LN2HI 0.693359375f
#define ACT_LN2LO (-2.12194440e-4f)
#define ACT_P0 1.9875691500e-4f
#define ACT_P1 1.3981999507e-3f
#define ACT_P2 8.3334519073e-3f
#define ACT_P3 4.1665795894e-2f
#define ACT_P4 1.6666665459e-1f
#define ACT_P5 5.0000001201e-1f

/* act(g) for GELU-tanh (gelu) or SiLU */
static inline V
act_v(V g, int gelu)
{
	V z, n, r, p;

	z = gelu ? VMUL(g, VFMA(VMUL(g, g), VBCAST(-ACT_GK3),
				VBCAST(-ACT_GK1))) :
		   VMUL(g, VBCAST(-1.0f));
	z = VMIN(VMAX(z, VBCAST(ACT_ZLO)), VBCAST(ACT_ZHI));
	n = VRINT(VMUL(z, VBCAST(ACT_LOG2E)));
	r = VFMA(n, VBCAST(-ACT_LN2HI), z);
	r = VFMA(n, VBCAST(-ACT_LN2LO), r);
	p = VFMA(VBCAST(ACT_P0), r, VBCAST(ACT_P1));
	p = VFMA(p, r, VBCAST(ACT_P2));
	p = VFMA(p, r, VBCAST(ACT_P3));
	p = VFMA(p, r, VBCAST(ACT_P4));
	p = VFMA(p, r, VBCAST(ACT_P5));
	p = VFMA(p, VMUL(r, r), r);		/* e^r - 1 */
	p = VADD(p, VBCAST(1.0f));		/* e^r */
	return VDIV(g, VFMA(p, VPOW2(n), VBCAST(1.0f)));
}

/* g[i] = act(g[i]) · u[i] for i < n */
static void
act_mul(enum ffn_act act, float *g, const float *u, size_t n)
{
	const int gelu = act == FFN_ACT_GELU_TANH;
	size_t i;

	for (i = 0; i + VL <= n; i += VL)
		VSTORE(g + i, VMUL(act_v(VLOADF(g + i), gelu),
				   VLOADF(u + i)));
#if VL > 1
	if (i < n)
		VSTORE_T(g + i, VMUL(act_v(VLOADF_T(g + i, n - i), gelu),
				     VLOADF_T(u + i, n - i)), n - i);
#endif
}

#endif /* FFN_ACT_TMPL_H */
