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
 * themselves are not predictable and are not checked here; the values can
 * be held to a reference answer to the same request (lg_frame_values_close).
 * Plain C.
 */

#include <stdbool.h>
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
	bool expert;		/**< a layer-batch answer (lg_expert.h) */
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

/**
 * Do the values of answer body (f->body_len bytes, fields already checked
 * by lg_frame_check) agree with those of the reference answer ref, an
 * answer to the same request?  The appliance may sum in another order from
 * one answer to the next (it batches concurrent requests' rows into one
 * matrix product), so f32 values may differ in their last bits, and a
 * narrowed value may round to the neighbouring f16 or i8 step: per row,
 * |v - ref| <= tol * max|ref row| + 1e-6 with tol 1e-5 for f32 (10x the
 * worst spread measured, tests/e2e/appliance/fsa.py), 2^-10 + 1e-5 for f16
 * (one f16 step of the row's largest value), 2/127 for i8 (the row scale
 * max/127 may move too).  A wrong row, layer or weight is O(1) off.
 * *worst (may be NULL) receives the largest |v - ref| / max|ref row|.
 * Returns 1 when they agree, 0 when not, -EBADMSG / -ENOMEM when a body
 * does not decode. An expert answer (f->expert) is compared by
 * lg_expert_values_close(), with the same tolerances.
 */
int lg_frame_values_close(const struct lg_frame *f, const uint8_t *ref,
			  const uint8_t *body, double *worst);

/**
 * The frame an answer with Content-Type ctype is held to: f when ctype is
 * want (or want is NULL: any), g when g_ctype is not NULL and ctype is
 * it, else NULL (a wrong Content-Type). g is the f32 frame of an answer
 * negotiated to f16, which the precision guard sends instead when a value
 * would overflow f16 (spec/moe.md §7; the dense route too).
 */
const struct lg_frame *lg_frame_pick(const char *ctype, const char *want,
				     const struct lg_frame *f,
				     const char *g_ctype,
				     const struct lg_frame *g);

#endif /* LG_FRAME_H */
