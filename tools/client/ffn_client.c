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
"  --wire         response format asked for in Accept (default f32)\n"
"  --request-wire format of the request body (default f32)\n"
"  --hidden       else read from GET /v1/stats hidden_size\n"
"  --input        seq_len x hidden raw little-endian f32\n"
"  --out          write the decoded outputs, raw f32, results in order\n"
"  --verify       recompute locally; report max abs / relative error\n"
"  --max-err      with --verify: exit 3 when max|err|/max|ref| > R\n"
"  --json         use the JSON path (spec/wire.md §6, full output)\n"
"  --repeat       send the request N times on one kept-alive connection,\n"
"                 report wall/server latency min/p50/max; last is shown\n");
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

int
main(int argc, char **argv)
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *input = NULL, *out_path = NULL, *verify = NULL, *url;
	uint32_t layers[MAX_LAYERS], nlayers = 0, seq = 1, hidden = 0, i;
	int wire = LC_F32, rwire = LC_F32, batch = 0, have_seed = 0, c, rc;
	double max_err = -1, t0, wall, *walls, *srvs;
	unsigned repeat = 1, it;
	int json = 0;
	unsigned show = 8;
	struct lc_http_resp resp;
	struct lc_response dec;
	struct lc_http http;
	char err[512];
	uint8_t *body;
	ssize_t blen;
	float *x;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
		case 'L':
			/* Layer ids are u32 on the wire (§3); the top value
			 * is the batch marker. */
			rc = tool_opt_u32_list(T, c == 'l' ? "--layer" :
					       "--layers", optarg, 0,
					       LC_BATCH_MARKER - 1, layers,
					       MAX_LAYERS);
			if (rc < 0)
				return 2;
			nlayers = rc;
			break;
		case 'w':
			wire = opt_fmt("--wire");
			break;
		case 'r':
			rwire = opt_fmt("--request-wire");
			break;
		case 'b':
			batch = 1;
			break;
		case 's':
			seq = opt_u32("--seq-len", 1, UINT32_MAX);
			break;
		case 'H':
			hidden = opt_u32("--hidden", 1, UINT32_MAX);
			break;
		case 'i':
			input = optarg;
			break;
		case 'R': {
			uint64_t seed;

			if (tool_opt_u64(T, "--random", optarg, &seed) < 0)
				return 2;
			lc_rng_seed(&rng, seed);
			have_seed = 1;
			break;
		}
		case 'o':
			out_path = optarg;
			break;
		case 'v':
			verify = optarg;
			break;
		case 'e':
			if (tool_opt_double(T, "--max-err", optarg, 0, 1e300,
					    &max_err) < 0)
				return 2;
			break;
		case 'n':
			show = opt_u32("--show", 0, UINT32_MAX);
			break;
		case 'j':
			json = 1;
			break;
		case 'N':
			repeat = opt_u32("--repeat", 1, 1000000);
			break;
		case 'h':
			usage(stdout, 0);
			break;
		default:
			usage(stderr, 2);
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, T ": %s\n", optind >= argc ? "no URL given" :
			"one URL only, options before or after it");
		usage(stderr, 2);
	}
	if (nlayers == 0) {
		fprintf(stderr, T ": --layer or --layers is required\n");
		return 2;
	}
	if ((input == NULL) == !have_seed) {
		fprintf(stderr, T ": give exactly one of --input FILE and "
			"--random SEED\n");
		return 2;
	}
	url = argv[optind];
	if (lc_http_init(&http, url) < 0) {
		fprintf(stderr, "ffn-client: %s\n", http.err);
		return 1;
	}
	if (hidden == 0 && lc_http_stats(&http, &hidden, NULL) < 0) {
		fprintf(stderr, "ffn-client: %s\n", http.err);
		return 1;
	}
	x = malloc(sizeof(float) * ((size_t)seq * hidden + 1));
	if (x == NULL)
		return 1;
	if (input != NULL) {
		if (read_input(input, x, (size_t)seq * hidden) < 0)
			return 1;
	} else {
		for (i = 0; i < seq * hidden; i++)
			x[i] = lc_rng_normal(&rng);
	}
	if (json) {
		size_t jl;

		body = (uint8_t *)lc_json_request(layers, nlayers, seq, hidden,
						  x, &jl);
		blen = jl;
		rwire = LC_F32;	/* JSON carries the input exactly */
	} else {
		blen = 8 + 4 * nlayers + 12 +
			lc_payload_bytes(rwire, seq, hidden);
		body = malloc(blen);
		if (body != NULL)
			blen = lc_encode_request(body, blen, layers, nlayers,
						 batch, seq, hidden, x, rwire);
	}
	if (body == NULL)
		return 1;
	walls = calloc(repeat, sizeof(double));
	srvs = calloc(repeat, sizeof(double));
	if (walls == NULL || srvs == NULL)
		return 1;
	/* --repeat: the same request again over the kept-alive connection. */
	for (it = 0; it < repeat; it++) {
		if (it > 0)
			lc_response_free(&dec);
		t0 = lc_now_ms();
		rc = lc_http_request(&http, "POST", "/v1/walk-ffn",
				     json ? "application/json" :
				     lc_fmt_ctype(rwire),
				     json ? NULL : lc_fmt_accept(wire), body,
				     blen, &resp);
		walls[it] = lc_now_ms() - t0;
		if (rc < 0) {
			fprintf(stderr, "ffn-client: POST /v1/walk-ffn: %s\n",
				http.err);
			return 1;
		}
		if (resp.status != 200) {
			printf("status %d  content-type %s\n", resp.status,
			       resp.ctype);
			printf("body %.*s\n", (int)resp.body_len, resp.body);
			return 1;
		}
		if (json)
			rc = lc_json_decode(&dec, resp.body, resp.body_len, err,
					    sizeof(err));
		else
			rc = lc_decode_response(&dec, resp.body, resp.body_len,
						lc_fmt_of_ctype(resp.ctype),
						hidden, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "ffn-client: %s\n", err);
			return 1;
		}
		srvs[it] = dec.latency_ms;
	}
	wall = walls[repeat - 1];
	printf("status %d  content-type %s\n", resp.status, resp.ctype);
	if (!json && lc_fmt_of_ctype(resp.ctype) != (enum lc_fmt)wire)
		printf("note: asked for %s, server answered %s\n",
		       lc_fmt_name(wire),
		       lc_fmt_name(lc_fmt_of_ctype(resp.ctype)));
	if (repeat > 1) {
		qsort(walls, repeat, sizeof(double), cmp_double);
		qsort(srvs, repeat, sizeof(double), cmp_double);
		printf("repeat   %u requests on %s connection(s): wall min "
		       "%.3f p50 %.3f max %.3f ms; server p50 %.3f ms\n",
		       repeat, http.connects > 1 ? "several" : "one",
		       walls[0], walls[repeat / 2], walls[repeat - 1],
		       srvs[repeat / 2]);
	}
	printf("request  %s  %zu body bytes, %zu on the wire\n",
	       json ? "json" : lc_fmt_name(rwire), (size_t)blen, resp.req_len);
	printf("response %s  %zu body bytes, %zu on the wire  (%s %s, "
	       "%u results)\n", json ? "json" :
	       lc_fmt_name(lc_fmt_of_ctype(resp.ctype)),
	       resp.body_len, resp.head_len + resp.body_len,
	       dec.batch ? "batch" : "single", json ? "object" : "frame",
	       dec.n);
	printf("latency  server %.3f ms  wall %.3f ms\n", dec.latency_ms,
	       wall);
	for (i = 0; i < dec.n; i++) {
		struct lc_result *r = &dec.r[i];
		double n2 = 0, mx = 0;
		uint32_t k;

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
	if (out_path != NULL) {
		FILE *f = fopen(out_path, "wb");

		if (f == NULL) {
			fprintf(stderr, "ffn-client: open %s: %s\n", out_path,
				strerror(errno));
			return 1;
		}
		for (i = 0; i < dec.n; i++)
			fwrite(dec.r[i].values, 4, dec.r[i].num_values, f);
		if (fclose(f) != 0) {
			fprintf(stderr, "ffn-client: write %s: %s\n",
				out_path, strerror(errno));
			return 1;
		}
	}
	if (verify != NULL) {
		size_t m = (size_t)seq * hidden, k;
		double *ref = malloc(m * sizeof(double));
		double maxabs = 0, maxref = 0, maxrel_el = 0, e2 = 0, r2 = 0;
		float *xs = malloc(m * sizeof(float));
		struct vref v;

		if (ref == NULL || xs == NULL)
			return 1;
		if (vref_open(&v, verify, err, sizeof(err)) < 0) {
			fprintf(stderr, "ffn-client: --verify: %s\n", err);
			return 1;
		}
		/* Compare with the FFN of the input the server decoded. */
		lc_roundtrip(xs, x, seq, hidden, rwire);
		if (dec.n != nlayers) {
			fprintf(stderr, "ffn-client: %u results for %u "
				"layers\n", dec.n, nlayers);
			return 1;
		}
		for (i = 0; i < dec.n; i++) {
			if (dec.r[i].layer != layers[i] ||
			    dec.r[i].num_values != m) {
				fprintf(stderr, "ffn-client: result %u is "
					"layer %u with %u values, expected "
					"layer %u with %zu\n", i,
					dec.r[i].layer, dec.r[i].num_values,
					layers[i], m);
				return 1;
			}
			if (vref_ffn(&v, layers[i], xs, seq, ref, err,
				     sizeof(err)) < 0) {
				fprintf(stderr, "ffn-client: --verify: %s\n",
					err);
				return 1;
			}
			for (k = 0; k < m; k++) {
				double d = fabs(dec.r[i].values[k] - ref[k]);

				if (d > maxabs)
					maxabs = d;
				if (fabs(ref[k]) > maxref)
					maxref = fabs(ref[k]);
				if (fabs(ref[k]) > 1e-3 &&
				    d / fabs(ref[k]) > maxrel_el)
					maxrel_el = d / fabs(ref[k]);
				e2 += d * d;
				r2 += ref[k] * ref[k];
			}
		}
		printf("verify   max|err| %.3g  max|ref| %.6g  "
		       "max|err|/max|ref| %.3g  ||err||/||ref|| %.3g  "
		       "max elementwise rel (|ref|>1e-3) %.3g\n", maxabs, maxref,
		       maxref > 0 ? maxabs / maxref : maxabs,
		       r2 > 0 ? sqrt(e2 / r2) : sqrt(e2), maxrel_el);
		vref_close(&v);
		if (max_err >= 0 &&
		    !((maxref > 0 ? maxabs / maxref : maxabs) <= max_err)) {
			printf("verify   FAIL: above --max-err %g\n", max_err);
			return 3;
		}
		if (max_err >= 0)
			printf("verify   ok (--max-err %g)\n", max_err);
	}
	lc_response_free(&dec);
	lc_http_close(&http);
	free(http.buf);
	free(body);
	free(x);
	return 0;
}
