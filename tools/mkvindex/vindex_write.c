/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Synthetic vindex writer (see vindex_write.h).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "quant.h"
#include "vindex_write.h"

/* spec/vindex.md §3: G, U [3,4], Wd [4,3] for layers 0 and 1. */
static const float ex_g[2][12] = {
	{ 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1 },
	{ 0.5f, 0, 0, 0, 0, 0, 0, 0.5f, 1, -1, 0, 0 },
};
static const float ex_u[2][12] = {
	{ 1, 1, 1, 1, 0, 2, 0, 0, 1, 0, 0, -1 },
	{ 2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 },
};
static const float ex_d[2][12] = {
	{ 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1 },
	{ 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, -1 },
};

void
vw_defaults(struct vw_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->hidden = 64;
	o->layers = 2;
	o->intermediate = 128;
	o->model_type = "llama";
	o->family = "llama";
	o->seed = 1;
	o->down_scale = 1.0f;
}

unsigned
vw_nf(const struct vw_opts *o, unsigned L)
{
	if (o->example)
		return 3;
	return o->widths ? o->widths[L] : o->intermediate;
}

static unsigned
vw_hidden(const struct vw_opts *o)
{
	return o->example ? 4 : o->hidden;
}

static unsigned
vw_layers(const struct vw_opts *o)
{
	return o->example ? 2 : o->layers;
}

static uint64_t
splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void
vw_normal(float *p, size_t n, float std, uint64_t seed)
{
	uint64_t s = seed * 0x2545f4914f6cdd1dull + 1;
	size_t i;

	/* Box-Muller; uniform in (0, 1] so logf is finite */
	for (i = 0; i < n; i += 2) {
		double u1 = ((splitmix(&s) >> 11) + 1) * 0x1.0p-53;
		double u2 = (splitmix(&s) >> 11) * 0x1.0p-53;
		double r = sqrt(-2.0 * log(u1)) * std;

		p[i] = (float)(r * cos(2 * M_PI * u2));
		if (i + 1 < n)
			p[i + 1] = (float)(r * sin(2 * M_PI * u2));
	}
}

/* The few large-magnitude hidden channels (none for tiny H). */
static int
outlier(const struct vw_opts *o, unsigned h)
{
	unsigned H = vw_hidden(o), k;
	uint64_t s = o->seed ^ 0x5eedull;

	if (H < 64)
		return 0;
	for (k = 0; k < 3; k++)
		if (splitmix(&s) % H == h)
			return 1;
	return 0;
}

static void
round_f16(float *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = quant_f16_to_f32_1(quant_f32_to_f16_1(p[i]));
}

void
vw_layer(const struct vw_opts *o, unsigned L, float *G, float *U, float *Wd)
{
	unsigned H = vw_hidden(o), nf = vw_nf(o, L), h;
	size_t n = (size_t)nf * H;
	uint64_t base = o->seed * 1000003ull + L * 3ull;

	if (o->example) {
		memcpy(G, ex_g[L], sizeof(ex_g[L]));
		memcpy(U, ex_u[L], sizeof(ex_u[L]));
		memcpy(Wd, ex_d[L], sizeof(ex_d[L]));
	} else {
		vw_normal(G, n, 1.0f / sqrtf((float)H), base);
		vw_normal(U, n, 1.0f / sqrtf((float)H), base + 1);
		vw_normal(Wd, n, 1.0f / sqrtf((float)nf), base + 2);
		for (h = 0; h < H; h++)
			if (outlier(o, h)) {
				size_t f;

				for (f = 0; f < nf; f++)
					Wd[(size_t)h * nf + f] *= 4.0f;
			}
		for (size_t i = 0; o->down_scale != 1.0f && i < n; i++)
			Wd[i] *= o->down_scale;
	}
	if (o->f16 && o->layout != VW_INTERLEAVED)
		round_f16(G, n);
	if (o->f16 && o->layout == VW_DENSE) {
		round_f16(U, n);
		round_f16(Wd, n);
	}
}

int
vw_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

FILE *
vw_open(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return fopen(path, "wb");
}

/* Write n values of p as f32, or f16 when f16. */
static int
put(FILE *f, const float *p, size_t n, int f16)
{
	size_t i;

	if (!f16)
		return fwrite(p, 4, n, f) == n ? 0 : -EIO;
	for (i = 0; i < n; i++) {
		uint16_t h = quant_f32_to_f16_1(p[i]);

		if (fwrite(&h, 2, 1, f) != 1)
			return -EIO;
	}
	return 0;
}

static void
transpose(float *dst, const float *src, unsigned rows, unsigned cols)
{
	unsigned r, c;

	for (r = 0; r < rows; r++)
		for (c = 0; c < cols; c++)
			dst[(size_t)c * rows + r] = src[(size_t)r * cols + c];
}

/* The widest layer's FFN width. */
static unsigned
max_nf(const struct vw_opts *o)
{
	unsigned nl = vw_layers(o), L, maxnf = 0;

	for (L = 0; L < nl; L++)
		if (vw_nf(o, L) > maxnf)
			maxnf = vw_nf(o, L);
	return maxnf;
}

static int
write_index(const char *dir, const struct vw_opts *o)
{
	unsigned H = vw_hidden(o), nl = vw_layers(o), L, maxnf = max_nf(o);
	unsigned es = o->f16 ? 2 : 4;
	uint64_t off = 0;
	FILE *f = vw_open(dir, "index.json");

	if (f == NULL)
		return -errno;
	fprintf(f, "{\n  \"version\": 2,\n  \"model\": \"synthetic-%s-%u\",\n"
		"  \"family\": \"%s\",\n  \"num_layers\": %u,\n"
		"  \"hidden_size\": %u,\n  \"intermediate_size\": %u,\n"
		"  \"vocab_size\": %u,\n  \"dtype\": \"%s\",\n"
		"  \"quant\": \"none\",\n"
		"  \"model_config\": {\"model_type\": \"%s\", \"head_dim\": 1},\n"
		"  \"layers\": [\n",
		o->model_type, H, o->family, nl, H,
		o->example ? 3 : (o->widths ? maxnf : o->intermediate),
		o->vocab, o->f16 ? "f16" : "f32", o->model_type);
	for (L = 0; L < nl; L++) {
		uint64_t len = (uint64_t)vw_nf(o, L) * H * es;

		fprintf(f, "    {\"layer\": %u, \"num_features\": %u, "
			"\"offset\": %llu, \"length\": %llu}%s\n", L,
			vw_nf(o, L), (unsigned long long)off,
			(unsigned long long)len, L + 1 < nl ? "," : "");
		off += len;
	}
	fprintf(f, "  ]\n}\n");
	return fclose(f) == 0 ? 0 : -EIO;
}

static int
write_embeddings(const char *dir, const struct vw_opts *o)
{
	unsigned H = vw_hidden(o), v, h;
	float *row = malloc((size_t)H * 4);
	FILE *f = vw_open(dir, "embeddings.bin");
	int rc = 0;

	if (row == NULL || f == NULL) {
		free(row);
		if (f)
			fclose(f);
		return -ENOMEM;
	}
	for (v = 0; v < o->vocab && rc == 0; v++) {
		vw_normal(row, H, 1.0f, o->seed * 7919ull + 0x1000000ull + v);
		for (h = 0; h < H; h++)
			if (outlier(o, h))
				row[h] *= 10.0f;
		rc = put(f, row, H, 0);
	}
	free(row);
	if (fclose(f) != 0)
		rc = -EIO;
	return rc;
}

/* The payload files of a layout and where the next tensor goes. */
struct vw_payload {
	FILE *f[3];		/* gate, up, down (interleaved: f[0] only) */
	FILE *man;		/* weight_manifest.json (dense) */
	uint64_t uoff, doff;	/* next up_/down_weights.bin offsets */
};

/* Create o->layout's payload files in dir; 0 or -EIO with err set. */
static int
payload_open(struct vw_payload *p, const char *dir, const struct vw_opts *o,
	     char *err, size_t errlen)
{
	switch (o->layout) {
	case VW_INTERLEAVED:
		p->f[0] = vw_open(dir, "interleaved.bin");
		break;
	case VW_FEATURE_MAJOR:
		p->f[0] = vw_open(dir, "gate_vectors.bin");
		p->f[1] = vw_open(dir, "up_features.bin");
		p->f[2] = vw_open(dir, "down_features.bin");
		break;
	default:
		p->f[0] = vw_open(dir, "gate_vectors.bin");
		p->f[1] = vw_open(dir, "up_weights.bin");
		p->f[2] = vw_open(dir, "down_weights.bin");
		p->man = vw_open(dir, "weight_manifest.json");
		if (p->man)
			fprintf(p->man, "[\n");
		break;
	}
	if (p->f[0] == NULL || (o->layout != VW_INTERLEAVED &&
				(p->f[1] == NULL || p->f[2] == NULL)) ||
	    (o->layout == VW_DENSE && p->man == NULL))
		return vw_err(err, errlen, -EIO,
			      "%s: cannot create payload: %s", dir,
			      strerror(errno));
	return 0;
}

/* Layer L's two weight_manifest.json entries (dense, spec/vindex.md §2.3). */
static void
manifest_layer(struct vw_payload *p, const struct vw_opts *o, unsigned L,
	       uint64_t bytes)
{
	unsigned H = vw_hidden(o), nf = vw_nf(o, L);

	fprintf(p->man, "  {\"key\": \"layers.%u.mlp.up_proj.weight\", "
		"\"kind\": \"tensor\", \"shape\": [%u, %u], "
		"\"offset\": %llu, \"length\": %llu, "
		"\"file\": \"up_weights.bin\"},\n", L, nf, H,
		(unsigned long long)p->uoff, (unsigned long long)bytes);
	fprintf(p->man, "  {\"key\": \"layers.%u.mlp.down_proj.weight\", "
		"\"kind\": \"tensor\", \"shape\": [%u, %u], "
		"\"offset\": %llu, \"length\": %llu, "
		"\"file\": \"down_weights.bin\"}%s\n", L, H, nf,
		(unsigned long long)p->doff, (unsigned long long)bytes,
		L + 1 < vw_layers(o) ? "," : "");
	p->uoff += bytes;
	p->doff += bytes;
}

/* Layer L into the payload; w: G, U, Wd and room for Wdᵀ. 0 or -EIO. */
static int
payload_layer(struct vw_payload *p, const struct vw_opts *o, unsigned L,
	      float *const w[4])
{
	unsigned H = vw_hidden(o), nf = vw_nf(o, L);
	size_t m = (size_t)nf * H;
	uint64_t es = o->f16 ? 2 : 4;
	float *G = w[0], *U = w[1], *Wd = w[2], *T = w[3];
	int rc;

	vw_layer(o, L, G, U, Wd);
	transpose(T, Wd, H, nf);	/* Wdᵀ: feature-major down */
	switch (o->layout) {
	case VW_INTERLEAVED:
		rc = put(p->f[0], G, m, 0);
		rc = rc ? rc : put(p->f[0], U, m, 0);
		rc = rc ? rc : put(p->f[0], T, m, 0);
		break;
	case VW_FEATURE_MAJOR:
		rc = put(p->f[0], G, m, o->f16);
		rc = rc ? rc : put(p->f[1], U, m, 0);
		rc = rc ? rc : put(p->f[2], T, m, 0);
		break;
	default:
		rc = put(p->f[0], G, m, o->f16);
		rc = rc ? rc : put(p->f[1], U, m, o->f16);
		rc = rc ? rc : put(p->f[2], Wd, m, o->f16);
		manifest_layer(p, o, L, m * es);
		break;
	}
	return rc;
}

/* Close the payload files: rc, or -EIO with err set if rc was 0. */
static int
payload_close(struct vw_payload *p, const char *dir, int rc, char *err,
	      size_t errlen)
{
	int i;

	for (i = 0; i < 3; i++)
		if (p->f[i] && fclose(p->f[i]) != 0 && rc == 0)
			rc = vw_err(err, errlen, -EIO, "%s: close failed", dir);
	if (p->man && fclose(p->man) != 0 && rc == 0)
		rc = vw_err(err, errlen, -EIO, "%s: close failed", dir);
	return rc;
}

int
vw_write(const char *dir, const struct vw_opts *o, char *err, size_t errlen)
{
	struct vw_payload p = { { NULL, NULL, NULL }, NULL, 0, 0 };
	float *w[4] = { NULL, NULL, NULL, NULL };	/* G, U, Wd, Wdᵀ */
	unsigned nl = vw_layers(o), L;
	size_t n;
	int rc = 0, i;

	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return vw_err(err, errlen, -errno, "%s: mkdir: %s", dir,
			    strerror(errno));
	n = (size_t)max_nf(o) * vw_hidden(o);
	for (i = 0; i < 4; i++)
		w[i] = malloc(n * 4);
	if (!w[0] || !w[1] || !w[2] || !w[3]) {
		rc = vw_err(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	rc = payload_open(&p, dir, o, err, errlen);
	if (rc)
		goto out;
	for (L = 0; L < nl && rc == 0; L++)
		rc = payload_layer(&p, o, L, w);
	if (rc)
		rc = vw_err(err, errlen, rc, "%s: write failed", dir);
	if (p.man)
		fprintf(p.man, "]\n");
	if (rc == 0 && (rc = write_index(dir, o)) != 0)
		rc = vw_err(err, errlen, rc, "%s/index.json: write failed", dir);
	if (rc == 0 && o->vocab > 0 && (rc = write_embeddings(dir, o)) != 0)
		rc = vw_err(err, errlen, rc, "%s/embeddings.bin: write failed",
			  dir);
out:
	rc = payload_close(&p, dir, rc, err, errlen);
	for (i = 0; i < 4; i++)
		free(w[i]);
	return rc;
}
