/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The ARP table and the pending hops under hostile input (found by
 * tests/e2e/stress_arp_*.sh): only on-link senders are learnt, expired
 * entries give their slot to new neighbours, a new unresolved hop
 * takes the slot of the most-asked one instead of being refused, and an
 * evicted hop parked again is not asked for again within the interval.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <rte_arp.h>
#include <rte_eal.h>

#include "net_priv.h"
#include "net_rig.h"
#include "net_rig_cm.h"

static const struct rte_ether_addr bcast = {
	.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
};

/* A who-has for our address from sip. */
static void
ask_us(struct rig *r, uint32_t sip)
{
	uint8_t f[128];
	uint16_t n = rig_eth(f, &bcast, RTE_ETHER_TYPE_ARP);

	n += rig_arp(f + n, NULL, RTE_ARP_OP_REQUEST, sip, RIG_IP);
	rig_inject(r, f, n);
	rig_poll(r, 0);
	rig_drain(r);
}

static int
known(struct rig *r, uint32_t ip)
{
	struct rte_ether_addr mac;

	return net_arp_lookup(r->p, rte_cpu_to_be_32(ip), r->now, &mac) == 0;
}

static void
test_offlink_sender_not_learnt(void **state)
{
	struct rig r;

	(void)state;
	assert_int_equal(rig_open(&r, NULL), 0);
	ask_us(&r, RTE_IPV4(10, 77, 0, 5));
	assert_false(known(&r, RTE_IPV4(10, 77, 0, 5)));
	ask_us(&r, RIG_PEER);
	assert_true(known(&r, RIG_PEER));
	rig_close(&r);
}

static void
test_expired_slot_reused(void **state)
{
	struct net_port_conf c;
	struct net_stats s;
	struct rig r;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.ip_be = rte_cpu_to_be_32(RIG_IP);
	c.netmask_be = rte_cpu_to_be_32(RIG_MASK);
	c.arp_entries = 4;
	c.arp_timeout_ms = 1000;
	assert_int_equal(rig_open(&r, &c), 0);
	for (uint32_t i = 0; i < 4; i++)
		ask_us(&r, RTE_IPV4(198, 18, 1, 10 + i));
	ask_us(&r, RTE_IPV4(198, 18, 1, 20));
	rig_stats(&r, &s);
	assert_int_equal(s.drop_arp_table_full, 1);
	assert_false(known(&r, RTE_IPV4(198, 18, 1, 20)));
	/* After their lifetime the old neighbours make room. */
	rig_poll(&r, 1001 * MS);
	ask_us(&r, RTE_IPV4(198, 18, 1, 21));
	assert_true(known(&r, RTE_IPV4(198, 18, 1, 21)));
	rig_stats(&r, &s);
	assert_int_equal(s.drop_arp_table_full, 1);
	/* The address whose slot was taken is gone, not aliased. */
	for (uint32_t i = 0; i < 4; i++)
		assert_false(known(&r, RTE_IPV4(198, 18, 1, 10 + i)));
	rig_close(&r);
}

static void
test_pending_hop_evicted(void **state)
{
	struct net_stats s;
	struct rig r;
	uint8_t f[256];
	uint16_t n;

	(void)state;
	assert_int_equal(rig_open(&r, NULL), 0);
	/* Eight spoofed on-link peers that never answer hold every slot,
	 * each asked twice by now. */
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(send_tcp(&r, RTE_IPV4(198, 18, 1, 100 + i),
					  i), 0);
	rig_poll(&r, 0);
	rig_poll(&r, 1001 * MS);
	rig_drain(&r);
	/* A real peer still gets its request out, and its packet through
	 * once it answers. */
	assert_int_equal(send_tcp(&r, RIG_PEER, 42), 0);
	rig_poll(&r, 0);
	assert_int_equal(rig_tx_count(&r), 1);	/* the ARP request */
	rig_drain(&r);
	n = rig_eth(f, &r.mac, RTE_ETHER_TYPE_ARP);
	n += rig_arp(f + n, &r.mac, RTE_ARP_OP_REPLY, RIG_PEER, RIG_IP);
	rig_inject(&r, f, n);
	rig_poll(&r, MS);
	n = rig_take(&r, f, sizeof(f));
	assert_int_equal(assert_tcp_frame(&r, f, n, RIG_PEER), 42);
	rig_stats(&r, &s);
	assert_int_equal(s.drop_arp_pending_full, 1);	/* the evicted one */
	rig_close(&r);
}

/* A flood from more spoofed on-link sources than there are pending slots
 * evicts hops and parks them again: each address is still asked for at
 * most once per retry interval (RFC 1122 §2.3.2.1), and a new peer's
 * request still leaves at once. */
static void
test_reparked_hop_not_reasked(void **state)
{
	const uint32_t nsrc = 3 * NET_PENDING_HOPS;
	struct net_stats s;
	struct rig r;

	(void)state;
	assert_int_equal(rig_open(&r, NULL), 0);
	for (int round = 0; round < 4; round++)
		for (uint32_t i = 0; i < nsrc; i++)
			assert_int_equal(send_tcp(&r, RTE_IPV4(198, 18, 1,
					100 + i), i), 0);
	rig_poll(&r, 0);
	rig_stats(&r, &s);
	/* one request per address; the hops parked again after eviction
	 * (most of rounds 2-4) are counted, not asked for */
	assert_int_equal(s.arp_req_tx, nsrc);
	assert_true(s.arp_req_limited >= nsrc);
	rig_drain(&r);
	/* a new peer is asked for at once */
	assert_int_equal(send_tcp(&r, RIG_PEER, 42), 0);
	rig_poll(&r, 0);
	assert_int_equal(rig_tx_count(&r), 1);
	rig_drain(&r);
	/* a retry interval later the spoofed ones may be asked again */
	rig_poll(&r, 1001 * MS);
	rig_drain(&r);
	rig_stats(&r, &s);
	for (uint32_t i = 0; i < nsrc; i++)
		assert_int_equal(send_tcp(&r, RTE_IPV4(198, 18, 1, 100 + i),
					  i), 0);
	rig_poll(&r, 0);
	rig_drain(&r);
	{
		struct net_stats t;

		rig_stats(&r, &t);
		assert_true(t.arp_req_tx > s.arp_req_tx);
		assert_true(t.arp_req_tx - s.arp_req_tx <= nsrc);
	}
	rig_close(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offlink_sender_not_learnt),
		cmocka_unit_test(test_expired_slot_reused),
		cmocka_unit_test(test_pending_hop_evicted),
		cmocka_unit_test(test_reparked_hop_not_reasked),
	};
	char prefix[64];
	int rc;

	snprintf(prefix, sizeof(prefix), "fsn_arpl_%d", (int)getpid());
	if (rig_eal_init(prefix) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rig_eal_fini();
	return rc;
}
