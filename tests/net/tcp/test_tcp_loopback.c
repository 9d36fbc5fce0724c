/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Two stacks in one process, each one's output wired to the other's input
 * through a shim that delays, drops, reorders, duplicates and corrupts
 * segments, on a virtual clock. Transfers in both directions at once
 * (client -> server copied with tcp_send, server -> client by reference
 * with tcp_send_iov) must arrive intact and close normally. */

#include <stdlib.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_tcp.h>

#include "tcp_cksum.h"
#include "tcp_harness.h"
#include "test_rng.h"

#define IP_A TH_LOCAL_IP	/* server */
#define IP_B TH_REMOTE_IP	/* client */
#define QMAX 8192
#define MAXSZ (4u << 20)

struct pkt {
	struct rte_mbuf *m;
	uint64_t at;
	int to_a;
};

struct shim {
	struct pkt q[QMAX];
	unsigned int n;
	uint64_t rng;
	unsigned int loss, dup, corrupt, jitter_us;	/* per 1000 */
	uint64_t delay_us;
	uint64_t now;
	unsigned long dropped, duplicated, corrupted, tso_segs;
};

struct end {
	struct tcp_stack *s;
	struct tcp_conn *c;
	uint32_t to_send, queued;
	uint32_t rx, rx_expect;
	int bad, eof, closed, reason, released;
	uint8_t seed_rx;
};

static struct shim L;
static struct end A, B;
static uint8_t *pat_a, *pat_b;	/* what A sends, what B sends */

static void
enqueue(struct rte_mbuf *m, int to_a)
{
	if (L.n == QMAX) {
		rte_pktmbuf_free(m);
		L.dropped++;
		return;
	}
	L.q[L.n].m = m;
	L.q[L.n].at = L.now + L.delay_us +
		      (L.jitter_us ? test_rng_below(&L.rng, L.jitter_us) : 0);
	L.q[L.n].to_a = to_a;
	L.n++;
}

static int trace;

static void
trace_pkt(const char *what, struct rte_mbuf *m, int to_a)
{
	const uint8_t *t = rte_pktmbuf_mtod(m, const uint8_t *);

	if (!trace)
		return;
	printf("%10.6f %s %s flags %02x seq %u ack %u win %u len %u\n",
	       (L.now - 1000000000ull) / 1e6, to_a ? "B->A" : "A->B", what,
	       t[13], rte_be_to_cpu_32(*(const uint32_t *)(t + 4)),
	       rte_be_to_cpu_32(*(const uint32_t *)(t + 8)),
	       rte_be_to_cpu_16(*(const uint16_t *)(t + 14)),
	       m->pkt_len - (t[12] >> 4) * 4);
}

/* What a NIC with checksum offload and TSO would leave on the wire: the
 * full checksum (a TSO segment stays whole, as after GRO). */
static void
nic_offload(struct rte_mbuf *m, uint32_t dst)
{
	struct rte_tcp_hdr *t = rte_pktmbuf_mtod(m, struct rte_tcp_hdr *);
	struct {
		uint32_t src, dst;
		uint8_t zero, proto;
		uint16_t len;
	} __rte_packed ph = { dst == IP_A ? IP_B : IP_A, dst, 0, IPPROTO_TCP,
			      rte_cpu_to_be_16((uint16_t)m->pkt_len) };
	uint16_t raw = 0;
	uint32_t sum;

	if (!(m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM))
		return;
	if (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG)
		L.tso_segs++;
	m->ol_flags &= ~(RTE_MBUF_F_TX_TCP_CKSUM | RTE_MBUF_F_TX_TCP_SEG);
	t->cksum = 0;
	tcp_cksum_mbuf(m, 0, m->pkt_len, &raw); /* not DPDK 22.11's: tcp_cksum.h */
	sum = (uint32_t)raw + rte_raw_cksum(&ph, sizeof(ph));
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	t->cksum = (uint16_t)~sum;
}

static int
shim_out(void *arg, struct rte_mbuf *m, uint32_t dst)
{
	int to_a = dst == IP_A;
	int lost = test_rng_below(&L.rng, 1000) < L.loss;

	nic_offload(m, dst);

	trace_pkt(lost ? "LOST" : "sent", m, to_a);
	if (lost) {
		L.dropped++;
		rte_pktmbuf_free(m);
		return 0;
	}
	if (test_rng_below(&L.rng, 1000) < L.corrupt && m->pkt_len > 20) {
		/* corrupt a private copy: m may point into send buffers */
		struct rte_mbuf *c = rte_pktmbuf_copy(m, th_pool, 0, UINT32_MAX);

		rte_pktmbuf_free(m);
		if (c == NULL)
			return 0;
		rte_pktmbuf_mtod(c, uint8_t *)
			[test_rng_below(&L.rng, c->data_len)] ^= 0x5a;
		L.corrupted++;
		m = c;
	}
	if (test_rng_below(&L.rng, 1000) < L.dup) {
		struct rte_mbuf *d = rte_pktmbuf_copy(m, th_pool, 0, UINT32_MAX);

		if (d != NULL) {
			enqueue(d, to_a);
			L.duplicated++;
		}
	}
	enqueue(m, to_a);
	return 0;
}

static void
shim_deliver(void)
{
	unsigned int i = 0;

	while (i < L.n) {
		if (L.q[i].at > L.now) {
			i++;
			continue;
		}
		struct pkt p = L.q[i];

		L.q[i] = L.q[--L.n];
		if (p.to_a)
			tcp_input(A.s, p.m, IP_B, IP_A, L.now);
		else
			tcp_input(B.s, p.m, IP_A, IP_B, L.now);
	}
}

/* ---- the two applications ---- */

static void
check_rx(struct end *e, const uint8_t *pat, struct rte_mbuf *m)
{
	for (struct rte_mbuf *s = m; s != NULL; s = s->next) {
		if (e->rx + s->data_len > e->rx_expect ||
		    memcmp(rte_pktmbuf_mtod(s, void *), pat + e->rx,
			   s->data_len) != 0)
			e->bad++;
		e->rx += s->data_len;
	}
	rte_pktmbuf_free(m);
}

static void
push_b(void)
{
	while (B.c != NULL && B.queued < B.to_send) {
		int n = tcp_send(B.c, pat_b + B.queued,
				 RTE_MIN(B.to_send - B.queued, 65536u));

		if (n <= 0)
			break;
		B.queued += n;
	}
	if (B.c != NULL && B.queued == B.to_send)
		tcp_shutdown(B.c);
	if (B.c != NULL)
		tcp_flush(B.c);
}

static void
release_a(void *arg)
{
	A.released++;
}

static int
a_accepted(void *larg, struct tcp_conn *c, void **carg)
{
	struct iovec iov = { pat_a, A.to_send };

	A.c = c;
	if (A.to_send > 0)
		assert_int_equal(tcp_send_iov(c, &iov, 1, release_a, NULL), 0);
	tcp_shutdown(c);
	return 0;
}

static void
a_data(void *arg, struct tcp_conn *c, struct rte_mbuf *m)
{
	check_rx(&A, pat_b, m);
}

static void
a_eof(void *arg, struct tcp_conn *c)
{
	A.eof++;
}

static void
a_closed(void *arg, struct tcp_conn *c, int reason)
{
	A.closed++;
	A.reason = reason;
	A.c = NULL;
}

static const struct tcp_ops a_ops = {
	.accepted = a_accepted, .data = a_data, .eof = a_eof,
	.closed = a_closed,
};

static void
b_connected(void *arg, struct tcp_conn *c)
{
	push_b();
}

static void
b_data(void *arg, struct tcp_conn *c, struct rte_mbuf *m)
{
	check_rx(&B, pat_a, m);
}

static void
b_eof(void *arg, struct tcp_conn *c)
{
	B.eof++;
}

static void
b_sent(void *arg, struct tcp_conn *c, uint32_t n)
{
	push_b();
}

static void
b_closed(void *arg, struct tcp_conn *c, int reason)
{
	B.closed++;
	B.reason = reason;
	B.c = NULL;
}

static const struct tcp_ops b_ops = {
	.connected = b_connected, .data = b_data, .eof = b_eof,
	.sent = b_sent, .closed = b_closed,
};

/* ---- driver ---- */

struct run {
	uint32_t a_bytes, b_bytes;
	unsigned int loss, dup, corrupt, jitter_us;
	enum tcp_cc_algo cc;
	bool no_opts;
	bool tso;
	uint32_t seed;
};

static void
transfer(const struct run *r)
{
	struct tcp_stack_config cfg = { 0 };
	unsigned int base;
	uint64_t end;

	memset(&L, 0, sizeof(L));
	memset(&A, 0, sizeof(A));
	memset(&B, 0, sizeof(B));
	/* The impairments replay from the run's seed (TCP_SEED). */
	L.rng = test_rng_seed(0x9e3779b97f4a7c15ull ^
			      (r->a_bytes * 31 + r->b_bytes) ^
			      ((uint64_t)r->seed << 40));
	L.loss = r->loss;
	L.dup = r->dup;
	L.corrupt = r->corrupt;
	L.jitter_us = r->jitter_us;
	L.delay_us = 500;
	L.now = 1000000000ull;
	base = rte_mempool_in_use_count(th_pool);

	cfg.mtu = 1500;
	cfg.pool = th_pool;
	cfg.output = shim_out;
	cfg.max_conns = 16;
	cfg.snd_buf = 8u << 20;
	cfg.cc = r->cc;
	cfg.no_sack = cfg.no_timestamps = cfg.no_wscale = r->no_opts;
	cfg.tx_cksum_offload = r->tso;
	cfg.tso_max = r->tso ? 65000 : 0;
	cfg.local_ip = IP_A;
	A.s = tcp_stack_create(&cfg);
	cfg.local_ip = IP_B;
	B.s = tcp_stack_create(&cfg);
	assert_non_null(A.s);
	assert_non_null(B.s);
	tcp_poll(A.s, L.now);
	tcp_poll(B.s, L.now);
	A.to_send = r->a_bytes;
	B.to_send = r->b_bytes;
	A.rx_expect = r->b_bytes;
	B.rx_expect = r->a_bytes;
	assert_int_equal(tcp_listen(A.s, 80, 0, &a_ops, NULL), 0);
	assert_int_equal(tcp_connect(B.s, IP_A, 80, &b_ops, NULL, &B.c), 0);

	end = L.now + 600ull * 1000000;	/* virtual bound */
	while (L.now < end && !(A.closed && B.closed)) {
		L.now += 100;
		shim_deliver();
		tcp_poll(A.s, L.now);
		tcp_poll(B.s, L.now);
	}
	print_message("  a->b %u b->a %u loss %u/1000: %.3f s virtual, "
		      "dropped %lu dup %lu corrupt %lu\n", r->a_bytes,
		      r->b_bytes, r->loss, (L.now - 1000000000ull) / 1e6,
		      L.dropped, L.duplicated, L.corrupted);
	if (r->tso && r->a_bytes > 100000)
		assert_true(L.tso_segs > 0);
	assert_int_equal(A.bad, 0);
	assert_int_equal(B.bad, 0);
	assert_int_equal(A.rx, r->b_bytes);
	assert_int_equal(B.rx, r->a_bytes);
	assert_int_equal(A.eof, 1);
	assert_int_equal(B.eof, 1);
	assert_int_equal(A.closed, 1);
	assert_int_equal(B.closed, 1);
	assert_int_equal(A.reason, TCP_CLOSE_NORMAL);
	assert_int_equal(B.reason, TCP_CLOSE_NORMAL);
	/* segments still on the wire may reference the buffer; once they
	 * are gone it was released exactly once */
	while (L.n > 0)
		rte_pktmbuf_free(L.q[--L.n].m);
	assert_int_equal(A.released, r->a_bytes > 0 ? 1 : 0);
	tcp_stack_destroy(A.s);
	tcp_stack_destroy(B.s);
	assert_int_equal(rte_mempool_in_use_count(th_pool), base);
}

static void
test_clean_sizes(void **st)
{
	static const uint32_t sz[] = { 1, 1000, 1460, 100000, MAXSZ };

	for (unsigned int i = 0; i < RTE_DIM(sz); i++) {
		struct run r = { .a_bytes = sz[i],
				 .b_bytes = sz[RTE_DIM(sz) - 1 - i] };

		transfer(&r);
	}
}

static void
test_one_way_and_empty(void **st)
{
	struct run r = { .a_bytes = 0, .b_bytes = 5000 };

	transfer(&r);
	r = (struct run){ .a_bytes = 5000, .b_bytes = 0 };
	transfer(&r);
	r = (struct run){ 0 };
	transfer(&r);
}

static void
test_lossy_reordering_cubic_sack(void **st)
{
	static const uint32_t sz[] = { 1, 3000, 200000, 2u << 20 };

	for (unsigned int i = 0; i < RTE_DIM(sz); i++) {
		struct run r = { .a_bytes = sz[i], .b_bytes = sz[i] / 2 + 1,
				 .loss = 20, .dup = 10, .corrupt = 5,
				 .jitter_us = 800 };

		transfer(&r);
	}
}

static void
test_lossy_newreno_no_options(void **st)
{
	static const uint32_t sz[] = { 1, 200000, 1u << 20 };

	for (unsigned int i = 0; i < RTE_DIM(sz); i++) {
		struct run r = { .a_bytes = sz[i], .b_bytes = sz[i],
				 .loss = 30, .dup = 10, .corrupt = 5,
				 .jitter_us = 500, .cc = TCP_CC_NEWRENO,
				 .no_opts = true };

		transfer(&r);
	}
}

/* 10% loss each way with heavy reordering, both congestion controls,
 * with and without SACK/timestamps. */
static void
test_heavy_loss(void **st)
{
	uint32_t last = getenv("TCP_HEAVY") ? atoi(getenv("TCP_HEAVY")) : 12;

	for (uint32_t seed = 1; seed <= last; seed++) {
		struct run r = { .a_bytes = 200000 + seed, .b_bytes = 100000,
				 .loss = 100, .dup = 30, .corrupt = 10,
				 .jitter_us = 2000, .seed = seed,
				 .no_opts = seed % 3 == 0,
				 .cc = seed % 2 ? TCP_CC_NEWRENO : TCP_CC_CUBIC };

		transfer(&r);
	}
}

/* TSO on both ends (the shim plays the NIC), clean and lossy. */
static void
test_tso_clean_and_lossy(void **st)
{
	struct run r = { .a_bytes = MAXSZ, .b_bytes = 300000, .tso = true };

	transfer(&r);
	r = (struct run){ .a_bytes = 1u << 20, .b_bytes = 200000, .tso = true,
			  .loss = 20, .dup = 10, .corrupt = 5,
			  .jitter_us = 800 };
	transfer(&r);
}

/* Small exchanges under 10% loss, many seeds: SYN, SYN-ACK, FIN and
 * last-ACK losses all happen somewhere among them. */
static void
test_small_many_seeds(void **st)
{
	/* TCP_SEED / TCP_SEEDS: replay one seed, or stress with more */
	uint32_t first = getenv("TCP_SEED") ? atoi(getenv("TCP_SEED")) : 1;
	uint32_t last = getenv("TCP_SEEDS") ? atoi(getenv("TCP_SEEDS")) : 200;

	for (uint32_t seed = first; seed <= last; seed++) {
		struct run r = { .a_bytes = seed * 97, .b_bytes = seed % 7,
				 .loss = 100, .dup = 20, .jitter_us = 300,
				 .seed = seed, .no_opts = seed & 1 };

		transfer(&r);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_sizes),
		cmocka_unit_test(test_one_way_and_empty),
		cmocka_unit_test(test_lossy_reordering_cubic_sack),
		cmocka_unit_test(test_lossy_newreno_no_options),
		cmocka_unit_test(test_heavy_loss),
		cmocka_unit_test(test_tso_clean_and_lossy),
		cmocka_unit_test(test_small_many_seeds),
	};
	int rc;

	trace = getenv("TCP_TRACE") != NULL;
	th_eal_init();
	pat_a = malloc(MAXSZ);
	pat_b = malloc(MAXSZ);
	for (uint32_t i = 0; i < MAXSZ; i++) {
		pat_a[i] = (uint8_t)(i * 2654435761u >> 13);
		pat_b[i] = (uint8_t)((i ^ (i >> 9)) * 40503u >> 3);
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	free(pat_a);
	free(pat_b);
	th_eal_fini();
	return rc;
}
