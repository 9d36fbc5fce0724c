/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Private to lib/shard's server files.
 */
#ifndef FFN_SHARD_SRV_PRIV_H
#define FFN_SHARD_SRV_PRIV_H

#include <rte_common.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "front.h"
#include "http.h"
#include "shard_ratelimit.h"
#include "shard_server.h"
#include "tcp.h"

#define SHARD_MAX_UNITS 16
#define SHARD_BURST 32
/* Jobs one network lcore computes after an RX burst (single-lcore). */
#define SHARD_LOCAL_JOBS 1024
#define SHARD_MEM_CLASSES 3

struct shard_srv_unit {
	struct shard_unit *u;
	uint16_t listen;
	struct shard_limits lim;
	int numa_node;
	struct rte_ring *jobs;		/* to workers; NULL: single-lcore */
	struct rte_ring *parts;		/* parts of split jobs, worker to
					 * worker (struct shard_part *) */
	unsigned int n_workers;
	struct shard_mem mem;		/* job and body memory */
	struct rte_mempool *pool[SHARD_MEM_CLASSES];
	size_t pool_elt[SHARD_MEM_CLASSES];
};

/* One request/response of a connection, from head to last ack. */
struct shard_pend {
	struct shard_pend *next;	/* FIFO of the connection / free list */
	struct shard_conn *conn;	/* NULL once the connection is gone */
	struct shard_netlc *lc;
	struct shard_srv_unit *su;
	struct shard_job job;		/* binary walk-ffn */
	struct shard_resp resp;		/* the response (any route) */
	void *body;			/* request body (shard_mem) */
	uint64_t body_cap;
	size_t body_in;			/* request body bytes, for counters */
	int reject;			/* status decided at head time */
	enum wire_fmt fmt_in;		/* body format, decided at head time */
	bool is_job;
	bool ready;			/* resp complete, may be sent */
	bool queued;			/* fully handed to TCP */
	bool in_flight;			/* job at a worker */
	bool keep_alive;
	bool head_only;			/* HEAD request: no body sent */
	uint32_t refs;			/* zero-copy sends not yet released */
	/* header values a worker needs for a whole request (rq of job) */
	char rq_ct[256], rq_accept[256], rq_auth[256], rq_path[256];
	/* send progress */
	char head[256];
	uint32_t head_len, head_off;
	unsigned int iov_i;
	size_t iov_off;
};

struct shard_conn {
	struct tcp_conn *tc;
	struct shard_netlc *lc;
	struct shard_srv_unit *su;
	struct shard_listener *l;	/* the unit's listener, on this lcore */
	struct http_parser hp;
	struct shard_pend *cur;		/* request being received */
	struct shard_pend *q_head, *q_tail;
	unsigned int q_len;
	struct rte_mbuf *hold;		/* unparsed input (pipeline full) */
	uint32_t hold_off;
	uint64_t active_ns;		/* last input, or last seen busy: the
					 * idle clock (shard_timeout.c) */
	uint64_t head_start_ns;		/* 0: not inside a head */
	uint64_t body_start_ns;		/* 0: no body clock (shard_timeout.c) */
	uint64_t body_base;		/* body bytes in when it (re)started */
	uint64_t send_start_ns;		/* 0: no send clock (shard_timeout.c) */
	uint32_t send_una;		/* TCP snd_una when it (re)started */
	bool closing;			/* close after the queued responses */
	bool stop_rx;			/* input ignored (error, close) */
	bool gone;			/* TCP connection is closed */
	bool continue_owed;		/* a 100 withheld behind earlier
					 * answers (on_head) */
	struct shard_conn *prev_c, *next_c;	/* the lcore's list */
	char head_buf[];		/* lim.max_header bytes */
};

struct shard_listener {
	struct shard_netlc *lc;
	struct shard_srv_unit *su;
	struct shard_rl rl;		/* su's rate limit on this lcore;
					 * rl.slots NULL: none */
};

struct shard_netlc {
	unsigned int lcore_id;
	struct shard_listener lst[SHARD_MAX_UNITS];
	struct net_lcore *nl;
	struct tcp_stack *tcp;
	struct shard_srv_unit *units[SHARD_MAX_UNITS];
	unsigned int n_units;
	struct rte_ring *done;		/* jobs back from workers */
	struct shard_pend *free_pend;
	struct shard_conn *conns;	/* every live connection */
	unsigned int n_conns;
	struct shard_job *local[SHARD_LOCAL_JOBS];
	unsigned int n_local;
	struct http_date_cache date;
	uint64_t next_sweep_ns;
	uint64_t now_ns;		/* a test's virtual clock; 0: the TSC
					 * (shard_lc_now) */
	struct ffn_scratch *scratch[SHARD_MAX_UNITS];	/* single-lcore */
	/* a front unit's connections to its shards (issue 19) */
	struct front_lcore *front[SHARD_MAX_UNITS];
	bool draining;
} __rte_cache_aligned;

struct shard_worker {
	unsigned int lcore_id;
	struct shard_srv_unit *su;
	struct ffn_scratch *scratch;
} __rte_cache_aligned;

/* The server's clock (ns): the TSC, or the virtual one a test set. */
static inline uint64_t
shard_lc_now(const struct shard_netlc *lc)
{
	return lc->now_ns != 0 ? lc->now_ns : net_now_ns();
}

/* shard_server.c */
int shard_conn_listen(struct shard_netlc *lc);
void shard_conn_job_done(struct shard_netlc *lc, struct shard_job *job);
/* 408 Request Timeout with the JSON error msg, Connection: close, then
 * close; the request being received (if any) is the one answered. Only
 * with nothing queued and rx not stopped; without memory: reset. */
void shard_conn_timeout(struct shard_conn *c, const char *msg);
/* Close c (FIN after what TCP holds) and free it. */
void shard_conn_close(struct shard_conn *c);
/* Reset c (RST; what TCP holds is dropped) and free it. */
void shard_conn_abort(struct shard_conn *c);
void shard_conn_close_all(struct shard_netlc *lc);
void shard_pend_try_free(struct shard_netlc *lc, struct shard_pend *p);
/* Free c and its pends (they live on while a worker or TCP holds them). */
void shard_conn_destroy(struct shard_conn *c);

/* shard_send.c */
/* Send c's ready answers in order, flush, and close c once it is closing
 * and nothing is left (c may be freed on return). */
void shard_conn_send(struct shard_conn *c);
/* The interim 100 (Continue), whole or not at all. */
void shard_conn_send_continue(struct shard_conn *c);
/* A chunked body's buffer is full: grow it; 0, or 413 (max_body) or 503
 * (no memory), the status to answer. Needs no EAL (unit-tested). */
int shard_conn_need_buf(struct shard_conn *c);

/* shard_admit.c */
/* The rate limit of l's unit on l's lcore (none when rate_limit_n is 0):
 * 0, or -errno from shard_rl_init. */
int shard_listener_rl_init(struct shard_listener *l);
void shard_listener_rl_fini(struct shard_listener *l);
/* Take one request of c's client (its address, or with
 * trust_forwarded_for the last address of rq's X-Forwarded-For) from
 * the limit: 0 when admitted, else the Retry-After seconds (>= 1). */
uint32_t shard_conn_admit(struct shard_conn *c,
			  const struct http_request *rq);

/* shard_timeout.c */
/* Slow heads and bodies: 408 and close (header_timeout_ms,
 * body_timeout_ms and body_min_rate); answers not read: reset
 * (send_timeout_ms); the drain's idle closes. */
void shard_conn_sweep(struct shard_netlc *lc, uint64_t now_ns);
/* (Re)start the body clock of c's request at now_ns. */
void shard_body_clock_start(struct shard_conn *c, uint64_t now_ns);
/* When the body of c's request is due (ns); its clock runs. */
uint64_t shard_body_deadline(const struct shard_conn *c);

/* shard_lcore.c */
extern volatile int shard_stop_flag;
/* Entries of a ring that holds `requests` waiting requests: the power of
 * two above, at least 4096, at most 1 << 20. */
unsigned int shard_queue_size(uint64_t requests);
extern volatile uint64_t shard_drain_deadline_ns;
/*
 * The worker's batch wait (issue 4): with jobs[0..n) in hand, take more
 * from jobs_ring until max_rows rows or SHARD_BURST jobs are held, a part
 * waits in parts, or now() reaches wait_us (at hz ticks a second) past
 * its first call; not at all with a split job in hand or wait_us 0.
 * Returns the new n. The clock is a parameter for tests/shard.
 */
unsigned int shard_batch_wait(struct rte_ring *jobs_ring,
		const struct rte_ring *parts, struct shard_job **jobs,
		unsigned int n, unsigned int max_rows, uint32_t wait_us,
		uint64_t hz, uint64_t (*now)(void));

#endif /* FFN_SHARD_SRV_PRIV_H */
