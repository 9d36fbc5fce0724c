/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Stack lifetime, connection table, timer wheel, TIME_WAIT table, ISNs and
 * SYN cookies, listeners and active open. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_jhash.h>
#include <rte_malloc.h>
#include <rte_random.h>
#include <rte_thash.h>

#include "tcp_priv.h"

static uint32_t tcp_stack_seq;	/* unique names for rte_hash/mempools */

static void
tcp_cfg_defaults(struct tcp_stack_config *c)
{
	if (c->mtu == 0)
		c->mtu = 1500;
	if (c->max_conns == 0)
		c->max_conns = 4096;
	if (c->max_time_wait == 0)
		c->max_time_wait = c->max_conns;
	if (c->syn_backlog == 0)
		c->syn_backlog = 128;
	if (c->rcv_buf == 0)
		c->rcv_buf = 256 * 1024;
	if (c->snd_buf == 0)
		c->snd_buf = 4 * 1024 * 1024;
	if (c->idle_timeout_us == 0)
		c->idle_timeout_us = 300ull * 1000 * 1000;
	if (c->time_wait_us == 0)
		c->time_wait_us = 60u * 1000 * 1000;
	if (c->delack_us == 0)
		c->delack_us = 40 * 1000;
	if (c->rto_init_us == 0)
		c->rto_init_us = 1000 * 1000;
	if (c->rto_min_us == 0)
		c->rto_min_us = 200 * 1000;
	if (c->rto_max_us == 0)
		c->rto_max_us = 60u * 1000 * 1000;
	if (c->max_retries == 0)
		c->max_retries = 12;
	if (c->challenge_ack_limit == 0)
		c->challenge_ack_limit = 1000;
	if (c->rss_reta_size == 0)
		c->rss_reta_size = 128;
	if (c->tx_max_segs == 0)
		c->tx_max_segs = 32;
	if (!c->tx_cksum_offload)
		c->tso_max = 0;
	if (c->tso_max > 65000)		/* IPv4 total length is 16 bits */
		c->tso_max = 65000;
}

struct tcp_stack *
tcp_stack_create(const struct tcp_stack_config *cfg)
{
	struct rte_hash_parameters hp = { 0 };
	char name[RTE_HASH_NAMESIZE];
	struct tcp_stack *s;
	uint32_t id, n;
	unsigned int i;

	if (cfg == NULL || cfg->pool == NULL || cfg->output == NULL ||
	    (cfg->mtu != 0 && cfg->mtu < 68 + 40)) {
		rte_errno = EINVAL;
		return NULL;
	}
	s = rte_zmalloc_socket("tcp_stack", sizeof(*s), RTE_CACHE_LINE_SIZE,
			       cfg->socket_id);
	if (s == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	s->cfg = *cfg;
	tcp_cfg_defaults(&s->cfg);
	s->mss = s->cfg.mtu - 40;
	if (s->cfg.rcv_buf > (65535u << TCP_MAX_WSCALE))
		s->cfg.rcv_buf = 65535u << TCP_MAX_WSCALE;
	if (s->cfg.no_wscale && s->cfg.rcv_buf > 65535)
		s->cfg.rcv_buf = 65535;
	id = __atomic_fetch_add(&tcp_stack_seq, 1, __ATOMIC_RELAXED);

	n = s->cfg.max_conns + s->cfg.max_time_wait;
	snprintf(name, sizeof(name), "tcp_ht_%u", id);
	hp.name = name;
	hp.entries = RTE_MAX(n + n / 4, 64u);
	hp.key_len = sizeof(struct tcp_key);
	hp.hash_func = rte_hash_crc;
	hp.socket_id = cfg->socket_id;
	s->conns = rte_hash_create(&hp);
	if (s->conns == NULL)
		goto fail;

	snprintf(name, sizeof(name), "tcp_cp_%u", id);
	/* +1: a TIME_WAIT entry may need recycling while n are in use. */
	s->conn_pool = rte_mempool_create(name, n + 1, sizeof(struct tcp_conn),
			0, 0, NULL, NULL, NULL, NULL, cfg->socket_id,
			RTE_MEMPOOL_F_SP_PUT | RTE_MEMPOOL_F_SC_GET);
	if (s->conn_pool == NULL)
		goto fail;
	snprintf(name, sizeof(name), "tcp_xp_%u", id);
	s->ext_pool = rte_mempool_create(name, s->cfg.max_conns * 4 + 63,
			sizeof(struct tcp_ext), 0, 0, NULL, NULL, NULL, NULL,
			cfg->socket_id, 0);
	if (s->ext_pool == NULL)
		goto fail;

	TAILQ_INIT(&s->tw_list);
	TAILQ_INIT(&s->txwait);
	TAILQ_INIT(&s->ackwait);
	for (i = 0; i < TCP_WHEEL_SLOTS; i++)
		LIST_INIT(&s->wheel[i]);
	for (i = 0; i < RTE_DIM(s->secret); i++)
		s->secret[i] = (uint32_t)rte_rand();
	s->next_port = 32768 + (uint16_t)(rte_rand() % 28000);
	return s;
fail:
	rte_hash_free(s->conns);
	rte_mempool_free(s->conn_pool);
	rte_free(s);
	rte_errno = ENOMEM;
	return NULL;
}

void
tcp_stack_destroy(struct tcp_stack *s)
{
	const void *key;
	void *data;
	uint32_t iter = 0;

	if (s == NULL)
		return;
	while (rte_hash_iterate(s->conns, &key, &data, &iter) >= 0) {
		struct tcp_conn *c = data;

		tcp_conn_terminate(c, TCP_CLOSE_STACK);
		iter = 0;	/* the table changed under the iterator */
	}
	rte_hash_free(s->conns);
	rte_mempool_free(s->conn_pool);
	rte_mempool_free(s->ext_pool);
	rte_free(s);
}

uint64_t
tcp_now(struct tcp_stack *s)
{
	if (s->cfg.clock_us != NULL) {
		uint64_t t = s->cfg.clock_us(s->cfg.clock_arg);

		if (t > s->now)
			s->now = t;
	}
	return s->now;
}

/* ---- connections ---- */

struct tcp_conn *
tcp_conn_alloc(struct tcp_stack *s, const struct tcp_key *k)
{
	struct tcp_conn *c;

	if (rte_mempool_get(s->conn_pool, (void **)&c) < 0)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->stack = s;
	c->key = *k;
	if (rte_hash_add_key_data(s->conns, k, c) < 0) {
		rte_mempool_put(s->conn_pool, c);
		return NULL;
	}
	s->nr_conns++;
	s->stats.conns[TCP_CLOSED]++;
	c->rto = s->cfg.rto_init_us;
	c->mss = TCP_DEFAULT_MSS;
	c->ts_offset = (uint32_t)rte_rand();
	c->last_rx = s->now;
	c->idle_at = s->now + s->cfg.idle_timeout_us;
	tcp_timer_sched(c);
	return c;
}

void
tcp_conn_set_state(struct tcp_conn *c, uint8_t st)
{
	struct tcp_stack *s = c->stack;

	if (c->state == TCP_SYN_RECEIVED && c->listener != NULL) {
		c->listener->syn_rcvd--;
		c->listener = NULL;
	}
	s->stats.conns[c->state]--;
	s->stats.conns[st]++;
	c->state = st;
}

static void
tcp_wheel_remove(struct tcp_conn *c)
{
	if (c->on_wheel) {
		LIST_REMOVE(c, wheel);
		c->on_wheel = 0;
	}
}

static void
tcp_txwait_remove(struct tcp_conn *c)
{
	if (c->on_txwait) {
		TAILQ_REMOVE(&c->stack->txwait, c, txwait);
		c->stack->nr_txwait--;
		c->on_txwait = 0;
	}
}

void
tcp_ackwait_remove(struct tcp_conn *c)
{
	if (c->on_ackwait) {
		TAILQ_REMOVE(&c->stack->ackwait, c, ackwait);
		c->on_ackwait = 0;
	}
}

/* The flushes tcp_flush_after_rx() put off until the receive burst was
 * taken: one ACK for the segments of the burst. */
static void
tcp_ackwait_flush(struct tcp_stack *s)
{
	struct tcp_conn *c;

	while ((c = TAILQ_FIRST(&s->ackwait)) != NULL) {
		tcp_ackwait_remove(c);
		tcp_flush(c);
	}
}

/* Queue c to send at the next poll (tcp_txwait_retry), behind the others. */
void
tcp_txwait_queue(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;

	if (c->on_txwait || (c->flags & TF_DEAD))
		return;
	TAILQ_INSERT_TAIL(&s->txwait, c, txwait);
	s->nr_txwait++;
	c->on_txwait = 1;
}

/* The port refused a segment of c for now (TX queue full, no mbuf). */
void
tcp_txwait_add(struct tcp_conn *c)
{
	c->stack->stats.tx_deferred++;
	tcp_txwait_queue(c);
}

static void
tcp_conn_release(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;
	unsigned int i;

	rte_hash_del_key(s->conns, &c->key);
	tcp_wheel_remove(c);
	tcp_txwait_remove(c);
	tcp_ackwait_remove(c);
	if (c->state == TCP_TIME_WAIT) {
		TAILQ_REMOVE(&s->tw_list, c, tw);
		s->nr_tw--;
	} else {
		s->nr_conns--;
	}
	if (c->state == TCP_SYN_RECEIVED && c->listener != NULL)
		c->listener->syn_rcvd--;
	s->stats.conns[c->state]--;
	tcp_sq_free(c);
	for (i = 0; i < c->nr_ooo; i++)
		rte_pktmbuf_free(c->ooo[i].m);
	c->nr_ooo = 0;
	rte_mempool_put(s->conn_pool, c);
}

void
tcp_conn_free(struct tcp_conn *c)
{
	if (c->flags & TF_IN_CB) {
		/* The app is in a callback of this connection: finish when it
		 * returns (tcp_cb_leave). Stop all activity meanwhile. */
		c->flags |= TF_DEAD | TF_APP_CLOSED;
		tcp_wheel_remove(c);
		tcp_txwait_remove(c);
		tcp_ackwait_remove(c);
		return;
	}
	tcp_conn_release(c);
}

void
tcp_conn_terminate(struct tcp_conn *c, int reason)
{
	if (c->ops != NULL && c->ops->closed != NULL && tcp_cb_enter(c)) {
		c->flags |= TF_TERM;	/* the app may not act on it now */
		c->ops->closed(c->arg, c, reason);
		c->flags &= ~TF_IN_CB;
	}
	c->flags |= TF_APP_CLOSED;
	tcp_conn_free(c);
}

/* Both FINs are done: keep a small record for 2*MSL (RFC 9293 §3.6.1) in a
 * bounded table, recycling the oldest when it is full. */
void
tcp_enter_time_wait(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;
	unsigned int i;

	if (c->ops != NULL && c->ops->closed != NULL && tcp_cb_enter(c)) {
		c->flags |= TF_TERM;
		c->ops->closed(c->arg, c, TCP_CLOSE_NORMAL);
		c->flags &= ~TF_IN_CB;
	}
	c->flags |= TF_APP_CLOSED;
	if (c->flags & TF_DEAD) {
		tcp_conn_free(c);
		return;
	}
	tcp_sq_free(c);
	for (i = 0; i < c->nr_ooo; i++)
		rte_pktmbuf_free(c->ooo[i].m);
	c->nr_ooo = 0;
	c->ooo_bytes = 0;
	if (s->nr_tw >= s->cfg.max_time_wait) {
		struct tcp_conn *old = TAILQ_FIRST(&s->tw_list);

		if (old != NULL)
			tcp_conn_release(old);
	}
	tcp_conn_set_state(c, TCP_TIME_WAIT);
	s->nr_conns--;
	s->nr_tw++;
	TAILQ_INSERT_TAIL(&s->tw_list, c, tw);
	c->rto_at = 0;
	c->delack_at = 0;
	c->persist = 0;
	c->idle_at = s->now + s->cfg.time_wait_us;
	tcp_timer_sched(c);
}

/* ---- timer wheel ---- */

void
tcp_timer_sched(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;
	uint64_t d = 0;

	if (c->flags & TF_DEAD)
		return;
	if (c->rto_at != 0)
		d = c->rto_at;
	if (c->delack_at != 0 && (d == 0 || c->delack_at < d))
		d = c->delack_at;
	if (c->idle_at != 0 && (d == 0 || c->idle_at < d))
		d = c->idle_at;
	if (d == 0) {
		tcp_wheel_remove(c);
		return;
	}
	/* An entry filed earlier than needed just fires early and is filed
	 * again; only move it when it must fire sooner. */
	if (c->on_wheel && c->deadline <= d)
		return;
	tcp_wheel_remove(c);
	c->deadline = d;
	LIST_INSERT_HEAD(&s->wheel[(d / TCP_TICK_US) & (TCP_WHEEL_SLOTS - 1)],
			 c, wheel);
	c->on_wheel = 1;
}

static void
tcp_conn_timers(struct tcp_conn *c, uint64_t now)
{
	struct tcp_stack *s = c->stack;

	if (c->state == TCP_TIME_WAIT) {
		if (c->idle_at <= now) {
			tcp_conn_release(c);
			return;
		}
		tcp_timer_sched(c);
		return;
	}
	if (c->delack_at != 0 && c->delack_at <= now) {
		c->delack_at = 0;
		if (c->flags & TF_DELACK)
			tcp_send_ctl(c, TCP_F_ACK);
	}
	if (c->rto_at != 0 && c->rto_at <= now) {
		c->rto_at = 0;
		/* Out of retries, c is gone (its memory may already be
		 * another connection's): its idle timer must not run. */
		if (tcp_rto_expired(c) < 0)
			return;
		if (c->flags & TF_DEAD)
			return;
		if (c->state == TCP_CLOSED)
			return;
	}
	if (c->idle_at != 0 && c->idle_at <= now) {
		/* An orphan in FIN_WAIT_2 (app closed, peer never FINs) gets
		 * 2*MSL rather than the full idle time. An orphan whose data
		 * the peer does not take (zero window, its probes ACKed: the
		 * peer is never idle) gets the idle time from its last
		 * acknowledged byte: no application is left to give up on
		 * it, and it would hold its send memory forever. */
		bool orphan = c->flags & TF_APP_CLOSED;
		uint64_t due = c->last_rx +
			((c->state == TCP_FIN_WAIT_2 && orphan) ?
			 s->cfg.time_wait_us : s->cfg.idle_timeout_us);

		if (orphan && c->sq_bytes > 0 &&
		    c->last_progress + s->cfg.idle_timeout_us < due)
			due = c->last_progress + s->cfg.idle_timeout_us;

		if (due > now) {
			c->idle_at = due;
		} else {
			tcp_send_ctl(c, TCP_F_RST | TCP_F_ACK);
			tcp_conn_terminate(c, TCP_CLOSE_IDLE);
			return;
		}
	}
	tcp_timer_sched(c);
}

/* Send again for the connections whose segment the port refused. A
 * segment that never left is not a loss: waiting out the retransmission
 * timer for it would turn a moment of full TX ring (a burst of answers to
 * thousands of connections) into 1 s stalls, and SYN-ACKs refused in a
 * connect storm into SYN retries (RFC 6298 §5.7, 1 s initial RTO). Oldest
 * first, and only those queued before this poll; the first refusal ends
 * the walk: the port is still full, that connection stays first and the
 * rest keep their turn. */
static void
tcp_txwait_retry(struct tcp_stack *s)
{
	uint32_t n = s->nr_txwait;
	struct tcp_conn *c;

	s->in_txwait = 1;
	while (n-- > 0 && (c = TAILQ_FIRST(&s->txwait)) != NULL) {
		uint64_t refused = s->stats.tx_deferred;

		tcp_txwait_remove(c);
		tcp_output_again(c);
		if (s->stats.tx_deferred == refused)
			continue;
		if (c->on_txwait) {
			TAILQ_REMOVE(&s->txwait, c, txwait);
			TAILQ_INSERT_HEAD(&s->txwait, c, txwait);
		}
		break;
	}
	s->in_txwait = 0;
}

void
tcp_poll(struct tcp_stack *s, uint64_t now)
{
	struct tcp_wheel_slot due;
	uint64_t tick, t, end;

	if (now > s->now)
		s->now = now;
	now = s->now;
	tcp_ackwait_flush(s);
	tcp_txwait_retry(s);
	tick = now / TCP_TICK_US;
	if (s->wheel_tick == 0 || tick - s->wheel_tick >= TCP_WHEEL_SLOTS) {
		t = tick - TCP_WHEEL_SLOTS + 1;
	} else {
		t = s->wheel_tick;
	}
	end = tick;
	for (; t <= end; t++) {
		struct tcp_wheel_slot *slot =
			&s->wheel[t & (TCP_WHEEL_SLOTS - 1)];
		struct tcp_conn *c, *next;

		LIST_INIT(&due);
		for (c = LIST_FIRST(slot); c != NULL; c = next) {
			next = LIST_NEXT(c, wheel);
			if (c->deadline <= now) {
				LIST_REMOVE(c, wheel);
				LIST_INSERT_HEAD(&due, c, wheel);
			}
		}
		/* Pop one at a time: a handler may free other entries. */
		while ((c = LIST_FIRST(&due)) != NULL) {
			LIST_REMOVE(c, wheel);
			c->on_wheel = 0;
			tcp_conn_timers(c, now);
		}
	}
	s->wheel_tick = tick;
}

/* ---- listeners ---- */

struct tcp_listener *
tcp_listener_find(struct tcp_stack *s, uint16_t port)
{
	unsigned int i;

	for (i = 0; i < TCP_MAX_LISTEN; i++)
		if (s->listeners[i].port == port && port != 0)
			return &s->listeners[i];
	return NULL;
}

int
tcp_listen(struct tcp_stack *s, uint16_t port, uint32_t backlog,
	   const struct tcp_ops *ops, void *arg)
{
	unsigned int i;

	if (port == 0 || ops == NULL)
		return -EINVAL;
	if (tcp_listener_find(s, port) != NULL)
		return -EADDRINUSE;
	for (i = 0; i < TCP_MAX_LISTEN; i++) {
		struct tcp_listener *l = &s->listeners[i];

		if (l->port != 0)
			continue;
		memset(l, 0, sizeof(*l));
		l->port = port;
		l->backlog = backlog ? backlog : s->cfg.syn_backlog;
		l->ops = ops;
		l->arg = arg;
		return 0;
	}
	return -ENOSPC;
}

int
tcp_unlisten(struct tcp_stack *s, uint16_t port)
{
	struct tcp_listener *l = tcp_listener_find(s, port);
	const void *key;
	void *data;
	uint32_t iter = 0;

	if (l == NULL)
		return -ENOENT;
	/* Half-open connections point at the listener: detach them. */
	while (rte_hash_iterate(s->conns, &key, &data, &iter) >= 0) {
		struct tcp_conn *c = data;

		if (c->listener == l) {
			c->listener = NULL;
			l->syn_rcvd--;
		}
	}
	l->port = 0;
	return 0;
}

/* ---- ISN (RFC 6528) and SYN cookies (RFC 4987 §3.6) ---- */

static uint32_t
tcp_key_hash(const struct tcp_stack *s, const struct tcp_key *k, uint32_t x,
	     uint32_t salt)
{
	uint32_t ports = ((uint32_t)k->rport << 16) | k->lport;
	uint32_t h = rte_jhash_3words(k->rip, k->lip, ports, s->secret[salt]);

	return rte_jhash_3words(h, x, s->secret[(salt + 1) & 3],
				s->secret[(salt + 2) & 3]);
}

uint32_t
tcp_isn(struct tcp_stack *s, const struct tcp_key *k)
{
	/* M: a 4 µs clock; F: keyed hash of the 4-tuple. */
	return (uint32_t)(tcp_now(s) >> 2) + tcp_key_hash(s, k, 0, 0);
}

/* MSS values a cookie can carry (3 bits). */
static const uint16_t tcp_cookie_mss[8] = {
	216, 536, 1200, 1360, 1400, 1440, 1460, 8960
};

#define TCP_COOKIE_PERIOD_US (64u * 1000 * 1000)

uint32_t
tcp_cookie_make(struct tcp_stack *s, const struct tcp_key *k, uint32_t seq,
		uint16_t mss)
{
	uint32_t t = (uint32_t)(tcp_now(s) / TCP_COOKIE_PERIOD_US) & 31;
	uint32_t i;

	for (i = 7; i > 0 && tcp_cookie_mss[i] > mss; i--)
		;
	return (t << 27) | (i << 24) |
	       (tcp_key_hash(s, k, seq ^ (t << 3 | i), 1) & 0xffffff);
}

/* seq: the peer's ISN; cookie: our ISN from the ACK. 0 if valid. */
int
tcp_cookie_check(struct tcp_stack *s, const struct tcp_key *k, uint32_t seq,
		 uint32_t cookie, uint16_t *mss)
{
	uint32_t now_t = (uint32_t)(tcp_now(s) / TCP_COOKIE_PERIOD_US) & 31;
	uint32_t t = cookie >> 27, i = (cookie >> 24) & 7;

	if (((now_t - t) & 31) > 1)	/* older than one period */
		return -ETIMEDOUT;
	if ((tcp_key_hash(s, k, seq ^ (t << 3 | i), 1) & 0xffffff) !=
	    (cookie & 0xffffff))
		return -EINVAL;
	*mss = tcp_cookie_mss[i];
	return 0;
}

/* A cookie passes tcp_cookie_check for the rest of its 64 s period and
 * the whole next one: it is at most this old. */
#define TCP_COOKIE_VALID_US (2 * (uint64_t)TCP_COOKIE_PERIOD_US)

/* Listener l answered a SYN with a cookie now (Linux:
 * tcp_synq_overflow()). */
void
tcp_cookie_sent(struct tcp_stack *s, struct tcp_listener *l)
{
	l->cookie_at = tcp_now(s);
	l->cookie_sent = true;
}

/* Whether an ACK for no connection on l may complete a cookie handshake
 * (RFC 4987 §3.6): only if l sent a cookie that could still be valid.
 * Checked on every such ACK, a replayed capture whose recorded ISN was a
 * cookie of ours opened connections on a listener that never overflowed.
 * Linux checks a cookie only within TCP_SYNCOOKIE_VALID (2 min) of the
 * listener's last overflow (tcp_synq_no_recent_overflow()); our window
 * is the cookie's own lifetime, 2 x 64 s. */
bool
tcp_cookie_recent(struct tcp_stack *s, const struct tcp_listener *l)
{
	return l->cookie_sent &&
	       tcp_now(s) - l->cookie_at < TCP_COOKIE_VALID_US;
}

bool
tcp_challenge_ack_allowed(struct tcp_stack *s)
{
	uint64_t sec = s->now / 1000000;

	if (sec != s->chack_second) {
		s->chack_second = sec;
		s->chack_count = 0;
	}
	if (s->chack_count >= s->cfg.challenge_ack_limit)
		return false;
	s->chack_count++;
	s->stats.challenge_acks++;
	return true;
}

/* ---- active open ---- */

static bool
tcp_port_on_queue(const struct tcp_stack *s, const struct tcp_key *k)
{
	const struct tcp_stack_config *cfg = &s->cfg;
	uint32_t tuple[3], h;

	if (cfg->rss_key == NULL || cfg->rss_nb_queues <= 1)
		return true;
	/* The tuple as the NIC sees our peer's segments arrive. */
	tuple[0] = rte_be_to_cpu_32(k->rip);
	tuple[1] = rte_be_to_cpu_32(k->lip);
	tuple[2] = ((uint32_t)rte_be_to_cpu_16(k->rport) << 16) |
		   rte_be_to_cpu_16(k->lport);
	h = rte_softrss(tuple, RTE_THASH_V4_L4_LEN, cfg->rss_key);
	return (h % cfg->rss_reta_size) % cfg->rss_nb_queues == cfg->rss_queue;
}

int
tcp_connect(struct tcp_stack *s, uint32_t dst_ip_be, uint16_t port,
	    const struct tcp_ops *ops, void *arg, struct tcp_conn **out)
{
	struct tcp_key k;
	struct tcp_conn *c;
	unsigned int tries;

	if (port == 0 || out == NULL)
		return -EINVAL;
	if (s->nr_conns >= s->cfg.max_conns) {
		s->stats.drops[TCP_DROP_CONN_LIMIT]++;
		return -EMFILE;
	}
	tcp_now(s);
	k.rip = dst_ip_be;
	k.lip = s->cfg.local_ip;
	k.rport = rte_cpu_to_be_16(port);
	for (tries = 0; tries < 65536; tries++) {
		uint16_t p = s->next_port++;

		if (s->next_port < 1024)
			s->next_port = 1024;
		if (p < 1024)
			continue;
		k.lport = rte_cpu_to_be_16(p);
		if (!tcp_port_on_queue(s, &k))
			continue;
		if (rte_hash_lookup(s->conns, &k) >= 0)
			continue;
		break;
	}
	if (tries == 65536)
		return -EADDRNOTAVAIL;
	c = tcp_conn_alloc(s, &k);
	if (c == NULL) {
		s->stats.drops[TCP_DROP_NOMEM]++;
		return -ENOMEM;
	}
	c->ops = ops;
	c->arg = arg;
	c->flags |= TF_ACTIVE;
	c->iss = tcp_isn(s, &k);
	c->snd_una = c->iss;
	c->snd_nxt = c->iss + 1;
	c->snd_max = c->iss + 1;
	c->snd_end = c->iss + 1;
	c->sq_seq = c->iss + 1;
	c->recover = c->iss;
	tcp_offer_options(c);
	tcp_conn_set_state(c, TCP_SYN_SENT);
	s->stats.active_opens++;
	tcp_cc_init(c);
	*out = c;
	tcp_send_segment(c, c->iss, 0, TCP_F_SYN);
	tcp_rearm_rto(c);
	return 0;
}

/* ---- introspection ---- */

uint64_t
tcp_stack_seg_conn(const struct tcp_stack *s)
{
	return s->stats.seg_conn;
}

void
tcp_stack_stats(const struct tcp_stack *s, struct tcp_stats *out)
{
	*out = s->stats;
	out->conns[TCP_LISTEN] = 0;
	for (unsigned int i = 0; i < TCP_MAX_LISTEN; i++)
		if (s->listeners[i].port != 0)
			out->conns[TCP_LISTEN]++;
}

const char *
tcp_drop_reason_name(enum tcp_drop_reason r)
{
	static const char *const names[TCP_DROP_MAX] = {
		[TCP_DROP_SHORT] = "short",
		[TCP_DROP_CKSUM] = "checksum",
		[TCP_DROP_NO_CONN] = "no_conn",
		[TCP_DROP_OUT_OF_WINDOW] = "out_of_window",
		[TCP_DROP_BAD_ACK] = "bad_ack",
		[TCP_DROP_PAWS] = "paws",
		[TCP_DROP_RST_INVALID] = "rst_invalid",
		[TCP_DROP_CONN_LIMIT] = "conn_limit",
		[TCP_DROP_BACKLOG] = "backlog",
		[TCP_DROP_COOKIE] = "bad_cookie",
		[TCP_DROP_OOO_MEM] = "ooo_mem",
		[TCP_DROP_RCV_MEM] = "rcv_mem",
		[TCP_DROP_NOMEM] = "nomem",
	};

	return (unsigned int)r < TCP_DROP_MAX ? names[r] : "?";
}

const char *
tcp_state_name(enum tcp_state st)
{
	static const char *const names[TCP_STATE_MAX] = {
		"CLOSED", "LISTEN", "SYN_SENT", "SYN_RECEIVED", "ESTABLISHED",
		"FIN_WAIT_1", "FIN_WAIT_2", "CLOSE_WAIT", "CLOSING",
		"LAST_ACK", "TIME_WAIT",
	};

	return (unsigned int)st < TCP_STATE_MAX ? names[st] : "?";
}

void
tcp_set_arg(struct tcp_conn *c, void *arg)
{
	c->arg = arg;
}

enum tcp_state
tcp_conn_state(const struct tcp_conn *c)
{
	return c->state;
}

void
tcp_conn_addr(const struct tcp_conn *c, uint32_t *local_ip,
	      uint16_t *local_port, uint32_t *remote_ip, uint16_t *remote_port)
{
	if (local_ip)
		*local_ip = c->key.lip;
	if (local_port)
		*local_port = rte_be_to_cpu_16(c->key.lport);
	if (remote_ip)
		*remote_ip = c->key.rip;
	if (remote_port)
		*remote_port = rte_be_to_cpu_16(c->key.rport);
}

uint16_t
tcp_conn_mss(const struct tcp_conn *c)
{
	return c->mss - ((c->flags & TF_TS) ? 12 : 0);
}

uint32_t
tcp_conn_send_state(const struct tcp_conn *c, uint32_t *snd_una)
{
	*snd_una = c->snd_una;
	return c->sq_bytes;
}

void
tcp_conn_info(const struct tcp_conn *c, struct tcp_conn_info *i)
{
	memset(i, 0, sizeof(*i));
	i->cwnd = c->cwnd;
	i->ssthresh = c->ssthresh;
	i->snd_wnd = c->snd_wnd;
	i->rcv_wnd = tcp_rcv_window(c);
	i->srtt_us = c->srtt;
	i->rto_us = c->rto;
	i->unacked = c->snd_max - c->snd_una;
	i->queued = c->sq_bytes;
	i->snd_una = c->snd_una;
	i->snd_wscale = c->snd_wscale;
	i->rcv_wscale = c->rcv_wscale;
	i->sack = !!(c->flags & TF_SACK);
	i->timestamps = !!(c->flags & TF_TS);
	i->in_recovery = !!(c->flags & TF_RECOVERY);
}
