/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The routes (spec/wire.md §2, plus the appliance's own) as one table,
 * and everything that reads a request line: routing, Allow, auth, and a
 * whole request handled on this thread (shard_handle).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http.h"
#include "shard.h"
#include "shard_walk_priv.h"

static bool
metrics_on(const struct shard_unit *u)
{
	return u->metrics_enabled;
}

static void
route_text(struct shard_unit *u, const struct shard_http_req *rq,
	   struct shard_resp *resp, const struct shard_ctx *ctx);
static void
route_options(struct shard_unit *u, const struct shard_http_req *rq,
	      struct shard_resp *resp, const struct shard_ctx *ctx);

/* What OPTIONS * advertises: the methods of the routes below (and HEAD,
 * which every GET route answers); test_shard_route checks they agree. */
#define ALLOW_ALL "GET, HEAD, POST"

/*
 * One row per route. A GET route answers HEAD as GET, without the body
 * (RFC 9110 §9.1: a server MUST support both; axum's get() routes do the
 * same). Health needs no key and is not rate limited: a throttled
 * client's load balancer must still see the shard up (issue 4).
 */
const struct shard_route_def shard_routes[SHARD_R_COUNT] = {
	/* An unknown path still counts against the rate limit, and with
	 * a key set the server answers it 401 before 404. */
	[SHARD_R_NONE] = { .name = "other", .auth = true, .throttle = true },
	[SHARD_R_WALK] = {
		.path = "/v1/walk-ffn", .method = HTTP_M_POST,
		.name = "walk-ffn", .body = true, .compute = true,
		.batch = true, .auth = true, .throttle = true,
		.fans_out = true, .handle = shard_walk_handle,
	},
	[SHARD_R_WALK_Q8K] = {
		.path = "/v1/walk-ffn-q8k", .method = HTTP_M_POST,
		.name = "walk-ffn-q8k", .body = true, .compute = true,
		.auth = true, .throttle = true, .shard_only = true,
		.handle = shard_walk_q8k,
	},
	[SHARD_R_STATS] = {
		.path = "/v1/stats", .method = HTTP_M_GET, .name = "stats",
		.auth = true, .throttle = true, .fans_out = true,
		.text = shard_stats_json, .text_type = "application/json",
		.handle = route_text,
	},
	[SHARD_R_HEALTH] = {
		.path = "/v1/health", .method = HTTP_M_GET, .name = "health",
		.text = shard_health_json, .text_type = "application/json",
		.handle = route_text,
	},
	[SHARD_R_METRICS] = {
		.path = "/metrics", .method = HTTP_M_GET, .name = "metrics",
		.auth = true, .throttle = true, .enabled = metrics_on,
		.text = shard_metrics_text,
		.text_type = "text/plain; version=0.0.4",
		.handle = route_text,
	},
	[SHARD_R_MODELS] = {
		.path = "/v1/models", .method = HTTP_M_GET, .name = "models",
		.auth = true, .throttle = true, .shard_only = true,
		.text = shard_models_json, .text_type = "application/json",
		.handle = route_text,
	},
	/* RFC 9110 §9.3.7, RFC 9112 §3.2.4: a question about the server
	 * as a whole (a "ping"): no key needed, like health. */
	[SHARD_R_OPTIONS] = {
		.path = "*", .method = HTTP_M_OPTIONS, .name = "options",
		.throttle = true, .handle = route_options,
	},
	/*
	 * spec/moe.md §2. Every expert route is served by every unit: on
	 * a dense model they answer §4's "not a hybrid MoE". Bodies: 2 MiB
	 * on the single route, the unit's max_body (64 MiB by default, as
	 * the reference) on the others; framework errors in text (§4).
	 */
	[SHARD_R_EXPERT] = {
		.path = "/v1/expert/{layer}/{expert_id}",
		.match = shard_expert_path, .method = HTTP_M_POST,
		.name = "expert", .body = true, .compute = true,
		.auth = true, .throttle = true, .text_errors = true,
		.shard_only = true,
		.log_errors = true,
		.max_body = 2u << 20, .handle = shard_expert_single,
	},
	[SHARD_R_EXPERT_BATCH] = {
		.path = "/v1/expert/batch", .method = HTTP_M_POST,
		.name = "expert-batch", .body = true, .compute = true,
		.auth = true, .throttle = true, .text_errors = true,
		.shard_only = true,
		.log_errors = true,
		.handle = shard_expert_batch,
	},
	[SHARD_R_LAYER_BATCH] = {
		.path = "/v1/experts/layer-batch", .method = HTTP_M_POST,
		.name = "experts-layer-batch", .body = true, .compute = true,
		.auth = true, .throttle = true, .text_errors = true,
		.shard_only = true,
		.log_errors = true,
		.handle = shard_experts_one,
		.handle_many = shard_experts_many,
	},
	[SHARD_R_LAYER_BATCH_F16] = {
		.path = "/v1/experts/layer-batch-f16", .method = HTTP_M_POST,
		.name = "experts-layer-batch-f16", .body = true,
		.compute = true, .auth = true, .throttle = true,
		.text_errors = true, .log_errors = true, .shard_only = true,
		.handle = shard_experts_one,
		.handle_many = shard_experts_many,
		.moe_in = WIRE_MOE_IN_F16, .moe_own = WIRE_FMT_F16,
	},
	[SHARD_R_LAYER_BATCH_I8] = {
		.path = "/v1/experts/layer-batch-i8", .method = HTTP_M_POST,
		.name = "experts-layer-batch-i8", .body = true,
		.compute = true, .auth = true, .throttle = true,
		.text_errors = true, .log_errors = true, .shard_only = true,
		.handle = shard_experts_one,
		.handle_many = shard_experts_many,
		.moe_in = WIRE_MOE_IN_I8, .moe_own = WIRE_FMT_I8,
	},
	[SHARD_R_MULTI] = {
		.path = "/v1/experts/multi-layer-batch",
		.method = HTTP_M_POST, .name = "experts-multi-layer-batch",
		.body = true, .compute = true, .auth = true, .throttle = true,
		.text_errors = true, .log_errors = true, .shard_only = true,
		.handle = shard_experts_one,
		.handle_many = shard_experts_many,
		.moe_fam = WIRE_MOE_MULTI,
	},
	[SHARD_R_MULTI_Q8K] = {
		.path = "/v1/experts/multi-layer-batch-q8k",
		.method = HTTP_M_POST,
		.name = "experts-multi-layer-batch-q8k", .body = true,
		.compute = true, .auth = true, .throttle = true,
		.text_errors = true, .log_errors = true, .shard_only = true,
		.handle = shard_experts_one,
		.handle_many = shard_experts_many,
		.moe_in = WIRE_MOE_IN_Q8K, .moe_fam = WIRE_MOE_MULTI,
	},
	[SHARD_R_TOPOLOGY] = {
		.path = "/v1/expert/topology", .method = HTTP_M_GET,
		.name = "expert-topology", .auth = true, .throttle = true,
		.shard_only = true,
		.handle = shard_expert_topology,
	},
};

static bool
path_exact(const struct shard_route_def *d, const char *path, size_t len)
{
	return d->path != NULL && d->match == NULL &&
	       strlen(d->path) == len && memcmp(d->path, path, len) == 0;
}

/* The row of path: an exact path first, then a pattern (so
 * /v1/expert/batch is the batch route, not the single one with layer
 * "batch" as axum's router also decides); -1 when none. */
static int
route_of_path(const char *path, size_t len)
{
	for (int r = 0; r < SHARD_R_COUNT; r++)
		if (path_exact(&shard_routes[r], path, len))
			return r;
	for (int r = 0; r < SHARD_R_COUNT; r++)
		if (shard_routes[r].match != NULL &&
		    shard_routes[r].match(path, len))
			return r;
	return -1;
}

/* Whether some route serves method (a GET route serves HEAD too). */
static bool
method_implemented(int method)
{
	for (int r = 0; r < SHARD_R_COUNT; r++) {
		const struct shard_route_def *d = &shard_routes[r];

		if (d->path != NULL && (d->method == method ||
		    (d->method == HTTP_M_GET && method == HTTP_M_HEAD)))
			return true;
	}
	return false;
}

enum shard_route
shard_route(const struct shard_unit *u, int method, const char *path,
	    size_t len, int *status)
{
	int r = route_of_path(path, len);
	const struct shard_route_def *d = r >= 0 ? &shard_routes[r] : NULL;

	if (d != NULL && !(u != NULL && d->enabled != NULL &&
			   !d->enabled(u)) &&
	    !(u != NULL && u->front != NULL && d->shard_only)) {
		if (d->method == method ||
		    (d->method == HTTP_M_GET && method == HTTP_M_HEAD))
			return (enum shard_route)r;
		*status = 405;
		return SHARD_R_NONE;
	}
	/* unknown, or not served here: as unknown */
	*status = method_implemented(method) ? 404 : 501;
	return SHARD_R_NONE;
}

const char *
shard_route_allow(const char *path, size_t len)
{
	int r = route_of_path(path, len);

	if (r < 0)
		return NULL;
	if (r == SHARD_R_OPTIONS)
		return ALLOW_ALL;
	return shard_routes[r].method == HTTP_M_GET ? "GET, HEAD" :
	       http_method_name(shard_routes[r].method);
}

bool
shard_authorized(const struct shard_unit *u, enum shard_route route,
		 const char *auth, size_t len)
{
	static const char scheme[] = "bearer";
	const size_t slen = sizeof(scheme) - 1;
	unsigned char diff = 0;
	size_t i;

	if (u->api_key_len == 0 || !shard_routes[route].auth)
		return true;
	/* RFC 9110 §11.1: the scheme is case-insensitive; §11.4:
	 * credentials = auth-scheme 1*SP token68. */
	if (auth == NULL || len <= slen || strncasecmp(auth, scheme, slen) != 0
	    || auth[slen] != ' ')
		return false;
	for (i = slen; i < len && auth[i] == ' '; i++)
		;
	if (len - i != u->api_key_len)
		return false;
	/* Constant time in the key's bytes: no early exit on mismatch. */
	for (size_t k = 0; k < u->api_key_len; k++)
		diff |= (unsigned char)auth[i + k] ^
			(unsigned char)u->api_key[k];
	return diff == 0;
}

enum wire_fmt
shard_req_fmt(const char *ct, size_t len)
{
	/* spec/wire.md §3: a binary type, else (absent included) JSON. */
	enum wire_fmt fmt = WIRE_FMT_JSON;

	wire_request_format(ct, len, &fmt);
	return fmt;
}

/* A small route: its row's body writer and type. */
static void
route_text(struct shard_unit *u, const struct shard_http_req *rq,
	   struct shard_resp *resp, const struct shard_ctx *ctx)
{
	const struct shard_route_def *d = &shard_routes[resp->route];
	size_t len = 0;
	char *body;

	(void)rq;
	(void)ctx;
	body = d->text(u, &len);
	if (body == NULL)
		shard_resp_error(resp, 500, "out of memory");
	else
		shard_resp_heap(resp, d->text_type, body, len);
}

/* OPTIONS *: 200 with what the server serves and no body (RFC 9110
 * §9.3.7: Content-Length 0 when there is none). */
static void
route_options(struct shard_unit *u, const struct shard_http_req *rq,
	      struct shard_resp *resp, const struct shard_ctx *ctx)
{
	(void)u;
	(void)ctx;
	shard_resp_one(resp, NULL, NULL, 0);
	resp->allow = shard_route_allow(rq->path, rq->path_len);
}

/* What runs before a route's work: routing, auth, the route's body
 * limit. true: run the route (resp->route set); false: resp holds the
 * answer. */
static bool
handle_pre(struct shard_unit *u, const struct shard_http_req *rq,
	   struct shard_resp *resp)
{
	const struct shard_route_def *d;
	enum shard_route route;
	int status = 0;

	memset(resp, 0, sizeof(*resp));
	resp->fmt_out = WIRE_FMT_NONE;
	route = shard_route(u, rq->method, rq->path, rq->path_len, &status);
	resp->route = route;
	d = &shard_routes[route];
	if (route == SHARD_R_NONE) {
		shard_resp_error(resp, status, shard_status_msg(status));
		if (status == 405)
			resp->allow = shard_route_allow(rq->path,
							rq->path_len);
		return false;
	}
	if (!shard_authorized(u, route, rq->authorization,
			      rq->authorization_len)) {
		/* Issue 4: 401 with an empty body. */
		resp->status = 401;
		return false;
	}
	if (d->max_body && rq->body_len > d->max_body) {
		if (d->text_errors)
			shard_resp_text(resp, 413, "Failed to buffer the "
					"request body: length limit exceeded");
		else
			shard_resp_error(resp, 413, shard_status_msg(413));
		return false;
	}
	return true;
}

void
shard_handle(struct shard_unit *u, const struct shard_http_req *rq,
	     struct shard_resp *resp, const struct shard_mem *mem,
	     struct ffn_scratch *scratch, unsigned int lcore)
{
	struct shard_ctx ctx = { .mem = mem, .scratch = scratch,
				 .lcore = lcore };
	struct ffn_scratch *own = NULL;
	enum shard_route route;

	if (!handle_pre(u, rq, resp))
		goto out;
	route = resp->route;
	if (shard_routes[route].compute && scratch == NULL &&
	    u->model != NULL) {
		own = ffn_scratch_new(u->model, 64, -1);
		if (own == NULL) {
			shard_resp_error(resp, 503, "out of memory");
			goto out;
		}
		ctx.scratch = own;
	}
	shard_routes[route].handle(u, rq, resp, &ctx);
	resp->route = route;
out:
	if (own != NULL)
		ffn_scratch_free(own);
	shard_count(u, resp, rq->body_len, lcore);
}

void
shard_handle_many(struct shard_unit *u,
		  const struct shard_http_req *const *rq,
		  struct shard_resp *const *resp, unsigned int n,
		  const struct shard_mem *mem, struct ffn_scratch *scratch,
		  unsigned int lcore)
{
	struct shard_ctx ctx = { .mem = mem, .scratch = scratch,
				 .lcore = lcore };
	const struct shard_http_req **grq = calloc(n + 1, sizeof(*grq));
	struct shard_resp **gresp = calloc(n + 1, sizeof(*gresp));
	bool *done = calloc(n + 1, sizeof(*done));

	if (grq == NULL || gresp == NULL || done == NULL) {
		/* no room to group them: one by one, as ever */
		for (unsigned int i = 0; i < n; i++)
			shard_handle(u, rq[i], resp[i], mem, scratch, lcore);
		goto out;
	}
	for (unsigned int i = 0; i < n; i++) {
		const struct shard_route_def *d;
		unsigned int k = 0;

		if (done[i])
			continue;
		done[i] = true;
		if (!handle_pre(u, rq[i], resp[i])) {	/* answered */
			shard_count(u, resp[i], rq[i]->body_len, lcore);
			continue;
		}
		if (shard_routes[resp[i]->route].handle_many == NULL) {
			/* a route computed alone */
			shard_handle(u, rq[i], resp[i], mem, scratch, lcore);
			continue;
		}
		/* every later request of a route with the same batch
		 * handler joins this one */
		d = &shard_routes[resp[i]->route];
		grq[k] = rq[i];
		gresp[k++] = resp[i];
		for (unsigned int j = i + 1; j < n; j++) {
			enum shard_route r;
			int status = 0;

			if (done[j])
				continue;
			r = shard_route(u, rq[j]->method, rq[j]->path,
					rq[j]->path_len, &status);
			if (shard_routes[r].handle_many != d->handle_many ||
			    !handle_pre(u, rq[j], resp[j]))
				continue;	/* its own turn, later */
			grq[k] = rq[j];
			gresp[k++] = resp[j];
			done[j] = true;
		}
		d->handle_many(u, grq, gresp, k, &ctx);
		for (unsigned int g = 0; g < k; g++) {
			const struct shard_http_req *q = grq[g];

			shard_count(u, gresp[g], q->body_len, lcore);
		}
	}
out:
	free(done);
	free(grq);
	free(gresp);
}
