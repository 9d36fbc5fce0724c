/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* net_testd services: none until TCP is wired in (L2/L3 only). */

#include <errno.h>

#include "net_testd.h"

int
testd_services_start(struct net_lcore *lc, const struct testd_conf *c)
{
	(void)lc;
	return (c->echo_port || c->sink_port) ? -ENOTSUP : 0;
}

void testd_services_stop(struct net_lcore *lc) { (void)lc; }
void testd_services_report(struct net_lcore *lc) { (void)lc; }
