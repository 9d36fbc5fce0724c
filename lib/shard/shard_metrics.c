/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * /metrics text of the network lcores' TCP counters and the net counters
 * (shard_server_metrics_write, shard_server.h).
 *
 * Through the one writer (shard_prom.h): each family is written once with
 * the samples of every lcore, not lcore by lcore.
 */
#include <stddef.h>
#include <stdio.h>

#include "shard_prom.h"
#include "shard_server.h"

/* One counter of struct tcp_stats per lcore, as family name. */
static void
w_tcp_counter(struct shard_prom *b, const struct shard_netlc_stats *st,
	      unsigned int n, size_t off, const char *name, const char *help)
{
	shard_prom_family(b, name, "counter", help);
	for (unsigned int i = 0; i < n; i++) {
		const uint64_t *v = (const uint64_t *)
			((const char *)&st[i].tcp + off);

		shard_prom_line(b, "%s{lcore=\"%u\"} %llu\n", name, st[i].lcore_id,
		       (unsigned long long)*v);
	}
}

/* Two counters of struct tcp_stats per lcore, as dir="in" and "out". */
static void
w_tcp_dir(struct shard_prom *b, const struct shard_netlc_stats *st,
	  unsigned int n, size_t off_in, size_t off_out, const char *name,
	  const char *help)
{
	shard_prom_family(b, name, "counter", help);
	for (unsigned int i = 0; i < n; i++) {
		const char *t = (const char *)&st[i].tcp;

		shard_prom_line(b, "%s{lcore=\"%u\",dir=\"in\"} %llu\n"
		       "%s{lcore=\"%u\",dir=\"out\"} %llu\n",
		       name, st[i].lcore_id,
		       (unsigned long long)*(const uint64_t *)(t + off_in),
		       name, st[i].lcore_id,
		       (unsigned long long)*(const uint64_t *)(t + off_out));
	}
}

#define TCP_OFF(f) offsetof(struct tcp_stats, f)

size_t
shard_server_metrics_write(char *buf, size_t cap,
			   const struct shard_netlc_stats *st, unsigned int n,
			   const struct net_stats *ns)
{
	struct shard_prom b;
	const uint64_t *v = (const uint64_t *)ns;

	shard_prom_fixed(&b, buf, cap);
	w_tcp_dir(&b, st, n, TCP_OFF(seg_in), TCP_OFF(seg_out),
		  "ffn_tcp_segments_total",
		  "TCP segments by network lcore and direction.");
	w_tcp_counter(&b, st, n, TCP_OFF(retransmits),
		      "ffn_tcp_retransmits_total",
		      "TCP segments retransmitted, all causes.");
	w_tcp_counter(&b, st, n, TCP_OFF(lost_rexmits),
		      "ffn_tcp_lost_rexmits_total",
		      "Retransmissions found lost again (RFC 8985 §6.2).");
	w_tcp_counter(&b, st, n, TCP_OFF(tlp_probes),
		      "ffn_tcp_tlp_probes_total",
		      "Tail loss probes sent (RFC 8985 §7).");
	w_tcp_counter(&b, st, n, TCP_OFF(tlp_recoveries),
		      "ffn_tcp_tlp_recoveries_total",
		      "Tail loss probes that repaired a loss (RFC 8985 §7.4).");
	w_tcp_dir(&b, st, n, TCP_OFF(resets_in), TCP_OFF(resets_out),
		  "ffn_tcp_resets_total",
		  "TCP resets by network lcore and direction.");
	w_tcp_counter(&b, st, n, TCP_OFF(syncookies_sent),
		      "ffn_tcp_syncookies_total",
		      "SYN cookies sent (RFC 4987).");
	w_tcp_counter(&b, st, n, TCP_OFF(tx_deferred),
		      "ffn_tcp_tx_deferred_total",
		      "Segments the port could not take at once, sent again "
		      "at the next poll.");
	shard_prom_family(&b, "ffn_tcp_drops_total", "counter",
		 "TCP segments dropped, by network lcore and reason.");
	for (unsigned int i = 0; i < n; i++)
		for (int d = 0; d < TCP_DROP_MAX; d++)
			if (st[i].tcp.drops[d])
				shard_prom_line(&b, "ffn_tcp_drops_total{lcore=\"%u\","
				       "reason=\"%s\"} %llu\n", st[i].lcore_id,
				       tcp_drop_reason_name(d),
				       (unsigned long long)st[i].tcp.drops[d]);
	shard_prom_family(&b, "ffn_tcp_connections", "gauge",
		 "TCP connections now, by network lcore and state.");
	for (unsigned int i = 0; i < n; i++)
		for (int s = 0; s < TCP_STATE_MAX; s++)
			if (st[i].tcp.conns[s])
				shard_prom_line(&b, "ffn_tcp_connections{lcore=\"%u\","
				       "state=\"%s\"} %llu\n", st[i].lcore_id,
				       tcp_state_name(s),
				       (unsigned long long)st[i].tcp.conns[s]);
	if (ns != NULL) {
		shard_prom_family(&b, "ffn_net_total", "counter",
			 "Network stack counters of all lcores, by name.");
		for (unsigned int i = 0; i < net_stats_count(); i++)
			if (v[i])
				shard_prom_line(&b, "ffn_net_total{counter=\"%s\"} %llu\n",
				       net_stats_name(i),
				       (unsigned long long)v[i]);
	}
	return b.len;
}
