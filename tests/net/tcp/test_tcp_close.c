/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Scripted open/close and defence cases test_tcp_teardown.c and
 * test_tcp_core.c leave out: simultaneous close (CLOSING) and open
 * (SYN_RECEIVED from SYN_SENT), closing before the open completes or
 * into a zero window, data arriving after the app closed (RST),
 * TIME_WAIT facing a RST (RFC 1337), a new SYN for the same pair (RFC
 * 9293 §3.6.1) and a full table (the oldest entry goes), a RST for a
 * half-open connection, the SYN backlog and connection limit on the
 * paths not covered there, and no data past the peer's FIN (queued out
 * of order before it: fuzz-tcp). */

#include <stdlib.h>
#include <string.h>

#include "tcp_harness.h"

static struct th H;
static const struct th_opts MSS1460 = { .mss = 1460 };

#define PEER 1000u	/* peer ISN; its data starts at PEER + 1 */

static uint32_t
setup(void)
{
	th_start(&H);
	return th_handshake(&H, PEER, &MSS1460);
}

static uint64_t
nr_state(enum tcp_state st)
{
	return th_stats(&H).conns[st];
}

/* Established, then we half-close (tcp_shutdown) or close (tcp_close):
 * our FIN goes at once. Returns our ISS. */
static uint32_t
fin_sent(bool full_close)
{
	uint32_t iss;

	th_config(&H);
	iss = setup();
	if (full_close)
		tcp_close(H.app.conn);
	else
		assert_int_equal(tcp_shutdown(H.app.conn), 0);
	EXPECT_SEG(&H, F_ACK | F_FIN, iss + 1, PEER + 1);
	return iss;
}

/* A listener with backlog and the peer's SYN to it: returns our answer
 * (not checked here). */
static struct th_seg *
syn_to_listener(int backlog)
{
	th_config(&H);
	th_start(&H);
	assert_int_equal(tcp_listen(H.s, TH_PORT, backlog, &th_ops, &H.app),
			 0);
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	return th_next(&H);
}

/* The backlog of 1 has room: a SYN from a new port gets state, not a
 * cookie, and is the one half-open connection. */
static void
expect_stateful_syn(void)
{
	struct tcp_stats sts;

	H.rport++;
	th_inject(&H, F_SYN, 7000, 0, 65535, &MSS1460, NULL, 0);
	assert_int_equal(th_next(&H)->flags, F_SYN | F_ACK);
	sts = th_stats(&H);
	assert_int_equal(sts.syncookies_sent, 0);
	assert_int_equal(sts.conns[TCP_SYN_RECEIVED], 1);
}

/* RFC 9293 §3.6 figure 13: both FINs cross; each side ACKs the other's,
 * FIN_WAIT_1 -> CLOSING -> TIME_WAIT. */
static void
test_simultaneous_close(void **st)
{
	uint32_t iss = fin_sent(false);

	/* the peer's FIN, sent before ours arrived: it does not ACK it */
	th_inject(&H, F_ACK | F_FIN, PEER + 1, iss + 1, 65535, NULL, NULL, 0);
	assert_int_equal(tcp_conn_state(H.app.conn), TCP_CLOSING);
	assert_int_equal(nr_state(TCP_CLOSING), 1);
	assert_int_equal(H.app.eof, 1);
	assert_int_equal(H.app.closed, 0);
	EXPECT_SEG(&H, F_ACK, iss + 2, PEER + 2);	/* its FIN ACKed */
	assert_int_equal(th_pending(&H), 0);
	/* our FIN is ACKed: TIME_WAIT, the app hears a normal close */
	th_inject(&H, F_ACK, PEER + 2, iss + 2, 65535, NULL, NULL, 0);
	assert_int_equal(H.app.closed, 1);
	assert_int_equal(H.app.close_reason, TCP_CLOSE_NORMAL);
	assert_int_equal(nr_state(TCP_CLOSING), 0);
	assert_int_equal(nr_state(TCP_TIME_WAIT), 1);
	assert_int_equal(th_pending(&H), 0);
	th_stop(&H);
}

/* In CLOSING our FIN is lost: it is retransmitted by the timer. */
static void
test_closing_retransmits_fin(void **st)
{
	uint32_t iss = fin_sent(false);

	th_inject(&H, F_ACK | F_FIN, PEER + 1, iss + 1, 65535, NULL, NULL, 0);
	EXPECT_SEG(&H, F_ACK, iss + 2, PEER + 2);
	th_advance(&H, 1100000);	/* any RTO is below 1.1 s here */
	EXPECT_SEG(&H, F_ACK | F_FIN, iss + 1, PEER + 2);
	th_inject(&H, F_ACK, PEER + 2, iss + 2, 65535, NULL, NULL, 0);
	assert_int_equal(nr_state(TCP_TIME_WAIT), 1);
	th_stop(&H);
}

/* tcp.h: after tcp_close() data from the peer is answered with RST (RFC
 * 1122 §4.2.2.13: the app will never read it). */
static void
test_data_after_close_resets(void **st)
{
	uint32_t iss = fin_sent(true);
	struct tcp_stats sts;

	th_inject(&H, F_ACK | F_PSH, PEER + 1, iss + 2, 65535, NULL, "late",
		  4);
	assert_true(th_next(&H)->flags & F_RST);
	assert_int_equal(H.seg.seq, iss + 2);
	assert_int_equal(H.app.rx_len, 0);
	assert_int_equal(H.app.closed, 0);	/* the app closed it itself */
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.resets_out, 1);
	assert_int_equal(sts.conns[TCP_FIN_WAIT_1] + sts.conns[TCP_FIN_WAIT_2]
			 + sts.conns[TCP_TIME_WAIT], 0);
	for (int i = 0; i < TCP_STATE_MAX; i++)
		if (i != TCP_LISTEN)
			assert_int_equal(sts.conns[i], 0);
	/* the pair is forgotten: more data is refused by the listener
	 * (not a valid SYN cookie), never delivered */
	th_inject(&H, F_ACK | F_PSH, PEER + 5, iss + 2, 65535, NULL, "more",
		  4);
	assert_true(th_next(&H)->flags & F_RST);
	assert_int_equal(H.app.rx_len, 0);
	th_stop(&H);
}

/* A half-closed (tcp_shutdown) connection still takes data: only
 * tcp_close() makes late data an error. */
static void
test_data_after_shutdown_delivered(void **st)
{
	uint32_t iss = fin_sent(false);

	th_inject(&H, F_ACK | F_PSH, PEER + 1, iss + 2, 65535, NULL, "late",
		  4);
	assert_int_equal(H.app.rx_len, 4);
	assert_int_equal(tcp_conn_state(H.app.conn), TCP_FIN_WAIT_2);
	th_advance(&H, 100000);
	EXPECT_SEG(&H, F_ACK, iss + 2, PEER + 5);
	th_stop(&H);
}

/* Into TIME_WAIT on rport: we closed first, the peer ACKed and FINed. */
static uint32_t
to_time_wait(void)
{
	uint32_t iss = th_handshake(&H, PEER, &MSS1460);

	tcp_shutdown(H.app.conn);
	th_inject(&H, F_ACK | F_FIN, PEER + 1, iss + 2, 65535, NULL, NULL, 0);
	th_drain(&H);
	return iss;
}

/* RFC 1337: a RST must not cut TIME_WAIT short (TIME-WAIT assassination);
 * it is not answered either. */
static void
test_time_wait_ignores_rst(void **st)
{
	uint32_t iss;

	th_config(&H);
	th_start(&H);
	iss = to_time_wait();
	assert_int_equal(nr_state(TCP_TIME_WAIT), 1);
	th_inject(&H, F_RST, PEER + 2, 0, 0, NULL, NULL, 0);
	th_inject(&H, F_RST | F_ACK, PEER + 2, iss + 2, 0, NULL, NULL, 0);
	assert_int_equal(th_pending(&H), 0);
	assert_int_equal(nr_state(TCP_TIME_WAIT), 1);
	/* still there to ACK a repeated FIN */
	th_inject(&H, F_ACK | F_FIN, PEER + 1, iss + 2, 65535, NULL, NULL, 0);
	EXPECT_SEG(&H, F_ACK, iss + 2, PEER + 2);
	th_stop(&H);
}

/* RFC 9293 §3.6.1: a SYN above the old sequence space may open a new
 * incarnation of the pair at once; an old duplicate SYN may not. */
static void
test_time_wait_new_syn_reopens(void **st)
{
	struct th_seg *s;

	th_config(&H);
	th_start(&H);
	to_time_wait();
	/* an old SYN (below rcv_nxt): no new connection */
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	while (th_pending(&H) > 0)
		assert_false(th_next(&H)->flags & F_SYN);
	assert_int_equal(nr_state(TCP_TIME_WAIT), 1);
	assert_int_equal(nr_state(TCP_SYN_RECEIVED), 0);
	/* a new one: TIME_WAIT gives way, the listener answers */
	th_inject(&H, F_SYN, PEER + 100000, 0, 65535, &MSS1460, NULL, 0);
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN | F_ACK);
	assert_int_equal(s->ack, PEER + 100001);
	assert_int_equal(nr_state(TCP_TIME_WAIT), 0);
	assert_int_equal(nr_state(TCP_SYN_RECEIVED), 1);
	th_inject(&H, F_ACK, PEER + 100001, s->seq + 1, 65535, NULL, NULL, 0);
	assert_int_equal(H.app.accepted, 2);
	assert_int_equal(nr_state(TCP_ESTABLISHED), 1);
	th_stop(&H);
}

/* A full TIME_WAIT table recycles its oldest entry, not the newest. */
static void
test_time_wait_recycles_oldest(void **st)
{
	uint32_t iss[3];

	th_config(&H);
	H.cfg.max_time_wait = 2;
	th_start(&H);
	for (int i = 0; i < 3; i++) {
		H.rport = TH_RPORT + i;
		iss[i] = to_time_wait();
		th_advance(&H, 1000);
	}
	assert_int_equal(nr_state(TCP_TIME_WAIT), 2);
	/* the newest two still ACK a repeated FIN */
	for (int i = 2; i >= 1; i--) {
		H.rport = TH_RPORT + i;
		th_inject(&H, F_ACK | F_FIN, PEER + 1, iss[i] + 2, 65535, NULL,
			  NULL, 0);
		EXPECT_SEG(&H, F_ACK, iss[i] + 2, PEER + 2);
	}
	/* the oldest is gone: its pair meets "no connection" (RST) */
	H.rport = TH_RPORT;
	th_inject(&H, F_ACK | F_FIN, PEER + 1, iss[0] + 2, 65535, NULL, NULL,
		  0);
	assert_true(th_next(&H)->flags & F_RST);
	th_stop(&H);
}

/* A RST for a half-open (SYN_RECEIVED) connection: validated like any
 * other (RFC 5961 §3), then the embryo goes without the app hearing of
 * it and its backlog slot is free again (RFC 9293 §3.10.7.4). */
static void
test_rst_in_syn_received(void **st)
{
	assert_int_equal(syn_to_listener(1)->flags, F_SYN | F_ACK);
	/* out of window: ignored; in window but not exact: challenge ACK */
	th_inject(&H, F_RST, PEER + 1 + 300000, 0, 0, NULL, NULL, 0);
	assert_int_equal(th_pending(&H), 0);
	th_inject(&H, F_RST, PEER + 10, 0, 0, NULL, NULL, 0);
	assert_int_equal(th_next(&H)->flags & (F_ACK | F_RST), F_ACK);
	assert_int_equal(nr_state(TCP_SYN_RECEIVED), 1);
	/* exact: the half-open connection is gone, silently */
	th_inject(&H, F_RST, PEER + 1, 0, 0, NULL, NULL, 0);
	assert_int_equal(th_pending(&H), 0);
	assert_int_equal(nr_state(TCP_SYN_RECEIVED), 0);
	assert_int_equal(H.app.accepted, 0);
	assert_int_equal(H.app.closed, 0);
	/* the backlog of 1 is free: the next SYN gets state, not a cookie */
	expect_stateful_syn();
	th_stop(&H);
}

/* tcp_listen(backlog 0) takes the stack's syn_backlog; beyond it SYNs
 * are answered with cookies and hold no state. */
static void
test_syn_backlog_from_config(void **st)
{
	struct tcp_stats sts;

	th_config(&H);
	H.cfg.syn_backlog = 3;
	th_start(&H);
	assert_int_equal(tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app), 0);
	for (int i = 0; i < 5; i++) {
		H.rport = TH_RPORT + i;
		th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
		assert_int_equal(th_next(&H)->flags, F_SYN | F_ACK);
	}
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.conns[TCP_SYN_RECEIVED], 3);
	assert_int_equal(sts.syncookies_sent, 2);
	assert_int_equal(sts.drops[TCP_DROP_BACKLOG], 2);
	th_stop(&H);
}

/* tcp.h: the global connection limit does not count TIME_WAIT, and a
 * connection that ends frees its place. */
static void
test_conn_limit_excludes_time_wait(void **st)
{
	struct tcp_stats sts;
	struct th_seg *s;

	th_config(&H);
	H.cfg.max_conns = 1;
	th_start(&H);
	to_time_wait();
	assert_int_equal(nr_state(TCP_TIME_WAIT), 1);
	H.rport++;
	th_handshake(&H, PEER, &MSS1460);	/* the limit's one place */
	H.rport++;
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	assert_int_equal(th_pending(&H), 0);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.drops[TCP_DROP_CONN_LIMIT], 1);
	/* the peer resets the established one: its place is free again */
	H.rport--;
	th_inject(&H, F_RST, PEER + 1, 0, 0, NULL, NULL, 0);
	assert_int_equal(H.app.closed, 2);
	H.rport++;
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN | F_ACK);
	assert_int_equal(nr_state(TCP_TIME_WAIT), 1);
	th_stop(&H);
}

/* tcp_close() while the peer's window is closed: the data and the FIN
 * behind it wait (one-byte probes meanwhile, no FIN past the window) and
 * leave together when the window opens. */
static void
test_close_into_zero_window(void **st)
{
	struct tcp_stats sts;
	struct th_seg *s;
	uint32_t iss;
	int probes = 0;

	th_config(&H);
	iss = setup();
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 0, NULL, NULL, 0);
	assert_int_equal(tcp_send(H.app.conn, "abc", 3), 3);
	tcp_close(H.app.conn);
	for (int i = 0; i < 10; i++) {
		th_advance(&H, 1000000);
		while (th_pending(&H) > 0) {
			s = th_next(&H);
			assert_int_equal(s->flags, F_ACK);
			assert_int_equal(s->seq, iss + 1);
			assert_int_equal(s->len, 1);
			assert_int_equal(s->data[0], 'a');
			probes++;
		}
	}
	assert_true(probes >= 3);
	/* the window opens: all of it, FIN included, at once */
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 65535, NULL, NULL, 0);
	s = th_next(&H);
	assert_int_equal(s->flags, F_ACK | F_PSH | F_FIN);
	assert_int_equal(s->seq, iss + 1);
	assert_int_equal(s->len, 3);
	assert_memory_equal(s->data, "abc", 3);
	th_inject(&H, F_ACK, PEER + 1, iss + 5, 65535, NULL, NULL, 0);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.conns[TCP_FIN_WAIT_2], 1);
	th_stop(&H);
}

/* An orphan (the app closed) whose peer takes none of its data but
 * ACKs every zero-window probe is never idle by its input; it is reset
 * idle_timeout after its last acknowledged byte (here: the close), not
 * before, and its send memory is freed. */
static void
test_orphan_unread_reset(void **st)
{
	static uint8_t data[3000];
	struct tcp_stats sts;
	struct th_seg *s;
	uint32_t iss;

	th_config(&H);
	H.cfg.idle_timeout_us = 10000000;	/* 10 s */
	iss = setup();
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 0, NULL, NULL, 0);
	assert_int_equal(tcp_send(H.app.conn, data, sizeof(data)),
			 (int)sizeof(data));
	tcp_close(H.app.conn);
	for (int i = 0; i < 9; i++) {
		th_advance(&H, 1000000);
		while (th_pending(&H) > 0) {
			s = th_next(&H);
			assert_false(s->flags & F_RST);
			assert_int_equal(s->seq, iss + 1);	/* a probe */
		}
		/* the probe answered, the window still shut */
		th_inject(&H, F_ACK, PEER + 1, iss + 1, 0, NULL, NULL, 0);
		assert_int_equal(nr_state(TCP_FIN_WAIT_1), 1);
	}
	th_advance(&H, 990000);			/* 9.99 s after the close */
	th_drain(&H);
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 0, NULL, NULL, 0);
	assert_int_equal(nr_state(TCP_FIN_WAIT_1), 1);
	th_advance(&H, 20000);			/* 10.01 s */
	s = th_next(&H);
	assert_true(s->flags & F_RST);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.conns[TCP_FIN_WAIT_1], 0);
	assert_int_equal(sts.resets_out, 1);
	th_stop(&H);				/* no mbuf left behind */
}

/* An orphan read slowly but steadily (500 bytes every 4 s) outlives the
 * idle timeout many times over: each acknowledged byte is progress. */
static void
test_orphan_slow_reader_kept(void **st)
{
	static uint8_t data[3000];
	uint32_t iss, acked = 0;
	bool fin = false;

	th_config(&H);
	H.cfg.idle_timeout_us = 10000000;	/* 10 s */
	iss = setup();
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 500, NULL, NULL, 0);
	assert_int_equal(tcp_send(H.app.conn, data, sizeof(data)),
			 (int)sizeof(data));
	tcp_close(H.app.conn);
	for (int i = 0; i < 6; i++) {
		th_advance(&H, 9000000);
		while (th_pending(&H) > 0) {
			struct th_seg *s = th_next(&H);

			assert_false(s->flags & F_RST);
			if (s->seq == iss + 1 + acked)
				acked += s->len;
			fin |= (s->flags & F_FIN) != 0;
		}
		assert_int_equal(acked, 500u * (i + 1));
		th_inject(&H, F_ACK, PEER + 1, iss + 1 + acked, 500, NULL,
			  NULL, 0);
	}
	/* 54 s: all 3000 bytes taken, the FIN with the last of them */
	assert_true(fin);
	th_inject(&H, F_ACK, PEER + 1, iss + 3002, 500, NULL, NULL, 0);
	assert_int_equal(nr_state(TCP_FIN_WAIT_2), 1);
	th_stop(&H);
}

/* A valid SYN cookie does not get past the global connection limit:
 * the completing ACK is dropped and counted like a SYN would be. */
static void
test_cookie_ack_respects_conn_limit(void **st)
{
	uint32_t cookie[2];
	struct tcp_stats sts;

	th_config(&H);
	H.cfg.max_conns = 2;
	th_start(&H);
	assert_int_equal(tcp_listen(H.s, TH_PORT, 1, &th_ops, &H.app), 0);
	/* the one SYN with state */
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	th_drain(&H);
	for (int i = 0; i < 2; i++) {		/* two cookies */
		H.rport = TH_RPORT + 1 + i;
		th_inject(&H, F_SYN, 5000, 0, 65535, &MSS1460, NULL, 0);
		cookie[i] = th_next(&H)->seq;
	}
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.syncookies_sent, 2);
	H.rport = TH_RPORT + 1;
	th_inject(&H, F_ACK, 5001, cookie[0] + 1, 65535, NULL, NULL, 0);
	assert_int_equal(H.app.accepted, 1);	/* 2 of 2 places taken */
	H.rport = TH_RPORT + 2;
	th_inject(&H, F_ACK, 5001, cookie[1] + 1, 65535, NULL, NULL, 0);
	assert_int_equal(H.app.accepted, 1);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.drops[TCP_DROP_CONN_LIMIT], 1);
	assert_int_equal(sts.syncookies_ok, 1);
	assert_int_equal(sts.conns[TCP_ESTABLISHED], 1);
	assert_int_equal(sts.conns[TCP_SYN_RECEIVED], 1);
	th_drain(&H);
	th_stop(&H);
}

/* SYN_SENT (RFC 9293 §3.10.7.3): an ACK for something we never sent
 * gets a RST and leaves the attempt alone, a RST without ACK is
 * ignored; a bare SYN is a simultaneous open (figure 8): SYN-ACK, then
 * ESTABLISHED and connected() when our SYN is acknowledged. */
static void
test_syn_sent_validation_and_simultaneous_open(void **st)
{
	struct tcp_stats sts;
	struct tcp_conn *c;
	struct th_seg *s;
	uint32_t iss;

	iss = th_open_active(&H, &c);
	th_inject(&H, F_SYN | F_ACK, PEER, iss + 7, 65535, NULL, NULL, 0);
	EXPECT_SEG(&H, F_RST, iss + 7, 0);
	th_inject(&H, F_RST, PEER, 0, 0, NULL, NULL, 0);
	assert_int_equal(th_pending(&H), 0);
	assert_int_equal(tcp_conn_state(c), TCP_SYN_SENT);
	assert_int_equal(H.app.closed, 0);
	/* the peer's own SYN crosses ours */
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN | F_ACK);
	assert_int_equal(s->seq, iss);
	assert_int_equal(s->ack, PEER + 1);
	assert_int_equal(tcp_conn_state(c), TCP_SYN_RECEIVED);
	/* its SYN-ACK (for our SYN) completes the open */
	th_inject(&H, F_SYN | F_ACK, PEER, iss + 1, 65535, &MSS1460, NULL, 0);
	assert_int_equal(H.app.closed, 0);
	assert_int_equal(H.app.accepted, 0);
	assert_int_equal(H.app.connected, 1);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	th_drain(&H);
	/* and it carries data */
	assert_int_equal(tcp_send(c, "hi", 2), 2);
	tcp_flush(c);
	EXPECT_SEG(&H, F_ACK | F_PSH, iss + 1, PEER + 1);
	tcp_abort(c);
	th_drain(&H);
	/* again, the open completed by a plain ACK this time */
	memset(&H.app, 0, sizeof(H.app));
	iss = th_connect(&H, &c);
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, NULL, 0);
	assert_int_equal(th_next(&H)->flags, F_SYN | F_ACK);
	th_inject(&H, F_ACK | F_PSH, PEER + 1, iss + 1, 65535, NULL, "yo", 2);
	assert_int_equal(H.app.connected, 1);
	assert_int_equal(H.app.closed, 0);
	assert_int_equal(H.app.rx_len, 2);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	tcp_stack_stats(H.s, &sts);
	assert_int_equal(sts.active_opens, 2);
	assert_int_equal(sts.passive_opens, 0);
	/* the RST for the bad ACK and the first tcp_abort, none since */
	assert_int_equal(sts.resets_out, 2);
	tcp_abort(c);
	th_drain(&H);
	th_stop(&H);
}

/* Closing before the handshake completes. tcp_shutdown() in SYN_SENT:
 * the data and FIN go once the open completes; tcp_close() in SYN_SENT:
 * the attempt is dropped and a late SYN-ACK is answered with RST. */
static void
test_close_during_active_open(void **st)
{
	struct tcp_conn *c;
	struct th_seg *s;
	uint32_t iss;

	iss = th_open_active(&H, &c);
	assert_int_equal(tcp_send(c, "req", 3), 3);
	assert_int_equal(tcp_shutdown(c), 0);
	assert_int_equal(th_pending(&H), 0);	/* nothing before open */
	th_inject(&H, F_SYN | F_ACK, PEER, iss + 1, 65535, &MSS1460, NULL, 0);
	assert_int_equal(H.app.connected, 1);
	s = th_next(&H);
	assert_int_equal(s->flags, F_ACK | F_PSH | F_FIN);
	assert_int_equal(s->seq, iss + 1);
	assert_int_equal(s->len, 3);
	assert_int_equal(tcp_conn_state(c), TCP_FIN_WAIT_1);
	tcp_abort(c);
	th_drain(&H);
	/* tcp_close() while the SYN is out */
	memset(&H.app, 0, sizeof(H.app));
	iss = th_connect(&H, &c);
	tcp_close(c);
	for (int i = 0; i < 5; i++)	/* no SYN retransmission either */
		th_advance(&H, 1000000);
	while (th_pending(&H) > 0)
		assert_false(th_next(&H)->flags & (F_SYN | F_FIN));
	th_inject(&H, F_SYN | F_ACK, PEER, iss + 1, 65535, &MSS1460, NULL, 0);
	s = th_next(&H);
	assert_true(s->flags & F_RST);
	assert_int_equal(H.app.connected, 0);
	assert_int_equal(H.app.closed, 0);
	assert_int_equal(nr_state(TCP_SYN_SENT), 0);
	th_stop(&H);
}

/* tcp_unlisten() with a half-open connection: its handshake cannot
 * complete (RST, nothing accepted), and listening again on the port
 * starts with a whole backlog. */
static void
test_unlisten_with_half_open(void **st)
{
	struct th_seg *s = syn_to_listener(1);

	assert_int_equal(tcp_unlisten(H.s, TH_PORT), 0);
	th_inject(&H, F_ACK, PEER + 1, s->seq + 1, 65535, NULL, NULL, 0);
	assert_true(th_next(&H)->flags & F_RST);
	assert_int_equal(H.app.accepted, 0);
	assert_int_equal(nr_state(TCP_SYN_RECEIVED), 0);
	assert_int_equal(nr_state(TCP_ESTABLISHED), 0);
	assert_int_equal(tcp_listen(H.s, TH_PORT, 1, &th_ops, &H.app), 0);
	expect_stateful_syn();
	th_stop(&H);
}

/* Data on a SYN is not kept (tcp_open.c): the SYN-ACK acknowledges the
 * SYN alone, and the data, sent again after the handshake, is delivered
 * once. */
static void
test_data_on_syn_not_kept(void **st)
{
	struct th_seg *s;

	th_config(&H);
	th_start(&H);
	tcp_listen(H.s, TH_PORT, 0, &th_ops, &H.app);
	th_inject(&H, F_SYN, PEER, 0, 65535, &MSS1460, "early", 5);
	s = th_next(&H);
	assert_int_equal(s->flags, F_SYN | F_ACK);
	assert_int_equal(s->ack, PEER + 1);
	th_inject(&H, F_ACK, PEER + 1, s->seq + 1, 65535, NULL, "early", 5);
	assert_int_equal(H.app.accepted, 1);
	assert_int_equal(H.app.rx_len, 5);
	assert_memory_equal(H.app.rx, "early", 5);
	th_drain(&H);
	th_stop(&H);
}

/* fuzz-tcp's corpus/tcp/regress-ce3f9f0e*: after the SYN-ACK, the peer
 * sends 300 bytes one byte beyond rcv_nxt, then its FIN in that hole.
 * The FIN is the end of its stream (RFC 9293 §3.4: it comes after the
 * last data octet), so the queued bytes lie beyond it and can never be
 * delivered: taking the FIN frees them, and the ACK of the FIN reports
 * no SACK block for them. Without SACK (the fuzzer's script) and with
 * it. A segment without the ACK bit is dropped before any of this
 * (§3.10.7.4, fifth check). */
static void
fin_below_ooo(bool sack)
{
	const struct th_opts o = { .mss = 1460, .sack_ok = sack };
	static uint8_t data[300];
	struct tcp_conn *c;
	struct th_seg *s;
	unsigned int held;
	uint32_t iss;

	iss = th_open_active(&H, &c);
	th_inject(&H, F_SYN | F_ACK, PEER, iss + 1, 255, &o, NULL, 0);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 1);
	held = rte_mempool_in_use_count(th_pool);
	/* no ACK bit: dropped, not queued, not answered */
	th_inject(&H, F_PSH, PEER + 2, 0, 0, NULL, data, sizeof(data));
	assert_int_equal(th_pending(&H), 0);
	assert_int_equal(rte_mempool_in_use_count(th_pool), held);
	/* the same bytes with ACK: out of order, queued, ACKed at once */
	th_inject(&H, F_ACK | F_PSH, PEER + 2, iss + 1, 0, NULL, data,
		  sizeof(data));
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1);
	assert_int_equal(s->nr_sack, sack ? 1 : 0);
	if (sack)
		TH_SACK_IS(s, 0, PEER + 2, PEER + 302);
	assert_int_equal(rte_mempool_in_use_count(th_pool), held + 1);
	/* the FIN in the hole */
	th_inject(&H, F_FIN | F_ACK, PEER + 1, iss + 1, 0, NULL, NULL, 0);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSE_WAIT);
	assert_int_equal(H.app.eof, 1);
	s = th_next(&H);
	assert_int_equal(s->flags, F_ACK);
	assert_int_equal(s->ack, PEER + 2);
	assert_int_equal(s->nr_sack, 0);
	assert_int_equal(th_pending(&H), 0);
	/* nothing of the peer's is held any more */
	assert_int_equal(rte_mempool_in_use_count(th_pool), held);
	/* sent again, the bytes are past the FIN: ignored (§3.10.7.4,
	 * seventh step, CLOSE-WAIT) */
	th_inject(&H, F_ACK | F_PSH, PEER + 2, iss + 1, 0, NULL, data,
		  sizeof(data));
	th_drain(&H);
	assert_int_equal(rte_mempool_in_use_count(th_pool), held);
	assert_int_equal(H.app.nr_data_cb, 0);
	assert_int_equal(H.app.rx_len, 0);
	assert_int_equal(H.app.eof, 1);
	/* the whole window (OOO bytes never narrow it: tcp_rcv_window),
	 * unscaled */
	assert_int_equal(th_info(&H).rcv_wnd, 65535);
	th_stop(&H);
}

static void
test_fin_below_out_of_order_data(void **st)
{
	fin_below_ooo(false);
	fin_below_ooo(true);
}

/* The same bytes past a FIN that comes with in-order data: the queue
 * is not drained first (which would deliver them and take the FIN 300
 * bytes late); then a FIN seen out of order bounds what the hole, once
 * filled, lets through (else the bytes past it went to the app and the
 * FIN was lost: no EOF). RFC 9293 §3.4: the FIN follows the last data
 * octet of the peer's stream. */
static void
test_no_data_past_fin(void **st)
{
	static uint8_t data[300];
	unsigned int held;
	uint32_t iss;

	for (unsigned int i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 131 + 3);
	th_config(&H);
	iss = setup();
	held = rte_mempool_in_use_count(th_pool);
	th_inject(&H, F_ACK, PEER + 12, iss + 1, 65535, NULL, data, 300);
	th_inject(&H, F_ACK | F_FIN, PEER + 1, iss + 1, 65535, NULL, data,
		  11);
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 1);	/* the OOO data */
	EXPECT_SEG(&H, F_ACK, iss + 1, PEER + 13);	/* the FIN */
	assert_int_equal(tcp_conn_state(H.app.conn), TCP_CLOSE_WAIT);
	assert_int_equal(H.app.eof, 1);
	assert_int_equal(H.app.rx_len, 11);
	assert_memory_equal(H.app.rx, data, 11);
	assert_int_equal(rte_mempool_in_use_count(th_pool), held);
	th_stop(&H);

	th_config(&H);
	iss = setup();
	held = rte_mempool_in_use_count(th_pool);
	th_inject(&H, F_ACK | F_FIN, PEER + 11, iss + 1, 65535, NULL, NULL,
		  0);
	th_inject(&H, F_ACK, PEER + 11, iss + 1, 65535, NULL, data, 300);
	th_drain(&H);
	th_inject(&H, F_ACK, PEER + 1, iss + 1, 65535, NULL, data, 10);
	assert_int_equal(tcp_conn_state(H.app.conn), TCP_CLOSE_WAIT);
	assert_int_equal(H.app.eof, 1);
	assert_int_equal(H.app.rx_len, 10);
	assert_memory_equal(H.app.rx, data, 10);
	assert_int_equal(th_next(&H)->ack, PEER + 12);
	th_drain(&H);
	assert_int_equal(rte_mempool_in_use_count(th_pool), held);
	th_stop(&H);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simultaneous_close),
		cmocka_unit_test(test_closing_retransmits_fin),
		cmocka_unit_test(test_data_after_close_resets),
		cmocka_unit_test(test_data_after_shutdown_delivered),
		cmocka_unit_test(test_time_wait_ignores_rst),
		cmocka_unit_test(test_time_wait_new_syn_reopens),
		cmocka_unit_test(test_time_wait_recycles_oldest),
		cmocka_unit_test(test_rst_in_syn_received),
		cmocka_unit_test(test_syn_backlog_from_config),
		cmocka_unit_test(test_conn_limit_excludes_time_wait),
		cmocka_unit_test(test_close_into_zero_window),
		cmocka_unit_test(test_orphan_unread_reset),
		cmocka_unit_test(test_orphan_slow_reader_kept),
		cmocka_unit_test(test_cookie_ack_respects_conn_limit),
		cmocka_unit_test(
			test_syn_sent_validation_and_simultaneous_open),
		cmocka_unit_test(test_close_during_active_open),
		cmocka_unit_test(test_unlisten_with_half_open),
		cmocka_unit_test(test_data_on_syn_not_kept),
		cmocka_unit_test(test_fin_below_out_of_order_data),
		cmocka_unit_test(test_no_data_past_fin),
	};
	int rc;

	th_eal_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	th_eal_fini();
	return rc;
}
