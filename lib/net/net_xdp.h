/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The kernel interface behind a net_af_xdp port (net_xdp.c): what
 * `ffn-shard --check` validates and the started port logs.
 */
#ifndef NET_XDP_H
#define NET_XDP_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

/* NETDEV_XDP_ACT_* (include/uapi/linux/netdev.h, Linux 6.3) */
#define NET_XDP_ACT_BASIC		(1u << 0)
#define NET_XDP_ACT_XSK_ZEROCOPY	(1u << 3)

struct net_xdp_if {
	char name[IF_NAMESIZE];
	char driver[32];		/* ethtool's, "?" if it does not say */
	unsigned int ifindex;
	unsigned int mtu;
	unsigned int rx_queues;		/* channels with an RX queue */
	int64_t xdp_features;		/* NET_XDP_ACT_*; -1: not said */
	int attached;			/* XDP_ATTACHED_*; -1: unknown */
	unsigned int prog_id;		/* the attached program, 0: none */
};

/**
 * Read interface name's facts (in the caller's network namespace).
 * 0, or -errno with why (names the failing call and the interface).
 */
int net_xdp_if_read(const char *name, struct net_xdp_if *f, char *why,
		size_t whylen);

/** "native (driver)", "generic (skb)", ... for an XDP_ATTACHED_* value. */
const char *net_xdp_attached_name(int mode);

/** The XDP mode an XDP socket will get on f, in words; snprintf's. */
int net_xdp_mode_str(const struct net_xdp_if *f, char *buf, size_t len);

#endif
