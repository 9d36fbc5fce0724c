/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FUZZ_CPU_H
#define FUZZ_CPU_H

/* Forced into lib/ffn's files for fuzz-vindex (-include, see
 * tests/fuzz/meson.build): clang 14 refuses
 * __builtin_cpu_supports("f16c"), so every query goes to fuzz_kq.c,
 * which answers "absent" (the scalar kernels). */
int fuzz_cpu_supports(const char *feature);
#define __builtin_cpu_supports(f) fuzz_cpu_supports(f)

#endif /* FUZZ_CPU_H */
