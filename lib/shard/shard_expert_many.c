/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The layer-batch and multi-layer expert routes (spec/moe.md §3.2-§3.5,
 * §4, §7), computed together (issue 23, "Batching across requests").
 *
 * Every layer batch of every request given (one per layer-batch call,
 * n per multi-layer call) is a task. The weighted pairs of all tasks are
 * grouped by (layer, expert, input kind); each expert runs once over its
 * rows (in passes of SHARD_MOE_ROWS), and each task's terms are then
 * added in its own list order, so its sum is the one §1 defines (one
 * expert's rows computed together may differ from one row alone in the
 * last bits, as dense rows do: shard.h). A request alone takes the same
 * path: the single-request handlers below are this with n = 1.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"
#include "shard_expert_priv.h"
#include "shard_walk_priv.h"

/* One weighted pair of one task: a row of its expert's group. */
struct moe_row {
	uint32_t layer;
	uint32_t expert;
	uint32_t q8k;		/* input rows in Q8_K (not f32) */
	uint32_t task;		/* index among all tasks */
	uint32_t slot;		/* where its y goes: ys + slot * H */
};

/* One task: a layer batch and where its sum goes. */
struct moe_task {
	struct wire_moe_task t;
	float *h;		/* normed x (f32 inputs), else NULL */
	float *out;		/* its hidden floats of the answer */
	uint32_t first_slot;	/* its pairs' y rows, in list order */
	uint32_t n_pairs;	/* weighted pairs (w != 0) */
};

/* One request: its tasks are all[first .. first + n). */
struct moe_req {
	uint64_t t0;
	bool ok;		/* checked: computed and answered below */
	uint32_t first;
	uint32_t n;
};

static int
row_cmp(const void *a, const void *b)
{
	const struct moe_row *x = a, *y = b;

	if (x->layer != y->layer)
		return x->layer < y->layer ? -1 : 1;
	if (x->expert != y->expert)
		return x->expert < y->expert ? -1 : 1;
	if (x->q8k != y->q8k)
		return x->q8k < y->q8k ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* How many tasks request rq has, after its frame checks (§4 order:
 * the i8 switch, truncation, then the Q8_K block rule); 0 and resp
 * answered on an error (a multi-layer n = 0 is a request of no task). */
static int
count_tasks(struct shard_unit *u, const struct shard_http_req *rq,
	    struct shard_resp *resp, uint32_t *n)
{
	const struct shard_route_def *d = &shard_routes[resp->route];
	struct wire_moe_task t;
	struct wire_error err;

	/* §7: the i8 request route exists only with i8 on, checked first */
	if (d->moe_in == WIRE_MOE_IN_I8 && !u->wire.i8) {
		shard_resp_error(resp, 400,
				 "i8 expert wire is not enabled on this shard");
		return -EINVAL;
	}
	if (d->moe_fam == WIRE_MOE_LAYER) {
		*n = 1;
		if (wire_moe_layer_decode(&t, rq->body, rq->body_len,
					  d->moe_in, &err) < 0)
			goto fail;
		return 0;
	}
	if (wire_moe_multi_check(rq->body, rq->body_len, d->moe_in, n,
				 &err) < 0)
		goto fail;
	return 0;
fail:
	shard_resp_wire_error(resp, &err);
	return -EINVAL;
}

/* Read request rq's tasks into ts (room for its count) and check each
 * (§4: one bad task fails the whole request). 0, or -EINVAL with resp
 * answered. */
static int
read_tasks(struct shard_unit *u, const struct shard_http_req *rq,
	   struct shard_resp *resp, struct moe_task *ts, uint32_t n)
{
	const struct shard_route_def *d = &shard_routes[resp->route];
	struct wire_error err;
	size_t pos = 4;

	for (uint32_t i = 0; i < n; i++) {
		struct wire_moe_task *t = &ts[i].t;

		if (d->moe_fam == WIRE_MOE_LAYER)
			wire_moe_layer_decode(t, rq->body, rq->body_len,
					      d->moe_in, &err);
		else
			wire_moe_multi_next(rq->body, &pos, d->moe_in, t);
		/* §7: on the Q8_K route, hidden must be whole blocks */
		if (t->in == WIRE_MOE_IN_Q8K && t->hidden % 256 != 0) {
			wire_error_set(&err, 400, "q8k activation needs "
				"hidden_size divisible by 256 (got %u)",
				t->hidden);
			goto fail;
		}
		if (shard_moe_task_check(u, t, &err) < 0)
			goto fail;
	}
	return 0;
fail:
	shard_resp_wire_error(resp, &err);
	return -EINVAL;
}

/* The rows of task i (its weighted pairs, from slot on) and its normed
 * input. 0 or -ENOMEM. */
static int
task_rows(struct shard_unit *u, struct moe_task *mt, uint32_t i,
	  struct moe_row *rows)
{
	const struct wire_moe_task *t = &mt->t;
	uint32_t e, at = mt->first_slot;
	float w;

	if (mt->n_pairs == 0)
		return 0;	/* §4: zeros, no expert looked up */
	if (t->in != WIRE_MOE_IN_Q8K) {
		mt->h = malloc((size_t)t->hidden * sizeof(float));
		if (mt->h == NULL)
			return -ENOMEM;
		/* §1: the raw x, normed once per task */
		wire_moe_task_x(t, mt->h);
		ffn_moe_norm(u->moe, t->layer, mt->h, mt->h);
	}
	for (uint32_t k = 0; k < t->k; k++) {
		wire_moe_task_pair(t, k, &e, &w);
		if (w == 0.0f)
			continue;
		rows[at] = (struct moe_row){
			.layer = t->layer, .expert = e,
			.q8k = t->in == WIRE_MOE_IN_Q8K, .task = i,
			.slot = at,
		};
		at++;
	}
	return 0;
}

/* Run every group of rows (sorted): each expert once per pass of up to
 * SHARD_MOE_ROWS rows, inputs gathered. 0 or negative. */
static int
run_groups(struct shard_unit *u, const struct moe_task *ts,
	   const struct moe_row *rows, uint32_t n, float *ys,
	   unsigned int lcore)
{
	struct shard_stats *st = &u->stats[lcore % SHARD_MAX_LCORE];
	struct ffn_moe_scratch *s = shard_moe_scratch(u, lcore);
	uint32_t H = u->moe_hidden, i = 0;
	size_t fb = (size_t)H * sizeof(float);
	size_t qb = wire_moe_in_bytes(WIRE_MOE_IN_Q8K, H);
	size_t ib = fb > qb ? fb : qb;
	uint8_t *in;
	float *yb;
	int rc = 0;

	if (s == NULL)
		return -ENOMEM;
	in = malloc(SHARD_MOE_ROWS * ib);
	yb = malloc(SHARD_MOE_ROWS * fb);
	if (in == NULL || yb == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	while (i < n) {
		const struct moe_row *g = &rows[i];
		uint32_t R = 0;

		/* one pass: rows of one (layer, expert, kind), gathered */
		while (i + R < n && R < SHARD_MOE_ROWS &&
		       rows[i + R].layer == g->layer &&
		       rows[i + R].expert == g->expert &&
		       rows[i + R].q8k == g->q8k) {
			const struct moe_task *mt = &ts[rows[i + R].task];

			if (g->q8k)
				memcpy(in + R * qb, mt->t.x, qb);
			else
				memcpy(in + R * fb, mt->h, fb);
			R++;
		}
		rc = g->q8k ?
		     ffn_moe_expert_q8k(u->moe, g->layer, g->expert, in, R,
					yb, s) :
		     ffn_moe_expert(u->moe, g->layer, g->expert,
				    (const float *)(void *)in, R, yb, s);
		if (rc < 0)
			goto out;
		for (uint32_t r = 0; r < R; r++)
			memcpy(ys + (size_t)rows[i + r].slot * H,
			       yb + (size_t)r * H, fb);
		shard_count_expert_run(st, R);
		i += R;
	}
out:
	free(in);
	free(yb);
	return rc;
}

/* Every task's sum, in its list order (§1). */
static void
sums(struct moe_task *ts, uint32_t n, const float *ys, uint32_t H)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct wire_moe_task *t = &ts[i].t;
		uint32_t slot = ts[i].first_slot, e;
		float w;

		memset(ts[i].out, 0, (size_t)t->hidden * sizeof(float));
		for (uint32_t k = 0; ts[i].n_pairs && k < t->k; k++) {
			wire_moe_task_pair(t, k, &e, &w);
			if (w != 0.0f)
				ffn_moe_add(ts[i].out, w,
					    ys + (size_t)slot++ * H, H);
		}
	}
}

/* A computed request's answer (§3.2-§3.5, §7): the format negotiated
 * (and guarded) over all its vectors, then its frame. */
static void
answer(struct shard_unit *u, const struct shard_http_req *rq,
       struct shard_resp *resp, const struct moe_req *r,
       const struct moe_task *ts, unsigned int lcore)
{
	const struct shard_route_def *d = &shard_routes[resp->route];
	const float **v = malloc(((size_t)r->n + 1) * sizeof(*v));
	uint32_t *hid = malloc(((size_t)r->n + 1) * sizeof(*hid));
	bool layer = d->moe_fam == WIRE_MOE_LAYER;
	float ms = (float)shard_moe_ms_since(r->t0);
	enum wire_fmt fmt;
	size_t len, at;
	uint8_t *body = NULL;

	if (v == NULL || hid == NULL)
		goto nomem;
	for (uint32_t i = 0; i < r->n; i++) {
		v[i] = ts[r->first + i].out;
		hid[i] = ts[r->first + i].t.hidden;
	}
	fmt = shard_moe_answer_format(u, rq, d->moe_fam, d->moe_own, v, hid,
				      r->n, lcore);
	len = layer ? WIRE_MOE_LAYER_HDR : 4;
	for (uint32_t i = 0; i < r->n; i++)
		len += (layer ? 0 : 8) + wire_moe_vec_bytes(fmt, hid[i]);
	body = malloc(len);
	if (body == NULL)
		goto nomem;
	if (layer) {
		/* [hidden][latency_ms][vector] */
		wire_moe_layer_resp_hdr(body, hid[0], ms);
		wire_moe_vec_encode(fmt, v[0], hid[0],
				    body + WIRE_MOE_LAYER_HDR);
	} else {
		/* [n] then per task [layer][hidden][vector]; no latency */
		wire_moe_multi_resp_count(body, r->n);
		at = 4;
		for (uint32_t i = 0; i < r->n; i++) {
			wire_moe_multi_resp_task(body + at,
						 ts[r->first + i].t.layer,
						 hid[i]);
			wire_moe_vec_encode(fmt, v[i], hid[i], body + at + 8);
			at += 8 + wire_moe_vec_bytes(fmt, hid[i]);
		}
	}
	shard_resp_heap(resp, wire_moe_content_type(d->moe_fam, fmt),
			(char *)body, len);
	shard_count_latency(&u->stats[lcore % SHARD_MAX_LCORE], ms);
	goto out;
nomem:
	shard_resp_error(resp, 503, "out of memory");
out:
	free(v);
	free(hid);
}

/* Check every request and gather its tasks: *all (malloc) and *n_all;
 * requests that fail are answered. 0 or -ENOMEM. */
static int
gather(struct shard_unit *u, const struct shard_http_req *const *rq,
       struct shard_resp *const *resp, unsigned int n, struct moe_req *rs,
       struct moe_task **all, uint32_t *n_all)
{
	size_t total = 0, at = 0;
	uint32_t cnt;

	/* counts first: a multi-layer n is bounded by its body (12 bytes
	 * a task at least), so the sum is too */
	for (unsigned int i = 0; i < n; i++) {
		/* §2: from the body's arrival, queue waits included */
		rs[i].t0 = rq[i]->t_body_ns ? rq[i]->t_body_ns :
			   shard_now_ns();
		if (count_tasks(u, rq[i], resp[i], &cnt) == 0) {
			rs[i].ok = true;
			rs[i].n = cnt;
			total += cnt;
		}
	}
	*all = calloc(total + 1, sizeof(**all));
	if (*all == NULL)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++) {
		if (!rs[i].ok)
			continue;
		rs[i].first = at;
		if (read_tasks(u, rq[i], resp[i], *all + at, rs[i].n) < 0) {
			rs[i].ok = false;
			continue;	/* its slots are overwritten */
		}
		at += rs[i].n;
	}
	*n_all = at;
	return 0;
}

/*
 * Count every task's weighted pairs (the rows it computes: one y of H
 * floats each, held until its sum). A request whose rows need more than
 * the shard's response limit is answered 413 and dropped (spec/wire.md
 * §4, last paragraph: no request makes the shard allocate without
 * bound; a few bytes of wire per pair would otherwise ask for 4 H).
 * Returns whether the remaining requests' rows fit together.
 */
static bool
rows_fit(struct shard_unit *u, struct shard_resp *const *resp,
	 struct moe_req *rs, struct moe_task *all, unsigned int n,
	 uint32_t H)
{
	uint64_t total = 0;

	for (unsigned int i = 0; i < n; i++) {
		uint64_t rows = 0;
		uint32_t e;
		float w;

		if (!rs[i].ok)
			continue;
		for (uint32_t j = rs[i].first; j < rs[i].first + rs[i].n;
		     j++) {
			const struct wire_moe_task *t = &all[j].t;

			all[j].n_pairs = 0;
			for (uint32_t k = 0; t->hidden && k < t->k; k++) {
				wire_moe_task_pair(t, k, &e, &w);
				all[j].n_pairs += w != 0.0f;
			}
			rows += all[j].n_pairs + 1;	/* + its output */
		}
		if (rows * H * sizeof(float) > u->max_response) {
			shard_resp_too_large(resp[i], u, "%llu expert rows x "
					     "%u values",
					     (unsigned long long)rows, H);
			rs[i].ok = false;
			/* its tasks stay in the list: computed as nothing */
			for (uint32_t j = rs[i].first;
			     j < rs[i].first + rs[i].n; j++) {
				all[j].n_pairs = 0;
				all[j].t.hidden = 0;
			}
			continue;
		}
		total += rows;
	}
	return total * H * sizeof(float) <= u->max_response;
}

void
shard_experts_many(struct shard_unit *u,
		    const struct shard_http_req *const *rq,
		    struct shard_resp *const *resp, unsigned int n,
		    const struct shard_ctx *ctx)
{
	uint32_t H = u->moe_hidden ? u->moe_hidden : u->facts.hidden;
	uint32_t n_all = 0, n_rows = 0;
	struct moe_req *rs = calloc(n ? n : 1, sizeof(*rs));
	struct moe_task *all = NULL;
	struct moe_row *rows = NULL;
	float *ys = NULL, *outs = NULL;
	int rc = -ENOMEM;

	if (rs == NULL || gather(u, rq, resp, n, rs, &all, &n_all) < 0)
		goto fail;
	/* every task's weighted pairs; a request whose rows alone would
	 * exceed the shard's response limit is refused, a batch whose rows
	 * together would is computed one request at a time */
	if (!rows_fit(u, resp, rs, all, n, H)) {
		rc = 0;
		for (unsigned int i = 0; i < n; i++)
			if (rs[i].ok)
				shard_experts_many(u, &rq[i], &resp[i], 1,
						   ctx);
		for (unsigned int i = 0; i < n; i++)
			rs[i].ok = false;	/* answered above */
		goto fail;
	}
	outs = malloc(((size_t)n_all * H + 1) * sizeof(float));
	if (outs == NULL)
		goto fail;
	for (uint32_t i = 0; i < n_all; i++) {
		all[i].out = outs + (size_t)i * H;
		all[i].first_slot = n_rows;
		n_rows += all[i].n_pairs;
	}
	rows = malloc(((size_t)n_rows + 1) * sizeof(*rows));
	ys = malloc(((size_t)n_rows * H + 1) * sizeof(float));
	if (rows == NULL || ys == NULL)
		goto fail;
	for (uint32_t i = 0; i < n_all; i++)
		if (task_rows(u, &all[i], i, rows) < 0)
			goto fail;
	qsort(rows, n_rows, sizeof(*rows), row_cmp);
	rc = n_rows ? run_groups(u, all, rows, n_rows, ys, ctx->lcore) : 0;
	if (rc < 0)
		goto fail;
	sums(all, n_all, ys, H);
	for (unsigned int i = 0; i < n; i++)
		if (rs[i].ok)
			answer(u, rq[i], resp[i], &rs[i], all, ctx->lcore);
	rc = 0;
fail:
	for (unsigned int i = 0; rs != NULL && i < n; i++) {
		if (rc < 0 && rs[i].ok) {
			shard_resp_release(resp[i]);
			shard_resp_error(resp[i], rc == -ENOMEM ? 503 : 500,
					 rc == -ENOMEM ? "out of memory" :
					 "expert compute failed");
		}
	}
	if (rs == NULL)
		for (unsigned int i = 0; i < n; i++)
			shard_resp_error(resp[i], 503, "out of memory");
	for (uint32_t i = 0; all != NULL && i < n_all; i++)
		free(all[i].h);
	free(outs);
	free(ys);
	free(rows);
	free(all);
	free(rs);
}

/* One request: the batched path with one request, so a request alone
 * and in a batch are the same code. */
void
shard_experts_one(struct shard_unit *u, const struct shard_http_req *rq,
		  struct shard_resp *resp, const struct shard_ctx *ctx)
{
	shard_experts_many(u, &rq, &resp, 1, ctx);
}
