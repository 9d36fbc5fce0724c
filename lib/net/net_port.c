/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Port bring-up: queues, symmetric RSS, offloads, MTU, NUMA-local pool. */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_thash.h>

#include "net_priv.h"

/*
 * Symmetric Toeplitz key (Woo and Park, "Scalable TCP Session Monitoring
 * with Symmetric Receive-side Scaling", 2012): with the 16-bit pattern
 * 0x6d5a repeated, hash(src,dst,sp,dp) == hash(dst,src,dp,sp), so both
 * directions of a flow land on one queue and one lcore owns the connection.
 * 52 bytes covers NICs whose key is longer than 40 (i40e, ice).
 */
static const uint8_t net_sym_key[52] = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a,
};

const uint8_t *
net_rss_key(void)
{
	return net_sym_key;
}

uint32_t
net_rss_hash_v4(uint32_t src_be, uint32_t dst_be, uint16_t sport_be,
		uint16_t dport_be)
{
	uint32_t t[3];

	/* rte_softrss takes the tuple in host order and the key as bytes. */
	t[0] = rte_be_to_cpu_32(src_be);
	t[1] = rte_be_to_cpu_32(dst_be);
	t[2] = ((uint32_t)rte_be_to_cpu_16(sport_be) << 16) |
		rte_be_to_cpu_16(dport_be);
	return rte_softrss(t, 3, net_sym_key);
}

uint16_t
net_rss_queue(const struct net_port *p, uint32_t hash)
{
	if (p->reta_size == 0 || p->nb_queues <= 1)
		return 0;
	return p->reta[hash % p->reta_size];
}

uint16_t
net_rss_pick_sport(const struct net_lcore *lc, uint32_t dst_be,
		uint16_t dport_be, uint16_t lo, uint16_t hi, uint32_t *cursor)
{
	const struct net_port *p = lc->port;
	uint32_t span = (uint32_t)hi - lo + 1;
	uint32_t i;

	if (hi < lo)
		return 0;
	for (i = 0; i < span; i++) {
		uint16_t sp = lo + (*cursor + i) % span;
		uint32_t h = net_rss_hash_v4(p->ip_be, dst_be,
				rte_cpu_to_be_16(sp), dport_be);

		if (net_rss_queue(p, h) == lc->queue) {
			*cursor += i + 1;
			return sp;
		}
	}
	return 0;
}

uint64_t
net_now_ns(void)
{
	uint64_t c = rte_get_tsc_cycles();
	uint64_t hz = rte_get_tsc_hz();

	return (c / hz) * 1000000000ULL + (c % hz) * 1000000000ULL / hz;
}

static uint32_t
pow2_at_least(uint32_t v)
{
	uint32_t r = 1;

	while (r < v)
		r <<= 1;
	return r;
}

/* Offloads we want, masked by what the device offers (conf->no_offloads
 * forces the software paths, which the unit tests exercise). */
static void
pick_offloads(const struct net_port_conf *conf,
		const struct rte_eth_dev_info *di, struct rte_eth_conf *ec,
		uint32_t *caps)
{
	uint64_t tx = di->tx_offload_capa, rx = di->rx_offload_capa;

	*caps = 0;
	if (conf->no_offloads)
		return;
	/* net_tap's TX "offload" is a software checksum in the PMD that adds
	 * per-segment sums without regard to odd offsets (22.11
	 * tap_tx_l4_add_rcksum), so multi-segment TCP (a copied head plus a
	 * zero-copy body) leaves with a wrong checksum. It saves no
	 * hardware work either: do it ourselves (tcp_cksum.h). */
	if (net_is_tap(di))
		tx &= ~(uint64_t)(RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
				  RTE_ETH_TX_OFFLOAD_UDP_CKSUM |
				  RTE_ETH_TX_OFFLOAD_TCP_TSO);
	if (tx & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) {
		ec->txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
		*caps |= NET_CAP_MULTI_SEGS;
	}
	if (tx & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) {
		ec->txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
		*caps |= NET_CAP_TX_IPV4_CKSUM;
	}
	if (tx & RTE_ETH_TX_OFFLOAD_TCP_CKSUM) {
		ec->txmode.offloads |= RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
		*caps |= NET_CAP_TX_TCP_CKSUM;
	}
	if (tx & RTE_ETH_TX_OFFLOAD_UDP_CKSUM) {
		ec->txmode.offloads |= RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
		*caps |= NET_CAP_TX_UDP_CKSUM;
	}
	/* TSO needs the IPv4 and TCP checksum offloads it builds on: the
	 * device fixes both in every segment it cuts.  Not on net_tap: its
	 * GSO compares tso_segsz plus the L2-L4 headers with the L3 MTU, so
	 * it refuses every full-sized segment (DPDK 22.11 pmd_tx_burst). */
	if ((tx & RTE_ETH_TX_OFFLOAD_TCP_TSO) &&
			!net_is_tap(di) &&
			(*caps & NET_CAP_TX_TCP_CKSUM) &&
			(*caps & NET_CAP_TX_IPV4_CKSUM)) {
		ec->txmode.offloads |= RTE_ETH_TX_OFFLOAD_TCP_TSO;
		*caps |= NET_CAP_TSO;
	}
	if (rx & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM) {
		ec->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
		*caps |= NET_CAP_RX_IPV4_CKSUM;
	}
	if ((rx & RTE_ETH_RX_OFFLOAD_TCP_CKSUM) &&
			(rx & RTE_ETH_RX_OFFLOAD_UDP_CKSUM)) {
		ec->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TCP_CKSUM |
			RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
		*caps |= NET_CAP_RX_L4_CKSUM;
	}
	if (conf->vlan && (rx & RTE_ETH_RX_OFFLOAD_VLAN_STRIP)) {
		ec->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
		*caps |= NET_CAP_VLAN_STRIP;
	}
	if (conf->vlan && (tx & RTE_ETH_TX_OFFLOAD_VLAN_INSERT)) {
		ec->txmode.offloads |= RTE_ETH_TX_OFFLOAD_VLAN_INSERT;
		*caps |= NET_CAP_VLAN_INSERT;
	}
}

/* Spread the redirection table round-robin over our queues so
 * net_rss_queue() knows where a hash lands without asking the device. */
static void
setup_reta(struct net_port *p, const struct rte_eth_dev_info *di)
{
	struct rte_eth_rss_reta_entry64 r[RTE_ETH_RSS_RETA_SIZE_512 /
		RTE_ETH_RETA_GROUP_SIZE];
	uint16_t i, n = di->reta_size;
	unsigned int odd = 0;

	if (!(p->caps & NET_CAP_RSS) || n == 0 ||
			n > RTE_ETH_RSS_RETA_SIZE_512)
		return;
	memset(r, 0, sizeof(r));
	for (i = 0; i < n; i++) {
		r[i / RTE_ETH_RETA_GROUP_SIZE].mask |=
			1ULL << (i % RTE_ETH_RETA_GROUP_SIZE);
		r[i / RTE_ETH_RETA_GROUP_SIZE].reta[i %
			RTE_ETH_RETA_GROUP_SIZE] = i % p->nb_queues;
	}
	if (rte_eth_dev_rss_reta_update(p->port_id, r, n) != 0 &&
			rte_eth_dev_rss_reta_query(p->port_id, r, n) != 0) {
		NET_LOG(WARNING, "port %u: RETA neither set nor readable\n",
			p->port_id);
		return;
	}
	for (i = 0; i < n; i++) {
		p->reta[i] = r[i / RTE_ETH_RETA_GROUP_SIZE].reta[i %
			RTE_ETH_RETA_GROUP_SIZE];
		if (p->reta[i] != i % p->nb_queues && !odd++)
			NET_LOG(WARNING, "port %u: RETA entry %u is queue %u, "
				"not %u: TCP active opens may pick ports that "
				"land on another lcore\n", p->port_id, i,
				p->reta[i], i % p->nb_queues);
	}
	p->reta_size = n;
}

static int
setup_queues(struct net_port *p, const struct net_port_conf *conf,
		const struct rte_eth_dev_info *di, const struct rte_eth_conf *ec)
{
	uint16_t nb_rxd = conf->nb_rxd ? conf->nb_rxd : 1024;
	uint16_t nb_txd = conf->nb_txd ? conf->nb_txd : 1024;
	struct rte_eth_rxconf rxc = di->default_rxconf;
	struct rte_eth_txconf txc = di->default_txconf;
	uint16_t q;
	int rc;

	rc = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nb_rxd, &nb_txd);
	if (rc != 0)
		return rc;
	rxc.offloads = ec->rxmode.offloads;
	txc.offloads = ec->txmode.offloads;
	for (q = 0; q < p->nb_queues; q++) {
		rc = rte_eth_rx_queue_setup(p->port_id, q, nb_rxd, p->socket,
				&rxc, p->pool);
		if (rc != 0) {
			NET_LOG(ERR, "port %u: rx queue %u setup: %s\n",
				p->port_id, q, strerror(-rc));
			return rc;
		}
		rc = rte_eth_tx_queue_setup(p->port_id, q, nb_txd, p->socket,
				&txc);
		if (rc != 0) {
			NET_LOG(ERR, "port %u: tx queue %u setup: %s\n",
				p->port_id, q, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/*
 * net_tap's Rx trigger (DPDK 22.11 tun_alloc, pmd_rx_burst): every queue fd
 * is set to raise a real-time signal (F_SETSIG, O_ASYNC) for each frame the
 * kernel queues, and rx_burst skips its readv() until one has come.  Real-
 * time signals queue one per frame and are process-directed, so the kernel
 * hands many of them to EAL's sleeping control threads, woken on another
 * core for each packet, and the poll thread pays a signal frame, an
 * rt_sigreturn and an IPI for the rest.  On the HTTP benchmark
 * (tools/bench/net/README.md) that cost up to 4x in requests/s.  A poll
 * loop reads its queue anyway: the PMD falls back to one readv() per burst
 * when it finds no free real-time signal, so the queues are set up while
 * every one of them looks taken, then the handlers are put back.  A real-
 * time signal arriving meanwhile goes to a no-op handler.  The PMD's
 * trigger is process-wide: a signal later sent to its handler (installed
 * at probe for the idle keep-alive fd, which carries no traffic) would
 * make every tap queue wait for signals again; nothing here sends one.
 */
static void
net_rtsig_nop(int sig)
{
	RTE_SET_USED(sig);
}

struct net_rtsig_save {
	int n;
	struct sigaction old[64];
};

static void
net_rtsig_take(struct net_rtsig_save *sv)
{
	struct sigaction nop;
	int sig;

	memset(&nop, 0, sizeof(nop));
	nop.sa_handler = net_rtsig_nop;
	nop.sa_flags = SA_RESTART;
	sigemptyset(&nop.sa_mask);
	sv->n = 0;
	for (sig = SIGRTMIN; sig <= SIGRTMAX &&
			sv->n < (int)RTE_DIM(sv->old); sig++, sv->n++)
		sigaction(sig, &nop, &sv->old[sv->n]);
}

static void
net_rtsig_give_back(const struct net_rtsig_save *sv)
{
	int i;

	for (i = 0; i < sv->n; i++)
		sigaction(SIGRTMIN + i, &sv->old[i], NULL);
}

static int
create_pool(struct net_port *p, const struct net_port_conf *conf)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	uint32_t frame = p->mtu + RTE_ETHER_HDR_LEN + 4 + RTE_ETHER_CRC_LEN;
	uint32_t room = RTE_PKTMBUF_HEADROOM + RTE_MAX(frame, 2048u);
	uint32_t n = conf->nb_mbufs ? conf->nb_mbufs : 8192u * p->nb_queues;

	uint32_t ntx = conf->nb_tx_mbufs ? conf->nb_tx_mbufs : n;

	snprintf(name, sizeof(name), "net_mp_%u", p->port_id);
	p->pool = rte_pktmbuf_pool_create(name, n, 256, 0, room, p->socket);
	if (p->pool == NULL) {
		NET_LOG(ERR, "port %u: mbuf pool of %u: %s\n", p->port_id, n,
			rte_strerror(rte_errno));
		return -rte_errno ? -rte_errno : -ENOMEM;
	}
	snprintf(name, sizeof(name), "net_tx_%u", p->port_id);
	p->tx_pool = rte_pktmbuf_pool_create(name, ntx, 256, 0, room,
			p->socket);
	if (p->tx_pool == NULL) {
		int rc = rte_errno ? -rte_errno : -ENOMEM;

		NET_LOG(ERR, "port %u: TX mbuf pool of %u: %s\n", p->port_id,
			ntx, rte_strerror(-rc));
		rte_mempool_free(p->pool);
		p->pool = NULL;
		return rc;
	}
	return 0;
}

static int
port_setup(struct net_port *p, const struct net_port_conf *conf)
{
	struct rte_eth_conf ec;
	struct rte_eth_dev_info di;
	int rc;

	rc = rte_eth_dev_info_get(p->port_id, &di);
	if (rc != 0)
		return rc;
	if (p->nb_queues > di.max_rx_queues ||
			p->nb_queues > di.max_tx_queues) {
		NET_LOG(ERR, "port %u: %u queues asked, device has %u/%u\n",
			p->port_id, p->nb_queues, di.max_rx_queues,
			di.max_tx_queues);
		return -EINVAL;
	}
	memset(&ec, 0, sizeof(ec));
	pick_offloads(conf, &di, &ec, &p->caps);
	/* Mbufs per packet the PMD takes; 0 when it states no limit. */
	p->tx_max_segs = di.tx_desc_lim.nb_mtu_seg_max;
	if (di.tx_desc_lim.nb_seg_max != 0 && (p->tx_max_segs == 0 ||
			di.tx_desc_lim.nb_seg_max < p->tx_max_segs))
		p->tx_max_segs = di.tx_desc_lim.nb_seg_max;
	/* A PMD without MULTI_SEGS sends only the first mbuf of a chain:
	 * net_af_xdp (22.11) copies pkt_len bytes from the first segment's
	 * data, so a zero-copy body leaves as stale bytes that the peer
	 * drops for their checksum. One mbuf per frame: TCP copies the
	 * payload into the header's mbuf (tcp_output.c). */
	if (!(p->caps & NET_CAP_MULTI_SEGS)) {
		p->tx_max_segs = 1;
		NET_LOG(INFO, "port %u: %s has no multi-segment TX: each "
			"frame's payload is copied into one mbuf\n",
			p->port_id, di.driver_name);
	}
	if (p->nb_queues > 1 && (di.flow_type_rss_offloads &
			RTE_ETH_RSS_NONFRAG_IPV4_TCP)) {
		ec.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		ec.rx_adv_conf.rss_conf.rss_key = (uint8_t *)net_sym_key;
		ec.rx_adv_conf.rss_conf.rss_key_len =
			di.hash_key_size ? di.hash_key_size : NET_RSS_KEY_LEN;
		if (ec.rx_adv_conf.rss_conf.rss_key_len > sizeof(net_sym_key))
			ec.rx_adv_conf.rss_conf.rss_key_len =
				sizeof(net_sym_key);
		ec.rx_adv_conf.rss_conf.rss_hf = di.flow_type_rss_offloads &
			(RTE_ETH_RSS_NONFRAG_IPV4_TCP | RTE_ETH_RSS_IPV4);
		p->caps |= NET_CAP_RSS;
	} else if (p->nb_queues > 1 && net_is_af_xdp(&di)) {
		/* Each queue is a NIC queue the kernel's RSS (ethtool -X)
		 * fills: a flow stays on one queue, and the lcore polling it
		 * serves the connections that open there. What DPDK cannot
		 * set is the key, so an active open cannot choose its queue
		 * (tcp's rss_nb_queues stays 1). */
		NET_LOG(INFO, "port %u: %u AF_XDP queues, flows spread by the "
			"NIC's own RSS\n", p->port_id, p->nb_queues);
	} else if (p->nb_queues > 1) {
		/* Everything would arrive on queue 0: a connection owned by
		 * another lcore never sees its segments. */
		NET_LOG(ERR, "port %u: %u queues but no IPv4/TCP RSS\n",
			p->port_id, p->nb_queues);
	}
	rc = rte_eth_dev_configure(p->port_id, p->nb_queues, p->nb_queues,
			&ec);
	if (rc != 0) {
		NET_LOG(ERR, "port %u: configure: %s\n", p->port_id,
			strerror(-rc));
		return rc;
	}
	/* Some vdevs (net_ring) have no MTU op: keep going on -ENOTSUP. */
	rc = rte_eth_dev_set_mtu(p->port_id, p->mtu);
	if (rc != 0 && rc != -ENOTSUP)
		NET_LOG(WARNING, "port %u: set mtu %u: %s\n", p->port_id,
			p->mtu, strerror(-rc));
	rc = create_pool(p, conf);
	if (rc != 0)
		return rc;
	if (net_is_tap(&di) && !conf->tap_rx_signal) {
		struct net_rtsig_save sv;

		net_rtsig_take(&sv);
		rc = setup_queues(p, conf, &di, &ec);
		net_rtsig_give_back(&sv);
		NET_LOG(INFO, "port %u: net_tap queues read without Rx "
			"signals (one readv per burst)\n", p->port_id);
	} else {
		rc = setup_queues(p, conf, &di, &ec);
	}
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_start(p->port_id);
	if (rc != 0) {
		NET_LOG(ERR, "port %u: start: %s\n", p->port_id, strerror(-rc));
		return rc;
	}
	setup_reta(p, &di);
	net_port_xdp_log(p->port_id);
	rc = rte_eth_macaddr_get(p->port_id, &p->mac);
	if (rc != 0) {
		NET_LOG(ERR, "port %u: macaddr_get: %s\n", p->port_id,
			strerror(-rc));
		return rc;
	}
	/* Operators need it for the frames they build themselves (the
	 * pktgen kit's FFN_DST_MAC, tools/pktgen/README.md). */
	NET_LOG(INFO, "port %u: MAC " RTE_ETHER_ADDR_PRT_FMT "\n", p->port_id,
		RTE_ETHER_ADDR_BYTES(&p->mac));
	return 0;
}

int
net_port_init(const struct net_port_conf *conf, struct net_port **out)
{
	struct net_port *p;
	int socket, rc;

	if (conf == NULL || out == NULL || conf->ip_be == 0 ||
			!rte_eth_dev_is_valid_port(conf->port_id))
		return -EINVAL;
	socket = rte_eth_dev_socket_id(conf->port_id);
	if (socket < 0)
		socket = (int)rte_socket_id();
	if (socket < 0 || socket == (int)SOCKET_ID_ANY)
		socket = 0;
	p = rte_zmalloc_socket("net_port", sizeof(*p), RTE_CACHE_LINE_SIZE,
			socket);
	if (p == NULL)
		return -ENOMEM;
	p->port_id = conf->port_id;
	p->nb_queues = conf->nb_queues ? conf->nb_queues : 1;
	p->mtu = conf->mtu ? conf->mtu : RTE_ETHER_MTU;
	p->vlan = conf->vlan;
	p->vlan_id = conf->vlan_id & 0xfff;
	p->ip_be = conf->ip_be;
	p->netmask_be = conf->netmask_be;
	p->gateway_be = conf->gateway_be;
	p->socket = socket;
	p->arp_timeout_ns = (conf->arp_timeout_ms ? conf->arp_timeout_ms :
			300000) * 1000000ULL;
	p->arp_retry_ns = (conf->arp_retry_ms ? conf->arp_retry_ms : 1000) *
		1000000ULL;
	p->arp_retries = conf->arp_retries ? conf->arp_retries : 3;
	p->arp_mask = pow2_at_least(conf->arp_entries ? conf->arp_entries :
			1024) - 1;
	p->arp = rte_zmalloc_socket("net_arp", (p->arp_mask + 1) *
			sizeof(*p->arp), RTE_CACHE_LINE_SIZE, socket);
	if (p->arp == NULL) {
		rte_free(p);
		return -ENOMEM;
	}
	rc = port_setup(p, conf);
	if (rc != 0) {
		rte_eth_dev_stop(p->port_id);
		rte_mempool_free(p->pool);
		rte_mempool_free(p->tx_pool);
		rte_free(p->arp);
		rte_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void
net_port_close(struct net_port *p)
{
	if (p == NULL)
		return;
	rte_eth_dev_stop(p->port_id);
	rte_eth_dev_close(p->port_id);
	rte_mempool_free(p->pool);
	rte_mempool_free(p->tx_pool);
	rte_free(p->arp);
	rte_free(p);
}

uint16_t net_port_id(const struct net_port *p) { return p->port_id; }
uint32_t net_port_ipv4(const struct net_port *p) { return p->ip_be; }
uint16_t net_port_mtu(const struct net_port *p) { return p->mtu; }
uint32_t net_port_caps(const struct net_port *p) { return p->caps; }
uint16_t net_port_nb_queues(const struct net_port *p) { return p->nb_queues; }
uint16_t net_port_tx_max_segs(const struct net_port *p) { return p->tx_max_segs; }
struct rte_mempool *net_port_pool(const struct net_port *p) { return p->pool; }
struct rte_mempool *net_port_tx_pool(const struct net_port *p) { return p->tx_pool; }

void
net_port_mac(const struct net_port *p, uint8_t mac[6])
{
	memcpy(mac, p->mac.addr_bytes, 6);
}
