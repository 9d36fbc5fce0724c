/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The grid state in /metrics (issue 20): read on a network lcore while
 * the control thread writes it. Counters are aligned u64 atomics; the
 * server_id string is read under a sequence count, retried while the
 * thread rewrites it (an Ack), so no lock touches the lcore.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "grid_priv.h"

static void
read_server_id(const struct stream *s, char *out, size_t cap)
{
	uint32_t a, b;

	do {
		a = __atomic_load_n(&s->id_seq, __ATOMIC_ACQUIRE);
		snprintf(out, cap, "%s", s->server_id);
		b = __atomic_load_n(&s->id_seq, __ATOMIC_ACQUIRE);
	} while ((a & 1) || a != b);
}

/* Label values escape '\\' and '"' (Prometheus text format 0.0.4). */
static void
label_escape(char *out, size_t cap, const char *in)
{
	size_t k = 0;

	for (; *in != '\0' && k + 2 < cap; in++) {
		if (*in == '\\' || *in == '"')
			out[k++] = '\\';
		out[k++] = *in;
	}
	out[k] = '\0';
}

size_t
grid_metrics(struct grid *g, const char *name, char *buf, size_t cap)
{
	static const struct {
		const char *family, *type, *help;
	} fam[] = {
		{ "ffn_grid_connected", "gauge",
		  "1 while the router has acknowledged the unit's stream." },
		{ "ffn_grid_server_info", "gauge",
		  "The router's name for the unit (its last Ack)." },
		{ "ffn_grid_last_ack_timestamp_seconds", "gauge",
		  "Unix time of the router's last Ack (0: none yet)." },
		{ "ffn_grid_reconnects_total", "counter",
		  "Join streams opened after the first." },
		{ "ffn_grid_heartbeats_sent_total", "counter",
		  "Heartbeats sent to the router." },
	};
	size_t len = 0;

	if (cap == 0)
		return 0;
	buf[0] = '\0';
	if (g == NULL)
		return 0;
	for (unsigned int f = 0; f < RTE_DIM(fam); f++) {
		char line[1024];
		int n;

		n = snprintf(line, sizeof(line), "# HELP %s %s\n# TYPE %s %s\n",
			     fam[f].family, fam[f].help, fam[f].family,
			     fam[f].type);
		if (len + (size_t)n >= cap)
			return len;
		memcpy(buf + len, line, (size_t)n + 1);
		len += (size_t)n;
		for (unsigned int i = 0; i < g->n_units; i++) {
			const struct gunit *gu = &g->units[i];

			if (name != NULL && strcmp(name, gu->name) != 0)
				continue;
			for (unsigned int k = 0; k < gu->n_streams; k++) {
				const struct stream *s = &gu->streams[k];
				char url[GRID_URL_MAX * 2], id[GRID_URL_MAX],
				     idq[GRID_URL_MAX * 2];
				const char *lbl = "";
				uint64_t v = 0;

				label_escape(url, sizeof(url), s->url.text);
				switch (f) {
				case 0:
					v = __atomic_load_n(&s->connected,
						__ATOMIC_RELAXED);
					break;
				case 1:
					read_server_id(s, id, sizeof(id));
					if (id[0] == '\0')
						continue;
					label_escape(idq, sizeof(idq), id);
					lbl = idq;
					v = 1;
					break;
				case 2:
					v = __atomic_load_n(&s->last_ack_s,
						__ATOMIC_RELAXED);
					break;
				case 3:
					v = __atomic_load_n(&s->reconnects,
						__ATOMIC_RELAXED);
					break;
				case 4:
					v = __atomic_load_n(&s->heartbeats,
						__ATOMIC_RELAXED);
					break;
				}
				if (f == 1)
					n = snprintf(line, sizeof(line),
						"%s{shard=\"%s\",router=\"%s\","
						"server_id=\"%s\"} 1\n",
						fam[f].family, gu->name, url,
						lbl);
				else
					n = snprintf(line, sizeof(line),
						"%s{shard=\"%s\",router=\"%s\"}"
						" %" PRIu64 "\n",
						fam[f].family, gu->name, url,
						v);
				if (n < 0 || (size_t)n >= sizeof(line) ||
				    len + (size_t)n >= cap)
					return len;
				memcpy(buf + len, line, (size_t)n + 1);
				len += (size_t)n;
			}
		}
	}
	return len;
}
