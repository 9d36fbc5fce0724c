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
	uint16_t sink_port;	/* "N\n" -> N bytes of pattern, then FIN */
	uint16_t http_port;	/* 64-byte-body HTTP/1.1 responder (bench) */
	uint16_t check_port;	/* verify pattern bytes, answer "ok N\n" */
};

int testd_services_start(struct net_lcore *lc, const struct testd_conf *c);
void testd_services_stop(struct net_lcore *lc);
void testd_services_report(struct net_lcore *lc);

/* Impairment stage (net_testd_netem.c): rates in [0,1]. */
struct netem_conf {
	uint32_t delay_us;
	uint32_t reorder_extra_us;
	double loss, dup, corrupt, reorder;
};

/* "delay_ms=50,loss=3,dup=2,corrupt=1,reorder=10[,reorder_ms=10]" (%) */
int netem_parse(const char *s, struct netem_conf *c);
/* Bridge wire port <-> a new net_ring port (returned) with impairments. */
int netem_start(uint16_t wire, const struct netem_conf *c,
		uint16_t *stack_port);
void netem_poll(uint64_t now_ns);
void netem_report(void);

#endif
