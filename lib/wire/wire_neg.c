/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Content-Type classification and response format negotiation
 * (spec/wire.md §3, §5.1).
 */
#include <stdlib.h>
#include <string.h>

#include "wire.h"

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

const char *
wire_fmt_content_type(enum wire_fmt fmt)
{
	switch (fmt) {
	case WIRE_FMT_F16:
		return CT_F16;
	case WIRE_FMT_I8:
		return CT_I8;
	case WIRE_FMT_F32:
	default:
		return CT_F32;
	}
}

const char *
wire_fmt_name(enum wire_fmt fmt)
{
	switch (fmt) {
	case WIRE_FMT_F16:
		return "f16";
	case WIRE_FMT_I8:
		return "i8";
	case WIRE_FMT_F32:
	default:
		return "f32";
	}
}

/*
 * The reference reads headers with HeaderValue::to_str(), which fails (and
 * the header then counts as absent) unless every byte is visible ASCII or
 * HTAB.
 */
static bool
header_usable(const char *v, size_t len)
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

static bool
contains(const char *v, size_t len, const char *needle)
{
	return memmem(v, len, needle, strlen(needle)) != NULL;
}

bool
wire_request_format(const char *ct, size_t len, enum wire_fmt *fmt)
{
	if (!header_usable(ct, len) || !contains(ct, len, CT_F32))
		return false;	/* §3: anything else is the JSON path */
	/* §3 order: the f32 type is a substring of the other two. */
	if (contains(ct, len, CT_I8))
		*fmt = WIRE_FMT_I8;
	else if (contains(ct, len, CT_F16))
		*fmt = WIRE_FMT_F16;
	else
		*fmt = WIRE_FMT_F32;
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
	 * wire.h for what this means for the default client Accept.
	 */
	if (!header_usable(accept, len))
		return WIRE_FMT_F32;
	if (o->i8 && contains(accept, len, CT_I8))
		return WIRE_FMT_I8;
	if (o->f16 && contains(accept, len, CT_F16))
		return WIRE_FMT_F16;
	return WIRE_FMT_F32;
}
