/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The expert routes' JSON (spec/moe.md §2 "JSON shapes", §4): the
 * single and batch request bodies, read by wire_json_req.c's strict
 * reader (serde_json's rules) with the routes' own error wording, and
 * the answers, written with the f32 number layout serde_json uses for
 * the reference's Vec<f32> fields (ryu's f32 form, not widened).
 *
 * Each body is read twice: once to check it and count what it holds,
 * then, into one allocation of that size, to fill it. No allocation is
 * sized by anything but the counted values (each took body bytes).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire_moe.h"
#include "wire_priv.h"

/* ---------------- numbers ---------------- */

/* Shortest digits that read back as v through strtof (the digits ryu
 * gives f32): the fewest p in 1..9 for which the correctly rounded
 * "%.*e" of v round-trips; monotone in p, so a binary search. */
static int
shortest_digits_f32(float v, char digits[16], int *e10)
{
	char buf[32];
	int lo = 1, hi = 9, n = 0;
	const char *p;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		snprintf(buf, sizeof(buf), "%.*e", mid - 1, (double)v);
		if (strtof(buf, NULL) == v)
			hi = mid;
		else
			lo = mid + 1;
	}
	snprintf(buf, sizeof(buf), "%.*e", lo - 1, (double)v);
	for (p = buf; *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[n++] = *p;
	*e10 = atoi(p + 1);
	while (n > 1 && digits[n - 1] == '0')
		n--;
	digits[n] = '\0';
	return n;
}

int
wire_json_fmt_f32(char *buf, float v)
{
	char d[16];
	int o = 0, e10, len;

	if (!isfinite(v)) {
		memcpy(buf, "null", 5);	/* serde_json: non-finite -> null */
		return 4;
	}
	if (signbit(v))
		buf[o++] = '-';
	v = fabsf(v);
	if (v == 0) {
		memcpy(buf + o, "0.0", 4);
		return o + 3;
	}
	len = shortest_digits_f32(v, d, &e10);
	/* the point after e10 + 1 digits; ryu's format32 bounds */
	return wire_json_layout(buf, o, d, len, e10 + 1, 13, 6);
}

/* ---------------- reading ---------------- */

static void
jp_init(struct wire_jp *j, const char *body, size_t len,
	struct wire_error *err, struct wire_jp_err syn,
	struct wire_jp_err type)
{
	memset(j, 0, sizeof(*j));
	j->s = j->p = (const unsigned char *)body;
	j->end = j->s + len;
	j->err = err;
	j->syn = syn;
	j->type = type;
}

static bool
num_start(unsigned char c)
{
	return c == '-' || (c >= '0' && c <= '9');
}

/*
 * A value of the wrong type at j->p, reported as serde_json's
 * peek_invalid_type does: a scalar is read first (its syntax error wins,
 * so "[tru]" is a syntax error and "[true]" a type error); an array or
 * object is a type error at once, unread; anything else is no value.
 */
static int
invalid_type(struct wire_jp *j, const char *expected)
{
	char msg[128];
	const char *what;
	int rc;

	if ((rc = wire_jp_begin(j)) != 0)
		return rc;
	switch (*j->p) {
	case '[': what = "sequence"; break;
	case '{': what = "map"; break;
	case '"': what = "string"; break;
	case 't': case 'f': what = "boolean"; break;
	case 'n': what = "null"; break;
	default:
		if (!num_start(*j->p))
			return wire_jp_fail(j, "expected value");
		what = "number";
	}
	if (*j->p != '[' && *j->p != '{' && (rc = wire_jp_skip(j)) != 0)
		return rc;
	snprintf(msg, sizeof(msg), "invalid type: %s, expected %s", what,
		 expected);
	return wire_jp_type(j, msg);
}

/* One residual value; into dst when filling. */
static int
residual_one(struct wire_jp *j, void *arg, size_t i)
{
	float *dst = arg;
	struct wire_jnum n;
	int rc;

	if ((rc = wire_jp_begin(j)) != 0)
		return rc;
	if (!num_start(*j->p))
		return invalid_type(j, "f32");
	/* an f64 overflow is serde's syntax error "number out of range" */
	if ((rc = wire_jp_num_any(j, &n)) != 0)
		return rc;
	if (dst != NULL)
		dst[i] = wire_jnum_f32(&n);
	return 0;
}

/* "residual": an array of numbers (Vec<f32>); dst NULL only counts. */
static int
residual(struct wire_jp *j, float *dst, size_t *count)
{
	int rc;

	if ((rc = wire_jp_begin(j)) != 0)
		return rc;
	if (*j->p != '[')
		return invalid_type(j, "a sequence");
	if (++j->depth > WIRE_JP_MAX_DEPTH)
		return wire_jp_fail(j, "recursion limit exceeded");
	j->p++;
	rc = wire_jp_seq(j, ']', residual_one, dst, count);
	j->depth--;
	return rc;
}

/* Which of keys[] key is (its full length kl), or -1. */
static int
key_index(const char *key, size_t kl, const char *const *keys, int n)
{
	for (int k = 0; k < n; k++)
		if (kl == strlen(keys[k]) && memcmp(key, keys[k], kl) == 0)
			return k;
	return -1;
}

/* An object at j->p whose members go to member(); depth counted. */
static int
object(struct wire_jp *j, const char *expected,
       int (*member)(struct wire_jp *, void *, size_t), void *arg)
{
	size_t count;
	int rc;

	if ((rc = wire_jp_begin(j)) != 0)
		return rc;
	if (*j->p != '{')
		return invalid_type(j, expected);
	if (++j->depth > WIRE_JP_MAX_DEPTH)
		return wire_jp_fail(j, "recursion limit exceeded");
	j->p++;
	rc = wire_jp_seq(j, '}', member, arg, &count);
	j->depth--;
	return rc;
}

/* The whole body is one value read by top(); then only whitespace. */
static int
whole(struct wire_jp *j, int (*top)(struct wire_jp *, void *), void *arg)
{
	int rc = top(j, arg);

	if (rc != 0)
		return rc;
	wire_jp_ws(j);	/* serde: deserialize, then end() */
	return j->p < j->end ? wire_jp_fail(j, "trailing characters") : 0;
}

/* ---- the single route ---- */

struct single {
	bool seen;
	const unsigned char *at;	/* the residual's '[' */
	size_t n;
};

static int
single_member(struct wire_jp *j, void *arg, size_t i)
{
	static const char *const keys[] = { "residual" };
	struct single *s = arg;
	char key[WIRE_JP_KEY_MAX];
	size_t kl;
	int rc;

	(void)i;
	if ((rc = wire_jp_key(j, key, &kl)) != 0)
		return rc;
	if (key_index(key, kl, keys, 1) < 0)
		return wire_jp_skip(j);	/* unknown keys: read, ignored */
	if (s->seen)
		return wire_jp_type(j, "duplicate field `residual`");
	s->seen = true;
	if ((rc = wire_jp_begin(j)) != 0)
		return rc;
	s->at = j->p;
	return residual(j, NULL, &s->n);
}

static int
single_top(struct wire_jp *j, void *arg)
{
	struct single *s = arg;
	int rc = object(j, "struct ExpertRequest", single_member, s);

	if (rc == 0 && !s->seen)
		return wire_jp_type(j, "missing field `residual`");
	return rc;
}

int
wire_moe_json_single(const char *body, size_t len, float **res, size_t *n,
		     struct wire_error *err)
{
	/* §4: axum's Json rejections, framework text bodies */
	static const struct wire_jp_err syn = {
		"Failed to parse the request body as JSON: ", 400, true };
	static const struct wire_jp_err type = {
		"Failed to deserialize the JSON body into the target type: ",
		422, true };
	struct single s = { 0 };
	struct wire_jp j;
	size_t count;
	float *v;
	int rc;

	jp_init(&j, body, len, err, syn, type);
	if ((rc = whole(&j, single_top, &s)) != 0) {
		if (rc == -ENOMEM)
			wire_error_set(err, 500, "out of memory");
		return rc;
	}
	v = malloc(s.n ? s.n * sizeof(float) : 1);
	if (v == NULL) {
		wire_error_set(err, 500, "out of memory");
		return -ENOMEM;
	}
	j.p = s.at;	/* checked: the second reading fills */
	j.depth = 1;
	residual(&j, v, &count);
	*res = v;
	*n = s.n;
	return 0;
}

/* ---- the batch route ---- */

enum { B_LAYER, B_EXPERT, B_RESIDUAL, B_COUNT };
static const char *const item_keys[B_COUNT] = {
	"layer", "expert_id", "residual",
};

struct batch {
	struct wire_moe_json_item *items;	/* NULL: counting */
	float *vals;		/* filling: where the next residual goes */
	size_t n_items, n_vals;
	bool seen;		/* "requests" */
	const unsigned char *at;	/* its '[' */
};

struct item {
	struct batch *b;
	unsigned int seen;
	uint64_t id[2];		/* layer, expert_id */
	size_t first, n;	/* its residual: n values from vals[first] */
};

static int
item_member(struct wire_jp *j, void *arg, size_t i)
{
	struct item *it = arg;
	char key[WIRE_JP_KEY_MAX], msg[64];
	size_t kl;
	int rc, k;

	(void)i;
	if ((rc = wire_jp_key(j, key, &kl)) != 0)
		return rc;
	if ((k = key_index(key, kl, item_keys, B_COUNT)) < 0)
		return wire_jp_skip(j);
	if (it->seen & 1u << k) {
		snprintf(msg, sizeof(msg), "duplicate field `%s`",
			 item_keys[k]);
		return wire_jp_type(j, msg);
	}
	it->seen |= 1u << k;
	if (k != B_RESIDUAL)
		return wire_jp_uint(j, &it->id[k], "invalid type: expected "
				    "a non-negative integer");
	it->first = it->b->n_vals;
	rc = residual(j, it->b->items ? it->b->vals + it->first : NULL,
		      &it->n);
	it->b->n_vals += it->n;
	return rc;
}

static int
item_one(struct wire_jp *j, void *arg, size_t i)
{
	struct item it = { .b = arg };
	char msg[64];
	int rc;

	if ((rc = object(j, "struct ExpertBatchItem", item_member, &it)) != 0)
		return rc;
	for (int k = 0; k < B_COUNT; k++)
		if (!(it.seen & 1u << k)) {
			snprintf(msg, sizeof(msg), "missing field `%s`",
				 item_keys[k]);
			return wire_jp_type(j, msg);
		}
	if (it.b->items != NULL)
		it.b->items[i] = (struct wire_moe_json_item){
			.layer = it.id[B_LAYER], .expert = it.id[B_EXPERT],
			.residual = it.b->vals + it.first, .n = it.n,
		};
	return 0;
}

static int
requests(struct wire_jp *j, struct batch *b)
{
	int rc;

	if ((rc = wire_jp_begin(j)) != 0)
		return rc;
	if (*j->p != '[')
		return invalid_type(j, "a sequence");
	if (++j->depth > WIRE_JP_MAX_DEPTH)
		return wire_jp_fail(j, "recursion limit exceeded");
	j->p++;
	rc = wire_jp_seq(j, ']', item_one, b, &b->n_items);
	j->depth--;
	return rc;
}

static int
batch_member(struct wire_jp *j, void *arg, size_t i)
{
	static const char *const keys[] = { "requests" };
	struct batch *b = arg;
	char key[WIRE_JP_KEY_MAX];
	size_t kl;
	int rc;

	(void)i;
	if ((rc = wire_jp_key(j, key, &kl)) != 0)
		return rc;
	if (key_index(key, kl, keys, 1) < 0)
		return wire_jp_skip(j);
	if (b->seen)
		return wire_jp_type(j, "duplicate field `requests`");
	b->seen = true;
	if ((rc = wire_jp_begin(j)) != 0)
		return rc;
	b->at = j->p;
	return requests(j, b);
}

static int
batch_top(struct wire_jp *j, void *arg)
{
	struct batch *b = arg;
	int rc = object(j, "struct ExpertBatchRequest", batch_member, b);

	if (rc == 0 && !b->seen)
		return wire_jp_type(j, "missing field `requests`");
	return rc;
}

int
wire_moe_json_batch(const char *body, size_t len,
		    struct wire_moe_json_item **items, size_t *n,
		    struct wire_error *err)
{
	/* §4: a LARQL-code error, {"error":"JSON parse: ..."} */
	static const struct wire_jp_err any = { "JSON parse: ", 400, false };
	struct batch b = { 0 };
	struct wire_jp j;
	size_t head, size;
	void *block;
	int rc;

	jp_init(&j, body, len, err, any, any);
	if ((rc = whole(&j, batch_top, &b)) != 0) {
		if (rc == -ENOMEM)
			wire_error_set(err, 500, "out of memory");
		return rc;
	}
	/* items then their values, one block; both counts took body bytes */
	if (__builtin_mul_overflow(b.n_items, sizeof(**items), &head) ||
	    __builtin_mul_overflow(b.n_vals, sizeof(float), &size) ||
	    __builtin_add_overflow(head, size, &size) ||
	    (block = malloc(size ? size : 1)) == NULL) {
		wire_error_set(err, 500, "out of memory");
		return -ENOMEM;
	}
	b.items = block;
	b.vals = (float *)(void *)((char *)block + head);
	b.n_vals = 0;
	j.p = b.at;	/* checked: the second reading fills */
	j.depth = 1;
	requests(&j, &b);
	*items = b.items;
	*n = b.n_items;
	return 0;
}

/* ---------------- writing ---------------- */

/* Worst case of one wire_json_fmt_f32 number ("-0.00000123456789"). */
#define F32_MAX_CHARS 17

struct out {
	char *p;
	size_t o;
};

static void
put(struct out *b, const char *s)
{
	size_t n = strlen(s);

	memcpy(b->p + b->o, s, n);
	b->o += n;
}

static void
put_u64(struct out *b, uint64_t v)
{
	b->o += sprintf(b->p + b->o, "%" PRIu64, v);
}

static void
put_f32s(struct out *b, const float *v, size_t n)
{
	put(b, "[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			put(b, ",");
		b->o += wire_json_fmt_f32(b->p + b->o, v[i]);
	}
	put(b, "]");
}

/* Room for n numbers in arrays plus fixed bytes; 0 on overflow. */
static size_t
room(size_t n, size_t fixed)
{
	size_t r;

	if (__builtin_mul_overflow(n, (size_t)F32_MAX_CHARS + 1, &r) ||
	    __builtin_add_overflow(r, fixed, &r))
		return 0;
	return r;
}

static int
out_alloc(struct out *b, size_t cap)
{
	if (cap == 0)
		return -EOVERFLOW;
	b->p = malloc(cap);
	b->o = 0;
	return b->p == NULL ? -ENOMEM : 0;
}

static int
out_done(struct out *b, char **out, size_t *out_len)
{
	b->p[b->o] = '\0';
	*out = b->p;
	*out_len = b->o;
	return 0;
}

int
wire_moe_json_single_resp(const float *y, size_t n, double latency_ms,
			  char **out, size_t *out_len)
{
	struct out b;
	char t[32];
	int rc;

	if ((rc = out_alloc(&b, room(n, 64))) != 0)
		return rc;
	put(&b, "{\"output\":");
	put_f32s(&b, y, n);
	put(&b, ",\"latency_ms\":");
	wire_json_fmt_f64(t, latency_ms);	/* §2: an f64, unrounded */
	put(&b, t);
	put(&b, "}");
	return out_done(&b, out, out_len);
}

int
wire_moe_json_batch_resp(const uint64_t *layers, const uint64_t *experts,
			 const float *const *outputs, size_t n,
			 size_t hidden, float latency_ms, char **out,
			 size_t *out_len)
{
	/* per result: {"layer":L,"expert_id":E,"output":[...]}, */
	size_t per = 96, all, cap;
	struct out b;
	char t[32];
	int rc;

	cap = room(hidden, per);
	if (cap == 0 || __builtin_mul_overflow(cap, n, &all) ||
	    __builtin_add_overflow(all, (size_t)64, &all))
		return -EOVERFLOW;
	if ((rc = out_alloc(&b, all)) != 0)
		return rc;
	put(&b, "{\"results\":[");
	for (size_t i = 0; i < n; i++) {
		put(&b, i ? ",{\"layer\":" : "{\"layer\":");
		put_u64(&b, layers[i]);
		put(&b, ",\"expert_id\":");
		put_u64(&b, experts[i]);
		put(&b, ",\"output\":");
		put_f32s(&b, outputs[i], hidden);
		put(&b, "}");
	}
	put(&b, "],\"latency_ms\":");
	wire_json_fmt_f32(t, latency_ms);	/* §2: an f32 here */
	put(&b, t);
	put(&b, "}");
	return out_done(&b, out, out_len);
}

int
wire_moe_json_topology(const char *model_id, uint32_t num_experts,
		       uint32_t num_layers, uint32_t start, uint32_t end,
		       char **out, size_t *out_len)
{
	size_t id_cap, cap;
	struct out b;
	int rc;

	/* 6 bytes per escaped byte at most, quotes and NUL */
	if (__builtin_mul_overflow(strlen(model_id), (size_t)6, &id_cap) ||
	    __builtin_add_overflow(id_cap, (size_t)3, &id_cap) ||
	    __builtin_add_overflow(id_cap, (size_t)128, &cap))
		return -EOVERFLOW;
	if ((rc = out_alloc(&b, cap)) != 0)
		return rc;
	put(&b, "{\"model_id\":");
	b.o += wire_json_str(b.p + b.o, id_cap, model_id);
	put(&b, ",\"num_experts\":");
	put_u64(&b, num_experts);
	put(&b, ",\"num_layers\":");
	put_u64(&b, num_layers);
	put(&b, ",\"owned_start\":");
	put_u64(&b, start);
	put(&b, ",\"owned_end\":");
	put_u64(&b, end);
	put(&b, "}");
	return out_done(&b, out, out_len);
}
