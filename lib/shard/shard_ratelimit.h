/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Per-client request rate limit (config key rate_limit, as larql-server's
 * --rate-limit "N/sec|min|hour"): a token bucket of N requests refilled
 * at N per period, one per client address.
 *
 * The bucket is kept as GCRA's theoretical arrival time (ITU-T I.371),
 * one u64 per client: with T = period/N and tolerance (N - 1)·T, a
 * request at t is allowed when tat - t <= tolerance, and moves tat to
 * max(tat, t) + T. That admits exactly what a bucket of N tokens refilled
 * every T admits, without a division or a float per request.
 *
 * The table is one network lcore's (no lock, no atomics): a fixed number
 * of 8-way sets, found by a seeded hash of the address. A client absent
 * from the table has a full bucket, so a slot whose tat has passed is
 * free. A set whose 8 clients are all still owed tokens gives up the one
 * nearest to full: memory stays bounded whatever the number of
 * addresses, and only a set of 8 throttled clients at once can lose
 * (part of) one's debt. rte_hash has no eviction, and a full hash must
 * neither refuse new clients nor grow on the data path.
 *
 * Plain C (no EAL): unit-tested with a virtual clock.
 */
#ifndef FFN_SHARD_RATELIMIT_H
#define FFN_SHARD_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

#define SHARD_RL_WAYS 8

/** A client: an IPv6 address, or an IPv4 one as ::ffff:a.b.c.d. */
struct shard_rl_addr {
	uint8_t b[16];
};

struct shard_rl_slot {
	struct shard_rl_addr addr;
	uint64_t tat;			/**< ns; 0: free */
};

struct shard_rl {
	uint64_t t_ns;		/**< emission interval, period / N */
	uint64_t tol_ns;		/**< (N - 1) * t_ns */
	uint64_t seed;
	uint32_t set_mask;		/**< sets - 1 */
	struct shard_rl_slot *slots;	/**< sets * SHARD_RL_WAYS */
};

/**
 * A limiter of n requests per period_s seconds, holding at least
 * min_clients clients (rounded up to whole sets, a power of two).
 * n >= 1, period_s >= 1. seed varies the hash (a random one per table,
 * so no client can aim its address at another's set).
 * Returns 0, -EINVAL or -ENOMEM.
 */
int shard_rl_init(struct shard_rl *rl, uint32_t n, uint32_t period_s,
		  uint32_t min_clients, uint64_t seed);
void shard_rl_free(struct shard_rl *rl);

/**
 * One request of addr at now_ns (a clock that never goes back).
 * Returns 0 when it is allowed (and counted), else the ns until a request
 * of addr would be (it is not counted: refused requests cost nothing).
 */
uint64_t shard_rl_take(struct shard_rl *rl, const struct shard_rl_addr *addr,
		       uint64_t now_ns);

/** addr of the IPv4 address ip (host byte order). */
void shard_rl_addr_v4(struct shard_rl_addr *addr, uint32_t ip);

/**
 * The client named by an X-Forwarded-For value (the de facto header
 * RFC 7239 §4 standardised as Forwarded: a comma-separated list of
 * addresses, the client's first): its last element, the address
 * the proxy in front of this shard appended. The elements before it are
 * whatever the client sent, so trusting them would let any client
 * choose its bucket. IPv4 or IPv6, optional surrounding whitespace.
 * Returns true and fills addr, or false (absent or not an address).
 */
bool shard_rl_addr_xff(struct shard_rl_addr *addr, const char *v,
		       size_t len);

#endif /* FFN_SHARD_RATELIMIT_H */
