/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Loading a LARQL vindex (spec/vindex.md): index.json, then the dense FFN
 * payloads §2.2, §2.1, §2.3 for the owned layers. Every failure names the
 * file, the layer and the key at fault.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <numa.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cblas.h>

#include "ffn_priv.h"
#include "kq_ffn.h"

/** A payload file mapped read-only for the duration of the load. */
struct src {
	char name[64];
	void *addr;
	size_t len;
	int used;
};

struct ld {
	const char *dir;
	char *err;
	size_t errlen;
	struct ffn_model *m;
	const struct ffn_load_opts *o;
	json_object *idx;
	json_object *manifest;
	uint32_t H;
	uint32_t nl;
	uint32_t es;		/* bytes per element of dtype */
	enum ffn_dtype dt;
	uint32_t *nf;		/* [nl]; 0 with has[] = 0: no entry */
	uint8_t *has;
	int64_t *goff;		/* gate offset, -1 absent */
	int64_t *glen;		/* gate length, -1 absent */
	struct src src[FFN_MAX_MAPS];
	/* per owned layer, where each matrix comes from */
	const uint8_t **from;	/* [n * 3] */
	uint8_t *transpose;	/* [n]: §2.3 down */
	int q4k;		/* index.json quant "q4k": only §2.4 serves */
};

static int
fail(struct ld *l, int code, const char *fmt, ...)
{
	va_list ap;

	if (l->err != NULL && l->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(l->err, l->errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

static int
file_exists(const struct ld *l, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", l->dir, name);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Map name (once) and return it; file errors name the file. */
static int
src_get(struct ld *l, const char *name, struct src **out)
{
	char path[PATH_MAX];
	struct stat st;
	struct src *s = NULL;
	int fd, i;

	for (i = 0; i < FFN_MAX_MAPS; i++) {
		if (l->src[i].used && strcmp(l->src[i].name, name) == 0) {
			*out = &l->src[i];
			return 0;
		}
		if (!l->src[i].used && s == NULL)
			s = &l->src[i];
	}
	if (s == NULL)
		return fail(l, FFN_ERR_IO, "%s: too many payload files", name);
	if (strchr(name, '/') != NULL || strlen(name) >= sizeof(s->name))
		return fail(l, FFN_ERR_KEY, "bad payload file name '%s'", name);
	snprintf(path, sizeof(path), "%s/%s", l->dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(l, FFN_ERR_IO, "%s: cannot open: %s", path,
			    strerror(errno));
	if (fstat(fd, &st) != 0) {
		close(fd);
		return fail(l, FFN_ERR_IO, "%s: %s", path, strerror(errno));
	}
	s->len = (size_t)st.st_size;
	s->addr = NULL;
	if (s->len > 0) {
		s->addr = mmap(NULL, s->len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (s->addr == MAP_FAILED) {
			close(fd);
			return fail(l, FFN_ERR_IO, "%s: mmap: %s", path,
				    strerror(errno));
		}
	}
	close(fd);
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->used = 1;
	*out = s;
	return 0;
}

/* Integer key of obj; -1 when absent; error when not an integer >= 0. */
static int
get_uint(struct ld *l, json_object *obj, const char *what, const char *key,
	 int required, int64_t *v)
{
	json_object *j;

	*v = -1;
	if (!json_object_object_get_ex(obj, key, &j)) {
		if (required)
			return fail(l, FFN_ERR_KEY, "%s: missing key '%s'",
				    what, key);
		return 0;
	}
	if (!json_object_is_type(j, json_type_int) ||
	    json_object_get_int64(j) < 0)
		return fail(l, FFN_ERR_KEY,
			    "%s: key '%s' must be an integer >= 0", what, key);
	*v = json_object_get_int64(j);
	return 0;
}

static const char *
get_str(json_object *obj, const char *key)
{
	json_object *j;

	if (!json_object_object_get_ex(obj, key, &j) ||
	    !json_object_is_type(j, json_type_string))
		return NULL;
	return json_object_get_string(j);
}

/* §1: activation from model_config.model_type; gpt2/starcoder2 refused. */
static int
parse_model(struct ld *l)
{
	struct ffn_info *in = &l->m->info;
	json_object *mc;
	const char *s;

	if (json_object_object_get_ex(l->idx, "fp4", NULL))
		return fail(l, FFN_ERR_FP4,
			    "index.json: key 'fp4': fp4 block weights are not supported; extract with --quant none");
	if (!json_object_object_get_ex(l->idx, "model_config", &mc) ||
	    !json_object_is_type(mc, json_type_object))
		return fail(l, FFN_ERR_KEY,
			    "index.json: missing key 'model_config' (object)");
	s = get_str(mc, "model_type");
	if (s == NULL)
		return fail(l, FFN_ERR_KEY,
			    "index.json: missing key 'model_config.model_type' (string)");
	snprintf(in->model_type, sizeof(in->model_type), "%s", s);
	if (strcmp(s, "gpt2") == 0 || strcmp(s, "starcoder2") == 0)
		return fail(l, FFN_ERR_MODEL,
			    "index.json: model_config.model_type '%s' has a non-gated FFN; not servable",
			    s);
	if (strcmp(s, "gemma") == 0 || strncmp(s, "gemma2", 6) == 0 ||
	    strncmp(s, "gemma3", 6) == 0 || strncmp(s, "gemma4", 6) == 0)
		in->act = FFN_ACT_GELU_TANH;
	else
		in->act = FFN_ACT_SILU;
	s = get_str(l->idx, "model");
	snprintf(in->model, sizeof(in->model), "%s", s ? s : "");
	s = get_str(l->idx, "family");
	snprintf(in->family, sizeof(in->family), "%s", s ? s : "");

	s = get_str(l->idx, "quant");
	if (json_object_object_get_ex(l->idx, "quant", NULL) && s == NULL)
		return fail(l, FFN_ERR_KEY,
			    "index.json: key 'quant' must be a string");
	if (s != NULL && strcmp(s, "q4k") == 0)
		l->q4k = 1;
	else if (s != NULL && strcmp(s, "none") != 0)
		return fail(l, FFN_ERR_KEY,
			    "index.json: key 'quant': unknown value '%s'", s);

	s = get_str(l->idx, "dtype");
	if (json_object_object_get_ex(l->idx, "dtype", NULL) && s == NULL)
		return fail(l, FFN_ERR_KEY,
			    "index.json: key 'dtype' must be a string");
	if (s == NULL || strcmp(s, "f32") == 0) {
		l->dt = FFN_DT_F32;
		l->es = 4;
	} else if (strcmp(s, "f16") == 0) {
		l->dt = FFN_DT_F16;
		l->es = 2;
	} else {
		return fail(l, FFN_ERR_KEY,
			    "index.json: key 'dtype': unknown value '%s' (f32 or f16)",
			    s);
	}
	snprintf(in->dtype, sizeof(in->dtype), "%s", l->es == 2 ? "f16" : "f32");
	return 0;
}

static int
parse_dims(struct ld *l)
{
	struct ffn_info *in = &l->m->info;
	json_object *arr;
	int64_t v;
	size_t i, n;
	int rc;

	if ((rc = get_uint(l, l->idx, "index.json", "hidden_size", 1, &v)))
		return rc;
	if (v == 0 || v > (1 << 20))
		return fail(l, FFN_ERR_KEY,
			    "index.json: hidden_size %lld out of range",
			    (long long)v);
	l->H = in->hidden = (uint32_t)v;
	if ((rc = get_uint(l, l->idx, "index.json", "num_layers", 1, &v)))
		return rc;
	if (v == 0 || v > 4096)
		return fail(l, FFN_ERR_KEY,
			    "index.json: num_layers %lld out of range",
			    (long long)v);
	l->nl = in->num_layers = (uint32_t)v;
	if ((rc = get_uint(l, l->idx, "index.json", "intermediate_size", 0,
			   &v)))
		return rc;
	in->intermediate = v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;

	if (!json_object_object_get_ex(l->idx, "layers", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return fail(l, FFN_ERR_KEY,
			    "index.json: missing key 'layers' (array)");
	l->nf = calloc(l->nl, sizeof(*l->nf));
	l->has = calloc(l->nl, 1);
	l->goff = calloc(l->nl, sizeof(*l->goff));
	l->glen = calloc(l->nl, sizeof(*l->glen));
	if (!l->nf || !l->has || !l->goff || !l->glen)
		return fail(l, FFN_ERR_NOMEM, "out of memory");
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		char what[48];
		int64_t ly, nf, off, len;

		snprintf(what, sizeof(what), "index.json: layers[%zu]", i);
		if (!json_object_is_type(e, json_type_object))
			return fail(l, FFN_ERR_KEY, "%s: not an object", what);
		if ((rc = get_uint(l, e, what, "layer", 1, &ly)) ||
		    (rc = get_uint(l, e, what, "num_features", 1, &nf)) ||
		    (rc = get_uint(l, e, what, "offset", 0, &off)) ||
		    (rc = get_uint(l, e, what, "length", 0, &len)))
			return rc;
		if (ly >= l->nl)
			return fail(l, FFN_ERR_LAYER,
				    "%s: layer %lld >= num_layers %u", what,
				    (long long)ly, l->nl);
		if (l->has[ly])
			return fail(l, FFN_ERR_LAYER,
				    "%s: layer %lld listed twice", what,
				    (long long)ly);
		if (nf > (1 << 24))
			return fail(l, FFN_ERR_KEY,
				    "%s: num_features %lld out of range", what,
				    (long long)nf);
		l->has[ly] = 1;
		l->nf[ly] = (uint32_t)nf;
		l->goff[ly] = off;
		l->glen[ly] = len;
	}
	return 0;
}

static int
check_layers(struct ld *l)
{
	const struct ffn_load_opts *o = l->o;
	struct ffn_info *in = &l->m->info;
	int64_t first = o->first_layer < 0 ? 0 : o->first_layer;
	int64_t last = o->last_layer < 0 ? (int64_t)l->nl - 1 : o->last_layer;
	uint32_t L;

	if (first > last || last >= l->nl)
		return fail(l, FFN_ERR_RANGE,
			    "layers %lld..%lld outside the model's 0..%u",
			    (long long)first, (long long)last, l->nl - 1);
	in->first_layer = (uint32_t)first;
	in->last_layer = (uint32_t)last;
	for (L = in->first_layer; L <= in->last_layer; L++) {
		if (!l->has[L])
			return fail(l, FFN_ERR_LAYER,
				    "index.json: owned layer %u has no entry in 'layers'",
				    L);
		if (l->nf[L] == 0)
			return fail(l, FFN_ERR_LAYER,
				    "index.json: owned layer %u has num_features 0",
				    L);
		if (l->nf[L] > in->max_features)
			in->max_features = l->nf[L];
	}
	return 0;
}

/* §2 order of preference: §2.2, §2.1, §2.4, §2.3 (first present). */
static int
choose_layout(struct ld *l)
{
	enum ffn_layout want = l->o->layout;
	int il = file_exists(l, "interleaved.bin");
	int fm = file_exists(l, "gate_vectors.bin") &&
		 file_exists(l, "up_features.bin") &&
		 file_exists(l, "down_features.bin");
	int kq = file_exists(l, "interleaved_q4k.bin");
	int dn = file_exists(l, "gate_vectors.bin") &&
		 file_exists(l, "up_weights.bin") &&
		 file_exists(l, "down_weights.bin");

	if (l->q4k) {
		/* §2: quant "q4k" -> the K-quant payload is the only one */
		if (want != FFN_LAYOUT_AUTO && want != FFN_LAYOUT_Q4K)
			return fail(l, FFN_ERR_KQUANT,
				    "index.json: quant 'q4k': only interleaved_q4k.bin can serve this vindex (layout '%s' requested)",
				    ffn_layout_name(want));
		want = FFN_LAYOUT_Q4K;
	} else if (want == FFN_LAYOUT_AUTO) {
		if (il)
			want = FFN_LAYOUT_INTERLEAVED;
		else if (fm)
			want = FFN_LAYOUT_FEATURE_MAJOR;
		else if (kq)
			want = FFN_LAYOUT_Q4K;
		else if (dn)
			want = FFN_LAYOUT_DENSE;
		else
			return fail(l, FFN_ERR_PAYLOAD,
				    "%s: no FFN payload: need interleaved.bin, or gate_vectors.bin + up_features.bin + down_features.bin, or gate_vectors.bin + up_weights.bin + down_weights.bin + weight_manifest.json",
				    l->dir);
	}
	l->m->info.layout = want;
	return 0;
}

static const char *
dt_name(uint32_t es)
{
	return es == 2 ? "f16" : "f32";
}

/* Gate rows of layer L in gate_vectors.bin (§2.1): at layers[L].offset. */
static int
locate_gate(struct ld *l, uint32_t L, const uint8_t **p)
{
	struct src *s;
	uint64_t need = (uint64_t)l->nf[L] * l->H * l->es;
	int rc;

	if ((rc = src_get(l, "gate_vectors.bin", &s)))
		return rc;
	if (l->goff[L] < 0)
		return fail(l, FFN_ERR_KEY,
			    "index.json: layers entry of layer %u: missing key 'offset'",
			    L);
	if (l->glen[L] >= 0 && (uint64_t)l->glen[L] != need)
		return fail(l, FFN_ERR_SHAPE,
			    "index.json: layer %u: length %lld != num_features %u x hidden %u x %u (%s)",
			    L, (long long)l->glen[L], l->nf[L], l->H, l->es,
			    dt_name(l->es));
	if ((uint64_t)l->goff[L] + need > s->len)
		return fail(l, FFN_ERR_SHORT,
			    "gate_vectors.bin: layer %u needs bytes %lld..%llu, file has %zu",
			    L, (long long)l->goff[L],
			    (unsigned long long)(l->goff[L] + need), s->len);
	*p = (const uint8_t *)s->addr + l->goff[L];
	return 0;
}

/* Byte offset of layer L in a prefix-summed f32 file (§2.1 P_L, §2.2 B_L). */
static int
prefix(struct ld *l, uint32_t L, uint32_t per_feature_mats, uint64_t *off)
{
	uint64_t o = 0;
	uint32_t i;

	for (i = 0; i < L; i++) {
		if (!l->has[i])
			return fail(l, FFN_ERR_LAYER,
				    "index.json: layer %u has no entry in 'layers' (needed to locate layer %u)",
				    i, L);
		o += (uint64_t)per_feature_mats * l->nf[i] * l->H * 4;
	}
	*off = o;
	return 0;
}

static int
locate_prefixed(struct ld *l, const char *file, uint32_t L, uint32_t mats,
		uint32_t idx, const uint8_t **p)
{
	struct src *s;
	uint64_t off = 0, one = (uint64_t)l->nf[L] * l->H * 4;
	int rc;

	if ((rc = src_get(l, file, &s)) || (rc = prefix(l, L, mats, &off)))
		return rc;
	if (off + mats * one > s->len)
		return fail(l, FFN_ERR_SHORT,
			    "%s: layer %u needs bytes %llu..%llu, file has %zu",
			    file, L, (unsigned long long)off,
			    (unsigned long long)(off + mats * one), s->len);
	*p = (const uint8_t *)s->addr + off + idx * one;
	return 0;
}

/* §2.3: the manifest entry whose key ends in "layers.{L}.mlp.{proj}.weight". */
static int
locate_manifest(struct ld *l, uint32_t L, const char *proj, uint64_t rows,
		uint64_t cols, const uint8_t **p)
{
	char key[96], what[160];
	size_t i, n, kl;
	struct src *s;
	int64_t off, len, r, c;
	json_object *e = NULL, *shape;
	const char *file;
	int rc;

	kl = (size_t)snprintf(key, sizeof(key), "layers.%u.mlp.%s.weight",
			      L, proj);
	n = json_object_array_length(l->manifest);
	for (i = 0; i < n; i++) {
		json_object *c_ = json_object_array_get_idx(l->manifest, i);
		const char *k = json_object_is_type(c_, json_type_object) ?
				get_str(c_, "key") : NULL;
		size_t len_k = k ? strlen(k) : 0;

		if (k && len_k >= kl && strcmp(k + len_k - kl, key) == 0 &&
		    (len_k == kl || k[len_k - kl - 1] == '.')) {
			e = c_;
			break;
		}
	}
	if (e == NULL)
		return fail(l, FFN_ERR_KEY,
			    "weight_manifest.json: no entry with key '%s'",
			    key);
	snprintf(what, sizeof(what), "weight_manifest.json: entry '%s'", key);
	if ((rc = get_uint(l, e, what, "offset", 1, &off)) ||
	    (rc = get_uint(l, e, what, "length", 1, &len)))
		return rc;
	file = get_str(e, "file");
	if (file == NULL)
		return fail(l, FFN_ERR_KEY, "%s: missing key 'file'", what);
	if (!json_object_object_get_ex(e, "shape", &shape) ||
	    !json_object_is_type(shape, json_type_array) ||
	    json_object_array_length(shape) != 2)
		return fail(l, FFN_ERR_KEY,
			    "%s: missing key 'shape' ([rows, cols])", what);
	r = json_object_get_int64(json_object_array_get_idx(shape, 0));
	c = json_object_get_int64(json_object_array_get_idx(shape, 1));
	if ((uint64_t)r != rows || (uint64_t)c != cols)
		return fail(l, FFN_ERR_SHAPE,
			    "%s: shape [%lld, %lld], expected [%llu, %llu] for layer %u (num_features %u, hidden %u)",
			    what, (long long)r, (long long)c,
			    (unsigned long long)rows, (unsigned long long)cols,
			    L, l->nf[L], l->H);
	if ((uint64_t)len != rows * cols * l->es)
		return fail(l, FFN_ERR_SHAPE,
			    "%s: length %lld != %llu x %llu x %u (%s)", what,
			    (long long)len, (unsigned long long)rows,
			    (unsigned long long)cols, l->es, dt_name(l->es));
	if ((rc = src_get(l, file, &s)))
		return rc;
	if ((uint64_t)off + (uint64_t)len > s->len)
		return fail(l, FFN_ERR_SHORT,
			    "%s: bytes %lld..%lld outside %s (%zu bytes)", what,
			    (long long)off, (long long)(off + len), file,
			    s->len);
	*p = (const uint8_t *)s->addr + off;
	return 0;
}

static int
load_manifest(struct ld *l)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/weight_manifest.json", l->dir);
	if (access(path, R_OK) != 0)
		return fail(l, FFN_ERR_IO, "%s: cannot open: %s", path,
			    strerror(errno));
	l->manifest = json_object_from_file(path);
	if (l->manifest == NULL)
		return fail(l, FFN_ERR_JSON, "%s: invalid JSON: %s", path,
			    json_util_get_last_err());
	if (!json_object_is_type(l->manifest, json_type_array))
		return fail(l, FFN_ERR_KEY, "%s: not a JSON array", path);
	return 0;
}

/* Find, check and record where each owned matrix lives in the files. */
static int
locate(struct ld *l)
{
	const struct ffn_info *in = &l->m->info;
	uint32_t n = in->last_layer - in->first_layer + 1, i;
	int rc = 0;

	l->from = calloc((size_t)n * 3, sizeof(*l->from));
	l->transpose = calloc(n, 1);
	if (!l->from || !l->transpose)
		return fail(l, FFN_ERR_NOMEM, "out of memory");
	if (in->layout == FFN_LAYOUT_DENSE && (rc = load_manifest(l)))
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		uint32_t L = in->first_layer + i;
		const uint8_t **f = &l->from[i * 3];
		struct ffn_layer *ly = &l->m->layers[i];
		enum ffn_dtype gdt = l->dt, udt = FFN_DT_F32;

		switch (in->layout) {
		case FFN_LAYOUT_INTERLEAVED:
			gdt = FFN_DT_F32;	/* interleaved.bin is f32 */
			rc = locate_prefixed(l, "interleaved.bin", L, 3, 0,
					     &f[0]);
			if (!rc)
				rc = locate_prefixed(l, "interleaved.bin", L, 3,
						     1, &f[1]);
			if (!rc)
				rc = locate_prefixed(l, "interleaved.bin", L, 3,
						     2, &f[2]);
			break;
		case FFN_LAYOUT_FEATURE_MAJOR:
			rc = locate_gate(l, L, &f[0]);
			if (!rc)
				rc = locate_prefixed(l, "up_features.bin", L, 1,
						     0, &f[1]);
			if (!rc)
				rc = locate_prefixed(l, "down_features.bin", L,
						     1, 0, &f[2]);
			break;
		default:	/* FFN_LAYOUT_DENSE */
			udt = l->dt;
			rc = locate_gate(l, L, &f[0]);
			if (!rc)
				rc = locate_manifest(l, L, "up_proj", l->nf[L],
						     l->H, &f[1]);
			if (!rc)
				rc = locate_manifest(l, L, "down_proj", l->H,
						     l->nf[L], &f[2]);
			l->transpose[i] = 1;
			break;
		}
		ly->nf = l->nf[L];
		ly->layout = in->layout;
		ly->gate.dtype = gdt;
		ly->up.dtype = udt;
		ly->down.dtype = udt;
	}
	return rc;
}

static size_t
mat_bytes(const struct ffn_mat *m)
{
	return (size_t)m->rows * m->row_bytes;
}

#define ALIGN 64u

static size_t
align_up(size_t v)
{
	return (v + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

/* §2.3 down [H, nf] to feature-major [nf, H], in 32 x 32 tiles. */
#define TRANSPOSE(T)							\
	do {								\
		T *d = (T *)dst;					\
		const T *s = (const T *)src;				\
		for (h0 = 0; h0 < H; h0 += 32)				\
			for (f0 = 0; f0 < nf; f0 += 32)			\
				for (f = f0; f < f0 + 32 && f < nf; f++) \
					for (h = h0; h < h0 + 32 && h < H; h++) \
						d[(size_t)f * H + h] =	\
							s[(size_t)h * nf + f]; \
	} while (0)

static void
transpose(uint8_t *dst, const uint8_t *src, uint32_t H, uint32_t nf,
	  uint32_t es)
{
	uint32_t h0, f0, h, f;

	if (es == 2)
		TRANSPOSE(uint16_t);
	else
		TRANSPOSE(uint32_t);
}

/* Copy (or map) the located matrices into their final place. */
static int
place(struct ld *l)
{
	struct ffn_model *m = l->m;
	struct ffn_info *in = &m->info;
	uint32_t n = in->last_layer - in->first_layer + 1, i, c;
	int copy = l->o->placement == FFN_PLACE_COPY;
	size_t total = 0, at = 0;
	int node = l->o->numa_node, bound = 0;
	enum ffn_pages pages = FFN_PAGES_FILE;
	uint8_t *arena = NULL;

	for (i = 0; i < n; i++) {
		struct ffn_layer *ly = &m->layers[i];
		struct ffn_mat *mm[3] = { &ly->gate, &ly->up, &ly->down };

		for (c = 0; c < 3; c++) {
			mm[c]->rows = ly->nf;
			mm[c]->cols = l->H;
			mm[c]->row_bytes = (size_t)l->H *
					   (mm[c]->dtype == FFN_DT_F16 ? 2 : 4);
			in->bytes_loaded += mat_bytes(mm[c]);
			if (copy || (c == 2 && l->transpose[i]))
				total += align_up(mat_bytes(mm[c]));
		}
	}
	if (node < 0)
		node = ffn_mem_current_node();
	else if (numa_available() < 0 || node > numa_max_node())
		return fail(l, FFN_ERR_NUMA, "NUMA node %d not available",
			    node);
	if (total > 0) {
		enum ffn_pages got;

		arena = ffn_mem_alloc(total, node, l->o->no_hugepages, &got,
				      &bound);
		if (arena == NULL)
			return fail(l, FFN_ERR_NOMEM,
				    "cannot allocate %zu bytes of weights on node %d: %s",
				    total, node, strerror(errno));
		m->arena = arena;
		m->arena_len = total;
		if (copy)
			pages = got;
	}
	for (i = 0; i < n; i++) {
		struct ffn_layer *ly = &m->layers[i];
		struct ffn_mat *mm[3] = { &ly->gate, &ly->up, &ly->down };

		for (c = 0; c < 3; c++) {
			const uint8_t *from = l->from[i * 3 + c];
			size_t b = mat_bytes(mm[c]);

			if (c == 2 && l->transpose[i]) {
				transpose(arena + at, from, l->H, ly->nf,
					  b / ((size_t)ly->nf * l->H));
			} else if (copy) {
				memcpy(arena + at, from, b);
			} else {
				mm[c]->data = from;
				continue;
			}
			mm[c]->data = arena + at;
			at += align_up(b);
		}
	}
	in->placement = l->o->placement;
	in->pages = pages;
	in->numa_node = copy && bound ? node : -1;
	if (!copy) {
		/* Keep the mappings: the weights are read from them. */
		for (i = 0; i < FFN_MAX_MAPS; i++) {
			if (!l->src[i].used)
				continue;
			m->maps[i].addr = l->src[i].addr;
			m->maps[i].len = l->src[i].len;
			if (l->src[i].addr)
				madvise(l->src[i].addr, l->src[i].len,
					MADV_WILLNEED);
			l->src[i].used = 0;
		}
	}
	return 0;
}

static void
ld_release(struct ld *l)
{
	int i;

	for (i = 0; i < FFN_MAX_MAPS; i++)
		if (l->src[i].used && l->src[i].addr != NULL)
			munmap(l->src[i].addr, l->src[i].len);
	if (l->idx)
		json_object_put(l->idx);
	if (l->manifest)
		json_object_put(l->manifest);
	free(l->nf);
	free(l->has);
	free(l->goff);
	free(l->glen);
	free(l->from);
	free(l->transpose);
}

static int
read_index(struct ld *l)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/index.json", l->dir);
	if (access(path, R_OK) != 0)
		return fail(l, FFN_ERR_IO, "%s: cannot open: %s", path,
			    strerror(errno));
	l->idx = json_object_from_file(path);
	if (l->idx == NULL)
		return fail(l, FFN_ERR_JSON, "%s: invalid JSON: %s", path,
			    json_util_get_last_err());
	if (!json_object_is_type(l->idx, json_type_object))
		return fail(l, FFN_ERR_KEY, "%s: not a JSON object", path);
	return 0;
}

void
ffn_load_opts_default(struct ffn_load_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->first_layer = -1;
	o->last_layer = -1;
	o->numa_node = -1;
	o->placement = FFN_PLACE_COPY;
	o->layout = FFN_LAYOUT_AUTO;
}

int
ffn_model_load(const char *dir, const struct ffn_load_opts *opts,
	       struct ffn_model **out, char *err, size_t errlen)
{
	struct ffn_load_opts def;
	struct ld l = { .dir = dir, .err = err, .errlen = errlen };
	int rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (opts == NULL) {
		ffn_load_opts_default(&def);
		opts = &def;
	}
	l.o = opts;
	*out = NULL;
	/* The lcores are the threads: OpenBLAS must not spawn its own. */
	openblas_set_num_threads(1);
	l.m = calloc(1, sizeof(*l.m));
	if (l.m == NULL)
		return FFN_ERR_NOMEM;
	l.m->info.numa_node = -1;
	rc = read_index(&l);
	if (!rc)
		rc = parse_model(&l);
	if (!rc)
		rc = parse_dims(&l);
	if (!rc)
		rc = check_layers(&l);
	if (!rc)
		rc = choose_layout(&l);
	if (!rc) {
		l.m->layers = calloc(l.m->info.last_layer -
				     l.m->info.first_layer + 1,
				     sizeof(*l.m->layers));
		rc = l.m->layers ? 0 :
			fail(&l, FFN_ERR_NOMEM, "out of memory");
	}
	if (!rc && l.m->info.layout == FFN_LAYOUT_Q4K) {
		rc = ffn_kq_model_load(l.m, dir, l.nf, opts, err, errlen);
	} else if (!rc) {
		rc = locate(&l);
		if (!rc)
			rc = place(&l);
	}
	ld_release(&l);
	if (rc) {
		ffn_model_free(l.m);
		return rc;
	}
	l.m->engine = FFN_ENGINE_AUTO;
	l.m->blas_min_rows = 0;	/* see ffn_compute.c: default_blas_rows */
	*out = l.m;
	return 0;
}
