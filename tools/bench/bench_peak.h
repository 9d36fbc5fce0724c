/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * A core's compute peaks, measured in registers (tools/bench/bench_peak.c),
 * for the floors of bench-ffn --roofline and bench-kquant --roofline: a
 * kernel can run no faster than its multiply-adds at these rates.
 */
#ifndef BENCH_PEAK_H
#define BENCH_PEAK_H

/** Kernel width whose peak is measured. */
enum bench_peak_isa {
	BENCH_PEAK_AVX2 = 0,	/**< 256-bit: AVX2 + FMA */
	BENCH_PEAK_AVX512,	/**< 512-bit: AVX-512F (+ VNNI for idot) */
};

/** Best of iters: f32 multiply-adds per second (vfmadd231ps). */
double bench_peak_fma(enum bench_peak_isa isa, int iters);

/**
 * Best of iters: u8 x i8 multiply-adds per second by the instructions the
 * Q8_K kernels use: VNNI vpdpbusd (64 per instruction) on AVX-512,
 * vpmaddubsw + vpmaddwd + vpaddd (32 per three) on AVX2.
 */
double bench_peak_idot(enum bench_peak_isa isa, int iters);

#endif
