/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The front's connections to its shards, per lcore (front.h): choice of
 * replica, keep-alive pipelined connections, answers read off the TCP
 * segments without a copy, deadlines, probes.
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

static const uint64_t lat_le_us[FR_LAT_BUCKETS - 1] = {
	100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000,
	1000000,
};

int
fr_head(char *buf, size_t cap, const struct front *f, unsigned int s,
	const char *method, const char *path, const char *ctype,
	const char *accept, size_t body_len)
{
	const struct fr_shard *sh = &f->shard[s];
	int n;

	/* RFC 9112 §3.2: Host is required in HTTP/1.1 requests. */
	n = snprintf(buf, cap, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path,
		     sh->label);
	if (ctype != NULL)
		n += snprintf(buf + n, cap - (size_t)n,
			      "Content-Type: %s\r\n", ctype);
	if (accept != NULL)
		n += snprintf(buf + n, cap - (size_t)n, "Accept: %s\r\n",
			      accept);
	if (sh->has_key)
		n += snprintf(buf + n, cap - (size_t)n,
			      "Authorization: Bearer %s\r\n", sh->key);
	n += snprintf(buf + n, cap - (size_t)n,
		      "Content-Length: %zu\r\n\r\n", body_len);
	return n < (int)cap ? n : -ENOSPC;
}

/* ---- answer bytes ------------------------------------------------------ */

void
fr_sub_free_answer(struct fr_sub *sub)
{
	for (unsigned int i = 0; i < sub->n; i++)
		rte_pktmbuf_free_seg(sub->seg[i]);
	free(sub->iov);
	free(sub->seg);
	sub->iov = NULL;
	sub->seg = NULL;
	sub->n = sub->cap = 0;
	sub->len = 0;
}

/* Keep [p, p + n) of seg as the next range of sub's answer: the segment
 * is referenced (one reference per range), not copied. */
static int
answer_add(struct fr_sub *sub, const uint8_t *p, size_t n,
	   struct rte_mbuf *seg)
{
	if (sub->n == sub->cap) {
		unsigned int cap = sub->cap ? sub->cap * 2 : 8;
		struct iovec *iov = realloc(sub->iov, cap * sizeof(*iov));
		struct rte_mbuf **sg;

		if (iov == NULL)
			return -ENOMEM;
		sub->iov = iov;
		sg = realloc(sub->seg, cap * sizeof(*sg));
		if (sg == NULL)
			return -ENOMEM;
		sub->seg = sg;
		sub->cap = cap;
	}
	rte_mbuf_refcnt_update(seg, 1);
	sub->iov[sub->n].iov_base = (void *)(uintptr_t)p;
	sub->iov[sub->n].iov_len = n;
	sub->seg[sub->n] = seg;
	sub->n++;
	sub->len += n;
	return 0;
}

/* ---- shard state -------------------------------------------------------- */

static void conn_drop(struct fr_conn *c, enum fr_err err, const char *why,
		      bool abort_tcp);
static void up_pump(struct fr_up *up);

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
static void sub_retry(struct fr_sub *sub, enum fr_err err, const char *why);
static void sub_unqueue(struct fr_sub *sub);

static void
up_fail(struct fr_up *up, const char *why)
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
		sub_unqueue(w);
		sub_retry(w, FR_E_CONNECT, why);
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

static void
probe_answered(struct fr_sub *sub)
{
	struct fr_up *up = sub->up;
	char why[160];

	if (sub->status != 200) {
		snprintf(why, sizeof(why), "%s answered %d",
			 sub->kind == FR_S_PROBE_STATS ? "/v1/stats" :
			 "/v1/health", sub->status);
		up_fail(up, why);
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
	sub->deadline_ns = now + up->fl->f->hop_ns;
	up->probing = true;
	up->in_flight++;
	sub->queued = true;
	if (up->w_tail != NULL)
		up->w_tail->next = sub;
	else
		up->w_head = sub;
	up->w_tail = sub;
	up_pump(up);
}

/* ---- sub-requests --------------------------------------------------------- */

/* sub leaves its queue: the shard no longer has it. */
static void
sub_unqueue(struct fr_sub *sub)
{
	sub->queued = false;
	sub->conn = NULL;
	sub->next = NULL;
	sub->up->in_flight--;
	if (sub->call != NULL)
		sub->call->queued--;	/* checked by what follows */
}

/* A sub that failed for good: its call (or probe) learns it. */
static void
sub_fail(struct fr_sub *sub, enum fr_err err, const char *why)
{
	struct front_lcore *fl = sub->up->fl;

	fl->st->sh[sub->up->idx].errors[err]++;
	if (sub->call == NULL) {
		up_fail(sub->up, why);
		probe_end(sub);
		return;
	}
	fr_sub_failed(sub, err, why);
}

/* sub got no answer byte: send it again, elsewhere when the range has
 * another replica (issue 19: the FFN is idempotent), at most once. A
 * probe is not sent again: the next one comes at the backoff. */
static void
sub_retry(struct fr_sub *sub, enum fr_err err, const char *why)
{
	struct front_lcore *fl = sub->up->fl;
	unsigned int from = sub->up->idx;

	if (sub->call == NULL || sub->orphan || sub->attempts >= 2) {
		sub_fail(sub, err, why);
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
	if (best == NULL && exclude >= 0 && fl->up[exclude].state == FR_UP)
		best = &fl->up[exclude];
	if (best == NULL)
		return -EHOSTUNREACH;
	sub->up = best;
	sub->conn = NULL;
	sub->next = NULL;
	sub->deadline_ns = fr_now() + f->hop_ns;
	best->in_flight++;
	sub->queued = true;
	if (sub->call != NULL)
		sub->call->queued++;
	if (best->w_tail != NULL)
		best->w_tail->next = sub;
	else
		best->w_head = sub;
	best->w_tail = sub;
	up_pump(best);
	return 0;
}

/* ---- connections ---------------------------------------------------------- */

static void on_connected(void *arg, struct tcp_conn *tc);
static void on_data(void *arg, struct tcp_conn *tc, struct rte_mbuf *m);
static void on_eof(void *arg, struct tcp_conn *tc);
static void on_closed(void *arg, struct tcp_conn *tc, int reason);

static const struct tcp_ops up_ops = {
	.connected = on_connected,
	.data = on_data,
	.eof = on_eof,
	.closed = on_closed,
};

static void
send_released(void *arg)
{
	struct fr_call *call = arg;

	call->sends--;
	fr_call_check(call);
}

/* Send sub on c: the head copied, the body by reference. 0, or -ENOBUFS
 * when c has no room now (nothing sent). */
static int
conn_send(struct fr_conn *c, struct fr_sub *sub)
{
	struct front_lcore *fl = c->up->fl;
	struct front *f = fl->f;
	struct fr_call *call = sub->call;
	char head[768];
	const char *method = "GET", *path = "/v1/stats", *ct = NULL;
	const char *accept = NULL;
	int n;

	switch (sub->kind) {
	case FR_S_WALK:
		method = "POST";
		path = "/v1/walk-ffn";
		ct = call->json ? "application/json" :
		     wire_fmt_content_type(call->plan.fmt_in);
		if (!call->json)
			accept = front_accept_for(call->out_fmt);
		break;
	case FR_S_PROBE_HEALTH:
		path = "/v1/health";
		break;
	default:
		break;
	}
	n = fr_head(head, sizeof(head), f, c->up->idx, method, path, ct,
		    accept, sub->body_len);
	if (n < 0)
		return n;
	if (tcp_send_space(c->tc) < (uint32_t)n + sub->body_len)
		return -ENOBUFS;
	if (tcp_send(c->tc, head, (uint32_t)n) != n)
		return -ENOBUFS;
	if (sub->body_n > 0) {
		call->sends++;
		if (tcp_send_iov(c->tc, sub->body, (int)sub->body_n,
				 send_released, call) != 0) {
			/* The head is queued without its body: this
			 * connection's stream is no longer ours to use. */
			call->sends--;
			return -EPIPE;
		}
	}
	tcp_flush(c->tc);
	sub->conn = c;
	sub->sent_ns = fr_now();
	sub->deadline_ns = sub->sent_ns + f->hop_ns;
	if (c->q_tail != NULL)
		c->q_tail->next = sub;
	else
		c->q_head = sub;
	c->q_tail = sub;
	sub->next = NULL;
	c->q_len++;
	fl->st->sh[c->up->idx].requests++;
	return 0;
}

static struct fr_conn *
conn_open(struct fr_up *up)
{
	struct front_lcore *fl = up->fl;
	const struct fr_shard *sh = &fl->f->shard[up->idx];
	struct fr_conn *c;
	int rc;

	if (up->n_conns >= fl->f->conns || fl->closed)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->up = up;
	http_rsp_reset(&c->rsp);
	rc = tcp_connect(fl->tcp, sh->ip_be, sh->port, &up_ops, c, &c->tc);
	if (rc < 0) {
		snprintf(up->why, sizeof(up->why), "connect: %s",
			 strerror(-rc));
		free(c);
		return NULL;
	}
	c->t0_ns = fr_now();
	up->conn[up->n_conns++] = c;
	return c;
}

/* Send what waits for up on its connections: the open one with the
 * shortest pipeline below the limit; another connection opened (up to
 * conns) when all are busy, so a shard's requests spread over them. */
static void
up_pump(struct fr_up *up)
{
	struct front *f = up->fl->f;

	while (up->w_head != NULL) {
		struct fr_conn *best = NULL;
		unsigned int connecting = 0;
		struct fr_sub *sub;
		int rc;

		for (unsigned int i = 0; i < up->n_conns; i++) {
			struct fr_conn *c = up->conn[i];

			if (!c->open) {
				connecting++;
				continue;
			}
			if (c->closing || c->q_len >= f->pipeline)
				continue;
			if (best == NULL || c->q_len < best->q_len)
				best = c;
		}
		if ((best == NULL || best->q_len > 0) && connecting == 0)
			conn_open(up);
		if (best == NULL)
			return;
		sub = up->w_head;
		rc = conn_send(best, sub);
		if (rc == -ENOBUFS && best->q_len > 0)
			return;	/* sent when its answers free the room */
		if (rc == -ENOBUFS) {
			/* Larger than a connection's send buffer. */
			up->w_head = sub->next;
			if (up->w_head == NULL)
				up->w_tail = NULL;
			sub_unqueue(sub);
			sub_fail(sub, FR_E_RESET, "request larger than the "
				 "connection's send buffer");
			continue;
		}
		up->w_head = sub->next;
		if (up->w_head == NULL)
			up->w_tail = NULL;
		if (rc < 0) {
			/* put it back in front; the connection goes */
			sub->next = up->w_head;
			up->w_head = sub;
			if (up->w_tail == NULL)
				up->w_tail = sub;
			conn_drop(best, FR_E_RESET, "send failed", true);
			continue;
		}
	}
}

/* Take c out of its shard's list. */
static void
conn_unlink(struct fr_conn *c)
{
	struct fr_up *up = c->up;

	for (unsigned int i = 0; i < up->n_conns; i++)
		if (up->conn[i] == c) {
			up->conn[i] = up->conn[--up->n_conns];
			break;
		}
}

/*
 * c is gone (closed by the peer, reset, failed, or given up): what it
 * carried is sent again (no answer byte yet) or failed (err, why). With
 * abort_tcp the TCP connection is reset here. c is freed.
 */
static void
conn_drop(struct fr_conn *c, enum fr_err err, const char *why,
	  bool abort_tcp)
{
	struct fr_up *up = c->up;
	struct fr_sub *sub = c->q_head, *next;
	bool began = c->got_bytes;
	char msg[128];

	conn_unlink(c);
	if (abort_tcp && c->tc != NULL)
		tcp_abort(c->tc);
	c->tc = NULL;
	c->q_head = c->q_tail = NULL;
	for (; sub != NULL; sub = next) {
		next = sub->next;
		sub_unqueue(sub);
		if (began) {
			/* Part of its answer came: not idempotent to
			 * repeat from here (the client may get it twice
			 * in a retry's race), so it fails. */
			began = false;
			fr_sub_free_answer(sub);
			snprintf(msg, sizeof(msg), "%s mid-answer", why);
			sub_fail(sub, err, msg);
			continue;
		}
		sub_retry(sub, err, why);
	}
	free(c);
	up_pump(up);
}

static void
on_connected(void *arg, struct tcp_conn *tc)
{
	struct fr_conn *c = arg;

	(void)tc;
	c->open = true;
	up_pump(c->up);
}

/* An answer is whole: hand it over and send what waits. */
static void
answer_done(struct fr_conn *c)
{
	struct fr_sub *sub = c->q_head;
	struct front_lcore *fl = c->up->fl;
	struct fr_shard_stats *ss = &fl->st->sh[c->up->idx];
	uint64_t us = (fr_now() - sub->sent_ns) / 1000;
	unsigned int b;
	size_t ctl;

	c->q_head = sub->next;
	if (c->q_head == NULL)
		c->q_tail = NULL;
	c->q_len--;
	c->got_bytes = false;
	sub->status = c->rsp.status;
	ctl = strnlen(c->rsp.ctype, sizeof(c->rsp.ctype));
	if (ctl >= sizeof(sub->ctype) || c->rsp.ctype_truncated)
		ctl = 0;	/* too long to be a type we know */
	memcpy(sub->ctype, c->rsp.ctype, ctl);
	sub->ctype[ctl] = '\0';
	sub->fmt = front_answer_fmt(sub->ctype, ctl);
	if (!c->rsp.keep_alive)
		c->closing = true;	/* RFC 9112 §9.6: the last one */
	http_rsp_reset(&c->rsp);
	ss->answers++;
	for (b = 0; b < FR_LAT_BUCKETS - 1 && us > lat_le_us[b]; b++)
		;
	ss->lat_hist[b]++;
	ss->lat_sum_us += us;
	sub_unqueue(sub);
	if (sub->call == NULL) {
		probe_answered(sub);
		return;
	}
	if (sub->status != 200)
		ss->errors[FR_E_STATUS]++;
	fr_sub_answered(sub);
}

static void
on_data(void *arg, struct tcp_conn *tc, struct rte_mbuf *m)
{
	struct fr_conn *c = arg;
	struct fr_up *up = c->up;
	struct rte_mbuf *seg;

	(void)tc;
	for (seg = m; seg != NULL; seg = seg->next) {
		const uint8_t *p = rte_pktmbuf_mtod(seg, const uint8_t *);
		size_t n = seg->data_len;

		while (n > 0) {
			struct fr_sub *sub = c->q_head;
			const uint8_t *b = NULL;
			size_t bl = 0;
			int rc;

			if (sub == NULL) {
				conn_drop(c, FR_E_MALFORMED,
					  "bytes no request asked for", true);
				goto out;
			}
			rc = http_rsp_feed(&c->rsp, p, n, &b, &bl);
			if (rc < 0) {
				conn_drop(c, FR_E_MALFORMED, rc == -ENOTSUP ?
					  "answer framing not supported" :
					  "malformed HTTP answer", true);
				goto out;
			}
			c->got_bytes = true;
			if (bl > 0 && answer_add(sub, b, bl, seg) < 0) {
				conn_drop(c, FR_E_RESET, "out of memory",
					  true);
				goto out;
			}
			p += rc;
			n -= (size_t)rc;
			if (c->rsp.state == HTTP_RSP_DONE)
				answer_done(c);
		}
	}
	if (c->closing) {
		/* The shard said this answer was its last: what was
		 * pipelined behind it goes elsewhere. */
		conn_drop(c, FR_E_RESET, "connection closed", false);
		tcp_close(tc);
		goto out;
	}
	up_pump(up);
out:
	rte_pktmbuf_free(m);
}

static void
on_eof(void *arg, struct tcp_conn *tc)
{
	struct fr_conn *c = arg;

	/* A shard closing an idle kept-alive connection is normal; one
	 * with requests pending loses them (sent again, or failed). */
	conn_drop(c, FR_E_RESET, "connection closed", false);
	tcp_close(tc);
}

static void
on_closed(void *arg, struct tcp_conn *tc, int reason)
{
	struct fr_conn *c = arg;
	struct fr_up *up = c->up;
	const char *why;
	enum fr_err err = FR_E_RESET;
	bool was_open = c->open;

	(void)tc;
	c->tc = NULL;
	switch (reason) {
	case TCP_CLOSE_REFUSED:
		why = "connection refused";
		err = FR_E_CONNECT;
		break;
	case TCP_CLOSE_TIMEOUT:
		why = was_open ? "retransmissions timed out" :
		      "connect timed out";
		err = was_open ? FR_E_RESET : FR_E_CONNECT;
		break;
	case TCP_CLOSE_NORMAL:
		why = "connection closed";
		break;
	default:
		why = "connection reset";
		break;
	}
	if (reason != TCP_CLOSE_NORMAL)
		up_fail(up, why);
	conn_drop(c, err, why, false);
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
				up_fail(up, why);
				c->q_head = h->next;
				if (c->q_head == NULL)
					c->q_tail = NULL;
				c->q_len--;
				sub_unqueue(h);
				fr_sub_free_answer(h);
				c->got_bytes = false;
				sub_fail(h, FR_E_TIMEOUT, why);
				conn_drop(c, FR_E_TIMEOUT, why, true);
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
			up_fail(up, "connect timed out");
			conn_drop(c, FR_E_CONNECT, "connect timed out", true);
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
			sub_unqueue(sub);
			sub_retry(sub, FR_E_CONNECT, up->why[0] ? up->why :
				  "no connection");
		}
		if (!up->probing && !fl->closed && now >= up->next_probe_ns)
			probe_start(up, now);
	}
}

void
fr_conn_close_all(struct front_lcore *fl)
{
	fl->closed = true;
	for (unsigned int s = 0; s < fl->f->n_shards; s++) {
		struct fr_up *up = &fl->up[s];

		while (up->n_conns > 0)
			conn_drop(up->conn[0], FR_E_RESET, "front stopping",
				  true);
		while (up->w_head != NULL) {
			struct fr_sub *sub = up->w_head;

			up->w_head = sub->next;
			if (up->w_head == NULL)
				up->w_tail = NULL;
			sub_unqueue(sub);
			sub_fail(sub, FR_E_RESET, "front stopping");
		}
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
			sub_unqueue(sub);
			return;
		}
}
