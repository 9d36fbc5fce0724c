/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * libFuzzer harness: the vindex loaders of lib/ffn (spec/vindex.md):
 * index.json (ffn_load.c), the payload layouts §2.1-§2.3 and
 * weight_manifest.json (ffn_load_payload.c, ffn_model.c), the K-quant
 * payload §2.4 (kquant/kq_load.c), in copy and mmap placement.
 *
 * Input: 3 control bytes, then a container of files written into one
 * scratch directory per process (/dev/shm/fuzz-vindex-XXXXXX, emptied
 * before each input):
 *   c[0] bits 0-2 forced layout (% 5: AUTO, INTERLEAVED, FEATURE_MAJOR,
 *        Q4K, DENSE), bit 3 q6k_ggml, bits 4-5 placement (0 and 3: copy
 *        then mmap, 1: copy, 2: mmap)
 *   c[1] first_layer (0xff: -1, the default), c[2] last_layer (same)
 *   file: kind u8, name length u8, name, length u32 LE, then
 *     kind bit 0 clear: the next `length` bytes of the input (fewer when
 *       the input ends first) are the file;
 *     kind bit 0 set: no bytes follow; the file is `length` % 1 MiB bytes
 *       of a pattern seeded by kind (sizes derived from the input, so
 *       payloads larger than the input still fit in it; 2 MiB of such
 *       bytes per input at most).
 *   A name that is empty, over 64 bytes, starts with '.' or holds a byte
 *   outside [A-Za-z0-9._-] is skipped (nothing outside the directory is
 *   ever written); a later file of the same name replaces it.
 * tools/fuzz/vindex-pack.py packs a directory (tools/mkvindex's output)
 * into this format; tools/fuzz/seed.py seeds corpus/vindex with it.
 *
 * Checked: ffn_model_load() returns 0 or one of enum ffn_error / -errno;
 * a failure leaves a non-empty message and no model; a success reports
 * what index.json says (num_layers, hidden_size, dtype, model, family,
 * quant → layout Q4K), the owned range as asked (or the defaults) within
 * the model, each owned layer's num_features as its index entry, the
 * shapes of ffn.h (gate, up [nf, H]; down feature-major [nf, H], or
 * [H, nf] for K-quant) and max_features; every byte of every matrix is
 * read (ASan for copies, SIGBUS for a mapping past a file's end). After
 * ffn_model_free(): no mapping of a scratch file remains and no file
 * descriptor leaked (the next open() gets the same number); LeakSanitizer
 * sees heap leaks.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "ffn.h"
#include "fuzz_util.h"

#define MAX_FILE (1u << 20)
#define MAX_NAMES 32

static char dir[64];
static char names[MAX_NAMES][72];
static unsigned int nr_names;
static uint8_t *fillbuf;
static int verbose;

static void
clear_dir(void)
{
	char p[160];

	for (unsigned int i = 0; i < nr_names; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	nr_names = 0;
}

static void
cleanup(void)
{
	clear_dir();
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_scratch_dir(dir, sizeof(dir), "vindex");
	atexit(cleanup);
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	fillbuf = malloc(MAX_FILE);
	FZ_CHECK(fillbuf != NULL);
	return 0;
}

static bool
name_ok(const uint8_t *s, size_t n)
{
	if (n == 0 || n > 64 || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return false;
	}
	return true;
}

static void
write_file(const uint8_t *name, size_t nlen, const uint8_t *body,
	   size_t len)
{
	char p[160];
	unsigned int i;
	int fd;

	for (i = 0; i < nr_names; i++)
		if (strlen(names[i]) == nlen &&
		    memcmp(names[i], name, nlen) == 0)
			break;
	if (i == nr_names) {
		if (nr_names == MAX_NAMES)
			return;
		memcpy(names[nr_names], name, nlen);
		names[nr_names][nlen] = '\0';
		nr_names++;
	}
	snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	FZ_CHECK(fd >= 0);
	while (len > 0) {
		ssize_t w = write(fd, body, len);

		FZ_CHECK(w > 0);
		body += w;
		len -= (size_t)w;
	}
	close(fd);
}

/* The container after the control bytes: files into dir. */
static void
unpack(struct fz *f)
{
	uint32_t budget = 2 * MAX_FILE;	/* pattern bytes per input */

	while (f->n > 0) {
		uint8_t kind = fz_u8(f), nlen = fz_u8(f);
		const uint8_t *name = f->p;
		uint32_t len;

		if (nlen > f->n)
			nlen = (uint8_t)f->n;
		f->p += nlen;
		f->n -= nlen;
		len = fz_u16(f);
		len |= (uint32_t)fz_u16(f) << 16;
		if (kind & 1) {
			uint32_t s = kind | 1u;

			len %= MAX_FILE;
			if (len > budget)
				len = budget;
			budget -= len;
			for (uint32_t i = 0; i < len; i++)
				fillbuf[i] = (uint8_t)(fz_rand(&s) >>
						       (kind >> 5));
			if (name_ok(name, nlen))
				write_file(name, nlen, fillbuf, len);
		} else {
			const uint8_t *body = f->p;

			if (len > f->n)
				len = (uint32_t)f->n;
			f->p += len;
			f->n -= len;
			if (name_ok(name, nlen))
				write_file(name, nlen, body, len);
		}
	}
}

/* The lowest free descriptor: the same before and after a load. */
static int
probe_fd(void)
{
	int fd = open("/dev/null", O_RDONLY);

	FZ_CHECK(fd >= 0);
	close(fd);
	return fd;
}

/* No mapping of a scratch file is left. */
static void
check_no_maps(void)
{
	char line[512];
	FILE *mf = fopen("/proc/self/maps", "r");

	FZ_CHECK(mf != NULL);
	while (fgets(line, sizeof(line), mf) != NULL) {
		if (strstr(line, dir) != NULL) {
			fprintf(stderr, "mapping left: %s", line);
			FZ_CHECK(strstr(line, dir) == NULL);
		}
	}
	fclose(mf);
}

static json_object *
read_index(void)
{
	char p[160];

	snprintf(p, sizeof(p), "%s/index.json", dir);
	return json_object_from_file(p);
}

static bool
jint(json_object *o, const char *k, int64_t *v)
{
	json_object *x;

	if (!json_object_object_get_ex(o, k, &x) ||
	    !json_object_is_type(x, json_type_int))
		return false;
	*v = json_object_get_int64(x);
	return true;
}

static const char *
jstr(json_object *o, const char *k)
{
	json_object *x;

	if (!json_object_object_get_ex(o, k, &x) ||
	    !json_object_is_type(x, json_type_string))
		return NULL;
	return json_object_get_string(x);
}

/* num_features of layer l's entry in index.json, -1 when not found. */
static int64_t
index_nf(json_object *idx, unsigned int l)
{
	json_object *layers;
	int64_t v, nf = -1;

	if (!json_object_object_get_ex(idx, "layers", &layers) ||
	    !json_object_is_type(layers, json_type_array))
		return -1;
	for (size_t i = 0; i < json_object_array_length(layers); i++) {
		json_object *e = json_object_array_get_idx(layers, i);

		if (json_object_is_type(e, json_type_object) &&
		    jint(e, "layer", &v) && v == (int64_t)l &&
		    jint(e, "num_features", &v))
			nf = v;
	}
	return nf;
}

static volatile uint8_t sink;

static void
touch_mat(const struct ffn_mat *m, bool kq, uint32_t want_rows,
	  uint32_t want_cols)
{
	size_t n;
	uint8_t acc = 0;

	FZ_CHECK(m->data != NULL);
	FZ_CHECK(m->rows == want_rows && m->cols == want_cols);
	if (kq) {
		size_t blocks = (m->cols + 255) / 256;

		FZ_CHECK(m->dtype == FFN_DT_Q4K || m->dtype == FFN_DT_Q6K);
		FZ_CHECK(m->row_bytes == blocks *
			 (m->dtype == FFN_DT_Q4K ? 144u : 210u));
	} else {
		FZ_CHECK(m->dtype == FFN_DT_F32 || m->dtype == FFN_DT_F16);
		FZ_CHECK(m->row_bytes >= (size_t)m->cols *
			 (m->dtype == FFN_DT_F32 ? 4u : 2u));
	}
	n = m->row_bytes * m->rows;
	for (size_t i = 0; i < n; i++)
		acc ^= ((const uint8_t *)m->data)[i];
	sink = acc;
}

static void
check_model(const struct ffn_model *m, const struct ffn_load_opts *o)
{
	const struct ffn_info *in = ffn_model_info(m);
	json_object *idx = read_index();
	int64_t nl, h, nf;
	const char *s;
	uint32_t maxf = 0;

	/* a model loaded: index.json parses, and says what is reported */
	FZ_CHECK(in != NULL);
	FZ_CHECK(idx != NULL);
	FZ_CHECK(jint(idx, "num_layers", &nl) && nl == in->num_layers);
	FZ_CHECK(jint(idx, "hidden_size", &h) && h == in->hidden);
	FZ_CHECK(in->hidden > 0);
	s = jstr(idx, "dtype");
	FZ_CHECK(strcmp(in->dtype, s != NULL ? s : "f32") == 0);
	s = jstr(idx, "model");
	if (s != NULL)
		FZ_CHECK(strncmp(in->model, s, sizeof(in->model) - 1) == 0);
	s = jstr(idx, "family");
	if (s != NULL)
		FZ_CHECK(strncmp(in->family, s, sizeof(in->family) - 1) == 0);
	s = jstr(idx, "quant");
	if (s != NULL && strcmp(s, "q4k") == 0)
		FZ_CHECK(in->layout == FFN_LAYOUT_Q4K);
	FZ_CHECK(in->layout != FFN_LAYOUT_AUTO);
	if (o->layout != FFN_LAYOUT_AUTO)
		FZ_CHECK(in->layout == o->layout);
	FZ_CHECK(in->placement == o->placement);
	FZ_CHECK(in->first_layer == (uint32_t)(o->first_layer < 0 ? 0 :
					       o->first_layer));
	FZ_CHECK(in->last_layer == (uint32_t)(o->last_layer < 0 ?
					      in->num_layers - 1 :
					      (uint32_t)o->last_layer));
	FZ_CHECK(in->first_layer <= in->last_layer);
	FZ_CHECK(in->last_layer < in->num_layers);
	if (in->first_layer > 0)
		FZ_CHECK(ffn_model_layer(m, in->first_layer - 1) == NULL);
	FZ_CHECK(ffn_model_layer(m, in->last_layer + 1) == NULL);
	for (uint32_t l = in->first_layer; l <= in->last_layer; l++) {
		const struct ffn_layer *ly = ffn_model_layer(m, l);
		bool kq;

		FZ_CHECK(ly != NULL);
		nf = index_nf(idx, l);
		FZ_CHECK(nf > 0 && nf == ly->nf);
		kq = ly->layout == FFN_LAYOUT_Q4K;
		FZ_CHECK(ly->layout == in->layout);
		touch_mat(&ly->gate, kq, ly->nf, in->hidden);
		touch_mat(&ly->up, kq, ly->nf, in->hidden);
		if (kq)
			touch_mat(&ly->down, kq, in->hidden, ly->nf);
		else
			touch_mat(&ly->down, kq, ly->nf, in->hidden);
		if (ly->nf > maxf)
			maxf = ly->nf;
	}
	FZ_CHECK(in->max_features == maxf);
	json_object_put(idx);
}

static void
load_once(const struct ffn_load_opts *o)
{
	struct ffn_model *m = NULL;
	char err[512];
	int fd0 = probe_fd(), rc;

	err[0] = '\0';
	rc = ffn_model_load(dir, o, &m, err, sizeof(err));
	if (verbose)		/* FUZZ_VERBOSE=1: what each load said */
		fprintf(stderr, "placement %d layout %d layers %d..%d: %d %s\n",
			o->placement, o->layout, o->first_layer,
			o->last_layer, rc, rc == 0 ? "loaded" : err);
	if (rc == 0) {
		FZ_CHECK(m != NULL);
		check_model(m, o);
		ffn_model_free(m);
	} else {
		FZ_CHECK((rc <= FFN_ERR_IO && rc >= FFN_ERR_NUMA) ||
			 (rc < 0 && rc > -4096));
		FZ_CHECK(m == NULL);
		FZ_CHECK(err[0] != '\0');
		FZ_CHECK(memchr(err, '\0', sizeof(err)) != NULL);
		FZ_CHECK(ffn_strerror(rc) != NULL);
	}
	FZ_CHECK(probe_fd() == fd0);
	check_no_maps();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum ffn_layout layouts[5] = {
		FFN_LAYOUT_AUTO, FFN_LAYOUT_INTERLEAVED,
		FFN_LAYOUT_FEATURE_MAJOR, FFN_LAYOUT_Q4K, FFN_LAYOUT_DENSE,
	};
	struct fz f = { data, size };
	uint8_t c0 = fz_u8(&f), c1 = fz_u8(&f), c2 = fz_u8(&f);
	struct ffn_load_opts o;
	unsigned int place = (c0 >> 4) & 3;

	clear_dir();
	unpack(&f);

	ffn_load_opts_default(&o);
	o.first_layer = c1 == 0xff ? -1 : c1;
	o.last_layer = c2 == 0xff ? -1 : c2;
	o.numa_node = -1;
	o.no_hugepages = 1;
	o.layout = layouts[(c0 & 7) % 5];
	o.q6k_ggml = (c0 >> 3) & 1;
	if (place != 2) {
		o.placement = FFN_PLACE_COPY;
		load_once(&o);
	}
	if (place != 1) {
		o.placement = FFN_PLACE_MMAP;
		load_once(&o);
	}
	return 0;
}
