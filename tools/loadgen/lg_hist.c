/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Log-linear latency histogram (lg_hist.h). */

#include <math.h>
#include <string.h>

#include "lg_hist.h"

unsigned int
lg_hist_index(uint64_t v)
{
	unsigned int msb, shift;

	if (v < LG_HIST_SUB)
		return (unsigned int)v;
	msb = 63u - (unsigned int)__builtin_clzll(v);
	/* v >> shift lies in [HALF, SUB): HALF buckets per power of two. */
	shift = msb - (LG_HIST_SUB_BITS - 1);
	return LG_HIST_SUB + (shift - 1) * LG_HIST_HALF +
	       (unsigned int)((v >> shift) - LG_HIST_HALF);
}

uint64_t
lg_hist_bucket_high(unsigned int i)
{
	unsigned int shift;
	uint64_t sub;

	if (i < LG_HIST_SUB)
		return i;
	shift = (i - LG_HIST_SUB) / LG_HIST_HALF + 1;
	sub = (i - LG_HIST_SUB) % LG_HIST_HALF + LG_HIST_HALF;
	return ((sub + 1) << shift) - 1;
}

void
lg_hist_reset(struct lg_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void
lg_hist_record(struct lg_hist *h, uint64_t v)
{
	h->b[lg_hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void
lg_hist_merge(struct lg_hist *dst, const struct lg_hist *src)
{
	for (unsigned int i = 0; i < LG_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

void
lg_hist_since(struct lg_hist *dst, const struct lg_hist *now,
	      const struct lg_hist *before)
{
	dst->count = 0;
	dst->sum = now->sum - before->sum;
	dst->min = now->min;
	dst->max = now->max;
	/* The count from the buckets: now's total may be read a moment
	 * apart from its buckets while its lcore records. */
	for (unsigned int i = 0; i < LG_HIST_BUCKETS; i++) {
		dst->b[i] = now->b[i] >= before->b[i] ?
			    now->b[i] - before->b[i] : 0;
		dst->count += dst->b[i];
	}
}

uint64_t
lg_hist_pct(const struct lg_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (h->count == 0)
		return 0;
	rank = (uint64_t)ceil(q / 100.0 * (double)h->count);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (unsigned int i = 0; i < LG_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			uint64_t hi = lg_hist_bucket_high(i);

			return hi < h->max ? hi : h->max;
		}
	}
	return h->max;
}
