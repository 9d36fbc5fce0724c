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

int
ffn_kq_load(struct ffn_kq_model *m, const char *dir,
	    const struct ffn_kq_layer_spec *spec, size_t n_spec,
	    uint32_t hidden, const struct ffn_kq_load_opts *opts,
	    char *err, size_t errlen)
{
	struct ffn_kq_load_opts dflt = { FFN_KQ_MEM_MMAP, -1, 0,
					 FFN_KQ_Q6_PRIVATE };
	char path[PATH_MAX];
	struct json_object *man = NULL;
	struct kq_entry *ent = NULL;
	struct stat st;
	size_t n_ent, total = 0, off = 0;
	uint64_t bytes = 0;
	uint8_t *mem = NULL;
	int fd = -1, rc;

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

	snprintf(path, sizeof(path), "%s/%s", dir, FFN_KQ_BIN_NAME);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = -errno;
		kq_err(err, errlen, rc, "%s: %s", path, strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, FFN_KQ_MANIFEST_NAME);
	man = json_object_from_file(path);
	if (man == NULL) {
		rc = kq_err(err, errlen, -EINVAL, "%s: missing or not JSON (%s)",
			    path, json_util_get_last_err());
		goto out;
	}
	if (!json_object_is_type(man, json_type_array)) {
		rc = kq_err(err, errlen, -EINVAL, "%s: not a JSON array", path);
		goto out;
	}
	n_ent = json_object_array_length(man);
	if (n_ent % 3 != 0) {
		rc = kq_err(err, errlen, -EINVAL, "%s: %zu entries, not 3 per "
			    "layer (gate, up, down)", path, n_ent);
		goto out;
	}
	ent = calloc(n_ent ? n_ent : 1, sizeof(*ent));
	if (ent == NULL) {
		rc = kq_err(err, errlen, -ENOMEM, "k-quant load: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n_ent; i++) {
		rc = parse_entry(json_object_array_get_idx(man, i), i,
				 (uint64_t)st.st_size, &ent[i], err, errlen);
		if (rc < 0)
			goto out;
	}
	for (size_t s = 0; s < n_spec; s++) {
		size_t L = spec[s].layer;

		if (spec[s].nf == 0) {
			rc = kq_err(err, errlen, -EINVAL, "k-quant load: layer "
				    "%zu has num_features 0", L);
			goto out;
		}
		if (3 * L + 2 >= n_ent) {
			rc = kq_err(err, errlen, -EINVAL, "%s: layer %zu needs "
				    "entries %zu..%zu, manifest has %zu", path,
				    L, 3 * L, 3 * L + 2, n_ent);
			goto out;
		}
		for (size_t c = 0; c < 3; c++) {
			rc = check_shape(&ent[3 * L + c], 3 * L + c, spec[s].nf,
					 hidden, err, errlen);
			if (rc < 0)
				goto out;
			total += (ent[3 * L + c].length + 63) & ~(uint64_t)63;
			bytes += ent[3 * L + c].length;
		}
	}

	m->layers = calloc(n_spec ? n_spec : 1, sizeof(*m->layers));
	if (m->layers == NULL) {
		rc = kq_err(err, errlen, -ENOMEM, "k-quant load: out of memory");
		goto out;
	}
	if (opts->mem == FFN_KQ_MEM_MMAP) {
		if (st.st_size > 0) {
			void *p = mmap(NULL, (size_t)st.st_size, PROT_READ,
				       MAP_PRIVATE, fd, 0);

			if (p == MAP_FAILED) {
				rc = -errno;
				kq_err(err, errlen, rc, "mmap %s: %s",
				       FFN_KQ_BIN_NAME, strerror(errno));
				goto out;
			}
			/* start reading ahead; the load itself does not wait */
			(void)madvise(p, (size_t)st.st_size, MADV_WILLNEED);
			m->mem = p;
			m->mem_len = (size_t)st.st_size;
			m->mem_kind = MEM_FILE_MAP;
			m->pages = FFN_KQ_PAGES_FILE;
		}
		mem = m->mem;
	} else if (total > 0) {
		mem = alloc_copy(total, opts, &m->mem_len, &m->pages);
		if (mem == NULL) {
			rc = kq_err(err, errlen, -ENOMEM, "k-quant load: cannot "
				    "allocate %zu bytes", total);
			goto out;
		}
		m->mem = mem;
		m->mem_kind = MEM_ANON_MAP;
	}
	for (size_t s = 0; s < n_spec; s++) {
		struct ffn_kq_layer *l = &m->layers[s];
		const struct kq_entry *e = &ent[3 * (size_t)spec[s].layer];
		const void *p[3];

		for (int c = 0; c < 3; c++) {
			if (opts->mem == FFN_KQ_MEM_MMAP) {
				p[c] = mem + e[c].offset;
				continue;
			}
			rc = read_at(fd, mem + off, e[c].length, e[c].offset);
			if (rc < 0) {
				kq_err(err, errlen, rc, "reading %s entry %zu: "
				       "%s", FFN_KQ_BIN_NAME,
				       3 * (size_t)spec[s].layer + c,
				       strerror(-rc));
				goto out;
			}
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
	m->n_layers = n_spec;
	m->hidden = hidden;
	m->bytes = bytes;
	rc = 0;
out:
	if (rc < 0)
		ffn_kq_unload(m);
	free(ent);
	if (man != NULL)
		json_object_put(man);
	if (fd >= 0)
		close(fd);
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
