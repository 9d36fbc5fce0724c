/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * mkvindex: write a synthetic LARQL vindex (spec/vindex.md) for tests,
 * demos and benchmarks. Deterministic by --seed.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_opt.h"
#include "vindex_write.h"
#include "mkvindex_q4k.h"

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
		"  --family llama|gemma3  model_type (SiLU / GELU-tanh)\n"
		"  --model-type S      any model_config.model_type\n"
		"  --seed N            RNG seed (default 1)\n"
		"  --vocab N           also write embeddings.bin [N, hidden] f32\n"
		"  --example           the hand-checkable model of vindex.md §3\n"
		"  --quant none|q4k    q4k: K-quant payload of vindex.md §2.4\n"
		"  --q6k-layout private|ggml  Q6_K arrangement of down (q4k)\n"
		"  --down-q4k          q4k: down in Q4_K instead of Q6_K\n",
		prog);
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static unsigned widths[MAX_LAYERS];
	struct vw_opts o;
	struct vw_q4k_opts kq = { FFN_KQ_Q6_PRIVATE, 0 };
	int q4k = 0;
	unsigned n_widths = 0, n_layers = 0;	/* as given, 0: not given */
	uint64_t seed;
	char err[512];
	int c, rc;

	vw_defaults(&o);
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'H':
			if (tool_opt_u32(T, "--hidden", optarg, 1, 1u << 20,
					 &o.hidden) < 0)
				return 2;
			break;
		case 'I':
			if (tool_opt_u32(T, "--intermediate", optarg, 1,
					 1u << 24, &o.intermediate) < 0)
				return 2;
			break;
		case 'w':
			rc = tool_opt_u32_list(T, "--widths", optarg, 1,
					       1u << 24, widths, MAX_LAYERS);
			if (rc < 0)
				return 2;
			o.widths = widths;
			n_widths = (unsigned)rc;
			break;
		case 'L':
			if (tool_opt_u32(T, "--layers", optarg, 1, MAX_LAYERS,
					 &n_layers) < 0)
				return 2;
			break;
		case 'd':
			if (strcmp(optarg, "f16") && strcmp(optarg, "f32")) {
				usage(stderr, argv[0]);
				return 2;
			}
			o.f16 = strcmp(optarg, "f16") == 0;
			break;
		case 'l':
			if (strcmp(optarg, "feature-major") == 0)
				o.layout = VW_FEATURE_MAJOR;
			else if (strcmp(optarg, "interleaved") == 0)
				o.layout = VW_INTERLEAVED;
			else if (strcmp(optarg, "dense") == 0)
				o.layout = VW_DENSE;
			else {
				usage(stderr, argv[0]);
				return 2;
			}
			break;
		case 'f':
			if (strcmp(optarg, "llama") && strcmp(optarg, "gemma3")) {
				usage(stderr, argv[0]);
				return 2;
			}
			o.family = optarg;
			o.model_type = optarg;
			break;
		case 'm': o.model_type = optarg; break;
		case 's':
			if (tool_opt_u64(T, "--seed", optarg, &seed) < 0)
				return 2;
			o.seed = seed;
			break;
		case 'v':
			if (tool_opt_u32(T, "--vocab", optarg, 1, 1u << 24,
					 &o.vocab) < 0)
				return 2;
			break;
		case 'e': o.example = 1; break;
		case 'q':
			if (strcmp(optarg, "q4k") && strcmp(optarg, "none")) {
				usage(stderr, argv[0]);
				return 2;
			}
			q4k = strcmp(optarg, "q4k") == 0;
			break;
		case 'Q':
			if (strcmp(optarg, "private") && strcmp(optarg, "ggml")) {
				usage(stderr, argv[0]);
				return 2;
			}
			kq.q6 = strcmp(optarg, "ggml") == 0 ? FFN_KQ_Q6_GGML
							    : FFN_KQ_Q6_PRIVATE;
			break;
		case 'D': kq.down_q4k = 1; break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	/*
	 * --widths sets the layer count; a --layers that disagrees (in
	 * either order) is refused rather than writing layers of 0 features
	 * or silently dropping some.
	 */
	if (n_widths > 0 && n_layers > 0 && n_layers != n_widths) {
		fprintf(stderr, "mkvindex: --layers %u disagrees with --widths "
			"(%u values)\n", n_layers, n_widths);
		return 2;
	}
	if (n_widths > 0)
		o.layers = n_widths;
	else if (n_layers > 0)
		o.layers = n_layers;
	if (optind != argc - 1 || (!o.example && (o.hidden == 0 ||
	    o.layers == 0 || (!o.widths && o.intermediate == 0)))) {
		usage(stderr, argv[0]);
		return 2;
	}
	if (o.layers > MAX_LAYERS) {
		fprintf(stderr, "mkvindex: at most %d layers\n", MAX_LAYERS);
		return 2;
	}
	rc = q4k ? vw_write_q4k(argv[optind], &o, &kq, err, sizeof(err))
		 : vw_write(argv[optind], &o, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "mkvindex: %s\n", err);
		return 1;
	}
	return 0;
}
