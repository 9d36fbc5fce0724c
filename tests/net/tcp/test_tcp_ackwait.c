/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* tcp_flush_after_rx(): an app that acknowledges a message still arriving
 * asks for the flush after each segment, and the stack does it once, at
 * its next poll (after the receive burst), so the segments of a burst get
 * one ACK between them, not one each; the stack's own rule (every second
 * full-sized segment at once, RFC 5681 §4.2) is unchanged. Before, the
 * appliance sent a pure ACK per segment of a multi-segment request (issue
 * 17: five frames per f32 answer over AF_XDP, where three carry it). */

#include <string.h>

#include "tcp_harness.h"
#include "tcp_priv.h"

static struct th H;
static const struct th_opts MSS1460 = { .mss = 1460 };
static uint8_t buf[8192];

#define PEER 1000u	/* peer ISN; its data starts at PEER + 1 */

/* A stack with one passive connection whose data callback calls
 * tcp_flush_after_rx (now: tcp_flush) on every segment, as lib/shard
 * does for a request still arriving. */
static uint32_t
open_conn(int now)
{
	uint32_t iss;

	th_config(&H);
	th_start(&H);
	iss = th_handshake(&H, PEER, &MSS1460);
	H.app.flush_data = now ? 2 : 1;
	return iss;
}

/* Three full segments in one burst: one ACK from the stack's rule at the
 * second, one at the poll for the third; three when flushed at once. */
static void
test_one_ack_per_burst(void **st)
{
	uint32_t iss;

	(void)st;
	iss = open_conn(0);
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 65535, NULL, buf, 1460);
	assert_int_equal(th_pending(&H), 0);
	th_inject(&H, F_ACK, PEER + 1461, iss + 1, 65535, NULL, buf, 1460);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 2921);	/* RFC 5681 §4.2 */
	th_inject(&H, F_ACK, PEER + 2921, iss + 1, 65535, NULL, buf, 1460);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 1);				/* the poll */
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 4381);
	assert_int_equal(H.seg.len, 0);
	th_advance(&H, 1);				/* once */
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);

	/* the same burst flushed at once: an ACK per segment */
	iss = open_conn(1);
	for (uint32_t i = 0; i < 3; i++) {
		th_inject(&H, F_ACK, PEER + 1 + i * 1460, iss + 1, 65535,
			  NULL, buf, 1460);
		EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 1 + (i + 1) * 1460);
	}
	th_advance(&H, 1);
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

/* Cancelled (the message is whole and its answer will carry the ACK):
 * nothing at the poll, and the delayed-ACK timer still sends it. */
static void
test_cancel_leaves_delayed_ack(void **st)
{
	uint32_t iss;

	(void)st;
	iss = open_conn(0);
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 65535, NULL, buf, 100);
	tcp_flush_after_rx_cancel(H.app.conn);
	th_advance(&H, 1);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 39000);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 1000);				/* 40 ms */
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 101);
	th_stop(&H);
}

/* A connection reset while queued leaves the queue: the poll never
 * touches its freed memory. */
static void
test_reset_while_queued(void **st)
{
	uint32_t iss;

	(void)st;
	iss = open_conn(0);
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 65535, NULL, buf, 100);
	assert_false(TAILQ_EMPTY(&H.s->ackwait));
	th_inject(&H, F_RST, PEER + 101, 0, 0, NULL, NULL, 0);
	assert_true(TAILQ_EMPTY(&H.s->ackwait));
	th_advance(&H, 1);
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_ack_per_burst),
		cmocka_unit_test(test_cancel_leaves_delayed_ack),
		cmocka_unit_test(test_reset_while_queued),
	};
	int rc;

	th_eal_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	th_eal_fini();
	return rc;
}
