/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The expert kinds (ffn_moe_priv.h): one row per way of holding and
 * computing an expert, keyed by the LYRW quant_format tag of its layer
 * file (spec/moe.md §5.3) and the hidden size:
 *
 *   q4k      tag 4, H % 256 == 0: the expert is a struct ffn_kq_layer
 *            (gate and up rows of whole blocks, down [H, S] in the
 *            checkpoint orientation) computed by lib/ffn/kquant;
 *   q4k-f32  tag 4, otherwise: blocks straddle rows, so the expert is
 *            dequantised exactly to f32 at load and computed as f32;
 *   f32      tag 0 (appliance extension): gate and up used as stored,
 *            down transposed at load to feature-major [I, H] for lib/ffn's
 *            dense kernels (ffn_priv.h).
 *
 * Every kind computes y = D (gelu_tanh(G h) * U h) (spec/moe.md §1).
 */
#include <errno.h>
#include <string.h>

#include "ffn_kq.h"
#include "ffn_moe_priv.h"

static size_t
align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

/* spec/moe.md §1: the Gemma activation, lib/ffn's (kquant leaves it to
 * its caller, ffn_kq.h ffn_kq_act_fn) */
static void
act_gelu(float *g, const float *u, size_t n)
{
	ffn_act_mul(FFN_ACT_GELU_TANH, g, u, n);
}

/* ---- sizes (§5.3) ---- */

static int
fits_q4k(uint32_t H)
{
	return H % FFN_KQ_QK == 0;
}

static int
fits_any(uint32_t H)
{
	(void)H;
	return 1;
}

/* 144 * ceil(2 I H / 256): the flattened [2I, H] matrix, rows not
 * padded, a final partial block allowed */
static uint64_t
q4k_gate_up_bytes(uint64_t I, uint64_t H)
{
	return FFN_KQ_Q4K_BYTES * ((2 * I * H + FFN_KQ_QK - 1) / FFN_KQ_QK);
}

/* 144 * H * S / 256: every down row is S / 256 whole blocks */
static uint64_t
q4k_down_bytes(uint64_t I, uint64_t H, uint64_t S, int alt)
{
	(void)I;
	return alt ? 0 : FFN_KQ_Q4K_BYTES * H * S / FFN_KQ_QK;
}

static uint64_t
f32_gate_up_bytes(uint64_t I, uint64_t H)
{
	return 8 * I * H;
}

/* H rows of S' f32, S' = S (LARQL's writer) or I */
static uint64_t
f32_down_bytes(uint64_t I, uint64_t H, uint64_t S, int alt)
{
	if (!alt)
		return 4 * H * S;
	return S != I ? 4 * H * I : 0;
}

/* ---- q4k: served from the blocks ---- */

static size_t
q4k_row(const struct ffn_moe *m)
{
	return ffn_kq_row_bytes(FFN_KQ_Q4_K, m->H);
}

static size_t
q4k_arena_bytes(const struct ffn_moe *m, const void *gu, int in_place)
{
	(void)gu;
	/* kquant reads blocks at any address: the mapping serves as is */
	if (in_place)
		return 0;
	return align64(q4k_gate_up_bytes(m->I, m->H)) +
	       align64(q4k_down_bytes(m->I, m->H, m->S, 0));
}

static void
q4k_place(const struct ffn_moe *m, const void *gu, const void *dn,
	  uint64_t dn_bytes, int in_place, void *dst, float *tmp,
	  struct ffn_moe_x *x)
{
	size_t gub = q4k_gate_up_bytes(m->I, m->H);

	(void)tmp;
	if (!in_place) {
		memcpy(dst, gu, gub);
		memcpy((uint8_t *)dst + align64(gub), dn, dn_bytes);
		gu = dst;
		dn = (uint8_t *)dst + align64(gub);
	}
	/* H % 256 == 0: gate rows 0..I-1 then up rows, whole blocks each */
	x->gate = gu;
	x->up = (const uint8_t *)gu + (size_t)m->I * q4k_row(m);
	x->down = dn;
}

static uint64_t
q4k_held_bytes(const struct ffn_moe *m)
{
	return q4k_gate_up_bytes(m->I, m->H) +
	       q4k_down_bytes(m->I, m->H, m->S, 0);
}

/* down [H, S]: S = pad256(I), the layout of struct ffn_kq_layer */
static struct ffn_kq_layer
q4k_layer(const struct ffn_moe *m, const struct ffn_moe_x *x)
{
	return (struct ffn_kq_layer){
		.gate = x->gate, .up = x->up, .down = x->down,
		.gate_fmt = FFN_KQ_Q4_K, .up_fmt = FFN_KQ_Q4_K,
		.down_fmt = FFN_KQ_Q4_K, .q6 = FFN_KQ_Q6_PRIVATE,
		.nf = m->I, .hidden = m->H,
	};
}

static size_t
q4k_scratch(const struct ffn_moe *m, unsigned rows)
{
	struct ffn_moe_x x = { NULL, NULL, NULL };
	struct ffn_kq_layer kl = q4k_layer(m, &x);
	/* f32 h and ffn_kq_layer_forward_q8k_in() take the f32 path's;
	 * kq_q8k, switched after the scratch exists, the Q8_K path's */
	size_t a = ffn_kq_layer_scratch(&kl, rows, FFN_KQ_PATH_F32);
	size_t b = ffn_kq_layer_scratch(&kl, rows, FFN_KQ_PATH_Q8K);

	return align64(a > b ? a : b);
}

static int
q4k_forward(const struct ffn_moe *m, const struct ffn_moe_x *x,
	    const float *h, unsigned rows, float *y,
	    struct ffn_moe_scratch *s)
{
	struct ffn_kq_layer kl = q4k_layer(m, x);

	return ffn_kq_layer_forward(&kl, m->info.kq_q8k ? FFN_KQ_PATH_Q8K :
				    FFN_KQ_PATH_F32, act_gelu, h, m->H,
				    rows, y, m->H, s->eng, s->eng_len);
}

/* gate and up by integer dots; the activation stays f32 for down
 * (ffn_moe.h ffn_moe_expert_q8k), or with kq_q8k is quantised too */
static int
q4k_forward_q8k(const struct ffn_moe *m, const struct ffn_moe_x *x,
		const void *hq, unsigned rows, float *y,
		struct ffn_moe_scratch *s)
{
	struct ffn_kq_layer kl = q4k_layer(m, x);

	if (m->info.kq_q8k)
		return ffn_kq_layer_forward_q8k(&kl, act_gelu, hq, rows, y,
						m->H, s->eng, s->eng_len);
	return ffn_kq_layer_forward_q8k_in(&kl, act_gelu, hq, rows, y, m->H,
					   s->eng, s->eng_len);
}

/* ---- f32: lib/ffn's dense kernels, down feature-major [I, H] ---- */

/* dst[f][h] = src[h][f] for f < I, h < H; src rows of sp values */
static void
transpose_down(float *dst, const float *src, uint32_t H, uint32_t I,
	       size_t sp)
{
	uint32_t h0, f0, h, f;

	/* 32 x 32 tiles: both sides stay in cache */
	for (h0 = 0; h0 < H; h0 += 32)
		for (f0 = 0; f0 < I; f0 += 32)
			for (h = h0; h < H && h < h0 + 32; h++)
				for (f = f0; f < I && f < f0 + 32; f++)
					dst[(size_t)f * H + h] =
						src[(size_t)h * sp + f];
}

static size_t
f32_arena_bytes(const struct ffn_moe *m, const void *gu, int in_place)
{
	size_t down = align64((size_t)4 * m->I * m->H);

	/* the kernels load f32 from 4-byte-aligned addresses: a payload at
	 * an offset that is not a multiple of 4 is copied */
	if (in_place && (uintptr_t)gu % 4 == 0)
		return down;
	return align64(f32_gate_up_bytes(m->I, m->H)) + down;
}

static void
f32_place(const struct ffn_moe *m, const void *gu, const void *dn,
	  uint64_t dn_bytes, int in_place, void *dst, float *tmp,
	  struct ffn_moe_x *x)
{
	size_t IH = (size_t)m->I * m->H, sp = dn_bytes / (4 * (size_t)m->H);
	uint8_t *at = dst;

	if (!in_place || (uintptr_t)gu % 4 != 0) {
		memcpy(at, gu, 8 * IH);
		gu = at;
		at += align64(8 * IH);
	}
	x->gate = gu;
	x->up = (const float *)gu + IH;
	/* the stored [H, S'] down, possibly unaligned: through tmp */
	memcpy(tmp, dn, dn_bytes);
	transpose_down((float *)at, tmp, m->H, m->I, sp);
	x->down = at;
}

static uint64_t
f32_held_bytes(const struct ffn_moe *m)
{
	return 12 * (uint64_t)m->I * m->H;
}

static size_t
f32_scratch(const struct ffn_moe *m, unsigned rows)
{
	/* g, u, xd, xp, yp of struct ffn_moe_scratch are all it needs */
	(void)m;
	(void)rows;
	return 0;
}

static int
f32_forward(const struct ffn_moe *m, const struct ffn_moe_x *x,
	    const float *h, unsigned rows, float *y,
	    struct ffn_moe_scratch *s)
{
	const struct ffn_kernels *k = ffn_kernels_active();
	size_t rb = (size_t)4 * m->H;
	struct ffn_mat G = { x->gate, rb, m->I, m->H, FFN_DT_F32 };
	struct ffn_mat U = { x->up, rb, m->I, m->H, FFN_DT_F32 };
	struct ffn_mat D = { x->down, rb, m->I, m->H, FFN_DT_F32 };
	unsigned r;

	for (r = 0; r < rows; r++) {
		s->xp[r] = h + (size_t)r * m->H;
		s->yp[r] = y + (size_t)r * m->H;
	}
	k->matvec(&G, s->xp, rows, s->g, m->I);
	k->matvec(&U, s->xp, rows, s->u, m->I);
	ffn_act_mul(FFN_ACT_GELU_TANH, s->g, s->u, (size_t)rows * m->I);
	k->down(&D, s->g, m->I, rows, s->yp);
	return 0;
}

/* spec/moe.md §1: h_i = d[i/256] * qs[i], then as f32 rows */
static int
f32_forward_q8k(const struct ffn_moe *m, const struct ffn_moe_x *x,
		const void *hq, unsigned rows, float *y,
		struct ffn_moe_scratch *s)
{
	size_t qrow = FFN_KQ_NBLOCKS(m->H) * FFN_KQ_Q8K_BYTES;
	unsigned r;

	for (r = 0; r < rows; r++)
		ffn_kq_dequant_q8k((const uint8_t *)hq + r * qrow, m->H,
				   s->xd + (size_t)r * m->H);
	return f32_forward(m, x, s->xd, rows, y, s);
}

/* ---- q4k-f32: Q4_K blocks straddling rows, dequantised at load ---- */

static size_t
q4kf_arena_bytes(const struct ffn_moe *m, const void *gu, int in_place)
{
	(void)gu;
	(void)in_place;
	/* gate_up dequantised whole blocks at a time (the tail of the last
	 * block lands past up and is never read), down [I, H] */
	return align64(FFN_KQ_PAD256(2 * (size_t)m->I * m->H) * 4) +
	       align64((size_t)4 * m->I * m->H);
}

/* §5.3: G = gate_up[0 .. I H), U = gate_up[I H .. 2 I H) as [I, H];
 * D = the first I columns of the [H, S] down */
static void
q4kf_place(const struct ffn_moe *m, const void *gu, const void *dn,
	   uint64_t dn_bytes, int in_place, void *dst, float *tmp,
	   struct ffn_moe_x *x)
{
	size_t IH = (size_t)m->I * m->H;
	size_t gnb = FFN_KQ_NBLOCKS(2 * IH);
	float *g = dst;
	float *d = (float *)((uint8_t *)dst + align64(gnb * 256 * 4));

	(void)in_place;
	ffn_kq_dequant_row(FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, gu, gnb, g);
	ffn_kq_dequant_row(FFN_KQ_Q4_K, FFN_KQ_Q6_PRIVATE, dn,
			   dn_bytes / FFN_KQ_Q4K_BYTES, tmp);
	transpose_down(d, tmp, m->H, m->I, m->S);
	x->gate = g;
	x->up = g + IH;
	x->down = d;
}

/* ---- the table ---- */

/* In lookup order: for tag 4, q4k before its fallback q4k-f32. */
const struct ffn_moe_kind ffn_moe_kinds[] = {
	{
		.tag = 4, .name = "q4k", .tag_name = "Q4_K",
		.fits = fits_q4k,
		.gate_up_bytes = q4k_gate_up_bytes,
		.down_bytes = q4k_down_bytes,
		.arena_bytes = q4k_arena_bytes,
		.place = q4k_place,
		.held_bytes = q4k_held_bytes,
		.q8k_path = 1,
		.scratch = q4k_scratch,
		.forward = q4k_forward,
		.forward_q8k = q4k_forward_q8k,
	},
	{
		.tag = 4, .name = "q4k-f32", .tag_name = "Q4_K",
		.fits = fits_any,
		.gate_up_bytes = q4k_gate_up_bytes,
		.down_bytes = q4k_down_bytes,
		.arena_bytes = q4kf_arena_bytes,
		.place = q4kf_place,
		.held_bytes = f32_held_bytes,
		.scratch = f32_scratch,
		.forward = f32_forward,
		.forward_q8k = f32_forward_q8k,
	},
	{
		.tag = 0, .name = "f32", .tag_name = "F32",
		.fits = fits_any,
		.gate_up_bytes = f32_gate_up_bytes,
		.down_bytes = f32_down_bytes,
		.arena_bytes = f32_arena_bytes,
		.place = f32_place,
		.held_bytes = f32_held_bytes,
		.scratch = f32_scratch,
		.forward = f32_forward,
		.forward_q8k = f32_forward_q8k,
	},
};

const unsigned ffn_moe_n_kinds =
	sizeof(ffn_moe_kinds) / sizeof(ffn_moe_kinds[0]);

const struct ffn_moe_kind *
ffn_moe_kind_of(uint32_t tag, uint32_t H)
{
	unsigned i;

	for (i = 0; i < ffn_moe_n_kinds; i++)
		if (ffn_moe_kinds[i].tag == tag && ffn_moe_kinds[i].fits(H))
			return &ffn_moe_kinds[i];
	return NULL;
}

const char *
ffn_moe_tag_name(uint32_t tag)
{
	/* §5.3's quant_format values, for messages */
	static const char *const names[] = {
		"F32", "F16", "BF16", "Q4_0", "Q4_K", "Q6_K", "Q8_0", "FP4",
	};

	return tag < sizeof(names) / sizeof(names[0]) ? names[tag] : "unknown";
}
