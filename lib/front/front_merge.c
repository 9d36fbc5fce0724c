/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * The merge of the shards' binary answers into the client's frame
 * (spec/wire.md §5.2), narrowing where a shard answered wider than the
 * client negotiated (§5.3), and the Content-Type / Accept of the front's
 * side of the conversation with its shards (§5.1). Plain C.
 */

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "quant.h"
#include "front_frame.h"
#include "front_frame_priv.h"

static bool
fmt_binary(enum wire_fmt f)
{
	return f == WIRE_FMT_F32 || f == WIRE_FMT_F16 || f == WIRE_FMT_I8;
}

/*
 * Bytes of one result's payload in f (§5.2): f32 4M, f16 2M, i8
 * max(seq_len, 1) rows of 8 + hidden. false on overflow (no answer can be
 * that long, so the caller reports a length mismatch).
 */
static bool
payload_size(enum wire_fmt f, uint32_t seq, uint32_t hidden, size_t *out)
{
	uint64_t m = (uint64_t)seq * hidden, b;

	switch (f) {
	case WIRE_FMT_F32:
		if (__builtin_mul_overflow(m, 4, &b))
			return false;
		break;
	case WIRE_FMT_F16:
		if (__builtin_mul_overflow(m, 2, &b))
			return false;
		break;
	default:
		b = (uint64_t)(seq == 0 ? 1 : seq) * ((uint64_t)hidden + 8);
		break;
	}
	if (b > SIZE_MAX)
		return false;
	*out = (size_t)b;
	return true;
}

/* Offset of result j's header in a batch frame whose payloads are pl
 * bytes (§5.2); false on overflow. */
static bool
batch_off(uint32_t j, size_t pl, size_t *off)
{
	size_t per;

	return !__builtin_add_overflow(pl, (size_t)WIRE_RESP_HDR_LEN, &per) &&
	       !__builtin_mul_overflow((size_t)j, per, off) &&
	       !__builtin_add_overflow(*off, (size_t)WIRE_RESP_HDR_LEN, off);
}

/* Layer j of what sub s asked for, read back from its frame header: the
 * batch form lists them at 8, the single form has its one at 0 (§3). */
static uint32_t
sub_layer(const struct front_sub *sb, uint32_t j)
{
	if (front_le32(sb->hdr) == WIRE_BATCH_MARKER)
		return front_le32(sb->hdr + 8 + 4 * (size_t)j);
	return front_le32(sb->hdr);
}

static int __attribute__((format(printf, 4, 5)))
malformed(struct wire_error *err, unsigned int *bad, unsigned int s,
	  const char *fmt, ...)
{
	char what[WIRE_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	*bad = s;
	/* the shard broke the protocol: a bad gateway to the client */
	wire_error_set(err, 502, "malformed answer: %s", what);
	return -EPROTO;
}

/*
 * Check sub s's answer against what it was asked (§5.2), strictly: the
 * front passes payloads on by reference, so a frame that does not line up
 * exactly would hand the client garbage. *pl: its payload size.
 */
static int
check_answer(const struct front_plan *p, unsigned int s,
	     const struct front_sub_answer *an, enum wire_fmt out_fmt,
	     uint32_t hidden, size_t *pl, struct wire_error *err,
	     unsigned int *bad)
{
	const struct front_sub *sb = &p->sub[s];
	const struct front_gather *g = &an->body;
	uint64_t m = (uint64_t)p->seq_len * hidden;
	struct front_gcur c;
	uint8_t h[WIRE_RESP_HDR_LEN];
	size_t want = 0;
	uint32_t n;

	if (!fmt_binary(an->fmt))
		return malformed(err, bad, s, "not a binary frame (%s)",
				 wire_fmt_name(an->fmt));
	if (an->fmt > out_fmt)	/* f32 < f16 < i8: wider first */
		return malformed(err, bad, s, "%s payload, %s was asked",
				 wire_fmt_name(an->fmt),
				 wire_fmt_name(out_fmt));
	front_gcur_init(&c, g);
	if (front_gcur_copy(&c, 0, h, sizeof(h)) != 0)
		return malformed(err, bad, s, "%zu bytes, shorter than a frame header",
				 g->len);
	if (!payload_size(an->fmt, p->seq_len, hidden, pl))
		return malformed(err, bad, s, "payload size overflows");

	if (sb->n_layers == 1) {
		/* one result: a single frame (§5.2), whatever the form of
		 * the request */
		if (front_le32(h) == WIRE_BATCH_MARKER)
			return malformed(err, bad, s, "batch frame, a single one was expected");
		if (front_le32(h) != sub_layer(sb, 0))
			return malformed(err, bad, s, "layer %u, %u was asked",
					 front_le32(h), sub_layer(sb, 0));
		if (front_le32(h + 4) != p->seq_len)
			return malformed(err, bad, s, "seq_len %u, %u was asked",
					 front_le32(h + 4), p->seq_len);
		if (__builtin_add_overflow(*pl, (size_t)WIRE_RESP_HDR_LEN,
					   &want) || g->len != want)
			return malformed(err, bad, s, "%zu bytes, %zu expected",
					 g->len, want);
		return 0;
	}
	if (front_le32(h) != WIRE_BATCH_MARKER)
		return malformed(err, bad, s, "single frame, a batch of %u was expected",
				 sb->n_layers);
	n = front_le32(h + 4);
	if (n != sb->n_layers)
		return malformed(err, bad, s, "batch of %u results, %u were asked",
				 n, sb->n_layers);
	for (uint32_t j = 0; j < n; j++) {
		size_t off;

		if (!batch_off(j, *pl, &off) ||
		    front_gcur_copy(&c, off, h, sizeof(h)) != 0)
			return malformed(err, bad, s, "%zu bytes, truncated in result %u",
					 g->len, j);
		if (front_le32(h) != sub_layer(sb, j))
			return malformed(err, bad, s, "result %u is layer %u, %u was asked",
					 j, front_le32(h), sub_layer(sb, j));
		if (front_le32(h + 4) != p->seq_len)
			return malformed(err, bad, s, "result %u has seq_len %u, %u was asked",
					 j, front_le32(h + 4), p->seq_len);
		if (front_le32(h + 8) != m)
			return malformed(err, bad, s, "result %u has num_values %u, %llu expected",
					 j, front_le32(h + 8),
					 (unsigned long long)m);
	}
	/* the frame ends where a result n would start: nothing left over */
	if (!batch_off(n, *pl, &want) || g->len != want)
		return malformed(err, bad, s, "%zu bytes, %zu expected", g->len,
				 want);
	return 0;
}

/*
 * Narrow one result's payload (from, at off in the answer) into dst (to),
 * row by row through the scratch rows (§5.3: i8 is per row; the answer's
 * rows may be split over pieces and unaligned, so they are copied out).
 * f16 -> i8 goes through the exact f32 value of each f16.
 */
static int
narrow(struct front_gcur *c, size_t off, enum wire_fmt from,
       enum wire_fmt to, uint32_t seq, uint32_t hidden, uint8_t *dst,
       float *row, uint16_t *row16)
{
	uint32_t rows = to == WIRE_FMT_I8 && seq == 0 ? 1 : seq;
	size_t in_row = (from == WIRE_FMT_F32 ? 4 : 2) * (size_t)hidden;
	size_t out_row = to == WIRE_FMT_F16 ? 2 * (size_t)hidden :
			 QUANT_I8_ROW_BYTES(hidden);
	int rc;

	for (uint32_t r = 0; r < rows; r++) {
		if (r >= seq) {
			/* seq_len 0 still has one i8 row (§5.2): of zeros */
			memset(row, 0, 4 * (size_t)hidden);
		} else if (from == WIRE_FMT_F32) {
			rc = front_gcur_copy(c, off + r * in_row, row, in_row);
			if (rc != 0)
				return rc;
		} else {
			rc = front_gcur_copy(c, off + r * in_row, row16,
					     in_row);
			if (rc != 0)
				return rc;
			quant_f16_to_f32(row, row16, hidden);
		}
		if (to == WIRE_FMT_F16) {
			/* via row16: dst need not be 2-byte aligned */
			quant_f32_to_f16(row16, row, hidden);
			memcpy(dst + r * out_row, row16, out_row);
		} else {
			quant_f32_to_i8_rows(dst + r * out_row, row, 1,
					     hidden);
		}
	}
	return 0;
}

/* The output's iovecs: ranges of new memory that follow each other are
 * one entry; a referenced range never joins them (other memory). */
struct out_iov {
	struct iovec *iov;
	unsigned int n;
	bool last_ours;
};

static void
emit_ours(struct out_iov *o, uint8_t *p, size_t len)
{
	struct iovec *l = o->n > 0 ? &o->iov[o->n - 1] : NULL;

	if (l != NULL && o->last_ours &&
	    (uint8_t *)l->iov_base + l->iov_len == p) {
		l->iov_len += len;
		return;
	}
	o->iov[o->n].iov_base = p;
	o->iov[o->n].iov_len = len;
	o->n++;
	o->last_ours = true;
}

int
front_merge_binary(const struct front_plan *p,
		   const struct front_sub_answer *ans, enum wire_fmt out_fmt,
		   uint32_t hidden, double latency_ms,
		   const struct front_alloc *a, struct front_merged *out,
		   struct wire_error *err, unsigned int *bad)
{
	struct front_gcur cur[FRONT_MAX_RANGES];
	size_t pl[FRONT_MAX_RANGES], out_pl, hdr_bytes, new_bytes;
	size_t iov_bound, scratch = 0, size, at;
	uint32_t n = p->n_layers, lat;
	bool single = n == 1, any_narrow = false;
	float latf = (float)latency_ms;	/* Rust's `as f32`: to nearest */
	struct out_iov o;
	uint8_t *m, *wp;
	float *row = NULL;
	uint16_t *row16 = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!fmt_binary(out_fmt) || hidden == 0 ||
	    p->n_sub > FRONT_MAX_RANGES || (n > 0) != (p->n_sub > 0))
		return -EINVAL;
	for (unsigned int s = 0; s < p->n_sub; s++) {
		rc = check_answer(p, s, &ans[s], out_fmt, hidden, &pl[s], err,
				  bad);
		if (rc != 0)
			return rc;
		any_narrow |= ans[s].fmt != out_fmt;
	}
	if (!payload_size(out_fmt, p->seq_len, hidden, &out_pl))
		return -ENOMEM;

	/*
	 * Size everything first, for one allocation: the iovecs (one frame
	 * header when batch, then per result its header and either its
	 * referenced ranges or one narrowed range), the scratch rows, and
	 * the new bytes (headers, narrowed payloads).
	 */
	iov_bound = single ? 0 : 1;
	hdr_bytes = single ? 0 : WIRE_RESP_HDR_LEN;
	new_bytes = 0;
	for (unsigned int s = 0; s < p->n_sub; s++)
		front_gcur_init(&cur[s], &ans[s].body);
	for (uint32_t i = 0; i < n; i++) {
		unsigned int s = p->res_sub[i];
		size_t off = WIRE_RESP_HDR_LEN;

		hdr_bytes += WIRE_RESP_HDR_LEN;
		if (ans[s].fmt != out_fmt) {
			iov_bound += 2;
			if (__builtin_add_overflow(new_bytes, out_pl,
						   &new_bytes))
				return -ENOMEM;
			continue;
		}
		if (p->sub[s].n_layers > 1) {
			/* no overflow: check_answer() saw the whole frame */
			batch_off(p->res_idx[i], pl[s], &off);
			off += WIRE_RESP_HDR_LEN;
		}
		rc = front_gcur_ranges(&cur[s], off, pl[s], NULL, UINT_MAX);
		if (rc < 0)
			return -EPROTO;	/* not after check_answer */
		iov_bound += 1 + (size_t)rc;
	}
	if (any_narrow)
		scratch = front_align64(4 * (size_t)hidden) +
			  front_align64(2 * (size_t)hidden);
	if (iov_bound > UINT_MAX ||
	    __builtin_mul_overflow(iov_bound, sizeof(struct iovec), &at) ||
	    __builtin_add_overflow(front_align64(at), scratch, &size) ||
	    __builtin_add_overflow(size, hdr_bytes, &size) ||
	    __builtin_add_overflow(size, new_bytes, &size))
		return -ENOMEM;
	m = a->alloc(a->arg, size);
	if (m == NULL)
		return -ENOMEM;

	o.iov = (struct iovec *)(void *)m;
	o.n = 0;
	o.last_ours = false;
	at = front_align64(at);
	if (any_narrow) {
		row = (float *)(void *)(m + at);
		row16 = (uint16_t *)(void *)(m + at +
					     front_align64(4 * (size_t)hidden));
	}
	wp = m + at + scratch;
	memcpy(&lat, &latf, sizeof(lat));

	if (!single) {
		/* §5.2 batch: [0xFFFFFFFF][n][latency_ms], also for n 0 */
		front_put_le32(wp, WIRE_BATCH_MARKER);
		front_put_le32(wp + 4, n);
		front_put_le32(wp + 8, lat);
		emit_ours(&o, wp, WIRE_RESP_HDR_LEN);
		wp += WIRE_RESP_HDR_LEN;
	}
	for (unsigned int s = 0; s < p->n_sub; s++)
		front_gcur_init(&cur[s], &ans[s].body);
	for (uint32_t i = 0; i < n; i++) {
		unsigned int s = p->res_sub[i];
		size_t off = WIRE_RESP_HDR_LEN;

		if (p->sub[s].n_layers > 1) {
			batch_off(p->res_idx[i], pl[s], &off);
			off += WIRE_RESP_HDR_LEN;
		}
		/* single: [layer][seq_len][latency_ms]; batch result:
		 * [layer][seq_len][num_values] (§5.2) */
		front_put_le32(wp, p->layer[i]);
		front_put_le32(wp + 4, p->seq_len);
		front_put_le32(wp + 8, single ? lat :
			       (uint32_t)((uint64_t)p->seq_len * hidden));
		emit_ours(&o, wp, WIRE_RESP_HDR_LEN);
		wp += WIRE_RESP_HDR_LEN;
		if (ans[s].fmt == out_fmt) {
			/* zero copy: the answer's own bytes */
			rc = front_gcur_ranges(&cur[s], off, pl[s],
					       &o.iov[o.n],
					       (unsigned int)(iov_bound - o.n));
			if (rc < 0)
				goto fail;
			o.n += (unsigned int)rc;
			if (rc > 0)
				o.last_ours = false;
			continue;
		}
		rc = narrow(&cur[s], off, ans[s].fmt, out_fmt, p->seq_len,
			    hidden, wp, row, row16);
		if (rc != 0)
			goto fail;
		emit_ours(&o, wp, out_pl);
		wp += out_pl;
		out->narrowed++;
	}

	out->iov = o.iov;
	out->iovcnt = o.n;
	out->mem = m;
	for (unsigned int k = 0; k < o.n; k++)
		out->len += o.iov[k].iov_len;
	return 0;
fail:
	a->free(a->arg, m);
	memset(out, 0, sizeof(*out));
	return -EPROTO;
}

void
front_merged_free(struct front_merged *mg, const struct front_alloc *a)
{
	if (mg->mem != NULL)
		a->free(a->arg, mg->mem);
	memset(mg, 0, sizeof(*mg));
}

/* ---- the front's side of negotiation ---------------------------------- */

enum wire_fmt
front_answer_fmt(const char *ct, size_t len)
{
	static const enum wire_fmt fmts[] = {
		WIRE_FMT_F32, WIRE_FMT_F16, WIRE_FMT_I8, WIRE_FMT_JSON,
	};
	const char *semi;
	size_t b = 0;

	if (ct == NULL)
		return WIRE_FMT_NONE;
	semi = memchr(ct, ';', len);
	if (semi != NULL)
		len = (size_t)(semi - ct);
	/* the bare type, without the optional whitespace around it
	 * (RFC 9110 §5.6.3, §8.3.1) */
	while (b < len && (ct[b] == ' ' || ct[b] == '\t'))
		b++;
	while (len > b && (ct[len - 1] == ' ' || ct[len - 1] == '\t'))
		len--;
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		const char *t = wire_fmt_content_type(fmts[i]);

		/* type and subtype are case-insensitive (RFC 9110 §8.3.1);
		 * whole-string equality, so -f16 is not f32 */
		if (strlen(t) == len - b &&
		    strncasecmp(ct + b, t, len - b) == 0)
			return fmts[i];
	}
	return WIRE_FMT_NONE;
}

const char *
front_accept_for(enum wire_fmt fmt)
{
	/*
	 * The clients' own lists (§5.1): a shard answers the first of them
	 * it has enabled, so with i8 off an i8 client's sub-requests come
	 * back f16 (and are narrowed here), with f16 off they come back f32.
	 */
	switch (fmt) {
	case WIRE_FMT_F32:
		return "application/x-larql-ffn";
	case WIRE_FMT_F16:
		return "application/x-larql-ffn-f16, application/x-larql-ffn";
	case WIRE_FMT_I8:
		return "application/x-larql-ffn-i8, application/x-larql-ffn-f16, application/x-larql-ffn";
	default:
		return NULL;
	}
}
