/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * The JSON path of the front (spec/wire.md §6, §7): the request's layers
 * grouped by owner, a sub-request body per owner, and the merge of the
 * shards' answers as the reference router does it. The client's members
 * and the shards' results are copied byte for byte, so this needs no DOM:
 * a small strict scanner finds the top-level members and the extent of
 * each value. Plain C.
 */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_frame.h"
#include "front_frame_priv.h"

/* ---- plan --------------------------------------------------------------- */

int
front_json_plan(struct front_json_plan *jp, const uint64_t *layers, size_t n,
		const struct front_layout *l, const struct front_alloc *a,
		struct wire_error *err)
{
	int sub_of[FRONT_MAX_RANGES];
	uint32_t *m, *w;

	memset(jp, 0, sizeof(*jp));
	if (n == 0)
		return wire_error_set(err, 400, "empty layer list");
	for (unsigned int r = 0; r < FRONT_MAX_RANGES; r++)
		sub_of[r] = -1;
	for (size_t i = 0; i < n; i++) {
		int r = layers[i] > UINT32_MAX ? -1 :
			front_layout_owner(l, (uint32_t)layers[i]);

		if (r < 0) {
			unsigned int k = l->n > FRONT_MAX_RANGES ?
					 FRONT_MAX_RANGES : l->n;

			return wire_error_set(err, 400,
				"layer %" PRIu64 " out of range (num_layers = %llu)",
				layers[i], k == 0 ? 0ULL :
				(unsigned long long)l->last[k - 1] + 1);
		}
		if (sub_of[r] < 0) {
			sub_of[r] = (int)jp->n_sub;
			jp->range[jp->n_sub++] = (unsigned int)r;
		}
		jp->n_layers[sub_of[r]]++;
	}
	if (n > SIZE_MAX / sizeof(uint32_t))
		return -ENOMEM;
	m = a->alloc(a->arg, n * sizeof(uint32_t));
	if (m == NULL)
		return -ENOMEM;
	jp->mem = m;
	w = m;
	for (unsigned int s = 0; s < jp->n_sub; s++) {
		jp->layers[s] = w;
		w += jp->n_layers[s];
		jp->n_layers[s] = 0;	/* refilled below */
	}
	for (size_t i = 0; i < n; i++) {
		unsigned int s = (unsigned int)sub_of[front_layout_owner(l,
						(uint32_t)layers[i])];

		jp->layers[s][jp->n_layers[s]++] = (uint32_t)layers[i];
	}
	return 0;
}

void
front_json_plan_free(struct front_json_plan *jp, const struct front_alloc *a)
{
	if (jp->mem != NULL)
		a->free(a->arg, jp->mem);
	memset(jp, 0, sizeof(*jp));
}

/* ---- sub-request body --------------------------------------------------- */

static size_t
put_layers(char *o, const uint32_t *layers, uint32_t n)
{
	size_t k = 0;

	if (n == 1)
		return (size_t)sprintf(o, "\"layer\":%" PRIu32, layers[0]);
	k += (size_t)sprintf(o, "\"layers\":[");
	for (uint32_t i = 0; i < n; i++)
		k += (size_t)sprintf(o + k, i ? ",%" PRIu32 : "%" PRIu32,
				     layers[i]);
	o[k++] = ']';
	return k;
}

int
front_json_sub_body(const char *body, size_t len, const uint32_t *layers,
		    uint32_t n, const struct front_alloc *a, char **out,
		    size_t *out_len)
{
	struct front_jscan s = { body, len, 0 };
	struct front_jmember m;
	size_t cap, k;
	char *o;
	int rc;

	/* check the whole object before anything is written */
	if (front_jopen(&s) != 0)
		return -EINVAL;
	for (bool first = true; (rc = front_jnext(&s, first, &m)) == 1;)
		first = false;
	if (rc != 0 || front_jend(&s) != 0)
		return -EINVAL;

	/* every member kept is a piece of the body and a comma, and the
	 * layer list is at most 11 bytes a layer plus its key and braces */
	if (n > (SIZE_MAX - len - 32) / 11)
		return -ENOMEM;
	cap = len + 32 + 11 * (size_t)n;
	o = a->alloc(a->arg, cap);
	if (o == NULL)
		return -ENOMEM;
	o[0] = '{';
	k = 1 + put_layers(o + 1, layers, n);
	s.i = 0;
	front_jopen(&s);
	for (bool first = true; front_jnext(&s, first, &m) == 1;
	     first = false) {
		size_t span = m.val + m.val_len - m.key;

		if (front_jkey_is(body, &m, "layer") ||
		    front_jkey_is(body, &m, "layers"))
			continue;	/* replaced by the one added */
		o[k++] = ',';
		memcpy(o + k, body + m.key, span);
		k += span;
	}
	o[k++] = '}';
	o[k] = '\0';
	*out = o;
	*out_len = k;
	return 0;
}

/* ---- merge of the answers (§7) ------------------------------------------ */

struct jelem {
	const char *p;
	size_t len;
	uint64_t layer;
	size_t idx;		/**< arrival order, for a stable sort */
};

static int
jelem_cmp(const void *x, const void *y)
{
	const struct jelem *a = x, *b = y;

	if (a->layer != b->layer)
		return a->layer < b->layer ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The "layer" of a result element as the router sorts by it:
 * v["layer"].as_u64().unwrap_or(0); the last one when a key repeats (a
 * serde map keeps the last). */
static uint64_t
jelem_layer(const char *p, size_t len)
{
	struct front_jscan s = { p, len, 0 };
	struct front_jmember m;
	uint64_t layer = 0;

	if (front_jopen(&s) != 0)
		return 0;	/* not an object: no "layer" */
	for (bool first = true; front_jnext(&s, first, &m) == 1;
	     first = false)
		if (front_jkey_is(p, &m, "layer"))
			layer = front_jas_u64(p + m.val, m.val_len);
	return layer;
}

/*
 * Read one answer (contiguous): its max latency into *lat, its result
 * elements into e (NULL: count only), *n_elem advanced. 0 or a message.
 */
static const char *
scan_answer(const char *b, size_t len, double *lat, struct jelem *e,
	    size_t *n_elem)
{
	struct front_jscan s = { b, len, 0 };
	struct front_jmember m, results = { 0 }, layer = { 0 }, latency = { 0 };
	bool has_results = false, has_layer = false, has_lat = false;
	size_t start, end;
	char c;
	int rc;

	front_jws(&s);
	start = s.i;
	if (front_jopen(&s) != 0)
		return "not a JSON object";
	for (bool first = true; (rc = front_jnext(&s, first, &m)) == 1;
	     first = false) {
		/* the last of a repeated key, as a serde map keeps it */
		if (front_jkey_is(b, &m, "results")) {
			results = m;
			has_results = true;
		} else if (front_jkey_is(b, &m, "layer")) {
			layer = m;
			has_layer = true;
		} else if (front_jkey_is(b, &m, "latency_ms")) {
			latency = m;
			has_lat = true;
		}
	}
	end = s.i;
	if (rc != 0 || front_jend(&s) != 0)
		return "invalid JSON";

	/* latency: v["latency_ms"].as_f64(): any JSON number, else none */
	c = has_lat ? b[latency.val] : '\0';
	if (c == '-' || (c >= '0' && c <= '9')) {
		/* the object goes on after the number, so strtod stops
		 * where the scanner did (JSON numbers are strtod ones);
		 * serde refuses what does not fit an f64 */
		double v = strtod(b + latency.val, NULL);

		if (!isfinite(v))
			return "latency_ms out of range";
		if (v > *lat)
			*lat = v;
	}

	if (has_results && b[results.val] == '[') {
		struct front_jscan a = { b, results.val + results.val_len,
				   results.val + 1 };

		front_jws(&a);
		if (front_jat(&a, ']'))
			return NULL;
		for (;;) {
			size_t v = a.i;

			front_jvalue(&a, 1);	/* front_jnext checked it */
			if (e != NULL) {
				e[*n_elem].p = b + v;
				e[*n_elem].len = a.i - v;
				e[*n_elem].layer = jelem_layer(b + v, a.i - v);
				e[*n_elem].idx = *n_elem;
			}
			(*n_elem)++;
			front_jws(&a);
			if (!front_jat(&a, ','))
				return NULL;	/* the ']' */
			a.i++;
			front_jws(&a);
		}
	}
	if (!has_layer)
		return "neither results nor layer";
	/* one result answered alone: the whole object is the element */
	if (e != NULL) {
		e[*n_elem].p = b + start;
		e[*n_elem].len = end - start;
		e[*n_elem].layer = front_jas_u64(b + layer.val, layer.val_len);
		e[*n_elem].idx = *n_elem;
	}
	(*n_elem)++;
	return NULL;
}

int
front_json_merge(const struct front_gather *ans, unsigned int n,
		 const struct front_alloc *a, char **out, size_t *out_len,
		 struct wire_error *err, unsigned int *bad)
{
	static const char head[] = "{\"latency_ms\":";
	static const char mid[] = ",\"results\":[";
	const char **view;
	size_t copy = 0, n_elem = 0, size, at, k;
	struct jelem *e;
	double lat = 0.0;	/* fold(0.0, f64::max) */
	char num[32], *scratch, *o;
	int num_len;

	/* Contiguous views of the answers: pieces are copied, one range is
	 * read in place. */
	for (unsigned int i = 0; i < n; i++)
		if (ans[i].n > 1 && __builtin_add_overflow(copy, ans[i].len,
							    &copy))
			return -ENOMEM;
	if (__builtin_mul_overflow((size_t)n, sizeof(*view), &size) ||
	    __builtin_add_overflow(front_align64(size), copy, &size))
		return -ENOMEM;
	scratch = a->alloc(a->arg, size);
	if (scratch == NULL)
		return -ENOMEM;
	view = (const char **)(void *)scratch;
	at = front_align64((size_t)n * sizeof(*view));
	for (unsigned int i = 0; i < n; i++) {
		if (ans[i].n > 1) {
			front_gather_copy(&ans[i], 0, scratch + at,
					  ans[i].len);
			view[i] = scratch + at;
			at += ans[i].len;
		} else {
			view[i] = ans[i].n == 1 ? ans[i].iov[0].iov_base : "";
		}
	}

	/* count (and check) first, then collect */
	for (unsigned int i = 0; i < n; i++) {
		const char *why = scan_answer(view[i], ans[i].len, &lat, NULL,
					      &n_elem);

		if (why != NULL) {
			a->free(a->arg, scratch);
			*bad = i;
			wire_error_set(err, 502, "malformed answer: %s", why);
			return -EPROTO;
		}
	}
	e = NULL;
	if (n_elem > 0) {
		e = n_elem > SIZE_MAX / sizeof(*e) ? NULL :
		    a->alloc(a->arg, n_elem * sizeof(*e));
		if (e == NULL) {
			a->free(a->arg, scratch);
			return -ENOMEM;
		}
	}
	n_elem = 0;
	for (unsigned int i = 0; i < n; i++)
		scan_answer(view[i], ans[i].len, &lat, e, &n_elem);
	/* sort_by_key(layer): stable, the tie broken by arrival */
	if (n_elem > 1)
		qsort(e, n_elem, sizeof(*e), jelem_cmp);

	/* {"latency_ms":M,"results":[...]}: serde's sorted keys, compact;
	 * M = (max * 10).round() / 10, round half away from zero */
	num_len = wire_json_fmt_f64(num, round(lat * 10.0) / 10.0);
	size = sizeof(head) - 1 + (size_t)num_len + sizeof(mid) - 1 + 3;
	for (size_t j = 0; j < n_elem; j++)
		size += e[j].len + 1;	/* an element and its comma */
	o = a->alloc(a->arg, size);
	if (o == NULL) {
		if (e != NULL)
			a->free(a->arg, e);
		a->free(a->arg, scratch);
		return -ENOMEM;
	}
	memcpy(o, head, sizeof(head) - 1);
	k = sizeof(head) - 1;
	memcpy(o + k, num, (size_t)num_len);
	k += (size_t)num_len;
	memcpy(o + k, mid, sizeof(mid) - 1);
	k += sizeof(mid) - 1;
	for (size_t j = 0; j < n_elem; j++) {
		if (j > 0)
			o[k++] = ',';
		memcpy(o + k, e[j].p, e[j].len);
		k += e[j].len;
	}
	o[k++] = ']';
	o[k++] = '}';
	o[k] = '\0';
	if (e != NULL)
		a->free(a->arg, e);
	a->free(a->arg, scratch);
	*out = o;
	*out_len = k;
	return 0;
}
