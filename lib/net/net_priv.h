/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef NET_PRIV_H
#define NET_PRIV_H

/* Internal to lib/net: port, lcore and ARP structures. */

#include <string.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "net.h"

#define NET_RX_BURST		32
#define NET_TX_BUF		256
/* A TX queue that takes nothing for this long drops its head frame (one
 * the PMD refuses for good would block the lcore forever). A busy peer
 * (memif, a NIC paused by flow control) is not that: a shorter bound lost
 * frames TCP had counted as sent, whose retransmission timeouts then
 * stalled their connections for seconds. */
#define NET_TX_STALL_NS		(1000ull * 1000 * 1000)
#define NET_PENDING_HOPS	8	/* unresolved next hops per lcore */
#define NET_PENDING_PKTS	16	/* parked packets per next hop */
#define NET_ARP_ASKED		256	/* recent requests remembered per lcore */
/* Ethernet + one VLAN tag + IPv4 without options. */
#define NET_HDR_ROOM (RTE_ETHER_HDR_LEN + 4 + 20)

/* One slot of the port's ARP table.  ip_be is claimed once by CAS and never
 * changes afterwards; mac (low 48 bits, bit 63 = valid) and updated_ns are
 * single aligned 64-bit stores, so readers on any lcore never lock. */
struct net_arp_entry {
	uint32_t ip_be;
	uint32_t pad;
	uint64_t mac;
	uint64_t updated_ns;
};
#define NET_ARP_VALID (1ULL << 63)

struct net_port {
	uint16_t port_id;
	uint16_t nb_queues;
	uint16_t mtu;
	uint16_t vlan_id;
	bool vlan;
	uint32_t caps;
	uint32_t ip_be;
	uint32_t netmask_be;
	uint32_t gateway_be;
	struct rte_ether_addr mac;
	int socket;
	struct rte_mempool *pool;	/* RX */
	struct rte_mempool *tx_pool;	/* what we send (net_port_conf) */
	uint16_t tx_max_segs;		/* 0: the PMD states no limit */
	uint16_t reta_size;
	uint16_t reta[RTE_ETH_RSS_RETA_SIZE_512];
	uint32_t arp_mask;		/* arp_entries - 1 (power of two) */
	struct net_arp_entry *arp;
	uint64_t arp_timeout_ns;
	uint64_t arp_retry_ns;
	uint8_t arp_retries;
};

/* Packets parked while next hop `ip_be` resolves (RFC 1122 §2.3.2.2: keep
 * at least one; we keep NET_PENDING_PKTS and count the rest as drops). */
struct net_pending {
	uint32_t ip_be;		/* 0 = free */
	uint16_t n;
	uint8_t tries;
	uint64_t next_ns;	/* next request (or give-up) time */
	struct rte_mbuf *pkts[NET_PENDING_PKTS];
};

/* When a request for ip_be last left this lcore: a slot of a direct-mapped
 * table that outlives the pending hops, so that a hop evicted from them
 * and parked again is not asked for again at once (RFC 1122 §2.3.2.1). */
struct net_arp_asked {
	uint32_t ip_be;
	uint64_t ns;
};

struct net_l4 {
	net_l4_input_t input;
	net_l4_poll_t poll;
	void *ctx;
};

struct net_lcore {
	/* hot: RX/TX */
	struct net_port *port;
	uint16_t queue;
	uint16_t tx_n;
	bool tx_stalled;		/* no progress since tx_stall_ns */
	bool garp_done;
	uint64_t now_ns;
	uint64_t tx_stall_ns;
	struct rte_mempool *pool;
	struct rte_mbuf *tx[NET_TX_BUF];
	uint32_t tx_len[NET_TX_BUF];	/* pkt_len: the mbuf is gone once sent */
	struct net_l4 tcp;
	struct net_l4 udp;
	uint32_t refresh_ip;		/* last entry re-asked for */
	uint64_t refresh_ns;
	unsigned int npending;
	struct net_pending pending[NET_PENDING_HOPS];
	struct net_arp_asked asked[NET_ARP_ASKED];
	int reg_slot;
	struct net_stats st __rte_cache_aligned;
} __rte_cache_aligned;

/* The PMDs the port code treats apart, by driver name (ethdev's). */
static inline bool
net_driver_is(const struct rte_eth_dev_info *di, const char *name)
{
	return di->driver_name != NULL && strcmp(di->driver_name, name) == 0;
}
#define net_is_tap(di) net_driver_is(di, "net_tap")
#define net_is_af_xdp(di) net_driver_is(di, "net_af_xdp")

/* The ports' log lines (net_port.c, net_port_check.c). */
#define NET_LOG(lvl, ...) rte_log(RTE_LOG_ ## lvl, RTE_LOGTYPE_USER1, \
		"net: " __VA_ARGS__)

/* net_port_check.c: once an af_xdp port started, log the XDP mode the
 * kernel gave it (no-op on other PMDs). */
void net_port_xdp_log(uint16_t port_id);

/* net_lcore.c */
#define NET_REG_MAX 1024
/* Registered lcore in slot i (NULL if free), for stats readers. */
struct net_lcore *net_lcore_registered(unsigned int i);
/* Queue m for TX: 0, or -ENOBUFS (m freed, counted). */
int net_tx_enqueue(struct net_lcore *lc, struct rte_mbuf *m);
/* Prepend Ethernet (+VLAN) with our source MAC to m and queue it. */
int net_eth_output(struct net_lcore *lc, struct rte_mbuf *m,
		const struct rte_ether_addr *dst, uint16_t ether_type);

/* net_arp.c */
void net_arp_input(struct net_lcore *lc, struct rte_mbuf *m);
int net_arp_lookup(struct net_port *p, uint32_t ip_be, uint64_t now_ns,
		struct rte_ether_addr *mac);
/* net_arp_lookup() that also refreshes entries near their end. */
int net_arp_resolve(struct net_lcore *lc, uint32_t ip_be,
		struct rte_ether_addr *mac);
void net_arp_update(struct net_port *p, uint32_t ip_be,
		const struct rte_ether_addr *mac, uint64_t now_ns, bool create,
		struct net_stats *st);
/* Park m (an IPv4 frame without Ethernet header) until hop resolves. */
void net_arp_park(struct net_lcore *lc, struct rte_mbuf *m, uint32_t hop_be);
void net_arp_poll(struct net_lcore *lc);
void net_arp_send_garp(struct net_lcore *lc);
void net_arp_flush_pending(struct net_lcore *lc);

/* net_ipv4.c */
void net_ipv4_input(struct net_lcore *lc, struct rte_mbuf *m);
/* Route the finished IPv4 packet m (data at the IPv4 header): 0 (queued
 * or parked for ARP), -EHOSTUNREACH or -ENOBUFS (m freed, counted). */
int net_ipv4_route(struct net_lcore *lc, struct rte_mbuf *m,
		uint32_t dst_be);

#endif /* NET_PRIV_H */
