/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Deadlines of requests still arriving (shard_timeout.c): the body's
 * (body_timeout_ms, body_min_rate) and, around it, the head's; and the
 * per-client rate limit (shard_admit.c), decided at the head too. Real
 * connections: lib/shard's server on the lib/net TCP stack of
 * tests/net/tcp's harness (segments in by hand, out captured), a network
 * lcore built by hand with a virtual clock (lc->now_ns) and the sweep
 * called at chosen times. EAL in-process (--no-huge), no port.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_malloc.h>
#include <rte_ring.h>

#include "shard_srv_priv.h"
#include "shard_test_util.h"
#include "tcp_harness.h"

#define SEC 1000000000ull
#define MSEC 1000000ull
#define T0 (5000 * SEC)		/* the virtual clock at the first head */
#define PEER_ISN 1000u

struct env {
	struct th h;
	struct st_env *m;		/* the vindex.md §3 model and unit */
	struct shard_srv_unit *su;
	struct shard_netlc *lc;
	uint32_t seq, ack;		/* of the peer's next segment */
	uint32_t got;			/* server bytes the peer has (its
					 * next ACK is E.ack + got) */
	char out[16384];		/* what the server sent */
	size_t out_len;
	uint8_t flags;			/* every flag it sent */
};

static struct env E;

static int
group_setup(void **state)
{
	struct shard_limits lim = {
		.max_body = 1 << 20, .max_header = 8192,
		.max_connections = 16, .pipeline_depth = 16,
		.idle_timeout_ms = 60000, .header_timeout_ms = 10000,
		.body_timeout_ms = 20000, .body_min_rate = 500,
		.send_timeout_ms = 10000,
	};

	(void)state;
	th_eal_init();
	if (st_env_setup((void **)&E.m, NULL) < 0)
		return -1;
	E.su = shard_srv_unit_create(E.m->u, TH_PORT, &lim, -1);
	return E.su != NULL ? 0 : -1;
}

static int
group_teardown(void **state)
{
	(void)state;
	st_env_teardown((void **)&E.m);
	return 0;
}

/* Drain what the server sent into E.out (E.flags: its flags). */
static void
take_out(void)
{
	while (th_pending(&E.h) > 0) {
		struct th_seg *s = th_next(&E.h);

		assert_true(E.out_len + s->len < sizeof(E.out));
		memcpy(E.out + E.out_len, s->data, s->len);
		E.out_len += s->len;
		E.out[E.out_len] = '\0';
		E.flags |= s->flags;
	}
}

static void
out_clear(void)
{
	take_out();
	E.out_len = 0;
	E.out[0] = '\0';
	E.flags = 0;
}

/* A stack, a network lcore serving the unit, one accepted connection;
 * the body limits of this test. */
static void
conn_open(uint32_t body_timeout_ms, uint32_t body_min_rate)
{
	struct th_seg *s;

	th_config(&E.h);
	th_start(&E.h);
	E.su->lim.body_timeout_ms = body_timeout_ms;
	E.su->lim.body_min_rate = body_min_rate;
	/* These peers acknowledge none of the answers: no send clock
	 * (send_timeout_ms has tests of its own, send_open). */
	E.su->lim.send_timeout_ms = 0;
	E.su->jobs = NULL;
	E.lc = rte_zmalloc("lc", sizeof(*E.lc), 64);
	assert_non_null(E.lc);
	E.lc->tcp = E.h.s;
	E.lc->units[0] = E.su;
	E.lc->n_units = 1;
	E.lc->now_ns = T0;
	assert_int_equal(shard_conn_listen(E.lc), 0);
	th_inject(&E.h, F_SYN, PEER_ISN, 0, 65535, NULL, NULL, 0);
	s = th_next(&E.h);
	assert_int_equal(s->flags, F_SYN | F_ACK);
	E.seq = PEER_ISN + 1;
	E.ack = s->seq + 1;
	E.got = 0;
	th_inject(&E.h, F_ACK, E.seq, E.ack, 65535, NULL, NULL, 0);
	assert_int_equal(E.lc->n_conns, 1);
	out_clear();
}

static void
conn_fini(void)
{
	struct shard_pend *p;

	shard_conn_close_all(E.lc);
	assert_int_equal(E.lc->n_conns, 0);
	shard_listener_rl_fini(&E.lc->lst[0]);
	while ((p = E.lc->free_pend) != NULL) {
		E.lc->free_pend = p->next;
		free(p);
	}
	rte_free(E.lc);
	E.lc = NULL;
	if (E.su->jobs != NULL)
		rte_ring_free(E.su->jobs);
	E.su->jobs = NULL;
	th_stop(&E.h);
}

/* The peer sends len bytes of s (in segments of at most 1000). */
static void
peer_send(const void *s, size_t len)
{
	const char *p = s;

	while (len > 0) {
		uint32_t n = len > 1000 ? 1000 : (uint32_t)len;

		th_inject(&E.h, F_ACK | F_PSH, E.seq, E.ack, 65535, NULL, p,
			  n);
		E.seq += n;
		p += n;
		len -= n;
	}
}

static void
peer_str(const char *s)
{
	peer_send(s, strlen(s));
}

/* The sweep at virtual time t. */
static void
sweep_at(uint64_t t)
{
	E.lc->now_ns = t;
	shard_conn_sweep(E.lc, t);
}

/* Nothing but ACKs came out and the connection is open. */
static void
expect_quiet(void)
{
	take_out();
	assert_int_equal(E.out_len, 0);
	assert_false(E.flags & (F_FIN | F_RST));
	assert_int_equal(E.lc->n_conns, 1);
}

/* The 408 of RFC 9110 §15.5.9 with the JSON error msg and Connection:
 * close, the FIN after it; the connection is gone. */
static void
expect_408(const char *msg)
{
	char body[128];
	const char *b;

	take_out();
	assert_true(strncmp(E.out, "HTTP/1.1 408 Request Timeout\r\n", 30) ==
		    0);
	assert_non_null(strstr(E.out, "\r\nConnection: close\r\n"));
	assert_non_null(strstr(E.out, "\r\nContent-Type: application/json"
			       "\r\n"));
	b = strstr(E.out, "\r\n\r\n");
	assert_non_null(b);
	assert_string_equal(b + 4, st_err_body(body, sizeof(body), "%s",
					       msg));
	assert_true(E.flags & F_FIN);
	assert_int_equal(E.lc->n_conns, 0);
}

/* A Content-Length body that stops after a few bytes: 408 once
 * body_timeout_ms plus (bytes / body_min_rate) s have passed since the
 * head, not before. */
static void
test_cl_trickle_408(void **state)
{
	static char part[500];

	(void)state;
	conn_open(20000, 500);
	memset(part, 'x', sizeof(part));
	peer_str("POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n"
		 "Content-Type: application/json\r\n"
		 "Content-Length: 1000\r\n\r\n");
	peer_send(part, 10);
	sweep_at(T0 + 10 * SEC);
	expect_quiet();
	/* Now 500 bytes in all: the deadline is 20 s + 1 s. */
	peer_send(part, 490);
	sweep_at(T0 + 20500 * MSEC);	/* past 20 s, within the extension */
	expect_quiet();
	sweep_at(T0 + 21001 * MSEC);
	expect_408("request body timeout");
	conn_fini();
}

/* A large body on a slow but steady link (above body_min_rate): not cut,
 * though it takes far longer than body_timeout_ms; it completes and is
 * answered (404: the path is unknown, the body read and dropped). */
static void
test_min_rate_keeps_up(void **state)
{
	static char part[2000];
	uint64_t t = T0;

	(void)state;
	conn_open(20000, 500);
	memset(part, 'y', sizeof(part));
	peer_str("POST /nope HTTP/1.1\r\nHost: a\r\n"
		 "Content-Length: 100000\r\n\r\n");
	/* 2000 bytes every 3 s (667 B/s): 150 s for the whole body. */
	for (int i = 0; i < 50; i++) {
		t += 3 * SEC;
		E.lc->now_ns = t;
		sweep_at(t);
		expect_quiet();
		peer_send(part, sizeof(part));
	}
	assert_true(t - T0 > 7 * 20 * SEC);
	take_out();
	assert_true(strncmp(E.out, "HTTP/1.1 404 Not Found\r\n", 24) == 0);
	assert_int_equal(E.lc->n_conns, 1);
	conn_fini();
}

/* Count of needle in E.out. */
static int
out_count(const char *needle)
{
	int n = 0;

	for (const char *p = E.out; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* rate_limit = 2/min (shard_admit.c): the third request of the client
 * is answered at its head with 429, the plain-text body and
 * Retry-After: 30 (one token per 30 s); its body is read and dropped
 * and the connection goes on; /v1/health is exempt; 30 s later one
 * more request is admitted, and the next one refused again. */
static void
test_rate_limit_429(void **state)
{
	static const char r429[] = "HTTP/1.1 429 Too Many Requests\r\n";

	(void)state;
	E.su->lim.rate_limit_n = 2;
	E.su->lim.rate_limit_period_s = 60;
	conn_open(20000, 500);
	E.su->lim.rate_limit_n = 0;
	peer_str("GET /nope HTTP/1.1\r\nHost: a\r\n\r\n"
		 "GET /nope HTTP/1.1\r\nHost: a\r\n\r\n"
		 "POST /nope HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
		 "\r\nhello"
		 "GET /v1/health HTTP/1.1\r\nHost: a\r\n\r\n");
	take_out();
	assert_int_equal(out_count("HTTP/1.1 404 Not Found\r\n"), 2);
	assert_int_equal(out_count(r429), 1);
	assert_int_equal(out_count("HTTP/1.1 200 OK\r\n"), 1);
	assert_true(strstr(E.out, r429) < strstr(E.out, "HTTP/1.1 200 OK"));
	assert_non_null(strstr(E.out, "\r\nContent-Type: text/plain; "
			       "charset=utf-8\r\n"));
	assert_non_null(strstr(E.out, "\r\nRetry-After: 30\r\n"));
	assert_non_null(strstr(E.out, "\r\n\r\nrate limit exceeded"));
	assert_int_equal(E.lc->n_conns, 1);
	out_clear();
	/* Half a minute later: one token back. */
	E.lc->now_ns = T0 + 30 * SEC;
	peer_str("GET /nope HTTP/1.1\r\nHost: a\r\n\r\n"
		 "GET /nope HTTP/1.1\r\nHost: a\r\n\r\n");
	take_out();
	assert_int_equal(out_count("HTTP/1.1 404 Not Found\r\n"), 1);
	assert_int_equal(out_count(r429), 1);
	assert_non_null(strstr(E.out, "\r\nRetry-After: 30\r\n"));
	assert_int_equal(E.lc->n_conns, 1);
	conn_fini();
}

static bool
starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* HEAD (RFC 9110 §9.1, §9.3.2; RFC 9112 §6.3): a GET route answers it
 * as GET, without the body; a POST route or an unknown path gives its
 * error's head alone (a 405 with Allow, RFC 9110 §15.5.6). A request
 * pipelined after each gets the very next bytes. */
static void
test_head_has_no_body(void **state)
{
	const char *a;

	(void)state;
	conn_open(20000, 500);
	peer_str("HEAD /v1/health HTTP/1.1\r\nHost: a\r\n\r\n"
		 "HEAD /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n\r\n"
		 "HEAD /nope HTTP/1.1\r\nHost: a\r\n\r\n"
		 "GET /nope HTTP/1.1\r\nHost: a\r\n\r\n");
	take_out();
	a = E.out;
	assert_true(starts(a, "HTTP/1.1 200 OK\r\n"));
	assert_non_null(strstr(a, "\r\nContent-Length: "));
	assert_null(strstr(a, "\"status\""));
	a = strstr(a, "\r\n\r\n") + 4;
	assert_true(starts(a, "HTTP/1.1 405 Method Not Allowed\r\n"));
	assert_true(strstr(a, "\r\nAllow: POST\r\n") <
		    strstr(a, "\r\n\r\n"));
	assert_int_equal(out_count("\r\nAllow: "), 1);
	a = strstr(a, "\r\n\r\n") + 4;
	assert_true(starts(a, "HTTP/1.1 404 Not Found\r\n"));
	assert_non_null(strstr(a, "\r\nContent-Length: 21\r\n"));
	a = strstr(a, "\r\n\r\n") + 4;
	assert_true(starts(a, "HTTP/1.1 404 Not Found\r\n"));
	/* The GET's answer carries its body. */
	assert_non_null(strstr(a, "\r\n\r\n{\"error\":\"not found\"}"));
	assert_int_equal(out_count("HTTP/1.1 "), 4);
	assert_int_equal(E.lc->n_conns, 1);
	conn_fini();
}

/* A chunked body that trickles (a chunk begun, a byte now and then):
 * 408, the same way. */
static void
test_chunked_trickle_408(void **state)
{
	(void)state;
	conn_open(20000, 500);
	peer_str("POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n"
		 "Content-Type: application/json\r\n"
		 "Transfer-Encoding: chunked\r\n\r\n10\r\nab");
	for (int i = 1; i <= 4; i++) {
		E.lc->now_ns = T0 + (uint64_t)i * 4 * SEC;
		peer_str("c");
		sweep_at(E.lc->now_ns);
		expect_quiet();
	}
	/* 6 bytes: the deadline is 20.012 s after the head. */
	sweep_at(T0 + 20 * SEC);
	expect_quiet();
	sweep_at(T0 + 20013 * MSEC);
	expect_408("request body timeout");
	conn_fini();
}

/* Expect: 100-continue: the 100 goes out at the head and the clock runs
 * from there; a client that then sends nothing is answered 408. */
static void
test_expect_continue_408(void **state)
{
	(void)state;
	conn_open(20000, 500);
	peer_str("POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n"
		 "Content-Type: application/json\r\nExpect: 100-continue\r\n"
		 "Content-Length: 100\r\n\r\n");
	take_out();
	assert_string_equal(E.out, "HTTP/1.1 100 Continue\r\n\r\n");
	out_clear();
	sweep_at(T0 + 19999 * MSEC);
	expect_quiet();
	sweep_at(T0 + 20001 * MSEC);
	expect_408("request body timeout");
	conn_fini();
}

/* Expect: 100-continue on a request whose answer needs no body (refused
 * from its head, or a route that takes none): the client holds the body
 * back, so the answer goes at once, with Connection: close, and no 100
 * (RFC 9110 §10.1.1); never a 408 after waiting for the body. */
static void
test_expect_continue_final_now(void **state)
{
	static const struct {
		const char *head;
		const char *status;
	} t[] = {
		{ "POST /nope HTTP/1.1\r\nHost: a\r\n", "404 Not Found" },
		{ "POST /v1/health HTTP/1.1\r\nHost: a\r\n",
		  "405 Method Not Allowed" },
		{ "GET /v1/health HTTP/1.1\r\nHost: a\r\n", "200 OK" },
	};
	char head[256], want[64];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		conn_open(20000, 500);
		snprintf(head, sizeof(head), "%sExpect: 100-continue\r\n"
			 "Content-Length: 16\r\n\r\n", t[i].head);
		peer_str(head);
		take_out();
		snprintf(want, sizeof(want), "HTTP/1.1 %s\r\n", t[i].status);
		assert_true(strncmp(E.out, want, strlen(want)) == 0);
		assert_non_null(strstr(E.out, "\r\nConnection: close\r\n"));
		assert_true(E.flags & F_FIN);
		assert_int_equal(E.lc->n_conns, 0);
		conn_fini();
	}
}

/* A complete request (body included) is never hit by its body clock
 * afterwards; the next request on the kept-alive connection has a clock
 * of its own, from its own head. */
static void
test_keepalive_next_starts_clean(void **state)
{
	(void)state;
	conn_open(20000, 500);
	peer_str("POST /nope HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n"
		 "hello");
	take_out();
	assert_true(strncmp(E.out, "HTTP/1.1 404 Not Found\r\n", 24) == 0);
	assert_null(strstr(E.out, "Connection: close"));
	out_clear();
	/* idle between requests: the TCP idle timeout's, not the body's */
	sweep_at(T0 + 100 * SEC);
	expect_quiet();
	E.lc->now_ns = T0 + 100 * SEC;
	peer_str("POST /nope HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n"
		 "ab");
	sweep_at(T0 + 119 * SEC);
	expect_quiet();
	sweep_at(T0 + 121 * SEC);
	expect_408("request body timeout");
	conn_fini();
}

/* A request whose body arrives behind an answer the server is still
 * computing (a walk-ffn at a worker): the server holds the pipeline up,
 * so its clock starts when that answer is ready, not at its head. */
static void
test_queued_ahead_holds_clock(void **state)
{
	struct shard_job *job = NULL;

	(void)state;
	conn_open(20000, 500);
	E.su->jobs = rte_ring_create("t_jobs", 64, SOCKET_ID_ANY, 0);
	assert_non_null(E.su->jobs);
	peer_str("POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n"
		 "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n"
		 "{}"
		 "POST /nope HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n"
		 "abcde");
	assert_int_equal(rte_ring_count(E.su->jobs), 1);
	/* Long past the second request's deadline: nothing, the first
	 * answer is not ready. */
	sweep_at(T0 + 60 * SEC);
	expect_quiet();
	/* The worker's answer comes back at T0 + 60 s and leaves. */
	assert_int_equal(rte_ring_dequeue(E.su->jobs, (void **)&job), 0);
	shard_resp_error(&job->resp, 503, "busy");
	shard_conn_job_done(E.lc, job);
	take_out();
	assert_true(strncmp(E.out, "HTTP/1.1 503 ", 13) == 0);
	out_clear();
	sweep_at(T0 + 79 * SEC);
	expect_quiet();
	sweep_at(T0 + 81 * SEC);
	expect_408("request body timeout");
	conn_fini();
}

/* Expect: 100-continue behind an answer still being computed: no 100
 * may jump that answer (RFC 9110 §10.1.1), so it follows it, and the
 * body's clock starts with the 100, not at the head. */
static void
test_queued_ahead_continue(void **state)
{
	static const char c100[] = "HTTP/1.1 100 Continue\r\n\r\n";
	struct shard_job *job = NULL;
	const char *at;

	(void)state;
	conn_open(20000, 500);
	E.su->jobs = rte_ring_create("t_jobs", 64, SOCKET_ID_ANY, 0);
	assert_non_null(E.su->jobs);
	peer_str("POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n"
		 "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n"
		 "{}"
		 "POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n"
		 "Content-Type: application/json\r\nExpect: 100-continue\r\n"
		 "Content-Length: 100\r\n\r\n");
	sweep_at(T0 + 60 * SEC);
	expect_quiet();			/* no 100 ahead of the answer */
	E.lc->now_ns = T0 + 70 * SEC;
	assert_int_equal(rte_ring_dequeue(E.su->jobs, (void **)&job), 0);
	shard_resp_error(&job->resp, 503, "busy");
	shard_conn_job_done(E.lc, job);
	take_out();
	assert_true(strncmp(E.out, "HTTP/1.1 503 ", 13) == 0);
	at = strstr(E.out, c100);
	assert_non_null(at);
	assert_string_equal(at, c100);	/* after the answer, last */
	out_clear();
	sweep_at(T0 + 89 * SEC);
	expect_quiet();
	sweep_at(T0 + 91 * SEC);
	expect_408("request body timeout");
	conn_fini();
}

/* The head's deadline, through the same 408 (shard_conn_timeout): a
 * head begun and not finished is answered header_timeout_ms after its
 * first byte, with its own message. */
static void
test_head_timeout_408(void **state)
{
	(void)state;
	conn_open(20000, 500);
	peer_str("GET /v1/health HTTP/1.1\r\nHost: a\r\n");
	sweep_at(T0 + 9999 * MSEC);
	expect_quiet();
	sweep_at(T0 + 10001 * MSEC);
	expect_408("request header timeout");
	conn_fini();
}

/* The run loop reads its clock before the poll that starts a head's
 * clock, so a sweep may run at a time just before the head began (C-BYTEWISE
 * of docs/HTTP-CONFORMANCE.md got 408 at once): that is no timeout. */
static void
test_head_clock_after_sweep_time(void **state)
{
	(void)state;
	conn_open(20000, 500);
	E.lc->now_ns = T0 + 5 * MSEC;
	peer_str("GET /v1/health HTTP/1.1\r\n");
	shard_conn_sweep(E.lc, T0 + 4 * MSEC);
	expect_quiet();
	peer_str("Host: a\r\n");
	sweep_at(T0 + 10004 * MSEC);
	expect_quiet();
	sweep_at(T0 + 10006 * MSEC);
	expect_408("request header timeout");
	conn_fini();
}

/* body_min_rate 0: no extension, the deadline is body_timeout_ms however
 * much came in. */
static void
test_min_rate_zero(void **state)
{
	static char part[5000];

	(void)state;
	conn_open(3000, 0);
	memset(part, 'z', sizeof(part));
	peer_str("POST /nope HTTP/1.1\r\nHost: a\r\n"
		 "Content-Length: 10000\r\n\r\n");
	peer_send(part, sizeof(part));
	sweep_at(T0 + 2999 * MSEC);
	expect_quiet();
	sweep_at(T0 + 3001 * MSEC);
	expect_408("request body timeout");
	conn_fini();
}

/* ---- answers not read (send_timeout_ms) ---------------------------- */

/* conn_open with the send clock on: 10 s. */
static void
send_open(void)
{
	conn_open(20000, 500);
	E.su->lim.send_timeout_ms = 10000;
}

/* The sweep at t left the connection open. */
static void
sweep_open(uint64_t t)
{
	sweep_at(t);
	assert_int_equal(E.lc->n_conns, 1);
}

/* The peer sends a request advertising a receive window of win bytes. */
static void
peer_req_win(const char *s, uint16_t win)
{
	size_t len = strlen(s);

	th_inject(&E.h, F_ACK | F_PSH, E.seq, E.ack, win, NULL, s,
		  (uint32_t)len);
	E.seq += (uint32_t)len;
}

/* The peer takes what the server sent (into E.out) and acknowledges it,
 * advertising win bytes free; returns the payload bytes taken. A
 * one-byte zero-window probe is taken only when win is not 0: a peer
 * with no room drops it and acknowledges the old edge (RFC 9293
 * §3.8.6.1). */
static uint32_t
peer_read_ack(uint16_t win)
{
	uint32_t n = 0;

	while (th_pending(&E.h) > 0) {
		struct th_seg *s = th_next(&E.h);

		assert_false(s->flags & (F_RST | F_FIN));
		if (s->len == 0 || s->seq != E.ack + E.got)
			continue;	/* a pure ACK, or a probe again */
		if (win == 0 && s->len == 1)
			continue;	/* a probe, no room for it */
		assert_true(E.out_len + s->len < sizeof(E.out));
		memcpy(E.out + E.out_len, s->data, s->len);
		E.out_len += s->len;
		E.out[E.out_len] = '\0';
		E.got += s->len;
		n += s->len;
	}
	th_inject(&E.h, F_ACK, E.seq, E.ack + E.got, win, NULL, NULL, 0);
	return n;
}

/* The connection was reset (and counted): nothing but an RST ended it. */
static void
expect_reset(uint64_t count_before)
{
	bool rst = false;
	char want[128], *text;
	size_t len;

	assert_int_equal(E.lc->n_conns, 0);
	while (th_pending(&E.h) > 0) {
		struct th_seg *s = th_next(&E.h);

		rst |= (s->flags & F_RST) != 0;
		assert_false(s->flags & F_FIN);
	}
	assert_true(rst);
	assert_int_equal(E.m->u->stats[0].send_timeouts, count_before + 1);
	/* and /metrics shows it */
	text = shard_metrics_text(E.m->u, &len);
	assert_non_null(text);
	snprintf(want, sizeof(want), "\nffn_send_timeouts_total{shard=\"%s\"} "
		 "%llu\n", E.m->u->name, (unsigned long long)count_before + 1);
	assert_non_null(strstr(text, want));
	free(text);
}

/* A client that stops reading: its window closes on the first 100 bytes
 * of the answer, and it answers every zero-window probe with an ACK (so
 * TCP never finds it idle) but never opens the window. Reset
 * send_timeout_ms (10 s) after the last byte it acknowledged, not
 * before; the probes it answers meanwhile are no progress. */
static void
test_send_stall_reset(void **state)
{
	uint64_t before = E.m->u->stats[0].send_timeouts;

	(void)state;
	send_open();
	peer_req_win("GET /v1/stats HTTP/1.1\r\nHost: a\r\n\r\n", 100);
	assert_int_equal(peer_read_ack(0), 100);	/* then no room */
	sweep_at(T0);				/* the last progress */
	for (int i = 1; i <= 5; i++) {
		th_advance(&E.h, 2 * SEC / 1000);	/* µs: probes */
		assert_int_equal(peer_read_ack(0), 0);
		sweep_open(T0 + (uint64_t)i * 2 * SEC);
	}
	assert_int_equal(E.got, 100);
	sweep_open(T0 + 10 * SEC);		/* exactly the limit */
	sweep_at(T0 + 10001 * MSEC);
	expect_reset(before);
	conn_fini();
}

/* A client that reads slowly but steadily: 50 bytes every 4 s. The
 * whole answer takes several times send_timeout_ms, yet no gap between
 * two acknowledged bytes does: never reset, the answer arrives whole. */
static void
test_send_slow_reader_kept(void **state)
{
	uint64_t before = E.m->u->stats[0].send_timeouts;
	uint64_t t = T0;
	const char *body;
	unsigned long cl;

	(void)state;
	send_open();
	peer_req_win("GET /v1/stats HTTP/1.1\r\nHost: a\r\n\r\n", 50);
	sweep_at(t);
	while (peer_read_ack(50) > 0) {
		t += 4 * SEC;
		th_advance(&E.h, 4 * SEC / 1000);
		sweep_open(t);
	}
	assert_true(t - T0 > 3 * 10 * SEC);
	body = strstr(E.out, "\r\n\r\n");
	assert_non_null(body);
	assert_non_null(strstr(E.out, "Content-Length: "));
	cl = strtoul(strstr(E.out, "Content-Length: ") + 16, NULL, 10);
	assert_int_equal(strlen(body + 4), cl);
	assert_true(strncmp(E.out, "HTTP/1.1 200 OK\r\n", 17) == 0);
	/* all acknowledged: no send clock, for as long as the idle
	 * clock (idle_timeout_ms 60 s from the last sweep that found the
	 * answer still leaving, t - 4 s) allows; the 80 s of slow reading
	 * were not idle time */
	sweep_open(t + 55 * SEC);
	assert_int_equal(peer_read_ack(50), 0);
	assert_int_equal(E.m->u->stats[0].send_timeouts, before);
	conn_fini();
}

/* A keep-alive connection between requests for idle_timeout_ms (60 s
 * here, from its last input) is closed with a FIN, not reset (RFC 9112
 * §9.5). (test_send_slow_reader_kept: an answer still being taken is
 * not idle time.) */
static void
test_idle_closed_with_fin(void **state)
{
	(void)state;
	send_open();
	E.lc->now_ns = T0 + SEC;
	peer_req_win("GET /v1/stats HTTP/1.1\r\nHost: a\r\n\r\n", 65535);
	assert_true(peer_read_ack(65535) > 0);
	assert_true(strncmp(E.out, "HTTP/1.1 200 OK\r\n", 17) == 0);
	sweep_open(T0 + 61 * SEC);		/* exactly the limit */
	out_clear();
	sweep_at(T0 + 61 * SEC + 1);
	take_out();
	assert_int_equal(E.out_len, 0);
	assert_true(E.flags & F_FIN);
	assert_false(E.flags & F_RST);
	assert_int_equal(E.lc->n_conns, 0);
	conn_fini();
}

/* An answer the client does not read, and behind it a request the
 * server computes for far longer than send_timeout_ms: the wait is the
 * server's, the clock stands. It runs again once that answer is
 * computed (and cannot leave either): reset send_timeout_ms later. */
static void
test_send_computing_not_counted(void **state)
{
	uint64_t before = E.m->u->stats[0].send_timeouts;
	struct shard_job *job = NULL;

	(void)state;
	send_open();
	E.su->jobs = rte_ring_create("t_jobs", 64, SOCKET_ID_ANY, 0);
	assert_non_null(E.su->jobs);
	peer_req_win("GET /v1/stats HTTP/1.1\r\nHost: a\r\n\r\n"
		     "POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n"
		     "Content-Type: application/json\r\n"
		     "Content-Length: 2\r\n\r\n{}", 0);
	assert_int_equal(rte_ring_count(E.su->jobs), 1);
	sweep_at(T0);
	for (int i = 1; i <= 6; i++) {
		th_advance(&E.h, 10 * SEC / 1000);
		assert_int_equal(peer_read_ack(0), 0);
		sweep_open(T0 + (uint64_t)i * 10 * SEC);
	}
	/* computed at T0 + 60 s; the window is still shut */
	assert_int_equal(rte_ring_dequeue(E.su->jobs, (void **)&job), 0);
	shard_resp_error(&job->resp, 503, "busy");
	shard_conn_job_done(E.lc, job);
	assert_int_equal(peer_read_ack(0), 0);
	sweep_open(T0 + 60 * SEC);
	sweep_open(T0 + 70 * SEC);
	sweep_at(T0 + 70001 * MSEC);
	expect_reset(before);
	conn_fini();
}

/* The compute queue full (only past its cap: it holds every request the
 * connection limits admit, shard_queue_size): 503 at once, with
 * Retry-After and the JSON error, and the connection stays open. */
static void
test_queue_full_503_retry_after(void **state)
{
	struct shard_job *job = NULL;
	char body[128];
	const char *b;
	void *fake = &E;

	(void)state;
	conn_open(20000, 500);
	E.su->jobs = rte_ring_create("t_jobs", 4, SOCKET_ID_ANY, 0);
	assert_non_null(E.su->jobs);
	while (rte_ring_enqueue(E.su->jobs, fake) == 0)
		;
	peer_str("POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n"
		 "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n"
		 "{}");
	take_out();
	assert_true(strncmp(E.out, "HTTP/1.1 503 Service Unavailable\r\n",
			    34) == 0);
	assert_non_null(strstr(E.out, "\r\nRetry-After: 1\r\n"));
	assert_non_null(strstr(E.out, "\r\nContent-Type: application/json"
			       "\r\n"));
	b = strstr(E.out, "\r\n\r\n");
	assert_non_null(b);
	assert_string_equal(b + 4, st_err_body(body, sizeof(body), "%s",
					       "compute queue full"));
	assert_false(E.flags & (F_FIN | F_RST));
	assert_int_equal(E.lc->n_conns, 1);
	while (rte_ring_dequeue(E.su->jobs, (void **)&job) == 0)
		assert_ptr_equal(job, fake);
	conn_fini();
}

/* Queues sized for every admitted request: 4096 connections x 16
 * pipelined (the defaults) need 65 536 places, a power of two above;
 * never fewer than 4096, never more than 1 << 20. */
static void
test_queue_size(void **state)
{
	(void)state;
	assert_int_equal(shard_queue_size(0), 4096);
	assert_int_equal(shard_queue_size(4095), 4096);
	assert_int_equal(shard_queue_size(4096), 8192);
	assert_int_equal(shard_queue_size(4096 * 16), 131072);
	assert_int_equal(shard_queue_size(10000ull * 16 * 2), 524288);
	assert_int_equal(shard_queue_size(1000000ull * 16), 1u << 20);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cl_trickle_408),
		cmocka_unit_test(test_queue_full_503_retry_after),
		cmocka_unit_test(test_queue_size),
		cmocka_unit_test(test_min_rate_keeps_up),
		cmocka_unit_test(test_chunked_trickle_408),
		cmocka_unit_test(test_expect_continue_408),
		cmocka_unit_test(test_expect_continue_final_now),
		cmocka_unit_test(test_keepalive_next_starts_clean),
		cmocka_unit_test(test_queued_ahead_holds_clock),
		cmocka_unit_test(test_queued_ahead_continue),
		cmocka_unit_test(test_min_rate_zero),
		cmocka_unit_test(test_head_timeout_408),
		cmocka_unit_test(test_head_clock_after_sweep_time),
		cmocka_unit_test(test_rate_limit_429),
		cmocka_unit_test(test_head_has_no_body),
		cmocka_unit_test(test_send_stall_reset),
		cmocka_unit_test(test_send_slow_reader_kept),
		cmocka_unit_test(test_idle_closed_with_fin),
		cmocka_unit_test(test_send_computing_not_counted),
	};
	int rc;

	rc = cmocka_run_group_tests(tests, group_setup, group_teardown);
	th_eal_fini();
	return rc;
}
