/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The dense FFN payloads of a vindex (spec/vindex.md §2.1 feature-major,
 * §2.2 interleaved, §2.3 dense with weight_manifest.json): each owned
 * matrix located and checked in its mapped file, then copied (transposed
 * for §2.3 down) into a NUMA-placed arena or used from the mapping.
 * ffn_load.c has read index.json and chosen the kind; ffn_kind.c's rows
 * name the three loads at the end of this file.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ffn_load_priv.h"
#include "ffn_priv.h"

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

/*
 * Each dense payload's answer to "where are layer L's gate, up and down,
 * and of which element type": f[0..2] and the types of ly (owned layer i).
 */
static int
locate_interleaved(struct ld *l, uint32_t i, uint32_t L, const uint8_t **f)
{
	struct ffn_layer *ly = &l->m->layers[i];
	uint32_t c;
	int rc = 0;

	/* §2.2: gate, up, down of a layer one after another; f32 only */
	for (c = 0; c < 3 && rc == 0; c++)
		rc = locate_prefixed(l, "interleaved.bin", L, 3, c, &f[c]);
	ly->gate.dtype = ly->up.dtype = ly->down.dtype = FFN_DT_F32;
	return rc;
}

static int
locate_feature_major(struct ld *l, uint32_t i, uint32_t L, const uint8_t **f)
{
	struct ffn_layer *ly = &l->m->layers[i];
	int rc;

	/* §2.1: gate in index.json's dtype, up and down f32 */
	rc = locate_gate(l, L, &f[0]);
	if (!rc)
		rc = locate_prefixed(l, "up_features.bin", L, 1, 0, &f[1]);
	if (!rc)
		rc = locate_prefixed(l, "down_features.bin", L, 1, 0, &f[2]);
	ly->gate.dtype = l->dt;
	ly->up.dtype = ly->down.dtype = FFN_DT_F32;
	return rc;
}

static int
locate_dense(struct ld *l, uint32_t i, uint32_t L, const uint8_t **f)
{
	struct ffn_layer *ly = &l->m->layers[i];
	int rc;

	/* §2.3: all in index.json's dtype; down [H, nf], transposed */
	rc = locate_gate(l, L, &f[0]);
	if (!rc)
		rc = locate_manifest(l, L, "up_proj", l->nf[L], l->H, &f[1]);
	if (!rc)
		rc = locate_manifest(l, L, "down_proj", l->H, l->nf[L],
				     &f[2]);
	l->transpose[i] = 1;
	ly->gate.dtype = ly->up.dtype = ly->down.dtype = l->dt;
	return rc;
}

/* Find, check and record where each owned matrix lives in the files. */
static int
load_locate(struct ld *l, int (*locate)(struct ld *l, uint32_t i,
					uint32_t L, const uint8_t **f))
{
	const struct ffn_info *in = &l->m->info;
	uint32_t n = in->last_layer - in->first_layer + 1, i;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		uint32_t L = in->first_layer + i;

		rc = locate(l, i, L, &l->from[i * 3]);
		l->m->layers[i].nf = l->nf[L];
		l->m->layers[i].layout = in->layout;
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

/* §2.3 down [H, nf] to feature-major [nf, H], in 32 x 32 tiles. The
 * source is the file as mapped: vindex.md puts no alignment on a tensor's
 * offset, so its elements are read with memcpy (an unaligned load where
 * the offset is odd; fuzz-vindex found the typed read). */
#define TRANSPOSE(T)							\
	do {								\
		T *d = (T *)dst;					\
		for (h0 = 0; h0 < H; h0 += 32)				\
			for (f0 = 0; f0 < nf; f0 += 32)			\
				for (f = f0; f < f0 + 32 && f < nf; f++) \
					for (h = h0; h < h0 + 32 && h < H; h++) \
						memcpy(&d[(size_t)f * H + h], \
						       src + ((size_t)h * nf + f) * \
						       sizeof(T), sizeof(T)); \
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
/* A matrix the kernels cannot read where it lies in the file: its
 * elements are not aligned to their size (an odd offset in the manifest
 * or index.json, which vindex.md allows). Mapped placement copies it. */
static int
misaligned(const uint8_t *p, const struct ffn_mat *m)
{
	return ((uintptr_t)p % (m->dtype == FFN_DT_F16 ? 2 : 4)) != 0;
}

static int
load_place(struct ld *l)
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
			if (copy || (c == 2 && l->transpose[i]) ||
			    misaligned(l->from[i * 3 + c], mm[c]))
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
			} else if (copy || misaligned(from, mm[c])) {
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

/* ---- the dense kinds' loads (ffn_kind.c) ---- */

static int
load_payload(struct ld *l, int (*locate)(struct ld *l, uint32_t i,
					 uint32_t L, const uint8_t **f),
	     int manifest)
{
	const struct ffn_info *in = &l->m->info;
	uint32_t n = in->last_layer - in->first_layer + 1;
	int rc;

	l->from = calloc((size_t)n * 3, sizeof(*l->from));
	l->transpose = calloc(n, 1);
	if (!l->from || !l->transpose)
		return fail(l, FFN_ERR_NOMEM, "out of memory");
	if (manifest && (rc = load_manifest(l)))
		return rc;
	rc = load_locate(l, locate);
	return rc ? rc : load_place(l);
}

int
ffn_load_interleaved(struct ld *l)
{
	return load_payload(l, locate_interleaved, 0);
}

int
ffn_load_feature_major(struct ld *l)
{
	return load_payload(l, locate_feature_major, 0);
}

int
ffn_load_dense(struct ld *l)
{
	return load_payload(l, locate_dense, 1);	/* weight_manifest */
}
