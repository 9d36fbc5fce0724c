/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef TEST_HTTP_HARNESS_H
#define TEST_HTTP_HARNESS_H

/*
 * A driver that feeds a byte string to the parser in given chunks, each
 * chunk placed so that it ends right before a PROT_NONE page (any read past
 * the chunk faults), and records everything the caller can observe as text,
 * so that two runs compare with one strcmp.
 */

#include <stddef.h>
#include <stdint.h>

#include "http.h"

struct outcome {
	int requests;		/* requests completed (HTTP_EV_DONE) */
	int status;		/* error status, 0 if none */
	const char *err;
	size_t consumed;	/* bytes consumed in total */
	int final_ev;		/* last event returned */
	char log[8192];		/* per request: head fields and body */
};

enum body_mode {
	BODY_PARSER_COPY,	/* http_feed() copies the body */
	BODY_CALLER_COPY,	/* caller copies via http_body_want/commit */
	BODY_DISCARD,		/* http_body_discard() */
};

struct drive_opts {
	uint32_t head_cap;	/* 0: 8192 */
	uint64_t max_body;	/* 0: default */
	enum body_mode mode;
	uint64_t chunked_buf0;	/* first buffer for chunked bodies (grows) */
};

/* Feed data[0..len) split at the given cut points (sorted, each in
 * (0, len)). */
void drive(const struct drive_opts *o, const void *data, size_t len,
		const size_t *cuts, size_t ncuts, struct outcome *out);
/* Whole, every single split point, and byte by byte: all must agree;
 * the whole-feed outcome is returned. */
void drive_all_splits(const struct drive_opts *o, const void *data,
		size_t len, struct outcome *out);

#endif
