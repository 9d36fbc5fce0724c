/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Wires a tcp_stack to a net_lcore (net_tcp.h). */

#include <errno.h>
#include <string.h>

#include <rte_errno.h>

#include "net_priv.h"
#include "net_tcp.h"

/* TCP's time unit is the microsecond (tcp.h). */
#define NS_PER_US 1000

static int
net_tcp_output(void *arg, struct rte_mbuf *m, uint32_t dst_ip_be)
{
	int rc = net_ipv4_output(arg, m, dst_ip_be, IPPROTO_TCP);

	/* tcp.h: the callback owns m, whatever the outcome. */
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
