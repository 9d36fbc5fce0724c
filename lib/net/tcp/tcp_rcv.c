/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* The receiver's side of an acceptable segment (RFC 9293 §3.10.7.4,
 * seventh and eighth steps): payload in order and out of order, the
 * reassembly queue and the SACK blocks we report (RFC 2018, RFC 2883),
 * delayed ACKs (RFC 5681 §4.2), and the peer's FIN. */

#include <string.h>

#include "tcp_priv.h"

/* ---- mbuf helpers ---- */

static struct rte_mbuf *
tcp_mbuf_cut(struct rte_mbuf *m, uint32_t n)
{
	while (n >= m->data_len && m->next != NULL) {
		struct rte_mbuf *nx = m->next;

		nx->pkt_len = m->pkt_len - m->data_len;
		nx->nb_segs = m->nb_segs - 1;
		n -= m->data_len;
		m->next = NULL;
		m->nb_segs = 1;
		rte_pktmbuf_free_seg(m);
		m = nx;
	}
	m->data_off += n;
	m->data_len -= n;
	m->pkt_len -= n;
	return m;
}

static void
tcp_mbuf_keep(struct rte_mbuf *m, uint32_t keep)
{
	struct rte_mbuf *seg = m;
	uint32_t acc = 0;
	uint16_t nb = 1;

	m->pkt_len = keep;
	while (seg->next != NULL && acc + seg->data_len < keep) {
		acc += seg->data_len;
		seg = seg->next;
		nb++;
	}
	seg->data_len = keep - acc;
	if (seg->next != NULL) {
		rte_pktmbuf_free(seg->next);
		seg->next = NULL;
	}
	m->nb_segs = nb;
}

/* ---- helpers ---- */

static void tcp_rsack_prune(struct tcp_conn *c);

/* Data in order. SACK blocks now below rcv_nxt go before the callback:
 * a response sent from it would otherwise report them, which the peer
 * reads as a D-SACK (RFC 2883) of data it never resent. */
static bool
tcp_deliver(struct tcp_conn *c, struct rte_mbuf *m, uint32_t len)
{
	c->rcv_nxt += len;
	if (c->nr_rsack > 0)
		tcp_rsack_prune(c);
	c->stack->stats.bytes_in += len;
	if (c->ops == NULL || c->ops->data == NULL || !tcp_cb_enter(c)) {
		rte_pktmbuf_free(m);
		return !(c->flags & TF_DEAD);
	}
	if (c->flags & TF_MANUAL_RCV)
		c->rcv_held += len;
	c->ops->data(c->arg, c, m);
	return tcp_cb_leave(c);
}

/* RFC 2018 §4: report the block holding the newest segment first. */
static void
tcp_rsack_note(struct tcp_conn *c, uint32_t seq)
{
	struct tcp_sack_block b = { 0, 0 };
	unsigned int i, j, k;

	for (i = 0; i < c->nr_ooo; i++) {
		uint32_t s = c->ooo[i].seq, e = s + c->ooo[i].len;

		if (b.end != 0 && s == b.end) {
			b.end = e;
			continue;
		}
		if (SEQ_LEQ(s, seq) && SEQ_LT(seq, e)) {
			b.start = s;
			b.end = e;
			/* extend backwards */
			for (j = i; j > 0 && c->ooo[j - 1].seq +
				    c->ooo[j - 1].len == c->ooo[j].seq; j--)
				b.start = c->ooo[j - 1].seq;
			continue;
		}
		if (b.end != 0)
			break;
	}
	if (b.end == 0 && b.start == 0)
		return;
	for (i = 0, k = 0; i < c->nr_rsack; i++) {
		if (SEQ_LEQ(c->rsack[i].end, b.start) ||
		    SEQ_GEQ(c->rsack[i].start, b.end))
			c->rsack[k++] = c->rsack[i];
	}
	if (k == TCP_MAX_SACK)
		k--;
	memmove(&c->rsack[1], &c->rsack[0], k * sizeof(c->rsack[0]));
	c->rsack[0] = b;
	c->nr_rsack = k + 1;
}

static void
tcp_rsack_prune(struct tcp_conn *c)
{
	unsigned int i, k = 0;

	for (i = 0; i < c->nr_rsack; i++)
		if (SEQ_GT(c->rsack[i].end, c->rcv_nxt))
			c->rsack[k++] = c->rsack[i];
	c->nr_rsack = k;
}

static void
tcp_ooo_remove(struct tcp_conn *c, unsigned int i)
{
	c->ooo_bytes -= c->ooo[i].len;
	memmove(&c->ooo[i], &c->ooo[i + 1],
		(c->nr_ooo - i - 1) * sizeof(c->ooo[0]));
	c->nr_ooo--;
}

/* Out-of-order segment. The queue holds one entry per contiguous block
 * (an mbuf chain), sorted and disjoint: its length is bounded by the
 * holes, not the segments, so a window full of data behind one loss
 * fits. At the bound, the block furthest from rcv_nxt gives way to a
 * lower one: the segments that fill the first hole are the ones that
 * let data move (the sender sees a renege of the highest block, RFC
 * 2018 §8, and resends it). A segment already held is reported as a
 * D-SACK (RFC 2883 §4). */
static void
tcp_ooo_add(struct tcp_conn *c, uint32_t seq, uint32_t len,
	    struct rte_mbuf *m)
{
	struct tcp_stack *s = c->stack;
	unsigned int i, n = c->nr_ooo;

	for (i = 0; i < n && SEQ_LEQ(c->ooo[i].seq, seq); i++)
		;
	if (i > 0) {		/* overlap with the predecessor */
		uint32_t pe = c->ooo[i - 1].seq + c->ooo[i - 1].len;

		if (SEQ_GEQ(pe, seq + len)) {
			rte_pktmbuf_free(m);
			if (c->flags & TF_SACK) {
				c->dsack.start = seq;
				c->dsack.end = seq + len;
				c->flags |= TF_DSACK;
			}
			tcp_rsack_note(c, seq);
			return;
		}
		if (SEQ_GT(pe, seq)) {
			m = tcp_mbuf_cut(m, pe - seq);
			len -= pe - seq;
			seq = pe;
		}
	}
	/* successors wholly covered by the new segment */
	while (i < c->nr_ooo &&
	       SEQ_LEQ(c->ooo[i].seq + c->ooo[i].len, seq + len)) {
		rte_pktmbuf_free(c->ooo[i].m);
		tcp_ooo_remove(c, i);
	}
	if (i < c->nr_ooo && SEQ_GT(seq + len, c->ooo[i].seq)) {
		len = c->ooo[i].seq - seq;
		tcp_mbuf_keep(m, len);
	}
	/* Room, in bytes and entries: evict blocks above this one. */
	while (c->nr_ooo > i && c->ooo_bytes + len > s->cfg.rcv_buf) {
		tcp_drop(s, c->ooo[c->nr_ooo - 1].m, TCP_DROP_OOO_MEM);
		tcp_ooo_remove(c, c->nr_ooo - 1);
	}
	if (c->ooo_bytes + len > s->cfg.rcv_buf) {
		tcp_drop(s, m, TCP_DROP_OOO_MEM);
		return;
	}
	if (i > 0 && c->ooo[i - 1].seq + c->ooo[i - 1].len == seq &&
	    rte_pktmbuf_chain(c->ooo[i - 1].m, m) == 0) {
		/* extends the predecessor's block */
		i--;
		c->ooo[i].len += len;
		c->ooo_bytes += len;
	} else if (i < c->nr_ooo && seq + len == c->ooo[i].seq &&
		   rte_pktmbuf_chain(m, c->ooo[i].m) == 0) {
		/* prepends to the successor's block */
		c->ooo[i].m = m;
		c->ooo[i].seq = seq;
		c->ooo[i].len += len;
		c->ooo_bytes += len;
	} else {
		if (c->nr_ooo == TCP_OOO_MAX) {
			if (i == c->nr_ooo) {	/* the furthest: give way */
				tcp_drop(s, m, TCP_DROP_OOO_MEM);
				return;
			}
			tcp_drop(s, c->ooo[c->nr_ooo - 1].m,
				 TCP_DROP_OOO_MEM);
			tcp_ooo_remove(c, c->nr_ooo - 1);
		}
		memmove(&c->ooo[i + 1], &c->ooo[i],
			(c->nr_ooo - i) * sizeof(c->ooo[0]));
		c->ooo[i].seq = seq;
		c->ooo[i].len = len;
		c->ooo[i].m = m;
		c->nr_ooo++;
		c->ooo_bytes += len;
	}
	/* joins the successor's block */
	if (i + 1 < c->nr_ooo &&
	    c->ooo[i].seq + c->ooo[i].len == c->ooo[i + 1].seq &&
	    rte_pktmbuf_chain(c->ooo[i].m, c->ooo[i + 1].m) == 0) {
		c->ooo[i].len += c->ooo[i + 1].len;
		c->ooo_bytes += c->ooo[i + 1].len;
		tcp_ooo_remove(c, i + 1);
	}
	tcp_rsack_note(c, seq);
}

/* Move what became in-order out of the reassembly queue, up to a FIN
 * seen out of order: the peer's stream ends there (RFC 9293 §3.4),
 * what lies beyond goes when the FIN is taken (tcp_fin_in). */
static bool
tcp_ooo_drain(struct tcp_conn *c)
{
	while (c->nr_ooo > 0 && SEQ_LEQ(c->ooo[0].seq, c->rcv_nxt)) {
		struct tcp_ooo e = c->ooo[0];
		uint32_t end = e.seq + e.len;

		if ((c->flags & TF_OOO_FIN) &&
		    SEQ_GEQ(c->rcv_nxt, c->rcv_fin_seq))
			break;
		memmove(&c->ooo[0], &c->ooo[1],
			(c->nr_ooo - 1) * sizeof(c->ooo[0]));
		c->nr_ooo--;
		c->ooo_bytes -= e.len;
		if (SEQ_LEQ(end, c->rcv_nxt)) {
			rte_pktmbuf_free(e.m);
			continue;
		}
		if (c->rcv_nxt != e.seq)
			e.m = tcp_mbuf_cut(e.m, c->rcv_nxt - e.seq);
		if ((c->flags & TF_OOO_FIN) && SEQ_GT(end, c->rcv_fin_seq)) {
			end = c->rcv_fin_seq;
			tcp_mbuf_keep(e.m, end - c->rcv_nxt);
		}
		if (!tcp_deliver(c, e.m, end - c->rcv_nxt))
			return false;
	}
	tcp_rsack_prune(c);
	return true;
}

/* ---- payload and FIN ---- */

/* The peer's FIN is in order now. False if the conn is gone. */
static bool
tcp_fin_in(struct tcp_conn *c)
{
	unsigned int i;
	uint8_t next;

	c->flags &= ~TF_OOO_FIN;
	c->rcv_nxt++;
	/* The FIN comes after the last data octet of the peer's stream
	 * (RFC 9293 §3.4), and text after it is ignored (§3.10.7.4,
	 * seventh step, CLOSE-WAIT and later): whatever the reassembly
	 * queue still holds lies above the FIN, or repeats text already
	 * delivered, and can never be delivered. Free it, so that its memory (ooo_bytes, counted
	 * against rcv_buf) is not held until the connection ends, nor its
	 * blocks reported in SACK options (Linux's tcp_fin() purges its
	 * out-of-order queue likewise). */
	for (i = 0; i < c->nr_ooo; i++)
		rte_pktmbuf_free(c->ooo[i].m);
	c->nr_ooo = 0;
	c->ooo_bytes = 0;
	c->nr_rsack = 0;
	c->flags |= TF_ACKNOW;
	switch (c->state) {
	case TCP_SYN_RECEIVED:
	case TCP_ESTABLISHED:
		next = TCP_CLOSE_WAIT;
		break;
	case TCP_FIN_WAIT_1:
		next = tcp_fin_acked(c) ? TCP_TIME_WAIT : TCP_CLOSING;
		break;
	case TCP_FIN_WAIT_2:
		next = TCP_TIME_WAIT;
		break;
	default:
		return true;
	}
	if (next != TCP_TIME_WAIT)
		tcp_conn_set_state(c, next);
	if (!(c->flags & TF_EOF_SEEN) && c->ops != NULL &&
	    c->ops->eof != NULL && tcp_cb_enter(c)) {
		c->flags |= TF_EOF_SEEN;
		c->ops->eof(c->arg, c);
		if (!tcp_cb_leave(c))
			return false;
	}
	c->flags |= TF_EOF_SEEN;
	if (next == TCP_TIME_WAIT) {
		tcp_send_ctl(c, TCP_F_ACK);
		tcp_enter_time_wait(c);
		return false;
	}
	return true;
}

/* Payload and FIN. Consumes g->m. False if the conn is gone. */
bool
tcp_data_in(struct tcp_conn *c, struct tcp_seg *g)
{
	struct tcp_stack *s = c->stack;
	uint32_t seq = g->seq, len = g->len, cut = 0, wnd_end;
	bool fin = g->flags & TCP_F_FIN, had_ooo = c->nr_ooo > 0;
	struct rte_mbuf *m = g->m;

	g->m = NULL;
	if (SEQ_LT(seq, c->rcv_nxt)) {	/* duplicate head */
		cut = c->rcv_nxt - seq;
		c->flags |= TF_ACKNOW;	/* RFC 5681 §4.2 */
		if ((c->flags & TF_SACK) && len > 0) {	/* RFC 2883 */
			c->dsack.start = seq;
			c->dsack.end = seq + RTE_MIN(cut, len);
			c->flags |= TF_DSACK;
		}
		if (cut > len || (cut == len && !fin) ||
		    (fin && cut > len)) {
			rte_pktmbuf_free(m);
			return true;
		}
		seq += cut;
		len -= cut;
	}
	wnd_end = c->rcv_adv;
	if (SEQ_GT(seq + len, wnd_end)) {	/* beyond the window */
		len = SEQ_GT(wnd_end, seq) ? wnd_end - seq : 0;
		fin = false;
		s->stats.drops[TCP_DROP_RCV_MEM]++;
		c->flags |= TF_ACKNOW;
	}
	if ((c->flags & TF_OOO_FIN) && SEQ_GT(seq + len, c->rcv_fin_seq)) {
		/* Past the FIN already seen (RFC 9293 §3.4): not part of
		 * the peer's stream; a FIN further on is not taken. */
		len = SEQ_GT(c->rcv_fin_seq, seq) ? c->rcv_fin_seq - seq : 0;
		fin = false;
		c->flags |= TF_ACKNOW;
	}
	if (len > 0 && (c->flags & TF_APP_CLOSED)) {
		/* Data after close: the app will never read it (RFC 9293
		 * §3.10.7.4 / RFC 1122 §4.2.2.13). */
		rte_pktmbuf_free(m);
		tcp_send_ctl(c, TCP_F_RST | TCP_F_ACK);
		tcp_conn_free(c);
		return false;
	}
	if (len == 0) {
		rte_pktmbuf_free(m);
		m = NULL;
	} else {
		m = tcp_mbuf_cut(m, g->hlen + cut);
		if (m->pkt_len != len)
			tcp_mbuf_keep(m, len);
	}
	if (seq != c->rcv_nxt) {
		/* Out of order: queue, ACK at once with SACK (§4.2). */
		if (m != NULL)
			tcp_ooo_add(c, seq, len, m);
		if (fin) {
			c->flags |= TF_OOO_FIN;
			c->rcv_fin_seq = seq + len;
		}
		c->flags |= TF_ACKNOW;
		return true;
	}
	if (m != NULL) {
		/* ACK every second segment, else delay (RFC 5681 §4.2); a
		 * hole filled is ACKed at once. Decided before delivery so a
		 * response sent from the callback carries the ACK. */
		/* A large (LRO/GRO) segment counts as the full-sized
		 * segments it holds. */
		c->segs_unacked += RTE_MAX(1u, len / c->mss);
		if (c->segs_unacked >= 2 || had_ooo)
			c->flags |= TF_ACKNOW;
		else
			c->flags |= TF_DELACK;
		if (!tcp_deliver(c, m, len))
			return false;
		/* With the FIN here, the queue holds text this segment
		 * carried or text past the FIN: none of it is delivered,
		 * tcp_fin_in frees it. */
		if (had_ooo && !fin && !tcp_ooo_drain(c))
			return false;
	}
	if ((c->flags & TF_OOO_FIN) && c->rcv_fin_seq == c->rcv_nxt)
		fin = true;
	if (fin)
		return tcp_fin_in(c);
	return true;
}
