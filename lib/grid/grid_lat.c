/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The heartbeat's per-layer latency (spec/wire.md §9.3): avg_ms is an EMA
 * with alpha 0.1 of the layer's compute time, p99_ms is over its last 100
 * requests. The control thread alone touches these tables: the lcores'
 * samples reach it through lock-free rings (lib/shard).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"

#define EMA_ALPHA 0.1

int
grid_lat_init(struct grid_lat *t, uint32_t first, uint32_t last)
{
	memset(t, 0, sizeof(*t));
	if (last < first)
		return -EINVAL;
	t->l = calloc((size_t)last - first + 1, sizeof(*t->l));
	if (t->l == NULL)
		return -ENOMEM;
	t->first = first;
	t->count = last - first + 1;
	return 0;
}

void
grid_lat_fini(struct grid_lat *t)
{
	free(t->l);
	memset(t, 0, sizeof(*t));
}

int
grid_lat_add(struct grid_lat *t, uint32_t layer, double ms,
	     unsigned int n_requests)
{
	struct grid_lat_layer *l;

	if (layer < t->first || layer - t->first >= t->count)
		return -ERANGE;
	if (!isfinite(ms) || ms < 0)
		ms = 0;
	l = &t->l[layer - t->first];
	for (unsigned int i = 0; i < n_requests; i++) {
		/* The first sample starts the average (an EMA from 0 would
		 * report a fresh layer ten times too fast). */
		l->ema_ms = l->seen ? l->ema_ms + EMA_ALPHA * (ms - l->ema_ms)
				    : ms;
		l->seen = true;
		l->win[l->next] = (float)ms;
		l->next = (l->next + 1) % GRID_LAT_WINDOW;
		if (l->n < GRID_LAT_WINDOW)
			l->n++;
		if (i + 1 >= GRID_LAT_WINDOW && l->n == GRID_LAT_WINDOW &&
		    i + 1 < n_requests) {
			/* The window holds only this value from here on and
			 * the EMA converges to it: finish in closed form. */
			unsigned int left = n_requests - i - 1;

			l->ema_ms = ms + (l->ema_ms - ms) *
				pow(1 - EMA_ALPHA, left);
			l->next = (l->next + left) % GRID_LAT_WINDOW;
			break;
		}
	}
	return 0;
}

static int
cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

/* The nearest-rank 99th percentile of the n values: the smallest value
 * with at least 99% of them at or below it. */
static float
p99(const struct grid_lat_layer *l)
{
	float v[GRID_LAT_WINDOW];
	unsigned int rank;

	memcpy(v, l->win, l->n * sizeof(v[0]));
	qsort(v, l->n, sizeof(v[0]), cmp_float);
	rank = (99 * l->n + 99) / 100;	/* ceil(0.99 n), 1-based */
	return v[rank - 1];
}

unsigned int
grid_lat_stats(const struct grid_lat *t, struct grid_layer_stat *out,
	       unsigned int max)
{
	unsigned int k = 0;

	for (uint32_t i = 0; i < t->count && k < max; i++) {
		const struct grid_lat_layer *l = &t->l[i];

		if (!l->seen)
			continue;
		out[k].layer = t->first + i;
		out[k].avg_ms = (float)l->ema_ms;
		out[k].p99_ms = p99(l);
		k++;
	}
	return k;
}
