/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_APP_GRID_H
#define FFN_APP_GRID_H

/*
 * The appliance's side of the grid (issue 20): what each [shard NAME]
 * with join gives lib/grid (its announce, key, routers) and the data
 * path's facts it reads (requests in flight, per-layer compute times
 * from per-lcore rings), and the stop order: Dropping first, drain after.
 */

#include <stdbool.h>

#include "conf.h"
#include "shard.h"

/* conf_facts.grid_check for `--check`: the routers resolve and have a
 * route (each one's source address is printed), the key reads. */
int app_grid_check(const struct conf_unit *u, void *arg, const char **key,
		   char *why, size_t whylen);

/* Join the routers of every unit of c that has join (units[i] is c's
 * i-th unit, loaded; call before the lcores start). stop() starts the
 * drain once app_grid_leave()'s Droppings are out (it runs on the grid's
 * thread). 0 (also when no unit joins) or -1 after a message on stderr. */
int app_grid_start(const struct conf *c, struct shard_unit *units,
		   void (*stop)(void));

/* A unit joins (its /metrics gets the grid families). */
bool app_grid_unit_joins(const struct shard_unit *u);

/* The first stop signal, with a grid: send Dropping "shutdown" on every
 * stream, then call app_grid_start's stop(), which starts the drain.
 * Returns false when no unit joins (the caller drains at once).
 * Async-signal-safe. */
bool app_grid_leave(void);

/* After the lcores have stopped: close the streams, stop the thread. */
void app_grid_stop(void);

#endif /* FFN_APP_GRID_H */
