/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Scripted tests of teardown and defence: FIN/half-close, TIME_WAIT
 * (bounded), RST/SYN/ACK validation (RFC 5961) and its rate limit, RST
 * replies, SYN cookies, SYN-ACK retries, idle and FIN_WAIT_2 timeouts,
 * connection limit, refusal, unlisten, calls from closed(). */

#include <stdlib.h>
#include <string.h>

#include "tcp_harness.h"
#include "tcp_priv.h"	/* tcp_cookie_make: forge a valid cookie */

static struct th H;
static const struct th_opts MSS1460 = { .mss = 1460 };

#define PEER 1000u	/* peer ISN; its data starts at PEER + 1 */

/* Established connection with MSS 1460 and no other options. */
static uint32_t
setup(void)
{
	th_start(&H);
	return th_handshake(&H, PEER, &MSS1460);
}

static void
test_peer_fin_then_app_close(void **st)
{
	struct tcp_stats sts;
	uint32_t iss;

	th_config(&H);
	iss = setup();
	th_inject(&H, F_ACK | F_FIN, PEER + 1, iss + 1, 65535, NULL, "ab", 2);
	assert_int_equal(H.app.rx_len, 2);
	assert_int_equal(H.app.eof, 1);
	assert_int_equal(tcp_conn_state(H.app.conn), TCP_CLOSE_WAIT);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 4);	/* FIN ACKed now */
	/* we can still send (half-close) */
	tcp_send(H.app.conn, "reply", 5);
	tcp_close(H.app.conn);
	EXPECT_SEG(&H, F_ACK | F_PSH | F_FIN, iss + 1, PEER + 4);
	assert_int_equal(H.seg.len, 5);
	th_inject(&H, F_ACK, PEER + 4, iss + 7, 65535, NULL, NULL, 0);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.conns[TCP_LAST_ACK], 0);
	assert_int_equal(sts.conns[TCP_ESTABLISHED], 0);
	assert_int_equal(sts.conns[TCP_TIME_WAIT], 0);
	assert_int_equal(H.app.closed, 0);	/* app closed it itself */
	th_stop(&H);
}

static void
test_active_close_time_wait(void **st)
{
	struct tcp_stats sts;
	uint32_t iss;

	th_config(&H);
	iss = setup();
	assert_int_equal(tcp_shutdown(H.app.conn), 0);
	EXPECT_SEG(&H, F_ACK | F_FIN, iss + 1, PEER + 1);
	assert_int_equal(tcp_conn_state(H.app.conn), TCP_FIN_WAIT_1);
	assert_int_equal(tcp_send(H.app.conn, "x", 1), -EPIPE);
	th_inject(&H, F_ACK, PEER + 1, iss + 2, 65535, NULL, NULL, 0);
	assert_int_equal(tcp_conn_state(H.app.conn), TCP_FIN_WAIT_2);
	/* half-close: the peer still sends, we still receive */
	th_inject(&H, F_ACK | F_PSH, PEER + 1, iss + 2, 65535, NULL, "data", 4);
	assert_int_equal(H.app.rx_len, 4);
	th_inject(&H, F_ACK | F_FIN, PEER + 5, iss + 2, 65535, NULL, NULL, 0);
	EXPECT_SEG(&H, F_ACK, iss + 2, PEER + 6);
	assert_int_equal(H.app.eof, 1);
	assert_int_equal(H.app.closed, 1);
	assert_int_equal(H.app.close_reason, TCP_CLOSE_NORMAL);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.conns[TCP_TIME_WAIT], 1);
	/* a repeated FIN is ACKed again in TIME_WAIT */
	th_advance(&H, 30000000);
	th_inject(&H, F_ACK | F_FIN, PEER + 5, iss + 2, 65535, NULL, NULL, 0);
	EXPECT_SEG(&H, F_ACK, iss + 2, PEER + 6);
	/* and the 2MSL timer restarted: still there after 59 s */
	th_advance(&H, 59000000);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.conns[TCP_TIME_WAIT], 1);
	th_advance(&H, 2000000);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.conns[TCP_TIME_WAIT], 0);
	th_stop(&H);
}

static void
test_time_wait_table_bounded(void **st)
{
	struct tcp_stats sts;

	th_config(&H);
	H.cfg.max_time_wait = 2;
	th_start(&H);
	for (int i = 0; i < 3; i++) {
		uint32_t iss;

		H.rport = TH_RPORT + i;
		iss = th_handshake(&H, PEER, &MSS1460);
		tcp_shutdown(H.app.conn);
		th_inject(&H, F_ACK | F_FIN, PEER + 1, iss + 2, 65535, NULL,
			  NULL, 0);
		th_drain(&H);
	}
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.conns[TCP_TIME_WAIT], 2);
	assert_int_equal(H.app.closed, 3);
	th_stop(&H);
}

static void
test_rst_validation_rfc5961(void **st)
{
	struct tcp_stats sts;
	uint32_t iss;

	th_config(&H);
	iss = setup();
	/* out of window: silently dropped */
	th_inject(&H, F_RST, PEER + 1 + 200000, 0, 0, NULL, NULL, 0);
	assert_int_equal(th_pending(&H), 0);
	/* in window, not exact: challenge ACK, connection stays */
	th_inject(&H, F_RST, PEER + 100, 0, 0, NULL, NULL, 0);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 1);
	assert_int_equal(H.app.closed, 0);
	/* SYN on an established connection: challenge ACK (§4) */
	th_inject(&H, F_SYN, PEER + 50, 0, 65535, NULL, NULL, 0);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 1);
	assert_int_equal(H.app.closed, 0);
	/* exactly rcv_nxt: reset */
	th_inject(&H, F_RST, PEER + 1, 0, 0, NULL, NULL, 0);
	assert_int_equal(H.app.closed, 1);
	assert_int_equal(H.app.close_reason, TCP_CLOSE_RESET);
	assert_int_equal(th_pending(&H), 0);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.challenge_acks, 2);
	assert_int_equal(sts.conns[TCP_ESTABLISHED], 0);
	th_stop(&H);
}

static void
test_ack_outside_bounds_rfc5961(void **st)
{
	uint32_t iss;

	th_config(&H);
	iss = setup();
	/* ACK of data never sent: ACK back, data not accepted */
	th_inject(&H, F_ACK, PEER + 1, iss + 5000, 65535, NULL, "zz", 2);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 1);
	assert_int_equal(H.app.rx_len, 0);
	th_stop(&H);
}

static void
test_rst_for_no_listener_and_no_conn(void **st)
{
	struct tcp_stats sts;

	th_config(&H);
	th_start(&H);
	th_inject(&H, F_SYN, PEER, 0, 65535, NULL, "abc", 3);
	EXPECT_SEG(&H, F_RST | F_ACK, 0, PEER + 4);
	th_inject(&H, F_ACK, PEER, 777, 65535, NULL, NULL, 0);
	EXPECT_SEG(&H, F_RST, 777, 0);
	th_inject(&H, F_RST, PEER, 777, 65535, NULL, NULL, 0);
	assert_int_equal(th_pending(&H), 0);	/* never RST a RST */
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.drops[TCP_DROP_NO_CONN], 3);
	th_stop(&H);
}

static void
test_syn_cookies_when_backlog_full(void **st)
{
	struct tcp_stats sts;
	struct th_seg *s;
	uint32_t cookie;

	th_config(&H);
	th_start(&H);
	assert_int_equal(tcp_listen(H.s, TH_PORT, 1, &th_ops, &H.app), 0);
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN | F_ACK);	/* normal, stateful */
	H.rport++;
	th_inject(&H, F_SYN, 5000, 0, 65535, &MSS1460, NULL, 0);
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN | F_ACK);
	assert_int_equal(s->ack, 5001);
	cookie = s->seq;
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.syncookies_sent, 1);
	assert_int_equal(sts.conns[TCP_SYN_RECEIVED], 1);	/* no state */
	/* a forged ACK is refused */
	th_inject(&H, F_ACK, 5001, cookie + 2, 65535, NULL, NULL, 0);
	EXPECT_SEG(&H, F_RST, cookie + 2, 0);
	assert_int_equal(H.app.accepted, 0);
	/* the right one (carrying data) opens the connection */
	th_inject(&H, F_ACK | F_PSH, 5001, cookie + 1, 65535, NULL, "GET", 3);
	assert_int_equal(H.app.accepted, 1);
	assert_int_equal(H.app.rx_len, 3);
	assert_int_equal(tcp_conn_mss(H.app.conn), 1460);
	tcp_send(H.app.conn, "ok", 2);
	tcp_flush(H.app.conn);
	EXPECT_SEG(&H, F_ACK | F_PSH, cookie + 1, 5004);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.syncookies_ok, 1);
	assert_int_equal(sts.drops[TCP_DROP_COOKIE], 1);
	/* a cookie is only good for two periods of 64 s */
	H.rport++;
	th_inject(&H, F_SYN, 9000, 0, 65535, &MSS1460, NULL, 0);
	cookie = th_next(&H)->seq;
	th_advance(&H, 200000000);
	th_drain(&H);		/* SYN-ACK retransmissions of the first */
	th_inject(&H, F_ACK, 9001, cookie + 1, 65535, NULL, NULL, 0);
	assert_int_equal(H.app.accepted, 1);
	assert_true(th_next(&H)->flags & F_RST);
	th_stop(&H);
}

/* With timestamps the cookie keeps window scale and SACK permission. */
static void
test_syn_cookie_keeps_options(void **st)
{
	struct th_opts o = { .mss = 1460, .has_ws = 1, .ws = 5, .sack_ok = 1,
			     .has_ts = 1, .tsval = 7777 };
	struct tcp_conn_info ci;
	struct th_seg *s;
	uint32_t cookie, tsv;

	th_config(&H);
	th_start(&H);
	tcp_listen(H.s, TH_PORT, 1, &th_ops, &H.app);
	th_inject(&H, F_SYN, PEER, 0, 65535, &o, NULL, 0);	/* fills it */
	th_drain(&H);
	H.rport++;
	th_inject(&H, F_SYN, 5000, 0, 65535, &o, NULL, 0);
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN | F_ACK);
	assert_true(s->sack_ok);
	assert_true(s->has_ts);
	assert_int_equal(s->tsecr, 7777);
	assert_int_equal(s->ws, 3);
	cookie = s->seq;
	tsv = s->tsval;
	o = (struct th_opts){ .has_ts = 1, .tsval = 7778, .tsecr = tsv };
	th_inject(&H, F_ACK, 5001, cookie + 1, 100, &o, NULL, 0);
	assert_int_equal(H.app.accepted, 1);
	tcp_conn_info(H.app.conn, &ci);
	assert_true(ci.sack);
	assert_true(ci.timestamps);
	assert_int_equal(ci.snd_wscale, 5);
	assert_int_equal(ci.snd_wnd, 100u << 5);
	/* our later TSvals continue above the cookie's (peer PAWS) */
	tcp_send(H.app.conn, "x", 1);
	tcp_flush(H.app.conn);
	s = th_next(&H);
	assert_true((int32_t)(s->tsval - tsv) > 0);
	assert_int_equal(s->tsecr, 7778);
	th_stop(&H);
}

/* The cookie the stack would answer a SYN (peer ISN isn, MSS 1460)
 * from H.rport with now: what a recorded capture may hold. */
static uint32_t
forge_cookie(uint32_t isn)
{
	struct tcp_key k = {
		.rip = TH_REMOTE_IP, .lip = TH_LOCAL_IP,
		.rport = rte_cpu_to_be_16(H.rport),
		.lport = rte_cpu_to_be_16(TH_PORT),
	};

	return tcp_cookie_make(H.s, &k, isn, 1460);
}

/* A listener with a backlog of one, and the cookie it would answer a SYN
 * of sequence isn from the next peer port with (now the harness's). */
static uint32_t
listen_backlog1(uint32_t isn)
{
	th_config(&H);
	th_start(&H);
	assert_int_equal(tcp_listen(H.s, TH_PORT, 1, &th_ops, &H.app), 0);
	H.rport++;
	return forge_cookie(isn);
}

/* A listener that never sent a cookie checks no ACK as one (Linux:
 * tcp_synq_no_recent_overflow): a replayed cookie ACK, valid as a
 * cookie, is an ACK for no connection: RST, no_conn. */
static void
test_cookie_ack_without_overflow_refused(void **st)
{
	struct tcp_stats sts;
	uint32_t cookie;

	cookie = listen_backlog1(5000);
	th_inject(&H, F_ACK | F_PSH, 5001, cookie + 1, 65535, NULL, "GET", 3);
	EXPECT_SEG(&H, F_RST, cookie + 1, 0);
	assert_int_equal(th_pending(&H), 0);
	assert_int_equal(H.app.accepted, 0);
	assert_int_equal(H.app.rx_len, 0);
	sts = th_stats(&H);
	assert_int_equal(sts.conns[TCP_ESTABLISHED], 0);
	assert_int_equal(sts.syncookies_ok, 0);
	assert_int_equal(sts.drops[TCP_DROP_NO_CONN], 1);
	assert_int_equal(sts.drops[TCP_DROP_COOKIE], 0);
	/* it was the stack's own cookie for that SYN: overflowed, the
	 * listener answers the same SYN with it */
	H.rport--;
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	th_drain(&H);
	H.rport++;
	th_inject(&H, F_SYN, 5000, 0, 65535, &MSS1460, NULL, 0);
	EXPECT_SEG(&H, F_SYN | F_ACK, cookie, 5001);
	assert_int_equal(th_stats(&H).syncookies_sent, 1);
	th_stop(&H);
}

/* The overflow is what makes the difference: the ACK refused before
 * it, the answer to our cookie, opens the connection after it. */
static void
test_cookie_ack_after_overflow_accepted(void **st)
{
	struct tcp_stats sts;
	uint32_t cookie;

	cookie = listen_backlog1(5000);
	th_inject(&H, F_ACK, 5001, cookie + 1, 65535, NULL, NULL, 0);
	EXPECT_SEG(&H, F_RST, cookie + 1, 0);
	assert_int_equal(H.app.accepted, 0);
	H.rport--;
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0); /* fills it */
	th_drain(&H);
	H.rport++;
	th_inject(&H, F_SYN, 5000, 0, 65535, &MSS1460, NULL, 0);
	EXPECT_SEG(&H, F_SYN | F_ACK, cookie, 5001);
	assert_int_equal(th_stats(&H).syncookies_sent, 1);
	th_advance(&H, 1000000);
	th_drain(&H);		/* SYN-ACK retransmission of the first */
	th_inject(&H, F_ACK | F_PSH, 5001, cookie + 1, 65535, NULL, "GET", 3);
	assert_int_equal(H.app.accepted, 1);
	assert_int_equal(H.app.rx_len, 3);
	assert_int_equal(tcp_conn_state(H.app.conn), TCP_ESTABLISHED);
	tcp_send(H.app.conn, "ok", 2);
	tcp_flush(H.app.conn);
	EXPECT_SEG(&H, F_ACK | F_PSH, cookie + 1, 5004);
	sts = th_stats(&H);
	assert_int_equal(sts.syncookies_ok, 1);
	assert_int_equal(sts.conns[TCP_ESTABLISHED], 1);
	assert_int_equal(sts.drops[TCP_DROP_NO_CONN], 1);
	assert_int_equal(sts.drops[TCP_DROP_COOKIE], 0);
	th_stop(&H);
}

/* The overflow counts for a cookie's lifetime, 2 x 64 s: a cookie that
 * is valid now is taken 127 s after the last one sent, not 128 s
 * after; a new overflow makes it good again. */
static void
test_cookie_ack_after_overflow_window_refused(void **st)
{
	struct tcp_stats sts;
	uint32_t cookie;

	th_config(&H);
	th_start(&H);
	assert_int_equal(tcp_listen(H.s, TH_PORT, 1, &th_ops, &H.app), 0);
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0); /* fills it */
	th_drain(&H);
	H.rport++;
	th_inject(&H, F_SYN, 5000, 0, 65535, &MSS1460, NULL, 0);
	assert_int_equal(th_next(&H)->flags, F_SYN | F_ACK);
	assert_int_equal(th_stats(&H).syncookies_sent, 1);
	/* 127 s on: a fresh cookie (from another port) is still taken */
	th_advance(&H, 127000000);
	th_drain(&H);
	H.rport++;
	cookie = forge_cookie(7000);
	th_inject(&H, F_ACK, 7001, cookie + 1, 65535, NULL, NULL, 0);
	assert_int_equal(H.app.accepted, 1);
	assert_int_equal(th_pending(&H), 0);
	/* 128 s on: no more, though the cookie is valid as such */
	th_advance(&H, 1000000);
	th_drain(&H);
	H.rport++;
	cookie = forge_cookie(9000);
	th_inject(&H, F_ACK | F_PSH, 9001, cookie + 1, 65535, NULL, "GET", 3);
	EXPECT_SEG(&H, F_RST, cookie + 1, 0);
	assert_int_equal(H.app.accepted, 1);
	assert_int_equal(H.app.rx_len, 0);
	sts = th_stats(&H);
	assert_int_equal(sts.syncookies_ok, 1);
	assert_int_equal(sts.conns[TCP_ESTABLISHED], 1);
	assert_int_equal(sts.drops[TCP_DROP_NO_CONN], 1);
	assert_int_equal(sts.drops[TCP_DROP_COOKIE], 0);
	/* the first SYN still holds the backlog's one place: the next SYN
	 * overflows it again, and the same ACK now opens a connection */
	assert_int_equal(sts.conns[TCP_SYN_RECEIVED], 1);
	H.rport = TH_RPORT + 11;
	th_inject(&H, F_SYN, 4000, 0, 65535, &MSS1460, NULL, 0);
	th_drain(&H);
	assert_int_equal(th_stats(&H).syncookies_sent, 2);
	H.rport = TH_RPORT + 3;
	th_inject(&H, F_ACK | F_PSH, 9001, cookie + 1, 65535, NULL, "GET", 3);
	assert_int_equal(H.app.accepted, 2);
	assert_int_equal(H.app.rx_len, 3);
	th_stop(&H);
}

static void
test_syn_ack_retransmit_and_give_up(void **st)
{
	struct tcp_stats sts;
	struct th_seg *s;
	uint32_t iss;

	th_config(&H);
	th_start(&H);
	tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app);
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	iss = th_next(&H)->seq;
	/* the peer repeats its SYN: the SYN-ACK is repeated */
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN | F_ACK);
	assert_int_equal(s->seq, iss);
	th_advance(&H, 1001000);	/* initial RTO 1 s */
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN | F_ACK);
	for (int i = 0; i < 20; i++)
		th_advance(&H, 60000000);
	th_drain(&H);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.conns[TCP_SYN_RECEIVED], 0);
	assert_int_equal(H.app.accepted, 0);
	th_stop(&H);
}

/* Open now; reset for idleness within the next us microseconds. */
static void
expect_idle_reset_within(uint64_t us)
{
	assert_int_equal(H.app.closed, 0);
	th_advance(&H, us);
	assert_int_equal(H.app.closed, 1);
	assert_int_equal(H.app.close_reason, TCP_CLOSE_IDLE);
	assert_true(th_next(&H)->flags & F_RST);
	th_stop(&H);
}

static void
test_idle_timeout(void **st)
{
	th_config(&H);
	H.cfg.idle_timeout_us = 10000000;
	setup();
	th_advance(&H, 5000000);
	th_inject(&H, F_ACK, PEER + 1, 0, 65535, NULL, NULL, 0);
	th_drain(&H);
	th_advance(&H, 9000000);	/* 9 s after the last segment */
	expect_idle_reset_within(2000000);
}

/* An idle timeout of hours: idle_timeout_us is 64-bit. In 32-bit µs a
 * day (86400000000 µs) wrapped to ~500 s and closed the connection then. */
static void
test_idle_timeout_one_day(void **st)
{
	const uint64_t hour = 3600ull * 1000 * 1000;

	th_config(&H);
	H.cfg.idle_timeout_us = 24 * hour;
	setup();
	for (int i = 0; i < 23; i++)
		th_advance(&H, hour);
	th_advance(&H, hour - 1000000);	/* 1 s before the day is over */
	expect_idle_reset_within(2000000);
}

static void
test_fin_wait_2_orphan_times_out(void **st)
{
	struct tcp_stats sts;
	uint32_t iss;

	th_config(&H);
	H.cfg.time_wait_us = 5000000;
	iss = setup();
	tcp_close(H.app.conn);
	EXPECT_SEG(&H, F_ACK | F_FIN, iss + 1, PEER + 1);
	th_inject(&H, F_ACK, PEER + 1, iss + 2, 65535, NULL, NULL, 0);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.conns[TCP_FIN_WAIT_2], 1);
	th_advance(&H, 4000000);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.conns[TCP_FIN_WAIT_2], 1);
	th_advance(&H, 2000000);	/* 2*MSL, not the 300 s idle time */
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.conns[TCP_FIN_WAIT_2], 0);
	th_drain(&H);
	th_stop(&H);
}

/* RFC 5961 §7: challenge ACKs are rate limited per second. */
static void
test_challenge_ack_rate_limit(void **st)
{
	struct tcp_stats sts;

	th_config(&H);
	H.cfg.challenge_ack_limit = 3;
	setup();
	th_advance(&H, 1000000);
	for (int i = 0; i < 10; i++)
		th_inject(&H, F_RST, PEER + 100 + i, 0, 0, NULL, NULL, 0);
	assert_int_equal(th_pending(&H), 3);
	th_drain(&H);
	th_advance(&H, 1000000);	/* next second: allowed again */
	th_inject(&H, F_RST, PEER + 100, 0, 0, NULL, NULL, 0);
	assert_int_equal(th_pending(&H), 1);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.challenge_acks, 4);
	assert_int_equal(sts.drops[TCP_DROP_RST_INVALID], 11);
	assert_int_equal(H.app.closed, 0);
	th_stop(&H);
}

/* Unlisten: new SYNs are refused, established connections stay; stack
 * destruction tells the app about what is left. */
static void
test_unlisten_and_destroy(void **st)
{
	uint32_t iss;

	th_config(&H);
	iss = setup();
	assert_int_equal(tcp_unlisten(H.s, TH_PORT), 0);
	assert_int_equal(tcp_unlisten(H.s, TH_PORT), -ENOENT);
	H.rport++;
	th_inject(&H, F_SYN, PEER, 0, 65535, NULL, NULL, 0);
	assert_true(th_next(&H)->flags & F_RST);
	H.rport--;
	th_inject(&H, F_ACK | F_PSH, PEER + 1, iss + 1, 65535, NULL, "hi", 2);
	assert_int_equal(H.app.rx_len, 2);
	th_drain(&H);
	tcp_stack_destroy(H.s);
	H.s = NULL;
	assert_int_equal(H.app.closed, 1);
	assert_int_equal(H.app.close_reason, TCP_CLOSE_STACK);
	H.s = tcp_stack_create(&H.cfg);	/* for th_stop */
	th_stop(&H);
}

/* Calls on a connection from inside its closed() callback are no-ops. */
static void
test_api_calls_inside_closed_are_ignored(void **st)
{
	struct tcp_stats sts;

	th_config(&H);
	setup();
	H.app.act_in_closed = 1;
	th_inject(&H, F_RST, PEER + 1, 0, 0, NULL, NULL, 0);
	assert_int_equal(H.app.closed, 1);
	assert_int_equal(H.app.send_in_closed_rc, -EPIPE);
	assert_int_equal(th_pending(&H), 0);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.resets_out, 0);
	assert_int_equal(sts.conns[TCP_ESTABLISHED], 0);
	th_stop(&H);
}

static void
test_refused_by_app(void **st)
{
	struct th_seg *s;

	th_config(&H);
	th_start(&H);
	H.app.refuse = 1;
	tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app);
	th_inject(&H, F_SYN, PEER, 0, 65535, NULL, NULL, 0);
	s = th_next(&H);
	th_inject(&H, F_ACK, PEER + 1, s->seq + 1, 65535, NULL, NULL, 0);
	assert_true(th_next(&H)->flags & F_RST);
	assert_int_equal(H.app.closed, 0);
	th_stop(&H);
}

static void
test_connection_limit(void **st)
{
	struct tcp_stats sts;

	th_config(&H);
	H.cfg.max_conns = 2;
	th_start(&H);
	for (int i = 0; i < 3; i++) {
		H.rport = TH_RPORT + i;
		tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app);
		th_inject(&H, F_SYN, PEER, 0, 65535, NULL, NULL, 0);
	}
	assert_int_equal(th_pending(&H), 2);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.drops[TCP_DROP_CONN_LIMIT], 1);
	assert_int_equal(tcp_connect(H.s, TH_REMOTE_IP, 9, &th_ops, &H.app,
				     &H.app.conn), -EMFILE);
	th_stop(&H);
}

/* A FIN that arrives before the data in front of it takes effect when
 * the hole is filled. */
static void
test_fin_out_of_order(void **st)
{
	uint32_t iss;

	th_config(&H);
	iss = setup();
	th_inject(&H, F_ACK | F_FIN, PEER + 4, iss + 1, 65535, NULL, "def", 3);
	assert_int_equal(H.app.eof, 0);
	assert_int_equal(th_next(&H)->ack, PEER + 1);	/* dup ACK */
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 65535, NULL, "abc", 3);
	assert_int_equal(H.app.rx_len, 6);
	assert_memory_equal(H.app.rx, "abcdef", 6);
	assert_int_equal(H.app.eof, 1);
	assert_int_equal(tcp_conn_state(H.app.conn), TCP_CLOSE_WAIT);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 8);	/* data + FIN */
	th_stop(&H);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fin_out_of_order),
		cmocka_unit_test(test_peer_fin_then_app_close),
		cmocka_unit_test(test_active_close_time_wait),
		cmocka_unit_test(test_time_wait_table_bounded),
		cmocka_unit_test(test_rst_validation_rfc5961),
		cmocka_unit_test(test_ack_outside_bounds_rfc5961),
		cmocka_unit_test(test_rst_for_no_listener_and_no_conn),
		cmocka_unit_test(test_syn_cookies_when_backlog_full),
		cmocka_unit_test(test_syn_cookie_keeps_options),
		cmocka_unit_test(test_cookie_ack_without_overflow_refused),
		cmocka_unit_test(test_cookie_ack_after_overflow_accepted),
		cmocka_unit_test(test_cookie_ack_after_overflow_window_refused),
		cmocka_unit_test(test_syn_ack_retransmit_and_give_up),
		cmocka_unit_test(test_idle_timeout),
		cmocka_unit_test(test_idle_timeout_one_day),
		cmocka_unit_test(test_fin_wait_2_orphan_times_out),
		cmocka_unit_test(test_challenge_ack_rate_limit),
		cmocka_unit_test(test_unlisten_and_destroy),
		cmocka_unit_test(test_api_calls_inside_closed_are_ignored),
		cmocka_unit_test(test_refused_by_app),
		cmocka_unit_test(test_connection_limit),
	};
	int rc;

	th_eal_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	th_eal_fini();
	return rc;
}
