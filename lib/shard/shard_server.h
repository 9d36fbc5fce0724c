/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_SHARD_SERVER_H
#define FFN_SHARD_SERVER_H

/**
 * @file
 * The appliance's data path on DPDK lcores (issue 4): HTTP/1.1 (lib/http)
 * on the kernel-bypass TCP (lib/net), the request lifecycle of shard.h.
 *
 * Network lcores own one RX/TX queue pair each and every connection that
 * RSS puts there; they parse, validate and answer the small routes, and
 * hand binary walk-ffn jobs to the unit's worker lcores through an rte_ring
 * (or, in single-lcore mode, compute them themselves after each RX burst,
 * all jobs of the burst batched). Workers batch the rows of jobs that wait
 * for the same layer (up to batch_max_rows, waiting at most batch_wait_us
 * for more), narrow the results in place and return the job to the ring of
 * the network lcore that owns the connection, which sends the slots by
 * reference (tcp_send_iov) and frees them when the peer has acknowledged
 * every byte. Responses leave in request order (pipelining).
 *
 * All state is per lcore; the rings are the only shared objects. Setup
 * (shard_srv_*_create) happens on the main lcore before any lcore runs.
 */

#include <stdbool.h>
#include <stdint.h>

#include "net.h"
#include "tcp.h"
#include "shard.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Per-unit limits (config keys of [shard NAME], lib/conf). */
struct shard_limits {
	uint64_t max_body;		/**< 413 beyond (64 MiB) */
	uint32_t max_header;		/**< 414/431 beyond (8 KiB) */
	uint32_t max_connections;	/**< per network lcore */
	uint32_t pipeline_depth;	/**< responses queued per connection */
	uint32_t net_lcores;		/**< network lcores serving the unit
					 *   (1): with the two above, how many
					 *   requests can wait for a worker
					 *   (shard_jobs_ring_size) */
	uint32_t idle_timeout_ms;	/**< between requests: close (FIN) */
	uint32_t header_timeout_ms;	/**< head not complete: 408, close */
	uint32_t body_timeout_ms;	/**< body not complete this long after
					 *   its head: 408, close */
	uint32_t body_min_rate;		/**< bytes/s: each this many body bytes
					 *   received move the body deadline
					 *   1 s later; 0: never */
	uint32_t send_timeout_ms;	/**< answer bytes waiting and none
					 *   acknowledged this long: reset
					 *   (0: never) */
	uint32_t rate_limit_n;		/**< requests per client address per
					 *   rate_limit_period_s, 429 beyond
					 *   (shard_ratelimit.h); 0: none */
	uint32_t rate_limit_period_s;
	bool trust_forwarded_for;	/**< the client is X-Forwarded-For's
					 *   last address, when present */
};

struct shard_srv_unit;
struct shard_netlc;
struct shard_worker;

/**
 * Serve unit u on TCP port listen. Workers are attached with
 * shard_worker_create(); a unit without workers is served in single-lcore
 * mode by its network lcores. numa_node places the job memory.
 */
struct shard_srv_unit *shard_srv_unit_create(struct shard_unit *u,
		uint16_t listen, const struct shard_limits *lim,
		int numa_node);

/** The unit's request memory (job and body pools). */
const struct shard_mem *shard_srv_unit_mem(const struct shard_srv_unit *su);

/**
 * A network lcore polling queue `queue` of port (created on the calling
 * thread's behalf for lcore_id's NUMA node). It listens on every unit of
 * units[] (all units on that port: RSS may bring any flow to any queue).
 */
struct shard_netlc *shard_netlc_create(unsigned int lcore_id,
		struct net_port *port, uint16_t queue,
		struct shard_srv_unit *const *units, unsigned int n_units);

/** A worker lcore computing jobs of unit su. */
struct shard_worker *shard_worker_create(unsigned int lcore_id,
		struct shard_srv_unit *su);

/** Run loops (rte_eal_remote_launch entry points; arg is the object). */
int shard_netlc_run(void *netlc);
int shard_worker_run(void *worker);

/**
 * Ask every loop to stop: network lcores stop accepting, finish what is
 * in flight (at most drain_ms), close their connections and return. A
 * later call never moves the end of the drain later, only earlier
 * (drain_ms 0: close now): an operator's second signal hurries the stop.
 * Safe in a signal handler.
 */
void shard_server_stop(unsigned int drain_ms);

/**
 * The end of the drain (ns) when a stop is asked at now_ns for drain_ms:
 * now + drain_ms, or cur_ns when a stop is already running (stopping) and
 * its end cur_ns comes first.
 */
uint64_t shard_drain_deadline(uint64_t now_ns, unsigned int drain_ms,
			      int stopping, uint64_t cur_ns);

/**
 * The operator's stop signals (SIGINT, SIGTERM): the first drains for
 * drain_ms; a later one hurries the stop (shard_server_stop(0)), unless
 * it comes within SHARD_SIGNAL_DUP_MS of the first. Such a one is the
 * first signal delivered twice, and changes nothing: timeout(1) sends
 * its TERM to the child and then to the child's process group (coreutils
 * timeout.c, cleanup()), and so does any supervisor that signals both
 * a process and its group. Taken for an operator's second signal, the
 * copy cut every answer in flight short. Returns the drain asked for
 * (ms, 0: close now) or -1 for a duplicate. Safe in a signal handler.
 */
#define SHARD_SIGNAL_DUP_MS 1000
int shard_server_signal(unsigned int drain_ms);

/**
 * shard_server_signal's choice for a signal at now_ns when the first came
 * at first_ns (0: this is the first): drain_ms, 0 or -1 as there.
 */
int shard_signal_drain(uint64_t first_ns, uint64_t now_ns,
		       unsigned int drain_ms);


/** Prometheus text of the network lcores' TCP and net counters, for
 * shard_unit.metrics_extra. arg is ignored. */
size_t shard_server_metrics(void *arg, char *buf, size_t cap);

/**
 * Register /ffn/shard/stats (shard_telemetry.c) over the n units, which
 * must outlive the process's telemetry, and /ffn/mempools (objects in use
 * per mempool). Call once, before lcores start.
 * 0 or rte_telemetry_register_cmd's negative errno.
 */
int shard_telemetry_register(struct shard_unit *units, unsigned int n);

/** One network lcore's TCP counters, for shard_server_metrics_write(). */
struct shard_netlc_stats {
	unsigned int lcore_id;
	struct tcp_stats tcp;
};

/**
 * The text shard_server_metrics() serves, from counters given: the TCP
 * counters of n network lcores st[] and the net counters ns (NULL: none).
 * Each family once, "# HELP" and "# TYPE" first, then its samples of
 * every lcore (Prometheus text format 0.0.4). Whole lines only: returns
 * the bytes written, at most cap - 1 (NUL-terminated).
 */
size_t shard_server_metrics_write(char *buf, size_t cap,
		const struct shard_netlc_stats *st, unsigned int n,
		const struct net_stats *ns);

#ifdef __cplusplus
}
#endif

#endif /* FFN_SHARD_SERVER_H */
