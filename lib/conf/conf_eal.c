/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * The facts of conf_check_runtime() as EAL knows them, for the app to use
 * after rte_eal_init(). Parsing never calls these.
 */

#include <errno.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_memory.h>

#include "conf.h"

int
conf_eal_lcore_socket(unsigned int lcore, void *arg)
{
	unsigned int s;

	if (lcore >= RTE_MAX_LCORE || !rte_lcore_is_enabled(lcore))
		return -1;
	s = rte_lcore_to_socket_id(lcore);
	/* no NUMA information (e.g. some VMs): everything is node 0 */
	return s == (unsigned int)SOCKET_ID_ANY ? 0 : (int)s;
}

int
conf_eal_port_id(const char *device, uint16_t *port_id)
{
	return rte_eth_dev_get_port_by_name(device, port_id) == 0 ? 0 :
		-ENODEV;
}

int
conf_eal_port_exists(const char *device, void *arg)
{
	uint16_t pid;

	return conf_eal_port_id(device, &pid);
}
