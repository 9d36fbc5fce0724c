/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_APP_FRONT_H
#define FFN_APP_FRONT_H

/*
 * The appliance's side of a fan-out front (issue 19): the [front NAME]
 * section made a lib/front front (its shard keys read), attached to the
 * unit that serves it, and its /metrics families.
 */

#include "conf.h"
#include "shard.h"
#include "shard_server.h"

/* Make cu's front (keys read with conf_secret_read); NULL after a
 * message on stderr. */
struct front *app_front_create(const struct conf *c,
			       const struct conf_unit *cu);

/* Give f the unit's request memory (DPDK memory: its answers' headers
 * go to the NIC). */
void app_front_attach(struct front *f, struct shard_srv_unit *su);

/* shard_unit.metrics_extra of a front unit: the server's counters and
 * the front's families. arg is the unit. */
size_t app_front_metrics(void *arg, char *buf, size_t cap);

#endif /* FFN_APP_FRONT_H */
