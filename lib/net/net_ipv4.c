/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* IPv4 (RFC 791, RFC 1122 §3.2) input validation, ICMP echo (RFC 792),
 * output with next-hop routing and checksum offload or software. */

#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "net_priv.h"

#include "tcp_cksum.h"

#define IPV4_DF 0x4000
#define IPV4_TTL 64

static inline bool
ipv4_martian_src(uint32_t src_be)
{
	uint32_t s = rte_be_to_cpu_32(src_be);

	/* 0/8, multicast, limited broadcast: never reply to these
	 * (RFC 1122 §3.2.1.3). */
	return (s >> 24) == 0 || (s >> 28) == 0xe || s == 0xffffffff;
}

/* The IPv4 header checksum, by offload when the port does it. */
static inline void
ipv4_hdr_cksum(struct net_lcore *lc, struct rte_mbuf *m,
		struct rte_ipv4_hdr *ip)
{
	ip->hdr_checksum = 0;
	m->l3_len = sizeof(*ip);
	m->ol_flags |= RTE_MBUF_F_TX_IPV4;
	if (lc->port->caps & NET_CAP_TX_IPV4_CKSUM)
		m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
	else
		ip->hdr_checksum = rte_ipv4_cksum(ip);
}

int
net_ipv4_route(struct net_lcore *lc, struct rte_mbuf *m, uint32_t dst_be)
{
	struct net_port *p = lc->port;
	struct rte_ether_addr mac;
	uint32_t hop = dst_be;

	if ((dst_be ^ p->ip_be) & p->netmask_be) {
		hop = p->gateway_be;
		if (hop == 0) {
			lc->st.drop_no_route++;
			rte_pktmbuf_free(m);
			return -EHOSTUNREACH;
		}
	}
	if (net_arp_resolve(lc, hop, &mac) == 0)
		return net_eth_output(lc, m, &mac, RTE_ETHER_TYPE_IPV4);
	net_arp_park(lc, m, hop);
	return 0;
}

/* RFC 792 echo: answer with the same identifier, sequence and data. */
static void
icmp_input(struct net_lcore *lc, struct rte_mbuf *m, struct rte_ipv4_hdr *ip,
		uint16_t ihl)
{
	uint16_t len = rte_be_to_cpu_16(ip->total_length) - ihl;
	struct rte_icmp_hdr *ic;
	uint16_t sum;
	uint32_t src;

	if (len < sizeof(*ic) || rte_pktmbuf_data_len(m) < ihl + sizeof(*ic)) {
		lc->st.drop_icmp_bad++;
		goto drop;
	}
	if (tcp_cksum_mbuf(m, ihl, len, &sum) != 0 || sum != 0xffff) {
		lc->st.drop_icmp_bad++;
		goto drop;
	}
	ic = (struct rte_icmp_hdr *)((uint8_t *)ip + ihl);
	if (ic->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || ic->icmp_code != 0) {
		lc->st.drop_icmp_type++;
		goto drop;
	}
	lc->st.icmp_echo_rx++;
	ic->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	ic->icmp_cksum = 0;
	tcp_cksum_mbuf(m, ihl, len, &sum);
	ic->icmp_cksum = (uint16_t)~sum;
	src = ip->src_addr;
	ip->src_addr = ip->dst_addr;
	ip->dst_addr = src;
	ip->time_to_live = IPV4_TTL;
	ip->fragment_offset = 0;
	m->ol_flags = 0;
	m->vlan_tci = 0;
	ipv4_hdr_cksum(lc, m, ip);
	lc->st.icmp_echo_tx++;
	net_ipv4_route(lc, m, src);
	return;
drop:
	rte_pktmbuf_free(m);
}

static void
l4_deliver(struct net_lcore *lc, struct net_l4 *l4, struct rte_mbuf *m,
		struct rte_ipv4_hdr *ip, uint16_t ihl)
{
	struct net_ipv4_info info;

	if (l4->input == NULL) {
		/* No listener for this protocol: silently dropped, no ICMP
		 * unreachable (issue 3: no amplification). */
		lc->st.drop_ip_proto++;
		rte_pktmbuf_free(m);
		return;
	}
	info.src_be = ip->src_addr;
	info.dst_be = ip->dst_addr;
	info.l4_len = rte_be_to_cpu_16(ip->total_length) - ihl;
	info.tos = ip->type_of_service;
	info.ttl = ip->time_to_live;
	info.l4_cksum_flag = (lc->port->caps & NET_CAP_RX_L4_CKSUM) ?
		(m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) :
		RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN;
	/* The flag in m agrees with info: GOOD only if the NIC checked. */
	m->ol_flags = (m->ol_flags & ~RTE_MBUF_F_RX_L4_CKSUM_MASK) |
		info.l4_cksum_flag;
	rte_pktmbuf_adj(m, ihl);
	lc->st.l4_rx++;
	l4->input(l4->ctx, lc, m, &info, lc->now_ns);
}

void
net_ipv4_input(struct net_lcore *lc, struct rte_mbuf *m)
{
	struct net_port *p = lc->port;
	struct rte_ipv4_hdr *ip;
	uint16_t ihl, tot;
	uint64_t ck;

	if (rte_pktmbuf_data_len(m) < sizeof(*ip)) {
		lc->st.drop_ip_short++;
		goto drop;
	}
	ip = rte_pktmbuf_mtod(m, struct rte_ipv4_hdr *);
	if ((ip->version_ihl >> 4) != 4) {
		lc->st.drop_ip_version++;
		goto drop;
	}
	ihl = (ip->version_ihl & 0xf) * 4;
	if (ihl < sizeof(*ip) || ihl > rte_pktmbuf_data_len(m)) {
		lc->st.drop_ip_ihl++;
		goto drop;
	}
	tot = rte_be_to_cpu_16(ip->total_length);
	if (tot < ihl || tot > m->pkt_len) {
		lc->st.drop_ip_len++;
		goto drop;
	}
	ck = (p->caps & NET_CAP_RX_IPV4_CKSUM) ?
		(m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) :
		RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN;
	if (ck == RTE_MBUF_F_RX_IP_CKSUM_BAD ||
			(ck != RTE_MBUF_F_RX_IP_CKSUM_GOOD &&
			 rte_raw_cksum(ip, ihl) != 0xffff)) {
		lc->st.drop_ip_cksum++;
		goto drop;
	}
	if (ip->time_to_live == 0) {
		lc->st.drop_ip_ttl++;
		goto drop;
	}
	if (ip->dst_addr != p->ip_be || ipv4_martian_src(ip->src_addr)) {
		lc->st.drop_ip_not_ours++;
		goto drop;
	}
	/* RFC 791: MF set or a non-zero offset means a fragment; we do not
	 * reassemble (issue 3: counted and dropped). */
	if (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG |
			RTE_IPV4_HDR_OFFSET_MASK)) {
		lc->st.drop_ip_frag++;
		goto drop;
	}
	if (ihl != sizeof(*ip)) {
		lc->st.drop_ip_options++;
		goto drop;
	}
	/* Drop Ethernet padding so L4 sees exactly its bytes. */
	if (m->pkt_len > tot && (m->nb_segs > 1 ||
			rte_pktmbuf_trim(m, m->pkt_len - tot) != 0)) {
		/* Padding in a chained frame: cannot happen for frames that
		 * fit one mbuf, which is how the pool is sized. */
		lc->st.drop_ip_len++;
		goto drop;
	}
	switch (ip->next_proto_id) {
	case IPPROTO_ICMP:
		icmp_input(lc, m, ip, ihl);
		return;
	case IPPROTO_TCP:
		l4_deliver(lc, &lc->tcp, m, ip, ihl);
		return;
	case IPPROTO_UDP:
		l4_deliver(lc, &lc->udp, m, ip, ihl);
		return;
	default:
		lc->st.drop_ip_proto++;
		break;
	}
drop:
	rte_pktmbuf_free(m);
}

/* Fill the TCP/UDP checksum the caller asked for with offload_flag:
 * pseudo-header sum when the port offloads it, the full sum otherwise. */
static void
l4_cksum(struct net_lcore *lc, struct rte_mbuf *m, struct rte_ipv4_hdr *ip,
		uint8_t *field, uint64_t offload_flag, uint32_t cap)
{
	uint16_t v = 0;

	if (!(m->ol_flags & offload_flag))
		return;		/* the caller's checksum is complete */
	if (lc->port->caps & cap) {
		v = rte_ipv4_phdr_cksum(ip, m->ol_flags);
	} else {
		uint32_t s = rte_ipv4_phdr_cksum(ip, 0);
		uint16_t raw = 0;

		m->ol_flags &= ~offload_flag;
		memcpy(field, &v, sizeof(v));
		/* Not rte_ipv4_udptcp_cksum_mbuf: see tcp_cksum.h. */
		tcp_cksum_mbuf(m, sizeof(*ip), m->pkt_len - sizeof(*ip), &raw);
		s += raw;
		s = (s & 0xffff) + (s >> 16);
		s = (s & 0xffff) + (s >> 16);
		v = (uint16_t)~s;
		if (v == 0 && offload_flag == RTE_MBUF_F_TX_UDP_CKSUM)
			v = 0xffff; /* RFC 768: 0 means no checksum */
	}
	memcpy(field, &v, sizeof(v));
}

int
net_ipv4_output(struct net_lcore *lc, struct rte_mbuf *m, uint32_t dst_be,
		uint8_t proto)
{
	struct net_port *p = lc->port;
	struct rte_ipv4_hdr *ip;
	uint8_t *l4ck = NULL;
	uint32_t l4len = m->pkt_len;
	bool tso = m->ol_flags & RTE_MBUF_F_TX_TCP_SEG;
	struct rte_mbuf *h = m;

	if (tso && (!(p->caps & NET_CAP_TSO) || proto != IPPROTO_TCP))
		return -ENOTSUP;
	if (l4len + sizeof(*ip) > UINT16_MAX)
		return -EINVAL;
	if (!tso && l4len + sizeof(*ip) > p->mtu)
		return -EMSGSIZE;
	if (proto == IPPROTO_TCP) {
		struct rte_tcp_hdr *th;

		if (rte_pktmbuf_data_len(m) < sizeof(*th))
			return -EINVAL;
		th = rte_pktmbuf_mtod(m, struct rte_tcp_hdr *);
		l4ck = (uint8_t *)th + offsetof(struct rte_tcp_hdr, cksum);
		if (m->l4_len == 0)
			m->l4_len = (th->data_off >> 4) * 4;
	} else if (proto == IPPROTO_UDP) {
		struct rte_udp_hdr *uh;

		if (rte_pktmbuf_data_len(m) < sizeof(*uh))
			return -EINVAL;
		uh = rte_pktmbuf_mtod(m, struct rte_udp_hdr *);
		l4ck = (uint8_t *)uh +
			offsetof(struct rte_udp_hdr, dgram_cksum);
		m->l4_len = sizeof(*uh);
	}
	/* Never write into a buffer we do not own alone (clones, external
	 * payload): put the headers in a fresh mbuf in front instead. */
	if (RTE_MBUF_CLONED(m) || RTE_MBUF_HAS_EXTBUF(m) ||
			rte_pktmbuf_headroom(m) < NET_HDR_ROOM) {
		h = net_alloc(lc);
		if (h == NULL) {
			rte_pktmbuf_free(m);
			return -ENOBUFS;
		}
		h->ol_flags = m->ol_flags;
		h->l4_len = m->l4_len;
		h->tso_segsz = m->tso_segsz;
		if (rte_pktmbuf_chain(h, m) != 0) {
			rte_pktmbuf_free(h);
			rte_pktmbuf_free(m);
			return -ENOBUFS;
		}
	}
	ip = (struct rte_ipv4_hdr *)rte_pktmbuf_prepend(h, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16(l4len + sizeof(*ip));
	/* RFC 6864 §4.1: the ID of an atomic datagram (DF, unfragmented)
	 * carries no meaning. */
	ip->packet_id = 0;
	ip->fragment_offset = rte_cpu_to_be_16(IPV4_DF);
	ip->time_to_live = IPV4_TTL;
	ip->next_proto_id = proto;
	ip->src_addr = p->ip_be;
	ip->dst_addr = dst_be;
	ipv4_hdr_cksum(lc, h, ip);	/* TSO implies NET_CAP_TX_IPV4_CKSUM */
	if (proto == IPPROTO_TCP)
		l4_cksum(lc, h, ip, l4ck, RTE_MBUF_F_TX_TCP_CKSUM,
				NET_CAP_TX_TCP_CKSUM);
	else if (proto == IPPROTO_UDP)
		l4_cksum(lc, h, ip, l4ck, RTE_MBUF_F_TX_UDP_CKSUM,
				NET_CAP_TX_UDP_CKSUM);
	return net_ipv4_route(lc, h, dst_be);
}
