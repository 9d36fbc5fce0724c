/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * A small strict JSON scanner (RFC 8259, refusing what serde_json
 * refuses: raw control characters in strings, unknown escapes, lone
 * surrogates, bad numbers, nesting past 127 levels). It finds extents, never
 * builds values: the front copies members and results byte for byte
 * (spec/wire.md §6, §7). UTF-8 is passed through unchecked (the client's
 * body was checked by wire_json_req_parse; the answers are our shards').
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "front_frame_priv.h"

void
front_jws(struct front_jscan *s)
{
	while (s->i < s->len && (s->b[s->i] == ' ' || s->b[s->i] == '\t' ||
				 s->b[s->i] == '\n' || s->b[s->i] == '\r'))
		s->i++;
}

bool
front_jat(const struct front_jscan *s, char c)
{
	return s->i < s->len && s->b[s->i] == c;
}

static bool
jdigit(const struct front_jscan *s)
{
	return s->i < s->len && s->b[s->i] >= '0' && s->b[s->i] <= '9';
}

static int
jhex4(const char *p, uint32_t *v)
{
	*v = 0;
	for (int k = 0; k < 4; k++) {
		char c = p[k];
		uint32_t d;

		if (c >= '0' && c <= '9')
			d = (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (uint32_t)(c - 'A' + 10);
		else
			return -1;
		*v = *v << 4 | d;
	}
	return 0;
}

/* A raw byte of a string (not an escape), told apart from code points */
#define JRAW 0x80000000u

/*
 * One character of a string at s->i (not the closing quote): a raw byte
 * (cp = JRAW | byte; UTF-8 passes through) or an escape (cp = the code
 * point; a surrogate pair is one). Raw control characters, unknown
 * escapes and lone surrogates are errors, as in serde_json.
 */
static int
jchar(struct front_jscan *s, uint32_t *cp)
{
	unsigned char c = (unsigned char)s->b[s->i++];
	uint32_t lo;

	if (c < 0x20)
		return -1;
	if (c != '\\') {
		*cp = JRAW | c;
		return 0;
	}
	if (s->i >= s->len)
		return -1;
	switch (s->b[s->i++]) {
	case '"': *cp = '"'; return 0;
	case '\\': *cp = '\\'; return 0;
	case '/': *cp = '/'; return 0;
	case 'b': *cp = '\b'; return 0;
	case 'f': *cp = '\f'; return 0;
	case 'n': *cp = '\n'; return 0;
	case 'r': *cp = '\r'; return 0;
	case 't': *cp = '\t'; return 0;
	case 'u': break;
	default: return -1;
	}
	if (s->len - s->i < 4 || jhex4(s->b + s->i, cp) != 0)
		return -1;
	s->i += 4;
	if (*cp >= 0xdc00 && *cp <= 0xdfff)
		return -1;	/* a low surrogate first */
	if (*cp < 0xd800 || *cp > 0xdbff)
		return 0;
	if (s->len - s->i < 6 || s->b[s->i] != '\\' || s->b[s->i + 1] != 'u' ||
	    jhex4(s->b + s->i + 2, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
		return -1;
	s->i += 6;
	*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	return 0;
}

static int
jstring(struct front_jscan *s)
{
	uint32_t cp;

	s->i++;		/* the opening quote */
	while (s->i < s->len) {
		if (s->b[s->i] == '"') {
			s->i++;
			return 0;
		}
		if (jchar(s, &cp) != 0)
			return -1;
	}
	return -1;
}

static int
jnumber(struct front_jscan *s)
{
	if (front_jat(s, '-'))
		s->i++;
	if (front_jat(s, '0')) {
		s->i++;		/* one leading zero only */
	} else if (jdigit(s)) {
		while (jdigit(s))
			s->i++;
	} else {
		return -1;
	}
	if (front_jat(s, '.')) {
		s->i++;
		if (!jdigit(s))
			return -1;
		while (jdigit(s))
			s->i++;
	}
	if (front_jat(s, 'e') || front_jat(s, 'E')) {
		s->i++;
		if (front_jat(s, '+') || front_jat(s, '-'))
			s->i++;
		if (!jdigit(s))
			return -1;
		while (jdigit(s))
			s->i++;
	}
	return 0;
}

static int
jliteral(struct front_jscan *s, const char *lit)
{
	size_t n = strlen(lit);

	if (s->len - s->i < n || memcmp(s->b + s->i, lit, n) != 0)
		return -1;
	s->i += n;
	return 0;
}

/* One value at s->i (no leading space), inside depth containers. */
int
front_jvalue(struct front_jscan *s, int depth)
{
	char close;

	if (s->i >= s->len)
		return -1;
	switch (s->b[s->i]) {
	case '"':
		return jstring(s);
	case 't':
		return jliteral(s, "true");
	case 'f':
		return jliteral(s, "false");
	case 'n':
		return jliteral(s, "null");
	case '{':
		close = '}';
		break;
	case '[':
		close = ']';
		break;
	default:
		return jnumber(s);
	}
	if (depth >= FRONT_JSON_MAX_DEPTH)
		return -1;
	s->i++;
	front_jws(s);
	if (front_jat(s, close)) {
		s->i++;
		return 0;
	}
	for (;;) {
		if (close == '}') {
			if (!front_jat(s, '"') || jstring(s) != 0)
				return -1;
			front_jws(s);
			if (!front_jat(s, ':'))
				return -1;
			s->i++;
			front_jws(s);
		}
		if (front_jvalue(s, depth + 1) != 0)
			return -1;
		front_jws(s);
		if (front_jat(s, close)) {
			s->i++;
			return 0;
		}
		if (!front_jat(s, ','))
			return -1;
		s->i++;
		front_jws(s);
	}
}

/*
 * Walk the members of the object at s->i (after front_jopen()): 1 and *m for
 * each, 0 after the closing brace, -1 on a syntax error. Values are
 * checked as they are passed.
 */
int
front_jopen(struct front_jscan *s)
{
	front_jws(s);
	if (!front_jat(s, '{'))
		return -1;
	s->i++;
	front_jws(s);
	return 0;
}

int
front_jnext(struct front_jscan *s, bool first, struct front_jmember *m)
{
	front_jws(s);
	if (front_jat(s, '}')) {
		s->i++;
		return 0;
	}
	if (!first) {
		if (!front_jat(s, ','))
			return -1;
		s->i++;
		front_jws(s);
	}
	if (!front_jat(s, '"'))
		return -1;
	m->key = s->i;
	if (jstring(s) != 0)
		return -1;
	m->key_len = s->i - m->key;
	front_jws(s);
	if (!front_jat(s, ':'))
		return -1;
	s->i++;
	front_jws(s);
	m->val = s->i;
	if (front_jvalue(s, 1) != 0)
		return -1;
	m->val_len = s->i - m->val;
	return 1;
}

/* After the closing brace of the top-level value: only whitespace. */
int
front_jend(struct front_jscan *s)
{
	front_jws(s);
	return s->i == s->len ? 0 : -1;
}

/* Whether the key (with its quotes, already scanned) unescapes to name
 * (ASCII): "lay\u0065r" is "layer" (serde compares decoded keys). */
bool
front_jkey_is(const char *b, const struct front_jmember *m, const char *name)
{
	struct front_jscan s = { b, m->key + m->key_len - 1, m->key + 1 };
	size_t k = 0, n = strlen(name);
	uint32_t cp;

	while (s.i < s.len) {
		if (jchar(&s, &cp) != 0 || k == n)
			return false;
		/* a raw byte >= 0x80 or an escape above ASCII never
		 * matches an ASCII name */
		if ((cp & JRAW ? cp & ~JRAW : cp) != (unsigned char)name[k])
			return false;
		k++;
	}
	return k == n;
}

/* serde's as_u64(): a number without sign, fraction or exponent that fits
 * u64 (others parse as i64 or f64, and as_u64 gives None: 0 here). */
uint64_t
front_jas_u64(const char *v, size_t len)
{
	uint64_t r = 0;

	if (len == 0 || len > 20)
		return 0;
	for (size_t k = 0; k < len; k++) {
		if (v[k] < '0' || v[k] > '9')
			return 0;
		if (__builtin_mul_overflow(r, 10, &r) ||
		    __builtin_add_overflow(r, (uint64_t)(v[k] - '0'), &r))
			return 0;
	}
	return r;
}

