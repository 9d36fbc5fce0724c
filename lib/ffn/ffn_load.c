/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Loading a LARQL vindex (spec/vindex.md): index.json, the choice of the
 * weight kind (ffn_kind.h: a payload of §2), then that kind's load for
 * the owned layers. Every failure names the file, the layer and the key
 * at fault.
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cblas.h>

#include "ffn_kind.h"
#include "ffn_load_priv.h"
#include "ffn_priv.h"

static int
file_exists(const struct ld *l, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", l->dir, name);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
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
	if (s != NULL && strcmp(s, "none") != 0) {
		l->only = ffn_kind_quant(s);
		if (l->only == NULL)
			return fail(l, FFN_ERR_KEY,
				    "index.json: key 'quant': unknown value '%s'",
				    s);
	}

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

static int
kind_present(const struct ld *l, const struct ffn_kind *k)
{
	unsigned i;

	for (i = 0; k->files[i] != NULL; i++)
		if (!file_exists(l, k->files[i]))
			return 0;
	return 1;
}

/* No kind's files are all there: name what each would need. */
static int
fail_no_payload(struct ld *l)
{
	char need[512], one[160];
	size_t at = 0;
	unsigned i;

	need[0] = '\0';
	for (i = 0; i < ffn_n_kinds && at < sizeof(need); i++) {
		ffn_kind_files(&ffn_kinds[i], 1, one, sizeof(one));
		at += (size_t)snprintf(need + at, sizeof(need) - at, "%s%s",
				       i ? ", or " : "", one);
	}
	return fail(l, FFN_ERR_PAYLOAD, "%s: no FFN payload: need %s", l->dir,
		    need);
}

/* §2: the kind index.json's "quant" requires, the one forced, or under
 * AUTO the first (ffn_kinds[] is in §2's order) whose files are there. */
static int
choose_kind(struct ld *l)
{
	enum ffn_layout want = l->o->layout;
	const struct ffn_kind *k = NULL;
	unsigned i;

	if (l->only != NULL) {
		if (want != FFN_LAYOUT_AUTO && want != l->only->layout) {
			char files[160];

			ffn_kind_files(l->only, 0, files, sizeof(files));
			return fail(l, l->only->err,
				    "index.json: quant '%s': only %s can serve this vindex (layout '%s' requested)",
				    l->only->quant, files,
				    ffn_layout_name(want));
		}
		k = l->only;
	} else if (want == FFN_LAYOUT_AUTO) {
		for (i = 0; i < ffn_n_kinds && k == NULL; i++)
			if (kind_present(l, &ffn_kinds[i]))
				k = &ffn_kinds[i];
		if (k == NULL)
			return fail_no_payload(l);
	} else {
		k = ffn_kind_of(want);
		if (k == NULL)
			return fail(l, -EINVAL, "unknown layout %d requested",
				    (int)want);
	}
	l->kind = k;
	l->m->info.layout = k->layout;
	l->m->eng = k->eng;
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

/* index.json of l->dir into l->idx (also the expert loader's,
 * ffn_moe_load.c). */
int
ffn_load_read_index(struct ld *l)
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
	rc = ffn_load_read_index(&l);
	if (!rc)
		rc = parse_model(&l);
	if (!rc)
		rc = parse_dims(&l);
	if (!rc)
		rc = check_layers(&l);
	if (!rc)
		rc = choose_kind(&l);
	if (!rc) {
		l.m->layers = calloc(l.m->info.last_layer -
				     l.m->info.first_layer + 1,
				     sizeof(*l.m->layers));
		rc = l.m->layers ? 0 :
			fail(&l, FFN_ERR_NOMEM, "out of memory");
	}
	if (!rc)
		rc = l.kind->load(&l);
	ld_release(&l);
	if (rc) {
		ffn_model_free(l.m);
		return rc;
	}
	l.m->engine = FFN_ENGINE_AUTO;
	l.m->blas_min_rows = 0;	/* see ffn_dense.c: FFN_BLAS_MIN_ROWS_DEFAULT */
	*out = l.m;
	return 0;
}
