/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* lib/net L2/L3: frames in through a net_ring port, frames out asserted
 * byte for byte; virtual clock for ARP retries and timeouts. */

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

static const struct rte_ether_addr bcast = {
	.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };

static int
setup(void **state)
{
	static struct rig r;

	if (rig_open(&r, NULL) != 0)
		return -1;
	rig_drain(&r);
	*state = &r;
	return 0;
}

static int
teardown(void **state)
{
	rig_close(*state);
	return 0;
}

static void
assert_arp_frame(const uint8_t *f, uint16_t len, const struct rte_ether_addr *dst,
		const struct rte_ether_addr *src, uint16_t op, uint32_t sip,
		const struct rte_ether_addr *tha, uint32_t tip)
{
	const struct rte_ether_hdr *e = (const struct rte_ether_hdr *)f;
	const struct rte_arp_hdr *a = (const struct rte_arp_hdr *)(e + 1);

	assert_true(len >= sizeof(*e) + sizeof(*a));
	assert_memory_equal(&e->dst_addr, dst, 6);
	assert_memory_equal(&e->src_addr, src, 6);
	assert_int_equal(rte_be_to_cpu_16(e->ether_type), RTE_ETHER_TYPE_ARP);
	assert_int_equal(rte_be_to_cpu_16(a->arp_hardware), RTE_ARP_HRD_ETHER);
	assert_int_equal(rte_be_to_cpu_16(a->arp_protocol),
			RTE_ETHER_TYPE_IPV4);
	assert_int_equal(a->arp_hlen, 6);
	assert_int_equal(a->arp_plen, 4);
	assert_int_equal(rte_be_to_cpu_16(a->arp_opcode), op);
	assert_memory_equal(&a->arp_data.arp_sha, src, 6);
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_sip), sip);
	assert_memory_equal(&a->arp_data.arp_tha, tha, 6);
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_tip), tip);
}

static void
test_garp_on_first_poll(void **state)
{
	struct rig r;
	uint8_t f[256];
	uint16_t n;
	struct net_stats s;
	static const struct rte_ether_addr zero;

	(void)state;
	assert_int_equal(rig_open(&r, NULL), 0);
	n = rig_take(&r, f, sizeof(f));
	assert_int_equal(n, 60);	/* padded to the Ethernet minimum */
	assert_arp_frame(f, n, &bcast, &r.mac, RTE_ARP_OP_REQUEST, RIG_IP,
			&zero, RIG_IP);
	rig_poll(&r, MS);
	assert_int_equal(rig_tx_count(&r), 0);	/* only once */
	rig_stats(&r, &s);
	assert_int_equal(s.arp_garp_tx, 1);
	rig_close(&r);
}

static void
test_arp_request_answered(void **state)
{
	struct rig *r = *state;
	uint8_t f[256], o[256];
	uint16_t n;
	struct net_stats s;

	n = rig_eth(f, &bcast, RTE_ETHER_TYPE_ARP);
	n += rig_arp(f + n, NULL, RTE_ARP_OP_REQUEST, RIG_PEER, RIG_IP);
	rig_inject(r, f, n);
	rig_poll(r, 0);
	n = rig_take(r, o, sizeof(o));
	assert_arp_frame(o, n, &rig_peer_mac, &r->mac, RTE_ARP_OP_REPLY,
			RIG_IP, &rig_peer_mac, RIG_PEER);
	assert_int_equal(rig_tx_count(r), 0);
	rig_stats(r, &s);
	assert_int_equal(s.arp_req_answered, 1);
}

static void
test_arp_request_for_other_ignored(void **state)
{
	struct rig *r = *state;
	uint8_t f[256];
	uint16_t n;
	struct net_stats s;

	n = rig_eth(f, &bcast, RTE_ETHER_TYPE_ARP);
	n += rig_arp(f + n, NULL, RTE_ARP_OP_REQUEST, RIG_PEER,
			RTE_IPV4(198, 18, 1, 77));
	rig_inject(r, f, n);
	/* malformed: protocol length 6 */
	n = rig_eth(f, &bcast, RTE_ETHER_TYPE_ARP);
	n += rig_arp(f + n, NULL, RTE_ARP_OP_REQUEST, RIG_PEER, RIG_IP);
	f[sizeof(struct rte_ether_hdr) + 5] = 6;
	rig_inject(r, f, n);
	rig_poll(r, 0);
	assert_int_equal(rig_tx_count(r), 0);
	rig_stats(r, &s);
	assert_int_equal(s.drop_arp_not_ours, 1);
	assert_int_equal(s.drop_arp_bad, 1);
	assert_int_equal(s.arp_req_answered, 0);
}

/* A TCP segment from the "TCP layer": 20-byte header, payload = tag. */
static int
send_tcp(struct rig *r, uint32_t dst, uint32_t tag)
{
	struct rte_mbuf *m = net_alloc(r->lc);
	struct rte_tcp_hdr th;
	uint8_t *d;

	assert_non_null(m);
	memset(&th, 0, sizeof(th));
	th.src_port = rte_cpu_to_be_16(80);
	th.dst_port = rte_cpu_to_be_16(40000);
	th.sent_seq = rte_cpu_to_be_32(tag);
	th.data_off = 5 << 4;
	th.tcp_flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
	th.rx_win = rte_cpu_to_be_16(65535);
	d = (uint8_t *)rte_pktmbuf_append(m, sizeof(th) + 4);
	if (d == NULL)
		fail();
	memcpy(d, &th, sizeof(th));
	memcpy(d + sizeof(th), &tag, 4);
	m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;	/* net computes it */
	return net_ipv4_output(r->lc, m, rte_cpu_to_be_32(dst), IPPROTO_TCP);
}

/* Checks an IPv4/TCP frame to the peer and returns its tag. */
static uint32_t
assert_tcp_frame(struct rig *r, const uint8_t *f, uint16_t n, uint32_t dst)
{
	const struct rte_ether_hdr *e = (const struct rte_ether_hdr *)f;
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(e + 1);
	const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(ip + 1);
	uint32_t tag;

	assert_int_equal(n, sizeof(*e) + sizeof(*ip) + sizeof(*th) + 4);
	assert_memory_equal(&e->dst_addr, &rig_peer_mac, 6);
	assert_memory_equal(&e->src_addr, &r->mac, 6);
	assert_int_equal(rte_be_to_cpu_16(e->ether_type), RTE_ETHER_TYPE_IPV4);
	assert_int_equal(ip->version_ihl, 0x45);
	assert_int_equal(rte_be_to_cpu_16(ip->total_length), n - sizeof(*e));
	assert_int_equal(ip->next_proto_id, IPPROTO_TCP);
	assert_int_equal(ip->time_to_live, 64);
	assert_int_equal(rte_be_to_cpu_32(ip->src_addr), RIG_IP);
	assert_int_equal(rte_be_to_cpu_32(ip->dst_addr), dst);
	assert_int_equal(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);
	assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, th), 0);
	memcpy(&tag, th + 1, 4);
	assert_int_equal(rte_be_to_cpu_32(th->sent_seq), tag);
	return tag;
}

static void
test_output_known_peer(void **state)
{
	struct rig *r = *state;
	uint8_t f[256];
	uint16_t n;

	rig_learn_peer(r, RIG_PEER);
	assert_int_equal(send_tcp(r, RIG_PEER, 7), 0);
	/* Buffered until flushed: the app decides when a response is done. */
	assert_int_equal(rig_tx_count(r), 0);
	net_lcore_flush(r->lc);
	n = rig_take(r, f, sizeof(f));
	assert_int_equal(assert_tcp_frame(r, f, n, RIG_PEER), 7);
}

static void
test_output_keeps_caller_cksum(void **state)
{
	struct rig *r = *state;
	struct rte_mbuf *m;
	uint8_t f[256], *d;
	uint16_t n;

	rig_learn_peer(r, RIG_PEER);
	m = net_alloc(r->lc);
	assert_non_null(m);
	d = (uint8_t *)rte_pktmbuf_append(m, 24);
	if (d == NULL)
		fail();
	memset(d, 0, 24);
	d[12] = 5 << 4;
	d[16] = 0xab;	/* checksum field: no TX_TCP_CKSUM flag, so kept */
	d[17] = 0xcd;
	assert_int_equal(net_ipv4_output(r->lc, m, rte_cpu_to_be_32(RIG_PEER),
			IPPROTO_TCP), 0);
	net_lcore_flush(r->lc);
	n = rig_take(r, f, sizeof(f));
	assert_int_equal(n, 14 + 20 + 24);
	assert_int_equal(f[34 + 16], 0xab);
	assert_int_equal(f[34 + 17], 0xcd);
	assert_int_equal(rte_raw_cksum(f + 14, 20), 0xffff);
}

/* A full TX ring keeps frames buffered for the next flush, in order. */
static void
test_tx_backpressure_keeps_frames(void **state)
{
	struct rig r;
	uint8_t f[256];
	struct net_stats s;
	uint32_t i;
	uint16_t n;

	(void)state;
	rig_tx_ring_size = 16;		/* holds 15 */
	assert_int_equal(rig_open(&r, NULL), 0);
	rig_tx_ring_size = 1024;
	rig_drain(&r);
	rig_learn_peer(&r, RIG_PEER);
	for (i = 0; i < 40; i++)
		assert_int_equal(send_tcp(&r, RIG_PEER, i), 0);
	net_lcore_flush(r.lc);
	assert_int_equal(rig_tx_count(&r), 15);
	for (i = 0; i < 40; i++) {
		if (rig_tx_count(&r) == 0)
			rig_poll(&r, 0);
		n = rig_take(&r, f, sizeof(f));
		assert_int_equal(assert_tcp_frame(&r, f, n, RIG_PEER), i);
	}
	rig_stats(&r, &s);
	assert_int_equal(s.drop_tx_full, 0);
	rig_close(&r);
}

/* A queue that never drains: the head frame is dropped after 1024 flushes
 * without progress, so one refused frame cannot block the lcore forever. */
static void
test_tx_stall_drops_head(void **state)
{
	struct rig r;
	struct net_stats s;
	uint32_t i;

	(void)state;
	rig_tx_ring_size = 16;
	assert_int_equal(rig_open(&r, NULL), 0);
	rig_tx_ring_size = 1024;
	rig_learn_peer(&r, RIG_PEER);	/* leaves the ring empty */
	for (i = 0; i < 20; i++)
		assert_int_equal(send_tcp(&r, RIG_PEER, i), 0);
	net_lcore_flush(r.lc);			/* 15 in the ring, 5 held */
	for (i = 0; i < 1023; i++)
		net_lcore_flush(r.lc);
	rig_stats(&r, &s);
	assert_int_equal(s.drop_tx_full, 0);
	net_lcore_flush(r.lc);
	rig_stats(&r, &s);
	assert_int_equal(s.drop_tx_full, 1);
	rig_close(&r);
}

static void
test_arp_resolution_pending_bound(void **state)
{
	struct rig *r = *state;
	static const struct rte_ether_addr zero;
	uint8_t f[256];
	uint16_t n;
	uint32_t i;
	struct net_stats s;

	for (i = 0; i < 20; i++)
		assert_int_equal(send_tcp(r, RIG_PEER, i), 0);
	rig_poll(r, 0);
	/* One request, nothing else while unresolved. */
	n = rig_take(r, f, sizeof(f));
	assert_arp_frame(f, n, &bcast, &r->mac, RTE_ARP_OP_REQUEST, RIG_IP,
			&zero, RIG_PEER);
	assert_int_equal(rig_tx_count(r), 0);
	rig_stats(r, &s);
	assert_int_equal(s.drop_arp_pending_full, 4);
	/* The reply releases the 16 newest, in order. */
	n = rig_eth(f, &r->mac, RTE_ETHER_TYPE_ARP);
	n += rig_arp(f + n, &r->mac, RTE_ARP_OP_REPLY, RIG_PEER, RIG_IP);
	rig_inject(r, f, n);
	rig_poll(r, MS);
	assert_int_equal(rig_tx_count(r), 16);
	for (i = 4; i < 20; i++) {
		n = rig_take(r, f, sizeof(f));
		assert_int_equal(assert_tcp_frame(r, f, n, RIG_PEER), i);
	}
	rig_stats(r, &s);
	assert_int_equal(s.arp_reply_rx, 1);
}

static void
test_arp_retries_then_timeout(void **state)
{
	struct rig *r = *state;
	uint8_t f[256];
	struct net_stats s;
	int i;

	assert_int_equal(send_tcp(r, RIG_PEER, 1), 0);
	assert_int_equal(send_tcp(r, RIG_PEER, 2), 0);
	rig_poll(r, 0);
	assert_int_equal(rig_tx_count(r), 1);	/* request 1 */
	rig_drain(r);
	rig_poll(r, 500 * MS);
	assert_int_equal(rig_tx_count(r), 0);	/* not yet */
	for (i = 0; i < 2; i++) {		/* requests 2 and 3 */
		rig_poll(r, 500 * MS);
		assert_int_equal(rig_tx_count(r), 1);
		assert_true(rig_take(r, f, sizeof(f)) > 0);
		rig_poll(r, 500 * MS);
	}
	rig_stats(r, &s);
	assert_int_equal(s.arp_req_tx, 3);
	assert_int_equal(s.drop_arp_timeout, 0);
	rig_poll(r, 500 * MS);		/* give up after 3 */
	rig_stats(r, &s);
	assert_int_equal(s.drop_arp_timeout, 2);
	assert_int_equal(rig_tx_count(r), 0);
}

static void
test_arp_entry_expires(void **state)
{
	struct rig *r = *state;
	uint8_t f[256];
	uint16_t n;
	struct net_stats s;

	rig_learn_peer(r, RIG_PEER);
	rig_poll(r, 295 * 1000 * MS);	/* default lifetime: 300 s */
	assert_int_equal(send_tcp(r, RIG_PEER, 1), 0);
	rig_poll(r, 0);
	n = rig_take(r, f, sizeof(f));
	assert_int_equal(assert_tcp_frame(r, f, n, RIG_PEER), 1);
	rig_poll(r, 6 * 1000 * MS);
	assert_int_equal(send_tcp(r, RIG_PEER, 2), 0);
	rig_poll(r, 0);
	rig_stats(r, &s);
	assert_int_equal(s.arp_req_tx, 1);	/* stale: asks again */
	n = rig_take(r, f, sizeof(f));
	assert_int_equal(rte_be_to_cpu_16(((struct rte_ether_hdr *)f)->
			ether_type), RTE_ETHER_TYPE_ARP);
	assert_int_equal(rig_tx_count(r), 0);
}

/* In the last (retries + 1) retry intervals of its life an entry still
 * serves, and is asked for again at most once per interval. */
static void
test_arp_entry_refreshed_before_expiry(void **state)
{
	struct rig *r = *state;
	static const struct rte_ether_addr zero;
	uint8_t f[256];
	uint16_t n;
	struct net_stats s;

	rig_learn_peer(r, RIG_PEER);
	rig_poll(r, 297 * 1000 * MS);
	assert_int_equal(send_tcp(r, RIG_PEER, 1), 0);
	assert_int_equal(send_tcp(r, RIG_PEER, 2), 0);
	rig_poll(r, 0);
	n = rig_take(r, f, sizeof(f));
	assert_arp_frame(f, n, &bcast, &r->mac, RTE_ARP_OP_REQUEST, RIG_IP,
			&zero, RIG_PEER);
	n = rig_take(r, f, sizeof(f));
	assert_int_equal(assert_tcp_frame(r, f, n, RIG_PEER), 1);
	n = rig_take(r, f, sizeof(f));
	assert_int_equal(assert_tcp_frame(r, f, n, RIG_PEER), 2);
	assert_int_equal(rig_tx_count(r), 0);
	/* The peer answers: fresh again, no more requests. */
	n = rig_eth(f, &r->mac, RTE_ETHER_TYPE_ARP);
	n += rig_arp(f + n, &r->mac, RTE_ARP_OP_REPLY, RIG_PEER, RIG_IP);
	rig_inject(r, f, n);
	rig_poll(r, 500 * MS);
	rig_poll(r, 2000 * MS);		/* past the old entry's end */
	assert_int_equal(send_tcp(r, RIG_PEER, 3), 0);
	rig_poll(r, 0);
	n = rig_take(r, f, sizeof(f));
	assert_int_equal(assert_tcp_frame(r, f, n, RIG_PEER), 3);
	rig_stats(r, &s);
	assert_int_equal(s.arp_req_tx, 1);
	assert_int_equal(s.drop_arp_timeout, 0);
}

static void
test_offlink_via_gateway(void **state)
{
	struct rig *r = *state;
	static const struct rte_ether_addr zero;
	uint8_t f[256];
	uint16_t n;

	assert_int_equal(send_tcp(r, RTE_IPV4(203, 0, 113, 5), 1), 0);
	rig_poll(r, 0);
	n = rig_take(r, f, sizeof(f));
	assert_arp_frame(f, n, &bcast, &r->mac, RTE_ARP_OP_REQUEST, RIG_IP,
			&zero, RIG_GW);
}

static void
test_no_gateway_no_route(void **state)
{
	struct rig r;
	struct net_port_conf c;
	struct net_stats s;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.ip_be = rte_cpu_to_be_32(RIG_IP);
	c.netmask_be = rte_cpu_to_be_32(RIG_MASK);
	assert_int_equal(rig_open(&r, &c), 0);
	rig_drain(&r);
	assert_int_equal(send_tcp(&r, RTE_IPV4(203, 0, 113, 5), 1), 0);
	rig_poll(&r, 0);
	assert_int_equal(rig_tx_count(&r), 0);
	rig_stats(&r, &s);
	assert_int_equal(s.drop_no_route, 1);
	rig_close(&r);
}

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

	n = rig_eth(f, &bcast, RTE_ETHER_TYPE_ARP);
	expect_eth_drop(r, f, 10, OFF(drop_eth_short));
	n = rig_eth(f, &other, RTE_ETHER_TYPE_ARP);
	n += rig_arp(f + n, NULL, RTE_ARP_OP_REQUEST, RIG_PEER, RIG_IP);
	expect_eth_drop(r, f, n, OFF(drop_eth_not_ours));
	n = rig_eth(f, &r->mac, RTE_ETHER_TYPE_IPV6);
	memset(f + n, 0x60, 40);
	expect_eth_drop(r, f, n + 40, OFF(drop_eth_type));
	/* Tagged frame on a port without VLAN configured. */
	n = rig_eth(f, &bcast, RTE_ETHER_TYPE_VLAN);
	f[n] = 0; f[n + 1] = 100; f[n + 2] = 0x08; f[n + 3] = 0x06;
	n += 4;
	n += rig_arp(f + n, NULL, RTE_ARP_OP_REQUEST, RIG_PEER, RIG_IP);
	expect_eth_drop(r, f, n, OFF(drop_vlan));
}

static uint16_t
vlan_arp_request(uint8_t *f, uint16_t vid)
{
	uint16_t n = rig_eth(f, &bcast, RTE_ETHER_TYPE_VLAN);

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
	n = rig_eth(f, &bcast, RTE_ETHER_TYPE_ARP);
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

/* Two queues, two lcores: the ARP table is the port's, so a reply taken in
 * on queue 0 releases what lcore 1 parked, from lcore 1's own queue. */
static void
test_two_lcores_share_arp(void **state)
{
	struct rte_ring *rx[2], *tx[2];
	struct net_port_conf c;
	struct net_port *p;
	struct net_lcore *l0, *l1;
	struct net_stats s1;
	struct rte_mbuf *m;
	uint8_t f[128];
	uint16_t n;
	int id, q;
	char name[32];
	static int seq;

	(void)state;
	seq++;
	for (q = 0; q < 2; q++) {
		snprintf(name, sizeof(name), "mq_rx%d_%d", seq, q);
		rx[q] = rte_ring_create(name, 256, 0, RING_F_SP_ENQ |
				RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "mq_tx%d_%d", seq, q);
		tx[q] = rte_ring_create(name, 256, 0, RING_F_SP_ENQ |
				RING_F_SC_DEQ);
		assert_non_null(rx[q]);
		assert_non_null(tx[q]);
	}
	snprintf(name, sizeof(name), "net_mq%d", seq);
	id = rte_eth_from_rings(name, rx, 2, tx, 2, 0);
	assert_true(id >= 0);
	memset(&c, 0, sizeof(c));
	c.port_id = id;
	c.nb_queues = 2;
	c.nb_mbufs = 4096;
	c.nb_rxd = 256;
	c.nb_txd = 256;
	c.ip_be = rte_cpu_to_be_32(RIG_IP);
	c.netmask_be = rte_cpu_to_be_32(RIG_MASK);
	assert_int_equal(net_port_init(&c, &p), 0);
	l0 = net_lcore_create(p, 0, -1);
	l1 = net_lcore_create(p, 1, -1);
	assert_non_null(l0);
	assert_non_null(l1);
	net_lcore_poll(l0, 1000 * MS);	/* gratuitous ARP from queue 0 */
	net_lcore_poll(l1, 1000 * MS);	/* none from queue 1 */
	assert_int_equal(rte_ring_count(tx[0]), 1);
	assert_int_equal(rte_ring_count(tx[1]), 0);
	/* lcore 1 sends: parked, request out on queue 1 */
	m = net_alloc(l1);
	assert_non_null(rte_pktmbuf_append(m, 20));
	memset(rte_pktmbuf_mtod(m, void *), 0, 20);
	rte_pktmbuf_mtod(m, uint8_t *)[12] = 5 << 4;
	assert_int_equal(net_ipv4_output(l1, m, rte_cpu_to_be_32(RIG_PEER),
			IPPROTO_TCP), 0);
	net_lcore_poll(l1, 1001 * MS);
	assert_int_equal(rte_ring_count(tx[1]), 1);
	/* the reply arrives on queue 0 */
	{
		uint8_t mac[6];
		struct rte_ether_addr me;

		net_port_mac(p, mac);
		memcpy(me.addr_bytes, mac, 6);
		n = rig_eth(f, &me, RTE_ETHER_TYPE_ARP);
		n += rig_arp(f + n, &me, RTE_ARP_OP_REPLY, RIG_PEER, RIG_IP);
	}
	m = rte_pktmbuf_alloc(net_port_pool(p));
	memcpy(rte_pktmbuf_append(m, n), f, n);
	assert_int_equal(rte_ring_enqueue(rx[0], m), 0);
	net_lcore_poll(l0, 1002 * MS);
	assert_int_equal(rte_ring_count(tx[0]), 1);	/* only the GARP */
	net_lcore_poll(l1, 1002 * MS);
	assert_int_equal(rte_ring_count(tx[1]), 2);	/* request + segment */
	net_lcore_stats(l1, &s1);
	assert_int_equal(s1.drop_arp_timeout, 0);
	assert_int_equal(s1.tx_pkts, 2);
	for (q = 0; q < 2; q++)
		while (rte_ring_dequeue(tx[q], (void **)&m) == 0)
			rte_pktmbuf_free(m);
	net_lcore_free(l0);
	net_lcore_free(l1);
	net_port_close(p);
	for (q = 0; q < 2; q++) {
		rte_ring_free(rx[q]);
		rte_ring_free(tx[q]);
	}
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
		cmocka_unit_test(test_garp_on_first_poll),
		cmocka_unit_test_setup_teardown(test_arp_request_answered,
				setup, teardown),
		cmocka_unit_test_setup_teardown(
				test_arp_request_for_other_ignored,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_known_peer,
				setup, teardown),
		cmocka_unit_test(test_tx_backpressure_keeps_frames),
		cmocka_unit_test(test_tx_stall_drops_head),
		cmocka_unit_test_setup_teardown(
				test_output_keeps_caller_cksum,
				setup, teardown),
		cmocka_unit_test_setup_teardown(
				test_arp_resolution_pending_bound,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_arp_retries_then_timeout,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_arp_entry_expires,
				setup, teardown),
		cmocka_unit_test_setup_teardown(
				test_arp_entry_refreshed_before_expiry,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_offlink_via_gateway,
				setup, teardown),
		cmocka_unit_test(test_no_gateway_no_route),
		cmocka_unit_test_setup_teardown(test_icmp_echo_reply,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv4_drop_reasons,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_eth_drop_reasons,
				setup, teardown),
		cmocka_unit_test(test_vlan_accept_strip_tag),
		cmocka_unit_test_setup_teardown(test_tcp_hook_gets_l4,
				setup, teardown),
		cmocka_unit_test(test_two_lcores_share_arp),
		cmocka_unit_test_setup_teardown(test_rss_symmetric_and_pick,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats_total_and_names,
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
