/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Wires a tcp_stack to a net_lcore (net_tcp.h). */

#include <errno.h>
#include <string.h>

#include <stdio.h>

#include <rte_errno.h>
#include <rte_telemetry.h>

#include "net_priv.h"
#include "net_tcp.h"

static bool tel_done;

/* TCP's time unit is the microsecond (tcp.h). */
#define NS_PER_US 1000

static int
net_tcp_output(void *arg, struct rte_mbuf *m, uint32_t dst_ip_be)
{
	int rc = net_ipv4_output(arg, m, dst_ip_be, IPPROTO_TCP);

	/* tcp.h: the callback owns m, whatever the outcome; an error makes
	 * TCP retry the segment later instead of counting it as sent. */
	if (rc == -ENOTSUP || rc == -EINVAL || rc == -EMSGSIZE)
		rte_pktmbuf_free(m);
	return rc;
}

static void
net_tcp_input(void *ctx, struct net_lcore *lc, struct rte_mbuf *m,
		const struct net_ipv4_info *info, uint64_t now_ns)
{
	(void)lc;
	tcp_input(ctx, m, info->src_be, info->dst_be, now_ns / NS_PER_US);
}

static void
net_tcp_poll(void *ctx, struct net_lcore *lc, uint64_t now_ns)
{
	(void)lc;
	tcp_poll(ctx, now_ns / NS_PER_US);
}

void
net_tcp_stats_total(struct tcp_stats *out)
{
	struct tcp_stats one;
	unsigned int i, k;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < NET_REG_MAX; i++) {
		struct net_lcore *lc = net_lcore_registered(i);
		const uint64_t *a;
		uint64_t *o;

		if (lc == NULL || lc->tcp.input != net_tcp_input ||
				lc->tcp.ctx == NULL)
			continue;
		tcp_stack_stats(lc->tcp.ctx, &one);
		a = (const uint64_t *)&one;
		o = (uint64_t *)out;
		for (k = 0; k < sizeof(one) / sizeof(uint64_t); k++)
			o[k] += a[k];
	}
}

/* /ffn/net/tcp: the per-lcore TCP counters (retransmits, drops by
 * reason, connections by state), summed over lcores.  Read racily from
 * the telemetry thread: counters are single-writer 64-bit words. */
static int
net_tcp_tel(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tcp_stats s;
	char name[64];
	unsigned int i;

	(void)cmd;
	(void)params;
	net_tcp_stats_total(&s);
	rte_tel_data_start_dict(d);
#define TEL(f) rte_tel_data_add_dict_u64(d, #f, s.f)
	TEL(seg_in); TEL(seg_out); TEL(bytes_in); TEL(bytes_out);
	TEL(retransmits); TEL(rto_expired); TEL(fast_retransmits); TEL(undos);
	TEL(lost_rexmits); TEL(tlp_probes); TEL(tlp_recoveries);
	TEL(active_opens); TEL(passive_opens); TEL(resets_in);
	TEL(resets_out); TEL(challenge_acks); TEL(syncookies_sent);
	TEL(syncookies_ok); TEL(tx_deferred);
#undef TEL
	for (i = 0; i < TCP_DROP_MAX; i++) {
		snprintf(name, sizeof(name), "drop_%s",
			tcp_drop_reason_name(i));
		rte_tel_data_add_dict_u64(d, name, s.drops[i]);
	}
	for (i = 0; i < TCP_STATE_MAX; i++) {
		snprintf(name, sizeof(name), "conns_%s", tcp_state_name(i));
		rte_tel_data_add_dict_u64(d, name, s.conns[i]);
	}
	return 0;
}

/* API calls (tcp_connect, tcp_send) read the poll loop's clock, so a
 * virtual clock in tests stays consistent; before the first poll there is
 * none yet, and the production clock stands in (not time 0, which the
 * first poll would take for an idle connection and reset). */
static uint64_t
net_tcp_clock_us(void *arg)
{
	const struct net_lcore *lc = arg;

	return (lc->now_ns ? lc->now_ns : net_now_ns()) / NS_PER_US;
}

struct tcp_stack *
net_tcp_attach(struct net_lcore *lc, const struct tcp_stack_config *cfg)
{
	struct net_port *p = lc->port;
	struct tcp_stack_config c;
	struct tcp_stack *s;

	if (cfg != NULL)
		c = *cfg;
	else
		memset(&c, 0, sizeof(c));
	c.local_ip = p->ip_be;
	c.mtu = p->mtu;
	c.socket_id = (int)rte_socket_id() < 0 ? p->socket :
		(int)rte_socket_id();
	c.pool = lc->pool;
	c.output = net_tcp_output;
	c.output_arg = lc;
	if (c.clock_us == NULL) {
		c.clock_us = net_tcp_clock_us;
		c.clock_arg = lc;
	}
	c.tx_cksum_offload = (p->caps & NET_CAP_TX_TCP_CKSUM) != 0;
	/* TSO: up to 62 KiB of payload per segment keeps IPv4 total length
	 * (RFC 791: 16 bits) clear of headers with any TCP options. */
	c.tso_max = (p->caps & NET_CAP_TSO) ? 62 * 1024 : 0;
	if (p->tx_max_segs != 0)
		c.tx_max_segs = p->tx_max_segs;
	/* Active open picks source ports landing on this queue: TCP assumes
	 * entry i -> queue i % nb_queues, which is how net_port programs
	 * the RETA (net_port.c, setup_reta). */
	c.rss_key = net_rss_key();
	c.rss_nb_queues = (p->caps & NET_CAP_RSS) ? p->nb_queues : 1;
	c.rss_queue = lc->queue;
	c.rss_reta_size = p->reta_size ? p->reta_size : 128;
	s = tcp_stack_create(&c);
	if (s == NULL)
		return NULL;
	if (!__atomic_exchange_n(&tel_done, true, __ATOMIC_ACQ_REL) &&
			rte_telemetry_register_cmd("/ffn/net/tcp", net_tcp_tel,
			"Sum of per-lcore TCP counters. No parameters") != 0)
		__atomic_store_n(&tel_done, false, __ATOMIC_RELEASE);
	if (net_lcore_set_l4(lc, IPPROTO_TCP, net_tcp_input, net_tcp_poll,
			s) != 0) {
		tcp_stack_destroy(s);
		rte_errno = EINVAL;
		return NULL;
	}
	return s;
}

void
net_tcp_detach(struct net_lcore *lc, struct tcp_stack *s)
{
	net_lcore_set_l4(lc, IPPROTO_TCP, NULL, NULL, NULL);
	tcp_stack_destroy(s);
}
