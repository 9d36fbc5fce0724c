/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_VINDEX_WRITE_H
#define FFN_VINDEX_WRITE_H

/**
 * @file
 * Writes synthetic LARQL vindex directories in the real format
 * (spec/vindex.md §1, §2.1, §2.2, §2.3), deterministic by seed. Used by
 * the mkvindex tool, the tests and the benchmarks.
 *
 * Weights: N(0, 1/fan_in) (std 1/sqrt(fan_in)), with a few hidden channels
 * whose down rows are 4x larger, as real residual streams have a few
 * large-magnitude channels; embeddings N(0, 1) with those channels 10x.
 */

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

enum vw_layout {
	VW_FEATURE_MAJOR = 0,	/**< §2.1 */
	VW_INTERLEAVED,		/**< §2.2 */
	VW_DENSE,		/**< §2.3 with weight_manifest.json */
};

struct vw_opts {
	unsigned hidden;
	unsigned layers;
	unsigned intermediate;	/**< nf of every layer unless widths */
	const unsigned *widths;	/**< per-layer nf, or NULL */
	int f16;		/**< index.json dtype f16 */
	enum vw_layout layout;
	const char *model_type;	/**< model_config.model_type */
	const char *family;	/**< index.json family (informational) */
	uint64_t seed;
	unsigned vocab;		/**< > 0: write embeddings.bin [vocab, H] */
	int example;		/**< vindex.md §3 weights (H 4, nf 3, 2 layers) */
	float down_scale;	/**< down multiplied by this (1): large answers,
				 *   e.g. past f16's range (the precision
				 *   guard, spec/moe.md §7) */
};

/** Options with defaults: llama, f32, feature-major, seed 1. */
void vw_defaults(struct vw_opts *o);

/** FFN width of layer L. */
unsigned vw_nf(const struct vw_opts *o, unsigned L);

/**
 * Weights of layer L in checkpoint orientation, exactly as the files
 * store them (values rounded to f16 where the layout stores dtype f16):
 * G, U [nf, H], Wd [H, nf], f32.
 */
void vw_layer(const struct vw_opts *o, unsigned L, float *G, float *U,
	      float *Wd);

/** Fill p with n values N(0, std^2), deterministic by seed. */
void vw_normal(float *p, size_t n, float std, uint64_t seed);

/** Write the vindex to dir (created if missing). 0 or -errno. */
int vw_write(const char *dir, const struct vw_opts *o, char *err,
	     size_t errlen);

/** Write a message into err (if any) and return rc: the writers' error
 *  path. */
int vw_err(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/** fopen(dir/name, "wb"). */
FILE *vw_open(const char *dir, const char *name);

#endif /* FFN_VINDEX_WRITE_H */
