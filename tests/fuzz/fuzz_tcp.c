/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * libFuzzer harness: TCP input (lib/net/tcp) on the scripted harness of
 * tests/net/tcp (tcp_harness.c: EAL once per process, the mbuf pool, the
 * stack whose output callback captures segments, the virtual clock).
 * Each input is one stack with a listener on TH_PORT (and optionally an
 * active open to TH_REMOTE_IP:TH_RPORT) fed a script of segments from up
 * to four peers, clock advances (tcp_poll) and application actions.
 *
 * Segments are built here, not with th_inject(): th_inject takes only
 * well-formed options and fails through cmocka, while this harness sends
 * garbage options, bad checksums and any flag byte.
 *
 * Input: 8 control bytes, then steps until the input ends.
 *   c[0] bit 0 NewReno (else CUBIC), 1 no_sack, 2 no_timestamps,
 *        3 no_wscale, 4 no_tlp, 5 small buffers (rcv 4 KiB, snd 8 KiB),
 *        6 active open, 7 tx_cksum_offload
 *   c[1] MTU: 0 1500, else 108 + c[1] * 36 (TSO 16 KiB when offload)
 *   c[2] bits 0-2 max_conns - 1, bits 3-4 max_time_wait, bits 5-7
 *        listener backlog (0: config; small ones reach SYN cookies)
 *   c[3] bits 0-1 time scale of clock advances (<< 0, 4, 8, 12), bit 2
 *        delack 1 µs
 *   c[4..7] seed of the application's choices (fz_rand): what the
 *        callbacks do (consume, echo by reference, reply by copy or by
 *        zero-copy iov, manual receive window, shutdown, close, abort)
 *   step: op byte; op % 8:
 *     0-3 a segment from peer (op >> 3) & 3 (peer 3 is the active
 *         open's when there is one): flags u8; seq sel u8 + i16; ack sel
 *         u8 + i16; window u16; option mask u8 (+ its bytes); payload
 *         length u16 % 3000. seq/ack are relative to what the stack last
 *         sent this peer (its ACK, its highest sequence) or absolute.
 *     4   clock advance u16 << (scale), then tcp_poll
 *     5   application action on connection slot (op >> 3): action u8
 *     6   a segment to a port nobody listens on / from a new port
 *     7   output refused (cycles: lost -ENOSPC, port full -ENOBUFS, off),
 *         tcp_unlisten / tcp_listen again
 *
 * Checked after every step (FZ_CHECK):
 *   - every emitted segment: checksum (software, unless offload; checked
 *     on a flat copy, DPDK's chain sum being wrong for odd segments), header
 *     length = l4_len, headroom >= TCP_OUT_HEADROOM, payload <= MSS
 *     without TSO, destination TH_REMOTE_IP;
 *   - every connection of the stack's table (tcp_priv.h): snd_una <=
 *     snd_nxt <= snd_max in sequence space, window scales <= 14, SACK
 *     scoreboard and OOO queue within bounds, sorted and disjoint, the
 *     OOO bytes their sum and above rcv_nxt, the queue empty once the
 *     peer's FIN is taken; tcp_conn_info consistent;
 *   - tcp_stack_stats: conns[] by state equal to the table's, LISTEN to
 *     the listeners open, nr_conns <= max_conns, TIME_WAIT bounded;
 *   - the queue of connections waiting for a full port (txwait): its
 *     count, every entry in the table, marked and not freed;
 *   - the application: no callback for a connection after closed(),
 *     tcp_close() or tcp_abort(); eof() once and no data after it;
 *     closed() once; release callbacks at most once, each.
 * At the end: tcp_stack_destroy(), every live connection got closed(),
 *   every tcp_send_iov range was released exactly once, and the mbuf
 *   pool's in-use count is back to where it was (no mbuf leaked).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_ip.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_tcp.h>

#include "tcp_harness.h"
#include "tcp_priv.h"
#include "fuzz_util.h"

#define NR_PEERS 4
#define NR_SLOTS 64
#define NR_REL 256
#define MAX_PAYLOAD 3000

/* One remote endpoint, as the stack's segments show it. */
struct peer {
	uint16_t rport;
	uint16_t lport;
	bool seen;		/* the stack sent this peer something */
	uint32_t ack;		/* the stack's last ACK (its rcv_nxt) */
	uint32_t hi;		/* the stack's highest seq + len sent */
	uint32_t una;		/* what this peer acknowledged last */
	uint32_t tsecr;		/* the stack's last TSval */
	uint32_t isn;
};

/* What the application knows of one connection. */
struct slot {
	struct tcp_conn *c;
	bool live;		/* accepted/connected, no closed() yet */
	bool done;		/* closed(), tcp_close() or tcp_abort() */
	bool pending;		/* active open not yet connected */
	int closed;		/* closed() calls */
	bool eof;		/* eof() called */
	bool manual;
	uint32_t held;		/* delivered, not yet tcp_recved */
};

static struct th H;
static struct slot slots[NR_SLOTS];
static unsigned int nr_slots;
static struct peer peers[NR_PEERS];
static uint8_t rel[NR_REL];
static unsigned int nr_rel;
static uint32_t app_seed;
static unsigned int nr_listen;
static uint8_t zc_buf[65536];	/* zero-copy payload, never written */
static uint8_t pay[MAX_PAYLOAD];
static uint8_t flat_buf[65536 + TCP_HDR_MAX];
static unsigned int step_no;
static int verbose;		/* FUZZ_VERBOSE=1: a line per step, segment */

int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	th_eal_init();		/* --no-huge --no-pci, per-pid file prefix */
	rte_log_set_global_level(RTE_LOG_EMERG);
	atexit(th_eal_fini);
	for (unsigned int i = 0; i < sizeof(zc_buf); i++)
		zc_buf[i] = (uint8_t)(i * 7 + 1);
	for (unsigned int i = 0; i < sizeof(pay); i++)
		pay[i] = (uint8_t)(i * 13 + 5);
	return 0;
}

static uint32_t
app_rand(void)
{
	return fz_rand(&app_seed);
}

static void
release_cb(void *arg)
{
	uint8_t *r = arg;

	FZ_CHECK(r >= rel && r < rel + NR_REL);
	FZ_CHECK(*r == 1);	/* registered, not yet released */
	*r = 2;
}

/* A callback about slot a: the connection must still be the app's. */
static struct slot *
cb_slot(void *arg, struct tcp_conn *c)
{
	struct slot *a = arg;

	FZ_CHECK(a >= slots && a < slots + NR_SLOTS);
	FZ_CHECK(!a->done);
	FZ_CHECK(a->closed == 0);
	FZ_CHECK(a->c == c);
	return a;
}

static void
app_send(struct slot *a, unsigned int how)
{
	struct tcp_conn *c = a->c;
	uint32_t len = app_rand() % 5000;

	switch (how % 3) {
	case 0:
		(void)tcp_send(c, pay, len % MAX_PAYLOAD);
		break;
	case 1: {
		struct iovec iov[3];
		int cnt = 1 + app_rand() % 3;
		uint8_t *r;

		if (nr_rel >= NR_REL)
			break;
		for (int i = 0; i < cnt; i++) {
			uint32_t off = app_rand() % (sizeof(zc_buf) / 2);

			iov[i].iov_base = zc_buf + off;
			iov[i].iov_len = (i == 0 ? len : app_rand() % 3000) %
				(sizeof(zc_buf) - off);
		}
		r = &rel[nr_rel++];
		*r = 1;
		if (tcp_send_iov(c, iov, cnt, release_cb, r) < 0)
			*r = 0;	/* all or nothing: never released */
		break;
	}
	default:
		tcp_flush(c);
		break;
	}
}

/* The app closes the connection: no callback may mention it again. */
static void
app_end(struct slot *a, bool abort_it)
{
	a->done = true;
	a->live = false;
	if (abort_it)
		tcp_abort(a->c);
	else
		tcp_close(a->c);
}

static int
app_accepted(void *larg, struct tcp_conn *c, void **carg)
{
	struct slot *a;
	uint32_t r = app_rand();

	(void)larg;
	if (nr_slots >= NR_SLOTS || r % 16 == 0)
		return -1;	/* refused: the stack sends RST */
	a = &slots[nr_slots++];
	memset(a, 0, sizeof(*a));
	a->c = c;
	a->live = true;
	*carg = a;
	FZ_CHECK(tcp_conn_state(c) == TCP_ESTABLISHED ||
		 tcp_conn_state(c) == TCP_CLOSE_WAIT);
	if ((r >> 4) % 4 == 0) {
		a->manual = true;
		tcp_set_manual_recv(c, true);
	}
	if ((r >> 6) % 4 == 0)
		app_send(a, r >> 8);
	return 0;
}

static void
app_connected(void *arg, struct tcp_conn *c)
{
	struct slot *a = cb_slot(arg, c);

	FZ_CHECK(a->pending);
	a->pending = false;
	a->live = true;
	if (app_rand() % 2)
		app_send(a, app_rand());
}

static void
app_data(void *arg, struct tcp_conn *c, struct rte_mbuf *m)
{
	struct slot *a = cb_slot(arg, c);
	uint32_t n = m->pkt_len, r = app_rand();

	FZ_CHECK(a->live);
	FZ_CHECK(!a->eof);	/* the peer's stream ended */
	FZ_CHECK(n > 0);
	FZ_CHECK(rte_pktmbuf_read(m, n - 1, 1, &(uint8_t){ 0 }) != NULL);
	if (r % 4 == 0) {
		if (tcp_send_mbuf(c, m) < 0)
			rte_pktmbuf_free(m);
	} else {
		rte_pktmbuf_free(m);
	}
	if (a->manual) {
		a->held += n;
		if ((r >> 2) % 2) {
			uint32_t k = (r >> 3) % (a->held + 1);

			tcp_recved(c, k);
			a->held -= k;
		}
	}
	switch ((r >> 12) % 16) {
	case 0: case 1: case 2:
		app_send(a, r >> 16);
		break;
	case 3:
		(void)tcp_shutdown(c);
		break;
	case 4:
		app_end(a, false);
		break;
	case 5:
		if ((r >> 20) % 4 == 0)
			app_end(a, true);
		break;
	}
}

static void
app_eof(void *arg, struct tcp_conn *c)
{
	struct slot *a = cb_slot(arg, c);
	uint32_t r = app_rand();

	FZ_CHECK(a->live);
	FZ_CHECK(!a->eof);
	a->eof = true;
	switch (r % 4) {
	case 0:
	case 1:
		app_end(a, false);
		break;
	case 2:
		app_send(a, r >> 2);
		(void)tcp_shutdown(c);
		break;
	}
}

static void
app_sent(void *arg, struct tcp_conn *c, uint32_t acked)
{
	struct slot *a = cb_slot(arg, c);

	FZ_CHECK(a->live);
	FZ_CHECK(acked > 0);
	if (app_rand() % 8 == 0)
		app_send(a, app_rand());
}

static void
app_closed(void *arg, struct tcp_conn *c, int reason)
{
	struct slot *a = cb_slot(arg, c);

	FZ_CHECK(reason >= TCP_CLOSE_NORMAL && reason <= TCP_CLOSE_STACK);
	a->closed++;
	a->live = false;
	a->pending = false;
}

static const struct tcp_ops app_ops = {
	.accepted = app_accepted,
	.connected = app_connected,
	.data = app_data,
	.eof = app_eof,
	.sent = app_sent,
	.closed = app_closed,
};

/* ---- segments out ---- */

static struct peer *
peer_of(uint16_t rport, uint16_t lport)
{
	for (unsigned int i = 0; i < NR_PEERS; i++)
		if (peers[i].rport == rport && peers[i].lport == lport)
			return &peers[i];
	return NULL;
}

/* Check and learn from every segment the stack emitted, then free it. */
static void
take_output(void)
{
	while (H.cap_head != H.cap_tail) {
		struct rte_mbuf *m = H.cap[H.cap_head++ % TH_CAP];
		const struct rte_tcp_hdr *th;
		uint32_t hlen, len, seq, end;
		struct rte_ipv4_hdr ip;
		struct peer *p;
		uint8_t fl;

		FZ_CHECK(m->pkt_len >= sizeof(*th));
		FZ_CHECK(rte_pktmbuf_headroom(m) >= TCP_OUT_HEADROOM);
		FZ_CHECK(m->data_len >= sizeof(*th));
		th = rte_pktmbuf_mtod(m, const struct rte_tcp_hdr *);
		hlen = (th->data_off >> 4) * 4u;
		FZ_CHECK(hlen >= 20 && hlen <= TCP_HDR_MAX);
		FZ_CHECK(m->l4_len == hlen);
		FZ_CHECK(m->pkt_len >= hlen);
		len = m->pkt_len - hlen;
		if (!(m->ol_flags & RTE_MBUF_F_TX_TCP_SEG)) {
			FZ_CHECK(len <= H.cfg.mtu - 40u);
		} else {
			FZ_CHECK(H.cfg.tso_max > 0);
			FZ_CHECK(len <= H.cfg.tso_max);
		}
		if (!H.cfg.tx_cksum_offload) {
			memset(&ip, 0, sizeof(ip));
			ip.version_ihl = RTE_IPV4_VHL_DEF;
			ip.total_length = rte_cpu_to_be_16(
				(uint16_t)(sizeof(ip) + m->pkt_len));
			ip.next_proto_id = IPPROTO_TCP;
			ip.src_addr = TH_LOCAL_IP;
			ip.dst_addr = TH_REMOTE_IP;
			/* on a flat copy: DPDK 22.11's mbuf-chain sum is
			 * wrong for odd-length segments (tcp_cksum.h) */
			const void *flat = rte_pktmbuf_read(m, 0, m->pkt_len,
							    flat_buf);

			FZ_CHECK(flat != NULL);
			FZ_CHECK(rte_ipv4_udptcp_cksum_verify(&ip, flat) ==
				 0);
		}
		fl = th->tcp_flags;
		seq = rte_be_to_cpu_32(th->sent_seq);
		end = seq + len + !!(fl & F_SYN) + !!(fl & F_FIN);
		p = peer_of(rte_be_to_cpu_16(th->dst_port),
			    rte_be_to_cpu_16(th->src_port));
		if (p != NULL && !(fl & F_RST)) {
			const uint8_t *o = (const uint8_t *)(th + 1);
			int n = (int)hlen - 20;

			if (!p->seen || SEQ_GT(end, p->hi))
				p->hi = end;
			if (!p->seen)
				p->una = seq;
			if (fl & F_ACK)
				p->ack = rte_be_to_cpu_32(th->recv_ack);
			p->seen = true;
			/* the stack writes well-formed options */
			while (n > 0 && o[0] != 0) {
				if (o[0] == 1) {
					o++, n--;
					continue;
				}
				FZ_CHECK(n >= 2 && o[1] >= 2 && o[1] <= n);
				if (o[0] == 8 && o[1] == 10) {
					uint32_t v;

					memcpy(&v, o + 2, 4);
					p->tsecr = rte_be_to_cpu_32(v);
				}
				n -= o[1];
				o += o[1];
			}
		}
		rte_pktmbuf_free(m);
	}
}

/* ---- segments in ---- */

static uint32_t
pick(struct fz *f, uint32_t rel_a, uint32_t rel_b)
{
	uint8_t sel = fz_u8(f);
	int16_t d = (int16_t)fz_u16(f);

	switch (sel % 4) {
	case 0:
		return rel_a + d;
	case 1:
		return rel_b + d;
	case 2:
		return rel_a + (uint32_t)d * 1024u;
	default:
		return ((uint32_t)sel << 24) ^ ((uint32_t)(uint16_t)d << 8) ^
			rel_a;
	}
}

static void
inject(struct peer *p, struct fz *f)
{
	uint8_t fl = fz_u8(f), mask;
	uint32_t seq, ack, len, i;
	uint16_t win;
	uint8_t opt[64];
	unsigned int n = 0;
	struct rte_mbuf *m;
	struct rte_tcp_hdr *th;
	struct rte_ipv4_hdr ip;
	uint8_t *b;
	bool bad_ck;

	seq = pick(f, p->seen ? p->ack : p->isn, p->isn + 1);
	ack = pick(f, p->hi, p->una);
	win = fz_u16(f);
	mask = fz_u8(f);
	if (mask & 0x01) {		/* MSS */
		uint16_t v = fz_u16(f);

		opt[n++] = 2; opt[n++] = 4;
		opt[n++] = v >> 8; opt[n++] = v & 0xff;
	}
	if (mask & 0x02) {		/* window scale */
		opt[n++] = 1; opt[n++] = 3; opt[n++] = 3;
		opt[n++] = fz_u8(f) % 18;
	}
	if (mask & 0x04) {		/* SACK permitted */
		opt[n++] = 1; opt[n++] = 1; opt[n++] = 4; opt[n++] = 2;
	}
	if (mask & 0x08) {		/* timestamps */
		uint32_t v = rte_cpu_to_be_32((uint32_t)(H.now / 1000) +
					      p->isn + (int8_t)fz_u8(f));
		uint32_t e = rte_cpu_to_be_32(p->tsecr + (int8_t)fz_u8(f));

		opt[n++] = 1; opt[n++] = 1; opt[n++] = 8; opt[n++] = 10;
		memcpy(opt + n, &v, 4);
		memcpy(opt + n + 4, &e, 4);
		n += 8;
	}
	if (mask & 0x10) {		/* SACK blocks near the stack's data */
		unsigned int k = 1 + fz_u8(f) % 4;

		if (n + 4 + 8 * k > 40)
			k = (40 - n - 4) / 8;
		if (k > 0) {
			opt[n++] = 1; opt[n++] = 1; opt[n++] = 5;
			opt[n++] = 2 + 8 * k;
			for (i = 0; i < k; i++) {
				uint32_t a = p->una + fz_u16(f);
				uint32_t z = a + fz_u16(f) % 8192;

				a = rte_cpu_to_be_32(a);
				z = rte_cpu_to_be_32(z);
				memcpy(opt + n, &a, 4);
				memcpy(opt + n + 4, &z, 4);
				n += 8;
			}
		}
	}
	if (mask & 0x20) {		/* raw bytes: garbage options */
		unsigned int k = fz_u8(f) % 41;

		for (i = 0; i < k && n < 40; i++)
			opt[n++] = fz_u8(f);
	}
	if (n > 40)
		n = 40;
	while (n % 4)
		opt[n++] = (mask & 0x80) ? 0 : 1;	/* EOL or NOP */
	bad_ck = (mask & 0x40) && (fz_u8(f) & 1);
	len = fz_u16(f) % MAX_PAYLOAD;
	if (len > H.cfg.mtu - 40u + 200)
		len = H.cfg.mtu - 40u + 200;	/* some too big */

	m = rte_pktmbuf_alloc(th_pool);
	FZ_CHECK(m != NULL);
	/* one mbuf: what fits in its data room (1920 bytes) */
	if (sizeof(*th) + n + len > rte_pktmbuf_tailroom(m))
		len = rte_pktmbuf_tailroom(m) - sizeof(*th) - n;
	b = (uint8_t *)rte_pktmbuf_append(m, sizeof(*th) + n + len);
	FZ_CHECK(b != NULL);
	th = (struct rte_tcp_hdr *)b;
	th->src_port = rte_cpu_to_be_16(p->rport);
	th->dst_port = rte_cpu_to_be_16(p->lport);
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = rte_cpu_to_be_32(ack);
	th->data_off = ((sizeof(*th) + n) / 4) << 4;
	th->tcp_flags = fl;
	th->rx_win = rte_cpu_to_be_16(win);
	th->cksum = 0;
	th->tcp_urp = 0;
	memcpy(b + sizeof(*th), opt, n);
	memcpy(b + sizeof(*th) + n, pay, len);
	memset(&ip, 0, sizeof(ip));
	ip.version_ihl = RTE_IPV4_VHL_DEF;
	ip.total_length = rte_cpu_to_be_16((uint16_t)(sizeof(ip) + m->pkt_len));
	ip.next_proto_id = IPPROTO_TCP;
	ip.src_addr = TH_REMOTE_IP;
	ip.dst_addr = TH_LOCAL_IP;
	th->cksum = rte_ipv4_udptcp_cksum_mbuf(m, &ip, 0);
	if (bad_ck)
		th->cksum ^= 0x1234;
	else if (mask & 0x40)
		m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	if (verbose)	/* relative to the peer's ISN and the stack's ACK */
		fprintf(stderr, "  peer %u: flags 0x%02x seq isn%+d "
			"(ack%+d) ack %u win %u opts %u len %u\n",
			(unsigned int)(p - peers), fl, (int)(seq - p->isn),
			(int)(seq - p->ack), ack, win, n, len);
	(void)tcp_input(H.s, m, TH_REMOTE_IP, TH_LOCAL_IP, H.now);
	/* what this peer acknowledges from now on */
	if ((fl & F_ACK) && !(fl & F_RST) && p->seen &&
	    SEQ_GT(ack, p->una) && SEQ_LEQ(ack, p->hi))
		p->una = ack;
}

/* A short or odd segment: truncated header, a bad data offset, a port
 * nobody listens on. */
static void
inject_odd(struct fz *f)
{
	uint8_t kind = fz_u8(f), raw[64];
	unsigned int k = kind % 64;
	struct rte_mbuf *m = rte_pktmbuf_alloc(th_pool);
	uint8_t *b;

	FZ_CHECK(m != NULL);
	for (unsigned int i = 0; i < k; i++)
		raw[i] = fz_u8(f);
	if (k >= 4 && (kind & 0x40)) {	/* ports of a known peer */
		uint16_t rp = rte_cpu_to_be_16(peers[kind % NR_PEERS].rport);
		uint16_t lp = rte_cpu_to_be_16(peers[kind % NR_PEERS].lport);

		memcpy(raw, &rp, 2);
		memcpy(raw + 2, &lp, 2);
	}
	if (k > 0) {
		b = (uint8_t *)rte_pktmbuf_append(m, k);
		FZ_CHECK(b != NULL);
		memcpy(b, raw, k);
	}
	m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	(void)tcp_input(H.s, m, TH_REMOTE_IP, TH_LOCAL_IP, H.now);
}

/* ---- invariants ---- */

static void
check_stack(void)
{
	uint32_t by_state[TCP_STATE_MAX] = { 0 }, nr = 0, tw = 0, txw = 0;
	const struct tcp_conn *w;
	const void *key;
	void *data;
	uint32_t iter = 0;
	struct tcp_stats st;

	while (rte_hash_iterate(H.s->conns, &key, &data, &iter) >= 0) {
		const struct tcp_conn *c = data;
		struct tcp_conn_info ci;
		uint32_t ooo = 0;

		FZ_CHECK(c->stack == H.s);
		FZ_CHECK(c->state < TCP_STATE_MAX && c->state != TCP_LISTEN);
		FZ_CHECK(memcmp(key, &c->key, sizeof(c->key)) == 0);
		by_state[c->state]++;
		txw += c->on_txwait;
		if (c->state == TCP_TIME_WAIT)
			tw++;
		else
			nr++;
		FZ_CHECK(SEQ_LEQ(c->snd_una, c->snd_nxt));
		FZ_CHECK(SEQ_LEQ(c->snd_nxt, c->snd_max));
		FZ_CHECK(SEQ_LEQ(c->snd_una, c->snd_max));
		FZ_CHECK(c->snd_wscale <= TCP_MAX_WSCALE);
		FZ_CHECK(c->rcv_wscale <= TCP_MAX_WSCALE);
		FZ_CHECK(c->nr_sacked <= TCP_SCOREBOARD);
		FZ_CHECK(c->nr_rsack <= TCP_MAX_SACK);
		FZ_CHECK(c->nr_ooo <= TCP_OOO_MAX);
		FZ_CHECK(c->nr_rxt <= TCP_RXT_RECS);
		for (unsigned int i = 0; i < c->nr_sacked; i++) {
			FZ_CHECK(SEQ_LT(c->sacked[i].start, c->sacked[i].end));
			if (i > 0)
				FZ_CHECK(SEQ_LT(c->sacked[i - 1].end,
						c->sacked[i].start));
		}
		for (unsigned int i = 0; i < c->nr_ooo; i++) {
			FZ_CHECK(c->ooo[i].len > 0);
			FZ_CHECK(c->ooo[i].m != NULL);
			FZ_CHECK(c->ooo[i].m->pkt_len == c->ooo[i].len);
			if (!SEQ_GT(c->ooo[i].seq, c->rcv_nxt) && verbose)
				fprintf(stderr, "%s: irs %u rcv_nxt +%u ooo[%u] "
					"+%u len %u (of %u)\n",
					tcp_state_name(c->state), c->irs,
					c->rcv_nxt - c->irs, i,
					c->ooo[i].seq - c->irs, c->ooo[i].len,
					c->nr_ooo);
			FZ_CHECK(SEQ_GT(c->ooo[i].seq, c->rcv_nxt));
			/* nothing is kept past the peer's FIN */
			FZ_CHECK(!(c->flags & TF_EOF_SEEN));
			if (i > 0)
				FZ_CHECK(SEQ_LT(c->ooo[i - 1].seq +
						c->ooo[i - 1].len,
						c->ooo[i].seq));
			ooo += c->ooo[i].len;
		}
		FZ_CHECK(ooo == c->ooo_bytes);
		if (c->state >= TCP_ESTABLISHED) {
			tcp_conn_info(c, &ci);
			FZ_CHECK(ci.snd_una == c->snd_una);
			FZ_CHECK(ci.unacked <= ci.queued + 2);
			FZ_CHECK(ci.cwnd > 0);
			FZ_CHECK(tcp_conn_mss(c) > 0 &&
				 tcp_conn_mss(c) <= H.cfg.mtu - 40u);
		}
	}
	tcp_stack_stats(H.s, &st);
	for (unsigned int i = 0; i < TCP_STATE_MAX; i++) {
		if (i == TCP_LISTEN)
			FZ_CHECK(st.conns[i] == nr_listen);
		else if (st.conns[i] != by_state[i]) {
			fprintf(stderr, "step %u: conns[%s] %llu, table %u\n",
				step_no, tcp_state_name(i),
				(unsigned long long)st.conns[i], by_state[i]);
			FZ_CHECK(st.conns[i] == by_state[i]);
		}
	}
	FZ_CHECK(nr == H.s->nr_conns && tw == H.s->nr_tw);
	/* the queue of connections waiting for the port: exactly the
	 * table's marked ones, none freed */
	FZ_CHECK(txw == H.s->nr_txwait);
	TAILQ_FOREACH(w, &H.s->txwait, txwait) {
		FZ_CHECK(w->on_txwait && !(w->flags & TF_DEAD));
		FZ_CHECK(rte_hash_lookup(H.s->conns, &w->key) >= 0);
		txw--;
	}
	FZ_CHECK(txw == 0);
	FZ_CHECK(nr <= H.s->cfg.max_conns);
	FZ_CHECK(tw <= H.s->cfg.max_time_wait);
	/* the app's open connections are all in the table */
	for (unsigned int i = 0; i < nr_slots; i++) {
		const struct slot *a = &slots[i];

		if (!a->live && !a->pending)
			continue;
		FZ_CHECK(rte_hash_lookup(H.s->conns, &a->c->key) >= 0);
		FZ_CHECK(a->c->state != TCP_TIME_WAIT ||
			 (a->c->flags & TF_APP_CLOSED) == 0 || true);
	}
	for (unsigned int i = 0; i < nr_rel; i++)
		FZ_CHECK(rel[i] <= 2);
}

/* ---- the script ---- */

static void
app_action(struct fz *f, unsigned int sl)
{
	uint8_t act = fz_u8(f);
	struct slot *a;

	if (nr_slots == 0)
		return;
	a = &slots[sl % nr_slots];
	if (!a->live || a->done)
		return;
	switch (act % 10) {
	case 0: case 1: case 2:
		app_send(a, act >> 4);
		break;
	case 3:
		tcp_flush(a->c);
		break;
	case 4:
		(void)tcp_shutdown(a->c);
		break;
	case 5:
		app_end(a, false);
		break;
	case 6:
		app_end(a, true);
		break;
	case 7:
		if (a->held > 0) {
			uint32_t k = 1 + (act >> 4) * a->held / 16;

			if (k > a->held)
				k = a->held;
			tcp_recved(a->c, k);
			a->held -= k;
		}
		break;
	case 8:
		a->manual = !a->manual;
		tcp_set_manual_recv(a->c, a->manual);
		if (!a->manual)
			a->held = 0;
		break;
	default: {
		struct tcp_conn_info ci;

		tcp_conn_info(a->c, &ci);
		FZ_CHECK(tcp_send_space(a->c) <= H.s->cfg.snd_buf);
		break;
	}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	uint8_t c0 = fz_u8(&f), c1 = fz_u8(&f), c2 = fz_u8(&f),
		c3 = fz_u8(&f);
	unsigned int baseline, scale = (c3 & 3) * 4;
	unsigned int refuse = 0;	/* 0 off, 1 lost, 2 port full */

	app_seed = (uint32_t)fz_u16(&f) | (uint32_t)fz_u16(&f) << 16;
	memset(slots, 0, sizeof(slots));
	memset(rel, 0, sizeof(rel));
	nr_slots = nr_rel = 0;
	step_no = 0;

	th_config(&H);		/* EAL, pool, capture, clock at 1000 s */
	H.cfg.cc = (c0 & 1) ? TCP_CC_NEWRENO : TCP_CC_CUBIC;
	H.cfg.no_sack = c0 & 2;
	H.cfg.no_timestamps = c0 & 4;
	H.cfg.no_wscale = c0 & 8;
	H.cfg.no_tlp = c0 & 16;
	if (c0 & 32) {
		H.cfg.rcv_buf = 4096;
		H.cfg.snd_buf = 8192;
	}
	if (c0 & 128) {
		H.cfg.tx_cksum_offload = true;
		H.cfg.tso_max = 16384;
	}
	H.cfg.mtu = c1 == 0 ? 1500 : (uint16_t)(108 + c1 * 36);
	H.cfg.max_conns = 1 + (c2 & 7);
	H.cfg.max_time_wait = (c2 >> 3) & 3;
	if (c3 & 4)
		H.cfg.delack_us = 1;
	H.cfg.challenge_ack_limit = 1000;

	baseline = rte_mempool_in_use_count(th_pool);
	th_start(&H);		/* creates the stack, first tcp_poll */
	FZ_CHECK(H.s != NULL);
	/* the stack's cfg with its defaults, for the checks */
	H.cfg = H.s->cfg;
	FZ_CHECK(tcp_listen(H.s, TH_PORT, c2 >> 5, &app_ops, NULL) == 0);
	nr_listen = 1;

	memset(peers, 0, sizeof(peers));
	for (unsigned int i = 0; i < NR_PEERS; i++) {
		peers[i].rport = TH_RPORT + i;
		peers[i].lport = TH_PORT;
		peers[i].isn = 0x10000000u * (i + 1) + app_seed;
	}
	if (c0 & 64) {
		struct slot *a = &slots[nr_slots++];
		struct tcp_conn *c;

		a->pending = true;
		if (tcp_connect(H.s, TH_REMOTE_IP, TH_RPORT, &app_ops, a,
				&c) == 0) {
			uint16_t lp, rp;
			uint32_t li, ri;

			a->c = c;
			tcp_conn_addr(c, &li, &lp, &ri, &rp);
			FZ_CHECK(li == TH_LOCAL_IP && ri == TH_REMOTE_IP &&
				 rp == TH_RPORT);
			peers[NR_PEERS - 1].rport = rp;
			peers[NR_PEERS - 1].lport = lp;
		} else {
			a->pending = false;
			a->done = true;
		}
	}
	take_output();
	check_stack();

	while (f.n > 0) {
		uint8_t op = fz_u8(&f);

		step_no++;
		switch (op % 8) {
		case 0: case 1: case 2: case 3:
			inject(&peers[(op >> 3) % NR_PEERS], &f);
			break;
		case 4:
			H.now += (uint64_t)fz_u16(&f) << scale;
			tcp_poll(H.s, H.now);
			break;
		case 5:
			app_action(&f, op >> 3);
			break;
		case 6:
			inject_odd(&f);
			break;
		default:
			switch ((op >> 3) % 4) {
			case 0:
				refuse = (refuse + 1) % 3;
				H.refuse_out = refuse == 1;
				H.full_out = refuse == 2;
				break;
			case 1:
				if (nr_listen == 1 &&
				    tcp_unlisten(H.s, TH_PORT) == 0)
					nr_listen = 0;
				break;
			case 2:
				if (nr_listen == 0 &&
				    tcp_listen(H.s, TH_PORT, op >> 5,
					       &app_ops, NULL) == 0)
					nr_listen = 1;
				break;
			default:
				FZ_CHECK(tcp_listen(H.s, TH_PORT, 0,
						    &app_ops, NULL) ==
					 (nr_listen ? -EADDRINUSE : 0));
				if (nr_listen == 0)
					nr_listen = 1;
				break;
			}
			break;
		}
		if (verbose) {
			struct tcp_stats v;

			tcp_stack_stats(H.s, &v);
			fprintf(stderr, "step %u op %u now %llu: by state",
				step_no, op % 8, (unsigned long long)H.now);
			for (unsigned int i = 0; i < TCP_STATE_MAX; i++)
				fprintf(stderr, " %lld",
					(long long)v.conns[i]);
			fprintf(stderr, "\n");
		}
		take_output();
		check_stack();
	}

	/* Teardown: every connection the app holds gets closed(STACK). */
	tcp_stack_destroy(H.s);
	H.s = NULL;
	take_output();
	for (unsigned int i = 0; i < nr_slots; i++) {
		const struct slot *a = &slots[i];

		FZ_CHECK(a->closed <= 1);
		if (!a->done && a->c != NULL && (a->live || a->pending))
			FZ_CHECK(0);	/* open and never told */
		if (a->done)
			FZ_CHECK(a->closed == 0);
	}
	/* every zero-copy range released exactly once */
	for (unsigned int i = 0; i < nr_rel; i++)
		FZ_CHECK(rel[i] == 0 || rel[i] == 2);
	/* every mbuf came back to the pool */
	FZ_CHECK(rte_mempool_in_use_count(th_pool) == baseline);
	return 0;
}
