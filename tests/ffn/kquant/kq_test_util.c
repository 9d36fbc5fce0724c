/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#include <math.h>
#include <string.h>

#include "kq_test_util.h"

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

void
kt_random_blocks(uint64_t *rng, enum ffn_kq_fmt fmt, void *dst, size_t nb)
{
	size_t bb = ffn_kq_block_bytes(fmt);
	uint8_t *p = dst;

	for (size_t i = 0; i < nb * bb; i++)
		p[i] = (uint8_t)test_rng_u32(rng);
	for (size_t i = 0; i < nb; i++) {
		uint8_t *b = p + i * bb;

		if (fmt == FFN_KQ_Q4_K) {
			put16(b, ffn_kq_f32_to_f16(
				test_rng_uniform(rng, 1e-3f, 2e-2f)));
			put16(b + 2, ffn_kq_f32_to_f16(
				test_rng_uniform(rng, 1e-3f, 2e-2f)));
		} else {
			put16(b + 208, ffn_kq_f32_to_f16(
				test_rng_uniform(rng, -2e-3f, 2e-3f)));
		}
	}
}

static float
rdf16(const uint8_t *p)
{
	return ffn_kq_f16_to_f32((uint16_t)(p[0] | p[1] << 8));
}

void
kt_decode_parts(enum ffn_kq_fmt fmt, enum ffn_kq_q6_layout q6,
		const void *blocks, size_t nb, float *a, float *b)
{
	const uint8_t *p = blocks;

	for (size_t k = 0; k < nb; k++) {
		float *ya = a + 256 * k, *yb = b + 256 * k;

		if (fmt == FFN_KQ_Q4_K) {
			const uint8_t *blk = p + 144 * k, *s = blk + 4;
			const uint8_t *qs = blk + 16;
			float d = rdf16(blk), dmin = rdf16(blk + 2);
			int sc[8], m[8];

			for (int j = 0; j < 8; j++) {
				if (j < 4) {
					sc[j] = s[j] & 63;
					m[j] = s[j + 4] & 63;
				} else {
					sc[j] = (s[j + 4] & 15) |
						((s[j - 4] >> 6) << 4);
					m[j] = (s[j + 4] >> 4) |
					       ((s[j] >> 6) << 4);
				}
			}
			for (int g = 0; g < 4; g++)
				for (int l = 0; l < 32; l++) {
					int v = qs[32 * g + l];

					ya[64 * g + l] = d * (float)sc[2 * g] *
						(float)(v & 15);
					yb[64 * g + l] = dmin * (float)m[2 * g];
					ya[64 * g + 32 + l] = d *
						(float)sc[2 * g + 1] *
						(float)(v >> 4);
					yb[64 * g + 32 + l] = dmin *
						(float)m[2 * g + 1];
				}
			continue;
		}
		{
			const uint8_t *blk = p + 210 * k, *ql = blk;
			const uint8_t *qh = blk + 128;
			const int8_t *sc = (const int8_t *)(blk + 192);
			float d = rdf16(blk + 208);
			int q[256];

			if (q6 == FFN_KQ_Q6_PRIVATE) {
				for (int i = 0; i < 256; i++) {
					int lo = i % 2 ? ql[i / 2] >> 4
						       : ql[i / 2] & 15;
					int hi = (qh[i / 4] >> (2 * (i % 4))) & 3;

					q[i] = (lo | hi << 4) - 32;
				}
			} else {
				for (int n = 0; n < 2; n++) {
					const uint8_t *l = ql + 64 * n;
					const uint8_t *h = qh + 32 * n;
					int *o = q + 128 * n;

					for (int i = 0; i < 32; i++) {
						o[i] = ((l[i] & 15) |
							(h[i] & 3) << 4) - 32;
						o[i + 32] = ((l[i + 32] & 15) |
							((h[i] >> 2) & 3) << 4) - 32;
						o[i + 64] = ((l[i] >> 4) |
							((h[i] >> 4) & 3) << 4) - 32;
						o[i + 96] = ((l[i + 32] >> 4) |
							((h[i] >> 6) & 3) << 4) - 32;
					}
				}
			}
			for (int i = 0; i < 256; i++) {
				ya[i] = d * (float)sc[i / 16] * (float)q[i];
				yb[i] = 0.0f;
			}
		}
	}
}

double
kt_dot_exact(const float *a, const float *b, const float *x, size_t n,
	     double *bound)
{
	double s = 0, mag = 0;

	for (size_t i = 0; i < n; i++) {
		s += ((double)a[i] - (double)b[i]) * (double)x[i];
		mag += (fabs((double)a[i]) + fabs((double)b[i])) *
		       fabs((double)x[i]);
	}
	if (bound)
		*bound = (double)(n + 4) * 0x1p-23 * mag;
	return s;
}
