/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The per-client rate limit (shard_ratelimit.h) on a virtual clock: a
 * bucket of N, refilled at N per period, the wait it reports, clients
 * apart, the table's bound, and the client an X-Forwarded-For names.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shard_ratelimit.h"

#define SEC 1000000000ull
#define T0 (1000 * SEC)

static struct shard_rl_addr
v4(uint32_t ip)
{
	struct shard_rl_addr a;

	shard_rl_addr_v4(&a, ip);
	return a;
}

/* How many of `tries` requests at one instant are admitted. */
static unsigned int
burst(struct shard_rl *rl, const struct shard_rl_addr *a, uint64_t t,
      unsigned int tries)
{
	unsigned int ok = 0;

	for (unsigned int i = 0; i < tries; i++)
		ok += shard_rl_take(rl, a, t) == 0;
	return ok;
}

/* N at once, then none until 1/N of the period has passed; the wait
 * reported is exactly that. */
static void
test_bucket(void **state)
{
	struct shard_rl rl;
	struct shard_rl_addr a = v4(0xc6120301);

	(void)state;
	assert_int_equal(shard_rl_init(&rl, 5, 1, 16, 42), 0);
	assert_int_equal(burst(&rl, &a, T0, 5), 5);
	/* The sixth: one token comes 200 ms after the first was taken. */
	assert_true(shard_rl_take(&rl, &a, T0) == SEC / 5);
	assert_true(shard_rl_take(&rl, &a, T0 + SEC / 10) == SEC / 10);
	/* Refused requests cost nothing: still exactly at 200 ms. */
	assert_true(shard_rl_take(&rl, &a, T0 + SEC / 5 - 1) == 1);
	assert_true(shard_rl_take(&rl, &a, T0 + SEC / 5) == 0);
	assert_true(shard_rl_take(&rl, &a, T0 + SEC / 5) != 0);
	/* A whole period idle refills the bucket, never beyond N. */
	assert_int_equal(burst(&rl, &a, T0 + 10 * SEC, 7), 5);
	shard_rl_free(&rl);
}

/* A steady client at the rate is never refused; over it, the bucket
 * and the refill are all it gets. */
static void
test_sustained_rate(void **state)
{
	struct shard_rl rl;
	struct shard_rl_addr a = v4(0xc6120302);
	const uint64_t t1 = T0 + 500 * SEC;
	unsigned int ok = 0;

	(void)state;
	/* 120/min: one per 500 ms, a burst of 120. */
	assert_int_equal(shard_rl_init(&rl, 120, 60, 16, 1), 0);
	for (unsigned int i = 0; i < 1000; i++)
		assert_true(shard_rl_take(&rl, &a, T0 + i * (SEC / 2)) == 0);
	/* Then 8/s for a minute: the full bucket (120) at once, and one
	 * per 500 ms after (by 59.875 s, 119 more). */
	for (unsigned int i = 0; i < 480; i++)
		ok += shard_rl_take(&rl, &a, t1 + i * (SEC / 8)) == 0;
	assert_int_equal(ok, 120 + 119);
	shard_rl_free(&rl);
}

/* Each address has its own bucket; IPv4 and its v4-mapped IPv6 form are
 * the same client. */
static void
test_clients_apart(void **state)
{
	struct shard_rl rl;
	struct shard_rl_addr a = v4(0xc6120303), b = v4(0xc6120304), m;

	(void)state;
	assert_int_equal(shard_rl_init(&rl, 2, 3600, 16, 7), 0);
	assert_int_equal(burst(&rl, &a, T0, 3), 2);
	assert_int_equal(burst(&rl, &b, T0, 3), 2);
	assert_true(shard_rl_addr_xff(&m, "::ffff:198.18.3.3", 17));
	assert_memory_equal(&m, &a, sizeof(a));
	assert_true(shard_rl_take(&rl, &m, T0) != 0);
	/* 2/hour: the next in 30 minutes. */
	assert_true(shard_rl_take(&rl, &a, T0) == 1800 * SEC);
	shard_rl_free(&rl);
}

/* The table is bounded: far more clients than slots, all at once and
 * all owing afterwards, never make it fail or refuse a newcomer. */
static void
test_bounded_table(void **state)
{
	struct shard_rl rl;

	(void)state;
	assert_int_equal(shard_rl_init(&rl, 1, 60, 64, 3), 0);
	assert_int_equal((rl.set_mask + 1) * SHARD_RL_WAYS, 64);
	for (uint32_t i = 0; i < 10000; i++) {
		struct shard_rl_addr o = v4(0xc6130000 + i);

		assert_true(shard_rl_take(&rl, &o, T0) == 0);
	}
	assert_int_equal((rl.set_mask + 1) * SHARD_RL_WAYS, 64);
	shard_rl_free(&rl);
}

/* Eviction in one set: build a table of one set (8 slots) and fill it
 * with 8 clients that all owe; a ninth is admitted and displaces the
 * client whose bucket refills first. */
static void
test_eviction_order(void **state)
{
	struct shard_rl rl;
	struct shard_rl_addr c[9];

	(void)state;
	assert_int_equal(shard_rl_init(&rl, 1, 100, 1, 5), 0);
	assert_int_equal(rl.set_mask, 0);
	for (int i = 0; i < 9; i++)
		c[i] = v4(0xc6120400 + i);
	/* Client i takes its one token at T0 + i s: it owes until
	 * T0 + (100 + i) s. */
	for (int i = 0; i < 8; i++)
		assert_true(shard_rl_take(&rl, &c[i], T0 + i * SEC) == 0);
	for (int i = 0; i < 8; i++)
		assert_true(shard_rl_take(&rl, &c[i], T0 + 10 * SEC) != 0);
	/* The ninth: admitted; client 0 (the earliest debt) forgotten. */
	assert_true(shard_rl_take(&rl, &c[8], T0 + 10 * SEC) == 0);
	assert_true(shard_rl_take(&rl, &c[0], T0 + 10 * SEC) == 0);
	/* That evicted client 1; the others still owe. */
	for (int i = 2; i < 9; i++)
		assert_true(shard_rl_take(&rl, &c[i], T0 + 10 * SEC) != 0);
	shard_rl_free(&rl);
}

static void
test_init_errors(void **state)
{
	struct shard_rl rl;

	(void)state;
	assert_int_equal(shard_rl_init(&rl, 0, 1, 16, 0), -EINVAL);
	assert_int_equal(shard_rl_init(&rl, 1, 0, 16, 0), -EINVAL);
	/* 10^9 a second: 1 ns apart, a burst of 10^9. */
	assert_int_equal(shard_rl_init(&rl, 1000000000, 1, 1, 0), 0);
	assert_true(rl.t_ns == 1);
	shard_rl_free(&rl);
	/* 1 an hour: the whole hour apart. */
	assert_int_equal(shard_rl_init(&rl, 1, 3600, 1, 0), 0);
	assert_true(rl.t_ns == 3600 * SEC && rl.tol_ns == 0);
	shard_rl_free(&rl);
}

static void
expect_xff(const char *v, bool ok, uint32_t ip)
{
	struct shard_rl_addr a, want = v4(ip);

	assert_int_equal(shard_rl_addr_xff(&a, v, strlen(v)), ok);
	if (ok && ip != 0)
		assert_memory_equal(&a, &want, sizeof(a));
}

/* The last element: what the proxy in front appended. */
static void
test_xff(void **state)
{
	struct shard_rl_addr a;

	(void)state;
	expect_xff("198.18.3.9", true, 0xc6120309);
	expect_xff("  198.18.3.9\t", true, 0xc6120309);
	expect_xff("1.2.3.4, 198.18.3.9", true, 0xc6120309);
	expect_xff("1.2.3.4,198.18.3.9", true, 0xc6120309);
	/* The client's own claims come first and are not believed. */
	expect_xff("198.18.3.9, 6.6.6.6", true, 0x06060606);
	expect_xff("198.18.3.9, unknown", false, 0);
	expect_xff("198.18.3.9,", false, 0);
	expect_xff("", false, 0);
	expect_xff("198.18.3.9:8080", false, 0);
	expect_xff("1.2.3.4, 2001:db8::1", true, 0);
	assert_true(shard_rl_addr_xff(&a, "2001:db8::1", 11));
	assert_int_equal(a.b[0], 0x20);
	assert_int_equal(a.b[15], 1);
	assert_false(shard_rl_addr_xff(&a, NULL, 0));
	/* Not NUL-terminated: only len bytes are read. */
	assert_true(shard_rl_addr_xff(&a, "198.18.3.97", 10));
	expect_xff("198.18.3.9", true, 0xc6120309);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket),
		cmocka_unit_test(test_sustained_rate),
		cmocka_unit_test(test_clients_apart),
		cmocka_unit_test(test_bounded_table),
		cmocka_unit_test(test_eviction_order),
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test(test_xff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
