/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * A net_tap port brought up by net_port_init() reads its queue without the
 * PMD's per-frame real-time signal (net_port.c, net_rtsig_take): its queue
 * fds raise no signal, the process's real-time signal handlers are left as
 * they were, and a frame the kernel sends into the tap still reaches the
 * poll loop, which answers it.
 *
 * Needs CAP_SYS_ADMIN and /dev/net/tun: the process moves itself into a
 * network namespace of its own (unshare) before EAL creates the tap, so
 * the device and its traffic vanish with the process.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <rte_arp.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ether.h>

#include "net.h"

#define TAP_IF "fsnut0"
#define OUR_IP RTE_IPV4(198, 18, 1, 2)
#define PEER_IP RTE_IPV4(198, 18, 1, 1)
#define MAX_FDS 64
#define MAX_RT 64

/* What net_port_init() changed, captured once (a vdev starts only once). */
static struct net_port *port;
static struct net_lcore *lc;
static int port_rc;
static int new_fds[MAX_FDS], nr_new;
static int nr_rt;
static void (*rt_before[MAX_RT])(int);
static void (*rt_after[MAX_RT])(int);

static void
app_rt_handler(int sig)
{
	(void)sig;
}

/* The open fds that are /dev/net/tun. */
static int
tun_fds(int *fds, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL && n < max) {
		char path[300], target[64];
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (strcmp(target, "/dev/net/tun") == 0)
			fds[n++] = atoi(e->d_name);
	}
	closedir(d);
	return n;
}

static void
rt_handlers(void (**h)(int))
{
	int i;

	for (i = 0; i < nr_rt; i++) {
		struct sigaction sa;

		sigaction(SIGRTMIN + i, NULL, &sa);
		h[i] = sa.sa_handler;
	}
}

static int
setup(void **state)
{
	struct net_port_conf pc;
	int before[MAX_FDS], after[MAX_FDS], nb, na, i, j;

	(void)state;
	nr_rt = RTE_MIN(SIGRTMAX - SIGRTMIN + 1, MAX_RT);
	/* an application's own real-time handler, to be kept */
	signal(SIGRTMAX - 1, app_rt_handler);
	rt_handlers(rt_before);
	nb = tun_fds(before, MAX_FDS);
	memset(&pc, 0, sizeof(pc));
	pc.port_id = 0;
	pc.ip_be = rte_cpu_to_be_32(OUR_IP);
	pc.netmask_be = rte_cpu_to_be_32(0xffffff00);
	pc.nb_mbufs = 2048;
	port_rc = net_port_init(&pc, &port);
	rt_handlers(rt_after);
	na = tun_fds(after, MAX_FDS);
	for (i = 0; i < na; i++) {
		for (j = 0; j < nb && before[j] != after[i]; j++)
			;
		if (j == nb)
			new_fds[nr_new++] = after[i];
	}
	if (port_rc == 0)
		lc = net_lcore_create(port, 0, -1);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	net_lcore_free(lc);
	net_port_close(port);
	return 0;
}

static void
test_queue_fds_raise_no_signal(void **state)
{
	int i;

	(void)state;
	assert_int_equal(port_rc, 0);
	/* the queue's fd is opened by the queue set-up */
	assert_true(nr_new >= 1);
	for (i = 0; i < nr_new; i++) {
		assert_int_equal(fcntl(new_fds[i], F_GETFL) & O_ASYNC, 0);
		assert_int_equal(fcntl(new_fds[i], F_GETSIG), 0);
	}
}

static void
test_rt_handlers_kept(void **state)
{
	int i;

	(void)state;
	assert_int_equal(port_rc, 0);
	for (i = 0; i < nr_rt; i++)
		assert_ptr_equal(rt_after[i], rt_before[i]);
	assert_ptr_equal(rt_after[nr_rt - 2], app_rt_handler);
}

static int
if_up(const char *name, uint8_t mac[6], int *ifindex)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0), rc = 0;

	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		rc = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (rc == 0 && ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		rc = -errno;
	if (rc == 0 && ioctl(s, SIOCGIFHWADDR, &ifr) < 0)
		rc = -errno;
	if (rc == 0)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	if (rc == 0 && ioctl(s, SIOCGIFINDEX, &ifr) < 0)
		rc = -errno;
	if (rc == 0)
		*ifindex = ifr.ifr_ifindex;
	close(s);
	return rc;
}

/* The kernel side asks who has our address; the poll loop must read the
 * request (no signal announces it) and answer. */
static void
test_frame_from_kernel_answered(void **state)
{
	struct sockaddr_ll sll;
	struct rte_ether_addr ours;
	uint8_t kmac[6], f[64], in[256];
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);
	struct net_stats st;
	int ifindex = 0, s, i, answered = 0;

	(void)state;
	assert_int_equal(port_rc, 0);
	assert_non_null(lc);
	net_port_mac(port, ours.addr_bytes);
	assert_int_equal(if_up(TAP_IF, kmac, &ifindex), 0);
	s = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(RTE_ETHER_TYPE_ARP));
	assert_true(s >= 0);
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(RTE_ETHER_TYPE_ARP);
	sll.sll_ifindex = ifindex;
	assert_int_equal(bind(s, (struct sockaddr *)&sll, sizeof(sll)), 0);

	memset(f, 0, sizeof(f));
	memset(eth->dst_addr.addr_bytes, 0xff, 6);
	memcpy(eth->src_addr.addr_bytes, kmac, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = 6;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	memcpy(arp->arp_data.arp_sha.addr_bytes, kmac, 6);
	arp->arp_data.arp_sip = rte_cpu_to_be_32(PEER_IP);
	arp->arp_data.arp_tip = rte_cpu_to_be_32(OUR_IP);
	assert_int_equal(send(s, f, sizeof(f), 0), (ssize_t)sizeof(f));

	/* Bounded: 5000 polls 1 ms apart; the answer comes in the first. */
	for (i = 0; i < 5000 && !answered; i++) {
		ssize_t n;

		net_lcore_poll(lc, net_now_ns());
		while ((n = recv(s, in, sizeof(in), 0)) > 0) {
			const struct rte_ether_hdr *e = (const void *)in;
			const struct rte_arp_hdr *a = (const void *)(e + 1);

			if (n >= (ssize_t)(sizeof(*e) + sizeof(*a)) &&
			    rte_is_same_ether_addr(&e->src_addr, &ours) &&
			    a->arp_opcode ==
			    rte_cpu_to_be_16(RTE_ARP_OP_REPLY) &&
			    a->arp_data.arp_sip ==
			    rte_cpu_to_be_32(OUR_IP))
				answered = 1;
		}
		if (!answered)
			usleep(1000);
	}
	close(s);
	net_lcore_stats(lc, &st);
	assert_true(st.rx_pkts >= 1);
	assert_true(answered);
}

/* net_port_conf.tap_rx_signal leaves the PMD's signal on (port 1, never
 * up: no frame reaches it, so port 0's reads are not switched over). */
static void
test_rx_signal_kept_when_asked(void **state)
{
	struct net_port_conf pc;
	struct net_port *p1 = NULL;
	int before[MAX_FDS], after[MAX_FDS], nb, na, i, j, armed = 0;

	(void)state;
	nb = tun_fds(before, MAX_FDS);
	memset(&pc, 0, sizeof(pc));
	pc.port_id = 1;
	pc.ip_be = rte_cpu_to_be_32(OUR_IP + 1);
	pc.netmask_be = rte_cpu_to_be_32(0xffffff00);
	pc.nb_mbufs = 2048;
	pc.tap_rx_signal = true;
	assert_int_equal(net_port_init(&pc, &p1), 0);
	na = tun_fds(after, MAX_FDS);
	for (i = 0; i < na; i++) {
		for (j = 0; j < nb && before[j] != after[i]; j++)
			;
		if (j == nb && (fcntl(after[i], F_GETFL) & O_ASYNC) &&
		    fcntl(after[i], F_GETSIG) >= SIGRTMIN)
			armed++;
	}
	net_port_close(p1);
	assert_true(armed >= 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_fds_raise_no_signal),
		cmocka_unit_test(test_rt_handlers_kept),
		cmocka_unit_test(test_frame_from_kernel_answered),
		/* last: the PMD's trigger is process-wide */
		cmocka_unit_test(test_rx_signal_kept_when_asked),
	};
	char fp[64];
	char *argv[] = { "test_net_tap_rx", "--no-pci", "--no-huge", "-m",
		"256", "-l", "0", fp, "--vdev=net_tap0,iface=" TAP_IF,
		"--vdev=net_tap1,iface=" TAP_IF "s",
		"--log-level=pmd.net.tap:error", NULL };

	if (unshare(CLONE_NEWNET) != 0) {
		fprintf(stderr, "test_net_tap_rx: unshare(CLONE_NEWNET): %s "
			"(needs root)\n", strerror(errno));
		return 1;
	}
	snprintf(fp, sizeof(fp), "--file-prefix=fsn_ut_tap_%d", (int)getpid());
	if (rte_eal_init(RTE_DIM(argv) - 1, argv) < 0) {
		fprintf(stderr, "test_net_tap_rx: EAL init failed\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
