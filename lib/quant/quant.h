/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_QUANT_H
#define FFN_QUANT_H

/**
 * @file
 * Number conversions of the LARQL wire (spec/wire.md §5.3 is the definition).
 *
 * - f16 is IEEE binary16: round to nearest even, overflow to ±Inf, NaN stays
 *   a quiet NaN (payload's top bits kept, as F16C does), f32 subnormals
 *   flush to ±0 by rounding, sign of zero kept.
 * - An i8 row of n values is 8 + n bytes: [scale f32][zero_point f32 = 0]
 *   [n x int8], scale = max|x| / 127.0f (every NaN ignored, signalling
 *   ones too; 1.0f when max is 0),
 *   q = roundf(clamp(x / scale, -127, 127)), NaN -> 0.
 *
 * Every function exists as a scalar reference and as SIMD kernels
 * (AVX2+F16C+FMA, AVX-512 F+BW+VL) that produce the same bytes for every
 * input; the best kernels the CPU (CPUID) and the OS (XCR0) support are
 * chosen on first use, the scalar reference when there are none. Nothing
 * here allocates; the conversions are thread-safe and may run on any lcore.
 * The i8 results assume the default MXCSR (round to nearest, FTZ and DAZ
 * off), as the reference server's do: a library that changes it on an
 * lcore changes the bytes (vcvtps2ph rounds by its immediate, not MXCSR).
 *
 * In-place narrowing (the compute output becomes the response payload):
 * - f16: quant_f32_to_f16(dst, src, n) with (void *)dst == (void *)src.
 *   The f16 values occupy the first 2n bytes of the f32 buffer.
 * - i8:  quant_f32_to_i8_rows(dst, src, rows, n) with
 *   (char *)src == (char *)dst + QUANT_I8_HEADROOM(rows). The caller places
 *   the f32 rows QUANT_I8_HEADROOM(rows) bytes after where the i8 rows must
 *   start; the buffer from dst must hold
 *   QUANT_I8_HEADROOM(rows) + 4 * rows * n bytes. Writes then never pass
 *   the reads, for every n >= 1 (an i8 row is larger than its f32 row when
 *   n < 3, which is why the headroom scales with rows).
 * Other overlaps are undefined.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of the per-row i8 header: scale f32, zero_point f32. */
#define QUANT_I8_ROW_HDR 8u
/** Bytes of one i8 row of n values. */
#define QUANT_I8_ROW_BYTES(n) ((size_t)QUANT_I8_ROW_HDR + (size_t)(n))
/** Headroom in front of f32 rows narrowed in place to i8 (see above). */
#define QUANT_I8_HEADROOM(rows) ((size_t)QUANT_I8_ROW_HDR * (size_t)(rows))

/** Instruction sets with kernels, in order of preference (best last). */
enum quant_isa {
	QUANT_ISA_SCALAR = 0,
	QUANT_ISA_AVX2,		/**< AVX2 + F16C + FMA */
	QUANT_ISA_AVX512,	/**< AVX-512 F + BW + VL */
	QUANT_ISA_COUNT
};

/** One ISA's set of kernels. Semantics as the quant_* functions below. */
struct quant_kernels {
	enum quant_isa isa;
	const char *name;
	void (*f32_to_f16)(uint16_t *dst, const float *src, size_t n);
	void (*f16_to_f32)(float *dst, const uint16_t *src, size_t n);
	void (*f32_to_i8_rows)(void *dst, const float *src, size_t rows,
			       size_t n);
	void (*i8_rows_to_f32)(float *dst, const void *src, size_t rows,
			       size_t n);
};

/** One value, scalar reference. */
uint16_t quant_f32_to_f16_1(float v);
/** One value, scalar reference; exact. */
float quant_f16_to_f32_1(uint16_t h);

/**
 * Narrow n f32 values to f16. dst may equal src (in place); no other overlap.
 */
void quant_f32_to_f16(uint16_t *dst, const float *src, size_t n);

/** Widen n f16 values to f32. dst and src must not overlap. */
void quant_f16_to_f32(float *dst, const uint16_t *src, size_t n);

/**
 * Quantise rows x n f32 values (row-major) to rows i8 rows of
 * QUANT_I8_ROW_BYTES(n) bytes each, written back to back from dst.
 * In place when src == dst + QUANT_I8_HEADROOM(rows) (see the file comment).
 * n must be >= 1.
 */
void quant_f32_to_i8_rows(void *dst, const float *src, size_t rows,
			  size_t n);

/**
 * Decode rows i8 rows of n values (value = q * scale; zero_point ignored,
 * spec/wire.md §3) to f32: the f32 product (float)q * scale, the same bits
 * in every kernel, for every q (-128, which a peer may send, included).
 * dst and src must not overlap.
 * The scale may be unaligned in src.
 */
void quant_i8_rows_to_f32(float *dst, const void *src, size_t rows,
			  size_t n);

/**
 * Kernels for one ISA, or NULL when this CPU (or this build) lacks it.
 * Tests use this to compare every kernel with the scalar reference.
 */
const struct quant_kernels *quant_kernels_get(enum quant_isa isa);

/**
 * The kernels the quant_* functions use: the best supported, unless
 * quant_select() or quant_limit() chose others.
 */
const struct quant_kernels *quant_kernels_active(void);

/**
 * Force the kernels the quant_* functions use (benchmarks, tests, an
 * operator's override). Returns 0, -ENOTSUP when the CPU lacks the ISA (or
 * quant_limit() rules it out), -EINVAL when isa is not an ISA.
 * Set it before the data path starts: lcores read the choice without locks.
 */
int quant_select(enum quant_isa isa);

/**
 * Offer no kernels above max, as if the CPU lacked them: quant_kernels_get()
 * returns NULL for them and the active kernels become the best of those
 * left. For tests of the fallback path and operators who want to rule out
 * an ISA (e.g. AVX-512 clock effects). quant_limit(QUANT_ISA_COUNT - 1)
 * lifts the limit. Returns 0, or -EINVAL when max is not an ISA.
 */
int quant_limit(enum quant_isa max);

/** Name of an ISA ("scalar", "avx2", "avx512"), or NULL when not an ISA. */
const char *quant_isa_name(enum quant_isa isa);

/** The ISA named name (as quant_isa_name), or -EINVAL. For config keys. */
int quant_isa_from_name(const char *name);

/** Name of the active kernels' ISA, for logs and /v1/stats. */
const char *quant_active_name(void);

/** Scalar reference kernels (also reachable via quant_kernels_get). */
extern const struct quant_kernels quant_kernels_scalar;

#ifdef __cplusplus
}
#endif

#endif /* FFN_QUANT_H */
