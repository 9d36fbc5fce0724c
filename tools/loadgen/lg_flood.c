/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * --syn-flood: spoofed-source SYNs at the first target's port, from the
 * same lcores and ports that carry the clients (issue 15 §4: a SYN flood
 * while serving). Each SYN has a random source address in --flood-src, a
 * random source port and sequence number, and an MSS option, as a
 * flooding tool's would; nothing is kept for it. The target answers with
 * SYN-ACKs (cookies once its SYN backlog is full: RFC 4987) to addresses
 * that do not exist; off-link sources (the default 198.19.0.0/16) send
 * them to the target's gateway, as behind a router.
 */

#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_random.h>
#include <rte_tcp.h>

#include "lg.h"
#include "lg_flood.h"
#include "lg_setup.h"

#define FLOOD_BURST 32
#define FLOOD_LEN (RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr) + \
		   sizeof(struct rte_tcp_hdr) + 4)

int
lg_flood_parse_src(const char *arg, uint32_t *net_be, uint32_t *mask_be)
{
	char buf[32], *slash, *end;
	unsigned long len;

	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	slash = strchr(buf, '/');
	if (slash == NULL)
		return -1;
	*slash = '\0';
	len = strtoul(slash + 1, &end, 10);
	if (*end != '\0' || len > 32 || lg_parse_ipv4(buf, net_be) < 0)
		return -1;
	*mask_be = len == 0 ? 0 : rte_cpu_to_be_32(0xffffffffu << (32 - len));
	*net_be &= *mask_be;
	return 0;
}

/* One SYN from a random source of the --flood-src range to t. */
static struct rte_mbuf *
flood_syn(struct net_lcore *lc, const struct lg_target *t,
	  const uint8_t dmac[6], const uint8_t smac[6])
{
	struct rte_mbuf *m = net_alloc(lc);
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;
	uint8_t *opt;
	uint64_t r = rte_rand();

	if (m == NULL)
		return NULL;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, FLOOD_LEN);
	if (eth == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(eth->dst_addr.addr_bytes, dmac, RTE_ETHER_ADDR_LEN);
	memcpy(eth->src_addr.addr_bytes, smac, RTE_ETHER_ADDR_LEN);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(FLOOD_LEN - RTE_ETHER_HDR_LEN);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->src_addr = lg.flood_net_be | ((uint32_t)r & ~lg.flood_mask_be);
	ip->dst_addr = t->ip_be;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	th = (struct rte_tcp_hdr *)(ip + 1);
	memset(th, 0, sizeof(*th));
	/* source ports 1024..65535 */
	th->src_port = rte_cpu_to_be_16((uint16_t)(1024 + (r >> 32) %
						     64512));
	th->dst_port = rte_cpu_to_be_16(t->port);
	th->sent_seq = (uint32_t)(r >> 16);
	th->data_off = (sizeof(*th) + 4) / 4 << 4;
	th->tcp_flags = RTE_TCP_SYN_FLAG;
	th->rx_win = rte_cpu_to_be_16(65535);
	opt = (uint8_t *)(th + 1);
	opt[0] = 2;	/* MSS (RFC 9293 §3.2) */
	opt[1] = 4;
	opt[2] = 1460 >> 8;
	opt[3] = 1460 & 0xff;
	th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	return m;
}

void
lg_flood_poll(struct lg_worker *w, uint64_t now)
{
	const struct lg_target *t = &lg.target[0];
	struct net_lcore *lc = w->lc[t->via];
	uint8_t dmac[6], smac[6];
	unsigned int n = FLOOD_BURST;

	if (w->flood_period != 0) {
		if (now < w->flood_next)
			return;
		n = (unsigned int)RTE_MIN((now - w->flood_next) /
					  w->flood_period + 1,
					  (uint64_t)FLOOD_BURST);
		w->flood_next += n * w->flood_period;
		if (w->flood_next + FLOOD_BURST * w->flood_period < now)
			w->flood_next = now;	/* the lcore fell behind */
	}
	if (net_lcore_neigh(lc, t->ip_be, dmac) != 0)
		return;		/* resolved by the clients' first handshake */
	net_port_mac(lg.port[t->via].np, smac);
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = flood_syn(lc, t, dmac, smac);

		if (m == NULL || net_lcore_send_frame(lc, m) != 0)
			break;
		w->all.flood_syns++;
		if (w->recording)
			w->win.flood_syns++;
	}
}
