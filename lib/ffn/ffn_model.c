/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Model lifetime, accessors and names (for /v1/stats and messages; the
 * layout names are the weight kinds', ffn_kind.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cblas.h>

#include "ffn_kind.h"
#include "ffn_priv.h"

/* ---- names ---- */

const char *
ffn_strerror(int err)
{
	switch (err) {
	case 0: return "success";
	case FFN_ERR_IO: return "file missing or unreadable";
	case FFN_ERR_SHORT: return "file too short";
	case FFN_ERR_JSON: return "invalid JSON";
	case FFN_ERR_KEY: return "missing or invalid key";
	case FFN_ERR_SHAPE: return "shape disagrees with index.json";
	case FFN_ERR_LAYER: return "owned layer missing or empty";
	case FFN_ERR_RANGE: return "layers outside the model";
	case FFN_ERR_MODEL: return "model type not servable";
	case FFN_ERR_FP4: return "fp4 not supported";
	case FFN_ERR_KQUANT: return "K-quant payload missing or invalid";
	case FFN_ERR_PAYLOAD: return "no FFN payload";
	case FFN_ERR_NOMEM: return "out of memory";
	case FFN_ERR_NUMA: return "NUMA node unavailable";
	default: return err < 0 && err > -4096 ? strerror(-err) : "unknown";
	}
}

const char *
ffn_act_name(enum ffn_act a)
{
	return a == FFN_ACT_GELU_TANH ? "gelu_tanh" : "silu";
}

const char *
ffn_pages_name(enum ffn_pages p)
{
	switch (p) {
	case FFN_PAGES_HUGETLB: return "hugetlb-2M";
	case FFN_PAGES_THP: return "thp";
	case FFN_PAGES_FILE: return "file-mmap";
	default: return "4K";
	}
}

/* ---- model accessors ---- */

const struct ffn_info *
ffn_model_info(const struct ffn_model *m)
{
	return &m->info;
}

const struct ffn_layer *
ffn_model_layer(const struct ffn_model *m, unsigned layer)
{
	if (layer < m->info.first_layer || layer > m->info.last_layer)
		return NULL;
	return &m->layers[layer - m->info.first_layer];
}

void
ffn_model_set_engine(struct ffn_model *m, enum ffn_engine e,
		     unsigned blas_min_rows)
{
	m->engine = e;
	m->blas_min_rows = blas_min_rows;
}

void
ffn_model_set_kq_q8k(struct ffn_model *m, int on)
{
	/* read by the K-quant engine per pass (ffn_eng_kq.c) */
	m->info.kq_q8k = on ? 1 : 0;
}

void
ffn_model_free(struct ffn_model *m)
{
	int i;

	if (m == NULL)
		return;
	if (m->eng != NULL && m->eng->unload != NULL)
		m->eng->unload(m);
	ffn_mem_free(m->arena, m->arena_len);
	for (i = 0; i < FFN_MAX_MAPS; i++)
		if (m->maps[i].addr != NULL)
			munmap(m->maps[i].addr, m->maps[i].len);
	free(m->layers);
	free(m);
}

int
ffn_model_wrap(unsigned hidden, enum ffn_act act,
	       const struct ffn_layer *layers, unsigned n,
	       struct ffn_model **out)
{
	struct ffn_model *m;
	unsigned i;

	*out = NULL;
	if (n == 0 || hidden == 0)
		return -EINVAL;
	openblas_set_num_threads(1);
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return FFN_ERR_NOMEM;
	m->layers = calloc(n, sizeof(*m->layers));
	if (m->layers == NULL) {
		free(m);
		return FFN_ERR_NOMEM;
	}
	memcpy(m->layers, layers, n * sizeof(*layers));
	/* caller-owned f32/f16 matrices in the dense engine's arrangement */
	m->eng = &ffn_eng_dense;
	snprintf(m->info.model, sizeof(m->info.model), "wrapped");
	m->info.hidden = hidden;
	m->info.num_layers = n;
	m->info.last_layer = n - 1;
	m->info.act = act;
	m->info.numa_node = -1;
	m->info.layout = layers[0].layout;
	for (i = 0; i < n; i++) {
		const struct ffn_layer *ly = &layers[i];

		if (ly->nf > m->info.max_features)
			m->info.max_features = ly->nf;
		m->info.bytes_loaded += (uint64_t)ly->nf * 3 *
					ly->gate.row_bytes;
	}
	*out = m;
	return 0;
}
