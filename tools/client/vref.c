/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Local double-precision FFN reference over the dense vindex layouts
 * (spec/vindex.md §1-§2.3). Simple on purpose: pread, convert, loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <quant.h>

#include "vref.h"

static int
fail(char *err, size_t errlen, int rc, const char *what, const char *why)
{
	snprintf(err, errlen, "%s: %s", what, why);
	return rc;
}

static int
exists(const struct vref *v, const char *name)
{
	char p[1200];

	snprintf(p, sizeof(p), "%s/%s", v->dir, name);
	return access(p, R_OK) == 0;
}

/* Read n elements (f32, or f16 when f16) at byte off of dir/name. */
static int
read_elems(const char *dir, const char *name, uint64_t off, size_t n,
	   int f16, float *dst, char *err, size_t errlen)
{
	char p[1200];
	size_t es = f16 ? 2 : 4, bytes = n * es, done = 0;
	uint8_t *tmp = f16 ? malloc(bytes) : (uint8_t *)dst;
	struct stat st;
	ssize_t r;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (tmp == NULL)
		return fail(err, errlen, -ENOMEM, p, "out of memory");
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;

		if (f16)
			free(tmp);
		if (fd >= 0)
			close(fd);
		return fail(err, errlen, -e, p, strerror(e));
	}
	if (off + bytes > (uint64_t)st.st_size) {
		snprintf(err, errlen, "%s: needs bytes [%llu, %llu) but has "
			 "%lld", p, (unsigned long long)off,
			 (unsigned long long)(off + bytes),
			 (long long)st.st_size);
		close(fd);
		if (f16)
			free(tmp);
		return -ERANGE;
	}
	while (done < bytes) {
		r = pread(fd, tmp + done, bytes - done, off + done);
		if (r <= 0) {
			int e = r < 0 ? errno : EIO;

			close(fd);
			if (f16)
				free(tmp);
			return fail(err, errlen, -e, p, strerror(e));
		}
		done += r;
	}
	close(fd);
	if (f16) {
		size_t i;

		for (i = 0; i < n; i++)
			dst[i] = quant_f16_to_f32_1((uint16_t)(tmp[2 * i] |
							     tmp[2 * i + 1] << 8));
		free(tmp);
	}
	return 0;
}

static struct json_object *
load_json(const char *dir, const char *name, char *err, size_t errlen)
{
	char p[1200];
	struct json_object *o;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	o = json_object_from_file(p);
	if (o == NULL)
		fail(err, errlen, 0, p, json_util_get_last_err() ?
		     json_util_get_last_err() : "cannot parse");
	return o;
}

static int64_t
jint(struct json_object *o, const char *key, int64_t dflt)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return dflt;
	return json_object_get_int64(v);
}

int
vref_open(struct vref *v, const char *dir, char *err, size_t errlen)
{
	struct json_object *idx, *o, *layers, *mt;
	const char *s;
	size_t i, n;
	int rc = 0;

	memset(v, 0, sizeof(*v));
	snprintf(v->dir, sizeof(v->dir), "%s", dir);
	idx = load_json(dir, "index.json", err, errlen);
	if (idx == NULL)
		return -EINVAL;
	v->hidden = jint(idx, "hidden_size", 0);
	v->num_layers = jint(idx, "num_layers", 0);
	if (v->hidden == 0 || v->num_layers == 0) {
		rc = fail(err, errlen, -EINVAL, "index.json",
			  "hidden_size or num_layers missing");
		goto out;
	}
	s = json_object_object_get_ex(idx, "dtype", &o) ?
		json_object_get_string(o) : "f32";
	v->f16 = strcmp(s, "f16") == 0;
	if (json_object_object_get_ex(idx, "quant", &o) &&
	    strcmp(json_object_get_string(o), "q4k") == 0) {
		rc = fail(err, errlen, -ENOTSUP, "index.json",
			  "quant q4k: the local reference reads dense "
			  "layouts only");
		goto out;
	}
	if (!json_object_object_get_ex(idx, "model_config", &o) ||
	    !json_object_object_get_ex(o, "model_type", &mt)) {
		rc = fail(err, errlen, -EINVAL, "index.json",
			  "missing model_config.model_type");
		goto out;
	}
	s = json_object_get_string(mt);
	/* vindex.md §1: GELU-tanh for gemma2/3/4* and "gemma". */
	v->gelu = strcmp(s, "gemma") == 0 || strncmp(s, "gemma2", 6) == 0 ||
		strncmp(s, "gemma3", 6) == 0 || strncmp(s, "gemma4", 6) == 0;
	v->nf = calloc(v->num_layers, sizeof(*v->nf));
	v->gate_off = calloc(v->num_layers, sizeof(*v->gate_off));
	v->w = calloc(v->num_layers, sizeof(*v->w));
	if (v->nf == NULL || v->gate_off == NULL || v->w == NULL) {
		rc = fail(err, errlen, -ENOMEM, "vref", "out of memory");
		goto out;
	}
	if (!json_object_object_get_ex(idx, "layers", &layers)) {
		rc = fail(err, errlen, -EINVAL, "index.json", "no layers");
		goto out;
	}
	n = json_object_array_length(layers);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(layers, i);
		int64_t L = jint(e, "layer", -1);

		if (L < 0 || L >= v->num_layers)
			continue;
		v->nf[L] = jint(e, "num_features", 0);
		v->gate_off[L] = jint(e, "offset", 0);
	}
	/* §2: first present of §2.2, §2.1, (§2.4), §2.3. */
	if (exists(v, "interleaved.bin")) {
		v->layout = VREF_INTERLEAVED;
	} else if (exists(v, "gate_vectors.bin") &&
		   exists(v, "up_features.bin") &&
		   exists(v, "down_features.bin")) {
		v->layout = VREF_FEATURES;
	} else if (exists(v, "interleaved_q4k.bin")) {
		rc = fail(err, errlen, -ENOTSUP, dir, "only a Q4_K payload: "
			  "the local reference reads dense layouts only");
	} else if (exists(v, "gate_vectors.bin") &&
		   exists(v, "up_weights.bin") &&
		   exists(v, "down_weights.bin") &&
		   exists(v, "weight_manifest.json")) {
		v->layout = VREF_DENSE;
		v->manifest = load_json(dir, "weight_manifest.json", err,
					errlen);
		if (v->manifest == NULL)
			rc = -EINVAL;
	} else {
		rc = fail(err, errlen, -ENOENT, dir, "no FFN payload found");
	}
out:
	json_object_put(idx);
	if (rc < 0)
		vref_close(v);
	return rc;
}

static uint64_t
prefix(const struct vref *v, uint32_t L, uint64_t per_feature)
{
	uint64_t s = 0;
	uint32_t l;

	for (l = 0; l < L; l++)
		s += (uint64_t)v->nf[l] * per_feature;
	return s;
}

/* §2.3: one tensor by its manifest key, shape checked. */
static int
read_tensor(struct vref *v, const char *key, uint32_t rows, uint32_t cols,
	    float *dst, char *err, size_t errlen)
{
	struct json_object *arr = v->manifest, *e, *o;
	size_t i, n = json_object_array_length(arr);

	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(arr, i);
		if (!json_object_object_get_ex(e, "key", &o) ||
		    strcmp(json_object_get_string(o), key) != 0)
			continue;
		if (!json_object_object_get_ex(e, "shape", &o) ||
		    json_object_array_length(o) != 2 ||
		    json_object_get_int64(json_object_array_get_idx(o, 0))
		    != rows ||
		    json_object_get_int64(json_object_array_get_idx(o, 1))
		    != cols)
			return fail(err, errlen, -EINVAL, key,
				    "shape differs from index.json");
		if (!json_object_object_get_ex(e, "file", &o))
			return fail(err, errlen, -EINVAL, key, "no file");
		return read_elems(v->dir, json_object_get_string(o),
				  jint(e, "offset", 0), (size_t)rows * cols,
				  v->f16, dst, err, errlen);
	}
	return fail(err, errlen, -ENOENT, key, "not in weight_manifest.json");
}

static int
load_layer(struct vref *v, uint32_t L, char *err, size_t errlen)
{
	size_t H = v->hidden, nf = v->nf[L], m = nf * H, f, h;
	float *w, *tmp;
	char key[128];
	int rc;

	if (nf == 0) {
		snprintf(err, errlen, "index.json: no features for layer %u",
			 L);
		return -ENOENT;
	}
	w = malloc(3 * m * sizeof(float));
	if (w == NULL)
		return fail(err, errlen, -ENOMEM, "vref", "out of memory");
	switch (v->layout) {
	case VREF_INTERLEAVED:
		rc = read_elems(v->dir, "interleaved.bin",
				prefix(v, L, 3 * H * 4), 3 * m, 0, w, err,
				errlen);
		break;
	case VREF_FEATURES:
		rc = read_elems(v->dir, "gate_vectors.bin", v->gate_off[L], m,
				v->f16, w, err, errlen);
		if (rc == 0)
			rc = read_elems(v->dir, "up_features.bin",
					prefix(v, L, H * 4), m, 0, w + m, err,
					errlen);
		if (rc == 0)
			rc = read_elems(v->dir, "down_features.bin",
					prefix(v, L, H * 4), m, 0, w + 2 * m,
					err, errlen);
		break;
	default:
		rc = read_elems(v->dir, "gate_vectors.bin", v->gate_off[L], m,
				v->f16, w, err, errlen);
		snprintf(key, sizeof(key), "layers.%u.mlp.up_proj.weight", L);
		if (rc == 0)
			rc = read_tensor(v, key, nf, H, w + m, err, errlen);
		tmp = malloc(m * sizeof(float));
		if (tmp == NULL)
			rc = -ENOMEM;
		snprintf(key, sizeof(key), "layers.%u.mlp.down_proj.weight",
			 L);
		if (rc == 0)
			rc = read_tensor(v, key, H, nf, tmp, err, errlen);
		if (rc == 0)	/* [H, nf] -> feature-major [nf, H] */
			for (h = 0; h < H; h++)
				for (f = 0; f < nf; f++)
					w[2 * m + f * H + h] = tmp[h * nf + f];
		free(tmp);
	}
	if (rc < 0) {
		free(w);
		return rc;
	}
	v->w[L] = w;
	return 0;
}

int
vref_ffn(struct vref *v, uint32_t L, const float *x, uint32_t seq,
	 double *y, char *err, size_t errlen)
{
	size_t H = v->hidden, nf, f, h, s;
	const float *G, *U, *D;
	int rc;

	if (L >= v->num_layers) {
		snprintf(err, errlen, "layer %u out of range (%u layers)", L,
			 v->num_layers);
		return -ERANGE;
	}
	if (v->w[L] == NULL) {
		rc = load_layer(v, L, err, errlen);
		if (rc < 0)
			return rc;
	}
	nf = v->nf[L];
	G = v->w[L];
	U = G + nf * H;
	D = U + nf * H;
	for (s = 0; s < seq; s++) {
		const float *xs = x + s * H;
		double *ys = y + s * H;

		memset(ys, 0, H * sizeof(double));
		for (f = 0; f < nf; f++) {
			double g = 0, u = 0, a;

			for (h = 0; h < H; h++) {
				g += (double)G[f * H + h] * xs[h];
				u += (double)U[f * H + h] * xs[h];
			}
			if (v->gelu)
				a = 0.5 * g * (1 + tanh(0.7978846 *
					(g + 0.044715 * g * g * g)));
			else
				a = g / (1 + exp(-g));
			a *= u;
			for (h = 0; h < H; h++)
				ys[h] += a * D[f * H + h];
		}
	}
	return 0;
}

float *
vref_embeddings(const char *dir, uint32_t hidden, uint32_t *vocab,
		char *err, size_t errlen)
{
	char p[1200];
	struct stat st;
	float *e;

	*vocab = 0;
	err[0] = '\0';
	snprintf(p, sizeof(p), "%s/embeddings.bin", dir);
	if (stat(p, &st) < 0)
		return NULL;
	if (hidden == 0 || st.st_size % (4 * (off_t)hidden) != 0) {
		snprintf(err, errlen, "%s: %lld bytes is not [vocab, %u] f32",
			 p, (long long)st.st_size, hidden);
		return NULL;
	}
	e = malloc(st.st_size);
	if (e == NULL) {
		snprintf(err, errlen, "%s: out of memory", p);
		return NULL;
	}
	if (read_elems(dir, "embeddings.bin", 0, st.st_size / 4, 0, e, err,
		       errlen) < 0) {
		free(e);
		return NULL;
	}
	*vocab = st.st_size / 4 / hidden;
	return e;
}

void
vref_close(struct vref *v)
{
	uint32_t L;

	if (v->w != NULL)
		for (L = 0; L < v->num_layers; L++)
			free(v->w[L]);
	free(v->w);
	free(v->nf);
	free(v->gate_off);
	if (v->manifest != NULL)
		json_object_put(v->manifest);
	memset(v, 0, sizeof(*v));
}
