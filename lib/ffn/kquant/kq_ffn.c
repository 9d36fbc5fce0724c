/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The K-quant payload behind the ffn_model API (spec/vindex.md §2.4):
 * loading through ffn_kq_load() and computing through
 * ffn_kq_layer_forward(). Layer descriptors keep the checkpoint orientation
 * of down ([H, pad256(nf)]), unlike the dense layouts (ffn.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffn_kq.h"
#include "kq_ffn.h"

static enum ffn_dtype
dt_of(enum ffn_kq_fmt f)
{
	return f == FFN_KQ_Q4_K ? FFN_DT_Q4K : FFN_DT_Q6K;
}

static void
set_mat(struct ffn_mat *mm, const void *data, enum ffn_kq_fmt f,
	uint32_t rows, uint32_t cols)
{
	mm->data = data;
	mm->rows = rows;
	mm->cols = cols;
	mm->row_bytes = ffn_kq_row_bytes(f, cols);
	mm->dtype = dt_of(f);
}

int
ffn_kq_model_load(struct ffn_model *m, const char *dir, const uint32_t *nf,
		  const struct ffn_load_opts *o, char *err, size_t errlen)
{
	struct ffn_info *in = &m->info;
	uint32_t n = in->last_layer - in->first_layer + 1, i;
	struct ffn_kq_layer_spec *spec = calloc(n, sizeof(*spec));
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

	if (spec == NULL)
		return FFN_ERR_NOMEM;
	for (i = 0; i < n; i++) {
		spec[i].layer = in->first_layer + i;
		spec[i].nf = nf[in->first_layer + i];
	}
	rc = ffn_kq_load(&m->kq, dir, spec, n, in->hidden, &ko, msg,
			 sizeof(msg));
	free(spec);
	if (rc < 0) {
		int code = rc == -ENOMEM ? FFN_ERR_NOMEM :
			   rc == -ENODEV ? FFN_ERR_NUMA : FFN_ERR_KQUANT;

		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "K-quant payload "
				 "(" FFN_KQ_BIN_NAME "): %s", msg);
		return code;
	}
	for (i = 0; i < n; i++) {
		const struct ffn_kq_layer *kl = &m->kq.layers[i];
		struct ffn_layer *ly = &m->layers[i];

		ly->nf = kl->nf;
		ly->layout = FFN_LAYOUT_Q4K;
		set_mat(&ly->gate, kl->gate, kl->gate_fmt, kl->nf, kl->hidden);
		set_mat(&ly->up, kl->up, kl->up_fmt, kl->nf, kl->hidden);
		set_mat(&ly->down, kl->down, kl->down_fmt, kl->hidden, kl->nf);
	}
	in->bytes_loaded = m->kq.bytes;
	in->placement = o->placement;
	switch (m->kq.pages) {
	case FFN_KQ_PAGES_HUGETLB: in->pages = FFN_PAGES_HUGETLB; break;
	case FFN_KQ_PAGES_THP: in->pages = FFN_PAGES_THP; break;
	case FFN_KQ_PAGES_FILE: in->pages = FFN_PAGES_FILE; break;
	default: in->pages = FFN_PAGES_NORMAL; break;
	}
	in->numa_node = o->placement == FFN_PLACE_COPY ? ko.numa_node : -1;
	in->q6k_ggml = o->q6k_ggml ? 1 : 0;
	return 0;
}

size_t
ffn_kq_scratch_bytes(const struct ffn_model *m, unsigned max_rows)
{
	size_t need = 0;

	for (size_t i = 0; i < m->kq.n_layers; i++) {
		const struct ffn_kq_layer *kl = &m->kq.layers[i];
		size_t a = ffn_kq_layer_scratch(kl, max_rows, FFN_KQ_PATH_F32);
		size_t b = ffn_kq_layer_scratch(kl, max_rows, FFN_KQ_PATH_Q8K);

		if (a > need)
			need = a;
		if (b > need)
			need = b;
	}
	return need;
}

int
ffn_kq_compute(const struct ffn_model *m, unsigned layer,
	       const float *const *x, float *const *y, unsigned rows,
	       struct ffn_scratch *s)
{
	/* The whole layer is its one slice. */
	return ffn_kq_compute_part(m, layer, 0,
			m->kq.layers[layer - m->info.first_layer].nf,
			x, y, rows, s);
}

int
ffn_kq_compute_part(const struct ffn_model *m, unsigned layer, unsigned f0,
		    unsigned f1, const float *const *x, float *const *y,
		    unsigned rows, struct ffn_scratch *s)
{
	const struct ffn_kq_layer *kl =
		&m->kq.layers[layer - m->info.first_layer];
	size_t H = m->info.hidden;
	enum ffn_kq_act act = m->info.act == FFN_ACT_GELU_TANH ?
			      FFN_KQ_ACT_GELU_TANH : FFN_KQ_ACT_SILU;
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
		rc = ffn_kq_layer_forward_part(kl, path, act, f0, f1, s->xb, H,
					       R, s->yb, H, s->kq, s->kq_len);
		if (rc < 0)
			return rc;
		for (r = 0; r < R; r++)
			memcpy(y[done + r], s->yb + r * H, H * sizeof(float));
		done += R;
	}
	return 0;
}

int
ffn_kq_gate(const struct ffn_model *m, unsigned layer, const float *x,
	    float *g, struct ffn_scratch *s)
{
	const struct ffn_kq_layer *kl =
		&m->kq.layers[layer - m->info.first_layer];
	struct ffn_kq_mat G = { kl->gate, kl->gate_fmt, kl->q6, kl->nf,
				kl->hidden };

	return ffn_kq_matvec_f32(&G, 0, kl->nf, x, kl->hidden, 1, g, kl->nf,
				 s->kq, s->kq_len);
}

void
ffn_model_set_kq_q8k(struct ffn_model *m, int on)
{
	m->info.kq_q8k = on ? 1 : 0;
}

int
ffn_compute_q8k(const struct ffn_model *m, unsigned layer, const void *xq,
		float *const *y, unsigned rows, struct ffn_scratch *s)
{
	const struct ffn_layer *ly = ffn_model_layer(m, layer);
	size_t H, qrow;
	enum ffn_kq_act act;
	unsigned done, r;
	int rc;

	if (ly == NULL)
		return -ERANGE;
	if (s == NULL || xq == NULL || y == NULL || ly->nf > s->max_nf ||
	    m->info.hidden != s->hidden)
		return -EINVAL;
	H = m->info.hidden;
	qrow = FFN_KQ_NBLOCKS(H) * FFN_KQ_Q8K_BYTES;
	act = m->info.act == FFN_ACT_GELU_TANH ? FFN_KQ_ACT_GELU_TANH
					       : FFN_KQ_ACT_SILU;
	for (done = 0; done < rows;) {
		const uint8_t *in = (const uint8_t *)xq + done * qrow;
		unsigned R = rows - done;

		if (R > s->max_rows)
			R = s->max_rows;
		if (R > 64)
			R = 64;		/* xp below */
		if (ly->layout == FFN_LAYOUT_Q4K) {
			rc = ffn_kq_layer_forward_q8k(
				&m->kq.layers[layer - m->info.first_layer],
				act, in, R, s->yb, H, s->kq, s->kq_len);
			if (rc < 0)
				return rc;
			for (r = 0; r < R; r++)
				memcpy(y[done + r], s->yb + r * H, H * 4);
		} else {
			/* Dense: dequantised rows in yb, which a pass reads
			 * (or copies to xb) before it writes yb or y. */
			const float *xp[64];

			for (r = 0; r < R; r++) {
				ffn_kq_dequant_q8k(in + r * qrow, H,
						   s->yb + r * H);
				xp[r] = s->yb + r * H;
			}
			rc = ffn_compute(m, layer, xp, y + done, R, s);
			if (rc < 0)
				return rc;
		}
		done += R;
	}
	return 0;
}
