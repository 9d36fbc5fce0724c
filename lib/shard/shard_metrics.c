/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * /metrics text of the network lcores' TCP counters and the net counters
 * (shard_server_metrics_write, shard_server.h).
 *
 * Prometheus text exposition format 0.0.4: all samples of one metric
 * family form one group, after its "# HELP" and "# TYPE" lines; a family
 * must not appear in two groups, and a label set only once. So each family
 * is written once with the samples of every lcore, not lcore by lcore.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "shard_server.h"

struct wbuf {
	char *p;
	size_t cap, len;
	bool full;
};

/* Whole lines only: a line that does not fit ends the text there. */
static void __attribute__((format(printf, 2, 3)))
w_line(struct wbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->cap - b->len) {
		b->full = true;
		if (b->len < b->cap)
			b->p[b->len] = '\0';
		return;
	}
	b->len += (size_t)n;
}

static void
w_family(struct wbuf *b, const char *name, const char *type,
	 const char *help)
{
	w_line(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One counter of struct tcp_stats per lcore, as family name. */
static void
w_tcp_counter(struct wbuf *b, const struct shard_netlc_stats *st,
	      unsigned int n, size_t off, const char *name, const char *help)
{
	w_family(b, name, "counter", help);
	for (unsigned int i = 0; i < n; i++) {
		const uint64_t *v = (const uint64_t *)
			((const char *)&st[i].tcp + off);

		w_line(b, "%s{lcore=\"%u\"} %llu\n", name, st[i].lcore_id,
		       (unsigned long long)*v);
	}
}

/* Two counters of struct tcp_stats per lcore, as dir="in" and "out". */
static void
w_tcp_dir(struct wbuf *b, const struct shard_netlc_stats *st,
	  unsigned int n, size_t off_in, size_t off_out, const char *name,
	  const char *help)
{
	w_family(b, name, "counter", help);
	for (unsigned int i = 0; i < n; i++) {
		const char *t = (const char *)&st[i].tcp;

		w_line(b, "%s{lcore=\"%u\",dir=\"in\"} %llu\n"
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
	struct wbuf b = { .p = buf, .cap = cap };
	const uint64_t *v = (const uint64_t *)ns;

	if (cap == 0)
		return 0;
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
	w_family(&b, "ffn_tcp_drops_total", "counter",
		 "TCP segments dropped, by network lcore and reason.");
	for (unsigned int i = 0; i < n; i++)
		for (int d = 0; d < TCP_DROP_MAX; d++)
			if (st[i].tcp.drops[d])
				w_line(&b, "ffn_tcp_drops_total{lcore=\"%u\","
				       "reason=\"%s\"} %llu\n", st[i].lcore_id,
				       tcp_drop_reason_name(d),
				       (unsigned long long)st[i].tcp.drops[d]);
	w_family(&b, "ffn_tcp_connections", "gauge",
		 "TCP connections now, by network lcore and state.");
	for (unsigned int i = 0; i < n; i++)
		for (int s = 0; s < TCP_STATE_MAX; s++)
			if (st[i].tcp.conns[s])
				w_line(&b, "ffn_tcp_connections{lcore=\"%u\","
				       "state=\"%s\"} %llu\n", st[i].lcore_id,
				       tcp_state_name(s),
				       (unsigned long long)st[i].tcp.conns[s]);
	if (ns != NULL) {
		w_family(&b, "ffn_net_total", "counter",
			 "Network stack counters of all lcores, by name.");
		for (unsigned int i = 0; i < net_stats_count(); i++)
			if (v[i])
				w_line(&b, "ffn_net_total{counter=\"%s\"} %llu\n",
				       net_stats_name(i),
				       (unsigned long long)v[i]);
	}
	return b.len;
}
