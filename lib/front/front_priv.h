/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Private to lib/front's runtime files (front_up.c, front_call.c,
 * front_metrics.c).
 */
#ifndef FFN_FRONT_PRIV_H
#define FFN_FRONT_PRIV_H

#include <rte_common.h>
#include <rte_mbuf.h>

#include "front.h"
#include "http.h"

#define FR_MAX_CONNS 64
#define FR_KEY_MAX 256
#define FR_CTYPE_MAX 128

/* Why a sub-request failed: the metrics' reason label. */
enum fr_err {
	FR_E_CONNECT = 0,	/* connect refused or timed out */
	FR_E_RESET,		/* connection reset or closed early */
	FR_E_TIMEOUT,		/* no answer within hop_timeout_ms */
	FR_E_MALFORMED,		/* answer not HTTP or not the frame asked */
	FR_E_STATUS,		/* the shard answered non-200 */
	FR_E_COUNT
};

/* Upper bounds (µs) of the answer-latency histogram; last +Inf. */
#define FR_LAT_BUCKETS 12

struct fr_shard_stats {
	uint64_t requests;		/* sub-requests sent (retries too) */
	uint64_t answers;		/* complete answers read */
	uint64_t errors[FR_E_COUNT];
	uint64_t lat_hist[FR_LAT_BUCKETS];
	uint64_t lat_sum_us;
};

/* One lcore's counters, written by that lcore only. */
struct fr_lc_stats {
	uint64_t narrowed;		/* results narrowed by the front */
	uint64_t retries;		/* sub-requests sent again */
	uint64_t mismatch;		/* stats that disagreed */
	uint8_t up[FRONT_MAX_SHARDS];	/* 1: in use on this lcore */
	struct fr_shard_stats sh[FRONT_MAX_SHARDS];
} __rte_cache_aligned;

struct fr_shard {
	uint32_t ip_be;
	uint16_t port;
	bool has_key;
	char key[FR_KEY_MAX];
	char url[40];			/* http://a.b.c.d:p */
	char label[24];			/* a.b.c.d:p */
};

struct front {
	char name[32];
	struct front_layout layout;
	unsigned int n_rep[FRONT_MAX_RANGES];
	uint16_t rep[FRONT_MAX_RANGES][FRONT_MAX_REPLICAS]; /* shard idx */
	unsigned int n_shards;
	struct fr_shard shard[FRONT_MAX_SHARDS];
	uint32_t num_layers;		/* 0: the first stats say */
	struct wire_opts wire;
	uint64_t hop_ns;
	uint64_t health_ns;
	uint32_t conns;
	uint32_t pipeline;
	struct front_alloc mem;
	struct fr_lc_stats *st[FRONT_MAX_LCORE];
};

enum fr_sub_kind {
	FR_S_WALK = 0,			/* a part of a client's walk-ffn */
	FR_S_STATS,			/* a client's /v1/stats, forwarded */
	FR_S_PROBE_STATS,		/* the front's own probes */
	FR_S_PROBE_HEALTH,
};

struct fr_call;
struct fr_conn;
struct fr_up;

/* One request to one shard and its answer. */
struct fr_sub {
	struct fr_sub *next;		/* conn FIFO / shard wait queue */
	struct fr_call *call;		/* NULL: a probe */
	enum fr_sub_kind kind;
	unsigned int idx;		/* in call->sub[] */
	unsigned int range;
	struct fr_up *up;		/* the shard it went to */
	struct fr_conn *conn;		/* NULL while waiting */
	unsigned int attempts;
	bool queued;			/* in a FIFO or wait queue */
	bool answered;
	bool orphan;			/* its call ended: answer dropped */
	uint64_t sent_ns;
	/* hop_timeout_ms from when the front first queued it: a retry,
	 * or a wait behind a full pipeline, does not move it (the
	 * client's 504 comes one hop after the front started) */
	uint64_t t_first_ns;
	uint64_t deadline_ns;
	/* request: head (copied at send) + body by reference */
	struct iovec body[2];
	unsigned int body_n;
	size_t body_len;
	/* answer */
	int status;
	enum wire_fmt fmt;
	char ctype[FR_CTYPE_MAX];
	struct iovec *iov;		/* body ranges (malloc'd) */
	struct rte_mbuf **seg;		/* the segment of each range */
	unsigned int n, cap;
	size_t len;
};

struct fr_conn {
	struct fr_up *up;
	struct tcp_conn *tc;
	bool open;			/* ESTABLISHED */
	bool closing;			/* no more requests on it */
	struct fr_sub *q_head, *q_tail;	/* sent, answers due in order */
	unsigned int q_len;
	bool got_bytes;			/* of q_head's answer */
	uint64_t t0_ns;			/* connect started */
	struct http_rsp rsp;
};

enum fr_up_state {
	FR_DOWN = 0,			/* not (yet) known to answer */
	FR_UP,
	FR_MISMATCH,			/* its stats disagree */
};

/* One shard on one lcore. */
struct fr_up {
	struct front_lcore *fl;
	unsigned int idx;		/* in front->shard[] */
	enum fr_up_state state;
	bool probing;			/* a probe is out */
	uint64_t next_probe_ns;
	uint64_t backoff_ns;
	unsigned int in_flight;		/* subs assigned to it */
	struct fr_conn *conn[FR_MAX_CONNS];
	unsigned int n_conns;
	struct fr_sub *w_head, *w_tail;	/* waiting for a connection */
	char why[96];			/* its last failure */
};

struct front_lcore {
	struct front *f;
	struct tcp_stack *tcp;
	unsigned int lcore_id;
	int socket;
	struct fr_lc_stats *st;
	uint64_t now_ns;
	uint64_t next_check_ns;
	bool closed;
	/* facts learnt from the first stats (front-wide on this lcore) */
	bool have_facts;
	uint32_t hidden;
	uint32_t num_layers;
	char model[128];
	struct fr_up up[FRONT_MAX_SHARDS];
};

/* One client request. */
struct fr_call {
	struct front_lcore *fl;
	front_done_fn done;
	void *arg;
	enum front_kind kind;
	bool json;
	bool failed;			/* answer decided: an error */
	bool delivered;			/* done() called */
	bool held;			/* the server holds the answer */
	bool submitting;		/* inside front_submit: no done() */
	unsigned int left;		/* subs not answered */
	unsigned int queued;		/* subs in a queue or pipeline */
	unsigned int sends;		/* bodies TCP still references */
	uint64_t t0_ns;
	enum wire_fmt out_fmt;
	struct front_plan plan;
	struct front_json_plan jplan;
	char *jbody[FRONT_MAX_RANGES];
	size_t jlen[FRONT_MAX_RANGES];
	struct front_merged merged;
	char *heap;			/* error or JSON answer body */
	char *lin[FRONT_MAX_RANGES];	/* JSON answers made contiguous */
	struct iovec one;
	struct front_answer ans;
	unsigned int n_sub;
	struct fr_sub sub[];
};

/* front_up.c: shard state, probes, sub-requests */
uint64_t fr_now(void);
/* The shard failed (why): out until a probe finds it; what waits for a
 * connection to it goes elsewhere. */
void fr_up_fail(struct fr_up *up, const char *why);
/* A probe's answer is whole. */
void fr_probe_answered(struct fr_sub *sub);
/* sub leaves its queue (in-flight counts). */
void fr_sub_unqueue(struct fr_sub *sub);
/* sub failed for good (its call, or its probe, learns why). */
void fr_sub_fail(struct fr_sub *sub, enum fr_err err, const char *why);
/* sub got no answer byte: sent once more, elsewhere if possible. */
void fr_sub_retry(struct fr_sub *sub, enum fr_err err, const char *why);
/* Queue sub on a shard of its range (one not in exclude when there is
 * one): 0, or -EHOSTUNREACH when the range has no usable replica. */
int fr_sub_start(struct front_lcore *fl, struct fr_sub *sub, int exclude);
void fr_up_check(struct front_lcore *fl, uint64_t now);

/* front_conn.c: connections */
/* Send what waits for up on its connections (opening one if needed). */
void fr_up_pump(struct fr_up *up);
/* c is gone: what it carried is sent again or failed (err, why); with
 * abort_tcp the TCP connection is reset. c is freed. */
void fr_conn_drop(struct fr_conn *c, enum fr_err err, const char *why,
		  bool abort_tcp);
void fr_conn_close_all(struct front_lcore *fl);
void fr_sub_free_answer(struct fr_sub *sub);
/* The Host / Authorization head of a request to shard s. */
int fr_head(char *buf, size_t cap, const struct front *f, unsigned int s,
	    const char *method, const char *path, const char *ctype,
	    const char *accept, size_t body_len);

/* front_call.c */
/* sub's answer is complete (status, ctype, body) or it failed
 * (err >= 0, why). */
void fr_sub_answered(struct fr_sub *sub);
void fr_sub_failed(struct fr_sub *sub, enum fr_err err, const char *why);
/* Deliver call's answer when it is decided and no send references the
 * client's body any more; free it once delivered, released and no sub
 * is queued. call may be freed on return. */
void fr_call_check(struct fr_call *call);
/* Take a sub of an ended call out of its shard's wait queue (never
 * sent: it must not be, the body may go). */
void fr_sub_unwait(struct fr_sub *sub);

#endif /* FFN_FRONT_PRIV_H */
