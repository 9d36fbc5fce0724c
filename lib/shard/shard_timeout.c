/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Deadlines of requests still arriving (slowloris and its slow-body
 * variant): a head must be complete header_timeout_ms after its first
 * byte; a body body_timeout_ms after its head, each body_min_rate bytes
 * received moving that deadline one second later (Apache mod_reqtimeout's
 * body=20,MinRate=500), so a large body on a slow but steady link
 * completes and a trickle under the TCP idle timeout does not hold a
 * connection and its body buffer forever. Either is answered RFC 9110
 * §15.5.9 408 and closed (shard_conn_timeout).
 *
 * And of answers not read (nginx's send_timeout): a client that stops
 * reading but answers TCP's zero-window probes is never idle to TCP, so
 * it would hold its answers (up to the send memory) and its pipeline
 * slots forever. While answer bytes wait for the client and none is
 * acknowledged for send_timeout_ms, the connection is reset: no answer
 * reaches a client that does not read. Progress is the peer's cumulative
 * ACK (snd_una), not our sending.
 *
 * And of keep-alive connections with nothing to do: idle_timeout_ms
 * between requests closes one with a FIN (RFC 9112 §9.5).
 *
 * Runs on the network lcore that owns the connections.
 */
#include <stdbool.h>
#include <stdint.h>

#include "shard_srv_priv.h"

#define TO_NS_PER_MS 1000000ull
#define TO_NS_PER_S 1000000000ull

void
shard_body_clock_start(struct shard_conn *c, uint64_t now_ns)
{
	/* 0 means "no clock": a clock at 0 (a test's) starts at 1 ns. */
	c->body_start_ns = now_ns != 0 ? now_ns : 1;
	c->body_base = c->hp.req.body_len;
}

uint64_t
shard_body_deadline(const struct shard_conn *c)
{
	const struct shard_limits *lim = &c->su->lim;
	uint64_t at = c->body_start_ns +
		      (uint64_t)lim->body_timeout_ms * TO_NS_PER_MS;
	uint64_t got = c->hp.req.body_len - c->body_base;
	uint32_t rate = lim->body_min_rate;

	/* got / rate seconds, in two parts so got * 1e9 cannot overflow
	 * (got is at most max_body, 4 GiB, but a discarded body is not
	 * bounded by it). */
	if (rate != 0)
		at += got / rate * TO_NS_PER_S +
		      got % rate * TO_NS_PER_S / rate;
	return at;
}

/* The server, not the client, holds c's request up: an answer queued
 * ahead of it is still being computed. A client may wait for those
 * answers (one that sent Expect: 100-continue gets its 100 only once
 * they are out, conn_send, which starts the clock again), so the body
 * clock starts again while they are computed. Answers computed but not
 * yet taken by TCP wait for the client to read: its clock runs on. A
 * full pipeline (pipeline_depth) leaves input unread only between
 * requests, never inside a body (a request is not begun past the
 * depth), so it needs no case here: that is the head's (head_start_ns
 * is set only when input is parsed). */
static bool
server_holds(const struct shard_conn *c)
{
	for (const struct shard_pend *p = c->q_head; p != NULL; p = p->next)
		if (!p->ready)
			return true;
	return false;
}

/* c's answers have waited send_timeout_ms for the client with no new
 * byte acknowledged. Progress is sampled here, each sweep: a new snd_una
 * starts the clock again. Answers wait when TCP holds bytes not yet
 * acknowledged, or a computed answer waits in the queue for send space.
 * The clock does not run while the server holds the queue up
 * (server_holds): that is not the client's fault; it starts again once
 * every queued answer is computed. */
static bool
send_stalled(struct shard_conn *c, uint64_t now_ns)
{
	uint64_t lim = (uint64_t)c->su->lim.send_timeout_ms * TO_NS_PER_MS;
	uint32_t una, queued;

	if (lim == 0)
		return false;		/* no send clock (a test's limits) */
	queued = tcp_conn_send_state(c->tc, &una);
	if (queued == 0 && (c->q_head == NULL || !c->q_head->ready)) {
		c->send_start_ns = 0;
		return false;
	}
	if (c->send_start_ns == 0 || una != c->send_una || server_holds(c)) {
		c->send_una = una;
		c->send_start_ns = now_ns != 0 ? now_ns : 1;
		return false;
	}
	return now_ns > c->send_start_ns + lim;
}

/* No request of c is being read, queued or sent. */
static bool
between_requests(const struct shard_conn *c)
{
	uint32_t una;

	return c->q_head == NULL && c->cur == NULL && c->hold == NULL &&
	       !http_parser_in_head(&c->hp) &&
	       tcp_conn_send_state(c->tc, &una) == 0;
}

/* c has been between requests for idle_timeout_ms. The idle clock runs
 * from c's last input (on_data) and starts again each sweep that finds
 * c busy, so a slow answer or a slow reader is not idle time. */
static bool
idle_expired(struct shard_conn *c, uint64_t now_ns)
{
	uint64_t lim = (uint64_t)c->su->lim.idle_timeout_ms * TO_NS_PER_MS;

	return lim != 0 && now_ns > c->active_ns + lim;
}

void
shard_conn_sweep(struct shard_netlc *lc, uint64_t now_ns)
{
	struct shard_conn *c = lc->conns;

	while (c != NULL) {
		struct shard_conn *next = c->next_c;
		uint64_t lim = (uint64_t)c->su->lim.header_timeout_ms *
			       TO_NS_PER_MS;
		/* A 408 goes out only with nothing queued ahead of it (the
		 * answers before it would have to leave first) and only
		 * while the connection still reads. */
		bool may_answer = c->q_head == NULL && !c->stop_rx;
		bool idle = between_requests(c);

		if (send_stalled(c, now_ns)) {
			c->su->u->stats[lc->lcore_id].send_timeouts++;
			shard_conn_abort(c);
			c = next;
			continue;
		}
		if (!idle)
			c->active_ns = now_ns;
		if (c->body_start_ns != 0 && server_holds(c))
			shard_body_clock_start(c, now_ns);
		/* now_ns is read before the poll that may start a head
		 * clock (shard_lcore.c), so a clock may start after now_ns:
		 * compare deadlines, never now_ns - start (it would wrap). */
		if (c->head_start_ns != 0 && lim != 0 &&
		    now_ns > c->head_start_ns + lim && may_answer) {
			shard_conn_timeout(c, "request header timeout");
		} else if (c->body_start_ns != 0 && may_answer &&
			   now_ns > shard_body_deadline(c)) {
			shard_conn_timeout(c, "request body timeout");
		} else if (lc->draining && c->q_head == NULL &&
			   c->cur == NULL && !http_parser_in_head(&c->hp)) {
			/* Stopping: an idle keep-alive connection has
			 * nothing in flight; close it now (RFC 9112 §9.6). */
			shard_conn_close(c);
		} else if (idle && idle_expired(c, now_ns)) {
			/* Past idle_timeout_ms between requests: close it
			 * gracefully, with a FIN (RFC 9112 §9.5); the TCP
			 * stack's idle timer, which resets, is only the
			 * backstop (shard_lcore.c). */
			shard_conn_close(c);
		}
		c = next;
	}
}
