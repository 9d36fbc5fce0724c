/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The front's Prometheus families (front.h, front_metrics): every lcore's
 * counters summed, per shard.
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "front_priv.h"

static const char *const err_name[FR_E_COUNT] = {
	[FR_E_CONNECT] = "connect",
	[FR_E_RESET] = "reset",
	[FR_E_TIMEOUT] = "timeout",
	[FR_E_MALFORMED] = "malformed",
	[FR_E_STATUS] = "status",
};

static const char *const lat_le[FR_LAT_BUCKETS] = {
	"0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01",
	"0.025", "0.05", "0.1", "1", "+Inf",
};

struct out {
	char *buf;
	size_t cap, len;
	bool full;
};

/* Whole lines only: a line that does not fit is not written. */
static void
line(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->cap - o->len) {
		o->buf[o->len] = '\0';
		o->full = true;
		return;
	}
	o->len += (size_t)n;
}

size_t
front_metrics(const struct front *f, char *buf, size_t cap)
{
	struct fr_shard_stats sum[FRONT_MAX_SHARDS];
	unsigned int up[FRONT_MAX_SHARDS], lcores = 0;
	uint64_t narrowed = 0, retries = 0, mismatch = 0;
	struct out o = { buf, cap, 0, false };

	if (cap == 0)
		return 0;
	buf[0] = '\0';
	memset(sum, 0, sizeof(sum));
	memset(up, 0, sizeof(up));
	for (unsigned int l = 0; l < FRONT_MAX_LCORE; l++) {
		const struct fr_lc_stats *st = f->st[l];

		if (st == NULL)
			continue;
		lcores++;
		narrowed += st->narrowed;
		retries += st->retries;
		mismatch += st->mismatch;
		for (unsigned int s = 0; s < f->n_shards; s++) {
			const struct fr_shard_stats *a = &st->sh[s];

			up[s] += st->up[s];
			sum[s].requests += a->requests;
			sum[s].answers += a->answers;
			sum[s].lat_sum_us += a->lat_sum_us;
			for (unsigned int e = 0; e < FR_E_COUNT; e++)
				sum[s].errors[e] += a->errors[e];
			for (unsigned int b = 0; b < FR_LAT_BUCKETS; b++)
				sum[s].lat_hist[b] += a->lat_hist[b];
		}
	}
	line(&o, "# HELP ffn_front_shard_requests_total Requests the front "
	     "sent to each shard (retries included).\n"
	     "# TYPE ffn_front_shard_requests_total counter\n");
	for (unsigned int s = 0; s < f->n_shards; s++)
		line(&o, "ffn_front_shard_requests_total{front=\"%s\","
		     "shard=\"%s\"} %" PRIu64 "\n", f->name,
		     f->shard[s].label, sum[s].requests);
	line(&o, "# HELP ffn_front_shard_errors_total Failed requests to "
	     "each shard, by reason (status: a non-200 answer).\n"
	     "# TYPE ffn_front_shard_errors_total counter\n");
	for (unsigned int s = 0; s < f->n_shards; s++)
		for (unsigned int e = 0; e < FR_E_COUNT; e++)
			line(&o, "ffn_front_shard_errors_total{front=\"%s\","
			     "shard=\"%s\",reason=\"%s\"} %" PRIu64 "\n",
			     f->name, f->shard[s].label, err_name[e],
			     sum[s].errors[e]);
	line(&o, "# HELP ffn_front_shard_latency_seconds From a request "
	     "sent to its answer read, per shard.\n"
	     "# TYPE ffn_front_shard_latency_seconds histogram\n");
	for (unsigned int s = 0; s < f->n_shards; s++) {
		uint64_t c = 0;

		for (unsigned int b = 0; b < FR_LAT_BUCKETS; b++) {
			c += sum[s].lat_hist[b];
			line(&o, "ffn_front_shard_latency_seconds_bucket{"
			     "front=\"%s\",shard=\"%s\",le=\"%s\"} %" PRIu64
			     "\n", f->name, f->shard[s].label, lat_le[b], c);
		}
		line(&o, "ffn_front_shard_latency_seconds_sum{front=\"%s\","
		     "shard=\"%s\"} %.6f\n", f->name, f->shard[s].label,
		     (double)sum[s].lat_sum_us / 1e6);
		line(&o, "ffn_front_shard_latency_seconds_count{front=\"%s\","
		     "shard=\"%s\"} %" PRIu64 "\n", f->name,
		     f->shard[s].label, c);
	}
	line(&o, "# HELP ffn_front_shard_up Network lcores on which the "
	     "shard is in use (of ffn_front_lcores).\n"
	     "# TYPE ffn_front_shard_up gauge\n");
	for (unsigned int s = 0; s < f->n_shards; s++)
		line(&o, "ffn_front_shard_up{front=\"%s\",shard=\"%s\"} %u\n",
		     f->name, f->shard[s].label, up[s]);
	line(&o, "# HELP ffn_front_lcores Network lcores of the front.\n"
	     "# TYPE ffn_front_lcores gauge\n"
	     "ffn_front_lcores{front=\"%s\"} %u\n", f->name, lcores);
	line(&o, "# HELP ffn_front_narrowed_total Results the front narrowed "
	     "because a shard answered wider than the client's format.\n"
	     "# TYPE ffn_front_narrowed_total counter\n"
	     "ffn_front_narrowed_total{front=\"%s\"} %" PRIu64 "\n",
	     f->name, narrowed);
	line(&o, "# HELP ffn_front_retries_total Requests sent again after "
	     "a connection failed before any answer byte.\n"
	     "# TYPE ffn_front_retries_total counter\n"
	     "ffn_front_retries_total{front=\"%s\"} %" PRIu64 "\n",
	     f->name, retries);
	line(&o, "# HELP ffn_front_stats_mismatch_total Shard /v1/stats "
	     "answers that disagreed with the others (shard not used).\n"
	     "# TYPE ffn_front_stats_mismatch_total counter\n"
	     "ffn_front_stats_mismatch_total{front=\"%s\"} %" PRIu64 "\n",
	     f->name, mismatch);
	return o.len;
}
