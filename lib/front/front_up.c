/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The front's shards, per lcore (front.h): whether each is in use, the
 * probes that decide it (its /v1/stats, then /v1/health), the choice of
 * replica for a sub-request and its one retry, deadlines.
 * Connections: front_conn.c.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>
#include <rte_log.h>

#include "front_priv.h"

#define NS_PER_MS 1000000ull

uint64_t
fr_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- shard state -------------------------------------------------------- */

static void
up_set(struct fr_up *up, enum fr_up_state st, const char *why)
{
	struct front_lcore *fl = up->fl;
	const struct fr_shard *sh = &fl->f->shard[up->idx];

	if (st != up->state) {
		if (st == FR_UP)
			RTE_LOG(INFO, USER1, "front %s: shard %s is up "
				"(lcore %u)\n", fl->f->name, sh->url,
				fl->lcore_id);
		else
			RTE_LOG(WARNING, USER1, "front %s: shard %s taken "
				"out (lcore %u): %s\n", fl->f->name, sh->url,
				fl->lcore_id, why);
	}
	up->state = st;
	fl->st->up[up->idx] = st == FR_UP;
	if (why != NULL && st != FR_UP)
		snprintf(up->why, sizeof(up->why), "%s", why);
	if (st == FR_UP) {
		up->backoff_ns = fl->f->health_ns;
		up->next_probe_ns = fr_now() + fl->f->health_ns;
	}
}

/* The shard failed (connect, reset, deadline, probe): out until a probe
 * finds it again, the probes spaced by a backoff (health_interval_ms
 * doubling to 8 times that). */
void
fr_up_fail(struct fr_up *up, const char *why)
{
	struct front *f = up->fl->f;
	struct fr_sub *w = up->w_head, *next;

	if (up->state == FR_UP)
		up->backoff_ns = f->health_ns;
	else if (up->backoff_ns < 8 * f->health_ns)
		up->backoff_ns *= 2;
	if (up->state != FR_MISMATCH)
		up_set(up, FR_DOWN, why);
	up->next_probe_ns = fr_now() + up->backoff_ns;
	/* What waits for a connection to it goes elsewhere now (or
	 * fails): waiting on would only open connection after connection
	 * to a shard that refuses them. Taken off first: a probe among
	 * them fails back into here. */
	up->w_head = up->w_tail = NULL;
	for (; w != NULL; w = next) {
		next = w->next;
		fr_sub_unqueue(w);
		fr_sub_retry(w, FR_E_CONNECT, why);
	}
}

/* ---- probes --------------------------------------------------------------- */

static void
probe_end(struct fr_sub *sub)
{
	sub->up->probing = false;
	fr_sub_free_answer(sub);
	free(sub);
}

/* The facts of a /v1/stats answer against the lcore's: the first agreeing
 * answer sets them (spec/wire.md §2 lists the keys). */
static int
probe_facts(struct fr_sub *sub, char *why, size_t whylen)
{
	struct front_lcore *fl = sub->up->fl;
	struct front *f = fl->f;
	struct front_gather g = { sub->iov, sub->n, sub->len };
	struct json_object *o = NULL, *v;
	char *txt;
	const char *model;
	int64_t hidden, layers;
	int rc = -EINVAL;

	txt = malloc(sub->len + 1);
	if (txt == NULL)
		return -ENOMEM;
	front_gather_copy(&g, 0, txt, sub->len);
	txt[sub->len] = '\0';
	o = json_tokener_parse(txt);
	free(txt);
	if (o == NULL || !json_object_is_type(o, json_type_object)) {
		snprintf(why, whylen, "/v1/stats is not a JSON object");
		goto out;
	}
	if (!json_object_object_get_ex(o, "hidden_size", &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    (hidden = json_object_get_int64(v)) <= 0 || hidden > UINT32_MAX) {
		snprintf(why, whylen, "/v1/stats has no hidden_size");
		goto out;
	}
	if (!json_object_object_get_ex(o, "layers", &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    (layers = json_object_get_int64(v)) <= 0 || layers > UINT32_MAX) {
		snprintf(why, whylen, "/v1/stats has no layers");
		goto out;
	}
	model = json_object_object_get_ex(o, "model", &v) &&
		json_object_is_type(v, json_type_string) ?
		json_object_get_string(v) : "";
	if (f->num_layers != 0 && (uint32_t)layers != f->num_layers) {
		snprintf(why, whylen, "its model has %" PRId64 " layers, the "
			 "front's layout %u", layers, f->num_layers);
		goto out;
	}
	if (!fl->have_facts) {
		fl->have_facts = true;
		fl->hidden = (uint32_t)hidden;
		fl->num_layers = (uint32_t)layers;
		snprintf(fl->model, sizeof(fl->model), "%s", model);
		rc = 0;
		goto out;
	}
	if ((uint32_t)hidden != fl->hidden || (uint32_t)layers !=
	    fl->num_layers || strncmp(model, fl->model, sizeof(fl->model) - 1)
	    != 0) {
		snprintf(why, whylen, "its stats (model \"%.40s\", hidden "
			 "%" PRId64 ", layers %" PRId64 ") disagree with the "
			 "other shards' (\"%.40s\", %u, %u)", model, hidden,
			 layers, fl->model, fl->hidden, fl->num_layers);
		goto out;
	}
	rc = 0;
out:
	if (o != NULL)
		json_object_put(o);
	return rc;
}

void
fr_probe_answered(struct fr_sub *sub)
{
	struct fr_up *up = sub->up;
	char why[160];

	if (sub->status != 200) {
		snprintf(why, sizeof(why), "%s answered %d",
			 sub->kind == FR_S_PROBE_STATS ? "/v1/stats" :
			 "/v1/health", sub->status);
		fr_up_fail(up, why);
	} else if (sub->kind == FR_S_PROBE_HEALTH) {
		up->next_probe_ns = fr_now() + up->fl->f->health_ns;
	} else if (probe_facts(sub, why, sizeof(why)) == 0) {
		up_set(up, FR_UP, NULL);
	} else {
		up->fl->st->mismatch++;
		if (up->state != FR_MISMATCH)
			RTE_LOG(ERR, USER1, "front %s: shard %s not used: "
				"%s\n", up->fl->f->name,
				up->fl->f->shard[up->idx].url, why);
		up->state = FR_MISMATCH;
		up->fl->st->up[up->idx] = 0;
		snprintf(up->why, sizeof(up->why), "%.95s", why);
		up->backoff_ns = 8 * up->fl->f->health_ns;
		up->next_probe_ns = fr_now() + up->backoff_ns;
	}
	probe_end(sub);
}

static void
probe_start(struct fr_up *up, uint64_t now)
{
	struct fr_sub *sub = calloc(1, sizeof(*sub));

	if (sub == NULL)
		return;
	sub->kind = up->state == FR_UP ? FR_S_PROBE_HEALTH : FR_S_PROBE_STATS;
	sub->up = up;
	sub->attempts = 1;
	sub->t_first_ns = now;
	sub->deadline_ns = now + up->fl->f->hop_ns;
	up->probing = true;
	up->in_flight++;
	sub->queued = true;
	if (up->w_tail != NULL)
		up->w_tail->next = sub;
	else
		up->w_head = sub;
	up->w_tail = sub;
	fr_up_pump(up);
}

/* ---- sub-requests --------------------------------------------------------- */

/* sub leaves its queue: the shard no longer has it. */
void
fr_sub_unqueue(struct fr_sub *sub)
{
	sub->queued = false;
	sub->conn = NULL;
	sub->next = NULL;
	sub->up->in_flight--;
	if (sub->call != NULL)
		sub->call->queued--;	/* checked by what follows */
}

/* A sub that failed for good: its call (or probe) learns it. */
void
fr_sub_fail(struct fr_sub *sub, enum fr_err err, const char *why)
{
	struct front_lcore *fl = sub->up->fl;

	fl->st->sh[sub->up->idx].errors[err]++;
	if (sub->call == NULL) {
		fr_up_fail(sub->up, why);
		probe_end(sub);
		return;
	}
	fr_sub_failed(sub, err, why);
}

/* sub got no answer byte: send it again, elsewhere when the range has
 * another replica (issue 19: the FFN is idempotent), at most once. A
 * probe is not sent again: the next one comes at the backoff. */
void
fr_sub_retry(struct fr_sub *sub, enum fr_err err, const char *why)
{
	struct front_lcore *fl = sub->up->fl;
	unsigned int from = sub->up->idx;

	if (sub->call == NULL || sub->orphan || sub->attempts >= 2) {
		fr_sub_fail(sub, err, why);
		return;
	}
	fl->st->sh[from].errors[err]++;
	fl->st->retries++;
	sub->attempts++;
	if (fr_sub_start(fl, sub, (int)from) < 0) {
		/* fr_sub_start counted nothing: the failure is the first. */
		fr_sub_failed(sub, err, why);
	}
}

int
fr_sub_start(struct front_lcore *fl, struct fr_sub *sub, int exclude)
{
	struct front *f = fl->f;
	unsigned int r = sub->range, n = f->n_rep[r];
	struct fr_up *best = NULL;

	if (fl->closed)
		return -EHOSTUNREACH;
	/* The healthy replica with the fewest requests in flight. */
	for (unsigned int i = 0; i < n; i++) {
		struct fr_up *up = &fl->up[f->rep[r][i]];

		if (up->state != FR_UP || ((int)up->idx == exclude && n > 1))
			continue;
		if (best == NULL || up->in_flight < best->in_flight)
			best = up;
	}
	/* None healthy: one not known to be down for good is worth the
	 * attempt (it may be up before its probe says so). */
	for (unsigned int i = 0; best == NULL && i < n; i++) {
		struct fr_up *up = &fl->up[f->rep[r][i]];

		if (up->state == FR_DOWN && (int)up->idx != exclude)
			best = up;
	}
	/* The only replica that failed gets the retry itself (a kept
	 * connection the shard had closed, or a connection dropped for a
	 * request ahead of this one): once more, within the deadline. */
	if (best == NULL && exclude >= 0 &&
	    fl->up[exclude].state != FR_MISMATCH)
		best = &fl->up[exclude];
	if (best == NULL)
		return -EHOSTUNREACH;
	sub->up = best;
	sub->conn = NULL;
	sub->next = NULL;
	if (sub->t_first_ns == 0)
		sub->t_first_ns = fr_now();
	sub->deadline_ns = sub->t_first_ns + f->hop_ns;
	best->in_flight++;
	sub->queued = true;
	if (sub->call != NULL)
		sub->call->queued++;
	if (best->w_tail != NULL)
		best->w_tail->next = sub;
	else
		best->w_head = sub;
	best->w_tail = sub;
	fr_up_pump(best);
	return 0;
}

/* ---- lcore ---------------------------------------------------------------- */

void
fr_up_check(struct front_lcore *fl, uint64_t now)
{
	struct front *f = fl->f;
	char why[64];

	for (unsigned int s = 0; s < f->n_shards; s++) {
		struct fr_up *up = &fl->up[s];

		for (unsigned int i = 0; i < up->n_conns; i++) {
			struct fr_conn *c = up->conn[i];
			struct fr_sub *h = c->q_head;

			if (h != NULL && now >= h->deadline_ns) {
				/* A shard that stalls: the late answer would
				 * land on the wrong request, so the
				 * connection goes with it (504). */
				snprintf(why, sizeof(why), "no answer within "
					 "%" PRIu64 " ms", (uint64_t)(f->hop_ns /
					 NS_PER_MS));
				fr_up_fail(up, why);
				c->q_head = h->next;
				if (c->q_head == NULL)
					c->q_tail = NULL;
				c->q_len--;
				fr_sub_unqueue(h);
				fr_sub_free_answer(h);
				c->got_bytes = false;
				fr_sub_fail(h, FR_E_TIMEOUT, why);
				fr_conn_drop(c, FR_E_TIMEOUT, why, true);
				i = (unsigned int)-1;	/* list changed */
				continue;
			}
		}
		/* A connect that hangs past the deadline (the stack's
		 * own SYN retries last much longer). */
		for (unsigned int i = 0; i < up->n_conns; i++) {
			struct fr_conn *c = up->conn[i];

			if (c->open || now < c->t0_ns + f->hop_ns)
				continue;
			fr_up_fail(up, "connect timed out");
			fr_conn_drop(c, FR_E_CONNECT, "connect timed out", true);
			i = (unsigned int)-1;
		}
		/* Waiting with no connection at all (none could be
		 * opened): sent elsewhere or failed at its deadline. */
		while (up->w_head != NULL && now >= up->w_head->deadline_ns &&
		       up->n_conns == 0) {
			struct fr_sub *sub = up->w_head;

			up->w_head = sub->next;
			if (up->w_head == NULL)
				up->w_tail = NULL;
			fr_sub_unqueue(sub);
			fr_sub_retry(sub, FR_E_CONNECT, up->why[0] ? up->why :
				  "no connection");
		}
		if (!up->probing && !fl->closed && now >= up->next_probe_ns)
			probe_start(up, now);
	}
}

void
fr_sub_unwait(struct fr_sub *sub)
{
	struct fr_up *up = sub->up;
	struct fr_sub **pp, *prev = NULL;

	if (!sub->queued || sub->conn != NULL)
		return;
	for (pp = &up->w_head; *pp != NULL; prev = *pp, pp = &(*pp)->next)
		if (*pp == sub) {
			*pp = sub->next;
			if (up->w_tail == sub)
				up->w_tail = prev;
			fr_sub_unqueue(sub);
			return;
		}
}
