/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Internal to lib/wire: the §4 model checks shared by the binary and the
 * JSON paths (the reference runs the same validate_residual /
 * collect_scan_layers / validate_owned for both).
 */
#ifndef FFN_WIRE_PRIV_H
#define FFN_WIRE_PRIV_H

#include <string.h>

#include "wire.h"

/* A layer list in one of the forms the two paths hold. */
struct wire_layers {
	bool present;		/* false: neither 'layer' nor 'layers' */
	size_t n;
	uint32_t single;	/* n == 1 and both lists NULL */
	const uint8_t *le32;	/* binary batch list, unaligned u32 LE */
	const uint64_t *u64;	/* JSON list */
};

int wire_validate_common(const struct wire_model *m, uint64_t seq_len,
			 uint64_t n_values, bool full_output,
			 const struct wire_layers *l, struct wire_error *err);

/*
 * The strict JSON reader of wire_json_req.c (serde_json's rules; see its
 * file comment), shared by the dense request and the expert bodies
 * (wire_moe_json.c). A syntax error (EOF included) and a type ("data")
 * error are worded by syn and type; a zeroed wire_jp_err means the dense
 * path's 400 "invalid JSON: ".
 */
#define WIRE_JP_MAX_DEPTH 127	/* serde_json's recursion budget, 128 */
#define WIRE_JP_KEY_MAX 16	/* longer keys are none of ours */

struct wire_jp_err {
	const char *prefix;	/* "invalid JSON: ", ... */
	int status;
	bool text;		/* wire_error.text */
};

struct wire_jp {
	const unsigned char *s, *p, *end;
	struct wire_error *err;
	unsigned int depth;
	struct wire_jp_err syn, type;
};

/* A number token, classified as serde_json does. */
struct wire_jnum {
	bool is_int;		/* no fraction/exponent, fits 64 bits */
	bool neg;
	uint64_t mag;		/* |value| when is_int */
	double d;		/* the value as an f64 when !is_int */
};

/* Errors: a syntax error at j->p (EOF when at the end), a type error. */
int wire_jp_fail(struct wire_jp *j, const char *what);
int wire_jp_type(struct wire_jp *j, const char *msg);
void wire_jp_ws(struct wire_jp *j);
/* Whitespace skipped, not at the end (else EOF). */
int wire_jp_begin(struct wire_jp *j);
/* A string at j->p ('"'); decoded into key (WIRE_JP_KEY_MAX bytes) when
 * key is not NULL; *klen its full length. */
int wire_jp_string(struct wire_jp *j, char *key, size_t *klen);
/* A number token at j->p; -ERANGE (j->p unmoved) when it overflows f64. */
int wire_jp_number(struct wire_jp *j, struct wire_jnum *n);
/* A number; overflow is the syntax error "number out of range". */
int wire_jp_num_any(struct wire_jp *j, struct wire_jnum *n);
/* A value that must be a number (msg: the type error otherwise). */
int wire_jp_number_as(struct wire_jp *j, struct wire_jnum *n,
		      const char *msg);
/* The rest of an array or object after its bracket: one(j, arg, i) per
 * element or member, separated by ',', ended by close; *count of them. */
int wire_jp_seq(struct wire_jp *j, unsigned char close,
		int (*one)(struct wire_jp *, void *, size_t), void *arg,
		size_t *count);
/* A member's key and ':'. */
int wire_jp_key(struct wire_jp *j, char *key, size_t *klen);
/* Any value, checked and dropped. */
int wire_jp_skip(struct wire_jp *j);
/* A JSON integer >= 0 that fits 64 bits (serde's u64/usize). */
int wire_jp_uint(struct wire_jp *j, uint64_t *v, const char *msg);
/* "[" elements "]", each read by one(); msg when it is not an array. */
int wire_jp_array(struct wire_jp *j, const char *msg, size_t *count,
		  int (*one)(struct wire_jp *, void *, size_t), void *arg);
/* A number read as serde reads an f32 (integers directly, others as
 * the f64 narrowed). */
float wire_jnum_f32(const struct wire_jnum *n);

/* A JSON string literal of s ("..." with serde_json's escapes, as
 * wire_error_json) into buf of cap bytes, NUL-terminated; its length or
 * -ENOSPC (6 * strlen(s) + 3 always suffices). */
int wire_json_str(char *buf, size_t cap, const char *s);

static inline uint32_t
wire_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline void
wire_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/*
 * The reference reads headers with HeaderValue::to_str(), which fails (and
 * the header then counts as absent) unless every byte is visible ASCII or
 * HTAB.
 */
static inline bool
wire_header_usable(const char *v, size_t len)
{
	if (v == NULL)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)v[i];

		if (c != '\t' && (c < 0x20 || c > 0x7e))
			return false;
	}
	return true;
}

static inline bool
wire_contains(const char *v, size_t len, const char *needle)
{
	return memmem(v, len, needle, strlen(needle)) != NULL;
}

/* ryu's layout of shortest digits (wire_json.c): wire_json_fmt_f64 and
 * wire_json_fmt_f32 differ only in kmax/kmin. */
int wire_json_layout(char *buf, int o, const char *d, int len, int kk,
		     int kmax, int kmin);

#endif /* FFN_WIRE_PRIV_H */
