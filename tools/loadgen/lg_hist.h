/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef LG_HIST_H
#define LG_HIST_H

/**
 * @file
 * Latency histogram with log-linear buckets, in the manner of
 * HdrHistogram: values below 2^LG_HIST_SUB_BITS are exact, above that each
 * power of two is split into 2^(LG_HIST_SUB_BITS-1) equal buckets, so a
 * reported percentile is at most 1/2^(LG_HIST_SUB_BITS-1) above the true
 * value (0.8% with 8 bits).  Values are nanoseconds; recording is O(1) with
 * no allocation.  Plain C.
 */

#include <stdint.h>

#define LG_HIST_SUB_BITS 8
#define LG_HIST_SUB (1u << LG_HIST_SUB_BITS)		/* 256 */
#define LG_HIST_HALF (LG_HIST_SUB >> 1)			/* 128 */
#define LG_HIST_MAX_SHIFT (64 - LG_HIST_SUB_BITS)
#define LG_HIST_BUCKETS (LG_HIST_SUB + LG_HIST_MAX_SHIFT * LG_HIST_HALF)

struct lg_hist {
	uint64_t count;
	uint64_t min;
	uint64_t max;
	uint64_t sum;
	uint64_t b[LG_HIST_BUCKETS];
};

void lg_hist_reset(struct lg_hist *h);
void lg_hist_record(struct lg_hist *h, uint64_t v);
/** Add every value of src to dst. */
void lg_hist_merge(struct lg_hist *dst, const struct lg_hist *src);
/**
 * The values recorded into a histogram between two snapshots of it
 * (before, then now; several lcores' merged): dst = now - before, bucket
 * by bucket.  min and max are now's (bounds, not the interval's own).
 */
void lg_hist_since(struct lg_hist *dst, const struct lg_hist *now,
		   const struct lg_hist *before);
/**
 * The value at percentile q (0..100]: the highest value equivalent to the
 * bucket holding the ceil(q/100 * count)-th smallest value, clamped to the
 * recorded max.  0 when empty.
 */
uint64_t lg_hist_pct(const struct lg_hist *h, double q);
/** Bucket of v, and the highest value in bucket i (for tests). */
unsigned int lg_hist_index(uint64_t v);
uint64_t lg_hist_bucket_high(unsigned int i);

#endif /* LG_HIST_H */
