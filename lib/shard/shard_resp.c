/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Responses and their counting: what every route fills and how each
 * answer is counted (shard.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http.h"
#include "shard.h"
#include "shard_walk_priv.h"

uint64_t
shard_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *
heap_alloc(void *arg, size_t size)
{
	(void)arg;
	/* aligned_alloc wants a multiple of the alignment. */
	return aligned_alloc(64, (size + 63) & ~(size_t)63);
}

static void
heap_free(void *arg, void *p)
{
	(void)arg;
	free(p);
}

const struct shard_mem shard_mem_heap = {
	.alloc = heap_alloc,
	.free = heap_free,
	.arg = NULL,
};

void
shard_resp_release(struct shard_resp *r)
{
	if (r->release != NULL) {
		void (*release)(void *) = r->release;

		r->release = NULL;
		release(r->release_arg);
	}
	free(r->heap);
	r->heap = NULL;
	if (r->mem != NULL && r->mem_ops != NULL)
		r->mem_ops->free(r->mem_ops->arg, r->mem);
	r->mem = NULL;
	r->iov = NULL;
	r->iovcnt = 0;
}

void
shard_resp_one(struct shard_resp *r, const char *type, void *body,
	       size_t len)
{
	r->status = 200;
	r->content_type = type;
	r->one.iov_base = body;
	r->one.iov_len = len;
	r->iov = &r->one;
	r->iovcnt = len ? 1 : 0;
	r->len = len;
}

void
shard_resp_heap(struct shard_resp *r, const char *type, char *body,
		size_t len)
{
	shard_resp_one(r, type, body, len);
	r->heap = body;
}

void
shard_resp_error(struct shard_resp *r, int status, const char *msg)
{
	size_t cap = 6 * strlen(msg) + 16;
	char *body = malloc(cap);
	ssize_t n = body ? http_json_error(body, cap, msg) : -ENOMEM;

	if (n < 0) {
		free(body);
		body = NULL;
		n = 0;
	}
	shard_resp_heap(r, "application/json", body, (size_t)n);
	r->status = status;
}

const char *
shard_status_msg(int status)
{
	switch (status) {
	case 404: return "not found";
	case 405: return "method not allowed";
	case 413: return "request body too large";
	case 429: return "rate limit exceeded";
	case 501: return "method not implemented";
	default:  return "out of memory for the request body";
	}
}

void
shard_resp_text(struct shard_resp *r, int status, const char *msg)
{
	size_t n = strlen(msg);
	char *body = malloc(n + 1);

	if (body != NULL)
		memcpy(body, msg, n + 1);
	shard_resp_heap(r, "text/plain; charset=utf-8", body,
			body != NULL ? n : 0);
	r->status = status;
}

void
shard_resp_wire_error(struct shard_resp *r, const struct wire_error *e)
{
	if (e->text)
		shard_resp_text(r, e->status, e->msg);
	else
		shard_resp_error(r, e->status, e->msg);
}

/* The appliance's own limit (spec/wire.md §4, last paragraph): a request
 * must not make us allocate without bound, whatever it asks for. */
void
shard_resp_too_large(struct shard_resp *r, const struct shard_unit *u,
		     const char *fmt, ...)
{
	char what[96], msg[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "response of %s exceeds the shard's "
		 "limit of %llu bytes", what,
		 (unsigned long long)u->max_response);
	shard_resp_error(r, 413, msg);
}

static int
status_bucket(int status)
{
	static const int codes[] = {
#define SHARD_CODE(c) c,
		SHARD_STATUSES(SHARD_CODE)
#undef SHARD_CODE
	};
	for (int i = 0; i < (int)(sizeof(codes) / sizeof(codes[0])); i++)
		if (codes[i] == status)
			return i;
	return SHARD_N_STATUS - 1; /* "other" */
}

/*
 * An error answer of a log_errors route, on stderr: at most one line a
 * second per lcore (a flood of bad requests must not become a flood of
 * writes on the data path), saying how many were held back since.
 */
static void
log_error(const struct shard_unit *u, struct shard_stats *st,
	  const struct shard_resp *r)
{
	uint64_t now = shard_now_ns();
	const char *body = r->iovcnt ? r->iov[0].iov_base : "";
	int len = r->iovcnt ? (int)r->iov[0].iov_len : 0;

	if (st->log_ns != 0 && now - st->log_ns < 1000000000ull) {
		st->log_held++;
		return;
	}
	if (len > 200)
		len = 200;
	fprintf(stderr, "ffn-shard: [%s] %s answered %d: %.*s", u->name,
		shard_routes[r->route].name, r->status, len, body);
	if (st->log_held)
		fprintf(stderr, " (and %llu more errors in the last %.1f s)",
			(unsigned long long)st->log_held,
			(double)(now - st->log_ns) / 1e9);
	fputc('\n', stderr);
	st->log_ns = now;
	st->log_held = 0;
}

void
shard_count(struct shard_unit *u, const struct shard_resp *r,
	    size_t bytes_in, unsigned int lcore)
{
	struct shard_stats *st = &u->stats[lcore % SHARD_MAX_LCORE];

	if (r->status >= 400 && u->log_errors &&
	    shard_routes[r->route].log_errors)
		log_error(u, st, r);

	st->requests[r->route][status_bucket(r->status)]++;
	st->bytes_in += bytes_in;
	st->bytes_out += r->len;
	if (r->route == SHARD_R_WALK && r->status == 200) {
		st->walk_served++;
		if (r->fmt_out >= 0 && r->fmt_out < WIRE_FMT_COUNT)
			st->walk_out[r->fmt_out]++;
	}
}

void
shard_count_latency(struct shard_stats *st, double ms)
{
	static const double bounds_us[SHARD_LAT_BUCKETS - 1] = {
		50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000,
		100000,
	};
	double us = ms * 1000.0;
	int b = 0;

	while (b < SHARD_LAT_BUCKETS - 1 && us > bounds_us[b])
		b++;
	st->lat_hist[b]++;
	st->lat_sum_ms += ms;
}

/* Buckets 1, 2, 4, ..., 64, +Inf. */
static int
rows_bucket(unsigned int rows)
{
	int b = 0;

	while (b < SHARD_BATCH_BUCKETS - 1 && rows > (1u << b))
		b++;
	return b;
}

void
shard_count_batch(struct shard_stats *st, unsigned int rows)
{
	st->batch_hist[rows_bucket(rows)]++;
}

void
shard_count_expert_run(struct shard_stats *st, unsigned int rows)
{
	st->expert_rows += rows;
	st->expert_runs++;
	st->expert_hist[rows_bucket(rows)]++;
}
