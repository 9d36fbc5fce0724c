/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Open-loop schedule and latency origins (lg_sched.h). */

#include "lg_sched.h"

void
lg_sched_init(struct lg_sched *s, uint64_t start, double rate,
	      unsigned int idx, unsigned int nworkers)
{
	s->period = rate > 0 ? (uint64_t)(1e9 / rate) : 0;
	s->next = start + (nworkers ? s->period * idx / nworkers : 0);
}

bool
lg_sched_take(struct lg_sched *s, uint64_t now, uint64_t *due)
{
	if (s->period == 0 || s->next > now)
		return false;
	*due = s->next;
	s->next += s->period;
	return true;
}

uint64_t
lg_sched_backlog(const struct lg_sched *s, uint64_t now)
{
	if (s->period == 0 || s->next > now)
		return 0;
	return (now - s->next) / s->period + 1;
}

void
lg_origin_token(struct lg_origin *o, uint64_t due)
{
	o->tok = due;
	o->step = due;
}

uint64_t
lg_origin_sent(const struct lg_origin *o, uint64_t now)
{
	(void)now;
	return o->step;
}

void
lg_origin_next_step(struct lg_origin *o, uint64_t now)
{
	o->step = now;
}
