/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * K-quant drivers: kernel choice, input preparation (zero-padded copies,
 * Q8_K quantisation), matrix x rows, and the layer compute
 * y = W_down (act(W_gate x) * (W_up x)) of spec/wire.md §1 over the
 * K-quant payload of spec/vindex.md §2.4.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "kq_internal.h"

static const struct ffn_kq_kernels *active;

static const struct ffn_kq_kernels *
kernels_for(enum ffn_kq_isa isa)
{
	__builtin_cpu_init();
	switch (isa) {
	case FFN_KQ_ISA_SCALAR:
		return &ffn_kq_kernels_scalar;
	case FFN_KQ_ISA_AVX2:
		if (__builtin_cpu_supports("avx2") &&
		    __builtin_cpu_supports("fma"))
			return &ffn_kq_kernels_avx2;
		return NULL;
	case FFN_KQ_ISA_AVX512:
		if (__builtin_cpu_supports("avx512f") &&
		    __builtin_cpu_supports("avx512bw") &&
		    __builtin_cpu_supports("avx512vl") &&
		    __builtin_cpu_supports("avx512vnni") &&
		    __builtin_cpu_supports("avx512vbmi"))
			return &ffn_kq_kernels_avx512;
		return NULL;
	default:
		return NULL;
	}
}

static const struct ffn_kq_kernels *
kernels(void)
{
	if (active == NULL) {
		for (int isa = FFN_KQ_ISA_COUNT - 1; isa >= 0; isa--) {
			const struct ffn_kq_kernels *k = kernels_for(isa);

			if (k != NULL) {
				active = k;
				break;
			}
		}
	}
	return active;
}

const char *
ffn_kq_isa_name(void)
{
	return kernels()->name;
}

enum ffn_kq_isa
ffn_kq_isa(void)
{
	return kernels()->isa;
}

int
ffn_kq_select(enum ffn_kq_isa isa)
{
	const struct ffn_kq_kernels *k = kernels_for(isa);

	if (k == NULL)
		return -ENOTSUP;
	active = k;
	return 0;
}

/*
 * --- Quantisers -----------------------------------------------------------
 */

static float
kq_absmax(const float *x, size_t n, float *signed_max)
{
	float amax = 0.0f, max = 0.0f;

	for (size_t i = 0; i < n; i++) {
		float ax = fabsf(x[i]);

		if (ax > amax) {
			amax = ax;
			max = x[i];
		}
	}
	if (signed_max)
		*signed_max = max;
	return amax;
}

static int
kq_clampi(long v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : (int)v;
}

static void
quantize_q4k_block(const float *x, uint8_t *b)
{
	float scale[8], min[8], smax = 0.0f, mmax = 0.0f, d, dmin;
	uint8_t sc[8], m[8], q[256], *s = b + KQ4_S;
	uint16_t h;

	for (int j = 0; j < 8; j++) {
		float lo = 0.0f, hi = 0.0f;

		for (int l = 0; l < 32; l++) {
			lo = fminf(lo, x[32 * j + l]);
			hi = fmaxf(hi, x[32 * j + l]);
		}
		scale[j] = (hi - lo) / 15.0f;
		min[j] = -lo;
		smax = fmaxf(smax, scale[j]);
		mmax = fmaxf(mmax, min[j]);
	}
	h = ffn_kq_f32_to_f16(smax / 63.0f);
	memcpy(b + KQ4_D, &h, 2);
	d = ffn_kq_f16_to_f32(h);
	h = ffn_kq_f32_to_f16(mmax / 63.0f);
	memcpy(b + KQ4_DMIN, &h, 2);
	dmin = ffn_kq_f16_to_f32(h);
	for (int j = 0; j < 8; j++) {
		sc[j] = d > 0 ? (uint8_t)kq_clampi(lrintf(scale[j] / d), 0, 63)
			      : 0;
		m[j] = dmin > 0 ? (uint8_t)kq_clampi(lrintf(min[j] / dmin), 0,
						     63) : 0;
	}
	memset(s, 0, 12);
	for (int j = 0; j < 4; j++) {
		s[j] = sc[j];
		s[j + 4] = m[j];
	}
	for (int j = 4; j < 8; j++) {
		s[j + 4] = (uint8_t)((sc[j] & 15) | ((m[j] & 15) << 4));
		s[j - 4] |= (uint8_t)((sc[j] >> 4) << 6);
		s[j] |= (uint8_t)((m[j] >> 4) << 6);
	}
	for (int j = 0; j < 8; j++) {
		float dl = d * sc[j], ml = dmin * m[j];

		for (int l = 0; l < 32; l++)
			q[32 * j + l] = dl > 0 ? (uint8_t)kq_clampi(
				lrintf((x[32 * j + l] + ml) / dl), 0, 15) : 0;
	}
	for (int g = 0; g < 4; g++)
		for (int l = 0; l < 32; l++)
			b[KQ4_QS + 32 * g + l] = (uint8_t)(q[64 * g + l] |
						q[64 * g + 32 + l] << 4);
}

static void
quantize_q6k_block(const float *x, enum ffn_kq_q6_layout q6, uint8_t *b)
{
	float scale[16], smax = 0.0f, d;
	int8_t *sc = (int8_t *)(b + KQ6_SC);
	uint8_t q[256], *ql = b + KQ6_QL, *qh = b + KQ6_QH;
	uint16_t h;

	for (int g = 0; g < 16; g++) {
		scale[g] = kq_absmax(x + 16 * g, 16, NULL) / 31.0f;
		smax = fmaxf(smax, scale[g]);
	}
	h = ffn_kq_f32_to_f16(smax / 127.0f);
	memcpy(b + KQ6_D, &h, 2);
	d = ffn_kq_f16_to_f32(h);
	for (int g = 0; g < 16; g++) {
		float dl;

		sc[g] = d > 0 ? (int8_t)kq_clampi(lrintf(scale[g] / d), 0, 127)
			      : 0;
		dl = d * sc[g];
		for (int l = 0; l < 16; l++)
			q[16 * g + l] = (uint8_t)(32 + (dl > 0 ? kq_clampi(
				lrintf(x[16 * g + l] / dl), -32, 31) : 0));
	}
	memset(ql, 0, 128);
	memset(qh, 0, 64);
	if (q6 == FFN_KQ_Q6_PRIVATE) {
		for (int i = 0; i < 256; i++) {
			ql[i / 2] |= (uint8_t)((q[i] & 15) << (4 * (i & 1)));
			qh[i / 4] |= (uint8_t)((q[i] >> 4) << (2 * (i % 4)));
		}
		return;
	}
	for (int n = 0; n < 2; n++) {
		uint8_t *l = ql + 64 * n, *hh = qh + 32 * n;
		const uint8_t *v = q + 128 * n;

		for (int i = 0; i < 32; i++) {
			l[i] = (uint8_t)((v[i] & 15) | (v[i + 64] & 15) << 4);
			l[i + 32] = (uint8_t)((v[i + 32] & 15) |
					      (v[i + 96] & 15) << 4);
			hh[i] = (uint8_t)((v[i] >> 4) | (v[i + 32] >> 4) << 2 |
					  (v[i + 64] >> 4) << 4 |
					  (v[i + 96] >> 4) << 6);
		}
	}
}

void
ffn_kq_quantize_row(enum ffn_kq_fmt fmt, enum ffn_kq_q6_layout q6,
		    const float *x, size_t n, void *dst)
{
	size_t nb = FFN_KQ_NBLOCKS(n), bb = ffn_kq_block_bytes(fmt);
	uint8_t *out = dst;
	float blk[256];

	for (size_t b = 0; b < nb; b++) {
		size_t k = n - 256 * b < 256 ? n - 256 * b : 256;

		memset(blk, 0, sizeof(blk));
		memcpy(blk, x + 256 * b, k * sizeof(float));
		if (fmt == FFN_KQ_Q4_K)
			quantize_q4k_block(blk, out + b * bb);
		else
			quantize_q6k_block(blk, q6, out + b * bb);
	}
}

void
ffn_kq_quantize_q8k(const float *x, size_t n, void *dst)
{
	size_t nb = FFN_KQ_NBLOCKS(n);
	uint8_t *row = dst;

	for (size_t b = 0; b < nb; b++) {
		size_t k = n - 256 * b < 256 ? n - 256 * b : 256;
		int8_t *qs = (int8_t *)row + 256 * b;
		const float *xb = x + 256 * b;
		float max, amax = kq_absmax(xb, k, &max), d = 0.0f;

		memset(qs, 0, 256);
		if (amax > 0) {
			/* llama.cpp quantize_row_q8_K_ref */
			float iscale = -127.0f / max;

			for (size_t i = 0; i < k; i++)
				qs[i] = (int8_t)kq_clampi(lrintf(iscale * xb[i]),
							  -128, 127);
			d = 1.0f / iscale;
		}
		memcpy(row + 256 * nb + 4 * b, &d, 4);
		for (int j = 0; j < 8; j++) {
			int16_t s = 0;

			for (int l = 0; l < 32; l++)
				s = (int16_t)(s + qs[32 * j + l]);
			memcpy(row + 260 * nb + 16 * b + 2 * j, &s, 2);
		}
	}
}

void
ffn_kq_dequant_q8k(const void *row, size_t n, float *x)
{
	size_t nb = FFN_KQ_NBLOCKS(n);
	const uint8_t *p = row;

	for (size_t i = 0; i < n; i++)
		x[i] = kq_q8_d(p, nb, i / 256) * (float)kq_q8_qs(p, nb, 0)[i];
}

void
ffn_kq_q8k_from_ggml(const void *blocks, size_t nb, void *dst)
{
	const uint8_t *src = blocks;
	uint8_t *row = dst;

	for (size_t b = 0; b < nb; b++) {
		const uint8_t *blk = src + 292 * b;

		memcpy(row + 256 * nb + 4 * b, blk, 4);
		memcpy(row + 256 * b, blk + 4, 256);
		for (int j = 0; j < 8; j++) {
			int16_t s0, s1, s;

			memcpy(&s0, blk + 260 + 4 * j, 2);
			memcpy(&s1, blk + 262 + 4 * j, 2);
			s = (int16_t)(s0 + s1);
			memcpy(row + 260 * nb + 16 * b + 2 * j, &s, 2);
		}
	}
}

/*
 * --- Matrix x rows -------------------------------------------------------
 */

static int
mat_check(const struct ffn_kq_mat *w, uint32_t row0, uint32_t row1)
{
	if (w == NULL || w->data == NULL || row0 > row1 || row1 > w->rows ||
	    w->cols == 0 || (w->fmt != FFN_KQ_Q4_K && w->fmt != FFN_KQ_Q6_K) ||
	    (w->q6 != FFN_KQ_Q6_PRIVATE && w->q6 != FFN_KQ_Q6_GGML))
		return -EINVAL;
	return 0;
}

#define KQ_XS_MAX 4096	/* floats: x sums on the stack, up to 131072 cols */
#define KQ_S16_MAX 16384 /* int16: Q8_K per-16 sums on the stack (32 KiB) */

/*
 * Rows [row0, row1) of w restricted to the block columns [blk0, blk0 + nb)
 * (a feature slice of down, whose rows are [H, pad256(nf)]): the kernels
 * take a row stride, so a window of whole blocks is a plain sub-matrix.
 * x rows hold nb * 256 readable values, zero past the window's values.
 */
static void
matvec_f32_window(const struct ffn_kq_mat *w, uint32_t row0, uint32_t row1,
		  size_t blk0, size_t nb, const float *x, size_t ldx,
		  size_t R, float *y, size_t ldy)
{
	const struct ffn_kq_kernels *k = kernels();
	size_t rb = FFN_KQ_NBLOCKS(w->cols) * ffn_kq_block_bytes(w->fmt);
	const uint8_t *base = (const uint8_t *)w->data + (size_t)row0 * rb +
			      blk0 * ffn_kq_block_bytes(w->fmt);

	/* One input row: per-32 sums of x let SIMD kernels apply the Q4_K
	 * mins once per sub-block instead of once per value. */
	float xs[KQ_XS_MAX];
	const float *xsp = NULL;

	if (w->fmt == FFN_KQ_Q4_K && R == 1 && nb * 8 <= KQ_XS_MAX &&
	    k->isa != FFN_KQ_ISA_SCALAR) {
		for (size_t j = 0; j < nb * 8; j++) {
			float t = 0.0f;

			for (int l = 0; l < 32; l++)
				t += x[32 * j + l];
			xs[j] = t;
		}
		xsp = xs;
	}
	for (size_t r = 0; r < R; r += FFN_KQ_RMAX) {
		size_t n = R - r < FFN_KQ_RMAX ? R - r : FFN_KQ_RMAX;

		if (w->fmt == FFN_KQ_Q4_K)
			k->q4k_f32(base, rb, row1 - row0, nb, x + r * ldx, xsp,
				   ldx, n, y + r * ldy, ldy);
		else
			k->q6k_f32(base, rb, row1 - row0, nb, w->q6,
				   x + r * ldx, ldx, n, y + r * ldy, ldy);
	}
}

/* x rows hold nb * 256 readable values, zero past cols. */
static void
matvec_f32_padded(const struct ffn_kq_mat *w, uint32_t row0, uint32_t row1,
		  const float *x, size_t ldx, size_t R, float *y, size_t ldy)
{
	matvec_f32_window(w, row0, row1, 0, FFN_KQ_NBLOCKS(w->cols), x, ldx,
			  R, y, ldy);
}

size_t
ffn_kq_matvec_f32_scratch(size_t cols, size_t R)
{
	size_t rc = R < FFN_KQ_RMAX ? R : FFN_KQ_RMAX;

	if (cols % FFN_KQ_QK == 0)
		return 0;
	return rc * FFN_KQ_PAD256(cols) * sizeof(float);
}

int
ffn_kq_matvec_f32(const struct ffn_kq_mat *w, uint32_t row0, uint32_t row1,
		  const float *x, size_t ldx, size_t R, float *y, size_t ldy,
		  void *scratch, size_t scratch_len)
{
	size_t pc;
	int rc = mat_check(w, row0, row1);

	if (rc < 0 || x == NULL || y == NULL || ldx < w->cols)
		return -EINVAL;
	if (w->cols % FFN_KQ_QK == 0) {
		matvec_f32_padded(w, row0, row1, x, ldx, R, y, ldy);
		return 0;
	}
	/* The last block is partial: kernels read whole blocks, so give them
	 * a zero-padded copy (never read the caller's x past cols). */
	if (scratch_len < ffn_kq_matvec_f32_scratch(w->cols, R) ||
	    scratch == NULL)
		return -ENOSPC;
	pc = FFN_KQ_PAD256(w->cols);
	for (size_t r = 0; r < R; r += FFN_KQ_RMAX) {
		size_t n = R - r < FFN_KQ_RMAX ? R - r : FFN_KQ_RMAX;
		float *xp = scratch;

		for (size_t i = 0; i < n; i++) {
			memcpy(xp + i * pc, x + (r + i) * ldx,
			       w->cols * sizeof(float));
			memset(xp + i * pc + w->cols, 0,
			       (pc - w->cols) * sizeof(float));
		}
		matvec_f32_padded(w, row0, row1, xp, pc, n, y + r * ldy, ldy);
	}
	return 0;
}

/* ffn_kq_matvec_q8k over the block columns [blk0, blk0 + nb) of w; q8
 * rows are Q8_K rows of nb blocks. */
static void
matvec_q8k_window(const struct ffn_kq_mat *w, uint32_t row0, uint32_t row1,
		  size_t blk0, size_t nb, const void *q8, size_t R, float *y,
		  size_t ldy)
{
	const struct ffn_kq_kernels *k = kernels();
	size_t rb = FFN_KQ_NBLOCKS(w->cols) * ffn_kq_block_bytes(w->fmt);
	size_t qrow = nb * FFN_KQ_Q8K_BYTES;
	const uint8_t *base = (const uint8_t *)w->data + (size_t)row0 * rb +
			      blk0 * ffn_kq_block_bytes(w->fmt);

	for (size_t r = 0; r < R; r += FFN_KQ_RMAX) {
		size_t n = R - r < FFN_KQ_RMAX ? R - r : FFN_KQ_RMAX;
		const uint8_t *in = (const uint8_t *)q8 + r * qrow;
		/* Q6_K: per-16 sums of the inputs, once per input row, let the
		 * kernels apply q - 32 once per block (the wire has per-32) */
		int16_t s16[KQ_S16_MAX];
		const int16_t *s16p = NULL;

		if (w->fmt == FFN_KQ_Q4_K) {
			k->q4k_q8k(base, rb, row1 - row0, nb, in, n,
				   y + r * ldy, ldy);
			continue;
		}
		if (n * nb * 16 <= KQ_S16_MAX && k->isa != FFN_KQ_ISA_SCALAR) {
			for (size_t i = 0; i < n * nb; i++) {
				const int8_t *a = kq_q8_qs(in + (i / nb) * qrow,
							   nb, i % nb);

				for (int g = 0; g < 16; g++) {
					int t = 0;

					for (int l = 0; l < 16; l++)
						t += a[16 * g + l];
					s16[16 * i + g] = (int16_t)t;
				}
			}
			s16p = s16;
		}
		k->q6k_q8k(base, rb, row1 - row0, nb, w->q6, in, s16p, n,
			   y + r * ldy, ldy);
	}
}

int
ffn_kq_matvec_q8k(const struct ffn_kq_mat *w, uint32_t row0, uint32_t row1,
		  const void *q8, size_t R, float *y, size_t ldy)
{
	int rc = mat_check(w, row0, row1);

	if (rc < 0 || q8 == NULL || y == NULL)
		return -EINVAL;
	matvec_q8k_window(w, row0, row1, 0, FFN_KQ_NBLOCKS(w->cols), q8, R,
			  y, ldy);
	return 0;
}

/*
 * --- Layer ---------------------------------------------------------------
 */

/* Per chunk of up to FFN_KQ_RMAX rows:
 * f32: xp[rc][pad(H)] (only if H % 256), g[rc][pad(nf)], u[rc][nf]
 * q8k: xq[rc][nb(H) * 276], g, u, aq[rc][nb(nf) * 276] */
struct layer_scratch {
	float *xp, *g, *u;
	uint8_t *xq, *aq;
	size_t need;
};

static size_t
align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

static void
layer_scratch_layout(const struct ffn_kq_layer *l, size_t R,
		     enum ffn_kq_path path, struct layer_scratch *s,
		     uint8_t *base)
{
	size_t rc = R < FFN_KQ_RMAX ? R : FFN_KQ_RMAX, off = 0;
	size_t ph = FFN_KQ_PAD256(l->hidden), pn = FFN_KQ_PAD256(l->nf);

#define TAKE(ptr, type, bytes) do { \
		(ptr) = base ? (type)(void *)(base + off) : NULL; \
		off += align64(bytes); \
	} while (0)
	memset(s, 0, sizeof(*s));
	TAKE(s->g, float *, rc * pn * sizeof(float));
	TAKE(s->u, float *, rc * l->nf * sizeof(float));
	if (path == FFN_KQ_PATH_F32) {
		if (l->hidden % FFN_KQ_QK)
			TAKE(s->xp, float *, rc * ph * sizeof(float));
	} else {
		TAKE(s->xq, uint8_t *,
		     rc * FFN_KQ_NBLOCKS(l->hidden) * FFN_KQ_Q8K_BYTES);
		TAKE(s->aq, uint8_t *,
		     rc * FFN_KQ_NBLOCKS(l->nf) * FFN_KQ_Q8K_BYTES);
	}
#undef TAKE
	s->need = off + 64;	/* room to align the caller's pointer */
}

size_t
ffn_kq_layer_scratch(const struct ffn_kq_layer *l, size_t R,
		     enum ffn_kq_path path)
{
	struct layer_scratch s;

	if (l == NULL || R == 0)
		return 0;
	layer_scratch_layout(l, R, path, &s, NULL);
	return s.need;
}

static int
layer_check(const struct ffn_kq_layer *l)
{
	if (l == NULL || l->gate == NULL || l->up == NULL ||
	    l->down == NULL || l->nf == 0 || l->hidden == 0)
		return -EINVAL;
	if (l->gate_fmt > FFN_KQ_Q6_K || l->up_fmt > FFN_KQ_Q6_K ||
	    l->down_fmt > FFN_KQ_Q6_K || l->q6 > FFN_KQ_Q6_GGML)
		return -EINVAL;
	return 0;
}

/*
 * x (f32 rows) or xq (Q8_K rows); the features [f0, f1) only (the whole
 * layer: 0, nf). A slice starts on a block and ends on one or at nf, so
 * its activations quantise to the same Q8_K blocks as in the whole layer
 * and its down columns are whole blocks of every down row.
 */
static int
layer_forward(const struct ffn_kq_layer *l, enum ffn_kq_path path,
	      ffn_kq_act_fn act, uint32_t f0, uint32_t f1,
	      const float *x, size_t ldx, const uint8_t *xq, size_t R,
	      float *y, size_t ldy, void *scratch, size_t scratch_len)
{
	struct ffn_kq_mat G, U, D;
	struct layer_scratch s;
	uint8_t *base;
	size_t pn, ph, nbh, nbn, ns;

	if (layer_check(l) < 0 || act == NULL || (x == NULL && xq == NULL) ||
	    y == NULL ||
	    (x != NULL && ldx < l->hidden) || ldy < l->hidden)
		return -EINVAL;
	if (f0 >= f1 || f1 > l->nf || f0 % FFN_KQ_QK != 0 ||
	    (f1 % FFN_KQ_QK != 0 && f1 != l->nf))
		return -EINVAL;
	if (R == 0)
		return 0;
	if (scratch == NULL || scratch_len < ffn_kq_layer_scratch(l, R, path))
		return -ENOSPC;
	base = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
	layer_scratch_layout(l, R, path, &s, base);
	/* the scratch is laid out for the whole layer; a slice needs less */
	ns = f1 - f0;
	pn = FFN_KQ_PAD256(ns);
	ph = FFN_KQ_PAD256(l->hidden);
	nbh = FFN_KQ_NBLOCKS(l->hidden);
	nbn = FFN_KQ_NBLOCKS(ns);
	G = (struct ffn_kq_mat){ l->gate, l->gate_fmt, l->q6, l->nf, l->hidden };
	U = (struct ffn_kq_mat){ l->up, l->up_fmt, l->q6, l->nf, l->hidden };
	D = (struct ffn_kq_mat){ l->down, l->down_fmt, l->q6, l->hidden, l->nf };

	for (size_t r0 = 0; r0 < R; r0 += FFN_KQ_RMAX) {
		size_t n = R - r0 < FFN_KQ_RMAX ? R - r0 : FFN_KQ_RMAX;
		const float *xr = x != NULL ? x + r0 * ldx : NULL;
		size_t lx = ldx;

		/* f32 rows on the f32 path; Q8_K rows (given, or quantised
		 * here on the Q8_K path) take the integer dots. Given Q8_K
		 * rows on the f32 path: ffn_kq_layer_forward_q8k_in(). */
		if (xq == NULL && path == FFN_KQ_PATH_F32) {
			if (s.xp != NULL) {
				for (size_t i = 0; i < n; i++) {
					memcpy(s.xp + i * ph, xr + i * ldx,
					       l->hidden * sizeof(float));
					memset(s.xp + i * ph + l->hidden, 0,
					       (ph - l->hidden) * sizeof(float));
				}
				xr = s.xp;
				lx = ph;
			}
			matvec_f32_padded(&G, f0, f1, xr, lx, n, s.g, pn);
			matvec_f32_padded(&U, f0, f1, xr, lx, n, s.u, ns);
		} else {
			const uint8_t *in = s.xq;

			if (xq != NULL)
				in = xq + r0 * nbh * FFN_KQ_Q8K_BYTES;
			else
				for (size_t i = 0; i < n; i++)
					ffn_kq_quantize_q8k(xr + i * ldx,
						l->hidden, s.xq + i * nbh *
						FFN_KQ_Q8K_BYTES);
			ffn_kq_matvec_q8k(&G, f0, f1, in, n, s.g, pn);
			ffn_kq_matvec_q8k(&U, f0, f1, in, n, s.u, ns);
		}
		/* a = act(g) * u, in g, zero past f1: down reads whole blocks */
		for (size_t i = 0; i < n; i++) {
			float *g = s.g + i * pn;
			const float *u = s.u + i * ns;

			act(g, u, ns);
			memset(g + ns, 0, (pn - ns) * sizeof(float));
		}
		if (path == FFN_KQ_PATH_F32) {
			matvec_f32_window(&D, 0, l->hidden, f0 / FFN_KQ_QK,
					  nbn, s.g, pn, n, y + r0 * ldy, ldy);
		} else {
			for (size_t i = 0; i < n; i++)
				ffn_kq_quantize_q8k(s.g + i * pn, ns,
					s.aq + i * nbn * FFN_KQ_Q8K_BYTES);
			matvec_q8k_window(&D, 0, l->hidden, f0 / FFN_KQ_QK,
					  nbn, s.aq, n, y + r0 * ldy, ldy);
		}
	}
	return 0;
}

int
ffn_kq_layer_forward(const struct ffn_kq_layer *l, enum ffn_kq_path path,
		     ffn_kq_act_fn act, const float *x, size_t ldx, size_t R,
		     float *y, size_t ldy, void *scratch, size_t scratch_len)
{
	if (x == NULL || l == NULL)
		return -EINVAL;
	return layer_forward(l, path, act, 0, l->nf, x, ldx, NULL, R, y, ldy,
			     scratch, scratch_len);
}

int
ffn_kq_layer_forward_part(const struct ffn_kq_layer *l,
			  enum ffn_kq_path path, ffn_kq_act_fn act,
			  uint32_t f0, uint32_t f1, const float *x,
			  size_t ldx, size_t R, float *y, size_t ldy,
			  void *scratch, size_t scratch_len)
{
	if (x == NULL || l == NULL)
		return -EINVAL;
	return layer_forward(l, path, act, f0, f1, x, ldx, NULL, R, y, ldy,
			     scratch, scratch_len);
}

int
ffn_kq_layer_forward_q8k(const struct ffn_kq_layer *l, ffn_kq_act_fn act,
			 const void *xq, size_t R, float *y, size_t ldy,
			 void *scratch, size_t scratch_len)
{
	if (xq == NULL || l == NULL)
		return -EINVAL;
	return layer_forward(l, FFN_KQ_PATH_Q8K, act, 0, l->nf, NULL, 0, xq,
			     R, y, ldy, scratch, scratch_len);
}

int
ffn_kq_layer_forward_q8k_in(const struct ffn_kq_layer *l, ffn_kq_act_fn act,
			    const void *xq, size_t R, float *y, size_t ldy,
			    void *scratch, size_t scratch_len)
{
	if (xq == NULL || l == NULL)
		return -EINVAL;
	/* the f32 path's down and scratch (g, u; its xp stays unused: no
	 * f32 input row is copied), with Q8_K dots for gate and up */
	return layer_forward(l, FFN_KQ_PATH_F32, act, 0, l->nf, NULL, 0, xq,
			     R, y, ldy, scratch, scratch_len);
}
