/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * mkvindex: write a synthetic LARQL vindex (spec/vindex.md) for tests,
 * demos and benchmarks. Deterministic by --seed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_opt.h"
#include "vindex_write.h"
#include "mkvindex_q4k.h"
#include "vindex_write_moe.h"

#define MAX_LAYERS 4096
#define T "mkvindex"

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [options] DIR\n"
		"  --hidden N          hidden size (default 64)\n"
		"  --intermediate N    FFN width of every layer (default 128)\n"
		"  --widths A,B,...    per-layer FFN widths (sets --layers)\n"
		"  --layers N          layer count (default 2)\n"
		"  --dtype f32|f16     index.json dtype (default f32)\n"
		"  --layout feature-major|interleaved|dense\n"
		"                      spec/vindex.md §2.1 / §2.2 / §2.3\n"
		"  --family llama|gemma3|gemma4  model_type (SiLU / GELU-tanh)\n"
		"  --model-type S      any model_config.model_type\n"
		"  --seed N            RNG seed (default 1)\n"
		"  --vocab N           also write embeddings.bin [N, hidden] f32\n"
		"  --example           the hand-checkable model of vindex.md §3\n"
		"  --quant none|q4k    q4k: K-quant payload of vindex.md §2.4\n"
		"  --q6k-layout private|ggml  Q6_K arrangement of down (q4k)\n"
		"  --down-q4k          q4k: down in Q4_K instead of Q6_K\n"
		"  --down-scale S      down times S (default 1): answers past\n"
		"                      f16's range for the precision guard\n"
		"hybrid MoE (spec/moe.md §5; family gemma4 unless --family or\n"
		"--model-type; the dense FFN is the q4k payload):\n"
		"  --experts E         experts per layer: turns the MoE on\n"
		"  --expert-width I    moe_intermediate_size (default 32)\n"
		"  --expert-quant q4k|f32  LYRW tag 4 or 0 (default q4k)\n"
		"  --expert-layers A-B layers with a layer file (default all)\n"
		"  --top-k K           model_config.moe.top_k (default 2)\n"
		"  --no-dense          expert-only: \"layers\": [], no dense FFN\n"
		"  --example-moe       the Q4_K example of spec/moe.md §6\n"
		"  --example-moe-f32   its F32 variant\n",
		prog);
}

/* Long options without a short letter. */
enum {
	OPT_EXPERTS = 256,
	OPT_EXPERT_WIDTH,
	OPT_EXPERT_QUANT,
	OPT_EXPERT_LAYERS,
	OPT_TOP_K,
	OPT_NO_DENSE,
	OPT_EXAMPLE_MOE,
	OPT_EXAMPLE_MOE_F32,
	OPT_DOWN_SCALE,		/* not an expert option: handled before */
};

/* What the command line asks for. */
struct mk_args {
	struct vw_opts o;
	struct vw_q4k_opts kq;
	struct vw_moe_opts moe;
	int q4k;
	unsigned n_widths, n_layers;	/* as given, 0: not given */
	int family_set;			/* --family or --model-type given */
	const char *moe_opt;		/* an expert option given, or NULL */
	int layers_set;			/* --expert-layers given */
	int top_k_set;
	int example_moe;		/* 0, or VW_LYRW_Q4K + 1 / F32 + 1 */
};

static unsigned widths[MAX_LAYERS];

/* The index of arg among the n names, or -1. */
static int
pick(const char *arg, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	return -1;
}

/* "A-B" or "A" (layers), A <= B; 0 or -EINVAL after a message. */
static int
parse_range(const char *opt, const char *arg, unsigned *first,
	    unsigned *last)
{
	const char *dash = strchr(arg, '-');
	char lo[32];
	size_t n = dash ? (size_t)(dash - arg) : strlen(arg);

	if (n >= sizeof(lo)) {
		fprintf(stderr, T ": %s: \"%s\" is not a range A-B\n", opt,
			arg);
		return -EINVAL;
	}
	memcpy(lo, arg, n);
	lo[n] = '\0';
	if (tool_opt_u32(T, opt, lo, 0, MAX_LAYERS - 1, first) < 0 ||
	    tool_opt_u32(T, opt, dash ? dash + 1 : lo, 0, MAX_LAYERS - 1,
			 last) < 0)
		return -EINVAL;
	if (*first > *last) {
		fprintf(stderr, T ": %s: \"%s\": %u > %u\n", opt, arg, *first,
			*last);
		return -EINVAL;
	}
	return 0;
}

/* One hybrid-MoE option into a; 0, or -EINVAL after the message. */
static int
parse_moe_opt(int c, struct mk_args *a)
{
	static const char *const names[] = { "--experts", "--expert-width",
		"--expert-quant", "--expert-layers", "--top-k", "--no-dense" };
	struct vw_moe_opts *m = &a->moe;

	if (c <= OPT_NO_DENSE && c != OPT_EXPERTS)
		a->moe_opt = names[c - OPT_EXPERTS];
	switch (c) {
	case OPT_EXPERTS:
		return tool_opt_u32(T, "--experts", optarg, 1, 1u << 16,
				    &m->experts);
	case OPT_EXPERT_WIDTH:
		return tool_opt_u32(T, "--expert-width", optarg, 1, 1u << 20,
				    &m->width);
	case OPT_EXPERT_QUANT:
		if (strcmp(optarg, "q4k") == 0)
			m->tag = VW_LYRW_Q4K;
		else if (strcmp(optarg, "f32") == 0)
			m->tag = VW_LYRW_F32;
		else {
			fprintf(stderr, T ": --expert-quant: \"%s\" is "
				"neither q4k nor f32\n", optarg);
			return -EINVAL;
		}
		return 0;
	case OPT_EXPERT_LAYERS:
		a->layers_set = 1;
		return parse_range("--expert-layers", optarg, &m->first,
				   &m->last);
	case OPT_TOP_K:
		a->top_k_set = 1;
		return tool_opt_u32(T, "--top-k", optarg, 1, 1u << 16,
				    &m->top_k);
	case OPT_NO_DENSE:
		m->no_dense = 1;
		return 0;
	case OPT_EXAMPLE_MOE:
		a->example_moe = VW_LYRW_Q4K + 1;
		return 0;
	default:
		a->example_moe = VW_LYRW_F32 + 1;
		return 0;
	}
}

/*
 * The hybrid-MoE options together (after check_args); 0, or -EINVAL
 * after a message.
 */
static int
check_moe(struct mk_args *a)
{
	struct vw_moe_opts *m = &a->moe;

	if (m->experts == 0) {
		if (a->moe_opt) {
			fprintf(stderr, T ": %s needs --experts\n", a->moe_opt);
			return -EINVAL;
		}
		return 0;
	}
	if (a->o.example) {
		fprintf(stderr, T ": --experts and --example are exclusive "
			"(--example-moe is §6's)\n");
		return -EINVAL;
	}
	if (!a->family_set)
		a->o.family = a->o.model_type = "gemma4";
	if (!a->top_k_set)
		m->top_k = m->experts < 2 ? m->experts : 2;
	else if (m->top_k > m->experts) {
		fprintf(stderr, T ": --top-k %u exceeds --experts %u\n",
			m->top_k, m->experts);
		return -EINVAL;
	}
	if (!a->layers_set) {
		m->first = 0;
		m->last = a->o.layers - 1;
	} else if (m->last >= a->o.layers) {
		fprintf(stderr, T ": --expert-layers %u-%u: the vindex has "
			"%u layers\n", m->first, m->last, a->o.layers);
		return -EINVAL;
	}
	return 0;
}

/* One option (not --help) into a; 0, or -EINVAL after the message. */
static int
parse_opt(int c, const char *argv0, struct mk_args *a)
{
	static const char *const dtypes[] = { "f32", "f16" };
	/* in enum vw_layout's order */
	static const char *const layouts[] = { "feature-major", "interleaved",
					       "dense" };
	static const char *const families[] = { "llama", "gemma3", "gemma4" };
	static const char *const quants[] = { "none", "q4k" };
	static const char *const q6s[] = { "private", "ggml" };
	uint64_t seed;
	int k = 0;

	switch (c) {
	case 'H':
		return tool_opt_u32(T, "--hidden", optarg, 1, 1u << 20,
				    &a->o.hidden);
	case 'I':
		return tool_opt_u32(T, "--intermediate", optarg, 1, 1u << 24,
				    &a->o.intermediate);
	case 'w':
		k = tool_opt_u32_list(T, "--widths", optarg, 1, 1u << 24,
				      widths, MAX_LAYERS);
		if (k < 0)
			return k;
		a->o.widths = widths;
		a->n_widths = (unsigned)k;
		return 0;
	case 'L':
		return tool_opt_u32(T, "--layers", optarg, 1, MAX_LAYERS,
				    &a->n_layers);
	case 'd':
		if ((k = pick(optarg, dtypes, 2)) >= 0)
			a->o.f16 = k;
		break;
	case 'l':
		if ((k = pick(optarg, layouts, 3)) >= 0)
			a->o.layout = (enum vw_layout)k;
		break;
	case 'f':
		if ((k = pick(optarg, families, 3)) >= 0) {
			a->o.family = optarg;
			a->o.model_type = optarg;
			a->family_set = 1;
		}
		break;
	case 'm':
		a->o.model_type = optarg;
		a->family_set = 1;
		break;
	case 's':
		if (tool_opt_u64(T, "--seed", optarg, &seed) < 0)
			return -EINVAL;
		a->o.seed = seed;
		break;
	case 'v':
		return tool_opt_u32(T, "--vocab", optarg, 1, 1u << 24,
				    &a->o.vocab);
	case 'e': a->o.example = 1; break;
	case 'q':
		if ((k = pick(optarg, quants, 2)) >= 0)
			a->q4k = k;
		break;
	case 'Q':
		if ((k = pick(optarg, q6s, 2)) >= 0)
			a->kq.q6 = k ? FFN_KQ_Q6_GGML : FFN_KQ_Q6_PRIVATE;
		break;
	case 'D': a->kq.down_q4k = 1; break;
	case OPT_DOWN_SCALE: {
		double v;

		if (tool_opt_double(T, "--down-scale", optarg, 1e-6, 1e9,
				    &v) < 0)
			return -EINVAL;
		a->o.down_scale = (float)v;
		break;
	}
	default:
		if (c >= OPT_EXPERTS)
			return parse_moe_opt(c, a);
		k = -1;
	}
	if (k < 0) {
		usage(stderr, argv0);
		return -EINVAL;
	}
	return 0;
}

/* The layer count and the one DIR; 0, or -EINVAL after the message. */
static int
check_args(int argc, char **argv, struct mk_args *a)
{
	struct vw_opts *o = &a->o;

	/*
	 * --widths sets the layer count; a --layers that disagrees (in
	 * either order) is refused rather than writing layers of 0 features
	 * or silently dropping some.
	 */
	if (a->n_widths > 0 && a->n_layers > 0 && a->n_layers != a->n_widths) {
		fprintf(stderr, "mkvindex: --layers %u disagrees with --widths "
			"(%u values)\n", a->n_layers, a->n_widths);
		return -EINVAL;
	}
	if (a->n_widths > 0)
		o->layers = a->n_widths;
	else if (a->n_layers > 0)
		o->layers = a->n_layers;
	if (a->example_moe && optind == argc - 1)
		return 0;
	if (optind != argc - 1 || (!o->example && (o->hidden == 0 ||
	    o->layers == 0 || (!o->widths && o->intermediate == 0)))) {
		usage(stderr, argv[0]);
		return -EINVAL;
	}
	if (o->layers > MAX_LAYERS) {
		fprintf(stderr, "mkvindex: at most %d layers\n", MAX_LAYERS);
		return -EINVAL;
	}
	return check_moe(a);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "hidden", required_argument, NULL, 'H' },
		{ "intermediate", required_argument, NULL, 'I' },
		{ "widths", required_argument, NULL, 'w' },
		{ "layers", required_argument, NULL, 'L' },
		{ "dtype", required_argument, NULL, 'd' },
		{ "layout", required_argument, NULL, 'l' },
		{ "family", required_argument, NULL, 'f' },
		{ "model-type", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "vocab", required_argument, NULL, 'v' },
		{ "example", no_argument, NULL, 'e' },
		{ "quant", required_argument, NULL, 'q' },
		{ "q6k-layout", required_argument, NULL, 'Q' },
		{ "down-q4k", no_argument, NULL, 'D' },
		{ "down-scale", required_argument, NULL, OPT_DOWN_SCALE },
		{ "experts", required_argument, NULL, OPT_EXPERTS },
		{ "expert-width", required_argument, NULL, OPT_EXPERT_WIDTH },
		{ "expert-quant", required_argument, NULL, OPT_EXPERT_QUANT },
		{ "expert-layers", required_argument, NULL,
		  OPT_EXPERT_LAYERS },
		{ "top-k", required_argument, NULL, OPT_TOP_K },
		{ "no-dense", no_argument, NULL, OPT_NO_DENSE },
		{ "example-moe", no_argument, NULL, OPT_EXAMPLE_MOE },
		{ "example-moe-f32", no_argument, NULL, OPT_EXAMPLE_MOE_F32 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mk_args a = { .kq = { FFN_KQ_Q6_PRIVATE, 0 },
			     .moe = { .width = 32, .tag = VW_LYRW_Q4K } };
	char err[512];
	int c, rc;

	vw_defaults(&a.o);
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout, argv[0]);
			return 0;
		}
		if (parse_opt(c, argv[0], &a) < 0)
			return 2;
	}
	if (check_args(argc, argv, &a) < 0)
		return 2;
	if (a.example_moe)
		rc = vw_write_moe_example(argv[optind], a.example_moe - 1, err,
					  sizeof(err));
	else if (a.moe.experts)
		rc = vw_write_moe(argv[optind], &a.o, &a.kq, &a.moe, err,
				  sizeof(err));
	else if (a.q4k)
		rc = vw_write_q4k(argv[optind], &a.o, &a.kq, err, sizeof(err));
	else
		rc = vw_write(argv[optind], &a.o, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "mkvindex: %s\n", err);
		return 1;
	}
	return 0;
}
