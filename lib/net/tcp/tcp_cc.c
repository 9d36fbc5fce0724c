/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* RTT estimation (RFC 6298) and congestion control: RFC 5681 slow start
 * and NewReno congestion avoidance, or CUBIC (RFC 9438). Recovery itself
 * (NewReno RFC 6582, SACK RFC 6675) lives in tcp_ack.c/tcp_output.c;
 * this file says how far cwnd moves. */

#include <math.h>

#include "tcp_priv.h"

#define CUBIC_C 0.4		/* RFC 9438 §5 */
#define CUBIC_BETA 0.7
#define CUBIC_ALPHA (3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA))

void
tcp_rtt_sample(struct tcp_conn *c, uint32_t r)
{
	const struct tcp_stack_config *cfg = &c->stack->cfg;
	uint32_t rto;

	if (r == 0)
		r = 1;
	if (c->min_rtt == 0 || r < c->min_rtt)
		c->min_rtt = r;
	if (c->srtt == 0) {		/* RFC 6298 2.2 */
		c->srtt = r;
		c->rttvar = r / 2;
	} else {			/* 2.3, alpha 1/8, beta 1/4 */
		uint32_t d = c->srtt > r ? c->srtt - r : r - c->srtt;

		c->rttvar = (3 * c->rttvar + d) / 4;
		c->srtt = (7 * c->srtt + r) / 8;
	}
	rto = c->srtt + RTE_MAX((uint32_t)TCP_TICK_US, 4 * c->rttvar);
	c->rto = RTE_MIN(RTE_MAX(rto, cfg->rto_min_us), cfg->rto_max_us);
}

void
tcp_cc_init(struct tcp_conn *c)
{
	/* RFC 6928 initial window. */
	uint32_t iw = RTE_MIN(10u * c->mss, RTE_MAX(2u * c->mss, 14600u));

	c->cwnd = iw;
	c->ssthresh = UINT32_MAX;
	c->reord = TCP_DUPTHRESH;
	c->reo_mult = 1;
	c->reo_persist = 0;
	c->high_rxt = c->iss;
	c->rescue_rxt = c->iss;
	c->bytes_acked = 0;
	c->cubic_wmax = 0;
	c->cubic_epoch = 0;
}

static void
tcp_cubic_ca(struct tcp_conn *c, uint32_t acked)
{
	double mss = c->mss, cwnd = c->cwnd / mss, t, target, wc, alpha;
	uint64_t now = c->stack->now;

	if (c->cubic_epoch == 0) {	/* RFC 9438 §4.2: a new epoch */
		c->cubic_epoch = now ? now : 1;
		if (c->cubic_wmax < cwnd) {
			c->cubic_k = 0;
			c->cubic_wmax = cwnd;
		} else {
			c->cubic_k = cbrt((c->cubic_wmax - cwnd) / CUBIC_C);
		}
		c->cubic_west = cwnd;
	}
	t = (double)(now - c->cubic_epoch) / 1e6;
	/* §4.3 Reno-friendly estimate; once it is back at the cwnd of the
	 * last reduction, it grows as Reno does (alpha 1). */
	alpha = c->cubic_west * mss >= (double)c->prior_cwnd ? 1.0 :
		CUBIC_ALPHA;
	c->cubic_west += alpha * ((double)acked / mss) / cwnd;
	/* §4.2 target at t + RTT, clamped to [cwnd, 1.5 cwnd]. */
	target = CUBIC_C * pow(t + c->srtt / 1e6 - c->cubic_k, 3) +
		 c->cubic_wmax;
	target = RTE_MAX(target, cwnd);
	target = RTE_MIN(target, 1.5 * cwnd);
	wc = CUBIC_C * pow(t - c->cubic_k, 3) + c->cubic_wmax;
	if (wc < c->cubic_west) {
		if (c->cubic_west > cwnd)
			c->cubic_west = RTE_MIN(c->cubic_west, 1.5 * cwnd);
		c->cwnd = (uint32_t)(RTE_MAX(c->cubic_west, cwnd) * mss);
		return;
	}
	c->bytes_acked += (uint32_t)((target - cwnd) / cwnd * acked);
	if (c->bytes_acked >= 1) {
		c->cwnd += c->bytes_acked;
		c->bytes_acked = 0;
	}
}

/* New data acknowledged outside recovery. */
void
tcp_cc_ack(struct tcp_conn *c, uint32_t acked)
{
	if (c->cwnd < c->ssthresh) {	/* RFC 5681 §3.1 slow start, L=1 */
		c->cwnd += RTE_MIN(acked, (uint32_t)c->mss);
		return;
	}
	if (c->stack->cfg.cc == TCP_CC_CUBIC) {
		tcp_cubic_ca(c, acked);
		return;
	}
	/* Congestion avoidance: one MSS per cwnd of data acked. */
	c->bytes_acked += acked;
	if (c->bytes_acked >= c->cwnd) {
		c->bytes_acked -= c->cwnd;
		c->cwnd += c->mss;
	}
}

/* ssthresh after a congestion event. FlightSize (RFC 5681 eq. 4, RFC
 * 9438 §4.6) counts from snd_una, so in SACK recovery it holds data the
 * peer SACKed: after a long episode (a hole whose retransmission was
 * lost) several times cwnd, and a "reduction" from it raised ssthresh
 * far above cwnd; the slow start after the next timeout then ran to it
 * and sent bursts of hundreds of segments into a 5 % loss path. The
 * base is never above cwnd, as in Linux (cwnd) and FreeBSD (min of the
 * windows). */
static uint32_t
tcp_cc_reduce_from(struct tcp_conn *c, uint32_t flight)
{
	uint32_t min = 2u * c->mss;

	flight = RTE_MIN(flight, c->cwnd);

	c->bytes_acked = 0;
	if (c->stack->cfg.cc == TCP_CC_CUBIC) {
		double w = (double)c->cwnd / c->mss;

		/* RFC 9438 §4.7 fast convergence, §4.6 reduction. */
		if (w < c->cubic_wmax)
			c->cubic_wmax = w * (1.0 + CUBIC_BETA) / 2.0;
		else
			c->cubic_wmax = w;
		c->cubic_epoch = 0;
		return RTE_MAX((uint32_t)(flight * CUBIC_BETA), min);
	}
	return RTE_MAX(flight / 2, min);	/* RFC 5681 eq. 4 */
}

static uint32_t
tcp_cc_reduce(struct tcp_conn *c)
{
	return tcp_cc_reduce_from(c, tcp_flight(c));
}

/* Remember what a reduction takes away, until D-SACKs show every
 * retransmission it caused was unnecessary (tcp_cc_undo). */
static void
tcp_cc_save(struct tcp_conn *c)
{
	c->flags |= TF_UNDO;
	c->undo_marker = c->snd_una;
	c->undo_retrans = 0;
	c->undo_tsval = (uint32_t)(c->stack->now / 1000) + c->ts_offset;
	c->undo_dist = 0;
	c->prior_cwnd = c->cwnd;
	c->prior_ssthresh = c->ssthresh;
	c->prior_wmax = c->cubic_wmax;
}

/* Loss detected by duplicate ACKs or SACK: entering recovery. */
void
tcp_cc_congestion(struct tcp_conn *c)
{
	tcp_cc_save(c);
	c->ssthresh = tcp_cc_reduce(c);
}

/* A retransmission was lost too (RFC 8985 §6.2): RFC 5681 §4.3 takes
 * that as a second indication of congestion, cwnd and ssthresh lowered
 * twice; once per recovery episode here (RFC 8985 §9.3 leaves the
 * response to the congestion control). Not undone later: the
 * retransmission was needed. */
void
tcp_cc_lost_rexmit(struct tcp_conn *c)
{
	c->flags &= ~TF_UNDO;
	c->ssthresh = tcp_cc_reduce(c);
	c->cwnd = c->ssthresh;
}

/* A tail loss probe repaired a loss (RFC 8985 §7.4.2): the reduction a
 * fast recovery would have made, without the recovery, from FlightSize
 * when the loss was found (the probe went; it is acknowledged by now).
 * Not undone: the probe was needed. */
void
tcp_cc_tlp_loss(struct tcp_conn *c, uint32_t flight)
{
	c->flags &= ~TF_UNDO;
	c->ssthresh = tcp_cc_reduce_from(c, flight);
	c->cwnd = c->ssthresh;
}

/* Retransmission timeout: loss window (RFC 5681 §3.1), but do not
 * reduce ssthresh again for a repeated timeout of the same data. */
void
tcp_cc_rto(struct tcp_conn *c)
{
	if (c->retries <= 1) {
		tcp_cc_save(c);
		c->ssthresh = tcp_cc_reduce(c);
	} else {
		c->flags &= ~TF_UNDO;	/* the path did go quiet */
	}
	c->cwnd = c->mss;
}

/* Every retransmission since the reduction came back as a duplicate
 * (RFC 2883 D-SACK): the data was reordered or delayed, not lost, so
 * the reduction is taken back (RFC 3708 §3, as Linux's DSACK undo;
 * RFC 9438 §4.9 restores W_max the same way). */
void
tcp_cc_undo(struct tcp_conn *c)
{
	c->flags &= ~TF_UNDO;
	c->cwnd = RTE_MAX(c->cwnd, c->prior_cwnd);
	c->ssthresh = RTE_MAX(c->ssthresh, c->prior_ssthresh);
	c->cubic_wmax = c->prior_wmax;
	c->cubic_epoch = 0;
	c->bytes_acked = 0;
}
