/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_GRID_PRIV_H
#define FFN_GRID_PRIV_H

/*
 * lib/grid's state, shared by its files: the control thread and its
 * streams (grid_join.c, grid_stream.c) and the metrics that read them
 * from other threads (grid_metrics.c). Private to lib/grid.
 */

#include <pthread.h>

#include <grpc/grpc.h>

#include "grid.h"
#include "grid_msg.h"

#define TICK_MS 50		/* how often the thread looks at its timers */
#define LEAVE_MS 1000		/* grid_leave waits at most this long */
#define CLOSE_MS 2000		/* a half-closed stream's status, at most */
#define JOIN_METHOD "/larql.grid.v1.GridService/Join"

enum sstate { S_IDLE, S_OPEN, S_JOINED, S_UNASSIGN, S_CLOSING, S_DONE };

enum opkind { OP_SEND, OP_RECV, OP_STATUS };

struct stream;

struct op {
	struct stream *s;
	enum opkind kind;
};

struct gunit;

struct stream {
	struct gunit *u;
	struct grid_url url;
	enum sstate st;
	grpc_channel *ch;
	grpc_call *call;
	unsigned int ops_out;		/* batches posted, not completed */
	bool status_done;
	bool quiet_end;			/* its end was asked for: no log */
	bool attempted;			/* a call was made before */
	/* sending: one SEND_MESSAGE batch at a time, one more queued */
	bool send_busy;
	grpc_byte_buffer *send_buf;
	bool sending_last;		/* the batch in flight half-closes */
	struct grid_bytes queued;	/* .p NULL: none */
	bool queued_last;
	const char *last_reason;	/* the Dropping's reason, for logs */
	bool told;			/* sent grid_leave's Dropping */
	/* receiving */
	grpc_byte_buffer *recv_buf;
	grpc_metadata_array md_initial, md_trailing;
	grpc_status_code status;
	grpc_slice details;
	grpc_metadata auth;
	struct op op_send, op_recv, op_status;
	/* timers (ms, CLOCK_MONOTONIC) */
	uint64_t retry_at, next_hb, unassign_until, close_until;
	unsigned int backoff_s;
	/* read by grid_metrics on other threads */
	int connected;
	uint64_t reconnects, heartbeats, last_ack_s;
	uint32_t id_seq;		/* seqlock over server_id */
	char server_id[GRID_URL_MAX];
};

struct gunit {
	struct grid_unit_conf c;	/* strings point into the copies */
	char section[64], name[32], model_id[GRID_URL_MAX];
	char listen_url[GRID_URL_MAX], key[GRID_KEY_MAX];
	char bearer[GRID_KEY_MAX + 8];
	char hash[17];
	struct grid_lat lat;
	unsigned int n_streams;
	struct stream streams[GRID_MAX_ROUTERS];
};

struct grid {
	unsigned int n_units;
	struct gunit *units;
	pthread_t thread;
	grpc_completion_queue *cq;
	int stop;			/* atomics */
	int leave_req;
	int left;
	bool leaving;
	uint64_t leave_at, leave_until;
	unsigned int leave_n;		/* streams told by the leave */
	void (*left_cb)(void *arg);
	void *left_arg;
};

/* grid_stream.c: one stream's steps, on the control thread. */
uint64_t grid_now_ms(void);
void grid_stream_tick(struct grid *g, struct stream *s, uint64_t now);
void grid_stream_event(struct grid *g, const grpc_event *ev, uint64_t now);
void grid_stream_dropping(struct stream *s, const char *reason,
			  uint64_t now);

#endif /* FFN_GRID_PRIV_H */
