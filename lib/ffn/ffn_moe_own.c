/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Which experts a shard owns (spec/moe.md §2 "Ownership"): all of them,
 * ids A..=B in every layer (--experts A-B), or per layer ranges read from
 * the reference's --units JSON file.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ffn_moe.h"

/* Layer keys of a units file above this are refused: the ownership
 * keeps an offset per layer up to the largest. */
#define OWN_MAX_LAYER 65535u

static int
own_fail(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
own_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

static const char *
skip_spaces(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* A decimal number < 2^32 at *p (advanced past it): 0, or -1 (no digit),
 * -2 (too large). */
static int
parse_u32(const char **p, uint32_t *v)
{
	const char *s = *p;
	uint64_t n = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		n = n * 10 + (uint64_t)(*s - '0');
		if (n > UINT32_MAX)
			return -2;
	}
	*p = s;
	*v = (uint32_t)n;
	return 0;
}

int
ffn_moe_own_range(struct ffn_moe_own *o, const char *text, char *err,
		  size_t errlen)
{
	const char *p;
	uint32_t a, b;
	int rc;

	if (o == NULL || text == NULL)
		return own_fail(err, errlen, -EINVAL, "no expert range given");
	p = skip_spaces(text);
	if (*p == '\0')
		return own_fail(err, errlen, -EINVAL,
				"expert range '%s': empty (want A-B or A)",
				text);
	rc = parse_u32(&p, &a);
	if (rc < 0)
		return own_fail(err, errlen, -EINVAL, rc == -2 ?
				"expert range '%s': start is not below 2^32" :
				"expert range '%s': start is not a number (want A-B or A)",
				text);
	p = skip_spaces(p);
	b = a;
	if (*p == '-') {
		p = skip_spaces(p + 1);
		rc = parse_u32(&p, &b);
		if (rc < 0)
			return own_fail(err, errlen, -EINVAL, rc == -2 ?
					"expert range '%s': end is not below 2^32" :
					"expert range '%s': end is not a number (want A-B)",
					text);
		p = skip_spaces(p);
	}
	if (*p != '\0')
		return own_fail(err, errlen, -EINVAL,
				"expert range '%s': unexpected '%c' (want A-B or A)",
				text, *p);
	if (a > b)
		return own_fail(err, errlen, -EINVAL,
				"expert range '%s': start %u > end %u", text,
				a, b);
	memset(o, 0, sizeof(*o));
	o->kind = FFN_MOE_OWN_RANGE;
	o->first = a;
	o->last = b;
	return 0;
}

/* One layer's range, gathered before the per-layer arrays are built. */
struct unit {
	uint32_t layer;
	struct ffn_moe_range r;
};

/* The [start, end] pair at v: two integers in 0..2^32-1, start <= end. */
static int
parse_pair(const char *path, const char *key, size_t i, json_object *v,
	   struct ffn_moe_range *r, char *err, size_t errlen)
{
	int64_t a, b;

	if (!json_object_is_type(v, json_type_array) ||
	    json_object_array_length(v) != 2 ||
	    !json_object_is_type(json_object_array_get_idx(v, 0),
				 json_type_int) ||
	    !json_object_is_type(json_object_array_get_idx(v, 1),
				 json_type_int))
		return own_fail(err, errlen, -EINVAL,
				"%s: layer_experts.\"%s\"[%zu]: not a pair [start, end] of integers",
				path, key, i);
	a = json_object_get_int64(json_object_array_get_idx(v, 0));
	b = json_object_get_int64(json_object_array_get_idx(v, 1));
	if (a < 0 || b < 0 || a > UINT32_MAX || b > UINT32_MAX)
		return own_fail(err, errlen, -EINVAL,
				"%s: layer_experts.\"%s\"[%zu]: [%lld, %lld] not in 0..4294967295",
				path, key, i, (long long)a, (long long)b);
	if (b < a)
		return own_fail(err, errlen, -EINVAL,
				"%s: layer_experts.\"%s\"[%zu]: end %lld < start %lld",
				path, key, i, (long long)b, (long long)a);
	r->first = (uint32_t)a;
	r->last = (uint32_t)b;
	return 0;
}

/* A layer key: decimal digits only (spec/moe.md §2). */
static int
parse_layer_key(const char *path, const char *key, uint32_t *layer,
		char *err, size_t errlen)
{
	const char *p = key;
	uint32_t v;

	if (parse_u32(&p, &v) < 0 || *p != '\0')
		return own_fail(err, errlen, -EINVAL,
				"%s: layer_experts: key \"%s\" is not a decimal layer number",
				path, key);
	if (v > OWN_MAX_LAYER)
		return own_fail(err, errlen, -EINVAL,
				"%s: layer_experts: layer %u > %u", path, v,
				OWN_MAX_LAYER);
	*layer = v;
	return 0;
}

/* Per-layer arrays from the gathered units (counting sort by layer). */
static int
own_build(struct ffn_moe_own *o, const struct unit *u, size_t n)
{
	uint32_t nl = 0, L, *at;
	size_t i;

	for (i = 0; i < n; i++)
		if (u[i].layer + 1 > nl)
			nl = u[i].layer + 1;
	memset(o, 0, sizeof(*o));
	o->kind = FFN_MOE_OWN_UNITS;
	o->n_layers = nl;
	o->off = calloc((size_t)nl + 1, sizeof(*o->off));
	o->r = malloc((n ? n : 1) * sizeof(*o->r));
	at = calloc((size_t)nl + 1, sizeof(*at));
	if (o->off == NULL || o->r == NULL || at == NULL) {
		free(at);
		ffn_moe_own_free(o);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		o->off[u[i].layer + 1]++;
	for (L = 0; L < nl; L++)
		o->off[L + 1] += o->off[L];
	for (i = 0; i < n; i++) {
		L = u[i].layer;
		o->r[o->off[L] + at[L]++] = u[i].r;
	}
	free(at);
	return 0;
}

static int
units_read(const char *path, json_object *root, struct unit **out,
	   size_t *nout, char *err, size_t errlen)
{
	json_object *le;
	struct unit *u = NULL;
	size_t n = 0, cap = 0, i, len;
	int rc;

	if (!json_object_is_type(root, json_type_object))
		return own_fail(err, errlen, -EINVAL,
				"%s: not a JSON object", path);
	if (!json_object_object_get_ex(root, "layer_experts", &le) ||
	    !json_object_is_type(le, json_type_object))
		return own_fail(err, errlen, -EINVAL,
				"%s: no \"layer_experts\" object", path);
	json_object_object_foreach(le, key, val) {
		uint32_t layer = 0;

		rc = parse_layer_key(path, key, &layer, err, errlen);
		if (rc < 0)
			goto out;
		if (!json_object_is_type(val, json_type_array)) {
			rc = own_fail(err, errlen, -EINVAL,
				      "%s: layer_experts.\"%s\": not a list of [start, end] ranges",
				      path, key);
			goto out;
		}
		len = json_object_array_length(val);
		for (i = 0; i < len; i++) {
			if (n == cap) {
				struct unit *nu;

				cap = cap ? 2 * cap : 16;
				nu = realloc(u, cap * sizeof(*u));
				if (nu == NULL) {
					rc = -ENOMEM;
					goto out;
				}
				u = nu;
			}
			rc = parse_pair(path, key, i,
					json_object_array_get_idx(val, i),
					&u[n].r, err, errlen);
			if (rc < 0)
				goto out;
			u[n++].layer = layer;
		}
	}
	*out = u;
	*nout = n;
	return 0;
out:
	free(u);
	return rc;
}

int
ffn_moe_own_units(struct ffn_moe_own *o, const char *path, char *err,
		  size_t errlen)
{
	json_object *root;
	struct unit *u = NULL;
	size_t n = 0;
	int rc;

	if (o == NULL || path == NULL)
		return own_fail(err, errlen, -EINVAL, "no units file given");
	if (access(path, R_OK) != 0) {
		rc = -errno;
		return own_fail(err, errlen, rc == -ENOENT ? -ENOENT : -EINVAL,
				"%s: cannot open: %s", path, strerror(-rc));
	}
	root = json_object_from_file(path);
	if (root == NULL)
		return own_fail(err, errlen, -EINVAL, "%s: not JSON: %s", path,
				json_util_get_last_err() ?
				json_util_get_last_err() : "parse error");
	rc = units_read(path, root, &u, &n, err, errlen);
	json_object_put(root);
	if (rc < 0) {
		if (rc == -ENOMEM)
			own_fail(err, errlen, rc, "%s: out of memory", path);
		return rc;
	}
	rc = own_build(o, u, n);
	free(u);
	if (rc < 0)
		return own_fail(err, errlen, rc, "%s: out of memory", path);
	return 0;
}

void
ffn_moe_own_free(struct ffn_moe_own *o)
{
	if (o == NULL)
		return;
	free(o->off);
	free(o->r);
	memset(o, 0, sizeof(*o));
	o->kind = FFN_MOE_OWN_ALL;
}

bool
ffn_moe_own_has(const struct ffn_moe_own *o, uint32_t layer, uint32_t e)
{
	uint32_t i;

	if (o == NULL)
		return true;
	switch (o->kind) {
	case FFN_MOE_OWN_ALL:
		return true;
	case FFN_MOE_OWN_RANGE:
		return e >= o->first && e <= o->last;
	case FFN_MOE_OWN_UNITS:
		if (layer >= o->n_layers || o->off == NULL)
			return false;
		for (i = o->off[layer]; i < o->off[layer + 1]; i++)
			if (e >= o->r[i].first && e <= o->r[i].last)
				return true;
		return false;
	}
	return false;
}
