/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_TCP_HARNESS_H
#define FFN_TCP_HARNESS_H

/* Packetdrill-style harness: one stack whose output callback captures
 * segments, a virtual clock, helpers to inject a segment and to expect the
 * next emitted one, and a recording test application. */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <rte_mbuf.h>

#include "tcp.h"

#define TH_LOCAL_IP  RTE_BE32(0xc6120201)	/* 198.18.2.1 */
#define TH_REMOTE_IP RTE_BE32(0xc6120202)	/* 198.18.2.2 */
#define TH_PORT 80
#define TH_RPORT 40000
#define TH_CAP 512

#define F_FIN 0x01
#define F_SYN 0x02
#define F_RST 0x04
#define F_PSH 0x08
#define F_ACK 0x10

/* A decoded emitted segment. */
struct th_seg {
	uint8_t flags;
	uint32_t seq, ack;
	uint16_t win, sport, dport;
	uint16_t mss;
	int ws;			/* -1: absent */
	int sack_ok, has_ts;
	uint32_t tsval, tsecr;
	int nr_sack;
	uint32_t sack[4][2];
	uint32_t len;
	uint16_t nb_segs;	/* mbufs the frame was built from */
	uint8_t data[65536];
};

/* Options of an injected segment. */
struct th_opts {
	uint16_t mss;		/* 0: absent */
	int ws;			/* -1 or 0: see has_ws */
	int has_ws;
	int sack_ok;
	int has_ts;
	uint32_t tsval, tsecr;
	int nr_sack;
	uint32_t sack[4][2];
};

/* What the recording app saw. */
struct th_app {
	struct tcp_conn *conn;
	int accepted, connected, eof, closed, close_reason;
	uint64_t sent;
	uint32_t rx_len;
	uint8_t rx[1 << 20];
	int refuse;		/* accepted() returns -1 */
	int reply_len;		/* answer each data callback (piggyback) */
	int nr_data_cb;
	int echo_mbuf;		/* send received mbufs back by reference */
	int flush_data;		/* each data callback: 1 tcp_flush_after_rx,
				 * 2 tcp_flush (a message still arriving) */
	int act_in_closed;	/* misbehave: send/close inside closed() */
	int send_in_closed_rc;
};

struct th {
	struct tcp_stack *s;
	struct tcp_stack_config cfg;
	uint64_t now;
	struct rte_mbuf *cap[TH_CAP];
	unsigned int cap_head, cap_tail;
	uint16_t rport;		/* remote port of injected segments */
	uint16_t lport;		/* our port they go to [TH_PORT] */
	int refuse_out;		/* output callback fails (-ENOSPC: lost) */
	int full_out;		/* ... says the port is full (-ENOBUFS) */
	unsigned int nr_full;	/* segments refused so */
	struct th_app app;
	struct th_seg seg;	/* last expected */
};

extern struct rte_mempool *th_pool;
extern const struct tcp_ops th_ops;

/* EAL once per process (--no-pci --no-huge --in-memory). */
void th_eal_init(void);
void th_eal_fini(void);
/* Default config; tweak and call th_start. */
void th_config(struct th *h);
void th_start(struct th *h);
void th_stop(struct th *h);

void th_inject(struct th *h, uint8_t flags, uint32_t seq, uint32_t ack,
	       uint16_t win, const struct th_opts *o, const void *data,
	       uint32_t len);
/* Pop the next emitted segment into h->seg; fails the test if none. */
struct th_seg *th_next(struct th *h);
/* Number of segments waiting. */
unsigned int th_pending(const struct th *h);
void th_drain(struct th *h);
/* Advance the clock by us and run timers. */
void th_advance(struct th *h, uint64_t us);

/* Passive handshake on TH_PORT: returns our ISN; the peer's ISN is
 * peer_isn and its first data byte is peer_isn + 1. */
uint32_t th_handshake(struct th *h, uint32_t peer_isn, const struct th_opts *o);
/* Active open: tcp_connect() to TH_REMOTE_IP:TH_RPORT with the recording
 * app; takes our SYN off the wire, keeps its source port in h->lport and
 * returns its sequence number (our ISS). */
uint32_t th_connect(struct th *h, struct tcp_conn **c);
/* The same, the peer's ACK rtt_us after our SYN-ACK: the stack's first
 * RTT sample (SRTT, min RTT) is rtt_us. */
uint32_t th_handshake_rtt(struct th *h, uint32_t peer_isn,
			  const struct th_opts *o, uint64_t rtt_us);

/* Queue bytes of data on the app connection, flush, and take the first k
 * segments sent: each must be a full mss at iss + 1 + i * mss; nothing
 * else may be waiting. */
void th_send_and_take(struct th *h, const uint8_t *data, uint32_t bytes,
		      uint32_t iss, unsigned int k, uint32_t mss);

/* th_config with congestion control cc, th_start, and th_handshake_rtt
 * (rtt_us 0: th_handshake): the usual opening of a scripted transfer
 * test. Returns our ISS. */
uint32_t th_open(struct th *h, enum tcp_cc_algo cc, uint32_t peer_isn,
		 const struct th_opts *o, uint64_t rtt_us);
/* th_config, th_start and th_connect: a fresh stack (default config)
 * with one active open under way, our SYN taken. Returns our ISS. */
uint32_t th_open_active(struct th *h, struct tcp_conn **c);
/* A pure ACK from the peer (seq: its next sequence number) acknowledging
 * ack, carrying the n SACK blocks b (RFC 2018; n 0: none). */
void th_ack_sack(struct th *h, uint32_t seq, uint32_t ack, unsigned int n,
		 const uint32_t (*b)[2]);
/* Pop every segment waiting; returns how many, *first_seq (if not NULL)
 * the sequence number of the first. */
unsigned int th_take_all(struct th *h, uint32_t *first_seq);
/* The stack's counters and the app connection's state, by value so that
 * a check reads as one expression. */
struct tcp_stats th_stats(const struct th *h);
struct tcp_conn_info th_info(const struct th *h);

/* Pop the next emitted segment, which must start at sq; evaluates to it
 * (a macro, so a failure names the test's line). */
#define TH_NEXT_AT(h, sq) ({						\
	struct th_seg *_n = th_next(h);					\
	assert_int_equal(_n->seq, (uint32_t)(sq));			\
	_n;								\
})

/* SACK block i of the decoded segment s is [st, en). */
#define TH_SACK_IS(s, i, st, en) do {					\
	assert_int_equal((s)->sack[i][0], (uint32_t)(st));		\
	assert_int_equal((s)->sack[i][1], (uint32_t)(en));		\
} while (0)

#define EXPECT_SEG(h, fl, sq, ak) do {					\
	struct th_seg *_s = th_next(h);					\
	assert_int_equal(_s->flags, (fl));				\
	assert_int_equal(_s->seq, (uint32_t)(sq));			\
	if ((fl) & F_ACK)						\
		assert_int_equal(_s->ack, (uint32_t)(ak));		\
} while (0)

#endif
