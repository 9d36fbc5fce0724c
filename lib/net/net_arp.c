/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* ARP (RFC 826) for Ethernet/IPv4: answer for our address, resolve next
 * hops through a lock-free port-wide cache with timeouts, park a bounded
 * number of packets per unresolved hop on the sending lcore, retry the
 * request and give up (RFC 1122 §2.3.2.1, §2.3.2.2). */

#include <errno.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_jhash.h>

#include "net_priv.h"

/* Probe at most this many slots: a full neighbourhood means the table is
 * too small, counted as drop_arp_table_full. */
#define NET_ARP_PROBES 32
#define NET_ARP_FRAME_PAD 18	/* 28-byte ARP + 18 = 46: minimum frame */

static inline uint32_t
arp_slot(const struct net_port *p, uint32_t ip_be)
{
	return rte_jhash_1word(ip_be, 0x9e3779b9) & p->arp_mask;
}

/* The entry of ip_be. With create, a free slot is claimed, or one whose
 * entry expired (now_ns) is taken over, so the table never stays full of
 * neighbours that have gone. */
static struct net_arp_entry *
arp_find(struct net_port *p, uint32_t ip_be, bool create, uint64_t now_ns,
		bool *full)
{
	uint32_t s = arp_slot(p, ip_be), i;
	struct net_arp_entry *stale = NULL;
	uint32_t stale_ip = 0;

	*full = false;
	for (i = 0; i < NET_ARP_PROBES && i <= p->arp_mask; i++) {
		struct net_arp_entry *e = &p->arp[(s + i) & p->arp_mask];
		uint32_t cur = __atomic_load_n(&e->ip_be, __ATOMIC_ACQUIRE);

		if (cur == ip_be)
			return e;
		if (cur != 0) {
			if (create && stale == NULL &&
					now_ns - __atomic_load_n(&e->updated_ns,
						__ATOMIC_RELAXED) >=
					p->arp_timeout_ns) {
				stale = e;
				stale_ip = cur;
			}
			continue;
		}
		if (!create)
			return NULL;
		if (__atomic_compare_exchange_n(&e->ip_be, &cur, ip_be, false,
				__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
				cur == ip_be)
			return e;
	}
	if (stale != NULL) {
		/* Invalid until the caller stores the new MAC; readers
		 * re-check ip_be after reading the MAC (arp_lookup_age). */
		__atomic_store_n(&stale->mac, 0, __ATOMIC_RELEASE);
		if (__atomic_compare_exchange_n(&stale->ip_be, &stale_ip, ip_be,
				false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
				stale_ip == ip_be)
			return stale;
	}
	*full = create;
	return NULL;
}

static inline uint64_t
mac_pack(const struct rte_ether_addr *a)
{
	uint64_t v = 0;

	memcpy(&v, a->addr_bytes, RTE_ETHER_ADDR_LEN);
	return v | NET_ARP_VALID;
}

static int
arp_lookup_age(struct net_port *p, uint32_t ip_be, uint64_t now_ns,
		struct rte_ether_addr *mac, uint64_t *age)
{
	bool full;
	struct net_arp_entry *e = arp_find(p, ip_be, false, now_ns, &full);
	uint64_t v, t;

	if (e == NULL)
		return -ENOENT;
	v = __atomic_load_n(&e->mac, __ATOMIC_ACQUIRE);
	t = __atomic_load_n(&e->updated_ns, __ATOMIC_RELAXED);
	/* Taken over by another address meanwhile (arp_find). */
	if (__atomic_load_n(&e->ip_be, __ATOMIC_ACQUIRE) != ip_be)
		return -ENOENT;
	*age = now_ns - t;
	if (!(v & NET_ARP_VALID) || *age >= p->arp_timeout_ns)
		return -ENOENT;
	memcpy(mac->addr_bytes, &v, RTE_ETHER_ADDR_LEN);
	return 0;
}

int
net_arp_lookup(struct net_port *p, uint32_t ip_be, uint64_t now_ns,
		struct rte_ether_addr *mac)
{
	uint64_t age;

	return arp_lookup_age(p, ip_be, now_ns, mac, &age);
}

void
net_arp_update(struct net_port *p, uint32_t ip_be,
		const struct rte_ether_addr *mac, uint64_t now_ns, bool create,
		struct net_stats *st)
{
	bool full;
	struct net_arp_entry *e = arp_find(p, ip_be, create, now_ns, &full);

	if (e == NULL) {
		if (full)
			st->drop_arp_table_full++;
		return;
	}
	/* Time first: a reader that sees the new MAC sees a fresh stamp. */
	__atomic_store_n(&e->updated_ns, now_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&e->mac, mac_pack(mac), __ATOMIC_RELEASE);
}

/* Build and queue an ARP packet (request or reply). */
static void
arp_send(struct net_lcore *lc, uint16_t op, const struct rte_ether_addr *eth_dst,
		const struct rte_ether_addr *tha, uint32_t sip_be, uint32_t tip_be)
{
	struct rte_mbuf *m = net_alloc(lc);
	struct rte_arp_hdr *a;

	if (m == NULL)
		return;
	a = (struct rte_arp_hdr *)rte_pktmbuf_append(m,
			sizeof(*a) + NET_ARP_FRAME_PAD);
	if (a == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memset(a, 0, sizeof(*a) + NET_ARP_FRAME_PAD);
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = RTE_ETHER_ADDR_LEN;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(op);
	rte_ether_addr_copy(&lc->port->mac, &a->arp_data.arp_sha);
	a->arp_data.arp_sip = sip_be;
	rte_ether_addr_copy(tha, &a->arp_data.arp_tha);
	a->arp_data.arp_tip = tip_be;
	net_eth_output(lc, m, eth_dst, RTE_ETHER_TYPE_ARP);
}

static const struct rte_ether_addr bcast = {
	.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
static const struct rte_ether_addr zero_mac;

void
net_arp_send_garp(struct net_lcore *lc)
{
	arp_send(lc, RTE_ARP_OP_REQUEST, &bcast, &zero_mac, lc->port->ip_be,
			lc->port->ip_be);
	lc->st.arp_garp_tx++;
}

static struct net_arp_asked *
arp_asked(struct net_lcore *lc, uint32_t ip_be)
{
	/* Fibonacci hashing: spoofed floods walk consecutive addresses */
	return &lc->asked[(uint32_t)(ip_be * 2654435761u) >>
			  (32 - __builtin_ctz(NET_ARP_ASKED))];
}

static void
arp_request(struct net_lcore *lc, uint32_t ip_be)
{
	struct net_arp_asked *a = arp_asked(lc, ip_be);

	arp_send(lc, RTE_ARP_OP_REQUEST, &bcast, &zero_mac, lc->port->ip_be,
			ip_be);
	lc->st.arp_req_tx++;
	a->ip_be = ip_be;
	a->ns = lc->now_ns;
}

/* Lookup for output.  An entry in use that nears its end is re-asked for
 * (at most once per retry interval per lcore) while it still serves, so
 * a busy connection never stalls on expiry (RFC 1122 §2.3.2.1). */
int
net_arp_resolve(struct net_lcore *lc, uint32_t ip_be,
		struct rte_ether_addr *mac)
{
	struct net_port *p = lc->port;
	uint64_t age, margin = (p->arp_retries + 1) * p->arp_retry_ns;
	int rc = arp_lookup_age(p, ip_be, lc->now_ns, mac, &age);

	if (rc == 0 && age + margin >= p->arp_timeout_ns &&
			(lc->refresh_ip != ip_be ||
			 lc->now_ns - lc->refresh_ns >= p->arp_retry_ns)) {
		lc->refresh_ip = ip_be;
		lc->refresh_ns = lc->now_ns;
		arp_request(lc, ip_be);
	}
	return rc;
}

static void
pending_release(struct net_lcore *lc, struct net_pending *pd,
		const struct rte_ether_addr *mac)
{
	uint16_t i;

	for (i = 0; i < pd->n; i++) {
		if (mac != NULL) {
			net_eth_output(lc, pd->pkts[i], mac,
					RTE_ETHER_TYPE_IPV4);
		} else {
			rte_pktmbuf_free(pd->pkts[i]);
			lc->st.drop_arp_timeout++;
		}
	}
	pd->n = 0;
	pd->ip_be = 0;
	lc->npending--;
}

void
net_arp_park(struct net_lcore *lc, struct rte_mbuf *m, uint32_t hop_be)
{
	struct net_pending *pd = NULL, *free_pd = NULL;
	struct net_arp_asked *a;
	unsigned int i;

	for (i = 0; i < NET_PENDING_HOPS; i++) {
		if (lc->pending[i].ip_be == hop_be) {
			pd = &lc->pending[i];
			break;
		}
		if (lc->pending[i].ip_be == 0 && free_pd == NULL)
			free_pd = &lc->pending[i];
	}
	if (pd == NULL) {
		if (free_pd == NULL) {
			/* All hops unresolved: give up on the one asked most
			 * often (oldest on ties). Refusing the new hop would
			 * let a flood of SYNs from spoofed on-link addresses
			 * keep every slot and lock real peers out. */
			struct net_pending *old = &lc->pending[0];

			for (i = 1; i < NET_PENDING_HOPS; i++) {
				struct net_pending *c = &lc->pending[i];

				if (c->tries > old->tries ||
				    (c->tries == old->tries &&
				     c->next_ns < old->next_ns))
					old = c;
			}
			lc->st.drop_arp_pending_full += old->n;
			for (i = 0; i < old->n; i++)
				rte_pktmbuf_free(old->pkts[i]);
			old->n = 0;
			old->ip_be = 0;
			lc->npending--;
			free_pd = old;
		}
		pd = free_pd;
		pd->ip_be = hop_be;
		pd->n = 0;
		lc->npending++;
		a = arp_asked(lc, hop_be);
		if (a->ip_be == hop_be &&
		    lc->now_ns - a->ns < lc->port->arp_retry_ns) {
			/* RFC 1122 §2.3.2.1: "a mechanism to prevent ARP
			 * flooding (repeatedly sending an ARP Request for the
			 * same IP address, at a high rate) MUST be included";
			 * at most one per retry interval. Without it, a SYN
			 * flood from more spoofed sources than there are
			 * pending slots cost a request per SYN, and on
			 * net_tap a write each. net_arp_poll asks when due. */
			pd->tries = 0;
			pd->next_ns = a->ns + lc->port->arp_retry_ns;
			lc->st.arp_req_limited++;
		} else {
			pd->tries = 1;
			pd->next_ns = lc->now_ns + lc->port->arp_retry_ns;
			arp_request(lc, hop_be);
		}
	}
	if (pd->n == NET_PENDING_PKTS) {
		/* RFC 1122 §2.3.2.2: keep the latest; drop the oldest. */
		rte_pktmbuf_free(pd->pkts[0]);
		memmove(&pd->pkts[0], &pd->pkts[1],
			(NET_PENDING_PKTS - 1) * sizeof(pd->pkts[0]));
		pd->n--;
		lc->st.drop_arp_pending_full++;
	}
	pd->pkts[pd->n++] = m;
}

void
net_arp_poll(struct net_lcore *lc)
{
	struct rte_ether_addr mac;
	unsigned int i;

	if (lc->npending == 0)
		return;
	for (i = 0; i < NET_PENDING_HOPS; i++) {
		struct net_pending *pd = &lc->pending[i];

		if (pd->ip_be == 0)
			continue;
		/* The reply may have been learnt by another lcore. */
		if (net_arp_lookup(lc->port, pd->ip_be, lc->now_ns, &mac) == 0) {
			pending_release(lc, pd, &mac);
			continue;
		}
		if (lc->now_ns < pd->next_ns)
			continue;
		if (pd->tries >= lc->port->arp_retries) {
			pending_release(lc, pd, NULL);
			continue;
		}
		pd->tries++;
		pd->next_ns = lc->now_ns + lc->port->arp_retry_ns;
		arp_request(lc, pd->ip_be);
	}
}

void
net_arp_flush_pending(struct net_lcore *lc)
{
	unsigned int i;

	for (i = 0; i < NET_PENDING_HOPS; i++)
		if (lc->pending[i].ip_be != 0)
			pending_release(lc, &lc->pending[i], NULL);
}

/* RFC 826 "Packet reception": merge the sender if known, add it if the
 * packet is for us, answer requests for our address. */
void
net_arp_input(struct net_lcore *lc, struct rte_mbuf *m)
{
	struct net_port *p = lc->port;
	struct rte_arp_hdr *a;
	struct rte_ether_addr sha;
	uint32_t sip, tip;
	uint16_t op;

	if (rte_pktmbuf_data_len(m) < sizeof(*a)) {
		lc->st.drop_arp_bad++;
		goto drop;
	}
	a = rte_pktmbuf_mtod(m, struct rte_arp_hdr *);
	op = rte_be_to_cpu_16(a->arp_opcode);
	if (a->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
			a->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
			a->arp_hlen != RTE_ETHER_ADDR_LEN || a->arp_plen != 4 ||
			(op != RTE_ARP_OP_REQUEST && op != RTE_ARP_OP_REPLY) ||
			rte_is_multicast_ether_addr(&a->arp_data.arp_sha)) {
		lc->st.drop_arp_bad++;
		goto drop;
	}
	lc->st.arp_rx++;
	sha = a->arp_data.arp_sha;
	sip = a->arp_data.arp_sip;
	tip = a->arp_data.arp_tip;
	/* Sender 0.0.0.0 is an RFC 5227 probe: nothing to learn. A new
	 * entry only for an on-link sender asking us (RFC 826 adds it when
	 * we are the target): we never send to an off-link address
	 * directly, so learning those only lets anyone fill the table. */
	if (sip != 0 && sip != p->ip_be)
		net_arp_update(p, sip, &sha, lc->now_ns, tip == p->ip_be &&
				((sip ^ p->ip_be) & p->netmask_be) == 0,
				&lc->st);
	if (tip != p->ip_be || sip == p->ip_be) {
		lc->st.drop_arp_not_ours++;
		goto drop;
	}
	if (op == RTE_ARP_OP_REPLY) {
		lc->st.arp_reply_rx++;
		rte_pktmbuf_free(m);
		net_arp_poll(lc);
		return;
	}
	/* Turn the request around in place. */
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	rte_ether_addr_copy(&sha, &a->arp_data.arp_tha);
	a->arp_data.arp_tip = sip;
	rte_ether_addr_copy(&p->mac, &a->arp_data.arp_sha);
	a->arp_data.arp_sip = p->ip_be;
	m->ol_flags = 0;
	lc->st.arp_req_answered++;
	net_eth_output(lc, m, &sha, RTE_ETHER_TYPE_ARP);
	if (lc->npending)
		net_arp_poll(lc);
	return;
drop:
	rte_pktmbuf_free(m);
}
