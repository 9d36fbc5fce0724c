/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Benchmark (not a test): the TCP layer's own cost. A client stack and a
 * server stack in one thread, each one's output handed straight to the
 * other's input (no IP, no NIC): K keep-alive connections do 64-byte
 * request/response echoes, then one connection moves bulk data by
 * reference. Prints requests/s and Gbit/s of this one core doing BOTH
 * ends, i.e. a ceiling for the stack, not a network figure.
 *
 * usage: bench_tcp_echo [seconds] [connections]
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "tcp.h"

#define IP_S RTE_BE32(0xc6120201)
#define IP_C RTE_BE32(0xc6120202)
#define QMAX 65536

static struct rte_mbuf *q[QMAX];
static uint8_t qdir[QMAX];	/* 1: to server */
static unsigned int qh, qt;
static struct tcp_stack *srv, *cli;
static uint64_t reqs, bulk_rx;
static uint8_t msg[64];
static uint8_t *bulk;

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ull + ts.tv_nsec / 1000;
}

static int
out(void *arg, struct rte_mbuf *m, uint32_t dst)
{
	if (qt - qh == QMAX) {
		rte_pktmbuf_free(m);
		return -ENOSPC;
	}
	q[qt % QMAX] = m;
	qdir[qt % QMAX] = dst == IP_S;
	qt++;
	return 0;
}

/* Deliver what is queued now (replies queue more: one round per call). */
static void
pump(uint64_t t)
{
	unsigned int stop = qt;

	while (qh != stop) {
		struct rte_mbuf *m = q[qh % QMAX];
		int to_s = qdir[qh % QMAX];

		qh++;
		/* a NIC would have verified the checksum */
		m->ol_flags = RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		if (to_s)
			tcp_input(srv, m, IP_C, IP_S, t);
		else
			tcp_input(cli, m, IP_S, IP_C, t);
	}
}

static int
s_acc(void *l, struct tcp_conn *c, void **a)
{
	return 0;
}

static void
s_data(void *a, struct tcp_conn *c, struct rte_mbuf *m)
{
	uint32_t n = m->pkt_len;

	rte_pktmbuf_free(m);
	tcp_send(c, msg, n);
	tcp_flush(c);
}

static void
c_conn(void *a, struct tcp_conn *c)
{
	tcp_send(c, msg, sizeof(msg));
	tcp_flush(c);
}

static void
c_data(void *a, struct tcp_conn *c, struct rte_mbuf *m)
{
	rte_pktmbuf_free(m);
	reqs++;
	tcp_send(c, msg, sizeof(msg));
	tcp_flush(c);
}

static void
b_data(void *a, struct tcp_conn *c, struct rte_mbuf *m)
{
	bulk_rx += m->pkt_len;
	rte_pktmbuf_free(m);
}

static void
noop_release(void *arg)
{
}

static const struct tcp_ops s_ops = { .accepted = s_acc, .data = s_data };
static const struct tcp_ops c_ops = { .connected = c_conn, .data = c_data };
static const struct tcp_ops b_ops = { .accepted = s_acc, .data = b_data };

int
main(int argc, char **argv)
{
	char *eal[] = { "bench", "--no-pci", "--no-huge", "-m", "512",
			"--no-shconf", "--file-prefix", "tcp_bench", "-l", "0",
			"--log-level", "error", "--no-telemetry", NULL };
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	int nconn = argc > 2 ? atoi(argv[2]) : 16;
	struct tcp_stack_config cfg = { 0 };
	struct rte_mempool *pool;
	uint64_t t0, t, end, r0;
	struct tcp_conn *c;

	if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0)
		return 1;
	pool = rte_pktmbuf_pool_create("bench", 65535, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	if (pool == NULL)
		return 1;
	cfg.pool = pool;
	cfg.output = out;
	cfg.tx_cksum_offload = true;	/* as on a NIC that offloads it */
	cfg.snd_buf = 64u << 20;
	cfg.rcv_buf = 1u << 20;
	cfg.local_ip = IP_S;
	srv = tcp_stack_create(&cfg);
	cfg.local_ip = IP_C;
	cli = tcp_stack_create(&cfg);
	t = now_us();
	tcp_listen(srv, 80, 0, &s_ops, NULL);
	tcp_listen(srv, 81, 0, &b_ops, NULL);
	for (int i = 0; i < nconn; i++)
		tcp_connect(cli, IP_S, 80, &c_ops, NULL, &c);
	pump(t);
	t0 = now_us();
	r0 = reqs;
	end = t0 + (uint64_t)(secs * 1e6);
	while ((t = now_us()) < end) {
		for (int i = 0; i < 64; i++)
			pump(t);
		tcp_poll(srv, t);
		tcp_poll(cli, t);
	}
	printf("echo 64 B, %d connections, client+server on one core: "
	       "%.0f requests/s (%.0f ns per request/response pair)\n",
	       nconn, (reqs - r0) / ((t - t0) / 1e6),
	       (t - t0) * 1e3 / (double)(reqs - r0));

	/* bulk: 64 MiB by reference over one connection */
	bulk = rte_malloc(NULL, 64u << 20, 64);
	memset(bulk, 0x5a, 64u << 20);
	{
		struct tcp_ops bo = { 0 };
		struct iovec iov = { bulk, 64u << 20 };

		tcp_connect(cli, IP_S, 81, &bo, NULL, &c);
		pump(now_us());
		t0 = now_us();
		tcp_send_iov(c, &iov, 1, noop_release, NULL);
		tcp_flush(c);
		while (bulk_rx < (64u << 20) && (t = now_us()) < t0 + 30000000) {
			pump(t);
			tcp_poll(srv, t);
			tcp_poll(cli, t);
		}
		printf("bulk 64 MiB by reference, one connection, both ends on "
		       "one core: %.2f Gbit/s\n",
		       bulk_rx * 8 / ((t - t0) / 1e6) / 1e9);
	}
	tcp_stack_destroy(srv);
	tcp_stack_destroy(cli);
	rte_eal_cleanup();
	return 0;
}
