/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef NET_RIG_CM_H
#define NET_RIG_CM_H

/* cmocka helpers for the rig (include after cmocka.h). */

#include <stddef.h>
#include <stdint.h>

#include "net_rig.h"

extern const struct rte_ether_addr rig_bcast;

/* A fresh default rig in *state (garp drained) / closed. */
int setup(void **state);
int teardown(void **state);
void assert_arp_frame(const uint8_t *f, uint16_t len,
		const struct rte_ether_addr *dst,
		const struct rte_ether_addr *src, uint16_t op, uint32_t sip,
		const struct rte_ether_addr *tha, uint32_t tip);
/* A TCP segment (20-byte header, 4-byte payload = tag) to dst through
 * net_ipv4_output, checksum left to net. */
int send_tcp(struct rig *r, uint32_t dst, uint32_t tag);
/* Checks an Ethernet/IPv4/TCP frame from send_tcp(); returns its tag. */
uint32_t assert_tcp_frame(struct rig *r, const uint8_t *f, uint16_t n,
		uint32_t dst);
/* Ask DPDK's telemetry socket of this process for cmd (as an operator
 * or usertools/dpdk-telemetry.py would); the JSON reply lands in out. */
void rig_telemetry_get(const char *cmd, char *out, size_t cap);
/* Value of "name": in a telemetry JSON reply (fails if absent). */
long long rig_json_u64(const char *js, const char *name);

#endif
