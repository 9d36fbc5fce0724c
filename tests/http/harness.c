/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"

#define GUARD_RW (1u << 20)

static uint8_t *guard_base;

/* Copy a chunk so that its last byte is the last readable byte before a
 * PROT_NONE page: an over-read of even one byte faults. */
static const uint8_t *
guard_place(const void *src, size_t len)
{
	if (guard_base == NULL) {
		long pg = sysconf(_SC_PAGESIZE);
		uint8_t *m = mmap(NULL, GUARD_RW + pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		assert_true(m != MAP_FAILED);
		assert_int_equal(mprotect(m + GUARD_RW, pg, PROT_NONE), 0);
		guard_base = m;
	}
	assert_true(len <= GUARD_RW);
	memcpy(guard_base + GUARD_RW - len, src, len);
	return guard_base + GUARD_RW - len;
}

static void
outf(struct outcome *out, const char *fmt, ...)
{
	size_t n = strlen(out->log);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->log + n, sizeof(out->log) - n, fmt, ap);
	va_end(ap);
}

static void
log_str(struct outcome *out, const char *name, struct http_str s)
{
	outf(out, " %s=", name);
	if (s.p == NULL)
		outf(out, "(none)");
	else
		outf(out, "'%.*s'", (int)s.len, s.p);
}

static void
log_head(struct outcome *out, const struct http_request *r)
{
	outf(out, "REQ m=%d", r->method);
	log_str(out, "method", r->method_str);
	log_str(out, "target", r->target);
	log_str(out, "path", r->path);
	log_str(out, "query", r->query);
	log_str(out, "host", r->host);
	log_str(out, "ct", r->content_type);
	log_str(out, "accept", r->accept);
	log_str(out, "auth", r->authorization);
	if (r->forwarded_for.p != NULL)
		log_str(out, "xff", r->forwarded_for);
	outf(out, " minor=%d ka=%d expect=%d chunked=%d body=%d cl=%d/%llu"
		" head_len=%u", r->minor, r->keep_alive, r->expect_continue,
		r->chunked, r->has_body, r->has_content_length,
		(unsigned long long)r->content_length, r->head_len);
}

static void
log_body(struct outcome *out, const uint8_t *b, uint64_t n, bool have)
{
	uint64_t i;

	outf(out, " body_len=%llu data=", (unsigned long long)n);
	if (!have) {
		outf(out, "(discarded)\n");
		return;
	}
	for (i = 0; i < n; i++)
		outf(out, "%02x", b[i]);
	outf(out, "\n");
}

void
drive(const struct drive_opts *o, const void *data, size_t len,
		const size_t *cuts, size_t ncuts, struct outcome *out)
{
	uint32_t head_cap = o->head_cap ? o->head_cap : 8192;
	char *head = malloc(head_cap);
	struct http_parser p;
	uint8_t *body = NULL;
	uint64_t bcap = 0;
	size_t pos = 0, ci;

	memset(out, 0, sizeof(*out));
	http_parser_init(&p, head, head_cap, o->max_body);
	for (ci = 0; ci <= ncuts; ci++) {
		size_t end = ci < ncuts ? cuts[ci] : len;
		size_t clen = end - pos, off = 0, used;
		const uint8_t *c = guard_place((const uint8_t *)data + pos,
				clen);
		int rc;

		for (;;) {
			if (o->mode == BODY_CALLER_COPY && off < clen) {
				uint8_t *dst;
				uint64_t w = http_body_want(&p, &dst);

				if (w > 0) {
					uint64_t n = clen - off < w ?
						clen - off : w;

					memcpy(dst, c + off, n);
					http_body_commit(&p, n);
					off += n;
					out->consumed += n;
					continue;
				}
			}
			rc = http_feed(&p, c + off, clen - off, &used);
			assert_true(used <= clen - off);
			off += used;
			out->consumed += used;
			out->final_ev = rc;
			if (rc < 0) {
				out->status = p.status;
				out->err = p.err;
				/* the parser stays in error */
				assert_int_equal(http_feed(&p, c, clen, &used),
						HTTP_EV_ERROR);
				assert_int_equal(used, 0);
				goto done;
			}
			if (rc == HTTP_EV_MORE) {
				assert_int_equal(off, clen);
				break;
			}
			if (rc == HTTP_EV_HEAD) {
				log_head(out, &p.req);
				if (!p.req.has_body)
					continue;
				if (o->mode == BODY_DISCARD) {
					http_body_discard(&p);
					continue;
				}
				bcap = p.req.chunked ? (o->chunked_buf0 ?
					o->chunked_buf0 : 1) :
					p.req.content_length;
				body = malloc(bcap);
				assert_int_equal(http_body_buf(&p, body, bcap), 0);
				continue;
			}
			if (rc == HTTP_EV_NEED_BUF) {
				assert_true(p.req.chunked);
				assert_int_equal(p.req.body_len, bcap);
				/* too small a buffer is refused */
				assert_int_equal(http_body_buf(&p, body,
						bcap - 1), -EINVAL);
				bcap *= 2;
				body = realloc(body, bcap);
				assert_int_equal(http_body_buf(&p, body, bcap), 0);
				continue;
			}
			assert_int_equal(rc, HTTP_EV_DONE);
			log_body(out, body, p.req.body_len,
				o->mode != BODY_DISCARD || !p.req.has_body);
			free(body);
			body = NULL;
			out->requests++;
			http_next(&p);
		}
		pos = end;
	}
done:
	free(body);
	free(head);
}

static void
assert_same(const struct outcome *a, const struct outcome *b)
{
	assert_string_equal(a->log, b->log);
	assert_int_equal(a->requests, b->requests);
	assert_int_equal(a->status, b->status);
	assert_int_equal(a->consumed, b->consumed);
	assert_int_equal(a->final_ev, b->final_ev);
	if (a->err || b->err)
		assert_string_equal(a->err, b->err);
}

void
drive_all_splits(const struct drive_opts *o, const void *data, size_t len,
		struct outcome *out)
{
	struct outcome *t = malloc(sizeof(*t));
	size_t *cuts = malloc(sizeof(size_t) * (len + 1));
	size_t k;

	drive(o, data, len, NULL, 0, out);
	for (k = 1; k < len; k++) {
		drive(o, data, len, &k, 1, t);
		assert_same(out, t);
	}
	for (k = 1; k < len; k++)
		cuts[k - 1] = k;
	drive(o, data, len, cuts, len ? len - 1 : 0, t);
	assert_same(out, t);
	free(cuts);
	free(t);
}
