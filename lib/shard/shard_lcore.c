/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Network and worker lcore loops, job memory, and the server's counters
 * for /metrics. See shard_server.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "net_tcp.h"
#include "shard_srv_priv.h"

volatile int shard_stop_flag;
volatile uint64_t shard_drain_deadline_ns;

static struct shard_netlc *netlcs[RTE_MAX_LCORE];
static unsigned int n_netlcs;
/* Network lcores not yet returned: workers serve until all are gone, so
 * a job enqueued while draining still completes. */
static unsigned int netlcs_running;

/* ---- job and body memory --------------------------------------------
 * Size classes from rte_mempools (per-lcore caches: no lock in the common
 * case), rte_malloc beyond the largest class. A 64-byte header in front of
 * each block says where it came from, so any lcore can free it.
 */
static const size_t class_size[SHARD_MEM_CLASSES] = {
	16 << 10, 256 << 10, 4 << 20,
};
static const unsigned int class_count[SHARD_MEM_CLASSES] = {
	2048, 128, 16,
};
#define MEM_HDR 64
#define MEM_FROM_MALLOC 0xffu

static void *
srv_alloc(void *arg, size_t size)
{
	struct shard_srv_unit *su = arg;
	uint8_t *p = NULL;
	unsigned int c;

	if (size > SIZE_MAX - MEM_HDR)
		return NULL;
	for (c = 0; c < SHARD_MEM_CLASSES; c++)
		if (su->pool[c] != NULL && size + MEM_HDR <= su->pool_elt[c])
			break;
	if (c < SHARD_MEM_CLASSES &&
	    rte_mempool_get(su->pool[c], (void **)&p) == 0) {
		p[0] = (uint8_t)c;
	} else {
		p = rte_malloc_socket("shard_job", size + MEM_HDR, 64,
				      su->numa_node < 0 ? SOCKET_ID_ANY :
				      su->numa_node);
		if (p == NULL)
			return NULL;
		p[0] = MEM_FROM_MALLOC;
	}
	return p + MEM_HDR;
}

static void
srv_free(void *arg, void *ptr)
{
	struct shard_srv_unit *su = arg;
	uint8_t *p;

	if (ptr == NULL)
		return;
	p = (uint8_t *)ptr - MEM_HDR;
	if (p[0] == MEM_FROM_MALLOC)
		rte_free(p);
	else
		rte_mempool_put(su->pool[p[0]], p);
}

struct shard_srv_unit *
shard_srv_unit_create(struct shard_unit *u, uint16_t listen,
		      const struct shard_limits *lim, int numa_node)
{
	static unsigned int seq;
	struct shard_srv_unit *su;
	int socket = numa_node < 0 ? SOCKET_ID_ANY : numa_node;

	su = rte_zmalloc_socket("shard_srv_unit", sizeof(*su), 64, socket);
	if (su == NULL)
		return NULL;
	su->u = u;
	su->listen = listen;
	su->lim = *lim;
	su->numa_node = numa_node;
	for (unsigned int c = 0; c < SHARD_MEM_CLASSES; c++) {
		char name[RTE_MEMPOOL_NAMESIZE];

		snprintf(name, sizeof(name), "shm%u_%u", seq, c);
		su->pool_elt[c] = class_size[c];
		su->pool[c] = rte_mempool_create(name, class_count[c],
				class_size[c], class_count[c] >= 512 ? 64 : 4,
				0, NULL, NULL, NULL, NULL, socket, 0);
		/* A missing class falls back to rte_malloc: not fatal. */
		if (su->pool[c] == NULL)
			RTE_LOG(WARNING, USER1, "shard %s: mempool %s of "
				"%u x %zu bytes: %s; using rte_malloc\n",
				u->name, name, class_count[c], class_size[c],
				rte_strerror(rte_errno));
	}
	seq++;
	su->mem.alloc = srv_alloc;
	su->mem.free = srv_free;
	su->mem.arg = su;
	return su;
}

const struct shard_mem *
shard_srv_unit_mem(const struct shard_srv_unit *su)
{
	return &su->mem;
}

/* ---- workers ------------------------------------------------------- */

/*
 * Ring entries for every request that can wait at once (the jobs ring of
 * a unit, the done ring of a network lcore): each connection of each
 * network lcore (max_connections apiece) may have pipeline_depth requests
 * in flight. The queue then never refuses what the connection limits
 * admitted: overload waits in it, served in order (latency bounded by the
 * limits over the rate), not 503s that a closed-loop client would just
 * retry. A fixed 4096 answered 503 to every request past it at 5 000
 * connections. Capped at SHARD_QUEUE_MAX (8 MiB of pointers); past that
 * a full queue answers 503 with Retry-After (shard_server.c).
 */
#define SHARD_QUEUE_MIN 4096u
#define SHARD_QUEUE_MAX (1u << 20)

static uint64_t
lim_requests(const struct shard_limits *lim)
{
	return (uint64_t)RTE_MAX(lim->max_connections, 1u) *
	       RTE_MAX(lim->pipeline_depth, 1u);
}

unsigned int
shard_queue_size(uint64_t requests)
{
	uint64_t n = rte_align64pow2(requests + 1); /* holds count - 1 */

	return (unsigned int)RTE_MIN(RTE_MAX(n, (uint64_t)SHARD_QUEUE_MIN),
				     (uint64_t)SHARD_QUEUE_MAX);
}

struct shard_worker *
shard_worker_create(unsigned int lcore_id, struct shard_srv_unit *su)
{
	int socket = (int)rte_lcore_to_socket_id(lcore_id);
	struct shard_worker *w;

	if (su->jobs == NULL) {
		static unsigned int seq;
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "shjobs_%u", seq++);
		/* Many network lcores produce, many workers consume. */
		su->jobs = rte_ring_create(name, shard_queue_size(
				lim_requests(&su->lim) *
				RTE_MAX(su->lim.net_lcores, 1u)), socket, 0);
		if (su->jobs == NULL)
			return NULL;
		/* Parts of split jobs: any worker produces, any consumes. A
		 * part that finds it full is computed by its producer. */
		snprintf(name, sizeof(name), "shparts_%u", seq - 1);
		su->parts = rte_ring_create(name, 4096, socket, 0);
		if (su->parts == NULL)
			return NULL;
	}
	w = rte_zmalloc_socket("shard_worker", sizeof(*w), 64, socket);
	if (w == NULL)
		return NULL;
	w->lcore_id = lcore_id;
	w->su = su;
	/* An expert-only unit has no dense model, so no dense scratch:
	 * its walk routes answer "no model loaded" before any compute. */
	if (su->u->model != NULL)
		w->scratch = ffn_scratch_new(su->u->model,
					     su->u->batch_max_rows, socket);
	if (su->u->model != NULL && w->scratch == NULL) {
		rte_free(w);
		return NULL;
	}
	su->n_workers++;
	/* Split jobs cut each layer into one slice per worker (issue 4). */
	su->u->split_parts = su->n_workers;
	return w;
}

static unsigned int
job_rows(struct shard_job *const *jobs, unsigned int n)
{
	unsigned int rows = 0;

	for (unsigned int i = 0; i < n; i++)
		rows += jobs[i]->req.seq_len;
	return rows;
}

/* Hand a finished job back to its network lcore. */
static void
job_done(struct shard_job *job)
{
	struct shard_pend *p = job->owner;
	struct shard_netlc *lc = p->lc;	/* the lcore that owns p */

	/* The done ring is sized for every job in flight. */
	while (rte_ring_enqueue(lc->done, p) != 0)
		rte_pause();
}

/* Parts batched (shard_parts_run); the jobs they finish go back. */
static void
parts_run(struct shard_worker *w, struct shard_part *const *parts,
	  unsigned int n)
{
	struct shard_job *done[SHARD_BURST];

	for (unsigned int i = 0; i < n; i += SHARD_BURST) {
		unsigned int k = n - i < SHARD_BURST ? n - i : SHARD_BURST;
		unsigned int d = shard_parts_run(parts + i, k, w->scratch,
						 w->lcore_id, done);

		for (unsigned int j = 0; j < d; j++)
			job_done(done[j]);
	}
}

/*
 * Split jobs (issue 4): offer parts 1.. to the other workers through the
 * parts ring, keep part 0. A part the ring cannot take stays here too, so
 * every part is computed whatever the other workers are doing.
 */
static unsigned int
split_offer(struct shard_srv_unit *su, struct shard_job *job,
	    struct shard_part **mine, unsigned int n_mine)
{
	unsigned int i;

	mine[n_mine++] = &job->parts[0];
	for (i = 1; i < job->n_parts; i++)
		if (rte_ring_enqueue(su->parts, &job->parts[i]) != 0)
			mine[n_mine++] = &job->parts[i];
	return n_mine;
}

/* Whole requests (JSON, Q8_K, the expert routes): those that batch
 * across requests (concurrent layer-batch calls, issue 23) together,
 * the others one by one (shard_handle_many). */
static void
whole_run(struct shard_unit *u, const struct shard_mem *mem,
	  struct ffn_scratch *scratch, unsigned int lcore,
	  struct shard_job *const *jobs, unsigned int n)
{
	const struct shard_http_req *rq[SHARD_LOCAL_JOBS];
	struct shard_resp *resp[SHARD_LOCAL_JOBS];

	for (unsigned int i = 0; i < n; i++) {
		rq[i] = &jobs[i]->rq;
		resp[i] = &jobs[i]->resp;
	}
	shard_handle_many(u, rq, resp, n, mem, scratch, lcore);
}

/* rte_get_tsc_cycles is inline; the worker passes this one. */
static uint64_t
tsc_now(void)
{
	return rte_get_tsc_cycles();
}

unsigned int
shard_batch_wait(struct rte_ring *jobs_ring, const struct rte_ring *parts,
		 struct shard_job **jobs, unsigned int n,
		 unsigned int max_rows, uint32_t wait_us, uint64_t hz,
		 uint64_t (*now)(void))
{
	uint64_t end;

	/* A split job does not wait: its latency is the point. */
	for (unsigned int i = 0; i < n; i++)
		if (!jobs[i]->whole && jobs[i]->n_parts > 1)
			return n;
	if (wait_us == 0 || n >= SHARD_BURST ||
	    job_rows(jobs, n) >= max_rows)
		return n;
	end = now() + hz * wait_us / 1000000;
	/* ... nor once another worker's split job waits for a part: that
	 * latency comes first. */
	while (n < SHARD_BURST && job_rows(jobs, n) < max_rows &&
	       rte_ring_empty(parts) && now() < end)
		n += rte_ring_dequeue_burst(jobs_ring, (void **)jobs + n,
					    SHARD_BURST - n, NULL);
	return n;
}

int
shard_worker_run(void *arg)
{
	struct shard_worker *w = arg;
	struct shard_srv_unit *su = w->su;
	struct shard_unit *u = su->u;
	struct shard_job *jobs[SHARD_BURST];
	uint64_t hz = rte_get_tsc_hz();

	while (__atomic_load_n(&netlcs_running, __ATOMIC_ACQUIRE) > 0 ||
	       !rte_ring_empty(su->jobs) || !rte_ring_empty(su->parts)) {
		struct shard_part *part[SHARD_BURST];
		unsigned int n;

		/* Parts first: each belongs to a job already under way,
		 * whose latency is what splitting is for. Those waiting
		 * are batched, but a worker takes only its share of them
		 * (the producer is busy with its own): the parts of one
		 * large job must run on different workers. */
		n = rte_ring_count(su->parts);
		if (n > 0) {
			unsigned int others = su->n_workers > 1 ?
					      su->n_workers - 1 : 1;

			n = (n + others - 1) / others;
			n = rte_ring_dequeue_burst(su->parts, (void **)part,
				n < SHARD_BURST ? n : SHARD_BURST, NULL);
			if (n > 0) {
				parts_run(w, part, n);
				continue;
			}
		}
		n = rte_ring_dequeue_burst(su->jobs, (void **)jobs,
					   SHARD_BURST, NULL);
		if (n == 0) {
			rte_pause();
			continue;
		}
		n = shard_batch_wait(su->jobs, su->parts, jobs, n,
				     u->batch_max_rows, u->batch_wait_us, hz,
				     tsc_now);
		/* Binary jobs batched; whole requests (JSON, Q8_K) alone;
		 * split jobs as parts, offered to the other workers first so
		 * they start while this one computes its own. */
		unsigned int nb = 0, nm = 0, nw = 0;
		struct shard_job *bin[SHARD_BURST], *whole[SHARD_BURST];
		struct shard_part *mine[SHARD_BURST * RTE_MAX_LCORE];

		/* Sorted before any part is offered: from then on a split
		 * job belongs to its parts (the last hands it back and its
		 * network lcore may reuse it), so it is not looked at here
		 * again. */
		for (unsigned int i = 0; i < n; i++)
			if (jobs[i]->whole)
				whole[nw++] = jobs[i];
			else if (jobs[i]->n_parts <= 1)
				bin[nb++] = jobs[i];
		for (unsigned int i = 0; i < n; i++)
			if (!jobs[i]->whole && jobs[i]->n_parts > 1)
				nm = split_offer(su, jobs[i], mine, nm);
		parts_run(w, mine, nm);
		shard_jobs_compute(bin, nb, w->scratch, w->lcore_id);
		for (unsigned int i = 0; i < nb; i++) {
			shard_job_finish(bin[i], w->lcore_id);
			job_done(bin[i]);
		}
		whole_run(u, &su->mem, w->scratch, w->lcore_id, whole, nw);
		for (unsigned int i = 0; i < nw; i++)
			job_done(whole[i]);
	}
	return 0;
}

/* ---- network lcores ------------------------------------------------ */

struct shard_netlc *
shard_netlc_create(unsigned int lcore_id, struct net_port *port,
		   uint16_t queue, struct shard_srv_unit *const *units,
		   unsigned int n_units)
{
	int socket = (int)rte_lcore_to_socket_id(lcore_id);
	struct tcp_stack_config tc;
	struct shard_netlc *lc;
	char name[RTE_RING_NAMESIZE];
	uint32_t max_conns = 0, idle_ms = 0;
	uint64_t requests = 0;

	if (n_units == 0 || n_units > SHARD_MAX_UNITS)
		return NULL;
	lc = rte_zmalloc_socket("shard_netlc", sizeof(*lc), 64, socket);
	if (lc == NULL)
		return NULL;
	lc->lcore_id = lcore_id;
	lc->n_units = n_units;
	for (unsigned int i = 0; i < n_units; i++) {
		lc->units[i] = units[i];
		max_conns += units[i]->lim.max_connections;
		if (units[i]->u->front != NULL)
			max_conns += front_max_conns(units[i]->u->front);
		requests += lim_requests(&units[i]->lim);
		if (units[i]->lim.idle_timeout_ms > idle_ms)
			idle_ms = units[i]->lim.idle_timeout_ms;
	}
	memset(&tc, 0, sizeof(tc));
	/* The idle close is the sweep's, with a FIN (shard_timeout.c);
	 * the stack's timer resets what the sweep did not close: a peer
	 * silent inside a request past its 408, or gone mid-close. It
	 * runs a second later so the graceful close always comes first. */
	tc.idle_timeout_us = ((uint64_t)idle_ms + 1000u) * 1000u; /* 64-bit */
	lc->nl = net_lcore_create(port, queue, socket);
	if (lc->nl == NULL)
		goto fail;
	tc.mtu = net_port_mtu(port);
	tc.socket_id = socket;
	tc.max_conns = max_conns;
	lc->tcp = net_tcp_attach(lc->nl, &tc);
	if (lc->tcp == NULL)
		goto fail;
	snprintf(name, sizeof(name), "shdone_%u", lcore_id);
	/* Single producer per worker, many workers: MP; this lcore: SC. */
	lc->done = rte_ring_create(name, shard_queue_size(requests), socket,
				   RING_F_SC_DEQ);
	if (lc->done == NULL)
		goto fail;
	for (unsigned int i = 0; i < n_units; i++)
		if (units[i]->u->front != NULL) {
			lc->front[i] = front_lcore_create(units[i]->u->front,
					lc->tcp, lcore_id, socket);
			if (lc->front[i] == NULL)
				goto fail;
		}
	for (unsigned int i = 0; i < n_units; i++)
		if (units[i]->jobs == NULL && units[i]->u->model != NULL) {
			lc->scratch[i] = ffn_scratch_new(units[i]->u->model,
					units[i]->u->batch_max_rows, socket);
			if (lc->scratch[i] == NULL)
				goto fail;
		}
	if (shard_conn_listen(lc) < 0)
		goto fail;
	netlcs[n_netlcs++] = lc;
	netlcs_running++;
	return lc;
fail:
	RTE_LOG(ERR, USER1, "network lcore %u: setup failed: %s\n",
		lcore_id, rte_strerror(rte_errno));
	return NULL;
}

/* Single-lcore mode: the jobs prepared during this RX burst, all batched
 * (rows at the same layer computed together), then answered. */
static void
compute_local(struct shard_netlc *lc)
{
	unsigned int n = lc->n_local;

	if (n == 0)
		return;
	for (unsigned int ui = 0; ui < lc->n_units; ui++) {
		struct shard_job *mine[SHARD_LOCAL_JOBS];
		struct shard_job *whole[SHARD_LOCAL_JOBS];
		unsigned int k = 0, nw = 0;

		for (unsigned int i = 0; i < n; i++) {
			if (lc->local[i]->u != lc->units[ui]->u)
				continue;
			if (lc->local[i]->whole)
				whole[nw++] = lc->local[i];
			else
				mine[k++] = lc->local[i];
		}
		if (k > 0)
			shard_jobs_compute(mine, k, lc->scratch[ui],
					   lc->lcore_id);
		/* expert layer batches of this burst, together */
		if (nw > 0)
			whole_run(lc->units[ui]->u, &lc->units[ui]->mem,
				  lc->scratch[ui], lc->lcore_id, whole, nw);
	}
	lc->n_local = 0;
	/* The pass took milliseconds since the poll whose clock the stack
	 * reads: the answers' probe timers and RTT samples start now, or
	 * every answer drew a tail loss probe on a fast path (PTO below
	 * the pass time) and its ACK an RTT sample the pass inflated. */
	net_lcore_clock(lc->nl, net_now_ns());
	for (unsigned int i = 0; i < n; i++) {
		if (!lc->local[i]->whole)
			shard_job_finish(lc->local[i], lc->lcore_id);
		shard_conn_job_done(lc, lc->local[i]);
	}
}

/*
 * Single-lcore mode: one RX burst (32 frames) holds only a few requests
 * (a 2560-float f32 request is 7 frames), so computing after each burst
 * made passes of 3-4 rows at 64 connections, where the engine's rows/s
 * grow up to 64 rows (tools/bench/appliance/concurrency.sh measured 3.4
 * rows per pass, 51% of the f16 ceiling at that size). While frames keep
 * coming, receive up to SHARD_GATHER_POLLS more bursts, or until the
 * jobs reach the unit's batch_max_rows, before the pass: everything
 * that has arrived is computed together. An empty queue ends it at once,
 * so one request alone waits for one empty poll more than before.
 */
#define SHARD_GATHER_POLLS 64
/*
 * It also ends after SHARD_GATHER_IDLE burst(s) in a row without a segment
 * of an open connection: frames that keep coming without requests (a SYN
 * flood, malformed frames) made every request wait for all 64 bursts.
 * On net_tap, a read each, that was 8 ms; the pktgen kit's verified calls
 * during a Pktgen SYN flood saw their time in the appliance go from p99
 * 0.5 ms to 6 ms (tests/e2e/pktgen_kit.sh). Segments, not completed
 * requests or payload: a burst may carry only the middle of large
 * requests, or the clients' ACKs of the last answers, and ending on
 * those (or after a fixed 250 us) cut the rows per pass at 64
 * connections from 62 to 26-42 (concurrency.sh, memif).
 */
#define SHARD_GATHER_IDLE 1

static void
gather_local(struct shard_netlc *lc, unsigned int n)
{
	unsigned int max_rows = 0, k, idle = 0;
	uint64_t segs;

	if (lc->n_local == 0)
		return;
	for (k = 0; k < lc->n_units; k++)
		if (lc->units[k]->u->batch_max_rows > max_rows)
			max_rows = lc->units[k]->u->batch_max_rows;
	segs = tcp_stack_seg_conn(lc->tcp);
	for (k = 0; n > 0 && k < SHARD_GATHER_POLLS &&
	     idle < SHARD_GATHER_IDLE && lc->n_local < max_rows &&
	     lc->n_local < SHARD_LOCAL_JOBS; k++) {
		uint64_t c;

		n = net_lcore_poll(lc->nl, net_now_ns());
		c = tcp_stack_seg_conn(lc->tcp);
		idle = c != segs ? 0 : idle + 1;
		segs = c;
	}
}

/* Draining: every answer sent has been acknowledged. A connection closed
 * after its last answer (tcp_close) is the stack's until its data and FIN
 * are acknowledged (FIN-WAIT-1, CLOSING, LAST-ACK): stopping before that
 * would cut the answer short. FIN-WAIT-2 and TIME-WAIT hold nothing. */
static bool
tcp_delivered(const struct shard_netlc *lc)
{
	struct tcp_stats st;

	tcp_stack_stats(lc->tcp, &st);
	return st.conns[TCP_SYN_RECEIVED] + st.conns[TCP_ESTABLISHED] +
	       st.conns[TCP_FIN_WAIT_1] + st.conns[TCP_CLOSE_WAIT] +
	       st.conns[TCP_CLOSING] + st.conns[TCP_LAST_ACK] == 0;
}

int
shard_netlc_run(void *arg)
{
	struct shard_netlc *lc = arg;
	void *done[SHARD_BURST];

	RTE_LOG(INFO, USER1, "network lcore %u: polling queue %u\n",
		lc->lcore_id, net_lcore_queue(lc->nl));
	for (;;) {
		uint64_t now = net_now_ns();
		unsigned int n;

		n = net_lcore_poll(lc->nl, now);
		gather_local(lc, n);
		compute_local(lc);
		n = rte_ring_dequeue_burst(lc->done, done, SHARD_BURST, NULL);
		for (unsigned int i = 0; i < n; i++)
			shard_conn_job_done(lc, &((struct shard_pend *)
					    done[i])->job);
		for (unsigned int i = 0; i < lc->n_units; i++)
			if (lc->front[i] != NULL)
				front_lcore_poll(lc->front[i], now);
		net_lcore_flush(lc->nl);
		if (now >= lc->next_sweep_ns) {
			shard_conn_sweep(lc, now);
			lc->next_sweep_ns = now + 10 * 1000000ull;
		}
		if (shard_stop_flag) {
			if (!lc->draining) {
				lc->draining = true;
				for (unsigned int i = 0; i < lc->n_units; i++)
					tcp_unlisten(lc->tcp,
						     lc->units[i]->listen);
			}
			/* A front's connections to its shards go once
			 * its clients are answered (they count in
			 * tcp_delivered). */
			if (lc->n_conns == 0)
				for (unsigned int i = 0; i < lc->n_units; i++)
					front_lcore_close(lc->front[i]);
			if ((lc->n_conns == 0 && tcp_delivered(lc)) ||
			    now >= shard_drain_deadline_ns)
				break;
		}
	}
	shard_conn_close_all(lc);
	for (unsigned int i = 0; i < lc->n_units; i++)
		front_lcore_close(lc->front[i]);
	/* Let the FINs/RSTs leave. */
	for (int i = 0; i < 100; i++) {
		net_lcore_poll(lc->nl, net_now_ns());
		net_lcore_flush(lc->nl);
		rte_delay_us_block(1000);
	}
	__atomic_fetch_sub(&netlcs_running, 1, __ATOMIC_RELEASE);
	return 0;
}

uint64_t
shard_drain_deadline(uint64_t now_ns, unsigned int drain_ms, int stopping,
		     uint64_t cur_ns)
{
	uint64_t at = now_ns + (uint64_t)drain_ms * 1000000ull;

	return stopping && cur_ns < at ? cur_ns : at;
}

/* Called from signal handlers and from the grid's thread (app/ffn-shard:
 * a drain that starts once the routers were told): lock-free atomics
 * only. The deadline moves by compare-and-swap, so of two calls at once
 * the earlier end wins, whichever stores last. */
void
shard_server_stop(unsigned int drain_ms)
{
	uint64_t now = net_now_ns();
	uint64_t cur = __atomic_load_n(&shard_drain_deadline_ns,
				       __ATOMIC_ACQUIRE);
	uint64_t want;

	/* A deadline already set (cur != 0) is a stop running, even if
	 * its flag is not stored yet. */
	do {
		want = shard_drain_deadline(now, drain_ms, cur != 0 ||
			__atomic_load_n(&shard_stop_flag, __ATOMIC_ACQUIRE),
			cur);
	} while (!__atomic_compare_exchange_n(&shard_drain_deadline_ns, &cur,
			want, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	__atomic_store_n(&shard_stop_flag, 1, __ATOMIC_RELEASE);
}

int
shard_signal_drain(uint64_t first_ns, uint64_t now_ns, unsigned int drain_ms)
{
	if (first_ns == 0)
		return (int)drain_ms;
	if (now_ns - first_ns < SHARD_SIGNAL_DUP_MS * 1000000ull)
		return -1;
	return 0;
}

/* Signal handlers run on the main thread only (app/ffn-shard blocks the
 * stop signals in every other), so first_signal_ns has one writer. */
static volatile uint64_t first_signal_ns;

int
shard_server_signal(unsigned int drain_ms)
{
	uint64_t now = net_now_ns();
	int d = shard_signal_drain(first_signal_ns, now, drain_ms);

	if (first_signal_ns == 0)
		first_signal_ns = now != 0 ? now : 1;
	if (d >= 0)
		shard_server_stop((unsigned int)d);
	return d;
}

/* Counters of other lcores are read without their cooperation: each is a
 * u64 written by one lcore, so a reader sees a recent value, never a torn
 * one (x86-64, aligned). */
size_t
shard_server_metrics(void *arg, char *buf, size_t cap)
{
	struct shard_netlc_stats *st;
	struct net_stats ns;
	size_t len;

	(void)arg;
	st = calloc(n_netlcs > 0 ? n_netlcs : 1, sizeof(*st));
	if (st == NULL)
		return 0;
	for (unsigned int i = 0; i < n_netlcs; i++) {
		st[i].lcore_id = netlcs[i]->lcore_id;
		tcp_stack_stats(netlcs[i]->tcp, &st[i].tcp);
	}
	net_stats_total(&ns);
	len = shard_server_metrics_write(buf, cap, st, n_netlcs, &ns);
	free(st);
	return len;
}
