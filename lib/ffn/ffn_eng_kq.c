/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The K-quant engine (ffn_kind.h): the payload of spec/vindex.md §2.4
 * loaded by lib/ffn/kquant's ffn_kq_load() and computed by its
 * ffn_kq_layer_forward*(), through kquant's public header only (kquant
 * knows nothing of the model). Layer descriptors keep the checkpoint
 * orientation of down ([H, pad256(nf)]), unlike the dense kinds (ffn.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ffn_kind.h"
#include "ffn_kq.h"
#include "ffn_load_priv.h"
#include "ffn_priv.h"

static const struct ffn_kq_layer *
kq_layer(const struct ffn_model *m, unsigned li)
{
	const struct ffn_kq_model *kq = m->eng_data;

	return &kq->layers[li];
}

/* kquant applies lib/ffn's activation (ffn_kq.h ffn_kq_act_fn) */
static void
act_gelu(float *g, const float *u, size_t n)
{
	ffn_act_mul(FFN_ACT_GELU_TANH, g, u, n);
}

static void
act_silu(float *g, const float *u, size_t n)
{
	ffn_act_mul(FFN_ACT_SILU, g, u, n);
}

static ffn_kq_act_fn
kq_act(const struct ffn_model *m)
{
	return m->info.act == FFN_ACT_GELU_TANH ? act_gelu : act_silu;
}

/* ---- load ---- */

static void
set_mat(struct ffn_mat *mm, const void *data, enum ffn_kq_fmt f,
	uint32_t rows, uint32_t cols)
{
	mm->data = data;
	mm->rows = rows;
	mm->cols = cols;
	mm->row_bytes = ffn_kq_row_bytes(f, cols);
	mm->dtype = f == FFN_KQ_Q4_K ? FFN_DT_Q4K : FFN_DT_Q6K;
}

static enum ffn_pages
pages_of(int kq_pages)
{
	switch (kq_pages) {
	case FFN_KQ_PAGES_HUGETLB: return FFN_PAGES_HUGETLB;
	case FFN_KQ_PAGES_THP: return FFN_PAGES_THP;
	case FFN_KQ_PAGES_FILE: return FFN_PAGES_FILE;
	default: return FFN_PAGES_NORMAL;
	}
}

/* The owned layers from dir's interleaved_q4k.bin + manifest (§2.4):
 * FFN_ERR_KQUANT / FFN_ERR_NOMEM / FFN_ERR_NUMA with a message naming
 * the manifest entry at fault. */
int
ffn_kq_eng_load(struct ld *l)
{
	struct ffn_model *m = l->m;
	const struct ffn_load_opts *o = l->o;
	struct ffn_info *in = &m->info;
	uint32_t n = in->last_layer - in->first_layer + 1, i;
	struct ffn_kq_layer_spec *spec = calloc(n, sizeof(*spec));
	struct ffn_kq_model *kq = calloc(1, sizeof(*kq));
	struct ffn_kq_load_opts ko = {
		.mem = o->placement == FFN_PLACE_MMAP ? FFN_KQ_MEM_MMAP
						      : FFN_KQ_MEM_COPY,
		.numa_node = o->numa_node >= 0 ? o->numa_node
					       : ffn_mem_current_node(),
		.hugepages = !o->no_hugepages,
		.q6 = o->q6k_ggml ? FFN_KQ_Q6_GGML : FFN_KQ_Q6_PRIVATE,
	};
	char msg[256] = "";
	int rc;

	if (spec == NULL || kq == NULL) {
		free(spec);
		free(kq);
		return FFN_ERR_NOMEM;
	}
	m->eng_data = kq;	/* released by ffn_model_free, even now */
	for (i = 0; i < n; i++) {
		spec[i].layer = in->first_layer + i;
		spec[i].nf = l->nf[in->first_layer + i];
	}
	rc = ffn_kq_load(kq, l->dir, spec, n, in->hidden, &ko, msg,
			 sizeof(msg));
	free(spec);
	if (rc < 0)
		return fail(l, rc == -ENOMEM ? FFN_ERR_NOMEM :
			       rc == -ENODEV ? FFN_ERR_NUMA : FFN_ERR_KQUANT,
			    "K-quant payload (" FFN_KQ_BIN_NAME "): %s", msg);
	for (i = 0; i < n; i++) {
		const struct ffn_kq_layer *kl = &kq->layers[i];
		struct ffn_layer *ly = &m->layers[i];

		ly->nf = kl->nf;
		ly->layout = in->layout;
		set_mat(&ly->gate, kl->gate, kl->gate_fmt, kl->nf, kl->hidden);
		set_mat(&ly->up, kl->up, kl->up_fmt, kl->nf, kl->hidden);
		set_mat(&ly->down, kl->down, kl->down_fmt, kl->hidden, kl->nf);
	}
	in->bytes_loaded = kq->bytes;
	in->placement = o->placement;
	in->pages = pages_of(kq->pages);
	in->numa_node = o->placement == FFN_PLACE_COPY ? ko.numa_node : -1;
	in->q6k_ggml = o->q6k_ggml ? 1 : 0;
	return 0;
}

static void
kq_unload(struct ffn_model *m)
{
	struct ffn_kq_model *kq = m->eng_data;

	if (kq == NULL)
		return;
	ffn_kq_unload(kq);
	free(kq);
	m->eng_data = NULL;
}

/* ---- compute ---- */

/* Both paths' need: ffn_model_set_kq_q8k() may switch after scratch is
 * made. */
static size_t
kq_scratch(const struct ffn_model *m, unsigned max_rows)
{
	const struct ffn_kq_model *kq = m->eng_data;
	size_t need = 0;

	for (size_t i = 0; kq != NULL && i < kq->n_layers; i++) {
		const struct ffn_kq_layer *kl = &kq->layers[i];
		size_t a = ffn_kq_layer_scratch(kl, max_rows, FFN_KQ_PATH_F32);
		size_t b = ffn_kq_layer_scratch(kl, max_rows, FFN_KQ_PATH_Q8K);

		if (a > need)
			need = a;
		if (b > need)
			need = b;
	}
	return need;
}

static int
kq_part(const struct ffn_model *m, unsigned li, unsigned f0, unsigned f1,
	const float *const *x, float *const *y, unsigned rows,
	struct ffn_scratch *s)
{
	const struct ffn_kq_layer *kl = kq_layer(m, li);
	size_t H = m->info.hidden;
	enum ffn_kq_path path = m->info.kq_q8k ? FFN_KQ_PATH_Q8K
					       : FFN_KQ_PATH_F32;
	unsigned done, r;
	int rc;

	/* Gather rows (any pointers, possibly in place) into xb, compute
	 * into yb, scatter: H floats per row against megabytes of weights. */
	for (done = 0; done < rows;) {
		unsigned R = rows - done;

		if (R > s->max_rows)
			R = s->max_rows;
		for (r = 0; r < R; r++)
			memcpy(s->xb + r * H, x[done + r], H * sizeof(float));
		rc = ffn_kq_layer_forward_part(kl, path, kq_act(m), f0, f1,
					       s->xb, H, R, s->yb, H,
					       s->eng_buf, s->eng_len);
		if (rc < 0)
			return rc;
		for (r = 0; r < R; r++)
			memcpy(y[done + r], s->yb + r * H, H * sizeof(float));
		done += R;
	}
	return 0;
}

/* Q8_K rows straight into the integer dots: no f32 input is formed. */
static int
kq_q8k(const struct ffn_model *m, unsigned li, const void *xq,
       float *const *y, unsigned rows, struct ffn_scratch *s)
{
	size_t H = m->info.hidden;
	size_t qrow = FFN_KQ_NBLOCKS(H) * FFN_KQ_Q8K_BYTES;
	unsigned done, r;
	int rc;

	for (done = 0; done < rows;) {
		const uint8_t *in = (const uint8_t *)xq + done * qrow;
		unsigned R = rows - done;

		if (R > s->max_rows)
			R = s->max_rows;
		if (R > 64)
			R = 64;		/* passes as ffn_dense.c's */
		rc = ffn_kq_layer_forward_q8k(kq_layer(m, li), kq_act(m), in,
					      R, s->yb, H, s->eng_buf,
					      s->eng_len);
		if (rc < 0)
			return rc;
		for (r = 0; r < R; r++)
			memcpy(y[done + r], s->yb + r * H, H * 4);
		done += R;
	}
	return 0;
}

static int
kq_gate(const struct ffn_model *m, unsigned li, const float *x, float *g,
	struct ffn_scratch *s)
{
	const struct ffn_kq_layer *kl = kq_layer(m, li);
	struct ffn_kq_mat G = { kl->gate, kl->gate_fmt, kl->q6, kl->nf,
				kl->hidden };

	return ffn_kq_matvec_f32(&G, 0, kl->nf, x, kl->hidden, 1, g, kl->nf,
				 s->eng_buf, s->eng_len);
}

const struct ffn_eng ffn_eng_kq = {
	/* down is [H, pad256(nf)] in blocks of 256 features (§2.4): a
	 * slice is whole blocks of them */
	.part_align = FFN_KQ_QK,
	.unload = kq_unload,
	.scratch = kq_scratch,
	.part = kq_part,
	.q8k = kq_q8k,
	.gate = kq_gate,
};
