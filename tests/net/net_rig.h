/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef NET_RIG_H
#define NET_RIG_H

/*
 * Test rig for lib/net: EAL in-process, one net_ring port whose RX ring the
 * test fills with crafted frames and whose TX ring it drains, one lcore on
 * queue 0 driven with a virtual clock.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "net.h"

#define RIG_IP		RTE_IPV4(198, 18, 1, 2)
#define RIG_GW		RTE_IPV4(198, 18, 1, 1)
#define RIG_PEER	RTE_IPV4(198, 18, 1, 9)
#define RIG_MASK	RTE_IPV4(255, 255, 255, 0)
#define MS		1000000ULL

struct rig {
	struct rte_ring *rx;	/* test -> stack */
	struct rte_ring *tx;	/* stack -> test */
	uint16_t port_id;
	struct net_port *p;
	struct net_lcore *lc;
	struct rte_ether_addr mac;	/* the stack's */
	uint64_t now;
};

extern const struct rte_ether_addr rig_peer_mac;
/* Size of the TX ring the next rig_open() creates (power of two). */
extern unsigned int rig_tx_ring_size;

int rig_eal_init(const char *prefix);
/* rte_eal_cleanup() and removal of the EAL runtime directory. */
void rig_eal_fini(void);
/* conf may be NULL for the defaults above; garp is consumed. */
int rig_open(struct rig *r, const struct net_port_conf *conf);
void rig_close(struct rig *r);

/* Frame builders: the frame is written into a fresh mbuf and returned. */
struct rte_mbuf *rig_frame(struct rig *r, const void *bytes, uint16_t len);
/* Ethernet header to the stack's MAC (or broadcast) from the peer. */
uint16_t rig_eth(uint8_t *buf, const struct rte_ether_addr *dst,
		uint16_t type);
uint16_t rig_arp(uint8_t *buf, const struct rte_ether_addr *dst,
		uint16_t op, uint32_t sip, uint32_t tip);
/* IPv4 header (no options) + payload; fixes total length and checksum. */
uint16_t rig_ipv4(uint8_t *buf, uint32_t src, uint32_t dst, uint8_t proto,
		const void *payload, uint16_t plen);
uint16_t rig_icmp_echo(uint8_t *buf, uint16_t id, uint16_t seq,
		const void *data, uint16_t dlen);

void rig_inject(struct rig *r, const void *bytes, uint16_t len);
/* Advance the clock by dt_ns and poll once. */
void rig_poll(struct rig *r, uint64_t dt_ns);
/* Next frame the stack sent, copied into buf (returns length, 0 if none). */
uint16_t rig_take(struct rig *r, uint8_t *buf, uint16_t cap);
unsigned int rig_tx_count(struct rig *r);
void rig_drain(struct rig *r);
void rig_stats(struct rig *r, struct net_stats *s);
/* Learn the peer's MAC by having it ask for ours (reply is drained). */
void rig_learn_peer(struct rig *r, uint32_t ip);

#endif
