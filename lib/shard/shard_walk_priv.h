/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Private to lib/shard's request lifecycle (shard_walk.c, shard_split.c).
 */
#ifndef FFN_SHARD_WALK_PRIV_H
#define FFN_SHARD_WALK_PRIV_H

#include "shard.h"

/* Rows gathered for one compute pass; more rows make more passes. */
#define SHARD_PASS_ROWS 256

/* Count one compute pass of rows in the rows-per-pass histogram. */
void shard_count_batch(struct shard_stats *st, unsigned int rows);

#endif /* FFN_SHARD_WALK_PRIV_H */
