/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef VREF_H
#define VREF_H

/**
 * @file
 * A simple local reference of the FFN for the tools' --verify: reads a
 * vindex's dense layouts (spec/vindex.md §2.1 feature-major, §2.2
 * interleaved, §2.3 dense + weight_manifest.json; f32 or f16) and computes
 * spec/wire.md §1 in double precision. Layers load lazily, on first use.
 * Independent of lib/ffn on purpose: it is the yardstick.
 */

#include <stddef.h>
#include <stdint.h>

enum vref_layout { VREF_INTERLEAVED, VREF_FEATURES, VREF_DENSE };

struct vref {
	char dir[1024];
	uint32_t hidden;
	uint32_t num_layers;
	int gelu;		/**< 1: GELU-tanh, 0: SiLU (vindex.md §1) */
	enum vref_layout layout;
	int f16;		/**< dtype f16 (§1: gate, up_/down_weights) */
	uint32_t *nf;		/**< per layer, 0 when no entry */
	uint64_t *gate_off;
	void *manifest;		/**< json_object of §2.3, or NULL */
	float **w;		/**< per layer: G, U, D (feature-major) */
};

/** Read index.json and choose the layout. 0 or -errno, err says why. */
int vref_open(struct vref *v, const char *dir, char *err, size_t errlen);

/**
 * y[seq x H] = FFN of layer L on x[seq x H], in double. 0 or -errno.
 */
int vref_ffn(struct vref *v, uint32_t L, const float *x, uint32_t seq,
	     double *y, char *err, size_t errlen);

/**
 * embeddings.bin [vocab, H] f32, malloc'd; NULL with *vocab = 0 when the
 * vindex has none, NULL with err set on a read error.
 */
float *vref_embeddings(const char *dir, uint32_t hidden, uint32_t *vocab,
		       char *err, size_t errlen);

void vref_close(struct vref *v);

#endif /* VREF_H */
