/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * ffn-loadgen --experts-route: the targets' expert topology and the
 * prepared layer-batch requests (lg_setup.h lg_expert_prepare), over our
 * own stack before the run.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "larql_client.h"
#include "lg.h"
#include "lg_expert.h"
#include "lg_setup.h"

/* What GET /v1/expert/topology said of one target (spec/moe.md §2). */
struct topo {
	bool have;
	uint32_t num_experts, first, last;
};

static uint32_t
jget_u32(struct json_object *o, const char *key, bool *ok)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0 ||
	    json_object_get_int64(v) > UINT32_MAX) {
		*ok = false;
		return 0;
	}
	return (uint32_t)json_object_get_int64(v);
}

/* 200 with the §2 shape, or 404 (no --experts: every expert); else an
 * error. */
static int
fetch_topology(unsigned int t, struct topo *tp)
{
	struct json_object *o = NULL;
	int status = 0;
	bool ok = true;
	int rc = lg_fetch_json(t, "/v1/expert/topology", &status, &o, 5000);

	memset(tp, 0, sizeof(*tp));
	if (rc < 0)
		return rc;
	if (status == 404)
		return 0;
	if (status != 200)
		return -EPROTO;
	tp->num_experts = jget_u32(o, "num_experts", &ok);
	tp->first = jget_u32(o, "owned_start", &ok);
	tp->last = jget_u32(o, "owned_end", &ok);
	json_object_put(o);
	if (!ok || tp->first > tp->last)
		return -EBADMSG;
	tp->have = true;
	return 0;
}

int
lg_expert_prepare(struct lg_expert_opts *o)
{
	struct topo tp[LG_MAX_TARGETS];
	int fmt = lg_expert_answer_fmt(o->route, o->wire);
	unsigned int npool = LG_EXPERT_POOL;
	int rc = 0;

	for (unsigned int t = 0; t < lg.ntargets; t++) {
		rc = fetch_topology(t, &tp[t]);
		if (rc < 0) {
			fprintf(stderr, "ffn-loadgen: GET /v1/expert/topology "
				"of target %u: %s\n", t, strerror(-rc));
			return rc;
		}
		if (tp[t].have)
			printf("ffn-loadgen: target %u /v1/expert/topology: "
			       "%u experts, owns %u-%u\n", t,
			       tp[t].num_experts, tp[t].first, tp[t].last);
	}
	if (o->num_experts == 0)
		o->num_experts = tp[0].num_experts;
	if (o->num_experts == 0) {
		fprintf(stderr, "ffn-loadgen: the first target has no expert "
			"topology (404): give --num-experts\n");
		return -EINVAL;
	}
	/* One distinct request per client at least: concurrent clients
	 * sending the same experts would batch better than real tokens
	 * do (each token routes its own). A list of layers cycles over
	 * the pool: room for each. */
	if (lg.nconns > npool)
		npool = lg.nconns;
	if (o->nlayers > npool)
		npool = o->nlayers;
	lg.npool = npool;
	lg.nsteps = 1;
	lg.treq = calloc((size_t)lg.ntargets * npool, sizeof(*lg.treq));
	if (lg.treq == NULL)
		return -ENOMEM;
	for (unsigned int t = 0; t < lg.ntargets && rc == 0; t++) {
		struct lg_expert_spec sp = {
			.route = o->route, .hidden = o->hidden,
			.num_experts = o->num_experts,
			.first = tp[t].have ? tp[t].first : 0,
			.last = tp[t].have ? tp[t].last : o->num_experts - 1,
			.top_k = o->top_k, .seed = o->seed,
		};

		if (lg_expert_owned(&sp) == 0) {
			fprintf(stderr, "ffn-loadgen: target %u owns no expert"
				" below %u\n", t, o->num_experts);
			return -EINVAL;
		}
		if (lg_expert_owned(&sp) < o->top_k)
			printf("ffn-loadgen: target %u owns %u experts: "
			       "top-%u of those\n", t, lg_expert_owned(&sp),
			       lg_expert_owned(&sp));
		for (unsigned int i = 0; i < npool && rc == 0; i++) {
			struct lg_req *q = &lg.treq[t * npool + i];
			uint8_t *body = NULL;
			ssize_t bl;

			sp.index = i;
			sp.layer = o->layers[i % o->nlayers];
			bl = lg_expert_body(&sp, &body);
			if (bl < 0)
				return (int)bl;
			rc = lg_req_bytes(q, "POST", lg_expert_path(o->route),
					  lg_expert_req_ctype(o->route),
					  lg_expert_accept(o->wire), body,
					  (size_t)bl, t);
			free(body);
			if (rc < 0)
				break;
			/* spec/moe.md §3.2, §7: exactly this answer, or
			 * asked in f16, the guard's f32 one */
			q->binary = true;
			q->ctype = lg_expert_answer_ctype(fmt);
			rc = lg_expert_frame_expect(&q->frame, fmt, o->hidden);
			if (rc == 0 && fmt == LC_F16) {
				q->guard_ctype = lg_expert_answer_ctype(LC_F32);
				rc = lg_expert_frame_expect(&q->guard, LC_F32,
							    o->hidden);
			}
		}
	}
	return rc;
}
