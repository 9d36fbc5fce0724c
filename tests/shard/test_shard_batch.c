/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The worker's batch wait (issue 4, "Compute scheduling": rows of
 * concurrent requests for the same layer batched up to batch_max_rows,
 * waiting no longer than batch_wait_us), shard_batch_wait() with a fake
 * clock: each call advances it one tick (hz 1000000, a tick is a µs), and
 * at ticks set by a test it stands for a network lcore, putting a job in
 * the jobs ring or a part in the parts ring. So every case is exact: how
 * many jobs were gathered, and how long the worker waited for them.
 * Rings on plain memory (rte_ring_init): no EAL.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shard_srv_priv.h"

#define HZ 1000000u		/* ticks a second: a tick is a µs */
#define MAX_EVENTS 8

struct event {
	uint64_t tick;		/* when (the clock's value) */
	struct rte_ring *ring;
	void *obj;
};

static uint64_t ticks;
static uint64_t step;		/* ticks per call */
static struct event events[MAX_EVENTS];
static unsigned int n_events;

/* The fake clock: step (1) ticks per call; due events enqueued first, as
 * if a network lcore had done it meanwhile. */
static uint64_t
clock_now(void)
{
	ticks += step;
	for (unsigned int i = 0; i < n_events; i++)
		if (events[i].ring != NULL && events[i].tick <= ticks) {
			assert_int_equal(rte_ring_enqueue(events[i].ring,
							  events[i].obj), 0);
			events[i].ring = NULL;
		}
	return ticks;
}

static void
at(uint64_t tick, struct rte_ring *ring, void *obj)
{
	assert_true(n_events < MAX_EVENTS);
	events[n_events++] = (struct event){ tick, ring, obj };
}

struct env {
	struct rte_ring *jobs, *parts;
	struct shard_job job[SHARD_BURST + 2];
	struct shard_part part;
};

static struct rte_ring *
ring_new(const char *name)
{
	ssize_t sz = rte_ring_get_memsize(64);
	struct rte_ring *r;

	assert_true(sz > 0);
	r = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL((size_t)sz,
						RTE_CACHE_LINE_SIZE));
	assert_non_null(r);
	assert_int_equal(rte_ring_init(r, name, 64,
				       RING_F_SP_ENQ | RING_F_SC_DEQ), 0);
	return r;
}

static int
setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return -1;
	e->jobs = ring_new("t_jobs");
	e->parts = ring_new("t_parts");
	for (unsigned int i = 0; i < SHARD_BURST + 2; i++)
		e->job[i].req.seq_len = 1;
	ticks = 1000;
	step = 1;
	n_events = 0;
	*state = e;
	return 0;
}

static int
teardown(void **state)
{
	struct env *e = *state;

	free(e->jobs);
	free(e->parts);
	free(e);
	return 0;
}

/* A second 1-row job arriving 50 µs into a 100 µs wait joins the first
 * (max 64 rows); the wait then goes on to its end for more. */
static void
test_wait_gathers_late_job(void **state)
{
	struct env *e = *state;
	struct shard_job *jobs[SHARD_BURST] = { &e->job[0] };
	unsigned int n;

	at(1050, e->jobs, &e->job[1]);
	n = shard_batch_wait(e->jobs, e->parts, jobs, 1, 64, 100, HZ,
			     clock_now);
	assert_int_equal(n, 2);
	assert_ptr_equal(jobs[0], &e->job[0]);
	assert_ptr_equal(jobs[1], &e->job[1]);
	/* waited the whole 100 µs (from its first look at the clock,
	 * tick 1001), not a tick more */
	assert_int_equal(ticks, 1101);
}

/* A job arriving after the wait is not waited for. */
static void
test_wait_ends(void **state)
{
	struct env *e = *state;
	struct shard_job *jobs[SHARD_BURST] = { &e->job[0] };
	unsigned int n;

	at(1200, e->jobs, &e->job[1]);
	n = shard_batch_wait(e->jobs, e->parts, jobs, 1, 64, 100, HZ,
			     clock_now);
	assert_int_equal(n, 1);
	assert_int_equal(ticks, 1101);
	assert_int_equal(rte_ring_count(e->jobs), 0);
}

/* The wait is batch_wait_us, at the clock's rate: 300 µs at 1 MHz is
 * 300 ticks, at 2 MHz 600. */
static void
test_wait_follows_config(void **state)
{
	struct env *e = *state;
	struct shard_job *jobs[SHARD_BURST] = { &e->job[0] };

	assert_int_equal(shard_batch_wait(e->jobs, e->parts, jobs, 1, 64,
					  300, HZ, clock_now), 1);
	assert_int_equal(ticks, 1000 + 1 + 300);
	ticks = 1000;
	assert_int_equal(shard_batch_wait(e->jobs, e->parts, jobs, 1, 64,
					  300, 2 * HZ, clock_now), 1);
	assert_int_equal(ticks, 1000 + 1 + 600);
	/* the largest configurable wait, a second, without overflow at a
	 * 4 GHz clock (a million ticks a call: 4001 calls) */
	ticks = 1000;
	step = 1000000;
	at(1000 + 3999999999ull, e->jobs, &e->job[1]);
	assert_int_equal(shard_batch_wait(e->jobs, e->parts, jobs, 1, 64,
					  1000000, 4000ull * HZ, clock_now),
			 2);
	assert_int_equal(ticks, 1000 + 4001ull * 1000000);
}

/* batch_wait_us 0: no wait, and nothing more taken even when it waits
 * in the ring. */
static void
test_wait_zero(void **state)
{
	struct env *e = *state;
	struct shard_job *jobs[SHARD_BURST] = { &e->job[0] };

	assert_int_equal(rte_ring_enqueue(e->jobs, &e->job[1]), 0);
	assert_int_equal(shard_batch_wait(e->jobs, e->parts, jobs, 1, 64, 0,
					  HZ, clock_now), 1);
	assert_int_equal(ticks, 1000);
	assert_int_equal(rte_ring_count(e->jobs), 1);
}

/* batch_max_rows reached ends the wait at once: 32 + 32 rows of 64
 * after 10 ticks of a 100-tick wait; a third job (tick 20) waits for the
 * next batch. */
static void
test_max_rows_ends_wait(void **state)
{
	struct env *e = *state;
	struct shard_job *jobs[SHARD_BURST] = { &e->job[0] };
	unsigned int n;

	e->job[0].req.seq_len = 32;
	e->job[1].req.seq_len = 32;
	at(1010, e->jobs, &e->job[1]);
	at(1020, e->jobs, &e->job[2]);
	n = shard_batch_wait(e->jobs, e->parts, jobs, 1, 64, 100, HZ,
			     clock_now);
	assert_int_equal(n, 2);
	assert_int_equal(ticks, 1010);
	assert_int_equal(rte_ring_count(e->jobs), 0);
	/* and with max 2, two 1-row jobs end it the same way */
	ticks = 1000;
	n_events = 0;
	jobs[0] = &e->job[2];
	at(1005, e->jobs, &e->job[3]);
	n = shard_batch_wait(e->jobs, e->parts, jobs, 1, 2, 100, HZ,
			     clock_now);
	assert_int_equal(n, 2);
	assert_int_equal(ticks, 1005);
}

/* A job of batch_max_rows rows or more, or a full burst, does not wait
 * at all. */
static void
test_full_does_not_wait(void **state)
{
	struct env *e = *state;
	struct shard_job *jobs[SHARD_BURST];

	e->job[0].req.seq_len = 64;
	jobs[0] = &e->job[0];
	assert_int_equal(shard_batch_wait(e->jobs, e->parts, jobs, 1, 64,
					  100, HZ, clock_now), 1);
	assert_int_equal(ticks, 1000);
	for (unsigned int i = 0; i < SHARD_BURST; i++)
		jobs[i] = &e->job[1 + i];
	assert_int_equal(shard_batch_wait(e->jobs, e->parts, jobs,
					  SHARD_BURST, 1000, 100, HZ,
					  clock_now), SHARD_BURST);
	assert_int_equal(ticks, 1000);
}

/* A split job in hand does not wait (its latency is the point); a part
 * of another worker's split job ends the wait. */
static void
test_split_does_not_wait(void **state)
{
	struct env *e = *state;
	struct shard_job *jobs[SHARD_BURST] = { &e->job[0], &e->job[1] };
	unsigned int n;

	e->job[1].n_parts = 2;
	assert_int_equal(shard_batch_wait(e->jobs, e->parts, jobs, 2, 64,
					  100, HZ, clock_now), 2);
	assert_int_equal(ticks, 1000);
	/* a whole request (JSON) with n_parts set is not split */
	e->job[1].whole = true;
	at(1030, e->jobs, &e->job[2]);
	n = shard_batch_wait(e->jobs, e->parts, jobs, 2, 64, 100, HZ,
			     clock_now);
	assert_int_equal(n, 3);
	assert_int_equal(ticks, 1101);
	ticks = 1000;
	n_events = 0;
	at(1040, e->parts, &e->part);
	at(1060, e->jobs, &e->job[3]);
	jobs[0] = &e->job[4];
	n = shard_batch_wait(e->jobs, e->parts, jobs, 1, 64, 100, HZ,
			     clock_now);
	assert_int_equal(n, 1);
	assert_int_equal(ticks, 1040);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_wait_gathers_late_job,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_ends, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_wait_follows_config,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_zero, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_max_rows_ends_wait,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_does_not_wait,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_does_not_wait,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
