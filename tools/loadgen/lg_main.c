/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * ffn-loadgen: stateful HTTP/1.1 load for ffn-shard on our own DPDK stack
 * (lib/net + lib/net/tcp), closed or open loop, LARQL binary requests
 * (spec/wire.md §3) whose every answer frame is validated (§5), optionally
 * walking a multi-shard layout layer by layer like a real client.
 *
 *   ffn-loadgen [EAL args] -- --ip A.B.C.D/len [--gw G] --target IP:PORT
 *               [options]          (see usage())
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "larql_client.h"
#include "lg.h"
#include "lg_expert.h"
#include "lg_flood.h"
#include "lg_setup.h"

struct lg lg;
RTE_DEFINE_PER_LCORE(struct lg_worker *, lg_w);

volatile sig_atomic_t lg_signal;

static void
on_signal(int sig)
{
	lg_signal = sig;
}

static void
usage(void)
{
	fprintf(stderr,
"usage: ffn-loadgen [EAL args] -- --ip A.B.C.D/len [--gw G] [--ip ...]\n"
"         (--target IP:PORT [--target ...] | --layout \"A-B=IP:PORT,...\")\n"
"         [options]\n"
"  --ip A.B.C.D/len   our address on DPDK port i (i-th --ip; repeatable)\n"
"  --gw G             gateway of the preceding --ip\n"
"  --target IP:PORT   server; connections spread over the targets\n"
"  --layout SPEC      fan-out: per token, one request per layer, in\n"
"                     order, each to the shard owning it\n"
"  --connections N    clients (closed loop: concurrency) [16]\n"
"  --active N         closed loop: only N clients send; the others hold\n"
"                     their connections open, idle [all]\n"
"  --syn-flood R|max  meanwhile, R spoofed-source SYNs per second (max:\n"
"                     as fast as the lcores loop) at the first target\n"
"  --flood-src A.B.C.D/len  their source addresses [198.19.0.0/16]\n"
"  --rate R           open loop: R tokens (requests) per second, latency\n"
"                     from the scheduled send time [closed loop]\n"
"  --wire FMT         answer format asked for (Accept): f32|f16|i8 [f32]\n"
"  --request-wire FMT body format [f32]\n"
"  --seq-len S        rows per request [1]\n"
"  --layers L|A,B,..  layers per request (batch frame if several) [0]\n"
"  --hidden H         hidden size [GET /v1/stats]\n"
"  --seed S           input values from this seed [1]\n"
"  --method M --path P  e.g. GET /v1/health [POST /v1/walk-ffn]\n"
"  --warmup S         seconds not measured [1]\n"
"  --duration S       measured seconds [5]\n"
"  --timeout MS       per request and connect [5000]\n"
"  --verify-body      every answer's values agree with the first valid\n"
"                     answer's (within the narrowing's rounding)\n"
"  --body-ref FILE    ... with this answer body's instead (implies\n"
"                     --verify-body; not with --layout)\n"
"  --save-body FILE   write the reference answer body there at the end\n"
"  --experts-route R  layer batches of spec/moe.md instead: R is\n"
"                     layer-batch|layer-batch-f16|layer-batch-i8\n"
"                     (POST /v1/experts/R; --wire: the answer asked for)\n"
"  --num-experts E    the router's width [GET /v1/expert/topology]\n"
"  --top-k K          pairs per request [8]\n"
"  --expert-layer L|A,B,..  layer of each request, cycled [0]\n"
"Exit: 0 no errors, 3 errors seen, 1 setup failure.\n");
}

struct opts {
	const char *layout;
	const char *method, *path;
	int wire, req_wire;
	uint32_t seq_len, hidden, seed;
	uint32_t layers[LG_MAX_STEPS];
	uint32_t nlayers;
	const char *body_ref, *save_body;
	struct lg_expert_opts x;	/**< --experts-route (x.route >= 0) */
};

static int
parse_layers(const char *s, uint32_t *out, uint32_t *n)
{
	char *end;

	*n = 0;
	do {
		unsigned long v = strtoul(s, &end, 10);

		if (end == s || *n == LG_MAX_STEPS || v > UINT32_MAX - 1)
			return -EINVAL;
		out[(*n)++] = (uint32_t)v;
		s = end + 1;
	} while (*end == ',');
	return *end == '\0' ? 0 : -EINVAL;
}

/* "0-15=IP:PORT,16-31=IP:PORT": steps in layer order. */
static int
parse_layout(const char *spec)
{
	char *dup = strdup(spec), *save = NULL, *tok;
	uint32_t owner[LG_MAX_STEPS];
	uint32_t maxl = 0;
	bool have[LG_MAX_STEPS] = { false };
	int rc = 0;

	if (dup == NULL)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok != NULL && rc == 0;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned long a, b;
		char *eq = strchr(tok, '='), *end;
		uint32_t ip;
		uint16_t port;
		int t;

		if (eq == NULL) {
			rc = -EINVAL;
			break;
		}
		*eq = '\0';
		a = strtoul(tok, &end, 10);
		b = a;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		if (end == tok || *end != '\0' || b < a || b >= LG_MAX_STEPS ||
		    lg_parse_hostport(eq + 1, &ip, &port) < 0 ||
		    (t = lg_add_target(ip, port)) < 0) {
			rc = -EINVAL;
			break;
		}
		for (unsigned long l = a; l <= b; l++) {
			if (have[l])
				rc = -EEXIST;
			have[l] = true;
			owner[l] = (uint32_t)t;
		}
		if (b + 1 > maxl)
			maxl = (uint32_t)b + 1;
	}
	free(dup);
	if (rc < 0)
		return rc;
	/* Walk 0..max: a gap is a layout error (a client needs them all). */
	for (uint32_t l = 0; l < maxl; l++)
		if (!have[l])
			return -ENOENT;
	lg.nsteps = maxl;
	for (uint32_t l = 0; l < maxl; l++)
		lg.step_conn[l] = owner[l];	/* conn index == target */
	return maxl > 0 ? 0 : -EINVAL;
}

/* --ip A.B.C.D/len: the next DPDK port's address; 0, or -1 if bad. */
static int
parse_ip(char *arg)
{
	char *slash = strchr(arg, '/'), *end;
	unsigned long len;

	if (slash == NULL || lg.nports == LG_MAX_PORTS)
		return -1;
	*slash = '\0';
	len = strtoul(slash + 1, &end, 10);
	if (*end != '\0' || len < 1 || len > 32 ||
	    lg_parse_ipv4(arg, &lg.port[lg.nports].ip_be) < 0)
		return -1;
	lg.port[lg.nports].mask_be = htonl(0xffffffffu << (32 - len));
	lg.port[lg.nports].port_id = (uint16_t)lg.nports;
	lg.nports++;
	return 0;
}

/* --warmup, --duration (seconds) and --timeout (ms); 0, or -1 if bad. */
static int
parse_time(int c, const char *arg)
{
	char *end;
	double v = strtod(arg, &end);

	if (*end || v < 0 || (c != 'u' && v == 0))
		return -1;
	if (c == 'u')
		lg.warmup_ns = (uint64_t)(v * 1e9);
	else if (c == 'd')
		lg.duration_ns = (uint64_t)(v * 1e9);
	else
		lg.timeout_ns = (uint64_t)(v * 1e6);
	return 0;
}

/*
 * One option into o and lg: 0; 1 for a bad value (the caller names it);
 * -EINVAL for an unknown option, after usage().
 */
static int
parse_opt(int c, char *arg, struct opts *o)
{
	char *end;
	uint32_t ip;
	uint16_t port;

	switch (c) {
	case 'i': return parse_ip(arg) < 0;
	case 'g':
		return lg.nports == 0 ||
		       lg_parse_ipv4(arg, &lg.port[lg.nports - 1].gw_be);
	case 't':
		return lg_parse_hostport(arg, &ip, &port) < 0 ||
		       lg_add_target(ip, port) < 0;
	case 'L': o->layout = arg; return 0;
	case 'c':
		lg.nconns = (unsigned int)strtoul(arg, &end, 10);
		return *end || lg.nconns == 0 || lg.nconns > 65536;
	case 'F':
		lg.flood = true;
		if (strcmp(arg, "max") == 0)
			return 0;
		lg.flood_rate = strtod(arg, &end);
		return *end || !(lg.flood_rate > 0);
	case 'f':
		return lg_flood_parse_src(arg, &lg.flood_net_be,
					  &lg.flood_mask_be) < 0;
	case 'a':
		lg.nactive = (unsigned int)strtoul(arg, &end, 10);
		return *end || lg.nactive == 0;
	case 'r':
		lg.rate = strtod(arg, &end);
		return *end || !(lg.rate > 0);
	case 'w': return (o->wire = lc_fmt_parse(arg)) < 0;
	case 'W': return (o->req_wire = lc_fmt_parse(arg)) < 0;
	case 's':
		o->seq_len = (uint32_t)strtoul(arg, &end, 10);
		return *end || o->seq_len == 0;
	case 'l': return parse_layers(arg, o->layers, &o->nlayers) < 0;
	case 'H':
		o->hidden = (uint32_t)strtoul(arg, &end, 10);
		return *end || o->hidden == 0;
	case 'S': o->seed = (uint32_t)strtoul(arg, NULL, 10); return 0;
	case 'm': o->method = arg; return 0;
	case 'p': o->path = arg; return 0;
	case 'u': case 'd': case 'T': return parse_time(c, arg) < 0;
	case 'V': lg.verify = true; return 0;
	case 'R': o->body_ref = arg; lg.verify = true; return 0;
	case 'B': o->save_body = arg; return 0;
	case 'X': return (o->x.route = lg_expert_route_parse(arg)) < 0;
	case 'E':
		o->x.num_experts = (uint32_t)strtoul(arg, &end, 10);
		return *end || o->x.num_experts == 0;
	case 'K':
		o->x.top_k = (uint32_t)strtoul(arg, &end, 10);
		return *end || o->x.top_k == 0 ||
		       o->x.top_k > LG_EXPERT_MAX_K;
	case 'Y': return parse_layers(arg, o->x.layers, &o->x.nlayers) < 0;
	case 'h': usage(); exit(0);
	default: usage(); return -EINVAL;
	}
}

/* The targets: --target's, or --layout's walk; 0 or a negative value. */
static int
check_targets(struct opts *o)
{
	int rc;

	if (o->layout == NULL) {
		if (o->x.route >= 0 && o->body_ref != NULL) {
			fprintf(stderr, "ffn-loadgen: --body-ref is one answer"
				", --experts-route sends %u requests\n",
				LG_EXPERT_POOL);
			return -EINVAL;
		}
		if (lg.ntargets > 0)
			return 0;
		fprintf(stderr, "ffn-loadgen: give --target or --layout\n");
		return -EINVAL;
	}
	if (lg.ntargets > 0) {
		fprintf(stderr, "ffn-loadgen: --layout and --target "
			"exclude each other\n");
		return -EINVAL;
	}
	rc = parse_layout(o->layout);
	if (rc < 0) {
		fprintf(stderr, "ffn-loadgen: --layout \"%s\": %s\n",
			o->layout, rc == -ENOENT ? "a layer between "
			"0 and the last is not covered" :
			rc == -EEXIST ? "a layer is covered twice" :
			"expected A-B=IP:PORT,...");
		return rc;
	}
	lg.fanout = true;
	if (o->x.route >= 0) {
		fprintf(stderr, "ffn-loadgen: --experts-route goes to "
			"--target, not a --layout walk\n");
		return -EINVAL;
	}
	if (o->body_ref != NULL) {
		fprintf(stderr, "ffn-loadgen: --body-ref is one answer"
			", a --layout walk gets one per layer\n");
		return -EINVAL;
	}
	return 0;
}

static int
parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "ip", required_argument, NULL, 'i' },
		{ "gw", required_argument, NULL, 'g' },
		{ "target", required_argument, NULL, 't' },
		{ "layout", required_argument, NULL, 'L' },
		{ "connections", required_argument, NULL, 'c' },
		{ "active", required_argument, NULL, 'a' },
		{ "syn-flood", required_argument, NULL, 'F' },
		{ "flood-src", required_argument, NULL, 'f' },
		{ "rate", required_argument, NULL, 'r' },
		{ "wire", required_argument, NULL, 'w' },
		{ "request-wire", required_argument, NULL, 'W' },
		{ "seq-len", required_argument, NULL, 's' },
		{ "layers", required_argument, NULL, 'l' },
		{ "hidden", required_argument, NULL, 'H' },
		{ "seed", required_argument, NULL, 'S' },
		{ "method", required_argument, NULL, 'm' },
		{ "path", required_argument, NULL, 'p' },
		{ "warmup", required_argument, NULL, 'u' },
		{ "duration", required_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "verify-body", no_argument, NULL, 'V' },
		{ "body-ref", required_argument, NULL, 'R' },
		{ "save-body", required_argument, NULL, 'B' },
		{ "experts-route", required_argument, NULL, 'X' },
		{ "num-experts", required_argument, NULL, 'E' },
		{ "top-k", required_argument, NULL, 'K' },
		{ "expert-layer", required_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc, li = 0;

	o->method = "POST";
	o->path = "/v1/walk-ffn";
	o->wire = LC_F32;
	o->req_wire = LC_F32;
	o->seq_len = 1;
	o->seed = 1;
	o->nlayers = 1;
	o->x.route = -1;
	o->x.top_k = 8;
	o->x.nlayers = 1;
	lg.npool = 1;
	lg.nconns = 16;
	/* 198.19.0.0/16: off-link from the 198.18.x.0/24 test networks */
	lg.flood_net_be = rte_cpu_to_be_32(0xc6130000u);
	lg.flood_mask_be = rte_cpu_to_be_32(0xffff0000u);
	lg.warmup_ns = 1000000000ull;
	lg.duration_ns = 5000000000ull;
	lg.timeout_ns = 5000000000ull;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, &li)) != -1) {
		rc = parse_opt(c, optarg, o);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			/* only long options take a value: li names it */
			fprintf(stderr, "ffn-loadgen: --%s: bad value \"%s\"\n",
				lo[li].name, optarg);
			return -EINVAL;
		}
	}
	if (optind < argc || lg.nports == 0) {
		fprintf(stderr, "ffn-loadgen: %s\n", optind < argc ?
			"unexpected argument" : "--ip is required");
		usage();
		return -EINVAL;
	}
	return check_targets(o);
}

/* xorshift32: reproducible inputs from --seed, in [-1, 1). */
static float *
make_input(uint32_t seed, size_t n)
{
	float *x = malloc(n * sizeof(*x));
	uint32_t s = seed ? seed : 0x9e3779b9u;

	if (x == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		x[i] = (float)((double)s / 2147483648.0 - 1.0);
	}
	return x;
}

static int
build_requests(struct opts *o)
{
	struct lg_req_spec sp = {
		.method = o->method, .path = o->path,
		.req_fmt = o->req_wire, .resp_fmt = o->wire,
		.seq_len = o->seq_len, .hidden = o->hidden,
	};
	float *x = make_input(o->seed, (size_t)o->seq_len * o->hidden);
	int rc = 0;

	if (x == NULL)
		return -ENOMEM;
	sp.x = x;
	if (lg.fanout) {
		lg.sreq = calloc(lg.nsteps, sizeof(*lg.sreq));
		for (uint32_t l = 0; lg.sreq && rc == 0 && l < lg.nsteps; l++) {
			sp.layers = &l;
			sp.nlayers = 1;
			rc = lg_build_req(&lg.sreq[l], &sp, lg.step_conn[l]);
		}
	} else {
		lg.nsteps = 1;
		lg.treq = calloc(lg.ntargets, sizeof(*lg.treq));
		sp.layers = o->layers;
		sp.nlayers = o->nlayers;
		for (unsigned int t = 0; lg.treq && rc == 0 &&
		     t < lg.ntargets; t++)
			rc = lg_build_req(&lg.treq[t], &sp, t);
	}
	free(x);
	if ((lg.fanout ? (void *)lg.sreq : (void *)lg.treq) == NULL)
		return -ENOMEM;
	return rc;
}

/* --verify-body: a reference per binary request; --body-ref fills them
 * all (every target serves the same model: same input, same answer). */
static int
attach_refs(const struct opts *o)
{
	struct lg_req *reqs = lg.fanout ? lg.sreq : lg.treq;
	unsigned int n = lg_nreqs();
	uint8_t *file = NULL;
	long flen = 0;

	if (!lg.verify && o->save_body == NULL)
		return 0;
	if (!reqs[0].binary) {
		fprintf(stderr, "ffn-loadgen: --verify-body, --body-ref and "
			"--save-body need POST /v1/walk-ffn or "
			"--experts-route\n");
		return -EINVAL;
	}
	if (o->body_ref != NULL) {
		FILE *fp = fopen(o->body_ref, "rb");

		if (fp == NULL || fseek(fp, 0, SEEK_END) < 0 ||
		    (flen = ftell(fp)) < 0 ||
		    (uint64_t)flen != reqs[0].frame.body_len ||
		    fseek(fp, 0, SEEK_SET) < 0 ||
		    (file = malloc((size_t)flen)) == NULL ||
		    fread(file, 1, (size_t)flen, fp) != (size_t)flen) {
			fprintf(stderr, "ffn-loadgen: --body-ref %s: %s "
				"(%ld bytes; the answer is %" PRIu64 ")\n",
				o->body_ref, fp == NULL ? strerror(errno) :
				"not a whole answer", flen,
				reqs[0].frame.body_len);
			if (fp != NULL)
				fclose(fp);
			free(file);
			return -EINVAL;
		}
		fclose(fp);
	}
	for (unsigned int i = 0; i < n; i++) {
		struct lg_ref *r = calloc(1, sizeof(*r));

		if (r == NULL || (r->bytes = malloc(reqs[i].frame.body_len))
				 == NULL) {
			free(r);
			free(file);
			return -ENOMEM;
		}
		r->len = reqs[i].frame.body_len;
		if (file != NULL) {
			memcpy(r->bytes, file, r->len);
			r->set = true;
		}
		reqs[i].ref = r;
	}
	free(file);
	return 0;
}

static int
save_body(const char *path)
{
	const struct lg_ref *r = NULL;
	FILE *fp;

	/* The references are per lcore (and agree: check_refs). */
	for (unsigned int i = 0; i < lg.nworkers && (r == NULL || !r->set);
	     i++)
		r = (lg.fanout ? lg.w[i]->sreq : lg.w[i]->treq)[0].ref;

	if (r == NULL || !r->set) {
		fprintf(stderr, "ffn-loadgen: --save-body %s: no valid answer"
			" was received\n", path);
		return -ENOENT;
	}
	fp = fopen(path, "wb");
	if (fp == NULL || fwrite(r->bytes, 1, r->len, fp) != r->len ||
	    fclose(fp) != 0) {
		fprintf(stderr, "ffn-loadgen: --save-body %s: %s\n", path,
			strerror(errno));
		return -EIO;
	}
	return 0;
}

/* What only w's lcore writes: zeroed, cache-line aligned (no line shared
 * with another lcore's), on its NUMA node. */
static void *
w_zalloc(const struct lg_worker *w, size_t size)
{
	return rte_zmalloc_socket("lg_worker", size, RTE_CACHE_LINE_SIZE,
				  (int)rte_lcore_to_socket_id(w->lcore_id));
}

/* w's own copy of the prepared requests: the same bytes, its own
 * --verify-body references (a copy of --body-ref's, if given), so that
 * no lcore writes what another reads. */
static int
worker_reqs(struct lg_worker *w)
{
	struct lg_req *src = lg.fanout ? lg.sreq : lg.treq;
	unsigned int n = lg_nreqs();
	struct lg_req *dst = src;

	if (w->idx > 0) {
		dst = w_zalloc(w, n * sizeof(*dst));
		if (dst == NULL)
			return -ENOMEM;
		memcpy(dst, src, n * sizeof(*dst));
		for (unsigned int i = 0; i < n; i++) {
			const struct lg_ref *o = src[i].ref;
			struct lg_ref *r;

			if (o == NULL)
				continue;
			r = w_zalloc(w, sizeof(*r));
			if (r == NULL || (r->bytes = w_zalloc(w, o->len)) ==
					 NULL)
				return -ENOMEM;
			r->len = o->len;
			r->set = o->set;
			if (o->set)
				memcpy(r->bytes, o->bytes, o->len);
			dst[i].ref = r;
		}
	}
	if (lg.fanout)
		w->sreq = dst;
	else
		w->treq = dst;
	return 0;
}

/* --connections and --rate split over the lcores: worker i gets clients
 * [N*i/W, N*(i+1)/W) and R/W tokens/s; client g talks to target g % T
 * as with one lcore. */
static int
make_clients(void)
{
	unsigned int per = lg.fanout ? lg.ntargets : 1;

	if (lg.nconns < lg.nworkers) {
		fprintf(stderr, "ffn-loadgen: --connections %u: fewer than "
			"the %u lcores\n", lg.nconns, lg.nworkers);
		return -EINVAL;
	}
	if (lg.nactive > lg.nconns || (lg.nactive > 0 && lg.rate > 0) ||
	    (lg.nactive > 0 && lg.nactive < lg.nworkers)) {
		fprintf(stderr, "ffn-loadgen: --active %u: at most "
			"--connections (%u), at least one per lcore (%u), "
			"closed loop only\n", lg.nactive, lg.nconns,
			lg.nworkers);
		return -EINVAL;
	}
	lg.nclients = lg.nconns;
	for (unsigned int wi = 0; wi < lg.nworkers; wi++) {
		struct lg_worker *w = lg.w[wi];
		unsigned int first = (unsigned int)((uint64_t)lg.nconns * wi /
						    lg.nworkers);
		unsigned int last = (unsigned int)((uint64_t)lg.nconns *
						   (wi + 1) / lg.nworkers);
		unsigned int act;

		if (worker_reqs(w) < 0)
			return -ENOMEM;
		w->rate = lg.rate / lg.nworkers;
		w->flood_period = lg.flood_rate > 0 ?
			(uint64_t)(1e9 * lg.nworkers / lg.flood_rate) : 0;
		w->nclients = last - first;
		w->clients = w_zalloc(w, w->nclients * sizeof(*w->clients));
		w->idle = w_zalloc(w, w->nclients * sizeof(*w->idle));
		if (w->clients == NULL || w->idle == NULL)
			return -ENOMEM;
		/* --active: the same split; the rest of its clients hold. */
		act = lg.nactive == 0 ? w->nclients :
			(unsigned int)((uint64_t)lg.nactive * (wi + 1) /
				       lg.nworkers -
				       (uint64_t)lg.nactive * wi / lg.nworkers);
		for (unsigned int i = 0; i < w->nclients; i++) {
			struct lg_client *cl = &w->clients[i];

			cl->id = i;
			cl->held = i >= act;
			cl->nconn = per;
			cl->conn = w_zalloc(w, per * sizeof(*cl->conn));
			if (cl->conn == NULL)
				return -ENOMEM;
			for (unsigned int j = 0; j < per; j++) {
				const struct lg_req *q = lg.fanout ?
					&w->sreq[0] : &w->treq[0];

				/* Every request of a run has the same body
				 * length. */
				if (q->ref != NULL && (cl->conn[j].cap =
				    w_zalloc(w, q->ref->len)) == NULL)
					return -ENOMEM;
				cl->conn[j].cl = cl;
				cl->conn[j].target = lg.fanout ? j :
					(first + i) % lg.ntargets;
				cl->conn[j].bad = -1;
			}
			if (lg.rate > 0)
				w->idle[w->nidle++] = i;
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o;
	uint64_t errs;
	int rc;

	memset(&o, 0, sizeof(o));
	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		fprintf(stderr, "ffn-loadgen: rte_eal_init failed: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	argc -= rc;
	argv += rc;
	if (parse_args(argc, argv, &o) < 0)
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (lg_ports_start() < 0)
		return 1;
	/* Every lcore needs a client of its own (make_clients). */
	if (lg.nconns < lg.nworkers) {
		fprintf(stderr, "ffn-loadgen: --connections %u: fewer than "
			"the %u lcores\n", lg.nconns, lg.nworkers);
		return 1;
	}
	if (lg_wait_links(10000) < 0) {
		fprintf(stderr, "ffn-loadgen: link down after 10 s\n");
		return 1;
	}
	/* Every target's next hop resolved before the clients start
	 * (lg_setup.h). */
	lg_prime_targets((unsigned int)(lg.timeout_ns / 1000000ull));
	if (strcmp(o.method, "POST") == 0 && o.hidden == 0) {
		uint32_t layers = 0;

		rc = lg_fetch_stats(0, &o.hidden, &layers, 5000);
		if (rc < 0) {
			fprintf(stderr, "ffn-loadgen: GET /v1/stats from the "
				"first target: %s (give --hidden)\n",
				strerror(-rc));
			return 1;
		}
		printf("ffn-loadgen: /v1/stats: hidden_size %u, layers %u\n",
		       o.hidden, layers);
	}
	if (o.x.route >= 0) {
		o.x.wire = o.wire;
		o.x.hidden = o.hidden;
		o.x.seed = o.seed;
		rc = lg_expert_prepare(&o.x);
	} else {
		rc = build_requests(&o);
	}
	if (rc < 0) {
		fprintf(stderr, "ffn-loadgen: preparing requests: %s\n",
			strerror(-rc));
		return 1;
	}
	if (attach_refs(&o) < 0)
		return 1;
	rc = make_clients();
	if (rc < 0) {
		if (rc == -ENOMEM)
			fprintf(stderr, "ffn-loadgen: out of memory for "
				"clients\n");
		return 1;
	}
	if (o.x.route >= 0)
		printf("ffn-loadgen: %u connections, %s, POST %s, answer %s, "
		       "top-k %u of %u experts, %u requests per target of "
		       "%u bytes, %u target(s)\n", lg.nclients,
		       lg.rate > 0 ? "open loop" : "closed loop",
		       lg_expert_path(o.x.route),
		       lc_fmt_name((enum lc_fmt)lg_expert_answer_fmt(o.x.route,
							       o.wire)),
		       o.x.top_k, o.x.num_experts, lg.npool, lg.treq[0].len,
		       lg.ntargets);
	else
		printf("ffn-loadgen: %u %s, %s, %s %s, wire %s/%s, seq_len %u, "
		       "request %u bytes, %u target(s)\n", lg.nclients,
		       lg.fanout ? "fan-out clients" : "connections",
		       lg.rate > 0 ? "open loop" : "closed loop", o.method, o.path,
		       lc_fmt_name(o.req_wire), lc_fmt_name(o.wire), o.seq_len,
		       lg.fanout ? lg.sreq[0].len : lg.treq[0].len, lg.ntargets);
	fflush(stdout);
	if (lg_run(&errs) < 0)
		return 1;
	if (o.save_body != NULL && save_body(o.save_body) < 0)
		return 1;
	return lg_signal ? 130 : errs ? 3 : 0;
}
