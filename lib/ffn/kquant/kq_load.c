/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Loader of the K-quant payload, spec/vindex.md §2.4:
 * interleaved_q4k.bin + interleaved_q4k_manifest.json. The manifest is a
 * JSON array, entry 3L + c for layer L, c = gate, up, down. Every entry is
 * checked (keys, format, shape, length, bounds; gate and up must be Q4_K,
 * down Q6_K or Q4_K); the entries of the layers
 * asked for are also checked against their FFN width and H. Errors name
 * the entry and what is wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <numa.h>

#include "kq_internal.h"

enum { MEM_NONE = 0, MEM_FILE_MAP, MEM_ANON_MAP };

struct kq_entry {
	const char *key;
	enum ffn_kq_fmt fmt;
	uint64_t rows, pcols, offset, length;
};

static const char *const comp_name[3] = { "gate", "up", "down" };

static int
kq_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int
get_u64(struct json_object *o, const char *k, uint64_t *v)
{
	struct json_object *f;
	int64_t x;

	if (!json_object_object_get_ex(o, k, &f) ||
	    !json_object_is_type(f, json_type_int))
		return -1;
	x = json_object_get_int64(f);
	if (x < 0)
		return -1;
	*v = (uint64_t)x;
	return 0;
}

/* Parse and check one entry on its own (vindex.md §2.4). */
static int
parse_entry(struct json_object *o, size_t idx, uint64_t file_len,
	    struct kq_entry *e, char *err, size_t errlen)
{
	struct json_object *f, *s0, *s1;
	const char *fmt;
	uint64_t bb, want;
	size_t L = idx / 3;
	const char *c = comp_name[idx % 3];

#define BAD(...) kq_err(err, errlen, -EINVAL, FFN_KQ_MANIFEST_NAME \
		" entry %zu (layer %zu %s): " __VA_ARGS__)
	if (!json_object_is_type(o, json_type_object))
		return BAD("not an object", idx, L, c);
	if (!json_object_object_get_ex(o, "key", &f) ||
	    !json_object_is_type(f, json_type_string))
		return BAD("missing or non-string \"key\"", idx, L, c);
	e->key = json_object_get_string(f);
	if (!json_object_object_get_ex(o, "format", &f) ||
	    !json_object_is_type(f, json_type_string))
		return BAD("key \"%s\": missing or non-string \"format\"",
			   idx, L, c, e->key);
	fmt = json_object_get_string(f);
	if (strcmp(fmt, "Q4_K") == 0)
		e->fmt = FFN_KQ_Q4_K;
	else if (strcmp(fmt, "Q6_K") == 0)
		e->fmt = FFN_KQ_Q6_K;
	else
		return BAD("key \"%s\": format \"%s\" is not Q4_K or Q6_K",
			   idx, L, c, e->key, fmt);
	/* §2.4: gate and up are Q4_K; only down may be Q6_K (or Q4_K) */
	if (idx % 3 != 2 && e->fmt != FFN_KQ_Q4_K)
		return BAD("key \"%s\": format \"%s\" not allowed for %s "
			   "(must be Q4_K)", idx, L, c, e->key, fmt, c);
	if (!json_object_object_get_ex(o, "shape", &f) ||
	    !json_object_is_type(f, json_type_array) ||
	    json_object_array_length(f) != 2 ||
	    !json_object_is_type(s0 = json_object_array_get_idx(f, 0),
				 json_type_int) ||
	    !json_object_is_type(s1 = json_object_array_get_idx(f, 1),
				 json_type_int) ||
	    json_object_get_int64(s0) <= 0 || json_object_get_int64(s1) <= 0)
		return BAD("key \"%s\": \"shape\" is not [rows, padded_cols] "
			   "of two positive integers", idx, L, c, e->key);
	e->rows = (uint64_t)json_object_get_int64(s0);
	e->pcols = (uint64_t)json_object_get_int64(s1);
	if (e->pcols % FFN_KQ_QK != 0)
		return BAD("key \"%s\": padded_cols %" PRIu64
			   " is not a multiple of 256", idx, L, c, e->key,
			   e->pcols);
	if (get_u64(o, "offset", &e->offset) < 0)
		return BAD("key \"%s\": missing or invalid \"offset\"",
			   idx, L, c, e->key);
	if (get_u64(o, "length", &e->length) < 0)
		return BAD("key \"%s\": missing or invalid \"length\"",
			   idx, L, c, e->key);
	bb = ffn_kq_block_bytes(e->fmt);
	if (e->rows > UINT32_MAX || e->pcols > UINT32_MAX)
		return BAD("key \"%s\": shape too large", idx, L, c, e->key);
	want = e->rows * (e->pcols / FFN_KQ_QK) * bb;
	if (e->length != want)
		return BAD("key \"%s\": length %" PRIu64 " != rows %" PRIu64
			   " x %" PRIu64 " blocks x %" PRIu64 " bytes = %"
			   PRIu64, idx, L, c, e->key, e->length, e->rows,
			   e->pcols / FFN_KQ_QK, bb, want);
	if (e->offset > file_len || e->length > file_len - e->offset)
		return BAD("key \"%s\": offset %" PRIu64 " + length %" PRIu64
			   " exceeds " FFN_KQ_BIN_NAME " size %" PRIu64,
			   idx, L, c, e->key, e->offset, e->length, file_len);
#undef BAD
	return 0;
}

/* The entry of layer L, component c, against the layer's nf and H. */
static int
check_shape(const struct kq_entry *e, size_t idx, uint32_t nf, uint32_t H,
	    char *err, size_t errlen)
{
	size_t L = idx / 3, c = idx % 3;
	uint64_t rows = c < 2 ? nf : H;
	uint64_t pcols = c < 2 ? FFN_KQ_PAD256(H) : FFN_KQ_PAD256(nf);

	if (e->rows != rows || e->pcols != pcols)
		return kq_err(err, errlen, -EINVAL, FFN_KQ_MANIFEST_NAME
			" entry %zu (layer %zu %s): key \"%s\": shape [%"
			PRIu64 ", %" PRIu64 "], expected [%" PRIu64 ", %"
			PRIu64 "] (%s, nf %u, hidden %u)", idx, L,
			comp_name[c], e->key, e->rows, e->pcols, rows, pcols,
			c < 2 ? "[nf, pad256(H)]" : "[H, pad256(nf)]", nf, H);
	return 0;
}

static void *
alloc_copy(size_t len, const struct ffn_kq_load_opts *o, size_t *maplen,
	   int *pages)
{
	size_t huge = 2u << 20, l = (len + huge - 1) & ~(huge - 1);
	void *p = MAP_FAILED;

	*pages = FFN_KQ_PAGES_4K;
	if (o->hugepages) {
		p = mmap(NULL, l, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (p != MAP_FAILED)
			*pages = FFN_KQ_PAGES_HUGETLB;
	}
	if (p == MAP_FAILED) {
		p = mmap(NULL, l, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		if (o->hugepages && madvise(p, l, MADV_HUGEPAGE) == 0)
			*pages = FFN_KQ_PAGES_THP;
	}
	/* Bind before first touch, so the pages come from that node. */
	if (o->numa_node >= 0)
		numa_tonode_memory(p, l, o->numa_node);
	*maplen = l;
	return p;
}

static int
read_at(int fd, void *dst, size_t len, uint64_t off)
{
	uint8_t *p = dst;

	while (len > 0) {
		ssize_t n = pread(fd, p, len > (1u << 30) ? (1u << 30) : len,
				  (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* What the steps of one load share. */
struct kq_ld {
	const char *dir;
	char path[PATH_MAX];	/* the file a message names */
	int fd;			/* interleaved_q4k.bin */
	uint64_t file_len;
	struct json_object *man;
	struct kq_entry *ent;	/* [n_ent], checked on their own */
	size_t n_ent;
	size_t total;		/* COPY: bytes of the owned entries, each
				 * rounded to 64 */
	uint64_t bytes;		/* weight bytes of the owned entries */
	char *err;
	size_t errlen;
};

static int
open_bin(struct kq_ld *k)
{
	struct stat st;
	int rc;

	snprintf(k->path, sizeof(k->path), "%s/%s", k->dir, FFN_KQ_BIN_NAME);
	k->fd = open(k->path, O_RDONLY | O_CLOEXEC);
	if (k->fd < 0 || fstat(k->fd, &st) < 0) {
		rc = -errno;
		return kq_err(k->err, k->errlen, rc, "%s: %s", k->path,
			      strerror(errno));
	}
	k->file_len = (uint64_t)st.st_size;
	return 0;
}

/* The manifest, and every entry checked on its own (§2.4). */
static int
read_manifest(struct kq_ld *k)
{
	int rc;

	snprintf(k->path, sizeof(k->path), "%s/%s", k->dir,
		 FFN_KQ_MANIFEST_NAME);
	k->man = json_object_from_file(k->path);
	if (k->man == NULL)
		return kq_err(k->err, k->errlen, -EINVAL,
			      "%s: missing or not JSON (%s)", k->path,
			      json_util_get_last_err());
	if (!json_object_is_type(k->man, json_type_array))
		return kq_err(k->err, k->errlen, -EINVAL,
			      "%s: not a JSON array", k->path);
	k->n_ent = json_object_array_length(k->man);
	if (k->n_ent % 3 != 0)
		return kq_err(k->err, k->errlen, -EINVAL, "%s: %zu entries, "
			      "not 3 per layer (gate, up, down)", k->path,
			      k->n_ent);
	k->ent = calloc(k->n_ent ? k->n_ent : 1, sizeof(*k->ent));
	if (k->ent == NULL)
		return kq_err(k->err, k->errlen, -ENOMEM,
			      "k-quant load: out of memory");
	for (size_t i = 0; i < k->n_ent; i++) {
		rc = parse_entry(json_object_array_get_idx(k->man, i), i,
				 k->file_len, &k->ent[i], k->err, k->errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The entries of the layers asked for, against their nf and H; sums
 * their sizes. */
static int
check_spec(struct kq_ld *k, const struct ffn_kq_layer_spec *spec,
	   size_t n_spec, uint32_t hidden)
{
	int rc;

	for (size_t s = 0; s < n_spec; s++) {
		size_t L = spec[s].layer;

		if (spec[s].nf == 0)
			return kq_err(k->err, k->errlen, -EINVAL, "k-quant "
				      "load: layer %zu has num_features 0", L);
		if (3 * L + 2 >= k->n_ent)
			return kq_err(k->err, k->errlen, -EINVAL, "%s: layer "
				      "%zu needs entries %zu..%zu, manifest "
				      "has %zu", k->path, L, 3 * L, 3 * L + 2,
				      k->n_ent);
		for (size_t c = 0; c < 3; c++) {
			const struct kq_entry *e = &k->ent[3 * L + c];

			rc = check_shape(e, 3 * L + c, spec[s].nf, hidden,
					 k->err, k->errlen);
			if (rc < 0)
				return rc;
			k->total += (e->length + 63) & ~(uint64_t)63;
			k->bytes += e->length;
		}
	}
	return 0;
}

/* MMAP: the whole file, read-only; COPY: room for the owned entries. */
static int
get_memory(struct kq_ld *k, struct ffn_kq_model *m,
	   const struct ffn_kq_load_opts *opts)
{
	if (opts->mem == FFN_KQ_MEM_MMAP) {
		void *p;

		if (k->file_len == 0)
			return 0;
		p = mmap(NULL, (size_t)k->file_len, PROT_READ, MAP_PRIVATE,
			 k->fd, 0);
		if (p == MAP_FAILED) {
			int rc = -errno;

			return kq_err(k->err, k->errlen, rc, "mmap %s: %s",
				      FFN_KQ_BIN_NAME, strerror(errno));
		}
		/* start reading ahead; the load itself does not wait */
		(void)madvise(p, (size_t)k->file_len, MADV_WILLNEED);
		m->mem = p;
		m->mem_len = (size_t)k->file_len;
		m->mem_kind = MEM_FILE_MAP;
		m->pages = FFN_KQ_PAGES_FILE;
		return 0;
	}
	if (k->total == 0)
		return 0;
	m->mem = alloc_copy(k->total, opts, &m->mem_len, &m->pages);
	if (m->mem == NULL)
		return kq_err(k->err, k->errlen, -ENOMEM, "k-quant load: "
			      "cannot allocate %zu bytes", k->total);
	m->mem_kind = MEM_ANON_MAP;
	return 0;
}

/* Point (MMAP) or copy (COPY) each owned layer's three matrices. */
static int
place_layers(struct kq_ld *k, struct ffn_kq_model *m,
	     const struct ffn_kq_layer_spec *spec, size_t n_spec,
	     uint32_t hidden, const struct ffn_kq_load_opts *opts)
{
	uint8_t *mem = m->mem;
	size_t off = 0;
	int rc;

	for (size_t s = 0; s < n_spec; s++) {
		struct ffn_kq_layer *l = &m->layers[s];
		const struct kq_entry *e = &k->ent[3 * (size_t)spec[s].layer];
		const void *p[3];

		for (int c = 0; c < 3; c++) {
			if (opts->mem == FFN_KQ_MEM_MMAP) {
				p[c] = mem + e[c].offset;
				continue;
			}
			rc = read_at(k->fd, mem + off, e[c].length,
				     e[c].offset);
			if (rc < 0)
				return kq_err(k->err, k->errlen, rc, "reading "
					      "%s entry %zu: %s",
					      FFN_KQ_BIN_NAME,
					      3 * (size_t)spec[s].layer + c,
					      strerror(-rc));
			p[c] = mem + off;
			off += (e[c].length + 63) & ~(uint64_t)63;
		}
		l->gate = p[0];
		l->up = p[1];
		l->down = p[2];
		l->gate_fmt = e[0].fmt;
		l->up_fmt = e[1].fmt;
		l->down_fmt = e[2].fmt;
		l->q6 = opts->q6;
		l->nf = spec[s].nf;
		l->hidden = hidden;
	}
	return 0;
}

int
ffn_kq_load(struct ffn_kq_model *m, const char *dir,
	    const struct ffn_kq_layer_spec *spec, size_t n_spec,
	    uint32_t hidden, const struct ffn_kq_load_opts *opts,
	    char *err, size_t errlen)
{
	struct ffn_kq_load_opts dflt = { FFN_KQ_MEM_MMAP, -1, 0,
					 FFN_KQ_Q6_PRIVATE };
	struct kq_ld k = { .dir = dir, .fd = -1, .err = err,
			   .errlen = errlen };
	int rc;

	if (m == NULL || dir == NULL || (spec == NULL && n_spec > 0) ||
	    hidden == 0)
		return kq_err(err, errlen, -EINVAL, "k-quant load: bad arguments");
	if (opts == NULL)
		opts = &dflt;
	memset(m, 0, sizeof(*m));
	if (opts->mem == FFN_KQ_MEM_COPY && opts->numa_node >= 0 &&
	    (numa_available() < 0 || opts->numa_node > numa_max_node()))
		return kq_err(err, errlen, -ENODEV,
			"k-quant load: NUMA node %d not available",
			opts->numa_node);

	rc = open_bin(&k);
	if (rc == 0)
		rc = read_manifest(&k);
	if (rc == 0)
		rc = check_spec(&k, spec, n_spec, hidden);
	if (rc == 0) {
		m->layers = calloc(n_spec ? n_spec : 1, sizeof(*m->layers));
		if (m->layers == NULL)
			rc = kq_err(err, errlen, -ENOMEM,
				    "k-quant load: out of memory");
	}
	if (rc == 0)
		rc = get_memory(&k, m, opts);
	if (rc == 0)
		rc = place_layers(&k, m, spec, n_spec, hidden, opts);
	if (rc == 0) {
		m->n_layers = n_spec;
		m->hidden = hidden;
		m->bytes = k.bytes;
	} else {
		ffn_kq_unload(m);
	}
	free(k.ent);
	if (k.man != NULL)
		json_object_put(k.man);
	if (k.fd >= 0)
		close(k.fd);
	return rc;
}

void
ffn_kq_unload(struct ffn_kq_model *m)
{
	if (m == NULL)
		return;
	if (m->mem != NULL && m->mem_kind != MEM_NONE)
		munmap(m->mem, m->mem_len);
	free(m->layers);
	memset(m, 0, sizeof(*m));
}
