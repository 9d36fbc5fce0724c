/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Scripted tests of options (window scale, timestamps/PAWS, SACK) and
 * reliability: reassembly, duplicates, fast retransmit (NewReno), SACK
 * recovery, RTO after loss, zero-window probes, piggybacked ACKs, CUBIC
 * versus NewReno reduction. */

#include <stdlib.h>
#include <string.h>

#include "tcp_harness.h"

static struct th H;
static uint8_t buf[256 * 1024];

#define PEER 1000u
#define MSS 1460u

static const struct th_opts MSS1460 = { .mss = 1460 };
static const struct th_opts SACKOPT = { .mss = 1460, .sack_ok = 1 };

static void
fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed);
}

/* Send bytes of buf (filled with seed 7); the first k segments sent. */
static void
send_and_take(uint32_t iss, uint32_t bytes, unsigned int k)
{
	fill(buf, bytes, 7);
	th_send_and_take(&H, buf, bytes, iss, k, MSS);
}

static void
ack(uint32_t a, const struct th_opts *o)
{
	th_inject(&H, F_ACK, PEER + 1, a, 65535, o, NULL, 0);
}

static void
test_window_scale_both_ways(void **st)
{
	struct th_opts o = { .mss = 1460, .has_ws = 1, .ws = 2 };
	struct th_seg *s;
	uint32_t iss;

	th_config(&H);
	th_start(&H);
	tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app);
	th_inject(&H, F_SYN, PEER, 0, 65535, &o, NULL, 0);
	s = th_next(&H);
	assert_int_equal(s->ws, 3);
	assert_int_equal(s->win, 65535);	/* SYN window unscaled */
	iss = s->seq;
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 1000, NULL, NULL, 0);
	/* peer window 1000 << 2 = 4000 bytes: two full segments, and the
	 * 1080-byte rest waits (less than half the largest window) */
	fill(buf, 10000, 1);
	tcp_send(H.app.conn, buf, 10000);
	tcp_flush(H.app.conn);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 1);
	EXPECT_SEG(&H, F_ACK, iss + 1461, PEER + 1);
	assert_int_equal(th_pending(&H), 0);
	/* our window is advertised scaled by 3 */
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 1000, NULL, "x", 1);
	th_inject(&H, F_ACK, PEER + 2, iss + 1, 1000, NULL, "y", 1);
	s = th_next(&H);
	assert_int_equal(s->win, (256 * 1024) >> 3);
	th_stop(&H);
}

static void
test_timestamps_and_paws(void **st)
{
	struct th_opts o = { .mss = 1460, .has_ts = 1, .tsval = 100 };
	struct tcp_stats sts;
	struct th_seg *s;
	uint32_t iss;

	th_config(&H);
	th_start(&H);
	iss = th_handshake(&H, PEER, &o);
	o = (struct th_opts){ .has_ts = 1, .tsval = 200 };
	th_inject(&H, F_ACK | F_PSH, PEER + 1, iss + 1, 65535, &o, "ab", 2);
	th_inject(&H, F_ACK | F_PSH, PEER + 3, iss + 1, 65535, &o, "cd", 2);
	s = th_next(&H);
	assert_true(s->has_ts);
	assert_int_equal(s->tsecr, 200);	/* echoes TS.Recent */
	assert_int_equal(s->ack, PEER + 5);
	/* an old timestamp: PAWS drops it and ACKs (RFC 7323 §5.3) */
	o.tsval = 150;
	th_inject(&H, F_ACK | F_PSH, PEER + 5, iss + 1, 65535, &o, "ef", 2);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 5);
	assert_int_equal(H.app.rx_len, 4);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.drops[TCP_DROP_PAWS], 1);
	/* our TSval advances with the clock (1 ms ticks) */
	{
		uint32_t t0 = s->tsval;

		th_advance(&H, 10000);
		o.tsval = 300;
		th_inject(&H, F_ACK | F_PSH, PEER + 5, iss + 1, 65535, &o,
			  "gh", 2);
		th_inject(&H, F_ACK | F_PSH, PEER + 7, iss + 1, 65535, &o,
			  "ij", 2);
		s = th_next(&H);
		assert_int_equal(s->tsval - t0, 10);
		assert_int_equal(s->tsecr, 300);
	}
	th_stop(&H);
}

static void
test_sack_blocks_reported(void **st)
{
	struct th_seg *s;
	uint32_t iss;

	th_config(&H);
	th_start(&H);
	iss = th_handshake(&H, PEER, &SACKOPT);
	fill(buf, 8 * MSS, 3);
	/* segment 2 arrives first: immediate ACK with its block */
	th_inject(&H, F_ACK, PEER + 1 + MSS, iss + 1, 65535, NULL, buf + MSS,
		  MSS);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1);
	assert_int_equal(s->nr_sack, 1);
	TH_SACK_IS(s, 0, PEER + 1 + MSS, PEER + 1 + 2 * MSS);
	/* segment 4: newest block first (RFC 2018 §4) */
	th_inject(&H, F_ACK, PEER + 1 + 3 * MSS, iss + 1, 65535, NULL,
		  buf + 3 * MSS, MSS);
	s = th_next(&H);
	assert_int_equal(s->nr_sack, 2);
	assert_int_equal(s->sack[0][0], PEER + 1 + 3 * MSS);
	assert_int_equal(s->sack[1][0], PEER + 1 + MSS);
	/* segment 3 joins the two blocks */
	th_inject(&H, F_ACK, PEER + 1 + 2 * MSS, iss + 1, 65535, NULL,
		  buf + 2 * MSS, MSS);
	s = th_next(&H);
	assert_int_equal(s->nr_sack, 1);
	TH_SACK_IS(s, 0, PEER + 1 + MSS, PEER + 1 + 4 * MSS);
	assert_int_equal(H.app.rx_len, 0);
	/* segment 1 fills the hole: everything delivered, no SACK left */
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 65535, NULL, buf, MSS);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1 + 4 * MSS);
	assert_int_equal(s->nr_sack, 0);
	assert_int_equal(H.app.rx_len, 4 * MSS);
	assert_memory_equal(H.app.rx, buf, 4 * MSS);
	/* a duplicate is reported once as a D-SACK block (RFC 2883) */
	th_inject(&H, F_ACK, PEER + 1 + MSS, iss + 1, 65535, NULL, buf + MSS,
		  MSS);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1 + 4 * MSS);
	assert_int_equal(s->nr_sack, 1);
	TH_SACK_IS(s, 0, PEER + 1 + MSS, PEER + 1 + 2 * MSS);
	assert_int_equal(H.app.rx_len, 4 * MSS);	/* not delivered again */
	th_inject(&H, F_ACK, PEER + 1 + 4 * MSS, iss + 1, 65535, NULL,
		  buf + 4 * MSS, MSS);
	th_inject(&H, F_ACK, PEER + 1 + 5 * MSS, iss + 1, 65535, NULL,
		  buf + 5 * MSS, MSS);
	s = th_next(&H);
	assert_int_equal(s->nr_sack, 0);
	th_stop(&H);
}

static void
test_reorder_duplicates_overlaps(void **st)
{
	/* byte ranges in arrival order: overlapping, duplicated, reordered */
	static const uint32_t r[][2] = {
		{ 3000, 4000 }, { 500, 1500 }, { 3500, 4500 }, { 3000, 4000 },
		{ 1400, 2100 }, { 2000, 3100 }, { 0, 600 }, { 0, 1000 },
		{ 4400, 5000 }, { 100, 200 },
	};
	uint32_t iss;

	iss = th_open(&H, TCP_CC_CUBIC, PEER, &MSS1460, 0);
	fill(buf, 5000, 11);
	for (unsigned int i = 0; i < RTE_DIM(r); i++)
		th_inject(&H, F_ACK, PEER + 1 + r[i][0], iss + 1, 65535, NULL,
			  buf + r[i][0], r[i][1] - r[i][0]);
	assert_int_equal(H.app.rx_len, 5000);
	assert_memory_equal(H.app.rx, buf, 5000);
	th_drain(&H);
	th_advance(&H, 100000);
	th_drain(&H);
	th_stop(&H);
}

static void
test_ooo_queue_memory_bound(void **st)
{
	struct tcp_stats sts;
	uint32_t iss;

	iss = th_open(&H, TCP_CC_CUBIC, PEER, &MSS1460, 0);
	fill(buf, 200 * 10, 12);
	/* 100 one-byte segments with holes between them: the queue holds a
	 * bounded number, the rest are dropped and counted */
	for (unsigned int i = 1; i <= 100; i++)
		th_inject(&H, F_ACK, PEER + 1 + 2 * i, iss + 1, 65535, NULL,
			  buf + 2 * i, 1);
	tcp_stack_stats(H.s, &sts);
	assert_true(sts.drops[TCP_DROP_OOO_MEM] >= 30);
	assert_int_equal(H.app.rx_len, 0);
	th_drain(&H);
	th_stop(&H);
}

static void
test_fast_retransmit_newreno(void **st)
{
	struct tcp_conn_info ci;
	struct tcp_stats sts;
	struct th_seg *s;
	uint32_t iss;

	iss = th_open(&H, TCP_CC_NEWRENO, PEER, &MSS1460, 0);
	send_and_take(iss, 10 * MSS, 10);	/* IW10, nothing queued */
	/* segment 1 lost: three duplicate ACKs */
	ack(iss + 1, NULL);
	ack(iss + 1, NULL);
	assert_int_equal(th_pending(&H), 0);
	ack(iss + 1, NULL);
	s = TH_NEXT_AT(&H, iss + 1);
	assert_int_equal(s->len, MSS);
	assert_memory_equal(s->data, buf, MSS);
	tcp_conn_info(H.app.conn, &ci);
	assert_true(ci.in_recovery);
	assert_int_equal(ci.ssthresh, 5 * MSS);	/* flight / 2 */
	assert_int_equal(ci.cwnd, 8 * MSS);	/* + 3 MSS */
	/* more data queued now waits for the window */
	assert_int_equal(tcp_send(H.app.conn, buf, 10 * MSS), 10 * MSS);
	tcp_flush(H.app.conn);
	assert_int_equal(th_pending(&H), 0);
	/* inflation: each further dup ACK adds one MSS; new data goes out
	 * once cwnd exceeds the flight (RFC 6582 §3.2 step 4) */
	ack(iss + 1, NULL);
	ack(iss + 1, NULL);
	assert_int_equal(th_pending(&H), 0);
	ack(iss + 1, NULL);	/* cwnd 11 MSS > flight 10 MSS */
	TH_NEXT_AT(&H, iss + 1 + 10 * MSS);
	assert_int_equal(th_pending(&H), 0);
	ack(iss + 1, NULL);	/* cwnd 12 MSS > flight 11 MSS */
	TH_NEXT_AT(&H, iss + 1 + 11 * MSS);
	/* partial ACK (segment 5 also lost): retransmit it at once */
	ack(iss + 1 + 4 * MSS, NULL);
	TH_NEXT_AT(&H, iss + 1 + 4 * MSS);
	th_drain(&H);
	tcp_conn_info(H.app.conn, &ci);
	assert_true(ci.in_recovery);
	/* full ACK of everything up to recover: leave recovery */
	ack(iss + 1 + 11 * MSS, NULL);
	tcp_conn_info(H.app.conn, &ci);
	assert_false(ci.in_recovery);
	/* RFC 6582 §3.2 step 3: min(ssthresh, max(FlightSize, SMSS) + SMSS)
	 * with segments 12 and 13 still in flight at the full ACK */
	assert_int_equal(ci.cwnd, 3 * MSS);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.fast_retransmits, 1);
	th_drain(&H);
	th_stop(&H);
}

static void
test_limited_transmit_rfc3042(void **st)
{
	uint32_t iss;

	iss = th_open(&H, TCP_CC_CUBIC, PEER, &MSS1460, 0);
	send_and_take(iss, 14 * MSS, 10);	/* cwnd-limited at IW10 */
	ack(iss + 1, NULL);			/* first dup ACK: one more */
	TH_NEXT_AT(&H, iss + 1 + 10 * MSS);
	assert_int_equal(th_pending(&H), 0);
	ack(iss + 1, NULL);			/* second: one more */
	TH_NEXT_AT(&H, iss + 1 + 11 * MSS);
	assert_int_equal(th_pending(&H), 0);
	ack(iss + 1, NULL);			/* third: fast retransmit */
	TH_NEXT_AT(&H, iss + 1);
	th_drain(&H);
	th_stop(&H);
}

static void
test_cubic_reduction_is_gentler(void **st)
{
	struct tcp_conn_info ci;
	uint32_t iss;

	th_config(&H);	/* CUBIC is the default */
	iss = (th_start(&H), th_handshake(&H, PEER, &MSS1460));
	send_and_take(iss, 10 * MSS, 10);
	for (int i = 0; i < 3; i++)
		ack(iss + 1, NULL);
	tcp_conn_info(H.app.conn, &ci);
	assert_int_equal(ci.ssthresh, 7 * MSS);	/* beta 0.7 (RFC 9438) */
	th_drain(&H);
	th_stop(&H);
}

static void
test_sack_recovery_rfc6675(void **st)
{
	struct th_opts o = { .nr_sack = 1 };
	struct tcp_conn_info ci;
	struct th_seg *s;
	uint32_t iss;

	iss = th_open(&H, TCP_CC_NEWRENO, PEER, &SACKOPT, 0);
	send_and_take(iss, 30 * MSS, 10);
	/* one ACK SACKing segments 2-4: segment 1 is lost (3 segments
	 * SACKed above it), recovery starts without waiting for 3 dupacks */
	o.sack[0][0] = iss + 1 + MSS;
	o.sack[0][1] = iss + 1 + 4 * MSS;
	ack(iss + 1, &o);
	s = TH_NEXT_AT(&H, iss + 1);
	assert_memory_equal(s->data, buf, MSS);
	tcp_conn_info(H.app.conn, &ci);
	assert_true(ci.in_recovery);
	assert_int_equal(ci.cwnd, 5 * MSS);
	/* pipe = 10 - 3 SACKed - 1 lost + 1 retransmitted = 7 > cwnd 5 */
	assert_int_equal(th_pending(&H), 0);
	/* segments 5-8 SACKed too: pipe 3, two new segments fit */
	o.sack[0][1] = iss + 1 + 8 * MSS;
	ack(iss + 1, &o);
	TH_NEXT_AT(&H, iss + 1 + 10 * MSS);
	TH_NEXT_AT(&H, iss + 1 + 11 * MSS);
	assert_int_equal(th_pending(&H), 0);	/* segment 1 not resent */
	/* segment 9 also lost: SACK of 10-12 above it makes it lost too */
	o.nr_sack = 2;
	o.sack[1][0] = iss + 1 + 9 * MSS;
	o.sack[1][1] = iss + 1 + 12 * MSS;
	ack(iss + 1, &o);
	s = TH_NEXT_AT(&H, iss + 1 + 8 * MSS);
	assert_int_equal(s->len, MSS);
	th_drain(&H);
	/* the cumulative ACK reaches recover: recovery ends, cwnd = ssthresh */
	ack(iss + 1 + 12 * MSS, NULL);
	tcp_conn_info(H.app.conn, &ci);
	assert_false(ci.in_recovery);
	assert_int_equal(ci.cwnd, 5 * MSS);
	th_drain(&H);
	th_stop(&H);
}

/* A retransmission is cut to the room the options leave: while data we
 * received out of order is held, every segment carries a SACK block
 * (RFC 2018 §4), 12 bytes of options, so it holds MSS - 12 bytes. One of
 * MSS bytes would go out marked for TSO on a port without it, larger
 * than the path takes (found by fuzz-tcp). */
static void
test_rexmit_leaves_room_for_sack_blocks(void **st)
{
	const uint32_t seg = MSS - 12;
	uint8_t in[100];
	struct th_seg *s;
	uint32_t iss;

	iss = th_open(&H, TCP_CC_NEWRENO, PEER, &SACKOPT, 0);
	assert_int_equal(H.cfg.tso_max, 0);	/* no TSO on this port */
	memset(in, 'x', sizeof(in));
	/* the peer's first 100 bytes are lost: 100 bytes held above them */
	th_inject(&H, F_ACK, PEER + 1 + 100, iss + 1, 65535, NULL, in,
		  sizeof(in));
	s = th_next(&H);
	assert_int_equal(s->nr_sack, 1);
	fill(buf, 10 * seg, 7);
	th_send_and_take(&H, buf, 10 * seg, iss, 10, seg);
	ack(iss + 1, NULL);
	ack(iss + 1, NULL);
	ack(iss + 1, NULL);
	s = TH_NEXT_AT(&H, iss + 1);
	assert_int_equal(s->nr_sack, 1);
	assert_int_equal(s->len, seg);
	assert_memory_equal(s->data, buf, seg);
	th_drain(&H);
	th_stop(&H);
}

static void
test_rto_after_loss_goes_back_n(void **st)
{
	struct tcp_conn_info ci;
	uint32_t iss;

	th_config(&H);
	/* the timeout itself, without a tail loss probe before it (the
	 * probe's version of this silence is in test_tcp_tlp.c) */
	H.cfg.no_tlp = true;
	iss = (th_start(&H), th_handshake(&H, PEER, &SACKOPT));
	send_and_take(iss, 4 * MSS, 4);
	ack(iss + 1 + MSS, NULL);	/* then silence: no SACK at all */
	th_advance(&H, 1000000);	/* RTO */
	TH_NEXT_AT(&H, iss + 1 + MSS);
	assert_int_equal(th_pending(&H), 0);	/* loss window: one MSS */
	tcp_conn_info(H.app.conn, &ci);
	assert_int_equal(ci.cwnd, MSS);
	/* the ACK clocks out the rest, two segments in slow start */
	ack(iss + 1 + 2 * MSS, NULL);
	TH_NEXT_AT(&H, iss + 1 + 2 * MSS);
	TH_NEXT_AT(&H, iss + 1 + 3 * MSS);
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

static void
test_zero_window_probe(void **st)
{
	struct th_seg *s;
	uint32_t iss;

	iss = th_open(&H, TCP_CC_CUBIC, PEER, &MSS1460, 0);
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 0, NULL, NULL, 0);
	fill(buf, 100, 4);
	tcp_send(H.app.conn, buf, 100);
	tcp_flush(H.app.conn);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 1100000);
	s = TH_NEXT_AT(&H, iss + 1);	/* one byte probe */
	assert_int_equal(s->len, 1);
	assert_int_equal(s->data[0], buf[0]);
	/* refused: still zero window, probes back off */
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 0, NULL, NULL, 0);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 300000);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 3000000);
	s = TH_NEXT_AT(&H, iss + 1);
	assert_int_equal(s->len, 1);
	/* accepted and the window opens: the rest flows */
	th_inject(&H, F_ACK, PEER + 1, iss + 2, 65535, NULL, NULL, 0);
	s = TH_NEXT_AT(&H, iss + 2);
	assert_int_equal(s->len, 99);
	assert_memory_equal(s->data, buf + 1, 99);
	th_inject(&H, F_ACK, PEER + 1, iss + 101, 65535, NULL, NULL, 0);
	assert_int_equal(H.app.sent, 100);
	th_advance(&H, 10000000);
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

/* snd_una is v in both tcp_conn_info and tcp_conn_send_state, which
 * also gives the queued bytes of tcp_conn_info. */
#define SND_UNA_IS(v) do {						\
	uint32_t _u = 0;						\
	assert_int_equal(th_info(&H).snd_una, (uint32_t)(v));		\
	assert_int_equal(tcp_conn_send_state(H.app.conn, &_u),		\
			 th_info(&H).queued);				\
	assert_int_equal(_u, (uint32_t)(v));				\
} while (0)

/* tcp_conn_info's snd_una: what the peer has cumulatively acknowledged,
 * the progress an application (lib/shard's send_timeout_ms) watches. It
 * follows new ACKs, and stays put while a zero window's probes are
 * answered without taking the byte, and on duplicate ACKs. */
static void
test_info_snd_una_follows_acks(void **st)
{
	struct th_seg *s;
	uint32_t iss;

	iss = th_open(&H, TCP_CC_CUBIC, PEER, &MSS1460, 0);
	SND_UNA_IS(iss + 1);	/* the SYN's */
	fill(buf, 3000, 9);
	assert_int_equal(tcp_send(H.app.conn, buf, 3000), 3000);
	tcp_flush(H.app.conn);
	assert_int_equal(th_take_all(&H, NULL), 3);
	SND_UNA_IS(iss + 1);	/* sent, not acked */
	th_inject(&H, F_ACK, PEER + 1, iss + 1 + 1000, 0, NULL, NULL, 0);
	SND_UNA_IS(iss + 1001);
	assert_int_equal(th_info(&H).queued, 2000);
	/* the same ACK again: no progress */
	th_inject(&H, F_ACK, PEER + 1, iss + 1 + 1000, 0, NULL, NULL, 0);
	SND_UNA_IS(iss + 1001);
	/* the rest acknowledged, into a closed window; more data waits */
	th_inject(&H, F_ACK, PEER + 1, iss + 3001, 0, NULL, NULL, 0);
	SND_UNA_IS(iss + 3001);
	assert_int_equal(tcp_send(H.app.conn, buf, 100), 100);
	tcp_flush(H.app.conn);
	assert_int_equal(th_pending(&H), 0);
	/* probes answered, the window still closed: snd_una stays */
	for (int i = 0; i < 3; i++) {
		th_advance(&H, 60000000);
		s = TH_NEXT_AT(&H, iss + 3001);
		assert_int_equal(s->len, 1);
		th_inject(&H, F_ACK, PEER + 1, iss + 3001, 0, NULL, NULL, 0);
		SND_UNA_IS(iss + 3001);
		assert_int_equal(th_info(&H).queued, 100);
	}
	/* the window opens: the probe byte and the rest acknowledged */
	th_inject(&H, F_ACK, PEER + 1, iss + 3002, 65535, NULL, NULL, 0);
	SND_UNA_IS(iss + 3002);
	th_take_all(&H, NULL);
	th_inject(&H, F_ACK, PEER + 1, iss + 3101, 65535, NULL, NULL, 0);
	SND_UNA_IS(iss + 3101);
	assert_int_equal(th_info(&H).queued, 0);
	th_stop(&H);
}

static void
test_response_piggybacks_ack(void **st)
{
	struct th_seg *s;
	uint32_t iss;

	iss = th_open(&H, TCP_CC_CUBIC, PEER, &MSS1460, 0);
	H.app.reply_len = 8;
	th_inject(&H, F_ACK | F_PSH, PEER + 1, iss + 1, 65535, NULL,
		  "request", 7);
	s = th_next(&H);
	assert_int_equal(s->flags, F_ACK | F_PSH);
	assert_int_equal(s->ack, PEER + 8);
	assert_int_equal(s->len, 8);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 100000);		/* no separate delayed ACK */
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

/* A response that is ready after the data callback returned (computed
 * elsewhere, then tcp_send + tcp_flush) carries the pending ACK, and the
 * delayed-ACK timer does not send it again on its own. */
static void
test_late_response_carries_delayed_ack(void **st)
{
	struct th_seg *s;
	uint32_t iss;

	iss = th_open(&H, TCP_CC_CUBIC, PEER, &MSS1460, 0);
	th_inject(&H, F_ACK | F_PSH, PEER + 1, iss + 1, 65535, NULL,
		  "request", 7);
	assert_int_equal(th_pending(&H), 0);	/* ACK delayed */
	th_advance(&H, 10000);
	assert_int_equal(tcp_send(H.app.conn, "response", 8), 8);
	tcp_flush(H.app.conn);
	s = th_next(&H);
	assert_int_equal(s->flags, F_ACK | F_PSH);
	assert_int_equal(s->ack, PEER + 8);
	assert_int_equal(s->len, 8);
	th_advance(&H, 100000);		/* past the 40 ms delayed ACK */
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_scale_both_ways),
		cmocka_unit_test(test_timestamps_and_paws),
		cmocka_unit_test(test_sack_blocks_reported),
		cmocka_unit_test(test_rexmit_leaves_room_for_sack_blocks),
		cmocka_unit_test(test_reorder_duplicates_overlaps),
		cmocka_unit_test(test_ooo_queue_memory_bound),
		cmocka_unit_test(test_fast_retransmit_newreno),
		cmocka_unit_test(test_limited_transmit_rfc3042),
		cmocka_unit_test(test_cubic_reduction_is_gentler),
		cmocka_unit_test(test_sack_recovery_rfc6675),
		cmocka_unit_test(test_rto_after_loss_goes_back_n),
		cmocka_unit_test(test_zero_window_probe),
		cmocka_unit_test(test_info_snd_una_follows_acks),
		cmocka_unit_test(test_response_piggybacks_ack),
		cmocka_unit_test(test_late_response_carries_delayed_ack),
	};
	int rc;

	th_eal_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	th_eal_fini();
	return rc;
}
