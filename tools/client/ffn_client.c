/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * ffn-client: one LARQL remote-FFN call (spec/wire.md), for operators and
 * end-to-end tests. Prints the decoded output, latency and wire bytes;
 * --verify recomputes locally (vref, double precision) on the input the
 * server decoded and reports the error of what came back.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fc_expert.h"
#include "larql_client.h"
#include "tool_opt.h"
#include "vref.h"

#define MAX_LAYERS 1024

static void
usage(FILE *f, int rc)
{
	fprintf(f,
"usage: ffn-client URL --layer L | --layers A,B,...\n"
"         [--wire f32|f16|i8] [--request-wire f32|f16|i8] [--batch]\n"
"         [--seq-len S] [--hidden H] --input FILE | --random SEED\n"
"         [--out FILE] [--verify MODEL_DIR] [--max-err R] [--show N]\n"
"         [--json] [--repeat N]\n"
"       ffn-client URL --expert-route ROUTE [--layer L | --layers A,B,..]\n"
"         [--experts e:w,e:w,... | --top-k K [--num-experts E]]\n"
"         [--wire f32|f16|i8] [--hidden H] --input FILE | --random SEED\n"
"         [--verify MODEL_DIR] [--max-err R] [--show N]\n"
"  --wire         response format asked for in Accept (default f32)\n"
"  --request-wire format of the request body (default f32)\n"
"  --hidden       else read from GET /v1/stats hidden_size\n"
"  --input        seq_len x hidden raw little-endian f32\n"
"  --out          write the decoded outputs, raw f32, results in order\n"
"  --verify       recompute locally; report max abs / relative error\n"
"  --max-err      with --verify: exit 3 when max|err|/max|ref| > R\n"
"  --json         use the JSON path (spec/wire.md §6, full output)\n"
"  --repeat       send the request N times on one kept-alive connection,\n"
"                 report wall/server latency min/p50/max; last is shown\n"
"  --expert-route an expert route of spec/moe.md instead: layer-batch,\n"
"                 layer-batch-f16, layer-batch-i8, multi-layer-batch\n"
"                 (a task per layer), multi-layer-batch-q8k, expert-batch\n"
"                 (binary, an item per expert), expert (JSON, a call per\n"
"                 expert), topology; the answer is decoded by its\n"
"                 Content-Type; --verify recomputes with lib/ffn's ffn_moe\n"
"                 (fails above 1e-3 of max|ref|, plus the f16/i8 rounding)\n"
"  --experts      the (expert, weight) pairs; else routed: random logits,\n"
"                 softmax over E, top-k of the owned (topology) [8]\n");
	exit(rc);
}

#define T "ffn-client"

/* An option's value, or exit 2 with tool_opt's message naming it. */
#define opt_u32(opt, min, max) \
	tool_opt_u32_or_exit(T, (opt), optarg, (min), (max))

static int
opt_fmt(const char *opt)
{
	int f = lc_fmt_parse(optarg);

	if (f < 0) {
		fprintf(stderr, T ": %s: \"%s\" is not f32, f16 or i8\n", opt,
			optarg);
		exit(2);
	}
	return f;
}

/* Reproducible random inputs (larql_client.h). */
static struct lc_rng rng;

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int
read_input(const char *path, float *x, size_t n)
{
	FILE *f = fopen(path, "rb");
	size_t got;

	if (f == NULL) {
		fprintf(stderr, "ffn-client: open %s: %s\n", path,
			strerror(errno));
		return -errno;
	}
	got = fread(x, 4, n, f);
	fclose(f);
	if (got != n) {
		fprintf(stderr, "ffn-client: %s holds %zu f32, need %zu "
			"(seq_len x hidden)\n", path, got, n);
		return -EINVAL;
	}
	return 0;
}

/* What the command line asks for. */
struct client_opts {
	const char *url, *input, *out_path, *verify;
	uint32_t layers[MAX_LAYERS], nlayers, seq, hidden;
	int wire, rwire, batch, have_seed, json;
	const char *expert_route, *experts;
	uint32_t top_k, num_experts;
	double max_err;
	unsigned repeat, show;
};

/* One call and what came back (the last of --repeat). */
struct call {
	struct lc_http http;
	struct lc_http_resp resp;
	struct lc_response dec;
	float *x;
	uint8_t *body;
	ssize_t blen;
	double *walls, *srvs;
};

/* One option; 0, or the exit code of a refused value. */
static int
parse_opt(int c, struct client_opts *o)
{
	int rc;

	switch (c) {
	case 'l':
	case 'L':
		/* Layer ids are u32 on the wire (§3); the top value is the
		 * batch marker. */
		rc = tool_opt_u32_list(T, c == 'l' ? "--layer" : "--layers",
				       optarg, 0, LC_BATCH_MARKER - 1,
				       o->layers, MAX_LAYERS);
		if (rc < 0)
			return 2;
		o->nlayers = rc;
		break;
	case 'w': o->wire = opt_fmt("--wire"); break;
	case 'r': o->rwire = opt_fmt("--request-wire"); break;
	case 'b': o->batch = 1; break;
	case 's': o->seq = opt_u32("--seq-len", 1, UINT32_MAX); break;
	case 'H': o->hidden = opt_u32("--hidden", 1, UINT32_MAX); break;
	case 'i': o->input = optarg; break;
	case 'R': {
		uint64_t seed;

		if (tool_opt_u64(T, "--random", optarg, &seed) < 0)
			return 2;
		lc_rng_seed(&rng, seed);
		o->have_seed = 1;
		break;
	}
	case 'o': o->out_path = optarg; break;
	case 'v': o->verify = optarg; break;
	case 'e':
		if (tool_opt_double(T, "--max-err", optarg, 0, 1e300,
				    &o->max_err) < 0)
			return 2;
		break;
	case 'n': o->show = opt_u32("--show", 0, UINT32_MAX); break;
	case 'j': o->json = 1; break;
	case 'N': o->repeat = opt_u32("--repeat", 1, 1000000); break;
	case 'X': o->expert_route = optarg; break;
	case 'x': o->experts = optarg; break;
	case 'K': o->top_k = opt_u32("--top-k", 1, 1024); break;
	case 'E': o->num_experts = opt_u32("--num-experts", 1, UINT32_MAX);
		break;
	case 'h': usage(stdout, 0); break;
	default: usage(stderr, 2);
	}
	return 0;
}

/* The command line into o; 0, or the exit code. */
static int
parse_args(int argc, char **argv, struct client_opts *o)
{
	static const struct option opts[] = {
		{ "layer", required_argument, NULL, 'l' },
		{ "layers", required_argument, NULL, 'L' },
		{ "wire", required_argument, NULL, 'w' },
		{ "request-wire", required_argument, NULL, 'r' },
		{ "batch", no_argument, NULL, 'b' },
		{ "seq-len", required_argument, NULL, 's' },
		{ "hidden", required_argument, NULL, 'H' },
		{ "input", required_argument, NULL, 'i' },
		{ "random", required_argument, NULL, 'R' },
		{ "out", required_argument, NULL, 'o' },
		{ "verify", required_argument, NULL, 'v' },
		{ "max-err", required_argument, NULL, 'e' },
		{ "show", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "repeat", required_argument, NULL, 'N' },
		{ "expert-route", required_argument, NULL, 'X' },
		{ "experts", required_argument, NULL, 'x' },
		{ "top-k", required_argument, NULL, 'K' },
		{ "num-experts", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->seq = 1;
	o->wire = LC_F32;
	o->rwire = LC_F32;
	o->max_err = -1;
	o->repeat = 1;
	o->show = 8;
	o->top_k = 8;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1)
		if ((rc = parse_opt(c, o)) != 0)
			return rc;
	if (optind != argc - 1) {
		fprintf(stderr, T ": %s\n", optind >= argc ? "no URL given" :
			"one URL only, options before or after it");
		usage(stderr, 2);
	}
	if (o->expert_route != NULL && o->nlayers == 0)
		o->layers[o->nlayers++] = 0;	/* layer 0 by default */
	if (o->nlayers == 0) {
		fprintf(stderr, T ": --layer or --layers is required\n");
		return 2;
	}
	if ((o->input == NULL) == !o->have_seed && (o->expert_route == NULL ||
	    strcmp(o->expert_route, "topology") != 0)) {
		fprintf(stderr, T ": give exactly one of --input FILE and "
			"--random SEED\n");
		return 2;
	}
	o->url = argv[optind];
	return 0;
}

/* --input's or --random's seq x hidden values, and the request body. */
static int
make_request(struct client_opts *o, struct call *k)
{
	size_t m = (size_t)o->seq * o->hidden;
	uint32_t i;

	k->x = malloc(sizeof(float) * (m + 1));
	if (k->x == NULL)
		return -ENOMEM;
	if (o->input != NULL) {
		if (read_input(o->input, k->x, m) < 0)
			return -EINVAL;
	} else {
		for (i = 0; i < o->seq * o->hidden; i++)
			k->x[i] = lc_rng_normal(&rng);
	}
	if (o->json) {
		size_t jl;

		k->body = (uint8_t *)lc_json_request(o->layers, o->nlayers,
						     o->seq, o->hidden, k->x,
						     &jl);
		k->blen = jl;
		o->rwire = LC_F32;	/* JSON carries the input exactly */
	} else {
		k->blen = 8 + 4 * o->nlayers + 12 +
			lc_payload_bytes(o->rwire, o->seq, o->hidden);
		k->body = malloc(k->blen);
		if (k->body != NULL)
			k->blen = lc_encode_request(k->body, k->blen,
						    o->layers, o->nlayers,
						    o->batch, o->seq,
						    o->hidden, k->x,
						    o->rwire);
	}
	return k->body == NULL ? -ENOMEM : 0;
}

/* Send the request --repeat times on the kept-alive connection; 0 or 1. */
static int
send_requests(const struct client_opts *o, struct call *k)
{
	char err[512];
	unsigned it;
	double t0;
	int rc;

	k->walls = calloc(o->repeat, sizeof(double));
	k->srvs = calloc(o->repeat, sizeof(double));
	if (k->walls == NULL || k->srvs == NULL)
		return 1;
	for (it = 0; it < o->repeat; it++) {
		if (it > 0)
			lc_response_free(&k->dec);
		t0 = lc_now_ms();
		rc = lc_http_request(&k->http, "POST", "/v1/walk-ffn",
				     o->json ? "application/json" :
				     lc_fmt_ctype(o->rwire),
				     o->json ? NULL : lc_fmt_accept(o->wire),
				     k->body, k->blen, &k->resp);
		k->walls[it] = lc_now_ms() - t0;
		if (rc < 0) {
			fprintf(stderr, "ffn-client: POST /v1/walk-ffn: %s\n",
				k->http.err);
			return 1;
		}
		if (k->resp.status != 200) {
			printf("status %d  content-type %s\n", k->resp.status,
			       k->resp.ctype);
			printf("body %.*s\n", (int)k->resp.body_len,
			       k->resp.body);
			return 1;
		}
		if (o->json)
			rc = lc_json_decode(&k->dec, k->resp.body,
					    k->resp.body_len, err, sizeof(err));
		else
			rc = lc_decode_response(&k->dec, k->resp.body,
						k->resp.body_len,
						lc_fmt_of_ctype(k->resp.ctype),
						o->hidden, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "ffn-client: %s\n", err);
			return 1;
		}
		k->srvs[it] = k->dec.latency_ms;
	}
	return 0;
}

/* Status, formats, sizes and latency of the exchange. */
static void
print_exchange(const struct client_opts *o, struct call *k)
{
	const struct lc_http_resp *resp = &k->resp;
	unsigned repeat = o->repeat;
	double wall = k->walls[repeat - 1];

	printf("status %d  content-type %s\n", resp->status, resp->ctype);
	if (!o->json && lc_fmt_of_ctype(resp->ctype) != (enum lc_fmt)o->wire)
		printf("note: asked for %s, server answered %s\n",
		       lc_fmt_name(o->wire),
		       lc_fmt_name(lc_fmt_of_ctype(resp->ctype)));
	if (repeat > 1) {
		qsort(k->walls, repeat, sizeof(double), cmp_double);
		qsort(k->srvs, repeat, sizeof(double), cmp_double);
		printf("repeat   %u requests on %s connection(s): wall min "
		       "%.3f p50 %.3f max %.3f ms; server p50 %.3f ms\n",
		       repeat, k->http.connects > 1 ? "several" : "one",
		       k->walls[0], k->walls[repeat / 2],
		       k->walls[repeat - 1], k->srvs[repeat / 2]);
	}
	printf("request  %s  %zu body bytes, %zu on the wire\n",
	       o->json ? "json" : lc_fmt_name(o->rwire), (size_t)k->blen,
	       resp->req_len);
	printf("response %s  %zu body bytes, %zu on the wire  (%s %s, "
	       "%u results)\n", o->json ? "json" :
	       lc_fmt_name(lc_fmt_of_ctype(resp->ctype)),
	       resp->body_len, resp->head_len + resp->body_len,
	       k->dec.batch ? "batch" : "single",
	       o->json ? "object" : "frame", k->dec.n);
	printf("latency  server %.3f ms  wall %.3f ms\n", k->dec.latency_ms,
	       wall);
}

/* Each result's norms and its first show values. */
static void
print_results(const struct lc_response *dec, unsigned show)
{
	uint32_t i, k;

	for (i = 0; i < dec->n; i++) {
		const struct lc_result *r = &dec->r[i];
		double n2 = 0, mx = 0;

		for (k = 0; k < r->num_values; k++) {
			n2 += (double)r->values[k] * r->values[k];
			if (fabs(r->values[k]) > mx)
				mx = fabs(r->values[k]);
		}
		printf("layer %u seq_len %u values %u  |y| %.6g  max|y| %.6g  "
		       "y[:%u] =", r->layer, r->seq_len, r->num_values,
		       sqrt(n2), mx, show);
		for (k = 0; k < show && k < r->num_values; k++)
			printf(" %.7g", r->values[k]);
		printf("\n");
	}
}

/* --out: the decoded outputs, raw f32, results in order; 0 or 1. */
static int
write_out(const char *path, const struct lc_response *dec)
{
	FILE *f = fopen(path, "wb");
	uint32_t i;

	if (f == NULL) {
		fprintf(stderr, "ffn-client: open %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	for (i = 0; i < dec->n; i++)
		fwrite(dec->r[i].values, 4, dec->r[i].num_values, f);
	if (fclose(f) != 0) {
		fprintf(stderr, "ffn-client: write %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	return 0;
}

/* Errors of the results against the local reference (--verify). */
struct verr {
	double maxabs, maxref, maxrel_el, e2, r2;
};

static void
verr_add(struct verr *e, const float *y, const double *ref, size_t m)
{
	size_t k;

	for (k = 0; k < m; k++) {
		double d = fabs(y[k] - ref[k]);

		if (d > e->maxabs)
			e->maxabs = d;
		if (fabs(ref[k]) > e->maxref)
			e->maxref = fabs(ref[k]);
		if (fabs(ref[k]) > 1e-3 && d / fabs(ref[k]) > e->maxrel_el)
			e->maxrel_el = d / fabs(ref[k]);
		e->e2 += d * d;
		e->r2 += ref[k] * ref[k];
	}
}

/* Recompute every result with v on xs (what the server decoded); 0 or 1. */
static int
verify_compute(const struct client_opts *o, const struct lc_response *dec,
	       struct vref *v, const float *xs, struct verr *e)
{
	size_t m = (size_t)o->seq * o->hidden;
	double *ref = malloc(m * sizeof(double));
	char err[512];
	uint32_t i;

	if (ref == NULL)
		return 1;
	if (dec->n != o->nlayers) {
		fprintf(stderr, "ffn-client: %u results for %u layers\n",
			dec->n, o->nlayers);
		return 1;
	}
	for (i = 0; i < dec->n; i++) {
		if (dec->r[i].layer != o->layers[i] ||
		    dec->r[i].num_values != m) {
			fprintf(stderr, "ffn-client: result %u is layer %u "
				"with %u values, expected layer %u with %zu\n",
				i, dec->r[i].layer, dec->r[i].num_values,
				o->layers[i], m);
			return 1;
		}
		if (vref_ffn(v, o->layers[i], xs, o->seq, ref, err,
			     sizeof(err)) < 0) {
			fprintf(stderr, "ffn-client: --verify: %s\n", err);
			return 1;
		}
		verr_add(e, dec->r[i].values, ref, m);
	}
	free(ref);
	return 0;
}

/* --verify (and --max-err): 0, 1 on failure to check, 3 above the bound. */
static int
verify(const struct client_opts *o, const struct call *k)
{
	size_t m = (size_t)o->seq * o->hidden;
	float *xs = malloc(m * sizeof(float));
	struct verr e = { 0, 0, 0, 0, 0 };
	char err[512];
	struct vref v;
	double rel;

	if (xs == NULL)
		return 1;
	if (vref_open(&v, o->verify, err, sizeof(err)) < 0) {
		fprintf(stderr, "ffn-client: --verify: %s\n", err);
		return 1;
	}
	/* Compare with the FFN of the input the server decoded. */
	lc_roundtrip(xs, k->x, o->seq, o->hidden, o->rwire);
	if (verify_compute(o, &k->dec, &v, xs, &e) != 0)
		return 1;
	rel = e.maxref > 0 ? e.maxabs / e.maxref : e.maxabs;
	printf("verify   max|err| %.3g  max|ref| %.6g  "
	       "max|err|/max|ref| %.3g  ||err||/||ref|| %.3g  "
	       "max elementwise rel (|ref|>1e-3) %.3g\n", e.maxabs, e.maxref,
	       rel, e.r2 > 0 ? sqrt(e.e2 / e.r2) : sqrt(e.e2), e.maxrel_el);
	vref_close(&v);
	free(xs);
	if (o->max_err >= 0 && !(rel <= o->max_err)) {
		printf("verify   FAIL: above --max-err %g\n", o->max_err);
		return 3;
	}
	if (o->max_err >= 0)
		printf("verify   ok (--max-err %g)\n", o->max_err);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct client_opts o;
	struct call k;
	int rc;

	memset(&k, 0, sizeof(k));
	rc = parse_args(argc, argv, &o);
	if (rc != 0)
		return rc;
	if (o.expert_route != NULL) {
		struct fc_expert_opts xo = {
			.url = o.url, .route = o.expert_route,
			.experts = o.experts, .input = o.input,
			.verify = o.verify, .rng = &rng, .layers = o.layers,
			.nlayers = o.nlayers, .hidden = o.hidden,
			.num_experts = o.num_experts, .top_k = o.top_k,
			.wire = o.wire, .max_err = o.max_err, .show = o.show,
		};

		return fc_expert_main(&xo);
	}
	if (lc_http_init(&k.http, o.url) < 0) {
		fprintf(stderr, "ffn-client: %s\n", k.http.err);
		return 1;
	}
	if (o.hidden == 0 && lc_http_stats(&k.http, &o.hidden, NULL) < 0) {
		fprintf(stderr, "ffn-client: %s\n", k.http.err);
		return 1;
	}
	if (make_request(&o, &k) < 0 || send_requests(&o, &k) != 0)
		return 1;
	print_exchange(&o, &k);
	print_results(&k.dec, o.show);
	if (o.out_path != NULL && write_out(o.out_path, &k.dec) != 0)
		return 1;
	if (o.verify != NULL && (rc = verify(&o, &k)) != 0)
		return rc;
	lc_response_free(&k.dec);
	lc_http_close(&k.http);
	free(k.http.buf);
	free(k.body);
	free(k.x);
	return 0;
}
