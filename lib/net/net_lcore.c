/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Per-lcore poll loop: RX burst, L2 classification, TX buffer, counters. */

#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "net_priv.h"

/* Registry of live lcores, read by net_stats_total() and telemetry from
 * any thread; slots are claimed by CAS, counters are single-writer. */
static struct net_lcore *net_reg[NET_REG_MAX];

struct net_lcore *
net_lcore_registered(unsigned int i)
{
	return i < NET_REG_MAX ?
		__atomic_load_n(&net_reg[i], __ATOMIC_ACQUIRE) : NULL;
}

#define NET_STAT_NAME(n) #n,
static const char *const net_stat_names[] = { NET_STATS(NET_STAT_NAME) };
#undef NET_STAT_NAME

struct net_lcore *
net_lcore_create(struct net_port *p, uint16_t queue, int socket_id)
{
	struct net_lcore *lc;
	int socket = socket_id >= 0 ? socket_id : (int)rte_socket_id();
	int i;

	if (p == NULL || queue >= p->nb_queues)
		return NULL;
	if (socket < 0 || socket == (int)SOCKET_ID_ANY)
		socket = p->socket;
	lc = rte_zmalloc_socket("net_lcore", sizeof(*lc), RTE_CACHE_LINE_SIZE,
			socket);
	if (lc == NULL)
		return NULL;
	lc->port = p;
	lc->queue = queue;
	lc->pool = p->tx_pool;
	lc->reg_slot = -1;
	net_telemetry_register();
	for (i = 0; i < NET_REG_MAX; i++) {
		struct net_lcore *expect = NULL;

		if (__atomic_compare_exchange_n(&net_reg[i], &expect, lc, false,
				__ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
			lc->reg_slot = i;
			break;
		}
	}
	return lc;
}

void
net_lcore_free(struct net_lcore *lc)
{
	unsigned int i;

	if (lc == NULL)
		return;
	net_lcore_flush(lc);
	net_arp_flush_pending(lc);
	for (i = 0; i < lc->tx_n; i++)
		rte_pktmbuf_free(lc->tx[i]);
	if (lc->reg_slot >= 0)
		__atomic_store_n(&net_reg[lc->reg_slot], NULL,
				__ATOMIC_RELEASE);
	rte_free(lc);
}

struct net_port *net_lcore_port(const struct net_lcore *lc) { return lc->port; }
uint16_t net_lcore_queue(const struct net_lcore *lc) { return lc->queue; }

int
net_lcore_set_l4(struct net_lcore *lc, uint8_t proto, net_l4_input_t input,
		net_l4_poll_t poll, void *ctx)
{
	struct net_l4 *l4;

	if (proto == IPPROTO_TCP)
		l4 = &lc->tcp;
	else if (proto == IPPROTO_UDP)
		l4 = &lc->udp;
	else
		return -EPROTONOSUPPORT;
	l4->input = input;
	l4->poll = poll;
	l4->ctx = ctx;
	return 0;
}

struct rte_mbuf *
net_alloc(struct net_lcore *lc)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(lc->pool);

	if (m == NULL)
		lc->st.drop_no_mbuf++;
	return m;
}

void
net_lcore_flush(struct net_lcore *lc)
{
	uint16_t n = lc->tx_n, sent = 0, tries = 0, i;
	uint64_t bytes = 0;

	if (n == 0)
		return;
	/* A full TX ring is back-pressure from a peer or NIC that has not
	 * caught up: what does not go now stays buffered for the next flush
	 * (dropping would cost TCP a retransmission timeout). */
	while (sent < n && tries++ < 4)
		sent += rte_eth_tx_burst(lc->port->port_id, lc->queue,
				lc->tx + sent, n - sent);
	for (i = 0; i < sent; i++)
		bytes += lc->tx_len[i];
	lc->st.tx_pkts += sent;
	lc->st.tx_bytes += bytes;
	/* A frame the PMD refuses for good (not merely a full ring) would
	 * block the buffer forever: after NET_TX_STALL_NS without any
	 * progress (poll time), the head frame goes. */
	if (sent > 0) {
		lc->tx_stalled = false;
	} else if (!lc->tx_stalled) {
		lc->tx_stalled = true;
		lc->tx_stall_ns = lc->now_ns;
	} else if (lc->now_ns - lc->tx_stall_ns >= NET_TX_STALL_NS) {
		rte_pktmbuf_free(lc->tx[0]);
		lc->st.drop_tx_stall++;
		sent = 1;
		lc->tx_stall_ns = lc->now_ns;	/* the next head's second */
	}
	if (sent < n) {
		memmove(lc->tx, lc->tx + sent, (n - sent) * sizeof(lc->tx[0]));
		memmove(lc->tx_len, lc->tx_len + sent,
			(n - sent) * sizeof(lc->tx_len[0]));
	}
	lc->tx_n = n - sent;
}

int
net_tx_enqueue(struct net_lcore *lc, struct rte_mbuf *m)
{
	if (lc->tx_n == NET_TX_BUF) {
		net_lcore_flush(lc);
		if (lc->tx_n == NET_TX_BUF) {
			/* The ring stayed full for a whole buffer. */
			lc->st.drop_tx_full++;
			rte_pktmbuf_free(m);
			return -ENOBUFS;
		}
	}
	lc->tx_len[lc->tx_n] = m->pkt_len;
	lc->tx[lc->tx_n++] = m;
	return 0;
}

int
net_lcore_neigh(struct net_lcore *lc, uint32_t ip_be, uint8_t mac[6])
{
	struct rte_ether_addr a;

	if (net_arp_lookup(lc->port, ip_be, lc->now_ns, &a) != 0)
		return -ENOENT;
	memcpy(mac, a.addr_bytes, RTE_ETHER_ADDR_LEN);
	return 0;
}

int
net_lcore_send_frame(struct net_lcore *lc, struct rte_mbuf *m)
{
	return net_tx_enqueue(lc, m);
}

int
net_eth_output(struct net_lcore *lc, struct rte_mbuf *m,
		const struct rte_ether_addr *dst, uint16_t ether_type)
{
	struct net_port *p = lc->port;
	bool sw_vlan = p->vlan && !(p->caps & NET_CAP_VLAN_INSERT);
	uint16_t l2 = RTE_ETHER_HDR_LEN + (sw_vlan ? 4 : 0);
	struct rte_ether_hdr *eth;

	eth = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, l2);
	if (eth == NULL) {
		/* Callers reserve NET_HDR_ROOM; reaching here is a bug. */
		lc->st.drop_no_mbuf++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	rte_ether_addr_copy(dst, &eth->dst_addr);
	rte_ether_addr_copy(&p->mac, &eth->src_addr);
	if (sw_vlan) {
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eth + 1);

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = rte_cpu_to_be_16(p->vlan_id);
		vh->eth_proto = rte_cpu_to_be_16(ether_type);
	} else {
		eth->ether_type = rte_cpu_to_be_16(ether_type);
		if (p->vlan) {
			m->ol_flags |= RTE_MBUF_F_TX_VLAN;
			m->vlan_tci = p->vlan_id;
		}
	}
	m->l2_len = l2;
	return net_tx_enqueue(lc, m);
}

/* Ethernet and 802.1Q (IEEE 802.1Q §9): strip L2, dispatch by type. */
static void
net_rx_one(struct net_lcore *lc, struct rte_mbuf *m)
{
	struct net_port *p = lc->port;
	struct rte_ether_hdr *eth;
	uint16_t type, l2 = RTE_ETHER_HDR_LEN;
	bool tagged = false;

	lc->st.rx_pkts++;
	lc->st.rx_bytes += m->pkt_len;
	if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN) {
		lc->st.drop_eth_short++;
		goto drop;
	}
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	if (!rte_is_same_ether_addr(&eth->dst_addr, &p->mac) &&
			!rte_is_broadcast_ether_addr(&eth->dst_addr)) {
		lc->st.drop_eth_not_ours++;
		goto drop;
	}
	type = rte_be_to_cpu_16(eth->ether_type);
	if (m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED) {
		tagged = true;
		if (!p->vlan || (m->vlan_tci & 0xfff) != p->vlan_id) {
			lc->st.drop_vlan++;
			goto drop;
		}
	}
	if (type == RTE_ETHER_TYPE_VLAN) {
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eth + 1);

		if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN + 4 ||
				!p->vlan || tagged ||
				(rte_be_to_cpu_16(vh->vlan_tci) & 0xfff) !=
				p->vlan_id) {
			lc->st.drop_vlan++;
			goto drop;
		}
		tagged = true;
		type = rte_be_to_cpu_16(vh->eth_proto);
		l2 += 4;
	}
	if (p->vlan && !tagged) {
		/* A VLAN port speaks only on its VLAN. */
		lc->st.drop_vlan++;
		goto drop;
	}
	rte_pktmbuf_adj(m, l2);
	switch (type) {
	case RTE_ETHER_TYPE_ARP:
		net_arp_input(lc, m);
		return;
	case RTE_ETHER_TYPE_IPV4:
		net_ipv4_input(lc, m);
		return;
	default:
		lc->st.drop_eth_type++;
		break;
	}
drop:
	rte_pktmbuf_free(m);
}

unsigned int
net_lcore_poll(struct net_lcore *lc, uint64_t now_ns)
{
	struct rte_mbuf *rx[NET_RX_BURST];
	uint16_t n, i;

	lc->now_ns = now_ns;
	if (!lc->garp_done) {
		lc->garp_done = true;
		/* RFC 5227 §3: announce our address once, from one queue. */
		if (lc->queue == 0)
			net_arp_send_garp(lc);
	}
	n = rte_eth_rx_burst(lc->port->port_id, lc->queue, rx, NET_RX_BURST);
	for (i = 0; i < n; i++) {
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(rx[i + 1], void *));
		net_rx_one(lc, rx[i]);
	}
	net_arp_poll(lc);
	if (lc->tcp.poll != NULL)
		lc->tcp.poll(lc->tcp.ctx, lc, now_ns);
	if (lc->udp.poll != NULL)
		lc->udp.poll(lc->udp.ctx, lc, now_ns);
	net_lcore_flush(lc);
	return n;
}

void
net_lcore_clock(struct net_lcore *lc, uint64_t now_ns)
{
	if (now_ns > lc->now_ns)
		lc->now_ns = now_ns;
}

void
net_lcore_stats(const struct net_lcore *lc, struct net_stats *out)
{
	memcpy(out, &lc->st, sizeof(*out));
}

unsigned int
net_stats_count(void)
{
	return RTE_DIM(net_stat_names);
}

const char *
net_stats_name(unsigned int i)
{
	return i < RTE_DIM(net_stat_names) ? net_stat_names[i] : NULL;
}

void
net_stats_total(struct net_stats *out)
{
	uint64_t *o = (uint64_t *)out;
	unsigned int i, k;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < NET_REG_MAX; i++) {
		struct net_lcore *lc = __atomic_load_n(&net_reg[i],
				__ATOMIC_ACQUIRE);
		const uint64_t *s;

		if (lc == NULL)
			continue;
		s = (const uint64_t *)&lc->st;
		for (k = 0; k < net_stats_count(); k++)
			o[k] += __atomic_load_n(&s[k], __ATOMIC_RELAXED);
	}
}

static int
net_tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct net_stats s;
	const uint64_t *v = (const uint64_t *)&s;
	unsigned int k;

	net_stats_total(&s);
	rte_tel_data_start_dict(d);
	for (k = 0; k < net_stats_count(); k++)
		rte_tel_data_add_dict_u64(d, net_stat_names[k], v[k]);
	return 0;
}

int
net_telemetry_register(void)
{
	static int state;	/* 0 none, 1 claimed, 2 done */
	int expect = 0, rc;

	/* Lcores may be created concurrently: one caller registers. */
	if (!__atomic_compare_exchange_n(&state, &expect, 1, false,
			__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	rc = rte_telemetry_register_cmd("/ffn/net/stats", net_tel_stats,
			"Sum of lib/net per-lcore counters. No parameters");
	__atomic_store_n(&state, rc == 0 ? 2 : 0, __ATOMIC_RELEASE);
	return rc;
}
