/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * One Join stream's steps (spec/wire.md §9), on the grid's control thread
 * (grid_join.c): the call, its Announce, heartbeats, the router's
 * messages, the Dropping, and the end of a call and its retry.
 *
 * Each stream is a small state machine:
 *   IDLE --retry time--> OPEN (call made, Announce sent)
 *   OPEN --Ack--> JOINED; --Reject--> call cancelled, IDLE after backoff
 *   OPEN/JOINED --Unassign--> UNASSIGN (wait for in flight, <= 30 s)
 *     --> CLOSING (Dropping "reassigned" and half-close) --> DONE
 *   any live state --grid_leave--> CLOSING (Dropping "shutdown") --> DONE
 *   a call that ends otherwise --> IDLE, retried after the backoff
 * A call ends when its status arrives (RECV_STATUS_ON_CLIENT); it is
 * freed once every batch posted on it has completed.
 *
 * Each attempt makes a channel of its own, so that §9.5's backoff (1 s
 * doubling to 60 s) is the only one: a reused channel would add gRPC's
 * own reconnect backoff (up to 120 s) behind ours.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#include "grid_priv.h"

uint64_t
grid_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
logf_(const struct stream *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One line per event on stdout, as the appliance's other start-up and
 * state lines: "ffn-shard: [shard a] grid http://...: what". */
static void
logf_(const struct stream *s, const char *fmt, ...)
{
	va_list ap;

	printf("ffn-shard: [%s] grid %s: ", s->u->section, s->url.text);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void
set_server_id(struct stream *s, const char *id)
{
	__atomic_fetch_add(&s->id_seq, 1, __ATOMIC_ACQ_REL);
	snprintf(s->server_id, sizeof(s->server_id), "%s", id);
	__atomic_fetch_add(&s->id_seq, 1, __ATOMIC_ACQ_REL);
}

/* ---- sending --------------------------------------------------------- */

/* One SEND_MESSAGE batch (the call's first also sends its initial
 * metadata, the authorization: §9). Takes b. */
static void
post_send(struct stream *s, struct grid_bytes b, bool last, bool first)
{
	grpc_slice sl = grpc_slice_new(b.p, b.n, free);
	grpc_op ops[3];
	unsigned int n = 0;

	s->send_buf = grpc_raw_byte_buffer_create(&sl, 1);
	grpc_slice_unref(sl);
	memset(ops, 0, sizeof(ops));
	if (first) {
		ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
		if (s->u->key[0] != '\0') {
			ops[n].data.send_initial_metadata.count = 1;
			ops[n].data.send_initial_metadata.metadata = &s->auth;
		}
		n++;
	}
	ops[n].op = GRPC_OP_SEND_MESSAGE;
	ops[n++].data.send_message.send_message = s->send_buf;
	if (last)	/* §9.4: "send DroppingMsg ... and close the stream" */
		ops[n++].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	if (grpc_call_start_batch(s->call, ops, n, &s->op_send, NULL) !=
	    GRPC_CALL_OK) {
		grpc_byte_buffer_destroy(s->send_buf);
		s->send_buf = NULL;
		grpc_call_cancel(s->call, NULL);
		return;
	}
	s->ops_out++;
	s->send_busy = true;
	s->sending_last = last;
}

/* Send b now, or after the send in flight (a Dropping never waits behind
 * more than one heartbeat). Takes b. */
static void
send_msg(struct stream *s, struct grid_bytes b, bool last)
{
	if (s->call == NULL || s->status_done) {
		free(b.p);
		return;
	}
	if (!s->send_busy) {
		post_send(s, b, last, false);
		return;
	}
	free(s->queued.p);	/* a heartbeat not sent yet is stale */
	s->queued = b;
	s->queued_last = last;
}

void
grid_stream_dropping(struct stream *s, const char *reason, uint64_t now)
{
	struct grid_bytes b;

	if (grid_msg_dropping(&s->u->c, reason, &b) < 0) {
		logf_(s, "dropping %s: out of memory; closing the stream",
		      reason);
		grpc_call_cancel(s->call, NULL);
	} else {
		s->last_reason = reason;
		send_msg(s, b, true);
	}
	s->st = S_CLOSING;
	s->quiet_end = true;
	s->close_until = now + CLOSE_MS;
}

static void
send_heartbeat(struct grid *g, struct stream *s)
{
	struct grid_layer_stat *st;
	struct grid_bytes b;
	unsigned int n;

	st = calloc(s->u->lat.count > 0 ? s->u->lat.count : 1, sizeof(*st));
	if (st == NULL)
		return;
	n = grid_lat_stats(&s->u->lat, st, s->u->lat.count);
	if (grid_msg_heartbeat(s->u->c.in_flight != NULL ?
			       s->u->c.in_flight(s->u->c.arg) : 0,
			       st, n, &b) == 0) {
		send_msg(s, b, false);
		__atomic_fetch_add(&s->heartbeats, 1, __ATOMIC_RELAXED);
	}
	free(st);
}

/* ---- calls ----------------------------------------------------------- */

static void call_free(struct stream *s, uint64_t now);

static void
post_recv(struct stream *s, bool first)
{
	grpc_op ops[2];
	unsigned int n = 0;

	memset(ops, 0, sizeof(ops));
	if (first) {
		ops[n].op = GRPC_OP_RECV_INITIAL_METADATA;
		ops[n++].data.recv_initial_metadata.recv_initial_metadata =
			&s->md_initial;
	}
	ops[n].op = GRPC_OP_RECV_MESSAGE;
	ops[n++].data.recv_message.recv_message = &s->recv_buf;
	if (grpc_call_start_batch(s->call, ops, n, &s->op_recv, NULL) ==
	    GRPC_CALL_OK)
		s->ops_out++;
	else
		grpc_call_cancel(s->call, NULL);
}

static void
start_call(struct grid *g, struct stream *s, uint64_t now)
{
	grpc_channel_credentials *cr = grpc_insecure_credentials_create();
	struct grid_bytes ann;
	grpc_op ops[2];
	grpc_slice method = grpc_slice_from_static_string(JOIN_METHOD);

	s->ch = grpc_channel_create(s->url.target, cr, NULL);
	grpc_channel_credentials_release(cr);
	s->call = grpc_channel_create_call(s->ch, NULL,
			GRPC_PROPAGATE_DEFAULTS, g->cq, method, NULL,
			gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
	if (s->call == NULL) {
		logf_(s, "grpc_channel_create_call failed; retry in %u s",
		      s->backoff_s);
		grpc_channel_destroy(s->ch);
		s->ch = NULL;
		s->retry_at = now + s->backoff_s * 1000ull;
		s->backoff_s = grid_backoff_next(s->backoff_s);
		return;
	}
	if (s->attempted)
		__atomic_fetch_add(&s->reconnects, 1, __ATOMIC_RELAXED);
	s->attempted = true;
	s->status_done = false;
	s->quiet_end = false;
	s->ops_out = 0;
	grpc_metadata_array_init(&s->md_initial);
	grpc_metadata_array_init(&s->md_trailing);
	s->details = grpc_empty_slice();

	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	ops[0].data.recv_status_on_client.trailing_metadata = &s->md_trailing;
	ops[0].data.recv_status_on_client.status = &s->status;
	ops[0].data.recv_status_on_client.status_details = &s->details;
	if (grpc_call_start_batch(s->call, ops, 1, &s->op_status, NULL) !=
	    GRPC_CALL_OK) {
		/* Not on a new call; if it were, nothing was posted: free
		 * the call now and retry as after a failed attempt. */
		logf_(s, "grpc_call_start_batch failed; retry in %u s",
		      s->backoff_s);
		call_free(s, now);
		s->retry_at = now + s->backoff_s * 1000ull;
		s->backoff_s = grid_backoff_next(s->backoff_s);
		return;
	}
	s->ops_out++;

	/* §9.1: open Join and announce at once: the initial metadata and
	 * the Announce go in one batch. */
	if (grid_msg_announce(&s->u->c, s->u->hash, &ann) == 0)
		post_send(s, ann, false, true);
	else
		grpc_call_cancel(s->call, NULL);
	post_recv(s, true);
	s->st = S_OPEN;
	s->next_hb = now + s->u->c.heartbeat_ms;
}

/* Everything posted on the ended call has completed: free it. */
static void
call_free(struct stream *s, uint64_t now)
{
	grpc_call_unref(s->call);
	s->call = NULL;
	grpc_channel_destroy(s->ch);
	s->ch = NULL;
	grpc_metadata_array_destroy(&s->md_initial);
	grpc_metadata_array_destroy(&s->md_trailing);
	grpc_slice_unref(s->details);
	free(s->queued.p);
	s->queued.p = NULL;
	s->send_busy = false;
	/* Closed after a Dropping, or unassigned (§9.4: that range is not
	 * announced to this router again until a restart). */
	if (s->st == S_CLOSING || s->st == S_DONE || s->st == S_UNASSIGN) {
		s->st = S_DONE;
		return;
	}
	s->st = S_IDLE;
	(void)now;
}

/* The call's status: log why it ended and when it will be retried. */
static void
on_status(struct stream *s, uint64_t now)
{
	char *d = grpc_slice_to_c_string(s->details);

	s->status_done = true;
	__atomic_store_n(&s->connected, 0, __ATOMIC_RELAXED);
	if (s->st == S_UNASSIGN)
		logf_(s, "stream ended while unassigned: %s; not rejoining "
		      "(spec/wire.md §9.4)", d[0] != '\0' ? d : "(no details)");
	if (s->st == S_CLOSING || s->st == S_DONE || s->st == S_UNASSIGN) {
		gpr_free(d);
		return;
	}
	/* An end this side asked for (a Reject) has its retry set and
	 * logged already. */
	if (s->quiet_end) {
		gpr_free(d);
		return;
	}
	/* §9.5: reconnect 1 s doubling to 60 s, reset after a clean close
	 * (a status OK: the router ended the stream on purpose). */
	if (s->status == GRPC_STATUS_OK)
		s->backoff_s = GRID_BACKOFF_FIRST_S;
	s->retry_at = now + s->backoff_s * 1000ull;
	logf_(s, "stream ended: %s: %s; retry in %u s",
	      s->status == GRPC_STATUS_OK ? "OK" :
	      s->status == GRPC_STATUS_UNAUTHENTICATED ? "UNAUTHENTICATED" :
	      s->status == GRPC_STATUS_UNAVAILABLE ? "UNAVAILABLE" :
	      s->status == GRPC_STATUS_CANCELLED ? "CANCELLED" :
	      s->status == GRPC_STATUS_UNIMPLEMENTED ? "UNIMPLEMENTED" :
	      s->status == GRPC_STATUS_PERMISSION_DENIED ?
	      "PERMISSION_DENIED" :
	      s->status == GRPC_STATUS_INVALID_ARGUMENT ?
	      "INVALID_ARGUMENT" : "error",
	      d[0] != '\0' ? d : "(no details)", s->backoff_s);
	if (s->status != GRPC_STATUS_OK)
		s->backoff_s = grid_backoff_next(s->backoff_s);
	gpr_free(d);
}

static void
on_router_msg(struct grid *g, struct stream *s, const struct grid_rm *m,
	      uint64_t now)
{
	const struct grid_unit_conf *c = &s->u->c;

	switch (m->kind) {
	case GRID_RM_ACK:
		set_server_id(s, m->text);
		__atomic_store_n(&s->last_ack_s, (uint64_t)time(NULL),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&s->connected, 1, __ATOMIC_RELAXED);
		/* A router that took us works: the next failure starts
		 * the backoff over (§9.5). */
		s->backoff_s = GRID_BACKOFF_FIRST_S;
		if (s->st == S_OPEN)
			s->st = S_JOINED;
		logf_(s, "joined as %s", m->text);
		break;
	case GRID_RM_REJECT:
		/* §9.2: log the reason, close, retry with backoff. */
		s->retry_at = now + s->backoff_s * 1000ull;
		logf_(s, "rejected: %s; retry in %u s", m->text,
		      s->backoff_s);
		s->backoff_s = grid_backoff_next(s->backoff_s);
		s->quiet_end = true;
		grpc_call_cancel(s->call, NULL);
		break;
	case GRID_RM_UNASSIGN:
		if (strcmp(m->model_id, c->model_id) != 0 ||
		    m->layer_start != c->layer_start ||
		    m->layer_end != c->layer_end) {
			logf_(s, "unassign of %s %" PRIu32 "-%" PRIu32
			      " (%s): not what this unit announced "
			      "(%s %" PRIu32 "-%" PRIu32 "); ignored",
			      m->model_id, m->layer_start, m->layer_end,
			      m->text, c->model_id, c->layer_start,
			      c->layer_end);
			break;
		}
		if (s->st != S_OPEN && s->st != S_JOINED)
			break;
		/* §9.4: wait for what is in flight (at most 30 s), then
		 * Dropping "reassigned" and close; never announce this
		 * range to this router again until a restart. */
		s->st = S_UNASSIGN;
		s->unassign_until = now + GRID_UNASSIGN_WAIT_MS;
		logf_(s, "unassigned (%s): waiting for %" PRIu32
		      " requests in flight", m->text,
		      c->in_flight != NULL ? c->in_flight(c->arg) : 0);
		break;
	case GRID_RM_ASSIGN:
		/* §9: assign belongs to a mode for empty servers; a shard
		 * that owns its layers may ignore it. */
		logf_(s, "assign of %s %" PRIu32 "-%" PRIu32 " ignored: "
		      "this unit serves the layers its config names",
		      m->model_id, m->layer_start, m->layer_end);
		break;
	case GRID_RM_NONE:
		logf_(s, "a router message of a kind §9 does not name; "
		      "ignored");
		break;
	}
	(void)g;
}

void
grid_stream_event(struct grid *g, const grpc_event *ev, uint64_t now)
{
	struct op *op = ev->tag;
	struct stream *s = op->s;

	s->ops_out--;
	switch (op->kind) {
	case OP_SEND:
		grpc_byte_buffer_destroy(s->send_buf);
		s->send_buf = NULL;
		s->send_busy = false;
		if (ev->success && s->sending_last)
			logf_(s, "dropping (%s) sent", s->last_reason);
		if (ev->success && s->queued.p != NULL && !s->status_done) {
			struct grid_bytes b = s->queued;

			s->queued.p = NULL;
			post_send(s, b, s->queued_last, false);
		}
		break;
	case OP_RECV:
		if (ev->success && s->recv_buf != NULL) {
			grpc_byte_buffer_reader rd;
			grpc_slice all;
			struct grid_rm m;

			if (grpc_byte_buffer_reader_init(&rd, s->recv_buf)) {
				all = grpc_byte_buffer_reader_readall(&rd);
				grpc_byte_buffer_reader_destroy(&rd);
				if (grid_msg_router(GRPC_SLICE_START_PTR(all),
						    GRPC_SLICE_LENGTH(all),
						    &m) == 0)
					on_router_msg(g, s, &m, now);
				else
					logf_(s, "a router message that is "
					      "not a RouterMessage; ignored");
				grpc_slice_unref(all);
			}
			grpc_byte_buffer_destroy(s->recv_buf);
			s->recv_buf = NULL;
			if (!s->status_done && s->call != NULL)
				post_recv(s, false);
		}
		break;
	case OP_STATUS:
		on_status(s, now);
		break;
	}
	if (s->status_done && s->ops_out == 0 && s->call != NULL)
		call_free(s, now);
}

void
grid_stream_tick(struct grid *g, struct stream *s, uint64_t now)
{
	const struct grid_unit_conf *c = &s->u->c;

	switch (s->st) {
	case S_IDLE:
		if (!g->leaving && now >= s->retry_at)
			start_call(g, s, now);
		break;
	case S_OPEN:
	case S_JOINED:
		/* §9.3: every heartbeat_ms (10 s), from the Announce on. */
		if (now >= s->next_hb && !s->status_done) {
			send_heartbeat(g, s);
			s->next_hb = now + c->heartbeat_ms;
		}
		break;
	case S_UNASSIGN:
		if (s->status_done)
			break;
		if ((c->in_flight == NULL || c->in_flight(c->arg) == 0) ||
		    now >= s->unassign_until)
			grid_stream_dropping(s, "reassigned", now);
		break;
	case S_CLOSING:
		if (now >= s->close_until && s->call != NULL &&
		    !s->status_done)
			grpc_call_cancel(s->call, NULL);
		break;
	case S_DONE:
		break;
	}
}

