/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_FRONT_H
#define FFN_FRONT_H

/**
 * @file
 * The fan-out front (issue 19): one address for a whole model. A front
 * owns no weights; it answers walk-ffn by sending each shard the layers
 * it owns (front_frame.h) over the lcore's own TCP stack (lib/net/tcp
 * active opens, source ports that hash to the lcore's queue) and merging
 * the answers.
 *
 * Per network lcore (struct front_lcore, no locks): connections to every
 * shard, at most conns each, kept alive and pipelined (at most pipeline
 * requests each; more wait in the shard's queue). A shard is used once
 * its /v1/stats agrees with the others (model, hidden size, layer count)
 * and while it answers: a connect failure, a reset, a deadline passed or
 * a failed /v1/health takes it out on that lcore; a health probe every
 * health_interval_ms (doubling to 8x while it stays down) puts it back.
 * A sub-request whose connection failed before any answer byte is sent
 * once more, to another replica when there is one (the FFN is
 * idempotent). Client errors: 502 "shard {url}: {why}", 504 when no
 * answer came within hop_timeout_ms; a shard's own non-200 answer is
 * passed through unchanged.
 *
 * The server (lib/shard) hands a request over with front_submit() and
 * gets the answer through the done callback, on the same lcore, from
 * front_lcore_poll() or a TCP callback; never from inside front_submit()
 * (a synchronous answer is returned there instead).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "front_frame.h"
#include "tcp.h"
#include "wire.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FRONT_MAX_REPLICAS 4
/** Distinct shards (ip:port) of one front. */
#define FRONT_MAX_SHARDS 64
#define FRONT_MAX_LCORE 128

struct front;
struct front_lcore;

/** One shard address of a range. */
struct front_replica {
	uint32_t ip_be;
	uint16_t port;			/**< host order */
	const char *key;		/**< Bearer key towards it; NULL: none */
};

/** A front as the config describes it (lib/conf's [front NAME]). */
struct front_conf {
	const char *name;
	struct front_layout layout;
	unsigned int n_rep[FRONT_MAX_RANGES];
	struct front_replica rep[FRONT_MAX_RANGES][FRONT_MAX_REPLICAS];
	uint32_t num_layers;		/**< 0: learnt from the shards */
	struct wire_opts wire;		/**< the front's answer switches */
	uint32_t hop_timeout_ms;	/**< 504 after it [5000] */
	uint32_t health_interval_ms;	/**< [1000] */
	uint32_t conns;			/**< per shard per lcore [4] */
	uint32_t pipeline;		/**< requests per connection [8] */
	struct front_alloc mem;		/**< request and answer memory */
};

/** Check and take a copy of c (keys included). 0, -EINVAL (err), -ENOMEM. */
int front_create(struct front **out, const struct front_conf *c,
		 char *err, size_t errlen);
void front_destroy(struct front *f);

/** Set the allocator of request and answer memory (before any lcore
 * runs): the server's, DPDK memory the NIC can read. */
void front_set_alloc(struct front *f, const struct front_alloc *a);

/** The front's state on the lcore that runs tcp (its own stack). NULL
 * and rte_errno on failure. */
struct front_lcore *front_lcore_create(struct front *f, struct tcp_stack *tcp,
				       unsigned int lcore_id, int socket);
/** Close every shard connection (the drain: the lcore stops). Calls in
 * flight end with 502. */
void front_lcore_close(struct front_lcore *fl);
void front_lcore_destroy(struct front_lcore *fl);

/** Probes, deadlines, reconnects; call every loop iteration (cheap when
 * nothing is due). */
void front_lcore_poll(struct front_lcore *fl, uint64_t now_ns);

/** Connections to shards the stack must have room for, per lcore. */
uint32_t front_max_conns(const struct front *f);

/** What the server hands over. */
enum front_kind {
	FRONT_K_WALK = 0,		/**< POST /v1/walk-ffn */
	FRONT_K_STATS,			/**< GET /v1/stats */
};

struct front_req {
	enum front_kind kind;
	enum wire_fmt fmt_in;		/**< walk: body format (JSON path too) */
	const uint8_t *body;		/**< valid until the answer's release */
	size_t body_len;
	const char *accept;		/**< first Accept value; NULL: none */
	size_t accept_len;
};

/** The answer: a whole HTTP response body and what to free after it is
 * sent (release, once; the body stays valid until then). */
struct front_answer {
	int status;
	const char *content_type;	/**< valid until release */
	const struct iovec *iov;
	unsigned int iovcnt;
	size_t len;
	enum wire_fmt fmt_out;		/**< binary walk answers; else NONE */
	void (*release)(void *arg);	/**< NULL: nothing to free */
	void *release_arg;
};

typedef void (*front_done_fn)(void *arg, struct front_answer *a);

/**
 * Start a request. Returns 0 when it went to shards (done(arg, answer)
 * follows exactly once, on this lcore), or 1 with *now filled when it is
 * answered at once (a §4 error, 503 "no shard reachable", 500 without
 * memory). The request's body must stay valid until done.
 */
int front_submit(struct front_lcore *fl, const struct front_req *rq,
		 front_done_fn done, void *arg, struct front_answer *now);

/** The front's Prometheus families (per shard requests, errors by
 * reason, answer latency; narrowed results, retries, up state), summed
 * over lcores. Whole lines; returns bytes written (< cap, NUL-ended). */
size_t front_metrics(const struct front *f, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* FFN_FRONT_H */
