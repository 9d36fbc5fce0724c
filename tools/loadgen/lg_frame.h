/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef LG_FRAME_H
#define LG_FRAME_H

/**
 * @file
 * The answer frame a request must get (spec/wire.md §5.2), checked as the
 * body streams in: its exact length, and every header field whose value
 * is known in advance (single: layer, seq_len; batch: marker, count, and
 * each result's layer, seq_len, num_values).  latency_ms and the values
 * themselves are not predictable and are not checked.  Plain C.
 */

#include <stddef.h>
#include <stdint.h>

/** A byte range of the body whose value is known in advance. */
struct lg_check {
	uint32_t off;
	uint32_t len;
	uint8_t bytes[12];
};

struct lg_frame {
	int fmt;		/**< enum lc_fmt of the answer */
	uint64_t body_len;
	uint32_t nchk;
	struct lg_check *chk;	/**< sorted by offset, disjoint */
};

/**
 * Expect the answer to a request of nlayers layers (1: single frame, else
 * batch frame, §5.2 "the shape depends on how many results were
 * computed") of seq_len rows of hidden values, in format fmt.
 * Returns 0 or -ENOMEM.
 */
int lg_frame_expect(struct lg_frame *f, int fmt, const uint32_t *layers,
		    uint32_t nlayers, uint32_t seq_len, uint32_t hidden);
void lg_frame_free(struct lg_frame *f);

/**
 * Check body bytes [off, off + n) (pieces in order; *cursor starts at 0).
 * Returns 0, or -1 when a known field differs.
 */
int lg_frame_check(const struct lg_frame *f, uint32_t *cursor, uint64_t off,
		   const uint8_t *p, size_t n);

#endif /* LG_FRAME_H */
