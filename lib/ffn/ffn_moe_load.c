/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Loading the expert weights of a hybrid-MoE vindex (spec/moe.md §5):
 * index.json (§5.1, read with ffn_load.c's helpers), the pre-experts
 * norms of weight_manifest.json (§5.2) and the layer files
 * layers/layer_LL.weights (LYRW, §5.3), every field of which is checked
 * before anything is placed. Only owned experts are placed, each by the
 * kind (ffn_moe_kind.c) its file's tag and the hidden size choose: copied
 * into one arena on the NUMA node, or served from the read-only mapping
 * (FFN_PLACE_MMAP) where the kind can. Every failure names the file, the
 * field, the value found and the one expected.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ffn_kq.h"
#include "ffn_load_priv.h"
#include "ffn_moe_priv.h"

#define LYRW_HEADER	24u	/* magic .. hidden (§5.3) */
#define LYRW_ENTRY	32u	/* 4 u64 per expert */
#define MOE_MAX_EXPERTS	(1u << 16)
#define MOE_MAX_WIDTH	(1u << 20)

/* The load's state. e carries dir, err and idx for ffn_load_priv.h's
 * fail(), get_uint() and ffn_load_read_index(). */
struct mld {
	struct ld e;
	const struct ffn_moe_load_opts *o;
	struct ffn_moe *m;
	char path[PATH_MAX];	/* the layer file being read */
	uint8_t *need;		/* [nl]: the layer holds an owned expert */
	size_t tmp_floats;	/* place()'s float buffer */
};

static uint32_t
rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);	/* little-endian on disk, as the host */
	return v;
}

static uint64_t
rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* ---- index.json (§5.1) ---- */

/* §1: model_config.model_type starts with "gemma4" and
 * model_config.moe.hybrid is true. */
static int
index_hybrid(json_object *idx)
{
	json_object *mc, *moe, *hy;
	const char *t;

	if (!json_object_object_get_ex(idx, "model_config", &mc) ||
	    !json_object_is_type(mc, json_type_object))
		return 0;
	t = get_str(mc, "model_type");
	if (t == NULL || strncmp(t, "gemma4", 6) != 0)
		return 0;
	return json_object_object_get_ex(mc, "moe", &moe) &&
	       json_object_is_type(moe, json_type_object) &&
	       json_object_object_get_ex(moe, "hybrid", &hy) &&
	       json_object_is_type(hy, json_type_boolean) &&
	       json_object_get_boolean(hy);
}

int
ffn_moe_is_hybrid(const char *dir, char *err, size_t errlen)
{
	struct ld e = { .dir = dir, .err = err, .errlen = errlen };
	int rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	rc = ffn_load_read_index(&e);
	if (rc == 0)
		rc = index_hybrid(e.idx);
	if (e.idx != NULL)
		json_object_put(e.idx);
	return rc;
}

/* An integer key of obj in [1, max]: FFN_ERR_KEY naming it otherwise. */
static int
get_dim(struct mld *l, json_object *obj, const char *what, const char *key,
	uint32_t max, uint32_t *out)
{
	int64_t v;
	int rc = get_uint(&l->e, obj, what, key, 1, &v);

	if (rc)
		return rc;
	if (v < 1 || v > max)
		return fail(&l->e, FFN_ERR_KEY,
			    "%s: key '%s' is %lld, expected 1..%u", what, key,
			    (long long)v, max);
	*out = (uint32_t)v;
	return 0;
}

static int
parse_index(struct mld *l)
{
	struct ffn_moe *m = l->m;
	struct ffn_moe_info *in = &m->info;
	json_object *mc = NULL, *moe = NULL, *hy = NULL;
	const char *s, *slash;
	int64_t v;
	int rc;

	json_object_object_get_ex(l->e.idx, "model_config", &mc);
	s = mc && json_object_is_type(mc, json_type_object) ?
		get_str(mc, "model_type") : NULL;
	snprintf(in->model_type, sizeof(in->model_type), "%s", s ? s : "");
	if (mc != NULL)
		json_object_object_get_ex(mc, "moe", &moe);
	if (moe != NULL)
		json_object_object_get_ex(moe, "hybrid", &hy);
	if (!index_hybrid(l->e.idx))
		return fail(&l->e, FFN_ERR_MODEL,
			    "index.json: not a hybrid MoE: model_config.model_type '%s' (expected gemma4...), model_config.moe.hybrid %s (expected true)",
			    in->model_type,
			    hy ? json_object_to_json_string(hy) : "absent");
	s = get_str(l->e.idx, "model");
	snprintf(in->model, sizeof(in->model), "%s", s ? s : "");
	slash = strrchr(in->model, '/');
	snprintf(in->model_id, sizeof(in->model_id), "%s",
		 slash ? slash + 1 : in->model);
	if ((rc = get_dim(l, l->e.idx, "index.json", "hidden_size", 1u << 20,
			  &m->H)) ||
	    (rc = get_dim(l, l->e.idx, "index.json", "num_layers", 4096,
			  &m->nl)) ||
	    (rc = get_dim(l, moe, "index.json: model_config.moe",
			  "num_experts", MOE_MAX_EXPERTS, &m->E)) ||
	    (rc = get_dim(l, moe, "index.json: model_config.moe",
			  "moe_intermediate_size", MOE_MAX_WIDTH, &m->I)))
		return rc;
	/* top_k is the client's router's: informational, never refused */
	v = json_object_object_get_ex(moe, "top_k", &hy) &&
	    json_object_is_type(hy, json_type_int) ?
		json_object_get_int64(hy) : 0;
	m->S = (uint32_t)FFN_KQ_PAD256(m->I);
	in->num_layers = m->nl;
	in->hidden = m->H;
	in->num_experts = m->E;
	in->width = m->I;
	in->top_k = v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
	return 0;
}

/* ---- pre-experts norms (§5.2) ---- */

/* Reads the vector's bytes; 0 and *ok = 0 when the range is not in its
 * file (§5.2: such an entry is ignored). */
static int
norm_read(struct mld *l, const char *file, uint64_t off, uint64_t len,
	  void *buf, int *ok)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;
	ssize_t n;

	*ok = 0;
	snprintf(path, sizeof(path), "%s/%s", l->e.dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 :
			fail(&l->e, FFN_ERR_IO, "%s: cannot open: %s", path,
			     strerror(errno));
	if (fstat(fd, &st) != 0 || off > (uint64_t)st.st_size ||
	    len > (uint64_t)st.st_size - off) {
		close(fd);
		return 0;
	}
	n = pread(fd, buf, len, (off_t)off);
	close(fd);
	if (n != (ssize_t)len)
		return fail(&l->e, FFN_ERR_IO, "%s: cannot read %llu bytes at %llu",
			    path, (unsigned long long)len,
			    (unsigned long long)off);
	*ok = 1;
	return 0;
}

/* One manifest entry: the norm of its layer when the key is
 * layers.{L}.pre_feedforward_layernorm_2.weight, L < num_layers. buf
 * takes the vector's bytes (4 H) before the norms are allocated, so an
 * entry out of its file (ignored, §5.2) allocates nothing. */
static int
norm_entry(struct mld *l, json_object *ent, size_t i, uint16_t *buf)
{
	struct ffn_moe *m = l->m;
	char what[160], key[96];
	json_object *shape;
	const char *k, *file;
	int64_t off, len, n = m->H;
	unsigned L, h;
	int pos = -1, rc, ok;
	float *dst;

	if (!json_object_is_type(ent, json_type_object) ||
	    (k = get_str(ent, "key")) == NULL)
		return 0;
	if (sscanf(k, "layers.%u.pre_feedforward_layernorm_2.weight%n", &L,
		   &pos) != 1 || pos < 0 || k[pos] != '\0')
		return 0;
	snprintf(key, sizeof(key), "layers.%u.pre_feedforward_layernorm_2.weight",
		 L);
	if (strcmp(key, k) != 0 || L >= m->nl || m->layers[L].norm != NULL)
		return 0;	/* not this key, another layer, or repeated */
	snprintf(what, sizeof(what), "weight_manifest.json: [%zu] '%s'", i, k);
	if ((rc = get_uint(&l->e, ent, what, "offset", 1, &off)) ||
	    (rc = get_uint(&l->e, ent, what, "length", 1, &len)))
		return rc;
	if (json_object_object_get_ex(ent, "shape", &shape)) {
		json_object *d = json_object_is_type(shape, json_type_array) &&
			json_object_array_length(shape) == 1 ?
			json_object_array_get_idx(shape, 0) : NULL;

		if (d == NULL || !json_object_is_type(d, json_type_int))
			return fail(&l->e, FFN_ERR_KEY,
				    "%s: key 'shape' must be [n]", what);
		n = json_object_get_int64(d);
	}
	if (n != m->H)
		return fail(&l->e, FFN_ERR_SHAPE,
			    "%s: shape [%lld], expected [%u] (hidden_size)",
			    what, (long long)n, m->H);
	if (len != 4 * n && len != 2 * n)
		return fail(&l->e, FFN_ERR_SHAPE,
			    "%s: length %lld, expected %lld (f32) or %lld (f16)",
			    what, (long long)len, (long long)(4 * n),
			    (long long)(2 * n));
	file = get_str(ent, "file");
	if (file == NULL || file[0] == '\0' || strchr(file, '/') != NULL)
		return fail(&l->e, FFN_ERR_KEY,
			    "%s: key 'file' must name a file of the vindex",
			    what);
	rc = norm_read(l, file, (uint64_t)off, (uint64_t)len, buf, &ok);
	if (rc || !ok)
		return rc;
	if (m->norms == NULL) {
		m->norms = calloc((size_t)m->nl * m->H, sizeof(float));
		if (m->norms == NULL)
			return fail(&l->e, FFN_ERR_NOMEM, "out of memory");
	}
	dst = m->norms + (size_t)L * m->H;
	if (len == 2 * n)
		for (h = 0; h < m->H; h++)
			dst[h] = ffn_kq_f16_to_f32(buf[h]);
	else
		memcpy(dst, buf, (size_t)len);
	m->layers[L].norm = dst;
	m->info.norms++;
	return 0;
}

/* No weight_manifest.json: no norms (h = x, §1). */
static int
read_norms(struct mld *l)
{
	char path[PATH_MAX];
	json_object *man;
	uint16_t *buf;
	size_t i, n;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/weight_manifest.json", l->e.dir);
	if (access(path, F_OK) != 0)
		return 0;
	man = json_object_from_file(path);
	if (man == NULL)
		return fail(&l->e, FFN_ERR_JSON, "%s: invalid JSON: %s", path,
			    json_util_get_last_err());
	if (!json_object_is_type(man, json_type_array)) {
		json_object_put(man);
		return fail(&l->e, FFN_ERR_KEY, "%s: not a JSON array", path);
	}
	buf = malloc((size_t)l->m->H * 4);
	if (buf == NULL) {
		json_object_put(man);
		return fail(&l->e, FFN_ERR_NOMEM, "out of memory");
	}
	n = json_object_array_length(man);
	for (i = 0; i < n && rc == 0; i++)
		rc = norm_entry(l, json_object_array_get_idx(man, i), i, buf);
	free(buf);
	json_object_put(man);
	return rc;
}

/* ---- layer files (§5.3) ---- */

static void
layer_path(const struct mld *l, uint32_t L, char *buf, size_t len)
{
	/* "layer_" + the decimal layer, at least two digits */
	snprintf(buf, len, "%s/layers/layer_%02u.weights", l->e.dir, L);
}

/* Map the layer file if it exists: 0 with *base NULL when it does not. */
static int
layer_map(struct mld *l, uint32_t L, void **base, size_t *len)
{
	struct stat st;
	int fd;

	*base = NULL;
	*len = 0;
	layer_path(l, L, l->path, sizeof(l->path));
	fd = open(l->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 :
			fail(&l->e, FFN_ERR_IO, "%s: cannot open: %s",
			     l->path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(&l->e, FFN_ERR_IO, "%s: not a regular file",
			    l->path);
	}
	*len = (size_t)st.st_size;
	if (*len > 0) {
		*base = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (*base == MAP_FAILED) {
			*base = NULL;
			close(fd);
			return fail(&l->e, FFN_ERR_IO, "%s: mmap: %s", l->path,
				    strerror(errno));
		}
	} else {
		*base = MAP_FAILED;	/* exists, empty: the checks say so */
	}
	close(fd);
	return 0;
}

/* A payload range inside the file (overflow-safe). */
static int
range_check(struct mld *l, uint32_t e, const char *field, uint64_t off,
	    uint64_t bytes, size_t len)
{
	if (off > len || bytes > len - off)
		return fail(&l->e, FFN_ERR_SHORT,
			    "%s: expert %u %s range [%llu, %llu + %llu) outside the file (%zu bytes)",
			    l->path, e, field, (unsigned long long)off,
			    (unsigned long long)off, (unsigned long long)bytes,
			    len);
	return 0;
}

static int
entry_check(struct mld *l, const struct ffn_moe_kind *k, const uint8_t *t,
	    uint32_t e, size_t len)
{
	const struct ffn_moe *m = l->m;
	uint64_t gu = k->gate_up_bytes(m->I, m->H);
	uint64_t d0 = k->down_bytes(m->I, m->H, m->S, 0);
	uint64_t d1 = k->down_bytes(m->I, m->H, m->S, 1);
	uint64_t gob = rd64(t), gb = rd64(t + 8);
	uint64_t dob = rd64(t + 16), db = rd64(t + 24);
	int rc;

	if (gb != gu)
		return fail(&l->e, FFN_ERR_SHAPE,
			    "%s: expert %u gate_up_bytes %llu, expected %llu (%s, intermediate %u, hidden %u)",
			    l->path, e, (unsigned long long)gb,
			    (unsigned long long)gu, k->tag_name, m->I, m->H);
	if (db != d0 && (d1 == 0 || db != d1)) {
		char alt[48] = "";

		if (d1)
			snprintf(alt, sizeof(alt), " or %llu",
				 (unsigned long long)d1);
		return fail(&l->e, FFN_ERR_SHAPE,
			    "%s: expert %u down_bytes %llu, expected %llu%s (%s, intermediate %u, hidden %u)",
			    l->path, e, (unsigned long long)db,
			    (unsigned long long)d0, alt, k->tag_name, m->I,
			    m->H);
	}
	if ((rc = range_check(l, e, "gate_up", gob, gb, len)) ||
	    (rc = range_check(l, e, "down", dob, db, len)))
		return rc;
	return 0;
}

/* Everything §5.3 lists, in the header's order; *kind: its serving row. */
static int
layer_check(struct mld *l, const uint8_t *b, size_t len,
	    const struct ffn_moe_kind **kind)
{
	const struct ffn_moe *m = l->m;
	const struct ffn_moe_kind *k;
	uint32_t v, e;
	uint64_t tab;
	int rc;

	if (len < LYRW_HEADER)
		return fail(&l->e, FFN_ERR_SHORT,
			    "%s: %zu bytes, expected at least the %u-byte LYRW header",
			    l->path, len, LYRW_HEADER);
	if (memcmp(b, "LYRW", 4) != 0)
		return fail(&l->e, FFN_ERR_SHAPE,
			    "%s: magic %02x %02x %02x %02x, expected 4c 59 52 57 (\"LYRW\")",
			    l->path, b[0], b[1], b[2], b[3]);
	if ((v = rd32(b + 4)) != 1)
		return fail(&l->e, FFN_ERR_SHAPE,
			    "%s: format_version %u, expected 1", l->path, v);
	v = rd32(b + 8);
	k = ffn_moe_kind_of(v, m->H);
	if (k == NULL)
		return fail(&l->e, FFN_ERR_MODEL,
			    "%s: quant_format %u (%s) is not supported, expected 4 (Q4_K) or 0 (F32)",
			    l->path, v, ffn_moe_tag_name(v));
	if ((v = rd32(b + 12)) != m->E)
		return fail(&l->e, FFN_ERR_SHAPE,
			    "%s: num_entries %u, expected %u (index.json model_config.moe.num_experts)",
			    l->path, v, m->E);
	if ((v = rd32(b + 16)) != m->I)
		return fail(&l->e, FFN_ERR_SHAPE,
			    "%s: intermediate %u, expected %u (index.json model_config.moe.moe_intermediate_size)",
			    l->path, v, m->I);
	if ((v = rd32(b + 20)) != m->H)
		return fail(&l->e, FFN_ERR_SHAPE,
			    "%s: hidden %u, expected %u (index.json hidden_size)",
			    l->path, v, m->H);
	tab = LYRW_HEADER + (uint64_t)LYRW_ENTRY * m->E;
	if (len < tab)
		return fail(&l->e, FFN_ERR_SHORT,
			    "%s: %zu bytes, expected at least %llu for the table of %u entries",
			    l->path, len, (unsigned long long)tab, m->E);
	for (e = 0; e < m->E; e++)
		if ((rc = entry_check(l, k, b + LYRW_HEADER + LYRW_ENTRY * e,
				      e, len)))
			return rc;
	*kind = k;
	return 0;
}

static int
owned(const struct mld *l, uint32_t L, uint32_t e)
{
	return l->o == NULL || ffn_moe_own_has(l->o->own, L, e);
}

/* Pass 1: map and check every layer file holding an owned expert, and
 * count the arena it needs. */
static int
layers_check(struct mld *l, size_t *arena)
{
	struct ffn_moe *m = l->m;
	int in_place = l->o != NULL && l->o->placement == FFN_PLACE_MMAP;
	uint32_t L, e;
	int rc;

	*arena = 0;
	for (L = 0; L < m->nl; L++) {
		struct ffn_moe_layer *ly = &m->layers[L];
		const uint8_t *b;
		struct stat st;

		layer_path(l, L, l->path, sizeof(l->path));
		ly->has_file = stat(l->path, &st) == 0;
		m->info.layer_files += ly->has_file;
		for (e = 0; e < m->E && !owned(l, L, e); e++)
			;
		if (!ly->has_file || e == m->E)
			continue;	/* nothing held here: not read */
		if ((rc = layer_map(l, L, &ly->map, &ly->map_len)))
			return rc;
		if (ly->map == NULL) {	/* gone since the stat */
			ly->has_file = 0;
			m->info.layer_files--;
			continue;
		}
		b = ly->map == MAP_FAILED ? (const uint8_t *)"" : ly->map;
		if ((rc = layer_check(l, b, ly->map_len, &ly->kind)))
			return rc;
		ly->x = calloc(m->E, sizeof(*ly->x));
		if (ly->x == NULL)
			return fail(&l->e, FFN_ERR_NOMEM, "out of memory");
		for (; e < m->E; e++) {
			const uint8_t *t = b + LYRW_HEADER + LYRW_ENTRY * e;

			if (owned(l, L, e))
				*arena += ly->kind->arena_bytes(m,
						b + rd64(t), in_place);
		}
		l->need[L] = 1;
	}
	return 0;
}

/* Pass 2: place the owned experts (arena bytes each as pass 1 counted). */
static int
layers_place(struct mld *l, uint8_t *arena)
{
	struct ffn_moe *m = l->m;
	int in_place = l->o != NULL && l->o->placement == FFN_PLACE_MMAP;
	size_t at = 0;
	float *tmp;
	uint32_t L, e;

	/* nothing to place: no buffer sized by index.json's I and H alone
	 * (only a layer file that passed layer_check bounds them) */
	for (L = 0; L < m->nl && !l->need[L]; L++)
		;
	if (L == m->nl)
		return 0;
	tmp = malloc(l->tmp_floats * sizeof(float));
	if (tmp == NULL)
		return fail(&l->e, FFN_ERR_NOMEM, "out of memory");
	for (L = 0; L < m->nl; L++) {
		struct ffn_moe_layer *ly = &m->layers[L];
		const uint8_t *b = ly->map;

		if (!l->need[L])
			continue;
		for (e = 0; e < m->E; e++) {
			const uint8_t *t = b + LYRW_HEADER + LYRW_ENTRY * e;
			const uint8_t *gu = b + rd64(t);
			size_t need;

			if (!owned(l, L, e))
				continue;
			need = ly->kind->arena_bytes(m, gu, in_place);
			ly->kind->place(m, gu, b + rd64(t + 16), rd64(t + 24),
					in_place, need ? arena + at : NULL, tmp,
					&ly->x[e]);
			at += need;
			m->info.experts_loaded++;
			m->info.bytes_loaded += ly->kind->held_bytes(m);
		}
		if (m->info.kind == NULL)
			m->info.kind = ly->kind->name;
		else if (strcmp(m->info.kind, ly->kind->name) != 0)
			m->info.kind = "mixed";
	}
	free(tmp);
	return 0;
}

/* Copies no longer need their files; FFN_PLACE_MMAP serves from them. */
static void
layers_unmap(struct ffn_moe *m)
{
	uint32_t L;

	for (L = 0; m->layers != NULL && L < m->nl; L++) {
		struct ffn_moe_layer *ly = &m->layers[L];

		if (ly->map != NULL && ly->map != MAP_FAILED)
			munmap(ly->map, ly->map_len);
		ly->map = NULL;
		ly->map_len = 0;
	}
}

static int
load(struct mld *l)
{
	struct ffn_moe *m = l->m;
	const struct ffn_moe_load_opts *o = l->o;
	int copy = o == NULL || o->placement == FFN_PLACE_COPY;
	int node = o != NULL && o->numa_node >= 0 ? o->numa_node :
		   ffn_mem_current_node();
	enum ffn_pages pages = copy ? FFN_PAGES_NORMAL : FFN_PAGES_FILE;
	size_t total;
	int rc, bound = 0;

	if ((rc = ffn_load_read_index(&l->e)) || (rc = parse_index(l)))
		return rc;
	m->layers = calloc(m->nl, sizeof(*m->layers));
	l->need = calloc(m->nl, 1);
	if (m->layers == NULL || l->need == NULL)
		return fail(&l->e, FFN_ERR_NOMEM, "out of memory");
	if ((rc = read_norms(l)) || (rc = layers_check(l, &total)))
		return rc;
	/* place()'s buffer: a dequantised gate_up or a stored down */
	l->tmp_floats = FFN_KQ_PAD256(2 * (size_t)m->I * m->H);
	if ((size_t)m->H * m->S > l->tmp_floats)
		l->tmp_floats = (size_t)m->H * m->S;
	if (total > 0) {
		enum ffn_pages got;

		m->arena = ffn_mem_alloc(total, node,
					 o != NULL && o->no_hugepages, &got,
					 &bound);
		if (m->arena == NULL)
			return fail(&l->e, FFN_ERR_NOMEM,
				    "cannot allocate %zu bytes of expert weights on node %d: %s",
				    total, node, strerror(errno));
		m->arena_len = total;
		if (copy)
			pages = got;
	}
	if ((rc = layers_place(l, m->arena)))
		return rc;
	if (m->info.kind == NULL)
		m->info.kind = "none";
	if (copy)
		layers_unmap(m);
	m->info.placement = copy ? FFN_PLACE_COPY : FFN_PLACE_MMAP;
	m->info.pages = pages;
	m->info.numa_node = copy ? node : -1;
	return 0;
}

int
ffn_moe_load(const char *dir, const struct ffn_moe_load_opts *o,
	     struct ffn_moe **out, char *err, size_t errlen)
{
	struct mld l = { .e = { .dir = dir, .err = err, .errlen = errlen },
			 .o = o };
	struct timespec t0, t1;
	int rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (out == NULL || dir == NULL)
		return -EINVAL;
	*out = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	l.m = calloc(1, sizeof(*l.m));
	if (l.m == NULL)
		return FFN_ERR_NOMEM;
	l.m->info.numa_node = -1;
	rc = load(&l);
	if (l.e.idx != NULL)
		json_object_put(l.e.idx);
	free(l.need);
	if (rc) {
		ffn_moe_free(l.m);
		return rc;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	l.m->info.load_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
			    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	*out = l.m;
	return 0;
}

void
ffn_moe_free(struct ffn_moe *m)
{
	uint32_t L;

	if (m == NULL)
		return;
	layers_unmap(m);
	for (L = 0; m->layers != NULL && L < m->nl; L++)
		free(m->layers[L].x);
	free(m->layers);
	free(m->norms);
	ffn_mem_free(m->arena, m->arena_len);
	free(m);
}

void
ffn_moe_set_kq_q8k(struct ffn_moe *m, int on)
{
	int ok = 1, any = 0;

	if (m == NULL)
		return;
	/* the kinds' own column (ffn_moe_kinds[]): every layer that holds
	 * experts must take the Q8_K path for it to apply */
	for (uint32_t l = 0; l < m->nl; l++)
		if (m->layers[l].kind != NULL) {
			any = 1;
			ok = ok && m->layers[l].kind->q8k_path;
		}
	m->info.kq_q8k = on && any && ok;
}

const struct ffn_moe_info *
ffn_moe_info(const struct ffn_moe *m)
{
	return m != NULL ? &m->info : NULL;
}

bool
ffn_moe_held(const struct ffn_moe *m, uint32_t layer, uint32_t e)
{
	return m != NULL && layer < m->nl && e < m->E &&
	       m->layers[layer].x != NULL &&
	       m->layers[layer].x[e].gate != NULL;
}

bool
ffn_moe_has_layer(const struct ffn_moe *m, uint32_t layer)
{
	return m != NULL && layer < m->nl && m->layers[layer].has_file;
}
