/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * ffn-loadgen: the run.  Every lcore runs worker_run() over its own
 * queues, clients and counters; the main lcore (worker 0) also prints the
 * progress line, then merges every lcore's counters for the report.
 */

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "lg.h"
#include "lg_flood.h"
#include "lg_setup.h"
#include "net_tcp.h"

/* The run's clock origin, shared by every worker (set before launch). */
static uint64_t run_start_ns;

static double
ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static uint64_t
errors(const struct lg_stats *s)
{
	uint64_t n = 0;

	for (int e = 0; e < LG_E_COUNT; e++)
		n += s->err[e];
	return n;
}

/* Port i's TCP and net counters, summed over its queues' lcores (every
 * field of both is a uint64_t counter). */
static void
port_stats(unsigned int i, struct tcp_stats *ts, struct net_stats *ns)
{
	memset(ts, 0, sizeof(*ts));
	memset(ns, 0, sizeof(*ns));
	for (unsigned int wi = 0; wi < lg.nworkers; wi++) {
		struct tcp_stats t;
		struct net_stats n;
		uint64_t *dt = (uint64_t *)ts, *dn = (uint64_t *)ns;
		const uint64_t *st = (const uint64_t *)&t;
		const uint64_t *sn = (const uint64_t *)&n;

		tcp_stack_stats(lg.w[wi]->tcp[i], &t);
		net_lcore_stats(lg.w[wi]->lc[i], &n);
		for (size_t k = 0; k < sizeof(t) / sizeof(uint64_t); k++)
			dt[k] += st[k];
		for (size_t k = 0; k < sizeof(n) / sizeof(uint64_t); k++)
			dn[k] += sn[k];
	}
}

/* The merged counters of every lcore (after the run: each is final). */
static struct lg_stats m_win, m_all;

static void
stats_add(struct lg_stats *d, const struct lg_stats *s)
{
	d->requests += s->requests;
	d->tokens += s->tokens;
	d->validated += s->validated;
	d->guard_f32 += s->guard_f32;
	d->bodies += s->bodies;
	if (s->body_worst > d->body_worst)
		d->body_worst = s->body_worst;
	d->sent += s->sent;
	d->bytes_in += s->bytes_in;
	d->bytes_out += s->bytes_out;
	for (int e = 0; e < LG_E_COUNT; e++)
		d->err[e] += s->err[e];
	for (int i = 0; i < 600; i++)
		d->status[i] += s->status[i];
	d->idle_closes += s->idle_closes;
	d->connects += s->connects;
	d->flood_syns += s->flood_syns;
	for (int t = 0; t < LG_MAX_TARGETS; t++)
		d->per_target[t] += s->per_target[t];
	lg_hist_merge(&d->req_lat, &s->req_lat);
	lg_hist_merge(&d->tok_lat, &s->tok_lat);
	lg_hist_merge(&d->svc_lat, &s->svc_lat);
}

static void
stats_merge(void)
{
	memset(&m_win, 0, sizeof(m_win));
	memset(&m_all, 0, sizeof(m_all));
	lg_hist_reset(&m_win.req_lat);
	lg_hist_reset(&m_win.tok_lat);
	lg_hist_reset(&m_win.svc_lat);
	lg_hist_reset(&m_all.req_lat);
	lg_hist_reset(&m_all.tok_lat);
	lg_hist_reset(&m_all.svc_lat);
	for (unsigned int i = 0; i < lg.nworkers; i++) {
		stats_add(&m_win, &lg.w[i]->win);
		stats_add(&m_all, &lg.w[i]->all);
	}
}

/*
 * --verify-body: each lcore held its answers to its own reference (the
 * first valid answer it saw); those must agree with each other as
 * closely as answers with a reference, else one lcore's answers were all
 * wrong alike: a bad_body on that lcore.
 */
static void
check_refs(void)
{
	const struct lg_worker *w0 = lg.w[0];
	unsigned int n = lg_nreqs();

	for (unsigned int wi = 1; wi < lg.nworkers; wi++) {
		struct lg_worker *w = lg.w[wi];

		for (unsigned int i = 0; i < n; i++) {
			const struct lg_req *a = lg.fanout ? &w0->sreq[i] :
						 &w0->treq[i];
			const struct lg_req *b = lg.fanout ? &w->sreq[i] :
						 &w->treq[i];
			double worst = 0;

			if (a->ref == NULL || !a->ref->set || !b->ref->set)
				continue;
			if (lg_frame_values_close(&a->frame, a->ref->bytes,
						  b->ref->bytes, &worst) != 1) {
				fprintf(stderr, "ffn-loadgen: lcore %u's "
					"reference answer (request %u) is not "
					"lcore %u's\n", w->lcore_id, i,
					w0->lcore_id);
				w->all.err[LG_E_BODY]++;
				w->win.err[LG_E_BODY]++;
			}
		}
	}
}

static void
report(double secs)
{
	const struct lg_stats *w = &m_win;
	const struct lg_hist *h = &w->req_lat;

	printf("\n== ffn-loadgen: %.2f s measured, %s, %u %s", secs,
	       lg.rate > 0 ? "open loop" : "closed loop", lg.nclients,
	       lg.fanout ? "clients (fan-out)" : "connections");
	if (lg.nactive > 0)
		printf(" (%u active, the rest held idle)", lg.nactive);
	if (lg.nworkers > 1)
		printf(", %u lcores", lg.nworkers);
	printf(" ==\n");
	printf("requests   %" PRIu64 " (%.1f req/s)", w->requests,
	       (double)w->requests / secs);
	if (lg.fanout)
		printf(", tokens %" PRIu64 " (%.1f tokens/s, %u layers)",
		       w->tokens, (double)w->tokens / secs, lg.nsteps);
	printf("\n");
	printf("latency    p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  "
	       "max %.3f ms  (min %.3f, mean %.3f)\n",
	       ms(lg_hist_pct(h, 50)), ms(lg_hist_pct(h, 90)),
	       ms(lg_hist_pct(h, 99)), ms(lg_hist_pct(h, 99.9)), ms(h->max),
	       ms(h->count ? h->min : 0),
	       h->count ? ms(h->sum / h->count) : 0.0);
	if (lg.rate > 0) {
		const struct lg_hist *v = &w->svc_lat;

		/* Open loop: the latency above includes the wait for a free
		 * client (the generator's queue under overload); this is the
		 * server's share, from the send. */
		printf("service    p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  "
		       "max %.3f ms  (from the send)\n",
		       ms(lg_hist_pct(v, 50)), ms(lg_hist_pct(v, 90)),
		       ms(lg_hist_pct(v, 99)), ms(lg_hist_pct(v, 99.9)),
		       ms(v->max));
	}
	if (lg.fanout) {
		const struct lg_hist *t = &w->tok_lat;

		printf("token      p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  "
		       "max %.3f ms\n", ms(lg_hist_pct(t, 50)),
		       ms(lg_hist_pct(t, 90)), ms(lg_hist_pct(t, 99)),
		       ms(lg_hist_pct(t, 99.9)), ms(t->max));
	}
	printf("bytes      out %" PRIu64 " (%.1f MB/s)  in %" PRIu64
	       " (%.1f MB/s)\n", w->bytes_out,
	       (double)w->bytes_out / secs / 1e6, w->bytes_in,
	       (double)w->bytes_in / secs / 1e6);
	printf("errors     window %" PRIu64 ", whole run %" PRIu64 ":",
	       errors(w), errors(&m_all));
	for (int e = 0; e < LG_E_COUNT; e++)
		printf(" %s=%" PRIu64, lg_err_name(e), m_all.err[e]);
	printf("\n");
	for (int s = 0; s < 600; s++)
		if (m_all.status[s])
			printf("status     %d: %" PRIu64 "\n", s,
			       m_all.status[s]);
	for (unsigned int t = 0; t < lg.ntargets; t++) {
		struct in_addr a = { .s_addr = lg.target[t].ip_be };

		printf("target     %s:%u requests %" PRIu64 "\n", inet_ntoa(a),
		       lg.target[t].port, w->per_target[t]);
	}
	if (lg.flood) {
		struct in_addr a = { .s_addr = lg.flood_net_be };

		printf("flood      %" PRIu64 " SYNs (%.0f/s) from %s/%d to "
		       "the first target\n", w->flood_syns,
		       (double)w->flood_syns / secs, inet_ntoa(a),
		       __builtin_popcount(lg.flood_mask_be));
	}
	printf("validated  %" PRIu64 " frames; connects %" PRIu64
	       ", idle closes by server %" PRIu64 "\n", w->validated,
	       m_all.connects, m_all.idle_closes);
	if (lg.verify)
		printf("bodies     %" PRIu64 " agree with the reference "
		       "answer; largest |diff| / row max %.3g\n", w->bodies,
		       w->body_worst);
	/* The stack's view: a latency outlier with retransmits or RTOs here
	 * is loss, without them it is the hosts. */
	for (unsigned int i = 0; i < lg.nports; i++) {
		struct tcp_stats ts;
		struct net_stats ns;
		uint64_t drops = 0;

		port_stats(i, &ts, &ns);
		for (int d = 0; d < TCP_DROP_MAX; d++)
			drops += ts.drops[d];
		printf("port %u     tcp retransmits %" PRIu64 " (rto %" PRIu64
		       ", fast %" PRIu64 "), resets in %" PRIu64 ", drops %"
		       PRIu64 ", deferred %" PRIu64 "; net tx_full %" PRIu64
		       ", tx_stall %" PRIu64 ", no_mbuf %" PRIu64
		       ", arp_pending_full %" PRIu64 "\n",
		       lg.port[i].port_id, ts.retransmits, ts.rto_expired,
		       ts.fast_retransmits, ts.resets_in, drops, ts.tx_deferred,
		       ns.drop_tx_full, ns.drop_tx_stall, ns.drop_no_mbuf,
		       ns.drop_arp_pending_full);
		/* Which: duplicates after a spurious RTO are out_of_window,
		 * damaged frames checksum. */
		for (int d = 0; d < TCP_DROP_MAX; d++)
			if (ts.drops[d])
				printf("           drop %s %" PRIu64 "\n",
				       tcp_drop_reason_name(d), ts.drops[d]);
	}
	/* Each lcore's share: every one of them should carry load. */
	for (unsigned int i = 0; lg.nworkers > 1 && i < lg.nworkers; i++) {
		const struct lg_worker *lw = lg.w[i];

		printf("lcore %-4u queue %u: clients %u, requests %" PRIu64
		       ", connects %" PRIu64 ", errors %" PRIu64 "\n",
		       lw->lcore_id, lw->idx, lw->nclients, lw->win.requests,
		       lw->all.connects, errors(&lw->all));
	}
	/* One line for scripts. */
	printf("RESULT requests=%" PRIu64 " tokens=%" PRIu64 " validated=%"
	       PRIu64 " errors=%" PRIu64 " rps=%.1f p50_us=%.1f p99_us=%.1f"
	       " bodies=%" PRIu64 " max_us=%.1f guard_f32=%" PRIu64 "\n",
	       w->requests, w->tokens, w->validated, errors(&m_all),
	       (double)w->requests / secs, lg_hist_pct(h, 50) / 1e3,
	       lg_hist_pct(h, 99) / 1e3, w->bodies, (double)h->max / 1e3,
	       w->guard_f32);
	fflush(stdout);
}

/* The progress line: the main lcore reads every lcore's counters as they
 * run (plain 64-bit loads of counters only their lcore writes) and
 * reports what changed since the last line. */
static struct lg_hist prog_prev, prog_now, prog_sec;
static uint64_t prog_requests;

static void
progress(unsigned int sec, const char *phase)
{
	uint64_t requests = 0, errs = 0, backlog = 0;
	unsigned int up = 0, busy = 0;

	lg_hist_reset(&prog_now);
	for (unsigned int i = 0; i < lg.nworkers; i++) {
		const struct lg_worker *w = lg.w[i];

		lg_hist_merge(&prog_now, &w->run_lat);
		requests += w->all.requests;
		errs += errors(&w->all);
		up += lg_up(w);
		busy += lg_busy(w);
		backlog += w->backlog;
	}
	lg_hist_since(&prog_sec, &prog_now, &prog_prev);
	memcpy(&prog_prev, &prog_now, sizeof(prog_prev));
	printf("[%3us] %-7s %8" PRIu64 " req/s  p50 %.3f  p99 %.3f ms  "
	       "errors %" PRIu64 "  up %u  busy %u", sec, phase,
	       requests - prog_requests, ms(lg_hist_pct(&prog_sec, 50)),
	       ms(lg_hist_pct(&prog_sec, 99)), errs, up, busy);
	prog_requests = requests;
	/* Open loop: tokens due but not started (every client busy); their
	 * wait is in the latency, as it would be for real users. */
	if (lg.rate > 0)
		printf("  backlog %" PRIu64, backlog);
	printf("\n");
	fflush(stdout);
}

/*
 * One lcore's run over its queues and clients, from run_start_ns; the
 * main lcore's (worker 0) also prints the progress line.  Returns the end
 * of its measured window.
 */
static int
worker_run(void *arg)
{
	struct lg_worker *w = arg;
	uint64_t start = run_start_ns, warm_end = start + lg.warmup_ns;
	uint64_t end = warm_end + lg.duration_ns, next_hk = start;
	uint64_t next_sec = start + 1000000000ull;
	struct lg_sched sched;
	uint64_t due;
	bool main_lcore = w->idx == 0;
	uint64_t drain_end;
	unsigned int sec = 0;

	RTE_PER_LCORE(lg_w) = w;
	lg_sched_init(&sched, start, w->rate, w->idx, lg.nworkers);
	lg_hist_reset(&w->win.req_lat);
	lg_hist_reset(&w->win.tok_lat);
	lg_hist_reset(&w->win.svc_lat);
	lg_hist_reset(&w->run_lat);
	w->recording = lg.warmup_ns == 0;
	w->now = start;
	for (unsigned int i = 0; lg.rate == 0 && i < w->nclients; i++) {
		if (w->clients[i].held)
			lg_client_hold(&w->clients[i]);
		else
			lg_client_start(&w->clients[i], start);
	}
	while (!lg_signal) {
		uint64_t now = net_now_ns();

		lg_poll_all(now);
		now = w->now = net_now_ns();
		if (lg.flood && !w->stopping)
			lg_flood_poll(w, now);
		if (!w->recording && !w->stopping && now >= warm_end) {
			/* The window starts: forget the warm-up. */
			memset(&w->win, 0, sizeof(w->win));
			lg_hist_reset(&w->win.req_lat);
			lg_hist_reset(&w->win.tok_lat);
			lg_hist_reset(&w->win.svc_lat);
			w->recording = true;
		}
		if (now >= end)
			break;
		/* Open loop: every due token starts as soon as a client is
		 * free, stamped with its schedule, so queueing counts. */
		while (w->nidle > 0 && lg_sched_take(&sched, now, &due))
			lg_client_start(&w->clients[w->idle[--w->nidle]], due);
		if (now >= next_hk) {
			lg_housekeep(now);
			next_hk = now + 1000000ull;
			w->backlog = lg_sched_backlog(&sched, now);
		}
		if (main_lcore && now >= next_sec) {
			/* A second that began before the window: warm-up. */
			progress(++sec, next_sec - 1000000000ull < warm_end ?
				 "warmup" : "measure");
			next_sec += 1000000000ull;
		}
	}
	w->end_ns = RTE_MIN(net_now_ns(), end);
	w->recording = false;
	w->stopping = true;
	/* Let outstanding requests finish (not counted), then close. */
	drain_end = net_now_ns() + RTE_MIN(lg.timeout_ns, 2000000000ull);
	while (!lg_signal && lg_busy(w) > 0 && net_now_ns() < drain_end)
		lg_poll_all(net_now_ns());
	lg_close_all();
	drain_end = net_now_ns() + 100000000ull;
	while (net_now_ns() < drain_end)
		lg_poll_all(net_now_ns());
	return 0;
}

int
lg_run(uint64_t *errs)
{
	uint64_t warm_end;
	unsigned int i;
	int rc = 0;

	lg_hist_reset(&prog_prev);
	run_start_ns = net_now_ns();
	warm_end = run_start_ns + lg.warmup_ns;
	for (i = 1; i < lg.nworkers; i++)
		if (rte_eal_remote_launch(worker_run, lg.w[i],
					  lg.w[i]->lcore_id) != 0) {
			fprintf(stderr, "ffn-loadgen: lcore %u did not start"
				"\n", lg.w[i]->lcore_id);
			/* Its share would be missing: stop the others. */
			lg_signal = SIGTERM;
			rc = -1;
		}
	worker_run(lg.w[0]);
	rte_eal_mp_wait_lcore();
	check_refs();
	stats_merge();
	/* Interrupted runs report the part of the window they measured. */
	report(lg.w[0]->end_ns > warm_end ?
	       (double)(lg.w[0]->end_ns - warm_end) / 1e9 : 1e-9);
	*errs = errors(&m_all);
	return rc;
}
