/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * Response heads (RFC 9112 §4, §6), the Date field (RFC 9110 §6.6.1,
 * §5.6.7) and JSON error bodies (spec/wire.md §4). The body itself is sent
 * by reference by the caller; only the head is written here.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "http.h"

const char *
http_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 417: return "Expectation Failed";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Unknown";
	}
}

void
http_date_fmt(char out[30], time_t t)
{
	static const char wday[7][4] = {
		"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char mon[12][4] = {
		"Jan", "Feb", "Mar", "Apr", "May", "Jun",
		"Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	struct tm tm;

	/* IMF-fixdate is always GMT (RFC 9110 §5.6.7); the names are fixed
	 * English, so no strftime (it follows the locale). */
	int y;

	gmtime_r(&t, &tm);
	y = (tm.tm_year + 1900) % 10000;	/* 4 digits, as the grammar */
	memcpy(out, wday[tm.tm_wday], 3);
	out[3] = ',';
	out[4] = ' ';
	out[5] = '0' + tm.tm_mday / 10;
	out[6] = '0' + tm.tm_mday % 10;
	out[7] = ' ';
	memcpy(out + 8, mon[tm.tm_mon], 3);
	out[11] = ' ';
	out[12] = '0' + y / 1000;
	out[13] = '0' + y / 100 % 10;
	out[14] = '0' + y / 10 % 10;
	out[15] = '0' + y % 10;
	out[16] = ' ';
	out[17] = '0' + tm.tm_hour / 10;
	out[18] = '0' + tm.tm_hour % 10;
	out[19] = ':';
	out[20] = '0' + tm.tm_min / 10;
	out[21] = '0' + tm.tm_min % 10;
	out[22] = ':';
	out[23] = '0' + tm.tm_sec / 10;
	out[24] = '0' + tm.tm_sec % 10;
	memcpy(out + 25, " GMT", 5);
}

const char *
http_date_get(struct http_date_cache *c, time_t now)
{
	if (c->str[0] == '\0' || c->sec != now) {
		http_date_fmt(c->str, now);
		c->sec = now;
	}
	return c->str;
}

struct out {
	char *p;
	size_t left;
	bool full;
};

static void
put(struct out *o, const char *s, size_t n)
{
	if (n > o->left) {
		o->full = true;
		return;
	}
	memcpy(o->p, s, n);
	o->p += n;
	o->left -= n;
}

static void
puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void
put_u64(struct out *o, uint64_t x)
{
	char d[20];
	int i = 20;

	do {
		d[--i] = '0' + x % 10;
		x /= 10;
	} while (x);
	put(o, d + i, 20 - i);
}

#define PUTL(o, lit) put(o, lit, sizeof(lit) - 1)

ssize_t
http_write_head(char *buf, size_t cap, const struct http_response *r)
{
	/* memcpy pieces, no printf: one head per response on the data path */
	struct out o = { buf, cap, false };
	char st[4] = { '0' + r->status / 100 % 10, '0' + r->status / 10 % 10,
		'0' + r->status % 10, ' ' };

	PUTL(&o, "HTTP/1.1 ");
	put(&o, st, 4);
	puts_(&o, http_reason(r->status));
	PUTL(&o, "\r\n");
	if (r->content_type != NULL) {
		PUTL(&o, "Content-Type: ");
		puts_(&o, r->content_type);
		PUTL(&o, "\r\n");
	}
	PUTL(&o, "Content-Length: ");
	put_u64(&o, r->content_length);
	if (r->keep_alive)
		PUTL(&o, "\r\nConnection: keep-alive\r\n");
	else
		PUTL(&o, "\r\nConnection: close\r\n");
	if (r->date != NULL) {
		PUTL(&o, "Date: ");
		puts_(&o, r->date);
		PUTL(&o, "\r\n");
	}
	if (r->extra != NULL)
		puts_(&o, r->extra);
	PUTL(&o, "\r\n");
	/* room for a NUL too, as snprintf-style callers expect */
	if (o.full || o.left == 0)
		return -ENOSPC;
	*o.p = '\0';
	return o.p - buf;
}

ssize_t
http_write_continue(char *buf, size_t cap)
{
	static const char c[] = "HTTP/1.1 100 Continue\r\n\r\n";

	if (cap < sizeof(c) - 1)
		return -ENOSPC;
	memcpy(buf, c, sizeof(c) - 1);
	return sizeof(c) - 1;
}

ssize_t
http_json_error(char *buf, size_t cap, const char *msg)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	const uint8_t *s = (const uint8_t *)msg;

#define PUT(ch) do { if (o >= cap) return -ENOSPC; buf[o++] = (ch); } while (0)
	for (const char *h = "{\"error\":\""; *h; h++)
		PUT(*h);
	for (; *s; s++) {
		switch (*s) {
		case '"': PUT('\\'); PUT('"'); break;
		case '\\': PUT('\\'); PUT('\\'); break;
		case '\n': PUT('\\'); PUT('n'); break;
		case '\r': PUT('\\'); PUT('r'); break;
		case '\t': PUT('\\'); PUT('t'); break;
		case '\b': PUT('\\'); PUT('b'); break;
		case '\f': PUT('\\'); PUT('f'); break;
		default:
			if (*s < 0x20) {
				PUT('\\'); PUT('u'); PUT('0'); PUT('0');
				PUT(hex[*s >> 4]); PUT(hex[*s & 15]);
			} else {
				PUT(*s);
			}
		}
	}
	PUT('"');
	PUT('}');
#undef PUT
	if (o < cap)
		buf[o] = '\0';
	return o;
}
