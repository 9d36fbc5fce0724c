/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */
#ifndef LG_SCHED_H
#define LG_SCHED_H

/**
 * @file
 * ffn-loadgen's latency accounting, free of coordinated omission: the
 * open-loop token schedule (--rate) and the origins latencies are measured
 * from.  A token is due at its place in the schedule whether or not a
 * client is free to send it then; its token latency, and the request
 * latency of its first step, run from that due time, so a server stall
 * shows up in every token scheduled during it, not only in the ones that
 * were already on the wire (G. Tene, "How NOT to measure latency").
 * Plain C, clock-free: every function takes the time, so the tests drive
 * it with a virtual clock.
 */

#include <stdbool.h>
#include <stdint.h>

/** One lcore's share of the open-loop schedule. */
struct lg_sched {
	uint64_t period;	/**< ns between its tokens; 0: closed loop */
	uint64_t next;		/**< when its next token is due */
};

/**
 * Schedule rate tokens/s (0: closed loop, nothing is ever due) from start
 * for worker idx of nworkers, whose schedules interleave rather than
 * coincide.
 */
void lg_sched_init(struct lg_sched *s, uint64_t start, double rate,
		   unsigned int idx, unsigned int nworkers);

/**
 * The next token due by now, if any: true, *due = when it was due (its
 * latency origin, however late it starts), and the schedule moves on.
 * Call while a client is free to start it; tokens due meanwhile wait.
 */
bool lg_sched_take(struct lg_sched *s, uint64_t now, uint64_t *due);

/** Tokens due by now and not yet taken (waiting for a free client). */
uint64_t lg_sched_backlog(const struct lg_sched *s, uint64_t now);

/** A client's latency origins: its token's, and its current step's. */
struct lg_origin {
	uint64_t tok;		/**< the token's due time */
	uint64_t step;		/**< the current step's due time */
};

/** A token starts, due at due (open loop: its schedule; closed loop: when
 * the client became free). */
void lg_origin_token(struct lg_origin *o, uint64_t due);

/** The step's request goes out at now: the origin its latency runs from
 * (the step's due time, not now: waiting for a connection counts). */
uint64_t lg_origin_sent(const struct lg_origin *o, uint64_t now);

/** A fan-out step was answered at now: the next step is due at once. */
void lg_origin_next_step(struct lg_origin *o, uint64_t now);

/** Latency of what was due at origin and completed at now. */
static inline uint64_t
lg_latency(uint64_t origin, uint64_t now)
{
	return now - origin;
}

#endif /* LG_SCHED_H */
