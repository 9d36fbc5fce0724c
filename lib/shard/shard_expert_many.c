/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Layer-batch requests computed together (issue 23, "Batching across
 * requests"): concurrent calls for the same layer share expert reads.
 * The rows of every request are grouped by (layer, expert); each expert
 * runs once over its rows (in passes of the scratch's rows), and each
 * request's weighted terms are then added in its own list order, so its
 * sum is the one spec/moe.md §1 defines (an expert's rows computed
 * together may differ from one row alone in the last bits, as for dense
 * rows: shard.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"
#include "shard_expert_priv.h"
#include "shard_walk_priv.h"

/* One weighted pair of one request: a row of its expert's group. */
struct moe_row {
	uint32_t layer;
	uint32_t expert;
	uint32_t req;		/* index among the requests */
	uint32_t slot;		/* where its y goes: ys + slot * H */
};

/* One request's state between its check and its answer. */
struct moe_req {
	struct wire_moe_task t;
	uint64_t t0;
	float *h;		/* normed x (H floats) */
	uint32_t first_slot;	/* its pairs' y rows, in list order */
	bool ok;		/* checked: computed and answered below */
};

static int
row_cmp(const void *a, const void *b)
{
	const struct moe_row *x = a, *y = b;

	if (x->layer != y->layer)
		return x->layer < y->layer ? -1 : 1;
	if (x->expert != y->expert)
		return x->expert < y->expert ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* Check request i, or answer it with its error; its pairs' count. */
static uint32_t
take(struct shard_unit *u, const struct shard_http_req *rq,
     struct shard_resp *resp, struct moe_req *r)
{
	const struct shard_route_def *d = &shard_routes[resp->route];
	struct wire_error err;
	uint32_t n = 0, e;
	float w;

	r->t0 = shard_now_ns();
	if (d->moe_in == WIRE_MOE_IN_I8 && !u->wire.i8) {
		shard_resp_error(resp, 400,
				 "i8 expert wire is not enabled on this shard");
		return 0;
	}
	if (wire_moe_layer_decode(&r->t, rq->body, rq->body_len, d->moe_in,
				  &err) < 0 ||
	    shard_moe_task_check(u, &r->t, &err) < 0) {
		shard_resp_wire_error(resp, &err);
		return 0;
	}
	r->ok = true;
	if (r->t.hidden == 0)
		return 0;
	for (uint32_t k = 0; k < r->t.k; k++) {
		wire_moe_task_pair(&r->t, k, &e, &w);
		n += w != 0.0f;
	}
	return n;
}

/* The answer of a computed request (out: its H floats), as
 * shard_expert_layer() frames it. */
static void
answer(struct shard_unit *u, const struct shard_http_req *rq,
       struct shard_resp *resp, const struct moe_req *r, const float *out,
       unsigned int lcore)
{
	const struct shard_route_def *d = &shard_routes[resp->route];
	float ms = (float)shard_moe_ms_since(r->t0);
	enum wire_fmt fmt;
	uint8_t *body;
	size_t len;

	fmt = shard_moe_answer_format(u, rq, d->moe_fam, d->moe_own, &out,
				      &r->t.hidden, 1, lcore);
	len = WIRE_MOE_LAYER_HDR + wire_moe_vec_bytes(fmt, r->t.hidden);
	body = malloc(len);
	if (body == NULL) {
		shard_resp_error(resp, 503, "out of memory");
		return;
	}
	wire_moe_layer_resp_hdr(body, r->t.hidden, ms);
	wire_moe_vec_encode(fmt, out, r->t.hidden, body + WIRE_MOE_LAYER_HDR);
	shard_resp_heap(resp, wire_moe_content_type(d->moe_fam, fmt),
			(char *)body, len);
	shard_count_latency(&u->stats[lcore % SHARD_MAX_LCORE], ms);
}

/* Run every group of rows (sorted by layer, expert): each expert once
 * per pass of up to the scratch's rows. 0 or negative. */
static int
run_groups(struct shard_unit *u, const struct moe_req *rs,
	   const struct moe_row *rows, uint32_t n, float *ys,
	   unsigned int lcore)
{
	struct shard_stats *st = &u->stats[lcore % SHARD_MAX_LCORE];
	struct ffn_moe_scratch *s = shard_moe_scratch(u, lcore);
	uint32_t H = u->moe_hidden, i = 0;
	float *hb, *yb;
	int rc = 0;

	if (s == NULL)
		return -ENOMEM;
	hb = malloc((size_t)SHARD_MOE_ROWS * H * sizeof(float));
	yb = malloc((size_t)SHARD_MOE_ROWS * H * sizeof(float));
	if (hb == NULL || yb == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	while (i < n) {
		uint32_t R = 0;

		/* one pass: rows of one (layer, expert), gathered */
		while (i + R < n && R < SHARD_MOE_ROWS &&
		       rows[i + R].layer == rows[i].layer &&
		       rows[i + R].expert == rows[i].expert) {
			memcpy(hb + (size_t)R * H, rs[rows[i + R].req].h,
			       (size_t)H * sizeof(float));
			R++;
		}
		rc = ffn_moe_expert(u->moe, rows[i].layer, rows[i].expert, hb,
				    R, yb, s);
		if (rc < 0)
			goto out;
		for (uint32_t r = 0; r < R; r++)
			memcpy(ys + (size_t)rows[i + r].slot * H,
			       yb + (size_t)r * H, (size_t)H * sizeof(float));
		st->expert_rows += R;
		st->expert_runs++;
		i += R;
	}
out:
	free(hb);
	free(yb);
	return rc;
}

void
shard_expert_layers(struct shard_unit *u,
		    const struct shard_http_req *const *rq,
		    struct shard_resp *const *resp, unsigned int n,
		    const struct shard_ctx *ctx)
{
	uint32_t H = u->moe_hidden, n_rows = 0, at = 0;
	struct moe_req *rs = calloc(n ? n : 1, sizeof(*rs));
	struct moe_row *rows = NULL;
	float *ys = NULL, *out = NULL;
	int rc = -ENOMEM;

	if (rs == NULL)
		goto fail;
	for (unsigned int i = 0; i < n; i++) {
		rs[i].first_slot = n_rows;
		n_rows += take(u, rq[i], resp[i], &rs[i]);
	}
	rows = malloc(((size_t)n_rows + 1) * sizeof(*rows));
	ys = malloc(((size_t)n_rows * H + 1) * sizeof(float));
	out = malloc(((size_t)H + 1) * sizeof(float));
	if (rows == NULL || ys == NULL || out == NULL)
		goto fail;
	/* the normed inputs, and one row per weighted pair */
	for (unsigned int i = 0; i < n; i++) {
		struct moe_req *r = &rs[i];
		uint32_t e;
		float w;

		if (!r->ok || r->t.hidden == 0 ||
		    r->first_slot == (i + 1 < n ? rs[i + 1].first_slot :
				      n_rows))
			continue;	/* no term: zeros, no expert */
		r->h = malloc((size_t)H * sizeof(float));
		if (r->h == NULL)
			goto fail;
		wire_moe_task_x(&r->t, r->h);
		ffn_moe_norm(u->moe, r->t.layer, r->h, r->h);
		for (uint32_t k = 0; k < r->t.k; k++) {
			wire_moe_task_pair(&r->t, k, &e, &w);
			if (w == 0.0f)
				continue;
			rows[at] = (struct moe_row){ r->t.layer, e, i, at };
			at++;
		}
	}
	qsort(rows, n_rows, sizeof(*rows), row_cmp);
	rc = run_groups(u, rs, rows, n_rows, ys, ctx->lcore);
	if (rc < 0)
		goto fail;
	/* each request's terms, in its list order (§1) */
	for (unsigned int i = 0; i < n; i++) {
		struct moe_req *r = &rs[i];
		uint32_t slot = r->first_slot, e;
		float w;

		if (!r->ok)
			continue;
		memset(out, 0, (size_t)r->t.hidden * sizeof(float));
		for (uint32_t k = 0; r->h != NULL && k < r->t.k; k++) {
			wire_moe_task_pair(&r->t, k, &e, &w);
			if (w != 0.0f)
				ffn_moe_add(out, w, ys + (size_t)slot++ * H,
					    H);
		}
		answer(u, rq[i], resp[i], r, out, ctx->lcore);
	}
	rc = 0;
fail:
	for (unsigned int i = 0; rs != NULL && i < n; i++) {
		if (rc < 0 && rs[i].ok) {
			shard_resp_release(resp[i]);
			shard_resp_error(resp[i], rc == -ENOMEM ? 503 : 500,
					 rc == -ENOMEM ? "out of memory" :
					 "expert compute failed");
		}
		free(rs[i].h);
	}
	if (rs == NULL)
		for (unsigned int i = 0; i < n; i++)
			shard_resp_error(resp[i], 503, "out of memory");
	free(out);
	free(ys);
	free(rows);
	free(rs);
}
