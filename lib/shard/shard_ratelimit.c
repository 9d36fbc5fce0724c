/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Per-client rate limit: GCRA over a set-associative table. See
 * shard_ratelimit.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shard_ratelimit.h"

#define NS_PER_S 1000000000ull

int
shard_rl_init(struct shard_rl *rl, uint32_t n, uint32_t period_s,
	      uint32_t min_clients, uint64_t seed)
{
	uint32_t sets = 1;

	memset(rl, 0, sizeof(*rl));
	if (n == 0 || period_s == 0)
		return -EINVAL;
	while ((uint64_t)sets * SHARD_RL_WAYS < min_clients &&
	       sets < (1u << 24))
		sets <<= 1;
	rl->slots = calloc((size_t)sets * SHARD_RL_WAYS, sizeof(*rl->slots));
	if (rl->slots == NULL)
		return -ENOMEM;
	/* period_s <= 2^32 s and n >= 1: no overflow; T >= 1 ns keeps
	 * every allowed request moving tat forward. */
	rl->t_ns = (uint64_t)period_s * NS_PER_S / n;
	if (rl->t_ns == 0)
		rl->t_ns = 1;
	rl->tol_ns = (uint64_t)(n - 1) * rl->t_ns;
	rl->seed = seed;
	rl->set_mask = sets - 1;
	return 0;
}

void
shard_rl_free(struct shard_rl *rl)
{
	free(rl->slots);
	memset(rl, 0, sizeof(*rl));
}

/* A keyed mix of the 16 bytes (two rounds of a 64-bit multiply-xorshift
 * per half): not cryptographic, but with a secret seed a client cannot
 * tell which set its address lands in. */
static uint32_t
set_of(const struct shard_rl *rl, const struct shard_rl_addr *a)
{
	uint64_t h0, h1, h = rl->seed;

	memcpy(&h0, a->b, 8);
	memcpy(&h1, a->b + 8, 8);
	h ^= h0;
	h *= 0x9e3779b97f4a7c15ull;
	h ^= h >> 29;
	h ^= h1;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (uint32_t)h & rl->set_mask;
}

uint64_t
shard_rl_take(struct shard_rl *rl, const struct shard_rl_addr *addr,
	      uint64_t now_ns)
{
	struct shard_rl_slot *set = rl->slots +
		(size_t)set_of(rl, addr) * SHARD_RL_WAYS;
	struct shard_rl_slot *s = NULL, *victim = &set[0];
	uint64_t tat;

	for (unsigned int i = 0; i < SHARD_RL_WAYS; i++) {
		if (set[i].tat != 0 &&
		    memcmp(&set[i].addr, addr, sizeof(*addr)) == 0) {
			s = &set[i];
			break;
		}
		/* Free, or the bucket nearest to full. */
		if (set[i].tat < victim->tat)
			victim = &set[i];
	}
	if (s == NULL) {
		/* Absent: a full bucket. The victim's client, if its tat
		 * has passed, had a full bucket too and loses nothing. */
		s = victim;
		s->addr = *addr;
		s->tat = 0;
	}
	tat = s->tat > now_ns ? s->tat : now_ns;
	if (tat - now_ns > rl->tol_ns) {
		/* Refused: allowed again once tat - t = tolerance. */
		return tat - rl->tol_ns - now_ns;
	}
	s->tat = tat + rl->t_ns;
	return 0;
}

void
shard_rl_addr_v4(struct shard_rl_addr *addr, uint32_t ip)
{
	memset(addr->b, 0, 10);
	addr->b[10] = 0xff;
	addr->b[11] = 0xff;
	addr->b[12] = (uint8_t)(ip >> 24);
	addr->b[13] = (uint8_t)(ip >> 16);
	addr->b[14] = (uint8_t)(ip >> 8);
	addr->b[15] = (uint8_t)ip;
}

bool
shard_rl_addr_xff(struct shard_rl_addr *addr, const char *v, size_t len)
{
	char buf[INET6_ADDRSTRLEN];
	size_t a, b = len;
	struct in_addr v4;

	if (v == NULL)
		return false;
	a = len;
	while (a > 0 && v[a - 1] != ',')
		a--;
	while (a < b && (v[a] == ' ' || v[a] == '\t'))
		a++;
	while (b > a && (v[b - 1] == ' ' || v[b - 1] == '\t'))
		b--;
	if (b == a || b - a >= sizeof(buf))
		return false;
	memcpy(buf, v + a, b - a);
	buf[b - a] = '\0';
	if (inet_pton(AF_INET, buf, &v4) == 1) {
		shard_rl_addr_v4(addr, ntohl(v4.s_addr));
		return true;
	}
	return inet_pton(AF_INET6, buf, addr->b) == 1;
}
