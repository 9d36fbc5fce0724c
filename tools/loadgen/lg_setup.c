/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* ffn-loadgen: ports, routes, prepared requests and GET /v1/stats. */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "larql_client.h"
#include "lg.h"
#include "lg_setup.h"
#include "net_tcp.h"

int
lg_parse_ipv4(const char *s, uint32_t *ip_be)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	*ip_be = a.s_addr;
	return 0;
}

int
lg_parse_hostport(const char *s, uint32_t *ip_be, uint16_t *port)
{
	char buf[64];
	const char *colon = strrchr(s, ':');
	char *end;
	unsigned long p;

	if (colon == NULL || (size_t)(colon - s) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, (size_t)(colon - s));
	buf[colon - s] = '\0';
	p = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || p == 0 || p > 65535)
		return -EINVAL;
	*port = (uint16_t)p;
	return lg_parse_ipv4(buf, ip_be);
}

int
lg_add_target(uint32_t ip_be, uint16_t port)
{
	for (unsigned int i = 0; i < lg.ntargets; i++)
		if (lg.target[i].ip_be == ip_be && lg.target[i].port == port)
			return (int)i;
	if (lg.ntargets == LG_MAX_TARGETS)
		return -ENOSPC;
	lg.target[lg.ntargets].ip_be = ip_be;
	lg.target[lg.ntargets].port = port;
	return (int)lg.ntargets++;
}

/* API calls (tcp_connect, tcp_send_iov) read this clock: without it they
 * use the last poll's time, which is 0 before the first poll (tcp.h). */
static uint64_t
clock_us(void *arg)
{
	(void)arg;
	return net_now_ns() / 1000;
}

static int
worker_add(unsigned int lcore)
{
	struct lg_worker *w = rte_zmalloc_socket("lg_worker", sizeof(*w),
		RTE_CACHE_LINE_SIZE, (int)rte_lcore_to_socket_id(lcore));

	if (w == NULL)
		return -ENOMEM;
	w->idx = lg.nworkers;
	w->lcore_id = lcore;
	lg.w[lg.nworkers++] = w;
	return 0;
}

/* A worker per EAL lcore, the main lcore's first (queue 0): with one
 * lcore it is the loadgen of before, queue 0 of every port. */
static int
workers_create(void)
{
	unsigned int lcore;
	int rc;

	if (rte_lcore_count() > LG_MAX_WORKERS) {
		fprintf(stderr, "ffn-loadgen: %u lcores, at most %u\n",
			rte_lcore_count(), LG_MAX_WORKERS);
		return -E2BIG;
	}
	rc = worker_add(rte_get_main_lcore());
	RTE_LCORE_FOREACH_WORKER(lcore)
		if (rc == 0)
			rc = worker_add(lcore);
	if (rc == 0)
		RTE_PER_LCORE(lg_w) = lg.w[0];
	return rc;
}

/* Connections one lcore holds at most: its share of --connections
 * (make_clients), one per target each under --layout. */
static uint32_t
lg_worker_conns(void)
{
	uint32_t per = lg.fanout ? lg.ntargets : 1;

	return (lg.nconns + lg.nworkers - 1) / lg.nworkers * per;
}

/* On w's lcore: its net_lcore and TCP stack on queue w->idx of every
 * port. */
static int
worker_attach(void *arg)
{
	struct lg_worker *w = arg;

	for (unsigned int i = 0; i < lg.nports; i++) {
		struct tcp_stack_config tc;

		w->lc[i] = net_lcore_create(lg.port[i].np, (uint16_t)w->idx,
					    -1);
		if (w->lc[i] == NULL) {
			fprintf(stderr, "ffn-loadgen: net_lcore_create(port "
				"%u, queue %u) failed\n", lg.port[i].port_id,
				w->idx);
			return -ENOMEM;
		}
		memset(&tc, 0, sizeof(tc));
		tc.clock_us = clock_us;
		/* This lcore's clients (make_clients), each with a connection
		 * per target under --layout, and the ARP handshakes; the
		 * stack's default (4096) below that. */
		tc.max_conns = RTE_MAX(4096u, lg_worker_conns() + 64);
		w->tcp[i] = net_tcp_attach(w->lc[i], &tc);
		if (w->tcp[i] == NULL) {
			fprintf(stderr, "ffn-loadgen: net_tcp_attach(port %u, "
				"queue %u) failed\n", lg.port[i].port_id,
				w->idx);
			return -ENOMEM;
		}
	}
	return 0;
}

int
lg_ports_start(void)
{
	int rc = workers_create();

	if (rc < 0) {
		fprintf(stderr, "ffn-loadgen: workers: %s\n", strerror(-rc));
		return rc;
	}
	for (unsigned int i = 0; i < lg.nports; i++) {
		struct lg_port *lp = &lg.port[i];
		struct net_port_conf pc;

		if (!rte_eth_dev_is_valid_port(lp->port_id)) {
			fprintf(stderr, "ffn-loadgen: --ip #%u: no DPDK port "
				"%u (give a --vdev or a PCI device)\n", i + 1,
				lp->port_id);
			return -ENODEV;
		}
		memset(&pc, 0, sizeof(pc));
		pc.port_id = lp->port_id;
		/* One RX/TX queue pair per lcore: connections a worker opens
		 * take source ports whose RSS hash lands on its queue
		 * (tcp_connect, net_tcp_attach's rss_* fields). */
		pc.nb_queues = (uint16_t)lg.nworkers;
		/* Each connection holds an mbuf or two (its request's
		 * headers, an answer being read) beyond the port's rings:
		 * more than the default pool (8192 per queue) past ~3 000. */
		pc.nb_mbufs = RTE_MAX(8192u, 8192u + 2 * lg_worker_conns()) *
			      pc.nb_queues;
		pc.ip_be = lp->ip_be;
		pc.netmask_be = lp->mask_be;
		pc.gateway_be = lp->gw_be;
		rc = net_port_init(&pc, &lp->np);
		if (rc < 0) {
			fprintf(stderr, "ffn-loadgen: net_port_init(port %u, "
				"%u queues): %s\n", lp->port_id, lg.nworkers,
				strerror(-rc));
			return rc;
		}
	}
	/* Each lcore makes its own queues' contexts: they are allocated on
	 * the NUMA node of the calling lcore (net.h, net_tcp.h). */
	for (unsigned int q = 1; q < lg.nworkers; q++)
		if (rte_eal_remote_launch(worker_attach, lg.w[q],
					  lg.w[q]->lcore_id) != 0)
			return -EBUSY;
	rc = worker_attach(lg.w[0]);
	for (unsigned int q = 1; q < lg.nworkers; q++) {
		int wrc = rte_eal_wait_lcore(lg.w[q]->lcore_id);

		if (rc == 0)
			rc = wrc;
	}
	if (rc < 0)
		return rc;
	/* Route: the port whose prefix holds the target, else one with a
	 * gateway. */
	for (unsigned int t = 0; t < lg.ntargets; t++) {
		struct lg_target *tg = &lg.target[t];
		int via = -1;

		for (unsigned int i = 0; i < lg.nports && via < 0; i++)
			if ((tg->ip_be & lg.port[i].mask_be) ==
			    (lg.port[i].ip_be & lg.port[i].mask_be))
				via = (int)i;
		for (unsigned int i = 0; i < lg.nports && via < 0; i++)
			if (lg.port[i].gw_be != 0)
				via = (int)i;
		if (via < 0) {
			struct in_addr a = { .s_addr = tg->ip_be };

			fprintf(stderr, "ffn-loadgen: target %s: no --ip "
				"prefix holds it and no --gw\n", inet_ntoa(a));
			return -ENETUNREACH;
		}
		tg->via = (unsigned int)via;
	}
	return 0;
}

void
lg_poll_all(uint64_t now)
{
	struct lg_worker *w = LGW;

	w->now = now;
	for (unsigned int i = 0; i < lg.nports; i++)
		net_lcore_poll(w->lc[i], now);
	for (unsigned int i = 0; i < lg.nports; i++)
		net_lcore_flush(w->lc[i]);
}

int
lg_wait_links(unsigned int ms)
{
	uint64_t end = net_now_ns() + (uint64_t)ms * 1000000ull;

	for (;;) {
		unsigned int up = 0;

		for (unsigned int i = 0; i < lg.nports; i++) {
			struct rte_eth_link l;

			if (rte_eth_link_get_nowait(lg.port[i].port_id,
						    &l) == 0 &&
			    l.link_status == RTE_ETH_LINK_UP)
				up++;
		}
		if (up == lg.nports)
			return 0;
		if (net_now_ns() > end)
			return -ETIMEDOUT;
		lg_poll_all(net_now_ns());
		rte_delay_us_sleep(1000);
	}
}

int
lg_req_bytes(struct lg_req *q, const char *method, const char *path,
	     const char *ctype, const char *accept, const void *body,
	     size_t blen, unsigned int target)
{
	const struct lg_target *t = &lg.target[target];
	struct in_addr a = { .s_addr = t->ip_be };
	char head[1024];
	int hl;

	memset(q, 0, sizeof(*q));
	q->target = target;
	hl = snprintf(head, sizeof(head),
		"%s %s HTTP/1.1\r\nHost: %s:%u\r\n%s%s%s%s%s%s"
		"Content-Length: %zu\r\n\r\n",
		method, path, inet_ntoa(a), t->port,
		ctype ? "Content-Type: " : "", ctype ? ctype : "",
		ctype ? "\r\n" : "", accept ? "Accept: " : "",
		accept ? accept : "", accept ? "\r\n" : "", blen);
	if (hl < 0 || (size_t)hl >= sizeof(head) ||
	    (uint64_t)hl + blen > UINT32_MAX)
		return -ENAMETOOLONG;
	q->len = (uint32_t)hl + (uint32_t)blen;
	/* DPDK memory: a NIC may DMA the request straight from here. */
	q->buf = rte_malloc("lg_req", q->len, 64);
	if (q->buf == NULL)
		return -ENOMEM;
	memcpy(q->buf, head, (size_t)hl);
	if (blen > 0)
		memcpy(q->buf + hl, body, blen);
	return 0;
}

int
lg_build_req(struct lg_req *q, const struct lg_req_spec *sp,
	     unsigned int target)
{
	ssize_t bl = 0;
	size_t cap = 0;
	uint8_t *body = NULL;
	bool post = strcmp(sp->method, "POST") == 0;
	int rc;

	if (post) {
		cap = 64 + 4 * sp->nlayers + lc_payload_bytes(sp->req_fmt,
			sp->seq_len, sp->hidden);
		body = malloc(cap);
		if (body == NULL)
			return -ENOMEM;
		bl = lc_encode_request(body, cap, sp->layers, sp->nlayers,
			sp->nlayers != 1, sp->seq_len, sp->hidden, sp->x,
			sp->req_fmt);
		if (bl < 0) {
			free(body);
			return (int)bl;
		}
	}
	rc = lg_req_bytes(q, sp->method, sp->path,
		post ? lc_fmt_ctype(sp->req_fmt) : NULL,
		!post ? NULL : sp->resp_fmt == LC_F32 ? lc_fmt_ctype(LC_F32) :
		lc_fmt_accept(sp->resp_fmt), body, (size_t)bl, target);
	free(body);
	if (rc < 0)
		return rc;
	if (!post || strcmp(sp->path, "/v1/walk-ffn") != 0) {
		/* The appliance's own routes answer JSON (spec/wire.md §2);
		 * anything else is only held to a 2xx. */
		q->ctype = !post && strncmp(sp->path, "/v1/", 4) == 0 ?
			   "application/json" : NULL;
		return 0;
	}
	/* spec/wire.md §5.2: the frame the answer must be; asked in f16,
	 * it may come in f32 (the precision guard, spec/moe.md §7) */
	q->binary = true;
	q->ctype = lc_fmt_ctype(sp->resp_fmt);
	rc = lg_frame_expect(&q->frame, sp->resp_fmt, sp->layers,
			     sp->nlayers, sp->seq_len, sp->hidden);
	if (rc == 0 && sp->resp_fmt == LC_F16) {
		q->guard_ctype = lc_fmt_ctype(LC_F32);
		rc = lg_frame_expect(&q->guard, LC_F32, sp->layers,
				     sp->nlayers, sp->seq_len, sp->hidden);
	}
	return rc;
}

/* ---- GET /v1/stats over our own stack ------------------------------- */

struct stats_fetch {
	struct tcp_conn *c;
	struct http_rsp r;
	char *body;
	size_t len, cap;
	int done;		/* 1 ok, <0 error */
	const char *req;
	const char *path;
};

static void
sf_connected(void *arg, struct tcp_conn *c)
{
	struct stats_fetch *f = arg;

	if (tcp_send(c, f->req, (uint32_t)strlen(f->req)) < 0)
		f->done = -EIO;
	tcp_flush(c);
}

static void
sf_data(void *arg, struct tcp_conn *c, struct rte_mbuf *m)
{
	struct stats_fetch *f = arg;

	(void)c;
	for (struct rte_mbuf *s = m; s != NULL && f->done == 0; s = s->next) {
		const uint8_t *p = rte_pktmbuf_mtod(s, const uint8_t *);
		size_t n = s->data_len;

		while (n > 0 && f->done == 0) {
			const uint8_t *b;
			size_t bl;
			int rc = http_rsp_feed(&f->r, p, n, &b, &bl);

			if (rc < 0) {
				f->done = rc;
				break;
			}
			if (bl > 0) {
				if (f->len + bl + 1 > f->cap) {
					f->done = -E2BIG;
					break;
				}
				memcpy(f->body + f->len, b, bl);
				f->len += bl;
			}
			p += rc;
			n -= (size_t)rc;
			if (f->r.state == HTTP_RSP_DONE)
				f->done = 1;
		}
	}
	rte_pktmbuf_free(m);
}

/* -errno of a connection that ended before it was done with. */
static int
close_errno(int reason)
{
	return reason == TCP_CLOSE_REFUSED ? -ECONNREFUSED :
	       reason == TCP_CLOSE_TIMEOUT ? -ETIMEDOUT :
	       reason == TCP_CLOSE_RESET ? -ECONNRESET : -EPIPE;
}

static void
sf_closed(void *arg, struct tcp_conn *c, int reason)
{
	struct stats_fetch *f = arg;

	(void)c;
	f->c = NULL;
	if (f->done == 0)
		f->done = close_errno(reason);
	if (f->done < 0)
		fprintf(stderr, "ffn-loadgen: GET %s: connection closed, "
			"reason %d\n", f->path, reason);
}

int
lg_fetch_json(unsigned int target, const char *path, int *status,
	      struct json_object **obj, unsigned int timeout_ms)
{
	static const struct tcp_ops ops = {
		.connected = sf_connected,
		.data = sf_data,
		.closed = sf_closed,
	};
	const struct lg_target *t = &lg.target[target];
	struct in_addr a = { .s_addr = t->ip_be };
	struct stats_fetch f;
	char req[512];
	uint64_t end = net_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	int rc;

	*obj = NULL;
	memset(&f, 0, sizeof(f));
	http_rsp_reset(&f.r);
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s:%u"
		 "\r\n\r\n", path, inet_ntoa(a), t->port);
	f.req = req;
	f.path = path;
	f.cap = 1 << 16;
	f.body = calloc(1, f.cap);
	if (f.body == NULL)
		return -ENOMEM;
	rc = tcp_connect(LGW->tcp[t->via], t->ip_be, t->port, &ops, &f,
			 &f.c);
	if (rc < 0) {
		free(f.body);
		return rc;
	}
	while (f.done == 0 && net_now_ns() < end)
		lg_poll_all(net_now_ns());
	if (f.c != NULL) {
		tcp_set_arg(f.c, NULL);
		tcp_close(f.c);
	}
	rc = f.done == 0 ? -ETIMEDOUT : f.done < 0 ? f.done : 0;
	if (rc == 0) {
		*status = f.r.status;
		if (f.r.status == 200 &&
		    (*obj = json_tokener_parse(f.body)) == NULL)
			rc = -EBADMSG;
	}
	free(f.body);
	return rc;
}

int
lg_fetch_stats(unsigned int target, uint32_t *hidden, uint32_t *layers,
	       unsigned int timeout_ms)
{
	struct json_object *o, *v;
	int status = 0;
	int rc = lg_fetch_json(target, "/v1/stats", &status, &o, timeout_ms);

	if (rc < 0)
		return rc;
	if (status != 200)
		return -EPROTO;
	if (json_object_object_get_ex(o, "hidden_size", &v))
		*hidden = (uint32_t)json_object_get_int(v);
	if (json_object_object_get_ex(o, "layers", &v))
		*layers = (uint32_t)json_object_get_int(v);
	json_object_put(o);
	return *hidden == 0 ? -EBADMSG : 0;
}

/* lg_prime_targets: one handshake per target. */
struct prime {
	struct tcp_conn *c;
	int done;		/* 1 connected, <0 -errno */
};

static void
pr_connected(void *arg, struct tcp_conn *c)
{
	struct prime *p = arg;

	(void)c;
	p->done = 1;
}

static void
pr_closed(void *arg, struct tcp_conn *c, int reason)
{
	struct prime *p = arg;

	(void)c;
	p->c = NULL;
	if (p->done == 0)
		p->done = close_errno(reason);
}

int
lg_prime_targets(unsigned int timeout_ms)
{
	static const struct tcp_ops ops = {
		.connected = pr_connected,
		.closed = pr_closed,
	};
	int failed = 0;

	for (unsigned int t = 0; t < lg.ntargets; t++) {
		const struct lg_target *tg = &lg.target[t];
		struct in_addr a = { .s_addr = tg->ip_be };
		uint64_t end = net_now_ns() +
			       (uint64_t)timeout_ms * 1000000ull;
		struct prime p = { .c = NULL, .done = 0 };
		int rc;

		rc = tcp_connect(LGW->tcp[tg->via], tg->ip_be, tg->port, &ops,
				 &p, &p.c);
		while (rc == 0 && p.done == 0 && net_now_ns() < end)
			lg_poll_all(net_now_ns());
		if (p.c != NULL) {
			tcp_set_arg(p.c, NULL);
			tcp_close(p.c);
		}
		if (rc == 0)
			rc = p.done == 0 ? -ETIMEDOUT : p.done < 0 ? p.done : 0;
		if (rc < 0) {
			fprintf(stderr, "ffn-loadgen: target %s:%u: no "
				"connection before the run (%s); the run "
				"counts its errors\n", inet_ntoa(a), tg->port,
				strerror(-rc));
			failed++;
		}
	}
	return failed;
}
