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

static void
data_in(uint32_t iss, uint32_t off, uint32_t len)
{
	th_inject(&H, F_ACK, PEER + 1 + off, iss + 1, 65535, NULL, buf + off,
		  len);
}

static uint64_t
drops(enum tcp_drop_reason r)
{
	struct tcp_stats st;

	tcp_stack_stats(H.s, &st);
	return st.drops[r];
}

/* A whole window behind one lost segment is held: the queue counts
 * blocks, not segments (it used to drop all but 64 segments). */
static void
test_ooo_window_behind_one_hole(void **st)
{
	struct th_seg *s;
	uint32_t iss;
	unsigned int i;

	th_config(&H);
	iss = (th_start(&H), th_handshake(&H, PEER, &WSSACK));
	fill(buf, 160 * MSS, 1);
	for (i = 1; i < 160; i++) {
		data_in(iss, i * MSS, MSS);
		s = th_next(&H);
		assert_int_equal(s->ack, PEER + 1);
		assert_int_equal(s->nr_sack, 1);
		assert_int_equal(s->sack[0][0], PEER + 1 + MSS);
		assert_int_equal(s->sack[0][1], PEER + 1 + (i + 1) * MSS);
	}
	assert_int_equal(drops(TCP_DROP_OOO_MEM), 0);
	assert_int_equal(H.app.rx_len, 0);
	data_in(iss, 0, MSS);
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
	uint32_t iss;
	unsigned int i;

	th_config(&H);
	iss = (th_start(&H), th_handshake(&H, PEER, &WSSACK));
	fill(buf, 4000, 2);
	for (i = 0; i < 64; i++)	/* 64 one-byte blocks 1000, 1002.. */
		data_in(iss, 1000 + 2 * i, 1);
	th_drain(&H);
	assert_int_equal(drops(TCP_DROP_OOO_MEM), 0);
	data_in(iss, 3000, 1);		/* above all: dropped */
	th_drain(&H);
	assert_int_equal(drops(TCP_DROP_OOO_MEM), 1);
	data_in(iss, 10, 5);		/* below all: kept, 1126 evicted */
	assert_int_equal(drops(TCP_DROP_OOO_MEM), 2);
	s = th_next(&H);
	assert_int_equal(s->nr_sack, 4);	/* newest first, then older ones */
	assert_int_equal(s->sack[0][0], PEER + 1 + 10);
	assert_int_equal(s->sack[0][1], PEER + 1 + 15);
	/* the bytes before it complete the first run */
	data_in(iss, 0, 10);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1 + 15);
	assert_int_equal(H.app.rx_len, 15);
	assert_memory_equal(H.app.rx, buf, 15);
	/* 1126 was evicted, 1124 was not: fill everything up to 1127 */
	data_in(iss, 15, 1000 - 15);
	for (i = 0; i < 63; i++)
		data_in(iss, 1001 + 2 * i, 1);
	th_drain(&H);
	assert_int_equal(H.app.rx_len, 1126);
	data_in(iss, 1126, 2);
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
	uint32_t iss;

	th_config(&H);
	iss = (th_start(&H), th_handshake(&H, PEER, &SACKOPT));
	fill(buf, 10 * MSS, 3);
	data_in(iss, 4 * MSS, MSS);
	data_in(iss, 2 * MSS, MSS);
	data_in(iss, 3 * MSS, MSS);	/* joins both */
	th_drain(&H);
	data_in(iss, 3 * MSS, MSS);	/* duplicate of held data */
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1);
	assert_int_equal(s->nr_sack, 2);
	assert_int_equal(s->sack[0][0], PEER + 1 + 3 * MSS);
	assert_int_equal(s->sack[0][1], PEER + 1 + 4 * MSS);
	assert_int_equal(s->sack[1][0], PEER + 1 + 2 * MSS);
	assert_int_equal(s->sack[1][1], PEER + 1 + 5 * MSS);
	data_in(iss, 1 * MSS, MSS);	/* prepends to the block */
	s = th_next(&H);
	assert_int_equal(s->nr_sack, 1);
	assert_int_equal(s->sack[0][0], PEER + 1 + MSS);
	assert_int_equal(s->sack[0][1], PEER + 1 + 5 * MSS);
	data_in(iss, 0, MSS);
	s = th_next(&H);
	assert_int_equal(s->ack, PEER + 1 + 5 * MSS);
	assert_int_equal(H.app.rx_len, 5 * MSS);
	assert_memory_equal(H.app.rx, buf, 5 * MSS);
	th_stop(&H);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ooo_window_behind_one_hole),
		cmocka_unit_test(test_ooo_full_keeps_lowest),
		cmocka_unit_test(test_ooo_merge_and_dsack),
	};
	int rc;

	th_eal_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	th_eal_fini();
	return rc;
}
