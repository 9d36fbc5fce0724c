/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Helpers of the K-quant tests: random blocks (from the shared generator
 * of tests/common/test_rng.h, state kept by each test), and an
 * independent transliteration of the block decode of spec/vindex.md §2.4
 * that splits each value into its scale term a = (d*sc)*q and its min term
 * b = dmin*m (value = a - b), which the error bound of ffn_kq.h uses.
 */
#ifndef KQ_TEST_UTIL_H
#define KQ_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "ffn_kq.h"
#include "test_rng.h"

/* nb random blocks of fmt with finite, moderate d / dmin, drawn from the
 * test_rng state *rng. */
void kt_random_blocks(uint64_t *rng, enum ffn_kq_fmt fmt, void *dst,
		      size_t nb);

/* Spec decode of nb blocks into a[], b[] (value = a - b). */
void kt_decode_parts(enum ffn_kq_fmt fmt, enum ffn_kq_q6_layout q6,
		     const void *blocks, size_t nb, float *a, float *b);

/* Exact (double) dot of the first n values of (a - b) with x, and the
 * bound of ffn_kq.h: (n + 4) * 2^-23 * sum (|a| + |b|) |x|. */
double kt_dot_exact(const float *a, const float *b, const float *x, size_t n,
		    double *bound);

#endif
