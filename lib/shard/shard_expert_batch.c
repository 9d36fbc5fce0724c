/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The per-expert routes (spec/moe.md §2): POST /v1/expert/{layer}/{id}
 * (JSON), POST /v1/expert/batch (binary §3.1 or JSON), and
 * GET /v1/expert/topology, with §4's checks in its order.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shard.h"
#include "shard_expert_priv.h"
#include "shard_walk_priv.h"

#define EXPERT_PREFIX "/v1/expert/"
#define EXPERT_PREFIX_LEN (sizeof(EXPERT_PREFIX) - 1)

bool
shard_expert_path(const char *path, size_t len)
{
	const char *s = path + EXPERT_PREFIX_LEN, *slash;
	size_t rest;

	if (len <= EXPERT_PREFIX_LEN ||
	    memcmp(path, EXPERT_PREFIX, EXPERT_PREFIX_LEN) != 0)
		return false;
	/* {layer}/{expert_id}: two non-empty segments, nothing more
	 * (axum's matcher: "/v1/expert/5" and ".../1/2/3" are 404) */
	rest = len - EXPERT_PREFIX_LEN;
	slash = memchr(s, '/', rest);
	if (slash == NULL || slash == s || slash == s + rest - 1)
		return false;
	return memchr(slash + 1, '/', s + rest - slash - 1) == NULL;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One path segment, percent-decoded into out (NUL-terminated, cut to
 * cap), then read as Rust's u64::from_str does ("+" allowed). */
static bool
segment_u64(const char *s, size_t n, char *out, size_t cap, uint64_t *v)
{
	size_t o = 0, i;
	const char *d;
	uint64_t x = 0;

	for (i = 0; i < n && o + 1 < cap; i++) {
		if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 &&
		    hexval(s[i + 2]) >= 0) {
			out[o++] = (char)(hexval(s[i + 1]) * 16 +
					  hexval(s[i + 2]));
			i += 2;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	d = out + (out[0] == '+');
	if (*d == '\0' || i < n)
		return false;
	for (; *d; d++) {
		if (*d < '0' || *d > '9' ||
		    x > (UINT64_MAX - (uint64_t)(*d - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(*d - '0');
	}
	*v = x;
	return true;
}

/* §2: the single route takes application/json (parameters allowed) or
 * any application/...+json, as axum's Json extractor. */
static bool
json_content_type(const char *ct, size_t len)
{
	size_t n = 0;

	if (ct == NULL)
		return false;
	while (n < len && ct[n] != ';' && ct[n] != ' ' && ct[n] != '\t')
		n++;
	if (n < 12 || strncasecmp(ct, "application/", 12) != 0)
		return false;
	if (n == 16 && strncasecmp(ct + 12, "json", 4) == 0)
		return true;
	return n > 17 && strncasecmp(ct + n - 5, "+json", 5) == 0;
}

/*
 * §4, the single route's rows from "no model loaded" on (the batch route
 * runs them per item): ownership, hybrid, residual length, weights.
 */
static int
item_check(const struct shard_unit *u, uint64_t layer, uint64_t e,
	   size_t n_residual, struct wire_error *err)
{
	bool fits = layer <= UINT32_MAX && e <= UINT32_MAX;

	if (!shard_moe_loaded(u))
		return wire_error_set(err, 404, "no model loaded");
	if (u->own.kind == FFN_MOE_OWN_UNITS &&
	    !(fits && ffn_moe_own_has(&u->own, layer, e)))
		return wire_error_set(err, 400, "(layer=%" PRIu64 ", expert=%"
			PRIu64 ") not owned by this shard (--units manifest "
			"defines its ownership set)", layer, e);
	if (u->own.kind == FFN_MOE_OWN_RANGE &&
	    !(fits && ffn_moe_own_has(&u->own, layer, e)))
		return wire_error_set(err, 400, "expert %" PRIu64 " not owned "
			"by this shard (owns %u\u2013%u)", e, u->own.first,
			u->own.last);
	if (!u->moe_hybrid)
		return wire_error_set(err, 400, "model is not a hybrid MoE "
			"\u2014 no expert endpoints available");
	if (n_residual != u->moe_hidden)
		return wire_error_set(err, 400, "residual length %zu != "
			"hidden_size %u", n_residual, u->moe_hidden);
	if (!(fits && shard_moe_held(u, layer, e)))
		return wire_error_set(err, 400, "per-layer entry missing for "
			"layer %" PRIu64 " expert %" PRIu64, layer, e);
	return 0;
}

void
shard_expert_single(struct shard_unit *u, const struct shard_http_req *rq,
		    struct shard_resp *resp, const struct shard_ctx *ctx)
{
	uint64_t t0, v[2];
	const char *s = rq->path + EXPERT_PREFIX_LEN;
	size_t rest = rq->path_len - EXPERT_PREFIX_LEN;
	const char *slash = memchr(s, '/', rest);
	const char *seg[2] = { s, slash + 1 };
	size_t seg_len[2] = { (size_t)(slash - s),
			      (size_t)(s + rest - slash - 1) };
	struct wire_error err;
	float *x = NULL, *y = NULL;
	char *body;
	size_t n, len;

	for (int i = 0; i < 2; i++) {
		char text[128], msg[256];

		if (segment_u64(seg[i], seg_len[i], text, sizeof(text), &v[i]))
			continue;
		snprintf(msg, sizeof(msg), "Invalid URL: Cannot parse value "
			 "at index %d with value `%s` to a `u64`", i, text);
		shard_resp_text(resp, 400, msg);
		return;
	}
	if (!json_content_type(rq->content_type, rq->content_type_len)) {
		shard_resp_text(resp, 415, "Expected request with "
				"`Content-Type: application/json`");
		return;
	}
	/* §2: parsed is where its latency starts */
	if (wire_moe_json_single((const char *)rq->body, rq->body_len, &x, &n,
				 &err) < 0 ||
	    item_check(u, v[0], v[1], n, &err) < 0) {
		free(x);
		shard_resp_wire_error(resp, &err);
		return;
	}
	t0 = shard_now_ns();
	y = malloc(((size_t)u->moe_hidden + 1) * sizeof(float));
	if (y == NULL ||
	    shard_moe_one(u, (uint32_t)v[0], (uint32_t)v[1], x, y,
			  ctx->lcore) < 0 ||
	    wire_moe_json_single_resp(y, u->moe_hidden,
				      shard_moe_ms_since(t0), &body,
				      &len) < 0) {
		shard_resp_error(resp, 500, "expert compute failed");
	} else {
		shard_resp_heap(resp, "application/json", body, len);
	}
	free(x);
	free(y);
}

/* The binary batch (§3.1): check every item, then compute into the
 * answer in place. */
static void
batch_binary(struct shard_unit *u, const struct shard_http_req *rq,
	     struct shard_resp *resp, unsigned int lcore, uint64_t t0)
{
	struct wire_moe_item it;
	struct wire_error err;
	uint32_t n, hidden, out_h;
	uint8_t *body;
	float *x;
	size_t len;

	if (wire_moe_batch_check(rq->body, rq->body_len, &n, &hidden,
				 &err) < 0) {
		shard_resp_wire_error(resp, &err);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		wire_moe_batch_item(rq->body, hidden, i, &it);
		if (item_check(u, it.layer, it.expert, hidden, &err) < 0) {
			shard_resp_wire_error(resp, &err);
			return;
		}
	}
	out_h = n ? hidden : 0;
	len = wire_moe_batch_resp_size(n, out_h);
	x = malloc(((size_t)hidden + 1) * sizeof(float));
	body = len ? malloc(len) : NULL;
	if (x == NULL || body == NULL) {
		free(x);
		free(body);
		shard_resp_error(resp, 503, "out of memory");
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		float *y;

		wire_moe_batch_item(rq->body, hidden, i, &it);
		memcpy(x, it.x, (size_t)hidden * sizeof(float));
		y = wire_moe_batch_resp_item(body, out_h, i, it.layer,
					     it.expert);
		if (shard_moe_one(u, it.layer, it.expert, x, y, lcore) < 0) {
			free(x);
			free(body);
			shard_resp_error(resp, 500, "expert compute failed");
			return;
		}
	}
	free(x);
	wire_moe_batch_resp_hdr(body, n, out_h,
				(float)shard_moe_ms_since(t0));
	shard_resp_heap(resp, "application/x-larql-expert", (char *)body,
			len);
}

static void
batch_json(struct shard_unit *u, const struct shard_http_req *rq,
	   struct shard_resp *resp, unsigned int lcore, uint64_t t0)
{
	struct wire_moe_json_item *it = NULL;
	struct wire_error err;
	uint64_t *lay = NULL, *exp = NULL;
	const float **outs = NULL;
	float *y = NULL;
	size_t n = 0, len;
	char *body;

	if (wire_moe_json_batch((const char *)rq->body, rq->body_len, &it, &n,
				&err) < 0) {
		shard_resp_wire_error(resp, &err);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (item_check(u, it[i].layer, it[i].expert, it[i].n,
			       &err) < 0) {
			shard_resp_wire_error(resp, &err);
			free(it);
			return;
		}
	lay = malloc((n + 1) * sizeof(*lay));
	exp = malloc((n + 1) * sizeof(*exp));
	outs = malloc((n + 1) * sizeof(*outs));
	y = malloc((n * u->moe_hidden + 1) * sizeof(float));
	if (lay == NULL || exp == NULL || outs == NULL || y == NULL) {
		shard_resp_error(resp, 503, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		float *yi = y + i * u->moe_hidden;

		lay[i] = it[i].layer;
		exp[i] = it[i].expert;
		outs[i] = yi;
		if (shard_moe_one(u, (uint32_t)it[i].layer,
				  (uint32_t)it[i].expert, it[i].residual, yi,
				  lcore) < 0) {
			shard_resp_error(resp, 500, "expert compute failed");
			goto out;
		}
	}
	if (wire_moe_json_batch_resp(lay, exp, outs, n, n ? u->moe_hidden : 0,
				     (float)shard_moe_ms_since(t0), &body,
				     &len) < 0)
		shard_resp_error(resp, 500, "out of memory");
	else
		shard_resp_heap(resp, "application/json", body, len);
out:
	free(y);
	free(outs);
	free(exp);
	free(lay);
	free(it);
}

void
shard_expert_batch(struct shard_unit *u, const struct shard_http_req *rq,
		   struct shard_resp *resp, const struct shard_ctx *ctx)
{
	static const char bin[] = "application/x-larql-expert";
	/* §2: from the body's arrival, queue waits included */
	uint64_t t0 = rq->t_body_ns ? rq->t_body_ns : shard_now_ns();

	/* §2: binary when Content-Type contains the type (case-sensitive;
	 * ...-experts-layer contains it too), JSON otherwise */
	if (rq->content_type != NULL &&
	    memmem(rq->content_type, rq->content_type_len, bin,
		   sizeof(bin) - 1) != NULL)
		batch_binary(u, rq, resp, ctx->lcore, t0);
	else
		batch_json(u, rq, resp, ctx->lcore, t0);
}

void
shard_expert_topology(struct shard_unit *u, const struct shard_http_req *rq,
		      struct shard_resp *resp, const struct shard_ctx *ctx)
{
	const struct ffn_moe_info *mi;
	char *body;
	size_t len;

	(void)rq;
	(void)ctx;
	/* §2: 404 with an empty body unless started with experts = A-B */
	if (u->moe == NULL || u->own.kind != FFN_MOE_OWN_RANGE) {
		resp->status = 404;
		return;
	}
	mi = ffn_moe_info(u->moe);
	if (wire_moe_json_topology(mi->model_id, mi->num_experts,
				   mi->num_layers, u->own.first, u->own.last,
				   &body, &len) < 0)
		shard_resp_error(resp, 500, "out of memory");
	else
		shard_resp_heap(resp, "application/json", body, len);
}
