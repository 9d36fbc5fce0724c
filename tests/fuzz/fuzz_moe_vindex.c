/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * libFuzzer harness: the expert-weight loader of lib/ffn (spec/moe.md
 * §5, ffn_moe.h): index.json's MoE keys, the pre-experts norms of
 * weight_manifest.json (§5.2), the LYRW layer files (§5.3, ffn_moe_load.c,
 * ffn_moe_kind.c), the ownership readers (--experts A-B and the --units
 * JSON, ffn_moe_own.c), and, when a load succeeds, one layer batch
 * (ffn_moe_mix, f32 and Q8_K inputs) on what was placed.
 *
 * Input: the fuzz-vindex container (tests/fuzz/fuzz_vindex.c says how
 * files are packed; tools/fuzz/vindex-pack.py --subdirs packs a MoE
 * vindex), with names also allowed under "layers/", then:
 *   c[0] bits 0-1 ownership: 0 none given (every expert), 1 the range
 *        text "units.json" holds (ffn_moe_own_range; if refused, the
 *        range c[1]-c[2]), 2 the --units file "units.json"
 *        (ffn_moe_own_units; if refused, no load), 3 FFN_MOE_OWN_ALL;
 *        bit 2 placement (0 copy, 1 mmap); bit 3 the mix adds a pair of
 *        an expert not held; bits 4-7 the mix's layer
 *   c[1], c[2] the range of ownership 1's fallback, in either order
 *
 * Checked: every reader returns 0 or a negative code with a message; an
 * ownership read from text or a units file is well formed (ranges in
 * order, per-layer offsets monotone) and owns what the file lists; a
 * loaded model reports index.json's dimensions, holds only owned experts
 * of existing layer files (and counts them), refuses the rest; copy
 * placement leaves no mapping of the files, and after ffn_moe_free()
 * none remains and no descriptor leaked; ffn_moe_mix computes held
 * experts (ASan sees every byte read) and refuses a pair not held with
 * -ERANGE and its index.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "ffn.h"
#include "ffn_moe.h"
#include "fuzz_util.h"

#define MAX_FILE (1u << 20)
#define MAX_NAMES 32
#define LAYERS "layers/"
#define LAYERS_LEN 7

static char dir[64];
static char names[MAX_NAMES][80];
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
	char p[96];

	clear_dir();
	snprintf(p, sizeof(p), "%s/layers", dir);
	rmdir(p);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char p[96];

	(void)argc;
	(void)argv;
	fz_scratch_dir(dir, sizeof(dir), "moe-vindex");
	snprintf(p, sizeof(p), "%s/layers", dir);
	FZ_CHECK(mkdir(p, 0700) == 0);
	atexit(cleanup);
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	fillbuf = malloc(MAX_FILE);
	FZ_CHECK(fillbuf != NULL);
	return 0;
}

/* A file name: [A-Za-z0-9._-]{1,64}, not starting with '.', optionally
 * under "layers/" (nothing outside the scratch directory is written). */
static bool
name_ok(const uint8_t *s, size_t n)
{
	if (n > LAYERS_LEN && memcmp(s, LAYERS, LAYERS_LEN) == 0) {
		s += LAYERS_LEN;
		n -= LAYERS_LEN;
	}
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

/* The container after the control bytes (fuzz_vindex.c's format). */
static void
unpack(struct fz *f)
{
	uint32_t budget = 2 * MAX_FILE;

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

static int
probe_fd(void)
{
	int fd = open("/dev/null", O_RDONLY);

	FZ_CHECK(fd >= 0);
	close(fd);
	return fd;
}

/* Whether a scratch file is mapped. */
static bool
mapped(void)
{
	char line[512];
	bool any = false;
	FILE *mf = fopen("/proc/self/maps", "r");

	FZ_CHECK(mf != NULL);
	while (fgets(line, sizeof(line), mf) != NULL)
		if (strstr(line, dir) != NULL) {
			if (verbose)
				fprintf(stderr, "mapped: %s", line);
			any = true;
		}
	fclose(mf);
	return any;
}

static void
check_err(int rc, const char *err, size_t cap)
{
	FZ_CHECK(rc < 0);
	FZ_CHECK(memchr(err, '\0', cap) != NULL);
	FZ_CHECK(err[0] != '\0');
}

/* An ownership read from text or a file: well formed. */
static void
check_own(const struct ffn_moe_own *o)
{
	if (o->kind == FFN_MOE_OWN_RANGE) {
		FZ_CHECK(o->first <= o->last);
		FZ_CHECK(ffn_moe_own_has(o, 0, o->first));
		FZ_CHECK(ffn_moe_own_has(o, 7, o->last));
		return;
	}
	FZ_CHECK(o->kind == FFN_MOE_OWN_UNITS);
	FZ_CHECK(o->off != NULL && o->r != NULL);
	FZ_CHECK(o->off[0] == 0);
	for (uint32_t L = 0; L < o->n_layers; L++) {
		FZ_CHECK(o->off[L] <= o->off[L + 1]);
		for (uint32_t i = o->off[L]; i < o->off[L + 1]; i++) {
			FZ_CHECK(o->r[i].first <= o->r[i].last);
			FZ_CHECK(ffn_moe_own_has(o, L, o->r[i].first));
			FZ_CHECK(ffn_moe_own_has(o, L, o->r[i].last));
		}
	}
	FZ_CHECK(!ffn_moe_own_has(o, o->n_layers, 0));
}

/* The units file's layer_experts, as json-c reads it: each listed range
 * is owned (what ffn_moe_own_units() accepted). */
static void
check_units_file(const struct ffn_moe_own *o, const char *path)
{
	json_object *root = json_object_from_file(path), *le;

	FZ_CHECK(root != NULL);
	FZ_CHECK(json_object_object_get_ex(root, "layer_experts", &le));
	json_object_object_foreach(le, key, val) {
		uint32_t L = (uint32_t)strtoul(key, NULL, 10);

		for (size_t i = 0; i < json_object_array_length(val); i++) {
			json_object *p = json_object_array_get_idx(val, i);
			int64_t a = json_object_get_int64(
				json_object_array_get_idx(p, 0));
			int64_t b = json_object_get_int64(
				json_object_array_get_idx(p, 1));

			FZ_CHECK(ffn_moe_own_has(o, L, (uint32_t)a));
			FZ_CHECK(ffn_moe_own_has(o, L, (uint32_t)b));
			FZ_CHECK(ffn_moe_own_has(o, L, (uint32_t)(a +
						 (b - a) / 2)));
		}
	}
	json_object_put(root);
}

/* The ownership c[0] asks for: 0 with *own (NULL: none given), or -1
 * when it cannot be had (ownership 2, a refused units file). */
static int
ownership(uint8_t c0, uint8_t c1, uint8_t c2, struct ffn_moe_own *o,
	  const struct ffn_moe_own **own)
{
	char path[96], err[512], text[128];
	int rc;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/units.json", dir);
	err[0] = '\0';
	*own = NULL;
	memset(o, 0, sizeof(*o));
	switch (c0 & 3) {
	case 0:
		return 0;
	case 1:
		f = fopen(path, "r");
		n = f != NULL ? fread(text, 1, sizeof(text) - 1, f) : 0;
		if (f != NULL)
			fclose(f);
		text[n] = '\0';
		rc = ffn_moe_own_range(o, text, err, sizeof(err));
		if (rc == 0) {
			check_own(o);
		} else {
			check_err(rc, err, sizeof(err));
			o->kind = FFN_MOE_OWN_RANGE;
			o->first = c1 < c2 ? c1 : c2;
			o->last = c1 < c2 ? c2 : c1;
		}
		*own = o;
		return 0;
	case 2:
		rc = ffn_moe_own_units(o, path, err, sizeof(err));
		if (verbose)
			fprintf(stderr, "units: %d %s\n", rc, err);
		if (rc != 0) {
			check_err(rc, err, sizeof(err));
			FZ_CHECK(rc == -EINVAL || rc == -ENOENT ||
				 rc == -ENOMEM);
			return -1;
		}
		check_own(o);
		check_units_file(o, path);
		*own = o;
		return 0;
	default:
		o->kind = FFN_MOE_OWN_ALL;
		*own = o;
		return 0;
	}
}

static json_object *
read_index(void)
{
	char p[160];

	snprintf(p, sizeof(p), "%s/index.json", dir);
	return json_object_from_file(p);
}

static int64_t
jint(json_object *o, const char *k)
{
	json_object *x;

	if (o == NULL || !json_object_object_get_ex(o, k, &x) ||
	    !json_object_is_type(x, json_type_int))
		return -1;
	return json_object_get_int64(x);
}

static bool
layer_file(uint32_t L)
{
	char p[160];
	struct stat st;

	snprintf(p, sizeof(p), "%s/layers/layer_%02u.weights", dir, L);
	return stat(p, &st) == 0;
}

/* A loaded model: what index.json says, held = owned and present. */
static void
check_model(const struct ffn_moe *m, const struct ffn_moe_own *own)
{
	const struct ffn_moe_info *in = ffn_moe_info(m);
	json_object *idx = read_index(), *mc = NULL, *moe = NULL;
	uint64_t held = 0;
	/* every (layer, expert) when that is not too many to walk */
	bool all = (uint64_t)in->num_layers * in->num_experts <= 1u << 16;
	uint32_t nl = all ? in->num_layers : 4, ne = all ? in->num_experts : 64;

	FZ_CHECK(in != NULL && idx != NULL);
	FZ_CHECK(json_object_object_get_ex(idx, "model_config", &mc));
	FZ_CHECK(json_object_object_get_ex(mc, "moe", &moe));
	FZ_CHECK(jint(idx, "hidden_size") == in->hidden);
	FZ_CHECK(jint(idx, "num_layers") == in->num_layers);
	FZ_CHECK(jint(moe, "num_experts") == in->num_experts);
	FZ_CHECK(jint(moe, "moe_intermediate_size") == in->width);
	FZ_CHECK(in->hidden > 0 && in->num_experts > 0 && in->width > 0);
	FZ_CHECK(in->kind != NULL);
	for (uint32_t L = 0; L < nl && L < in->num_layers; L++) {
		bool file = layer_file(L);

		FZ_CHECK(ffn_moe_has_layer(m, L) == file);
		for (uint32_t e = 0; e < ne && e < in->num_experts; e++) {
			bool h = ffn_moe_held(m, L, e);

			if (h)
				FZ_CHECK(file && ffn_moe_own_has(own, L, e));
			else if (file)
				FZ_CHECK(!ffn_moe_own_has(own, L, e));
			held += h;
		}
	}
	FZ_CHECK(all ? held == in->experts_loaded :
		 held <= in->experts_loaded);
	FZ_CHECK(!ffn_moe_held(m, in->num_layers, 0));
	FZ_CHECK(!ffn_moe_held(m, 0, in->num_experts));
	FZ_CHECK(!ffn_moe_has_layer(m, in->num_layers));
	json_object_put(idx);
}

/* One layer batch over the layer's first held experts (f32 input, then
 * Q8_K when H takes whole blocks); with a pair not held, -ERANGE. */
static void
mix(const struct ffn_moe *m, uint8_t c0)
{
	const struct ffn_moe_info *in = ffn_moe_info(m);
	uint32_t H = in->hidden, L = (c0 >> 4) % (in->num_layers + 1);
	struct ffn_moe_pair p[9];
	struct ffn_moe_scratch *s;
	unsigned int k = 0, bad = ~0u, nb = H / 256;
	float *h, *out;
	uint8_t *hq;
	int rc;

	for (uint32_t e = 0; e < in->num_experts && k < 4; e++)
		if (ffn_moe_held(m, L, e)) {
			p[k] = (struct ffn_moe_pair){ e, 0.5f - (float)k };
			k++;
		}
	if (c0 & 8)
		for (uint32_t e = 0; e <= in->num_experts; e++)
			if (!ffn_moe_held(m, L, e)) {
				p[k++] = (struct ffn_moe_pair){ e, 0.25f };
				break;
			}
	s = ffn_moe_scratch_new(m, 1, -1);
	h = malloc((size_t)H * sizeof(float));
	out = malloc((size_t)H * sizeof(float));
	hq = calloc(nb ? nb : 1, 256 + 4 + 32);
	FZ_CHECK(s != NULL && h != NULL && out != NULL && hq != NULL);
	for (uint32_t i = 0; i < H; i++)
		h[i] = (float)((int)(i % 17) - 8) / 8.0f;
	ffn_moe_norm(m, L, h, h);
	for (uint32_t b = 0; b < nb; b++) {
		float d = 1.0f / 64.0f;

		for (uint32_t i = 0; i < 256; i++)
			hq[256 * b + i] = (uint8_t)(int8_t)((int)(i % 9) - 4);
		memcpy(hq + 256 * nb + 4 * b, &d, 4);
	}
	for (int q8k = 0; q8k <= (nb > 0 && H % 256 == 0); q8k++) {
		rc = ffn_moe_mix(m, L, h, q8k ? hq : NULL, p, k, out, &bad,
				 s);
		if (c0 & 8 && k > 0 && !ffn_moe_held(m, L, p[k - 1].expert)) {
			FZ_CHECK(rc == -ERANGE && bad == k - 1);
		} else {
			FZ_CHECK(rc == 0);
		}
	}
	if (H % 256 != 0)	/* Q8_K rows need whole blocks */
		FZ_CHECK(ffn_moe_mix(m, L, h, hq, p, 0, out, &bad, s) ==
			 -EINVAL);
	ffn_moe_scratch_free(s);
	free(h);
	free(out);
	free(hq);
}

static void
load_once(uint8_t c0, const struct ffn_moe_own *own)
{
	struct ffn_moe_load_opts o = {
		.own = own, .numa_node = -1, .no_hugepages = 1,
		.placement = c0 & 4 ? FFN_PLACE_MMAP : FFN_PLACE_COPY,
	};
	struct ffn_moe *m = NULL;
	char err[512];
	int fd0 = probe_fd(), rc;

	err[0] = '\0';
	rc = ffn_moe_load(dir, &o, &m, err, sizeof(err));
	if (verbose)
		fprintf(stderr, "load (%s): %d %s\n",
			c0 & 4 ? "mmap" : "copy", rc, rc == 0 ? "loaded" : err);
	if (rc == 0) {
		FZ_CHECK(m != NULL);
		FZ_CHECK(ffn_moe_info(m)->placement == o.placement);
		check_model(m, own);
		if (o.placement == FFN_PLACE_COPY)
			FZ_CHECK(!mapped());
		mix(m, c0);
		ffn_moe_free(m);
	} else {
		FZ_CHECK((rc <= FFN_ERR_IO && rc >= FFN_ERR_NUMA) ||
			 (rc < 0 && rc > -4096));
		FZ_CHECK(m == NULL);
		check_err(rc, err, sizeof(err));
	}
	FZ_CHECK(probe_fd() == fd0);
	FZ_CHECK(!mapped());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	uint8_t c0 = fz_u8(&f), c1 = fz_u8(&f), c2 = fz_u8(&f);
	const struct ffn_moe_own *own;
	struct ffn_moe_own o;
	char err[256];

	clear_dir();
	unpack(&f);
	if (ownership(c0, c1, c2, &o, &own) == 0)
		load_once(c0, own);
	/* the hybrid test reads index.json alone */
	err[0] = '\0';
	if (ffn_moe_is_hybrid(dir, err, sizeof(err)) < 0)
		FZ_CHECK(err[0] != '\0');
	if (o.kind == FFN_MOE_OWN_UNITS)
		ffn_moe_own_free(&o);
	return 0;
}
