/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* The net <-> TCP seam: two stacks on two net_ring ports wired back to
 * back (A's TX ring is B's RX ring and the reverse), virtual clock.  ARP
 * resolves on the first SYN, TCP rides on net_ipv4_output, bytes arrive
 * intact in both directions. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "net_rig.h"
#include "net_rig_cm.h"
#include "net_tcp.h"

#define IP_A RTE_IPV4(198, 18, 1, 2)
#define IP_B RTE_IPV4(198, 18, 1, 3)
#define XFER (256 * 1024)

struct side {
	struct net_port *p;
	struct net_lcore *lc;
	struct tcp_stack *tcp;
	struct tcp_conn *conn;
	uint8_t *rx;
	uint32_t rx_len;
	bool eof;
	bool connected;
	int closed;
};

static struct side A, B;
static uint8_t pattern[XFER];

static int
open_side(struct side *s, const char *name, struct rte_ring *rx,
		struct rte_ring *tx, uint32_t ip)
{
	struct net_port_conf c;
	int id = rte_eth_from_rings(name, &rx, 1, &tx, 1, 0);

	if (id < 0)
		return id;
	memset(&c, 0, sizeof(c));
	c.port_id = id;
	c.ip_be = rte_cpu_to_be_32(ip);
	c.netmask_be = rte_cpu_to_be_32(RIG_MASK);
	c.nb_mbufs = 8192;
	c.nb_rxd = 1024;
	c.nb_txd = 1024;
	if (net_port_init(&c, &s->p) != 0)
		return -1;
	s->lc = net_lcore_create(s->p, 0, -1);
	if (s->lc == NULL)
		return -1;
	s->tcp = net_tcp_attach(s->lc, NULL);
	if (s->tcp == NULL)
		return -1;
	s->rx = calloc(1, XFER);
	return s->rx == NULL ? -1 : 0;
}

static void
on_data(void *arg, struct tcp_conn *c, struct rte_mbuf *m)
{
	struct side *s = arg;
	uint32_t n = RTE_MIN(m->pkt_len, XFER - s->rx_len);
	uint8_t *dst = s->rx + s->rx_len;
	const void *d;

	(void)c;
	d = rte_pktmbuf_read(m, 0, n, dst);
	if (d != dst)
		memcpy(dst, d, n);
	s->rx_len += n;
	rte_pktmbuf_free(m);
}

static int
on_accepted(void *larg, struct tcp_conn *c, void **carg)
{
	struct side *s = larg;

	s->conn = c;
	*carg = s;
	return 0;
}

static void
on_connected(void *arg, struct tcp_conn *c)
{
	struct side *s = arg;

	(void)c;
	s->connected = true;
}

static void
on_eof(void *arg, struct tcp_conn *c)
{
	struct side *s = arg;

	(void)c;
	s->eof = true;
}

static void
on_closed(void *arg, struct tcp_conn *c, int reason)
{
	struct side *s = arg;

	(void)c;
	(void)reason;
	s->closed++;
	s->conn = NULL;
}

static const struct tcp_ops ops = {
	.accepted = on_accepted,
	.connected = on_connected,
	.data = on_data,
	.eof = on_eof,
	.closed = on_closed,
};

static uint64_t now = 1000 * MS;

static void
run(unsigned int iters)
{
	while (iters--) {
		now += 100000;	/* 100 us per round */
		net_lcore_poll(A.lc, now);
		net_lcore_poll(B.lc, now);
	}
}

/* B connects to A's listener (port 7) afresh: both ends established. */
static void
connect_b(void)
{
	A.conn = B.conn = NULL;
	B.connected = false;
	assert_int_equal(tcp_connect(B.tcp, rte_cpu_to_be_32(IP_A), 7, &ops,
			&B, &B.conn), 0);
	run(50);
	assert_true(B.connected);
	assert_non_null(A.conn);
}

/* Send from one side, all of it, as send space allows. */
static void
push(struct tcp_conn *c, uint32_t *off, uint32_t len)
{
	while (*off < len) {
		int rc = tcp_send(c, pattern + *off, len - *off);

		if (rc <= 0)
			break;
		*off += rc;
	}
	tcp_flush(c);
}

static void
test_handshake_and_both_directions(void **state)
{
	struct net_stats sa, sb;
	uint32_t off_b = 0, off_a = 0;
	unsigned int i;

	(void)state;
	assert_int_equal(tcp_listen(A.tcp, 7, 0, &ops, &A), 0);
	assert_int_equal(tcp_connect(B.tcp, rte_cpu_to_be_32(IP_A), 7, &ops,
			&B, &B.conn), 0);
	run(50);
	assert_true(B.connected);
	assert_non_null(A.conn);
	/* B -> A and A -> B, 256 KiB each, interleaved. */
	for (i = 0; i < 20000 && (A.rx_len < XFER || B.rx_len < XFER); i++) {
		if (B.conn != NULL)
			push(B.conn, &off_b, XFER);
		if (A.conn != NULL)
			push(A.conn, &off_a, XFER);
		run(1);
	}
	assert_int_equal(A.rx_len, XFER);
	assert_int_equal(B.rx_len, XFER);
	assert_memory_equal(A.rx, pattern, XFER);
	assert_memory_equal(B.rx, pattern, XFER);
	tcp_close(B.conn);
	run(100);
	assert_true(A.eof);
	tcp_close(A.conn);
	run(100);
	net_lcore_stats(A.lc, &sa);
	net_lcore_stats(B.lc, &sb);
	/* One ARP exchange each way at most, no IP-level drops. */
	assert_true(sb.arp_req_tx >= 1);
	assert_int_equal(sa.drop_ip_cksum + sb.drop_ip_cksum, 0);
	assert_int_equal(sa.drop_arp_pending_full + sb.drop_arp_pending_full,
			0);
	assert_true(sa.l4_rx > 100 && sb.l4_rx > 100);
	/* Telemetry's sum covers both lcores' stacks. */
	{
		struct tcp_stats ta, tb, tot;

		tcp_stack_stats(A.tcp, &ta);
		tcp_stack_stats(B.tcp, &tb);
		net_tcp_stats_total(&tot);
		assert_int_equal(tot.seg_in, ta.seg_in + tb.seg_in);
		assert_int_equal(tot.bytes_in, 2 * XFER);
		assert_int_equal(tot.active_opens, 1);
		assert_int_equal(tot.passive_opens, 1);
	}
}

static int released;

static void
on_release(void *arg)
{
	(void)arg;
	released++;
}

/* Zero-copy TX: payload in an rte_malloc buffer goes out by reference
 * (extbuf mbufs behind TCP's header mbuf); net prepends IPv4/Ethernet and
 * checksums the chain in software (net_ring has no offloads). */
static void
test_zero_copy_send_iov(void **state)
{
	uint8_t *buf = rte_malloc("zc", XFER, 64);
	struct iovec iov[2];
	unsigned int i;

	(void)state;
	assert_non_null(buf);
	memcpy(buf, pattern, XFER);
	A.rx_len = B.rx_len = 0;
	A.eof = B.eof = false;
	connect_b();
	iov[0].iov_base = buf;
	iov[0].iov_len = 1000;
	iov[1].iov_base = buf + 1000;
	iov[1].iov_len = 200 * 1024 - 1000;
	assert_int_equal(tcp_send_iov(B.conn, iov, 2, on_release, NULL), 0);
	tcp_flush(B.conn);
	for (i = 0; i < 20000 && A.rx_len < 200 * 1024; i++)
		run(1);
	assert_int_equal(A.rx_len, 200 * 1024);
	assert_memory_equal(A.rx, pattern, 200 * 1024);
	run(100);	/* last ACKs */
	assert_int_equal(released, 1);
	tcp_close(B.conn);
	tcp_close(A.conn);
	run(100);
	rte_free(buf);
}

/* Issue 3: TCP counters (retransmits, drops by reason, connections by
 * state) exposed to rte_telemetry: /ffn/net/tcp is the sum over lcores,
 * read here from the socket while a connection is open and after. */
static void
test_tcp_counters_over_telemetry(void **state)
{
	char js[16384], key[64];
	struct tcp_stats tot;
	unsigned int i;

	(void)state;
	connect_b();
	rig_telemetry_get("/ffn/net/tcp", js, sizeof(js));
	net_tcp_stats_total(&tot);
	assert_non_null(strstr(js, "\"/ffn/net/tcp\""));
	/* both ends of the one open connection, one per lcore */
	assert_int_equal(rig_json_u64(js, "conns_ESTABLISHED"), 2);
	assert_int_equal(tot.conns[TCP_ESTABLISHED], 2);
	assert_int_equal(rig_json_u64(js, "conns_LISTEN"), 1);
	assert_int_equal(rig_json_u64(js, "active_opens"), tot.active_opens);
	assert_int_equal(rig_json_u64(js, "seg_in"), tot.seg_in);
	assert_int_equal(rig_json_u64(js, "retransmits"), tot.retransmits);
	for (i = 0; i < TCP_DROP_MAX; i++) {
		snprintf(key, sizeof(key), "drop_%s", tcp_drop_reason_name(i));
		assert_int_equal(rig_json_u64(js, key), tot.drops[i]);
	}
	for (i = 0; i < TCP_STATE_MAX; i++) {
		snprintf(key, sizeof(key), "conns_%s", tcp_state_name(i));
		assert_int_equal(rig_json_u64(js, key), tot.conns[i]);
	}
	/* B closes first: B goes to TIME_WAIT (one more than the earlier
	 * tests left there), A's connection is gone */
	tcp_close(B.conn);
	run(100);
	tcp_close(A.conn);
	run(100);
	rig_telemetry_get("/ffn/net/tcp", js, sizeof(js));
	assert_int_equal(rig_json_u64(js, "conns_ESTABLISHED"), 0);
	assert_int_equal(rig_json_u64(js, "conns_TIME_WAIT"),
			tot.conns[TCP_TIME_WAIT] + 1);
}

/* An application that works between polls (a compute pass) moves the
 * lcore's clock before it sends (net_lcore_clock): the probe timer of
 * what it sends starts then. Without it, the timer started at the poll
 * before the work, 5 ms earlier, past a PTO of 2*SRTT + 2 ms: the probe
 * left at the very next poll, before the peer could answer. A sends:
 * B's stack took the production clock for its connect before its first
 * poll (net_tcp_clock_us) and runs ahead of this virtual clock. */
static void
test_send_after_work_times_from_clock(void **state)
{
	struct tcp_stats before, after;
	uint32_t off = 0;
	unsigned int i;

	(void)state;
	B.rx_len = 0;
	connect_b();
	tcp_stack_stats(A.tcp, &before);
	now += 5 * MS;			/* A's application works 5 ms */
	net_lcore_clock(A.lc, now);
	push(A.conn, &off, 8 * 1024);	/* several segments */
	assert_int_equal(off, 8 * 1024);
	net_lcore_poll(A.lc, now + 10000);	/* 10 us on, no ACK yet */
	tcp_stack_stats(A.tcp, &after);
	assert_int_equal(after.tlp_probes, before.tlp_probes);
	assert_int_equal(after.retransmits, before.retransmits);
	for (i = 0; i < 100 && B.rx_len < 8 * 1024; i++)
		run(1);
	assert_int_equal(B.rx_len, 8 * 1024);
	assert_memory_equal(B.rx, pattern, 8 * 1024);
	tcp_close(B.conn);
	run(100);
	tcp_close(A.conn);
	run(100);
}

int
main(void)
{
	char prefix[64];
	struct rte_ring *ab, *ba;
	unsigned int i;
	int rc;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake_and_both_directions),
		cmocka_unit_test(test_zero_copy_send_iov),
		cmocka_unit_test(test_tcp_counters_over_telemetry),
		cmocka_unit_test(test_send_after_work_times_from_clock),
	};

	for (i = 0; i < XFER; i++)
		pattern[i] = (uint8_t)(i * 131 + (i >> 9));
	snprintf(prefix, sizeof(prefix), "fsn_seam_%d", (int)getpid());
	if (rig_eal_init(prefix) < 0)
		return 1;
	ab = rte_ring_create("seam_ab", 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	ba = rte_ring_create("seam_ba", 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (ab == NULL || ba == NULL ||
			open_side(&A, "seam_a", ba, ab, IP_A) != 0 ||
			open_side(&B, "seam_b", ab, ba, IP_B) != 0) {
		fprintf(stderr, "seam rig setup failed\n");
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	net_tcp_detach(A.lc, A.tcp);
	net_tcp_detach(B.lc, B.tcp);
	net_lcore_free(A.lc);
	net_lcore_free(B.lc);
	net_port_close(A.p);
	net_port_close(B.p);
	rig_eal_fini();
	return rc;
}
