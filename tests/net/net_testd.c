/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * net_testd: a small service on lib/net for the e2e scripts and the
 * benchmarks.  Brings up port 0 (whatever vdev EAL was given), answers ARP
 * and ping, and runs until SIGINT/SIGTERM or --seconds.  Prints the
 * counters as "name value" lines on exit.
 *
 *   net_testd <EAL args> -- --ip A.B.C.D/len [--gw A.B.C.D] [--mtu N]
 *             [--seconds N] [--idle-us N] [--vlan ID]
 *             [--echo PORT] [--sink PORT] [--http PORT] [--check PORT]
 *             [--netem SPEC] [--tap-rx-signal]
 *
 * --idle-us sleeps that long after an empty poll: e2e runs share two cores
 * with everyone's builds (docs/DEVELOPING.md); benchmarks pass 0.
 * --tap-rx-signal keeps net_tap's per-frame Rx signal (net_port_conf), to
 * measure what it costs (tools/bench/net/diag_tap.sh).
 */

#include <arpa/inet.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "net.h"
#include "net_testd.h"

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int
parse_prefix(const char *s, uint32_t *ip_be, uint32_t *mask_be)
{
	char buf[32], *slash;
	struct in_addr a;
	int len = 24;

	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (slash != NULL) {
		*slash = '\0';
		len = atoi(slash + 1);
	}
	if (inet_pton(AF_INET, buf, &a) != 1 || len < 0 || len > 32)
		return -1;
	*ip_be = a.s_addr;
	*mask_be = htonl(len == 0 ? 0 : 0xffffffffu << (32 - len));
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: net_testd <EAL> -- --ip A.B.C.D/len "
		"[--gw A.B.C.D] [--mtu N] [--seconds N] [--idle-us N] "
		"[--vlan ID] [--echo PORT] [--sink PORT] [--http PORT] "
		"[--check PORT] [--netem SPEC] [--tap-rx-signal]\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ip", required_argument, NULL, 'i' },
		{ "gw", required_argument, NULL, 'g' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "seconds", required_argument, NULL, 's' },
		{ "idle-us", required_argument, NULL, 'u' },
		{ "vlan", required_argument, NULL, 'v' },
		{ "echo", required_argument, NULL, 'e' },
		{ "sink", required_argument, NULL, 'k' },
		{ "netem", required_argument, NULL, 'n' },
		{ "http", required_argument, NULL, 'h' },
		{ "check", required_argument, NULL, 'c' },
		{ "tap-rx-signal", no_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct net_port_conf pc;
	struct testd_conf tc;
	struct netem_conf nc;
	bool netem = false;
	struct net_port *p;
	struct net_lcore *lc;
	struct net_stats st;
	struct in_addr a;
	uint64_t end_ns, now;
	unsigned int seconds = 60, idle_us = 0, k;
	int rc, c;

	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		fprintf(stderr, "net_testd: EAL init failed\n");
		return 1;
	}
	argc -= rc;
	argv += rc;
	memset(&pc, 0, sizeof(pc));
	memset(&tc, 0, sizeof(tc));
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_prefix(optarg, &pc.ip_be, &pc.netmask_be)) {
				usage();
				return 2;
			}
			break;
		case 'g':
			if (inet_pton(AF_INET, optarg, &a) != 1) {
				usage();
				return 2;
			}
			pc.gateway_be = a.s_addr;
			break;
		case 'm': pc.mtu = atoi(optarg); break;
		case 's': seconds = atoi(optarg); break;
		case 'u': idle_us = atoi(optarg); break;
		case 'v': pc.vlan = true; pc.vlan_id = atoi(optarg); break;
		case 'e': tc.echo_port = atoi(optarg); break;
		case 'k': tc.sink_port = atoi(optarg); break;
		case 'h': tc.http_port = atoi(optarg); break;
		case 'c': tc.check_port = atoi(optarg); break;
		case 't': pc.tap_rx_signal = true; break;
		case 'n':
			if (netem_parse(optarg, &nc) != 0) {
				usage();
				return 2;
			}
			netem = true;
			break;
		default: usage(); return 2;
		}
	}
	if (pc.ip_be == 0 || rte_eth_dev_count_avail() < 1) {
		usage();
		return 2;
	}
	pc.port_id = 0;
	if (netem) {
		rc = netem_start(0, &nc, &pc.port_id);
		if (rc != 0) {
			fprintf(stderr, "net_testd: netem: %s\n",
				strerror(-rc));
			return 1;
		}
	}
	pc.nb_queues = 1;
	pc.nb_mbufs = 16384;
	rc = net_port_init(&pc, &p);
	if (rc != 0) {
		fprintf(stderr, "net_testd: port init: %s\n", strerror(-rc));
		return 1;
	}
	lc = net_lcore_create(p, 0, -1);
	if (lc == NULL) {
		fprintf(stderr, "net_testd: lcore context: out of memory\n");
		return 1;
	}
	net_telemetry_register();
	rc = testd_services_start(lc, &tc);
	if (rc != 0) {
		fprintf(stderr, "net_testd: services: %s\n", strerror(-rc));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("net_testd: up caps=0x%x\n", net_port_caps(p));
	fflush(stdout);
	end_ns = net_now_ns() + seconds * 1000000000ULL;
	while (!stop) {
		now = net_now_ns();
		if (now >= end_ns)
			break;
		if (netem)
			netem_poll(now);
		if (net_lcore_poll(lc, now) == 0 && idle_us)
			usleep(idle_us);
	}
	testd_services_stop(lc);
	net_lcore_stats(lc, &st);
	for (k = 0; k < net_stats_count(); k++)
		printf("%s %lu\n", net_stats_name(k),
			(unsigned long)((uint64_t *)&st)[k]);
	testd_services_report(lc);
	if (netem)
		netem_report();
	fflush(stdout);
	net_lcore_free(lc);
	net_port_close(p);
	rte_eal_cleanup();
	return 0;
}
