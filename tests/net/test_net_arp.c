/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* lib/net ARP and IPv4 output: frames in through a net_ring port, frames
 * out asserted byte for byte; virtual clock for ARP retries and timeouts. */

#include <errno.h>
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
	assert_arp_frame(f, n, &rig_bcast, &r.mac, RTE_ARP_OP_REQUEST, RIG_IP,
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

	n = rig_eth(f, &rig_bcast, RTE_ETHER_TYPE_ARP);
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

	n = rig_eth(f, &rig_bcast, RTE_ETHER_TYPE_ARP);
	n += rig_arp(f + n, NULL, RTE_ARP_OP_REQUEST, RIG_PEER,
			RTE_IPV4(198, 18, 1, 77));
	rig_inject(r, f, n);
	/* malformed: protocol length 6 */
	n = rig_eth(f, &rig_bcast, RTE_ETHER_TYPE_ARP);
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

/* A queue that never drains: the head frame is dropped after a second
 * without progress (poll time), so one refused frame cannot block the
 * lcore forever; however many flushes fail before that, a busy peer
 * loses nothing. */
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
	rig_poll(&r, 1000);		/* 15 in the ring, 5 held: stalled */
	for (i = 0; i < 100000; i++)
		net_lcore_flush(r.lc);
	rig_poll(&r, 999999999);	/* 1 ns short of a second */
	rig_stats(&r, &s);
	assert_int_equal(s.drop_tx_stall, 0);
	assert_int_equal(s.drop_tx_full, 0);
	rig_poll(&r, 1);
	rig_stats(&r, &s);
	assert_int_equal(s.drop_tx_stall, 1);
	/* The clock starts again for the next head. */
	rig_poll(&r, 999999999);
	rig_stats(&r, &s);
	assert_int_equal(s.drop_tx_stall, 1);
	rig_poll(&r, 1);
	rig_stats(&r, &s);
	assert_int_equal(s.drop_tx_stall, 2);
	rig_close(&r);
}

/* Ring and buffer both full: net_ipv4_output says -ENOBUFS (TCP then
 * retries the segment instead of counting it as sent). */
static void
test_tx_full_reports_enobufs(void **state)
{
	struct rig r;
	struct net_stats s;
	uint32_t i;

	(void)state;
	rig_tx_ring_size = 16;		/* holds 15 */
	assert_int_equal(rig_open(&r, NULL), 0);
	rig_tx_ring_size = 1024;
	rig_learn_peer(&r, RIG_PEER);
	for (i = 0; i < 256 + 15; i++)	/* TX buffer is 256 */
		assert_int_equal(send_tcp(&r, RIG_PEER, i), 0);
	assert_int_equal(send_tcp(&r, RIG_PEER, i), -ENOBUFS);
	rig_stats(&r, &s);
	assert_int_equal(s.drop_tx_full, 1);
	assert_int_equal(rig_tx_count(&r), 15);
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
	assert_arp_frame(f, n, &rig_bcast, &r->mac, RTE_ARP_OP_REQUEST, RIG_IP,
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
	assert_arp_frame(f, n, &rig_bcast, &r->mac, RTE_ARP_OP_REQUEST, RIG_IP,
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
	assert_arp_frame(f, n, &rig_bcast, &r->mac, RTE_ARP_OP_REQUEST, RIG_IP,
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
	assert_int_equal(send_tcp(&r, RTE_IPV4(203, 0, 113, 5), 1),
			-EHOSTUNREACH);
	rig_poll(&r, 0);
	assert_int_equal(rig_tx_count(&r), 0);
	rig_stats(&r, &s);
	assert_int_equal(s.drop_no_route, 1);
	rig_close(&r);
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

int
main(void)
{
	char prefix[64];
	int rc;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_garp_on_first_poll),
		cmocka_unit_test_setup_teardown(test_arp_request_answered, setup, teardown),
		cmocka_unit_test_setup_teardown( test_arp_request_for_other_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_known_peer, setup, teardown),
		cmocka_unit_test(test_tx_backpressure_keeps_frames),
		cmocka_unit_test(test_tx_stall_drops_head),
		cmocka_unit_test(test_tx_full_reports_enobufs),
		cmocka_unit_test_setup_teardown( test_output_keeps_caller_cksum, setup, teardown),
		cmocka_unit_test_setup_teardown( test_arp_resolution_pending_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arp_retries_then_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arp_entry_expires, setup, teardown),
		cmocka_unit_test_setup_teardown( test_arp_entry_refreshed_before_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offlink_via_gateway, setup, teardown),
		cmocka_unit_test(test_no_gateway_no_route),
		cmocka_unit_test(test_two_lcores_share_arp),
	};

	snprintf(prefix, sizeof(prefix), "fsn_arp_%d", (int)getpid());
	if (rig_eal_init(prefix) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rig_eal_fini();
	return rc;
}
