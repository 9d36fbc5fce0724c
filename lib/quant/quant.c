/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Run-time choice of the quant kernels. An ISA is usable when the CPU has
 * every instruction set its file is compiled for (CPUID) and the OS saves
 * the register state it needs (XCR0 via XGETBV); otherwise its kernels are
 * never called and the scalar reference is used.
 */
#include <errno.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "quant.h"
#include "quant_isa.h"

static const char *const isa_names[QUANT_ISA_COUNT] = {
	[QUANT_ISA_SCALAR] = "scalar",
	[QUANT_ISA_AVX2] = "avx2",
	[QUANT_ISA_AVX512] = "avx512",
};

/* Written with release, read with acquire: lcores may race on first use. */
static const struct quant_kernels *active;
/* quant_limit(): no kernel above this ISA is offered. */
static int isa_limit = QUANT_ISA_COUNT - 1;

#if defined(__x86_64__) || defined(__i386__)
/* XCR0 bits: 1 SSE, 2 AVX (YMM upper), 5 opmask, 6 ZMM0-15 upper, 7 ZMM16-31. */
#define XCR0_AVX	0x06u
#define XCR0_AVX512	0xe6u

static uint64_t
os_xcr0(void)
{
	unsigned int a, b, c, d;
	uint32_t lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
		return 0;
	/* XGETBV with ECX = 0, as asm so this file needs no -mxsave. */
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

static int
cpu_has(enum quant_isa isa)
{
	uint64_t xcr0;

	__builtin_cpu_init();
	xcr0 = os_xcr0();
	switch (isa) {
	case QUANT_ISA_AVX2:
		return (xcr0 & XCR0_AVX) == XCR0_AVX &&
		       __builtin_cpu_supports("avx2") &&
		       __builtin_cpu_supports("f16c") &&
		       __builtin_cpu_supports("fma");
	case QUANT_ISA_AVX512:
		return (xcr0 & XCR0_AVX512) == XCR0_AVX512 &&
		       __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512bw") &&
		       __builtin_cpu_supports("avx512vl");
	default:
		return 0;
	}
}
#endif

const struct quant_kernels *
quant_kernels_get(enum quant_isa isa)
{
	if ((int)isa < 0 || (int)isa > __atomic_load_n(&isa_limit,
						      __ATOMIC_ACQUIRE))
		return NULL;
	switch (isa) {
	case QUANT_ISA_SCALAR:
		return &quant_kernels_scalar;
#ifdef QUANT_HAVE_AVX2
	case QUANT_ISA_AVX2:
		return cpu_has(isa) ? &quant_kernels_avx2 : NULL;
#endif
#ifdef QUANT_HAVE_AVX512
	case QUANT_ISA_AVX512:
		return cpu_has(isa) ? &quant_kernels_avx512 : NULL;
#endif
	default:
		return NULL;
	}
}

static const struct quant_kernels *
best_kernels(void)
{
	for (int isa = QUANT_ISA_COUNT - 1; isa >= 0; isa--) {
		const struct quant_kernels *k = quant_kernels_get(isa);

		if (k != NULL)
			return k;
	}
	return &quant_kernels_scalar;
}

const struct quant_kernels *
quant_kernels_active(void)
{
	const struct quant_kernels *k = __atomic_load_n(&active,
							__ATOMIC_ACQUIRE);

	if (k == NULL) {
		/* Racing first users all compute and store the same table. */
		k = best_kernels();
		__atomic_store_n(&active, k, __ATOMIC_RELEASE);
	}
	return k;
}

int
quant_select(enum quant_isa isa)
{
	const struct quant_kernels *k;

	if ((int)isa < 0 || isa >= QUANT_ISA_COUNT)
		return -EINVAL;
	k = quant_kernels_get(isa);
	if (k == NULL)
		return -ENOTSUP;
	__atomic_store_n(&active, k, __ATOMIC_RELEASE);
	return 0;
}

int
quant_limit(enum quant_isa max)
{
	if ((int)max < 0 || max >= QUANT_ISA_COUNT)
		return -EINVAL;
	__atomic_store_n(&isa_limit, (int)max, __ATOMIC_RELEASE);
	__atomic_store_n(&active, best_kernels(), __ATOMIC_RELEASE);
	return 0;
}

const char *
quant_isa_name(enum quant_isa isa)
{
	if ((int)isa < 0 || isa >= QUANT_ISA_COUNT)
		return NULL;
	return isa_names[isa];
}

int
quant_isa_from_name(const char *name)
{
	for (int isa = 0; isa < QUANT_ISA_COUNT; isa++)
		if (strcmp(name, isa_names[isa]) == 0)
			return isa;
	return -EINVAL;
}

const char *
quant_active_name(void)
{
	return quant_kernels_active()->name;
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
