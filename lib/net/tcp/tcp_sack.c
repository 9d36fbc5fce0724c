/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* SACK-based loss recovery (RFC 6675): the scoreboard of what the peer
 * SACKed (RFC 2018), IsLost() as a boundary with DupThresh raised by the
 * reordering seen and a time threshold (RFC 8985-style), SetPipe(), and
 * the send loop of §5 step (C) with NextSeg() rules 1-4, rule 4 being
 * the rescue retransmission. RFC 6675 repairs a lost retransmission only
 * by the RTO; RACK's time order (RFC 8985 §6.2) finds it sooner: the
 * runs of retransmitted data are remembered, and one that data sent
 * after it overtook is lost once the reordering window has passed. */

#include "tcp_priv.h"

/* Update() of RFC 6675 §4: merge a SACK block into the scoreboard. */
void
tcp_sacked_add(struct tcp_conn *c, uint32_t st, uint32_t en)
{
	struct tcp_sack_block *b = c->sacked;
	unsigned int i, n = c->nr_sacked, k;

	if (SEQ_LEQ(en, c->snd_una) || SEQ_GT(en, c->snd_max) ||
	    SEQ_GEQ(st, en))
		return;		/* invalid or D-SACK (RFC 2883) */
	if (SEQ_LT(st, c->snd_una))
		st = c->snd_una;
	for (i = 0; i < n && SEQ_LT(b[i].end, st); i++)
		;
	/* merge every block overlapping/adjacent to [st, en) */
	k = i;
	while (k < n && SEQ_LEQ(b[k].start, en)) {
		st = SEQ_MIN(st, b[k].start);
		en = SEQ_MAX(en, b[k].end);
		k++;
	}
	if (k == i && n == RTE_DIM(c->sacked)) {
		if (i == n)
			return;	/* full: forget the highest instead */
		n--;
	}
	memmove(&b[i + 1], &b[k], (n - k) * sizeof(*b));
	b[i].start = st;
	b[i].end = en;
	c->nr_sacked = n - (k - i) + 1;
}

/* Forget what the cumulative ACK passed. */
void
tcp_sacked_prune(struct tcp_conn *c)
{
	unsigned int i, k = 0;

	for (i = 0; i < c->nr_sacked; i++) {
		if (SEQ_LEQ(c->sacked[i].end, c->snd_una))
			continue;
		c->sacked[k] = c->sacked[i];
		if (SEQ_LT(c->sacked[k].start, c->snd_una))
			c->sacked[k].start = c->snd_una;
		k++;
	}
	c->nr_sacked = k;
}

/* Bytes of [a, b) the scoreboard holds as SACKed. */
uint32_t
tcp_sacked_in(const struct tcp_conn *c, uint32_t a, uint32_t b)
{
	uint32_t n = 0;
	unsigned int i;

	for (i = 0; i < c->nr_sacked; i++) {
		uint32_t s = SEQ_MAX(a, c->sacked[i].start);
		uint32_t e = SEQ_MIN(b, c->sacked[i].end);

		if (SEQ_LT(s, e))
			n += e - s;
	}
	return n;
}

/* ---- retransmissions lost again (RFC 8985 §6.2) ---- */

/* A retransmission of [seq, seq + len) went out (FIN counted in len). */
void
tcp_rxt_note(struct tcp_conn *c, uint32_t seq, uint32_t len)
{
	struct tcp_rxt *r = c->nr_rxt ? &c->rxt[c->nr_rxt - 1] : NULL;

	if (len == 0 || !(c->flags & TF_SACK))
		return;
	/* A burst with no new data in between is one run. When every slot
	 * is taken the retransmission is not tracked: the RTO stays its
	 * backstop (a run spanning data never resent would, once lost,
	 * send all of that again). */
	if (r != NULL && !r->lost && r->seen == 0 && r->end == seq &&
	    r->mark == c->snd_max) {
		r->end = seq + len;
		r->at = c->stack->now;
		return;
	}
	if (c->nr_rxt == TCP_RXT_RECS)
		return;
	r = &c->rxt[c->nr_rxt++];
	r->start = seq;
	r->next = seq;
	r->end = seq + len;
	r->mark = c->snd_max;
	r->at = c->stack->now;
	r->seen = 0;
	r->lost = 0;
}

/* RFC 8985 §6.2 for the runs: trim what was ACKed, forget the runs the
 * peer now holds, and mark lost a run that data sent after it passed
 * (step 2: new data above its mark SACKed, or a later run delivered)
 * at least the reordering window ago (steps 4-5). A later run is only
 * evidence when it was sent at least min_rtt ago, else the SACK may be
 * for its original (step 2's ambiguity). *due: when the first run
 * still waiting is to be looked at again (0: none). */
static bool
tcp_rxt_detect(struct tcp_conn *c, uint64_t *due)
{
	uint32_t fack = c->nr_sacked ? c->sacked[c->nr_sacked - 1].end :
			c->snd_una;
	uint64_t now = c->stack->now, wnd = tcp_reo_wnd(c);
	bool found = false, later = false;
	unsigned int i, k;

	*due = 0;
	for (i = c->nr_rxt; i-- > 0;) {
		struct tcp_rxt *r = &c->rxt[i];

		if (SEQ_LT(r->start, c->snd_una))
			r->start = c->snd_una;
		if (SEQ_LT(r->next, r->start))
			r->next = r->start;
		if (SEQ_GEQ(r->start, r->end) || tcp_sacked_in(c, r->start,
				r->end) == r->end - r->start) {
			if (!r->lost && now - r->at >= c->min_rtt)
				later = true;
			r->end = r->start;	/* delivered: dropped below */
			continue;
		}
		if (r->lost)
			continue;
		if (r->seen == 0 && (later || SEQ_GT(fack, r->mark)))
			r->seen = now;
		if (r->seen == 0)
			continue;
		if (now - r->seen >= wnd) {
			r->lost = 1;
			found = true;
			c->stack->stats.lost_rexmits++;
		} else if (*due == 0 || r->seen + wnd < *due) {
			*due = r->seen + wnd;
		}
	}
	for (i = 0, k = 0; i < c->nr_rxt; i++)
		if (SEQ_LT(c->rxt[i].start, c->rxt[i].end))
			c->rxt[k++] = c->rxt[i];
	c->nr_rxt = k;
	return found;
}

static uint32_t tcp_rexmit_lost_run(struct tcp_conn *c, uint32_t segmax,
				    bool *stop);

/* After an ACK or the reordering timer: true when a retransmission was
 * found lost, to be sent again (tcp_output). The first one in a
 * recovery is a second congestion signal (tcp_cc_lost_rexmit). */
bool
tcp_rxt_check(struct tcp_conn *c)
{
	uint64_t due;
	bool found;

	if (c->nr_rxt == 0)
		return false;
	found = tcp_rxt_detect(c, &due);
	if (found && (c->flags & TF_RECOVERY)) {
		bool stop;

		if (!(c->flags & TF_RXT_CUT)) {
			c->flags |= TF_RXT_CUT;
			tcp_cc_lost_rexmit(c);
		}
		/* Its first segment goes now, whatever pipe says, as the
		 * fast retransmit that starts a recovery (RFC 6675 §5 step
		 * 4.3): the cumulative ACK waits for it, and after the
		 * reduction pipe may stay above cwnd for a while. */
		tcp_rexmit_lost_run(c, tcp_seg_max(c), &stop);
	}
	if (due != 0)
		tcp_reo_timer_arm(c, due);
	return found;
}

/* Highest end of a run found lost (snd_una: none). */
static uint32_t
tcp_rxt_lost_top(const struct tcp_conn *c)
{
	uint32_t top = c->snd_una;
	unsigned int i;

	for (i = 0; i < c->nr_rxt; i++)
		if (c->rxt[i].lost)
			top = SEQ_MAX(top, c->rxt[i].end);
	return top;
}

/* Retransmitted bytes SetPipe() counts (below HighRxt, not SACKed) that
 * were found lost and not yet sent again: no longer in the network. */
static uint32_t
tcp_rxt_lost_bytes(const struct tcp_conn *c)
{
	uint32_t n = 0, top = SEQ_MIN(c->high_rxt, c->snd_max);
	unsigned int i;

	for (i = 0; i < c->nr_rxt; i++) {
		const struct tcp_rxt *r = &c->rxt[i];
		uint32_t e = SEQ_MIN(r->end, top);

		if (r->lost && SEQ_LT(r->next, e))
			n += (e - r->next) - tcp_sacked_in(c, r->next, e);
	}
	return n;
}

/* RFC 6675 IsLost as a boundary: every un-SACKed byte below it has
 * DupThresh SACKed blocks or more than (DupThresh-1)*SMSS SACKed bytes
 * above it. DupThresh grows with the reordering seen (c->reord). After
 * a timeout every un-SACKed byte sent before it is lost. */
static uint32_t
tcp_lost_edge(const struct tcp_conn *c)
{
	uint32_t bytes = 0;
	int i;

	if (c->flags & TF_RTO_LOSS)	/* what was out when it fired */
		return c->recover;
	for (i = c->nr_sacked - 1; i >= 0; i--) {
		bytes += c->sacked[i].end - c->sacked[i].start;
		if (c->nr_sacked - i >= c->reord ||
		    bytes > (uint32_t)(c->reord - 1) * c->mss)
			return c->sacked[i].start;
	}
	if (tcp_hole_timed_out(c))
		return c->sacked[0].start;
	return c->snd_una;
}

/* The boundary, also past every run of retransmissions found lost: its
 * originals went before it and are lost as well. */
static uint32_t
tcp_lost_edge_rxt(const struct tcp_conn *c)
{
	return SEQ_MAX(tcp_lost_edge(c), tcp_rxt_lost_top(c));
}

/* RFC 6675 §4 SetPipe(). */
static uint32_t
tcp_pipe(const struct tcp_conn *c, uint32_t lost)
{
	uint32_t pipe = 0, top;

	if (SEQ_LT(lost, c->snd_max))
		pipe += (c->snd_max - lost) -
			tcp_sacked_in(c, lost, c->snd_max);
	top = SEQ_MIN(c->high_rxt, c->snd_max);
	if (SEQ_LT(c->snd_una, top))
		pipe += (top - c->snd_una) - tcp_sacked_in(c, c->snd_una, top);
	return pipe;
}

/* First un-SACKed byte in [from, to), or to. */
static uint32_t
tcp_next_hole(const struct tcp_conn *c, uint32_t from, uint32_t to,
	      uint32_t *hole_end)
{
	unsigned int i;

	for (i = 0; i < c->nr_sacked; i++) {
		if (SEQ_LEQ(c->sacked[i].end, from))
			continue;
		if (SEQ_LEQ(c->sacked[i].start, from)) {
			from = c->sacked[i].end;
			continue;
		}
		break;
	}
	*hole_end = i < c->nr_sacked ? SEQ_MIN(c->sacked[i].start, to) : to;
	return SEQ_MIN(from, to);
}

/* Retransmit from seq, at most len bytes (FIN included when it falls in
 * the range). Returns the sequence space sent, 0 when refused. */
static uint32_t
tcp_rexmit(struct tcp_conn *c, uint32_t seq, uint32_t len)
{
	uint8_t fl = TCP_F_ACK;
	int n;

	if (SEQ_GEQ(seq + len, c->snd_end) && (c->flags & TF_FIN_SENT)) {
		len = SEQ_GT(c->snd_end, seq) ? c->snd_end - seq : 0;
		fl |= TCP_F_FIN;
	}
	n = tcp_send_segment(c, seq, len, fl);
	if (n < 0)
		return 0;
	if ((uint32_t)n < len)
		len = n, fl &= ~TCP_F_FIN;
	c->stack->stats.retransmits++;
	c->undo_retrans++;
	len += fl & TCP_F_FIN ? 1 : 0;
	tcp_rxt_note(c, seq, len);
	return len;
}

/* Rule 0: the first run found lost again goes before anything else; it
 * holds up the cumulative ACK. Returns the sequence space sent, 0 when
 * there is none (or it was refused: *stop). */
static uint32_t
tcp_rexmit_lost_run(struct tcp_conn *c, uint32_t segmax, bool *stop)
{
	unsigned int i;

	*stop = false;
	for (i = 0; i < c->nr_rxt; i++) {
		struct tcp_rxt *r = &c->rxt[i];
		uint32_t hole, hend, n;

		if (!r->lost || SEQ_GEQ(r->next, r->end))
			continue;
		hole = tcp_next_hole(c, r->next, r->end, &hend);
		if (SEQ_GEQ(hole, r->end)) {
			r->next = r->end;
			continue;
		}
		n = tcp_rexmit(c, hole, RTE_MIN(hend - hole, segmax));
		if (n == 0) {
			*stop = true;
			return 0;
		}
		r = &c->rxt[i];		/* tcp_rexmit noted a new run */
		r->next = hole + n;
		return n;
	}
	return 0;
}

/* Highest un-SACKed byte below snd_max, plus one (snd_una if none). */
static uint32_t
tcp_unsacked_top(const struct tcp_conn *c)
{
	uint32_t top = c->snd_max;
	int i;

	for (i = c->nr_sacked - 1; i >= 0; i--) {
		if (c->sacked[i].end != top)
			break;
		top = c->sacked[i].start;
	}
	return SEQ_MAX(top, c->snd_una);
}

/* NextSeg() rules 1 and 3 (RFC 6675 §4): the first un-SACKed hole above
 * HighRxt and below limit (the lost boundary for rule 1, the highest
 * SACKed byte for rule 3) is retransmitted and HighRxt moves past it.
 * Returns the sequence space sent, 0 when there is no such hole (or it
 * was refused: *stop). */
static uint32_t
tcp_rexmit_hole_below(struct tcp_conn *c, uint32_t limit, uint32_t segmax,
		      bool *stop)
{
	uint32_t from = SEQ_MAX(c->high_rxt, c->snd_una), hole, hend, n;

	*stop = false;
	hole = tcp_next_hole(c, from, limit, &hend);
	if (!SEQ_LT(hole, limit))
		return 0;
	n = tcp_rexmit(c, hole, RTE_MIN(hend - hole, segmax));
	if (n == 0) {
		*stop = true;
		return 0;
	}
	c->high_rxt = hole + n;
	return n;
}

/* RFC 6675 §5 step (C): send while pipe leaves a segment of cwnd, the
 * segment NextSeg() (§4) picks. */
int
tcp_output_sack(struct tcp_conn *c)
{
	int sent = 0;

	for (;;) {
		uint32_t lost = tcp_lost_edge_rxt(c);
		uint32_t pipe = tcp_pipe(c, lost), gone = tcp_rxt_lost_bytes(c);
		uint32_t top, fack, n;
		uint32_t segmax = tcp_seg_max(c);
		bool stop;

		pipe = pipe > gone ? pipe - gone : 0;
		if (pipe + segmax > c->cwnd)
			break;
		if (tcp_rexmit_lost_run(c, segmax, &stop) > 0) {
			sent++;
			continue;
		}
		if (stop)
			break;
		/* Rule 1: the first lost hole above HighRxt. */
		n = tcp_rexmit_hole_below(c, lost, segmax, &stop);
		if (n > 0) {
			sent++;
			continue;
		}
		if (stop)
			break;
		/* Rule 2: new data within the peer's window. */
		{
			uint32_t wnd_end = c->snd_una + c->snd_wnd;
			uint32_t usable = SEQ_GT(wnd_end, c->snd_nxt) ?
					  wnd_end - c->snd_nxt : 0;

			if (tcp_output_one(c, RTE_MIN(usable, segmax),
					   false) > 0) {
				sent++;
				continue;
			}
		}
		/* Rule 3: no new data to send, so a hole not yet deemed
		 * lost goes now rather than after a timeout; a hole, that
		 * is below the highest SACKed byte (criterion 1.b): what
		 * lies above it is only in flight, its copy would be a
		 * spurious retransmission (the tail is rule 4's). */
		fack = c->nr_sacked ? c->sacked[c->nr_sacked - 1].end :
		       c->snd_una;
		n = tcp_rexmit_hole_below(c, fack, segmax, &stop);
		if (n > 0) {
			sent++;
			continue;
		}
		if (stop)
			break;
		/* Rule 4: once per recovery, after a partial ACK, the
		 * segment holding the highest un-SACKed byte again, to keep
		 * the ACK clock going when the tail (or its retransmission)
		 * was lost. HighRxt stays. Not after a timeout, which
		 * resent everything outstanding already. */
		top = tcp_unsacked_top(c);
		if (!(c->flags & TF_RTO_LOSS) &&
		    SEQ_GT(c->snd_una, c->rec_start) &&
		    SEQ_GT(c->snd_una, c->rescue_rxt) &&
		    SEQ_LT(c->snd_una, top)) {
			uint32_t st = SEQ_MAX(c->snd_una, top - segmax);

			if (tcp_rexmit(c, st, top - st) == 0)
				break;
			c->rescue_rxt = c->recover;
			sent++;
			continue;
		}
		break;
	}
	return sent;
}
