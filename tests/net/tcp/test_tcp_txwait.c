/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* A port that cannot take a segment now (output callback -ENOBUFS: TX
 * queue full, tcp.h tcp_output_fn) is not a loss: the connection sends
 * again at the next tcp_poll, in the order the connections were refused,
 * without a retransmission timeout. Before, a refused segment waited for
 * the RTO (1 s before an RTT sample, 200 ms after), and 2 000 connections
 * on one memif port saw second-long stalls and timeouts (issue 15 §3). */

#include <string.h>

#include "tcp_harness.h"

static struct th H;
static const struct th_opts MSS1460 = { .mss = 1460 };

#define PEER 1000u	/* peer ISN; its data starts at PEER + 1 */

static struct tcp_stats
stats(void)
{
	struct tcp_stats s;

	tcp_stack_stats(H.s, &s);
	return s;
}

/* New data the port refuses goes out at the next poll, once, as new data
 * (no retransmission, no RTO), however long the port stayed full. */
static void
test_full_port_sends_at_next_poll(void **st)
{
	uint32_t iss;

	(void)st;
	th_config(&H);
	th_start(&H);
	iss = th_handshake(&H, PEER, &MSS1460);
	H.full_out = 1;
	assert_int_equal(tcp_send(H.app.conn, "abc", 3), 3);
	tcp_flush(H.app.conn);
	assert_int_equal(H.nr_full, 1);
	assert_int_equal(th_pending(&H), 0);
	/* Full for 3 s, past any RTO: one attempt per poll, nothing lost. */
	for (int i = 0; i < 30; i++)
		th_advance(&H, 100000);
	assert_int_equal(H.nr_full, 31);
	assert_int_equal(stats().rto_expired, 0);
	H.full_out = 0;
	th_advance(&H, 1);
	EXPECT_SEG(&H, F_ACK | F_PSH, iss + 1, PEER + 1);
	assert_int_equal(H.seg.len, 3);
	assert_memory_equal(H.seg.data, "abc", 3);
	assert_int_equal(th_pending(&H), 0);
	assert_int_equal(stats().retransmits, 0);
	assert_int_equal(stats().tx_deferred, 31);
	th_inject(&H, F_ACK, PEER + 1, iss + 4, 65535, NULL, NULL, 0);
	assert_int_equal(H.app.sent, 3);
	th_advance(&H, 1);
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

/* A refused pure ACK (here the delayed ACK) is still owed: the next poll
 * sends it. */
static void
test_full_port_owes_the_ack(void **st)
{
	uint32_t iss;

	(void)st;
	th_config(&H);
	th_start(&H);
	iss = th_handshake(&H, PEER, &MSS1460);
	H.full_out = 1;
	th_inject(&H, F_ACK | F_PSH, PEER + 1, iss + 1, 65535, NULL,
		  "hello", 5);
	th_advance(&H, 40000);		/* the delayed ACK is refused */
	assert_int_equal(H.nr_full, 1);
	H.full_out = 0;
	th_advance(&H, 1);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 6);
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

/* A refused SYN-ACK goes at the next poll, not after the 1 s SYN-ACK
 * timer: a connect storm that fills the port does not cost its clients
 * a second each. */
static void
test_full_port_synack_at_next_poll(void **st)
{
	struct th_seg *s;

	(void)st;
	th_config(&H);
	th_start(&H);
	assert_int_equal(tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app), 0);
	H.full_out = 1;
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	assert_int_equal(H.nr_full, 1);
	assert_int_equal(th_pending(&H), 0);
	H.full_out = 0;
	th_advance(&H, 1);
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN | F_ACK);
	assert_int_equal(s->ack, PEER + 1);
	assert_int_equal(s->mss, 1460);
	assert_int_equal(stats().retransmits, 0);
	th_inject(&H, F_ACK, PEER + 1, s->seq + 1, 65535, NULL, NULL, 0);
	assert_int_equal(tcp_conn_state(H.app.conn), TCP_ESTABLISHED);
	th_stop(&H);
}

/* Connections wait their turn: B, which sends once the port has room
 * again, goes after A, refused before it; and a poll that finds the port
 * still full stops at A (one attempt, B keeps its place). */
static void
test_full_port_first_refused_first_sent(void **st)
{
	struct tcp_conn *a, *b;
	uint32_t iss_a, iss_b;

	(void)st;
	th_config(&H);
	th_start(&H);
	iss_a = th_handshake(&H, PEER, &MSS1460);
	a = H.app.conn;
	H.rport = TH_RPORT + 1;
	iss_b = th_handshake(&H, PEER, &MSS1460);
	b = H.app.conn;
	H.full_out = 1;
	assert_int_equal(tcp_send(a, "A", 1), 1);
	tcp_flush(a);
	assert_int_equal(tcp_send(b, "B", 1), 1);
	tcp_flush(b);
	assert_int_equal(H.nr_full, 1);	/* B queued behind A, not tried */
	th_advance(&H, 1);
	assert_int_equal(H.nr_full, 2);	/* A again; B not tried */
	H.full_out = 0;
	assert_int_equal(tcp_send(b, "b", 1), 1);
	tcp_flush(b);
	assert_int_equal(th_pending(&H), 0);	/* still behind A */
	th_advance(&H, 1);
	assert_int_equal(th_pending(&H), 2);
	EXPECT_SEG(&H, F_ACK | F_PSH, iss_a + 1, PEER + 1);
	assert_int_equal(H.seg.dport, TH_RPORT);
	assert_memory_equal(H.seg.data, "A", 1);
	EXPECT_SEG(&H, F_ACK | F_PSH, iss_b + 1, PEER + 1);
	assert_int_equal(H.seg.dport, TH_RPORT + 1);
	assert_int_equal(H.seg.len, 2);
	assert_memory_equal(H.seg.data, "Bb", 2);
	th_stop(&H);
}

/* A connection that ends while it waits leaves the queue: the next poll
 * sends nothing for it (and reads none of its freed memory: ASan). */
static void
test_full_port_conn_gone_while_waiting(void **st)
{
	(void)st;
	th_config(&H);
	th_start(&H);
	th_handshake(&H, PEER, &MSS1460);
	H.full_out = 1;
	assert_int_equal(tcp_send(H.app.conn, "abc", 3), 3);
	tcp_flush(H.app.conn);
	H.full_out = 0;
	tcp_abort(H.app.conn);
	th_drain(&H);			/* its RST */
	th_advance(&H, 1);
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_port_sends_at_next_poll),
		cmocka_unit_test(test_full_port_owes_the_ack),
		cmocka_unit_test(test_full_port_synack_at_next_poll),
		cmocka_unit_test(test_full_port_first_refused_first_sent),
		cmocka_unit_test(test_full_port_conn_gone_while_waiting),
	};
	int rc;

	th_eal_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	th_eal_fini();
	return rc;
}
