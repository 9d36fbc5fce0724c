/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* The receive side as the app sees it. Zero-copy RX (issue 3): the app
 * receives the mbufs the data arrived in, positioned at the payload, and
 * may keep them as long as it likes while the connection goes on;
 * reassembled data is handed over the same way. And the window it holds
 * data against (manual flow control) reopens without inviting runts. */

#include <stdlib.h>
#include <string.h>

#include "tcp_harness.h"

static struct th H;
static uint8_t buf[16 * 1024];

#define PEER 1000u
#define KEEP_MAX 64

static const struct th_opts SACKOPT = { .mss = 1460, .sack_ok = 1 };

/* An app that keeps every mbuf it is given. */
static struct {
	struct rte_mbuf *m[KEEP_MAX];
	unsigned int n;
	unsigned int copies;	/* mbufs not where the segment put them */
} keep;

static int
keep_accepted(void *larg, struct tcp_conn *c, void **carg)
{
	(void)larg;
	H.app.conn = c;
	H.app.accepted++;
	*carg = NULL;
	return 0;
}

static void
keep_data(void *arg, struct tcp_conn *c, struct rte_mbuf *m)
{
	(void)arg;
	(void)c;
	assert_true(keep.n < KEEP_MAX);
	/* Each segment's payload follows its 20-byte TCP header in the
	 * buffer it was received in: received, not copied. */
	for (struct rte_mbuf *s = m; s != NULL; s = s->next)
		if (s->pool != th_pool || RTE_MBUF_CLONED(s) ||
		    s->data_off != RTE_PKTMBUF_HEADROOM + 20)
			keep.copies++;
	keep.m[keep.n++] = m;
}

static const struct tcp_ops keep_ops = {
	.accepted = keep_accepted,
	.data = keep_data,
};

static void
seg(uint32_t off, uint32_t len, uint32_t iss)
{
	th_inject(&H, F_ACK, PEER + 1 + off, iss + 1, 65535, NULL, buf + off,
		  len);
}

static void
test_app_keeps_received_mbufs(void **st)
{
	uint8_t got[sizeof(buf)];
	uint32_t iss, total = 0;

	th_config(&H);
	th_start(&H);
	memset(&keep, 0, sizeof(keep));
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + (i >> 8));
	assert_int_equal(tcp_listen(H.s, TH_PORT, 0, &keep_ops, NULL), 0);
	iss = th_handshake(&H, PEER, &SACKOPT);
	/* in order, then a hole filled late (reassembly queue), then more
	 * traffic while the app still holds everything */
	seg(0, 1000, iss);
	seg(2000, 1000, iss);
	seg(3000, 1000, iss);
	assert_int_equal(keep.n, 1);
	seg(1000, 1000, iss);
	for (uint32_t off = 4000; off < sizeof(buf); off += 1000)
		seg(off, RTE_MIN(1000u, (uint32_t)sizeof(buf) - off), iss);
	th_advance(&H, 100000);
	th_drain(&H);
	assert_true(keep.n >= 4);
	assert_int_equal(keep.copies, 0);
	/* every byte intact, in order, in the mbufs the app kept */
	for (unsigned int i = 0; i < keep.n; i++) {
		struct rte_mbuf *m = keep.m[i];
		const void *d = rte_pktmbuf_read(m, 0, m->pkt_len, got + total);

		assert_non_null(d);
		if (d != got + total)
			memcpy(got + total, d, m->pkt_len);
		total += m->pkt_len;
		rte_pktmbuf_free(m);
	}
	assert_int_equal(total, sizeof(buf));
	assert_memory_equal(got, buf, sizeof(buf));
	tcp_abort(H.app.conn);
	th_stop(&H);	/* nothing leaked: the app freed what it kept */
}

/* Receiver SWS avoidance (RFC 9293 §3.8.6.2.2, MUST): with the app
 * holding data (manual flow control, as lib/shard runs it), a window
 * that reopens by less than min(RCV.BUFF / 2, MSS) is not offered, not
 * even in the ACK of a zero-window probe; once that much is free it is. */
static void
test_receiver_sws_avoidance(void **st)
{
	struct th_seg *s;
	uint32_t iss, off;

	th_config(&H);
	H.cfg.rcv_buf = 8192;
	H.cfg.no_wscale = true;
	iss = (th_start(&H), th_handshake(&H, PEER, &SACKOPT));
	tcp_set_manual_recv(H.app.conn, true);
	for (off = 0; off < 8192; off += 1460)
		seg(off, RTE_MIN(1460u, 8192 - off), iss);
	th_advance(&H, 100000);
	while (th_pending(&H) > 1)
		th_next(&H);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1 + 8192);
	assert_int_equal(s->win, 0);
	/* the app frees 100 bytes: no window update for so little */
	tcp_recved(H.app.conn, 100);
	assert_int_equal(th_pending(&H), 0);
	/* a zero-window probe: not taken, and the ACK still says 0 */
	seg(8192, 1, iss);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1 + 8192);
	assert_int_equal(s->win, 0);
	assert_int_equal(H.app.rx_len, 8192);
	/* 1500 free: more than an MSS, offered at once */
	tcp_recved(H.app.conn, 1400);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1 + 8192);
	assert_int_equal(s->win, 1500);
	seg(8192, 1460, iss);
	assert_int_equal(H.app.rx_len, 8192 + 1460);
	th_drain(&H);
	th_stop(&H);
}

/* Two stacks wired back to back for the slow-reader test. */
#define WIRE_MAX 4096
static struct {
	struct rte_mbuf *m[WIRE_MAX];
	unsigned int n;
} wire[2];			/* [0]: to the sender, [1]: to the reader */

static int
wire_out(void *arg, struct rte_mbuf *m, uint32_t dst)
{
	unsigned int w = (unsigned int)(uintptr_t)arg;

	(void)dst;
	if (wire[w].n == WIRE_MAX) {
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	wire[w].m[wire[w].n++] = m;
	return 0;
}

static struct {
	struct tcp_conn *c;
	uint32_t rx, held;
	int bad;
} rd;

static int
rd_accepted(void *larg, struct tcp_conn *c, void **carg)
{
	(void)larg;
	rd.c = c;
	*carg = NULL;
	tcp_set_manual_recv(c, true);
	return 0;
}

static void
rd_data(void *arg, struct tcp_conn *c, struct rte_mbuf *m)
{
	uint8_t tmp[2048];

	(void)arg;
	(void)c;
	for (uint32_t off = 0; off < m->pkt_len; ) {
		uint32_t n = RTE_MIN(m->pkt_len - off, (uint32_t)sizeof(tmp));
		const uint8_t *d = rte_pktmbuf_read(m, off, n, tmp);

		for (uint32_t i = 0; i < n; i++)
			if (d[i] != buf[(rd.rx + off + i) % sizeof(buf)])
				rd.bad++;
		off += n;
	}
	rd.rx += m->pkt_len;
	rd.held += m->pkt_len;
	rte_pktmbuf_free(m);
}

static const struct tcp_ops rd_ops = {
	.accepted = rd_accepted,
	.data = rd_data,
};

static void
wire_deliver(struct tcp_stack *to, unsigned int w, uint32_t src,
	     uint32_t dst, uint64_t now)
{
	unsigned int n = wire[w].n;
	struct rte_mbuf *m[WIRE_MAX];

	memcpy(m, wire[w].m, n * sizeof(m[0]));
	wire[w].n = 0;
	for (unsigned int i = 0; i < n; i++)
		tcp_input(to, m[i], src, dst, now);
}

/* A reader that frees its receive buffer a little at a time (100 bytes
 * per millisecond, a third of an MSS) behind a 3000-byte buffer: with
 * receiver SWS avoidance the window stays shut between full reopenings,
 * the sender probes, and the transfer still completes, intact. */
static void
test_slow_reader_completes(void **st)
{
	const uint32_t total = 200 * 1000;
	struct tcp_stack_config ca, cb;
	struct tcp_stack *sa, *sb;
	struct tcp_conn *c;
	uint32_t sent = 0;
	uint64_t now = 1000000000ull;
	unsigned int ms;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 13 + (i >> 9));
	memset(&rd, 0, sizeof(rd));
	th_config(&H);
	th_start(&H);	/* EAL, pool, leak baseline */
	ca = H.cfg;
	ca.output = wire_out;
	ca.output_arg = (void *)(uintptr_t)1;
	cb = H.cfg;
	cb.local_ip = TH_REMOTE_IP;
	cb.output = wire_out;
	cb.output_arg = (void *)(uintptr_t)0;
	cb.rcv_buf = 3000;
	sa = tcp_stack_create(&ca);
	sb = tcp_stack_create(&cb);
	assert_non_null(sa);
	assert_non_null(sb);
	assert_int_equal(tcp_listen(sb, 9, 0, &rd_ops, NULL), 0);
	tcp_poll(sa, now);	/* the clock API calls read */
	tcp_poll(sb, now);
	assert_int_equal(tcp_connect(sa, TH_REMOTE_IP, 9, &th_ops, &H.app,
				     &c), 0);
	for (ms = 0; ms < 20000 && rd.rx < total; ms++) {
		now += 1000;
		while (H.app.connected && sent < total) {
			uint32_t n = RTE_MIN(total - sent,
					     (uint32_t)sizeof(buf) -
					     sent % (uint32_t)sizeof(buf));
			int rc = tcp_send(c, buf + sent % sizeof(buf), n);

			if (rc <= 0)
				break;
			sent += rc;
		}
		if (H.app.connected)
			tcp_flush(c);
		if (rd.c != NULL && rd.held > 0) {
			uint32_t n = RTE_MIN(rd.held, 100u);

			rd.held -= n;
			tcp_recved(rd.c, n);
		}
		tcp_poll(sa, now);
		tcp_poll(sb, now);
		wire_deliver(sb, 1, TH_LOCAL_IP, TH_REMOTE_IP, now);
		wire_deliver(sa, 0, TH_REMOTE_IP, TH_LOCAL_IP, now);
	}
	assert_int_equal(rd.rx, total);
	assert_int_equal(rd.bad, 0);
	/* ~2 s of reading at 100 kB/s, not a stall ended by a timeout */
	assert_true(ms < 4000);
	tcp_stack_destroy(sa);
	tcp_stack_destroy(sb);
	wire_deliver(NULL, 0, 0, 0, 0);
	th_stop(&H);
}

/* An app that answers and closes (or aborts) from inside the data
 * callback, as an HTTP server does with "Connection: close". */
static int cb_mode;	/* 0: reply + close, 1: abort */
static int cb_closed;

static void
cb_data(void *arg, struct tcp_conn *c, struct rte_mbuf *m)
{
	(void)arg;
	rte_pktmbuf_free(m);
	if (cb_mode == 0) {
		assert_int_equal(tcp_send(c, "bye", 3), 3);
		tcp_close(c);
		/* after tcp_close() the handle is the stack's: no more calls */
	} else {
		tcp_abort(c);
	}
}

static void
cb_closed_fn(void *arg, struct tcp_conn *c, int reason)
{
	(void)arg;
	(void)c;
	(void)reason;
	cb_closed++;
}

static const struct tcp_ops cb_ops = {
	.accepted = keep_accepted,
	.data = cb_data,
	.closed = cb_closed_fn,
};

static void
test_close_or_abort_inside_data_callback(void **st)
{
	struct tcp_stats sts;
	struct th_seg *s;
	uint32_t iss;

	for (cb_mode = 0; cb_mode < 2; cb_mode++) {
		th_config(&H);
		th_start(&H);
		cb_closed = 0;
		assert_int_equal(tcp_listen(H.s, TH_PORT, 0, &cb_ops, NULL), 0);
		iss = th_handshake(&H, PEER, &SACKOPT);
		th_inject(&H, F_ACK | F_PSH, PEER + 1, iss + 1, 65535, NULL,
			  "GET", 3);
		s = th_next(&H);
		if (cb_mode == 0) {
			assert_int_equal(s->flags, F_ACK | F_PSH | F_FIN);
			assert_int_equal(s->len, 3);
			assert_int_equal(s->ack, PEER + 4);
			th_inject(&H, F_ACK | F_FIN, PEER + 4, iss + 5, 65535,
				  NULL, NULL, 0);
			EXPECT_SEG(&H, F_ACK, iss + 5, PEER + 5);
			tcp_stack_stats(H.s, &sts);
			assert_int_equal(sts.conns[TCP_TIME_WAIT], 1);
		} else {
			assert_true(s->flags & F_RST);
			th_inject(&H, F_ACK | F_PSH, PEER + 4, iss + 1, 65535,
				  NULL, "more", 4);
			assert_true(th_next(&H)->flags & F_RST);
			tcp_stack_stats(H.s, &sts);
			assert_int_equal(sts.conns[TCP_ESTABLISHED], 0);
		}
		assert_int_equal(cb_closed, 0);	/* the app closed it */
		assert_int_equal(th_pending(&H), 0);
		th_stop(&H);	/* no mbuf leaked */
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_app_keeps_received_mbufs),
		cmocka_unit_test(test_receiver_sws_avoidance),
		cmocka_unit_test(test_slow_reader_completes),
		cmocka_unit_test(test_close_or_abort_inside_data_callback),
	};
	int rc;

	th_eal_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	th_eal_fini();
	return rc;
}
