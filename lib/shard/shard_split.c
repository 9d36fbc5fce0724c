/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * One job's layers split across workers (issue 4, "Compute scheduling":
 * one layer's rows split across a node's workers to cut the latency of
 * one large request): the parts of a split job (shard_walk_prepare lays
 * them out), their batched compute and the last part's sum. See shard.h.
 */
#include <errno.h>
#include <string.h>

#include "shard.h"
#include "shard_walk_priv.h"

/*
 * The partial buffer rows of part p at its job's layer index i. Each part
 * owns n_layers x seq_len x hidden floats (shard_walk_prepare).
 */
static float *
part_rows(const struct shard_part *p, uint32_t i)
{
	const struct shard_job *j = p->job;
	size_t lay = (size_t)j->req.seq_len * j->hidden;

	return j->part_buf + ((size_t)p->idx * j->req.n_layers + i) * lay;
}

/* The last part of a job: sum the partials into the slots and finish. */
static void
part_finish(struct shard_job *j, struct shard_stats *st, unsigned int lcore)
{
	size_t lay = (size_t)j->req.seq_len * j->hidden;
	size_t stride = (size_t)j->req.n_layers * lay;

	/* Every part has read x and written its partial: the slots may be
	 * written now, whatever they share with x. */
	if (j->error == 0)
		for (uint32_t i = 0; i < j->req.n_layers; i++) {
			float *out = wire_slot_f32(j->slots + (size_t)i *
						   j->slot_size, j->out_fmt,
						   j->req.seq_len, j->hidden);
			const float *p0 = j->part_buf + (size_t)i * lay;

			for (size_t e = 0; e < lay; e++) {
				float v = p0[e];

				for (uint32_t p = 1; p < j->n_parts; p++)
					v += p0[p * stride + e];
				out[e] = v;
			}
		}
	j->next = j->req.n_layers;
	/* The slices of one layer ran on several workers, interleaved with
	 * other layers': the job's wall time, shared evenly, is each of its
	 * layers' time (spec/wire.md §9.3's per-layer latency). */
	for (uint32_t i = 0; i < j->req.n_layers && j->error == 0; i++)
		shard_count_layer(j->u, lcore, wire_req_layer(&j->req, i),
				  (shard_now_ns() - j->t_start_ns) /
				  j->req.n_layers, 1);
	st->split_jobs++;
	st->layers_computed += j->req.n_layers;
	st->rows_computed += (uint64_t)j->req.n_layers * j->req.seq_len;
	j->t_end_ns = shard_now_ns();
	shard_job_finish(j, lcore);
}

/* One pass of part rows at one layer and slice; a failure fails every
 * job in it (the flag is read by the last part, after the countdown). */
static void
part_pass(struct shard_unit *u, uint32_t layer, unsigned int f0,
	  unsigned int f1, const float **xr, float **yr,
	  struct shard_job **who, unsigned int rows, struct ffn_scratch *s,
	  struct shard_stats *st)
{
	if (rows == 0)
		return;
	if (ffn_compute_part(u->model, layer, f0, f1, xr, yr, rows, s) < 0)
		for (unsigned int r = 0; r < rows; r++)
			__atomic_store_n(&who[r]->error, -EIO,
					 __ATOMIC_RELAXED);
	shard_count_batch(st, rows);
}

unsigned int
shard_parts_run(struct shard_part *const *parts, unsigned int n,
		struct ffn_scratch *s, unsigned int lcore,
		struct shard_job **done)
{
	const float *xr[SHARD_PASS_ROWS];
	float *yr[SHARD_PASS_ROWS];
	struct shard_job *who[SHARD_PASS_ROWS];
	unsigned int n_done = 0;

	/*
	 * As shard_jobs_compute, but per slice: parts of the same slice
	 * (idx of the same n_parts, same unit) at the same layer are
	 * computed together, so batching survives the split. Each part's
	 * cursor (next) is its own: one thread runs a part.
	 */
	for (unsigned int i = 0; i < n; i++)
		parts[i]->next = 0;
	for (;;) {
		const struct shard_part *lead = NULL;
		struct shard_stats *st;
		unsigned int rows = 0, f0, f1;
		uint32_t layer;
		bool bad;

		for (unsigned int i = 0; i < n && lead == NULL; i++)
			if (parts[i]->next < parts[i]->job->req.n_layers)
				lead = parts[i];
		if (lead == NULL)
			break;
		layer = wire_req_layer(&lead->job->req, lead->next);
		st = &lead->job->u->stats[lcore % SHARD_MAX_LCORE];
		/* (layers were validated by shard_walk_prepare) */
		bad = ffn_part_range(lead->job->u->model, layer, lead->idx,
				     lead->job->n_parts, &f0, &f1) < 0;
		for (unsigned int i = 0; i < n; i++) {
			struct shard_part *p = parts[i];
			struct shard_job *j = p->job;
			float *y;

			if (p->next >= j->req.n_layers ||
			    j->u != lead->job->u || p->idx != lead->idx ||
			    j->n_parts != lead->job->n_parts ||
			    wire_req_layer(&j->req, p->next) != layer)
				continue;
			y = part_rows(p, p->next);
			p->next++;
			if (bad) {
				__atomic_store_n(&j->error, -EIO,
						 __ATOMIC_RELAXED);
				continue;
			}
			if (f0 == f1) {
				/* fewer 256-feature blocks than parts
				 * (K-quant): this slice's share is 0 */
				memset(y, 0, (size_t)j->req.seq_len *
				       j->hidden * sizeof(float));
				continue;
			}
			for (uint32_t r = 0; r < j->req.seq_len; r++) {
				xr[rows] = j->x + (size_t)r * j->hidden;
				yr[rows] = y + (size_t)r * j->hidden;
				who[rows] = j;
				if (++rows == SHARD_PASS_ROWS) {
					part_pass(j->u, layer, f0, f1, xr, yr,
						  who, rows, s, st);
					rows = 0;
				}
			}
		}
		part_pass(lead->job->u, layer, f0, f1, xr, yr, who, rows, s,
			  st);
	}
	for (unsigned int i = 0; i < n; i++) {
		struct shard_job *j = parts[i]->job;
		struct shard_stats *st = &j->u->stats[lcore % SHARD_MAX_LCORE];

		st->split_parts++;
		/* Release our partial (and error); the last acquires all. */
		if (__atomic_sub_fetch(&j->parts_left, 1,
				       __ATOMIC_ACQ_REL) != 0)
			continue;
		part_finish(j, st, lcore);
		if (done != NULL)
			done[n_done] = j;
		n_done++;
	}
	return n_done;
}

bool
shard_part_run(struct shard_part *part, struct ffn_scratch *s,
	       unsigned int lcore)
{
	return shard_parts_run(&part, 1, s, lcore, NULL) == 1;
}
