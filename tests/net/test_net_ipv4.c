/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* lib/net input: ICMP echo, every Ethernet/VLAN/IPv4 drop reason, the L4
 * hook, RSS helpers and counters, through a net_ring port. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_arp.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "net_rig.h"
#include "net_rig_cm.h"

static void
test_icmp_echo_reply(void **state)
{
	struct rig *r = *state;
	uint8_t f[256], icmp[128], data[56], o[256];
	const struct rte_ipv4_hdr *ip;
	const struct rte_icmp_hdr *ic;
	uint16_t n, il;
	unsigned int i;
	struct net_stats s;

	for (i = 0; i < sizeof(data); i++)
		data[i] = i * 7;
	rig_learn_peer(r, RIG_PEER);
	il = rig_icmp_echo(icmp, 0x4242, 3, data, sizeof(data));
	n = rig_eth(f, &r->mac, RTE_ETHER_TYPE_IPV4);
	n += rig_ipv4(f + n, RIG_PEER, RIG_IP, IPPROTO_ICMP, icmp, il);
	rig_inject(r, f, n);
	rig_poll(r, 0);
	n = rig_take(r, o, sizeof(o));
	assert_int_equal(n, 14 + 20 + 8 + 56);
	assert_memory_equal(o, &rig_peer_mac, 6);
	ip = (const struct rte_ipv4_hdr *)(o + 14);
	assert_int_equal(rte_be_to_cpu_32(ip->src_addr), RIG_IP);
	assert_int_equal(rte_be_to_cpu_32(ip->dst_addr), RIG_PEER);
	assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
	ic = (const struct rte_icmp_hdr *)(ip + 1);
	assert_int_equal(ic->icmp_type, RTE_IP_ICMP_ECHO_REPLY);
	assert_int_equal(ic->icmp_code, 0);
	assert_int_equal(rte_be_to_cpu_16(ic->icmp_ident), 0x4242);
	assert_int_equal(rte_be_to_cpu_16(ic->icmp_seq_nb), 3);
	assert_memory_equal(ic + 1, data, sizeof(data));
	assert_int_equal(rte_raw_cksum(ic, 8 + 56), 0xffff);
	rig_stats(r, &s);
	assert_int_equal(s.icmp_echo_rx, 1);
	assert_int_equal(s.icmp_echo_tx, 1);
}

/* Builds an IPv4 echo request, lets mutate() spoil it, injects it and
 * checks that exactly the named counter moved and nothing was sent. */
static void
expect_ip_drop(struct rig *r, void (*mutate)(uint8_t *ip, uint16_t *len),
		size_t counter_off)
{
	uint8_t f[256], icmp[64];
	uint16_t n, il, iplen;
	struct net_stats before, after;
	uint64_t b, a;

	rig_learn_peer(r, RIG_PEER);
	il = rig_icmp_echo(icmp, 1, 1, "abcdefgh", 8);
	n = rig_eth(f, &r->mac, RTE_ETHER_TYPE_IPV4);
	iplen = rig_ipv4(f + n, RIG_PEER, RIG_IP, IPPROTO_ICMP, icmp, il);
	mutate(f + n, &iplen);
	rig_stats(r, &before);
	rig_inject(r, f, n + iplen);
	rig_poll(r, 0);
	rig_stats(r, &after);
	memcpy(&b, (uint8_t *)&before + counter_off, 8);
	memcpy(&a, (uint8_t *)&after + counter_off, 8);
	assert_int_equal(a, b + 1);
	assert_int_equal(after.icmp_echo_tx, before.icmp_echo_tx);
	assert_int_equal(rig_tx_count(r), 0);
}

static void
refix(uint8_t *b)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)b;

	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

static void m_short(uint8_t *b, uint16_t *l) { (void)b; *l = 19; }
static void m_version(uint8_t *b, uint16_t *l) { (void)l; b[0] = 0x65; refix(b); }
static void m_ihl(uint8_t *b, uint16_t *l) { (void)l; b[0] = 0x44; refix(b); }
static void
m_len(uint8_t *b, uint16_t *l)
{
	(void)l;
	((struct rte_ipv4_hdr *)b)->total_length = rte_cpu_to_be_16(200);
	refix(b);
}
static void m_cksum(uint8_t *b, uint16_t *l) { (void)l; b[10] ^= 0x55; }
static void
m_ttl(uint8_t *b, uint16_t *l)
{
	(void)l;
	((struct rte_ipv4_hdr *)b)->time_to_live = 0;
	refix(b);
}
static void
m_mf(uint8_t *b, uint16_t *l)
{
	(void)l;
	((struct rte_ipv4_hdr *)b)->fragment_offset =
		rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG);
	refix(b);
}
static void
m_offset(uint8_t *b, uint16_t *l)
{
	(void)l;
	((struct rte_ipv4_hdr *)b)->fragment_offset = rte_cpu_to_be_16(185);
	refix(b);
}
static void
m_options(uint8_t *b, uint16_t *l)
{
	/* Insert one 4-byte option (NOPs + EOL) and fix the header. */
	memmove(b + 24, b + 20, *l - 20);
	b[20] = 1; b[21] = 1; b[22] = 1; b[23] = 0;
	*l += 4;
	b[0] = 0x46;
	((struct rte_ipv4_hdr *)b)->total_length = rte_cpu_to_be_16(*l);
	refix(b);
}
static void
m_not_ours(uint8_t *b, uint16_t *l)
{
	(void)l;
	((struct rte_ipv4_hdr *)b)->dst_addr =
		rte_cpu_to_be_32(RTE_IPV4(198, 18, 1, 3));
	refix(b);
}
static void
m_proto(uint8_t *b, uint16_t *l)
{
	(void)l;
	((struct rte_ipv4_hdr *)b)->next_proto_id = 47;	/* GRE */
	refix(b);
}
static void
m_udp_no_listener(uint8_t *b, uint16_t *l)
{
	(void)l;
	((struct rte_ipv4_hdr *)b)->next_proto_id = IPPROTO_UDP;
	refix(b);
}
static void m_icmp_cksum(uint8_t *b, uint16_t *l) { (void)l; b[23] ^= 1; }
static void
m_icmp_type(uint8_t *b, uint16_t *l)
{
	struct rte_icmp_hdr *ic = (struct rte_icmp_hdr *)(b + 20);

	ic->icmp_type = 13;	/* timestamp: not answered */
	ic->icmp_cksum = 0;
	ic->icmp_cksum = ~rte_raw_cksum(ic, *l - 20);
}

#define OFF(f) offsetof(struct net_stats, f)

static void
test_ipv4_drop_reasons(void **state)
{
	struct rig *r = *state;

	expect_ip_drop(r, m_short, OFF(drop_ip_short));
	expect_ip_drop(r, m_version, OFF(drop_ip_version));
	expect_ip_drop(r, m_ihl, OFF(drop_ip_ihl));
	expect_ip_drop(r, m_len, OFF(drop_ip_len));
	expect_ip_drop(r, m_cksum, OFF(drop_ip_cksum));
	expect_ip_drop(r, m_ttl, OFF(drop_ip_ttl));
	expect_ip_drop(r, m_mf, OFF(drop_ip_frag));
	expect_ip_drop(r, m_offset, OFF(drop_ip_frag));
	expect_ip_drop(r, m_options, OFF(drop_ip_options));
	expect_ip_drop(r, m_not_ours, OFF(drop_ip_not_ours));
	/* No ICMP port/protocol unreachable: nothing goes out. */
	expect_ip_drop(r, m_proto, OFF(drop_ip_proto));
	expect_ip_drop(r, m_udp_no_listener, OFF(drop_ip_proto));
	expect_ip_drop(r, m_icmp_cksum, OFF(drop_icmp_bad));
	expect_ip_drop(r, m_icmp_type, OFF(drop_icmp_type));
}

static void
expect_eth_drop(struct rig *r, const uint8_t *f, uint16_t n, size_t off)
{
	struct net_stats before, after;
	uint64_t b, a;

	rig_stats(r, &before);
	rig_inject(r, f, n);
	rig_poll(r, 0);
	rig_stats(r, &after);
	memcpy(&b, (uint8_t *)&before + off, 8);
	memcpy(&a, (uint8_t *)&after + off, 8);
	assert_int_equal(a, b + 1);
	assert_int_equal(rig_tx_count(r), 0);
}

static void
test_eth_drop_reasons(void **state)
{
	struct rig *r = *state;
	static const struct rte_ether_addr other = {
		.addr_bytes = { 0x02, 0, 0, 0, 0, 0x77 } };
	uint8_t f[128];
	uint16_t n;

	n = rig_eth(f, &rig_bcast, RTE_ETHER_TYPE_ARP);
	expect_eth_drop(r, f, 10, OFF(drop_eth_short));
	n = rig_eth(f, &other, RTE_ETHER_TYPE_ARP);
	n += rig_arp(f + n, NULL, RTE_ARP_OP_REQUEST, RIG_PEER, RIG_IP);
	expect_eth_drop(r, f, n, OFF(drop_eth_not_ours));
	n = rig_eth(f, &r->mac, RTE_ETHER_TYPE_IPV6);
	memset(f + n, 0x60, 40);
	expect_eth_drop(r, f, n + 40, OFF(drop_eth_type));
	/* Tagged frame on a port without VLAN configured. */
	n = rig_eth(f, &rig_bcast, RTE_ETHER_TYPE_VLAN);
	f[n] = 0; f[n + 1] = 100; f[n + 2] = 0x08; f[n + 3] = 0x06;
	n += 4;
	n += rig_arp(f + n, NULL, RTE_ARP_OP_REQUEST, RIG_PEER, RIG_IP);
	expect_eth_drop(r, f, n, OFF(drop_vlan));
}

static uint16_t
vlan_arp_request(uint8_t *f, uint16_t vid)
{
	uint16_t n = rig_eth(f, &rig_bcast, RTE_ETHER_TYPE_VLAN);

	f[n] = vid >> 8; f[n + 1] = vid & 0xff; f[n + 2] = 0x08;
	f[n + 3] = 0x06;
	n += 4;
	return n + rig_arp(f + n, NULL, RTE_ARP_OP_REQUEST, RIG_PEER, RIG_IP);
}

static void
test_vlan_accept_strip_tag(void **state)
{
	struct rig r;
	struct net_port_conf c;
	struct net_stats s;
	uint8_t f[128], o[128];
	uint16_t n;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.ip_be = rte_cpu_to_be_32(RIG_IP);
	c.netmask_be = rte_cpu_to_be_32(RIG_MASK);
	c.vlan = true;
	c.vlan_id = 100;
	assert_int_equal(rig_open(&r, &c), 0);
	/* The gratuitous ARP is tagged too. */
	n = rig_take(&r, o, sizeof(o));
	assert_int_equal(rte_be_to_cpu_16(((struct rte_ether_hdr *)o)->
			ether_type), RTE_ETHER_TYPE_VLAN);
	rig_inject(&r, f, vlan_arp_request(f, 100));
	rig_poll(&r, 0);
	n = rig_take(&r, o, sizeof(o));
	assert_int_equal(rte_be_to_cpu_16(((struct rte_ether_hdr *)o)->
			ether_type), RTE_ETHER_TYPE_VLAN);
	assert_int_equal(o[14], 0);
	assert_int_equal(o[15], 100);
	assert_int_equal(o[16], 0x08);
	assert_int_equal(o[17], 0x06);
	/* Shift the tag out: the rest is a plain ARP reply. */
	memmove(o + 12, o + 16, n - 16);
	assert_arp_frame(o, n - 4, &rig_peer_mac, &r.mac, RTE_ARP_OP_REPLY,
			RIG_IP, &rig_peer_mac, RIG_PEER);
	/* Other VLAN and untagged: dropped. */
	rig_inject(&r, f, vlan_arp_request(f, 200));
	n = rig_eth(f, &rig_bcast, RTE_ETHER_TYPE_ARP);
	n += rig_arp(f + n, NULL, RTE_ARP_OP_REQUEST, RIG_PEER, RIG_IP);
	rig_inject(&r, f, n);
	rig_poll(&r, 0);
	assert_int_equal(rig_tx_count(&r), 0);
	rig_stats(&r, &s);
	assert_int_equal(s.drop_vlan, 2);
	assert_int_equal(s.arp_req_answered, 1);
	rig_close(&r);
}

struct seen {
	int calls;
	uint32_t src;
	uint16_t l4_len;
	uint32_t pkt_len;
	uint16_t sport;
	uint64_t now;
};

static void
tcp_in(void *ctx, struct net_lcore *lc, struct rte_mbuf *m,
		const struct net_ipv4_info *info, uint64_t now)
{
	struct seen *s = ctx;

	(void)lc;
	s->calls++;
	s->src = info->src_be;
	s->l4_len = info->l4_len;
	s->pkt_len = m->pkt_len;
	s->sport = rte_be_to_cpu_16(rte_pktmbuf_mtod(m,
			struct rte_tcp_hdr *)->src_port);
	s->now = now;
	rte_pktmbuf_free(m);
}

static void
test_tcp_hook_gets_l4(void **state)
{
	struct rig *r = *state;
	struct seen s = { 0 };
	uint8_t f[256], seg[24];
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)seg;
	uint16_t n;
	struct net_stats st;

	memset(seg, 0, sizeof(seg));
	th->src_port = rte_cpu_to_be_16(5555);
	th->data_off = 5 << 4;
	memcpy(seg + 20, "ping", 4);
	assert_int_equal(net_lcore_set_l4(r->lc, IPPROTO_TCP, tcp_in, NULL,
			&s), 0);
	n = rig_eth(f, &r->mac, RTE_ETHER_TYPE_IPV4);
	n += rig_ipv4(f + n, RIG_PEER, RIG_IP, IPPROTO_TCP, seg, 24);
	memset(f + n, 0xee, 8);		/* Ethernet padding */
	rig_inject(r, f, n + 8);
	rig_poll(r, 5);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.src, rte_cpu_to_be_32(RIG_PEER));
	assert_int_equal(s.l4_len, 24);
	assert_int_equal(s.pkt_len, 24);	/* padding trimmed */
	assert_int_equal(s.sport, 5555);
	assert_int_equal(s.now, r->now);
	rig_stats(r, &st);
	assert_int_equal(st.l4_rx, 1);
}

static void
test_rss_symmetric_and_pick(void **state)
{
	struct rig *r = *state;
	uint32_t a = rte_cpu_to_be_32(RIG_IP), b = rte_cpu_to_be_32(RIG_PEER);
	uint16_t x = rte_cpu_to_be_16(40001), y = rte_cpu_to_be_16(80);
	uint32_t cursor = 0;
	uint16_t sp;
	int i;

	for (i = 0; i < 1000; i++) {
		uint32_t s = rte_cpu_to_be_32(0xc6120000 + i * 7919);
		uint16_t p = rte_cpu_to_be_16(1024 + i * 31);

		assert_int_equal(net_rss_hash_v4(s, b, p, y),
				net_rss_hash_v4(b, s, y, p));
	}
	assert_int_not_equal(net_rss_hash_v4(a, b, x, y),
			net_rss_hash_v4(a, b, rte_cpu_to_be_16(40002), y));
	/* Single queue: every port qualifies, in order from the cursor. */
	sp = net_rss_pick_sport(r->lc, b, y, 40000, 40010, &cursor);
	assert_int_equal(sp, 40000);
	sp = net_rss_pick_sport(r->lc, b, y, 40000, 40010, &cursor);
	assert_int_equal(sp, 40001);
	assert_int_equal(net_rss_queue(r->p, net_rss_hash_v4(a, b, x, y)), 0);
}

static void
test_stats_total_and_names(void **state)
{
	struct rig *r = *state;
	struct net_stats tot, mine;

	rig_learn_peer(r, RIG_PEER);
	net_stats_total(&tot);
	rig_stats(r, &mine);
	assert_true(tot.arp_req_answered >= mine.arp_req_answered);
	assert_true(mine.rx_pkts >= 1);
	assert_true(mine.tx_pkts >= 1);
	assert_int_equal(net_stats_count() * 8, sizeof(struct net_stats));
	assert_string_equal(net_stats_name(0), "rx_pkts");
	assert_null(net_stats_name(net_stats_count()));
	assert_int_equal(net_telemetry_register(), 0);
}

int
main(void)
{
	char prefix[64];
	int rc;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_icmp_echo_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv4_drop_reasons, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eth_drop_reasons, setup, teardown),
		cmocka_unit_test(test_vlan_accept_strip_tag),
		cmocka_unit_test_setup_teardown(test_tcp_hook_gets_l4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rss_symmetric_and_pick, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_total_and_names, setup, teardown),
	};

	snprintf(prefix, sizeof(prefix), "fsn_ipv4_%d", (int)getpid());
	if (rig_eal_init(prefix) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rig_eal_fini();
	return rc;
}
