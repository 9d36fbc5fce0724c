/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_GRID_MSG_H
#define FFN_GRID_MSG_H

/*
 * lib/grid's messages (spec/wire.md §9's table), packed and unpacked by
 * the protobuf-c code the build generates from grid.proto: the gRPC
 * thread (grid_join.c) sends and reads bytes, the tests read these.
 * Private to lib/grid and its tests.
 */

#include <stddef.h>
#include <stdint.h>

#include "grid.h"

/** Packed bytes (malloc'd; free(p)). */
struct grid_bytes {
	uint8_t *p;
	size_t n;
};

/** ServerMessage{announce} of unit c with hash; 0 or -ENOMEM. */
int grid_msg_announce(const struct grid_unit_conf *c, const char *hash,
		      struct grid_bytes *out);

/** ServerMessage{heartbeat}: requests in flight and the layers' stats
 * (cpu_pct and ram_used 0: §9.3 allows it). 0 or -ENOMEM. */
int grid_msg_heartbeat(uint32_t in_flight, const struct grid_layer_stat *st,
		       unsigned int n, struct grid_bytes *out);

/** ServerMessage{dropping} of the unit's range with reason ("shutdown",
 * "reassigned"). 0 or -ENOMEM. */
int grid_msg_dropping(const struct grid_unit_conf *c, const char *reason,
		      struct grid_bytes *out);

enum grid_rm_kind {
	GRID_RM_NONE = 0,	/**< payload not set (a newer router's kind) */
	GRID_RM_ASSIGN,
	GRID_RM_UNASSIGN,
	GRID_RM_ACK,
	GRID_RM_REJECT,
};

/** A RouterMessage, as much as a shard uses of it. */
struct grid_rm {
	enum grid_rm_kind kind;
	char text[GRID_URL_MAX];	/**< ack: server_id; reject, unassign:
					 *   reason (cut to fit) */
	char model_id[GRID_URL_MAX];	/**< assign, unassign */
	uint32_t layer_start, layer_end;
};

/** Unpack n bytes; 0 or -EBADMSG (not a RouterMessage). */
int grid_msg_router(const uint8_t *p, size_t n, struct grid_rm *out);

#endif /* FFN_GRID_MSG_H */
