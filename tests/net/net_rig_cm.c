/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* cmocka helpers shared by the lib/net L2/L3 tests. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_arp.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "net_rig.h"
#include "net_rig_cm.h"

const struct rte_ether_addr rig_bcast = {
	.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };

int
setup(void **state)
{
	static struct rig r;

	if (rig_open(&r, NULL) != 0)
		return -1;
	rig_drain(&r);
	*state = &r;
	return 0;
}

int
teardown(void **state)
{
	rig_close(*state);
	return 0;
}

void
assert_arp_frame(const uint8_t *f, uint16_t len, const struct rte_ether_addr *dst,
		const struct rte_ether_addr *src, uint16_t op, uint32_t sip,
		const struct rte_ether_addr *tha, uint32_t tip)
{
	const struct rte_ether_hdr *e = (const struct rte_ether_hdr *)f;
	const struct rte_arp_hdr *a = (const struct rte_arp_hdr *)(e + 1);

	assert_true(len >= sizeof(*e) + sizeof(*a));
	assert_memory_equal(&e->dst_addr, dst, 6);
	assert_memory_equal(&e->src_addr, src, 6);
	assert_int_equal(rte_be_to_cpu_16(e->ether_type), RTE_ETHER_TYPE_ARP);
	assert_int_equal(rte_be_to_cpu_16(a->arp_hardware), RTE_ARP_HRD_ETHER);
	assert_int_equal(rte_be_to_cpu_16(a->arp_protocol),
			RTE_ETHER_TYPE_IPV4);
	assert_int_equal(a->arp_hlen, 6);
	assert_int_equal(a->arp_plen, 4);
	assert_int_equal(rte_be_to_cpu_16(a->arp_opcode), op);
	assert_memory_equal(&a->arp_data.arp_sha, src, 6);
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_sip), sip);
	assert_memory_equal(&a->arp_data.arp_tha, tha, 6);
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_tip), tip);
}

/* A TCP segment from the "TCP layer": 20-byte header, payload = tag. */
int
send_tcp(struct rig *r, uint32_t dst, uint32_t tag)
{
	struct rte_mbuf *m = net_alloc(r->lc);
	struct rte_tcp_hdr th;
	uint8_t *d;

	assert_non_null(m);
	memset(&th, 0, sizeof(th));
	th.src_port = rte_cpu_to_be_16(80);
	th.dst_port = rte_cpu_to_be_16(40000);
	th.sent_seq = rte_cpu_to_be_32(tag);
	th.data_off = 5 << 4;
	th.tcp_flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
	th.rx_win = rte_cpu_to_be_16(65535);
	d = (uint8_t *)rte_pktmbuf_append(m, sizeof(th) + 4);
	if (d == NULL)
		fail();
	memcpy(d, &th, sizeof(th));
	memcpy(d + sizeof(th), &tag, 4);
	m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;	/* net computes it */
	return net_ipv4_output(r->lc, m, rte_cpu_to_be_32(dst), IPPROTO_TCP);
}

/* Checks an IPv4/TCP frame to the peer and returns its tag. */
uint32_t
assert_tcp_frame(struct rig *r, const uint8_t *f, uint16_t n, uint32_t dst)
{
	const struct rte_ether_hdr *e = (const struct rte_ether_hdr *)f;
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(e + 1);
	const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(ip + 1);
	uint32_t tag;

	assert_int_equal(n, sizeof(*e) + sizeof(*ip) + sizeof(*th) + 4);
	assert_memory_equal(&e->dst_addr, &rig_peer_mac, 6);
	assert_memory_equal(&e->src_addr, &r->mac, 6);
	assert_int_equal(rte_be_to_cpu_16(e->ether_type), RTE_ETHER_TYPE_IPV4);
	assert_int_equal(ip->version_ihl, 0x45);
	assert_int_equal(rte_be_to_cpu_16(ip->total_length), n - sizeof(*e));
	assert_int_equal(ip->next_proto_id, IPPROTO_TCP);
	assert_int_equal(ip->time_to_live, 64);
	assert_int_equal(rte_be_to_cpu_32(ip->src_addr), RIG_IP);
	assert_int_equal(rte_be_to_cpu_32(ip->dst_addr), dst);
	assert_int_equal(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);
	assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, th), 0);
	memcpy(&tag, th + 1, 4);
	assert_int_equal(rte_be_to_cpu_32(th->sent_seq), tag);
	return tag;
}

/* Ask DPDK's telemetry socket for cmd, as an operator (or
 * usertools/dpdk-telemetry.py) would; the reply lands in out. */
void
rig_telemetry_get(const char *cmd, char *out, size_t cap)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	ssize_t n;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/dpdk_telemetry.v2",
			rte_eal_get_runtime_dir());
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	n = read(fd, out, cap - 1);	/* the greeting */
	assert_true(n > 0);
	assert_int_equal(write(fd, cmd, strlen(cmd)), (ssize_t)strlen(cmd));
	n = read(fd, out, cap - 1);
	assert_true(n > 0);
	out[n] = '\0';
	close(fd);
}

/* Value of "name": in a telemetry JSON reply. */
long long
rig_json_u64(const char *js, const char *name)
{
	char key[80];
	const char *p;
	long long v = -1;

	snprintf(key, sizeof(key), "\"%s\":", name);
	p = strstr(js, key);
	assert_non_null(p);
	assert_int_equal(sscanf(p + strlen(key), "%lld", &v), 1);
	return v;
}
