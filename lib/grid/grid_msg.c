/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * spec/wire.md §9's messages through protobuf-c (grid.pb-c.h, generated
 * from grid.proto by the build): no hand-written protobuf encoding.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid.pb-c.h"
#include "grid_msg.h"

typedef Larql__Grid__V1__ServerMessage server_msg_t;

static int
pack(const server_msg_t *m, struct grid_bytes *out)
{
	size_t n = larql__grid__v1__server_message__get_packed_size(m);

	/* An empty message packs to 0 bytes: still one byte of memory. */
	out->p = malloc(n > 0 ? n : 1);
	if (out->p == NULL)
		return -ENOMEM;
	out->n = larql__grid__v1__server_message__pack(m, out->p);
	return 0;
}

int
grid_msg_announce(const struct grid_unit_conf *c, const char *hash,
		  struct grid_bytes *out)
{
	server_msg_t m = LARQL__GRID__V1__SERVER_MESSAGE__INIT;
	Larql__Grid__V1__AnnounceMsg a = LARQL__GRID__V1__ANNOUNCE_MSG__INIT;

	a.model_id = (char *)(uintptr_t)c->model_id;
	a.layer_start = c->layer_start;
	a.layer_end = c->layer_end;
	a.ram_bytes = 0;		/* §9.1: 0 is accepted */
	a.listen_url = (char *)(uintptr_t)c->listen_url;
	a.vindex_hash = (char *)(uintptr_t)hash;
	m.payload_case = LARQL__GRID__V1__SERVER_MESSAGE__PAYLOAD_ANNOUNCE;
	m.announce = &a;
	return pack(&m, out);
}

int
grid_msg_heartbeat(uint32_t in_flight, const struct grid_layer_stat *st,
		   unsigned int n, struct grid_bytes *out)
{
	server_msg_t m = LARQL__GRID__V1__SERVER_MESSAGE__INIT;
	Larql__Grid__V1__HeartbeatMsg h = LARQL__GRID__V1__HEARTBEAT_MSG__INIT;
	Larql__Grid__V1__LayerLatency *ll = NULL, **lp = NULL;
	int rc;

	if (n > 0) {
		ll = calloc(n, sizeof(*ll));
		lp = calloc(n, sizeof(*lp));
		if (ll == NULL || lp == NULL) {
			free(ll);
			free(lp);
			return -ENOMEM;
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		larql__grid__v1__layer_latency__init(&ll[i]);
		ll[i].layer = st[i].layer;
		ll[i].avg_ms = st[i].avg_ms;
		ll[i].p99_ms = st[i].p99_ms;
		lp[i] = &ll[i];
	}
	h.requests_in_flight = in_flight;
	h.n_layer_stats = n;
	h.layer_stats = lp;
	m.payload_case = LARQL__GRID__V1__SERVER_MESSAGE__PAYLOAD_HEARTBEAT;
	m.heartbeat = &h;
	rc = pack(&m, out);
	free(ll);
	free(lp);
	return rc;
}

int
grid_msg_dropping(const struct grid_unit_conf *c, const char *reason,
		  struct grid_bytes *out)
{
	server_msg_t m = LARQL__GRID__V1__SERVER_MESSAGE__INIT;
	Larql__Grid__V1__DroppingMsg d = LARQL__GRID__V1__DROPPING_MSG__INIT;

	d.model_id = (char *)(uintptr_t)c->model_id;
	d.layer_start = c->layer_start;
	d.layer_end = c->layer_end;
	d.reason = (char *)(uintptr_t)reason;
	m.payload_case = LARQL__GRID__V1__SERVER_MESSAGE__PAYLOAD_DROPPING;
	m.dropping = &d;
	return pack(&m, out);
}

static void
copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src != NULL ? src : "");
}

int
grid_msg_router(const uint8_t *p, size_t n, struct grid_rm *out)
{
	Larql__Grid__V1__RouterMessage *m;

	memset(out, 0, sizeof(*out));
	m = larql__grid__v1__router_message__unpack(NULL, n, p);
	if (m == NULL)
		return -EBADMSG;
	switch (m->payload_case) {
	case LARQL__GRID__V1__ROUTER_MESSAGE__PAYLOAD_ACK:
		out->kind = GRID_RM_ACK;
		copy(out->text, sizeof(out->text), m->ack->server_id);
		break;
	case LARQL__GRID__V1__ROUTER_MESSAGE__PAYLOAD_REJECT:
		out->kind = GRID_RM_REJECT;
		copy(out->text, sizeof(out->text), m->reject->reason);
		break;
	case LARQL__GRID__V1__ROUTER_MESSAGE__PAYLOAD_UNASSIGN:
		out->kind = GRID_RM_UNASSIGN;
		copy(out->text, sizeof(out->text), m->unassign->reason);
		copy(out->model_id, sizeof(out->model_id),
		     m->unassign->model_id);
		out->layer_start = m->unassign->layer_start;
		out->layer_end = m->unassign->layer_end;
		break;
	case LARQL__GRID__V1__ROUTER_MESSAGE__PAYLOAD_ASSIGN:
		out->kind = GRID_RM_ASSIGN;
		copy(out->model_id, sizeof(out->model_id),
		     m->assign->model_id);
		out->layer_start = m->assign->layer_start;
		out->layer_end = m->assign->layer_end;
		break;
	default:
		out->kind = GRID_RM_NONE;
		break;
	}
	larql__grid__v1__router_message__free_unpacked(m, NULL);
	return 0;
}
