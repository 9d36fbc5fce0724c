/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * ffn-bench: accuracy of the narrowed wire formats as a real decode loop
 * (issue 5). A residual-stream model made of the shards' FFN layers:
 *
 *   h = E[token]; for each layer L: h += FFN_L(rmsnorm(h)) (remote call);
 *   logits = E . rmsnorm(h) (tied LM head); next token = argmax.
 *
 * Tokens already in the run's history are banned from the argmax (a
 * repetition ban): with a tied head and no attention, E[t] dominates h and
 * the walk would otherwise echo its first token forever.
 *
 * The f32 run is the baseline. Every other format is teacher-forced on the
 * f32 run's tokens, so each step compares the same inputs and the errors
 * do not compound through a diverged token stream; the top-1/top-K figures
 * say whether the format would have produced the same token.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "larql_client.h"
#include "tool_opt.h"
#include "vref.h"

#define MAX_SHARDS 64
#define MAX_LAYERS 1024
#define TOPK_MAX 64
#define RMS_EPS 1e-6

struct shard {
	uint32_t first, last;
	struct lc_http http;
};

struct run {
	enum lc_fmt fmt, rfmt;
	uint32_t *tokens;	/* [steps + 1] */
	uint32_t *top;		/* [steps][topk] */
	float *resid;		/* [steps][nl][H] after each layer */
	double *ynorm_max;	/* [nl] max |y| */
	uint64_t *y_over, *h_over;	/* [nl] values beyond f16 range */
	uint64_t *nonfin;	/* [nl] non-finite residual values */
	double *hnorm;		/* [nl] sum of |h| over steps */
	uint64_t body_bytes, wire_bytes, fallbacks;
	double wall_ms, server_ms;
};

static struct shard shards[MAX_SHARDS];
static unsigned nshards;
static uint32_t walk[MAX_LAYERS], nl, H, vocab, steps = 16, topk = 5;
static float *E;
static int synthetic;

static void
usage(FILE *f, int rc)
{
	fprintf(f,
"usage: ffn-bench --ffn 'A-B=URL[,C-D=URL...]' | --ffn URL\n"
"         [--model DIR] [--vocab V] [--seed S] [--token T] [--steps N]\n"
"         [--wire f32,f16,i8] [--request-wire same|f32|f16|i8]\n"
"         [--assert-topk-match K] [--hidden H]\n"
"  --model  use DIR/embeddings.bin [vocab, hidden] f32 as embeddings and\n"
"           tied LM head; else synthetic N(0,1) ones (--vocab, --seed)\n"
"  --request-wire  request body format (default: same as the response)\n"
"  --assert-topk-match K  exit 1 when a step's top-K set differs from f32\n");
	exit(rc);
}

#define T "ffn-bench"

/* An option's value, or exit 2 with tool_opt's message naming it. */
#define opt_u32(opt, min, max) \
	tool_opt_u32_or_exit(T, (opt), optarg, (min), (max))

static struct lc_rng rng;

/* "A-B=URL,C-D=URL" or one bare URL (all layers, from /v1/stats). */
static int
parse_layout(const char *spec)
{
	char *s = strdup(spec), *save = NULL, *item;
	uint32_t L;

	if (s == NULL)
		return -ENOMEM;
	for (item = strtok_r(s, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		struct shard *sh = &shards[nshards];
		char *eq = strchr(item, '=');
		const char *url = item;

		if (nshards == MAX_SHARDS) {
			fprintf(stderr, T ": --ffn: more than %u shards\n",
				MAX_SHARDS);
			goto bad;
		}
		sh->first = 0;
		sh->last = UINT32_MAX;
		if (eq != NULL) {
			char *dash = strchr(item, '-');

			*eq = '\0';
			url = eq + 1;
			if (dash != NULL)
				*dash = '\0';
			if (tool_opt_u32(T, "--ffn layer", item, 0,
					 MAX_LAYERS - 1, &sh->first) < 0 ||
			    tool_opt_u32(T, "--ffn layer", dash ? dash + 1 :
					 item, 0, MAX_LAYERS - 1,
					 &sh->last) < 0)
				goto bad;
			if (sh->last < sh->first) {
				fprintf(stderr, T ": --ffn: range %u-%u ends "
					"before it starts\n", sh->first,
					sh->last);
				goto bad;
			}
		}
		if (lc_http_init(&sh->http, url) < 0) {
			fprintf(stderr, "ffn-bench: %s\n", sh->http.err);
			goto bad;
		}
		nshards++;
	}
	free(s);
	if (nshards == 0) {
		fprintf(stderr, T ": --ffn: no shard given\n");
		return -EINVAL;
	}
	for (L = 0; L < MAX_LAYERS && nl < MAX_LAYERS; L++) {
		unsigned i;

		for (i = 0; i < nshards; i++)
			if (L >= shards[i].first && L <= shards[i].last)
				break;
		if (i < nshards && shards[i].last != UINT32_MAX)
			walk[nl++] = L;
	}
	return 0;
bad:
	free(s);
	return -EINVAL;
}

static struct shard *
shard_of(uint32_t L)
{
	unsigned i;

	for (i = 0; i < nshards; i++)
		if (L >= shards[i].first && L <= shards[i].last)
			return &shards[i];
	return NULL;
}

static void
rmsnorm(float *dst, const float *h)
{
	double s = 0;
	uint32_t i;

	for (i = 0; i < H; i++)
		s += (double)h[i] * h[i];
	s = 1.0 / sqrt(s / H + RMS_EPS);
	for (i = 0; i < H; i++)
		dst[i] = (float)(h[i] * s);
}

/*
 * Indices of the k largest logits, best first, skipping the nban tokens of
 * ban[] (the history, see the file comment).
 */
static void
top_tokens(const float *h, uint32_t *out, uint32_t k, const uint32_t *ban,
	   uint32_t nban)
{
	static double *logit;
	static float *xn;
	uint32_t v, i, j;

	if (logit == NULL) {
		logit = malloc(sizeof(double) * vocab);
		xn = malloc(sizeof(float) * H);
		if (logit == NULL || xn == NULL)
			abort();
	}
	rmsnorm(xn, h);
	for (v = 0; v < vocab; v++) {
		double s = 0;

		for (i = 0; i < H; i++)
			s += (double)E[(size_t)v * H + i] * xn[i];
		logit[v] = isnan(s) ? -INFINITY : s;
	}
	for (i = 0; i < nban; i++)
		logit[ban[i]] = -INFINITY;
	for (j = 0; j < k; j++) {
		uint32_t best = UINT32_MAX;

		for (v = 0; v < vocab; v++) {
			for (i = 0; i < j; i++)
				if (out[i] == v)
					break;
			if (i < j)
				continue;
			if (best == UINT32_MAX || logit[v] > logit[best])
				best = v;
		}
		out[j] = best;
	}
}

static int
ffn_remote(struct run *r, uint32_t L, const float *xn, float *y)
{
	static uint8_t *body;
	static size_t cap;
	struct shard *sh = shard_of(L);
	struct lc_http_resp resp;
	struct lc_response dec;
	char err[256];
	ssize_t blen;
	int rc;

	if (cap == 0) {
		cap = 64 + 4 * (size_t)H + 8;
		body = malloc(cap);
		if (body == NULL)
			return -ENOMEM;
	}
	blen = lc_encode_request(body, cap, &L, 1, 0, 1, H, xn, r->rfmt);
	if (blen < 0)
		return (int)blen;
	rc = lc_http_request(&sh->http, "POST", "/v1/walk-ffn",
			     lc_fmt_ctype(r->rfmt), lc_fmt_accept(r->fmt),
			     body, blen, &resp);
	if (rc < 0) {
		fprintf(stderr, "ffn-bench: layer %u: %s\n", L, sh->http.err);
		return rc;
	}
	if (resp.status != 200) {
		fprintf(stderr, "ffn-bench: layer %u: status %d %.*s\n", L,
			resp.status, (int)resp.body_len, resp.body);
		return -EPROTO;
	}
	if (lc_fmt_of_ctype(resp.ctype) != r->fmt)
		r->fallbacks++;
	rc = lc_decode_response(&dec, resp.body, resp.body_len,
				lc_fmt_of_ctype(resp.ctype), H, err,
				sizeof(err));
	if (rc < 0 || dec.n != 1 || dec.r[0].layer != L ||
	    dec.r[0].num_values != H) {
		fprintf(stderr, "ffn-bench: layer %u: %s\n", L,
			rc < 0 ? err : "unexpected result shape");
		lc_response_free(&dec);
		return -EBADMSG;
	}
	memcpy(y, dec.r[0].values, sizeof(float) * H);
	r->server_ms += dec.latency_ms;
	r->body_bytes += blen + resp.body_len;
	r->wire_bytes += resp.req_len + resp.head_len + resp.body_len;
	lc_response_free(&dec);
	return 0;
}

static int
run_model(struct run *r, const struct run *base)
{
	float *h = malloc(sizeof(float) * H), *xn = malloc(sizeof(float) * H);
	float *y = malloc(sizeof(float) * H);
	uint32_t s, j, i, nban;
	double t0;
	int rc = 0;

	if (h == NULL || xn == NULL || y == NULL)
		return -ENOMEM;
	for (s = 0; s < steps && rc == 0; s++) {
		uint32_t tok = base ? base->tokens[s] : r->tokens[s];

		t0 = lc_now_ms();
		memcpy(h, E + (size_t)tok * H, sizeof(float) * H);
		for (j = 0; j < nl && rc == 0; j++) {
			double n2 = 0;

			rmsnorm(xn, h);
			rc = ffn_remote(r, walk[j], xn, y);
			for (i = 0; i < H && rc == 0; i++) {
				if (fabsf(y[i]) > r->ynorm_max[j])
					r->ynorm_max[j] = fabsf(y[i]);
				if (!(fabsf(y[i]) <= LC_F16_MAX))
					r->y_over[j]++;
				h[i] += y[i];
				if (!(fabsf(h[i]) <= LC_F16_MAX))
					r->h_over[j]++;
				if (!isfinite(h[i]))
					r->nonfin[j]++;
				n2 += (double)h[i] * h[i];
			}
			r->hnorm[j] += sqrt(n2);
			memcpy(r->resid + ((size_t)s * nl + j) * H, h,
			       sizeof(float) * H);
		}
		if (rc < 0)
			break;
		/* Ban as much history as leaves topk candidates. */
		nban = s + 1 < vocab - topk ? s + 1 : vocab - topk;
		top_tokens(h, r->top + (size_t)s * topk, topk,
			   (base ? base->tokens : r->tokens) + s + 1 - nban,
			   nban);
		r->tokens[s + 1] = r->top[(size_t)s * topk];
		r->wall_ms += lc_now_ms() - t0;
	}
	free(h);
	free(xn);
	free(y);
	return rc;
}

static int
same_set(const uint32_t *a, const uint32_t *b, uint32_t k)
{
	uint32_t i, j;

	for (i = 0; i < k; i++) {
		for (j = 0; j < k; j++)
			if (a[i] == b[j])
				break;
		if (j == k)
			return 0;
	}
	return 1;
}

static uint32_t
overlap(const uint32_t *a, const uint32_t *b, uint32_t k)
{
	uint32_t i, j, n = 0;

	for (i = 0; i < k; i++)
		for (j = 0; j < k; j++)
			if (a[i] == b[j])
				n++;
	return n;
}

static struct run *
run_new(enum lc_fmt fmt, enum lc_fmt rfmt, uint32_t token)
{
	struct run *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->fmt = fmt;
	r->rfmt = rfmt;
	r->tokens = calloc(steps + 1, sizeof(*r->tokens));
	r->top = calloc((size_t)steps * topk, sizeof(*r->top));
	r->resid = calloc((size_t)steps * nl * H, sizeof(float));
	r->ynorm_max = calloc(nl, sizeof(double));
	r->hnorm = calloc(nl, sizeof(double));
	r->y_over = calloc(nl, sizeof(uint64_t));
	r->h_over = calloc(nl, sizeof(uint64_t));
	r->nonfin = calloc(nl, sizeof(uint64_t));
	if (!r->tokens || !r->top || !r->resid || !r->ynorm_max ||
	    !r->hnorm || !r->y_over || !r->h_over || !r->nonfin)
		return NULL;
	r->tokens[0] = token;
	return r;
}

/*
 * ||h - h32|| / ||h32|| after layer j at step s; +Inf when either side
 * holds a non-finite value (an f16 overflow propagates as Inf/NaN).
 */
static double
rel_err(const struct run *r, const struct run *b, uint32_t s, uint32_t j)
{
	const float *a = r->resid + ((size_t)s * nl + j) * H;
	const float *c = b->resid + ((size_t)s * nl + j) * H;
	double e2 = 0, n2 = 0;
	uint32_t i;

	for (i = 0; i < H; i++) {
		double d = (double)a[i] - c[i];

		e2 += d * d;
		n2 += (double)c[i] * c[i];
	}
	if (!isfinite(e2) || !isfinite(n2))
		return INFINITY;
	return n2 > 0 ? sqrt(e2 / n2) : sqrt(e2);
}

/* What the command line asks for (the model's sizes are globals). */
struct bench_opts {
	const char *layout, *model, *wires, *rwire;
	uint32_t seed, token, assert_k;
};

/* The command line into o and the globals; 0, or the exit code. */
static int
parse_args(int argc, char **argv, struct bench_opts *o)
{
	static const struct option opts[] = {
		{ "ffn", required_argument, NULL, 'f' },
		{ "model", required_argument, NULL, 'm' },
		{ "vocab", required_argument, NULL, 'V' },
		{ "seed", required_argument, NULL, 'S' },
		{ "token", required_argument, NULL, 't' },
		{ "steps", required_argument, NULL, 'n' },
		{ "wire", required_argument, NULL, 'w' },
		{ "request-wire", required_argument, NULL, 'r' },
		{ "assert-topk-match", required_argument, NULL, 'k' },
		{ "hidden", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	*o = (struct bench_opts){ .wires = "f32,f16,i8", .rwire = "same",
				  .seed = 1, .token = 1 };
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': o->layout = optarg; break;
		case 'm': o->model = optarg; break;
		case 'V': vocab = opt_u32("--vocab", 2, 1u << 24); break;
		case 'S': o->seed = opt_u32("--seed", 0, UINT32_MAX); break;
		case 't': o->token = opt_u32("--token", 0, UINT32_MAX); break;
		case 'n': steps = opt_u32("--steps", 1, 1u << 20); break;
		case 'w': o->wires = optarg; break;
		case 'r': o->rwire = optarg; break;
		case 'k':
			o->assert_k = opt_u32("--assert-topk-match", 1,
					      TOPK_MAX);
			break;
		case 'H': H = opt_u32("--hidden", 1, UINT32_MAX); break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc) {
		fprintf(stderr, T ": unexpected argument \"%s\"\n",
			argv[optind]);
		usage(stderr, 2);
	}
	if (o->layout == NULL) {
		fprintf(stderr, T ": --ffn is required\n");
		return 2;
	}
	if (strcmp(o->rwire, "same") != 0 && lc_fmt_parse(o->rwire) < 0) {
		fprintf(stderr, T ": --request-wire: \"%s\" is not same, f32, "
			"f16 or i8\n", o->rwire);
		return 2;
	}
	if (o->assert_k > topk)
		topk = o->assert_k;
	return 0;
}

/*
 * H (unless --hidden) and, for one bare URL, the walk over every layer,
 * from /v1/stats; every shard must serve the same model width. 0 or 1.
 */
static int
probe_shards(void)
{
	uint32_t model_layers = 0, j;
	unsigned i;

	if (H == 0 || nl == 0) {
		uint32_t h = 0;

		if (lc_http_stats(&shards[0].http, &h, &model_layers) < 0) {
			fprintf(stderr, "ffn-bench: %s\n",
				shards[0].http.err);
			return 1;
		}
		if (H == 0)
			H = h;
	}
	for (i = 0; i < nshards; i++) {
		uint32_t h = 0, nlay = 0;

		if (lc_http_stats(&shards[i].http, &h, &nlay) < 0) {
			fprintf(stderr, "ffn-bench: %s\n", shards[i].http.err);
			return 1;
		}
		if (h != H) {
			fprintf(stderr, "ffn-bench: shard %s:%s has hidden_size "
				"%u, expected %u\n", shards[i].http.host,
				shards[i].http.port, h, H);
			return 1;
		}
		if (model_layers == 0)
			model_layers = nlay;
	}
	if (nl == 0) {	/* one bare URL: every layer of the model */
		shards[0].last = model_layers ? model_layers - 1 : 0;
		for (j = 0; j < model_layers && j < MAX_LAYERS; j++)
			walk[nl++] = j;
	}
	return 0;
}

/* E: --model's embeddings.bin, else synthetic N(0,1) ones. 0 or 1. */
static int
load_embeddings(const char *model, uint32_t seed)
{
	char err[512];
	uint32_t s;

	if (model != NULL) {
		E = vref_embeddings(model, H, &vocab, err, sizeof(err));
		if (E == NULL && err[0]) {
			fprintf(stderr, "ffn-bench: %s\n", err);
			return 1;
		}
	}
	if (E == NULL) {
		synthetic = 1;
		if (vocab == 0)
			vocab = 512;
		E = malloc(sizeof(float) * vocab * H);
		if (E == NULL)
			return 1;
		lc_rng_seed(&rng, seed);
		for (s = 0; s < vocab * H; s++)
			E[s] = lc_rng_normal(&rng);
	}
	if (vocab < 2 * topk) {
		fprintf(stderr, "ffn-bench: vocab %u too small for top-%u\n",
			vocab, topk);
		return 1;
	}
	return 0;
}

/*
 * One run per format of --wire, f32 first (the baseline), into runs[];
 * *wl holds the list's copy. 0, or 2 for a format that is none.
 */
static int
make_runs(const struct bench_opts *o, uint32_t token, struct run **runs,
	  unsigned *nruns, char **wl)
{
	int same = strcmp(o->rwire, "same") == 0;
	char *w, *save = NULL;

	*wl = strdup(o->wires);
	runs[(*nruns)++] = run_new(LC_F32, same ? LC_F32 :
				   (enum lc_fmt)lc_fmt_parse(o->rwire), token);
	for (w = strtok_r(*wl, ",", &save); w != NULL;
	     w = strtok_r(NULL, ",", &save)) {
		int f = lc_fmt_parse(w), rf = same ? f : lc_fmt_parse(o->rwire);

		if (f < 0) {
			fprintf(stderr, T ": --wire: \"%s\" is not f32, f16 "
				"or i8\n", w);
			return 2;
		}
		if (f != LC_F32 && *nruns <= LC_FMT_COUNT)
			runs[(*nruns)++] = run_new(f, rf, token);
	}
	return 0;
}

/* Every run, the baseline first; 0 or 1. */
static int
run_all(struct run **runs, unsigned nruns)
{
	unsigned i;

	for (i = 0; i < nruns; i++) {
		if (runs[i] == NULL)
			return 1;
		if (run_model(runs[i], i ? runs[0] : NULL) < 0) {
			fprintf(stderr, "ffn-bench: %s run failed\n",
				lc_fmt_name(runs[i]->fmt));
			return 1;
		}
	}
	return 0;
}

/*
 * r's line of the format table against the baseline; with assert_k, a
 * line for each step whose top-K set differs. 1 if one did, else 0.
 */
static int
print_run(const struct run *r, const struct run *base, uint32_t assert_k)
{
	uint32_t t1 = 0, t5 = 0, ov = 0, k5 = topk < 5 ? topk : 5, s, j;
	double mx = 0, sum = 0;
	uint64_t nf = 0;
	int failed = 0;

	for (j = 0; j < nl; j++)
		nf += r->nonfin[j];
	for (s = 0; s < steps; s++) {
		const uint32_t *a = r->top + (size_t)s * topk;
		const uint32_t *b = base->top + (size_t)s * topk;

		t1 += a[0] == b[0];
		t5 += same_set(a, b, k5);
		ov += overlap(a, b, k5);
		for (j = 0; j < nl; j++) {
			double e = rel_err(r, base, s, j);

			mx = e > mx ? e : mx;
			sum += e;
		}
		if (assert_k && !same_set(a, b, assert_k)) {
			printf("  step %u: %s top-%u set differs from f32\n",
			       s, lc_fmt_name(r->fmt), assert_k);
			failed = 1;
		}
	}
	printf("%-6s %-4s %3u/%-3u %3u/%-3u %6.3f  %9.3g %9.3g %10.1f "
	       "%10.1f %11.3f %10.3f %10llu%s\n", lc_fmt_name(r->fmt),
	       lc_fmt_name(r->rfmt), t1, steps, t5, steps,
	       (double)ov / (steps * k5), mx, sum / (steps * nl),
	       (double)r->body_bytes / steps,
	       (double)r->wire_bytes / steps, r->wall_ms / steps,
	       r->server_ms / steps, (unsigned long long)nf,
	       r->fallbacks ? "  (server fell back: format not "
	       "enabled)" : "");
	return failed;
}

/* The per-layer table: the f32 run's magnitudes, each format's errors. */
static void
print_layers(struct run *const *runs, unsigned nruns)
{
	const struct run *base = runs[0];
	uint32_t s, j;
	unsigned i;

	printf("\nper layer: f32 mean |h|, f32 max |y|, values beyond f16 "
	       "range (y = FFN output, h = residual, f32 run), then each "
	       "format's relative residual error max/mean\n");
	printf("layer  mean|h|     max|y|      y>f16 h>f16");
	for (i = 1; i < nruns; i++)
		printf("  %-4s max/mean      ", lc_fmt_name(runs[i]->fmt));
	printf("\n");
	for (j = 0; j < nl; j++) {
		printf("%5u  %-10.4g  %-10.4g  %5llu %5llu", walk[j],
		       base->hnorm[j] / steps, base->ynorm_max[j],
		       (unsigned long long)base->y_over[j],
		       (unsigned long long)base->h_over[j]);
		for (i = 1; i < nruns; i++) {
			double mx = 0, sum = 0;

			for (s = 0; s < steps; s++) {
				double e = rel_err(runs[i], base, s, j);

				mx = e > mx ? e : mx;
				sum += e;
			}
			printf("  %9.3g/%-9.3g", mx, sum / steps);
			if (runs[i]->nonfin[j])
				printf(" !%llu non-finite", (unsigned long long)
				       runs[i]->nonfin[j]);
		}
		printf("%s\n", base->y_over[j] || base->h_over[j] ?
		       "  <- beyond f16 range" : "");
	}
}

int
main(int argc, char **argv)
{
	struct run *runs[LC_FMT_COUNT + 1];
	unsigned nruns = 0, i, failed = 0;
	struct bench_opts o;
	uint32_t token, s;
	char *wl = NULL;
	int rc;

	rc = parse_args(argc, argv, &o);
	if (rc != 0)
		return rc;
	if (parse_layout(o.layout) < 0)
		return 2;
	if (probe_shards() != 0 || load_embeddings(o.model, o.seed) != 0)
		return 1;
	token = o.token % vocab;
	printf("ffn-bench: %u shard(s), %u layers (%u-%u), hidden %u, vocab %u,"
	       " %s\n", nshards, nl, walk[0], walk[nl - 1], H, vocab,
	       synthetic ? "SYNTHETIC embeddings N(0,1) (tied LM head)" :
	       "REAL embeddings.bin of the vindex (tied LM head)");
	printf("steps %u from token %u; the f32 run feeds its argmax back; "
	       "other formats are teacher-forced on the f32 tokens\n", steps,
	       token);
	rc = make_runs(&o, token, runs, &nruns, &wl);
	if (rc != 0)
		return rc;
	if (run_all(runs, nruns) != 0)
		return 1;
	printf("\nformat req  top1    top5-set top5-ovl  max-rel   mean-rel  "
	       "body B/tok wire B/tok wall ms/tok srv ms/tok non-finite\n");
	for (i = 0; i < nruns; i++)
		failed |= print_run(runs[i], runs[0], o.assert_k);
	print_layers(runs, nruns);
	printf("\ntokens (f32):");
	for (s = 0; s <= steps && s < 32; s++)
		printf(" %u", runs[0]->tokens[s]);
	printf("\n");
	if (o.assert_k)
		printf("assert-topk-match %u: %s\n", o.assert_k,
		       failed ? "FAIL" : "ok");
	for (i = 0; i < nshards; i++)
		lc_http_close(&shards[i].http);
	free(wl);
	return failed ? 1 : 0;
}
