/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_TCP_H
#define FFN_TCP_H

/**
 * @file
 * TCP (RFC 9293) for one lcore, independent of the IP layer.
 *
 * One struct tcp_stack per polling lcore: no locks, no shared state. The IP
 * layer hands received segments to tcp_input() and receives segments to send
 * through the output callback of struct tcp_stack_config. The application
 * (HTTP server, load generator) talks to connections through struct tcp_ops
 * callbacks and the tcp_send* / tcp_flush / tcp_shutdown / tcp_close calls.
 *
 * Time is passed in (microseconds, any monotonic origin) to tcp_input() and
 * tcp_poll(), so tests drive a virtual clock. Timers are per-connection
 * deadlines kept in a small timer wheel checked from tcp_poll(): rte_timer
 * reads the TSC itself, which a virtual clock cannot drive.
 *
 * Callbacks run from inside tcp_input(), tcp_poll() or an API call on the
 * same lcore. All calls on one stack must come from its lcore.
 *
 * Implemented: see each function. RFCs: 9293 (TCP), 6298 (RTO), 5681/6582
 * (NewReno), 3042 (limited transmit), 6675 (SACK recovery), 2018 (SACK),
 * 7323 (window scale, timestamps, PAWS), 5961 (RST/SYN/ACK validation),
 * 9438 (CUBIC), 6528 (ISN), 4987 (SYN cookies; options kept through the
 * timestamp), 2883 (D-SACK) with 3708/3522/4015 (undo of spurious
 * reductions; DupThresh raised by the reordering seen), 8985 §6.2 time
 * order for lost retransmissions and §7 tail loss probes (tcp_tlp.c).
 * Not implemented: keep-alives, urgent data, IPv6, the rest of RACK (RFC
 * 8985 per-segment transmit times).
 *
 * Typical server use: tcp_listen(); in accepted() keep the handle; in
 * data() parse, then tcp_send() small headers + tcp_send_iov() the payload
 * by reference, tcp_flush(); in eof() tcp_close().
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rte_mbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tcp_stack;
struct tcp_conn;

/** Space the output callback may prepend: Ethernet + VLAN + IPv4 header. */
#define TCP_OUT_HEADROOM (14 + 4 + 20)

/**
 * Segment out. m's data starts at the TCP header (options included,
 * m->l4_len set) followed by the payload, possibly chained mbufs (some
 * attached to application buffers: the port needs multi-segment TX). At least
 * TCP_OUT_HEADROOM bytes of headroom are free in the first mbuf.
 * The TCP checksum is complete, or, when tx_cksum_offload is set, holds the
 * pseudo-header sum and RTE_MBUF_F_TX_TCP_CKSUM is set in m->ol_flags (the
 * IP layer then sets l2_len, l3_len and RTE_MBUF_F_TX_IPV4). With TSO a
 * segment may exceed the MSS: RTE_MBUF_F_TX_TCP_SEG is set, tso_segsz is
 * the MSS and the pseudo-header sum leaves out the length (DPDK's
 * convention); the IP layer must then also ask for the IP checksum.
 * The callback owns m from then on (frees it on failure). Return 0 or -errno.
 * -ENOBUFS (the port's TX queue is full) and -ENOMEM mean "not now": the
 * segment is not counted as sent and its connection sends again at the
 * next tcp_poll(), ahead of the timers, without waiting for a
 * retransmission timeout (tcp_stats.tx_deferred counts them). Any other
 * error is a loss the timers repair.
 */
typedef int (*tcp_output_fn)(void *arg, struct rte_mbuf *m, uint32_t dst_ip_be);

/** Congestion control (RFC 9438 CUBIC by default; RFC 5681/6582 NewReno). */
enum tcp_cc_algo {
	TCP_CC_CUBIC = 0,
	TCP_CC_NEWRENO,
};

/** Stack configuration; zero fields take the defaults in brackets. */
struct tcp_stack_config {
	uint32_t local_ip;        /**< our IPv4 address, network byte order */
	uint16_t mtu;             /**< IP MTU; MSS = mtu - 40 [1500] */
	int socket_id;            /**< NUMA node for all stack memory */
	struct rte_mempool *pool; /**< pktmbuf pool for headers/copies (required) */
	tcp_output_fn output;     /**< segment sink (required) */
	void *output_arg;
	bool tx_cksum_offload;    /**< port computes the TCP checksum */
	/** TSO: largest payload handed to the port in one segment with
	 * RTE_MBUF_F_TX_TCP_SEG and tso_segsz = MSS (needs tx_cksum_offload;
	 * 0: segment in software to the MSS). */
	uint32_t tso_max;
	uint16_t tx_max_segs;     /**< mbufs per packet the port takes [32];
				   *  1: payload copied into the header mbuf */

	uint32_t max_conns;       /**< global connection limit, not TIME_WAIT [4096] */
	uint32_t max_time_wait;   /**< bounded TIME_WAIT table; oldest recycled [max_conns] */
	uint32_t syn_backlog;     /**< per listener default (SYN_RCVD); SYN cookies beyond [128] */
	uint32_t rcv_buf;         /**< per-connection receive memory (window + OOO) [256 KiB] */
	uint32_t snd_buf;         /**< per-connection unacked+queued bytes [4 MiB] */
	/** abort after this long without input [300 s]; 64 bits so that
	 * hours fit (32-bit µs would end at ~71 min). A connection the app
	 * closed with data not yet acknowledged: after this long without
	 * a newly acknowledged byte (counted from the close at the
	 * earliest), input or not, so a peer that ACKs zero-window probes
	 * but never reads cannot hold it forever. */
	uint64_t idle_timeout_us;
	uint32_t time_wait_us;    /**< 2*MSL [60 s] */
	uint32_t delack_us;       /**< delayed ACK timeout [40 ms] */
	uint32_t rto_init_us;     /**< RFC 6298 2.1 [1 s] */
	uint32_t rto_min_us;      /**< RFC 6298 2.4 allows less than 1 s [200 ms] */
	uint32_t rto_max_us;      /**< [60 s] */
	uint8_t max_retries;      /**< RTO expiries before ETIMEDOUT [12; SYN: 6] */
	enum tcp_cc_algo cc;
	bool no_sack;             /**< do not offer SACK (RFC 2018) */
	bool no_timestamps;       /**< do not offer timestamps (RFC 7323) */
	bool no_wscale;           /**< do not offer window scaling */
	bool no_tlp;              /**< no tail loss probes (RFC 8985 §7) */
	uint32_t challenge_ack_limit; /**< per second, RFC 5961 §7 [1000] */

	/* Active open picks source ports whose symmetric Toeplitz hash lands on
	 * rss_queue, assuming the default redirection table (entry i -> queue
	 * i % rss_nb_queues). rss_key NULL or rss_nb_queues <= 1: any port. */
	const uint8_t *rss_key;   /**< 40 bytes, as programmed into the port */
	uint16_t rss_nb_queues;
	uint16_t rss_queue;
	uint16_t rss_reta_size;   /**< [128] */

	/** Optional clock (µs) read by the API calls that send or arm
	 * timers (tcp_connect, tcp_flush, tcp_shutdown, tcp_close);
	 * without it they use the time of the last tcp_input()/tcp_poll(),
	 * which is 0 before the first one: call tcp_poll() once before
	 * tcp_connect(), or the first poll finds the new connection idle
	 * since time 0 and resets it (net_tcp_attach() gives a clock). */
	uint64_t (*clock_us)(void *arg);
	void *clock_arg;
};

/** Why a connection ended (closed callback). */
enum tcp_close_reason {
	TCP_CLOSE_NORMAL = 0,     /**< both FINs exchanged and acknowledged */
	TCP_CLOSE_RESET,          /**< RST received */
	TCP_CLOSE_REFUSED,        /**< RST in answer to our SYN */
	TCP_CLOSE_TIMEOUT,        /**< retransmissions exhausted */
	TCP_CLOSE_IDLE,           /**< idle timeout (we sent RST) */
	TCP_CLOSE_STACK,          /**< stack destroyed */
};

/**
 * Application callbacks. Any may be NULL. "arg" is the per-connection
 * argument (for accepted: the listener's). After closed() returns, or after
 * the app called tcp_close()/tcp_abort(), no callback mentions the
 * connection again and its handle is invalid.
 */
struct tcp_ops {
	/** Passive open completed (ESTABLISHED). Set *conn_arg for the other
	 * callbacks; return <0 to refuse (the stack sends RST). */
	int (*accepted)(void *listen_arg, struct tcp_conn *c, void **conn_arg);
	/** Active open completed (ESTABLISHED). */
	void (*connected)(void *arg, struct tcp_conn *c);
	/** In-order data: m is an mbuf chain positioned at the payload,
	 * pkt_len bytes. The app owns m (keep it or free it). */
	void (*data)(void *arg, struct tcp_conn *c, struct rte_mbuf *m);
	/** Peer sent FIN: no more data will arrive (we may still send). */
	void (*eof)(void *arg, struct tcp_conn *c);
	/** Bytes newly acknowledged; send space is available again. */
	void (*sent)(void *arg, struct tcp_conn *c, uint32_t acked);
	/** Connection is gone (reason: enum tcp_close_reason). */
	void (*closed)(void *arg, struct tcp_conn *c, int reason);
};

/** Release callback of tcp_send_iov(): every byte was acknowledged (and
 * every mbuf referencing the buffers freed). */
typedef void (*tcp_release_fn)(void *arg);

/** Counters of one stack (tcp_stack_stats). */
enum tcp_drop_reason {
	TCP_DROP_SHORT = 0,       /**< shorter than its header */
	TCP_DROP_CKSUM,
	TCP_DROP_NO_CONN,         /**< no connection or listener (RST sent) */
	TCP_DROP_OUT_OF_WINDOW,   /**< unacceptable sequence number */
	TCP_DROP_BAD_ACK,         /**< ACK outside RFC 5961 §5 bounds */
	TCP_DROP_PAWS,            /**< RFC 7323 §5 */
	TCP_DROP_RST_INVALID,     /**< RST not exactly at rcv_nxt */
	TCP_DROP_CONN_LIMIT,      /**< global connection limit */
	TCP_DROP_BACKLOG,         /**< SYN backlog full: no state kept, a
	                           *   SYN cookie answered (RFC 4987) */
	TCP_DROP_COOKIE,          /**< ACK with a bad SYN cookie to a
	                           *   listener that sent cookies lately
	                           *   (else NO_CONN) */
	TCP_DROP_OOO_MEM,         /**< out-of-order queue full */
	TCP_DROP_RCV_MEM,         /**< beyond the receive window/memory */
	TCP_DROP_NOMEM,           /**< mbuf/state allocation failed */
	TCP_DROP_MAX,
};

enum tcp_state {
	TCP_CLOSED = 0,
	TCP_LISTEN,
	TCP_SYN_SENT,
	TCP_SYN_RECEIVED,
	TCP_ESTABLISHED,
	TCP_FIN_WAIT_1,
	TCP_FIN_WAIT_2,
	TCP_CLOSE_WAIT,
	TCP_CLOSING,
	TCP_LAST_ACK,
	TCP_TIME_WAIT,
	TCP_STATE_MAX,
};

struct tcp_stats {
	uint64_t seg_in;
	uint64_t seg_conn;        /**< of seg_in, those of an existing connection */
	uint64_t seg_out;
	uint64_t bytes_in;        /**< payload delivered in order */
	uint64_t bytes_out;       /**< payload sent, retransmissions included */
	uint64_t retransmits;     /**< segments retransmitted (all causes) */
	uint64_t rto_expired;
	uint64_t fast_retransmits;/**< recovery episodes entered */
	uint64_t undos;           /**< reductions taken back as spurious (D-SACK/Eifel) */
	uint64_t lost_rexmits;    /**< retransmissions found lost again (RACK) */
	uint64_t tlp_probes;      /**< tail loss probes sent (RFC 8985 §7.3) */
	uint64_t tlp_recoveries;  /**< probes that repaired a loss (§7.4) */
	uint64_t active_opens;
	uint64_t passive_opens;
	uint64_t resets_in;
	uint64_t resets_out;
	uint64_t challenge_acks;
	uint64_t syncookies_sent;
	uint64_t syncookies_ok;
	uint64_t tx_deferred;     /**< segments the output callback refused for
	                           *   now (-ENOBUFS, -ENOMEM), sent again at
	                           *   the next tcp_poll */
	uint64_t drops[TCP_DROP_MAX];
	uint64_t conns[TCP_STATE_MAX]; /**< current connections by state */
};

/** Segments of existing connections so far (tcp_stats.seg_conn), without
 *  the copy of tcp_stack_stats: cheap enough to read after every RX
 *  burst. It does not move for segments to a listener or to no
 *  connection (SYNs, floods, stray ACKs). */
uint64_t tcp_stack_seg_conn(const struct tcp_stack *s);

/** Create a stack (NULL and rte_errno set on failure). */
struct tcp_stack *tcp_stack_create(const struct tcp_stack_config *cfg);
/** Destroy: connections are dropped silently (closed reason STACK). */
void tcp_stack_destroy(struct tcp_stack *s);

/**
 * A received segment. m starts at the TCP header and pkt_len is the TCP
 * segment length (the IP layer trimmed padding). Addresses are network order.
 * The checksum is verified unless m->ol_flags says RTE_MBUF_F_RX_L4_CKSUM_GOOD.
 * Consumes m. Returns 0, or -errno when it was dropped (counted).
 */
int tcp_input(struct tcp_stack *s, struct rte_mbuf *m,
	      uint32_t src_ip_be, uint32_t dst_ip_be, uint64_t now_us);

/** Send again what the output callback refused for now (tx_deferred), then
 * run expired timers (retransmission, delayed ACK, persist, TIME_WAIT,
 * idle). Cheap when nothing is due; call once per poll loop iteration. */
void tcp_poll(struct tcp_stack *s, uint64_t now_us);

/** Copy out the counters. */
void tcp_stack_stats(const struct tcp_stack *s, struct tcp_stats *out);
/** Name of a drop reason / state, for telemetry. */
const char *tcp_drop_reason_name(enum tcp_drop_reason r);
const char *tcp_state_name(enum tcp_state st);

/** Listen on port (host order) with the given SYN backlog (0: config).
 * Returns 0, -EADDRINUSE, -ENOSPC. */
int tcp_listen(struct tcp_stack *s, uint16_t port, uint32_t backlog,
	       const struct tcp_ops *ops, void *arg);
/** Stop listening (established connections stay). */
int tcp_unlisten(struct tcp_stack *s, uint16_t port);

/**
 * Active open to dst_ip_be:port (host order) from a source port whose RSS
 * hash lands on rss_queue. Returns 0 and *out (the handle, valid until
 * closed) or -errno (-EMFILE at the limit, -EADDRNOTAVAIL no port free).
 */
int tcp_connect(struct tcp_stack *s, uint32_t dst_ip_be, uint16_t port,
		const struct tcp_ops *ops, void *arg, struct tcp_conn **out);

/** Queue a copy of data (small headers). Returns bytes queued (possibly
 * fewer than len, 0 at the send memory limit), or -errno (-EPIPE after
 * shutdown). Nothing is sent until tcp_flush(), or until the stack next
 * processes a segment of this connection (data queued from inside the
 * data callback leaves with the ACK when the callback returns). */
int tcp_send(struct tcp_conn *c, const void *data, uint32_t len);

/**
 * Queue payload by reference (zero-copy). The buffers stay untouched until
 * release(arg) is called, once every byte is acknowledged and no mbuf
 * references them (or the connection is gone). All or nothing: returns 0 or
 * -ENOBUFS (send memory limit; nothing queued, release not called), -EPIPE,
 * -ENOMEM. Buffers should be DPDK memory (rte_malloc/mempool) when a real
 * NIC DMAs from them; their IOVA is looked up with rte_mem_virt2iova().
 */
int tcp_send_iov(struct tcp_conn *c, const struct iovec *iov, int cnt,
		 tcp_release_fn release, void *arg);

/** Queue an mbuf chain by reference (e.g. received data echoed back):
 * on success the stack owns m and frees it once acknowledged. All or
 * nothing: 0, or -ENOBUFS / -EPIPE with m still the caller's. Its
 * segments should be DPDK memory the port can DMA from. */
int tcp_send_mbuf(struct tcp_conn *c, struct rte_mbuf *m);

/** Emit pending segments now (call when a response is complete); also
 * sends a pending delayed ACK. */
void tcp_flush(struct tcp_conn *c);

/**
 * tcp_flush() at the stack's next tcp_poll(), which net_lcore_poll() runs
 * once the receive burst has been taken, not now: for an app that
 * acknowledges a message still arriving (its sender may hold back a
 * sub-MSS tail until then, RFC 896), so that the segments of one burst
 * get one ACK, not one each. Delaying an ACK is the receiver's right
 * (RFC 9293 §3.8.6.3); the stack still ACKs every second full-sized
 * segment at once (RFC 5681 §4.2). Asking twice before the poll is
 * asking once.
 */
void tcp_flush_after_rx(struct tcp_conn *c);

/** Forget a tcp_flush_after_rx() of c not yet done, e.g. when the
 * message it was for is now whole and its answer will carry the ACK
 * (the delayed-ACK timer still runs). */
void tcp_flush_after_rx_cancel(struct tcp_conn *c);

/** Bytes the app may still queue before the send memory limit. */
uint32_t tcp_send_space(const struct tcp_conn *c);

/** Send FIN after all queued data (half-close; receiving continues). */
int tcp_shutdown(struct tcp_conn *c);
/** Done with the connection: FIN after queued data, then the stack finishes
 * the close alone; later data from the peer is answered with RST. */
void tcp_close(struct tcp_conn *c);
/** Send RST and free the connection now. */
void tcp_abort(struct tcp_conn *c);

/**
 * Manual receive flow control: by default data is considered consumed when
 * the data callback returns. With manual on, the receive window only
 * reopens as the app calls tcp_recved(c, bytes) for data it has finished
 * with (bounding what a slow app can be made to hold).
 */
void tcp_set_manual_recv(struct tcp_conn *c, bool on);
void tcp_recved(struct tcp_conn *c, uint32_t len);

/** Per-connection app argument (set by accepted/connect). */
void tcp_set_arg(struct tcp_conn *c, void *arg);
enum tcp_state tcp_conn_state(const struct tcp_conn *c);
/** Addresses (network order) and ports (host order) of a connection. */
void tcp_conn_addr(const struct tcp_conn *c, uint32_t *local_ip,
		   uint16_t *local_port, uint32_t *remote_ip,
		   uint16_t *remote_port);
/** Effective send MSS (after the peer's MSS option and our MTU). */
uint16_t tcp_conn_mss(const struct tcp_conn *c);

/** Sender state of a connection, for stats and tests. */
struct tcp_conn_info {
	uint32_t cwnd;		/**< bytes */
	uint32_t ssthresh;
	uint32_t snd_wnd;	/**< peer's window, bytes (scaled) */
	uint32_t rcv_wnd;	/**< window we advertise, bytes */
	uint32_t srtt_us;
	uint32_t rto_us;
	uint32_t unacked;	/**< bytes sent, not acknowledged */
	uint32_t queued;	/**< bytes in the send queue (unacked + unsent) */
	/** The peer's cumulative ACK (RFC 9293 SND.UNA): it moves when, and
	 * only when, new bytes are acknowledged (not on duplicate ACKs or
	 * ACKs of zero-window probes the peer did not take). Compare for
	 * progress, modulo 2^32; a sampling interval never spans 4 GiB. */
	uint32_t snd_una;
	uint8_t snd_wscale, rcv_wscale;
	bool sack, timestamps, in_recovery;
};
void tcp_conn_info(const struct tcp_conn *c, struct tcp_conn_info *out);
/** The two fields of tcp_conn_info an application's periodic sweep of
 * every connection needs, without the rest: returns queued (bytes not
 * yet acknowledged, unsent included) and sets *snd_una. */
uint32_t tcp_conn_send_state(const struct tcp_conn *c, uint32_t *snd_una);

#ifdef __cplusplus
}
#endif

#endif /* FFN_TCP_H */
