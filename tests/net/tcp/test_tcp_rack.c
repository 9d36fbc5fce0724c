/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Scripted tests of lost retransmissions (RFC 8985 §6.2 applied to the
 * runs of retransmitted data, lib/net/tcp/tcp_sack.c): a retransmission
 * that data sent after it overtook is sent again once the reordering
 * window has passed, long before the RTO, and the congestion window is
 * lowered a second time (RFC 5681 §4.3), once per recovery. */

#include "tcp_harness.h"

static struct th H;
static uint8_t buf[256 * 1460];

#define PEER 1000u
#define MSS 1460u
#define RTT 40000u		/* µs: min_rtt 40 ms, reo_wnd 10 ms, RTO 200 ms */

static const struct th_opts SACKOPT = { .mss = 1460, .sack_ok = 1 };

/* Our segment k (0-based) of the transfer. */
static uint32_t iss;
#define SEG(k) (iss + 1 + (uint32_t)(k) * MSS)
#define SEQ_GT_TEST(x, y) ((int32_t)((x) - (y)) > 0)

static void
ack_sack(uint32_t a, unsigned int n, const uint32_t (*b)[2])
{
	th_ack_sack(&H, PEER + 1, a, n, b);
}

static unsigned int
take_all(uint32_t *first_seq)
{
	return th_take_all(&H, first_seq);
}

static struct tcp_stats
stats(void)
{
	return th_stats(&H);
}

/* Passive handshake taking RTT: srtt and min_rtt from the SYN-ACK. */
static void
start(enum tcp_cc_algo cc)
{
	iss = th_open(&H, cc, PEER, &SACKOPT, RTT);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 9));
}

/* All the first flight of ten sent (data beyond it waits); an RTT later
 * segments 1-3 are SACKed: segment 0 is lost by count (DupThresh) and
 * retransmitted, recovery starts. */
static void
ten_sent_first_lost(uint32_t bytes)
{
	uint32_t b[1][2] = { { SEG(1), SEG(4) } };

	th_send_and_take(&H, buf, bytes, iss, 10, MSS);
	th_advance(&H, RTT);
	ack_sack(SEG(0), 1, b);
	TH_NEXT_AT(&H, SEG(0));
}

/* After ten_sent_first_lost (all the data sent): segments 6-9 and 4
 * SACKed too, 5 is lost by count, and its retransmission goes after
 * segment 0's. */
static void
then_fifth_lost(void)
{
	uint32_t b[2][2] = { { SEG(6), SEG(10) }, { SEG(1), SEG(5) } };

	ack_sack(SEG(0), 2, b);
	TH_NEXT_AT(&H, SEG(5));
}

/* Segment 0 lost, its retransmission lost too. New data sent after the
 * retransmission is SACKed: 10 ms (min_rtt/4) later segment 0 goes a
 * third time, with no RTO, and ssthresh is halved again. A second lost
 * retransmission in the same recovery does not lower it a third time. */
static void
test_lost_rexmit_overtaken_by_new_data(void **st)
{
	uint32_t b[2][2], seq = 0;
	struct tcp_conn_info ci;
	struct th_seg *s;
	uint32_t ss1;

	start(TCP_CC_NEWRENO);
	ten_sent_first_lost(40 * MSS);
	assert_int_equal(th_pending(&H), 0);
	ci = th_info(&H);
	assert_int_equal(ci.ssthresh, 5 * MSS);
	ss1 = ci.ssthresh;
	/* 4-7 SACKed: pipe falls to cwnd, new data 10 and 11 go */
	b[0][0] = SEG(1), b[0][1] = SEG(8);
	ack_sack(SEG(0), 1, b);
	TH_NEXT_AT(&H, SEG(10));
	assert_int_equal(take_all(NULL), 1);
	/* an RTT later segment 10, sent after the retransmission, is
	 * SACKed: not lost yet, the reordering window runs */
	th_advance(&H, RTT);
	b[0][0] = SEG(10), b[0][1] = SEG(11);
	b[1][0] = SEG(1), b[1][1] = SEG(10);
	ack_sack(SEG(0), 2, b);
	assert_int_equal(take_all(&seq), 3);	/* new data 12-14 */
	assert_int_equal(seq, SEG(12));
	th_advance(&H, 9000);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 2000);			/* reo_wnd passed: lost */
	s = TH_NEXT_AT(&H, SEG(0));
	assert_int_equal(s->len, MSS);
	assert_memory_equal(s->data, buf, MSS);
	assert_int_equal(th_pending(&H), 0);	/* pipe is over cwnd */
	assert_int_equal(stats().lost_rexmits, 1);
	assert_int_equal(stats().rto_expired, 0);
	ci = th_info(&H);
	assert_true(ci.in_recovery);
	assert_int_equal(ci.ssthresh, ss1 / 2);
	assert_int_equal(ci.cwnd, ci.ssthresh);
	/* that copy is lost as well: 10-14 SACKed let 15 out after it,
	 * and 15 is SACKed an RTT later */
	th_advance(&H, RTT);
	b[0][0] = SEG(1), b[0][1] = SEG(15);
	ack_sack(SEG(0), 1, b);
	TH_NEXT_AT(&H, SEG(15));
	take_all(NULL);
	th_advance(&H, RTT);
	b[0][1] = SEG(16);
	ack_sack(SEG(0), 1, b);
	take_all(NULL);
	th_advance(&H, 11000);
	TH_NEXT_AT(&H, SEG(0));
	assert_int_equal(stats().lost_rexmits, 2);
	assert_int_equal(stats().rto_expired, 0);
	assert_int_equal(th_info(&H).ssthresh, ss1 / 2); /* once per recovery */
	take_all(NULL);
	th_stop(&H);
}

/* No new data to overtake it: segment 5's retransmission, sent after
 * segment 0's, is delivered an RTT later while segment 0's is not, so
 * segment 0's is lost (RFC 8985: sent earlier than a delivered one). */
static void
test_lost_rexmit_overtaken_by_later_rexmit(void **st)
{
	uint32_t b[1][2];
	struct th_seg *s;

	start(TCP_CC_CUBIC);
	ten_sent_first_lost(10 * MSS);
	assert_int_equal(th_pending(&H), 0);
	then_fifth_lost();
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, RTT);
	b[0][0] = SEG(1), b[0][1] = SEG(10);	/* 5's copy arrived */
	ack_sack(SEG(0), 1, b);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 11000);
	s = TH_NEXT_AT(&H, SEG(0));
	assert_int_equal(s->len, MSS);
	assert_int_equal(stats().lost_rexmits, 1);
	assert_int_equal(stats().rto_expired, 0);
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

/* A later retransmission SACKed less than min_rtt after it was sent may
 * be its original arriving (RFC 8985 §6.2 step 2): no evidence, the
 * earlier retransmission is not called lost on it. */
static void
test_fresh_rexmit_sack_is_no_evidence(void **st)
{
	uint32_t b[1][2];

	start(TCP_CC_CUBIC);
	ten_sent_first_lost(10 * MSS);
	then_fifth_lost();
	th_advance(&H, 5000);			/* 5's original, late */
	b[0][0] = SEG(1), b[0][1] = SEG(10);
	ack_sack(SEG(0), 1, b);
	th_advance(&H, 20000);
	assert_int_equal(th_pending(&H), 0);
	assert_int_equal(stats().lost_rexmits, 0);
	th_stop(&H);
}

/* RFC 8985 §6.2 step 4: a reordering window widened by a spurious
 * recovery (undone on a D-SACK) goes back to min_rtt/4 after 16 more
 * recoveries. Before: a hole SACK-bypassed is lost after 20 ms; after:
 * after 10 ms again. */
static void
test_reordering_window_decays(void **st)
{
	uint32_t b[1][2], a, last = 0;
	unsigned int i;

	start(TCP_CC_NEWRENO);
	ten_sent_first_lost(sizeof(buf));	/* spurious recovery */
	take_all(NULL);
	ack_sack(SEG(5), 0, b);			/* the original came */
	b[0][0] = SEG(0), b[0][1] = SEG(1);
	ack_sack(SEG(5), 1, b);			/* D-SACK: undone */
	assert_int_equal(stats().undos, 1);
	a = SEG(10);
	ack_sack(a, 0, b);
	for (i = 0; i <= 16; i++) {
		uint64_t wait = i < 16 ? 21000 : 11000;
		unsigned int before = stats().fast_retransmits;

		while (th_pending(&H) > 0)
			last = th_next(&H)->seq;
		assert_true(SEQ_GT_TEST(last, a));
		/* the newest segment SACKed, the oldest missing */
		b[0][0] = last, b[0][1] = last + MSS;
		ack_sack(a, 1, b);
		take_all(NULL);		/* limited transmit (RFC 3042) */
		th_advance(&H, wait - 2000);
		assert_int_equal(th_pending(&H), 0);
		th_advance(&H, 2000);
		TH_NEXT_AT(&H, a);			/* lost by time */
		assert_int_equal(stats().fast_retransmits, before + 1);
		take_all(NULL);
		a += th_info(&H).unacked;
		ack_sack(a, 0, b);			/* recovery done */
		assert_false(th_info(&H).in_recovery);
	}
	take_all(NULL);
	th_stop(&H);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lost_rexmit_overtaken_by_new_data),
		cmocka_unit_test(test_lost_rexmit_overtaken_by_later_rexmit),
		cmocka_unit_test(test_fresh_rexmit_sack_is_no_evidence),
		cmocka_unit_test(test_reordering_window_decays),
	};
	int rc;

	th_eal_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	th_eal_fini();
	return rc;
}
