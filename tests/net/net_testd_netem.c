/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * An impairment stage for net_testd, in the spirit of tc netem: the kernel
 * here is built without sch_netem, and netem on the tap would only impair
 * one direction anyway.  The wire port (net_tap) is bridged to a net_ring
 * port that carries the stack; frames crossing in either direction are
 * delayed, dropped, duplicated, corrupted and reordered at the configured
 * rates.  Test harness only: never part of lib/net.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_random.h>
#include <rte_ring.h>

#include "net_testd.h"

#define FIFO_SIZE 65536		/* power of two */
#define BURST 32

struct fifo {
	uint32_t head, tail;
	struct { struct rte_mbuf *m; uint64_t due; } e[FIFO_SIZE];
};

struct dir {
	struct fifo now_q;	/* base delay: due times are monotonic */
	struct fifo late_q;	/* reordered: base + extra delay */
	uint64_t in, lost, dups, corrupted, reordered, overflow, out;
};

static struct {
	struct netem_conf c;
	FILE *pcap;		/* $NETEM_PCAP: frames as the stack sent them */
	uint16_t wire;
	struct rte_ring *to_stack, *from_stack;
	struct rte_mempool *mp;
	struct dir up;		/* wire -> stack */
	struct dir down;	/* stack -> wire */
} ne;

int
netem_parse(const char *s, struct netem_conf *c)
{
	char buf[256], *tok, *save = NULL;

	memset(c, 0, sizeof(*c));
	c->reorder_extra_us = 10000;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
			tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		double v;

		if (eq == NULL)
			return -EINVAL;
		*eq = '\0';
		v = atof(eq + 1);
		if (strcmp(tok, "delay_ms") == 0)
			c->delay_us = v * 1000;
		else if (strcmp(tok, "loss") == 0)
			c->loss = v / 100;
		else if (strcmp(tok, "dup") == 0)
			c->dup = v / 100;
		else if (strcmp(tok, "corrupt") == 0)
			c->corrupt = v / 100;
		else if (strcmp(tok, "reorder") == 0)
			c->reorder = v / 100;
		else if (strcmp(tok, "reorder_ms") == 0)
			c->reorder_extra_us = v * 1000;
		else
			return -EINVAL;
	}
	return 0;
}

static inline bool
chance(double p)
{
	return p > 0 && (double)rte_rand() / (double)UINT64_MAX < p;
}

static void
fifo_push(struct dir *d, struct fifo *f, struct rte_mbuf *m, uint64_t due)
{
	if (f->tail - f->head == FIFO_SIZE) {
		d->overflow++;
		rte_pktmbuf_free(m);
		return;
	}
	f->e[f->tail & (FIFO_SIZE - 1)].m = m;
	f->e[f->tail & (FIFO_SIZE - 1)].due = due;
	f->tail++;
}

/* Flip one bit past the Ethernet header, in the first segment. */
static void
corrupt(struct rte_mbuf *m)
{
	uint16_t len = rte_pktmbuf_data_len(m);
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t off;

	if (len <= 14)
		return;
	off = 14 + rte_rand_max(len - 14);
	p[off] ^= 1u << rte_rand_max(8);
}

/* Debugging aid: the stack's frames before impairment, as a capture
 * on the tap only shows what survived. Headers only (snaplen 128). */
static void
pcap_frame(struct rte_mbuf *m, uint64_t now)
{
	uint32_t rec[4], len = RTE_MIN(rte_pktmbuf_data_len(m), 128u);

	rec[0] = now / 1000000000ULL;
	rec[1] = (now / 1000) % 1000000;
	rec[2] = len;
	rec[3] = rte_pktmbuf_pkt_len(m);
	fwrite(rec, sizeof(rec), 1, ne.pcap);
	fwrite(rte_pktmbuf_mtod(m, void *), len, 1, ne.pcap);
}

static void
impair(struct dir *d, struct rte_mbuf *m, uint64_t now)
{
	uint64_t due = now + ne.c.delay_us * 1000ULL;
	struct rte_mbuf *copy;

	d->in++;
	if (chance(ne.c.loss)) {
		d->lost++;
		rte_pktmbuf_free(m);
		return;
	}
	if (chance(ne.c.dup)) {
		copy = rte_pktmbuf_copy(m, ne.mp, 0, UINT32_MAX);
		if (copy != NULL) {
			d->dups++;
			fifo_push(d, &d->now_q, copy, due);
		}
	}
	if (chance(ne.c.corrupt)) {
		/* Work on a private copy: m may share data with a clone. */
		copy = rte_pktmbuf_copy(m, ne.mp, 0, UINT32_MAX);
		if (copy != NULL) {
			rte_pktmbuf_free(m);
			m = copy;
			corrupt(m);
			d->corrupted++;
		}
	}
	if (chance(ne.c.reorder)) {
		d->reordered++;
		fifo_push(d, &d->late_q, m,
			due + ne.c.reorder_extra_us * 1000ULL);
		return;
	}
	fifo_push(d, &d->now_q, m, due);
}

/* Due frames of one FIFO into out[] (at most cap). */
static unsigned int
fifo_due(struct fifo *f, uint64_t now, struct rte_mbuf **out, unsigned int cap)
{
	unsigned int n = 0;

	while (n < cap && f->head != f->tail &&
			f->e[f->head & (FIFO_SIZE - 1)].due <= now) {
		out[n++] = f->e[f->head & (FIFO_SIZE - 1)].m;
		f->head++;
	}
	return n;
}

static void
release(struct dir *d, uint64_t now, bool to_wire)
{
	struct rte_mbuf *b[BURST];
	unsigned int n, sent, i;

	for (;;) {
		n = fifo_due(&d->now_q, now, b, BURST);
		n += fifo_due(&d->late_q, now, b + n, BURST - n);
		if (n == 0)
			return;
		if (to_wire)
			sent = rte_eth_tx_burst(ne.wire, 0, b, n);
		else
			sent = rte_ring_enqueue_burst(ne.to_stack, (void **)b,
					n, NULL);
		for (i = sent; i < n; i++)
			rte_pktmbuf_free(b[i]);	/* a full ring is loss */
		d->out += sent;
		d->lost += n - sent;
	}
}

int
netem_start(uint16_t wire, const struct netem_conf *c, uint16_t *stack_port)
{
	struct rte_eth_conf ec;
	struct rte_ether_addr mac;
	int id, rc;

	memset(&ne, 0, sizeof(ne));
	ne.c = *c;
	ne.wire = wire;
	ne.mp = rte_pktmbuf_pool_create("netem_mp", 32768, 256, 0,
			RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	ne.to_stack = rte_ring_create("netem_in", 4096, rte_socket_id(),
			RING_F_SP_ENQ | RING_F_SC_DEQ);
	ne.from_stack = rte_ring_create("netem_out", 4096, rte_socket_id(),
			RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (ne.mp == NULL || ne.to_stack == NULL || ne.from_stack == NULL)
		return -ENOMEM;
	memset(&ec, 0, sizeof(ec));
	rc = rte_eth_dev_configure(wire, 1, 1, &ec);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(wire, 0, 1024, rte_socket_id(),
				NULL, ne.mp);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(wire, 0, 1024, rte_socket_id(),
				NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(wire);
	if (rc != 0)
		return rc;
	id = rte_eth_from_rings("fsn_netem", &ne.to_stack, 1, &ne.from_stack,
			1, rte_socket_id());
	if (id < 0)
		return id;
	/* The stack answers for itself on the wire: give it its own MAC. */
	rte_eth_random_addr(mac.addr_bytes);
	rc = rte_eth_dev_default_mac_addr_set(id, &mac);
	if (rc != 0 && rc != -ENOTSUP)
		return rc;
	*stack_port = id;
	if (getenv("NETEM_PCAP") != NULL) {
		/* pcap global header: LINKTYPE_ETHERNET, snaplen 128 */
		static const uint32_t gh[6] = { 0xa1b2c3d4, 0x00040002, 0, 0,
						128, 1 };

		ne.pcap = fopen(getenv("NETEM_PCAP"), "w");
		if (ne.pcap != NULL)
			fwrite(gh, sizeof(gh), 1, ne.pcap);
	}
	return 0;
}

void
netem_poll(uint64_t now)
{
	struct rte_mbuf *b[BURST];
	unsigned int n, i;

	n = rte_eth_rx_burst(ne.wire, 0, b, BURST);
	for (i = 0; i < n; i++)
		impair(&ne.up, b[i], now);
	n = rte_ring_dequeue_burst(ne.from_stack, (void **)b, BURST, NULL);
	for (i = 0; i < n; i++) {
		if (ne.pcap != NULL)
			pcap_frame(b[i], now);
		impair(&ne.down, b[i], now);
	}
	release(&ne.up, now, false);
	release(&ne.down, now, true);
}

static void
report_dir(const char *name, const struct dir *d)
{
	printf("netem_%s_queued %u\n", name,
		(d->now_q.tail - d->now_q.head) +
		(d->late_q.tail - d->late_q.head));
	printf("netem_%s_in %lu\nnetem_%s_lost %lu\nnetem_%s_dups %lu\n"
		"netem_%s_corrupted %lu\nnetem_%s_reordered %lu\n"
		"netem_%s_overflow %lu\nnetem_%s_out %lu\n",
		name, (unsigned long)d->in, name, (unsigned long)d->lost,
		name, (unsigned long)d->dups, name,
		(unsigned long)d->corrupted, name,
		(unsigned long)d->reordered, name,
		(unsigned long)d->overflow, name, (unsigned long)d->out);
}

void
netem_report(void)
{
	report_dir("up", &ne.up);
	report_dir("down", &ne.down);
	if (ne.pcap != NULL)
		fclose(ne.pcap);
}
