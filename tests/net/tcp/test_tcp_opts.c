/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Option edge cases the other scripted tests leave out: a window scale
 * above 14 (RFC 7323 §2.3), as many SACK blocks as fit beside the
 * timestamp option and without it (RFC 2018 §3), and the options of
 * the ACK that follows each, and the stack's switches that turn the
 * options off; malformed and unacceptable segments counted by reason. */

#include <stdlib.h>
#include <string.h>

#include "tcp_harness.h"

static struct th H;
static uint8_t buf[64 * 1024];

#define PEER 1000u
#define MSS 1460u

static const struct th_opts MSS1460 = { .mss = 1460 };

/* RFC 7323 §2.3: a shift count above 14 is taken as 14. */
static void
test_window_scale_above_14(void **st)
{
	struct th_opts o = { .mss = 1460, .has_ws = 1, .ws = 15 };
	struct tcp_conn_info ci;
	struct th_seg *s;

	th_config(&H);
	th_start(&H);
	tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app);
	th_inject(&H, F_SYN, PEER, 0, 65535, &o, NULL, 0);
	s = th_next(&H);
	assert_true(s->ws >= 0);
	th_inject(&H, F_ACK, PEER + 1, s->seq + 1, 3, NULL, NULL, 0);
	tcp_conn_info(H.app.conn, &ci);
	assert_int_equal(ci.snd_wscale, 14);
	assert_int_equal(ci.snd_wnd, 3u << 14);
	th_stop(&H);
}

/* Five out-of-order runs with holes between: the ACK carries as many
 * SACK blocks as fit in 40 bytes of options, newest first. */
static void
sack_blocks_fit(bool ts)
{
	struct th_opts o = { .mss = 1460, .sack_ok = 1, .has_ts = ts,
			     .tsval = 100 };
	struct th_opts d = { .has_ts = ts, .tsval = 101 };
	struct th_seg *s = NULL;
	uint32_t iss;
	int want = ts ? 3 : 4;

	th_config(&H);
	th_start(&H);
	iss = th_handshake(&H, PEER, &o);
	if (ts)
		d.tsecr = 0;	/* any echo is fine for data */
	for (unsigned int i = 0; i < 5; i++) {
		uint32_t off = (2 * i + 1) * MSS;

		th_inject(&H, F_ACK, PEER + 1 + off, iss + 1, 65535, &d,
			  buf + off, MSS);
		s = th_next(&H);
		assert_int_equal(s->ack, PEER + 1);
		assert_int_equal(s->has_ts, ts);
		assert_int_equal(s->nr_sack, RTE_MIN((int)i + 1, want));
		/* newest first (RFC 2018 §4) */
		TH_SACK_IS(s, 0, PEER + 1 + off, PEER + 1 + off + MSS);
	}
	/* then the most recent ones after it */
	for (int b = 1; b < want; b++)
		assert_int_equal(s->sack[b][0],
				 PEER + 1 + (2 * (4 - b) + 1) * MSS);
	th_drain(&H);
	th_stop(&H);
}

static void
test_sack_blocks_beside_timestamps(void **st)
{
	sack_blocks_fit(true);
}

static void
test_sack_blocks_without_timestamps(void **st)
{
	sack_blocks_fit(false);
}

/* The stack's switches (no_sack, no_timestamps, no_wscale): nothing is
 * offered even to a peer offering everything, in either open, and
 * nothing of it is used afterwards. */
static void
test_options_switched_off(void **st)
{
	struct th_opts o = { .mss = 1460, .has_ws = 1, .ws = 7, .sack_ok = 1,
			     .has_ts = 1, .tsval = 9 };
	struct tcp_conn_info ci;
	struct tcp_conn *c;
	struct th_seg *s;
	uint32_t iss;

	th_config(&H);
	H.cfg.no_sack = H.cfg.no_timestamps = H.cfg.no_wscale = true;
	th_start(&H);
	tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app);
	th_inject(&H, F_SYN, PEER, 0, 65535, &o, NULL, 0);
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN | F_ACK);
	assert_int_equal(s->mss, 1460);
	assert_int_equal(s->ws, -1);
	assert_false(s->sack_ok);
	assert_false(s->has_ts);
	iss = s->seq;
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 100, NULL, NULL, 0);
	tcp_conn_info(H.app.conn, &ci);
	assert_false(ci.sack);
	assert_false(ci.timestamps);
	assert_int_equal(ci.snd_wscale, 0);
	assert_int_equal(ci.snd_wnd, 100);	/* not scaled by the 7 */
	assert_int_equal(tcp_conn_mss(H.app.conn), 1460);
	/* out of order data: a duplicate ACK without SACK blocks */
	th_inject(&H, F_ACK, PEER + 1 + MSS, iss + 1, 100, NULL, buf, MSS);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1);
	assert_int_equal(s->nr_sack, 0);
	assert_false(s->has_ts);
	assert_int_equal(s->win, 65535);	/* unscaled, capped */
	/* active open: a SYN with the MSS only */
	assert_int_equal(tcp_connect(H.s, TH_REMOTE_IP, 9000, &th_ops,
				     &H.app, &c), 0);
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN);
	assert_int_equal(s->mss, 1460);
	assert_int_equal(s->ws, -1);
	assert_false(s->sack_ok);
	assert_false(s->has_ts);
	tcp_abort(c);
	th_drain(&H);
	th_stop(&H);
}

/* One run: IW10 out, an ACK for nothing new carrying bogus SACK blocks
 * (or none), then real blocks starting SACK recovery. Records what was
 * sent after each ACK (sequence offsets, -1 between ACKs). */
static unsigned int
sack_run(bool bogus, int64_t *trace, unsigned int cap)
{
	const struct th_opts sopt = { .mss = 1460, .sack_ok = 1 };
	struct th_opts o = { .nr_sack = 3 };
	struct tcp_conn_info ci;
	unsigned int n = 0;
	uint32_t iss, b;

	th_config(&H);
	H.cfg.no_tlp = true;
	H.cfg.cc = TCP_CC_NEWRENO;
	th_start(&H);
	iss = th_handshake(&H, PEER, &sopt);
	b = iss + 1;
	th_send_and_take(&H, buf, 30 * MSS, iss, 10, MSS);
	o.sack[0][0] = b + 20 * MSS;	/* never sent */
	o.sack[0][1] = b + 24 * MSS;
	o.sack[1][0] = b + 9 * MSS;	/* reversed */
	o.sack[1][1] = b + 5 * MSS;
	o.sack[2][0] = b + 9 * MSS;	/* straddles what was sent */
	o.sack[2][1] = b + 12 * MSS;
	th_inject(&H, F_ACK, PEER + 1, b, 65535, bogus ? &o : NULL, NULL, 0);
	tcp_conn_info(H.app.conn, &ci);
	assert_false(ci.in_recovery);
	for (unsigned int step = 0; step < 3; step++) {
		while (th_pending(&H) > 0) {
			assert_true(n < cap);
			trace[n++] = th_next(&H)->seq - b;
		}
		assert_true(n < cap);
		trace[n++] = -1;
		/* segments 2-4 SACKed (1 lost), then 2-8 */
		o.nr_sack = 1;
		o.sack[0][0] = b + 1 * MSS;
		o.sack[0][1] = b + (step == 0 ? 4 : 8) * MSS;
		if (step < 2)
			th_inject(&H, F_ACK, PEER + 1, b, 65535, &o, NULL, 0);
	}
	tcp_conn_info(H.app.conn, &ci);
	assert_true(ci.in_recovery);
	th_drain(&H);
	th_stop(&H);
	return n;
}

/* SACK blocks that cannot be (beyond what was sent, reversed) are
 * ignored (RFC 6675 §4, RFC 2883): the ACK carrying them counts as a
 * plain duplicate ACK, resends nothing, and the recovery real blocks
 * start afterwards runs exactly as without them. */
static void
test_bogus_sack_blocks_ignored(void **st)
{
	int64_t with[64], without[64];
	unsigned int nw, nwo;

	nw = sack_run(true, with, RTE_DIM(with));
	nwo = sack_run(false, without, RTE_DIM(without));
	assert_int_equal(nw, nwo);
	assert_memory_equal(with, without, nw * sizeof(with[0]));
	assert_true(with[0] != 0);	/* segment 1 not resent at first */
	assert_true(nw > 4);
}

/* A raw segment of len bytes to our port (checksum taken as verified
 * by the NIC: what is checked here comes after it). */
static int
raw_in(const uint8_t *seg, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(th_pool);
	uint8_t *p;

	assert_non_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	assert_non_null(p);
	memcpy(p, seg, len);
	m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	return tcp_input(H.s, m, TH_REMOTE_IP, TH_LOCAL_IP, H.now);
}

static uint64_t
drops(enum tcp_drop_reason r)
{
	struct tcp_stats sts;

	tcp_stack_stats(H.s, &sts);
	return sts.drops[r];
}

/* Issue 3: drops are counted by reason. Each malformed or unacceptable
 * segment moves exactly its own counter. */
static void
test_drop_reasons_counted(void **st)
{
	uint8_t seg[64] = { 0 };
	uint32_t iss;

	th_config(&H);
	th_start(&H);
	iss = th_handshake(&H, PEER, &MSS1460);
	seg[3] = TH_PORT;
	seg[12] = 5 << 4;
	seg[13] = F_SYN;
	/* shorter than a TCP header */
	assert_int_equal(raw_in(seg, 19), -EINVAL);
	assert_int_equal(drops(TCP_DROP_SHORT), 1);
	/* data offset below 5 words, and past the segment */
	seg[12] = 4 << 4;
	assert_int_equal(raw_in(seg, 20), -EINVAL);
	seg[12] = 8 << 4;
	assert_int_equal(raw_in(seg, 24), -EINVAL);
	assert_int_equal(drops(TCP_DROP_SHORT), 3);
	/* an option whose length runs past the header */
	seg[12] = 6 << 4;
	seg[20] = 2;	/* MSS */
	seg[21] = 8;
	assert_int_equal(raw_in(seg, 24), -EINVAL);
	assert_int_equal(drops(TCP_DROP_SHORT), 4);
	assert_int_equal(th_pending(&H), 0);
	/* data far beyond the window: dropped, ACKed (RFC 9293 §3.10.7.4) */
	th_inject(&H, F_ACK, PEER + 1 + 10000000, iss + 1, 65535, NULL, "x",
		  1);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 1);
	assert_int_equal(drops(TCP_DROP_OUT_OF_WINDOW), 1);
	/* an ACK of data never sent (RFC 5961 §5) */
	th_inject(&H, F_ACK, PEER + 1, iss + 5000, 65535, NULL, NULL, 0);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 1);
	assert_int_equal(drops(TCP_DROP_BAD_ACK), 1);
	assert_int_equal(H.app.rx_len, 0);
	assert_int_equal(drops(TCP_DROP_SHORT), 4);
	assert_int_equal(drops(TCP_DROP_OUT_OF_WINDOW), 1);
	th_stop(&H);
}

/* Traffic counters (issue 3: packets, retransmits) count exactly what
 * crossed: segments each way, payload bytes out (retransmissions
 * included) and in (delivered), resets received. */
static void
test_traffic_counters(void **st)
{
	struct tcp_stats a;
	uint32_t iss;

	th_config(&H);
	H.cfg.no_tlp = true;
	th_start(&H);
	iss = th_handshake(&H, PEER, &MSS1460);
	tcp_stack_stats(H.s, &a);
	assert_int_equal(a.seg_in, 2);		/* SYN, ACK */
	assert_int_equal(a.seg_out, 1);		/* SYN-ACK */
	assert_int_equal(a.passive_opens, 1);
	assert_int_equal(tcp_send(H.app.conn, buf, 3000), 3000);
	tcp_flush(H.app.conn);
	th_drain(&H);
	th_inject(&H, F_ACK, PEER + 1, iss + 1 + 2920, 65535, NULL, NULL, 0);
	th_advance(&H, 1100000);		/* the last 80 bytes again */
	assert_int_equal(th_next(&H)->len, 80);
	th_inject(&H, F_ACK | F_PSH, PEER + 1, iss + 3001, 65535, NULL, "hi",
		  2);
	th_inject(&H, F_RST, PEER + 3, 0, 0, NULL, NULL, 0);
	tcp_stack_stats(H.s, &a);
	assert_int_equal(a.seg_out, 1 + 3 + 1);
	assert_int_equal(a.bytes_out, 3000 + 80);
	assert_int_equal(a.retransmits, 1);
	assert_int_equal(a.seg_in, 2 + 3);
	assert_int_equal(a.bytes_in, 2);
	assert_int_equal(a.resets_in, 1);
	assert_int_equal(a.resets_out, 0);
	assert_int_equal(H.app.close_reason, TCP_CLOSE_RESET);
	th_drain(&H);
	th_stop(&H);
}

/* No mbuf for a header (pool empty): counted as NOMEM, nothing is lost;
 * the data goes out, once, when the timer brings the stack back. */
static void
test_nomem_counted_and_retried(void **st)
{
	static struct rte_mbuf *hold[40000];
	struct tcp_stats sts;
	struct th_seg *s;
	unsigned int n = 0;
	uint32_t iss;

	th_config(&H);
	H.cfg.no_tlp = true;
	th_start(&H);
	iss = th_handshake(&H, PEER, &MSS1460);
	assert_int_equal(tcp_send(H.app.conn, "queued", 6), 6);
	while (n < RTE_DIM(hold) && (hold[n] = rte_pktmbuf_alloc(th_pool)))
		n++;
	assert_true(n < RTE_DIM(hold));
	tcp_flush(H.app.conn);
	assert_int_equal(th_pending(&H), 0);
	tcp_stack_stats(H.s, &sts);
	assert_true(sts.drops[TCP_DROP_NOMEM] >= 1);
	while (n > 0)
		rte_pktmbuf_free(hold[--n]);
	th_advance(&H, 1100000);
	s = th_next(&H);
	assert_int_equal(s->seq, iss + 1);
	assert_int_equal(s->len, 6);
	assert_memory_equal(s->data, "queued", 6);
	assert_int_equal(th_pending(&H), 0);
	th_inject(&H, F_ACK, PEER + 1, iss + 7, 65535, NULL, NULL, 0);
	assert_int_equal(H.app.sent, 6);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.retransmits, 0);
	th_stop(&H);
}

/* A peer that shrinks its window below what is in flight (RFC 9293
 * §3.8.6.2.1 says it should not, a sender must cope): nothing new is
 * sent past the new edge, nothing is lost, and when the window opens
 * again the rest flows. */
static void
test_peer_shrinks_window(void **st)
{
	uint32_t iss, next, got = 0;
	struct th_seg *s;

	th_config(&H);
	H.cfg.no_tlp = true;
	th_start(&H);
	iss = th_handshake(&H, PEER, &MSS1460);
	for (size_t i = 0; i < 20 * MSS; i++)
		buf[i] = (uint8_t)(i * 3 + 1);
	th_send_and_take(&H, buf, 20 * MSS, iss, 10, MSS);
	/* two segments ACKed, window cut to one segment: edge at 3 MSS,
	 * below the 10 MSS already sent */
	th_inject(&H, F_ACK, PEER + 1, iss + 1 + 2 * MSS, MSS, NULL, NULL, 0);
	assert_int_equal(th_pending(&H), 0);
	th_inject(&H, F_ACK, PEER + 1, iss + 1 + 10 * MSS, 0, NULL, NULL, 0);
	assert_int_equal(th_pending(&H), 0);
	/* open again: the other ten segments, in order, once each */
	th_inject(&H, F_ACK, PEER + 1, iss + 1 + 10 * MSS, 65535, NULL, NULL,
		  0);
	next = iss + 1 + 10 * MSS;
	for (int i = 0; i < 1000 && got < 10 * MSS; i++) {
		while (th_pending(&H) > 0) {
			s = th_next(&H);
			assert_int_equal(s->seq, next);
			assert_memory_equal(s->data,
					    buf + (s->seq - iss - 1), s->len);
			next += s->len;
			got += s->len;
		}
		th_inject(&H, F_ACK, PEER + 1, next, 65535, NULL, NULL, 0);
	}
	assert_int_equal(got, 10 * MSS);
	assert_int_equal(H.app.sent, 20 * MSS);
	th_stop(&H);
}

/* RFC 5961 §5.2: an ACK older than SND.UNA - MAX.SND.WND is refused
 * with a (challenge) ACK and its data discarded; an old ACK inside that
 * range is only a duplicate: its data is taken (RFC 9293 §3.10.7.4). */
static void
test_old_ack_bounds(void **st)
{
	struct tcp_stats sts;
	uint32_t iss, una;

	th_config(&H);
	H.cfg.no_tlp = true;
	th_start(&H);
	iss = th_handshake(&H, PEER, &MSS1460);
	/* move SND.UNA 60 segments on; MAX.SND.WND is the 65535 of the
	 * handshake */
	for (int i = 0; i < 6; i++) {
		th_send_and_take(&H, buf, 10 * MSS, iss + 10 * MSS * i, 10,
				 MSS);
		th_inject(&H, F_ACK, PEER + 1, iss + 1 + 10 * MSS * (i + 1),
			  20000, NULL, NULL, 0);
	}
	una = iss + 1 + 60 * MSS;
	th_drain(&H);
	/* old, but within MAX.SND.WND: a duplicate, the data is taken */
	th_inject(&H, F_ACK | F_PSH, PEER + 1, una - 60000, 20000, NULL, "ok",
		  2);
	assert_int_equal(H.app.rx_len, 2);
	th_drain(&H);
	/* older than that: refused, data discarded, ACK sent */
	th_inject(&H, F_ACK | F_PSH, PEER + 3, una - 70000, 20000, NULL, "no",
		  2);
	assert_int_equal(H.app.rx_len, 2);
	EXPECT_SEG(&H, F_ACK, una, PEER + 3);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.drops[TCP_DROP_BAD_ACK], 1);
	th_stop(&H);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_scale_above_14),
		cmocka_unit_test(test_sack_blocks_beside_timestamps),
		cmocka_unit_test(test_sack_blocks_without_timestamps),
		cmocka_unit_test(test_options_switched_off),
		cmocka_unit_test(test_bogus_sack_blocks_ignored),
		cmocka_unit_test(test_drop_reasons_counted),
		cmocka_unit_test(test_traffic_counters),
		cmocka_unit_test(test_nomem_counted_and_retried),
		cmocka_unit_test(test_peer_shrinks_window),
		cmocka_unit_test(test_old_ack_bounds),
	};
	int rc;

	th_eal_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	th_eal_fini();
	return rc;
}
