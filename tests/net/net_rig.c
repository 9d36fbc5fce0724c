/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_icmp.h>
#include <rte_ip.h>

#include "net_rig.h"

unsigned int rig_tx_ring_size = 1024;

const struct rte_ether_addr rig_peer_mac = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x09 } };

int
rig_eal_init(const char *prefix)
{
	char fp[64];
	char *argv[] = { "test", "--no-pci", "--no-huge", "-m", "256",
		"--log-level", "lib.eal:error", fp, NULL };

	snprintf(fp, sizeof(fp), "--file-prefix=%s", prefix);
	return rte_eal_init(RTE_DIM(argv) - 1, argv);
}

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(path);
}

void
rig_eal_fini(void)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	/* EAL leaves its runtime directory behind; it is ours alone. */
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

int
rig_open(struct rig *r, const struct net_port_conf *conf)
{
	static unsigned int seq;
	char name[32];
	struct net_port_conf c;
	int rc, id;

	memset(r, 0, sizeof(*r));
	seq++;
	snprintf(name, sizeof(name), "rig_rx%u", seq);
	r->rx = rte_ring_create(name, 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "rig_tx%u", seq);
	r->tx = rte_ring_create(name, rig_tx_ring_size, 0,
			RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (r->rx == NULL || r->tx == NULL)
		return -1;
	snprintf(name, sizeof(name), "net_rig%u", seq);
	id = rte_eth_from_rings(name, &r->rx, 1, &r->tx, 1, 0);
	if (id < 0)
		return id;
	r->port_id = id;
	if (conf != NULL) {
		c = *conf;
	} else {
		memset(&c, 0, sizeof(c));
		c.ip_be = rte_cpu_to_be_32(RIG_IP);
		c.netmask_be = rte_cpu_to_be_32(RIG_MASK);
		c.gateway_be = rte_cpu_to_be_32(RIG_GW);
	}
	c.port_id = id;
	c.nb_queues = 1;
	c.nb_mbufs = 2048;
	c.nb_rxd = 512;
	c.nb_txd = 512;
	rc = net_port_init(&c, &r->p);
	if (rc != 0)
		return rc;
	net_port_mac(r->p, r->mac.addr_bytes);
	r->lc = net_lcore_create(r->p, 0, -1);
	if (r->lc == NULL)
		return -1;
	r->now = 1000 * MS;
	net_lcore_poll(r->lc, r->now);	/* gratuitous ARP */
	return 0;
}

void
rig_close(struct rig *r)
{
	rig_drain(r);
	net_lcore_free(r->lc);
	net_port_close(r->p);
	rig_drain(r);
	rte_ring_free(r->rx);
	rte_ring_free(r->tx);
}

struct rte_mbuf *
rig_frame(struct rig *r, const void *bytes, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(net_port_pool(r->p));
	void *d;

	if (m == NULL)
		return NULL;
	d = rte_pktmbuf_append(m, len);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(d, bytes, len);
	return m;
}

uint16_t
rig_eth(uint8_t *buf, const struct rte_ether_addr *dst, uint16_t type)
{
	struct rte_ether_hdr *e = (struct rte_ether_hdr *)buf;

	e->dst_addr = *dst;
	e->src_addr = rig_peer_mac;
	e->ether_type = rte_cpu_to_be_16(type);
	return sizeof(*e);
}

uint16_t
rig_arp(uint8_t *buf, const struct rte_ether_addr *dst, uint16_t op,
		uint32_t sip, uint32_t tip)
{
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)buf;

	memset(a, 0, sizeof(*a));
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = 6;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(op);
	a->arp_data.arp_sha = rig_peer_mac;
	a->arp_data.arp_sip = rte_cpu_to_be_32(sip);
	if (dst != NULL)
		a->arp_data.arp_tha = *dst;
	a->arp_data.arp_tip = rte_cpu_to_be_32(tip);
	return sizeof(*a);
}

uint16_t
rig_ipv4(uint8_t *buf, uint32_t src, uint32_t dst, uint8_t proto,
		const void *payload, uint16_t plen)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)buf;

	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(sizeof(*ip) + plen);
	ip->packet_id = rte_cpu_to_be_16(0x1234);
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	memcpy(buf + sizeof(*ip), payload, plen);
	return sizeof(*ip) + plen;
}

uint16_t
rig_icmp_echo(uint8_t *buf, uint16_t id, uint16_t seq, const void *data,
		uint16_t dlen)
{
	struct rte_icmp_hdr *ic = (struct rte_icmp_hdr *)buf;

	ic->icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
	ic->icmp_code = 0;
	ic->icmp_cksum = 0;
	ic->icmp_ident = rte_cpu_to_be_16(id);
	ic->icmp_seq_nb = rte_cpu_to_be_16(seq);
	memcpy(ic + 1, data, dlen);
	ic->icmp_cksum = ~rte_raw_cksum(buf, sizeof(*ic) + dlen);
	return sizeof(*ic) + dlen;
}

void
rig_inject(struct rig *r, const void *bytes, uint16_t len)
{
	struct rte_mbuf *m = rig_frame(r, bytes, len);

	if (m != NULL && rte_ring_enqueue(r->rx, m) != 0)
		rte_pktmbuf_free(m);
}

void
rig_poll(struct rig *r, uint64_t dt_ns)
{
	r->now += dt_ns;
	net_lcore_poll(r->lc, r->now);
}

uint16_t
rig_take(struct rig *r, uint8_t *buf, uint16_t cap)
{
	struct rte_mbuf *m;
	const void *d;
	uint16_t len;

	if (rte_ring_dequeue(r->tx, (void **)&m) != 0)
		return 0;
	len = RTE_MIN(m->pkt_len, cap);
	d = rte_pktmbuf_read(m, 0, len, buf);
	if (d != buf)
		memcpy(buf, d, len);
	rte_pktmbuf_free(m);
	return len;
}

unsigned int
rig_tx_count(struct rig *r)
{
	return rte_ring_count(r->tx);
}

void
rig_drain(struct rig *r)
{
	struct rte_mbuf *m;

	while (rte_ring_dequeue(r->tx, (void **)&m) == 0)
		rte_pktmbuf_free(m);
}

void
rig_stats(struct rig *r, struct net_stats *s)
{
	net_lcore_stats(r->lc, s);
}

void
rig_learn_peer(struct rig *r, uint32_t ip)
{
	uint8_t f[128];
	uint16_t n;

	n = rig_eth(f, &(struct rte_ether_addr){
			.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } },
			RTE_ETHER_TYPE_ARP);
	n += rig_arp(f + n, NULL, RTE_ARP_OP_REQUEST, ip, RIG_IP);
	rig_inject(r, f, n);
	rig_poll(r, 0);
	rig_drain(r);
}
