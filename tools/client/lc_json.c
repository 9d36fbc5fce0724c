/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The JSON path of /v1/walk-ffn (spec/wire.md §6), full-output mode only:
 * what the reference router fans out to shards.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "larql_client.h"

char *
lc_json_request(const uint32_t *layers, uint32_t nlayers, uint32_t seq_len,
		uint32_t hidden, const float *x, size_t *len)
{
	size_t m = (size_t)seq_len * hidden, cap = 96 + 16 * nlayers + 18 * m;
	size_t n = 0, i;
	char *s = malloc(cap);

	if (s == NULL)
		return NULL;
	/* "layers" wins over "layer" (§6); send the list form always. */
	n += snprintf(s + n, cap - n, "{\"layers\":[");
	for (i = 0; i < nlayers; i++)
		n += snprintf(s + n, cap - n, "%s%u", i ? "," : "", layers[i]);
	n += snprintf(s + n, cap - n, "],\"residual\":[");
	for (i = 0; i < m; i++)	/* %.9g: every f32 round-trips */
		n += snprintf(s + n, cap - n, "%s%.9g", i ? "," : "",
			      (double)x[i]);
	n += snprintf(s + n, cap - n, "],\"seq_len\":%u,\"top_k\":%u,"
		      "\"full_output\":true}", seq_len, LC_TOP_K);
	*len = n;
	return s;
}

static int
take(struct lc_result *r, struct json_object *o, float **store,
     char *err, size_t errlen)
{
	struct json_object *v, *out;
	size_t i, n;

	if (!json_object_object_get_ex(o, "layer", &v) ||
	    !json_object_object_get_ex(o, "output", &out) ||
	    !json_object_is_type(out, json_type_array)) {
		snprintf(err, errlen, "JSON response: result without layer "
			 "or output");
		return -EBADMSG;
	}
	r->layer = json_object_get_int64(v);
	r->seq_len = json_object_object_get_ex(o, "seq_len", &v) ?
		json_object_get_int64(v) : 1;
	n = json_object_array_length(out);
	r->num_values = n;
	r->values = *store;
	for (i = 0; i < n; i++)
		r->values[i] = json_object_get_double(
			json_object_array_get_idx(out, i));
	*store += n;
	return 0;
}

static size_t
count_values(struct json_object *o)
{
	struct json_object *out;

	return json_object_object_get_ex(o, "output", &out) &&
		json_object_is_type(out, json_type_array) ?
		json_object_array_length(out) : 0;
}

int
lc_json_decode(struct lc_response *r, const void *body, size_t len,
	       char *err, size_t errlen)
{
	struct json_object *o, *v, *res = NULL;
	char *s = strndup(body, len);
	size_t total = 0, i, n = 1;
	float *store;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	if (s == NULL)
		return -ENOMEM;
	o = json_tokener_parse(s);
	free(s);
	if (o == NULL) {
		snprintf(err, errlen, "JSON response: not JSON");
		return -EBADMSG;
	}
	if (json_object_object_get_ex(o, "latency_ms", &v))
		r->latency_ms = json_object_get_double(v);
	if (json_object_object_get_ex(o, "results", &res)) {
		r->batch = 1;
		n = json_object_array_length(res);
		for (i = 0; i < n; i++)
			total += count_values(json_object_array_get_idx(res,
									i));
	} else {
		total = count_values(o);
	}
	r->n = n;
	r->r = calloc(n ? n : 1, sizeof(*r->r));
	r->store = malloc(sizeof(float) * (total + 1));
	if (r->r == NULL || r->store == NULL) {
		json_object_put(o);
		return -ENOMEM;
	}
	store = r->store;
	for (i = 0; i < n && rc == 0; i++)
		rc = take(&r->r[i], res ? json_object_array_get_idx(res, i) : o,
			  &store, err, errlen);
	json_object_put(o);
	return rc;
}
