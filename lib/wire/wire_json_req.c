/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The JSON request body (spec/wire.md §6), read by a strict RFC 8259
 * parser of its own. json-c, used before, accepts what the reference's
 * serde_json refuses (NaN and Infinity, 1e999, raw control characters
 * in strings, "1.", overlong UTF-8, single quotes, bytes after a NUL),
 * cuts keys at "\u0000", keeps the last of two equal keys and clamps
 * integers beyond 64 bits: each of those gave 200 where the reference
 * gives 400, or other numbers. This parser follows serde_json's rules:
 *   - the grammar of RFC 8259 exactly, UTF-8 checked (§8.1), lone
 *     surrogate escapes refused, nesting at most 127 deep (serde's
 *     recursion limit), nothing but whitespace after the object;
 *   - a number is an integer if it has no fraction or exponent and fits
 *     64 bits; otherwise an f64, and an f64 that overflows is an error;
 *   - a known field given twice is an error ("duplicate field"), other
 *     keys are checked and ignored;
 *   - a residual integer becomes f32 directly, an f64 by rounding.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire_priv.h"

/* The error kinds' wording: the route's (j->syn, j->type), or the
 * dense path's "invalid JSON: " 400 when the caller set none. */
static int
jp_error(struct wire_jp *j, const struct wire_jp_err *k, const char *detail,
	 size_t at, bool has_at)
{
	static const struct wire_jp_err dense = { "invalid JSON: ", 400,
						  false };
	int rc;

	if (k->prefix == NULL)
		k = &dense;
	if (has_at)
		rc = wire_error_set(j->err, k->status, "%s%s at byte %zu",
				    k->prefix, detail, at);
	else
		rc = wire_error_set(j->err, k->status, "%s%s", k->prefix,
				    detail);
	j->err->text = k->text;
	return rc;
}

int
wire_jp_fail(struct wire_jp *j, const char *what)
{
	if (j->p >= j->end)
		return jp_error(j, &j->syn, "EOF while parsing", 0, false);
	return jp_error(j, &j->syn, what, (size_t)(j->p - j->s), true);
}

int
wire_jp_type(struct wire_jp *j, const char *msg)
{
	return jp_error(j, &j->type, msg, 0, false);
}

void
wire_jp_ws(struct wire_jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
				 *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int
jp_lit(struct wire_jp *j, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0)
		return wire_jp_fail(j, "expected value");
	j->p += n;
	return 0;
}

static int
hex4(const unsigned char *p, unsigned int *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		unsigned int c = p[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			return -1;
		*v = *v << 4 | d;
	}
	return 0;
}

/* Bytes of one UTF-8 sequence at p (RFC 3629 §4: no overlong forms, no
 * surrogates, nothing past U+10FFFF), or 0. */
static size_t
utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* Append code point cp as UTF-8 to key (klen may pass WIRE_JP_KEY_MAX: then
 * only counted). */
static void
key_put(char *key, size_t *klen, unsigned int cp)
{
	unsigned char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = 0xc0 | cp >> 6;
		b[1] = 0x80 | (cp & 0x3f);
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = 0xe0 | cp >> 12;
		b[1] = 0x80 | (cp >> 6 & 0x3f);
		b[2] = 0x80 | (cp & 0x3f);
		n = 3;
	} else {
		b[0] = 0xf0 | cp >> 18;
		b[1] = 0x80 | (cp >> 12 & 0x3f);
		b[2] = 0x80 | (cp >> 6 & 0x3f);
		b[3] = 0x80 | (cp & 0x3f);
		n = 4;
	}
	if (key != NULL && *klen + n <= WIRE_JP_KEY_MAX)
		memcpy(key + *klen, b, n);
	*klen += n;
}

/* A string at j->p ('"' there); its decoded text goes to key when key is
 * not NULL and it fits WIRE_JP_KEY_MAX bytes (*klen is its full length). */
int
wire_jp_string(struct wire_jp *j, char *key, size_t *klen)
{
	size_t kl = 0;

	j->p++;
	for (;;) {
		unsigned int cp, lo;
		size_t n;

		if (j->p >= j->end)
			return wire_jp_fail(j, "");
		if (*j->p == '"')
			break;
		if (*j->p < 0x20)	/* RFC 8259 §7: escape them */
			return wire_jp_fail(j, "control character in a string");
		if (*j->p != '\\') {
			n = utf8_len(j->p, j->end);
			if (n == 0)
				return wire_jp_fail(j, "invalid UTF-8");
			if (key != NULL && kl + n <= WIRE_JP_KEY_MAX)
				memcpy(key + kl, j->p, n);
			kl += n;
			j->p += n;
			continue;
		}
		if (j->end - j->p < 2)
			return wire_jp_fail(j, "");
		switch (j->p[1]) {
		case '"': cp = '"'; break;
		case '\\': cp = '\\'; break;
		case '/': cp = '/'; break;
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u':
			if (j->end - j->p < 6 || hex4(j->p + 2, &cp) != 0)
				return wire_jp_fail(j, "invalid escape");
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return wire_jp_fail(j, "lone surrogate in escape");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (j->end - j->p < 12 || j->p[6] != '\\' ||
				    j->p[7] != 'u' ||
				    hex4(j->p + 8, &lo) != 0 ||
				    lo < 0xdc00 || lo > 0xdfff)
					return wire_jp_fail(j,
						"lone surrogate in escape");
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				     (lo - 0xdc00);
				j->p += 6;
			}
			j->p += 4;
			break;
		default:
			return wire_jp_fail(j, "invalid escape");
		}
		j->p += 2;
		key_put(key, &kl, cp);
	}
	j->p++;
	if (klen != NULL)
		*klen = kl;
	return 0;
}

int
wire_jp_number(struct wire_jp *j, struct wire_jnum *n)
{
	const unsigned char *t = j->p;
	char buf[64], *copy = buf;
	bool frac = false;

	n->neg = false;
	n->is_int = true;
	n->mag = 0;
	if (j->p < j->end && *j->p == '-') {
		n->neg = true;
		j->p++;
	}
	if (j->p >= j->end || *j->p < '0' || *j->p > '9')
		return wire_jp_fail(j, "invalid number");
	if (*j->p == '0') {
		j->p++;
	} else {
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
			unsigned int d = *j->p++ - '0';

			if (n->mag > (UINT64_MAX - d) / 10)
				n->is_int = false;	/* an f64 then */
			else
				n->mag = n->mag * 10 + d;
		}
	}
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (j->p >= j->end || *j->p < '0' || *j->p > '9')
			return wire_jp_fail(j, "invalid number");
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
		frac = true;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (j->p >= j->end || *j->p < '0' || *j->p > '9')
			return wire_jp_fail(j, "invalid number");
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
		frac = true;
	}
	/* serde: a negative integer must fit i64, else it is an f64 */
	if (frac || (n->neg && n->mag > (uint64_t)INT64_MAX + 1))
		n->is_int = false;
	if (n->is_int)
		return 0;
	/* strtod needs a terminated copy: the body is not. */
	if ((size_t)(j->p - t) >= sizeof(buf)) {
		copy = malloc(j->p - t + 1);
		if (copy == NULL)
			return -ENOMEM;
	}
	memcpy(copy, t, j->p - t);
	copy[j->p - t] = '\0';
	n->d = strtod(copy, NULL);
	if (copy != buf)
		free(copy);
	if (isinf(n->d)) {
		j->p = t;
		return -ERANGE;		/* the caller names the field */
	}
	return 0;
}

/* A number anywhere: out of range is a syntax error (serde: "number out
 * of range"). */
int
wire_jp_num_any(struct wire_jp *j, struct wire_jnum *n)
{
	int rc = wire_jp_number(j, n);

	return rc == -ERANGE ? wire_jp_fail(j, "number out of range") : rc;
}

/* The start of a value: whitespace skipped, not at the end. */
int
wire_jp_begin(struct wire_jp *j)
{
	wire_jp_ws(j);
	return j->p < j->end ? 0 : wire_jp_fail(j, "");
}

/* A value that must be a number: msg (a type error) if it is another
 * type; -ERANGE if it overflows an f64 (j->p at it). */
int
wire_jp_number_as(struct wire_jp *j, struct wire_jnum *n, const char *msg)
{
	int rc = wire_jp_begin(j);

	if (rc != 0)
		return rc;
	if (*j->p != '-' && (*j->p < '0' || *j->p > '9'))
		return wire_jp_type(j, msg);
	return wire_jp_number(j, n);
}

/* The rest of an array or object after its opening bracket: elements
 * (members) read by one(j, arg, i), separated by ',', ended by close;
 * their number goes to *count. */
int
wire_jp_seq(struct wire_jp *j, unsigned char close,
       int (*one)(struct wire_jp *, void *, size_t), void *arg, size_t *count)
{
	size_t i = 0;
	int rc;

	wire_jp_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		*count = 0;
		return 0;
	}
	for (;;) {
		if ((rc = one(j, arg, i++)) != 0)
			return rc;
		wire_jp_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			*count = i;
			return 0;
		}
		return wire_jp_fail(j, close == ']' ? "expected `,` or `]`" :
					      "expected `,` or `}`");
	}
}

/* An object member's key and ':'; the key decoded into key (WIRE_JP_KEY_MAX
 * bytes; *klen is its full length). */
int
wire_jp_key(struct wire_jp *j, char *key, size_t *klen)
{
	int rc;

	wire_jp_ws(j);
	if (j->p >= j->end || *j->p != '"')
		return wire_jp_fail(j, "key must be a string");
	if ((rc = wire_jp_string(j, key, klen)) != 0)
		return rc;
	wire_jp_ws(j);
	if (j->p >= j->end || *j->p != ':')
		return wire_jp_fail(j, "expected `:`");
	j->p++;
	return 0;
}


static int
skip_elem(struct wire_jp *j, void *arg, size_t i)
{
	(void)arg;
	(void)i;
	return wire_jp_skip(j);
}

static int
skip_member(struct wire_jp *j, void *arg, size_t i)
{
	int rc = wire_jp_key(j, NULL, NULL);

	return rc != 0 ? rc : skip_elem(j, arg, i);
}

/* Any value, checked and dropped. */
int
wire_jp_skip(struct wire_jp *j)
{
	struct wire_jnum n;
	size_t count;
	int rc;

	if ((rc = wire_jp_begin(j)) != 0)
		return rc;
	switch (*j->p) {
	case '"':
		return wire_jp_string(j, NULL, NULL);
	case 't':
		return jp_lit(j, "true");
	case 'f':
		return jp_lit(j, "false");
	case 'n':
		return jp_lit(j, "null");
	case '[':
	case '{':
		break;
	default:
		return wire_jp_num_any(j, &n);
	}
	if (++j->depth > WIRE_JP_MAX_DEPTH)
		return wire_jp_fail(j, "recursion limit exceeded");
	rc = *j->p++ == '[' ? wire_jp_seq(j, ']', skip_elem, NULL, &count) :
			      wire_jp_seq(j, '}', skip_member, NULL, &count);
	j->depth--;
	return rc;
}

/* A usize field of the reference: a JSON integer >= 0 that fits 64 bits
 * (serde refuses 1.0, -1 and 2^64 for it). */
int
wire_jp_uint(struct wire_jp *j, uint64_t *v, const char *msg)
{
	struct wire_jnum n;
	int rc;

	rc = wire_jp_number_as(j, &n, msg);
	if (rc == -ERANGE)
		return wire_jp_fail(j, "number out of range");
	if (rc != 0)
		return rc;
	if (!n.is_int || (n.neg && n.mag != 0))
		return wire_jp_type(j, msg);
	*v = n.mag;
	return 0;
}

/* "[" elements "]" at j->p, each read by one(j, arg, index); the count
 * goes to *count. */
int
wire_jp_array(struct wire_jp *j, const char *msg, size_t *count,
	 int (*one)(struct wire_jp *, void *, size_t), void *arg)
{
	int rc = wire_jp_begin(j);

	if (rc != 0)
		return rc;
	if (*j->p != '[')
		return wire_jp_type(j, msg);
	j->p++;
	return wire_jp_seq(j, ']', one, arg, count);
}

/* Room for element i of a malloc'd array of size-byte elements. */
static int
grow(void **a, size_t *cap, size_t i, size_t size)
{
	void *b;

	if (i < *cap)
		return 0;
	b = realloc(*a, (*cap ? *cap * 2 : 64) * size);
	if (b == NULL)
		return -ENOMEM;
	*a = b;
	*cap = *cap ? *cap * 2 : 64;
	return 0;
}

struct jp_vec {
	void *a;
	size_t cap;
};

static const char RESIDUAL_MSG[] = "'residual' must be an array of numbers";
static const char LAYERS_MSG[] =
	"'layers' must be an array of non-negative integers";

float
wire_jnum_f32(const struct wire_jnum *n)
{
	/* serde: integers to f32 directly (i64/u64 as f32), others via f64 */
	if (!n->is_int)
		return (float)n->d;
	if (!n->neg)
		return (float)n->mag;
	return n->mag > (uint64_t)INT64_MAX ? (float)INT64_MIN :
	       (float)-(int64_t)n->mag;
}

static int
residual_one(struct wire_jp *j, void *arg, size_t i)
{
	struct jp_vec *v = arg;
	struct wire_jnum n;
	float f;
	int rc;

	rc = wire_jp_number_as(j, &n, RESIDUAL_MSG);
	if (rc == -ERANGE)
		return wire_jp_type(j, "'residual' number out of range");
	if (rc != 0)
		return rc;
	f = wire_jnum_f32(&n);
	if (grow(&v->a, &v->cap, i, sizeof(float)) != 0)
		return -ENOMEM;
	((float *)v->a)[i] = f;
	return 0;
}

static int
layer_one(struct wire_jp *j, void *arg, size_t i)
{
	struct jp_vec *v = arg;
	uint64_t l = 0;
	int rc;

	if ((rc = wire_jp_uint(j, &l, LAYERS_MSG)) != 0)
		return rc;
	if (grow(&v->a, &v->cap, i, sizeof(uint64_t)) != 0)
		return -ENOMEM;
	((uint64_t *)v->a)[i] = l;
	return 0;
}

/* null, for the reference's Option<> fields: true if it was there. */
static bool
jp_null(struct wire_jp *j)
{
	wire_jp_ws(j);
	if (j->end - j->p >= 4 && memcmp(j->p, "null", 4) == 0) {
		j->p += 4;
		return true;
	}
	return false;
}

enum { K_RESIDUAL, K_LAYER, K_LAYERS, K_SEQ_LEN, K_TOP_K, K_FULL_OUTPUT,
       K_MOE_LAYER, K_COUNT };
static const char *const KEYS[K_COUNT] = {
	"residual", "layer", "layers", "seq_len", "top_k", "full_output",
	"moe_layer",
};

/* A boolean field (serde's bool: null is a type error too). */
static int
jp_bool(struct wire_jp *j, bool *out, const char *type_msg)
{
	wire_jp_ws(j);
	if (j->p < j->end && *j->p == 't')
		return jp_lit(j, "true") == 0 ? (*out = true, 0) : -EINVAL;
	if (j->p < j->end && *j->p == 'f')
		return jp_lit(j, "false") == 0 ? (*out = false, 0) : -EINVAL;
	if (j->p >= j->end)
		return wire_jp_fail(j, "");
	return wire_jp_type(j, type_msg);
}

static int
jp_field(struct wire_jp *j, int k, struct wire_json_req *r)
{
	struct jp_vec v = { NULL, 0 };
	int rc;

	switch (k) {
	case K_RESIDUAL:
		rc = wire_jp_array(j, RESIDUAL_MSG, &r->n_residual, residual_one,
			      &v);
		r->residual = v.a;
		if (rc == 0 && r->residual == NULL &&
		    (r->residual = malloc(sizeof(float))) == NULL)
			rc = -ENOMEM;
		return rc;
	case K_LAYER:
		if (jp_null(j))
			return 0;
		r->has_layer = true;
		return wire_jp_uint(j, &r->layer,
			       "'layer' must be a non-negative integer");
	case K_LAYERS:
		if (jp_null(j))
			return 0;
		rc = wire_jp_array(j, LAYERS_MSG, &r->n_layers, layer_one, &v);
		r->layers = v.a;
		r->has_layers = true;
		return rc;
	case K_SEQ_LEN:
		return wire_jp_uint(j, &r->seq_len,
			       "'seq_len' must be a non-negative integer");
	case K_TOP_K:
		return wire_jp_uint(j, &r->top_k,
			       "'top_k' must be a non-negative integer");
	case K_FULL_OUTPUT:
		return jp_bool(j, &r->full_output,
			       "'full_output' must be a boolean");
	default:
		return jp_bool(j, &r->moe_layer,
			       "'moe_layer' must be a boolean");
	}
}

struct jp_req {
	struct wire_json_req *r;
	unsigned int seen;	/* bit k: KEYS[k] read */
};

static int
request_member(struct wire_jp *j, void *arg, size_t i)
{
	struct jp_req *q = arg;
	char key[WIRE_JP_KEY_MAX];
	size_t kl;
	int rc, k;

	(void)i;
	if ((rc = wire_jp_key(j, key, &kl)) != 0)
		return rc;
	for (k = 0; k < K_COUNT; k++)
		if (kl == strlen(KEYS[k]) && memcmp(key, KEYS[k], kl) == 0)
			break;
	if (k == K_COUNT)
		return wire_jp_skip(j);
	if (q->seen & 1u << k)
		return wire_error_set(j->err, 400, "invalid JSON: "
				      "duplicate field `%s`", KEYS[k]);
	q->seen |= 1u << k;
	return jp_field(j, k, q->r);
}

/* The top-level object, j->p at its '{'. */
static int
jp_request(struct wire_jp *j, struct wire_json_req *r)
{
	struct jp_req q = { r, 0 };
	size_t count;
	int rc;

	j->p++;
	j->depth = 1;
	if ((rc = wire_jp_seq(j, '}', request_member, &q, &count)) != 0)
		return rc;
	wire_jp_ws(j);
	if (j->p < j->end)
		return wire_jp_fail(j, "trailing characters");
	if (!(q.seen & 1u << K_RESIDUAL))
		return wire_jp_type(j, "missing field `residual`");
	return 0;
}

int
wire_json_req_parse(struct wire_json_req *r, const char *body, size_t len,
		    struct wire_error *err)
{
	struct wire_jp j = {
		.s = (const unsigned char *)body,
		.p = (const unsigned char *)body,
		.end = (const unsigned char *)body + len,
		.err = err,
	};
	int rc;

	memset(r, 0, sizeof(*r));
	r->seq_len = 1;		/* §6 defaults */
	r->top_k = 8092;
	wire_jp_ws(&j);
	if (j.p >= j.end)
		rc = wire_jp_fail(&j, "");
	else if (*j.p != '{')
		rc = wire_jp_type(&j, "expected an object");
	else
		rc = jp_request(&j, r);
	if (rc != 0) {
		wire_json_req_free(r);
		if (rc == -ENOMEM)
			wire_error_set(err, 500, "out of memory");
	}
	return rc;
}
