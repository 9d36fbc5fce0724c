/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The K-quant writer of mkvindex (--quant q4k), spec/vindex.md §2.4:
 * per layer three entries, gate, up, down, back to back in
 * interleaved_q4k.bin, each row its own whole blocks.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mkvindex_q4k.h"
#include "vindex_write.h"

/* Quantise rows x cols of src into f; manifest entry into man. */
static int
put_matrix(FILE *f, FILE *man, const char *key, const float *src,
	   unsigned rows, unsigned cols, enum ffn_kq_fmt fmt,
	   enum ffn_kq_q6_layout q6, uint64_t *off, int last)
{
	size_t rb = ffn_kq_row_bytes(fmt, cols);
	uint8_t *row = malloc(rb);
	uint64_t len = (uint64_t)rows * rb;
	unsigned r;
	int rc = 0;

	if (row == NULL)
		return -ENOMEM;
	for (r = 0; r < rows && rc == 0; r++) {
		ffn_kq_quantize_row(fmt, q6, src + (size_t)r * cols, cols, row);
		if (fwrite(row, 1, rb, f) != rb)
			rc = -EIO;
	}
	free(row);
	fprintf(man, "  {\"key\": \"%s\", \"shape\": [%u, %zu], "
		"\"format\": \"%s\", \"offset\": %llu, \"length\": %llu}%s\n",
		key, rows, (size_t)FFN_KQ_PAD256(cols),
		fmt == FFN_KQ_Q4_K ? "Q4_K" : "Q6_K",
		(unsigned long long)*off, (unsigned long long)len,
		last ? "" : ",");
	*off += len;
	return rc;
}

static int
write_index(const char *dir, const struct vw_opts *o)
{
	unsigned L, maxnf = 0;
	FILE *f = vw_open(dir, "index.json");

	if (f == NULL)
		return -errno;
	for (L = 0; L < o->layers; L++)
		if (vw_nf(o, L) > maxnf)
			maxnf = vw_nf(o, L);
	fprintf(f, "{\n  \"version\": 2,\n  \"model\": \"synthetic-%s-%u-q4k\",\n"
		"  \"family\": \"%s\",\n  \"num_layers\": %u,\n"
		"  \"hidden_size\": %u,\n  \"intermediate_size\": %u,\n"
		"  \"dtype\": \"f32\",\n  \"quant\": \"q4k\",\n"
		"  \"model_config\": {\"model_type\": \"%s\", \"head_dim\": 1},\n"
		"  \"layers\": [\n", o->model_type, o->hidden, o->family,
		o->layers, o->hidden, maxnf, o->model_type);
	for (L = 0; L < o->layers; L++)
		fprintf(f, "    {\"layer\": %u, \"num_features\": %u}%s\n", L,
			vw_nf(o, L), L + 1 < o->layers ? "," : "");
	fprintf(f, "  ]\n}\n");
	return fclose(f) == 0 ? 0 : -EIO;
}

int
vw_write_q4k(const char *dir, const struct vw_opts *o,
	     const struct vw_q4k_opts *q, char *err, size_t errlen)
{
	static const char *const proj[3] = { "gate_proj", "up_proj",
					     "down_proj" };
	struct vw_opts d = *o;
	unsigned H = o->hidden, L, maxnf = 0;
	float *G = NULL, *U = NULL, *Wd = NULL;
	FILE *bin = NULL, *man = NULL;
	uint64_t off = 0;
	int rc = 0;

	if (o->example || H == 0 || o->layers == 0)
		return vw_err(err, errlen, -EINVAL,
			    "--quant q4k needs --hidden and --layers (not --example)");
	d.f16 = 0;	/* K-quant blocks are made from the f32 weights */
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return vw_err(err, errlen, -errno, "%s: mkdir: %s", dir,
			    strerror(errno));
	for (L = 0; L < o->layers; L++)
		if (vw_nf(o, L) > maxnf)
			maxnf = vw_nf(o, L);
	G = malloc((size_t)maxnf * H * 4);
	U = malloc((size_t)maxnf * H * 4);
	Wd = malloc((size_t)maxnf * H * 4);
	bin = vw_open(dir, FFN_KQ_BIN_NAME);
	man = vw_open(dir, FFN_KQ_MANIFEST_NAME);
	if (!G || !U || !Wd || !bin || !man) {
		rc = vw_err(err, errlen, -EIO, "%s: cannot create the K-quant "
			  "payload: %s", dir, strerror(errno));
		goto out;
	}
	fprintf(man, "[\n");
	for (L = 0; L < o->layers && rc == 0; L++) {
		unsigned nf = vw_nf(o, L);
		const float *src[3] = { G, U, Wd };
		char key[96];

		vw_layer(&d, L, G, U, Wd);
		for (int c = 0; c < 3 && rc == 0; c++) {
			enum ffn_kq_fmt fmt = c < 2 || q->down_q4k ?
					      FFN_KQ_Q4_K : FFN_KQ_Q6_K;

			snprintf(key, sizeof(key), "layers.%u.mlp.%s.weight",
				 L, proj[c]);
			rc = put_matrix(bin, man, key, src[c], c < 2 ? nf : H,
					c < 2 ? H : nf, fmt, q->q6, &off,
					c == 2 && L + 1 == o->layers);
		}
	}
	fprintf(man, "]\n");
	if (rc)
		rc = vw_err(err, errlen, rc, "%s/" FFN_KQ_BIN_NAME
			  ": write failed", dir);
	if (rc == 0 && (rc = write_index(dir, o)) != 0)
		rc = vw_err(err, errlen, rc, "%s/index.json: write failed", dir);
out:
	if (bin && fclose(bin) != 0 && rc == 0)
		rc = vw_err(err, errlen, -EIO, "%s: close failed", dir);
	if (man && fclose(man) != 0 && rc == 0)
		rc = vw_err(err, errlen, -EIO, "%s: close failed", dir);
	free(G);
	free(U);
	free(Wd);
	return rc;
}
