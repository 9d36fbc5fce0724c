/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * /ffn/shard/stats over DPDK telemetry (shard_telemetry_register,
 * shard_server.h): a unit's walk counters and batch sizes, for scripts
 * that cannot reach /metrics because the data port is not the kernel's
 * (memif, a NIC): dpdk-telemetry.py -f PREFIX, then
 * "/ffn/shard/stats,NAME" (no NAME: the first unit). And /ffn/mempools:
 * the objects in use in every mempool of the process, which DPDK's own
 * /mempool/info does not give (tools/soak: they must come back to their
 * idle level after load).
 *
 * The counters are per-lcore words each written by one lcore only;
 * shard_stats_sum reads them from this (the telemetry) thread without a
 * lock: an aligned 64-bit load is never torn, and a sum that is one
 * request behind is what a scrape between two requests would see.
 */
#include <errno.h>
#include <string.h>

#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "shard_server.h"

static struct shard_unit *tel_units;
static unsigned int tel_n;

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct shard_unit *u = tel_n > 0 ? &tel_units[0] : NULL;
	static const char *const le[SHARD_BATCH_BUCKETS] = {
		"batch_rows_le_1", "batch_rows_le_2", "batch_rows_le_4",
		"batch_rows_le_8", "batch_rows_le_16", "batch_rows_le_32",
		"batch_rows_le_64", "batch_rows_more",
	};
	struct shard_stats s;
	uint64_t passes = 0;
	unsigned int i;

	(void)cmd;
	if (params != NULL && params[0] != '\0') {
		for (u = NULL, i = 0; i < tel_n; i++)
			if (strcmp(tel_units[i].name, params) == 0)
				u = &tel_units[i];
	}
	if (u == NULL)
		return -EINVAL;
	shard_stats_sum(u, &s);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "shard", u->name);
	rte_tel_data_add_dict_u64(d, "requests_served", s.walk_served);
	rte_tel_data_add_dict_u64(d, "layers_computed", s.layers_computed);
	rte_tel_data_add_dict_u64(d, "rows_computed", s.rows_computed);
	for (i = 0; i < SHARD_BATCH_BUCKETS; i++) {
		rte_tel_data_add_dict_u64(d, le[i], s.batch_hist[i]);
		passes += s.batch_hist[i];
	}
	/* rows per compute pass = rows_computed / compute_passes when each
	 * request asks one layer (rows_computed counts a request's rows
	 * once, a pass is one layer's) */
	rte_tel_data_add_dict_u64(d, "compute_passes", passes);
	return 0;
}

/* In use = size - (common pool + every lcore's cache), read without a
 * lock while the lcores run: a snapshot, off by the few objects moving. */
static void
tel_mempool_one(struct rte_mempool *mp, void *arg)
{
	rte_tel_data_add_dict_u64(arg, mp->name,
				  rte_mempool_in_use_count(mp));
}

static int
tel_mempools(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rte_mempool_walk(tel_mempool_one, d);
	return 0;
}

int
shard_telemetry_register(struct shard_unit *units, unsigned int n)
{
	int rc;

	tel_units = units;
	tel_n = n;
	rc = rte_telemetry_register_cmd("/ffn/shard/stats", tel_stats,
		"A unit's walk counters and rows per compute pass. "
		"Parameters: unit name (default: the first)");
	if (rc != 0)
		return rc;
	return rte_telemetry_register_cmd("/ffn/mempools", tel_mempools,
		"Objects in use in every mempool. No parameters");
}
