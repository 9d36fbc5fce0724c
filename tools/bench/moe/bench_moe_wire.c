/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * bench-moe section 3: WAN bytes per token of a top-K expert sweep, pure
 * arithmetic on the frames of spec/moe.md (bodies only; HTTP heads, TCP
 * and IP not counted):
 *   layer-batch (§3.2):  request 12 + vec + 8 K, response 8 + vec;
 *   layer-batch-f16 (§3.3) and -i8 (§7): the same frames with the f16
 *   or i8 vector;
 *   answers negotiated by Accept (§7): the response vector in f16 or i8;
 *   multi-layer-batch-q8k (§3.5): per task 12 + H + 4 nb + 16 nb + 8 K
 *   (nb = H / 256), response per task 8 + vec, one u32 n each way;
 * with vec = 4 H (f32), 2 H (f16), 8 + H (i8: scale, zero point, H i8).
 */
#include <stdio.h>

#include "bench_moe.h"

enum bm_fmt { FMT_F32 = 0, FMT_F16, FMT_I8, FMT_Q8K };

static double
vec(enum bm_fmt f, double H)
{
	switch (f) {
	case FMT_F32: return 4 * H;
	case FMT_F16: return 2 * H;
	case FMT_I8: return 8 + H;
	case FMT_Q8K: break;
	}
	/* §3.5: qs, d per 256 values, i16 sums per 32 values */
	return H + 4 * (H / 256) + 16 * (H / 256);
}

struct wire_row {
	const char *route;
	enum bm_fmt req, resp;
	const char *note;
};

void
bm_wire(const struct bm_opts *o)
{
	static const struct wire_row rows[] = {
		{ "layer-batch", FMT_F32, FMT_F32, "reference default" },
		{ "layer-batch", FMT_F32, FMT_F16, "§7 Accept f16" },
		{ "layer-batch", FMT_F32, FMT_I8, "§7 Accept i8" },
		{ "layer-batch-f16", FMT_F16, FMT_F16,
		  "LARQL_MOE_WIRE_F16" },
		{ "layer-batch-f16", FMT_F16, FMT_I8, "§7 Accept i8" },
		{ "layer-batch-i8", FMT_I8, FMT_I8, "§7" },
		{ "multi-layer-batch-q8k", FMT_Q8K, FMT_F32,
		  "one task per layer" },
		{ "multi-layer-batch-q8k", FMT_Q8K, FMT_F16, "§7 Accept f16" },
		{ "multi-layer-batch-q8k", FMT_Q8K, FMT_I8, "§7 Accept i8" },
	};
	static const char *const fname[] = { "f32", "f16", "i8", "q8k" };
	double H = o->H, K = o->K, L = o->layers, base = 0;

	printf("\n== 3. WAN bytes per token: %u layers, top-%u, hidden %u "
	       "(spec/moe.md §3.2, §3.3, §3.5, §7; bodies only, HTTP heads "
	       "not counted)\n", o->layers, o->K, o->H);
	printf("  one shard holds all %u experts of a token's layer: one call "
	       "per layer, %u calls per token. With S shards each of the "
	       "up to S calls per layer carries the whole residual and "
	       "returns a whole vector: the last column is the worst case, "
	       "S = %u, one pair per call\n", o->K, o->layers, o->K);
	printf("  %-22s %-4s %-4s %9s %9s %10s %12s %7s %13s  %s\n", "route",
	       "req", "ans", "request", "response", "B/layer", "KiB/token",
	       "/f32", "KiB/tok S=K", "");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct wire_row *r = &rows[i];
		int multi = r->req == FMT_Q8K;
		double rq = 12 + vec(r->req, H) + 8 * K;
		/* 8: hidden, latency_ms (§3.2) or a task's layer, hidden
		 * (§3.4); the multi-layer route adds a u32 n each way per
		 * call */
		double rs = 8 + vec(r->resp, H);
		double tok = L * (rq + rs) + (multi ? 8 : 0);
		double tokk = K * L * (rq - 8 * (K - 1) + rs) +
			      (multi ? 8 * K : 0);

		if (i == 0)
			base = tok;
		printf("  %-22s %-4s %-4s %9.0f %9.0f %10.0f %12.1f %7.3f "
		       "%13.1f  %s\n", r->route, fname[r->req],
		       fname[r->resp], rq, rs, rq + rs, tok / 1024,
		       tok / base, tokk / 1024, r->note);
	}
	printf("  (multi-layer-batch-q8k: the client's batched mode sends "
	       "all %u tasks in one call; per layer here is one task)\n",
	       o->layers);
}
