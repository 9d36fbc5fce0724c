/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * What the vindex loader shares with the kinds' loaders: ffn_load.c reads
 * index.json and chooses the weight kind (ffn_kind.h), whose load then
 * places the owned layers: ffn_load_payload.c for the dense payloads
 * (§2.1, §2.2, §2.3), ffn_eng_kq.c for §2.4. The load's state, its error
 * reporting and the index.json key readers.
 */
#ifndef FFN_LOAD_PRIV_H
#define FFN_LOAD_PRIV_H

#include <json-c/json.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "ffn_kind.h"
#include "ffn_priv.h"

/** A payload file mapped read-only for the duration of the load. */
struct src {
	char name[64];
	void *addr;
	size_t len;
	int used;
};

struct ld {
	const char *dir;
	char *err;
	size_t errlen;
	struct ffn_model *m;
	const struct ffn_load_opts *o;
	json_object *idx;
	json_object *manifest;
	uint32_t H;
	uint32_t nl;
	uint32_t es;		/* bytes per element of dtype */
	enum ffn_dtype dt;
	uint32_t *nf;		/* [nl]; 0 with has[] = 0: no entry */
	uint8_t *has;
	int64_t *goff;		/* gate offset, -1 absent */
	int64_t *glen;		/* gate length, -1 absent */
	struct src src[FFN_MAX_MAPS];
	/* per owned layer, where each matrix comes from */
	const uint8_t **from;	/* [n * 3] */
	uint8_t *transpose;	/* [n]: §2.3 down */
	/* index.json "quant" names the one kind that may serve (§2) */
	const struct ffn_kind *only;
	const struct ffn_kind *kind;	/* the kind being loaded */
};

static inline int
fail(struct ld *l, int code, const char *fmt, ...)
{
	va_list ap;

	if (l->err != NULL && l->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(l->err, l->errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* Integer key of obj; -1 when absent; error when not an integer >= 0. */
static inline int
get_uint(struct ld *l, json_object *obj, const char *what, const char *key,
	 int required, int64_t *v)
{
	json_object *j;

	*v = -1;
	if (!json_object_object_get_ex(obj, key, &j)) {
		if (required)
			return fail(l, FFN_ERR_KEY, "%s: missing key '%s'",
				    what, key);
		return 0;
	}
	if (!json_object_is_type(j, json_type_int) ||
	    json_object_get_int64(j) < 0)
		return fail(l, FFN_ERR_KEY,
			    "%s: key '%s' must be an integer >= 0", what, key);
	*v = json_object_get_int64(j);
	return 0;
}

static inline const char *
get_str(json_object *obj, const char *key)
{
	json_object *j;

	if (!json_object_object_get_ex(obj, key, &j) ||
	    !json_object_is_type(j, json_type_string))
		return NULL;
	return json_object_get_string(j);
}

/**
 * Read l->dir/index.json into l->idx (a JSON object): 0, or FFN_ERR_IO,
 * FFN_ERR_JSON, FFN_ERR_KEY with l->err naming the file. Only dir, err,
 * errlen and idx of l are used.
 */
int ffn_load_read_index(struct ld *l);

#endif /* FFN_LOAD_PRIV_H */
