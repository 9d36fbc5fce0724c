/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* ffn-loadgen's plain-C parts: the expected-frame checks against
 * spec/wire.md §8's worked frames, the histogram's bucket bounds and
 * percentiles, the open-loop latency accounting against a stalled server
 * (virtual clock), and the expert requests (routing, frames,
 * negotiation: spec/moe.md).
 * The HTTP response parser is lib/http's: tests/http/test_http_rsp.c. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "larql_client.h"
#include "lg_expert.h"
#include "lg_frame.h"
#include "lg_hist.h"
#include "lg_sched.h"

/* Hex with spaces to bytes; returns the length. */
static size_t
unhex(const char *h, uint8_t *out)
{
	size_t n = 0;

	while (*h) {
		unsigned int v;

		if (*h == ' ') {
			h++;
			continue;
		}
		assert_int_equal(sscanf(h, "%2x", &v), 1);
		out[n++] = (uint8_t)v;
		h += 2;
	}
	return n;
}

/* Check a body in two pieces cut at every point; 0 when all agree. */
static int
check_split(const struct lg_frame *f, const uint8_t *b, size_t len)
{
	int verdict = 2;

	for (size_t cut = 0; cut <= len; cut++) {
		uint32_t cur = 0;
		int bad = lg_frame_check(f, &cur, 0, b, cut) |
			  lg_frame_check(f, &cur, cut, b + cut, len - cut);

		assert_int_equal(cur, f->nchk);
		if (verdict == 2)
			verdict = bad;
		assert_int_equal(bad, verdict);
	}
	return verdict;
}

/* Every byte of a known field flipped must fail; latency and values are
 * free. */
static void
expect_frame(const struct lg_frame *f, const char *hex)
{
	uint8_t b[256];
	size_t len = unhex(hex, b);

	assert_int_equal(f->body_len, len);
	assert_int_equal(check_split(f, b, len), 0);
	for (size_t i = 0; i < len; i++) {
		bool known = false;

		for (uint32_t c = 0; c < f->nchk; c++)
			if (i >= f->chk[c].off &&
			    i < f->chk[c].off + f->chk[c].len)
				known = true;
		b[i] ^= 0x40;
		assert_int_equal(check_split(f, b, len), known ? -1 : 0);
		b[i] ^= 0x40;
	}
}

/*
 * spec/moe.md §7: an answer asked in f16 may come in f32 when a value
 * would overflow (the precision guard). lg_frame_pick holds it to the f32
 * frame: the §8 f32 answer passes that frame's checks and not the f16
 * one's (its length alone differs); another Content-Type is no frame.
 */
static void
test_guard_frame(void **state)
{
	const char *f16 = lc_fmt_ctype(LC_F16), *f32 = lc_fmt_ctype(LC_F32);
	uint32_t five = 5, cur = 0;
	struct lg_frame f, g;
	uint8_t b[64];
	size_t len;

	(void)state;
	assert_int_equal(lg_frame_expect(&f, LC_F16, &five, 1, 1, 4), 0);
	assert_int_equal(lg_frame_expect(&g, LC_F32, &five, 1, 1, 4), 0);
	assert_ptr_equal(lg_frame_pick(f16, f16, &f, f32, &g), &f);
	assert_ptr_equal(lg_frame_pick(f32, f16, &f, f32, &g), &g);
	assert_null(lg_frame_pick(f32, f16, &f, NULL, &g));
	assert_null(lg_frame_pick("application/json", f16, &f, f32, &g));
	assert_ptr_equal(lg_frame_pick("text/plain", NULL, &f, NULL, NULL),
			 &f);
	len = unhex("05000000 01000000 9a99e940 0000803e 0000c0bf 0000c842 "
		    "6f1283ba", b);
	assert_int_equal(len, g.body_len);
	assert_true(len != f.body_len);
	assert_int_equal(lg_frame_check(&g, &cur, 0, b, len), 0);
	lg_frame_free(&f);
	lg_frame_free(&g);
}

static void
test_frames_of_spec(void **state)
{
	uint32_t five = 5, both[2] = { 5, 20 };
	struct lg_frame f;

	(void)state;
	/* §8 single responses, hidden 4, layer 5, seq_len 1. */
	assert_int_equal(lg_frame_expect(&f, LC_F32, &five, 1, 1, 4), 0);
	assert_int_equal(f.nchk, 1);
	expect_frame(&f, "05000000 01000000 9a99e940 0000803e 0000c0bf "
		     "0000c842 6f1283ba");
	lg_frame_free(&f);
	assert_int_equal(lg_frame_expect(&f, LC_F16, &five, 1, 1, 4), 0);
	expect_frame(&f, "05000000 01000000 9a99e940 0034 00be 4056 1994");
	lg_frame_free(&f);
	assert_int_equal(lg_frame_expect(&f, LC_I8, &five, 1, 1, 4), 0);
	expect_frame(&f, "05000000 01000000 9a99e940 2693493f 00000000 "
		     "00 fe 7f 00");
	lg_frame_free(&f);
	/* §8 batch responses, hidden 2, layers 5 and 20. */
	assert_int_equal(lg_frame_expect(&f, LC_F32, both, 2, 1, 2), 0);
	assert_int_equal(f.nchk, 3);
	expect_frame(&f, "ffffffff 02000000 9a99e940 "
		     "05000000 01000000 02000000 0000803e 0000c0bf "
		     "14000000 01000000 02000000 0000c842 6f1283ba");
	lg_frame_free(&f);
	assert_int_equal(lg_frame_expect(&f, LC_I8, both, 2, 1, 2), 0);
	expect_frame(&f, "ffffffff 02000000 9a99e940 "
		     "05000000 01000000 02000000 0683413c 00000000 15 81 "
		     "14000000 01000000 02000000 2693493f 00000000 7f 00");
	lg_frame_free(&f);
	/* Zero layers: an empty batch frame (§3 "K = 0 is accepted"). */
	assert_int_equal(lg_frame_expect(&f, LC_F16, NULL, 0, 1, 2), 0);
	expect_frame(&f, "ffffffff 00000000 9a99e940");
	lg_frame_free(&f);
	/* i8 with seq_len 3, hidden 256: three rows of 8 + 256 bytes. */
	assert_int_equal(lg_frame_expect(&f, LC_I8, &five, 1, 3, 256), 0);
	assert_int_equal(f.body_len, 12 + 3 * (8 + 256));
	lg_frame_free(&f);
}

/* Values against a reference answer: another latency_ms and differences
 * within the format's rounding agree; a value off by more does not. */
static int
close_after(int fmt, const char *hex, size_t at, uint8_t val, double *worst)
{
	uint32_t five = 5;
	uint8_t ref[64], b[64];
	struct lg_frame f;
	int rc;

	assert_int_equal(lg_frame_expect(&f, fmt, &five, 1, 1, 4), 0);
	assert_int_equal(unhex(hex, ref), f.body_len);
	memcpy(b, ref, f.body_len);
	b[at] = val;
	rc = lg_frame_values_close(&f, ref, b, worst);
	lg_frame_free(&f);
	return rc;
}

static void
test_reference_answer(void **state)
{
	/* §8: 0.25, -1.5, 100, -0.001; latency_ms 7.3 at bytes 8..11. */
	static const char f32[] = "05000000 01000000 9a99e940 0000803e "
		"0000c0bf 0000c842 6f1283ba";
	static const char f16[] = "05000000 01000000 9a99e940 0034 00be 4056 "
		"1994";
	static const char i8[] = "05000000 01000000 9a99e940 2693493f 00000000 "
		"00 fe 7f 00";
	double w;

	(void)state;
	/* Another latency_ms: the same answer, deviation 0. */
	assert_int_equal(close_after(LC_F32, f32, 8, 0x00, &w), 1);
	assert_true(w == 0);
	/* 0.25 -> 0.25 + 2^-10 (0x3e808000): within 1e-5 * 100. */
	assert_int_equal(close_after(LC_F32, f32, 13, 0x80, &w), 1);
	assert_true(w > 9.7e-6 && w < 9.8e-6);
	/* 0.25 -> 0.375 (0x3ec00000): a different value. */
	assert_int_equal(close_after(LC_F32, f32, 14, 0xc0, &w), 0);
	/* -1.5 -> +1.5: the sign. */
	assert_int_equal(close_after(LC_F32, f32, 19, 0x3f, &w), 0);
	/* f16 100 (0x5640) -> one step up (0x5641) agrees; two do not. */
	assert_int_equal(close_after(LC_F16, f16, 16, 0x41, &w), 1);
	assert_int_equal(close_after(LC_F16, f16, 16, 0x42, &w), 0);
	/* i8: 127 -> 126 (one step of the row's scale) agrees; -2 -> 1
	 * (three steps) does not. */
	assert_int_equal(close_after(LC_I8, i8, 22, 0x7e, &w), 1);
	assert_int_equal(close_after(LC_I8, i8, 21, 0x01, &w), 0);
}

static void
test_hist_buckets(void **state)
{
	(void)state;
	/* Exact below 2^SUB_BITS; every bucket's range contiguous; the
	 * relative width at most 1/HALF. */
	for (uint64_t v = 0; v < LG_HIST_SUB; v++)
		assert_int_equal(lg_hist_bucket_high(lg_hist_index(v)), v);
	for (unsigned int i = 1; i < LG_HIST_BUCKETS; i++) {
		uint64_t lo = lg_hist_bucket_high(i - 1) + 1;
		uint64_t hi = lg_hist_bucket_high(i);

		assert_int_equal(lg_hist_index(lo), i);
		assert_int_equal(lg_hist_index(hi), i);
		assert_true((double)(hi - lo) <= (double)lo / LG_HIST_HALF);
	}
	assert_int_equal(lg_hist_index(UINT64_MAX), LG_HIST_BUCKETS - 1);
}

static void
test_hist_percentiles(void **state)
{
	static struct lg_hist h, h2;

	(void)state;
	lg_hist_reset(&h);
	assert_int_equal(lg_hist_pct(&h, 50), 0);
	/* 1..100000 us in ns: p50 = 50000 us, p99 = 99000 us, within 0.8%. */
	for (uint64_t i = 1; i <= 100000; i++)
		lg_hist_record(&h, i * 1000);
	assert_int_equal(h.count, 100000);
	assert_int_equal(h.min, 1000);
	assert_int_equal(h.max, 100000000);
	assert_true(lg_hist_pct(&h, 50) >= 50000000ull);
	assert_true(lg_hist_pct(&h, 50) <= 50000000ull * 1008 / 1000);
	assert_true(lg_hist_pct(&h, 99) >= 99000000ull);
	assert_true(lg_hist_pct(&h, 99) <= 99000000ull * 1008 / 1000);
	assert_int_equal(lg_hist_pct(&h, 100), 100000000ull);
	/* Merge doubles counts and keeps percentiles. */
	lg_hist_reset(&h2);
	lg_hist_merge(&h2, &h);
	lg_hist_merge(&h2, &h);
	assert_int_equal(h2.count, 200000);
	assert_int_equal(lg_hist_pct(&h2, 50), lg_hist_pct(&h, 50));
	/* One outlier owns p99.99 and max. */
	lg_hist_reset(&h);
	for (int i = 0; i < 9999; i++)
		lg_hist_record(&h, 100);
	lg_hist_record(&h, 5000000);
	assert_int_equal(lg_hist_pct(&h, 99.9), 100);
	assert_int_equal(lg_hist_pct(&h, 100), 5000000);
}

/* The progress line's second: what two lcores recorded since the last
 * snapshot of their merged histograms, and nothing recorded before. */
static void
test_hist_since(void **state)
{
	static struct lg_hist a, b, m0, m1, d;

	(void)state;
	lg_hist_reset(&a);
	lg_hist_reset(&b);
	for (int i = 0; i < 1000; i++)
		lg_hist_record(&a, 1000000);	/* 1 ms, before */
	lg_hist_reset(&m0);
	lg_hist_merge(&m0, &a);
	lg_hist_merge(&m0, &b);
	for (int i = 0; i < 300; i++)
		lg_hist_record(&a, 200);
	for (int i = 0; i < 700; i++)
		lg_hist_record(&b, 100);
	lg_hist_reset(&m1);
	lg_hist_merge(&m1, &a);
	lg_hist_merge(&m1, &b);
	lg_hist_since(&d, &m1, &m0);
	assert_int_equal(d.count, 1000);
	assert_int_equal(d.sum, 300 * 200 + 700 * 100);
	assert_int_equal(lg_hist_pct(&d, 50), 100);
	assert_int_equal(lg_hist_pct(&d, 99), 200);
	/* Nothing since: empty. */
	lg_hist_since(&d, &m1, &m1);
	assert_int_equal(d.count, 0);
	assert_int_equal(lg_hist_pct(&d, 50), 0);
}

/*
 * Open loop, coordinated omission: one lcore's schedule of 1000 tokens/s
 * (one due every SIM_PERIOD), 4 clients, 2 fan-out steps per token, driven
 * through lg_sched/lg_origin exactly as lg_run.c and lg_conn.c drive them,
 * on a virtual clock.  The server answers SIM_SVC after a request arrives,
 * except that it stalls over [SIM_STALL_A, SIM_STALL_B): what it would
 * have answered then is answered at SIM_STALL_B.  During the stall the 4
 * clients are soon all waiting and later tokens fall due with no client to
 * send them; they go out after the stall.  Their latency must still run
 * from their schedule: every token (and its first request) scheduled in
 * the stall shows the rest of the stall, not only the 4 on the wire.
 */
#define SIM_PERIOD 1000000ull		/* 1 ms: 1000 tokens/s */
#define SIM_SVC 100000ull		/* 100 us per request */
#define SIM_STALL_A 10500000ull
#define SIM_STALL_B 30500000ull
#define SIM_END 60000000ull
#define SIM_TICK 10000ull		/* the poll loop's clock step */
#define SIM_CLIENTS 4
#define SIM_STEPS 2
#define SIM_TOKENS (SIM_END / SIM_PERIOD + 1)

struct sim_client {
	struct lg_origin orig;
	unsigned int step, tok;
	uint64_t sent_origin;	/* the outstanding request's (k->sched_ns) */
	uint64_t answer_at;
};

static uint64_t
sim_answer(uint64_t sent)
{
	uint64_t t = sent + SIM_SVC;

	return t >= SIM_STALL_A && t < SIM_STALL_B ? SIM_STALL_B : t;
}

static void
sim_send(struct sim_client *c, uint64_t now)
{
	c->sent_origin = lg_origin_sent(&c->orig, now);
	c->answer_at = sim_answer(now);
}

static void
test_open_loop_stall(void **state)
{
	static uint64_t tok_lat[SIM_TOKENS], req0_lat[SIM_TOKENS];
	static struct lg_hist req_h, tok_h;
	struct sim_client cl[SIM_CLIENTS];
	unsigned int idle[SIM_CLIENTS], nidle = 0, i, t, stalled = 0;
	struct lg_sched s;
	uint64_t now, due;

	(void)state;
	memset(cl, 0, sizeof(cl));
	memset(tok_lat, 0, sizeof(tok_lat));
	lg_hist_reset(&req_h);
	lg_hist_reset(&tok_h);
	for (i = 0; i < SIM_CLIENTS; i++)
		idle[nidle++] = i;
	lg_sched_init(&s, 0, 1e9 / SIM_PERIOD, 0, 1);
	for (now = 0; now <= SIM_END; now += SIM_TICK) {
		/* Answers (conn_response). */
		for (i = 0; i < SIM_CLIENTS; i++) {
			struct sim_client *c = &cl[i];
			uint64_t lat;

			if (c->answer_at == 0 || c->answer_at > now)
				continue;
			c->answer_at = 0;
			lat = lg_latency(c->sent_origin, now);
			lg_hist_record(&req_h, lat);
			if (c->step == 0)
				req0_lat[c->tok] = lat;
			if (++c->step < SIM_STEPS) {
				lg_origin_next_step(&c->orig, now);
				sim_send(c, now);
				continue;
			}
			tok_lat[c->tok] = lg_latency(c->orig.tok, now);
			lg_hist_record(&tok_h, tok_lat[c->tok]);
			idle[nidle++] = i;
		}
		/* Due tokens start on free clients (worker_run). */
		while (nidle > 0 && lg_sched_take(&s, now, &due)) {
			struct sim_client *c = &cl[idle[--nidle]];

			assert_true(due <= now);
			assert_int_equal(due % SIM_PERIOD, 0);
			lg_origin_token(&c->orig, due);
			c->step = 0;
			c->tok = (unsigned int)(due / SIM_PERIOD);
			sim_send(c, now);
		}
		/* Mid-stall: tokens 11-14 hold the 4 clients, 15-25 wait. */
		if (now == 25000000ull)
			assert_int_equal(lg_sched_backlog(&s, now), 11);
	}
	for (t = 0; t < SIM_TOKENS; t++) {
		uint64_t due_t = (uint64_t)t * SIM_PERIOD;

		if (due_t + SIM_STEPS * SIM_SVC <= SIM_STALL_A) {
			/* Before the stall: just the two answers. */
			assert_int_equal(tok_lat[t], SIM_STEPS * SIM_SVC);
			assert_int_equal(req0_lat[t], SIM_SVC);
		} else if (due_t >= SIM_STALL_A && due_t < SIM_STALL_B) {
			/* Scheduled in the stall: waited for the rest of it,
			 * whether it was on the wire or still due. */
			assert_true(req0_lat[t] >= SIM_STALL_B - due_t);
			assert_true(tok_lat[t] >= SIM_STALL_B - due_t +
					(SIM_STEPS - 1) * SIM_SVC);
			stalled++;
		}
	}
	assert_int_equal(stalled, 20);		/* tokens 11..30 */
	/* The histograms hold it too: 20 of the tokens took > 1 ms, the
	 * worst (token 11) the stall's 19.5 ms plus its answers. */
	assert_true(tok_h.max >= SIM_STALL_B - 11 * SIM_PERIOD);
	assert_true(tok_h.count >= 55 && tok_h.count <= SIM_TOKENS);
	assert_true(lg_hist_pct(&tok_h, 100.0 * (tok_h.count - 20.5) /
				tok_h.count) <= SIM_PERIOD);
	assert_true(lg_hist_pct(&tok_h, 100.0 * (tok_h.count - 19.5) /
				tok_h.count) > SIM_PERIOD);
	assert_int_equal(req_h.count, SIM_STEPS * tok_h.count);
}

/* The schedule itself: lcores interleave; closed loop is never due. */
static void
test_sched(void **state)
{
	struct lg_sched s;
	uint64_t due = 0;

	(void)state;
	lg_sched_init(&s, 1000, 1000.0, 1, 4);	/* 1 ms period, 1/4 late */
	assert_false(lg_sched_take(&s, 1000 + 249999, &due));
	assert_int_equal(lg_sched_backlog(&s, 1000 + 249999), 0);
	assert_true(lg_sched_take(&s, 5000000, &due));
	assert_int_equal(due, 251000);		/* its schedule, not now */
	assert_int_equal(lg_sched_backlog(&s, 5000000), 4);
	lg_sched_init(&s, 1000, 0, 0, 1);
	assert_false(lg_sched_take(&s, ~0ull, &due));
	assert_int_equal(lg_sched_backlog(&s, ~0ull), 0);
}

static uint32_t
get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Routing as a client does it (spec/moe.md §1-§2): owned ids only, in
 * top-k order, weights summing to 1; the same (seed, index) gives the
 * same request, another index another one. */
static void
test_expert_routing(void **state)
{
	struct lg_expert_spec sp = {
		.route = LG_XR_LAYER, .hidden = 16, .layer = 3,
		.num_experts = 32, .first = 8, .last = 15, .top_k = 4,
		.seed = 5, .index = 0,
	};
	uint32_t ids[LG_EXPERT_MAX_K], ids2[LG_EXPERT_MAX_K], k, k2;
	float w[LG_EXPERT_MAX_K], w2[LG_EXPERT_MAX_K], x[16], x2[16];
	uint8_t *b, *b2;
	ssize_t bl, bl2;
	double sum = 0;

	(void)state;
	assert_int_equal(lg_expert_owned(&sp), 8);
	assert_int_equal(lg_expert_draw(&sp, x, ids, w, &k), 0);
	assert_int_equal(k, 4);
	for (uint32_t j = 0; j < k; j++) {
		assert_true(ids[j] >= 8 && ids[j] <= 15);
		assert_true(w[j] > 0);
		assert_true(j == 0 || w[j] <= w[j - 1]);
		for (uint32_t i = 0; i < j; i++)
			assert_int_not_equal(ids[i], ids[j]);
		sum += w[j];
	}
	assert_true(sum > 1 - 1e-6 && sum < 1 + 1e-6);
	for (uint32_t i = 0; i < 16; i++)
		assert_true(x[i] >= -1 && x[i] < 1);
	assert_int_equal(lg_expert_draw(&sp, x2, ids2, w2, &k2), 0);
	assert_memory_equal(x, x2, sizeof(x));
	assert_memory_equal(ids, ids2, k * sizeof(*ids));
	sp.index = 1;
	assert_int_equal(lg_expert_draw(&sp, x2, ids2, w2, &k2), 0);
	assert_true(memcmp(x, x2, sizeof(x)) != 0);
	/* top_k above the owned: all of them */
	sp.top_k = 20;
	assert_int_equal(lg_expert_draw(&sp, NULL, ids2, w2, &k2), 0);
	assert_int_equal(k2, 8);
	sp.first = 40;
	sp.last = 50;
	assert_int_equal(lg_expert_draw(&sp, NULL, ids2, w2, &k2), -EINVAL);

	/* §3.2 and §3.3 bodies: the header, then x, then the pairs */
	sp.first = 8;
	sp.last = 15;
	sp.top_k = 4;
	sp.index = 0;
	bl = lg_expert_body(&sp, &b);
	assert_int_equal(bl, 12 + 4 * 16 + 8 * 4);
	assert_int_equal(get_u32(b), 3);
	assert_int_equal(get_u32(b + 4), 16);
	assert_int_equal(get_u32(b + 8), 4);
	assert_memory_equal(b + 12, x, sizeof(x));
	for (uint32_t j = 0; j < 4; j++) {
		uint32_t wb;

		memcpy(&wb, &w[j], 4);
		assert_int_equal(get_u32(b + 76 + 8 * j), ids[j]);
		assert_int_equal(get_u32(b + 80 + 8 * j), wb);
	}
	sp.route = LG_XR_LAYER_F16;
	bl2 = lg_expert_body(&sp, &b2);
	assert_int_equal(bl2, 12 + 2 * 16 + 8 * 4);
	assert_memory_equal(b2 + 44, b + 76, 32);
	free(b2);
	sp.route = LG_XR_LAYER_I8;
	bl2 = lg_expert_body(&sp, &b2);
	assert_int_equal(bl2, 12 + 8 + 16 + 8 * 4);
	free(b2);
	free(b);
}

/* §7 negotiation as predicted, and the answer frame with its check. */
static void
test_expert_answers(void **state)
{
	static const uint8_t ans[] = {	/* §6's layer-batch response */
		0x04, 0, 0, 0, 0, 0, 0xc0, 0x3f,
		0xf0, 0x8d, 0xc6, 0x3f, 0x40, 0xda, 0x8e, 0x3e,
		0xf4, 0x00, 0xed, 0x3f, 0x80, 0x56, 0xe0, 0xbe,
	};
	uint8_t other[sizeof(ans)];
	struct lg_frame f;
	uint32_t cur = 0;
	float v;

	(void)state;
	assert_int_equal(lg_expert_route_parse("layer-batch-f16"),
			 LG_XR_LAYER_F16);
	assert_int_equal(lg_expert_route_parse("layer"), -EINVAL);
	assert_int_equal(lg_expert_answer_fmt(LG_XR_LAYER, LC_F32), LC_F32);
	assert_int_equal(lg_expert_answer_fmt(LG_XR_LAYER, LC_F16), LC_F16);
	assert_int_equal(lg_expert_answer_fmt(LG_XR_LAYER, LC_I8), LC_I8);
	/* the -f16 route's own format is f16: f32 cannot be asked for */
	assert_int_equal(lg_expert_answer_fmt(LG_XR_LAYER_F16, LC_F32),
			 LC_F16);
	assert_int_equal(lg_expert_answer_fmt(LG_XR_LAYER_I8, LC_F32), LC_I8);
	assert_string_equal(lg_expert_answer_ctype(LC_F16),
			    "application/x-larql-experts-layer-f16");
	assert_string_equal(lg_expert_req_ctype(LG_XR_LAYER),
			    "application/x-larql-experts-layer");

	assert_int_equal(lg_expert_frame_expect(&f, LC_F32, 4), 0);
	assert_int_equal(f.body_len, sizeof(ans));
	assert_int_equal(lg_frame_check(&f, &cur, 0, ans, sizeof(ans)), 0);
	cur = 0;
	memcpy(other, ans, sizeof(ans));
	other[0] = 5;
	assert_int_equal(lg_frame_check(&f, &cur, 0, other, sizeof(ans)), -1);
	/* the values: within 1e-5 of the largest agree, beyond do not */
	memcpy(other, ans, sizeof(ans));
	memcpy(&v, other + 12, 4);
	v += 1e-6f;
	memcpy(other + 12, &v, 4);
	assert_int_equal(lg_frame_values_close(&f, ans, other, NULL), 1);
	v += 1e-3f;
	memcpy(other + 12, &v, 4);
	assert_int_equal(lg_frame_values_close(&f, ans, other, NULL), 0);
	lg_frame_free(&f);
	assert_int_equal(lg_expert_frame_expect(&f, LC_I8, 4), 0);
	assert_int_equal(f.body_len, 8 + 8 + 4);
	lg_frame_free(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_of_spec),
		cmocka_unit_test(test_guard_frame),
		cmocka_unit_test(test_reference_answer),
		cmocka_unit_test(test_hist_buckets),
		cmocka_unit_test(test_hist_percentiles),
		cmocka_unit_test(test_hist_since),
		cmocka_unit_test(test_sched),
		cmocka_unit_test(test_open_loop_stall),
		cmocka_unit_test(test_expert_routing),
		cmocka_unit_test(test_expert_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
