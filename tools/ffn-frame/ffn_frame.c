/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * ffn-frame: the appliance's request pipeline, offline. Reads a request
 * body on stdin, runs exactly the code the server runs (lib/shard:
 * route, decode, validate, compute, narrow, frame), writes the response
 * body to stdout and "STATUS CONTENT-TYPE" as the last line on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http.h"
#include "shard.h"

static void
usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s --model DIR [--layers A-B] [--content-type CT]\n"
		"          [--accept A] [--i8-enable] [--f16-disable]\n"
		"          [--path P] [--api-key K --authorization V]\n"
		"          [--q6k-layout private|ggml] [--kq-q8k]\n"
		"          [--experts A-B | --expert-units FILE] [--no-dense]\n"
		"          [--no-f16-guard]\n"
		"          < body > response-body\n"
		"Runs one request through the appliance's pipeline. The last\n"
		"line on stderr is \"STATUS CONTENT-TYPE\". Environment:\n"
		"LARQL_I8_WIRE, LARQL_F16_WIRE_DISABLE (spec/wire.md §5.1).\n",
		argv0);
}

/* One decimal number of at most 9 digits at *s, advancing *s; -1: none. */
static int
parse_num(const char **s)
{
	int v = 0, n = 0;

	while (**s >= '0' && **s <= '9' && n < 9) {
		v = v * 10 + (**s - '0');
		(*s)++;
		n++;
	}
	return n == 0 || (**s >= '0' && **s <= '9') ? -1 : v;
}

/*
 * --layers "A-B" or "A" (0 <= A <= B), and nothing else: "1-" or "1-2x"
 * must not quietly mean something the operator did not write.
 */
static int
parse_layers(const char *arg, int *first, int *last)
{
	const char *s = arg;
	int a = parse_num(&s), b = a;

	if (a < 0)
		return -1;
	if (*s == '-') {
		s++;
		b = parse_num(&s);
	}
	if (b < a || *s != '\0')
		return -1;
	*first = a;
	*last = b;
	return 0;
}

static uint8_t *
read_all(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	uint8_t *p = malloc(cap);

	while (p != NULL) {
		size_t got = fread(p + n, 1, cap - n, f);

		n += got;
		if (got == 0)
			break;
		if (n == cap) {
			uint8_t *np = realloc(p, cap * 2);

			if (np == NULL) {
				free(p);
				return NULL;
			}
			p = np;
			cap *= 2;
		}
	}
	*len = n;
	return p;
}

static int
write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n > 0) {
		ssize_t w = write(fd, b, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* What the command line asks for. */
struct frame_opts {
	struct shard_unit_conf uc;
	const char *ct, *accept, *path, *auth;
	int kq_q8k;
	struct ffn_moe_own own;		/* --experts / --expert-units */
};

/* One option into f; 0, or the exit code. */
static int
parse_opt(int c, const char *argv0, struct frame_opts *f)
{
	switch (c) {
	case 'm': f->uc.model_dir = optarg; break;
	case 'l':
		if (parse_layers(optarg, &f->uc.first_layer,
				 &f->uc.last_layer) < 0) {
			fprintf(stderr, "ffn-frame: --layers \"%s\": "
				"expected A-B with 0 <= A <= B\n", optarg);
			return 2;
		}
		break;
	case 'c': f->ct = optarg; break;
	case 'a': f->accept = optarg; break;
	case 'i': f->uc.wire.i8 = true; break;
	case 'f': f->uc.wire.f16 = false; break;
	case 'p': f->path = optarg; break;
	case 'k': f->uc.api_key = optarg; break;
	case 'A': f->auth = optarg; break;
	case 'q':
		if (strcmp(optarg, "ggml") != 0 &&
		    strcmp(optarg, "private") != 0) {
			fprintf(stderr, "ffn-frame: --q6k-layout \"%s\": "
				"expected private or ggml\n", optarg);
			return 2;
		}
		f->uc.q6k_ggml = strcmp(optarg, "ggml") == 0;
		break;
	case 'Q': f->kq_q8k = 1; break;
	case 'E':
	case 'U': {
		char why[256];
		int rc = c == 'E' ?
			 ffn_moe_own_range(&f->own, optarg, why, sizeof(why)) :
			 ffn_moe_own_units(&f->own, optarg, why, sizeof(why));

		if (f->uc.experts != NULL) {
			fprintf(stderr, "ffn-frame: --experts and "
				"--expert-units are mutually exclusive\n");
			return 2;
		}
		if (rc < 0) {
			fprintf(stderr, "ffn-frame: --%s \"%s\": %s\n",
				c == 'E' ? "experts" : "expert-units", optarg,
				why);
			return 2;
		}
		f->uc.experts = &f->own;
		break;
	}
	case 'D': f->uc.no_dense = true; break;
	case 'G': f->uc.f16_guard = false; break;
	case 'h': usage(argv0); exit(0);
	default: usage(argv0); return 2;
	}
	return 0;
}

/* The command line into f; 0, or the exit code. */
static int
parse_args(int argc, char **argv, struct frame_opts *f)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "layers", required_argument, NULL, 'l' },
		{ "content-type", required_argument, NULL, 'c' },
		{ "accept", required_argument, NULL, 'a' },
		{ "i8-enable", no_argument, NULL, 'i' },
		{ "f16-disable", no_argument, NULL, 'f' },
		{ "path", required_argument, NULL, 'p' },
		{ "api-key", required_argument, NULL, 'k' },
		{ "authorization", required_argument, NULL, 'A' },
		{ "q6k-layout", required_argument, NULL, 'q' },
		{ "kq-q8k", no_argument, NULL, 'Q' },
		{ "experts", required_argument, NULL, 'E' },
		{ "expert-units", required_argument, NULL, 'U' },
		{ "no-dense", no_argument, NULL, 'D' },
		{ "no-f16-guard", no_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	*f = (struct frame_opts){
		.uc = { .first_layer = -1, .last_layer = -1, .numa_node = -1,
			.name = "ffn-frame", .f16_guard = true },
		.path = "/v1/walk-ffn",
	};
	wire_opts_default(&f->uc.wire);
	wire_opts_apply_env(&f->uc.wire);
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1)
		if ((rc = parse_opt(c, argv[0], f)) != 0)
			return rc;
	if (optind < argc) {
		/* The body is read from stdin only (issue 2's synopsis). */
		fprintf(stderr, "ffn-frame: unexpected argument \"%s\": the "
			"request body is read from stdin\n", argv[optind]);
		return 2;
	}
	if (f->uc.model_dir == NULL) {
		usage(argv[0]);
		return 2;
	}
	return 0;
}

/* The request the server would have parsed; 0, or -errno reading stdin. */
static int
make_request(const struct frame_opts *f, struct shard_http_req *rq)
{
	int status = 0;

	memset(rq, 0, sizeof(*rq));
	rq->path = f->path;
	rq->path_len = strlen(f->path);
	/* The method the path's route takes (the route table says): POST
	 * unless that is a 405, then GET. */
	rq->method = HTTP_M_POST;
	if (shard_route(NULL, HTTP_M_POST, f->path, strlen(f->path),
			&status) == SHARD_R_NONE && status == 405)
		rq->method = HTTP_M_GET;
	rq->content_type = f->ct;
	rq->content_type_len = f->ct ? strlen(f->ct) : 0;
	rq->fmt_in = shard_req_fmt(f->ct, rq->content_type_len);
	rq->accept = f->accept;
	rq->accept_len = f->accept ? strlen(f->accept) : 0;
	rq->authorization = f->auth;
	rq->authorization_len = f->auth ? strlen(f->auth) : 0;
	if (rq->method == HTTP_M_POST) {
		rq->body = read_all(stdin, &rq->body_len);
		if (rq->body == NULL)
			return -(errno ? errno : ENOMEM);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static struct shard_unit unit;
	struct shard_http_req rq;
	struct frame_opts f;
	struct shard_resp resp;
	char err[512];
	int rc;

	rc = parse_args(argc, argv, &f);
	if (rc != 0)
		return rc;
	rc = shard_unit_init(&unit, &f.uc, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "ffn-frame: cannot load %s: %s\n",
			f.uc.model_dir, err);
		return 1;
	}
	ffn_moe_own_free(&f.own);	/* the unit keeps its copy */
	if (unit.model != NULL)
		ffn_model_set_kq_q8k(unit.model, f.kq_q8k);
	rc = make_request(&f, &rq);
	if (rc < 0) {
		fprintf(stderr, "ffn-frame: reading stdin: %s\n",
			strerror(-rc));
		return 1;
	}
	shard_handle(&unit, &rq, &resp, &shard_mem_heap, NULL, 0);
	for (unsigned int i = 0; i < resp.iovcnt; i++)
		if (write_all(STDOUT_FILENO, resp.iov[i].iov_base,
			      resp.iov[i].iov_len) < 0) {
			fprintf(stderr, "ffn-frame: write(stdout): %s\n",
				strerror(errno));
			return 1;
		}
	fprintf(stderr, "%d %s\n", resp.status,
		resp.content_type ? resp.content_type : "-");
	shard_resp_release(&resp);
	free((void *)rq.body);
	shard_unit_fini(&unit);
	return 0;
}
