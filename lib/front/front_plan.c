/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * The front's layout, bodies in pieces, heap memory, and the split of a
 * binary request by owner (spec/wire.md §3). Plain C.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "front_frame.h"
#include "front_frame_priv.h"

int
front_layout_owner(const struct front_layout *l, uint32_t layer)
{
	unsigned int lo = 0, hi = l->n;

	if (hi > FRONT_MAX_RANGES)
		hi = FRONT_MAX_RANGES;	/* never read past the arrays */
	/* the last range whose first <= layer (sorted, disjoint) */
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (l->first[mid] <= layer)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || layer > l->last[lo - 1])
		return -1;
	return (int)(lo - 1);
}

/* ---- bodies in pieces ----------------------------------------------- */

void
front_gcur_init(struct front_gcur *c, const struct front_gather *g)
{
	c->g = g;
	c->i = 0;
	c->pos = 0;
}

/* Move to the range holding byte off (the first non-empty one that ends
 * after off). false when the ranges end first. */
static bool
gcur_seek(struct front_gcur *c, size_t off)
{
	const struct front_gather *g = c->g;

	while (c->i < g->n && c->pos + g->iov[c->i].iov_len <= off) {
		c->pos += g->iov[c->i].iov_len;
		c->i++;
	}
	return c->i < g->n;
}

/* [off, off + len) inside g->len? (overflow-safe) */
static bool
in_gather(const struct front_gather *g, size_t off, size_t len)
{
	return off <= g->len && len <= g->len - off;
}

int
front_gcur_copy(struct front_gcur *c, size_t off, void *dst, size_t len)
{
	uint8_t *d = dst;

	if (!in_gather(c->g, off, len))
		return -ERANGE;
	while (len > 0) {
		const struct iovec *v;
		size_t in, n;

		if (!gcur_seek(c, off))
			return -ERANGE;	/* fewer bytes than g->len says */
		v = &c->g->iov[c->i];
		in = off - c->pos;
		n = v->iov_len - in;
		if (n > len)
			n = len;
		memcpy(d, (const uint8_t *)v->iov_base + in, n);
		d += n;
		off += n;
		len -= n;
	}
	return 0;
}

int
front_gcur_ranges(struct front_gcur *c, size_t off, size_t len,
		  struct iovec *out, unsigned int cap)
{
	unsigned int k = 0;

	if (!in_gather(c->g, off, len))
		return -ERANGE;
	while (len > 0) {
		const struct iovec *v;
		size_t in, n;

		if (!gcur_seek(c, off))
			return -ERANGE;
		if (k == cap)
			return -ENOSPC;
		v = &c->g->iov[c->i];
		in = off - c->pos;
		n = v->iov_len - in;
		if (n > len)
			n = len;
		if (out != NULL) {
			out[k].iov_base = (uint8_t *)v->iov_base + in;
			out[k].iov_len = n;
		}
		k++;
		off += n;
		len -= n;
	}
	return (int)k;
}

int
front_gather_copy(const struct front_gather *g, size_t off, void *dst,
		  size_t len)
{
	struct front_gcur c;

	front_gcur_init(&c, g);
	return front_gcur_copy(&c, off, dst, len);
}

int
front_gather_ranges(const struct front_gather *g, size_t off, size_t len,
		    struct iovec *out, unsigned int cap)
{
	struct front_gcur c;

	front_gcur_init(&c, g);
	return front_gcur_ranges(&c, off, len, out, cap);
}

unsigned int
front_gather_count(const struct front_gather *g, size_t off, size_t len)
{
	struct front_gcur c;
	int n;

	front_gcur_init(&c, g);
	n = front_gcur_ranges(&c, off, len, NULL, g->n);
	return n < 0 ? 0 : (unsigned int)n;
}

/* ---- memory --------------------------------------------------------- */

static void *
heap_alloc(void *arg, size_t size)
{
	(void)arg;
	if (size == 0)
		size = 1;	/* a block, not NULL, as a mempool gives */
	if (size > SIZE_MAX - 63)
		return NULL;
	/* C11 aligned_alloc wants a multiple of the alignment */
	return aligned_alloc(64, front_align64(size));
}

static void
heap_free(void *arg, void *p)
{
	(void)arg;
	free(p);
}

const struct front_alloc front_alloc_heap = {
	.alloc = heap_alloc,
	.free = heap_free,
	.arg = NULL,
};

/* ---- binary: split ---------------------------------------------------- */

/* §3 single form: [layer][seq_len][flags][top_k] */
#define SINGLE_HDR_LEN 16u
/* §3 batch form: [marker][K][K layers][seq_len][flags][top_k] */
#define BATCH_HDR_LEN(k) (20u + 4u * (uint32_t)(k))

static int
out_of_range(struct wire_error *err, uint32_t layer,
	     const struct front_layout *l)
{
	unsigned int n = l->n > FRONT_MAX_RANGES ? FRONT_MAX_RANGES : l->n;
	unsigned long long num = n == 0 ? 0 :
				 (unsigned long long)l->last[n - 1] + 1;

	/* the message of spec/wire.md §4, N being the model's layer count
	 * as the layout knows it */
	return wire_error_set(err, 400, "layer %u out of range (num_layers = %llu)",
			      (unsigned int)layer, num);
}

int
front_plan_binary(struct front_plan *p, const struct wire_req *rq,
		  const uint8_t *body, const struct front_layout *l,
		  const struct front_alloc *a, struct wire_error *err)
{
	int sub_of[FRONT_MAX_RANGES];
	uint32_t n = rq->n_layers, hdr_bytes = 0;
	size_t arrays, size;
	uint8_t *m, *h;

	memset(p, 0, sizeof(*p));
	p->n_layers = n;
	p->seq_len = rq->seq_len;
	p->fmt_in = rq->fmt;
	p->payload = rq->payload;
	p->payload_len = rq->payload_len;
	if (n == 0)
		return 0;	/* §3 K = 0: no sub; an empty batch answers */

	/* Owners first: an unowned layer fails before any allocation. */
	for (unsigned int r = 0; r < FRONT_MAX_RANGES; r++)
		sub_of[r] = -1;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t layer = wire_req_layer(rq, i);
		int r = front_layout_owner(l, layer);

		if (r < 0)
			return out_of_range(err, layer, l);
		if (sub_of[r] < 0) {
			sub_of[r] = (int)p->n_sub;
			p->sub[p->n_sub].range = (unsigned int)r;
			p->n_sub++;
		}
		p->sub[sub_of[r]].n_layers++;
	}
	/* One owner: forward the client's frame header unchanged (as the
	 * reference router does, §7). Several: a header per sub. */
	if (p->n_sub > 1)
		for (unsigned int s = 0; s < p->n_sub; s++)
			hdr_bytes += p->sub[s].n_layers == 1 ? SINGLE_HDR_LEN :
				     BATCH_HDR_LEN(p->sub[s].n_layers);

	/* layer[n], res_idx[n] (u32), res_sub[n] (u16), then the headers;
	 * n < 2^32 so none of this overflows a 64-bit size_t, but check. */
	if (__builtin_mul_overflow((size_t)n, 10, &arrays) ||
	    __builtin_add_overflow(arrays, (size_t)hdr_bytes, &size))
		return -ENOMEM;
	m = a->alloc(a->arg, size);
	if (m == NULL)
		return -ENOMEM;
	p->mem = m;
	p->layer = (uint32_t *)(void *)m;
	p->res_idx = p->layer + n;
	p->res_sub = (uint16_t *)(void *)(p->res_idx + n);
	h = (uint8_t *)(p->res_sub + n);

	for (unsigned int s = 0; s < p->n_sub; s++)
		p->sub[s].n_layers = 0;	/* recounted as res_idx below */
	for (uint32_t i = 0; i < n; i++) {
		unsigned int s = (unsigned int)
			sub_of[front_layout_owner(l, wire_req_layer(rq, i))];

		p->layer[i] = wire_req_layer(rq, i);
		p->res_sub[i] = (uint16_t)s;
		p->res_idx[i] = p->sub[s].n_layers++;
	}

	if (p->n_sub == 1) {
		p->sub[0].hdr = body;
		p->sub[0].hdr_len = (uint32_t)(rq->payload - body);
		return 0;
	}
	for (unsigned int s = 0; s < p->n_sub; s++) {
		struct front_sub *sb = &p->sub[s];
		uint8_t *t;

		sb->hdr = h;
		if (sb->n_layers == 1) {
			sb->hdr_len = SINGLE_HDR_LEN;
			t = h + 4;	/* layer written below */
		} else {
			sb->hdr_len = BATCH_HDR_LEN(sb->n_layers);
			front_put_le32(h, WIRE_BATCH_MARKER);
			front_put_le32(h + 4, sb->n_layers);
			t = h + 8 + 4 * sb->n_layers;
		}
		/* flags and top_k as the client sent them */
		front_put_le32(t, rq->seq_len);
		front_put_le32(t + 4, rq->flags);
		front_put_le32(t + 8, rq->top_k);
		h += sb->hdr_len;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct front_sub *sb = &p->sub[p->res_sub[i]];
		/* hdr points into plan memory for every sub here */
		uint8_t *w = (uint8_t *)(uintptr_t)sb->hdr;

		if (sb->n_layers == 1)
			front_put_le32(w, p->layer[i]);
		else
			front_put_le32(w + 8 + 4 * p->res_idx[i], p->layer[i]);
	}
	return 0;
}

void
front_plan_free(struct front_plan *p, const struct front_alloc *a)
{
	if (p->mem != NULL)
		a->free(a->arg, p->mem);
	p->mem = NULL;
	p->res_sub = NULL;
	p->res_idx = NULL;
	p->layer = NULL;
}
