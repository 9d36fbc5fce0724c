/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_SHARD_H
#define FFN_SHARD_H

/**
 * @file
 * A shard unit and the lifecycle of one request (spec/wire.md §2-§6),
 * independent of how bytes arrive. The appliance (shard_server.h) and the
 * offline tool ffn-frame run exactly this code:
 *
 *   shard_route()            method + path -> route, or 404 / 405
 *                            (shard_routes[]: one row per route, read
 *                            by routing, auth, the server and metrics)
 *   shard_handle()           a whole request -> response, on this thread
 *   -- or, split across lcores (the appliance) --
 *   shard_walk_prepare()     network lcore: decode + validate + allocate
 *   shard_jobs_compute()     worker lcore: FFN for one or more jobs,
 *                            rows of jobs at the same layer batched
 *   shard_job_finish()       worker lcore: narrow in place, frame
 *   -- or, for a job whose layers are split across workers --
 *   shard_part_run()         worker lcores: one feature slice of every
 *                            layer each; the last part sums and finishes
 *   shard_resp_release()     network lcore: after the last byte is acked
 *
 * The binary path allocates once per request (job memory: the f32 input
 * when it cannot be read in place, the result slots, the iovecs) through
 * the caller's struct shard_mem; the compute writes into the slots, which
 * are narrowed in place and sent by reference (zero copy). The JSON path
 * and the small routes allocate with malloc (not the fast path).
 *
 * Counters are per lcore (struct shard_stats, one writer each); readers
 * sum them (shard_stats_sum), so the data path takes no lock.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ffn.h"
#include "ffn_moe.h"
#include "wire.h"
#include "wire_moe.h"

#ifdef __cplusplus
extern "C" {
#endif

struct front;	/* lib/front: a unit that fans out (issue 19) */

/** Most lcores a unit keeps counters for (matches RTE_MAX_LCORE here). */
#define SHARD_MAX_LCORE 128

/** Index of a row of shard_routes[] (shard_route.c), in any order. */
enum shard_route {
	SHARD_R_NONE = 0,	/**< unknown path: 404 */
	SHARD_R_WALK,		/**< POST /v1/walk-ffn */
	SHARD_R_WALK_Q8K,	/**< POST /v1/walk-ffn-q8k (issue 6) */
	SHARD_R_STATS,		/**< GET /v1/stats */
	SHARD_R_HEALTH,		/**< GET /v1/health */
	SHARD_R_METRICS,	/**< GET /metrics */
	SHARD_R_MODELS,		/**< GET /v1/models */
	SHARD_R_OPTIONS,	/**< OPTIONS * (the server as a whole) */
	/* spec/moe.md §2 (issue 23) */
	SHARD_R_EXPERT,		/**< POST /v1/expert/{layer}/{expert_id} */
	SHARD_R_EXPERT_BATCH,	/**< POST /v1/expert/batch */
	SHARD_R_LAYER_BATCH,	/**< POST /v1/experts/layer-batch */
	SHARD_R_LAYER_BATCH_F16, /**< POST /v1/experts/layer-batch-f16 */
	SHARD_R_LAYER_BATCH_I8,	/**< POST /v1/experts/layer-batch-i8 (§7) */
	SHARD_R_MULTI,		/**< POST /v1/experts/multi-layer-batch */
	SHARD_R_MULTI_Q8K,	/**< POST /v1/experts/multi-layer-batch-q8k */
	SHARD_R_TOPOLOGY,	/**< GET /v1/expert/topology */
	SHARD_R_COUNT
};

/** Exact statuses counted per route; others go to the last bucket. */
#define SHARD_STATUSES(X) X(200) X(400) X(401) X(404) X(405) X(408) \
	X(413) X(417) X(429) X(431) X(500) X(501) X(503) X(505)
#define SHARD_N_STATUS 15

/** Upper bounds (µs) of the compute-time histogram; last bucket +Inf. */
#define SHARD_LAT_BUCKETS 12
/** Upper bounds of the rows-per-compute-pass histogram; last +Inf. */
#define SHARD_BATCH_BUCKETS 8

/** One lcore's counters (written by that lcore only). */
struct shard_stats {
	uint64_t requests[SHARD_R_COUNT][SHARD_N_STATUS];
	uint64_t walk_in[WIRE_FMT_COUNT];	/**< by enum wire_fmt */
	uint64_t walk_out[WIRE_FMT_COUNT];
	uint64_t walk_served;		/**< walk-ffn answered 200 */
	uint64_t layers_computed;
	uint64_t rows_computed;
	uint64_t split_jobs;		/**< jobs computed as feature slices */
	uint64_t split_parts;		/**< slices (parts) computed */
	uint64_t bytes_in;		/**< request bodies */
	uint64_t bytes_out;		/**< response bodies */
	uint64_t send_timeouts;		/**< connections reset: answers not
					 *   read for send_timeout_ms */
	uint64_t reqs_begun;		/**< requests whose head was read */
	uint64_t reqs_ended;		/**< ... and whose answer is gone
					 *   (sent and acknowledged, or its
					 *   connection closed): the
					 *   difference is in flight */
	uint64_t expert_rows;		/**< (row, expert) products computed */
	uint64_t expert_runs;		/**< expert passes (each reads the
					 *   expert's weights once) */
	uint64_t f16_guard;		/**< f16 chosen, f32 sent: a finite
					 *   value would overflow (moe.md §7) */
	/** Rows per expert run, buckets as batch_hist: how well
	 * cross-request batching works for experts. */
	uint64_t expert_hist[SHARD_BATCH_BUCKETS];
	uint64_t lat_hist[SHARD_LAT_BUCKETS];
	double lat_sum_ms;
	uint64_t batch_hist[SHARD_BATCH_BUCKETS];
	/* not counters (shard_stats_sum leaves them): the error log's
	 * rate limit, per lcore */
	uint64_t log_ns;		/**< last error line written */
	uint64_t log_held;		/**< errors not written since */
} __attribute__((aligned(64)));

/** What a unit needs to exist (from the config's [shard NAME]). */
struct shard_unit_conf {
	const char *name;
	const char *model_dir;
	int first_layer, last_layer;	/**< -1: the model's whole range */
	int numa_node;			/**< -1: local */
	bool mmap_weights;		/**< fast start: serve from the files */
	struct wire_opts wire;		/**< after config and environment */
	const char *api_key;		/**< NULL: no auth */
	uint64_t max_response;		/**< 0: 1 GiB */
	unsigned int batch_max_rows;	/**< 0: 64 */
	unsigned int batch_wait_us;
	bool q6k_ggml;			/**< Q6_K bits: ggml (else LARQL) */
	unsigned int split_min_rows;	/**< split jobs of this many rows
					 *   across the workers; 0: never */
	/** Experts (spec/moe.md, issue 23): serve those of this ownership
	 * (NULL: none; the expert routes then hold no expert). The unit
	 * takes a copy. */
	const struct ffn_moe_own *experts;
	/** No dense layers: an expert-only unit (the vindex may have
	 * none); needs experts. */
	bool no_dense;
	bool f16_guard;			/**< moe.md §7's precision guard */
	/** A fan-out front (issue 19): no weights; the routes whose row
	 * says fans_out go to the shards through it (lib/front). */
	struct front *front;
};

struct shard_unit {
	char name[32];
	struct ffn_model *model;
	struct wire_model facts;
	struct wire_opts wire;
	char api_key[256];
	size_t api_key_len;		/**< 0: no auth */
	uint64_t max_response;
	unsigned int batch_max_rows;
	unsigned int batch_wait_us;
	unsigned int split_min_rows;	/**< 0: never split a job */
	/** Slices a split job's layers are cut into: the server sets it to
	 * its worker count for this unit; below 2, no job is split. */
	unsigned int split_parts;
	uint64_t start_ns;		/**< CLOCK_MONOTONIC at creation */
	const char *q6k_layout;		/**< "private" or "ggml" (/v1/stats) */
	bool metrics_enabled;		/**< GET /metrics served (else 404) */
	/* Experts (issue 23). moe NULL: none held. */
	struct ffn_moe *moe;
	struct ffn_moe_own own;		/**< what the config said */
	bool moe_on;			/**< experts configured */
	bool moe_hybrid;		/**< the vindex is a hybrid MoE */
	uint32_t moe_hidden;		/**< H of the vindex (0: unknown) */
	bool f16_guard;
	struct front *front;		/**< NULL: a shard (has weights) */
	/** Write log_errors routes' errors to stderr (the appliance). */
	bool log_errors;
	/** Per-lcore expert scratch, made by that lcore on first use. */
	struct ffn_moe_scratch *moe_scratch[SHARD_MAX_LCORE];
	struct shard_stats stats[SHARD_MAX_LCORE];
	/** Each layer's compute time, for the grid's heartbeat
	 * (spec/wire.md §9.3): requests requests waited ns for layer on
	 * lcore. Called on that lcore; NULL: not kept. */
	void (*layer_time)(void *arg, unsigned int lcore, uint32_t layer,
			   uint64_t ns, unsigned int requests);
	void *layer_time_arg;
	/** Extra Prometheus text appended to /metrics (the server's
	 * TCP/net counters); may be NULL. Returns bytes written. */
	size_t (*metrics_extra)(void *arg, char *buf, size_t cap);
	void *metrics_extra_arg;
};

/** Requests of u in flight now (read on any thread: each lcore's two
 * counters are its own, so the sum may be a moment stale, never torn). */
uint64_t shard_unit_in_flight(const struct shard_unit *u);

/**
 * Load the unit's model and set it up. err names what failed (the
 * loader's message). Returns 0 or a negative ffn_error / -errno.
 */
int shard_unit_init(struct shard_unit *u, const struct shard_unit_conf *c,
		    char *err, size_t errlen);
void shard_unit_fini(struct shard_unit *u);

/** Allocator of job memory: 64-byte aligned, NULL on failure. */
struct shard_mem {
	void *(*alloc)(void *arg, size_t size);
	void (*free)(void *arg, void *p);
	void *arg;
};

/** malloc-backed shard_mem (aligned_alloc), for tools and tests. */
extern const struct shard_mem shard_mem_heap;

/** A request as the HTTP layer saw it. Strings need no NUL; NULL/0 when
 * the header is absent. accept is the first Accept field's value. */
struct shard_http_req {
	int method;			/**< enum http_method */
	const char *path;
	size_t path_len;
	const char *content_type;
	size_t content_type_len;
	/** The body's format, decided once from content_type when the
	 * head is complete (shard_req_fmt) and carried with the request. */
	enum wire_fmt fmt_in;
	const char *accept;
	size_t accept_len;
	const char *authorization;
	size_t authorization_len;
	const uint8_t *body;
	size_t body_len;
	/** CLOCK_MONOTONIC (shard_now_ns) when the body was in; 0:
	 * unknown (the handler's start is used). spec/moe.md §2's
	 * latency_ms counts from here, compute-slot waits included. */
	uint64_t t_body_ns;
};

/** A response: status, type and a body as iovecs, plus what to free. */
struct shard_resp {
	int status;
	const char *content_type;	/**< static; NULL: no body type */
	const struct iovec *iov;
	unsigned int iovcnt;
	size_t len;			/**< body bytes */
	enum shard_route route;
	enum wire_fmt fmt_out;		/**< a walk-ffn answer's format */
	uint32_t retry_after_s;		/**< Retry-After (RFC 9110 §10.2.3);
					 *   0: none */
	const char *allow;		/**< Allow (static; a 405, OPTIONS);
					 *   NULL: none */
	/** Also run by shard_resp_release (a front's answer: its memory
	 * and the shards' segments it references); NULL: none. */
	void (*release)(void *arg);
	void *release_arg;
	/* ownership (shard_resp_release) */
	char *heap;			/**< malloc'd body */
	void *mem;			/**< job memory */
	const struct shard_mem *mem_ops;
	struct iovec one;		/**< storage for a one-range body */
};

/** Free what a response owns (its body memory). Idempotent. */
void shard_resp_release(struct shard_resp *r);

/** The body format a request's Content-Type means (spec/wire.md §3: one
 * of the binary formats, else the JSON path): the one place it is
 * decided, once the head is complete. ct may be NULL (absent). */
enum wire_fmt shard_req_fmt(const char *ct, size_t len);

/** What a route handler gets besides the unit, request and response. */
struct shard_ctx {
	const struct shard_mem *mem;	/**< job memory */
	struct ffn_scratch *scratch;	/**< compute scratch (compute
					 *   routes; never NULL there) */
	unsigned int lcore;		/**< counters' index */
};

/**
 * A route: one row of shard_routes[], the only place that says what a
 * route is. Routing (404/405 and Allow), auth, the rate limit, the
 * server's body handling and worker hand-off, and the metrics labels all
 * read it; tests walk it. Adding a route: a name in enum shard_route and
 * a row with its handler (or its body writer).
 */
struct shard_route_def {
	const char *path;		/**< NULL for SHARD_R_NONE */
	/** A path with parameters: whether path (len bytes) is this
	 * route's (NULL: exactly .path). Exact paths win over it. */
	bool (*match)(const char *path, size_t len);
	/** Largest body the route takes (0: the unit's max_body); above
	 * it, 413. */
	uint64_t max_body;
	/** Framework errors (413, ...) as the reference's axum answers
	 * them: text/plain (spec/moe.md §4), not {"error":...}. */
	bool text_errors;
	/** Its error answers are also logged (rate limited): the expert
	 * routes, whose batched client hides shard errors (spec/moe.md §2),
	 * so the log and /metrics are all an operator sees of them. */
	bool log_errors;
	/** Expert routes (spec/moe.md §3, §7): the residual's encoding,
	 * the answer's own format and its family (zero: f32, f32, layer). */
	enum wire_moe_in moe_in;
	enum wire_fmt moe_own;
	enum wire_moe_family moe_fam;
	int method;			/**< enum http_method; a GET route
					 *   answers HEAD (RFC 9110 §9.3.2) */
	const char *name;		/**< metrics label */
	bool body;			/**< takes a request body (others
					 *   are read and dropped) */
	bool compute;			/**< runs the FFN: on a worker when
					 *   the server has workers */
	bool batch;			/**< binary bodies are jobs batched
					 *   across requests (shard_job) */
	bool auth;			/**< needs the api key, when set */
	bool throttle;			/**< subject to the rate limit */
	/** A front unit (issue 19) forwards it to its shards (lib/front)
	 * instead of running handle. */
	bool fans_out;
	/** Needs weights: a front unit answers 404 (it does not forward
	 * it). */
	bool shard_only;
	/** Served only when this says so (NULL: always); else 404. */
	bool (*enabled)(const struct shard_unit *u);
	/** A small route's body (malloc'd; NULL on allocation failure)
	 * and its type: the handler is then the generic one. */
	char *(*text)(const struct shard_unit *u, size_t *len);
	const char *text_type;
	/** The route's work; fills resp (errors included). */
	void (*handle)(struct shard_unit *u, const struct shard_http_req *rq,
		       struct shard_resp *resp, const struct shard_ctx *ctx);
	/** Requests of routes with the same handle_many may be computed
	 * together, their rows batched across requests (issue 23):
	 * shard_handle_many() calls it with n of them (of those routes,
	 * mixed), each resp already routed. NULL: one by one. */
	void (*handle_many)(struct shard_unit *u,
			    const struct shard_http_req *const *rq,
			    struct shard_resp *const *resp, unsigned int n,
			    const struct shard_ctx *ctx);
};

/** The routes, indexed by enum shard_route. */
extern const struct shard_route_def shard_routes[SHARD_R_COUNT];

/**
 * Route a request line (spec/wire.md §2) for unit u (NULL: every route
 * is served). Returns the route, or SHARD_R_NONE with *status 405
 * (known path, wrong method: spec/wire.md §2, whatever the method), 404
 * (unknown path, or a route u does not serve), or 501 (unknown path and
 * a method no route implements, RFC 9110 §9.1). HEAD takes a GET route
 * (its answer has no body).
 */
enum shard_route shard_route(const struct shard_unit *u, int method,
			     const char *path, size_t len, int *status);

/** The methods a known path is served for (its 405's Allow, RFC 9110
 * §15.5.6), from the same table; for "*" (OPTIONS *, RFC 9110 §9.3.7)
 * those of every route. NULL for an unknown path. */
const char *shard_route_allow(const char *path, size_t len);

/**
 * Authorization (issue 4): with a key configured, every route whose row
 * says auth (all but health) needs "Authorization: Bearer KEY" (compared
 * in constant time). Returns true when the request may proceed.
 */
bool shard_authorized(const struct shard_unit *u, enum shard_route route,
		      const char *auth, size_t len);

/** Fill r with an error: status and {"error":"msg"} (malloc'd body). */
void shard_resp_error(struct shard_resp *r, int status, const char *msg);

/** The error text of a status the server decides before a route runs
 * (routing, limits): 404, 405, 413, 429, 501; else the 503 of a body
 * that found no memory. */
const char *shard_status_msg(int status);

/** 413 "response of WHAT exceeds the shard's limit of N bytes", WHAT
 * from fmt: the one wording of the appliance's response limit. */
void shard_resp_too_large(struct shard_resp *r, const struct shard_unit *u,
			  const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** Fill r with a 200 whose body is the malloc'd body (r owns it). */
void shard_resp_heap(struct shard_resp *r, const char *type, char *body,
		     size_t len);

/**
 * Handle a whole request on this thread (ffn-frame, single-lcore mode):
 * route, auth, the route's work. Always fills resp (errors included).
 * lcore indexes the counters. scratch serves the compute (NULL: one is
 * made and freed for this call).
 */
void shard_handle(struct shard_unit *u, const struct shard_http_req *rq,
		  struct shard_resp *resp, const struct shard_mem *mem,
		  struct ffn_scratch *scratch, unsigned int lcore);

/**
 * shard_handle() for n requests at once: those whose routes share a
 * handle_many are computed together (issue 23: concurrent layer-batch
 * calls share expert reads); the others one by one. Each resp[i] is
 * filled and counted as shard_handle() would.
 */
void shard_handle_many(struct shard_unit *u,
		       const struct shard_http_req *const *rq,
		       struct shard_resp *const *resp, unsigned int n,
		       const struct shard_mem *mem,
		       struct ffn_scratch *scratch, unsigned int lcore);

struct shard_job;

/** One feature slice of a split job (in the job memory). */
struct shard_part {
	struct shard_job *job;
	uint32_t idx;			/**< slice idx of job->n_parts */
	uint32_t next;			/**< private to the thread running it */
};

/** A binary walk-ffn request in flight between lcores. */
struct shard_job {
	struct shard_unit *u;
	struct wire_req req;
	enum wire_fmt out_fmt;
	uint32_t hidden;
	const float *x;			/**< seq_len x hidden inputs */
	uint8_t *slots;			/**< n_layers slots of slot_size */
	size_t slot_size;
	struct iovec *iov;		/**< n_layers + 1 entries */
	uint32_t next;			/**< next layer index to compute */
	int error;			/**< compute failure: 500 */
	uint64_t t_start_ns;		/**< after decode + validate */
	uint64_t t_end_ns;		/**< after the last layer */
	struct wire_frame frame;
	struct shard_resp resp;		/**< filled by shard_job_finish */
	void *owner;			/**< free for the caller (server) */
	/**
	 * Set by the server for a request run whole by shard_handle() on a
	 * worker (JSON and Q8_K walk-ffn), so network lcores never compute;
	 * rq's strings then live with the owner. Not for
	 * shard_jobs_compute()/shard_job_finish().
	 */
	bool whole;
	struct shard_http_req rq;
	/**
	 * Layer split (issue 4), decided by shard_walk_prepare(): n_parts
	 * 0 when the job is computed whole. Otherwise parts[i] computes
	 * feature slice i of every layer into its own partial buffer
	 * (part_buf, n_parts x n_layers x seq_len x hidden floats, job
	 * memory), and the part that brings parts_left to 0 sums them into
	 * the slots: no slot is written before every part has read x.
	 */
	uint32_t n_parts;
	uint32_t parts_left;		/**< atomic countdown */
	struct shard_part *parts;
	float *part_buf;
};

/**
 * Network side of a binary walk-ffn: decode and validate the body
 * (spec/wire.md §4 order), negotiate the response format, allocate the
 * job memory and decode the input. The body must stay valid until the job
 * is released (f32 inputs are read in place when aligned).
 * Returns 0 with job ready for shard_jobs_compute(), or -1 with *err
 * holding the error response (not yet counted: shard_count()).
 */
int shard_walk_prepare(struct shard_unit *u, const struct shard_http_req *rq,
		       struct shard_job *job, struct shard_resp *err,
		       const struct shard_mem *mem, unsigned int lcore);

/**
 * Compute every layer of n jobs. Jobs whose next layer is the same are
 * computed together (their rows in one pass), so each weight byte is read
 * once per batch. Sets each job's t_end_ns. lcore indexes the counters.
 * A row's result does not depend on the other rows' values, but the
 * kernels sum in a different order for one row than for several (two
 * accumulator chains, lib/ffn), so a row computed alone and the same row
 * in a batch may differ in the last bits, within f32 rounding.
 */
void shard_jobs_compute(struct shard_job *const *jobs, unsigned int n,
			struct ffn_scratch *s, unsigned int lcore);

/**
 * Compute one part of a split job (job->n_parts > 0): feature slice
 * part->idx of every layer (ffn_compute_part) into its partial buffer.
 * Any thread may run any part, concurrently with the others; the data
 * path takes no lock: the part that finishes last (an atomic countdown)
 * sums the partials into the slots, sets t_end_ns and calls
 * shard_job_finish(). Returns true for that last part: the job's response
 * is then ready to hand back. shard_jobs_compute() still computes a split
 * job whole (the parts then go unused).
 */
bool shard_part_run(struct shard_part *part, struct ffn_scratch *s,
		    unsigned int lcore);

/**
 * shard_part_run() for n parts at once (of any jobs, several parts of
 * one job included): parts of the same slice at the same layer are
 * computed in one pass, as shard_jobs_compute() batches whole jobs, so a split keeps
 * batching across requests. The jobs whose last part this was are
 * finished and written to done (room for n; may be NULL); returns their
 * count.
 */
unsigned int shard_parts_run(struct shard_part *const *parts, unsigned int n,
			     struct ffn_scratch *s, unsigned int lcore,
			     struct shard_job **done);

/**
 * After compute: narrow every result in place, frame it (latency_ms is
 * t_end - t_start, spec/wire.md §5.2) and fill job->resp (body by
 * reference into the job memory, which job->resp now owns).
 */
void shard_job_finish(struct shard_job *job, unsigned int lcore);

/** Count a response in lcore's counters (status, route, bytes). */
void shard_count(struct shard_unit *u, const struct shard_resp *r,
		 size_t bytes_in, unsigned int lcore);

/** Sum of every lcore's counters. */
void shard_stats_sum(const struct shard_unit *u, struct shard_stats *out);

/** CLOCK_MONOTONIC in nanoseconds. */
uint64_t shard_now_ns(void);

/* Bodies of the small routes (malloc'd; NULL on allocation failure). */
char *shard_stats_json(const struct shard_unit *u, size_t *len);
char *shard_health_json(const struct shard_unit *u, size_t *len);
char *shard_models_json(const struct shard_unit *u, size_t *len);
char *shard_metrics_text(const struct shard_unit *u, size_t *len);

/* The expert routes (spec/moe.md §2-§4, §7; shard_expert*.c). */
/* layer-batch and multi-layer routes: one request, or n computed
 * together (their rows grouped by expert) */
void shard_experts_one(struct shard_unit *u, const struct shard_http_req *rq,
		       struct shard_resp *resp, const struct shard_ctx *ctx);
void shard_experts_many(struct shard_unit *u,
			const struct shard_http_req *const *rq,
			struct shard_resp *const *resp, unsigned int n,
			const struct shard_ctx *ctx);
void shard_expert_batch(struct shard_unit *u, const struct shard_http_req *rq,
			struct shard_resp *resp, const struct shard_ctx *ctx);
void shard_expert_single(struct shard_unit *u,
			 const struct shard_http_req *rq,
			 struct shard_resp *resp, const struct shard_ctx *ctx);
void shard_expert_topology(struct shard_unit *u,
			   const struct shard_http_req *rq,
			   struct shard_resp *resp,
			   const struct shard_ctx *ctx);
/** Whether path is /v1/expert/{a}/{b}: two non-empty segments. */
bool shard_expert_path(const char *path, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* FFN_SHARD_H */
