/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "tcp_harness.h"

struct rte_mempool *th_pool;

void
th_eal_init(void)
{
	static int done;
	char prefix[64];
	char *argv[] = { "tcp_test", "--no-pci", "--no-huge", "-m", "256",
			 "--no-shconf", "--file-prefix", prefix, "-l", "0",
			 "--log-level", "error", "--no-telemetry", NULL };

	if (done)
		return;
	snprintf(prefix, sizeof(prefix), "tcp_test_%d", (int)getpid());
	if (rte_eal_init(RTE_DIM(argv) - 1, argv) < 0) {
		fprintf(stderr, "rte_eal_init failed\n");
		exit(1);
	}
	th_pool = rte_pktmbuf_pool_create("th_pool", 32767, 256, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE,
					  SOCKET_ID_ANY);
	if (th_pool == NULL) {
		fprintf(stderr, "mbuf pool creation failed\n");
		exit(1);
	}
	done = 1;
}

static int
th_output(void *arg, struct rte_mbuf *m, uint32_t dst)
{
	struct th *h = arg;

	if (h->full_out) {
		h->nr_full++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	if (dst != TH_REMOTE_IP || h->cap_tail - h->cap_head >= TH_CAP ||
	    h->refuse_out) {
		rte_pktmbuf_free(m);
		return -ENOSPC;
	}
	h->cap[h->cap_tail++ % TH_CAP] = m;
	return 0;
}

static unsigned int th_baseline;

void
th_eal_fini(void)
{
	char cmd[256];

	rte_eal_cleanup();
	/* --file-prefix leaves an empty runtime directory behind */
	snprintf(cmd, sizeof(cmd), "rm -rf /var/run/dpdk/tcp_test_%d "
		 "\"${XDG_RUNTIME_DIR:-/nonexistent}/dpdk/tcp_test_%d\"",
		 (int)getpid(), (int)getpid());
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove the EAL runtime dir\n");
}

void
th_config(struct th *h)
{
	if (h->s != NULL) {	/* a failed test left its stack behind */
		th_drain(h);
		tcp_stack_destroy(h->s);
	}
	memset(h, 0, sizeof(*h));
	th_eal_init();
	h->cfg.local_ip = TH_LOCAL_IP;
	h->cfg.mtu = 1500;
	h->cfg.pool = th_pool;
	h->cfg.output = th_output;
	h->cfg.output_arg = h;
	h->cfg.max_conns = 64;
	h->now = 1000000000ull;	/* 1000 s: far from zero */
	h->rport = TH_RPORT;
	h->lport = TH_PORT;
}

void
th_start(struct th *h)
{
	th_baseline = rte_mempool_in_use_count(th_pool);
	h->s = tcp_stack_create(&h->cfg);
	assert_non_null(h->s);
	tcp_poll(h->s, h->now);
}

void
th_drain(struct th *h)
{
	while (h->cap_head != h->cap_tail)
		rte_pktmbuf_free(h->cap[h->cap_head++ % TH_CAP]);
}

void
th_stop(struct th *h)
{
	th_drain(h);
	tcp_stack_destroy(h->s);
	h->s = NULL;
	/* Every mbuf came back: nothing leaked. */
	assert_int_equal(rte_mempool_in_use_count(th_pool), th_baseline);
}

/* The IPv4 header whose addresses, protocol and length make the TCP
 * pseudo-header (RFC 9293 §3.1) of segment m from src to dst. The
 * checksums are DPDK's (rte_ipv4_udptcp_cksum_mbuf*), not the stack's
 * own code: the oracle stays apart from what it checks. */
static struct rte_ipv4_hdr
th_pseudo(const struct rte_mbuf *m, uint32_t src, uint32_t dst)
{
	struct rte_ipv4_hdr ip = {
		.version_ihl = RTE_IPV4_VHL_DEF,
		.total_length = rte_cpu_to_be_16((uint16_t)(sizeof(ip) +
							   m->pkt_len)),
		.next_proto_id = IPPROTO_TCP,
		.src_addr = src,
		.dst_addr = dst,
	};

	return ip;
}

void
th_inject(struct th *h, uint8_t flags, uint32_t seq, uint32_t ack,
	  uint16_t win, const struct th_opts *o, const void *data,
	  uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(th_pool);
	uint8_t opt[64], *p;
	struct rte_ipv4_hdr ip;
	struct rte_tcp_hdr *th;
	int n = 0, i;

	assert_non_null(m);
	if (o != NULL) {
		if (o->mss) {
			opt[n++] = 2; opt[n++] = 4;
			opt[n++] = o->mss >> 8; opt[n++] = o->mss & 0xff;
		}
		if (o->has_ws) {
			opt[n++] = 1; opt[n++] = 3; opt[n++] = 3;
			opt[n++] = o->ws;
		}
		if (o->sack_ok) {
			opt[n++] = 1; opt[n++] = 1; opt[n++] = 4; opt[n++] = 2;
		}
		if (o->has_ts) {
			uint32_t v = rte_cpu_to_be_32(o->tsval);
			uint32_t e = rte_cpu_to_be_32(o->tsecr);

			opt[n++] = 1; opt[n++] = 1; opt[n++] = 8; opt[n++] = 10;
			memcpy(opt + n, &v, 4);
			memcpy(opt + n + 4, &e, 4);
			n += 8;
		}
		if (o->nr_sack) {
			opt[n++] = 1; opt[n++] = 1; opt[n++] = 5;
			opt[n++] = 2 + 8 * o->nr_sack;
			for (i = 0; i < o->nr_sack; i++) {
				uint32_t a = rte_cpu_to_be_32(o->sack[i][0]);
				uint32_t b = rte_cpu_to_be_32(o->sack[i][1]);

				memcpy(opt + n, &a, 4);
				memcpy(opt + n + 4, &b, 4);
				n += 8;
			}
		}
	}
	assert_true(n <= 40);
	p = (uint8_t *)rte_pktmbuf_append(m, sizeof(*th) + n + len);
	assert_non_null(p);
	th = (struct rte_tcp_hdr *)p;
	th->src_port = rte_cpu_to_be_16(h->rport);
	th->dst_port = rte_cpu_to_be_16(h->lport);
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = rte_cpu_to_be_32(ack);
	th->data_off = ((sizeof(*th) + n) / 4) << 4;
	th->tcp_flags = flags;
	th->rx_win = rte_cpu_to_be_16(win);
	th->cksum = 0;
	th->tcp_urp = 0;
	memcpy(p + sizeof(*th), opt, n);
	if (len)
		memcpy(p + sizeof(*th) + n, data, len);
	ip = th_pseudo(m, TH_REMOTE_IP, TH_LOCAL_IP);
	th->cksum = rte_ipv4_udptcp_cksum_mbuf(m, &ip, 0);
	tcp_input(h->s, m, TH_REMOTE_IP, TH_LOCAL_IP, h->now);
}

unsigned int
th_pending(const struct th *h)
{
	return h->cap_tail - h->cap_head;
}

static void
th_decode(struct rte_mbuf *m, struct th_seg *s)
{
	const struct rte_tcp_hdr *th = rte_pktmbuf_mtod(m,
						const struct rte_tcp_hdr *);
	const uint8_t *p = (const uint8_t *)(th + 1);
	int hlen = (th->data_off >> 4) * 4, n = hlen - 20;

	s->flags = th->tcp_flags;
	s->seq = rte_be_to_cpu_32(th->sent_seq);
	s->ack = rte_be_to_cpu_32(th->recv_ack);
	s->win = rte_be_to_cpu_16(th->rx_win);
	s->sport = rte_be_to_cpu_16(th->src_port);
	s->dport = rte_be_to_cpu_16(th->dst_port);
	s->mss = 0;
	s->ws = -1;
	s->sack_ok = s->has_ts = s->nr_sack = 0;
	assert_int_equal(m->l4_len, hlen);
	while (n > 0) {
		if (p[0] == 0)
			break;
		if (p[0] == 1) {
			p++, n--;
			continue;
		}
		assert_true(n >= 2 && p[1] >= 2 && p[1] <= n);
		switch (p[0]) {
		case 2: s->mss = (p[2] << 8) | p[3]; break;
		case 3: s->ws = p[2]; break;
		case 4: s->sack_ok = 1; break;
		case 8:
			s->has_ts = 1;
			s->tsval = rte_be_to_cpu_32(*(const uint32_t *)(p + 2));
			s->tsecr = rte_be_to_cpu_32(*(const uint32_t *)(p + 6));
			break;
		case 5:
			s->nr_sack = (p[1] - 2) / 8;
			for (int i = 0; i < s->nr_sack; i++) {
				s->sack[i][0] = rte_be_to_cpu_32(
					*(const uint32_t *)(p + 2 + 8 * i));
				s->sack[i][1] = rte_be_to_cpu_32(
					*(const uint32_t *)(p + 6 + 8 * i));
			}
			break;
		}
		n -= p[1];
		p += p[1];
	}
	s->len = m->pkt_len - hlen;
	assert_true(s->len <= sizeof(s->data));
	assert_int_equal(rte_pktmbuf_read(m, hlen, s->len, s->data) != NULL,
			 1);
	if (s->len && rte_pktmbuf_read(m, hlen, s->len, s->data) != s->data)
		memcpy(s->data, rte_pktmbuf_read(m, hlen, s->len, s->data),
		       s->len);
}

struct th_seg *
th_next(struct th *h)
{
	struct rte_ipv4_hdr ip;
	struct rte_mbuf *m;

	if (h->cap_head == h->cap_tail)
		fail_msg("expected a segment, none was sent");
	m = h->cap[h->cap_head++ % TH_CAP];
	/* Every emitted segment carries a valid checksum (software). */
	ip = th_pseudo(m, TH_LOCAL_IP, TH_REMOTE_IP);
	assert_int_equal(rte_ipv4_udptcp_cksum_mbuf_verify(m, &ip, 0), 0);
	assert_true(rte_pktmbuf_headroom(m) >= TCP_OUT_HEADROOM);
	th_decode(m, &h->seg);
	h->seg.nb_segs = m->nb_segs;
	rte_pktmbuf_free(m);
	return &h->seg;
}

void
th_advance(struct th *h, uint64_t us)
{
	h->now += us;
	tcp_poll(h->s, h->now);
}

/* ---- the recording app ---- */

static int
th_accepted(void *larg, struct tcp_conn *c, void **carg)
{
	struct th_app *a = larg;

	a->accepted++;
	a->conn = c;
	*carg = a;
	return a->refuse ? -1 : 0;
}

static void
th_connected(void *arg, struct tcp_conn *c)
{
	struct th_app *a = arg;

	a->connected++;
	a->conn = c;
}

static void
th_data(void *arg, struct tcp_conn *c, struct rte_mbuf *m)
{
	struct th_app *a = arg;
	uint32_t n = m->pkt_len;

	a->nr_data_cb++;
	if (a->rx_len + n <= sizeof(a->rx)) {
		const void *p = rte_pktmbuf_read(m, 0, n, a->rx + a->rx_len);

		if (p != a->rx + a->rx_len)
			memcpy(a->rx + a->rx_len, p, n);
	}
	a->rx_len += n;
	if (a->echo_mbuf) {
		assert_int_equal(tcp_send_mbuf(c, m), 0);
		tcp_flush(c);
		return;
	}
	rte_pktmbuf_free(m);
	if (a->flush_data == 1)
		tcp_flush_after_rx(c);
	else if (a->flush_data == 2)
		tcp_flush(c);
	if (a->reply_len > 0) {
		static const char resp[256] = "response";

		tcp_send(c, resp, a->reply_len);
		tcp_flush(c);
	}
}

static void
th_eof(void *arg, struct tcp_conn *c)
{
	struct th_app *a = arg;

	a->eof++;
}

static void
th_sent(void *arg, struct tcp_conn *c, uint32_t n)
{
	struct th_app *a = arg;

	a->sent += n;
}

static void
th_closed(void *arg, struct tcp_conn *c, int reason)
{
	struct th_app *a = arg;

	a->closed++;
	a->close_reason = reason;
	a->conn = NULL;
	if (a->act_in_closed) {
		a->send_in_closed_rc = tcp_send(c, "x", 1);
		tcp_flush(c);
		tcp_close(c);
		tcp_abort(c);
	}
}

const struct tcp_ops th_ops = {
	.accepted = th_accepted,
	.connected = th_connected,
	.data = th_data,
	.eof = th_eof,
	.sent = th_sent,
	.closed = th_closed,
};

uint32_t
th_connect(struct th *h, struct tcp_conn **c)
{
	struct th_seg *s;

	assert_int_equal(tcp_connect(h->s, TH_REMOTE_IP, TH_RPORT, &th_ops,
				     &h->app, c), 0);
	s = th_next(h);
	assert_int_equal(s->flags, F_SYN);
	h->lport = s->sport;
	return s->seq;
}

uint32_t
th_handshake(struct th *h, uint32_t peer_isn, const struct th_opts *o)
{
	return th_handshake_rtt(h, peer_isn, o, 0);
}

uint32_t
th_handshake_rtt(struct th *h, uint32_t peer_isn, const struct th_opts *o,
		 uint64_t rtt_us)
{
	struct th_seg *s;
	uint32_t iss;
	struct th_opts ack_o = { 0 };

	/* the listener may exist already (several connections) */
	(void)tcp_listen(h->s, TH_PORT, 0, &th_ops, &h->app);
	th_inject(h, F_SYN, peer_isn, 0, 65535, o, NULL, 0);
	s = th_next(h);
	assert_int_equal(s->flags, F_SYN | F_ACK);
	assert_int_equal(s->ack, peer_isn + 1);
	iss = s->seq;
	if (o != NULL && o->has_ts && s->has_ts) {
		ack_o.has_ts = 1;
		ack_o.tsval = o->tsval + 1;
		ack_o.tsecr = s->tsval;
	}
	if (rtt_us != 0)
		th_advance(h, rtt_us);
	th_inject(h, F_ACK, peer_isn + 1, iss + 1, 65535, &ack_o, NULL, 0);
	assert_non_null(h->app.conn);
	assert_int_equal(tcp_conn_state(h->app.conn), TCP_ESTABLISHED);
	return iss;
}

void
th_send_and_take(struct th *h, const uint8_t *data, uint32_t bytes,
		 uint32_t iss, unsigned int k, uint32_t mss)
{
	assert_int_equal(tcp_send(h->app.conn, data, bytes), (int)bytes);
	tcp_flush(h->app.conn);
	for (unsigned int i = 0; i < k; i++) {
		struct th_seg *s = th_next(h);

		assert_int_equal(s->seq, iss + 1 + i * mss);
		assert_int_equal(s->len, mss);
	}
	assert_int_equal(th_pending(h), 0);
}

uint32_t
th_open(struct th *h, enum tcp_cc_algo cc, uint32_t peer_isn,
	const struct th_opts *o, uint64_t rtt_us)
{
	th_config(h);
	h->cfg.cc = cc;
	th_start(h);
	return th_handshake_rtt(h, peer_isn, o, rtt_us);
}

uint32_t
th_open_active(struct th *h, struct tcp_conn **c)
{
	th_config(h);
	th_start(h);
	return th_connect(h, c);
}

void
th_ack_sack(struct th *h, uint32_t seq, uint32_t ack, unsigned int n,
	    const uint32_t (*b)[2])
{
	struct th_opts o = { .nr_sack = (int)n };

	assert_true(n <= RTE_DIM(o.sack));
	if (n > 0)
		memcpy(o.sack, b, n * sizeof(b[0]));
	th_inject(h, F_ACK, seq, ack, 65535, &o, NULL, 0);
}

unsigned int
th_take_all(struct th *h, uint32_t *first_seq)
{
	unsigned int n = 0;

	while (th_pending(h) > 0) {
		struct th_seg *s = th_next(h);

		if (n++ == 0 && first_seq != NULL)
			*first_seq = s->seq;
	}
	return n;
}

struct tcp_stats
th_stats(const struct th *h)
{
	struct tcp_stats st;

	tcp_stack_stats(h->s, &st);
	return st;
}

struct tcp_conn_info
th_info(const struct th *h)
{
	struct tcp_conn_info ci;

	tcp_conn_info(h->app.conn, &ci);
	return ci;
}
