/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The fan-out front's frames (issue 19, lib/front/front_frame.h) against
 * spec/wire.md §3-§8: the split of binary requests by owner, the merge of
 * the shards' answers in every legal format pair (expected frames built
 * here straight from the spec with lib/quant), answers in pieces cut at
 * every byte, every malformed answer, and the JSON path as the reference
 * router does it (§6, §7).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "front_frame.h"
#include "quant.h"
#include "wire.h"

#define LAT 7.3
#define BUF 8192

/* ---- an allocator that counts, checks alignment, and can fail ---------- */

static int live;		/* blocks not yet freed */
static int fail_at = -1;	/* the allocation (0-based) that fails */
static int n_alloc;

static void *
t_alloc(void *arg, size_t size)
{
	void *p;

	assert_ptr_equal(arg, &live);
	if (n_alloc++ == fail_at)
		return NULL;
	p = front_alloc_heap.alloc(front_alloc_heap.arg, size);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % 64, 0);	/* the contract */
	live++;
	return p;
}

static void
t_free(void *arg, void *p)
{
	assert_ptr_equal(arg, &live);
	assert_non_null(p);
	live--;
	front_alloc_heap.free(front_alloc_heap.arg, p);
}

static const struct front_alloc A = { t_alloc, t_free, &live };

static int
setup(void **state)
{
	(void)state;
	live = 0;
	n_alloc = 0;
	fail_at = -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	assert_int_equal(live, 0);	/* every block given back */
	return 0;
}

/* ---- bytes --------------------------------------------------------------- */

static void
put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void
putf(uint8_t *p, float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	put32(p, u);
}

static size_t
hex(const char *h, uint8_t *out)
{
	size_t n = 0;
	unsigned int v;

	while (*h) {
		if (*h == ' ' || *h == '\n') {
			h++;
			continue;
		}
		assert_int_equal(sscanf(h, "%2x", &v), 1);
		out[n++] = (uint8_t)v;
		h += 2;
	}
	return n;
}

static uint8_t *
dup_exact(const void *p, size_t n)
{
	uint8_t *c = malloc(n ? n : 1);

	assert_non_null(c);
	if (n)
		memcpy(c, p, n);
	return c;
}

/* ---- bodies in pieces ---------------------------------------------------- */

/* A body cut at cuts[0..nc) (ascending; equal cuts give empty ranges),
 * each piece its own exact heap block so that sanitizers see a read past
 * a piece. */
#define PIECES_MAX 512

struct pieces {
	struct iovec iov[PIECES_MAX];
	struct front_gather g;
};

static void
pieces_make(struct pieces *ps, const uint8_t *b, size_t len,
	    const size_t *cuts, unsigned int nc)
{
	size_t from = 0;

	assert_true(nc < PIECES_MAX);
	for (unsigned int i = 0; i <= nc; i++) {
		size_t to = i < nc ? cuts[i] : len;

		ps->iov[i].iov_base = dup_exact(b + from, to - from);
		ps->iov[i].iov_len = to - from;
		from = to;
	}
	ps->g.iov = ps->iov;
	ps->g.n = nc + 1;
	ps->g.len = len;
}

static void
pieces_free(struct pieces *ps)
{
	for (unsigned int i = 0; i < ps->g.n; i++)
		free(ps->iov[i].iov_base);
}

/* The body in one piece. */
static void
pieces_one(struct pieces *ps, const uint8_t *b, size_t len)
{
	pieces_make(ps, b, len, NULL, 0);
}

/* ---- requests ------------------------------------------------------------ */

static const struct wire_model MODEL = {
	.loaded = true, .hidden = 4, .num_layers = 64, .owns_all = true,
};

/* A client request (§3): single form when !batch (k must be 1). */
static size_t
req_build(uint8_t *b, bool batch, const uint32_t *layers, uint32_t k,
	  uint32_t seq, uint32_t flags, uint32_t top_k, uint32_t hidden)
{
	size_t n = 0;

	if (batch) {
		put32(b, 0xffffffffu);
		put32(b + 4, k);
		for (uint32_t i = 0; i < k; i++)
			put32(b + 8 + 4 * i, layers[i]);
		n = 8 + 4 * (size_t)k;
	} else {
		assert_int_equal(k, 1);
		put32(b, layers[0]);
		n = 4;
	}
	put32(b + n, seq);
	put32(b + n + 4, flags);
	put32(b + n + 8, top_k);
	n += 12;
	for (uint32_t i = 0; i < seq * hidden; i++, n += 4)
		putf(b + n, (float)i - 1.5f);
	return n;
}

static void
req_decode(struct wire_req *rq, const uint8_t *b, size_t len,
	   uint32_t hidden)
{
	struct wire_model m = MODEL;
	struct wire_error err;

	m.hidden = hidden;
	assert_int_equal(wire_req_decode(rq, b, len, WIRE_FMT_F32, &err), 0);
	assert_int_equal(wire_req_validate(rq, &m, &err), 0);
}

/* Ranges of 10 layers each: [0-9] [10-19] ... (n of them). */
static struct front_layout
layout_tens(unsigned int n)
{
	struct front_layout l = { .n = n };

	for (unsigned int i = 0; i < n; i++) {
		l.first[i] = 10 * i;
		l.last[i] = 10 * i + 9;
	}
	return l;
}

/* ---- shard answers and expected frames, straight from §5.2/§5.3 ---------- */

/* The FFN "output" of layer, row r, column c: varied signs and sizes,
 * f16 rounding cases, a zero, an outlier per row for i8. */
static float
val(uint32_t layer, uint32_t r, uint32_t c)
{
	int v = (int)((layer * 131 + r * 17 + c * 7) % 97) - 48;

	if (c == 1)
		return 0.0f;
	if (c == 2)
		return (float)v * 1000.37f + 0.333333f;
	return (float)v * 0.0371f + 1.0f / 3.0f * (float)(layer + 1);
}

/*
 * Payload of one result (§5.2) for a shard that computed val() and
 * answered in fmt_in, as the client must see it in fmt_out: the shard's
 * own bytes when the two agree; else narrowed from what the shard sent
 * (f16 -> i8 goes through the f16 values, exactly).
 */
static size_t
payload(uint8_t *dst, enum wire_fmt fmt_in, enum wire_fmt fmt_out,
	uint32_t layer, uint32_t seq, uint32_t hidden)
{
	float rows[64];
	uint16_t h[64];
	size_t m = (size_t)seq * hidden;

	assert_true(m <= 64);
	for (uint32_t r = 0; r < seq; r++)
		for (uint32_t c = 0; c < hidden; c++)
			rows[r * hidden + c] = val(layer, r, c);
	if (fmt_in == WIRE_FMT_F16 && fmt_out == WIRE_FMT_I8) {
		quant_f32_to_f16(h, rows, m);
		quant_f16_to_f32(rows, h, m);
	}
	switch (fmt_out) {
	case WIRE_FMT_F32:
		memcpy(dst, rows, 4 * m);
		return 4 * m;
	case WIRE_FMT_F16:
		quant_f32_to_f16(h, rows, m);
		memcpy(dst, h, 2 * m);
		return 2 * m;
	default:
		quant_f32_to_i8_rows(dst, rows, seq, hidden);
		return (size_t)seq * (8 + hidden);
	}
}

/* A whole frame (§5.2) of n results: single when n == 1, else batch. */
static size_t
frame(uint8_t *b, enum wire_fmt fmt_in, enum wire_fmt fmt_out,
      const uint32_t *layers, uint32_t n, uint32_t seq, uint32_t hidden,
      float lat)
{
	size_t k = 0;

	if (n != 1) {
		put32(b, 0xffffffffu);
		put32(b + 4, n);
		putf(b + 8, lat);
		k = 12;
	}
	for (uint32_t i = 0; i < n; i++) {
		put32(b + k, layers[i]);
		put32(b + k + 4, seq);
		if (n == 1)
			putf(b + k + 8, lat);
		else
			put32(b + k + 8, seq * hidden);
		k += 12;
		k += payload(b + k, fmt_in, fmt_out, layers[i], seq, hidden);
	}
	return k;
}

/* What sub s of p asks, in its order. */
static uint32_t
sub_layers(const struct front_plan *p, unsigned int s, uint32_t *out)
{
	for (uint32_t i = 0; i < p->n_layers; i++)
		if (p->res_sub[i] == s)
			out[p->res_idx[i]] = p->layer[i];
	return p->sub[s].n_layers;
}

/* Flatten a merged answer. */
static size_t
flatten(const struct front_merged *m, uint8_t *out)
{
	size_t n = 0;

	for (unsigned int i = 0; i < m->iovcnt; i++) {
		memcpy(out + n, m->iov[i].iov_base, m->iov[i].iov_len);
		n += m->iov[i].iov_len;
	}
	assert_int_equal(n, m->len);
	return n;
}

/* Whether [p, p + len) lies inside one of g's ranges. */
static bool
points_into(const struct front_gather *g, const void *p, size_t len)
{
	for (unsigned int i = 0; i < g->n; i++) {
		const uint8_t *b = g->iov[i].iov_base;

		if ((const uint8_t *)p >= b &&
		    (const uint8_t *)p + len <= b + g->iov[i].iov_len)
			return true;
	}
	return false;
}

/* ---- layout -------------------------------------------------------------- */

static void
test_layout_owner(void **state)
{
	struct front_layout l = { .n = 3, .first = { 0, 10, 20 },
				  .last = { 9, 19, 33 } };
	struct front_layout one = { .n = 1, .first = { 0 }, .last = { 0 } };
	struct front_layout none = { .n = 0 };

	(void)state;
	assert_int_equal(front_layout_owner(&l, 0), 0);
	assert_int_equal(front_layout_owner(&l, 9), 0);
	assert_int_equal(front_layout_owner(&l, 10), 1);
	assert_int_equal(front_layout_owner(&l, 19), 1);
	assert_int_equal(front_layout_owner(&l, 20), 2);
	assert_int_equal(front_layout_owner(&l, 33), 2);
	assert_int_equal(front_layout_owner(&l, 34), -1);
	assert_int_equal(front_layout_owner(&l, UINT32_MAX), -1);
	assert_int_equal(front_layout_owner(&one, 0), 0);
	assert_int_equal(front_layout_owner(&one, 1), -1);
	assert_int_equal(front_layout_owner(&none, 0), -1);

	/* the most ranges: every layer its own */
	struct front_layout max = layout_tens(FRONT_MAX_RANGES);

	for (uint32_t L = 0; L < 10 * FRONT_MAX_RANGES; L++)
		assert_int_equal(front_layout_owner(&max, L), (int)(L / 10));
	assert_int_equal(front_layout_owner(&max, 10 * FRONT_MAX_RANGES),
			 -1);
}

/* ---- gather -------------------------------------------------------------- */

static void
test_gather_copy_ranges(void **state)
{
	uint8_t b[40], got[40];
	/* pieces [0,3) [3,3) [3,10) [10,11) [11,40): an empty one too */
	const size_t cuts[] = { 3, 3, 10, 11 };
	struct pieces ps;
	struct iovec out[8];

	(void)state;
	for (unsigned int i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 7 + 1);
	pieces_make(&ps, b, sizeof(b), cuts, 4);

	for (size_t off = 0; off <= sizeof(b); off++) {
		for (size_t len = 0; off + len <= sizeof(b); len++) {
			unsigned int cnt = front_gather_count(&ps.g, off, len);
			int n;
			size_t k = 0;

			memset(got, 0, sizeof(got));
			assert_int_equal(front_gather_copy(&ps.g, off, got, len),
					 0);
			assert_memory_equal(got, b + off, len);
			n = front_gather_ranges(&ps.g, off, len, out, 8);
			assert_int_equal(n, (int)cnt);
			for (int i = 0; i < n; i++) {
				assert_true(out[i].iov_len > 0); /* no empties */
				assert_memory_equal(out[i].iov_base, b + off + k,
						    out[i].iov_len);
				k += out[i].iov_len;
			}
			assert_int_equal(k, len);
			if (len == 0)
				assert_int_equal(n, 0);
		}
	}
	/* [2, 12) spans [0,3) [3,10) [10,11) [11,40): four ranges */
	assert_int_equal(front_gather_count(&ps.g, 2, 10), 4);
	assert_int_equal(front_gather_ranges(&ps.g, 2, 10, out, 3), -ENOSPC);
	/* past the end */
	assert_int_equal(front_gather_copy(&ps.g, 30, got, 11), -ERANGE);
	assert_int_equal(front_gather_copy(&ps.g, 41, got, 0), -ERANGE);
	assert_int_equal(front_gather_ranges(&ps.g, 39, 2, out, 8), -ERANGE);
	assert_int_equal(front_gather_ranges(&ps.g, SIZE_MAX, 2, out, 8),
			 -ERANGE);
	assert_int_equal(front_gather_copy(&ps.g, 1, got, SIZE_MAX), -ERANGE);
	assert_int_equal(front_gather_count(&ps.g, 39, 2), 0);
	pieces_free(&ps);
}

static void
test_alloc_heap(void **state)
{
	void *p;

	(void)state;
	for (size_t sz = 0; sz < 200; sz += 13) {
		p = front_alloc_heap.alloc(front_alloc_heap.arg, sz);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 64, 0);
		memset(p, 0, sz);
		front_alloc_heap.free(front_alloc_heap.arg, p);
	}
	assert_null(front_alloc_heap.alloc(front_alloc_heap.arg, SIZE_MAX));
}

/* ---- split --------------------------------------------------------------- */

static void
test_split_spec8_single_one_owner(void **state)
{
	uint8_t b[64];
	size_t len = hex("05000000 01000000 01000000 9c1f0000 0000803f "
			 "000000c0 0000003f 00004040", b);
	struct front_layout l = layout_tens(3);
	struct wire_req rq;
	struct front_plan p;
	struct wire_error err;

	(void)state;
	req_decode(&rq, b, len, 4);
	assert_int_equal(front_plan_binary(&p, &rq, b, &l, &A, &err), 0);
	assert_int_equal(p.n_layers, 1);
	assert_int_equal(p.seq_len, 1);
	assert_int_equal(p.fmt_in, WIRE_FMT_F32);
	assert_int_equal(p.n_sub, 1);
	assert_int_equal(p.sub[0].range, 0);
	assert_int_equal(p.sub[0].n_layers, 1);
	/* forwarded as it came: the client's own header bytes */
	assert_ptr_equal(p.sub[0].hdr, b);
	assert_int_equal(p.sub[0].hdr_len, 16);
	assert_ptr_equal(p.payload, b + 16);
	assert_int_equal(p.payload_len, 16);
	assert_int_equal(p.layer[0], 5);
	assert_int_equal(p.res_sub[0], 0);
	assert_int_equal(p.res_idx[0], 0);
	front_plan_free(&p, &A);
	assert_null(p.mem);
}

static void
test_split_spec8_batch(void **state)
{
	uint8_t b[64], want[16];
	size_t len = hex("ffffffff 02000000 05000000 14000000 01000000 "
			 "01000000 9c1f0000 0000803f 000000c0 0000003f "
			 "00004040", b);
	struct front_layout l = layout_tens(3);
	struct front_layout all = { .n = 1, .first = { 0 }, .last = { 29 } };
	struct wire_req rq;
	struct front_plan p;
	struct wire_error err;

	(void)state;
	req_decode(&rq, b, len, 4);
	/* layers 5 and 20 have two owners: two single-form subs */
	assert_int_equal(front_plan_binary(&p, &rq, b, &l, &A, &err), 0);
	assert_int_equal(p.n_sub, 2);
	assert_int_equal(p.sub[0].range, 0);
	assert_int_equal(p.sub[1].range, 2);
	hex("05000000 01000000 01000000 9c1f0000", want);
	assert_int_equal(p.sub[0].hdr_len, 16);
	assert_memory_equal(p.sub[0].hdr, want, 16);
	hex("14000000 01000000 01000000 9c1f0000", want);
	assert_int_equal(p.sub[1].hdr_len, 16);
	assert_memory_equal(p.sub[1].hdr, want, 16);
	assert_ptr_equal(p.payload, b + 28);
	assert_int_equal(p.payload_len, 16);
	front_plan_free(&p, &A);

	/* one owner of both: the client's header, batch form, unchanged */
	assert_int_equal(front_plan_binary(&p, &rq, b, &all, &A, &err), 0);
	assert_int_equal(p.n_sub, 1);
	assert_ptr_equal(p.sub[0].hdr, b);
	assert_int_equal(p.sub[0].hdr_len, 28);
	assert_int_equal(p.sub[0].n_layers, 2);
	front_plan_free(&p, &A);
}

/* Check a plan's subs against the expected grouping: want[s] lists sub
 * s's layers (range rng[s]); flags/top_k as the client's. */
static void
check_subs(const struct front_plan *p, unsigned int n_sub,
	   const unsigned int *rng, const uint32_t *const *want,
	   const uint32_t *n_want, uint32_t seq, uint32_t flags,
	   uint32_t top_k)
{
	assert_int_equal(p->n_sub, n_sub);
	for (unsigned int s = 0; s < n_sub; s++) {
		const struct front_sub *sb = &p->sub[s];
		const uint8_t *h = sb->hdr, *t;

		assert_int_equal(sb->range, rng[s]);
		assert_int_equal(sb->n_layers, n_want[s]);
		if (n_want[s] == 1) {
			assert_int_equal(sb->hdr_len, 16);
			assert_int_equal(get32(h), want[s][0]);
			t = h + 4;
		} else {
			assert_int_equal(sb->hdr_len, 20 + 4 * n_want[s]);
			assert_int_equal(get32(h), 0xffffffffu);
			assert_int_equal(get32(h + 4), n_want[s]);
			for (uint32_t j = 0; j < n_want[s]; j++)
				assert_int_equal(get32(h + 8 + 4 * j),
						 want[s][j]);
			t = h + 8 + 4 * n_want[s];
		}
		assert_int_equal(get32(t), seq);
		assert_int_equal(get32(t + 4), flags);
		assert_int_equal(get32(t + 8), top_k);
	}
}

static void
test_split_three_owners_dups_interleaved(void **state)
{
	/* 25 3 12 3 27 14 25 0: owners 2 0 1 0 2 1 2 0 */
	const uint32_t layers[] = { 25, 3, 12, 3, 27, 14, 25, 0 };
	const uint32_t s0[] = { 25, 27, 25 }, s1[] = { 3, 3, 0 },
		       s2[] = { 12, 14 };
	const uint32_t *want[] = { s0, s1, s2 }, n_want[] = { 3, 3, 2 };
	const unsigned int rng[] = { 2, 0, 1 };
	const uint16_t res_sub[] = { 0, 1, 2, 1, 0, 2, 0, 1 };
	const uint32_t res_idx[] = { 0, 0, 0, 1, 1, 1, 2, 2 };
	struct front_layout l = layout_tens(3);
	uint8_t b[BUF];
	size_t len = req_build(b, true, layers, 8, 2, 0x5, 77, 4);
	struct wire_req rq;
	struct front_plan p;
	struct wire_error err;

	(void)state;
	req_decode(&rq, b, len, 4);
	assert_int_equal(front_plan_binary(&p, &rq, b, &l, &A, &err), 0);
	assert_int_equal(p.n_layers, 8);
	assert_int_equal(p.seq_len, 2);
	check_subs(&p, 3, rng, want, n_want, 2, 0x5, 77);
	for (unsigned int i = 0; i < 8; i++) {
		assert_int_equal(p.layer[i], layers[i]);
		assert_int_equal(p.res_sub[i], res_sub[i]);
		assert_int_equal(p.res_idx[i], res_idx[i]);
	}
	/* every sub carries the client's payload, by reference */
	assert_ptr_equal(p.payload, b + 8 + 4 * 8 + 12);
	assert_int_equal(p.payload_len, 2 * 4 * 4);
	front_plan_free(&p, &A);
}

static void
test_split_two_owners_one_single(void **state)
{
	/* 3 12 4: range 0 gets [3, 4] (batch form), range 1 [12] (single) */
	const uint32_t layers[] = { 3, 12, 4 };
	const uint32_t s0[] = { 3, 4 }, s1[] = { 12 };
	const uint32_t *want[] = { s0, s1 }, n_want[] = { 2, 1 };
	const unsigned int rng[] = { 0, 1 };
	struct front_layout l = layout_tens(2);
	uint8_t b[BUF];
	size_t len = req_build(b, true, layers, 3, 1, 1, 8092, 4);
	struct wire_req rq;
	struct front_plan p;
	struct wire_error err;

	(void)state;
	req_decode(&rq, b, len, 4);
	assert_int_equal(front_plan_binary(&p, &rq, b, &l, &A, &err), 0);
	check_subs(&p, 2, rng, want, n_want, 1, 1, 8092);
	front_plan_free(&p, &A);

	/* one layer listed twice with one owner: one sub, both kept */
	const uint32_t twice[] = { 7, 7 };

	len = req_build(b, true, twice, 2, 1, 1, 8092, 4);
	req_decode(&rq, b, len, 4);
	assert_int_equal(front_plan_binary(&p, &rq, b, &l, &A, &err), 0);
	assert_int_equal(p.n_sub, 1);
	assert_int_equal(p.sub[0].n_layers, 2);
	assert_ptr_equal(p.sub[0].hdr, b);
	assert_int_equal(p.res_idx[1], 1);
	front_plan_free(&p, &A);

	/* a batch of one whose owner is the only one: as it came */
	len = req_build(b, true, twice, 1, 1, 1, 8092, 4);
	req_decode(&rq, b, len, 4);
	assert_int_equal(front_plan_binary(&p, &rq, b, &l, &A, &err), 0);
	assert_int_equal(p.n_sub, 1);
	assert_ptr_equal(p.sub[0].hdr, b);
	assert_int_equal(p.sub[0].hdr_len, 24);
	front_plan_free(&p, &A);
}

static void
test_split_unowned_layer(void **state)
{
	const uint32_t layers[] = { 3, 30, 4 };
	struct front_layout l = layout_tens(3);
	uint8_t b[BUF];
	size_t len = req_build(b, true, layers, 3, 1, 1, 8092, 4);
	struct wire_req rq;
	struct front_plan p;
	struct wire_error err;

	(void)state;
	req_decode(&rq, b, len, 4);
	assert_int_equal(front_plan_binary(&p, &rq, b, &l, &A, &err),
			 -EINVAL);
	assert_int_equal(err.status, 400);
	assert_string_equal(err.msg, "layer 30 out of range (num_layers = 30)");
	assert_int_equal(n_alloc, 0);	/* refused before allocating */
	assert_null(p.mem);
}

static void
test_split_k0(void **state)
{
	uint8_t b[BUF];
	size_t len = req_build(b, true, NULL, 0, 1, 1, 8092, 4);
	struct front_layout l = layout_tens(3);
	struct wire_req rq;
	struct front_plan p;
	struct front_merged m;
	struct wire_error err;
	unsigned int bad = 99;
	uint8_t want[16], got[64];

	(void)state;
	req_decode(&rq, b, len, 4);
	assert_int_equal(front_plan_binary(&p, &rq, b, &l, &A, &err), 0);
	assert_int_equal(p.n_layers, 0);
	assert_int_equal(p.n_sub, 0);
	assert_null(p.mem);
	/* merging no answers gives §5.2's empty batch */
	assert_int_equal(front_merge_binary(&p, NULL, WIRE_FMT_F16, 4, LAT,
					    &A, &m, &err, &bad), 0);
	hex("ffffffff 00000000 9a99e940", want);
	assert_int_equal(flatten(&m, got), 12);
	assert_memory_equal(got, want, 12);
	front_merged_free(&m, &A);
	front_plan_free(&p, &A);
}

static void
test_split_enomem(void **state)
{
	const uint32_t layers[] = { 3, 13 };
	struct front_layout l = layout_tens(3);
	uint8_t b[BUF];
	size_t len = req_build(b, true, layers, 2, 1, 1, 8092, 4);
	struct wire_req rq;
	struct front_plan p;
	struct wire_error err;

	(void)state;
	req_decode(&rq, b, len, 4);
	fail_at = 0;
	assert_int_equal(front_plan_binary(&p, &rq, b, &l, &A, &err),
			 -ENOMEM);
}

/* ---- merge: the worked frames of §8 -------------------------------------- */

/* Plan the §8 request(s), answer them with ans_hex (one per sub, in
 * fmt_in), merge into fmt_out and compare with want_hex. */
static void
spec8_merge(const char *req_hex, const struct front_layout *l,
	    const char *const *ans_hex, enum wire_fmt fmt_in,
	    enum wire_fmt fmt_out, uint32_t hidden, const char *want_hex,
	    uint32_t narrowed)
{
	uint8_t b[256], a[4][256], want[256], got[256];
	size_t len = hex(req_hex, b), wl = hex(want_hex, want);
	static struct pieces ps[4];
	struct front_sub_answer ans[4];
	struct wire_req rq;
	struct front_plan p;
	struct front_merged m;
	struct wire_error err;
	unsigned int bad = 99;

	req_decode(&rq, b, len, 4);
	assert_int_equal(front_plan_binary(&p, &rq, b, l, &A, &err), 0);
	for (unsigned int s = 0; s < p.n_sub; s++) {
		pieces_one(&ps[s], a[s], hex(ans_hex[s], a[s]));
		ans[s].fmt = fmt_in;
		ans[s].body = ps[s].g;
	}
	assert_int_equal(front_merge_binary(&p, ans, fmt_out, hidden, LAT, &A,
					    &m, &err, &bad), 0);
	assert_int_equal(flatten(&m, got), wl);
	assert_memory_equal(got, want, wl);
	assert_int_equal(m.narrowed, narrowed);
	if (fmt_in == fmt_out) {
		/* zero copy: every byte but the headers (12 a result, and
		 * 12 of a batch frame) is the answers' own */
		size_t ref = 0;

		for (unsigned int i = 0; i < m.iovcnt; i++)
			for (unsigned int s = 0; s < p.n_sub; s++)
				if (points_into(&ps[s].g, m.iov[i].iov_base,
						m.iov[i].iov_len))
					ref += m.iov[i].iov_len;
		assert_int_equal(ref, wl - 12 * (p.n_layers +
						 (p.n_layers != 1)));
	}
	front_merged_free(&m, &A);
	front_plan_free(&p, &A);
	for (unsigned int s = 0; s < p.n_sub; s++)
		pieces_free(&ps[s]);
}

#define REQ_SINGLE "05000000 01000000 01000000 9c1f0000 0000803f 000000c0 " \
		   "0000003f 00004040"
#define REQ_BATCH "ffffffff 02000000 05000000 14000000 01000000 01000000 " \
		  "9c1f0000 0000803f 000000c0 0000003f 00004040"
#define RSP_F32 "05000000 01000000 9a99e940 0000803e 0000c0bf 0000c842 " \
		"6f1283ba"
#define RSP_F16 "05000000 01000000 9a99e940 0034 00be 4056 1994"
#define RSP_I8 "05000000 01000000 9a99e940 2693493f 00000000 00 fe 7f 00"

static void
test_merge_spec8_single(void **state)
{
	struct front_layout l = layout_tens(3);
	const char *f32[] = { RSP_F32 }, *f16[] = { RSP_F16 },
		   *i8[] = { RSP_I8 };

	(void)state;
	/* as is, in each format */
	spec8_merge(REQ_SINGLE, &l, f32, WIRE_FMT_F32, WIRE_FMT_F32, 4,
		    RSP_F32, 0);
	spec8_merge(REQ_SINGLE, &l, f16, WIRE_FMT_F16, WIRE_FMT_F16, 4,
		    RSP_F16, 0);
	spec8_merge(REQ_SINGLE, &l, i8, WIRE_FMT_I8, WIRE_FMT_I8, 4, RSP_I8,
		    0);
	/* narrowed here, to exactly the bytes a shard would send (§5.3) */
	spec8_merge(REQ_SINGLE, &l, f32, WIRE_FMT_F32, WIRE_FMT_F16, 4,
		    RSP_F16, 1);
	spec8_merge(REQ_SINGLE, &l, f32, WIRE_FMT_F32, WIRE_FMT_I8, 4,
		    RSP_I8, 1);
}

static void
test_merge_spec8_batch(void **state)
{
	struct front_layout l = layout_tens(3);
	/* hidden 2 this time; the request's payload is not looked at */
	const char *f32[] = {
		"05000000 01000000 00000000 0000803e 0000c0bf",
		"14000000 01000000 00000000 0000c842 6f1283ba",
	};
	const char *want_f32 = "ffffffff 02000000 9a99e940 "
		"05000000 01000000 02000000 0000803e 0000c0bf "
		"14000000 01000000 02000000 0000c842 6f1283ba";
	const char *want_i8 = "ffffffff 02000000 9a99e940 "
		"05000000 01000000 02000000 0683413c 00000000 15 81 "
		"14000000 01000000 02000000 2693493f 00000000 7f 00";

	(void)state;
	spec8_merge(REQ_BATCH, &l, f32, WIRE_FMT_F32, WIRE_FMT_F32, 2,
		    want_f32, 0);
	spec8_merge(REQ_BATCH, &l, f32, WIRE_FMT_F32, WIRE_FMT_I8, 2, want_i8,
		    2);
}

static void
test_merge_latency_as_f32(void **state)
{
	const char *f32[] = { RSP_F32 };
	uint8_t b[64], a[64], got[64];
	size_t len = hex(REQ_SINGLE, b);
	struct front_layout l = layout_tens(1);
	struct pieces ps;
	struct front_sub_answer ans;
	struct wire_req rq;
	struct front_plan p;
	struct front_merged m;
	struct wire_error err;
	unsigned int bad;
	const double lats[] = { 0.1, 1e-50, 3.4028235677973366e38, 0.0 };
	const uint32_t bits[] = { 0x3dcccccd, 0x0, 0x7f800000, 0 };

	(void)state;
	req_decode(&rq, b, len, 4);
	assert_int_equal(front_plan_binary(&p, &rq, b, &l, &A, &err), 0);
	pieces_one(&ps, a, hex(f32[0], a));
	ans.fmt = WIRE_FMT_F32;
	ans.body = ps.g;
	for (unsigned int i = 0; i < 4; i++) {
		assert_int_equal(front_merge_binary(&p, &ans, WIRE_FMT_F32, 4,
						    lats[i], &A, &m, &err,
						    &bad), 0);
		flatten(&m, got);
		/* the shard's 7.3 is replaced by the front's latency */
		assert_int_equal(get32(got + 8), bits[i]);
		front_merged_free(&m, &A);
	}
	front_plan_free(&p, &A);
	pieces_free(&ps);
}

/* ---- merge: every format pair, many owners ------------------------------- */

struct scenario {
	const uint32_t *layers;
	uint32_t k;
	bool batch;
	uint32_t seq, hidden;
	unsigned int n_ranges;
};

/*
 * Run sc with sub s answering in fmt_in[s] (a shard's frame for its own
 * layers, built from the spec), merged into fmt_out; compare with the
 * client's frame built from the spec. cut_sub/cut: when cut_sub is a
 * sub, its answer is cut at the offsets cut[0..n_cut) instead of whole.
 */
static void
run(const struct scenario *sc, const enum wire_fmt *fmt_in,
    enum wire_fmt fmt_out, int cut_sub, const size_t *cut,
    unsigned int n_cut)
{
	static uint8_t b[BUF], a[FRONT_MAX_RANGES][BUF], want[BUF], got[BUF];
	static struct pieces ps[8];
	struct front_layout l = layout_tens(sc->n_ranges);
	struct front_sub_answer ans[8];
	uint32_t sl[64], narrowed = 0;
	size_t len = req_build(b, sc->batch, sc->layers, sc->k, sc->seq, 1,
			       8092, sc->hidden);
	size_t wl;
	struct wire_req rq;
	struct front_plan p;
	struct front_merged m;
	struct wire_error err;
	unsigned int bad = 99;
	int rc;

	req_decode(&rq, b, len, sc->hidden);
	assert_int_equal(front_plan_binary(&p, &rq, b, &l, &A, &err), 0);
	assert_true(p.n_sub <= 8);
	for (unsigned int s = 0; s < p.n_sub; s++) {
		uint32_t n = sub_layers(&p, s, sl);
		size_t al = frame(a[s], fmt_in[s], fmt_in[s], sl, n, sc->seq,
				  sc->hidden, 1.5f);

		if (cut_sub >= 0 && s == (unsigned int)cut_sub)
			pieces_make(&ps[s], a[s], al, cut, n_cut);
		else
			pieces_one(&ps[s], a[s], al);
		ans[s].fmt = fmt_in[s];
		ans[s].body = ps[s].g;
	}
	for (uint32_t i = 0; i < p.n_layers; i++)
		narrowed += fmt_in[p.res_sub[i]] != fmt_out;

	rc = front_merge_binary(&p, ans, fmt_out, sc->hidden, LAT, &A, &m,
				&err, &bad);
	assert_int_equal(rc, 0);
	assert_int_equal(m.narrowed, narrowed);

	/* expected: the client's frame, every result narrowed from what
	 * its shard sent */
	wl = 0;
	if (p.n_layers != 1) {
		put32(want, 0xffffffffu);
		put32(want + 4, p.n_layers);
		putf(want + 8, (float)LAT);
		wl = 12;
	}
	for (uint32_t i = 0; i < p.n_layers; i++) {
		put32(want + wl, sc->layers[i]);
		put32(want + wl + 4, sc->seq);
		if (p.n_layers == 1)
			putf(want + wl + 8, (float)LAT);
		else
			put32(want + wl + 8, sc->seq * sc->hidden);
		wl += 12;
		wl += payload(want + wl, fmt_in[p.res_sub[i]], fmt_out,
			      sc->layers[i], sc->seq, sc->hidden);
	}
	assert_int_equal(flatten(&m, got), wl);
	assert_memory_equal(got, want, wl);

	/* payloads in the client's format are the answers' bytes: count
	 * what points into them */
	size_t ref = 0;

	for (unsigned int i = 0; i < m.iovcnt; i++)
		for (unsigned int s = 0; s < p.n_sub; s++)
			if (points_into(&ps[s].g, m.iov[i].iov_base,
					m.iov[i].iov_len))
				ref += m.iov[i].iov_len;
	size_t ref_want = 0, pl = 0;
	uint8_t tmp[BUF];

	for (uint32_t i = 0; i < p.n_layers; i++)
		if (fmt_in[p.res_sub[i]] == fmt_out) {
			pl = payload(tmp, fmt_out, fmt_out, 0, sc->seq,
				     sc->hidden);
			ref_want += pl;
		}
	assert_int_equal(ref, ref_want);
	/* and everything else sits in the one block (and the plan's) */
	assert_int_equal(live, 2);

	front_merged_free(&m, &A);
	assert_null(m.mem);
	front_plan_free(&p, &A);
	for (unsigned int s = 0; s < p.n_sub; s++)
		pieces_free(&ps[s]);
}

static const uint32_t L8[] = { 25, 3, 12, 3, 27, 14, 25, 0 };
static const uint32_t LOW[] = { 3, 0, 3, 7 };

static void
test_merge_format_pairs(void **state)
{
	static const struct scenario scs[] = {
		{ L8, 8, true, 3, 5, 3 },	/* 3 owners, dups */
		{ LOW, 4, true, 1, 4, 1 },	/* 1 owner: as it came */
		{ L8 + 1, 3, true, 2, 3, 2 },	/* a single-form sub */
		{ L8 + 2, 1, false, 2, 7, 2 },	/* a single request */
		{ L8 + 1, 1, true, 1, 1, 3 },	/* batch of 1, hidden 1 */
	};
	static const enum wire_fmt f[] = {
		WIRE_FMT_F32, WIRE_FMT_F16, WIRE_FMT_I8,
	};

	(void)state;
	for (unsigned int c = 0; c < sizeof(scs) / sizeof(scs[0]); c++)
		for (unsigned int in = 0; in < 3; in++)
			for (unsigned int out = in; out < 3; out++) {
				enum wire_fmt fi[8];

				for (unsigned int s = 0; s < 8; s++)
					fi[s] = f[in];
				run(&scs[c], fi, f[out], -1, NULL, 0);
			}
}

static void
test_merge_mixed_formats(void **state)
{
	static const struct scenario sc = { L8, 8, true, 2, 6, 3 };
	/* subs answer f32, f16, i8 (one with i8 off, one with f16 off) */
	const enum wire_fmt mix[] = { WIRE_FMT_F32, WIRE_FMT_F16,
				      WIRE_FMT_I8 };
	const enum wire_fmt mix2[] = { WIRE_FMT_F16, WIRE_FMT_F32,
				       WIRE_FMT_F16 };

	(void)state;
	run(&sc, mix, WIRE_FMT_I8, -1, NULL, 0);
	run(&sc, mix2, WIRE_FMT_F16, -1, NULL, 0);
	run(&sc, mix2, WIRE_FMT_I8, -1, NULL, 0);
}

/* ---- merge: answers in pieces -------------------------------------------- */

static void
test_merge_pieces_every_cut(void **state)
{
	/* 2 owners: sub 0 answers [3, 4] as a batch, sub 1 [12] single */
	static const uint32_t layers[] = { 3, 12, 4 };
	static const struct scenario sc = { layers, 3, true, 2, 3, 2 };
	static const enum wire_fmt f[] = {
		WIRE_FMT_F32, WIRE_FMT_F16, WIRE_FMT_I8,
	};
	size_t cuts[BUF];

	(void)state;
	for (unsigned int in = 0; in < 3; in++)
		for (unsigned int out = in; out < 3; out++) {
			enum wire_fmt fi[2] = { f[in], f[in] };
			/* sub 0: 12 + 2 * (12 + payload) bytes */
			size_t pl = in == 0 ? 24 : in == 1 ? 12 : 22;
			size_t len0 = 12 + 2 * (12 + pl), len1 = 12 + pl;

			for (int s = 0; s < 2; s++) {
				size_t len = s == 0 ? len0 : len1;

				/* two pieces, cut at every byte */
				for (size_t k = 1; k < len; k++)
					run(&sc, fi, f[out], s, &k, 1);
				/* every byte its own piece */
				for (size_t k = 1; k < len; k++)
					cuts[k - 1] = k;
				run(&sc, fi, f[out], s, cuts, len - 1);
				/* empty pieces in between, and at the ends */
				size_t e[] = { 0, 5, 5, 13, 13, 13, len };

				run(&sc, fi, f[out], s, e, 7);
			}
		}
}

/* ---- merge: malformed answers -------------------------------------------- */

/* A 3-owner plan with good f32 answers to corrupt. */
struct bad_fixture {
	uint8_t b[BUF];
	uint8_t a[3][BUF];
	size_t al[3];
	struct wire_req rq;
	struct front_plan p;
};

static void
bad_setup(struct bad_fixture *fx)
{
	/* subs: range 2 [25, 27, 25], range 0 [3, 3, 0], range 1 [12, 14];
	 * L8[1..4] instead: 3 12 3 27 -> [3, 3] [12] [27] */
	struct front_layout l = layout_tens(3);
	size_t len = req_build(fx->b, true, L8 + 1, 4, 2, 1, 8092, 4);
	struct wire_error err;
	uint32_t sl[8];

	req_decode(&fx->rq, fx->b, len, 4);
	assert_int_equal(front_plan_binary(&fx->p, &fx->rq, fx->b, &l, &A,
					   &err), 0);
	assert_int_equal(fx->p.n_sub, 3);
	assert_int_equal(fx->p.sub[0].n_layers, 2);	/* batch answer */
	assert_int_equal(fx->p.sub[1].n_layers, 1);	/* single */
	for (unsigned int s = 0; s < 3; s++) {
		uint32_t n = sub_layers(&fx->p, s, sl);

		fx->al[s] = frame(fx->a[s], WIRE_FMT_F32, WIRE_FMT_F32, sl, n,
				  2, 4, 1.0f);
	}
}

/* Merge with sub s's answer replaced by (body, len, fmt): expect -EPROTO
 * naming s and a 502 "malformed answer: ..." containing what. */
static void
expect_bad(struct bad_fixture *fx, unsigned int s, const uint8_t *body,
	   size_t len, enum wire_fmt fmt, enum wire_fmt out,
	   const char *what)
{
	static struct pieces ps[3];
	struct front_sub_answer ans[3];
	struct front_merged m;
	struct wire_error err;
	unsigned int bad = 99;

	for (unsigned int i = 0; i < 3; i++) {
		if (i == s)
			pieces_one(&ps[i], body, len);
		else
			pieces_one(&ps[i], fx->a[i], fx->al[i]);
		ans[i].fmt = i == s ? fmt : WIRE_FMT_F32;
		ans[i].body = ps[i].g;
	}
	memset(&err, 0, sizeof(err));
	assert_int_equal(front_merge_binary(&fx->p, ans, out, 4, LAT, &A, &m,
					    &err, &bad), -EPROTO);
	assert_int_equal(bad, s);
	assert_int_equal(err.status, 502);
	assert_memory_equal(err.msg, "malformed answer: ", 18);
	if (strstr(err.msg, what) == NULL)
		fail_msg("\"%s\" lacks \"%s\"", err.msg, what);
	assert_null(m.mem);
	assert_int_equal(live, 1);	/* the plan only: nothing kept */
	for (unsigned int i = 0; i < 3; i++)
		pieces_free(&ps[i]);
}

static void
test_merge_malformed(void **state)
{
	static struct bad_fixture fx;
	uint8_t t[BUF];
	size_t n;

	(void)state;
	bad_setup(&fx);
	/* the good ones merge */
	{
		static struct pieces ps[3];
		struct front_sub_answer ans[3];
		struct front_merged m;
		struct wire_error err;
		unsigned int bad;

		for (unsigned int i = 0; i < 3; i++) {
			pieces_one(&ps[i], fx.a[i], fx.al[i]);
			ans[i].fmt = WIRE_FMT_F32;
			ans[i].body = ps[i].g;
		}
		assert_int_equal(front_merge_binary(&fx.p, ans, WIRE_FMT_F32,
						    4, LAT, &A, &m, &err,
						    &bad), 0);
		front_merged_free(&m, &A);
		for (unsigned int i = 0; i < 3; i++)
			pieces_free(&ps[i]);
	}

	/* formats: not binary, narrower than the client's */
	expect_bad(&fx, 1, fx.a[1], fx.al[1], WIRE_FMT_JSON, WIRE_FMT_F32,
		   "not a binary frame");
	expect_bad(&fx, 2, fx.a[2], fx.al[2], WIRE_FMT_NONE, WIRE_FMT_F32,
		   "not a binary frame");
	n = frame(t, WIRE_FMT_I8, WIRE_FMT_I8, (uint32_t[]){ 12 }, 1, 2, 4,
		  1.0f);
	expect_bad(&fx, 1, t, n, WIRE_FMT_I8, WIRE_FMT_F16,
		   "i8 payload, f16 was asked");
	n = frame(t, WIRE_FMT_F16, WIRE_FMT_F16, (uint32_t[]){ 12 }, 1, 2, 4,
		  1.0f);
	expect_bad(&fx, 1, t, n, WIRE_FMT_F16, WIRE_FMT_F32,
		   "f16 payload, f32 was asked");
	/* an f32 body labelled f16: the lengths do not add up */
	expect_bad(&fx, 1, fx.a[1], fx.al[1], WIRE_FMT_F16, WIRE_FMT_F16,
		   "bytes, 28 expected");

	/* shape */
	expect_bad(&fx, 0, t, 0, WIRE_FMT_F32, WIRE_FMT_F32,
		   "shorter than a frame header");
	expect_bad(&fx, 1, fx.a[1], 11, WIRE_FMT_F32, WIRE_FMT_F32,
		   "shorter than a frame header");
	n = frame(t, WIRE_FMT_F32, WIRE_FMT_F32, (uint32_t[]){ 3 }, 1, 2, 4,
		  1.0f);
	expect_bad(&fx, 0, t, n, WIRE_FMT_F32, WIRE_FMT_F32,
		   "single frame, a batch of 2 was expected");
	n = frame(t, WIRE_FMT_F32, WIRE_FMT_F32, (uint32_t[]){ 12, 12 }, 2, 2,
		  4, 1.0f);
	expect_bad(&fx, 1, t, n, WIRE_FMT_F32, WIRE_FMT_F32,
		   "batch frame, a single one was expected");
	n = frame(t, WIRE_FMT_F32, WIRE_FMT_F32, (uint32_t[]){ 3, 3, 3 }, 3, 2,
		  4, 1.0f);
	expect_bad(&fx, 0, t, n, WIRE_FMT_F32, WIRE_FMT_F32,
		   "batch of 3 results, 2 were asked");

	/* fields: layer (single, and each batch result), seq_len,
	 * num_values */
	memcpy(t, fx.a[1], fx.al[1]);
	put32(t, 13);
	expect_bad(&fx, 1, t, fx.al[1], WIRE_FMT_F32, WIRE_FMT_F32,
		   "layer 13, 12 was asked");
	memcpy(t, fx.a[1], fx.al[1]);
	put32(t + 4, 1);
	expect_bad(&fx, 1, t, fx.al[1], WIRE_FMT_F32, WIRE_FMT_F32,
		   "seq_len 1, 2 was asked");
	memcpy(t, fx.a[0], fx.al[0]);
	put32(t + 12, 4);
	expect_bad(&fx, 0, t, fx.al[0], WIRE_FMT_F32, WIRE_FMT_F32,
		   "result 0 is layer 4, 3 was asked");
	memcpy(t, fx.a[0], fx.al[0]);
	put32(t + 12 + 12 + 32, 0);
	expect_bad(&fx, 0, t, fx.al[0], WIRE_FMT_F32, WIRE_FMT_F32,
		   "result 1 is layer 0, 3 was asked");
	memcpy(t, fx.a[0], fx.al[0]);
	put32(t + 12 + 12 + 32 + 4, 3);
	expect_bad(&fx, 0, t, fx.al[0], WIRE_FMT_F32, WIRE_FMT_F32,
		   "result 1 has seq_len 3, 2 was asked");
	memcpy(t, fx.a[0], fx.al[0]);
	put32(t + 12 + 8, 4);
	expect_bad(&fx, 0, t, fx.al[0], WIRE_FMT_F32, WIRE_FMT_F32,
		   "result 0 has num_values 4, 8 expected");

	/* lengths: a byte short, a byte over, a result cut off */
	expect_bad(&fx, 2, fx.a[2], fx.al[2] - 1, WIRE_FMT_F32, WIRE_FMT_F32,
		   "43 bytes, 44 expected");
	memcpy(t, fx.a[2], fx.al[2]);
	t[fx.al[2]] = 0;
	expect_bad(&fx, 2, t, fx.al[2] + 1, WIRE_FMT_F32, WIRE_FMT_F32,
		   "45 bytes, 44 expected");
	expect_bad(&fx, 0, fx.a[0], fx.al[0] - 1, WIRE_FMT_F32, WIRE_FMT_F32,
		   "99 bytes, 100 expected");
	expect_bad(&fx, 0, fx.a[0], 12 + 44 + 5, WIRE_FMT_F32, WIRE_FMT_F32,
		   "truncated in result 1");
	memcpy(t, fx.a[0], fx.al[0]);
	t[fx.al[0]] = 0;
	expect_bad(&fx, 0, t, fx.al[0] + 1, WIRE_FMT_F32, WIRE_FMT_F32,
		   "101 bytes, 100 expected");

	/* the first bad answer is named when several are */
	{
		static struct pieces ps[3];
		struct front_sub_answer ans[3];
		struct front_merged m;
		struct wire_error err;
		unsigned int bad = 99;

		for (unsigned int i = 0; i < 3; i++) {
			pieces_one(&ps[i], fx.a[i], fx.al[i] - (i > 0));
			ans[i].fmt = WIRE_FMT_F32;
			ans[i].body = ps[i].g;
		}
		assert_int_equal(front_merge_binary(&fx.p, ans, WIRE_FMT_F32,
						    4, LAT, &A, &m, &err,
						    &bad), -EPROTO);
		assert_int_equal(bad, 1);
		for (unsigned int i = 0; i < 3; i++)
			pieces_free(&ps[i]);
	}
	front_plan_free(&fx.p, &A);
}

static void
test_merge_enomem_and_args(void **state)
{
	static struct bad_fixture fx;
	static struct pieces ps[3];
	struct front_sub_answer ans[3];
	struct front_merged m;
	struct wire_error err;
	unsigned int bad;

	(void)state;
	bad_setup(&fx);
	for (unsigned int i = 0; i < 3; i++) {
		pieces_one(&ps[i], fx.a[i], fx.al[i]);
		ans[i].fmt = WIRE_FMT_F32;
		ans[i].body = ps[i].g;
	}
	fail_at = n_alloc;
	assert_int_equal(front_merge_binary(&fx.p, ans, WIRE_FMT_I8, 4, LAT,
					    &A, &m, &err, &bad), -ENOMEM);
	assert_null(m.mem);
	fail_at = -1;
	/* not a binary answer format; hidden 0 */
	assert_int_equal(front_merge_binary(&fx.p, ans, WIRE_FMT_JSON, 4, LAT,
					    &A, &m, &err, &bad), -EINVAL);
	assert_int_equal(front_merge_binary(&fx.p, ans, WIRE_FMT_F32, 0, LAT,
					    &A, &m, &err, &bad), -EINVAL);
	for (unsigned int i = 0; i < 3; i++)
		pieces_free(&ps[i]);
	front_plan_free(&fx.p, &A);
}

/* ---- Content-Type and Accept --------------------------------------------- */

static void
test_answer_fmt(void **state)
{
	static const struct {
		const char *ct;
		enum wire_fmt fmt;
	} c[] = {
		{ "application/x-larql-ffn", WIRE_FMT_F32 },
		{ "application/x-larql-ffn-f16", WIRE_FMT_F16 },
		{ "application/x-larql-ffn-i8", WIRE_FMT_I8 },
		{ "application/json", WIRE_FMT_JSON },
		{ "application/json; charset=utf-8", WIRE_FMT_JSON },
		{ "application/x-larql-ffn-i8;x=1", WIRE_FMT_I8 },
		{ "application/x-larql-ffn-f16 ; x=1", WIRE_FMT_F16 },
		{ " application/x-larql-ffn", WIRE_FMT_F32 },
		{ "Application/X-LARQL-FFN-F16", WIRE_FMT_F16 },
		{ "application/x-larql-ffn-f16x", WIRE_FMT_NONE },
		{ "application/x-larql-ffn-q8k-batch", WIRE_FMT_NONE },
		{ "application/x-larql-ff", WIRE_FMT_NONE },
		{ "text/plain", WIRE_FMT_NONE },
		{ "", WIRE_FMT_NONE },
		{ ";application/x-larql-ffn", WIRE_FMT_NONE },
	};

	(void)state;
	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (front_answer_fmt(c[i].ct, strlen(c[i].ct)) != c[i].fmt)
			fail_msg("\"%s\"", c[i].ct);
	assert_int_equal(front_answer_fmt(NULL, 0), WIRE_FMT_NONE);
	/* length-bounded: no NUL needed, bytes past len ignored */
	assert_int_equal(front_answer_fmt("application/x-larql-ffn-f16", 23),
			 WIRE_FMT_F32);
}

static void
test_accept_for(void **state)
{
	struct wire_opts def, i8on, f16off;
	const char *a;

	(void)state;
	wire_opts_default(&def);
	i8on = def;
	i8on.i8 = true;
	f16off = def;
	f16off.f16 = false;

	a = front_accept_for(WIRE_FMT_F32);
	assert_string_equal(a, "application/x-larql-ffn");
	assert_int_equal(wire_response_format(a, strlen(a), &i8on),
			 WIRE_FMT_F32);
	a = front_accept_for(WIRE_FMT_F16);
	assert_string_equal(a, "application/x-larql-ffn-f16, application/x-larql-ffn");
	assert_int_equal(wire_response_format(a, strlen(a), &i8on),
			 WIRE_FMT_F16);
	assert_int_equal(wire_response_format(a, strlen(a), &f16off),
			 WIRE_FMT_F32);
	a = front_accept_for(WIRE_FMT_I8);
	assert_string_equal(a, "application/x-larql-ffn-i8, application/x-larql-ffn-f16, application/x-larql-ffn");
	assert_int_equal(wire_response_format(a, strlen(a), &i8on),
			 WIRE_FMT_I8);
	assert_int_equal(wire_response_format(a, strlen(a), &def),
			 WIRE_FMT_F16);
	assert_int_equal(wire_response_format(a, strlen(a), &f16off),
			 WIRE_FMT_F32);
	assert_null(front_accept_for(WIRE_FMT_JSON));
	assert_null(front_accept_for(WIRE_FMT_NONE));
}

/* ---- JSON plan ----------------------------------------------------------- */

static void
test_json_plan(void **state)
{
	const uint64_t layers[] = { 25, 3, 12, 3, 27, 14, 25, 0 };
	struct front_layout l = layout_tens(3);
	struct front_json_plan jp;
	struct wire_error err;

	(void)state;
	assert_int_equal(front_json_plan(&jp, layers, 8, &l, &A, &err), 0);
	assert_int_equal(jp.n_sub, 3);
	assert_int_equal(jp.range[0], 2);
	assert_int_equal(jp.range[1], 0);
	assert_int_equal(jp.range[2], 1);
	assert_int_equal(jp.n_layers[0], 3);
	assert_int_equal(jp.n_layers[1], 3);
	assert_int_equal(jp.n_layers[2], 2);
	assert_memory_equal(jp.layers[0], ((uint32_t[]){ 25, 27, 25 }), 12);
	assert_memory_equal(jp.layers[1], ((uint32_t[]){ 3, 3, 0 }), 12);
	assert_memory_equal(jp.layers[2], ((uint32_t[]){ 12, 14 }), 8);
	front_json_plan_free(&jp, &A);
	assert_null(jp.mem);

	assert_int_equal(front_json_plan(&jp, layers, 0, &l, &A, &err),
			 -EINVAL);
	assert_int_equal(err.status, 400);
	assert_string_equal(err.msg, "empty layer list");
	const uint64_t far[] = { 3, 30 }, huge[] = { 1ULL << 40 };

	assert_int_equal(front_json_plan(&jp, far, 2, &l, &A, &err), -EINVAL);
	assert_string_equal(err.msg, "layer 30 out of range (num_layers = 30)");
	assert_int_equal(front_json_plan(&jp, huge, 1, &l, &A, &err),
			 -EINVAL);
	assert_string_equal(err.msg,
		"layer 1099511627776 out of range (num_layers = 30)");
	fail_at = n_alloc;
	assert_int_equal(front_json_plan(&jp, layers, 8, &l, &A, &err),
			 -ENOMEM);
}

/* ---- JSON sub body ------------------------------------------------------- */

static void
sub_body_is(const char *in, const uint32_t *layers, uint32_t n,
	    const char *want)
{
	char *out = NULL;
	size_t len = 0;

	assert_int_equal(front_json_sub_body(in, strlen(in), layers, n, &A,
					     &out, &len), 0);
	assert_int_equal(len, strlen(want));
	assert_string_equal(out, want);
	A.free(A.arg, out);
}

static void
test_json_sub_body(void **state)
{
	const uint32_t one[] = { 3 }, two[] = { 4, 5 };

	(void)state;
	/* "layer" replaced, the rest verbatim, space inside members kept */
	sub_body_is("{\"layer\": 26, \"residual\": [1.0, 2], \"seq_len\":1}",
		    one, 1,
		    "{\"layer\":3,\"residual\": [1.0, 2],\"seq_len\":1}");
	/* both layer and layers go; several layers */
	sub_body_is("{\"layers\":[0,1],\"residual\":[1],\"layer\":9,"
		    "\"full_output\":true}", two, 2,
		    "{\"layers\":[4,5],\"residual\":[1],\"full_output\":true}");
	/* neither: one added */
	sub_body_is("{\"residual\":[1]}", one, 1,
		    "{\"layer\":3,\"residual\":[1]}");
	sub_body_is("{\"residual\":[1]}", two, 2,
		    "{\"layers\":[4,5],\"residual\":[1]}");
	/* only layers: nothing else left */
	sub_body_is("{\"layers\":[1,2]}", one, 1, "{\"layer\":3}");
	/* keys are compared unescaped */
	sub_body_is("{\"lay\\u0065r\":1,\"\\u006cayers\":[2],\"residual\":[1]}",
		    one, 1, "{\"layer\":3,\"residual\":[1]}");
	/* look-alikes stay */
	sub_body_is("{\"Layer\":1,\"lay\\\"er\":2,\"layer \":3,\"layerss\":4,"
		    "\"laye\":5,\"residual\":[1]}", one, 1,
		    "{\"layer\":3,\"Layer\":1,\"lay\\\"er\":2,\"layer \":3,"
		    "\"layerss\":4,\"laye\":5,\"residual\":[1]}");
	/* nested layer keys, strings with structure characters, escapes */
	sub_body_is("{\"opts\":{\"layer\":1,\"a\":[{\"layers\":[]}]},"
		    "\"s\":\"a,}]\\\"\\\\\\u00e9\\ud83d\\ude00\","
		    "\"layer\":0,\"residual\":[-1.5e-3,0,2E+2],\"n\":null,"
		    "\"t\":true,\"f\":false}", two, 2,
		    "{\"layers\":[4,5],\"opts\":{\"layer\":1,\"a\":"
		    "[{\"layers\":[]}]},\"s\":\"a,}]\\\"\\\\\\u00e9\\ud83d"
		    "\\ude00\",\"residual\":[-1.5e-3,0,2E+2],\"n\":null,"
		    "\"t\":true,\"f\":false}");
	/* space around members and the object goes */
	sub_body_is(" \n{ \"residual\" : [ 1 ] ,\t\"layer\" : 7 , "
		    "\"top_k\" :5 }\r\n", one, 1,
		    "{\"layer\":3,\"residual\" : [ 1 ],\"top_k\" :5}");
	/* UTF-8 in keys and values passes through */
	sub_body_is("{\"r\xc3\xa9\":\"\xe2\x82\xac\",\"residual\":[1]}", one,
		    1, "{\"layer\":3,\"r\xc3\xa9\":\"\xe2\x82\xac\","
		    "\"residual\":[1]}");
	/* the output is a request the shard parses to the same thing */
	{
		const char *in = "{\"layer\":26,\"residual\":[1.5,2.5],"
				 "\"seq_len\":2,\"top_k\":5,"
				 "\"full_output\":true}";
		struct wire_json_req r;
		struct wire_error err;
		char *out;
		size_t len;

		assert_int_equal(front_json_sub_body(in, strlen(in), two, 2,
						     &A, &out, &len), 0);
		assert_int_equal(wire_json_req_parse(&r, out, len, &err), 0);
		assert_int_equal(wire_json_req_n_layers(&r), 2);
		assert_int_equal(wire_json_req_layer(&r, 0), 4);
		assert_int_equal(wire_json_req_layer(&r, 1), 5);
		assert_int_equal(r.n_residual, 2);
		assert_true(r.residual[1] == 2.5f);
		assert_int_equal(r.seq_len, 2);
		assert_int_equal(r.top_k, 5);
		assert_true(r.full_output);
		wire_json_req_free(&r);
		A.free(A.arg, out);
	}
}

static void
test_json_sub_body_rejects(void **state)
{
	static const char *const bad[] = {
		"", "[1]", "\"layer\"", "1", "{", "{\"a\":}", "{\"a\" 1}",
		"{\"a\":1,}", "{,}", "{\"a\":1} x", "{\"a\":1}{}", "{a:1}",
		"{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":1e}",
		"{\"a\":-}", "{\"a\":+1}", "{\"a\":tru}", "{\"a\":nul}",
		"{\"a\":[1,]}", "{\"a\":[1}", "{\"a\":{\"b\"}}",
		"{\"a\":\"\x01\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}",
		"{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}",
		"{\"a\":\"\\ud800\\u0041\"}", "{\"a\":\"abc}", "{\"a\":'x'}",
		"{\"a\":NaN}", "{\"a\":1 2}",
	};
	const uint32_t one[] = { 3 };
	char deep[300];
	char *out;
	size_t len;

	(void)state;
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (front_json_sub_body(bad[i], strlen(bad[i]), one, 1, &A,
					&out, &len) != -EINVAL)
			fail_msg("accepted %s", bad[i]);
	/* nesting (serde: 127 levels at most): the object and 126 arrays
	 * pass, 127 arrays do not */
	for (int d = 126; d <= 127; d++) {
		size_t k = 0;

		k += (size_t)sprintf(deep, "{\"a\":");
		for (int i = 0; i < d; i++)
			deep[k++] = '[';
		for (int i = 0; i < d; i++)
			deep[k++] = ']';
		deep[k++] = '}';
		assert_int_equal(front_json_sub_body(deep, k, one, 1, &A,
						     &out, &len),
				 d == 126 ? 0 : -EINVAL);
		if (d == 126)
			A.free(A.arg, out);
	}
	assert_int_equal(n_alloc, 1);	/* nothing allocated when refused */
	fail_at = n_alloc;
	assert_int_equal(front_json_sub_body("{}", 2, one, 1, &A, &out, &len),
			 -ENOMEM);
}

/* ---- JSON merge ---------------------------------------------------------- */

static void
merge_is(const char *const *ans, unsigned int n, const char *want)
{
	static struct pieces ps[8];
	struct front_gather g[8];
	struct wire_error err;
	unsigned int bad = 99;
	char *out = NULL;
	size_t len = 0;

	memset(g, 0, sizeof(g));
	for (unsigned int i = 0; i < n; i++) {
		pieces_one(&ps[i], (const uint8_t *)ans[i], strlen(ans[i]));
		g[i] = ps[i].g;
	}
	assert_int_equal(front_json_merge(g, n, &A, &out, &len, &err, &bad),
			 0);
	assert_int_equal(len, strlen(want));
	assert_string_equal(out, want);
	A.free(A.arg, out);
	for (unsigned int i = 0; i < n; i++)
		pieces_free(&ps[i]);
}

#define R(L, X) "{\"layer\":" #L ",\"output\":[" #X "],\"seq_len\":1}"

static void
test_json_merge_order(void **state)
{
	/* results arrays and a single-object answer; layer 5 twice: the
	 * first answer's first (stable) */
	const char *ans[] = {
		"{\"latency_ms\":3.1,\"results\":[" R(20, 1.0) "," R(5, 2.0)
		"],\"seq_len\":1}",
		"{\"latency_ms\":7.25,\"layer\":12,\"output\":[3.0],"
		"\"seq_len\":1}",
		"{\"latency_ms\":0.5,\"results\":[" R(5, 4.0) "," R(0, 5.0)
		"," R(5, 6.0) "]}",
	};

	(void)state;
	merge_is(ans, 3, "{\"latency_ms\":7.3,\"results\":[" R(0, 5.0) ","
		 R(5, 2.0) "," R(5, 4.0) "," R(5, 6.0) ","
		 "{\"latency_ms\":7.25,\"layer\":12,\"output\":[3.0],"
		 "\"seq_len\":1}," R(20, 1.0) "]}");
	/* one answer */
	merge_is(ans + 1, 1, "{\"latency_ms\":7.3,\"results\":["
		 "{\"latency_ms\":7.25,\"layer\":12,\"output\":[3.0],"
		 "\"seq_len\":1}]}");
	/* none at all */
	merge_is(NULL, 0, "{\"latency_ms\":0.0,\"results\":[]}");
}

static void
test_json_merge_sort_keys(void **state)
{
	/* as_u64().unwrap_or(0): negative, fraction, exponent, string,
	 * too big, missing and non-object elements sort as 0; the last of
	 * a repeated key counts; the key is compared unescaped */
	const char *ans[] = {
		"{\"results\":[{\"layer\":2},{\"layer\":-1},{\"layer\":1.0},"
		"{\"layer\":1e1},{\"layer\":\"3\"},"
		"{\"layer\":18446744073709551616},{\"x\":1},7,[1],"
		"{\"layer\":18446744073709551615},{\"layer\":9,\"layer\":1},"
		"{\"lay\\u0065r\":4},{\"layer\":0}]}",
	};

	(void)state;
	merge_is(ans, 1, "{\"latency_ms\":0.0,\"results\":["
		 "{\"layer\":-1},{\"layer\":1.0},{\"layer\":1e1},"
		 "{\"layer\":\"3\"},{\"layer\":18446744073709551616},"
		 "{\"x\":1},7,[1],{\"layer\":0},"
		 "{\"layer\":9,\"layer\":1},{\"layer\":2},"
		 "{\"lay\\u0065r\":4},"
		 "{\"layer\":18446744073709551615}]}");
}

static void
test_json_merge_shapes(void **state)
{
	const char *a1[] = {
		/* results not an array: the layer decides, whole object */
		" {\"layer\":4, \"results\":5} \n",
		/* results wins over layer when it is an array */
		"{\"layer\":1,\"results\":[" R(3, 1.0) "]}",
		/* empty results */
		"{\"results\":[],\"latency_ms\":1}",
		/* space inside elements is kept, around them not */
		"{\"results\":[ {\"layer\" : 2} ,\n" R(2, 9.0) " ]}",
	};

	(void)state;
	merge_is(a1, 4, "{\"latency_ms\":1.0,\"results\":["
		 "{\"layer\" : 2}," R(2, 9.0) "," R(3, 1.0) ","
		 "{\"layer\":4, \"results\":5}]}");
}

static void
test_json_merge_latency(void **state)
{
	static const struct {
		const char *lat;
		const char *want;
	} c[] = {
		{ "7.3", "7.3" }, { "7.25", "7.3" }, { "7.24", "7.2" },
		{ "0", "0.0" }, { "0.04", "0.0" }, { "0.05", "0.1" },
		{ "12", "12.0" }, { "1e2", "100.0" }, { "-5", "0.0" },
		{ "123456.789", "123456.8" }, { "2.5e-1", "0.3" },
		{ "\"9\"", "0.0" }, { "null", "0.0" },
	};
	char a[128], w[128];

	(void)state;
	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const char *ans[] = { a };

		snprintf(a, sizeof(a), "{\"latency_ms\":%s,\"results\":[]}",
			 c[i].lat);
		snprintf(w, sizeof(w), "{\"latency_ms\":%s,\"results\":[]}",
			 c[i].want);
		merge_is(ans, 1, w);
	}
	/* the largest of several */
	const char *three[] = {
		"{\"latency_ms\":2.01,\"results\":[]}",
		"{\"results\":[]}",
		"{\"latency_ms\":2.06,\"results\":[]}",
	};

	merge_is(three, 3, "{\"latency_ms\":2.1,\"results\":[]}");
}

static void
test_json_merge_pieces(void **state)
{
	const char *a0 = "{\"latency_ms\":3.1,\"results\":[" R(20, 1.0) ","
			 R(5, 2.0) "],\"seq_len\":1}";
	const char *a1 = "{\"latency_ms\":7.25,\"layer\":12,\"output\":[3.0],"
			 "\"seq_len\":1}";
	const char *want = "{\"latency_ms\":7.3,\"results\":[" R(5, 2.0) ","
			   "{\"latency_ms\":7.25,\"layer\":12,\"output\":[3.0],"
			   "\"seq_len\":1}," R(20, 1.0) "]}";
	static struct pieces ps[2];
	static size_t cuts[512];
	struct front_gather g[2];
	struct wire_error err;
	unsigned int bad;
	size_t l0 = strlen(a0), l1 = strlen(a1);

	(void)state;
	for (size_t k = 0; k <= l0; k++) {
		char *out;
		size_t len;

		/* a0 cut at k, a1 a byte per piece */
		pieces_make(&ps[0], (const uint8_t *)a0, l0, &k, 1);
		for (size_t j = 0; j + 1 < l1; j++)
			cuts[j] = j + 1;
		pieces_make(&ps[1], (const uint8_t *)a1, l1, cuts, l1 - 1);
		g[0] = ps[0].g;
		g[1] = ps[1].g;
		assert_int_equal(front_json_merge(g, 2, &A, &out, &len, &err,
						  &bad), 0);
		assert_string_equal(out, want);
		A.free(A.arg, out);
		pieces_free(&ps[0]);
		pieces_free(&ps[1]);
	}
}

static void
test_json_merge_malformed(void **state)
{
	static const struct {
		const char *a;
		const char *what;
	} c[] = {
		{ "[" R(1, 1.0) "]", "not a JSON object" },
		{ "", "not a JSON object" },
		{ "null", "not a JSON object" },
		{ "{\"results\":[1,]}", "invalid JSON" },
		{ "{\"layer\":1", "invalid JSON" },
		{ "{\"layer\":1} {}", "invalid JSON" },
		{ "{\"latency_ms\":1}", "neither results nor layer" },
		{ "{\"results\":5}", "neither results nor layer" },
		{ "{\"results\":{\"layer\":1}}", "neither results nor layer" },
		{ "{\"Layer\":1}", "neither results nor layer" },
		{ "{\"latency_ms\":1e400,\"layer\":1}", "latency_ms" },
	};
	const char *good = "{\"layer\":1}";
	static struct pieces ps[2];

	(void)state;
	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct front_gather g[2];
		struct wire_error err;
		unsigned int bad = 99;
		char *out = NULL;
		size_t len;

		/* the bad answer second: *bad names it */
		pieces_one(&ps[0], (const uint8_t *)good, strlen(good));
		pieces_one(&ps[1], (const uint8_t *)c[i].a, strlen(c[i].a));
		g[0] = ps[0].g;
		g[1] = ps[1].g;
		assert_int_equal(front_json_merge(g, 2, &A, &out, &len, &err,
						  &bad), -EPROTO);
		assert_int_equal(bad, 1);
		assert_int_equal(err.status, 502);
		assert_memory_equal(err.msg, "malformed answer: ", 18);
		if (strstr(err.msg, c[i].what) == NULL)
			fail_msg("%s: \"%s\"", c[i].a, err.msg);
		assert_null(out);
		assert_int_equal(live, 0);
		pieces_free(&ps[0]);
		pieces_free(&ps[1]);
	}
}

static void
test_json_merge_enomem(void **state)
{
	const char *ans[] = { "{\"layer\":1}", "{\"results\":[" R(0, 1.0) "]}" };
	static struct pieces ps[2];
	struct front_gather g[2];
	struct wire_error err;
	unsigned int bad;
	char *out;
	size_t len;
	const size_t cut = 3;

	(void)state;
	pieces_make(&ps[0], (const uint8_t *)ans[0], strlen(ans[0]), &cut, 1);
	pieces_one(&ps[1], (const uint8_t *)ans[1], strlen(ans[1]));
	g[0] = ps[0].g;
	g[1] = ps[1].g;
	/* each of its allocations failing in turn */
	for (int k = 0; k < 3; k++) {
		n_alloc = 0;
		fail_at = k;
		assert_int_equal(front_json_merge(g, 2, &A, &out, &len, &err,
						  &bad), -ENOMEM);
		assert_int_equal(live, 0);
	}
	n_alloc = 0;
	fail_at = 3;
	assert_int_equal(front_json_merge(g, 2, &A, &out, &len, &err, &bad),
			 0);
	A.free(A.arg, out);
	pieces_free(&ps[0]);
	pieces_free(&ps[1]);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_layout_owner),
		T(test_gather_copy_ranges),
		T(test_alloc_heap),
		T(test_split_spec8_single_one_owner),
		T(test_split_spec8_batch),
		T(test_split_three_owners_dups_interleaved),
		T(test_split_two_owners_one_single),
		T(test_split_unowned_layer),
		T(test_split_k0),
		T(test_split_enomem),
		T(test_merge_spec8_single),
		T(test_merge_spec8_batch),
		T(test_merge_latency_as_f32),
		T(test_merge_format_pairs),
		T(test_merge_mixed_formats),
		T(test_merge_pieces_every_cut),
		T(test_merge_malformed),
		T(test_merge_enomem_and_args),
		T(test_answer_fmt),
		T(test_accept_for),
		T(test_json_plan),
		T(test_json_sub_body),
		T(test_json_sub_body_rejects),
		T(test_json_merge_order),
		T(test_json_merge_sort_keys),
		T(test_json_merge_shapes),
		T(test_json_merge_latency),
		T(test_json_merge_pieces),
		T(test_json_merge_malformed),
		T(test_json_merge_enomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
