/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The K-quant test fixture, one copy for every suite (tests/ffn/kquant,
 * tests/shard): a small vindex written by mkvindex --quant q4k
 * (spec/vindex.md §2.4; tools/mkvindex/mkvindex_q4k.h) into a fresh
 * directory under /tmp, and its removal. The weights are vw_layer()'s for
 * the options given, so a test can recompute them in f32.
 * Link kq_fixture_dep (tests/ffn/kquant/meson.build).
 */
#ifndef KQ_FIXTURE_H
#define KQ_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "mkvindex_q4k.h"

/* vw_defaults() (llama, SiLU) with H, layers, their widths and seed. */
struct vw_opts kq_fixture_opts(unsigned hidden, unsigned layers,
			       const unsigned *widths, uint64_t seed);

/*
 * Write o's vindex, down in Q6_K of arrangement q6, into a new directory
 * "/tmp/<name>-XXXXXX"; its path goes to dir (dirlen >= 64).
 * 0, or -1 with a message on stderr.
 */
int kq_fixture_write(char *dir, size_t dirlen, const char *name,
		     const struct vw_opts *o, enum ffn_kq_q6_layout q6);

/* Remove dir and the files in it (a vindex has no subdirectories). */
void kq_fixture_remove(const char *dir);

#endif /* KQ_FIXTURE_H */
