/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Scripted tests of the TCP core: handshakes, data both ways, RTO,
 * FIN/RST cases, TIME_WAIT, SYN cookies, limits, zero-copy release. */

#include <stdlib.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_thash.h>

#include "tcp_harness.h"

static struct th H;
static const struct th_opts MSS1460 = { .mss = 1460 };
static uint8_t buf[256 * 1024];

#define PEER 1000u	/* peer ISN; its data starts at PEER + 1 */

static void
fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed);
}

/* Established connection with MSS 1460 and no other options. */
static uint32_t
setup(void)
{
	th_start(&H);
	return th_handshake(&H, PEER, &MSS1460);
}

static void
test_passive_handshake_options(void **st)
{
	struct th_opts o = { .mss = 1400, .has_ws = 1, .ws = 7, .sack_ok = 1,
			     .has_ts = 1, .tsval = 555 };
	struct tcp_conn_info ci;
	struct th_seg *s;

	th_config(&H);
	th_start(&H);
	assert_int_equal(tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app), 0);
	assert_int_equal(tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app),
			 -EADDRINUSE);
	th_inject(&H, F_SYN, PEER, 0, 65535, &o, NULL, 0);
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN | F_ACK);
	assert_int_equal(s->ack, PEER + 1);
	assert_int_equal(s->mss, 1460);		/* ours: MTU 1500 - 40 */
	assert_int_equal(s->ws, 3);		/* 256 KiB >> 3 fits 16 bits */
	assert_true(s->sack_ok);
	assert_true(s->has_ts);
	assert_int_equal(s->tsecr, 555);
	assert_int_equal(H.app.accepted, 0);	/* not before the ACK */
	o = (struct th_opts){ .has_ts = 1, .tsval = 556, .tsecr = s->tsval };
	th_inject(&H, F_ACK, PEER + 1, s->seq + 1, 1000, &o, NULL, 0);
	assert_int_equal(H.app.accepted, 1);
	tcp_conn_info(H.app.conn, &ci);
	assert_true(ci.sack);
	assert_true(ci.timestamps);
	assert_int_equal(ci.snd_wscale, 7);
	assert_int_equal(ci.snd_wnd, 1000u << 7);
	/* MSS: the peer's 1400 minus the 12 timestamp bytes. */
	assert_int_equal(tcp_conn_mss(H.app.conn), 1400 - 12);
	th_stop(&H);
}

static void
test_handshake_no_options_and_mss_clamp(void **st)
{
	struct th_opts big = { .mss = 9000 };
	struct th_seg *s;

	th_config(&H);
	th_start(&H);
	tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app);
	th_inject(&H, F_SYN, PEER, 0, 65535, NULL, NULL, 0);
	s = th_next(&H);
	assert_int_equal(s->mss, 1460);
	assert_int_equal(s->ws, -1);	/* not offered back */
	assert_false(s->sack_ok);
	assert_false(s->has_ts);
	th_inject(&H, F_ACK, PEER + 1, s->seq + 1, 65535, NULL, NULL, 0);
	assert_int_equal(tcp_conn_mss(H.app.conn), 536); /* RFC 9293 default */
	/* second connection: a jumbo MSS is clamped to our MTU */
	H.rport++;
	th_inject(&H, F_SYN, PEER, 0, 65535, &big, NULL, 0);
	s = th_next(&H);
	th_inject(&H, F_ACK, PEER + 1, s->seq + 1, 65535, NULL, NULL, 0);
	assert_int_equal(tcp_conn_mss(H.app.conn), 1460);
	th_stop(&H);
}

static void
test_data_in_and_delayed_ack(void **st)
{
	uint32_t iss;

	th_config(&H);
	iss = setup();
	fill(buf, 3000, 1);
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 65535, NULL, buf, 1000);
	assert_int_equal(H.app.rx_len, 1000);
	assert_memory_equal(H.app.rx, buf, 1000);
	assert_int_equal(th_pending(&H), 0);	/* ACK delayed */
	th_advance(&H, 39000);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 2000);			/* 40 ms */
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 1001);
	/* two segments: the second is ACKed at once (RFC 5681 §4.2) */
	th_inject(&H, F_ACK, PEER + 1001, iss + 1, 65535, NULL, buf + 1000,
		  1000);
	assert_int_equal(th_pending(&H), 0);
	th_inject(&H, F_ACK | F_PSH, PEER + 2001, iss + 1, 65535, NULL,
		  buf + 2000, 1000);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 3001);
	assert_int_equal(H.app.rx_len, 3000);
	assert_memory_equal(H.app.rx, buf, 3000);
	th_stop(&H);
}

static void
test_data_out_segmentation_and_acks(void **st)
{
	struct tcp_stats sts;
	struct th_seg *s;
	uint32_t iss, off = 0;

	th_config(&H);
	iss = setup();
	fill(buf, 5000, 2);
	assert_int_equal(tcp_send(H.app.conn, buf, 5000), 5000);
	assert_int_equal(th_pending(&H), 0);	/* nothing before flush */
	tcp_flush(H.app.conn);
	for (int i = 0; i < 4; i++) {
		s = th_next(&H);
		assert_int_equal(s->seq, iss + 1 + off);
		assert_int_equal(s->ack, PEER + 1);
		assert_int_equal(s->len, i < 3 ? 1460 : 620);
		assert_int_equal(s->flags, i < 3 ? F_ACK : F_ACK | F_PSH);
		assert_memory_equal(s->data, buf + off, s->len);
		off += s->len;
	}
	assert_int_equal(th_pending(&H), 0);
	th_inject(&H, F_ACK, PEER + 1, iss + 1 + 2920, 65535, NULL, NULL, 0);
	assert_int_equal(H.app.sent, 2920);
	th_inject(&H, F_ACK, PEER + 1, iss + 5001, 65535, NULL, NULL, 0);
	assert_int_equal(H.app.sent, 5000);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.retransmits, 0);
	assert_int_equal(sts.conns[TCP_ESTABLISHED], 1);
	/* nothing left in flight: no retransmission later */
	th_advance(&H, 5000000);
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

static void
test_send_window_limits(void **st)
{
	uint32_t iss;

	th_config(&H);
	iss = setup();
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 2000, NULL, NULL, 0);
	fill(buf, 5000, 3);
	tcp_send(H.app.conn, buf, 5000);
	tcp_flush(H.app.conn);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 1);
	assert_int_equal(H.seg.len, 1460);
	/* 540 left in the window: a runt is held while data is in flight
	 * (sender SWS avoidance) */
	assert_int_equal(th_pending(&H), 0);
	th_inject(&H, F_ACK, PEER + 1, iss + 1461, 4000, NULL, NULL, 0);
	EXPECT_SEG(&H, F_ACK, iss + 1461, PEER + 1);
	EXPECT_SEG(&H, F_ACK, iss + 2921, PEER + 1);
	assert_int_equal(H.seg.len, 1460);
	EXPECT_SEG(&H, F_ACK | F_PSH, iss + 4381, PEER + 1);
	assert_int_equal(H.seg.len, 620);	/* the rest, within 5461 */
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

static void
test_rto_backoff_and_recovery(void **st)
{
	struct tcp_stats sts;
	uint32_t iss;

	th_config(&H);
	iss = setup();
	fill(buf, 100, 4);
	tcp_send(H.app.conn, buf, 100);
	tcp_flush(H.app.conn);
	EXPECT_SEG(&H, F_ACK | F_PSH, iss + 1, PEER + 1);
	/* the handshake RTT sample was ~0: RTO is the 200 ms floor */
	th_advance(&H, 199000);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 2000);
	EXPECT_SEG(&H, F_ACK | F_PSH, iss + 1, PEER + 1);
	assert_memory_equal(H.seg.data, buf, 100);
	/* back-off doubles (RFC 6298 5.5) */
	th_advance(&H, 390000);
	assert_int_equal(th_pending(&H), 0);
	th_advance(&H, 12000);
	EXPECT_SEG(&H, F_ACK | F_PSH, iss + 1, PEER + 1);
	th_inject(&H, F_ACK, PEER + 1, iss + 101, 65535, NULL, NULL, 0);
	th_advance(&H, 10000000);
	assert_int_equal(th_pending(&H), 0);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.retransmits, 2);
	assert_int_equal(sts.rto_expired, 2);
	th_stop(&H);
}

static void
test_rto_exhausted_resets(void **st)
{
	th_config(&H);
	H.cfg.max_retries = 3;
	setup();
	tcp_send(H.app.conn, "x", 1);
	tcp_flush(H.app.conn);
	for (int i = 0; i < 10 && H.app.closed == 0; i++)
		th_advance(&H, 60000000);
	assert_int_equal(H.app.closed, 1);
	assert_int_equal(H.app.close_reason, TCP_CLOSE_TIMEOUT);
	/* original + 3 retransmissions, then RST */
	for (int i = 0; i < 4; i++)
		assert_int_equal(th_next(&H)->len, 1);
	assert_true(th_next(&H)->flags & F_RST);
	th_stop(&H);
}

static void
test_bad_checksum_dropped(void **st)
{
	struct rte_mbuf *m;
	struct tcp_stats sts;
	uint8_t *p;

	th_config(&H);
	th_start(&H);
	tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app);
	m = rte_pktmbuf_alloc(th_pool);
	p = (uint8_t *)rte_pktmbuf_append(m, 20);
	memset(p, 0, 20);
	p[1] = 1;		/* a SYN to port 80 with a zero checksum */
	p[3] = TH_PORT;
	p[12] = 5 << 4;
	p[13] = F_SYN;
	tcp_input(H.s, m, TH_REMOTE_IP, TH_LOCAL_IP, H.now);
	assert_int_equal(th_pending(&H), 0);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.drops[TCP_DROP_CKSUM], 1);
	/* the same bytes with the NIC's "good" flag are taken */
	m = rte_pktmbuf_alloc(th_pool);
	p = (uint8_t *)rte_pktmbuf_append(m, 20);
	memset(p, 0, 20);
	p[1] = 1;
	p[3] = TH_PORT;
	p[12] = 5 << 4;
	p[13] = F_SYN;
	m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	tcp_input(H.s, m, TH_REMOTE_IP, TH_LOCAL_IP, H.now);
	assert_int_equal(th_next(&H)->flags, F_SYN | F_ACK);
	th_stop(&H);
}

static void
test_active_open(void **st)
{
	struct th_opts o = { .mss = 1200, .has_ws = 1, .ws = 2, .sack_ok = 1,
			     .has_ts = 1, .tsval = 42 };
	struct tcp_conn *c;
	struct th_seg *s;
	uint32_t iss;

	th_config(&H);
	th_start(&H);
	assert_int_equal(tcp_connect(H.s, TH_REMOTE_IP, TH_RPORT, &th_ops,
				     &H.app, &c), 0);
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN);
	assert_int_equal(s->dport, TH_RPORT);
	assert_int_equal(s->mss, 1460);
	assert_int_equal(s->ws, 3);
	assert_true(s->sack_ok && s->has_ts);
	assert_int_equal(s->tsecr, 0);
	iss = s->seq;
	/* data queued before the handshake completes goes after it */
	assert_int_equal(tcp_send(c, "hello", 5), 5);
	H.lport = s->sport;
	o.tsecr = s->tsval;
	th_inject(&H, F_SYN | F_ACK, PEER, iss + 1, 1000, &o, NULL, 0);
	assert_int_equal(H.app.connected, 1);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	s = th_next(&H);	/* the ACK carries the queued data */
	assert_int_equal(s->flags, F_ACK | F_PSH);
	assert_int_equal(s->seq, iss + 1);
	assert_int_equal(s->ack, PEER + 1);
	assert_int_equal(s->len, 5);
	assert_true(s->has_ts);
	assert_int_equal(s->tsecr, 42);
	assert_int_equal(tcp_conn_mss(c), 1200 - 12);
	tcp_abort(c);
	s = th_next(&H);
	assert_int_equal(s->flags, F_RST | F_ACK);
	assert_int_equal(s->seq, iss + 6);
	th_stop(&H);
}

/* A peer that answers without options: we fall back to none of them. */
static void
test_active_open_peer_without_options(void **st)
{
	struct tcp_conn_info ci;
	struct tcp_conn *c;
	struct th_seg *s;
	uint32_t iss;

	iss = th_open_active(&H, &c);
	th_inject(&H, F_SYN | F_ACK, PEER, iss + 1, 5000, NULL, NULL, 0);
	assert_int_equal(H.app.connected, 1);
	s = th_next(&H);
	assert_int_equal(s->flags, F_ACK);
	assert_false(s->has_ts);
	assert_int_equal(s->nr_sack, 0);
	/* no window scaling: the field is the window, capped at 64 KiB */
	assert_int_equal(s->win, 65535);
	tcp_conn_info(c, &ci);
	assert_false(ci.sack);
	assert_false(ci.timestamps);
	assert_int_equal(ci.snd_wscale, 0);
	assert_int_equal(ci.rcv_wscale, 0);
	assert_int_equal(ci.snd_wnd, 5000);
	assert_int_equal(tcp_conn_mss(c), 536);
	tcp_abort(c);
	th_drain(&H);
	th_stop(&H);
}

static void
test_active_open_refused_and_syn_retries(void **st)
{
	struct tcp_conn *c;
	struct th_seg *s;
	uint32_t iss;

	iss = th_open_active(&H, &c);
	th_advance(&H, 1001000);
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN);
	assert_int_equal(s->seq, iss);
	/* RST that does not ACK our SYN is ignored */
	th_inject(&H, F_RST | F_ACK, 0, iss + 7, 0, NULL, NULL, 0);
	assert_int_equal(H.app.closed, 0);
	th_inject(&H, F_RST | F_ACK, 0, iss + 1, 0, NULL, NULL, 0);
	assert_int_equal(H.app.closed, 1);
	assert_int_equal(H.app.close_reason, TCP_CLOSE_REFUSED);
	/* and a SYN nobody answers times out */
	memset(&H.app, 0, sizeof(H.app));
	assert_int_equal(tcp_connect(H.s, TH_REMOTE_IP, TH_RPORT, &th_ops,
				     &H.app, &c), 0);
	for (int i = 0; i < 400 && !H.app.closed; i++)
		th_advance(&H, 1000000);
	assert_int_equal(H.app.closed, 1);
	assert_int_equal(H.app.close_reason, TCP_CLOSE_TIMEOUT);
	th_drain(&H);
	th_stop(&H);
}

static void
on_release(void *arg)
{
	(*(int *)arg)++;
}

static void
test_zero_copy_release_when_all_acked(void **st)
{
	static uint8_t zc[4000];
	struct iovec iov[2] = { { zc, 1000 }, { zc + 1000, 3000 } };
	int released = 0, released2 = 0;
	uint32_t iss, off = 0;
	struct th_seg *s;

	th_config(&H);
	iss = setup();
	fill(zc, sizeof(zc), 9);
	assert_int_equal(tcp_send_iov(H.app.conn, iov, 2, on_release,
				      &released), 0);
	tcp_flush(H.app.conn);
	for (int i = 0; i < 3; i++) {
		s = th_next(&H);
		assert_int_equal(s->seq, iss + 1 + off);
		assert_int_equal(s->len, i < 2 ? 1460 : 1080);
		assert_memory_equal(s->data, zc + off, s->len);
		off += s->len;
	}
	th_inject(&H, F_ACK, PEER + 1, iss + 1 + 2920, 65535, NULL, NULL, 0);
	assert_int_equal(released, 0);
	/* by reference, not copied: a retransmission shows a change */
	zc[2920] ^= 0xff;
	th_advance(&H, 1000000);
	s = th_next(&H);
	assert_int_equal(s->seq, iss + 1 + 2920);
	assert_int_equal(s->data[0], zc[2920]);
	th_inject(&H, F_ACK, PEER + 1, iss + 4000, 65535, NULL, NULL, 0);
	assert_int_equal(released, 0);		/* one byte still unacked */
	th_inject(&H, F_ACK, PEER + 1, iss + 4001, 65535, NULL, NULL, 0);
	assert_int_equal(released, 1);
	assert_int_equal(H.app.sent, 4000);
	/* a connection torn down releases what it still holds */
	assert_int_equal(tcp_send_iov(H.app.conn, iov, 1, on_release,
				      &released2), 0);
	tcp_flush(H.app.conn);
	th_drain(&H);
	tcp_abort(H.app.conn);
	assert_int_equal(released2, 1);
	th_stop(&H);
}

/* Received mbufs sent back by reference: same bytes, freed on ACK. */
static void
test_echo_received_mbufs_by_reference(void **st)
{
	struct th_seg *s;
	uint32_t iss;

	th_config(&H);
	iss = setup();
	H.app.echo_mbuf = 1;
	fill(buf, 3000, 12);
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 65535, NULL, buf, 1400);
	s = th_next(&H);
	assert_int_equal(s->seq, iss + 1);
	assert_int_equal(s->ack, PEER + 1401);
	assert_int_equal(s->len, 1400);
	assert_memory_equal(s->data, buf, 1400);
	th_inject(&H, F_ACK, PEER + 1401, iss + 1401, 65535, NULL, buf + 1400,
		  100);
	s = th_next(&H);
	assert_int_equal(s->seq, iss + 1401);
	assert_memory_equal(s->data, buf + 1400, 100);
	/* mixing with copies: a copy never lands in an app's mbuf */
	tcp_send(H.app.conn, "tail", 4);
	tcp_flush(H.app.conn);
	s = th_next(&H);
	assert_int_equal(s->len, 4);
	assert_memory_equal(s->data, "tail", 4);
	th_inject(&H, F_ACK, PEER + 1501, iss + 1505, 65535, NULL, NULL, 0);
	assert_int_equal(H.app.sent, 1504);
	th_stop(&H);	/* every mbuf is back in the pool */
}

/* A segment the IP layer refuses is not counted as sent: it goes out
 * later as new data, brought back by the timer. */
static void
test_refused_output_is_retried(void **st)
{
	struct tcp_stats sts;
	uint32_t iss;

	th_config(&H);
	iss = setup();
	H.refuse_out = 1;
	tcp_send(H.app.conn, "abc", 3);
	tcp_flush(H.app.conn);
	assert_int_equal(th_pending(&H), 0);
	H.refuse_out = 0;
	th_advance(&H, 1100000);
	EXPECT_SEG(&H, F_ACK | F_PSH, iss + 1, PEER + 1);
	assert_int_equal(H.seg.len, 3);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.retransmits, 0);
	th_inject(&H, F_ACK, PEER + 1, iss + 4, 65535, NULL, NULL, 0);
	assert_int_equal(H.app.sent, 3);
	th_stop(&H);
}

static void
test_send_memory_limit(void **st)
{
	struct iovec iov = { buf, 5000 };
	int released = 0;

	th_config(&H);
	H.cfg.snd_buf = 10000;
	setup();
	fill(buf, 20000, 5);
	assert_int_equal(tcp_send(H.app.conn, buf, 20000), 10000);
	assert_int_equal(tcp_send_space(H.app.conn), 0);
	assert_int_equal(tcp_send_iov(H.app.conn, &iov, 1, on_release,
				      &released), -ENOBUFS);
	assert_int_equal(released, 0);
	th_stop(&H);
}

static void
test_receive_memory_limit_manual(void **st)
{
	struct tcp_stats sts;
	struct th_seg *s;
	uint32_t iss;

	th_config(&H);
	H.cfg.rcv_buf = 4096;
	H.cfg.no_wscale = true;
	iss = setup();
	tcp_set_manual_recv(H.app.conn, true);
	fill(buf, 8192, 6);
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 65535, NULL, buf, 1460);
	th_inject(&H, F_ACK, PEER + 1461, iss + 1, 65535, NULL, buf + 1460,
		  1460);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 2921);
	assert_int_equal(s->win, 4096 - 2920);
	/* beyond the offered window: trimmed to it */
	th_inject(&H, F_ACK, PEER + 2921, iss + 1, 65535, NULL, buf + 2920,
		  1460);
	assert_int_equal(H.app.rx_len, 4096);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 4097);
	assert_int_equal(s->win, 0);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.drops[TCP_DROP_RCV_MEM], 1);
	/* the app frees what it held: window update */
	tcp_recved(H.app.conn, 4096);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 4097);
	assert_int_equal(s->win, 4096);
	assert_memory_equal(H.app.rx, buf, 4096);
	th_stop(&H);
}

/* TSO: one large segment per window-allowed run, marked for the port. */
static void
test_tso_large_segments(void **st)
{
	struct rte_ipv4_hdr ip = { 0 };
	struct rte_tcp_hdr *t;
	struct rte_mbuf *m;
	uint8_t got[10000];
	uint32_t iss, hl;

	th_config(&H);
	H.cfg.tx_cksum_offload = true;
	H.cfg.tso_max = 65000;
	th_start(&H);
	tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app);
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	m = H.cap[H.cap_head++ % TH_CAP];
	iss = rte_be_to_cpu_32(rte_pktmbuf_mtod(m, struct rte_tcp_hdr *)
			       ->sent_seq);
	rte_pktmbuf_free(m);
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 65535, NULL, NULL, 0);
	fill(buf, 30000, 8);
	tcp_send(H.app.conn, buf, 10000);
	tcp_flush(H.app.conn);
	assert_int_equal(th_pending(&H), 1);
	m = H.cap[H.cap_head++ % TH_CAP];
	t = rte_pktmbuf_mtod(m, struct rte_tcp_hdr *);
	hl = (t->data_off >> 4) * 4;
	assert_int_equal(m->pkt_len - hl, 10000);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM);
	assert_int_equal(m->tso_segsz, 1460);
	assert_true(m->nb_segs <= 32);
	ip.version_ihl = 0x45;
	ip.next_proto_id = IPPROTO_TCP;
	ip.src_addr = TH_LOCAL_IP;
	ip.dst_addr = TH_REMOTE_IP;
	assert_int_equal(t->cksum,
			 rte_ipv4_phdr_cksum(&ip, RTE_MBUF_F_TX_TCP_SEG));
	assert_memory_equal(rte_pktmbuf_read(m, hl, 10000, got), buf, 10000);
	rte_pktmbuf_free(m);
	/* the congestion window still rules: IW10 leaves 4600 bytes */
	tcp_send(H.app.conn, buf + 10000, 20000);
	tcp_flush(H.app.conn);
	assert_int_equal(th_pending(&H), 1);
	m = H.cap[H.cap_head++ % TH_CAP];
	assert_int_equal(m->pkt_len - hl, 4600);
	rte_pktmbuf_free(m);
	th_stop(&H);
}

/* A connection on a port taking max_segs mbufs per packet; zc (10 x
 * piece bytes, filled from seed) sent zero-copy as 10 pieces and
 * flushed; *released counts their release. Returns the ISS. */
static uint32_t
send_ten_pieces(uint16_t max_segs, uint8_t *zc, size_t piece, int seed,
		int *released)
{
	struct iovec iov[10];
	uint32_t iss;

	th_config(&H);
	H.cfg.tx_max_segs = max_segs;
	iss = setup();
	fill(zc, 10 * piece, seed);
	for (int i = 0; i < 10; i++) {
		iov[i].iov_base = zc + piece * i;
		iov[i].iov_len = piece;
	}
	assert_int_equal(tcp_send_iov(H.app.conn, iov, 10, on_release,
				      released), 0);
	tcp_flush(H.app.conn);
	return iss;
}

/* The port's mbufs-per-packet limit shortens a segment, never breaks it. */
static void
test_tx_max_segs_limits_chain(void **st)
{
	static uint8_t zc[1000];
	int released = 0;
	uint32_t iss = send_ten_pieces(3, zc, 100, 3, &released);

	for (int i = 0; i < 5; i++) {
		struct th_seg *s = th_next(&H);

		assert_int_equal(s->seq, iss + 1 + 200 * i);
		assert_int_equal(s->len, 200);	/* header + 2 references */
		assert_memory_equal(s->data, zc + 200 * i, 200);
		assert_int_equal(s->flags, i < 4 ? F_ACK : F_ACK | F_PSH);
	}
	assert_int_equal(th_pending(&H), 0);
	th_inject(&H, F_ACK, PEER + 1, iss + 1001, 65535, NULL, NULL, 0);
	assert_int_equal(released, 1);
	th_stop(&H);
}

/* A port without multi-segment TX (tx_max_segs 1, net_af_xdp): every
 * frame is one mbuf holding its whole payload, zero-copy pieces copied
 * in, full-sized segments all the same; the pieces are released on ACK. */
static void
test_tx_one_seg_port_copies_payload(void **st)
{
	static uint8_t zc[3000];
	int released = 0;
	uint32_t iss = send_ten_pieces(1, zc, 300, 5, &released), off = 0;

	for (int i = 0; i < 3; i++) {
		struct th_seg *s = th_next(&H);

		assert_int_equal(s->nb_segs, 1);
		assert_int_equal(s->seq, iss + 1 + off);
		assert_int_equal(s->len, i < 2 ? 1460 : 80);
		assert_memory_equal(s->data, zc + off, s->len);
		off += s->len;
	}
	assert_int_equal(th_pending(&H), 0);
	assert_int_equal(released, 0);
	th_inject(&H, F_ACK, PEER + 1, iss + 1 + 3000, 65535, NULL, NULL, 0);
	assert_int_equal(released, 1);
	th_stop(&H);
}

/* Active open picks source ports whose symmetric Toeplitz hash of the
 * reply direction lands on our queue (default RETA: i % queues). */
static void
test_connect_port_lands_on_rss_queue(void **st)
{
	static const uint8_t key[40] = {
		0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
		0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
		0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
		0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	};
	unsigned int other = 0;

	th_config(&H);
	H.cfg.rss_key = key;
	H.cfg.rss_nb_queues = 4;
	H.cfg.rss_queue = 2;
	th_start(&H);
	for (int i = 0; i < 32; i++) {
		struct tcp_conn *c;
		struct th_seg *s;
		uint32_t in[3], out[3];

		assert_int_equal(tcp_connect(H.s, TH_REMOTE_IP, 8080, &th_ops,
					     &H.app, &c), 0);
		s = th_next(&H);
		/* as the NIC sees the reply: remote -> local */
		in[0] = rte_be_to_cpu_32(TH_REMOTE_IP);
		in[1] = rte_be_to_cpu_32(TH_LOCAL_IP);
		in[2] = (8080u << 16) | s->sport;
		assert_int_equal((rte_softrss(in, 3, key) % 128) % 4, 2);
		/* and our own direction hashes the same (symmetric key) */
		out[0] = in[1];
		out[1] = in[0];
		out[2] = ((uint32_t)s->sport << 16) | 8080u;
		assert_int_equal(rte_softrss(out, 3, key),
				 rte_softrss(in, 3, key));
		/* ports that were skipped really hash elsewhere */
		in[2] = (8080u << 16) | (uint16_t)(s->sport + 1);
		if ((rte_softrss(in, 3, key) % 128) % 4 != 2)
			other++;
		tcp_abort(c);
	}
	assert_true(other > 0);
	th_stop(&H);
}

/* With the offload flag the segment carries the pseudo-header sum and
 * RTE_MBUF_F_TX_TCP_CKSUM, as the port expects (tcp.h output contract). */
static void
test_tx_checksum_offload_contract(void **st)
{
	struct rte_mbuf *m;
	struct rte_tcp_hdr *t;
	struct rte_ipv4_hdr ip = { 0 };

	th_config(&H);
	H.cfg.tx_cksum_offload = true;
	th_start(&H);
	tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app);
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	assert_int_equal(th_pending(&H), 1);
	m = H.cap[H.cap_head++ % TH_CAP];
	t = rte_pktmbuf_mtod(m, struct rte_tcp_hdr *);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM);
	ip.version_ihl = 0x45;
	ip.next_proto_id = IPPROTO_TCP;
	ip.src_addr = TH_LOCAL_IP;
	ip.dst_addr = TH_REMOTE_IP;
	ip.total_length = rte_cpu_to_be_16(20 + m->pkt_len);
	assert_int_equal(t->cksum, rte_ipv4_phdr_cksum(&ip, 0));
	assert_int_equal(m->l4_len, (t->data_off >> 4) * 4);
	rte_pktmbuf_free(m);
	th_stop(&H);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_passive_handshake_options),
		cmocka_unit_test(test_handshake_no_options_and_mss_clamp),
		cmocka_unit_test(test_data_in_and_delayed_ack),
		cmocka_unit_test(test_data_out_segmentation_and_acks),
		cmocka_unit_test(test_send_window_limits),
		cmocka_unit_test(test_rto_backoff_and_recovery),
		cmocka_unit_test(test_rto_exhausted_resets),
		cmocka_unit_test(test_bad_checksum_dropped),
		cmocka_unit_test(test_active_open),
		cmocka_unit_test(test_active_open_peer_without_options),
		cmocka_unit_test(test_active_open_refused_and_syn_retries),
		cmocka_unit_test(test_zero_copy_release_when_all_acked),
		cmocka_unit_test(test_echo_received_mbufs_by_reference),
		cmocka_unit_test(test_refused_output_is_retried),
		cmocka_unit_test(test_send_memory_limit),
		cmocka_unit_test(test_receive_memory_limit_manual),
		cmocka_unit_test(test_connect_port_lands_on_rss_queue),
		cmocka_unit_test(test_tx_checksum_offload_contract),
		cmocka_unit_test(test_tso_large_segments),
		cmocka_unit_test(test_tx_max_segs_limits_chain),
		cmocka_unit_test(test_tx_one_seg_port_copies_payload),
	};

	int rc;

	th_eal_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	th_eal_fini();
	return rc;
}
