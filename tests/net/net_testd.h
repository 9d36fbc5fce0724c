/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef NET_TESTD_H
#define NET_TESTD_H

#include <stdint.h>

#include "net.h"

/* TCP services of net_testd (port 0 = off). */
struct testd_conf {
	uint16_t echo_port;	/* echo every byte back */
	uint16_t sink_port;	/* "N\n" -> N bytes of pattern; else sink */
};

int testd_services_start(struct net_lcore *lc, const struct testd_conf *c);
void testd_services_stop(struct net_lcore *lc);
void testd_services_report(struct net_lcore *lc);

#endif
