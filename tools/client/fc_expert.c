/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * ffn-client --expert-route (fc_expert.h): one call on an expert route of
 * spec/moe.md, its answer decoded by Content-Type, optionally recomputed
 * locally (lib/ffn ffn_moe) on what the shard decoded.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fc_expert.h"
#include "ffn_moe.h"
#include "quant.h"
#include "wire.h"
#include "wire_moe.h"

#define T "ffn-client"
#define MAX_PAIRS 1024

enum route_kind {
	R_LAYER,	/* §3.2, §3.3, §7 i8: one vector */
	R_MULTI,	/* §3.4, §3.5: n tasks */
	R_BATCH,	/* §3.1 binary: n unweighted y_e */
	R_SINGLE,	/* JSON, one y_e per call */
	R_TOPO,		/* GET */
};

static const struct route {
	const char *name;
	const char *path;
	enum route_kind kind;
	enum wire_moe_in in;	/* the residual's encoding */
	enum wire_fmt own;	/* own answer format (§7) */
} routes[] = {
	{ "layer-batch", "/v1/experts/layer-batch", R_LAYER,
	  WIRE_MOE_IN_F32, WIRE_FMT_F32 },
	{ "layer-batch-f16", "/v1/experts/layer-batch-f16", R_LAYER,
	  WIRE_MOE_IN_F16, WIRE_FMT_F16 },
	{ "layer-batch-i8", "/v1/experts/layer-batch-i8", R_LAYER,
	  WIRE_MOE_IN_I8, WIRE_FMT_I8 },
	{ "multi-layer-batch", "/v1/experts/multi-layer-batch", R_MULTI,
	  WIRE_MOE_IN_F32, WIRE_FMT_F32 },
	{ "multi-layer-batch-q8k", "/v1/experts/multi-layer-batch-q8k",
	  R_MULTI, WIRE_MOE_IN_Q8K, WIRE_FMT_F32 },
	{ "expert-batch", "/v1/expert/batch", R_BATCH, WIRE_MOE_IN_F32,
	  WIRE_FMT_F32 },
	{ "expert", "/v1/expert", R_SINGLE, WIRE_MOE_IN_F32, WIRE_FMT_F32 },
	{ "topology", "/v1/expert/topology", R_TOPO, WIRE_MOE_IN_F32,
	  WIRE_FMT_F32 },
};

/* One call's state. */
struct xcall {
	const struct fc_expert_opts *o;
	const struct route *r;
	struct lc_http http;
	struct lc_http_resp resp;
	uint32_t hidden;
	float *x;		/* hidden values, as drawn */
	uint32_t ids[MAX_PAIRS];
	float w[MAX_PAIRS];
	uint32_t k;
	uint8_t *body;
	size_t blen;
	/* the decoded answer: nvec vectors of hidden values */
	uint32_t nvec;
	uint32_t vlayer[MAX_PAIRS], vexpert[MAX_PAIRS];
	float *vals;
	enum wire_fmt fmt;	/* the answer's number format */
	double latency_ms;	/* -1: the frame has none */
	size_t req_bytes, resp_bytes;
};

static void
put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);	/* x86: little-endian, as the wire */
}

static uint32_t
get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* ---- the request ---------------------------------------------------- */

/* --experts "e:w,e:w" into the pairs. */
static int
parse_pairs(struct xcall *c, const char *s)
{
	char *end;

	c->k = 0;
	while (*s != '\0') {
		unsigned long e = strtoul(s, &end, 10);

		if (end == s || *end != ':' || e > UINT32_MAX ||
		    c->k == MAX_PAIRS)
			return -EINVAL;
		s = end + 1;
		c->w[c->k] = strtof(s, &end);
		if (end == s || (*end != ',' && *end != '\0'))
			return -EINVAL;
		c->ids[c->k++] = (uint32_t)e;
		s = *end == ',' ? end + 1 : end;
	}
	return c->k > 0 ? 0 : -EINVAL;
}

/* GET /v1/expert/topology: 1 with its fields, 0 on 404, <0 error. */
static int
topology(struct xcall *c, uint32_t *ne, uint32_t *first, uint32_t *last)
{
	struct json_object *o, *v;
	char *s;
	int rc;

	rc = lc_http_request(&c->http, "GET", "/v1/expert/topology", NULL,
			     NULL, NULL, 0, &c->resp);
	if (rc < 0)
		return rc;
	if (c->resp.status == 404)
		return 0;
	s = strndup((const char *)c->resp.body, c->resp.body_len);
	o = s != NULL ? json_tokener_parse(s) : NULL;
	free(s);
	if (c->resp.status != 200 || o == NULL) {
		json_object_put(o);
		return -EBADMSG;
	}
	rc = 1;
	if (json_object_object_get_ex(o, "num_experts", &v))
		*ne = (uint32_t)json_object_get_int64(v);
	if (json_object_object_get_ex(o, "owned_start", &v))
		*first = (uint32_t)json_object_get_int64(v);
	if (json_object_object_get_ex(o, "owned_end", &v))
		*last = (uint32_t)json_object_get_int64(v);
	json_object_put(o);
	return rc;
}

/*
 * Random routing as a client routes (§1-§2): router logits N(0,1) from
 * --random, softmax over the E experts, the top-k of the owned ones,
 * renormalised to sum 1, in top-k order.
 */
static int
route_pairs(struct xcall *c)
{
	uint32_t ne = c->o->num_experts, first = 0, last = UINT32_MAX, n, k;
	double *p, mx = -INFINITY, sum = 0, sel = 0;
	int rc = topology(c, &ne, &first, &last);

	if (rc < 0 && c->o->num_experts == 0) {
		fprintf(stderr, T ": GET /v1/expert/topology: %s\n",
			rc == -EBADMSG ? "not the JSON of spec/moe.md §2" :
			c->http.err);
		return 1;
	}
	if (c->o->num_experts != 0)
		ne = c->o->num_experts;
	if (ne == 0) {
		fprintf(stderr, T ": no expert topology (404): give "
			"--num-experts or --experts\n");
		return 2;
	}
	if (last >= ne)
		last = ne - 1;
	if (first > last) {
		fprintf(stderr, T ": the shard owns no expert below %u\n", ne);
		return 1;
	}
	n = last - first + 1;
	k = c->o->top_k < n ? c->o->top_k : n;
	if (k > MAX_PAIRS)
		k = MAX_PAIRS;
	p = malloc(ne * sizeof(*p));
	if (p == NULL)
		return 1;
	for (uint32_t e = 0; e < ne; e++) {
		p[e] = lc_rng_normal(c->o->rng);
		mx = fmax(mx, p[e]);
	}
	for (uint32_t e = 0; e < ne; e++)
		sum += (p[e] = exp(p[e] - mx));
	for (uint32_t j = 0; j < k; j++) {
		uint32_t best = UINT32_MAX;

		for (uint32_t e = first; e <= last; e++) {
			bool taken = false;

			for (uint32_t i = 0; i < j && !taken; i++)
				taken = c->ids[i] == e;
			if (!taken && (best == UINT32_MAX || p[e] > p[best]))
				best = e;
		}
		c->ids[j] = best;
		sel += p[best] / sum;
	}
	for (uint32_t j = 0; j < k; j++)
		c->w[j] = (float)(p[c->ids[j]] / sum / sel);
	c->k = k;
	free(p);
	return 0;
}

static int
read_input(const char *path, float *x, size_t n)
{
	FILE *f = fopen(path, "rb");
	size_t got;

	if (f == NULL) {
		fprintf(stderr, T ": open %s: %s\n", path, strerror(errno));
		return -errno;
	}
	got = fread(x, 4, n, f);
	fclose(f);
	if (got != n) {
		fprintf(stderr, T ": %s holds %zu f32, need %zu (hidden)\n",
			path, got, n);
		return -EINVAL;
	}
	return 0;
}

/* Q8_K of one row (§3.5): per 256 values d = max|h|/127 and
 * qs = round_half_away(h * (1/d)) with 1/d an f32 reciprocal; per 32
 * the sum of the qs. */
static void
q8k_row(const float *h, uint32_t hidden, uint8_t *out)
{
	uint32_t nb = hidden / 256;
	int8_t *qs = (int8_t *)out;
	uint8_t *dp = out + hidden, *sp = dp + 4 * (size_t)nb;

	for (uint32_t b = 0; b < nb; b++) {
		float mx = 0, d, id;

		for (uint32_t i = 0; i < 256; i++)
			mx = fmaxf(mx, fabsf(h[256 * b + i]));
		d = mx / 127.0f;
		id = d > 0 ? 1.0f / d : 0;
		for (uint32_t i = 0; i < 256; i++) {
			float q = roundf(h[256 * b + i] * id);

			qs[256 * b + i] = (int8_t)fmaxf(-127, fminf(127, q));
		}
		memcpy(dp + 4 * b, &d, 4);
		for (uint32_t s = 0; s < 8; s++) {
			int16_t sum = 0;

			for (uint32_t i = 0; i < 32; i++)
				sum += qs[256 * b + 32 * s + i];
			memcpy(sp + 2 * (8 * b + s), &sum, 2);
		}
	}
}

/* The body of the route (§3); h is the normed row for the Q8_K route. */
static int
make_body(struct xcall *c, const float *h)
{
	const struct route *r = c->r;
	uint32_t H = c->hidden, nl = c->o->nlayers;
	uint64_t xb = wire_moe_in_bytes(r->in, H);
	uint8_t *b;

	switch (r->kind) {
	case R_LAYER:
		c->blen = 12 + xb + 8 * (size_t)c->k;
		break;
	case R_MULTI:
		c->blen = 4 + nl * (12 + xb + 8 * (size_t)c->k);
		break;
	case R_BATCH:
		c->blen = 8 + (size_t)c->k * (8 + 4 * (size_t)H);
		break;
	default:
		return -EINVAL;
	}
	c->body = b = malloc(c->blen);
	if (b == NULL)
		return -ENOMEM;
	if (r->kind == R_BATCH) {
		/* §3.1: n, hidden, then per item layer, expert, x f32 */
		put_u32(b, c->k);
		put_u32(b + 4, H);
		for (uint32_t j = 0; j < c->k; j++) {
			uint8_t *it = b + 8 + j * (8 + 4 * (size_t)H);

			put_u32(it, c->o->layers[0]);
			put_u32(it + 4, c->ids[j]);
			memcpy(it + 8, c->x, 4 * (size_t)H);
		}
		return 0;
	}
	if (r->kind == R_MULTI) {
		put_u32(b, nl);
		b += 4;
	}
	for (uint32_t t = 0; t < (r->kind == R_MULTI ? nl : 1); t++) {
		put_u32(b, c->o->layers[t]);
		put_u32(b + 4, H);
		put_u32(b + 8, c->k);
		if (r->in == WIRE_MOE_IN_Q8K)
			q8k_row(h, H, b + 12);
		else	/* f32, f16, i8 [scale][zero 0][q]: §3.3, §7 */
			wire_moe_vec_encode(r->own, c->x, H, b + 12);
		b += 12 + xb;
		for (uint32_t j = 0; j < c->k; j++) {
			/* §3.2 pairs interleaved; §3.4 ids then weights */
			if (r->kind == R_LAYER) {
				put_u32(b + 8 * j, c->ids[j]);
				memcpy(b + 8 * j + 4, &c->w[j], 4);
			} else {
				put_u32(b + 4 * j, c->ids[j]);
				memcpy(b + 4 * (c->k + j), &c->w[j], 4);
			}
		}
		b += 8 * (size_t)c->k;
	}
	return 0;
}

/* ---- the answer ----------------------------------------------------- */

/* The number format of an answer's Content-Type in family fam, or
 * WIRE_FMT_NONE. */
static enum wire_fmt
answer_fmt(enum wire_moe_family fam, const char *ct)
{
	size_t n = strcspn(ct, "; ");

	for (int f = WIRE_FMT_F32; f < WIRE_FMT_JSON; f++) {
		const char *t = wire_moe_content_type(fam, (enum wire_fmt)f);

		if (strlen(t) == n && strncmp(ct, t, n) == 0)
			return (enum wire_fmt)f;
	}
	return WIRE_FMT_NONE;
}

static void
decode_vec(enum wire_fmt fmt, const uint8_t *p, uint32_t n, float *dst)
{
	if (fmt == WIRE_FMT_F32) {
		memcpy(dst, p, 4 * (size_t)n);
	} else if (fmt == WIRE_FMT_F16) {
		for (uint32_t i = 0; i < n; i++) {
			uint16_t h;

			memcpy(&h, p + 2 * (size_t)i, 2);
			dst[i] = quant_f16_to_f32_1(h);
		}
	} else {
		quant_i8_rows_to_f32(dst, p, 1, n);
	}
}

/* The binary answers (§3, §7); 0 or -EBADMSG with why on stderr. */
static int
decode_binary(struct xcall *c)
{
	const uint8_t *p = c->resp.body;
	size_t len = c->resp.body_len, vb;
	uint32_t H = c->hidden, n;
	float lat;

	if (c->r->kind == R_BATCH) {
		c->fmt = WIRE_FMT_F32;
		if (len < 12 || (n = get_u32(p)) != c->k ||
		    (n > 0 && get_u32(p + 4) != H) ||
		    len != wire_moe_batch_resp_size(n, H))
			goto bad;
		memcpy(&lat, p + 8, 4);
		c->latency_ms = lat;
		c->nvec = n;
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *it = p + 12 + i * (8 + 4 * (size_t)H);

			c->vlayer[i] = get_u32(it);
			c->vexpert[i] = get_u32(it + 4);
			decode_vec(c->fmt, it + 8, H, c->vals + (size_t)i * H);
		}
		return 0;
	}
	c->fmt = answer_fmt(c->r->kind == R_LAYER ? WIRE_MOE_LAYER :
			    WIRE_MOE_MULTI, c->resp.ctype);
	if (c->fmt == WIRE_FMT_NONE) {
		fprintf(stderr, T ": answer Content-Type \"%s\" is not one "
			"of the route family's (spec/moe.md §7)\n",
			c->resp.ctype);
		return -EBADMSG;
	}
	vb = wire_moe_vec_bytes(c->fmt, H);
	if (c->r->kind == R_LAYER) {
		if (len != WIRE_MOE_LAYER_HDR + vb || get_u32(p) != H)
			goto bad;
		memcpy(&lat, p + 4, 4);
		c->latency_ms = lat;
		c->nvec = 1;
		c->vlayer[0] = c->o->layers[0];
		decode_vec(c->fmt, p + 8, H, c->vals);
		return 0;
	}
	n = c->o->nlayers;
	if (len != 4 + n * (8 + vb) || get_u32(p) != n)
		goto bad;
	c->nvec = n;
	for (size_t i = 0, off = 4; i < n; i++, off += 8 + vb) {
		c->vlayer[i] = get_u32(p + off);
		if (c->vlayer[i] != c->o->layers[i] ||
		    get_u32(p + off + 4) != H)
			goto bad;
		decode_vec(c->fmt, p + off + 8, H, c->vals + (size_t)i * H);
	}
	return 0;
bad:
	fprintf(stderr, T ": %zu-byte answer is not the frame of spec/moe.md"
		" §3 for hidden %u (%s)\n", len, H, wire_fmt_name(c->fmt));
	return -EBADMSG;
}

/* The single route, one call per pair: {"output":[...],"latency_ms":F}. */
static int
call_single(struct xcall *c)
{
	size_t cap = 32 + 20 * (size_t)c->hidden;
	char *js = malloc(cap), path[96];
	size_t n = 0;
	int rc = 0;

	if (js == NULL)
		return -ENOMEM;
	n += (size_t)snprintf(js, cap, "{\"residual\":[");
	for (uint32_t i = 0; i < c->hidden; i++)
		n += (size_t)snprintf(js + n, cap - n, "%s%.9g", i ? "," : "",
				      c->x[i]);
	n += (size_t)snprintf(js + n, cap - n, "]}");
	c->blen = n;
	c->fmt = WIRE_FMT_F32;
	c->latency_ms = 0;
	for (uint32_t j = 0; j < c->k && rc == 0; j++) {
		struct json_object *o = NULL, *out, *lat;
		char *s;

		snprintf(path, sizeof(path), "/v1/expert/%u/%u",
			 c->o->layers[0], c->ids[j]);
		rc = lc_http_request(&c->http, "POST", path,
				     "application/json", NULL, js, n,
				     &c->resp);
		if (rc < 0) {
			fprintf(stderr, T ": POST %s: %s\n", path,
				c->http.err);
			break;
		}
		c->req_bytes += c->resp.req_len;
		c->resp_bytes += c->resp.head_len + c->resp.body_len;
		if (c->resp.status != 200)
			break;
		s = strndup((const char *)c->resp.body, c->resp.body_len);
		o = s != NULL ? json_tokener_parse(s) : NULL;
		free(s);
		if (o == NULL || !json_object_object_get_ex(o, "output", &out)
		    || !json_object_is_type(out, json_type_array) ||
		    json_object_array_length(out) != c->hidden) {
			fprintf(stderr, T ": POST %s: not {\"output\":[%u "
				"numbers],...}\n", path, c->hidden);
			rc = -EBADMSG;
		}
		for (uint32_t i = 0; rc == 0 && i < c->hidden; i++)
			c->vals[(size_t)j * c->hidden + i] = (float)
				json_object_get_double(
				json_object_array_get_idx(out, i));
		if (rc == 0 && json_object_object_get_ex(o, "latency_ms",
							 &lat))
			c->latency_ms += json_object_get_double(lat);
		c->vlayer[j] = c->o->layers[0];
		c->vexpert[j] = c->ids[j];
		c->nvec = j + 1;
		json_object_put(o);
	}
	free(js);
	return rc;
}

/* POST the binary body; 0, or an exit code. */
static int
call_binary(struct xcall *c)
{
	const char *ct, *acc;
	int rc;

	if (c->r->kind == R_BATCH) {
		ct = acc = "application/x-larql-expert";
	} else {
		enum wire_moe_family fam = c->r->kind == R_LAYER ?
			WIRE_MOE_LAYER : WIRE_MOE_MULTI;

		/* the clients send the route's own type (§2); Accept asks
		 * for the family's type of --wire (§7) */
		ct = wire_moe_content_type(fam, c->r->own);
		acc = wire_moe_content_type(fam, (enum wire_fmt)c->o->wire);
	}
	rc = lc_http_request(&c->http, "POST", c->r->path, ct, acc, c->body,
			     c->blen, &c->resp);
	if (rc < 0) {
		fprintf(stderr, T ": POST %s: %s\n", c->r->path, c->http.err);
		return 1;
	}
	c->req_bytes = c->resp.req_len;
	c->resp_bytes = c->resp.head_len + c->resp.body_len;
	if (c->resp.status != 200)
		return 0;
	return decode_binary(c) < 0 ? 1 : 0;
}

/* ---- output and --verify --------------------------------------------- */

static void
print_answer(const struct xcall *c)
{
	printf("status %d  content-type %s\n", c->resp.status, c->resp.ctype);
	if (c->resp.status != 200) {
		printf("body %.*s\n", (int)c->resp.body_len, c->resp.body);
		return;
	}
	printf("request  %s %s  %zu body bytes, %zu on the wire, %u pairs\n",
	       c->r->name, c->r->kind == R_SINGLE ? "json" :
	       c->r->in == WIRE_MOE_IN_Q8K ? "q8k" :
	       c->r->in == WIRE_MOE_IN_F16 ? "f16" :
	       c->r->in == WIRE_MOE_IN_I8 ? "i8" : "f32",
	       c->blen, c->req_bytes,
	       c->k);
	printf("response %s  %zu body bytes, %zu on the wire, %u vectors\n",
	       c->r->kind == R_SINGLE ? "json" : wire_fmt_name(c->fmt),
	       c->resp.body_len, c->resp_bytes, c->nvec);
	if (c->latency_ms >= 0)
		printf("latency  server %.3f ms\n", c->latency_ms);
	for (uint32_t v = 0; v < c->nvec; v++) {
		const float *y = c->vals + (size_t)v * c->hidden;
		double n2 = 0, mx = 0;

		for (uint32_t i = 0; i < c->hidden; i++) {
			n2 += (double)y[i] * y[i];
			mx = fmax(mx, fabs(y[i]));
		}
		printf("layer %u", c->vlayer[v]);
		if (c->r->kind == R_BATCH || c->r->kind == R_SINGLE)
			printf(" expert %u", c->vexpert[v]);
		printf(" values %u  |y| %.6g  max|y| %.6g  y[:%u] =",
		       c->hidden, sqrt(n2), mx, c->o->show);
		for (uint32_t i = 0; i < c->o->show && i < c->hidden; i++)
			printf(" %.7g", y[i]);
		printf("\n");
	}
}

/* The local answer for vector v into ref, from what the shard decoded
 * (xs: the residual after its wire encoding; hq: the Q8_K row). */
static int
ref_vec(const struct xcall *c, const struct ffn_moe *m,
	struct ffn_moe_scratch *s, uint32_t v, const float *xs,
	const uint8_t *hq, float *h, float *ref)
{
	struct ffn_moe_pair pr[MAX_PAIRS];
	uint32_t L = c->vlayer[v];
	unsigned bad = 0;

	if (hq != NULL) {
		/* §3.5: h = d[i/256] * qs[i], already normed */
		for (uint32_t i = 0; i < c->hidden; i++) {
			float d;

			memcpy(&d, hq + c->hidden + 4 * (i / 256), 4);
			h[i] = d * (float)(int8_t)hq[i];
		}
	} else {
		ffn_moe_norm(m, L, xs, h);
	}
	if (c->r->kind == R_BATCH || c->r->kind == R_SINGLE)
		return ffn_moe_expert(m, L, c->vexpert[v], h, 1, ref, s);
	for (uint32_t j = 0; j < c->k; j++) {
		pr[j].expert = c->ids[j];
		pr[j].weight = c->w[j];
	}
	return ffn_moe_mix(m, L, h, NULL, pr, c->k, ref, &bad, s);
}

/* --verify: 0, 1 could not check, 3 above the bound. */
static int
verify(const struct xcall *c, const struct ffn_moe *m, const uint8_t *hq)
{
	size_t H = c->hidden;
	float *xs = malloc(3 * H * sizeof(float)), *h = xs + H, *ref = h + H;
	struct ffn_moe_scratch *s = ffn_moe_scratch_new(m, 1, -1);
	struct wire_moe_task t;
	struct wire_error we;
	double maxabs = 0, maxref = 0, rel, bound;
	int rc = 0;

	if (xs == NULL || s == NULL) {
		free(xs);
		ffn_moe_scratch_free(s);
		return 1;
	}
	/* What the shard decoded: our own body through lib/wire's decoder
	 * (f16 widened, i8 q * scale + zero) for the layer routes. */
	if (c->r->kind == R_LAYER &&
	    wire_moe_layer_decode(&t, c->body, c->blen, c->r->in, &we) == 0)
		wire_moe_task_x(&t, xs);
	else
		memcpy(xs, c->x, H * sizeof(float));
	for (uint32_t v = 0; v < c->nvec && rc == 0; v++) {
		const float *y = c->vals + v * H;

		rc = ref_vec(c, m, s, v, xs, hq, h, ref);
		if (rc < 0) {
			fprintf(stderr, T ": --verify: layer %u: %s\n",
				c->vlayer[v], strerror(-rc));
			rc = 1;
			break;
		}
		for (size_t i = 0; i < H; i++) {
			maxabs = fmax(maxabs, fabs((double)y[i] - ref[i]));
			maxref = fmax(maxref, fabs(ref[i]));
		}
	}
	ffn_moe_scratch_free(s);
	free(xs);
	if (rc != 0)
		return rc;
	/* f32: 1e-3; a narrowed answer adds its rounding (f16: 2^-10 of
	 * the largest value; i8: a step, max/127). */
	bound = c->o->max_err >= 0 ? c->o->max_err :
		1e-3 + (c->fmt == WIRE_FMT_F16 ? 1.0 / 1024 :
			c->fmt == WIRE_FMT_I8 ? 1.0 / 127 : 0);
	rel = maxref > 0 ? maxabs / maxref : maxabs;
	printf("verify   max|err| %.3g  max|ref| %.6g  max|err|/max|ref| "
	       "%.3g  (bound %.3g)\n", maxabs, maxref, rel, bound);
	if (!(rel <= bound)) {
		printf("verify   FAIL\n");
		return 3;
	}
	printf("verify   ok\n");
	return 0;
}

static int
print_topology(struct xcall *c)
{
	int rc = lc_http_request(&c->http, "GET", c->r->path, NULL, NULL,
				 NULL, 0, &c->resp);

	if (rc < 0) {
		fprintf(stderr, T ": GET %s: %s\n", c->r->path, c->http.err);
		return 1;
	}
	printf("status %d  content-type %s\n", c->resp.status, c->resp.ctype);
	printf("response %zu body bytes, %zu on the wire\n",
	       c->resp.body_len, c->resp.head_len + c->resp.body_len);
	printf("body %.*s\n", (int)c->resp.body_len, c->resp.body);
	return c->resp.status == 200 ? 0 : 1;
}

/* Load MODEL (every expert) for --verify; NULL on failure. */
static struct ffn_moe *
load_model(const char *dir)
{
	struct ffn_moe_load_opts lo = { .own = NULL, .numa_node = -1,
					.placement = FFN_PLACE_MMAP,
					.no_hugepages = 1 };
	struct ffn_moe *m = NULL;
	char err[512];

	if (ffn_moe_load(dir, &lo, &m, err, sizeof(err)) < 0) {
		fprintf(stderr, T ": --verify %s: %s\n", dir, err);
		return NULL;
	}
	return m;
}

static int
run(struct xcall *c, struct ffn_moe *m)
{
	const struct fc_expert_opts *o = c->o;
	uint8_t *hq = NULL;
	float *h = NULL;
	int rc;

	if (c->r->kind == R_TOPO)
		return print_topology(c);
	c->hidden = o->hidden;
	if (c->hidden == 0 && lc_http_stats(&c->http, &c->hidden, NULL) < 0) {
		fprintf(stderr, T ": %s (give --hidden)\n", c->http.err);
		return 1;
	}
	if (c->r->in == WIRE_MOE_IN_Q8K && c->hidden % 256 != 0) {
		fprintf(stderr, T ": the Q8_K route needs hidden %% 256 == 0"
			" (hidden %u)\n", c->hidden);
		return 2;
	}
	c->x = malloc((size_t)c->hidden * sizeof(float));
	c->vals = malloc((size_t)MAX_PAIRS * c->hidden * sizeof(float));
	if (c->x == NULL || c->vals == NULL)
		return 1;
	if (o->input != NULL) {
		if (read_input(o->input, c->x, c->hidden) < 0)
			return 1;
	} else {
		for (uint32_t i = 0; i < c->hidden; i++)
			c->x[i] = lc_rng_normal(o->rng);
	}
	if (o->experts != NULL) {
		if (parse_pairs(c, o->experts) < 0) {
			fprintf(stderr, T ": --experts \"%s\": expected "
				"e:w,e:w,...\n", o->experts);
			return 2;
		}
	} else if ((rc = route_pairs(c)) != 0) {
		return rc;
	}
	if (c->r->in == WIRE_MOE_IN_Q8K) {
		/* §3.5: the client sends its own normed h (the model's
		 * pre-experts norm with --verify; else x as it is). */
		h = malloc((size_t)c->hidden * sizeof(float));
		if (h == NULL)
			return 1;
		if (m != NULL)
			ffn_moe_norm(m, o->layers[0], c->x, h);
		else
			memcpy(h, c->x, (size_t)c->hidden * sizeof(float));
		if (o->nlayers > 1 && m != NULL)
			printf("note: every task carries layer %u's normed h\n",
			       o->layers[0]);
	}
	if (c->r->kind == R_SINGLE) {
		rc = call_single(c) < 0;
	} else {
		rc = make_body(c, h) < 0 ? 1 : call_binary(c);
	}
	free(h);
	if (rc != 0)
		return rc;
	print_answer(c);
	if (c->resp.status != 200)
		return 1;
	if (m == NULL)
		return 0;
	if (c->r->in == WIRE_MOE_IN_Q8K)
		hq = c->body + 4 + 12;	/* the first task's row */
	return verify(c, m, hq);
}

int
fc_expert_main(const struct fc_expert_opts *o)
{
	static struct xcall c;
	struct ffn_moe *m = NULL;
	int rc;

	memset(&c, 0, sizeof(c));
	c.o = o;
	c.latency_ms = -1;
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (strcmp(o->route, routes[i].name) == 0)
			c.r = &routes[i];
	if (c.r == NULL) {
		fprintf(stderr, T ": --expert-route %s: one of layer-batch, "
			"layer-batch-f16, layer-batch-i8, multi-layer-batch, "
			"multi-layer-batch-q8k, expert-batch, expert, "
			"topology\n", o->route);
		return 2;
	}
	if (lc_http_init(&c.http, o->url) < 0) {
		fprintf(stderr, T ": %s\n", c.http.err);
		return 1;
	}
	if (o->verify != NULL && c.r->kind != R_TOPO &&
	    (m = load_model(o->verify)) == NULL)
		return 1;
	rc = run(&c, m);
	ffn_moe_free(m);
	lc_http_close(&c.http);
	free(c.http.buf);
	free(c.body);
	free(c.x);
	free(c.vals);
	return rc;
}
