/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Admission of requests by client: the per-address rate limit
 * (rate_limit, trust_forwarded_for) on a network lcore's listeners. The
 * limiter itself is shard_ratelimit.c; this file picks the client and
 * the clock.
 */
#include <rte_byteorder.h>
#include <rte_random.h>

#include "shard_srv_priv.h"

int
shard_listener_rl_init(struct shard_listener *l)
{
	const struct shard_limits *lim = &l->su->lim;

	if (lim->rate_limit_n == 0)
		return 0;
	/* Room for twice the connections the unit takes on this lcore:
	 * each has one address, and a closed one's debt outlives it. */
	return shard_rl_init(&l->rl, lim->rate_limit_n,
			     lim->rate_limit_period_s,
			     2 * lim->max_connections, rte_rand());
}

void
shard_listener_rl_fini(struct shard_listener *l)
{
	shard_rl_free(&l->rl);
}

uint32_t
shard_conn_admit(struct shard_conn *c, const struct http_request *rq)
{
	struct shard_listener *l = c->l;
	struct shard_rl_addr a;
	uint64_t wait;

	if (l == NULL || l->rl.slots == NULL)
		return 0;
	if (!l->su->lim.trust_forwarded_for ||
	    !shard_rl_addr_xff(&a, rq->forwarded_for.p,
			       rq->forwarded_for.len)) {
		uint32_t lip, rip;
		uint16_t lport, rport;

		tcp_conn_addr(c->tc, &lip, &lport, &rip, &rport);
		shard_rl_addr_v4(&a, rte_be_to_cpu_32(rip));
	}
	wait = shard_rl_take(&l->rl, &a, shard_lc_now(c->lc));
	if (wait == 0)
		return 0;
	/* Whole seconds, rounded up (RFC 9110 §10.2.3: delay-seconds). */
	return (uint32_t)((wait + 999999999ull) / 1000000000ull);
}
