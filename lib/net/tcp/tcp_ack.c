/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* The sender's side of an arriving ACK: acceptability (RFC 5961 §5),
 * SACK and D-SACK blocks (scoreboard in tcp_sack.c), RTT samples (RFC
 * 6298), duplicate ACKs and recovery (RFC 5681, RFC 6582 NewReno, RFC
 * 6675), undo of spurious reductions (RFC 3708, RFC 3522/4015), the
 * window update and the persist exit. */

#include "tcp_priv.h"

/* ---- ACK processing ---- */

static uint32_t
tcp_rexmit_len(const struct tcp_conn *c, uint8_t *fl)
{
	/* the options of now (timestamps, SACK blocks of held data) */
	uint32_t len = tcp_seg_max(c);

	*fl = TCP_F_ACK;
	if (SEQ_GT(c->snd_una + len, c->snd_end)) {
		len = SEQ_GT(c->snd_end, c->snd_una) ?
		      c->snd_end - c->snd_una : 0;
		if ((c->flags & TF_FIN_SENT))
			*fl |= TCP_F_FIN;
	}
	return len;
}

/* Fast retransmit of the first unacknowledged segment. */
static void
tcp_rexmit_first(struct tcp_conn *c)
{
	uint8_t fl;
	uint32_t len = tcp_rexmit_len(c, &fl);

	int n = tcp_send_segment(c, c->snd_una, len, fl);

	/* a refused retransmission is left to the timer */
	if (n >= 0 && (uint32_t)n < len)
		len = n, fl &= ~TCP_F_FIN;
	c->stack->stats.retransmits++;
	c->undo_retrans++;
	c->flags &= ~TF_RTT_TIMING;
	c->high_rxt = c->snd_una + len + (fl & TCP_F_FIN ? 1 : 0);
	if (n >= 0)
		tcp_rxt_note(c, c->snd_una, c->high_rxt - c->snd_una);
}

/* Highest sequence the peer SACKed, or snd_una. */
static uint32_t
tcp_fack(const struct tcp_conn *c)
{
	return c->nr_sacked ? c->sacked[c->nr_sacked - 1].end : c->snd_una;
}

void
tcp_enter_recovery(struct tcp_conn *c)
{
	c->stack->stats.fast_retransmits++;
	tcp_cc_congestion(c);
	/* how far past the hole the peer had received: the reordering
	 * this episode must tolerate if it proves spurious */
	c->undo_dist = (tcp_fack(c) - c->snd_una) / c->mss;
	c->recover = c->snd_max;
	c->rec_start = c->snd_una;
	c->flags |= TF_RECOVERY;
	c->flags &= ~TF_RXT_CUT;
	/* The recovery's reduction answers the loss a probe may have
	 * repaired (RFC 8985 §7.4: the episode ends), and its copy's
	 * D-SACK must not undo this one (the count waits for it too). */
	if ((c->flags & TF_TLP_OUT) && (c->flags & TF_TLP_RETRANS))
		c->undo_retrans++;
	tcp_tlp_end(c);
	tcp_rexmit_first(c);
	if (c->flags & TF_SACK)
		c->cwnd = c->ssthresh;			/* RFC 6675 §5 (4.2) */
	else
		c->cwnd = c->ssthresh + 3u * c->mss;	/* RFC 6582 §3.2 */
}

/* The last reduction was spurious: take it back, leave recovery, and
 * wait for more SACKed data before calling a hole lost next time
 * (DupThresh raised past the reordering that fooled it, as Linux's
 * tp->reordering; RFC 4653 argues the same). */
static void
tcp_spurious(struct tcp_conn *c)
{
	c->stack->stats.undos++;
	tcp_cc_undo(c);
	c->reord = RTE_MIN(RTE_MAX((uint32_t)c->reord, c->undo_dist + 1u),
			   (uint32_t)TCP_REORD_MAX);
	if (c->reo_mult < 4)
		c->reo_mult++;
	c->reo_persist = TCP_REO_PERSIST;
	if (c->flags & TF_RECOVERY) {
		c->flags &= ~(TF_RECOVERY | TF_RTO_LOSS);
		c->dupacks = 0;
		c->recover = c->snd_una - 1;	/* a new episode may start */
	}
	c->nr_rxt = 0;		/* its retransmissions were not needed */
}

/* RFC 2883 §4: the first SACK block reports a duplicate when it lies
 * below the cumulative ACK or inside the second block. A duplicate of
 * data retransmitted since the reduction shows that retransmission was
 * not needed. Only without timestamps: the count cannot tell this
 * episode's retransmissions from an earlier one's still in flight, or
 * from copies the network duplicated, and under steady loss those
 * undid real reductions; Eifel (below) judges each episode exactly. */
static void
tcp_dsack_in(struct tcp_conn *c, const struct tcp_seg *g)
{
	const struct tcp_sack_block *b = g->o.sack;

	if (g->o.nr_sack == 0 || !(c->flags & TF_UNDO) ||
	    (c->flags & TF_TS) || tcp_tlp_dsack(c, g))
		return;
	if (!(SEQ_LEQ(b[0].end, g->ack) ||
	      (g->o.nr_sack > 1 && SEQ_GEQ(b[0].start, b[1].start) &&
	       SEQ_LEQ(b[0].end, b[1].end))))
		return;
	if (SEQ_LT(b[0].start, c->undo_marker) || c->undo_retrans == 0)
		return;
	if (--c->undo_retrans == 0)
		tcp_spurious(c);
}

/* RFC 3522 (Eifel detection) with timestamps: the ACK covering the
 * first retransmitted segment echoes the TSval of the copy that filled
 * the hole. Older than the retransmission: the original arrived, the
 * reduction (fast retransmit or timeout, RFC 4015) was spurious. */
static void
tcp_eifel(struct tcp_conn *c, const struct tcp_seg *g)
{
	if (!(c->flags & TF_UNDO) || !(c->flags & TF_TS) || !g->o.has_ts ||
	    g->o.tsecr == 0 || c->undo_retrans == 0 ||
	    !SEQ_GT(g->ack, c->undo_marker))
		return;
	if ((int32_t)(g->o.tsecr - c->undo_tsval) < 0)
		tcp_spurious(c);
	else
		c->flags &= ~TF_UNDO;	/* the retransmission was needed */
}

/* A recovery ended with its data all acknowledged: RFC 8985 §6.2 step
 * 4 keeps a widened reordering window for 16 recoveries, then goes back
 * to min_rtt/4; the DupThresh raised with it (c->reord) goes back to 3
 * as well. Reordering that stopped (or that was a one-off) would
 * otherwise delay every later loss detection by up to an RTT. */
static void
tcp_recovery_done(struct tcp_conn *c)
{
	if (c->reo_persist > 0 && --c->reo_persist == 0) {
		c->reo_mult = 1;
		c->reord = TCP_DUPTHRESH;
	}
}

/* A new recovery may start once the last one's data is all acked:
 * RFC 6582 §3.2 step 2 (ACK beyond recover) without SACK; RFC 6675 §5
 * (HighACK >= RecoveryPoint) with it, else a loss right after the
 * recovery point waits for the timer. */
static bool
tcp_may_recover(const struct tcp_conn *c, uint32_t ack)
{
	if (c->recover == c->iss)
		return true;
	if (c->flags & TF_SACK)
		return SEQ_GEQ(ack, c->recover);
	return SEQ_GT(ack, c->recover);
}

/* RFC 2018 §3, RFC 2883, RFC 6675 §3: the SACK blocks into the
 * scoreboard. Returns what the ACK passes that SACKs had delivered. */
static uint32_t
tcp_ack_sack_blocks(struct tcp_conn *c, const struct tcp_seg *g)
{
	uint32_t ack = g->ack, sacked0 = 0;
	unsigned int i;

	/* What the ACK passes that an earlier SACK had delivered already:
	 * not new to congestion control (below). */
	if (c->nr_sacked > 0 && SEQ_GT(ack, c->snd_una))
		sacked0 = tcp_sacked_in(c, c->snd_una, ack);
	if (c->flags & TF_SACK) {
		tcp_dsack_in(c, g);
		for (i = 0; i < g->o.nr_sack; i++)
			tcp_sacked_add(c, g->o.sack[i].start,
				       g->o.sack[i].end);
	}
	return sacked0;
}

/* RFC 6298 §3, RFC 7323 §4: an RTT sample from an ACK of new data. */
static void
tcp_ack_rtt(struct tcp_conn *c, const struct tcp_seg *g)
{
	struct tcp_stack *s = c->stack;

	if ((c->flags & TF_RTT_TIMING) && SEQ_GEQ(g->ack, c->rtt_seq)) {
		c->flags &= ~(TF_RTT_TIMING | TF_BACKOFF);
		tcp_rtt_sample(c, (uint32_t)(s->now - c->rtt_start));
	} else if ((c->flags & (TF_BACKOFF | TF_TS)) == (TF_BACKOFF | TF_TS) &&
		   g->o.has_ts && g->o.tsecr != 0) {
		/* After a timeout Karn's rule leaves no timed segment; the
		 * echoed timestamp still measures the RTT (RFC 7323 §4), so
		 * the backed-off RTO does not outlive the loss. 1 ms
		 * granularity. */
		uint32_t ms = (uint32_t)(s->now / 1000) + c->ts_offset -
			      g->o.tsecr;

		if (ms < 60000) {
			c->flags &= ~TF_BACKOFF;
			tcp_rtt_sample(c, ms * 1000);
		}
	}
}

/* RFC 6582 §3.2 step 3, RFC 6675 §5: an ACK of new data in fast
 * recovery, full or partial. */
static void
tcp_ack_recovery(struct tcp_conn *c, uint32_t ack, uint32_t acked)
{
	if (SEQ_GEQ(ack, c->recover)) {
		/* Full ACK: RFC 6582 §3.2 step 3, RFC 6675. */
		c->flags &= ~TF_RECOVERY;
		c->dupacks = 0;
		tcp_recovery_done(c);
		if (c->flags & TF_SACK)
			c->cwnd = c->ssthresh;
		else
			c->cwnd = RTE_MIN(c->ssthresh,
					  RTE_MAX(tcp_flight(c),
						  (uint32_t)c->mss) + c->mss);
	} else if (!(c->flags & TF_SACK)) {
		/* Partial ACK: retransmit, deflate. */
		tcp_rexmit_first(c);
		c->cwnd = (c->cwnd > acked ? c->cwnd - acked : 0) + c->mss;
		tcp_rearm_rto(c);
	}
}

/* RFC 5681 §3, RFC 6675 §5.1: congestion control on an ACK of new data
 * (acked bytes, sacked0 of them SACKed before). */
static void
tcp_ack_cc(struct tcp_conn *c, uint32_t ack, uint32_t acked,
	   uint32_t sacked0)
{
	if (c->flags & TF_RTO_LOSS) {
		/* After a timeout: slow start while the holes the scoreboard
		 * shows are repaired (RFC 6675 §5.1). */
		tcp_cc_ack(c, acked - sacked0);
		if (SEQ_GEQ(ack, c->recover)) {
			c->flags &= ~(TF_RECOVERY | TF_RTO_LOSS);
			c->dupacks = 0;
			tcp_recovery_done(c);
		}
	} else if (c->flags & TF_RECOVERY) {
		tcp_ack_recovery(c, ack, acked);
	} else {
		/* Growth by the data this ACK shows delivered (RFC 9438 §4.3
		 * segments_acked, RFC 3465): a hole filled under SACKed data
		 * passes hundreds of segments the peer had SACKed long
		 * before, and counted again they grew CUBIC's cwnd by half
		 * per ACK. */
		c->dupacks = 0;
		tcp_cc_ack(c, acked - sacked0);
	}
}

/* RFC 9293 §3.10.7.4 (fifth check, ESTABLISHED): the ACK advances
 * SND.UNA; Eifel, RTT, congestion control, RTO (RFC 6298 §5). Returns
 * the send-queue bytes it acknowledged. */
static uint32_t
tcp_ack_new_data(struct tcp_conn *c, const struct tcp_seg *g,
		 uint32_t sacked0)
{
	uint32_t ack = g->ack, acked, data_acked = 0;

	acked = ack - c->snd_una;
	tcp_eifel(c, g);
	if (SEQ_GT(ack, c->sq_seq) && SEQ_GT(c->snd_end, c->sq_seq))
		data_acked = SEQ_MIN(ack, c->snd_end) - c->sq_seq;
	tcp_sq_drop_acked(c, data_acked);
	tcp_ack_rtt(c, g);
	c->retries = 0;
	c->snd_una = ack;
	c->last_progress = c->stack->now;
	if (SEQ_LT(c->snd_nxt, ack))
		c->snd_nxt = ack;
	tcp_sacked_prune(c);
	tcp_ack_cc(c, ack, acked, sacked0);
	if (!c->persist) {
		if (c->snd_una == c->snd_max) {
			c->rto_at = 0;	/* RFC 6298 5.2 */
			c->flags &= ~TF_TLP_TIMER;
		} else if (!(c->flags & TF_RECOVERY) ||
			   (c->flags & TF_SACK)) {
			tcp_rearm_rto(c);	/* 5.3 */
		}
	}
	return data_acked;
}

/* RFC 5681 §2: an ACK that does not advance SND.UNA (wnd: its window,
 * scaled) is a duplicate ACK. */
static bool
tcp_is_dupack(const struct tcp_conn *c, const struct tcp_seg *g,
	      uint32_t wnd)
{
	return g->ack == c->snd_una && g->len == 0 &&
	       !(g->flags & (TCP_F_SYN | TCP_F_FIN)) &&
	       tcp_flight(c) > 0 && wnd == c->snd_wnd && wnd != 0 &&
	       !c->persist;
}

/* RFC 9293 §3.10.7.4 (SND.WL1/WL2) and §3.8.6.1 (zero-window probing):
 * the window update, and the persist exit once the window opens. */
static void
tcp_ack_window(struct tcp_conn *c, const struct tcp_seg *g, uint32_t wnd)
{
	/* Window update (RFC 9293 §3.10.7.4, SND.WL1/WL2). */
	if (SEQ_LT(c->snd_wl1, g->seq) ||
	    (c->snd_wl1 == g->seq && SEQ_LEQ(c->snd_wl2, g->ack))) {
		c->snd_wnd = wnd;
		c->snd_wl1 = g->seq;
		c->snd_wl2 = g->ack;
		if (wnd > c->max_snd_wnd)
			c->max_snd_wnd = wnd;
	}
	if (c->persist && c->snd_wnd > 0) {
		c->persist = 0;
		c->rto_at = 0;
		if (SEQ_LT(c->snd_nxt, c->snd_una))
			c->snd_nxt = c->snd_una;
		if (SEQ_GT(c->snd_max, c->snd_nxt) && c->snd_una ==
		    c->snd_nxt) {
			/* the probe byte was not taken: not in flight */
			c->snd_max = c->snd_nxt;
		}
	}
}

/* RFC 5681 §3.2, RFC 6582 §3.2: a duplicate ACK counted; fast
 * retransmit at DupThresh. */
static void
tcp_ack_dup(struct tcp_conn *c, uint32_t ack)
{
	c->dupacks++;
	if (c->flags & TF_RECOVERY) {
		if (!(c->flags & TF_SACK))
			c->cwnd += c->mss;	/* RFC 6582 step 4 */
	} else if (tcp_may_recover(c, ack)) {
		if (c->dupacks >= c->reord)
			tcp_enter_recovery(c);
	}
}

/* RFC 6675 §5, RFC 8985 §6.2: loss the SACK scoreboard shows (una0:
 * SND.UNA before this ACK). */
static void
tcp_ack_sack_loss(struct tcp_conn *c, uint32_t ack, uint32_t una0)
{
	struct tcp_stack *s = c->stack;
	unsigned int i;

	/* A retransmission lost again (RFC 8985 §6.2): sent again by the
	 * tcp_output() that follows the ACK. */
	if (c->flags & TF_SACK)
		tcp_rxt_check(c);
	/* When the first hole was first SACK-bypassed. */
	if (c->nr_sacked == 0)
		c->sack_since = 0;
	else if (c->sack_since == 0 || SEQ_GT(ack, una0))
		c->sack_since = s->now;
	/* RFC 6675 §5: SACK information alone can show loss. */
	if ((c->flags & (TF_SACK | TF_RECOVERY)) == TF_SACK &&
	    c->nr_sacked > 0 && tcp_may_recover(c, ack)) {
		uint32_t bytes = 0;

		for (i = 0; i < c->nr_sacked; i++)
			bytes += c->sacked[i].end - c->sacked[i].start;
		if (c->nr_sacked >= c->reord ||
		    bytes > (uint32_t)(c->reord - 1) * c->mss ||
		    tcp_hole_timed_out(c))
			tcp_enter_recovery(c);
		else	/* look again when the window has passed */
			tcp_reo_timer_arm(c, c->sack_since + tcp_reo_wnd(c));
	}
}

/* ACK processing for synchronized states (RFC 9293 §3.10.7.4, fifth
 * check). Returns -1 to drop. */
int
tcp_ack(struct tcp_conn *c, struct tcp_seg *g)
{
	uint32_t ack = g->ack, wnd = g->win << c->snd_wscale;
	uint32_t data_acked = 0, una0 = c->snd_una, sacked0;
	bool dup = false;

	/* RFC 5961 §5.2: acceptable ACK range. */
	if (SEQ_GT(ack, c->snd_max) ||
	    SEQ_LT(ack, c->snd_una - c->max_snd_wnd)) {
		c->stack->stats.drops[TCP_DROP_BAD_ACK]++;
		tcp_challenge_ack(c);
		return -1;
	}
	sacked0 = tcp_ack_sack_blocks(c, g);
	if (SEQ_GT(ack, c->snd_una))
		data_acked = tcp_ack_new_data(c, g, sacked0);
	else
		dup = tcp_is_dupack(c, g, wnd); /* RFC 5681 §2 duplicate ACK */

	tcp_ack_window(c, g, wnd);
	tcp_tlp_ack(c, g, una0);	/* RFC 8985 §7.4 */
	if (dup)
		tcp_ack_dup(c, ack);
	tcp_ack_sack_loss(c, ack, una0);

	/* RFC 8985 §7.2: an ACK of new data restarts the probe timer. */
	if (SEQ_GT(ack, una0) && !c->persist)
		tcp_tlp_arm(c);

	if (data_acked > 0 && c->ops != NULL && c->ops->sent != NULL &&
	    tcp_cb_enter(c)) {
		c->ops->sent(c->arg, c, data_acked);
		if (!tcp_cb_leave(c))
			return -2;
	}
	return 0;
}
