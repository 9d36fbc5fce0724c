/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef NET_TCP_H
#define NET_TCP_H

/**
 * The seam between lib/net and TCP (tcp/tcp.h): one struct tcp_stack per
 * struct net_lcore.  net hands TCP segments (data at the TCP header, padding
 * trimmed, RX L4 checksum flag only when the NIC verified it) to
 * tcp_input() with the poll clock in microseconds, runs tcp_poll() once per
 * poll iteration, and TCP's output callback is net_ipv4_output().
 */

#include "net.h"
#include "tcp.h"

/**
 * Create lc's TCP stack and attach it as lc's IPPROTO_TCP handler.  cfg
 * (may be NULL) carries the TCP tuning; net overrides the fields it owns:
 * local_ip, mtu, socket_id, pool, output/output_arg, tx_cksum_offload and
 * the rss_* fields (symmetric key, queue count, lc's queue, RETA size).
 * Returns NULL with rte_errno set on failure.
 */
struct tcp_stack *net_tcp_attach(struct net_lcore *lc,
		const struct tcp_stack_config *cfg);

/** Sum of the TCP counters of every lcore with a stack attached (also
 *  served to rte_telemetry as /ffn/net/tcp, registered by the first
 *  net_tcp_attach()). */
void net_tcp_stats_total(struct tcp_stats *out);

/** Detach lc's TCP handler and destroy the stack. */
void net_tcp_detach(struct net_lcore *lc, struct tcp_stack *s);

#endif /* NET_TCP_H */
