/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef FFN_TCP_CKSUM_H
#define FFN_TCP_CKSUM_H

/**
 * @file
 * One's complement sum (RFC 1071) over part of an mbuf chain.
 *
 * DPDK 22.11's rte_raw_cksum_mbuf() (and rte_ipv4_udptcp_cksum_mbuf(),
 * built on it) byte-swaps the truncated low 16 bits of a segment's
 * unreduced 32-bit sum when the segment starts at an odd offset, dropping
 * its carries: chains whose segments have odd lengths (a copied HTTP head
 * followed by a zero-copy body) get wrong checksums. This one reduces each
 * segment's sum to 16 bits before the swap (RFC 1071 §2(B): byte order
 * independence).
 */

#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

/** Unreduced-free 16-bit sum of len bytes of m from off (not inverted).
 *  Returns -1 when the chain is shorter than off + len. */
static inline int
tcp_cksum_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len,
	       uint16_t *out)
{
	uint64_t sum = 0;
	uint32_t done = 0;

	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (len > 0) {
		uint32_t seglen;
		uint16_t t;

		if (m == NULL)
			return -1;
		seglen = m->data_len - off;
		if (seglen > len)
			seglen = len;
		t = __rte_raw_cksum_reduce(__rte_raw_cksum(
			rte_pktmbuf_mtod_offset(m, const void *, off),
			seglen, 0));
		if (done & 1)
			t = rte_bswap16(t);
		sum += t;
		done += seglen;
		len -= seglen;
		off = 0;
		m = m->next;
	}
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	*out = (uint16_t)sum;
	return 0;
}

#endif /* FFN_TCP_CKSUM_H */
