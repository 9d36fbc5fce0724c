/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Content-Type classification and response format negotiation
 * (spec/wire.md §3, §5.1).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "wire_priv.h"

#define CT_F32 "application/x-larql-ffn"
#define CT_F16 "application/x-larql-ffn-f16"
#define CT_I8 "application/x-larql-ffn-i8"

void
wire_opts_default(struct wire_opts *o)
{
	/* §5.1: f16 on, i8 off (opt-in), as the reference. */
	o->f16 = true;
	o->i8 = false;
}

void
wire_opts_apply_env(struct wire_opts *o)
{
	/* §5.1: by presence, whatever the value (env::var(..).is_ok()). */
	if (getenv("LARQL_I8_WIRE") != NULL)
		o->i8 = true;
	if (getenv("LARQL_F16_WIRE_DISABLE") != NULL)
		o->f16 = false;
}

/* One row per format: what every layer prints or sends for it, and the
 * server switch (wire_opts) that must be on to answer in it. */
static const struct {
	const char *name;
	const char *content_type;
	int opt;		/* offsetof a bool in wire_opts; -1: always */
} fmts[WIRE_FMT_COUNT] = {
	[WIRE_FMT_F32] = { "f32", CT_F32, -1 },
	[WIRE_FMT_F16] = { "f16", CT_F16, offsetof(struct wire_opts, f16) },
	[WIRE_FMT_I8] = { "i8", CT_I8, offsetof(struct wire_opts, i8) },
	[WIRE_FMT_JSON] = { "json", "application/json", -1 },
};

/* §3 order of the substring tests: each binary type contains the f32
 * one, so the longer ones go first; f32 last, as the fallback. */
static const enum wire_fmt binary_order[] = {
	WIRE_FMT_I8, WIRE_FMT_F16, WIRE_FMT_F32,
};
#define N_BINARY (sizeof(binary_order) / sizeof(binary_order[0]))

const char *
wire_fmt_content_type(enum wire_fmt fmt)
{
	return fmt >= 0 && fmt < WIRE_FMT_COUNT ? fmts[fmt].content_type :
	       NULL;
}

const char *
wire_fmt_name(enum wire_fmt fmt)
{
	return fmt >= 0 && fmt < WIRE_FMT_COUNT ? fmts[fmt].name : "none";
}

bool
wire_fmt_enabled(const struct wire_opts *o, enum wire_fmt fmt)
{
	if (fmt < 0 || fmt >= WIRE_FMT_COUNT)
		return false;
	return fmts[fmt].opt < 0 ||
	       *(const bool *)((const char *)o + fmts[fmt].opt);
}

bool
wire_request_format(const char *ct, size_t len, enum wire_fmt *fmt)
{
	if (!wire_header_usable(ct, len) || !wire_contains(ct, len, CT_F32))
		return false;	/* §3: anything else is the JSON path */
	for (size_t i = 0; i < N_BINARY; i++)
		if (wire_contains(ct, len, fmts[binary_order[i]].content_type)) {
			*fmt = binary_order[i];
			break;
		}
	return true;
}

enum wire_fmt
wire_response_format(const char *accept, size_t len,
		     const struct wire_opts *o)
{
	/*
	 * §5.1 "first value only": the first Accept header field, tested
	 * whole (the reference's preferred_response_ct(headers.get(ACCEPT))
	 * does `accept.contains(..)` on it, never splitting on ','). See
	 * wire.h for what this means for the default client Accept. A
	 * format the server has switched off is never chosen.
	 */
	if (!wire_header_usable(accept, len))
		return WIRE_FMT_F32;
	for (size_t i = 0; i < N_BINARY; i++)
		if (wire_fmt_enabled(o, binary_order[i]) &&
		    wire_contains(accept, len,
			     fmts[binary_order[i]].content_type))
			return binary_order[i];
	return WIRE_FMT_F32;
}
