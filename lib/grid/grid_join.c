/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The grid's control thread (spec/wire.md §9, issue 20): one Join stream
 * per (unit, router), all driven from one gRPC completion queue, polled
 * every TICK_MS for the streams' timers (grid_stream.c). The data path's
 * facts come in through the units' callbacks, on this thread only.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/grpc.h>
#include <grpc/support/time.h>
#include <rte_lcore.h>

#include "grid_priv.h"

/* ---- the loop -------------------------------------------------------- */

/* grid_leave: Dropping "shutdown" on every live stream (the reference
 * only closes them; telling the router first stops its traffic before
 * the listener goes). */
static void
leave_start(struct grid *g, uint64_t now)
{
	g->leaving = true;
	g->leave_at = now;
	g->leave_until = now + LEAVE_MS;
	for (unsigned int i = 0; i < g->n_units; i++)
		for (unsigned int k = 0; k < g->units[i].n_streams; k++) {
			struct stream *s = &g->units[i].streams[k];

			if (s->call != NULL && !s->status_done &&
			    s->st != S_CLOSING) {
				grid_stream_dropping(s, "shutdown", now);
				s->told = true;
				g->leave_n++;
			} else if (s->call == NULL) {
				s->st = S_DONE;
			}
		}
}

/* Streams the leave told whose router has ended them since. */
static unsigned int
leave_told(const struct grid *g)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < g->n_units; i++)
		for (unsigned int k = 0; k < g->units[i].n_streams; k++) {
			const struct stream *s = &g->units[i].streams[k];

			n += s->told && (s->call == NULL || s->status_done);
		}
	return n;
}

/* Every stream the leave told has ended: its router ended the call
 * after reading the Dropping and our half-close, so the router has it
 * before the drain closes the listener. */
static bool
leave_done(const struct grid *g)
{
	for (unsigned int i = 0; i < g->n_units; i++)
		for (unsigned int k = 0; k < g->units[i].n_streams; k++) {
			const struct stream *s = &g->units[i].streams[k];

			if (s->call != NULL && !s->status_done)
				return false;
		}
	return true;
}

static void *
grid_thread(void *arg)
{
	struct grid *g = arg;
	uint64_t last_samples = 0;
	grpc_event ev0;

	/* gRPC starts its own threads here: they inherit this thread's
	 * CPU set (no lcore's) and its mask (no signal). */
	grpc_init();
	g->cq = grpc_completion_queue_create_for_next(NULL);
	while (!__atomic_load_n(&g->stop, __ATOMIC_ACQUIRE)) {
		uint64_t now = grid_now_ms();
		grpc_event ev;

		if (now - last_samples >= TICK_MS) {
			for (unsigned int i = 0; i < g->n_units; i++)
				if (g->units[i].c.samples != NULL)
					g->units[i].c.samples(
						g->units[i].c.arg,
						&g->units[i].lat);
			last_samples = now;
		}
		if (__atomic_load_n(&g->leave_req, __ATOMIC_ACQUIRE) &&
		    !g->leaving)
			leave_start(g, now);
		for (unsigned int i = 0; i < g->n_units; i++)
			for (unsigned int k = 0; k < g->units[i].n_streams;
			     k++)
				grid_stream_tick(g, &g->units[i].streams[k], now);
		if (g->leaving && !__atomic_load_n(&g->left,
						   __ATOMIC_ACQUIRE) &&
		    (leave_done(g) || now >= g->leave_until)) {
			__atomic_store_n(&g->left, 1, __ATOMIC_RELEASE);
			printf("ffn-shard: grid: %u of %u routers told "
			       "(Dropping shutdown, stream ended) in %llu ms; "
			       "draining\n", leave_told(g), g->leave_n,
			       (unsigned long long)(now - g->leave_at));
			fflush(stdout);
			if (g->left_cb != NULL)
				g->left_cb(g->left_arg);
		}
		ev = grpc_completion_queue_next(g->cq,
			gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
				     gpr_time_from_millis(TICK_MS,
							  GPR_TIMESPAN)),
			NULL);
		while (ev.type == GRPC_OP_COMPLETE) {
			grid_stream_event(g, &ev, grid_now_ms());
			ev = grpc_completion_queue_next(g->cq,
					gpr_time_0(GPR_CLOCK_MONOTONIC), NULL);
		}
	}
	/* Stop: cancel every call and wait until each has completed what
	 * was posted on it. */
	for (;;) {
		bool live = false;
		grpc_event ev;

		for (unsigned int i = 0; i < g->n_units; i++)
			for (unsigned int k = 0; k < g->units[i].n_streams;
			     k++) {
				struct stream *s = &g->units[i].streams[k];

				if (s->call != NULL) {
					live = true;
					s->quiet_end = true;
					s->st = S_DONE;
					grpc_call_cancel(s->call, NULL);
				}
			}
		if (!live)
			break;
		ev = grpc_completion_queue_next(g->cq,
			gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
				     gpr_time_from_millis(100, GPR_TIMESPAN)),
			NULL);
		if (ev.type == GRPC_OP_COMPLETE)
			grid_stream_event(g, &ev, grid_now_ms());
	}
	grpc_completion_queue_shutdown(g->cq);
	do {
		ev0 = grpc_completion_queue_next(g->cq,
				gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
	} while (ev0.type != GRPC_QUEUE_SHUTDOWN);
	grpc_completion_queue_destroy(g->cq);
	grpc_shutdown();
	return NULL;
}

/* ---- the API --------------------------------------------------------- */

static int
unit_init(struct gunit *gu, const struct grid_unit_conf *c, char *why,
	  size_t whylen)
{
	gu->c = *c;
	snprintf(gu->section, sizeof(gu->section), "%s", c->section);
	snprintf(gu->name, sizeof(gu->name), "%s", c->name);
	snprintf(gu->model_id, sizeof(gu->model_id), "%s", c->model_id);
	snprintf(gu->listen_url, sizeof(gu->listen_url), "%s",
		 c->listen_url);
	snprintf(gu->key, sizeof(gu->key), "%s",
		 c->key != NULL ? c->key : "");
	gu->c.section = gu->section;
	gu->c.name = gu->name;
	gu->c.model_id = gu->model_id;
	gu->c.listen_url = gu->listen_url;
	gu->c.key = gu->key;
	if (gu->c.heartbeat_ms == 0)
		gu->c.heartbeat_ms = GRID_HB_MS_DEFAULT;
	snprintf(gu->bearer, sizeof(gu->bearer), "Bearer %s", gu->key);
	if (grid_vindex_hash(gu->model_id, c->num_layers, gu->hash) < 0 ||
	    grid_lat_init(&gu->lat, c->layer_start, c->layer_end) < 0) {
		snprintf(why, whylen, "[%s]: out of memory", c->section);
		return -ENOMEM;
	}
	if (c->n_routers > GRID_MAX_ROUTERS) {
		snprintf(why, whylen, "[%s] join: more than %d routers",
			 c->section, GRID_MAX_ROUTERS);
		return -EINVAL;
	}
	gu->n_streams = c->n_routers;
	for (unsigned int k = 0; k < c->n_routers; k++) {
		struct stream *s = &gu->streams[k];
		char w[256];

		if (grid_url_parse(c->routers[k], &s->url, w, sizeof(w)) <
		    0) {
			snprintf(why, whylen, "[%s] join: \"%s\": %s",
				 c->section, c->routers[k], w);
			return -EINVAL;
		}
		s->u = gu;
		s->st = S_IDLE;
		s->backoff_s = GRID_BACKOFF_FIRST_S;
		s->op_send = (struct op){ s, OP_SEND };
		s->op_recv = (struct op){ s, OP_RECV };
		s->op_status = (struct op){ s, OP_STATUS };
		s->auth.key = grpc_slice_from_static_string("authorization");
		s->auth.value = grpc_slice_from_static_string(gu->bearer);
	}
	return 0;
}

static void
grid_free(struct grid *g)
{
	if (g->units != NULL)
		for (unsigned int i = 0; i < g->n_units; i++)
			grid_lat_fini(&g->units[i].lat);
	free(g->units);
	free(g);
}

int
grid_start(struct grid **gp, const struct grid_unit_conf *units,
	   unsigned int n, char *why, size_t whylen)
{
	struct grid *g = calloc(1, sizeof(*g));
	sigset_t all, old;
	int rc;

	*gp = NULL;
	if (g == NULL || (g->units = calloc(n > 0 ? n : 1,
					    sizeof(*g->units))) == NULL) {
		snprintf(why, whylen, "grid: out of memory");
		free(g);
		return -ENOMEM;
	}
	g->n_units = n;
	for (unsigned int i = 0; i < n; i++) {
		rc = unit_init(&g->units[i], &units[i], why, whylen);
		if (rc < 0) {
			grid_free(g);
			return rc;
		}
	}
	/* A DPDK control thread: its CPU set excludes the lcores' (EAL
	 * picks the CPUs no lcore polls), so the grid never takes cycles
	 * from a poll loop; gRPC's own threads inherit that set. */
	/* Every signal blocked in it and in gRPC's threads (which inherit
	 * the mask): the app's stop signals are handled on its main thread
	 * alone. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = rte_ctrl_thread_create(&g->thread, "ffn-grid", NULL,
				    grid_thread, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(why, whylen, "grid: rte_ctrl_thread_create: %s",
			 strerror(rc > 0 ? rc : -rc));
		grid_free(g);
		return rc > 0 ? -rc : rc;
	}
	*gp = g;
	return 0;
}

void
grid_set_left_cb(struct grid *g, void (*done)(void *arg), void *arg)
{
	g->left_cb = done;
	g->left_arg = arg;
}

void
grid_leave(struct grid *g)
{
	__atomic_store_n(&g->leave_req, 1, __ATOMIC_RELEASE);
}

bool
grid_left(const struct grid *g)
{
	return __atomic_load_n(&g->left, __ATOMIC_ACQUIRE);
}

void
grid_stop(struct grid *g)
{
	if (g == NULL)
		return;
	__atomic_store_n(&g->stop, 1, __ATOMIC_RELEASE);
	pthread_join(g->thread, NULL);
	grid_free(g);
}
