/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* SACK-based loss recovery (RFC 6675): the scoreboard of what the peer
 * SACKed (RFC 2018), IsLost() as a boundary with DupThresh raised by the
 * reordering seen and a time threshold (RFC 8985-style), SetPipe(), and
 * the send loop of §5 step (C) with NextSeg() rules 1-4, rule 4 being
 * the rescue retransmission. */

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

static uint32_t
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
	return len + (fl & TCP_F_FIN ? 1 : 0);
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

/* RFC 6675 §5 step (C): send while pipe leaves a segment of cwnd, the
 * segment NextSeg() (§4) picks. */
int
tcp_output_sack(struct tcp_conn *c)
{
	int sent = 0;

	for (;;) {
		uint32_t lost = tcp_lost_edge(c);
		uint32_t pipe = tcp_pipe(c, lost);
		uint32_t from, hole, hend, top, n, segmax = tcp_seg_max(c);

		if (pipe + segmax > c->cwnd)
			break;
		/* Rule 1: the first lost hole above HighRxt. */
		from = SEQ_MAX(c->high_rxt, c->snd_una);
		hole = tcp_next_hole(c, from, lost, &hend);
		if (SEQ_LT(hole, lost)) {
			n = tcp_rexmit(c, hole, RTE_MIN(hend - hole, segmax));
			if (n == 0)
				break;
			c->high_rxt = hole + n;
			sent++;
			continue;
		}
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
		 * lost goes now rather than after a timeout. */
		hole = tcp_next_hole(c, from, c->snd_max, &hend);
		if (SEQ_LT(hole, c->snd_max)) {
			n = tcp_rexmit(c, hole, RTE_MIN(hend - hole, segmax));
			if (n == 0)
				break;
			c->high_rxt = hole + n;
			sent++;
			continue;
		}
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
