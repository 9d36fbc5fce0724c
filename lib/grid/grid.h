/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_GRID_H
#define FFN_GRID_H

/**
 * @file
 * lib/grid: a shard unit joins LARQL routers' gRPC grid (spec/wire.md §9,
 * issue 20). The unit announces the layers it owns, reports its load every
 * heartbeat, leaves with Dropping when a router unassigns it or when the
 * appliance stops.
 *
 * The grid is control traffic: it runs on one control thread of its own
 * (rte_ctrl_thread_create: never on a polling lcore's core) over kernel
 * TCP, with Debian's gRPC C core and protobuf-c messages generated from
 * grid.proto. The data path only feeds it: requests in flight and
 * per-layer compute times, read through the callbacks of grid_unit_conf
 * (lib/shard gathers them per lcore without locks).
 *
 * Nothing here knows HTTP, lcores or models: the app gives each unit's
 * facts (model_id, range, URL, key) and the callbacks.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GRID_MAX_ROUTERS 4	/**< join = URL[, URL ...] per unit */
#define GRID_URL_MAX 256
#define GRID_KEY_MAX 256
#define GRID_HB_MS_DEFAULT 10000u	/**< §9: every 10 s */
#define GRID_HB_MS_MIN 100u
#define GRID_HB_MS_MAX 600000u
#define GRID_BACKOFF_FIRST_S 1u	/**< §9.5: 1 s doubling to 60 s */
#define GRID_BACKOFF_MAX_S 60u
#define GRID_UNASSIGN_WAIT_MS 30000u	/**< §9.4: in flight, at most 30 s */
#define GRID_LAT_WINDOW 100u	/**< §9.3: p99 over the last 100 */

/* ---- vindex_hash (§9.1) --------------------------------------------- */

/** SipHash-1-3 with both keys 0 (Rust's DefaultHasher) over p[0..n). */
uint64_t grid_siphash13(const void *p, size_t n);

/**
 * §9.1's vindex_hash: 16 lowercase hex digits and a NUL into out, of
 * SipHash-1-3 over model_id's bytes, one 0xff byte, then num_layers as
 * 8 bytes little-endian (what Rust's Hash writes for a str and a usize).
 * 0 or -ENOMEM.
 */
int grid_vindex_hash(const char *model_id, uint64_t num_layers,
		      char out[17]);

/** §9.1's model_id: the last '/'-separated segment of index.json's
 * "model" (the whole string when it has no '/'). */
const char *grid_model_id(const char *model);

/* ---- per-layer latency (§9.3) --------------------------------------- */

/** One layer's heartbeat entry. */
struct grid_layer_stat {
	uint32_t layer;
	float avg_ms;		/**< EMA, alpha 0.1, of its compute times */
	float p99_ms;		/**< over its last GRID_LAT_WINDOW requests */
};

struct grid_lat_layer {
	bool seen;
	double ema_ms;
	float win[GRID_LAT_WINDOW];	/**< ring of the last requests' ms */
	uint32_t n;			/**< entries in win (<= window) */
	uint32_t next;			/**< where the next one goes */
};

/** The layers [first, first + count) of one unit. */
struct grid_lat {
	uint32_t first, count;
	struct grid_lat_layer *l;
};

/** 0 or -ENOMEM. grid_lat_fini() after. */
int grid_lat_init(struct grid_lat *t, uint32_t first, uint32_t last);
void grid_lat_fini(struct grid_lat *t);

/**
 * n_requests requests (a pass's rows of one or more requests count once
 * per request) took ms at layer: each is one sample of the EMA and of the
 * window. A layer outside the range is ignored (returns -ERANGE).
 */
int grid_lat_add(struct grid_lat *t, uint32_t layer, double ms,
		 unsigned int n_requests);

/** The entries of every layer seen so far, sorted by layer, at most max
 * into out; returns how many. */
unsigned int grid_lat_stats(const struct grid_lat *t,
			    struct grid_layer_stat *out, unsigned int max);

/* ---- configuration helpers ------------------------------------------ */

/** A router's address: http://HOST:PORT with HOST an IPv4 address or a
 * name (§9: plain HTTP/2). gRPC resolves the name at each attempt, so a
 * router that is not reachable yet is retried, not refused. */
struct grid_url {
	char text[GRID_URL_MAX];	/**< as written, for logs/metrics */
	char host[GRID_URL_MAX];
	uint16_t port;
	char target[GRID_URL_MAX + 8];	/**< gRPC's "HOST:PORT" */
};

/** Parse one URL (no resolution); 0 or -EINVAL with why. */
int grid_url_parse(const char *s, struct grid_url *u, char *why,
		   size_t whylen);

/** The local address the kernel would reach u from now (getaddrinfo,
 * then a UDP connect and getsockname: no packet is sent), dotted into
 * src. 0 or -errno with why (the name does not resolve, no route). */
int grid_url_source(const struct grid_url *u, char *src, size_t srclen,
		    char *why, size_t whylen);

/** The reconnect delay after one of s seconds: doubled, at most 60. */
static inline unsigned int
grid_backoff_next(unsigned int s)
{
	return s >= GRID_BACKOFF_MAX_S / 2 ? GRID_BACKOFF_MAX_S : 2 * s;
}

/* ---- the join ------------------------------------------------------- */

/** One unit's part in the grid. Strings are copied. */
struct grid_unit_conf {
	const char *section;		/**< "shard NAME", for logs */
	const char *name;		/**< metrics label */
	const char *model_id;		/**< grid_model_id() of the model */
	uint64_t num_layers;		/**< the model's, for vindex_hash */
	uint32_t layer_start, layer_end;	/**< inclusive */
	const char *listen_url;		/**< public_url */
	const char *key;		/**< NULL or "": no authorization */
	unsigned int heartbeat_ms;
	unsigned int n_routers;
	const char *routers[GRID_MAX_ROUTERS];	/**< http://HOST:PORT */
	/** Requests of the unit in flight now. */
	uint32_t (*in_flight)(void *arg);
	/** Feed the compute times gathered since the last call into t
	 * (grid_lat_add); called on the control thread only. */
	void (*samples)(void *arg, struct grid_lat *t);
	void *arg;
};

struct grid;

/**
 * Start the control thread (named "ffn-grid") that joins every router of
 * every unit at once. 0 or -errno (the thread could not start; the URLs
 * did not parse) with why.
 */
int grid_start(struct grid **g, const struct grid_unit_conf *units,
	       unsigned int n, char *why, size_t whylen);

/**
 * The appliance stops (SIGTERM): ask the thread to send Dropping
 * "shutdown" on every joined stream and close them, and to call
 * done(arg) once that is done (or after about a second: a router that
 * does not read must not hold the stop up). Async-signal-safe: sets a
 * flag the thread polls.
 */
void grid_leave(struct grid *g);
void grid_set_left_cb(struct grid *g, void (*done)(void *arg), void *arg);

/** Whether grid_leave's work is done (done was called). */
bool grid_left(const struct grid *g);

/** Stop the thread, cancel what is left, free g. */
void grid_stop(struct grid *g);

/**
 * Prometheus text of the grid state for unit name (NULL: every unit):
 * per router, connected, the router's server_id, the last Ack's time,
 * reconnects and heartbeats sent. Whole lines; returns bytes written
 * (at most cap - 1, NUL-terminated).
 */
size_t grid_metrics(struct grid *g, const char *name, char *buf,
		    size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* FFN_GRID_H */
