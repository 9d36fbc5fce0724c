/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Scripted tests of what the clock drives: the RTO estimator of RFC 6298
 * (SRTT/RTTVAR from real samples, Karn's rule, the back-off kept until a
 * new sample, the rto_max cap), CUBIC's window as a function of time
 * since the reduction (RFC 9438 §4.2), and the MSS following the MTU. */

#include <stdlib.h>
#include <string.h>

#include "tcp_harness.h"

static struct th H;
static uint8_t buf[512 * 1024];

#define PEER 1000u
#define MSS 1460u

static const struct th_opts MSS1460 = { .mss = 1460 };
static const struct th_opts SACKOPT = { .mss = 1460, .sack_ok = 1 };

static struct tcp_conn_info
info(void)
{
	return th_info(&H);
}

static void
ack(uint32_t a, const struct th_opts *o)
{
	th_inject(&H, F_ACK, PEER + 1, a, 65535, o, NULL, 0);
}

/* Send n bytes now; the one segment must leave at once. */
static void
send_one(uint32_t seq, uint32_t n)
{
	assert_int_equal(tcp_send(H.app.conn, buf, n), (int)n);
	tcp_flush(H.app.conn);
	EXPECT_SEG(&H, F_ACK | F_PSH, seq, PEER + 1);
	assert_int_equal(H.seg.len, n);
	assert_int_equal(th_pending(&H), 0);
}

/* RFC 6298 §2.2/2.3 with alpha 1/8, beta 1/4, K 4 (integer µs). */
static void
test_rto_estimator_rfc6298(void **st)
{
	uint32_t iss, seq;

	th_config(&H);
	H.cfg.no_tlp = true;	/* the RTO alone, no probe before it */
	th_start(&H);
	/* first sample 100 ms (the handshake): SRTT R, RTTVAR R/2 */
	iss = th_handshake_rtt(&H, PEER, &MSS1460, 100000);
	assert_int_equal(info().srtt_us, 100000);
	assert_int_equal(info().rto_us, 100000 + 4 * 50000);
	/* second sample 60 ms: RTTVAR 3/4*50+1/4*40, SRTT 7/8*100+1/8*60 */
	seq = iss + 1;
	send_one(seq, 100);
	th_advance(&H, 60000);
	ack(seq + 100, NULL);
	seq += 100;
	assert_int_equal(info().srtt_us, 95000);
	assert_int_equal(info().rto_us, 95000 + 4 * 47500);
	/* the timer fires at that RTO, not before */
	send_one(seq, 100);
	th_advance(&H, 284000);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 2000);
	EXPECT_SEG(&H, F_ACK | F_PSH, seq, PEER + 1);
	assert_int_equal(info().rto_us, 2 * 285000);	/* §5.5 */
	/* Karn (§3): the ACK of a retransmitted segment is no sample, and
	 * the backed-off RTO stays until a new one (§5.7 note) */
	th_advance(&H, 300000);
	ack(seq + 100, NULL);
	seq += 100;
	assert_int_equal(info().srtt_us, 95000);
	assert_int_equal(info().rto_us, 570000);
	/* and arms the timer: 570 ms for the next segment */
	send_one(seq, 100);
	th_advance(&H, 569000);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 2000);
	EXPECT_SEG(&H, F_ACK | F_PSH, seq, PEER + 1);
	th_advance(&H, 10000);
	ack(seq + 100, NULL);
	seq += 100;
	assert_int_equal(info().srtt_us, 95000);
	/* fresh data, a fresh sample of 50 ms: the estimate again */
	send_one(seq, 100);
	th_advance(&H, 50000);
	ack(seq + 100, NULL);
	assert_int_equal(info().srtt_us, (7 * 95000 + 50000) / 8);
	assert_int_equal(info().rto_us, (7 * 95000 + 50000) / 8 +
			 4 * ((3 * 47500 + 45000) / 4));
	th_drain(&H);
	th_stop(&H);
}

/* Back-off doubles up to rto_max and stays there (RFC 6298 §5.5, 2.5). */
static void
test_rto_backoff_capped_at_max(void **st)
{
	static const uint64_t gap[] = { 300000, 500000, 500000, 500000 };
	uint32_t iss;

	th_config(&H);
	H.cfg.no_tlp = true;
	H.cfg.rto_max_us = 500000;
	th_start(&H);
	iss = th_handshake_rtt(&H, PEER, &MSS1460, 100000);
	assert_int_equal(info().rto_us, 300000);
	send_one(iss + 1, 10);
	for (unsigned int i = 0; i < RTE_DIM(gap); i++) {
		th_advance(&H, gap[i] - 2000);
		assert_int_equal(th_pending(&H), 0);
		th_advance(&H, 3000);
		EXPECT_SEG(&H, F_ACK | F_PSH, iss + 1, PEER + 1);
	}
	assert_int_equal(info().rto_us, 500000);
	ack(iss + 11, NULL);
	th_stop(&H);
}

/* One round trip of r µs: the clock moves, then every segment of the
 * last flight is ACKed one by one; returns the segments sent meanwhile. */
static unsigned int
round_trip(uint32_t *a, unsigned int flight, uint64_t r)
{
	unsigned int sent = 0;

	th_advance(&H, r);
	for (unsigned int i = 0; i < flight; i++) {
		*a += MSS;
		ack(*a, NULL);
		sent += th_pending(&H);
		th_drain(&H);
	}
	return sent;
}

/* RFC 9438 §4.2: after a reduction from W_max = 10 to 7 segments, CUBIC
 * follows W(t) = C (t - K)^3 + W_max, K = cbrt((W_max - 7) / C) ~ 1.96 s:
 * concave up to W_max, a plateau around K, convex beyond. With a 500 ms
 * RTT the Reno-friendly estimate (§4.3: ~0.53 segment per RTT to 10, then
 * 1) stays below it: without the cubic function cwnd would be ~8.1 at
 * t = 1 s and ~14 at 4.5 s. */
static void
test_cubic_window_follows_time(void **st)
{
	const uint64_t R = 500000;
	struct th_opts o = { .nr_sack = 1 };
	double w[12];
	unsigned int flight;
	uint32_t iss, a;

	th_config(&H);
	H.cfg.no_tlp = true;
	th_start(&H);
	iss = th_handshake_rtt(&H, PEER, &SACKOPT, R);
	assert_int_equal(tcp_send(H.app.conn, buf, 400 * MSS), 400 * MSS);
	tcp_flush(H.app.conn);
	assert_int_equal(th_pending(&H), 10);		/* IW10 */
	th_drain(&H);
	/* segment 1 lost, 2-4 SACKed: recovery at cwnd 10 */
	th_advance(&H, R);
	o.sack[0][0] = iss + 1 + MSS;
	o.sack[0][1] = iss + 1 + 4 * MSS;
	ack(iss + 1, &o);
	th_drain(&H);
	a = iss + 1 + 10 * MSS;
	ack(a, NULL);		/* recovery over: cwnd = 0.7 * 10 */
	assert_false(info().in_recovery);
	assert_int_equal(info().cwnd, 7 * MSS);
	flight = th_pending(&H);
	th_drain(&H);
	for (unsigned int j = 0; j < RTE_DIM(w); j++) {
		flight = round_trip(&a, flight, R);
		w[j] = (double)info().cwnd / MSS;
	}
	/* concave: most of the way back to W_max after three RTTs (the
	 * Reno-friendly estimate alone: 8.5) */
	assert_true(w[2] >= 9.2);
	/* plateau: no overshoot of W_max while t <= K */
	for (unsigned int j = 0; j <= 4; j++)
		assert_true(w[j] <= 10.25);
	/* convex beyond K: growth speeds up RTT after RTT, far above the
	 * one segment per RTT of Reno (~15 by now) */
	for (unsigned int j = 8; j < RTE_DIM(w); j++)
		assert_true(w[j] - w[j - 1] > w[j - 1] - w[j - 2]);
	assert_true(w[11] >= 25.0);
	th_stop(&H);
}

/* The MSS we offer and the one we send with follow the MTU we were given
 * (path MTU), not a constant: 1280 - 40. */
static void
test_mss_follows_mtu(void **st)
{
	struct th_seg *s;
	uint32_t iss;

	th_config(&H);
	H.cfg.mtu = 1280;
	th_start(&H);
	tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app);
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	s = th_next(&H);
	assert_int_equal(s->mss, 1240);
	iss = s->seq;
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 65535, NULL, NULL, 0);
	assert_int_equal(tcp_conn_mss(H.app.conn), 1240);
	assert_int_equal(tcp_send(H.app.conn, buf, 3000), 3000);
	tcp_flush(H.app.conn);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 1);
	assert_int_equal(H.seg.len, 1240);
	EXPECT_SEG(&H, F_ACK, iss + 1241, PEER + 1);
	assert_int_equal(H.seg.len, 1240);
	EXPECT_SEG(&H, F_ACK | F_PSH, iss + 2481, PEER + 1);
	assert_int_equal(H.seg.len, 520);
	ack(iss + 3001, NULL);
	th_stop(&H);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rto_estimator_rfc6298),
		cmocka_unit_test(test_rto_backoff_capped_at_max),
		cmocka_unit_test(test_cubic_window_follows_time),
		cmocka_unit_test(test_mss_follows_mtu),
	};
	int rc;

	th_eal_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	th_eal_fini();
	return rc;
}
