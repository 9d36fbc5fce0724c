/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef LG_H
#define LG_H

/**
 * @file
 * ffn-loadgen internals: every EAL lcore of the run is a worker that owns
 * queue (its index) of every port, with that queue's net_lcore and
 * tcp_stack, a share of the clients and its own counters (struct
 * lg_worker, reached through the per-lcore pointer lg_w); the main lcore
 * (worker 0) also merges them for the progress line and the report.
 * "Clients" each walk a list of steps (one request each)
 * per token over their own TCP connections (one per target they use).
 * Non-fan-out: one step, token == request. Fan-out: one step per layer of
 * the layout, each to the shard that owns the layer, like a real client.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_per_lcore.h>

#include "http.h"
#include "lg_frame.h"
#include "lg_hist.h"
#include "lg_sched.h"
#include "net.h"
#include "tcp.h"

#define LG_MAX_PORTS 4
#define LG_MAX_TARGETS 16
#define LG_MAX_STEPS 1024
#define LG_MAX_WORKERS 64

struct lg_port {
	struct net_port *np;
	uint16_t port_id;
	uint32_t ip_be, mask_be, gw_be;
};

struct lg_target {
	uint32_t ip_be;
	uint16_t port;
	unsigned int via;	/**< index of the port it is reached on */
};

/**
 * An answer to a prepared request (--verify-body), given (--body-ref) or
 * the first valid one: every answer's values must agree with its values
 * (lg_frame_values_close).
 */
struct lg_ref {
	bool set;
	uint64_t len;		/**< == frame.body_len */
	uint8_t *bytes;
};

/** A prepared request: the bytes to send and what the answer must be. */
struct lg_req {
	uint8_t *buf;		/**< HTTP head + body, DPDK memory */
	uint32_t len;
	unsigned int target;
	bool binary;		/**< the answer is a §5.2 frame (frame) */
	const char *ctype;	/**< the Content-Type the answer must carry */
	struct lg_frame frame;
	/** An answer negotiated to f16 may come in f32 with this
	 * Content-Type and frame (the precision guard, spec/moe.md §7,
	 * lg_frame_pick); NULL: no such answer */
	const char *guard_ctype;
	struct lg_frame guard;
	struct lg_ref *ref;	/**< NULL: values not checked */
};

enum lg_err {
	LG_E_CONNECT = 0,	/**< SYN refused / timed out */
	LG_E_RESET,		/**< RST while a request was outstanding */
	LG_E_TIMEOUT,		/**< no complete answer within --timeout */
	LG_E_CLOSED,		/**< peer closed with a request outstanding */
	LG_E_STATUS,		/**< non-2xx (by status in status[]) */
	LG_E_HTTP,		/**< unparseable response head */
	LG_E_CTYPE,		/**< Content-Type not the negotiated one */
	LG_E_LENGTH,		/**< body length not what seq/hidden/layers say */
	LG_E_FIELD,		/**< frame header field wrong (layer, seq_len,..) */
	LG_E_SEND,		/**< could not queue the request */
	LG_E_BODY,		/**< values differ from the reference answer */
	LG_E_COUNT,
};

struct lg_stats {
	uint64_t requests;	/**< completed and valid */
	uint64_t tokens;	/**< completed token walks (fan-out) */
	uint64_t validated;	/**< binary frames checked and correct */
	uint64_t guard_f32;	/**< of those, f32 for an f16 request (the
				 *   precision guard, spec/moe.md §7) */
	uint64_t bodies;	/**< answers whose values agree with the
				 *   reference answer's */
	double body_worst;	/**< their largest |diff| / row max */
	uint64_t sent;
	uint64_t bytes_in, bytes_out;
	uint64_t err[LG_E_COUNT];
	uint64_t status[600];
	uint64_t idle_closes;	/**< server closed a kept-alive idle conn */
	uint64_t flood_syns;	/**< --syn-flood: SYNs sent */
	uint64_t connects;
	uint64_t per_target[LG_MAX_TARGETS];	/**< completed, valid */
	struct lg_hist req_lat;
	struct lg_hist tok_lat;
	struct lg_hist svc_lat;	/**< from the send: the server's share */
};

enum lg_conn_state { LG_DOWN = 0, LG_CONNECTING, LG_UP };

struct lg_client;

struct lg_conn {
	struct lg_client *cl;
	unsigned int target;
	enum lg_conn_state state;
	struct tcp_conn *tc;
	bool busy;		/**< a request is outstanding */
	const struct lg_req *req;
	uint64_t sched_ns;	/**< when the request was due (latency origin,
				 *   lg_origin_sent) */
	uint64_t sent_ns;	/**< when the request went to TCP */
	uint64_t deadline_ns;	/**< timeout of the request or connect */
	uint64_t retry_ns;	/**< no reconnect before */
	uint32_t chk_i;		/**< next body check */
	int bad;		/**< enum lg_err of a frame error, or -1 */
	uint8_t *cap;		/**< --verify-body: the answer body */
	struct http_rsp resp;
};

struct lg_client {
	unsigned int id;	/**< index in its worker's clients */
	bool active;		/**< a token is in progress */
	bool held;		/**< --active: only keeps its connections up */
	bool want_send;		/**< step due, waiting for its connection */
	unsigned int step;
	unsigned int pick;	/**< tokens started: picks the pool entry */
	struct lg_origin orig;	/**< latency origins (lg_sched.h) */
	uint64_t restart_ns;	/**< closed loop: next token not before */
	unsigned int nconn;
	struct lg_conn *conn;
};

/**
 * One polling lcore's everything: written by that lcore only (no locks);
 * the main lcore only reads the counters (progress, report).
 */
struct lg_worker {
	unsigned int idx;	/**< worker number == queue of every port */
	unsigned int lcore_id;
	struct net_lcore *lc[LG_MAX_PORTS];
	struct tcp_stack *tcp[LG_MAX_PORTS];
	/* Own copies of the prepared requests (shared bytes): their
	 * --verify-body references are this lcore's. */
	struct lg_req *treq;	/**< non-fan-out: npool per target */
	struct lg_req *sreq;	/**< fan-out: one per step (layer) */
	struct lg_client *clients;
	unsigned int nclients;
	unsigned int *idle;	/**< open loop: idle clients (stack) */
	unsigned int nidle;
	double rate;		/**< open loop: this lcore's share */
	uint64_t backlog;	/**< open loop: tokens due, not started */
	uint64_t flood_period;	/**< --syn-flood: ns between SYNs (0: max) */
	uint64_t flood_next;	/**< ... when the next is due */
	uint64_t end_ns;	/**< end of its measured window */
	/* run */
	uint64_t now;
	bool recording;		/**< inside the measured window */
	bool stopping;		/**< no new tokens */
	struct lg_stats win;	/**< the measured window */
	struct lg_stats all;	/**< the whole run (errors) */
	struct lg_hist run_lat;	/**< every request of the run (progress) */
} __rte_cache_aligned;

RTE_DECLARE_PER_LCORE(struct lg_worker *, lg_w);
/** The calling lcore's worker. */
#define LGW RTE_PER_LCORE(lg_w)

struct lg {
	/* options */
	unsigned int nconns;
	unsigned int nactive;	/**< --active: clients sending; 0 = all */
	double rate;		/**< tokens/s, all lcores; 0 = closed loop */
	uint64_t warmup_ns, duration_ns, timeout_ns;
	bool fanout;
	bool verify;		/**< --verify-body: answers' values checked */
	bool flood;		/**< --syn-flood given */
	double flood_rate;	/**< SYNs/s, all lcores; 0 = as fast as they loop */
	uint32_t flood_net_be, flood_mask_be;	/**< --flood-src */
	/* setup */
	struct lg_port port[LG_MAX_PORTS];
	unsigned int nports;
	struct lg_target target[LG_MAX_TARGETS];
	unsigned int ntargets;
	struct lg_req *treq;	/**< non-fan-out: npool per target */
	unsigned int npool;	/**< distinct requests per target: 1, or
				 *   LG_EXPERT_POOL (--experts-route) */
	unsigned int nsteps;
	struct lg_req *sreq;	/**< fan-out: one per step (layer) */
	unsigned int step_conn[LG_MAX_STEPS];
	unsigned int nclients;	/**< all lcores' */
	struct lg_worker *w[LG_MAX_WORKERS];
	unsigned int nworkers;	/**< lcores of the run = queues per port */
};

extern struct lg lg;

/** Prepared requests: fan-out's steps, else npool per target. */
static inline unsigned int
lg_nreqs(void)
{
	return lg.fanout ? lg.nsteps : lg.ntargets * lg.npool;
}

/* lg_main.c: set by SIGINT/SIGTERM; every worker stops. */
extern volatile sig_atomic_t lg_signal;

/* lg_run.c */
/**
 * Run every worker (the calling main lcore is worker 0) from now for
 * --warmup + --duration, then merge and print the report.  *errs: errors
 * of the whole run.  Returns -1 if a worker lcore could not start.
 */
int lg_run(uint64_t *errs);

/* lg_conn.c */
void lg_client_start(struct lg_client *cl, uint64_t sched_ns);
/** --active: open cl's connections (again) and keep them idle. */
void lg_client_hold(struct lg_client *cl);
/** Timeouts, reconnects, closed-loop restarts; every millisecond. */
void lg_housekeep(uint64_t now);
/** Close every connection (FIN). */
void lg_close_all(void);
/** Outstanding requests of w. */
unsigned int lg_busy(const struct lg_worker *w);
/** Connections of w established. */
unsigned int lg_up(const struct lg_worker *w);
const char *lg_err_name(enum lg_err e);
/** Count an error (the calling lcore's window and whole run). */
void lg_count_err(enum lg_err e);

#endif /* LG_H */
