/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The walk-ffn JSON path (spec/wire.md §6) and the Q8_K input route
 * (walk-ffn-q8k, issue 6): bodies the server runs whole, on a worker.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"
#include "shard_walk_priv.h"

/* The response limit of a JSON request (the binary path's bound, in
 * shard_walk_prepare): full output is nl layers of seq_len x H f32;
 * features mode nl gate passes of k (u32 id, f32 score) pairs, and a
 * feature-less pass (top_k 0) still costs one. */
static int
json_limit(const struct shard_unit *u, const struct wire_json_req *jr,
	   size_t nl, struct shard_resp *resp)
{
	uint64_t H = u->facts.hidden;
	uint64_t mf = ffn_model_info(u->model)->max_features;
	uint64_t k = jr->top_k < mf ? jr->top_k : mf;

	if (jr->full_output) {
		if (jr->seq_len * H != 0 &&
		    nl > u->max_response / (jr->seq_len * H * sizeof(float))) {
			shard_resp_too_large(resp, u, "%zu layers x %llu values",
					     nl, (unsigned long long)
					     (jr->seq_len * H));
			return -1;
		}
		return 0;
	}
	if (nl > u->max_response / ((k ? k : 1) * 8)) {
		shard_resp_too_large(resp, u, "%zu layers x %llu features", nl,
				     (unsigned long long)k);
		return -1;
	}
	return 0;
}

/* Full output: every layer's seq_len x H rows, as JSON arrays. */
static int
json_full(struct shard_unit *u, const struct wire_json_req *jr, size_t nl,
	  const struct shard_ctx *ctx, uint64_t t0, char **body, size_t *blen)
{
	struct shard_stats *st = &u->stats[ctx->lcore % SHARD_MAX_LCORE];
	size_t H = u->facts.hidden, nv = (size_t)jr->seq_len * H;
	uint64_t *layers = calloc(nl ? nl : 1, sizeof(*layers));
	float **outs = calloc(nl ? nl : 1, sizeof(*outs));
	float *all = malloc((nl ? nl : 1) * (nv ? nv : 1) * sizeof(float));
	int rc = (layers && outs && all) ? 0 : -ENOMEM;

	for (size_t i = 0; rc == 0 && i < nl; i++) {
		uint64_t tl = shard_now_ns();

		layers[i] = wire_json_req_layer(jr, i);
		outs[i] = all + i * nv;
		rc = ffn_compute_strided(u->model, (unsigned)layers[i],
					 jr->residual, H, outs[i], H,
					 (unsigned)jr->seq_len, ctx->scratch);
		if (rc == 0)
			shard_count_layer(u, ctx->lcore, (uint32_t)layers[i],
					  shard_now_ns() - tl, 1);
		st->layers_computed++;
		st->rows_computed += jr->seq_len;
	}
	if (rc == 0)
		rc = wire_json_full_output(layers, (const float *const *)outs,
					   nl, jr->seq_len, nv,
					   (double)(shard_now_ns() - t0) / 1e6,
					   body, blen);
	free(layers);
	free(outs);
	free(all);
	return rc;
}

/* Features mode: each layer's top-k gate activations. */
static int
json_features(struct shard_unit *u, const struct wire_json_req *jr,
	      size_t nl, const struct shard_ctx *ctx, uint64_t t0,
	      char **body, size_t *blen)
{
	const struct ffn_info *fi = ffn_model_info(u->model);
	unsigned int k = jr->top_k < fi->max_features ?
			 (unsigned int)jr->top_k : fi->max_features;
	struct wire_features *res = calloc(nl ? nl : 1, sizeof(*res));
	uint32_t *ids = malloc((nl ? nl : 1) * (k ? k : 1) * 4);
	float *scores = malloc((nl ? nl : 1) * (k ? k : 1) * 4);
	int rc = (res && ids && scores) ? 0 : -ENOMEM;

	for (size_t i = 0; rc == 0 && i < nl; i++) {
		int got;

		res[i].layer = wire_json_req_layer(jr, i);
		res[i].ids = ids + i * k;
		res[i].scores = scores + i * k;
		got = ffn_features(u->model, (unsigned)res[i].layer,
				   jr->residual, k, ids + i * k,
				   scores + i * k, ctx->scratch);
		if (got < 0)
			rc = got;
		else
			res[i].k = (size_t)got;
	}
	if (rc == 0)
		rc = wire_json_features(res, nl,
					(double)(shard_now_ns() - t0) / 1e6,
					body, blen);
	free(res);
	free(ids);
	free(scores);
	return rc;
}

void
shard_walk_json(struct shard_unit *u, const struct shard_http_req *rq,
		struct shard_resp *resp, const struct shard_ctx *ctx)
{
	struct shard_stats *st = &u->stats[ctx->lcore % SHARD_MAX_LCORE];
	struct wire_json_req jr;
	struct wire_error we;
	char *body = NULL;
	size_t nl, blen = 0;
	uint64_t t0;
	int rc;

	st->walk_in[WIRE_FMT_JSON]++;
	if (wire_json_req_parse(&jr, (const char *)rq->body, rq->body_len,
				&we) < 0) {
		shard_resp_wire_error(resp, &we);
		return;
	}
	if (wire_json_req_validate(&jr, &u->facts, &we) < 0) {
		shard_resp_wire_error(resp, &we);
		wire_json_req_free(&jr);
		return;
	}
	nl = wire_json_req_n_layers(&jr);
	if (json_limit(u, &jr, nl, resp) < 0) {
		wire_json_req_free(&jr);
		return;
	}
	t0 = shard_now_ns();
	rc = jr.full_output ? json_full(u, &jr, nl, ctx, t0, &body, &blen) :
	     json_features(u, &jr, nl, ctx, t0, &body, &blen);
	wire_json_req_free(&jr);
	if (rc < 0) {
		shard_resp_error(resp, 500, rc == -ENOMEM ?
				 "out of memory" : "FFN compute failed");
		return;
	}
	shard_count_latency(st, (double)(shard_now_ns() - t0) / 1e6);
	shard_resp_heap(resp, wire_fmt_content_type(WIRE_FMT_JSON), body,
			blen);
	resp->fmt_out = WIRE_FMT_JSON;
}

/* K-quant layers dot the Q8_K rows with integer instructions; dense
 * layers take them dequantised (x = d * q): both shards serve it. */
void
shard_walk_q8k(struct shard_unit *u, const struct shard_http_req *rq,
	       struct shard_resp *resp, const struct shard_ctx *ctx)
{
	const struct shard_mem *mem = ctx->mem;
	uint32_t n = 0, H = u->facts.hidden;
	struct wire_error we;
	size_t size, pos = 4;
	uint8_t *buf;
	uint64_t t0;

	if (wire_q8k_validate(rq->body, rq->body_len, &u->facts, &n,
			      &we) < 0) {
		shard_resp_wire_error(resp, &we);
		return;
	}
	size = wire_q8k_resp_size(n, H);
	if (size == 0 || size > u->max_response) {
		shard_resp_too_large(resp, u, "%u entries", n);
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
		uint64_t tl = shard_now_ns();

		if (ffn_compute_q8k(u->model, e.layer, e.qs, &y, 1,
				    ctx->scratch) < 0) {
			mem->free(mem->arg, buf);
			shard_resp_error(resp, 500, "FFN compute failed");
			return;
		}
		shard_count_layer(u, ctx->lcore, e.layer,
				  shard_now_ns() - tl, 1);
		wire_q8k_resp_entry(buf, n, i, e.layer, H);
	}
	shard_count_latency(&u->stats[ctx->lcore % SHARD_MAX_LCORE],
			    (double)(shard_now_ns() - t0) / 1e6);
	/* A body in job memory, which the response owns from here. */
	shard_resp_one(resp, WIRE_Q8K_CONTENT_TYPE, buf, size);
	resp->mem = buf;
	resp->mem_ops = mem;
}
