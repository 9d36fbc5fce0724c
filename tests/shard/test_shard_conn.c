/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * A connection's request-body buffer (shard_conn_need_buf, private to
 * lib/shard's server, shard_srv_priv.h) on a connection that has no TCP:
 * the parser is fed by hand, the allocator fails on demand. No EAL.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shard_srv_priv.h"

#define HEAD_CAP 256
#define BUF0 16

struct fail_mem {
	bool fail;
	unsigned int allocs;
};

static void *
fm_alloc(void *arg, size_t size)
{
	struct fail_mem *m = arg;

	if (m->fail)
		return NULL;
	m->allocs++;
	return malloc(size);
}

static void
fm_free(void *arg, void *p)
{
	(void)arg;
	free(p);
}

struct env {
	struct fail_mem fm;
	struct shard_srv_unit su;
	struct shard_pend pend;
	struct shard_conn *c;
};

/* A chunked POST whose first chunk (32 bytes) overflows the 16-byte
 * first buffer: the parser asks for a larger one (HTTP_EV_NEED_BUF). */
static void
env_at_need_buf(struct env *e, uint64_t lim_max_body)
{
	static const char head[] = "POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n"
		"Transfer-Encoding: chunked\r\n\r\n20\r\n"
		"0123456789abcdef0123456789abcdef\r\n0\r\n\r\n";
	size_t used, off = 0;
	int ev;

	memset(e, 0, sizeof(*e));
	e->c = calloc(1, sizeof(*e->c) + HEAD_CAP);
	assert_non_null(e->c);
	e->su.mem.alloc = fm_alloc;
	e->su.mem.free = fm_free;
	e->su.mem.arg = &e->fm;
	e->su.lim.max_body = lim_max_body;
	e->c->su = &e->su;
	e->c->cur = &e->pend;
	e->pend.su = &e->su;
	http_parser_init(&e->c->hp, e->c->head_buf, HEAD_CAP, 1 << 20);
	ev = http_feed(&e->c->hp, head, sizeof(head) - 1, &used);
	assert_int_equal(ev, HTTP_EV_HEAD);
	off += used;
	e->pend.body = malloc(BUF0);
	e->pend.body_cap = BUF0;
	assert_int_equal(http_body_buf(&e->c->hp, e->pend.body, BUF0), 0);
	ev = http_feed(&e->c->hp, head + off, sizeof(head) - 1 - off, &used);
	assert_int_equal(ev, HTTP_EV_NEED_BUF);
	assert_int_equal(e->c->hp.req.body_len, BUF0);
}

static void
env_fini(struct env *e)
{
	free(e->pend.body);
	free(e->c);
}

/* Out of memory while the body grows is the server's temporary
 * condition: 503 (RFC 9110 §15.6.4), not 413 (the body is not refused). */
static void
test_grow_no_memory_503(void **state)
{
	struct env e;

	(void)state;
	env_at_need_buf(&e, 1 << 20);
	e.fm.fail = true;
	assert_int_equal(shard_conn_need_buf(e.c), 503);
	assert_int_equal(e.pend.body_cap, BUF0);	/* old buffer kept */
	assert_string_equal(shard_status_msg(503),
			    "out of memory for the request body");
	env_fini(&e);
}

/* Past max_body the answer stays 413. */
static void
test_grow_over_max_body_413(void **state)
{
	struct env e;

	(void)state;
	env_at_need_buf(&e, BUF0);
	assert_int_equal(shard_conn_need_buf(e.c), 413);
	assert_int_equal(e.fm.allocs, 0);
	assert_string_equal(shard_status_msg(413), "request body too large");
	env_fini(&e);
}

/* With memory: the buffer doubles, keeps the bytes received, and the
 * rest of the body completes the request. */
static void
test_grow_ok(void **state)
{
	static const char rest[] = "0123456789abcdef\r\n0\r\n\r\n";
	struct env e;
	size_t used;

	(void)state;
	env_at_need_buf(&e, 1 << 20);
	assert_int_equal(shard_conn_need_buf(e.c), 0);
	assert_int_equal(e.pend.body_cap, 2 * BUF0);
	assert_memory_equal(e.pend.body, "0123456789abcdef", BUF0);
	assert_int_equal(http_feed(&e.c->hp, rest, sizeof(rest) - 1, &used),
			 HTTP_EV_DONE);
	assert_int_equal(e.c->hp.req.body_len, 32);
	assert_memory_equal(e.pend.body, "0123456789abcdef0123456789abcdef",
			    32);
	env_fini(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow_no_memory_503),
		cmocka_unit_test(test_grow_over_max_body_413),
		cmocka_unit_test(test_grow_ok),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
