/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef NET_H
#define NET_H

/**
 * lib/net: ports, Ethernet, VLAN, ARP, IPv4 and ICMP on DPDK (issue 3,
 * "Ports and lcores" and "L2/L3"); TCP lives in tcp/ and plugs in through
 * net_lcore_set_l4() / net_ipv4_output().
 *
 * Model: one struct net_port per ethdev, one struct net_lcore per polling
 * lcore, each owning exactly one RX/TX queue pair of its port.  Everything
 * on the data path is per lcore; the only shared state is the port's ARP
 * table, which is lock-free (entries are claimed by CAS and updated with
 * single 64-bit stores).
 *
 * Time: every entry point that needs time takes now_ns, a monotonic clock
 * in nanoseconds chosen by the caller (net_now_ns() in production, a virtual
 * clock in tests).
 *
 * Addresses are in network byte order (suffix _be) everywhere.
 *
 * Typical use, one worker lcore per queue:
 *	net_port_init(&conf, &port);			(main lcore)
 *	on worker lcore q:
 *		lc = net_lcore_create(port, q, -1);
 *		tcp = net_tcp_attach(lc, &tcp_conf);	(net_tcp.h)
 *		tcp_listen(tcp, 80, 0, &ops, app);
 *		for (;;)
 *			net_lcore_poll(lc, net_now_ns());
 * TCP callbacks run inside net_lcore_poll(); what they send is flushed at
 * the end of the poll, or at once with net_lcore_flush() (after tcp_flush())
 * when a response completes outside the poll.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

struct net_port;
struct net_lcore;

/** Port configuration; zero means "default" for every numeric field. */
struct net_port_conf {
	uint16_t port_id;	/**< ethdev, already probed (vdev or PCI) */
	uint16_t nb_queues;	/**< RX/TX queue pairs = polling lcores */
	uint16_t mtu;		/**< IP MTU; default 1500 */
	uint16_t nb_rxd;	/**< RX descriptors per queue; default 1024 */
	uint16_t nb_txd;	/**< TX descriptors per queue; default 1024 */
	uint32_t nb_mbufs;	/**< mbufs in the port's RX pool; default 8192*q */
	/** mbufs for what the stack sends (headers, copies, TCP send
	 *  queues), a pool apart so that received data still held (requests
	 *  not yet answered) can never leave the answers that would free it
	 *  without headers; default nb_mbufs */
	uint32_t nb_tx_mbufs;
	uint32_t ip_be;		/**< our IPv4 address */
	uint32_t netmask_be;	/**< on-link prefix */
	uint32_t gateway_be;	/**< default gateway; 0 = none (on-link only) */
	bool vlan;		/**< accept and strip tag vlan_id, tag on TX */
	uint16_t vlan_id;
	bool no_offloads;	/**< ignore device offloads (tests, debug) */
	/** net_tap only: keep the PMD's per-frame Rx signal (net_port.c;
	 *  for measuring it: tools/bench/net/diag_tap.sh).  The PMD's
	 *  trigger is process-wide: the same on every net_tap port. */
	bool tap_rx_signal;
	uint32_t arp_entries;	/**< ARP table slots; default 1024 */
	uint32_t arp_timeout_ms; /**< entry lifetime; default 300000 */
	uint32_t arp_retry_ms;	/**< request interval; default 1000 */
	uint8_t arp_retries;	/**< requests before giving up; default 3 */
};

/** Offloads the port actually uses (software fallback for the rest). */
#define NET_CAP_TX_IPV4_CKSUM	(1u << 0)
#define NET_CAP_TX_TCP_CKSUM	(1u << 1)
#define NET_CAP_TX_UDP_CKSUM	(1u << 2)
#define NET_CAP_TSO		(1u << 3)
#define NET_CAP_RX_IPV4_CKSUM	(1u << 4)
#define NET_CAP_RX_L4_CKSUM	(1u << 5)
#define NET_CAP_RSS		(1u << 6)
#define NET_CAP_VLAN_STRIP	(1u << 7)
#define NET_CAP_VLAN_INSERT	(1u << 8)
#define NET_CAP_MULTI_SEGS	(1u << 9)

/**
 * Configure and start an ethdev: queues, RSS with the symmetric key,
 * offloads, MTU, mbuf pool on the port's NUMA node.  Returns 0 or -errno.
 */
int net_port_init(const struct net_port_conf *conf, struct net_port **out);
/**
 * Before net_port_init(), once EAL has probed the port: the MTU within
 * the PMD's limits, nb_queues within its queues; for net_af_xdp also the
 * kernel interface behind it (net_port_check.c): its MTU, its RX queues
 * against the vdev's start_queue/queue_count (= nb_queues), the XDP mode
 * the socket gets, a program already attached. Facts and warnings go to
 * out (NULL: none). 0, or -EINVAL with why and *key, the config key at
 * fault ("device" or "mtu").
 */
int net_port_precheck(uint16_t port_id, uint16_t nb_queues, uint16_t mtu,
		FILE *out, const char **key, char *why, size_t whylen);
/** Stop and close the ethdev and free the port (lcores first). */
void net_port_close(struct net_port *p);

uint16_t net_port_id(const struct net_port *p);
uint32_t net_port_ipv4(const struct net_port *p);
uint16_t net_port_mtu(const struct net_port *p);
uint32_t net_port_caps(const struct net_port *p);
uint16_t net_port_nb_queues(const struct net_port *p);
/** The RX pool, and the pool of everything the stack sends. */
struct rte_mempool *net_port_pool(const struct net_port *p);
struct rte_mempool *net_port_tx_pool(const struct net_port *p);
/** Mbufs per TX packet the PMD accepts (0: no stated limit). */
uint16_t net_port_tx_max_segs(const struct net_port *p);
void net_port_mac(const struct net_port *p, uint8_t mac[6]);

/**
 * Per-lcore context for queue `queue` of port p, allocated on the NUMA
 * node of the calling lcore (or of socket_id if >= 0).  Registers the lcore
 * with the stats registry behind net_stats_total() and /ffn/net/stats.
 */
struct net_lcore *net_lcore_create(struct net_port *p, uint16_t queue,
		int socket_id);
void net_lcore_free(struct net_lcore *lc);
struct net_port *net_lcore_port(const struct net_lcore *lc);
uint16_t net_lcore_queue(const struct net_lcore *lc);

/**
 * One poll iteration: RX burst, classify and dispatch every frame, run
 * ARP retries/timeouts and the L4 poll hook, flush TX.  Returns the number
 * of frames received.  The first call on queue 0 sends a gratuitous ARP.
 */
unsigned int net_lcore_poll(struct net_lcore *lc, uint64_t now_ns);

/** Hand the buffered TX frames to the NIC now (a response is complete). */
void net_lcore_flush(struct net_lcore *lc);

/**
 * Move the lcore's clock to now_ns (never back) between polls. The stack's
 * API calls read the clock of the last net_lcore_poll(); an application
 * that then works for a while (a compute pass) calls this before it
 * sends, so the timers its sends arm (probe, RTO) and the RTT they time
 * start when the data leaves, not at the poll before the work.
 */
void net_lcore_clock(struct net_lcore *lc, uint64_t now_ns);

/** Monotonic nanoseconds from the TSC (production clock). */
uint64_t net_now_ns(void);

/** IPv4 header facts handed to the L4 input hook. */
struct net_ipv4_info {
	uint32_t src_be;
	uint32_t dst_be;
	uint16_t l4_len;	/**< bytes of L4 header + payload */
	uint8_t tos;
	uint8_t ttl;
	/** RTE_MBUF_F_RX_L4_CKSUM_{GOOD,BAD,UNKNOWN} as seen by the NIC;
	 *  UNKNOWN means the L4 layer must verify in software. */
	uint64_t l4_cksum_flag;
};

/**
 * L4 input hook (TCP).  m's data starts at the L4 header and its data_len
 * /pkt_len are trimmed to info->l4_len (Ethernet padding removed).  The hook
 * owns m.  now_ns is the poll's clock.
 */
typedef void (*net_l4_input_t)(void *ctx, struct net_lcore *lc,
		struct rte_mbuf *m, const struct net_ipv4_info *info,
		uint64_t now_ns);
/** Called once per poll iteration after RX (timers), before the flush. */
typedef void (*net_l4_poll_t)(void *ctx, struct net_lcore *lc,
		uint64_t now_ns);

/** Attach the handler for IP protocol `proto` (IPPROTO_TCP, IPPROTO_UDP). */
int net_lcore_set_l4(struct net_lcore *lc, uint8_t proto,
		net_l4_input_t input, net_l4_poll_t poll, void *ctx);

/**
 * Send an L4 datagram to dst_be.  m's data starts at the L4 header (TCP
 * header + payload, possibly a chain whose later segments are attached
 * external buffers).  net prepends IPv4 (+VLAN) + Ethernet (in m's headroom,
 * or in a new header mbuf chained in front), resolves the next hop through
 * ARP (queueing a bounded number of packets while it resolves) and fills
 * the IPv4 header checksum (offloaded when the port can).
 * L4 checksum: if the caller sets RTE_MBUF_F_TX_TCP_CKSUM (proto TCP) or
 * RTE_MBUF_F_TX_UDP_CKSUM (UDP) in m->ol_flags, net fills it: pseudo-header
 * sum + offload when net_port_caps() has NET_CAP_TX_{TCP,UDP}_CKSUM, the
 * full sum in software otherwise (flag then cleared).  Without the flag the
 * L4 checksum is taken as complete and left alone.
 * For TSO set RTE_MBUF_F_TX_TCP_SEG, m->l4_len and m->tso_segsz; only
 * allowed when net_port_caps() has NET_CAP_TSO (else -ENOTSUP, m not freed).
 * ARP ages and retries use the clock of the lcore's last net_lcore_poll().
 * The frame is queued in the lcore's TX buffer (flushed by net_lcore_flush()
 * or at the end of the poll).
 * Returns 0 (queued, or parked pending ARP), or -errno: -EHOSTUNREACH (off
 * link, no gateway) and -ENOBUFS (TX buffer full or no mbuf) consume m
 * (freed, counted); -ENOTSUP, -EINVAL and -EMSGSIZE (larger than the MTU
 * without TSO) leave m to the caller.
 */
int net_ipv4_output(struct net_lcore *lc, struct rte_mbuf *m,
		uint32_t dst_be, uint8_t proto);

/** Allocate an mbuf from the port's TX pool with room for all net headers. */
struct rte_mbuf *net_alloc(struct net_lcore *lc);

/** The MAC of on-link ip_be as this lcore's port knows it now (ARP
 *  table, not expired): 0, or -ENOENT (nothing is asked on the wire). */
int net_lcore_neigh(struct net_lcore *lc, uint32_t ip_be, uint8_t mac[6]);

/** Queue a whole Ethernet frame, built by the caller from its first byte
 *  (checksums included), for tools that craft frames the stack would not
 *  send (ffn-loadgen's SYN flood). 0, or -ENOBUFS when the TX queue is
 *  full (m freed, drop_tx_full counted). */
int net_lcore_send_frame(struct net_lcore *lc, struct rte_mbuf *m);

/* ---- RSS (symmetric Toeplitz) for active open ------------------------ */

/** The 40-byte RSS key programmed into every port (symmetric: 0x6d5a..). */
const uint8_t *net_rss_key(void);
#define NET_RSS_KEY_LEN 40

/** Toeplitz hash the NIC computes for this IPv4/TCP 4-tuple (any order of
 *  src/dst gives the same value: the key is symmetric). */
uint32_t net_rss_hash_v4(uint32_t src_be, uint32_t dst_be,
		uint16_t sport_be, uint16_t dport_be);

/** RX queue of port p a flow with this hash lands on. */
uint16_t net_rss_queue(const struct net_port *p, uint32_t hash);

/**
 * Choose a local port in [lo, hi] (host order) whose flow
 * (our address:port <-> dst_be:dport_be) lands on lc's queue, starting the
 * search at *cursor (advanced past the result).  Returns the port in host
 * order, or 0 if none in the range.
 */
uint16_t net_rss_pick_sport(const struct net_lcore *lc, uint32_t dst_be,
		uint16_t dport_be, uint16_t lo, uint16_t hi, uint32_t *cursor);

/* ---- Counters (per lcore; telemetry /ffn/net/stats sums them) -------- */

#define NET_STATS(X) \
	X(rx_pkts) X(rx_bytes) X(tx_pkts) X(tx_bytes) \
	X(drop_eth_short) X(drop_eth_not_ours) X(drop_eth_type) \
	X(drop_vlan) \
	X(arp_rx) X(arp_req_answered) X(arp_reply_rx) X(arp_req_tx) \
	X(arp_req_limited) \
	X(arp_garp_tx) X(drop_arp_bad) X(drop_arp_not_ours) \
	X(drop_arp_pending_full) X(drop_arp_timeout) X(drop_arp_table_full) \
	X(drop_ip_short) X(drop_ip_version) X(drop_ip_ihl) X(drop_ip_len) \
	X(drop_ip_cksum) X(drop_ip_ttl) X(drop_ip_frag) X(drop_ip_options) \
	X(drop_ip_not_ours) X(drop_ip_proto) X(drop_no_route) \
	X(icmp_echo_rx) X(icmp_echo_tx) X(drop_icmp_bad) X(drop_icmp_type) \
	X(l4_rx) X(drop_tx_full) X(drop_tx_stall) X(drop_no_mbuf)

#define NET_STAT_FIELD(n) uint64_t n;
struct net_stats {
	NET_STATS(NET_STAT_FIELD)
};
#undef NET_STAT_FIELD

/** Copy lc's counters (a snapshot; counters are only written by lc). */
void net_lcore_stats(const struct net_lcore *lc, struct net_stats *out);
/** Sum of all registered lcores' counters. */
void net_stats_total(struct net_stats *out);
/** Number of counters and the name of counter i (order of struct). */
unsigned int net_stats_count(void);
const char *net_stats_name(unsigned int i);
/** Register /ffn/net/stats with rte_telemetry (idempotent; the first
 *  net_lcore_create() does it). */
int net_telemetry_register(void);

#ifdef __cplusplus
}
#endif

#endif /* NET_H */
