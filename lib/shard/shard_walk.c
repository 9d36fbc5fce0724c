/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The lifecycle of one request: route, auth, walk-ffn (binary and JSON),
 * the small routes. See shard.h for the contract.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http.h"
#include "shard.h"
#include "shard_walk_priv.h"

uint64_t
shard_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *
heap_alloc(void *arg, size_t size)
{
	(void)arg;
	/* aligned_alloc wants a multiple of the alignment. */
	return aligned_alloc(64, (size + 63) & ~(size_t)63);
}

static void
heap_free(void *arg, void *p)
{
	(void)arg;
	free(p);
}

const struct shard_mem shard_mem_heap = {
	.alloc = heap_alloc,
	.free = heap_free,
	.arg = NULL,
};

void
shard_resp_release(struct shard_resp *r)
{
	free(r->heap);
	r->heap = NULL;
	if (r->mem != NULL && r->mem_ops != NULL)
		r->mem_ops->free(r->mem_ops->arg, r->mem);
	r->mem = NULL;
	r->iov = NULL;
	r->iovcnt = 0;
}

static void
resp_heap_body(struct shard_resp *r, int status, const char *type,
	       char *body, size_t len)
{
	r->status = status;
	r->content_type = type;
	r->heap = body;
	r->one.iov_base = body;
	r->one.iov_len = len;
	r->iov = &r->one;
	r->iovcnt = len ? 1 : 0;
	r->len = len;
}

void
shard_resp_error(struct shard_resp *r, int status, const char *msg)
{
	size_t cap = 6 * strlen(msg) + 16;
	char *body = malloc(cap);
	ssize_t n = body ? http_json_error(body, cap, msg) : -ENOMEM;

	if (n < 0) {
		free(body);
		body = NULL;
		n = 0;
	}
	resp_heap_body(r, status, "application/json", body, (size_t)n);
}

static void
resp_wire_error(struct shard_resp *r, const struct wire_error *e)
{
	shard_resp_error(r, e->status, e->msg);
}

/* spec/wire.md §2: the routes; unknown path 404, known path 405. A GET
 * route answers HEAD as GET, without the body (RFC 9110 §9.1: a server
 * MUST support both; axum's get() routes do the same). */
static const struct {
	const char *path;
	int method;
	enum shard_route route;
} routes[] = {
	{ "/v1/walk-ffn", HTTP_M_POST, SHARD_R_WALK },
	{ "/v1/walk-ffn-q8k", HTTP_M_POST, SHARD_R_WALK_Q8K },
	{ "/v1/stats", HTTP_M_GET, SHARD_R_STATS },
	{ "/v1/health", HTTP_M_GET, SHARD_R_HEALTH },
	{ "/metrics", HTTP_M_GET, SHARD_R_METRICS },
};

enum shard_route
shard_route(int method, const char *path, size_t len, int *status)
{
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (strlen(routes[i].path) != len ||
		    memcmp(routes[i].path, path, len) != 0)
			continue;
		if (routes[i].method == method ||
		    (routes[i].method == HTTP_M_GET && method == HTTP_M_HEAD))
			return routes[i].route;
		*status = 405;
		return SHARD_R_NONE;
	}
	*status = 404;
	return SHARD_R_NONE;
}

const char *
shard_route_allow(const char *path, size_t len)
{
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (strlen(routes[i].path) == len &&
		    memcmp(routes[i].path, path, len) == 0)
			return routes[i].method == HTTP_M_GET ? "GET, HEAD" :
			       http_method_name(routes[i].method);
	return NULL;
}

bool
shard_authorized(const struct shard_unit *u, enum shard_route route,
		 const char *auth, size_t len)
{
	static const char scheme[] = "bearer";
	const size_t slen = sizeof(scheme) - 1;
	unsigned char diff = 0;
	size_t i;

	if (u->api_key_len == 0 || route == SHARD_R_HEALTH)
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

static int
status_bucket(int status)
{
	static const int codes[] = {
#define SHARD_CODE(c) c,
		SHARD_STATUSES(SHARD_CODE)
#undef SHARD_CODE
	};
	for (int i = 0; i < (int)(sizeof(codes) / sizeof(codes[0])); i++)
		if (codes[i] == status)
			return i;
	return SHARD_N_STATUS - 1; /* "other" */
}

void
shard_count(struct shard_unit *u, const struct shard_resp *r,
	    size_t bytes_in, unsigned int lcore)
{
	struct shard_stats *st = &u->stats[lcore % SHARD_MAX_LCORE];

	st->requests[r->route][status_bucket(r->status)]++;
	st->bytes_in += bytes_in;
	st->bytes_out += r->len;
	if (r->route == SHARD_R_WALK && r->status == 200) {
		st->walk_served++;
		if (r->fmt_out >= 0 && r->fmt_out < 4)
			st->walk_out[r->fmt_out]++;
	}
}

static void
count_latency(struct shard_stats *st, double ms)
{
	static const double bounds_us[SHARD_LAT_BUCKETS - 1] = {
		50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000,
		100000,
	};
	double us = ms * 1000.0;
	int b = 0;

	while (b < SHARD_LAT_BUCKETS - 1 && us > bounds_us[b])
		b++;
	st->lat_hist[b]++;
	st->lat_sum_ms += ms;
}

void
shard_count_batch(struct shard_stats *st, unsigned int rows)
{
	int b = 0;

	/* Buckets 1, 2, 4, ..., 64, +Inf. */
	while (b < SHARD_BATCH_BUCKETS - 1 && rows > (1u << b))
		b++;
	st->batch_hist[b]++;
}

/* ---- binary walk-ffn ------------------------------------------------ */

/*
 * Bytes of the layer split of a job (issue 4), 0 when it is not split:
 * the unit splits (split_min_rows, 2+ workers), the job has enough rows,
 * and the partials (one f32 result per part and layer) stay within the
 * response limit, so a split never allocates more than a bounded job.
 */
static size_t
split_bytes(const struct shard_unit *u, const struct shard_job *job,
	    uint32_t *n_parts)
{
	uint64_t one, all;

	*n_parts = 0;
	if (u->split_min_rows == 0 || u->split_parts < 2 ||
	    job->req.seq_len < u->split_min_rows || job->req.n_layers == 0)
		return 0;
	one = (uint64_t)job->req.seq_len * job->hidden * sizeof(float);
	all = one * job->req.n_layers;
	if (all > u->max_response / u->split_parts)
		return 0;
	*n_parts = u->split_parts;
	return (size_t)(all * u->split_parts) +
	       ((u->split_parts * sizeof(struct shard_part) + 63) &
		~(size_t)63);
}

int
shard_walk_prepare(struct shard_unit *u, const struct shard_http_req *rq,
		   struct shard_job *job, struct shard_resp *err,
		   const struct shard_mem *mem, unsigned int lcore)
{
	struct shard_stats *st = &u->stats[lcore % SHARD_MAX_LCORE];
	struct wire_error we;
	enum wire_fmt in_fmt = WIRE_FMT_F32;
	size_t iov_bytes, x_bytes = 0, total, sp_bytes;
	uint32_t n_parts;
	uint8_t *base;

	memset(job, 0, sizeof(*job));
	memset(err, 0, sizeof(*err));
	err->route = SHARD_R_WALK;
	err->fmt_out = -1;
	job->u = u;
	wire_request_format(rq->content_type, rq->content_type_len, &in_fmt);
	st->walk_in[in_fmt]++;
	if (wire_req_decode(&job->req, rq->body, rq->body_len, in_fmt,
			    &we) < 0 ||
	    wire_req_validate(&job->req, &u->facts, &we) < 0) {
		resp_wire_error(err, &we);
		return -1;
	}
	job->hidden = u->facts.hidden;
	job->out_fmt = wire_response_format(rq->accept, rq->accept_len,
					    &u->wire);
	job->slot_size = wire_slot_size(job->out_fmt, job->req.seq_len,
					job->hidden);
	if (job->slot_size == 0) {
		shard_resp_error(err, 400, "seq_len * hidden overflow");
		return -1;
	}
	/* The appliance's own limit (spec/wire.md §4, last paragraph): a
	 * batch of many layers must not make us allocate without bound. */
	if (job->req.n_layers > u->max_response / job->slot_size) {
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "response of %u layers x %zu bytes exceeds the "
			 "shard's limit of %llu bytes", job->req.n_layers,
			 job->slot_size,
			 (unsigned long long)u->max_response);
		shard_resp_error(err, 413, msg);
		return -1;
	}
	job->x = wire_req_payload_view(&job->req);
	if (job->x == NULL)
		x_bytes = ((size_t)job->req.n_values * 4 + 63) & ~(size_t)63;
	/* The iovecs, then a copy of the batch frame header, so the
	 * response needs nothing of the job struct once finished. */
	iov_bytes = ((size_t)(job->req.n_layers + 1) * sizeof(struct iovec) +
		     WIRE_RESP_HDR_LEN + 63) & ~(size_t)63;
	sp_bytes = split_bytes(u, job, &n_parts);
	total = (size_t)job->req.n_layers * job->slot_size + x_bytes +
		iov_bytes + sp_bytes;
	base = mem->alloc(mem->arg, total);
	if (base == NULL) {
		shard_resp_error(err, 503, "out of memory for the response");
		return -1;
	}
	job->resp.mem = base;
	job->resp.mem_ops = mem;
	job->slots = base;
	job->iov = (struct iovec *)(base + (size_t)job->req.n_layers *
				    job->slot_size);
	if (job->x == NULL) {
		float *x = (float *)((uint8_t *)job->iov + iov_bytes);

		wire_req_payload_f32(&job->req, x, job->req.n_values);
		job->x = x;
	}
	if (n_parts > 0) {
		/* Partials first (64-byte aligned: the slots, iovecs and x
		 * before them are multiples of 64), then the descriptors. */
		uint8_t *sp = base + total - sp_bytes;
		size_t pb = sp_bytes - ((n_parts * sizeof(struct shard_part) +
					 63) & ~(size_t)63);

		job->part_buf = (float *)sp;
		job->parts = (struct shard_part *)(sp + pb);
		for (uint32_t i = 0; i < n_parts; i++) {
			job->parts[i].job = job;
			job->parts[i].idx = i;
		}
		job->n_parts = n_parts;
		job->parts_left = n_parts;
	}
	job->t_start_ns = shard_now_ns();
	return 0;
}

/* One pass of rows at one layer; a failure fails every job in it. */
static void
pass_run(struct shard_unit *u, uint32_t layer, const float **xr,
	 float **yr, struct shard_job **who, unsigned int rows,
	 struct ffn_scratch *s, unsigned int lcore)
{
	if (rows == 0)
		return;
	if (ffn_compute(u->model, layer, xr, yr, rows, s) < 0)
		for (unsigned int r = 0; r < rows; r++)
			who[r]->error = -EIO;
	shard_count_batch(&u->stats[lcore % SHARD_MAX_LCORE], rows);
}

void
shard_jobs_compute(struct shard_job *const *jobs, unsigned int n,
		   struct ffn_scratch *s, unsigned int lcore)
{
	const float *xr[SHARD_PASS_ROWS];
	float *yr[SHARD_PASS_ROWS];
	struct shard_job *who[SHARD_PASS_ROWS];

	for (;;) {
		struct shard_job *lead = NULL;
		uint32_t layer;
		unsigned int rows = 0;
		uint64_t now;

		for (unsigned int i = 0; i < n && lead == NULL; i++)
			if (jobs[i]->next < jobs[i]->req.n_layers &&
			    jobs[i]->error == 0)
				lead = jobs[i];
		if (lead == NULL)
			return;
		layer = wire_req_layer(&lead->req, lead->next);
		for (unsigned int i = 0; i < n; i++) {
			struct shard_job *j = jobs[i];
			struct shard_stats *st;
			float *y;

			if (j->error || j->next >= j->req.n_layers ||
			    j->u != lead->u ||
			    wire_req_layer(&j->req, j->next) != layer)
				continue;
			y = wire_slot_f32(j->slots + (size_t)j->next *
					  j->slot_size, j->out_fmt,
					  j->req.seq_len, j->hidden);
			for (uint32_t r = 0; r < j->req.seq_len; r++) {
				xr[rows] = j->x + (size_t)r * j->hidden;
				yr[rows] = y + (size_t)r * j->hidden;
				who[rows] = j;
				if (++rows == SHARD_PASS_ROWS) {
					pass_run(lead->u, layer, xr, yr, who,
						 rows, s, lcore);
					rows = 0;
				}
			}
			j->next++;
			st = &j->u->stats[lcore % SHARD_MAX_LCORE];
			st->layers_computed++;
			st->rows_computed += j->req.seq_len;
		}
		pass_run(lead->u, layer, xr, yr, who, rows, s, lcore);
		/* A job whose last layer was just computed is done now. */
		now = shard_now_ns();
		for (unsigned int i = 0; i < n; i++)
			if (jobs[i]->t_end_ns == 0 &&
			    (jobs[i]->next >= jobs[i]->req.n_layers ||
			     jobs[i]->error))
				jobs[i]->t_end_ns = now;
	}
}

void
shard_job_finish(struct shard_job *job, unsigned int lcore)
{
	struct shard_resp *r = &job->resp;
	double ms;

	r->route = SHARD_R_WALK;
	if (job->t_end_ns == 0)
		job->t_end_ns = shard_now_ns();
	if (job->error) {
		shard_resp_release(r);
		shard_resp_error(r, 500, "FFN compute failed");
		r->fmt_out = -1;
		return;
	}
	ms = (double)(job->t_end_ns - job->t_start_ns) / 1e6;
	count_latency(&job->u->stats[lcore % SHARD_MAX_LCORE], ms);
	for (uint32_t i = 0; i < job->req.n_layers; i++)
		wire_slot_finish(job->slots + (size_t)i * job->slot_size,
				 job->out_fmt, wire_req_layer(&job->req, i),
				 job->req.seq_len, job->hidden,
				 &job->iov[1 + i]);
	wire_frame_finish(&job->frame, job->iov, job->req.n_layers, ms);
	if (job->frame.iovcnt > job->req.n_layers) {
		/* Batch: iov[0] points at job->frame.hdr; move it into the
		 * job memory, which the response owns. */
		uint8_t *hdr = (uint8_t *)(job->iov + job->req.n_layers + 1);

		memcpy(hdr, job->frame.hdr, WIRE_RESP_HDR_LEN);
		job->iov[0].iov_base = hdr;
	}
	r->status = 200;
	r->content_type = wire_fmt_content_type(job->out_fmt);
	r->iov = job->frame.iov;
	r->iovcnt = job->frame.iovcnt;
	r->len = job->frame.len;
	r->fmt_out = (int)job->out_fmt;
}

/* ---- JSON walk-ffn (spec/wire.md §6) ------------------------------- */

static void
walk_json(struct shard_unit *u, const struct shard_http_req *rq,
	  struct shard_resp *resp, struct ffn_scratch *s, unsigned int lcore)
{
	struct shard_stats *st = &u->stats[lcore % SHARD_MAX_LCORE];
	struct wire_json_req jr;
	struct wire_error we;
	size_t nl, H = u->facts.hidden;
	uint64_t t0;
	char *body = NULL;
	size_t blen = 0;
	int rc;

	st->walk_in[3]++;
	if (wire_json_req_parse(&jr, (const char *)rq->body, rq->body_len,
				&we) < 0) {
		resp_wire_error(resp, &we);
		return;
	}
	if (wire_json_req_validate(&jr, &u->facts, &we) < 0) {
		resp_wire_error(resp, &we);
		wire_json_req_free(&jr);
		return;
	}
	nl = wire_json_req_n_layers(&jr);
	/* The same bound as the binary path (shard_walk_prepare). */
	if (jr.full_output && jr.seq_len * H != 0 &&
	    nl > u->max_response / (jr.seq_len * H * sizeof(float))) {
		char msg[160];

		snprintf(msg, sizeof(msg), "response of %zu layers x %llu "
			 "values exceeds the shard's limit of %llu bytes", nl,
			 (unsigned long long)(jr.seq_len * H),
			 (unsigned long long)u->max_response);
		shard_resp_error(resp, 413, msg);
		wire_json_req_free(&jr);
		return;
	}
	/* Features mode: nl gate passes and k (u32 id, f32 score) pairs
	 * each; a feature-less pass (top_k 0) still costs one. */
	if (!jr.full_output) {
		uint64_t k = jr.top_k < ffn_model_info(u->model)->max_features ?
			     jr.top_k : ffn_model_info(u->model)->max_features;

		if (nl > u->max_response / ((k ? k : 1) * 8)) {
			char msg[160];

			snprintf(msg, sizeof(msg), "response of %zu layers x "
				 "%llu features exceeds the shard's limit of "
				 "%llu bytes", nl, (unsigned long long)k,
				 (unsigned long long)u->max_response);
			shard_resp_error(resp, 413, msg);
			wire_json_req_free(&jr);
			return;
		}
	}
	t0 = shard_now_ns();
	if (jr.full_output) {
		size_t nv = (size_t)jr.seq_len * H;
		uint64_t *layers = calloc(nl ? nl : 1, sizeof(*layers));
		float **outs = calloc(nl ? nl : 1, sizeof(*outs));
		float *all = malloc((nl ? nl : 1) * (nv ? nv : 1) *
				    sizeof(float));

		rc = (layers && outs && all) ? 0 : -ENOMEM;
		for (size_t i = 0; rc == 0 && i < nl; i++) {
			layers[i] = wire_json_req_layer(&jr, i);
			outs[i] = all + i * nv;
			rc = ffn_compute_strided(u->model, (unsigned)layers[i],
						 jr.residual, H, outs[i], H,
						 (unsigned)jr.seq_len, s);
			st->layers_computed++;
			st->rows_computed += jr.seq_len;
		}
		if (rc == 0)
			rc = wire_json_full_output(layers,
				(const float *const *)outs, nl, jr.seq_len,
				nv, (double)(shard_now_ns() - t0) / 1e6,
				&body, &blen);
		free(layers);
		free(outs);
		free(all);
	} else {
		const struct ffn_info *fi = ffn_model_info(u->model);
		unsigned int k = jr.top_k < fi->max_features ?
				 (unsigned int)jr.top_k : fi->max_features;
		struct wire_features *res = calloc(nl ? nl : 1, sizeof(*res));
		uint32_t *ids = malloc((nl ? nl : 1) * (k ? k : 1) * 4);
		float *scores = malloc((nl ? nl : 1) * (k ? k : 1) * 4);

		rc = (res && ids && scores) ? 0 : -ENOMEM;
		for (size_t i = 0; rc == 0 && i < nl; i++) {
			int got;

			res[i].layer = wire_json_req_layer(&jr, i);
			res[i].ids = ids + i * k;
			res[i].scores = scores + i * k;
			got = ffn_features(u->model, (unsigned)res[i].layer,
					   jr.residual, k, ids + i * k,
					   scores + i * k, s);
			if (got < 0)
				rc = got;
			else
				res[i].k = (size_t)got;
		}
		if (rc == 0)
			rc = wire_json_features(res, nl,
				(double)(shard_now_ns() - t0) / 1e6,
				&body, &blen);
		free(res);
		free(ids);
		free(scores);
	}
	wire_json_req_free(&jr);
	if (rc < 0) {
		shard_resp_error(resp, 500, rc == -ENOMEM ?
				 "out of memory" : "FFN compute failed");
		return;
	}
	count_latency(st, (double)(shard_now_ns() - t0) / 1e6);
	resp_heap_body(resp, 200, "application/json", body, blen);
	resp->fmt_out = 3;
}

/* ---- Q8_K input route (issue 6) ------------------------------------ */

/* K-quant layers dot the Q8_K rows with integer instructions; dense
 * layers take them dequantised (x = d * q): both shards serve it. */
static void
walk_q8k(struct shard_unit *u, const struct shard_http_req *rq,
	 struct shard_resp *resp, const struct shard_mem *mem,
	 struct ffn_scratch *s, unsigned int lcore)
{
	uint32_t n = 0, H = u->facts.hidden;
	struct wire_error we;
	size_t size, pos = 4;
	uint8_t *buf;
	uint64_t t0;

	if (wire_q8k_validate(rq->body, rq->body_len, &u->facts, &n,
			      &we) < 0) {
		resp_wire_error(resp, &we);
		return;
	}
	size = wire_q8k_resp_size(n, H);
	if (size == 0 || size > u->max_response) {
		char msg[160];

		snprintf(msg, sizeof(msg), "response of %u entries exceeds "
			 "the shard's limit of %llu bytes", n,
			 (unsigned long long)u->max_response);
		shard_resp_error(resp, 413, msg);
		return;
	}
	buf = mem->alloc(mem->arg, size);
	if (buf == NULL) {
		shard_resp_error(resp, 503, "out of memory for the response");
		return;
	}
	t0 = shard_now_ns();
	/* The count alone: entry 0's header does not exist when n is 0. */
	wire_q8k_resp_count(buf, n);
	for (uint32_t i = 0; i < n; i++) {
		struct wire_q8k_entry e;
		float *y = wire_q8k_resp_out(buf, i, H);

		wire_q8k_entry(rq->body, &pos, &e);
		/* The entry's qs, d, sums are ffn_kq.h's wire row layout. */
		if (ffn_compute_q8k(u->model, e.layer, e.qs, &y, 1, s) < 0) {
			mem->free(mem->arg, buf);
			shard_resp_error(resp, 500, "FFN compute failed");
			return;
		}
		wire_q8k_resp_entry(buf, n, i, e.layer, H);
	}
	count_latency(&u->stats[lcore % SHARD_MAX_LCORE],
		      (double)(shard_now_ns() - t0) / 1e6);
	resp->status = 200;
	resp->content_type = WIRE_Q8K_CONTENT_TYPE;
	resp->mem = buf;
	resp->mem_ops = mem;
	resp->one.iov_base = buf;
	resp->one.iov_len = size;
	resp->iov = &resp->one;
	resp->iovcnt = 1;
	resp->len = size;
}

/* ---- one whole request on this thread ------------------------------ */

void
shard_handle(struct shard_unit *u, const struct shard_http_req *rq,
	     struct shard_resp *resp, const struct shard_mem *mem,
	     struct ffn_scratch *scratch, unsigned int lcore)
{
	struct ffn_scratch *own = NULL;
	enum shard_route route;
	int status = 0;
	enum wire_fmt fmt;
	char *body;
	size_t len = 0;

	memset(resp, 0, sizeof(*resp));
	resp->fmt_out = -1;
	route = shard_route(rq->method, rq->path, rq->path_len, &status);
	if (route == SHARD_R_METRICS && !u->metrics_enabled) {
		route = SHARD_R_NONE;
		status = 404;
	}
	resp->route = route;
	if (route == SHARD_R_NONE) {
		shard_resp_error(resp, status, status == 404 ? "not found" :
				 "method not allowed");
		goto out;
	}
	if (!shard_authorized(u, route, rq->authorization,
			      rq->authorization_len)) {
		/* Issue 4: 401 with an empty body. */
		resp->status = 401;
		goto out;
	}
	switch (route) {
	case SHARD_R_STATS:
	case SHARD_R_HEALTH:
	case SHARD_R_METRICS:
		body = route == SHARD_R_STATS ? shard_stats_json(u, &len) :
		       route == SHARD_R_HEALTH ? shard_health_json(u, &len) :
		       shard_metrics_text(u, &len);
		if (body == NULL) {
			shard_resp_error(resp, 500, "out of memory");
			break;
		}
		resp_heap_body(resp, 200, route == SHARD_R_METRICS ?
			       "text/plain; version=0.0.4" :
			       "application/json", body, len);
		break;
	case SHARD_R_WALK_Q8K:
	case SHARD_R_WALK:
		if (scratch == NULL && u->model != NULL) {
			own = ffn_scratch_new(u->model, 64, -1);
			if (own == NULL) {
				shard_resp_error(resp, 503, "out of memory");
				break;
			}
			scratch = own;
		}
		if (route == SHARD_R_WALK_Q8K) {
			walk_q8k(u, rq, resp, mem, scratch, lcore);
			break;
		}
		if (wire_request_format(rq->content_type,
					rq->content_type_len, &fmt)) {
			struct shard_job job;
			struct shard_job *jp = &job;

			if (shard_walk_prepare(u, rq, &job, resp, mem,
					       lcore) < 0)
				break;
			shard_jobs_compute(&jp, 1, scratch, lcore);
			shard_job_finish(&job, lcore);
			*resp = job.resp;
			/* An error body's range lives in the resp itself. */
			if (job.resp.iov == &job.resp.one)
				resp->iov = &resp->one;
		} else {
			walk_json(u, rq, resp, scratch, lcore);
		}
		break;
	default:
		shard_resp_error(resp, 500, "unrouted request");
		break;
	}
out:
	if (own != NULL)
		ffn_scratch_free(own);
	resp->route = route;
	shard_count(u, resp, rq->body_len, lcore);
}
