/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Scripted tests of behaviour under loss, reordering and duplication
 * (issue 3, impaired transfers): the reassembly queue's bound and drop
 * policy, D-SACK of held duplicates, reordering detection and the undo of
 * spurious recovery, RFC 6675 rescue retransmission, and the SACK
 * scoreboard kept across a retransmission timeout. */

#include <stdlib.h>
#include <string.h>

#include "tcp_harness.h"

static struct th H;
static uint8_t buf[512 * 1024];

#define PEER 1000u
#define MSS 1460u

/* SACK and window scale: the whole 256 KiB receive buffer is offered. */
static const struct th_opts WSSACK = { .mss = 1460, .sack_ok = 1,
				       .has_ws = 1, .ws = 0 };
static const struct th_opts SACKOPT = { .mss = 1460, .sack_ok = 1 };

static void
fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + (i >> 9) + seed);
}

/* Our segment k (0-based) of the transfer. */
static uint32_t iss;
#define SEG(k) (iss + 1 + (uint32_t)(k) * MSS)

/* Passive handshake with options o under cc (rtt_us 0: no RTT sample). */
static void
open_conn(enum tcp_cc_algo cc, const struct th_opts *o, uint64_t rtt_us)
{
	iss = th_open(&H, cc, PEER, o, rtt_us);
}

/* The peer's data: len bytes of buf at offset off of its stream. */
static void
data_in(uint32_t off, uint32_t len)
{
	th_inject(&H, F_ACK, PEER + 1 + off, iss + 1, 65535, NULL, buf + off,
		  len);
}

static void
ack_o(uint32_t a, const struct th_opts *o)
{
	th_inject(&H, F_ACK, PEER + 1, a, 65535, o, NULL, 0);
}

static void
ack(uint32_t a)
{
	ack_o(a, NULL);
}

/* An ACK of a with one SACK block [st, en). */
static void
ack_sack1(uint32_t a, uint32_t st, uint32_t en)
{
	const uint32_t b[1][2] = { { st, en } };

	th_ack_sack(&H, PEER + 1, a, 1, b);
}

static struct th_opts
sack1(uint32_t st, uint32_t en)
{
	struct th_opts o = { .nr_sack = 1 };

	o.sack[0][0] = st;
	o.sack[0][1] = en;
	return o;
}

/* Send bytes of buf (filled with seed 7); the first k segments sent. */
static void
send_and_take(uint32_t bytes, unsigned int k)
{
	fill(buf, bytes, 7);
	th_send_and_take(&H, buf, bytes, iss, k, MSS);
}

/* Ten segments sent (of bytes queued); the peer SACKs segments 1 to
 * end - 1: three or more SACKed above it, segment 0 is lost (RFC 6675
 * IsLost) and recovery starts with its retransmission. */
static void
ten_sent_first_lost(uint32_t bytes, unsigned int end)
{
	send_and_take(bytes, 10);
	ack_sack1(SEG(0), SEG(1), SEG(end));
}

/* A recovery for segment 0 of ten, ended by the ACK of all ten: no
 * longer in recovery. Returns that ACK (segment 10's sequence number). */
static uint32_t
recovery_done(void)
{
	ten_sent_first_lost(10 * MSS, 4);
	th_drain(&H);
	ack(SEG(10));
	assert_false(th_info(&H).in_recovery);
	return SEG(10);
}

/* Queue n more segments of data and let the window send what it may. */
static void
send_more(unsigned int n)
{
	assert_int_equal(tcp_send(H.app.conn, buf, n * MSS), (int)(n * MSS));
	tcp_flush(H.app.conn);
	th_drain(&H);
}

static uint64_t
drops(enum tcp_drop_reason r)
{
	return th_stats(&H).drops[r];
}

/* A whole window behind one lost segment is held: the queue counts
 * blocks, not segments (it used to drop all but 64 segments). */
static void
test_ooo_window_behind_one_hole(void **st)
{
	struct th_seg *s;
	unsigned int i;

	open_conn(TCP_CC_CUBIC, &WSSACK, 0);
	fill(buf, 160 * MSS, 1);
	for (i = 1; i < 160; i++) {
		data_in(i * MSS, MSS);
		s = th_next(&H);
		assert_int_equal(s->ack, PEER + 1);
		assert_int_equal(s->nr_sack, 1);
		TH_SACK_IS(s, 0, PEER + 1 + MSS, PEER + 1 + (i + 1) * MSS);
	}
	assert_int_equal(drops(TCP_DROP_OOO_MEM), 0);
	assert_int_equal(H.app.rx_len, 0);
	data_in(0, MSS);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1 + 160 * MSS);
	assert_int_equal(s->nr_sack, 0);
	assert_int_equal(H.app.rx_len, 160 * MSS);
	assert_memory_equal(H.app.rx, buf, 160 * MSS);
	th_stop(&H);
}

/* With every block slot taken, a segment below them all is kept and the
 * block furthest from rcv_nxt gives way: the lower data is what the
 * application can be given first. */
static void
test_ooo_full_keeps_lowest(void **st)
{
	struct th_seg *s;
	unsigned int i;

	open_conn(TCP_CC_CUBIC, &WSSACK, 0);
	fill(buf, 4000, 2);
	for (i = 0; i < 64; i++)	/* 64 one-byte blocks 1000, 1002.. */
		data_in(1000 + 2 * i, 1);
	th_drain(&H);
	assert_int_equal(drops(TCP_DROP_OOO_MEM), 0);
	data_in(3000, 1);		/* above all: dropped */
	th_drain(&H);
	assert_int_equal(drops(TCP_DROP_OOO_MEM), 1);
	data_in(10, 5);			/* below all: kept, 1126 evicted */
	assert_int_equal(drops(TCP_DROP_OOO_MEM), 2);
	s = th_next(&H);
	assert_int_equal(s->nr_sack, 4);	/* newest first, then older ones */
	TH_SACK_IS(s, 0, PEER + 1 + 10, PEER + 1 + 15);
	/* the bytes before it complete the first run */
	data_in(0, 10);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1 + 15);
	assert_int_equal(H.app.rx_len, 15);
	assert_memory_equal(H.app.rx, buf, 15);
	/* 1126 was evicted, 1124 was not: fill everything up to 1127 */
	data_in(15, 1000 - 15);
	for (i = 0; i < 63; i++)
		data_in(1001 + 2 * i, 1);
	th_drain(&H);
	assert_int_equal(H.app.rx_len, 1126);
	data_in(1126, 2);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1 + 1128);
	assert_memory_equal(H.app.rx, buf, 1128);
	th_stop(&H);
}

/* Segments joining blocks from either side, a duplicate inside a held
 * block reported as a D-SACK (RFC 2883 §4) first, the block after it. */
static void
test_ooo_merge_and_dsack(void **st)
{
	struct th_seg *s;

	open_conn(TCP_CC_CUBIC, &SACKOPT, 0);
	fill(buf, 10 * MSS, 3);
	data_in(4 * MSS, MSS);
	data_in(2 * MSS, MSS);
	data_in(3 * MSS, MSS);		/* joins both */
	th_drain(&H);
	data_in(3 * MSS, MSS);		/* duplicate of held data */
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1);
	assert_int_equal(s->nr_sack, 2);
	TH_SACK_IS(s, 0, PEER + 1 + 3 * MSS, PEER + 1 + 4 * MSS);
	TH_SACK_IS(s, 1, PEER + 1 + 2 * MSS, PEER + 1 + 5 * MSS);
	data_in(1 * MSS, MSS);		/* prepends to the block */
	s = th_next(&H);
	assert_int_equal(s->nr_sack, 1);
	TH_SACK_IS(s, 0, PEER + 1 + MSS, PEER + 1 + 5 * MSS);
	data_in(0, MSS);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1 + 5 * MSS);
	assert_int_equal(H.app.rx_len, 5 * MSS);
	assert_memory_equal(H.app.rx, buf, 5 * MSS);
	th_stop(&H);
}

/* Segment 1 only arrived late: recovery retransmitted it, the peer
 * reported the copy as a duplicate (D-SACK) and the reduction is taken
 * back; the same reordering no longer starts a recovery. */
static void
test_dsack_undoes_spurious_recovery(void **st)
{
	struct tcp_conn_info ci;

	open_conn(TCP_CC_NEWRENO, &SACKOPT, 0);
	ten_sent_first_lost(10 * MSS, 4);
	TH_NEXT_AT(&H, SEG(0));
	assert_int_equal(th_pending(&H), 0);
	ci = th_info(&H);
	assert_true(ci.in_recovery);
	assert_int_equal(ci.cwnd, 5 * MSS);
	/* the original arrives: cumulative ACK, still in recovery */
	ack(SEG(5));
	assert_true(th_info(&H).in_recovery);
	/* then the retransmission, reported as a duplicate */
	ack_sack1(SEG(5), SEG(0), SEG(1));
	ci = th_info(&H);
	assert_false(ci.in_recovery);
	assert_int_equal(ci.cwnd, 10 * MSS);
	assert_int_equal(ci.ssthresh, UINT32_MAX);
	assert_int_equal(th_stats(&H).undos, 1);
	/* three segments SACKed past a hole are now within the reordering
	 * seen (four were): no retransmission */
	ack_sack1(SEG(5), SEG(6), SEG(9));
	assert_int_equal(th_pending(&H), 0);
	assert_false(th_info(&H).in_recovery);
	/* a D-SACK of data never retransmitted undoes nothing */
	ack_sack1(SEG(10), SEG(2), SEG(3));
	assert_int_equal(th_stats(&H).undos, 1);
	th_stop(&H);
}

static const struct th_opts TSSACK = { .mss = 1460, .sack_ok = 1,
				       .has_ts = 1, .tsval = 100 };

/* Timestamps on (20 ms RTT): ten segments sent, their TSval t0; 10 ms
 * later the peer SACKs 1-3 in an ACK echoing t0, so segment 0 goes
 * again and recovery starts. Returns t0. */
static uint32_t
ten_sent_first_lost_ts(void)
{
	struct th_opts o;
	uint32_t t0;

	open_conn(TCP_CC_CUBIC, &TSSACK, 20000);
	fill(buf, 10 * MSS, 5);
	tcp_send(H.app.conn, buf, 10 * MSS);
	tcp_flush(H.app.conn);
	t0 = th_next(&H)->tsval;
	th_drain(&H);
	th_advance(&H, 10000);
	o = sack1(SEG(1), SEG(4));
	o.has_ts = 1, o.tsval = 200, o.tsecr = t0;
	ack_o(SEG(0), &o);
	return t0;
}

/* Eifel (RFC 3522): the ACK for the retransmitted segment echoes the
 * original's timestamp, so the original arrived and the fast retransmit
 * was spurious: undone at once, without waiting for a D-SACK. */
static void
test_eifel_undo_with_timestamps(void **st)
{
	struct th_opts o;
	struct tcp_conn_info ci;
	struct th_seg *s;
	uint32_t t0;

	t0 = ten_sent_first_lost_ts();
	s = TH_NEXT_AT(&H, SEG(0));
	assert_int_equal(s->tsval, t0 + 10);
	ci = th_info(&H);
	assert_true(ci.in_recovery);
	assert_int_equal(ci.ssthresh, 7 * MSS);	/* CUBIC beta 0.7 */
	th_drain(&H);
	o = (struct th_opts){ .has_ts = 1, .tsval = 201, .tsecr = t0 };
	ack_o(SEG(5), &o);
	ci = th_info(&H);
	assert_false(ci.in_recovery);
	assert_int_equal(ci.ssthresh, UINT32_MAX);
	assert_true(ci.cwnd >= 10 * MSS);
	assert_int_equal(th_stats(&H).undos, 1);
	th_drain(&H);
	th_stop(&H);
}

/* The same, but the ACK echoes the retransmission's timestamp: the
 * segment was lost and the reduction stands, whatever D-SACKs say. */
static void
test_eifel_keeps_needed_reduction(void **st)
{
	struct th_opts o;
	uint32_t t0;

	t0 = ten_sent_first_lost_ts();
	th_drain(&H);
	/* with a D-SACK of segment 1 too (a network duplicate): with
	 * timestamps Eifel decides, the D-SACK count does not */
	o = sack1(SEG(0), SEG(1));
	o.has_ts = 1, o.tsval = 201, o.tsecr = t0 + 10;
	ack_o(SEG(5), &o);
	assert_int_equal(th_info(&H).ssthresh, 7 * MSS);
	assert_int_equal(th_stats(&H).undos, 0);
	th_drain(&H);
	th_stop(&H);
}

/* One segment SACKed past a hole: not lost by count (DupThresh 3), but
 * once a quarter of min_rtt passed with no more ACKs the hole is
 * retransmitted by the reordering timer, long before an RTO. */
static void
test_reordering_window_timer(void **st)
{
	struct tcp_stats sts;
	struct th_seg *s;

	open_conn(TCP_CC_CUBIC, &SACKOPT, 40000);
	send_and_take(4 * MSS, 4);
	th_advance(&H, 40000);
	ack_sack1(SEG(0), SEG(1), SEG(2));
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 9000);			/* min_rtt/4 = 10 ms */
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 2000);
	s = TH_NEXT_AT(&H, SEG(0));
	assert_int_equal(s->len, MSS);
	sts = th_stats(&H);
	assert_int_equal(sts.fast_retransmits, 1);
	assert_int_equal(sts.rto_expired, 0);
	th_drain(&H);
	th_stop(&H);
}

/* RFC 6675 NextSeg: with no new data, the tail above the highest SACK
 * is not rule 3's (criterion 1.b); after a partial ACK, rule 4 resends
 * the highest un-SACKed segment once (it, or its retransmission, may
 * be lost). */
static void
test_rescue_retransmission(void **st)
{
	struct th_seg *s;

	open_conn(TCP_CC_NEWRENO, &SACKOPT, 0);
	ten_sent_first_lost(10 * MSS, 9);
	TH_NEXT_AT(&H, SEG(0));			/* rule 1: the lost hole */
	assert_int_equal(th_pending(&H), 0);	/* not the tail */
	ack_sack1(SEG(0), SEG(1), SEG(9));	/* more of the same: nothing */
	assert_int_equal(th_pending(&H), 0);
	ack(SEG(9));				/* partial ACK */
	s = TH_NEXT_AT(&H, SEG(9));		/* rule 4: rescue */
	assert_int_equal(s->len, MSS);
	assert_memory_equal(s->data, buf + 9 * MSS, MSS);
	assert_int_equal(th_pending(&H), 0);
	ack(SEG(9));				/* once per recovery */
	assert_int_equal(th_pending(&H), 0);
	th_drain(&H);
	th_stop(&H);
}

/* RFC 6675 NextSeg rule 3 with no new data to send: a hole below the
 * highest SACKed byte, not yet deemed lost, goes; data above it is only
 * in flight and does not (it used to: every ACK of an application- or
 * window-limited sender then resent segments the peer was receiving). */
static void
test_rule3_holes_below_highest_sack(void **st)
{
	uint32_t b[2][2];

	open_conn(TCP_CC_CUBIC, &SACKOPT, 0);
	ten_sent_first_lost(10 * MSS, 4);	/* CUBIC: cwnd 7, pipe 7 */
	TH_NEXT_AT(&H, SEG(0));
	assert_int_equal(th_pending(&H), 0);
	ack_sack1(SEG(0), SEG(1), SEG(6));	/* pipe 5: room for 2 */
	assert_int_equal(th_pending(&H), 0);	/* 6-9 are in flight */
	b[0][0] = SEG(7), b[0][1] = SEG(8);
	b[1][0] = SEG(1), b[1][1] = SEG(6);
	th_ack_sack(&H, PEER + 1, SEG(0), 2, b); /* 6: a hole, not lost */
	TH_NEXT_AT(&H, SEG(6));
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

/* A retransmission lost during SACK recovery is repaired by the RTO,
 * which keeps the scoreboard (RFC 6675 §5.1): only the hole goes again,
 * not the nine segments the peer holds. */
static void
test_rto_keeps_scoreboard(void **st)
{
	struct tcp_conn_info ci;
	struct th_seg *s;

	open_conn(TCP_CC_NEWRENO, &SACKOPT, 0);
	ten_sent_first_lost(10 * MSS, 10);
	TH_NEXT_AT(&H, SEG(0));
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 1000000);		/* that copy was lost too */
	s = TH_NEXT_AT(&H, SEG(0));
	assert_int_equal(s->len, MSS);
	assert_int_equal(th_pending(&H), 0);
	assert_int_equal(th_info(&H).cwnd, MSS);
	ack(SEG(10));
	ci = th_info(&H);
	assert_false(ci.in_recovery);
	assert_int_equal(ci.unacked, 0);
	th_advance(&H, 10000000);
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

/* PAWS (RFC 7323 §5.3) with reordering: after the retransmission of
 * segment 1 raised TS.Recent, segment 3's original (older TSval, sent
 * before it) is new data and is kept; a segment a second older is not. */
static void
test_paws_tolerates_reordering(void **st)
{
	struct th_opts o = { .has_ts = 1 };

	open_conn(TCP_CC_CUBIC, &TSSACK, 40000);
	fill(buf, 4 * MSS, 9);
	o.tsval = 200;
	th_inject(&H, F_ACK, PEER + 1 + MSS, iss + 1, 65535, &o, buf + MSS,
		  MSS);
	o.tsval = 230;				/* the retransmission */
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 65535, &o, buf, MSS);
	o.tsval = 201;				/* reordered original */
	th_inject(&H, F_ACK, PEER + 1 + 2 * MSS, iss + 1, 65535, &o,
		  buf + 2 * MSS, MSS);
	assert_int_equal(H.app.rx_len, 3 * MSS);
	assert_memory_equal(H.app.rx, buf, 3 * MSS);
	o.tsval = 230 - 1000;			/* an old duplicate */
	th_inject(&H, F_ACK, PEER + 1 + 3 * MSS, iss + 1, 65535, &o,
		  buf + 3 * MSS, MSS);
	assert_int_equal(H.app.rx_len, 3 * MSS);
	assert_int_equal(drops(TCP_DROP_PAWS), 1);
	th_drain(&H);
	th_stop(&H);
}

/* RFC 6675 §5: a new recovery may start once HighACK reaches the
 * recovery point. The first segment sent after recovery lost, with the
 * cumulative ACK sitting exactly on the old recovery point, is resent
 * at once (it used to wait for a timeout). */
static void
test_new_recovery_at_recovery_point(void **st)
{
	uint32_t rp;

	open_conn(TCP_CC_NEWRENO, &SACKOPT, 0);
	rp = recovery_done();			/* full ACK: recovery over */
	send_more(5);				/* segments 11-15 */
	ack_sack1(rp, rp + MSS, rp + 4 * MSS);
	TH_NEXT_AT(&H, rp);
	assert_true(th_info(&H).in_recovery);
	th_drain(&H);
	th_stop(&H);
}

/* RFC 9438 §4.3: after a reduction, CUBIC's Reno-friendly estimate
 * grows by alpha = 3(1-beta)/(1+beta) ~ 0.53 segment per window until
 * it is back at the cwnd of the reduction, then by one per window as
 * Reno does. The clock stands still, so the cubic curve stays below. */
static void
test_cubic_reno_friendly_alpha(void **st)
{
	struct tcp_conn_info ci;
	unsigned int below = 0, above = 0;
	uint32_t a;

	open_conn(TCP_CC_CUBIC, &SACKOPT, 0);
	a = recovery_done();
	ci = th_info(&H);
	assert_int_equal(ci.cwnd, 7 * MSS);
	send_more(200);
	while (ci.cwnd < 11 * MSS) {
		a += MSS;
		ack(a);
		th_drain(&H);
		if (ci.cwnd < 10 * MSS)
			below++;
		else
			above++;
		ci = th_info(&H);
		assert_true(below + above < 150);
	}
	/* 7 -> 10 at ~0.53/window: ~48 ACKs; 10 -> 11 at 1/window: ~10 */
	assert_in_range(below, 40, 60);
	assert_in_range(above, 9, 12);
	th_stop(&H);
}

/* Every other segment of a 20-segment flight lost: ten SACKed blocks.
 * The scoreboard holds them all (it held 8 and ignored blocks above
 * those, so fewer holes counted as lost), and only holes are resent. */
static void
test_scoreboard_ten_holes(void **st)
{
	uint32_t base, sacked = 0;
	unsigned int i, rexmits = 0;

	open_conn(TCP_CC_NEWRENO, &SACKOPT, 0);
	send_and_take(30 * MSS, 10);
	for (i = 1; i <= 10; i++)		/* slow start to cwnd 20 */
		ack(SEG(i));
	th_drain(&H);
	assert_int_equal(th_info(&H).cwnd, 20 * MSS);
	base = SEG(10);				/* segments 0..19 from here */
	for (i = 0; i < 10; i++) {
		uint32_t st = base + (2 * i + 1) * MSS;

		ack_sack1(base, st, st + MSS);
		sacked |= 1u << (2 * i + 1);
		while (th_pending(&H) > 0) {
			struct th_seg *s = th_next(&H);
			uint32_t k = (s->seq - base) / MSS;

			assert_true(k < 20);
			assert_int_equal((sacked >> k) & 1, 0);
			rexmits++;
		}
	}
	assert_true(rexmits >= 5);
	th_stop(&H);
}

/* A timeout in a recovery whose hole held up the cumulative ACK while
 * new data went out: FlightSize from snd_una is 14 segments, cwnd 5.
 * ssthresh comes from cwnd (2.5 segments), not from the flight (7:
 * above the cwnd being reduced). */
static void
test_rto_ssthresh_not_above_cwnd(void **st)
{
	struct tcp_conn_info ci;

	open_conn(TCP_CC_NEWRENO, &SACKOPT, 0);
	ten_sent_first_lost(20 * MSS, 4);
	TH_NEXT_AT(&H, SEG(0));
	ack_sack1(SEG(0), SEG(1), SEG(10));
	assert_int_equal(th_pending(&H), 4);	/* 10-13: pipe was 1 */
	th_drain(&H);
	ci = th_info(&H);
	assert_int_equal(ci.cwnd, 5 * MSS);
	assert_int_equal(ci.unacked, 14 * MSS);
	th_advance(&H, 1100000);		/* RTO */
	ci = th_info(&H);
	assert_int_equal(ci.ssthresh, 5 * MSS / 2);
	assert_int_equal(ci.cwnd, MSS);
	th_drain(&H);
	th_stop(&H);
}

/* Congestion avoidance grows by the data an ACK shows delivered: a
 * cumulative ACK over segments SACKed before delivers only the hole
 * (RFC 9438 §4.3, RFC 3465). Counted again, data SACKed long before
 * grew cwnd as if it had just arrived. */
static void
test_ca_counts_sacked_data_once(void **st)
{
	uint32_t a;

	open_conn(TCP_CC_NEWRENO, &SACKOPT, 0);
	a = recovery_done();			/* recovery over, CA */
	assert_int_equal(th_info(&H).cwnd, 5 * MSS);
	send_more(40);				/* 10-14 */
	ack_sack1(a, a + MSS, a + 3 * MSS);	/* 11, 12: below DupThresh */
	assert_false(th_info(&H).in_recovery);
	ack(a + 3 * MSS);			/* 10 arrives: 1 new segment */
	ack(a + 5 * MSS);			/* 13, 14: 2 more */
	th_drain(&H);
	assert_int_equal(th_info(&H).cwnd, 5 * MSS); /* 3 of 5 acked */
	ack(a + 7 * MSS);			/* 5 of 5: one more */
	assert_int_equal(th_info(&H).cwnd, 6 * MSS);
	th_drain(&H);
	th_stop(&H);
}

/* A response sent from the data callback as a hole fills must not
 * report the block just delivered: below its ACK it reads as a D-SACK
 * (RFC 2883) of data the peer never resent. */
static void
test_no_stale_sack_in_response(void **st)
{
	struct th_seg *s;
	unsigned int n = 0;

	open_conn(TCP_CC_CUBIC, &SACKOPT, 0);
	H.app.reply_len = 8;
	fill(buf, 3 * MSS, 4);
	data_in(MSS, MSS);
	data_in(2 * MSS, MSS);
	th_drain(&H);
	data_in(0, MSS);
	while (th_pending(&H) > 0) {
		s = th_next(&H);
		for (int i = 0; i < s->nr_sack; i++)
			assert_true((int32_t)(s->sack[i][1] - s->ack) > 0);
		n++;
	}
	assert_true(n >= 2);		/* a reply per delivery */
	assert_int_equal(H.app.rx_len, 3 * MSS);
	th_stop(&H);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ooo_window_behind_one_hole),
		cmocka_unit_test(test_ooo_full_keeps_lowest),
		cmocka_unit_test(test_ooo_merge_and_dsack),
		cmocka_unit_test(test_dsack_undoes_spurious_recovery),
		cmocka_unit_test(test_eifel_undo_with_timestamps),
		cmocka_unit_test(test_eifel_keeps_needed_reduction),
		cmocka_unit_test(test_reordering_window_timer),
		cmocka_unit_test(test_rescue_retransmission),
		cmocka_unit_test(test_rule3_holes_below_highest_sack),
		cmocka_unit_test(test_rto_keeps_scoreboard),
		cmocka_unit_test(test_paws_tolerates_reordering),
		cmocka_unit_test(test_new_recovery_at_recovery_point),
		cmocka_unit_test(test_cubic_reno_friendly_alpha),
		cmocka_unit_test(test_scoreboard_ten_holes),
		cmocka_unit_test(test_no_stale_sack_in_response),
		cmocka_unit_test(test_ca_counts_sacked_data_once),
		cmocka_unit_test(test_rto_ssthresh_not_above_cwnd),
	};
	int rc;

	th_eal_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	th_eal_fini();
	return rc;
}
