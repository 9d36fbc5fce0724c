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
#include <rte_launch.h>
#include <rte_lcore.h>

#include "larql_client.h"
#include "lg.h"
#include "lg_setup.h"

struct lg lg;
RTE_DEFINE_PER_LCORE(struct lg_worker *, lg_w);

/* The run's clock origin, shared by every worker (set before launch). */
static uint64_t run_start_ns;

static volatile sig_atomic_t got_signal;

static void
on_signal(int sig)
{
	got_signal = sig;
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

static int
parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "ip", required_argument, NULL, 'i' },
		{ "gw", required_argument, NULL, 'g' },
		{ "target", required_argument, NULL, 't' },
		{ "layout", required_argument, NULL, 'L' },
		{ "connections", required_argument, NULL, 'c' },
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->method = "POST";
	o->path = "/v1/walk-ffn";
	o->wire = LC_F32;
	o->req_wire = LC_F32;
	o->seq_len = 1;
	o->seed = 1;
	o->nlayers = 1;
	lg.nconns = 16;
	lg.warmup_ns = 1000000000ull;
	lg.duration_ns = 5000000000ull;
	lg.timeout_ns = 5000000000ull;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		char *arg = optarg, *slash, *end;
		uint32_t ip;
		uint16_t port;
		int t;

		switch (c) {
		case 'i': {
			unsigned long len;

			slash = strchr(arg, '/');
			if (slash == NULL || lg.nports == LG_MAX_PORTS)
				goto bad;
			*slash = '\0';
			len = strtoul(slash + 1, &end, 10);
			if (*end != '\0' || len < 1 || len > 32 ||
			    lg_parse_ipv4(arg, &lg.port[lg.nports].ip_be) < 0)
				goto bad;
			lg.port[lg.nports].mask_be =
				htonl(0xffffffffu << (32 - len));
			lg.port[lg.nports].port_id = (uint16_t)lg.nports;
			lg.nports++;
			break;
		}
		case 'g':
			if (lg.nports == 0 ||
			    lg_parse_ipv4(arg, &lg.port[lg.nports - 1].gw_be))
				goto bad;
			break;
		case 't':
			if (lg_parse_hostport(arg, &ip, &port) < 0 ||
			    (t = lg_add_target(ip, port)) < 0)
				goto bad;
			break;
		case 'L': o->layout = arg; break;
		case 'c':
			lg.nconns = (unsigned int)strtoul(arg, &end, 10);
			if (*end || lg.nconns == 0 || lg.nconns > 65536)
				goto bad;
			break;
		case 'r':
			lg.rate = strtod(arg, &end);
			if (*end || !(lg.rate > 0))
				goto bad;
			break;
		case 'w':
			if ((o->wire = lc_fmt_parse(arg)) < 0)
				goto bad;
			break;
		case 'W':
			if ((o->req_wire = lc_fmt_parse(arg)) < 0)
				goto bad;
			break;
		case 's':
			o->seq_len = (uint32_t)strtoul(arg, &end, 10);
			if (*end || o->seq_len == 0)
				goto bad;
			break;
		case 'l':
			if (parse_layers(arg, o->layers, &o->nlayers) < 0)
				goto bad;
			break;
		case 'H':
			o->hidden = (uint32_t)strtoul(arg, &end, 10);
			if (*end || o->hidden == 0)
				goto bad;
			break;
		case 'S': o->seed = (uint32_t)strtoul(arg, NULL, 10); break;
		case 'm': o->method = arg; break;
		case 'p': o->path = arg; break;
		case 'u': case 'd': case 'T': {
			double v = strtod(arg, &end);

			if (*end || v < 0 || (c != 'u' && v == 0))
				goto bad;
			if (c == 'u')
				lg.warmup_ns = (uint64_t)(v * 1e9);
			else if (c == 'd')
				lg.duration_ns = (uint64_t)(v * 1e9);
			else
				lg.timeout_ns = (uint64_t)(v * 1e6);
			break;
		}
		case 'V': lg.verify = true; break;
		case 'R': o->body_ref = arg; lg.verify = true; break;
		case 'B': o->save_body = arg; break;
		case 'h': usage(); exit(0);
		default: usage(); return -EINVAL;
		}
		continue;
bad:
		fprintf(stderr, "ffn-loadgen: --%s: bad value \"%s\"\n",
			lo[0].name ? argv[optind - 1] : "", optarg);
		return -EINVAL;
	}
	if (optind < argc || lg.nports == 0) {
		fprintf(stderr, "ffn-loadgen: %s\n", optind < argc ?
			"unexpected argument" : "--ip is required");
		usage();
		return -EINVAL;
	}
	if (o->layout != NULL) {
		int rc;

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
		if (o->body_ref != NULL) {
			fprintf(stderr, "ffn-loadgen: --body-ref is one answer"
				", a --layout walk gets one per layer\n");
			return -EINVAL;
		}
	} else if (lg.ntargets == 0) {
		fprintf(stderr, "ffn-loadgen: give --target or --layout\n");
		return -EINVAL;
	}
	return 0;
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
	unsigned int n = lg.fanout ? lg.nsteps : lg.ntargets;
	uint8_t *file = NULL;
	long flen = 0;

	if (!lg.verify && o->save_body == NULL)
		return 0;
	if (!reqs[0].binary) {
		fprintf(stderr, "ffn-loadgen: --verify-body, --body-ref and "
			"--save-body need POST /v1/walk-ffn\n");
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

/* w's own copy of the prepared requests: the same bytes, its own
 * --verify-body references (a copy of --body-ref's, if given), so that
 * no lcore writes what another reads. */
static int
worker_reqs(struct lg_worker *w)
{
	struct lg_req *src = lg.fanout ? lg.sreq : lg.treq;
	unsigned int n = lg.fanout ? lg.nsteps : lg.ntargets;
	struct lg_req *dst = src;

	if (w->idx > 0) {
		dst = calloc(n, sizeof(*dst));
		if (dst == NULL)
			return -ENOMEM;
		memcpy(dst, src, n * sizeof(*dst));
		for (unsigned int i = 0; i < n; i++) {
			const struct lg_ref *o = src[i].ref;
			struct lg_ref *r;

			if (o == NULL)
				continue;
			r = calloc(1, sizeof(*r));
			if (r == NULL || (r->bytes = malloc(o->len)) == NULL) {
				free(r);
				return -ENOMEM;
			}
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
	lg.nclients = lg.nconns;
	for (unsigned int wi = 0; wi < lg.nworkers; wi++) {
		struct lg_worker *w = lg.w[wi];
		unsigned int first = (unsigned int)((uint64_t)lg.nconns * wi /
						    lg.nworkers);
		unsigned int last = (unsigned int)((uint64_t)lg.nconns *
						   (wi + 1) / lg.nworkers);

		if (worker_reqs(w) < 0)
			return -ENOMEM;
		w->rate = lg.rate / lg.nworkers;
		w->nclients = last - first;
		w->clients = calloc(w->nclients, sizeof(*w->clients));
		w->idle = calloc(w->nclients, sizeof(*w->idle));
		if (w->clients == NULL || w->idle == NULL)
			return -ENOMEM;
		for (unsigned int i = 0; i < w->nclients; i++) {
			struct lg_client *cl = &w->clients[i];

			cl->id = i;
			cl->nconn = per;
			cl->conn = calloc(per, sizeof(*cl->conn));
			if (cl->conn == NULL)
				return -ENOMEM;
			for (unsigned int j = 0; j < per; j++) {
				const struct lg_req *q = lg.fanout ?
					&w->sreq[0] : &w->treq[0];

				/* Every request of a run has the same body
				 * length. */
				if (q->ref != NULL && (cl->conn[j].cap =
				    malloc(q->ref->len)) == NULL)
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

static double
ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static uint64_t
errors(const struct lg_stats *s)
{
	uint64_t n = 0;

	for (int e = 0; e < LG_E_COUNT; e++)
		n += s->err[e];
	return n;
}

/* Port i's TCP and net counters, summed over its queues' lcores (every
 * field of both is a uint64_t counter). */
static void
port_stats(unsigned int i, struct tcp_stats *ts, struct net_stats *ns)
{
	memset(ts, 0, sizeof(*ts));
	memset(ns, 0, sizeof(*ns));
	for (unsigned int wi = 0; wi < lg.nworkers; wi++) {
		struct tcp_stats t;
		struct net_stats n;
		uint64_t *dt = (uint64_t *)ts, *dn = (uint64_t *)ns;
		const uint64_t *st = (const uint64_t *)&t;
		const uint64_t *sn = (const uint64_t *)&n;

		tcp_stack_stats(lg.w[wi]->tcp[i], &t);
		net_lcore_stats(lg.w[wi]->lc[i], &n);
		for (size_t k = 0; k < sizeof(t) / sizeof(uint64_t); k++)
			dt[k] += st[k];
		for (size_t k = 0; k < sizeof(n) / sizeof(uint64_t); k++)
			dn[k] += sn[k];
	}
}

/* The merged counters of every lcore (after the run: each is final). */
static struct lg_stats m_win, m_all;

static void
stats_add(struct lg_stats *d, const struct lg_stats *s)
{
	d->requests += s->requests;
	d->tokens += s->tokens;
	d->validated += s->validated;
	d->bodies += s->bodies;
	if (s->body_worst > d->body_worst)
		d->body_worst = s->body_worst;
	d->sent += s->sent;
	d->bytes_in += s->bytes_in;
	d->bytes_out += s->bytes_out;
	for (int e = 0; e < LG_E_COUNT; e++)
		d->err[e] += s->err[e];
	for (int i = 0; i < 600; i++)
		d->status[i] += s->status[i];
	d->idle_closes += s->idle_closes;
	d->connects += s->connects;
	for (int t = 0; t < LG_MAX_TARGETS; t++)
		d->per_target[t] += s->per_target[t];
	lg_hist_merge(&d->req_lat, &s->req_lat);
	lg_hist_merge(&d->tok_lat, &s->tok_lat);
}

static void
stats_merge(void)
{
	memset(&m_win, 0, sizeof(m_win));
	memset(&m_all, 0, sizeof(m_all));
	lg_hist_reset(&m_win.req_lat);
	lg_hist_reset(&m_win.tok_lat);
	lg_hist_reset(&m_all.req_lat);
	lg_hist_reset(&m_all.tok_lat);
	for (unsigned int i = 0; i < lg.nworkers; i++) {
		stats_add(&m_win, &lg.w[i]->win);
		stats_add(&m_all, &lg.w[i]->all);
	}
}

/*
 * --verify-body: each lcore held its answers to its own reference (the
 * first valid answer it saw); those must agree with each other as
 * closely as answers with a reference, else one lcore's answers were all
 * wrong alike: a bad_body on that lcore.
 */
static void
check_refs(void)
{
	const struct lg_worker *w0 = lg.w[0];
	unsigned int n = lg.fanout ? lg.nsteps : lg.ntargets;

	for (unsigned int wi = 1; wi < lg.nworkers; wi++) {
		struct lg_worker *w = lg.w[wi];

		for (unsigned int i = 0; i < n; i++) {
			const struct lg_req *a = lg.fanout ? &w0->sreq[i] :
						 &w0->treq[i];
			const struct lg_req *b = lg.fanout ? &w->sreq[i] :
						 &w->treq[i];
			double worst = 0;

			if (a->ref == NULL || !a->ref->set || !b->ref->set)
				continue;
			if (lg_frame_values_close(&a->frame, a->ref->bytes,
						  b->ref->bytes, &worst) != 1) {
				fprintf(stderr, "ffn-loadgen: lcore %u's "
					"reference answer (request %u) is not "
					"lcore %u's\n", w->lcore_id, i,
					w0->lcore_id);
				w->all.err[LG_E_BODY]++;
				w->win.err[LG_E_BODY]++;
			}
		}
	}
}

static void
report(double secs)
{
	const struct lg_stats *w = &m_win;
	const struct lg_hist *h = &w->req_lat;

	printf("\n== ffn-loadgen: %.2f s measured, %s, %u %s", secs,
	       lg.rate > 0 ? "open loop" : "closed loop", lg.nclients,
	       lg.fanout ? "clients (fan-out)" : "connections");
	if (lg.nworkers > 1)
		printf(", %u lcores", lg.nworkers);
	printf(" ==\n");
	printf("requests   %" PRIu64 " (%.1f req/s)", w->requests,
	       (double)w->requests / secs);
	if (lg.fanout)
		printf(", tokens %" PRIu64 " (%.1f tokens/s, %u layers)",
		       w->tokens, (double)w->tokens / secs, lg.nsteps);
	printf("\n");
	printf("latency    p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  "
	       "max %.3f ms  (min %.3f, mean %.3f)\n",
	       ms(lg_hist_pct(h, 50)), ms(lg_hist_pct(h, 90)),
	       ms(lg_hist_pct(h, 99)), ms(lg_hist_pct(h, 99.9)), ms(h->max),
	       ms(h->count ? h->min : 0),
	       h->count ? ms(h->sum / h->count) : 0.0);
	if (lg.fanout) {
		const struct lg_hist *t = &w->tok_lat;

		printf("token      p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  "
		       "max %.3f ms\n", ms(lg_hist_pct(t, 50)),
		       ms(lg_hist_pct(t, 90)), ms(lg_hist_pct(t, 99)),
		       ms(lg_hist_pct(t, 99.9)), ms(t->max));
	}
	printf("bytes      out %" PRIu64 " (%.1f MB/s)  in %" PRIu64
	       " (%.1f MB/s)\n", w->bytes_out,
	       (double)w->bytes_out / secs / 1e6, w->bytes_in,
	       (double)w->bytes_in / secs / 1e6);
	printf("errors     window %" PRIu64 ", whole run %" PRIu64 ":",
	       errors(w), errors(&m_all));
	for (int e = 0; e < LG_E_COUNT; e++)
		printf(" %s=%" PRIu64, lg_err_name(e), m_all.err[e]);
	printf("\n");
	for (int s = 0; s < 600; s++)
		if (m_all.status[s])
			printf("status     %d: %" PRIu64 "\n", s,
			       m_all.status[s]);
	for (unsigned int t = 0; t < lg.ntargets; t++) {
		struct in_addr a = { .s_addr = lg.target[t].ip_be };

		printf("target     %s:%u requests %" PRIu64 "\n", inet_ntoa(a),
		       lg.target[t].port, w->per_target[t]);
	}
	printf("validated  %" PRIu64 " frames; connects %" PRIu64
	       ", idle closes by server %" PRIu64 "\n", w->validated,
	       m_all.connects, m_all.idle_closes);
	if (lg.verify)
		printf("bodies     %" PRIu64 " agree with the reference "
		       "answer; largest |diff| / row max %.3g\n", w->bodies,
		       w->body_worst);
	/* The stack's view: a latency outlier with retransmits or RTOs here
	 * is loss, without them it is the hosts. */
	for (unsigned int i = 0; i < lg.nports; i++) {
		struct tcp_stats ts;
		struct net_stats ns;
		uint64_t drops = 0;

		port_stats(i, &ts, &ns);
		for (int d = 0; d < TCP_DROP_MAX; d++)
			drops += ts.drops[d];
		printf("port %u     tcp retransmits %" PRIu64 " (rto %" PRIu64
		       ", fast %" PRIu64 "), resets in %" PRIu64 ", drops %"
		       PRIu64 "; net tx_full %" PRIu64 ", no_mbuf %" PRIu64
		       "\n", lg.port[i].port_id, ts.retransmits,
		       ts.rto_expired, ts.fast_retransmits, ts.resets_in,
		       drops, ns.drop_tx_full, ns.drop_no_mbuf);
		/* Which: duplicates after a spurious RTO are out_of_window,
		 * damaged frames checksum. */
		for (int d = 0; d < TCP_DROP_MAX; d++)
			if (ts.drops[d])
				printf("           drop %s %" PRIu64 "\n",
				       tcp_drop_reason_name(d), ts.drops[d]);
	}
	/* Each lcore's share: every one of them should carry load. */
	for (unsigned int i = 0; lg.nworkers > 1 && i < lg.nworkers; i++) {
		const struct lg_worker *lw = lg.w[i];

		printf("lcore %-4u queue %u: clients %u, requests %" PRIu64
		       ", connects %" PRIu64 ", errors %" PRIu64 "\n",
		       lw->lcore_id, lw->idx, lw->nclients, lw->win.requests,
		       lw->all.connects, errors(&lw->all));
	}
	/* One line for scripts. */
	printf("RESULT requests=%" PRIu64 " tokens=%" PRIu64 " validated=%"
	       PRIu64 " errors=%" PRIu64 " rps=%.1f p50_us=%.1f p99_us=%.1f"
	       " bodies=%" PRIu64 " max_us=%.1f\n", w->requests, w->tokens,
	       w->validated, errors(&m_all), (double)w->requests / secs,
	       lg_hist_pct(h, 50) / 1e3, lg_hist_pct(h, 99) / 1e3,
	       w->bodies, (double)h->max / 1e3);
	fflush(stdout);
}

/* The progress line: the main lcore reads every lcore's counters as they
 * run (plain 64-bit loads of counters only their lcore writes) and
 * reports what changed since the last line. */
static struct lg_hist prog_prev, prog_now, prog_sec;
static uint64_t prog_requests;

static void
progress(unsigned int sec, const char *phase)
{
	uint64_t requests = 0, errs = 0, backlog = 0;
	unsigned int up = 0, busy = 0;

	lg_hist_reset(&prog_now);
	for (unsigned int i = 0; i < lg.nworkers; i++) {
		const struct lg_worker *w = lg.w[i];

		lg_hist_merge(&prog_now, &w->run_lat);
		requests += w->all.requests;
		errs += errors(&w->all);
		up += lg_up(w);
		busy += lg_busy(w);
		backlog += w->backlog;
	}
	lg_hist_since(&prog_sec, &prog_now, &prog_prev);
	memcpy(&prog_prev, &prog_now, sizeof(prog_prev));
	printf("[%3us] %-7s %8" PRIu64 " req/s  p50 %.3f  p99 %.3f ms  "
	       "errors %" PRIu64 "  up %u  busy %u", sec, phase,
	       requests - prog_requests, ms(lg_hist_pct(&prog_sec, 50)),
	       ms(lg_hist_pct(&prog_sec, 99)), errs, up, busy);
	prog_requests = requests;
	/* Open loop: tokens due but not started (every client busy); their
	 * wait is in the latency, as it would be for real users. */
	if (lg.rate > 0)
		printf("  backlog %" PRIu64, backlog);
	printf("\n");
	fflush(stdout);
}

/*
 * One lcore's run over its queues and clients, from run_start_ns; the
 * main lcore's (worker 0) also prints the progress line.  Returns the end
 * of its measured window.
 */
static int
worker_run(void *arg)
{
	struct lg_worker *w = arg;
	uint64_t start = run_start_ns, warm_end = start + lg.warmup_ns;
	uint64_t end = warm_end + lg.duration_ns, next_hk = start;
	uint64_t next_sec = start + 1000000000ull;
	uint64_t period = w->rate > 0 ? (uint64_t)(1e9 / w->rate) : 0;
	/* The lcores' schedules interleave rather than coincide. */
	uint64_t next_sched = start + period * w->idx / lg.nworkers;
	bool main_lcore = w->idx == 0;
	uint64_t drain_end;
	unsigned int sec = 0;

	RTE_PER_LCORE(lg_w) = w;
	lg_hist_reset(&w->win.req_lat);
	lg_hist_reset(&w->win.tok_lat);
	lg_hist_reset(&w->run_lat);
	w->recording = lg.warmup_ns == 0;
	w->now = start;
	if (lg.rate == 0)
		for (unsigned int i = 0; i < w->nclients; i++)
			lg_client_start(&w->clients[i], start);
	while (!got_signal) {
		uint64_t now = net_now_ns();

		lg_poll_all(now);
		now = w->now = net_now_ns();
		if (!w->recording && !w->stopping && now >= warm_end) {
			/* The window starts: forget the warm-up. */
			memset(&w->win, 0, sizeof(w->win));
			lg_hist_reset(&w->win.req_lat);
			lg_hist_reset(&w->win.tok_lat);
			w->recording = true;
		}
		if (now >= end)
			break;
		/* Open loop: every due token starts as soon as a client is
		 * free, stamped with its schedule, so queueing counts. */
		while (period && next_sched <= now && w->nidle > 0) {
			lg_client_start(&w->clients[w->idle[--w->nidle]],
					next_sched);
			next_sched += period;
		}
		if (now >= next_hk) {
			lg_housekeep(now);
			next_hk = now + 1000000ull;
			w->backlog = period == 0 || next_sched > now ? 0 :
				     (now - next_sched) / period + 1;
		}
		if (main_lcore && now >= next_sec) {
			/* A second that began before the window: warm-up. */
			progress(++sec, next_sec - 1000000000ull < warm_end ?
				 "warmup" : "measure");
			next_sec += 1000000000ull;
		}
	}
	w->end_ns = RTE_MIN(net_now_ns(), end);
	w->recording = false;
	w->stopping = true;
	/* Let outstanding requests finish (not counted), then close. */
	drain_end = net_now_ns() + RTE_MIN(lg.timeout_ns, 2000000000ull);
	while (!got_signal && lg_busy(w) > 0 && net_now_ns() < drain_end)
		lg_poll_all(net_now_ns());
	lg_close_all();
	drain_end = net_now_ns() + 100000000ull;
	while (net_now_ns() < drain_end)
		lg_poll_all(net_now_ns());
	return 0;
}

static void
run(void)
{
	uint64_t warm_end;
	unsigned int i;

	lg_hist_reset(&prog_prev);
	run_start_ns = net_now_ns();
	warm_end = run_start_ns + lg.warmup_ns;
	for (i = 1; i < lg.nworkers; i++)
		if (rte_eal_remote_launch(worker_run, lg.w[i],
					  lg.w[i]->lcore_id) != 0)
			fprintf(stderr, "ffn-loadgen: lcore %u did not start"
				"\n", lg.w[i]->lcore_id);
	worker_run(lg.w[0]);
	rte_eal_mp_wait_lcore();
	check_refs();
	stats_merge();
	/* Interrupted runs report the part of the window they measured. */
	report(lg.w[0]->end_ns > warm_end ?
	       (double)(lg.w[0]->end_ns - warm_end) / 1e9 : 1e-9);
}

int
main(int argc, char **argv)
{
	struct opts o;
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
	if (lg_wait_links(10000) < 0) {
		fprintf(stderr, "ffn-loadgen: link down after 10 s\n");
		return 1;
	}
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
	rc = build_requests(&o);
	if (rc < 0) {
		fprintf(stderr, "ffn-loadgen: preparing requests: %s\n",
			strerror(-rc));
		return 1;
	}
	if (attach_refs(&o) < 0)
		return 1;
	if (make_clients() < 0) {
		fprintf(stderr, "ffn-loadgen: out of memory for clients\n");
		return 1;
	}
	printf("ffn-loadgen: %u %s, %s, %s %s, wire %s/%s, seq_len %u, "
	       "request %u bytes, %u target(s)\n", lg.nclients,
	       lg.fanout ? "fan-out clients" : "connections",
	       lg.rate > 0 ? "open loop" : "closed loop", o.method, o.path,
	       lc_fmt_name(o.req_wire), lc_fmt_name(o.wire), o.seq_len,
	       lg.fanout ? lg.sreq[0].len : lg.treq[0].len, lg.ntargets);
	fflush(stdout);
	run();
	if (o.save_body != NULL && save_body(o.save_body) < 0)
		return 1;
	return got_signal ? 130 : errors(&m_all) ? 3 : 0;
}
