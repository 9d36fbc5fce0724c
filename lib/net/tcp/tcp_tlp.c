/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* Tail loss probes (RFC 8985 §7). When the last segments of a flight
 * (or all its ACKs) are lost, no SACK comes back to start a recovery and
 * only the RTO is left, which collapses cwnd to one segment. A probe
 * sent after about two RTTs of silence draws an ACK instead: its SACK
 * shows the holes and SACK recovery (tcp_sack.c) repairs them, or the
 * probe itself repairs a single lost segment. The RTO stays armed
 * behind the probe as the last resort.
 *
 * The probe timer shares rto_at with the RTO (TF_TLP_TIMER); the RTO
 * expiry it stands in front of is kept in tlp_rto_at. */

#include "tcp_priv.h"

/* WCDelAckT (RFC 8985 §7.2): the peer's worst-case delayed ACK. */
#define TCP_TLP_WC_DELACK_US (200 * 1000)
/* PTO without an RTT sample (§7.2). */
#define TCP_TLP_NO_SRTT_US (1000 * 1000)
/*
 * Added to 2*SRTT when more than one segment is in flight: the time a
 * peer may take to act on what arrived, which an RTT sample on a fast
 * path does not show (it measures the peer's stack, and a busy or
 * descheduled peer ACKs later). Over memif (SRTT 33-38 us, so a PTO of
 * 66-76 us) 20 of 1300 answers drew a needless probe, a duplicate at the
 * peer and its D-SACK; with the 2 ms, 3. Linux adds the same 2 ms
 * (TCP_TIMEOUT_MIN_US in tcp_schedule_loss_probe()); on a WAN path
 * 2*SRTT dominates it, and a real tail loss still costs 2 ms, not the
 * 200 ms RTO.
 */
#define TCP_TLP_MIN_US 2000

void
tcp_tlp_end(struct tcp_conn *c)
{
	c->flags &= ~(TF_TLP_OUT | TF_TLP_RETRANS);
}

/* §7.2: a probe is scheduled only with SACK, in the open state (not in
 * fast or RTO recovery, nothing SACKed out of order: RACK's reordering
 * timer covers that), with data in flight, and at most one probe per
 * episode (TLP.end_seq unset). Not while the persist or the reordering
 * timer owns rto_at. */
static bool
tcp_tlp_allowed(const struct tcp_conn *c)
{
	return !c->stack->cfg.no_tlp && (c->flags & TF_SACK) &&
	       c->state >= TCP_ESTABLISHED && c->state != TCP_TIME_WAIT &&
	       c->state != TCP_FIN_WAIT_2 &&
	       !(c->flags & (TF_RECOVERY | TF_TLP_OUT | TF_REO_TIMER)) &&
	       c->nr_sacked == 0 && !c->persist && tcp_flight(c) > 0;
}

/* §7.2 TLP_calc_PTO() without the RTO cap: 2*SRTT, plus the worst-case
 * delayed ACK when one segment is in flight (its ACK may be delayed, no
 * second segment forces it), else plus TCP_TLP_MIN_US; 1 s before an
 * RTT sample. */
uint32_t
tcp_tlp_pto(const struct tcp_conn *c)
{
	uint32_t pto;

	if (c->srtt == 0)
		return TCP_TLP_NO_SRTT_US;
	pto = 2 * c->srtt;
	if (tcp_flight(c) <= c->mss)
		pto += TCP_TLP_WC_DELACK_US;
	else
		pto += TCP_TLP_MIN_US;
	return pto;
}

/* Start or restart the probe timer (§7.2): after new data was sent (not
 * a probe) and after an ACK that acknowledged new data. It never fires
 * later than the RTO would: at the RTO's time the probe goes instead. */
void
tcp_tlp_arm(struct tcp_conn *c)
{
	uint64_t now = c->stack->now, rto_exp, at;

	if (!tcp_tlp_allowed(c))
		return;
	if ((c->flags & TF_TLP_TIMER) && c->rto_at != 0)
		rto_exp = c->tlp_rto_at;
	else
		rto_exp = c->rto_at != 0 ? c->rto_at : now + c->rto;
	at = now + tcp_tlp_pto(c);
	if (at > rto_exp)
		at = rto_exp;
	c->tlp_rto_at = rto_exp;
	c->rto_at = at;
	c->flags |= TF_TLP_TIMER;
	tcp_timer_sched(c);
}

/* §7.3: no new segment can go, so the highest-sequence one sent so far
 * (up to SMSS, its FIN with it) is sent again: the peer's answer to it
 * shows what is missing below. Returns false when nothing went. */
static bool
tcp_tlp_rexmit_last(struct tcp_conn *c)
{
	uint32_t segmax = tcp_seg_max(c), top, st, len;
	uint8_t fl = TCP_F_ACK;
	int n;

	top = SEQ_MIN(c->snd_max, c->snd_end);
	if (SEQ_LT(top, c->snd_una))
		top = c->snd_una;
	if ((c->flags & TF_FIN_SENT) && SEQ_GT(c->snd_max, c->snd_end))
		fl |= TCP_F_FIN;
	st = SEQ_GT(top, c->snd_una + segmax) ? top - segmax : c->snd_una;
	len = top - st;
	if (len == 0 && !(fl & TCP_F_FIN))
		return false;
	n = tcp_send_segment(c, st, len, fl);
	if (n < 0)
		return false;
	c->stack->stats.retransmits++;
	c->flags &= ~TF_RTT_TIMING;	/* Karn: the sample is ambiguous */
	c->tlp_seq = st;
	return true;
}

/* The probe timer fired (§7.3 TLP_send_probe). Returns false when no
 * probe may go and the RTO this timer stood in front of is due: the
 * caller runs it. */
bool
tcp_tlp_fire(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;
	uint32_t wnd_end = c->snd_una + c->snd_wnd;
	bool sent = false, rexmit = false;

	if (!tcp_tlp_allowed(c)) {
		/* Recovery began, or SACKs came, since the timer was set:
		 * the RTO goes back to its own time. */
		if (c->tlp_rto_at <= s->now)
			return false;
		c->rto_at = c->tlp_rto_at;
		tcp_timer_sched(c);
		return true;
	}
	/* New data if any is waiting and the peer's window takes it,
	 * whatever cwnd says: it probes as well as a copy would, and
	 * needs no retransmission. */
	c->tlp_flight = tcp_flight(c);
	if (c->snd_nxt == c->snd_max && SEQ_LT(c->snd_nxt, c->snd_end) &&
	    SEQ_GT(wnd_end, c->snd_nxt)) {
		uint32_t seq = c->snd_nxt;

		c->flags |= TF_TLP_OUT;	/* not a send that re-arms the PTO */
		sent = tcp_output_one(c, RTE_MIN(wnd_end - c->snd_nxt,
				      (uint32_t)tcp_seg_max(c)), true) > 0;
		c->flags &= ~TF_TLP_OUT;
		c->tlp_seq = seq;
	}
	if (!sent)
		sent = rexmit = tcp_tlp_rexmit_last(c);
	if (sent) {
		s->stats.tlp_probes++;
		c->tlp_end = c->snd_max;	/* TLP.end_seq = SND.NXT */
		c->flags |= TF_TLP_OUT | (rexmit ? TF_TLP_RETRANS : 0);
	}
	/* §7.3: whether or not a probe went, the RTO (not another PTO)
	 * is armed, the last resort if the probe is lost too. */
	tcp_rearm_rto(c);
	return true;
}

/* RFC 2883 D-SACK in this ACK for the probe's copy: both the original
 * and the probe arrived. */
bool
tcp_tlp_dsack(const struct tcp_conn *c, const struct tcp_seg *g)
{
	const struct tcp_sack_block *b = g->o.sack;

	if ((c->flags & (TF_TLP_OUT | TF_TLP_RETRANS)) !=
	    (TF_TLP_OUT | TF_TLP_RETRANS) || g->o.nr_sack == 0)
		return false;
	if (!(SEQ_LEQ(b[0].end, g->ack) ||
	      (g->o.nr_sack > 1 && SEQ_GEQ(b[0].start, b[1].start) &&
	       SEQ_LEQ(b[0].end, b[1].end))))
		return false;
	return SEQ_LT(b[0].start, c->tlp_end) && SEQ_GT(b[0].end, c->tlp_seq);
}

/* §7.4 TLP_process_ack(): did the probe repair a loss? A probe of new
 * data needs no answer (RACK judges its flight). A retransmitted one
 * shown duplicate by a D-SACK, or by a pure duplicate ACK at its end
 * (a peer without D-SACK got both copies), repaired nothing. An ACK
 * beyond it with neither seen: the copy filled the hole, a loss the
 * congestion control must answer as a fast recovery would (§7.4.2).
 * An ACK exactly at its end that is neither waits: it may be the
 * original's, the probe's D-SACK to follow. una0: snd_una before. */
void
tcp_tlp_ack(struct tcp_conn *c, const struct tcp_seg *g, uint32_t una0)
{
	if (!(c->flags & TF_TLP_OUT) || SEQ_LT(g->ack, c->tlp_end))
		return;
	if (!(c->flags & TF_TLP_RETRANS) || tcp_tlp_dsack(c, g)) {
		tcp_tlp_end(c);
		return;
	}
	if (SEQ_GT(g->ack, c->tlp_end)) {
		tcp_tlp_end(c);
		c->stack->stats.tlp_recoveries++;
		tcp_cc_tlp_loss(c, c->tlp_flight);
		return;
	}
	if (g->ack == una0 && g->len == 0 && g->o.nr_sack == 0 &&
	    !(g->flags & (TCP_F_SYN | TCP_F_FIN)))
		tcp_tlp_end(c);
}
