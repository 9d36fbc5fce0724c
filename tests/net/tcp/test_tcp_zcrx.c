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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_app_keeps_received_mbufs),
		cmocka_unit_test(test_receiver_sws_avoidance),
	};
	int rc;

	th_eal_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	th_eal_fini();
	return rc;
}
