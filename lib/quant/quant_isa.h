/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Private to lib/quant: the kernel tables of the ISA-specific files. Each is
 * compiled with its own ISA flags and may only be called once quant.c has
 * checked the CPU (and the OS) supports that ISA.
 */
#ifndef FFN_QUANT_ISA_H
#define FFN_QUANT_ISA_H

#include "quant.h"

#ifdef QUANT_HAVE_AVX2
extern const struct quant_kernels quant_kernels_avx2;
#endif
#ifdef QUANT_HAVE_AVX512
extern const struct quant_kernels quant_kernels_avx512;
#endif

#endif /* FFN_QUANT_ISA_H */
