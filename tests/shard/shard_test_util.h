/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Helpers shared by the lib/shard tests: temporary models written by
 * tools/mkvindex (vw_write), request bodies (spec/wire.md §3), requests as
 * the HTTP layer hands them over, and flattened response bodies.
 */
#ifndef SHARD_TEST_UTIL_H
#define SHARD_TEST_UTIL_H

#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http.h"
#include "shard.h"
#include "vindex_write.h"

#define ST_KEY "s3cret-key"

/* spec/vindex.md §3: x = [1, -2, 0.5, 3] and the SiLU outputs. */
static const float st_x[4] = { 1.0f, -2.0f, 0.5f, 3.0f };
static const float st_y[2][4] = {
	{ 1.827646f, 0.9536234f, -6.794814f, -4.013545f },
	{ 0.6224593f, 0.0f, 0.6131809f, -8.573167f },
};

static inline int
st_rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static inline void
st_rmtree(const char *dir)
{
	nftw(dir, st_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write a model into a fresh directory under /tmp (dir: 64 bytes).
 * example: the vindex.md §3 model; else a random llama model of
 * H 64, nf 96, 3 layers. Returns 0 or -1. */
static inline int
st_write_model(char *dir, size_t dlen, int example)
{
	struct vw_opts o;
	char err[256];

	snprintf(dir, dlen, "/tmp/shard_test_XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	vw_defaults(&o);
	if (example) {
		o.example = 1;
	} else {
		o.hidden = 64;
		o.intermediate = 96;
		o.layers = 3;
		o.seed = 7;
	}
	if (vw_write(dir, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "vw_write %s: %s\n", dir, err);
		return -1;
	}
	return 0;
}

/* A unit on dir, layers first..last (-1: whole model), optional key. */
static inline int
st_unit(struct shard_unit *u, const char *dir, int first, int last,
	const char *key)
{
	struct shard_unit_conf c;
	char err[256];
	int rc;

	memset(&c, 0, sizeof(c));
	c.name = "t0";
	c.model_dir = dir;
	c.first_layer = first;
	c.last_layer = last;
	c.numa_node = -1;
	wire_opts_default(&c.wire);
	c.api_key = key;
	rc = shard_unit_init(u, &c, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "shard_unit_init %s: %s\n", dir, err);
	return rc;
}

/* A cmocka group fixture: the vindex.md §3 example model in a temporary
 * directory and a unit over all its layers, with API key key or none. */
struct st_env {
	char dir[64];
	struct shard_unit *u;
};

static inline int
st_env_setup(void **state, const char *key)
{
	struct st_env *e = calloc(1, sizeof(*e));

	if (e == NULL || st_write_model(e->dir, sizeof(e->dir), 1) < 0)
		return -1;
	e->u = calloc(1, sizeof(*e->u));
	if (e->u == NULL || st_unit(e->u, e->dir, -1, -1, key) < 0)
		return -1;
	*state = e;
	return 0;
}

static inline int
st_env_teardown(void **state)
{
	struct st_env *e = *state;

	shard_unit_fini(e->u);
	st_rmtree(e->dir);
	free(e->u);
	free(e);
	return 0;
}

static inline void
st_put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline uint32_t
st_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline float
st_getf(const uint8_t *p)
{
	float v;

	memcpy(&v, p, 4);
	return v;
}

/* A body buffer: 64-byte aligned storage, the body at offset off. */
struct st_body {
	uint8_t *mem;
	uint8_t *p;
	size_t len;
};

static inline void
st_body_alloc(struct st_body *b, size_t cap, size_t off)
{
	b->mem = aligned_alloc(64, (cap + off + 63) & ~(size_t)63);
	b->p = b->mem + off;
	b->len = 0;
}

static inline void
st_body_free(struct st_body *b)
{
	free(b->mem);
	b->mem = b->p = NULL;
}

/* Single-layer frame (spec/wire.md §3) with payload bytes pl of plen. */
static inline void
st_single(struct st_body *b, uint32_t layer, uint32_t seq_len,
	  uint32_t flags, const void *pl, size_t plen)
{
	st_put32(b->p, layer);
	st_put32(b->p + 4, seq_len);
	st_put32(b->p + 8, flags);
	st_put32(b->p + 12, 8092);
	if (plen)
		memcpy(b->p + 16, pl, plen);
	b->len = 16 + plen;
}

/* Batch frame: K layers, then seq_len, flags, top_k, payload. */
static inline void
st_batch(struct st_body *b, const uint32_t *layers, uint32_t K,
	 uint32_t seq_len, uint32_t flags, const void *pl, size_t plen)
{
	size_t o = 8 + 4 * (size_t)K;

	st_put32(b->p, 0xFFFFFFFFu);
	st_put32(b->p + 4, K);
	for (uint32_t i = 0; i < K; i++)
		st_put32(b->p + 8 + 4 * i, layers[i]);
	st_put32(b->p + o, seq_len);
	st_put32(b->p + o + 4, flags);
	st_put32(b->p + o + 8, 8092);
	if (plen)
		memcpy(b->p + o + 12, pl, plen);
	b->len = o + 12 + plen;
}

static inline void
st_req(struct shard_http_req *rq, int method, const char *path,
       const char *ct, const char *accept, const char *auth,
       const void *body, size_t len)
{
	memset(rq, 0, sizeof(*rq));
	rq->method = method;
	rq->path = path;
	rq->path_len = strlen(path);
	rq->content_type = ct;
	rq->content_type_len = ct ? strlen(ct) : 0;
	rq->fmt_in = shard_req_fmt(ct, rq->content_type_len);
	rq->accept = accept;
	rq->accept_len = accept ? strlen(accept) : 0;
	rq->authorization = auth;
	rq->authorization_len = auth ? strlen(auth) : 0;
	rq->body = body;
	rq->body_len = len;
}

/* The response body gathered from its iovecs, NUL-terminated (malloc'd;
 * caller frees). Returns NULL when the iovecs disagree with r->len. */
static inline uint8_t *
st_flat(const struct shard_resp *r)
{
	uint8_t *out = malloc(r->len + 1);
	size_t o = 0;

	if (out == NULL)
		return NULL;
	for (unsigned int i = 0; i < r->iovcnt; i++) {
		if (o + r->iov[i].iov_len > r->len) {
			free(out);
			return NULL;
		}
		memcpy(out + o, r->iov[i].iov_base, r->iov[i].iov_len);
		o += r->iov[i].iov_len;
	}
	if (o != r->len) {
		free(out);
		return NULL;
	}
	out[o] = '\0';
	return out;
}

/* {"error":"msg"} as the reference writes it (no escapes needed in the
 * messages the tests use). */
static inline char *
st_err_body(char *buf, size_t cap, const char *fmt, ...)
{
	size_t o;
	va_list ap;

	o = (size_t)snprintf(buf, cap, "{\"error\":\"");
	va_start(ap, fmt);
	o += (size_t)vsnprintf(buf + o, cap - o, fmt, ap);
	va_end(ap);
	if (o < cap)
		snprintf(buf + o, cap - o, "\"}");
	return buf;
}

/*
 * SHARD_TEST_SKIP (a cmocka glob) leaves tests out of a run: the valgrind
 * runs leave out the byte comparisons across kernel code paths (valgrind
 * emulates the vector unit); those run natively in the plain runs.
 */
static inline void
st_filter(void)
{
	const char *skip = getenv("SHARD_TEST_SKIP");

	if (skip != NULL && *skip != '\0')
		cmocka_set_skip_filter(skip);
}

/* The index of status in shard_stats.requests[route][] (SHARD_STATUSES
 * order; the last, "other", for any status not listed). */
static inline int
st_status_idx(int status)
{
	static const int codes[] = {
#define ST_CODE(c) c,
		SHARD_STATUSES(ST_CODE)
#undef ST_CODE
	};
	int i;

	for (i = 0; i < (int)(sizeof(codes) / sizeof(codes[0])); i++)
		if (codes[i] == status)
			return i;
	return SHARD_N_STATUS - 1;
}

#endif /* SHARD_TEST_UTIL_H */
