/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * DPDK load client on lib/net + TCP (issue 3, benchmark (a)): active opens
 * from this stack to net_testd over any port (net_memif here), one lcore.
 *
 *   net_bench_client <EAL> -- --ip A.B.C.D/len --server A.B.C.D
 *       --mode rr|lat|bulk [--port P] [--conns N] [--size B] [--seconds S]
 *
 *   rr:   N connections, each a keep-alive loop of SIZE-byte request ->
 *         SIZE-byte echo; prints requests/s.
 *   lat:  one connection, one request in flight; prints p50/p99 (us).
 *   bulk: N connections to the source service asking for "huge"; prints
 *         Gbit/s of payload received.
 */

#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "net.h"
#include "net_tcp.h"

enum mode { RR, LAT, BULK };

struct cconn {
	struct tcp_conn *c;
	uint32_t got;		/* bytes of the current response */
	uint64_t t0;		/* request sent (ns) */
	bool up;
};

static struct {
	enum mode mode;
	uint32_t size;
	uint64_t reqs, bytes, now;
	bool measuring;
	uint8_t req[4096];
	uint64_t *lat;
	size_t nlat, caplat;
	unsigned int up, closed;
} b;

static void
send_req(struct cconn *cc)
{
	cc->got = 0;
	cc->t0 = net_now_ns();
	tcp_send(cc->c, b.req, b.size);
	tcp_flush(cc->c);
}

static void
on_connected(void *arg, struct tcp_conn *c)
{
	struct cconn *cc = arg;

	(void)c;
	cc->up = true;
	b.up++;
	if (b.mode == BULK) {
		static const char ask[] = "1000000000000000\n";

		tcp_send(cc->c, ask, sizeof(ask) - 1);
		tcp_flush(cc->c);
	} else {
		send_req(cc);
	}
}

static void
on_data(void *arg, struct tcp_conn *c, struct rte_mbuf *m)
{
	struct cconn *cc = arg;

	(void)c;
	if (b.measuring)
		b.bytes += m->pkt_len;
	cc->got += m->pkt_len;
	rte_pktmbuf_free(m);
	if (b.mode == BULK)
		return;
	if (cc->got < b.size)
		return;
	if (b.measuring) {
		b.reqs++;
		if (b.mode == LAT && b.nlat < b.caplat)
			b.lat[b.nlat++] = net_now_ns() - cc->t0;
	}
	send_req(cc);
}

static void
on_closed(void *arg, struct tcp_conn *c, int reason)
{
	struct cconn *cc = arg;

	(void)c;
	(void)reason;
	cc->up = false;
	b.closed++;
}

static const struct tcp_ops ops = {
	.connected = on_connected, .data = on_data, .closed = on_closed,
};

static int
cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;

	return a < c ? -1 : a > c;
}

/* What the command line asks for (mode and size go to b). */
struct nb_opts {
	struct net_port_conf pc;
	uint32_t server;
	unsigned int conns, seconds;
	uint16_t port;
};

/* --ip A.B.C.D[/len] (default /24) into pc; 0, or -1 if not an address. */
static int
parse_ip(const char *arg, struct net_port_conf *pc)
{
	char ip[32], *slash;
	struct in_addr a;
	unsigned int len;

	snprintf(ip, sizeof(ip), "%s", arg);
	slash = strchr(ip, '/');
	len = slash ? (unsigned int)atoi(slash + 1) : 24;
	if (slash)
		*slash = '\0';
	if (inet_pton(AF_INET, ip, &a) != 1)
		return -1;
	pc->ip_be = a.s_addr;
	pc->netmask_be = htonl(len ? 0xffffffffu << (32 - len) : 0);
	return 0;
}

/* The options after EAL's into o and b; 0, or the exit code. */
static int
parse_args(int argc, char **argv, struct nb_opts *o)
{
	static const struct option opts[] = {
		{ "ip", required_argument, NULL, 'i' },
		{ "server", required_argument, NULL, 's' },
		{ "mode", required_argument, NULL, 'm' },
		{ "port", required_argument, NULL, 'p' },
		{ "conns", required_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 'z' },
		{ "seconds", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct in_addr a;
	int c;

	memset(o, 0, sizeof(*o));
	o->conns = 1;
	o->seconds = 10;
	o->port = 7;
	b.size = 64;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_ip(optarg, &o->pc) < 0)
				return 2;
			break;
		case 's':
			if (inet_pton(AF_INET, optarg, &a) != 1)
				return 2;
			o->server = a.s_addr;
			break;
		case 'm':
			b.mode = !strcmp(optarg, "lat") ? LAT :
				!strcmp(optarg, "bulk") ? BULK : RR;
			break;
		case 'p': o->port = atoi(optarg); break;
		case 'c': o->conns = atoi(optarg); break;
		case 'z': b.size = atoi(optarg); break;
		case 't': o->seconds = atoi(optarg); break;
		default: return 2;
		}
	}
	if (o->pc.ip_be == 0 || o->server == 0 || b.size == 0 ||
			b.size > sizeof(b.req)) {
		fprintf(stderr, "net_bench_client: --ip and --server needed\n");
		return 2;
	}
	return 0;
}

/* Port 0, its lcore and TCP stack, the connections' state; 0 or 1. */
static int
setup(struct nb_opts *o, struct net_port **p, struct net_lcore **lc,
      struct tcp_stack **tcp, struct cconn **cc)
{
	struct tcp_stack_config tc;
	int rc;

	memset(b.req, 'q', sizeof(b.req));
	o->pc.port_id = 0;
	o->pc.nb_queues = 1;
	rc = net_port_init(&o->pc, p);
	if (rc != 0) {
		fprintf(stderr, "net_bench_client: port: %s\n", strerror(-rc));
		return 1;
	}
	*lc = net_lcore_create(*p, 0, -1);
	memset(&tc, 0, sizeof(tc));
	tc.max_conns = o->conns + 16;
	*tcp = *lc ? net_tcp_attach(*lc, &tc) : NULL;
	*cc = calloc(o->conns, sizeof(**cc));
	b.caplat = 1u << 22;
	b.lat = calloc(b.caplat, sizeof(*b.lat));
	if (*tcp == NULL || *cc == NULL || b.lat == NULL) {
		fprintf(stderr, "net_bench_client: setup failed\n");
		return 1;
	}
	return 0;
}

/*
 * Connect, warm up 1 s (or until all are up), then measure for
 * o->seconds; *dt: the seconds measured. 0 or 1.
 */
static int
run(const struct nb_opts *o, struct net_lcore *lc, struct tcp_stack *tcp,
    struct cconn *cc, double *dt)
{
	uint64_t t_start, t_meas = 0, t_end, now;
	unsigned int i;
	int rc;

	t_start = net_now_ns();
	/* Let ARP and the gratuitous announcement settle. */
	while (net_now_ns() - t_start < 200000000ULL)
		net_lcore_poll(lc, net_now_ns());
	for (i = 0; i < o->conns; i++) {
		rc = tcp_connect(tcp, o->server, o->port, &ops, &cc[i],
				 &cc[i].c);
		if (rc != 0) {
			fprintf(stderr, "net_bench_client: connect %u: %s\n",
				i, strerror(-rc));
			return 1;
		}
		net_lcore_poll(lc, net_now_ns());
	}
	t_start = net_now_ns();
	t_end = ~0ULL;
	for (;;) {
		now = net_now_ns();
		net_lcore_poll(lc, now);
		if (!b.measuring && (now - t_start > 1000000000ULL) &&
				b.up == o->conns) {
			b.measuring = true;
			t_meas = now;
			t_end = now + o->seconds * 1000000000ULL;
		}
		if (now - t_start > (o->seconds + 10) * 1000000000ULL &&
				!b.measuring) {
			fprintf(stderr, "net_bench_client: only %u/%u "
				"connections came up\n", b.up, o->conns);
			return 1;
		}
		if (now >= t_end)
			break;
	}
	*dt = (now - t_meas) / 1e9;
	return 0;
}

/* The figures of the mode, then the client's non-zero counters. */
static void
print_results(const struct nb_opts *o, double dt, struct net_lcore *lc,
	      struct tcp_stack *tcp)
{
	struct net_stats ns;
	struct tcp_stats ts;
	unsigned int k;

	printf("mode=%s conns=%u size=%u seconds=%.2f\n",
		b.mode == RR ? "rr" : b.mode == LAT ? "lat" : "bulk",
		o->conns, b.size, dt);
	if (b.mode == BULK)
		printf("bulk_gbit_s %.3f\n", b.bytes * 8 / dt / 1e9);
	else
		printf("requests_per_s %.0f\n", b.reqs / dt);
	if (b.mode == LAT && b.nlat > 0) {
		qsort(b.lat, b.nlat, sizeof(*b.lat), cmp_u64);
		printf("lat_p50_us %.1f\nlat_p99_us %.1f\n",
			b.lat[b.nlat / 2] / 1e3,
			b.lat[b.nlat * 99 / 100] / 1e3);
	}
	net_lcore_stats(lc, &ns);
	for (k = 0; k < net_stats_count(); k++)
		if (((uint64_t *)&ns)[k] != 0)
			printf("client_%s %lu\n", net_stats_name(k),
				(unsigned long)((uint64_t *)&ns)[k]);
	tcp_stack_stats(tcp, &ts);
	printf("client_tcp_retransmits %lu\nclient_tcp_rto %lu\n"
		"client_tcp_seg_in %lu\nclient_tcp_seg_out %lu\n",
		(unsigned long)ts.retransmits,
		(unsigned long)ts.rto_expired,
		(unsigned long)ts.seg_in, (unsigned long)ts.seg_out);
}

int
main(int argc, char **argv)
{
	struct net_port *p;
	struct net_lcore *lc;
	struct tcp_stack *tcp;
	struct cconn *cc;
	struct nb_opts o;
	double dt;
	int rc;

	rc = rte_eal_init(argc, argv);
	if (rc < 0)
		return 1;
	argc -= rc;
	argv += rc;
	rc = parse_args(argc, argv, &o);
	if (rc != 0)
		return rc;
	if (setup(&o, &p, &lc, &tcp, &cc) != 0 ||
	    run(&o, lc, tcp, cc, &dt) != 0)
		return 1;
	print_results(&o, dt, lc, tcp);
	net_tcp_detach(lc, tcp);
	net_lcore_free(lc);
	net_port_close(p);
	rte_eal_cleanup();
	return 0;
}
