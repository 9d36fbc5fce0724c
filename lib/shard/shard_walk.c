/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * walk-ffn (spec/wire.md §3-§5): the binary path's lifecycle, prepare,
 * batched compute and finish (shard.h), and the route's handler.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"
#include "shard_walk_priv.h"

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
	size_t iov_bytes, x_bytes = 0, total, sp_bytes;
	uint32_t n_parts;
	uint8_t *base;

	memset(job, 0, sizeof(*job));
	memset(err, 0, sizeof(*err));
	err->route = SHARD_R_WALK;
	err->fmt_out = WIRE_FMT_NONE;
	job->u = u;
	if (rq->fmt_in < 0 || rq->fmt_in >= WIRE_FMT_JSON) {
		/* A caller's bug, not the client's: only binary bodies. */
		shard_resp_error(err, 500, "not a binary walk-ffn body");
		return -1;
	}
	st->walk_in[rq->fmt_in]++;
	if (wire_req_decode(&job->req, rq->body, rq->body_len, rq->fmt_in,
			    &we) < 0 ||
	    wire_req_validate(&job->req, &u->facts, &we) < 0) {
		shard_resp_wire_error(err, &we);
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
	/* A batch of many layers must not make us allocate without
	 * bound (spec/wire.md §4, last paragraph). */
	if (job->req.n_layers > u->max_response / job->slot_size) {
		shard_resp_too_large(err, u, "%u layers x %zu bytes",
				     job->req.n_layers, job->slot_size);
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
		unsigned int rows = 0, n_at = 0;
		uint64_t now, t0 = shard_now_ns();

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
			n_at++;
			st = &j->u->stats[lcore % SHARD_MAX_LCORE];
			st->layers_computed++;
			st->rows_computed += j->req.seq_len;
		}
		pass_run(lead->u, layer, xr, yr, who, rows, s, lcore);
		/* A job whose last layer was just computed is done now. */
		now = shard_now_ns();
		shard_count_layer(lead->u, lcore, layer, now - t0, n_at);
		for (unsigned int i = 0; i < n; i++)
			if (jobs[i]->t_end_ns == 0 &&
			    (jobs[i]->next >= jobs[i]->req.n_layers ||
			     jobs[i]->error))
				jobs[i]->t_end_ns = now;
	}
}

/*
 * spec/moe.md §7, the precision guard on the dense route: f16 is never
 * walk-ffn's own format, so it was negotiated (wire.md §5.1); if some
 * finite result would narrow to +-Inf, the whole answer goes in f32 (its
 * Content-Type says so, and clients decode by it). f16 and f32 slots
 * have one layout (wire_resp.c), so the slots stay as they are.
 */
static void
f16_guard(struct shard_job *job, unsigned int lcore)
{
	size_t n = (size_t)job->req.seq_len * job->hidden;

	for (uint32_t i = 0; i < job->req.n_layers; i++) {
		const float *rows = wire_slot_f32(job->slots +
			(size_t)i * job->slot_size, job->out_fmt,
			job->req.seq_len, job->hidden);

		if (rows != NULL && wire_moe_f16_overflows(rows, n)) {
			job->out_fmt = WIRE_FMT_F32;
			job->u->stats[lcore % SHARD_MAX_LCORE].f16_guard++;
			return;
		}
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
		r->fmt_out = WIRE_FMT_NONE;
		return;
	}
	ms = (double)(job->t_end_ns - job->t_start_ns) / 1e6;
	shard_count_latency(&job->u->stats[lcore % SHARD_MAX_LCORE], ms);
	if (job->out_fmt == WIRE_FMT_F16 && job->u->f16_guard)
		f16_guard(job, lcore);
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
	r->fmt_out = job->out_fmt;
}
/* The walk-ffn route: a binary body is one job computed here (the
 * server instead batches jobs across requests), anything else is the
 * JSON path (spec/wire.md §3). */
void
shard_walk_handle(struct shard_unit *u, const struct shard_http_req *rq,
		  struct shard_resp *resp, const struct shard_ctx *ctx)
{
	struct shard_job job;
	struct shard_job *jp = &job;

	if (rq->fmt_in == WIRE_FMT_JSON) {
		shard_walk_json(u, rq, resp, ctx);
		return;
	}
	if (shard_walk_prepare(u, rq, &job, resp, ctx->mem, ctx->lcore) < 0)
		return;
	shard_jobs_compute(&jp, 1, ctx->scratch, ctx->lcore);
	shard_job_finish(&job, ctx->lcore);
	*resp = job.resp;
	/* An error body's range lives in the resp itself. */
	if (job.resp.iov == &job.resp.one)
		resp->iov = &resp->one;
}
