/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* lib/net L2/L3 cases test_net_ipv4.c leaves out: IPv4 on a VLAN port
 * (software tag and a tag the NIC stripped), the IPv4 fields a host must
 * accept (DF, TTL 1) and the rest of the validation (total length below
 * the header, header beyond the frame, martian sources, ICMP code), the
 * mbuf pool on the port's NUMA node, the counters as an operator reads
 * them (DPDK's telemetry socket), TX and RX checksum offloads following
 * the port's capabilities, and source ports picked for an RSS queue. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_arp.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_ring.h>
#include <rte_tcp.h>
#include <rte_thash.h>

#include "net_priv.h"
#include "net_rig.h"
#include "net_rig_cm.h"

#define OFF(f) offsetof(struct net_stats, f)

static uint64_t
stat_at(struct rig *r, size_t off)
{
	struct net_stats s;
	uint64_t v;

	rig_stats(r, &s);
	memcpy(&v, (uint8_t *)&s + off, sizeof(v));
	return v;
}

/* An ICMP echo request from RIG_PEER; mutate() may change the IPv4
 * header (it must fix the checksum). Returns the frame length. */
static uint16_t
echo_frame(uint8_t *f, uint16_t vid, void (*mutate)(uint8_t *ip))
{
	uint8_t icmp[64];
	uint16_t n, il;

	il = rig_icmp_echo(icmp, 7, 1, "abcdefgh", 8);
	if (vid != 0) {
		n = rig_eth(f, &rig_bcast, RTE_ETHER_TYPE_VLAN);
		f[n] = vid >> 8;
		f[n + 1] = vid & 0xff;
		f[n + 2] = 0x08;
		f[n + 3] = 0x00;
		n += 4;
	} else {
		n = rig_eth(f, &rig_bcast, RTE_ETHER_TYPE_IPV4);
	}
	n += rig_ipv4(f + n, RIG_PEER, RIG_IP, IPPROTO_ICMP, icmp, il);
	if (mutate != NULL)
		mutate(f + n - il - 20);
	return n;
}

/* The next frame out must be an echo reply to RIG_PEER, tagged with vid
 * in software (0: untagged). */
static void
expect_echo_reply(struct rig *r, uint16_t vid)
{
	uint8_t o[256];
	uint16_t n = rig_take(r, o, sizeof(o));
	const struct rte_ipv4_hdr *ip;
	const struct rte_icmp_hdr *ic;
	uint16_t l2 = 14;

	assert_true(n > 0);
	if (vid != 0) {
		assert_int_equal(rte_be_to_cpu_16(((struct rte_ether_hdr *)o)->
				ether_type), RTE_ETHER_TYPE_VLAN);
		assert_int_equal(((o[14] << 8) | o[15]) & 0xfff, vid);
		assert_int_equal((o[16] << 8) | o[17], RTE_ETHER_TYPE_IPV4);
		l2 = 18;
	} else {
		assert_int_equal(rte_be_to_cpu_16(((struct rte_ether_hdr *)o)->
				ether_type), RTE_ETHER_TYPE_IPV4);
	}
	assert_int_equal(n, l2 + 20 + 8 + 8);
	ip = (const struct rte_ipv4_hdr *)(o + l2);
	assert_int_equal(rte_be_to_cpu_32(ip->dst_addr), RIG_PEER);
	assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
	ic = (const struct rte_icmp_hdr *)(ip + 1);
	assert_int_equal(ic->icmp_type, RTE_IP_ICMP_ECHO_REPLY);
	assert_memory_equal(ic + 1, "abcdefgh", 8);
}

/* Inject a frame as a NIC that stripped the 802.1Q tag would hand it. */
static void
inject_stripped(struct rig *r, const uint8_t *f, uint16_t n, uint16_t tci)
{
	struct rte_mbuf *m = rig_frame(r, f, n);

	assert_non_null(m);
	m->ol_flags |= RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED;
	m->vlan_tci = tci;
	assert_int_equal(rte_ring_enqueue(r->rx, m), 0);
}

static void
open_vlan(struct rig *r, uint16_t vid)
{
	struct net_port_conf c;

	memset(&c, 0, sizeof(c));
	c.ip_be = rte_cpu_to_be_32(RIG_IP);
	c.netmask_be = rte_cpu_to_be_32(RIG_MASK);
	c.vlan = true;
	c.vlan_id = vid;
	assert_int_equal(rig_open(r, &c), 0);
	rig_drain(r);
}

/* Issue 3: "VLAN tags are accepted/stripped if the port config says so",
 * for IP traffic too, and whatever answers goes out on the VLAN. */
static void
test_vlan_ipv4_both_ways(void **state)
{
	struct rig r;
	uint8_t f[256];

	(void)state;
	open_vlan(&r, 100);
	rig_learn_peer(&r, RIG_PEER);	/* untagged: dropped, not learnt */
	assert_int_equal(stat_at(&r, OFF(drop_vlan)), 1);
	rig_inject(&r, f, echo_frame(f, 100, NULL));
	rig_poll(&r, 0);
	/* the peer is unknown on the VLAN: ARP for it, tagged */
	assert_int_equal(rig_tx_count(&r), 1);
	{
		uint8_t o[128];
		uint16_t n = rig_take(&r, o, sizeof(o));

		assert_true(n >= 18);
		assert_int_equal((o[12] << 8) | o[13], RTE_ETHER_TYPE_VLAN);
		assert_int_equal((o[16] << 8) | o[17], RTE_ETHER_TYPE_ARP);
	}
	/* the peer answers (tagged): the parked echo reply leaves tagged */
	{
		uint16_t n = rig_eth(f, &r.mac, RTE_ETHER_TYPE_VLAN);

		f[n] = 0; f[n + 1] = 100; f[n + 2] = 0x08; f[n + 3] = 0x06;
		n += 4;
		n += rig_arp(f + n, &r.mac, RTE_ARP_OP_REPLY, RIG_PEER,
				RIG_IP);
		rig_inject(&r, f, n);
	}
	rig_poll(&r, 0);
	expect_echo_reply(&r, 100);
	assert_int_equal(rig_tx_count(&r), 0);
	/* the same request on another VLAN, or untagged: dropped */
	rig_inject(&r, f, echo_frame(f, 200, NULL));
	rig_inject(&r, f, echo_frame(f, 0, NULL));
	rig_poll(&r, 0);
	assert_int_equal(rig_tx_count(&r), 0);
	assert_int_equal(stat_at(&r, OFF(drop_vlan)), 3);
	assert_int_equal(stat_at(&r, OFF(icmp_echo_tx)), 1);
	rig_close(&r);
}

/* A tag the NIC stripped (RTE_MBUF_F_RX_VLAN_STRIPPED, vlan_tci) counts
 * as the tag: accepted on our VLAN, dropped on another one and on a port
 * without VLAN. */
static void
test_vlan_stripped_by_nic(void **state)
{
	struct rig r;
	uint8_t f[256];

	(void)state;
	open_vlan(&r, 100);
	/* learn the peer on the VLAN first */
	{
		uint16_t n = rig_eth(f, &rig_bcast, RTE_ETHER_TYPE_ARP);

		n += rig_arp(f + n, NULL, RTE_ARP_OP_REQUEST, RIG_PEER, RIG_IP);
		inject_stripped(&r, f, n, 100);
	}
	rig_poll(&r, 0);
	assert_int_equal(stat_at(&r, OFF(arp_req_answered)), 1);
	rig_drain(&r);
	inject_stripped(&r, f, echo_frame(f, 0, NULL), 100);
	rig_poll(&r, 0);
	expect_echo_reply(&r, 100);
	/* priority bits do not matter, the VLAN id does */
	inject_stripped(&r, f, echo_frame(f, 0, NULL), 0xe000 | 100);
	rig_poll(&r, 0);
	expect_echo_reply(&r, 100);
	inject_stripped(&r, f, echo_frame(f, 0, NULL), 200);
	rig_poll(&r, 0);
	assert_int_equal(rig_tx_count(&r), 0);
	assert_int_equal(stat_at(&r, OFF(drop_vlan)), 1);
	rig_close(&r);
	/* a port without VLAN does not take tagged traffic */
	assert_int_equal(rig_open(&r, NULL), 0);
	rig_drain(&r);
	rig_learn_peer(&r, RIG_PEER);
	inject_stripped(&r, f, echo_frame(f, 0, NULL), 100);
	rig_poll(&r, 0);
	assert_int_equal(rig_tx_count(&r), 0);
	assert_int_equal(stat_at(&r, OFF(drop_vlan)), 1);
	rig_close(&r);
}

static void
refix(uint8_t *b)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)b;

	ip->hdr_checksum = 0;
	ip->hdr_checksum = ~rte_raw_cksum(ip, 20);
}

static void
m_df_ttl1(uint8_t *b)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)b;

	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 1;
	refix(b);
}

/* DF (every Linux TCP segment has it) is not a fragment, and TTL 1 is a
 * live datagram for its final destination (RFC 1122 §3.2.1.7). */
static void
test_ipv4_df_and_ttl1_accepted(void **state)
{
	struct rig *r = *state;
	uint8_t f[256];

	rig_learn_peer(r, RIG_PEER);
	rig_inject(r, f, echo_frame(f, 0, m_df_ttl1));
	rig_poll(r, 0);
	expect_echo_reply(r, 0);
	assert_int_equal(stat_at(r, OFF(drop_ip_frag)), 0);
	assert_int_equal(stat_at(r, OFF(drop_ip_ttl)), 0);
}

static void
m_tot_below_ihl(uint8_t *b)
{
	((struct rte_ipv4_hdr *)b)->total_length = rte_cpu_to_be_16(12);
	refix(b);
}

static void
m_ihl_past_frame(uint8_t *b)
{
	b[0] = 0x4f;	/* 60-byte header in a 36-byte datagram */
	refix(b);
}

static void
m_src_zero(uint8_t *b)
{
	((struct rte_ipv4_hdr *)b)->src_addr = 0;
	refix(b);
}

static void
m_src_multicast(uint8_t *b)
{
	((struct rte_ipv4_hdr *)b)->src_addr =
		rte_cpu_to_be_32(RTE_IPV4(224, 0, 0, 1));
	refix(b);
}

static void
m_src_bcast(uint8_t *b)
{
	((struct rte_ipv4_hdr *)b)->src_addr = RTE_BE32(0xffffffff);
	refix(b);
}

static void
m_icmp_code(uint8_t *b)
{
	struct rte_icmp_hdr *ic = (struct rte_icmp_hdr *)(b + 20);

	ic->icmp_code = 1;	/* an echo request has code 0 (RFC 792) */
	ic->icmp_cksum = 0;
	ic->icmp_cksum = ~rte_raw_cksum(ic, 16);
}

static void
m_icmp_short(uint8_t *b)
{
	/* total length leaves 4 bytes of ICMP: less than its header */
	((struct rte_ipv4_hdr *)b)->total_length = rte_cpu_to_be_16(24);
	refix(b);
}

static void
expect_drop(struct rig *r, void (*mutate)(uint8_t *ip), size_t off)
{
	uint8_t f[256];
	uint64_t before = stat_at(r, off);

	rig_inject(r, f, echo_frame(f, 0, mutate));
	rig_poll(r, 0);
	assert_int_equal(stat_at(r, off), before + 1);
	assert_int_equal(rig_tx_count(r), 0);
}

/* RFC 1122 §3.2.1: lengths checked against each other and the frame; a
 * source that cannot be answered (0/8, multicast, broadcast: §3.2.1.3)
 * is not answered. */
static void
test_ipv4_more_drop_reasons(void **state)
{
	struct rig *r = *state;

	rig_learn_peer(r, RIG_PEER);
	expect_drop(r, m_tot_below_ihl, OFF(drop_ip_len));
	expect_drop(r, m_ihl_past_frame, OFF(drop_ip_ihl));
	expect_drop(r, m_src_zero, OFF(drop_ip_not_ours));
	expect_drop(r, m_src_multicast, OFF(drop_ip_not_ours));
	expect_drop(r, m_src_bcast, OFF(drop_ip_not_ours));
	expect_drop(r, m_icmp_code, OFF(drop_icmp_type));
	expect_drop(r, m_icmp_short, OFF(drop_icmp_bad));
	assert_int_equal(stat_at(r, OFF(icmp_echo_tx)), 0);
}

/* Issue 3: mbuf pools on the NUMA node of the port. */
static void
test_pool_on_port_node(void **state)
{
	struct rig *r = *state;
	int node = rte_eth_dev_socket_id(r->port_id);

	assert_true(node >= 0);	/* net_ring ports are made on node 0 */
	assert_int_equal(net_port_pool(r->p)->socket_id, node);
	assert_int_equal(net_port_tx_pool(r->p)->socket_id, node);
}

/* Issue 3: per-lcore counters exposed to rte_telemetry; /ffn/net/stats
 * is the sum of every lcore's counters, drops by reason included. */
static void
test_stats_over_telemetry(void **state)
{
	struct rig *r = *state;
	struct net_stats tot;
	char js[16384];

	rig_learn_peer(r, RIG_PEER);
	expect_drop(r, m_src_zero, OFF(drop_ip_not_ours));
	rig_telemetry_get("/ffn/net/stats", js, sizeof(js));
	net_stats_total(&tot);
	assert_non_null(strstr(js, "\"/ffn/net/stats\""));
	assert_true(rig_json_u64(js, "drop_ip_not_ours") >= 1);
	assert_int_equal(rig_json_u64(js, "drop_ip_not_ours"),
			tot.drop_ip_not_ours);
	assert_int_equal(rig_json_u64(js, "arp_req_answered"),
			tot.arp_req_answered);
	assert_int_equal(rig_json_u64(js, "rx_pkts"), tot.rx_pkts);
	for (unsigned int i = 0; i < net_stats_count(); i++)
		rig_json_u64(js, net_stats_name(i));
}

/* A TCP segment (20-byte header + plen bytes) for net_ipv4_output. */
static struct rte_mbuf *
tcp_seg(struct rig *r, uint16_t plen, uint64_t flags, uint16_t segsz)
{
	struct rte_mbuf *m = net_alloc(r->lc);
	struct rte_tcp_hdr *th;

	assert_non_null(m);
	th = (struct rte_tcp_hdr *)rte_pktmbuf_append(m, sizeof(*th) + plen);
	assert_non_null(th);
	memset(th, 0, sizeof(*th) + plen);
	th->src_port = rte_cpu_to_be_16(80);
	th->dst_port = rte_cpu_to_be_16(40000);
	th->data_off = 5 << 4;
	th->tcp_flags = RTE_TCP_ACK_FLAG;
	m->ol_flags |= flags;
	m->l4_len = sizeof(*th);
	m->tso_segsz = segsz;
	return m;
}

/* The frame net queued, as the PMD would get it (flags and all). */
static struct rte_mbuf *
take_mbuf(struct rig *r)
{
	struct rte_mbuf *m = NULL;

	net_lcore_flush(r->lc);
	assert_int_equal(rte_ring_dequeue(r->tx, (void **)&m), 0);
	return m;
}

/* Issue 3: hardware checksum and TSO offloads used when the port offers
 * them (DPDK's TX offload contract: flags, l2/l3/l4 lengths, IP
 * checksum 0, TCP checksum = pseudo-header sum, without the length for
 * TSO), refused or done in software otherwise. net_ring offers none, so
 * the capabilities are set by hand here. */
static void
test_tx_offloads_follow_caps(void **state)
{
	struct rig *r = *state;
	uint32_t caps = r->p->caps;
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;
	struct rte_mbuf *m;

	rig_learn_peer(r, RIG_PEER);
	/* no TSO on the port: refused, the segment stays the caller's */
	m = tcp_seg(r, 1200, RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_TCP_CKSUM,
			536);
	assert_int_equal(net_ipv4_output(r->lc, m, rte_cpu_to_be_32(RIG_PEER),
			IPPROTO_TCP), -ENOTSUP);
	rte_pktmbuf_free(m);
	/* nor more than the MTU without it */
	m = tcp_seg(r, 1461, RTE_MBUF_F_TX_TCP_CKSUM, 0);
	assert_int_equal(net_ipv4_output(r->lc, m, rte_cpu_to_be_32(RIG_PEER),
			IPPROTO_TCP), -EMSGSIZE);
	rte_pktmbuf_free(m);
	/* software: complete checksums, no offload flags left */
	m = tcp_seg(r, 100, RTE_MBUF_F_TX_TCP_CKSUM, 0);
	assert_int_equal(net_ipv4_output(r->lc, m, rte_cpu_to_be_32(RIG_PEER),
			IPPROTO_TCP), 0);
	m = take_mbuf(r);
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);
	assert_false(m->ol_flags & (RTE_MBUF_F_TX_IP_CKSUM |
			RTE_MBUF_F_TX_TCP_CKSUM));
	assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
	assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, ip + 1), 0);
	rte_pktmbuf_free(m);
	/* the port checksums and segments: net asks it to */
	r->p->caps |= NET_CAP_TX_IPV4_CKSUM | NET_CAP_TX_TCP_CKSUM |
		NET_CAP_TSO;
	m = tcp_seg(r, 1200, RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_TCP_CKSUM,
			536);
	assert_int_equal(net_ipv4_output(r->lc, m, rte_cpu_to_be_32(RIG_PEER),
			IPPROTO_TCP), 0);
	m = take_mbuf(r);
	r->p->caps = caps;
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);
	th = (struct rte_tcp_hdr *)(ip + 1);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_IPV4);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
	assert_int_equal(m->l2_len, 14);
	assert_int_equal(m->l3_len, 20);
	assert_int_equal(m->l4_len, 20);
	assert_int_equal(m->tso_segsz, 536);
	assert_int_equal(rte_be_to_cpu_16(ip->total_length), 20 + 20 + 1200);
	assert_int_equal(ip->hdr_checksum, 0);
	assert_int_equal(th->cksum, rte_ipv4_phdr_cksum(ip, m->ol_flags));
	assert_int_equal(th->cksum,
			rte_ipv4_phdr_cksum(ip, RTE_MBUF_F_TX_TCP_SEG));
	rte_pktmbuf_free(m);
}

struct l4_seen {
	int calls;
	uint64_t flag;
};

static void
l4_in(void *ctx, struct net_lcore *lc, struct rte_mbuf *m,
		const struct net_ipv4_info *info, uint64_t now)
{
	struct l4_seen *s = ctx;

	(void)lc;
	(void)now;
	s->calls++;
	s->flag = info->l4_cksum_flag;
	assert_int_equal(m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK, s->flag);
	rte_pktmbuf_free(m);
}

/* An IPv4/TCP frame to us with the RX checksum flags a NIC would set. */
static void
inject_rx_flags(struct rig *r, bool spoil_ip_cksum, uint64_t flags)
{
	uint8_t f[128], seg[20] = { 0 };
	struct rte_mbuf *m;
	uint16_t n;

	seg[12] = 5 << 4;
	n = rig_eth(f, &r->mac, RTE_ETHER_TYPE_IPV4);
	n += rig_ipv4(f + n, RIG_PEER, RIG_IP, IPPROTO_TCP, seg, sizeof(seg));
	if (spoil_ip_cksum)
		f[14 + 10] ^= 0x5a;
	m = rig_frame(r, f, n);
	assert_non_null(m);
	m->ol_flags |= flags;
	assert_int_equal(rte_ring_enqueue(r->rx, m), 0);
	rig_poll(r, 0);
}

/* RX checksum offload: with the capability net trusts the NIC's verdict
 * (BAD drops a datagram whose checksum happens to be right, GOOD takes
 * one without recomputing) and hands the L4 verdict to TCP; without it
 * the flags are ignored: the sum is checked in software and TCP is told
 * UNKNOWN so that it checks too. */
static void
test_rx_cksum_offload_follows_caps(void **state)
{
	struct rig *r = *state;
	uint32_t caps = r->p->caps;
	struct l4_seen seen = { 0 };

	assert_int_equal(net_lcore_set_l4(r->lc, IPPROTO_TCP, l4_in, NULL,
			&seen), 0);
	/* no capability: software decides, TCP must verify */
	inject_rx_flags(r, true, RTE_MBUF_F_RX_IP_CKSUM_GOOD);
	assert_int_equal(stat_at(r, OFF(drop_ip_cksum)), 1);
	inject_rx_flags(r, false, RTE_MBUF_F_RX_IP_CKSUM_BAD |
			RTE_MBUF_F_RX_L4_CKSUM_GOOD);
	assert_int_equal(seen.calls, 1);
	assert_int_equal(seen.flag, RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN);
	/* the port verifies: its verdict stands */
	r->p->caps |= NET_CAP_RX_IPV4_CKSUM | NET_CAP_RX_L4_CKSUM;
	inject_rx_flags(r, false, RTE_MBUF_F_RX_IP_CKSUM_BAD);
	assert_int_equal(stat_at(r, OFF(drop_ip_cksum)), 2);
	inject_rx_flags(r, true, RTE_MBUF_F_RX_IP_CKSUM_GOOD |
			RTE_MBUF_F_RX_L4_CKSUM_GOOD);
	assert_int_equal(seen.calls, 2);
	assert_int_equal(seen.flag, RTE_MBUF_F_RX_L4_CKSUM_GOOD);
	inject_rx_flags(r, false, RTE_MBUF_F_RX_IP_CKSUM_GOOD |
			RTE_MBUF_F_RX_L4_CKSUM_BAD);
	assert_int_equal(seen.calls, 3);
	assert_int_equal(seen.flag, RTE_MBUF_F_RX_L4_CKSUM_BAD);
	r->p->caps = caps;
	net_lcore_set_l4(r->lc, IPPROTO_TCP, NULL, NULL, NULL);
}

/* Active open helper: on a 4-queue port (RETA entry i -> queue i % 4, as
 * setup_reta programs it) every port picked for queue 2 hashes there,
 * in either direction. net_ring has no RSS: the table is set by hand. */
static void
test_rss_pick_on_four_queues(void **state)
{
	struct rig *r = *state;
	struct net_port *p = r->p;
	uint16_t nbq = p->nb_queues, rs = p->reta_size, q = r->lc->queue;
	uint32_t dst = rte_cpu_to_be_32(RIG_PEER), cursor = 0;
	uint16_t dport = rte_cpu_to_be_16(8080);
	unsigned int i, skipped = 0;
	uint16_t last = 0;

	p->nb_queues = 4;
	p->reta_size = 128;
	for (i = 0; i < 128; i++)
		p->reta[i] = i % 4;
	r->lc->queue = 2;
	for (i = 0; i < 64; i++) {
		uint16_t sp = net_rss_pick_sport(r->lc, dst, dport, 20000,
				30000, &cursor);
		uint32_t in[3] = { RIG_PEER, RIG_IP,
				(8080u << 16) | sp };

		assert_true(sp >= 20000 && sp <= 30000);
		assert_true(sp > last);		/* the cursor moves on */
		skipped += sp - last - 1;
		last = sp;
		/* the NIC's hash of the reply: remote -> us */
		assert_int_equal(rte_softrss(in, 3, net_rss_key()) % 128 % 4,
				2);
		assert_int_equal(net_rss_queue(p, net_rss_hash_v4(dst,
				p->ip_be, dport, rte_cpu_to_be_16(sp))), 2);
	}
	assert_true(skipped > 0);	/* ports for other queues passed */
	p->nb_queues = nbq;
	p->reta_size = rs;
	r->lc->queue = q;
}

/* Byte and ARP counters move by exactly what passed. */
static void
test_byte_counters(void **state)
{
	struct rig *r = *state;
	struct net_stats a, b;
	uint8_t f[256];
	uint16_t n;

	rig_learn_peer(r, RIG_PEER);
	rig_stats(r, &a);
	n = echo_frame(f, 0, NULL);
	rig_inject(r, f, n);
	rig_poll(r, 0);
	expect_echo_reply(r, 0);	/* same length as the request */
	rig_learn_peer(r, RIG_PEER);	/* one ARP request, one reply */
	rig_stats(r, &b);
	assert_int_equal(b.rx_pkts - a.rx_pkts, 2);
	assert_int_equal(b.rx_bytes - a.rx_bytes, n + 14 + 28);
	assert_int_equal(b.tx_pkts - a.tx_pkts, 2);
	/* the ARP reply is padded to the 60-byte Ethernet minimum or not:
	 * either way the echo reply accounts for n of it */
	assert_true(b.tx_bytes - a.tx_bytes >= (uint64_t)n + 14 + 28);
	assert_true(b.tx_bytes - a.tx_bytes <= (uint64_t)n + 60);
	assert_int_equal(b.arp_rx - a.arp_rx, 1);
}

/* With the TX pool empty, a segment that needs a header mbuf (a clone:
 * net never writes into a shared buffer) is refused with -ENOBUFS,
 * counted, and consumed. */
static void
test_no_mbuf_counted(void **state)
{
	struct rig *r = *state;
	struct rte_mempool *mp = net_port_tx_pool(r->p);
	static struct rte_mbuf *hold[16384];
	struct rte_mbuf *m, *c;
	unsigned int n = 0, in_use;

	rig_learn_peer(r, RIG_PEER);
	in_use = rte_mempool_in_use_count(mp);
	m = tcp_seg(r, 100, RTE_MBUF_F_TX_TCP_CKSUM, 0);
	c = rte_pktmbuf_clone(m, mp);
	assert_non_null(c);
	while (n < RTE_DIM(hold) && (hold[n] = rte_pktmbuf_alloc(mp)) != NULL)
		n++;
	assert_true(n < RTE_DIM(hold));
	assert_int_equal(net_ipv4_output(r->lc, c, rte_cpu_to_be_32(RIG_PEER),
			IPPROTO_TCP), -ENOBUFS);
	assert_int_equal(stat_at(r, OFF(drop_no_mbuf)), 1);
	while (n > 0)
		rte_pktmbuf_free(hold[--n]);
	rte_pktmbuf_free(m);
	assert_int_equal(rte_mempool_in_use_count(mp), in_use);
	assert_int_equal(rig_tx_count(r), 0);
}

int
main(void)
{
	char prefix[64];
	int rc;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vlan_ipv4_both_ways),
		cmocka_unit_test(test_vlan_stripped_by_nic),
		cmocka_unit_test_setup_teardown(test_ipv4_df_and_ttl1_accepted,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv4_more_drop_reasons,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_on_port_node,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_over_telemetry,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_tx_offloads_follow_caps,
				setup, teardown),
		cmocka_unit_test_setup_teardown(
				test_rx_cksum_offload_follows_caps,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_rss_pick_on_four_queues,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_byte_counters,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_mbuf_counted,
				setup, teardown),
	};

	snprintf(prefix, sizeof(prefix), "fsn_l2l3_%d", (int)getpid());
	if (rig_eal_init(prefix) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rig_eal_fini();
	return rc;
}
