/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * net_testd TCP services on the lcore's tcp_stack:
 *  - echo: every byte back, in order, zero-copy: the received mbufs are
 *    queued for sending by reference (tcp_send_mbuf).  Receive flow
 *    control is manual, so data not yet echoed (send memory full) holds
 *    the peer's window closed instead of piling up here.
 *  - source: the client sends "N\n"; we send N bytes of testd_pattern()
 *    and close.  Clients verify every byte.
 *  - check: the client sends bytes of testd_pattern() and shuts down; we
 *    verify every byte as it arrives and answer "ok N\n" (N bytes, all
 *    right) or "bad OFFSET\n" before closing: the stack as receiver
 *    alone, whatever the client's kernel uses to send.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "net_tcp.h"
#include "net_testd.h"

enum svc_kind { SVC_ECHO, SVC_SOURCE, SVC_HTTP, SVC_CHECK };

/* Benchmarks (tools/bench/net): one canned response with a 64-byte body per
 * request, a request being anything ending in an empty line. */
static const char http_resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 64\r\n"
	"\r\n0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

struct svc_conn {
	struct tcp_conn *c;
	enum svc_kind kind;
	/* echo: received data not yet queued for sending (one chain) */
	struct rte_mbuf *head;
	bool eof;
	/* http: how much of "\r\n\r\n" the last bytes matched */
	unsigned int crlf;
	/* source */
	char req[24];
	unsigned int req_len;
	uint64_t total, sent;
	/* check: bytes seen, first wrong offset + 1 (0: none) */
	uint64_t seen, bad;
};

static struct tcp_stack *svc_tcp;
static uint64_t n_accepted, n_closed, n_echo_bytes, n_src_bytes;
static uint64_t n_check_bytes, n_check_bad;

static inline uint8_t
testd_pattern(uint64_t i)
{
	return (uint8_t)(i * 131 + (i >> 9));
}

/* tcp.h: after tcp_close() no callback mentions the connection again,
 * so its state goes now; callers return right after. */
static void
svc_finish(struct svc_conn *s)
{
	tcp_close(s->c);
	if (s->head != NULL)
		rte_pktmbuf_free(s->head);
	n_closed++;
	free(s);
}

static void
echo_pump(struct svc_conn *s)
{
	if (s->head != NULL) {
		uint32_t len = s->head->pkt_len;

		/* All or nothing; -ENOBUFS: retried from sent(). */
		if (tcp_send_mbuf(s->c, s->head) == 0) {
			s->head = NULL;
			tcp_recved(s->c, len);
			n_echo_bytes += len;
			tcp_flush(s->c);
		}
	}
	if (s->head == NULL && s->eof)
		svc_finish(s);
}

/* testd_pattern() repeats every 256 blocks of 512 bytes. */
#define PATTERN_PERIOD (256 * 512)
static uint8_t pattern_tab[2 * PATTERN_PERIOD];

static void
source_pump(struct svc_conn *s)
{
	bool any = false;

	while (s->sent < s->total) {
		uint32_t room = tcp_send_space(s->c);
		uint32_t n = RTE_MIN((uint64_t)PATTERN_PERIOD,
				s->total - s->sent);
		int rc;

		n = RTE_MIN(n, room);
		if (n == 0)
			break;
		rc = tcp_send(s->c, pattern_tab + s->sent % PATTERN_PERIOD, n);
		if (rc <= 0)
			break;
		s->sent += rc;
		n_src_bytes += rc;
		any = true;
	}
	if (any)
		tcp_flush(s->c);
	if (s->sent == s->total)
		svc_finish(s);
}

static void
on_data(void *arg, struct tcp_conn *c, struct rte_mbuf *m)
{
	struct svc_conn *s = arg;
	struct rte_mbuf *seg;
	uint32_t i;

	(void)c;
	if (s->kind == SVC_ECHO) {
		if (s->head == NULL) {
			s->head = m;
		} else if (rte_pktmbuf_chain(s->head, m) != 0) {
			/* More segments than one chain holds: give up. */
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(s->head);
			s->head = NULL;
			tcp_abort(s->c);
			n_closed++;
			free(s);
			return;
		}
		echo_pump(s);
		return;
	}
	if (s->kind == SVC_CHECK) {
		for (seg = m; seg != NULL; seg = seg->next) {
			const uint8_t *p = rte_pktmbuf_mtod(seg,
							    const uint8_t *);

			for (i = 0; i < seg->data_len; i++, s->seen++)
				if (s->bad == 0 && p[i] !=
				    pattern_tab[s->seen % PATTERN_PERIOD])
					s->bad = s->seen + 1;
		}
		rte_pktmbuf_free(m);
		return;
	}
	if (s->kind == SVC_HTTP) {
		static const char end[] = "\r\n\r\n";
		unsigned int reqs = 0;

		for (seg = m; seg != NULL; seg = seg->next) {
			const char *p = rte_pktmbuf_mtod(seg, const char *);

			for (i = 0; i < seg->data_len; i++) {
				if (p[i] == end[s->crlf])
					s->crlf++;
				else
					s->crlf = (p[i] == '\r');
				if (s->crlf == 4) {
					s->crlf = 0;
					reqs++;
				}
			}
		}
		rte_pktmbuf_free(m);
		while (reqs--)
			tcp_send(s->c, http_resp, sizeof(http_resp) - 1);
		tcp_flush(s->c);
		return;
	}
	/* source: read the request line "N\n" */
	for (seg = m; seg != NULL && s->total == 0; seg = seg->next) {
		const char *p = rte_pktmbuf_mtod(seg, const char *);

		for (i = 0; i < seg->data_len; i++) {
			if (p[i] == '\n') {
				s->req[s->req_len] = '\0';
				s->total = strtoull(s->req, NULL, 10);
				break;
			}
			if (s->req_len + 1 >= sizeof(s->req)) {
				rte_pktmbuf_free(m);
				tcp_abort(s->c);
				n_closed++;
				free(s);
				return;
			}
			s->req[s->req_len++] = p[i];
		}
	}
	rte_pktmbuf_free(m);
	if (s->total > 0)
		source_pump(s);
}

static void
on_sent(void *arg, struct tcp_conn *c, uint32_t acked)
{
	struct svc_conn *s = arg;

	(void)c;
	(void)acked;
	if (s->kind == SVC_ECHO)
		echo_pump(s);
	else if (s->kind == SVC_SOURCE && s->total > 0)
		source_pump(s);
}

static void
on_eof(void *arg, struct tcp_conn *c)
{
	struct svc_conn *s = arg;

	(void)c;
	s->eof = true;
	if (s->kind == SVC_CHECK) {
		char msg[48];
		int n;

		if (s->bad)
			n = snprintf(msg, sizeof(msg), "bad %lu\n",
				     (unsigned long)(s->bad - 1));
		else
			n = snprintf(msg, sizeof(msg), "ok %lu\n",
				     (unsigned long)s->seen);
		n_check_bytes += s->seen;
		n_check_bad += s->bad != 0;
		tcp_send(s->c, msg, n);
		svc_finish(s);
		return;
	}
	if (s->kind == SVC_ECHO && s->head == NULL)
		svc_finish(s);
	else if (s->kind != SVC_ECHO && s->total == 0)
		svc_finish(s);
}

static void
on_closed(void *arg, struct tcp_conn *c, int reason)
{
	struct svc_conn *s = arg;

	(void)c;
	(void)reason;
	if (s->head != NULL)
		rte_pktmbuf_free(s->head);
	n_closed++;
	free(s);
}

static int
accept_kind(struct tcp_conn *c, void **carg, enum svc_kind kind)
{
	struct svc_conn *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	s->c = c;
	s->kind = kind;
	if (kind == SVC_ECHO)
		tcp_set_manual_recv(c, true);
	*carg = s;
	n_accepted++;
	return 0;
}

static int
on_accept_echo(void *larg, struct tcp_conn *c, void **carg)
{
	(void)larg;
	return accept_kind(c, carg, SVC_ECHO);
}

static int
on_accept_source(void *larg, struct tcp_conn *c, void **carg)
{
	(void)larg;
	return accept_kind(c, carg, SVC_SOURCE);
}

static int
on_accept_http(void *larg, struct tcp_conn *c, void **carg)
{
	(void)larg;
	return accept_kind(c, carg, SVC_HTTP);
}

static int
on_accept_check(void *larg, struct tcp_conn *c, void **carg)
{
	(void)larg;
	return accept_kind(c, carg, SVC_CHECK);
}

static const struct tcp_ops check_ops = {
	.accepted = on_accept_check, .data = on_data, .eof = on_eof,
	.closed = on_closed,
};
static const struct tcp_ops http_ops = {
	.accepted = on_accept_http, .data = on_data, .sent = on_sent,
	.eof = on_eof, .closed = on_closed,
};
static const struct tcp_ops echo_ops = {
	.accepted = on_accept_echo, .data = on_data, .sent = on_sent,
	.eof = on_eof, .closed = on_closed,
};
static const struct tcp_ops source_ops = {
	.accepted = on_accept_source, .data = on_data, .sent = on_sent,
	.eof = on_eof, .closed = on_closed,
};

int
testd_services_start(struct net_lcore *lc, const struct testd_conf *c)
{
	struct tcp_stack_config tc;
	int rc;
	uint32_t i;

	if (c->echo_port == 0 && c->sink_port == 0 && c->http_port == 0 &&
	    c->check_port == 0)
		return 0;
	for (i = 0; i < sizeof(pattern_tab); i++)
		pattern_tab[i] = testd_pattern(i);
	memset(&tc, 0, sizeof(tc));
	tc.max_conns = 8192;
	tc.syn_backlog = 1024;
	svc_tcp = net_tcp_attach(lc, &tc);
	if (svc_tcp == NULL)
		return -ENOMEM;
	if (c->echo_port) {
		rc = tcp_listen(svc_tcp, c->echo_port, 0, &echo_ops, NULL);
		if (rc != 0)
			return rc;
	}
	if (c->sink_port) {
		rc = tcp_listen(svc_tcp, c->sink_port, 0, &source_ops, NULL);
		if (rc != 0)
			return rc;
	}
	if (c->check_port) {
		rc = tcp_listen(svc_tcp, c->check_port, 0, &check_ops, NULL);
		if (rc != 0)
			return rc;
	}
	if (c->http_port) {
		rc = tcp_listen(svc_tcp, c->http_port, 0, &http_ops, NULL);
		if (rc != 0)
			return rc;
	}
	return 0;
}

void
testd_services_stop(struct net_lcore *lc)
{
	(void)lc;
}

void
testd_services_report(struct net_lcore *lc)
{
	struct tcp_stats st;
	unsigned int i;

	if (svc_tcp == NULL)
		return;
	tcp_stack_stats(svc_tcp, &st);
	printf("tcp_accepted %lu\ntcp_closed %lu\ntcp_echo_bytes %lu\n"
		"tcp_source_bytes %lu\n", (unsigned long)n_accepted,
		(unsigned long)n_closed, (unsigned long)n_echo_bytes,
		(unsigned long)n_src_bytes);
	printf("tcp_check_bytes %lu\ntcp_check_bad %lu\n",
		(unsigned long)n_check_bytes, (unsigned long)n_check_bad);
	printf("tcp_seg_in %lu\ntcp_seg_out %lu\ntcp_retransmits %lu\n"
		"tcp_rto_expired %lu\ntcp_fast_retransmits %lu\n"
		"tcp_undos %lu\ntcp_lost_rexmits %lu\n"
		"tcp_tlp_probes %lu\ntcp_tlp_recoveries %lu\n"
		"tcp_syncookies_sent %lu\ntcp_resets_out %lu\n",
		(unsigned long)st.seg_in, (unsigned long)st.seg_out,
		(unsigned long)st.retransmits, (unsigned long)st.rto_expired,
		(unsigned long)st.fast_retransmits,
		(unsigned long)st.undos,
		(unsigned long)st.lost_rexmits,
		(unsigned long)st.tlp_probes,
		(unsigned long)st.tlp_recoveries,
		(unsigned long)st.syncookies_sent,
		(unsigned long)st.resets_out);
	for (i = 0; i < TCP_DROP_MAX; i++)
		printf("tcp_drop_%s %lu\n", tcp_drop_reason_name(i),
			(unsigned long)st.drops[i]);
	net_tcp_detach(lc, svc_tcp);
	svc_tcp = NULL;
}
