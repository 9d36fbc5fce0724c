/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * libFuzzer harness: the HTTP/1.1 request parser (lib/http), driven as
 * lib/shard/shard_server.c drives it (conn_process, on_head,
 * shard_conn_need_buf), over a byte stream that may hold several
 * pipelined requests with Content-Length or chunked bodies.
 *
 * Input: 4 control bytes, then the stream.
 *   [0] bits 0-1 body mode: 0 the parser copies (http_feed), 1 the caller
 *                copies (http_body_want/commit), 2 discard, 3 per request
 *                (discard when index % 3 == 2, the caller moves the
 *                bytes, copied or dropped, when index % 2 == 1)
 *       bits 2-3 head buffer: 8192, 256, 64, 1024 bytes
 *       bits 4-5 max_body: default (64M), 16, 1000, 65536
 *       bits 6-7 first chunked buffer: 1, 16, 4096, 64K (the shard's)
 *   [1]  number of split points (% 64; 255: one byte per call)
 *   [2-3] seed of the split points and of when the caller gives a body
 *         buffer (at HTTP_EV_HEAD, or only when asked by HTTP_EV_NEED_BUF)
 *
 * Each piece is copied to its own allocation, so a read past the bytes
 * given in one http_feed() is an ASan report. The stream is fed twice:
 * whole, with the parser copying, and split, with the chosen mode; http.h
 * promises the same result for any split, and the caller-copy path must
 * equal the parser-copy one, so every event, offset, head field, body
 * byte and error of the two runs must agree. Invariants checked on every
 * call are those http.h states (see check_* below).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http.h"
#include "fuzz_util.h"

#define MODE_COPY 0
#define MODE_CALLER 1
#define MODE_DISCARD 2
#define MODE_MIXED 3

/* A Content-Length body larger than this is read and dropped (a caller
 * may; the shard would allocate it): keeps one run within memory. */
#define BIG_BODY (1u << 20)

struct cfg {
	int mode;
	bool caller_copy_ok;	/* false: the reference run */
	uint32_t head_cap;
	uint64_t max_body;	/* for http_parser_init (0: default) */
	uint64_t limit;		/* the effective limit */
	uint64_t chunk_buf0;
	uint32_t seed;
};

/* Everything a caller can observe, folded into one digest per run. */
struct obs {
	uint64_t h;		/* FNV-1a over the events */
	size_t consumed;
	int requests;
	int status;
	const char *err;
	bool failed;
};

static void
mix(struct obs *o, const void *d, size_t n)
{
	const uint8_t *b = d;

	for (size_t i = 0; i < n; i++) {
		o->h ^= b[i];
		o->h *= 0x100000001b3ull;
	}
}

static void
mix_u64(struct obs *o, uint64_t v)
{
	mix(o, &v, sizeof(v));
}

static void
mix_str(struct obs *o, const struct http_request *r, const char *head,
	struct http_str s)
{
	/* offsets into the head buffer, not addresses: two runs use two
	 * buffers */
	if (s.p == NULL) {
		mix_u64(o, UINT64_MAX);
		return;
	}
	if (s.p >= head && s.p < head + r->head_len)
		mix_u64(o, (uint64_t)(s.p - head));
	else
		mix_u64(o, UINT64_MAX - 1);
	mix_u64(o, s.len);
	mix(o, s.p, s.len);
}

/* A head string lies inside the head (path "/" of an absolute-form
 * target without a path is a literal, RFC 9110 §4.2.3). */
static void
check_str(const struct http_request *r, const char *head, struct http_str s,
	  bool may_be_slash)
{
	if (s.p == NULL)
		return;
	if (may_be_slash && s.len == 1 && s.p[0] == '/' &&
	    !(s.p >= head && s.p < head + r->head_len))
		return;
	FZ_CHECK(s.p >= head);
	FZ_CHECK(s.p + s.len <= head + r->head_len);
}

static void
check_head(const struct cfg *c, const struct http_parser *p,
	   const uint8_t *stream, size_t abs)
{
	const struct http_request *r = &p->req;

	FZ_CHECK(r->head_len >= 4 && r->head_len <= c->head_cap);
	FZ_CHECK(r->head_len <= abs);
	/* the head buffer is a copy of the bytes just consumed */
	FZ_CHECK(memcmp(p->head, stream + abs - r->head_len,
			r->head_len) == 0);
	FZ_CHECK(memcmp(p->head + r->head_len - 4, "\r\n\r\n", 4) == 0);
	FZ_CHECK(r->method_str.p == p->head && r->method_str.len > 0);
	FZ_CHECK(r->target.len > 0);
	check_str(r, p->head, r->method_str, false);
	check_str(r, p->head, r->target, false);
	check_str(r, p->head, r->path, true);
	check_str(r, p->head, r->query, false);
	check_str(r, p->head, r->host, false);
	check_str(r, p->head, r->content_type, false);
	check_str(r, p->head, r->accept, false);
	check_str(r, p->head, r->authorization, false);
	check_str(r, p->head, r->forwarded_for, false);
	/* origin-form starts with '/'; RFC 9112 §3.2.4: asterisk-form is
	 * "*" and only for OPTIONS */
	FZ_CHECK(r->path.p != NULL && r->path.len > 0);
	FZ_CHECK(r->path.p[0] == '/' ||
		 (r->method == HTTP_M_OPTIONS && r->path.len == 1 &&
		  r->path.p[0] == '*' && r->query.len == 0));
	FZ_CHECK(r->minor == 0 || r->minor == 1);
	FZ_CHECK(!r->expect_continue || r->minor == 1);
	FZ_CHECK(!(r->chunked && r->has_content_length));
	FZ_CHECK(!r->chunked || r->minor == 1);
	FZ_CHECK(r->has_content_length || r->content_length == 0);
	FZ_CHECK(r->content_length <= c->limit);
	FZ_CHECK(r->has_body == (r->chunked || r->content_length > 0));
	FZ_CHECK(r->body_len == 0);
	/* RFC 9112 §3.2: HTTP/1.1 has exactly one (valid) Host */
	FZ_CHECK(r->minor == 0 || r->host.p != NULL);
	FZ_CHECK(!http_parser_idle(p) && !http_parser_in_head(p));
}

static void
check_error(const struct http_parser *p)
{
	static const int known[] = { 400, 413, 414, 417, 431, 500, 501, 505 };
	char buf[512], small[8];
	bool ok = false;
	ssize_t n;

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		ok |= p->status == known[i];
	FZ_CHECK(ok);
	FZ_CHECK(p->err != NULL && p->err[0] != '\0');
	/* the answer the shard sends for it must be writable */
	FZ_CHECK(strcmp(http_reason(p->status), "Unknown") != 0);
	n = http_json_error(buf, sizeof(buf), p->err);
	FZ_CHECK(n > 0 && (size_t)n < sizeof(buf) && buf[n] == '\0');
	FZ_CHECK(http_json_error(small, sizeof(small), p->err) == -ENOSPC);
	struct http_response h = {
		.status = p->status,
		.content_type = "application/json",
		.content_length = (uint64_t)n,
		.keep_alive = false,
		.date = "Sun, 06 Nov 1994 08:49:37 GMT",
	};
	n = http_write_head(buf, sizeof(buf), &h);
	FZ_CHECK(n > 0 && (size_t)n <= sizeof(buf));
	FZ_CHECK(memcmp(buf + n - 4, "\r\n\r\n", 4) == 0);
}

/* http_str_eq / http_str_contains, as the shard routes with them,
 * against their plain definitions (http.h). */
static void
check_str_helpers(const struct http_request *r)
{
	static const char *const lits[] = {
		"GET", "post", "/v1/walk-ffn", "application/x-larql-ffn",
		"application/x-larql-ffn-f16", "application/json", "",
	};
	const struct http_str strs[] = {
		r->method_str, r->path, r->content_type, r->accept, r->host,
		r->forwarded_for,
	};

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		for (size_t k = 0; k < sizeof(lits) / sizeof(lits[0]); k++) {
			struct http_str s = strs[i];
			size_t n = strlen(lits[k]);
			bool eq = s.p != NULL && s.len == n &&
				  strncasecmp(s.p, lits[k], n) == 0;
			bool has = false;

			for (size_t j = 0; s.p != NULL && j + n <= s.len &&
			     !has; j++)
				has = memcmp(s.p + j, lits[k], n) == 0;
			FZ_CHECK(http_str_eq(s, lits[k]) == eq);
			FZ_CHECK(http_str_contains(s, lits[k]) == has);
		}
	}
}

/* Whether the caller drops request idx's body; the same in both runs. */
static bool
body_discard(const struct cfg *c, const struct http_request *r, int idx)
{
	return c->mode == MODE_DISCARD || (c->mode == MODE_MIXED &&
					   idx % 3 == 2) ||
	       (!r->chunked && r->content_length > BIG_BODY);
}

/* Whether the caller moves the body bytes itself (http_body_want and
 * http_body_commit); never in the reference run, which must agree. */
static bool
body_by_caller(const struct cfg *c, int idx)
{
	return c->caller_copy_ok && (c->mode == MODE_CALLER ||
				     (c->mode == MODE_MIXED && idx % 2 == 1));
}

/* Whether the caller gives the body buffer only on HTTP_EV_NEED_BUF. */
static bool
late_buf(const struct cfg *c, int idx)
{
	uint32_t s = c->seed ^ (uint32_t)idx * 0x85ebca6bu;

	return (fz_rand(&s) & 3) == 0;
}

struct run {
	const struct cfg *c;
	const uint8_t *stream;
	size_t len;
	struct http_parser p;
	char *head;
	uint8_t *body;
	uint64_t cap;
	bool discard;		/* the current request's body is dropped */
	bool by_caller;		/* ... moved by http_body_want/commit */
	bool in_req;		/* HEAD seen, DONE not yet */
	bool buf_given;
	struct obs o;
};

static void
give_buf(struct run *r)
{
	struct http_request *q = &r->p.req;

	if (r->discard) {
		http_body_discard(&r->p);
	} else {
		r->cap = q->chunked ? r->c->chunk_buf0 : q->content_length;
		r->body = malloc(r->cap);
		FZ_CHECK(r->body != NULL);
		/* a buffer smaller than the Content-Length is refused */
		if (!q->chunked)
			FZ_CHECK(http_body_buf(&r->p, r->body,
					       r->cap - 1) == -EINVAL);
		FZ_CHECK(http_body_buf(&r->p, r->body, r->cap) == 0);
	}
	r->buf_given = true;
}

/* HTTP_EV_NEED_BUF after a buffer was given: a chunked body outgrew it;
 * double it as shard_conn_need_buf() does. */
static void
grow_buf(struct run *r)
{
	struct http_request *q = &r->p.req;
	uint64_t have = q->body_len, cap = r->cap * 2;
	uint8_t *nb;

	FZ_CHECK(!r->discard);
	FZ_CHECK(q->chunked);
	FZ_CHECK(have == r->cap);
	if (cap > r->c->limit)
		cap = r->c->limit;
	/* the shard relies on it: the parser answers 413 before a chunk
	 * could take the body past max_body */
	FZ_CHECK(cap > have);
	nb = malloc(cap);
	FZ_CHECK(nb != NULL);
	memcpy(nb, r->body, have);
	free(r->body);
	r->body = nb;
	/* a buffer that does not hold the bytes received is refused */
	if (have > 0)
		FZ_CHECK(http_body_buf(&r->p, nb, have - 1) == -EINVAL);
	r->cap = cap;
	FZ_CHECK(http_body_buf(&r->p, nb, cap) == 0);
}

static void
on_done(struct run *r, size_t abs)
{
	struct http_request *q = &r->p.req;

	FZ_CHECK(r->in_req);
	/* a body is complete only into a buffer given, or dropped */
	FZ_CHECK(!q->has_body || r->buf_given);
	FZ_CHECK(q->body_len <= r->c->limit);
	if (!q->chunked)
		FZ_CHECK(q->body_len == q->content_length);
	mix_u64(&r->o, q->body_len);
	if (q->has_body && !r->discard) {
		FZ_CHECK(q->body_len <= r->cap);
		/* a Content-Length body is the bytes just consumed */
		if (!q->chunked)
			FZ_CHECK(memcmp(r->body, r->stream + abs - q->body_len,
					q->body_len) == 0);
		mix(&r->o, r->body, q->body_len);
	}
	free(r->body);
	r->body = NULL;
	r->cap = 0;
	r->in_req = false;
	r->buf_given = false;
	r->o.requests++;
	http_next(&r->p);
	FZ_CHECK(http_parser_idle(&r->p) && !http_parser_in_head(&r->p));
}

/* One event; false when the stream must stop (error). */
static bool
on_event(struct run *r, int ev, size_t abs)
{
	struct http_request *q = &r->p.req;
	size_t used;

	if (ev != HTTP_EV_MORE) {
		mix_u64(&r->o, (uint64_t)(int64_t)ev);
		mix_u64(&r->o, abs);
	}
	switch (ev) {
	case HTTP_EV_ERROR:
		check_error(&r->p);
		/* framing is lost: the parser stays in error */
		FZ_CHECK(http_feed(&r->p, r->stream, r->len, &used) ==
			 HTTP_EV_ERROR && used == 0);
		FZ_CHECK(http_feed(&r->p, NULL, 0, &used) == HTTP_EV_ERROR);
		r->o.failed = true;
		r->o.status = r->p.status;
		r->o.err = r->p.err;
		mix_u64(&r->o, (uint64_t)r->p.status);
		return false;
	case HTTP_EV_MORE:
		return true;
	case HTTP_EV_HEAD:
		FZ_CHECK(!r->in_req);
		check_head(r->c, &r->p, r->stream, abs);
		check_str_helpers(q);
		mix_u64(&r->o, (uint64_t)q->method);
		mix_str(&r->o, q, r->head, q->method_str);
		mix_str(&r->o, q, r->head, q->target);
		mix_str(&r->o, q, r->head, q->path);
		mix_str(&r->o, q, r->head, q->query);
		mix_str(&r->o, q, r->head, q->host);
		mix_str(&r->o, q, r->head, q->content_type);
		mix_str(&r->o, q, r->head, q->accept);
		mix_str(&r->o, q, r->head, q->authorization);
		mix_str(&r->o, q, r->head, q->forwarded_for);
		mix_u64(&r->o, (uint64_t)q->minor << 8 | q->keep_alive << 4 |
			q->expect_continue << 3 | q->chunked << 2 |
			q->has_body << 1 | q->has_content_length);
		mix_u64(&r->o, q->content_length);
		mix_u64(&r->o, q->head_len);
		r->in_req = true;
		r->discard = body_discard(r->c, q, r->o.requests);
		r->by_caller = body_by_caller(r->c, r->o.requests);
		if (q->has_body && !late_buf(r->c, r->o.requests))
			give_buf(r);
		return true;
	case HTTP_EV_NEED_BUF:
		FZ_CHECK(r->in_req && q->has_body);
		/* every event once, but NEED_BUF holds until answered */
		FZ_CHECK(http_feed(&r->p, r->stream, r->len, &used) ==
			 HTTP_EV_NEED_BUF && used == 0);
		if (!r->buf_given)
			give_buf(r);
		else
			grow_buf(r);
		return true;
	case HTTP_EV_DONE:
		on_done(r, abs);
		return true;
	default:
		FZ_CHECK(0 && "unknown event");
		return false;
	}
}

/* Feed piece [0, n) of the stream that starts at absolute offset base;
 * false when the stream stopped. */
static bool
feed_piece(struct run *r, const uint8_t *piece, size_t n, size_t base)
{
	size_t off = 0;

	for (;;) {
		size_t used = 0;
		int ev;

		if (r->by_caller && r->in_req && off < n) {
			uint8_t *dst = (uint8_t *)1;
			uint64_t w = http_body_want(&r->p, &dst);

			if (w > 0) {
				uint64_t k = n - off < w ? n - off : w;

				/* http.h: after http_body_discard() *dst is
				 * NULL: skip the copy, commit the count */
				if (r->discard) {
					FZ_CHECK(dst == NULL);
				} else {
					FZ_CHECK(dst == r->body +
						 r->p.req.body_len);
					FZ_CHECK(w <= r->cap -
						 r->p.req.body_len);
					memcpy(dst, piece + off, k);
				}
				http_body_commit(&r->p, k);
				off += k;
				r->o.consumed += k;
				FZ_CHECK(r->p.req.body_len <= r->c->limit);
				continue;
			}
		}
		/* no bytes held: the shard calls with NULL, 0 */
		ev = http_feed(&r->p, off < n ? piece + off : NULL, n - off,
			       &used);
		FZ_CHECK(ev >= HTTP_EV_ERROR && ev <= HTTP_EV_DONE);
		FZ_CHECK(used <= n - off);
		if (ev == HTTP_EV_MORE)
			FZ_CHECK(used == n - off);
		if (ev != HTTP_EV_ERROR && r->in_req)
			FZ_CHECK(r->p.req.body_len <= r->c->limit);
		off += used;
		r->o.consumed += used;
		if (!on_event(r, ev, base + off))
			return false;
		if (ev == HTTP_EV_MORE)
			return true;
	}
}

static void
run_stream(const struct cfg *c, const uint8_t *s, size_t len,
	   const size_t *cuts, size_t ncuts, struct obs *out)
{
	struct run r = { .c = c, .stream = s, .len = len };
	size_t pos = 0;

	r.o.h = 0xcbf29ce484222325ull;
	r.head = malloc(c->head_cap);
	FZ_CHECK(r.head != NULL);
	http_parser_init(&r.p, r.head, c->head_cap, c->max_body);
	FZ_CHECK(http_parser_idle(&r.p));
	for (size_t ci = 0; ci <= ncuts; ci++) {
		size_t end = ci < ncuts ? cuts[ci] : len;
		size_t n = end - pos;
		/* its own allocation: an over-read is an ASan report */
		uint8_t *piece = malloc(n ? n : 1);
		bool go;

		FZ_CHECK(piece != NULL);
		memcpy(piece, s + pos, n);
		go = feed_piece(&r, piece, n, pos);
		free(piece);
		if (!go)
			break;
		pos = end;
	}
	if (!r.o.failed)
		FZ_CHECK(r.o.consumed == len);
	free(r.body);
	free(r.head);
	*out = r.o;
}

static int
cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t head_caps[] = { 8192, 256, 64, 1024 };
	static const uint64_t max_bodies[] = { 0, 16, 1000, 65536 };
	static const uint64_t bufs0[] = { 1, 16, 4096, 64 << 10 };
	struct fz f = { data, size < 4 ? size : 4 };
	uint8_t flags = fz_u8(&f), nc = fz_u8(&f);
	struct cfg c = { 0 };
	const uint8_t *s = size > 4 ? data + 4 : data;
	size_t len = size > 4 ? size - 4 : 0;
	size_t *cuts = NULL, ncuts = 0;
	struct obs whole, split;
	uint32_t rs;

	c.seed = fz_u16(&f);
	c.mode = flags & 3;
	c.head_cap = head_caps[flags >> 2 & 3];
	c.max_body = max_bodies[flags >> 4 & 3];
	c.limit = c.max_body ? c.max_body : HTTP_MAX_BODY_DEFAULT;
	c.chunk_buf0 = bufs0[flags >> 6 & 3];

	if (nc == 255 && len <= 4096) {
		ncuts = len > 1 ? len - 1 : 0;
		cuts = malloc((ncuts ? ncuts : 1) * sizeof(*cuts));
		FZ_CHECK(cuts != NULL);
		for (size_t i = 0; i < ncuts; i++)
			cuts[i] = i + 1;
	} else if (len > 1) {
		size_t want = nc % 64, k = 0;

		cuts = malloc((want ? want : 1) * sizeof(*cuts));
		FZ_CHECK(cuts != NULL);
		rs = c.seed * 2654435761u + 1;
		for (size_t i = 0; i < want; i++)
			cuts[i] = 1 + fz_rand(&rs) % (len - 1);
		qsort(cuts, want, sizeof(*cuts), cmp_size);
		for (size_t i = 0; i < want; i++)
			if (k == 0 || cuts[k - 1] != cuts[i])
				cuts[k++] = cuts[i];
		ncuts = k;
	}

	c.caller_copy_ok = false;
	run_stream(&c, s, len, NULL, 0, &whole);
	c.caller_copy_ok = true;
	run_stream(&c, s, len, cuts, ncuts, &split);
	free(cuts);

	/* http.h: any split, down to one byte per call, gives the same
	 * result as feeding the request whole */
	FZ_CHECK(whole.h == split.h);
	FZ_CHECK(whole.consumed == split.consumed);
	FZ_CHECK(whole.requests == split.requests);
	FZ_CHECK(whole.failed == split.failed);
	FZ_CHECK(whole.status == split.status);
	FZ_CHECK(whole.err == split.err);
	return 0;
}
