/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Scripted tests of tail loss probes (RFC 8985 §7, lib/net/tcp/
 * tcp_tlp.c): the probe timeout (2*SRTT, plus the worst-case delayed ACK
 * for one segment in flight or 2 ms for more, never later than the
 * RTO), the probe (new
 * data when there is some, else the last segment again), the ACK that
 * shows whether it repaired a loss and the reduction when it did, one
 * probe per episode, none in recovery, and the RTO behind it. */

#include "tcp_harness.h"

static struct th H;
static uint8_t buf[64 * 1460];

#define PEER 1000u
#define MSS 1460u
#define RTT 40000u		/* µs: SRTT 40 ms, PTO 82 ms (280 ms) */
#define WCDELACK 200000u	/* RFC 8985 §7.2 WCDelAckT */
#define TLPMIN 2000u		/* tcp_tlp.c TCP_TLP_MIN_US */
#define PTO (2 * RTT + TLPMIN)	/* several segments in flight */
#define PTO1 (2 * RTT + WCDELACK)	/* one segment in flight */

static const struct th_opts SACKOPT = { .mss = 1460, .sack_ok = 1 };

static uint32_t iss;
#define SEG(k) (iss + 1 + (uint32_t)(k) * MSS)

static void
ack_sack(uint32_t a, unsigned int n, const uint32_t (*b)[2])
{
	th_ack_sack(&H, PEER + 1, a, n, b);
}

static void
ack(uint32_t a)
{
	ack_sack(a, 0, NULL);
}

/* Passive handshake taking rtt us (the SRTT). rto_min: 0 for the default
 * 200 ms (the RTO caps a one-segment PTO), else e.g. 1 s (it does not). */
static void
start_rtt(uint32_t rto_min, uint32_t rtt)
{
	th_config(&H);
	H.cfg.cc = TCP_CC_NEWRENO;
	H.cfg.rto_min_us = rto_min;
	th_start(&H);
	iss = th_handshake_rtt(&H, PEER, &SACKOPT, rtt);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 9));
}

static void
start(uint32_t rto_min)
{
	start_rtt(rto_min, RTT);
}

static struct tcp_stats
stats(void)
{
	return th_stats(&H);
}

static struct tcp_conn_info
info(void)
{
	return th_info(&H);
}

/* Segments 0-9 sent (all the data); an RTT later 0-5 are ACKed: four
 * segments in flight, the PTO is 2*SRTT after that ACK. */
static void
ten_sent_six_acked(void)
{
	th_send_and_take(&H, buf, 10 * MSS, iss, 10, MSS);
	th_advance(&H, RTT);
	ack(SEG(6));
	assert_int_equal(th_pending(&H), 0);
}

/* Segments 0-9 sent (all the data); an RTT later 0-8 are ACKed: one
 * segment in flight, segment 9, whose ACK (or the segment) is lost. */
static void
ten_sent_nine_acked(void)
{
	th_send_and_take(&H, buf, 10 * MSS, iss, 10, MSS);
	th_advance(&H, RTT);
	ack(SEG(9));
}

/* Nothing is sent until us have passed (checked 1 ms before), then the
 * segment at seq (the probe or the RTO's retransmission). */
static struct th_seg *
silent_until(uint64_t us, uint32_t seq)
{
	th_advance(&H, us - 1000);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 1000);
	return TH_NEXT_AT(&H, seq);
}

/* Two more segments (10, 11) sent and, an RTT later, ACKed: the ACK
 * beyond the probe's end that tells whether it repaired a loss. */
static void
two_more_acked(void)
{
	assert_int_equal(tcp_send(H.app.conn, buf, 2 * MSS), 2 * (int)MSS);
	tcp_flush(H.app.conn);
	TH_NEXT_AT(&H, SEG(10));
	TH_NEXT_AT(&H, SEG(11));
	th_advance(&H, RTT);
	ack(SEG(12));
}

/* §7.2 with several segments in flight: the probe goes 2*SRTT after the
 * last ACK, long before the RTO; no new data, so it is the last segment
 * again (§7.3), and nothing else goes. */
static void
test_pto_several_segments(void **st)
{
	struct th_seg *s;

	start(1000000);
	ten_sent_six_acked();
	s = silent_until(PTO, SEG(9));
	assert_int_equal(s->len, MSS);
	assert_memory_equal(s->data, buf + 9 * MSS, MSS);
	assert_int_equal(th_pending(&H), 0);
	assert_int_equal(stats().tlp_probes, 1);
	assert_int_equal(stats().rto_expired, 0);
	th_stop(&H);
}

/* A fast path (SRTT 40 us): the probe waits 2*SRTT + 2 ms, not 80 us,
 * for a peer whose ACK comes with its application's next request. */
static void
test_pto_floor_on_fast_path(void **st)
{
	start_rtt(1000000, 40);
	th_send_and_take(&H, buf, 10 * MSS, iss, 10, MSS);
	silent_until(2 * 40 + TLPMIN, SEG(9));
	assert_int_equal(stats().tlp_probes, 1);
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

/* A SACK that bypasses a hole just before the PTO: the reordering timer
 * it starts (RFC 8985 §6.3; min_rtt/4 = 10 ms) replaces the probe timer,
 * which could no longer send a probe (SACKed data) and would have handed
 * back to the RTO, 200 ms after the send, forgetting it. */
static void
test_reo_timer_replaces_pending_probe(void **st)
{
	uint32_t b[1][2];

	start(0);
	th_send_and_take(&H, buf, 10 * MSS, iss, 10, MSS);
	th_advance(&H, PTO - 2000);		/* the probe due in 2 ms */
	b[0][0] = SEG(9), b[0][1] = SEG(10);
	ack_sack(SEG(0), 1, b);
	silent_until(10000, SEG(0));
	assert_int_equal(stats().tlp_probes, 0);
	assert_int_equal(stats().rto_expired, 0);
	th_drain(&H);
	th_stop(&H);
}

/* §7.2 with one segment in flight: its ACK may be delayed, so the PTO
 * is 2*SRTT + WCDelAckT (the RTO, 1 s here, is later). */
static void
test_pto_one_segment_adds_delack(void **st)
{
	struct th_seg *s;

	start(1000000);
	ten_sent_nine_acked();			/* segment 9 lost */
	s = silent_until(PTO1, SEG(9));
	assert_int_equal(s->len, MSS);
	assert_int_equal(stats().tlp_probes, 1);
	assert_int_equal(stats().rto_expired, 0);
	th_stop(&H);
}

/* §7.2: a PTO beyond the RTO is cut to the RTO's time (200 ms here,
 * below 80 + 200 ms), and at that time the probe goes instead of the
 * timeout: cwnd stays. */
static void
test_pto_capped_by_rto(void **st)
{
	struct tcp_conn_info ci;

	start(0);
	ten_sent_nine_acked();
	ci = info();
	assert_int_equal(ci.rto_us, 200000);
	silent_until(200000, SEG(9));
	assert_int_equal(th_pending(&H), 0);
	assert_int_equal(stats().tlp_probes, 1);
	assert_int_equal(stats().rto_expired, 0);
	assert_int_equal(info().cwnd, ci.cwnd);
	th_stop(&H);
}

/* The last segment lost: the probe (its copy) repairs it, no RTO. The
 * ACK exactly at the probe's end cannot tell yet (the original's ACK
 * looks the same); the next ACK beyond it with no D-SACK between shows
 * the loss, and cwnd is reduced as a fast recovery would (§7.4.2) from
 * the flight at the time: max(1 segment / 2, 2 segments). */
static void
test_tail_loss_repaired_by_probe(void **st)
{
	struct tcp_conn_info ci;

	start(0);
	ten_sent_nine_acked();
	ci = info();
	th_advance(&H, 200000);
	TH_NEXT_AT(&H, SEG(9));
	th_advance(&H, RTT);
	ack(SEG(10));				/* the copy arrived */
	assert_int_equal(stats().tlp_recoveries, 0);
	assert_true(info().cwnd >= ci.cwnd);
	two_more_acked();
	assert_int_equal(stats().tlp_recoveries, 1);
	ci = info();
	assert_false(ci.in_recovery);
	assert_int_equal(ci.ssthresh, 2 * MSS);
	assert_int_equal(ci.cwnd, 2 * MSS);
	assert_int_equal(stats().rto_expired, 0);
	assert_int_equal(stats().fast_retransmits, 0);
	th_stop(&H);
}

/* Several tail segments lost: the probe's copy of the last one is
 * SACKed, which starts SACK recovery for the holes below it, with no
 * RTO (the probe's own episode ends in that recovery). */
static void
test_probe_sack_starts_recovery(void **st)
{
	uint32_t b[1][2];

	start(0);
	ten_sent_six_acked();
	th_advance(&H, PTO);
	TH_NEXT_AT(&H, SEG(9));
	th_advance(&H, RTT);
	b[0][0] = SEG(9), b[0][1] = SEG(10);
	ack_sack(SEG(6), 1, b);
	th_advance(&H, 11000);			/* reordering window */
	TH_NEXT_AT(&H, SEG(6));
	assert_true(info().in_recovery);
	assert_int_equal(stats().rto_expired, 0);
	assert_int_equal(stats().tlp_probes, 1);
	th_stop(&H);
}

/* §7.3: with new data waiting and the peer's window open, the probe is
 * the next new segment, beyond cwnd. Every ACK of the flight was lost;
 * the ACK of the probe covers it all: new data, no loss repaired, cwnd
 * is not reduced. */
static void
test_probe_sends_new_data(void **st)
{
	struct tcp_conn_info ci;
	struct th_seg *s;

	start(0);
	th_send_and_take(&H, buf, 20 * MSS, iss, 10, MSS);	/* cwnd: 10 */
	ci = info();
	s = silent_until(PTO, SEG(10));
	assert_int_equal(s->len, MSS);
	assert_memory_equal(s->data, buf + 10 * MSS, MSS);
	assert_int_equal(th_pending(&H), 0);
	assert_int_equal(stats().tlp_probes, 1);
	assert_int_equal(stats().retransmits, 0);
	th_advance(&H, RTT);
	ack(SEG(11));
	assert_int_equal(stats().tlp_recoveries, 0);
	assert_true(info().cwnd >= ci.cwnd);
	assert_false(info().in_recovery);
	th_drain(&H);
	th_stop(&H);
}

/* §7.4: the probe's copy was not needed (the original's ACK was only
 * late): the D-SACK of the copy ends the episode with no reduction, and
 * a later ACK beyond the probe reduces nothing. drop_dsack: the peer
 * sends no D-SACK; a pure duplicate ACK at the probe's end says the
 * same. */
static void
unneeded_probe(bool dsack)
{
	struct tcp_conn_info ci;
	uint32_t b[1][2];

	start(1000000);
	ten_sent_nine_acked();
	th_advance(&H, PTO1);
	TH_NEXT_AT(&H, SEG(9));
	assert_int_equal(stats().tlp_probes, 1);
	ack(SEG(10));				/* the original's, late */
	b[0][0] = SEG(9), b[0][1] = SEG(10);
	ack_sack(SEG(10), dsack ? 1 : 0, b);	/* the copy's */
	ci = info();
	two_more_acked();
	assert_int_equal(stats().tlp_recoveries, 0);
	assert_true(info().cwnd >= ci.cwnd);
	assert_int_equal(info().ssthresh, UINT32_MAX);
	th_stop(&H);
}

static void
test_unneeded_probe_dsack_no_reduction(void **st)
{
	unneeded_probe(true);
}

static void
test_unneeded_probe_dupack_no_reduction(void **st)
{
	unneeded_probe(false);
}

/* §7.2: no probe in fast recovery (RACK and the RTO handle it). The
 * retransmission fills the hole and the partial ACK leaves nothing
 * SACKed, still in recovery: silence after it brings the RTO, not a
 * probe. Once that recovery is over, a new tail loss is probed again. */
static void
test_no_probe_in_recovery(void **st)
{
	uint32_t b[1][2];

	start(0);
	th_send_and_take(&H, buf, 10 * MSS, iss, 10, MSS);
	th_advance(&H, RTT);
	b[0][0] = SEG(1), b[0][1] = SEG(4);
	ack_sack(SEG(0), 1, b);
	TH_NEXT_AT(&H, SEG(0));			/* fast retransmit */
	th_drain(&H);
	th_advance(&H, RTT);
	ack(SEG(4));				/* partial ACK */
	assert_true(info().in_recovery);
	th_drain(&H);				/* rescue retransmission */
	th_advance(&H, 199000);
	assert_int_equal(th_pending(&H), 0);
	assert_int_equal(stats().tlp_probes, 0);
	th_advance(&H, 1000);
	TH_NEXT_AT(&H, SEG(4));			/* the RTO */
	assert_int_equal(stats().rto_expired, 1);
	assert_int_equal(stats().tlp_probes, 0);
	th_drain(&H);
	/* all delivered: recovery over; then a new flight with its last
	 * segment lost gets a probe, at the RTO's time (the RTO, backed
	 * off, is measured again by the ACK of new data) */
	ack(SEG(10));
	assert_false(info().in_recovery);
	th_drain(&H);
	assert_int_equal(tcp_send(H.app.conn, buf, 2 * MSS), 2 * (int)MSS);
	tcp_flush(H.app.conn);
	assert_int_equal(th_pending(&H), 2);
	th_drain(&H);
	th_advance(&H, RTT);
	ack(SEG(11));
	assert_int_equal(info().rto_us, 200000);
	th_advance(&H, 200000);
	TH_NEXT_AT(&H, SEG(11));
	assert_int_equal(stats().tlp_probes, 1);
	assert_int_equal(stats().rto_expired, 1);
	th_stop(&H);
}

/* §7.3: after the probe the RTO, not another PTO, is armed: the probe
 * lost too, the RTO fires one RTO after it and resends from snd_una
 * with cwnd one segment. One probe per episode: none more meanwhile. */
static void
test_rto_fires_when_probe_lost(void **st)
{
	start(0);
	ten_sent_six_acked();
	th_advance(&H, PTO);
	TH_NEXT_AT(&H, SEG(9));
	silent_until(200000, SEG(6));
	assert_int_equal(stats().rto_expired, 1);
	assert_int_equal(stats().tlp_probes, 1);
	assert_int_equal(info().cwnd, MSS);
	th_drain(&H);
	th_stop(&H);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pto_several_segments),
		cmocka_unit_test(test_pto_floor_on_fast_path),
		cmocka_unit_test(test_reo_timer_replaces_pending_probe),
		cmocka_unit_test(test_pto_one_segment_adds_delack),
		cmocka_unit_test(test_pto_capped_by_rto),
		cmocka_unit_test(test_tail_loss_repaired_by_probe),
		cmocka_unit_test(test_probe_sack_starts_recovery),
		cmocka_unit_test(test_probe_sends_new_data),
		cmocka_unit_test(test_unneeded_probe_dsack_no_reduction),
		cmocka_unit_test(test_unneeded_probe_dupack_no_reduction),
		cmocka_unit_test(test_no_probe_in_recovery),
		cmocka_unit_test(test_rto_fires_when_probe_lost),
	};
	int rc;

	th_eal_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	th_eal_fini();
	return rc;
}
