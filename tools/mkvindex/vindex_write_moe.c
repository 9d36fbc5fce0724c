/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The hybrid-MoE writer of mkvindex (--experts, --example-moe), see
 * vindex_write_moe.h and spec/moe.md §5, §6.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ffn_kq.h"
#include "vindex_write_moe.h"

#define LYRW_HDR	24u	/* magic, version, tag, E, I, H */
#define LYRW_ENTRY	32u	/* gate_up off, bytes, down off, bytes: u64 */

/* How a layer file's payloads are encoded. */
enum moe_enc {
	MOE_ENC_Q4K = 0,	/* lib/ffn/kquant's quantiser */
	MOE_ENC_GRID,		/* §6's fixed grid: d = dmin = 0.5, q = 2v+2 */
	MOE_ENC_F32,
};

/* The weights of one expert: gate_up [2I, H] flat, D [H, I]. */
typedef void (*moe_expert_fn)(const void *ctx, unsigned L, unsigned e,
			      float *gu, float *D);

/* One layer file's shape. */
struct moe_file {
	enum moe_enc enc;
	unsigned E, I, H;
	unsigned dcols;		/* S' (F32: I or S; Q4_K: S) */
	moe_expert_fn fn;
	const void *ctx;
};

/* What index.json says (§5.1). */
struct moe_index {
	const char *model, *family, *model_type;
	unsigned num_layers, hidden, inter, vocab;
	double embed_scale;
	const struct vw_opts *dense;	/* NULL: "layers": [] */
	unsigned E, top_k, I;
	unsigned head_dim, nq, nkv;
	int dtype;			/* also write "dtype": "f32" */
};

/*
 * --- §6: the hand-checkable example ----------------------------------
 */

/* G, U [2,4] and D [4,2] of experts 0 and 1. */
static const float ex_g[2][8] = {
	{ 1, 0, 0, 0, 0, 1, 0, 0 },
	{ 0, 0, 1, 0, 0.5f, 0, 0, 0.5f },
};
static const float ex_u[2][8] = {
	{ 1, 1, 1, 1, 0, 0, 1, -1 },
	{ 2, 0, 0, 0, 0, 1, 0, 0 },
};
static const float ex_d[2][8] = {
	{ 1, 0, 0, 1, 1, 1, 0, -1 },
	{ 0, 1, 1, 0, 0, 0, -1, 1 },
};
static const float ex_norm[4] = { 2, 0.5f, 1.5f, 1 };

/* The example's experts with I >= 2: rows 2.. of G and U are zero. */
static void
example_expert(const void *ctx, unsigned L, unsigned e, float *gu, float *D)
{
	const unsigned *I = ctx;
	unsigned H = 4, r, c;

	(void)L;
	memset(gu, 0, (size_t)2 * *I * H * sizeof(float));
	memset(D, 0, (size_t)H * *I * sizeof(float));
	memcpy(gu, ex_g[e], sizeof(ex_g[e]));
	memcpy(gu + (size_t)*I * H, ex_u[e], sizeof(ex_u[e]));
	for (r = 0; r < H; r++)
		for (c = 0; c < 2; c++)
			D[(size_t)r * *I + c] = ex_d[e][2 * r + c];
}

/*
 * --- encoders ---------------------------------------------------------
 */

/*
 * One Q4_K block on §6's grid: d = dmin = 0.5, every scale 1 and min 2,
 * so nibble q means 0.5q - 1 (vindex.md §2.4). Only for values on that
 * grid (the example's); -EINVAL otherwise.
 */
static int
grid_block(const float *v, uint8_t *blk)
{
	static const uint8_t hdr[16] = { 0x00, 0x38, 0x00, 0x38,
					 1, 1, 1, 1, 2, 2, 2, 2,
					 0x21, 0x21, 0x21, 0x21 };
	unsigned g, l;

	memcpy(blk, hdr, sizeof(hdr));
	for (g = 0; g < 4; g++)
		for (l = 0; l < 32; l++) {
			float lo = 2 * v[64 * g + l] + 2;
			float hi = 2 * v[64 * g + 32 + l] + 2;

			if (lo < 0 || lo > 15 || hi < 0 || hi > 15 ||
			    lo != (int)lo || hi != (int)hi)
				return -EINVAL;
			blk[16 + 32 * g + l] = (uint8_t)((int)lo |
							 (int)hi << 4);
		}
	return 0;
}

/* n values of x, zero-filled to whole blocks, in enc's Q4_K at dst. */
static int
q4k_seq(enum moe_enc enc, const float *x, size_t n, uint8_t *dst)
{
	float blk[256];
	size_t b, k;

	if (enc == MOE_ENC_Q4K) {
		ffn_kq_quantize_row(FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, x, n, dst);
		return 0;
	}
	for (b = 0; b < FFN_KQ_NBLOCKS(n); b++) {
		k = n - 256 * b < 256 ? n - 256 * b : 256;
		memset(blk, 0, sizeof(blk));
		memcpy(blk, x + 256 * b, k * sizeof(float));
		if (grid_block(blk, dst + FFN_KQ_Q4K_BYTES * b) < 0)
			return -EINVAL;
	}
	return 0;
}

/* §5.3's sizes of one expert's payloads. */
static void
moe_sizes(const struct moe_file *m, uint64_t *gu, uint64_t *dn)
{
	uint64_t n = 2ull * m->I * m->H;

	if (m->enc == MOE_ENC_F32) {
		*gu = 4 * n;
		*dn = 4ull * m->H * m->dcols;
	} else {
		*gu = FFN_KQ_Q4K_BYTES * ((n + 255) / 256);
		*dn = (uint64_t)FFN_KQ_Q4K_BYTES * m->H * (m->dcols / 256);
	}
}

/* Expert (L, e)'s gate_up and down payloads into pg, pd. */
static int
moe_encode(const struct moe_file *m, const float *gu, const float *D,
	   uint8_t *pg, uint8_t *pd)
{
	size_t rb = ffn_kq_row_bytes(FFN_KQ_Q4_K, m->I);
	unsigned r;
	int rc;

	if (m->enc == MOE_ENC_F32) {
		memcpy(pg, gu, (size_t)8 * m->I * m->H);
		memset(pd, 0, (size_t)4 * m->H * m->dcols);
		for (r = 0; r < m->H; r++)
			memcpy(pd + (size_t)4 * r * m->dcols,
			       D + (size_t)r * m->I, (size_t)4 * m->I);
		return 0;
	}
	rc = q4k_seq(m->enc, gu, (size_t)2 * m->I * m->H, pg);
	/* each down row is S/256 whole blocks, columns I..S-1 zero */
	for (r = 0; r < m->H && rc == 0; r++)
		rc = q4k_seq(m->enc, D + (size_t)r * m->I, m->I,
			     pd + rb * r);
	return rc;
}

static void
put_u32(uint8_t *p, uint32_t v)
{
	unsigned i;

	for (i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
put_u64(uint8_t *p, uint64_t v)
{
	put_u32(p, (uint32_t)v);
	put_u32(p + 4, (uint32_t)(v >> 32));
}

/* layers/layer_{LL}.weights of layer L (§5.3). 0, -ENOMEM, -EIO, -EINVAL. */
static int
write_lyrw(const char *dir, unsigned L, const struct moe_file *m)
{
	uint64_t gb, db, off;
	size_t hb = LYRW_HDR + (size_t)LYRW_ENTRY * m->E;
	uint8_t *hdr = calloc(1, hb), *pg, *pd;
	float *gu = malloc((size_t)8 * m->I * m->H);
	float *D = malloc((size_t)4 * m->I * m->H);
	char name[64];
	FILE *f;
	unsigned e;
	int rc = 0;

	moe_sizes(m, &gb, &db);
	pg = malloc(gb);
	pd = malloc(db);
	snprintf(name, sizeof(name), "layers/layer_%02u.weights", L);
	f = vw_open(dir, name);
	if (!hdr || !gu || !D || !pg || !pd || !f) {
		rc = f ? -ENOMEM : -errno;
		goto out;
	}
	memcpy(hdr, "LYRW", 4);
	put_u32(hdr + 4, 1);
	put_u32(hdr + 8, m->enc == MOE_ENC_F32 ? VW_LYRW_F32 : VW_LYRW_Q4K);
	put_u32(hdr + 12, m->E);
	put_u32(hdr + 16, m->I);
	put_u32(hdr + 20, m->H);
	/* LARQL's order: expert 0 gate_up, expert 0 down, expert 1 ... */
	for (e = 0, off = hb; e < m->E; e++, off += gb + db) {
		uint8_t *t = hdr + LYRW_HDR + (size_t)LYRW_ENTRY * e;

		put_u64(t, off);
		put_u64(t + 8, gb);
		put_u64(t + 16, off + gb);
		put_u64(t + 24, db);
	}
	if (fwrite(hdr, 1, hb, f) != hb)
		rc = -EIO;
	for (e = 0; e < m->E && rc == 0; e++) {
		m->fn(m->ctx, L, e, gu, D);
		rc = moe_encode(m, gu, D, pg, pd);
		if (rc == 0 && (fwrite(pg, 1, gb, f) != gb ||
				fwrite(pd, 1, db, f) != db))
			rc = -EIO;
	}
out:
	if (f && fclose(f) != 0 && rc == 0)
		rc = -EIO;
	free(hdr);
	free(gu);
	free(D);
	free(pg);
	free(pd);
	return rc;
}

/*
 * --- index.json, vectors, boot files ------------------------------------
 */

/* A JSON number that reads back as a float ("2.0", not "2"). */
static void
put_real(FILE *f, double v)
{
	char b[40];

	snprintf(b, sizeof(b), "%.9g", v);
	fprintf(f, "%s%s", b, strpbrk(b, ".eEn") ? "" : ".0");
}

static int
write_index(const char *dir, const struct moe_index *x)
{
	FILE *f = vw_open(dir, "index.json");
	unsigned L;

	if (f == NULL)
		return -errno;
	fprintf(f, "{\n  \"version\": 2,\n  \"model\": \"%s\",\n"
		"  \"family\": \"%s\",\n  \"num_layers\": %u,\n"
		"  \"hidden_size\": %u,\n  \"intermediate_size\": %u,\n"
		"  \"vocab_size\": %u,\n  \"embed_scale\": ", x->model,
		x->family, x->num_layers, x->hidden, x->inter, x->vocab);
	put_real(f, x->embed_scale);
	fprintf(f, ",\n  \"layers\": [");
	for (L = 0; x->dense && L < x->num_layers; L++)
		fprintf(f, "%s\n    {\"layer\": %u, \"num_features\": %u}",
			L ? "," : "", L, vw_nf(x->dense, L));
	fprintf(f, "%s],\n  \"down_top_k\": 1,\n"
		"  \"has_model_weights\": true,\n  \"quant\": \"q4k\",\n"
		"  \"ffn_layout\": \"per_layer\",\n%s"
		"  \"model_config\": {\"model_type\": \"%s\", "
		"\"head_dim\": %u, \"num_q_heads\": %u,\n"
		"    \"num_kv_heads\": %u, \"rope_base\": 10000.0,\n"
		"    \"moe\": {\"num_experts\": %u, \"top_k\": %u, "
		"\"shared_expert\": false,\n"
		"            \"router_type\": \"gemma4_top_k_softmax\",\n"
		"            \"moe_intermediate_size\": %u, "
		"\"hybrid\": true}}\n}\n",
		x->dense ? "\n  " : "",
		x->dtype ? "  \"dtype\": \"f32\",\n" : "",
		x->model_type, x->head_dim, x->nq, x->nkv, x->E, x->top_k,
		x->I);
	return fclose(f) == 0 ? 0 : -EIO;
}

/* weight_manifest.json and norms.bin, written entry by entry. */
struct moe_vec {
	FILE *man, *bin;
	uint64_t off;
	int n;		/* entries so far */
};

/* One §5.2 vector entry: n f32 values of v under key. */
static int
vec_put(struct moe_vec *w, const char *key, const float *v, unsigned n)
{
	fprintf(w->man, "%s\n  {\"key\": \"%s\", \"kind\": \"vector\", "
		"\"shape\": [%u], \"offset\": %llu, \"length\": %u, "
		"\"file\": \"norms.bin\"}", w->n++ ? "," : "", key, n,
		(unsigned long long)w->off, 4 * n);
	w->off += 4ull * n;
	return fwrite(v, 4, n, w->bin) == n ? 0 : -EIO;
}

static int
vec_open(struct moe_vec *w, const char *dir)
{
	memset(w, 0, sizeof(*w));
	w->man = vw_open(dir, "weight_manifest.json");
	w->bin = vw_open(dir, "norms.bin");
	if (w->man)
		fprintf(w->man, "[");
	return w->man && w->bin ? 0 : -errno;
}

static int
vec_close(struct moe_vec *w, int rc)
{
	if (w->man) {
		fprintf(w->man, "\n]\n");
		if (fclose(w->man) != 0 && rc == 0)
			rc = -EIO;
	}
	if (w->bin && fclose(w->bin) != 0 && rc == 0)
		rc = -EIO;
	return rc;
}

/* n values 1 + std·N(0, 1): norm weights and scales around 1. */
static void
around_one(float *p, unsigned n, float std, uint64_t seed)
{
	unsigned i;

	vw_normal(p, n, std, seed);
	for (i = 0; i < n; i++)
		p[i] += 1.0f;
}

/* A stream of its own for (what, layer, expert, matrix). */
static uint64_t
moe_seed(uint64_t seed, unsigned what, unsigned L, unsigned e, unsigned k)
{
	return (seed ^ 0x6d6f65ull) * 0x100000001b3ull +
	       ((uint64_t)what << 56) + ((uint64_t)L << 36) +
	       ((uint64_t)e << 4) + k;
}

/* Layer L's §5.2 vectors; buf holds max(E·H, H) floats. */
static int
vec_layer(struct moe_vec *w, const struct vw_opts *o,
	  const struct vw_moe_opts *m, unsigned L, float *buf)
{
	static const char *const post[3] = {
		"post_feedforward_layernorm_2", "post_feedforward_layernorm_1",
		"post_feedforward_layernorm",
	};
	unsigned H = o->hidden, E = m->experts, k;
	char key[128];
	int rc;

	around_one(buf, H, 0.2f, moe_seed(o->seed, 1, L, 0, 0));
	snprintf(key, sizeof(key),
		 "layers.%u.pre_feedforward_layernorm_2.weight", L);
	rc = vec_put(w, key, buf, H);
	vw_normal(buf, (size_t)E * H, 1.0f / sqrtf((float)H),
		  moe_seed(o->seed, 1, L, 0, 1));
	snprintf(key, sizeof(key), "layers.%u.router.proj.weight", L);
	rc = rc ? rc : vec_put(w, key, buf, E * H);
	around_one(buf, H, 0.1f, moe_seed(o->seed, 1, L, 0, 2));
	snprintf(key, sizeof(key), "layers.%u.router.scale", L);
	rc = rc ? rc : vec_put(w, key, buf, H);
	around_one(buf, E, 0.1f, moe_seed(o->seed, 1, L, 0, 3));
	snprintf(key, sizeof(key), "layers.%u.router.per_expert_scale", L);
	rc = rc ? rc : vec_put(w, key, buf, E);
	for (k = 0; k < 3; k++) {
		around_one(buf, H, 0.2f, moe_seed(o->seed, 1, L, 0, 4 + k));
		snprintf(key, sizeof(key), "layers.%u.%s.weight", L, post[k]);
		rc = rc ? rc : vec_put(w, key, buf, H);
	}
	around_one(buf, 1, 0.1f, moe_seed(o->seed, 1, L, 0, 7));
	snprintf(key, sizeof(key), "layers.%u.layer_scalar", L);
	return rc ? rc : vec_put(w, key, buf, 1);
}

/* embeddings.bin [vocab, H] f32 N(0, 1) and the minimal tokenizer.json
 * (§5.4). */
static int
write_boot(const char *dir, unsigned vocab, unsigned H, uint64_t seed)
{
	float *row = malloc((size_t)H * 4);
	FILE *f = vw_open(dir, "embeddings.bin"), *t;
	unsigned v;
	int rc = row && f ? 0 : -EIO;

	for (v = 0; v < vocab && rc == 0; v++) {
		vw_normal(row, H, 1.0f, moe_seed(seed, 2, 0, v, 0));
		if (fwrite(row, 4, H, f) != H)
			rc = -EIO;
	}
	free(row);
	if (f && fclose(f) != 0 && rc == 0)
		rc = -EIO;
	t = vw_open(dir, "tokenizer.json");
	if (t == NULL)
		return rc ? rc : -errno;
	fprintf(t, "{\"version\":\"1.0\",\"model\":{\"type\":\"BPE\","
		"\"vocab\":{},\"merges\":[]},\"added_tokens\":[]}\n");
	if (fclose(t) != 0 && rc == 0)
		rc = -EIO;
	return rc;
}

static int
make_dirs(const char *dir, char *err, size_t errlen)
{
	char p[4096];

	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return vw_err(err, errlen, -errno, "%s: mkdir: %s", dir,
			      strerror(errno));
	snprintf(p, sizeof(p), "%s/layers", dir);
	if (mkdir(p, 0755) != 0 && errno != EEXIST)
		return vw_err(err, errlen, -errno, "%s: mkdir: %s", p,
			      strerror(errno));
	return 0;
}

/*
 * --- the two writers ---------------------------------------------------
 */

/* Expert e of layer L of a random vindex. */
struct rand_ctx {
	const struct vw_opts *o;
	unsigned I;
};

static void
random_expert(const void *ctx, unsigned L, unsigned e, float *gu, float *D)
{
	const struct rand_ctx *c = ctx;
	unsigned H = c->o->hidden, I = c->I;
	size_t n = (size_t)I * H;

	vw_normal(gu, n, 1.0f / sqrtf((float)H),
		  moe_seed(c->o->seed, 0, L, e, 0));
	vw_normal(gu + n, n, 1.0f / sqrtf((float)H),
		  moe_seed(c->o->seed, 0, L, e, 1));
	vw_normal(D, n, 1.0f / sqrtf((float)I),
		  moe_seed(c->o->seed, 0, L, e, 2));
}

int
vw_write_moe(const char *dir, const struct vw_opts *o,
	     const struct vw_q4k_opts *q, const struct vw_moe_opts *m,
	     char *err, size_t errlen)
{
	struct rand_ctx rc_ctx = { o, m->width };
	struct moe_file mf = {
		m->tag == VW_LYRW_F32 ? MOE_ENC_F32 : MOE_ENC_Q4K,
		m->experts, m->width, o->hidden,
		(unsigned)FFN_KQ_PAD256(m->width), random_expert, &rc_ctx,
	};
	unsigned H = o->hidden, nq = H % 4 == 0 ? 4 : 1, L, maxnf = 0;
	struct moe_index x = {
		NULL, o->family, o->model_type, o->layers, H, 0,
		o->vocab ? o->vocab : 16, sqrt((double)H),
		m->no_dense ? NULL : o, m->experts, m->top_k, m->width,
		H / nq, nq, nq > 1 ? 2 : 1, 1,
	};
	struct moe_vec w = { NULL, NULL, 0, 0 };
	char model[96];
	size_t nbuf = (size_t)m->experts * H > H ? (size_t)m->experts * H : H;
	float *buf;
	int rc;

	if (o->example || H == 0 || o->layers == 0 || m->experts == 0 ||
	    m->width == 0 || m->first > m->last || m->last >= o->layers)
		return vw_err(err, errlen, -EINVAL, "--experts needs --hidden, "
			      "--layers, --expert-width and --expert-layers "
			      "within the layers");
	if ((rc = make_dirs(dir, err, errlen)) != 0)
		return rc;
	/* the dense FFN first: its writer's index.json is replaced below */
	if (!m->no_dense && (rc = vw_write_q4k(dir, o, q, err, errlen)) != 0)
		return rc;
	for (L = 0; L < o->layers; L++)
		if (vw_nf(o, L) > maxnf)
			maxnf = vw_nf(o, L);
	x.inter = maxnf;
	snprintf(model, sizeof(model), "synthetic-%s-%u-moe%u", o->model_type,
		 H, m->experts);
	x.model = model;
	for (L = m->first; L <= m->last; L++)
		if ((rc = write_lyrw(dir, L, &mf)) != 0)
			return vw_err(err, errlen, rc, "%s/layers/layer_%02u."
				      "weights: write failed", dir, L);
	buf = malloc(nbuf * sizeof(float));
	rc = buf ? vec_open(&w, dir) : -ENOMEM;
	for (L = 0; L < o->layers && rc == 0; L++)
		rc = vec_layer(&w, o, m, L, buf);
	rc = vec_close(&w, rc);
	free(buf);
	if (rc)
		return vw_err(err, errlen, rc, "%s/norms.bin: write failed",
			      dir);
	if ((rc = write_boot(dir, x.vocab, H, o->seed)) != 0)
		return vw_err(err, errlen, rc, "%s/embeddings.bin: write "
			      "failed", dir);
	if ((rc = write_index(dir, &x)) != 0)
		return vw_err(err, errlen, rc, "%s/index.json: write failed",
			      dir);
	return 0;
}

int
vw_write_moe_example(const char *dir, unsigned tag, char *err,
		     size_t errlen)
{
	/* §6: I = 32 for the reference's Q4_K (2IH a multiple of 256) */
	static const unsigned i_q4k = 32, i_f32 = 2;
	const unsigned *I = tag == VW_LYRW_F32 ? &i_f32 : &i_q4k;
	struct moe_file mf = {
		tag == VW_LYRW_F32 ? MOE_ENC_F32 : MOE_ENC_GRID, 2, *I, 4,
		tag == VW_LYRW_F32 ? 2 : 256, example_expert, I,
	};
	struct moe_index x = {
		"example/tiny-moe", "gemma4", "gemma4", 1, 4, 8, 4, 2.0, NULL,
		2, 2, *I, 2, 2, 1, 0,
	};
	struct moe_vec w = { NULL, NULL, 0, 0 };
	float emb[16];
	unsigned i;
	FILE *f;
	int rc;

	if ((rc = make_dirs(dir, err, errlen)) != 0)
		return rc;
	if ((rc = write_index(dir, &x)) != 0)
		return vw_err(err, errlen, rc, "%s/index.json: write failed",
			      dir);
	rc = vec_open(&w, dir);
	rc = rc ? rc : vec_put(&w, "layers.0.pre_feedforward_layernorm_2."
			       "weight", ex_norm, 4);
	if ((rc = vec_close(&w, rc)) != 0)
		return vw_err(err, errlen, rc, "%s/norms.bin: write failed",
			      dir);
	if ((rc = write_lyrw(dir, 0, &mf)) != 0)
		return vw_err(err, errlen, rc, "%s/layers/layer_00.weights: "
			      "write failed", dir);
	/* §5.4: 16 f32 values, any contents; the tokenizer from write_boot */
	if ((rc = write_boot(dir, 0, 4, 0)) != 0)
		return vw_err(err, errlen, rc, "%s: write failed", dir);
	for (i = 0; i < 16; i++)
		emb[i] = (float)i / 16;
	f = vw_open(dir, "embeddings.bin");
	if (f == NULL || fwrite(emb, 4, 16, f) != 16)
		rc = -EIO;
	if (f && fclose(f) != 0)
		rc = -EIO;
	return rc ? vw_err(err, errlen, rc, "%s/embeddings.bin: write failed",
			   dir) : 0;
}
