/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The layer-batch and multi-layer expert routes computed together
 * (issue 23, spec/moe.md §1, §3, §4, §7): shard_handle_many() against
 * shard_handle() of each request alone, bad requests interleaved with
 * good ones, the expert counters, and the f16 precision guard.
 *
 * The model: a hybrid-MoE vindex written by tools/mkvindex's
 * vw_write_moe, H 512 (so the Q8_K route serves it and Q4_K experts run
 * on kquant), 8 experts of width 300 in 2 layers, the unit owning
 * experts 0-5 (--experts 0-5).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <float.h>
#include <math.h>

#include <cmocka.h>

#include "shard_test_util.h"
#include "shard_moe_util.h"
#include "vindex_write_moe.h"

struct env {
	char dir[64];
	struct shard_unit on;	/* i8 on, f16 guard on */
	struct shard_unit off;	/* i8 off, f16 guard off */
};

static int
unit_init(struct shard_unit *u, const char *dir, bool i8, bool guard)
{
	struct shard_unit_conf c;
	struct ffn_moe_own own;
	char err[256];
	int rc;

	if (ffn_moe_own_range(&own, "0-5", err, sizeof(err)) < 0)
		return -1;
	memset(&c, 0, sizeof(c));
	c.name = "experts";
	c.model_dir = dir;
	c.first_layer = c.last_layer = -1;
	c.numa_node = -1;
	wire_opts_default(&c.wire);
	c.wire.i8 = i8;
	c.experts = &own;
	c.f16_guard = guard;
	rc = shard_unit_init(u, &c, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "shard_unit_init %s: %s\n", dir, err);
	return rc;
}

static int
setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	struct vw_q4k_opts q = { FFN_KQ_Q6_PRIVATE, 0 };
	struct vw_moe_opts m = {
		.experts = NE, .width = 300, .top_k = 2, .tag = VW_LYRW_Q4K,
		.first = 0, .last = 1, .no_dense = 0,
	};
	struct vw_opts o;
	char err[256];

	if (e == NULL)
		return -1;
	snprintf(e->dir, sizeof(e->dir), "/tmp/shard_experts_XXXXXX");
	if (mkdtemp(e->dir) == NULL)
		return -1;
	vw_defaults(&o);
	o.hidden = H;
	o.layers = 2;
	o.intermediate = 256;
	o.family = o.model_type = "gemma4";
	o.seed = 23;
	if (vw_write_moe(e->dir, &o, &q, &m, err, sizeof(err)) != 0) {
		fprintf(stderr, "vw_write_moe %s: %s\n", e->dir, err);
		return -1;
	}
	if (unit_init(&e->on, e->dir, true, true) < 0 ||
	    unit_init(&e->off, e->dir, false, false) < 0)
		return -1;
	*state = e;
	return 0;
}

static int
teardown(void **state)
{
	struct env *e = *state;

	shard_unit_fini(&e->on);
	shard_unit_fini(&e->off);
	st_rmtree(e->dir);
	free(e);
	return 0;
}

/* Every request alone (a[i]) and all together (b[i]). */
static void
run_both(struct shard_unit *u, const struct set *s, struct shard_resp *a,
	 struct shard_resp *b)
{
	struct shard_http_req rq[MAXQ];
	const struct shard_http_req *prq[MAXQ];
	struct shard_resp *pb[MAXQ];

	for (unsigned int i = 0; i < s->n; i++) {
		st_req(&rq[i], s->q[i].method, s->q[i].path, s->q[i].ct,
		       s->q[i].accept, NULL, s->q[i].body, s->q[i].len);
		prq[i] = &rq[i];
		pb[i] = &b[i];
		if (a != NULL)
			shard_handle(u, &rq[i], &a[i], &shard_mem_heap, NULL,
				     0);
	}
	shard_handle_many(u, prq, pb, s->n, &shard_mem_heap, NULL, 0);
}

static void
release_all(struct shard_resp *r, unsigned int n)
{
	while (n-- > 0)
		shard_resp_release(&r[n]);
}

/* ---- comparing answers ---- */

/* The largest difference seen, in f32 ulps of the row's max. */
static double worst_ulps;

/* The answer format a Content-Type names: 16 (f16), 8 (i8) or 32. */
static int
fmt_of(const char *ct)
{
	size_t L = strlen(ct);

	if (L > 4 && strcmp(ct + L - 4, "-f16") == 0)
		return 16;
	return L > 3 && strcmp(ct + L - 3, "-i8") == 0 ? 8 : 32;
}

static int
f16_key(uint16_t h)
{
	return h & 0x8000 ? -(int)(h & 0x7fff) : (int)(h & 0x7fff);
}

/* n values of format ct (f32, f16 or i8) at a and b: within a few f32
 * ulps of the row's max, or one step of f16 / i8. */
static void
vec_close(const char *what, const char *ct, const uint8_t *a,
	  const uint8_t *b, uint32_t n)
{
	if (fmt_of(ct) == 16) {
		for (uint32_t i = 0; i < n; i++) {
			uint16_t x, y;

			memcpy(&x, a + 2 * i, 2);
			memcpy(&y, b + 2 * i, 2);
			if (abs(f16_key(x) - f16_key(y)) > 1)
				fail_msg("%s: f16 value %u: %04x vs %04x",
					 what, i, x, y);
		}
	} else if (fmt_of(ct) == 8) {
		float sa = st_getf(a), sb = st_getf(b);
		float step = fmaxf(sa, sb) * 1.0001f;

		if (n == 0)
			return;
		assert_true(fabsf(sa - sb) <= 1e-5f * fmaxf(sa, sb));
		for (uint32_t i = 0; i < n; i++) {
			float va = (int8_t)a[8 + i] * sa + st_getf(a + 4);
			float vb = (int8_t)b[8 + i] * sb + st_getf(b + 4);

			if (fabsf(va - vb) > step)
				fail_msg("%s: i8 value %u: %g vs %g (step %g)",
					 what, i, va, vb, step);
		}
	} else {
		float mx = 0.0f, tol;

		for (uint32_t i = 0; i < n; i++)
			mx = fmaxf(mx, fabsf(st_getf(a + 4 * i)));
		tol = 16.0f * FLT_EPSILON * mx;
		for (uint32_t i = 0; i < n; i++) {
			float d = fabsf(st_getf(a + 4 * i) - st_getf(b + 4 * i));

			if (mx > 0)
				worst_ulps = fmax(worst_ulps,
						  d / (FLT_EPSILON * mx));
			if (!(d <= tol))
				fail_msg("%s: f32 value %u: %.9g vs %.9g "
					 "(row max %g)", what, i,
					 st_getf(a + 4 * i),
					 st_getf(b + 4 * i), mx);
		}
	}
}

/* Bytes of one vector of n values in the format ct names. */
static size_t
vec_bytes(const char *ct, uint32_t n)
{
	if (fmt_of(ct) == 8)
		return n ? 8 + (size_t)n : 0;
	return (size_t)fmt_of(ct) / 8 * n;
}

/* Two answers to the same request: same status, type and length; the
 * same body (expert answers: frames equal, values close; latency
 * skipped). exact: values bit for bit. */
static void
same_answer(unsigned int i, const struct q *r, const struct shard_resp *a,
	    const struct shard_resp *b, bool exact)
{
	uint8_t *fa = st_flat(a), *fb = st_flat(b);
	char what[96];
	bool layer = strncmp(r->path, "/v1/experts/layer", 17) == 0;
	bool multi = strncmp(r->path, "/v1/experts/multi", 17) == 0;

	snprintf(what, sizeof(what), "request %u (%s)", i, r->path);
	assert_non_null(fa);
	assert_non_null(fb);
	if (a->status != b->status)
		fail_msg("%s: status %d alone, %d batched", what, a->status,
			 b->status);
	if ((a->content_type == NULL) != (b->content_type == NULL) ||
	    (a->content_type && strcmp(a->content_type, b->content_type)))
		fail_msg("%s: type %s alone, %s batched", what,
			 a->content_type ? a->content_type : "-",
			 b->content_type ? b->content_type : "-");
	if (a->status == 200 && !layer && !multi) {
		/* walk-ffn, health: latency and counters in their bodies */
		goto out;
	}
	if (a->len != b->len)
		fail_msg("%s: %zu bytes alone, %zu batched", what, a->len,
			 b->len);
	if (a->status != 200) {
		assert_memory_equal(fa, fb, a->len);
	} else if (layer) {
		uint32_t n = st_get32(fa);

		assert_int_equal(st_get32(fb), n);
		assert_int_equal(a->len, 8 + vec_bytes(a->content_type, n));
		if (exact)
			assert_memory_equal(fa + 8, fb + 8, a->len - 8);
		else
			vec_close(what, a->content_type, fa + 8, fb + 8, n);
	} else {
		uint32_t n = st_get32(fa);
		size_t at = 4;

		assert_int_equal(st_get32(fb), n);
		for (uint32_t t = 0; t < n; t++) {
			uint32_t h = st_get32(fa + at + 4);
			size_t vb = vec_bytes(a->content_type, h);

			assert_true(at + 8 + vb <= a->len);
			assert_memory_equal(fa + at, fb + at, 8);
			if (exact)
				assert_memory_equal(fa + at + 8, fb + at + 8,
						    vb);
			else
				vec_close(what, a->content_type, fa + at + 8,
					  fb + at + 8, h);
			at += 8 + vb;
		}
		assert_int_equal(at, a->len);
	}
out:
	free(fa);
	free(fb);
}

/* The good requests of the tests: every input kind, Accept f16 and i8,
 * several tasks per multi-layer call (ne = 0, repeated layers, a zero
 * weight on an expert not held), duplicate pairs, zero weights. */
static void
good_requests(struct set *s, bool i8)
{
	static const uint32_t e1[] = { 1, 3, 5 }, e2[] = { 3, 1, 7, 2 };
	static const float w1[] = { 0.6f, 0.3f, 0.1f };
	static const float w2[] = { 0.5f, 0.25f, -0.0f, 0.25f };
	static const uint32_t e3[] = { 0, 4 }, e4[] = { 1, 1 };
	static const float w3[] = { 0.7f, 0.3f }, w4[] = { 0.5f, 0.5f };
	static const uint32_t e5[] = { 2, 5 }, ez[] = { 6, 1 };
	static const float w5[] = { 1.0f, -0.5f }, wz[] = { 0.0f, 0.0f };
	const struct task t1[] = {
		{ 0, H, 11, 2, { 1, 2 }, { 0.4f, 0.6f } },
		{ 1, H, 12, 0, { 0 }, { 0 } },
		{ 0, H, 13, 3, { 3, 3, 7 }, { 0.2f, 0.3f, 0.0f } },
		{ 0, H, 14, 1, { 0 }, { 1.0f } },
	};
	const struct task t2[] = {
		{ 1, H, 15, 2, { 5, 4 }, { 0.9f, 0.1f } },
		{ 1, H, 16, 2, { 4, 5 }, { 0.1f, 0.9f } },
	};
	const struct task t3[] = {
		{ 0, H, 17, 2, { 1, 2 }, { 0.5f, 0.5f } },
		{ 1, H, 18, 3, { 2, 0, 2 }, { 0.3f, 0.3f, 0.4f } },
		{ 0, H, 19, 1, { 1 }, { -1.0f } },
	};

	lb(s, IN_F32, NULL, 0, H, 1, 3, e1, w1);
	lb(s, IN_F32, T_LB16, 0, H, 2, 4, e2, w2);
	lb(s, IN_F16, NULL, 1, H, 3, 2, e3, w3);
	if (i8)
		lb(s, IN_I8, NULL, 0, H, 4, 2, e4, w4);
	lb(s, IN_F32, i8 ? T_LB8 : T_LB16, 1, H, 5, 2, e5, w5);
	ml(s, false, NULL, t1, 4);
	ml(s, false, T_ML16, t2, 2);
	ml(s, true, i8 ? T_ML8 : NULL, t3, 3);
	ml(s, true, NULL, t3, 3);
	lb(s, IN_F32, NULL, 1, H, 6, 2, ez, wz);	/* zeros, 6 unheld */
	lb(s, IN_F32, NULL, 1, H, 7, 0, NULL, NULL);	/* K = 0 */
	lb(s, IN_F32, NULL, 0, 0, 8, 1, e1, w1);	/* hidden 0 */
	ml(s, false, NULL, NULL, 0);			/* n = 0 */
	lb(s, IN_F32, NULL, 0, H, 1, 3, e1, w1);	/* = the first */
}

/* batched == alone, for every route, input and answer format */
static void
test_batched_equals_alone(void **state)
{
	struct env *e = *state;
	struct shard_resp a[MAXQ], b[MAXQ];
	struct set s = { .n = 0 };

	good_requests(&s, true);
	run_both(&e->on, &s, a, b);
	for (unsigned int i = 0; i < s.n; i++) {
		assert_int_equal(a[i].status, 200);
		same_answer(i, &s.q[i], &a[i], &b[i], false);
	}
	/* the answers the rules fix (§4, §7) */
	assert_string_equal(b[0].content_type, T_LB);
	assert_string_equal(b[1].content_type, T_LB16);
	assert_int_equal(b[1].len, 8 + 2 * H);
	assert_string_equal(b[2].content_type, T_LB16);
	assert_string_equal(b[3].content_type, T_LB8);
	assert_string_equal(b[4].content_type, T_LB8);
	assert_string_equal(b[5].content_type, T_ML);
	assert_string_equal(b[6].content_type, T_ML16);
	assert_string_equal(b[7].content_type, T_ML8);
	assert_string_equal(b[8].content_type, T_ML);
	for (unsigned int i = 9; i <= 10; i++) {	/* H zeros */
		uint8_t *f = st_flat(&b[i]);
		uint8_t z[4 * H] = { 0 };

		assert_int_equal(b[i].len, 8 + 4 * H);
		assert_memory_equal(f + 8, z, 4 * H);
		free(f);
	}
	assert_int_equal(b[11].len, 8);
	assert_int_equal(b[12].len, 4);
	/* the same request twice in one batch: the same rows */
	same_answer(13, &s.q[0], &b[0], &b[13], true);
	print_message("batched vs alone: worst f32 difference %.2f ulps "
		      "of the row max\n", worst_ulps);
	release_all(a, s.n);
	release_all(b, s.n);
	set_free(&s);
}

/* The bad requests: exactly their own error, whatever is around them. */
struct bad {
	unsigned int at;	/* index in the set */
	int status;
	const char *msg;	/* {"error":msg}; NULL: not checked */
};

static void
test_isolation(void **state)
{
	static const uint32_t e6[] = { 6 }, e1[] = { 1 };
	static const float w1[] = { 0.5f };
	const struct task tbad[] = {
		{ 0, H, 31, 1, { 1 }, { 1.0f } },
		{ 2, H, 32, 1, { 0 }, { 1.0f } },	/* no layer 2 */
	};
	const struct task tq[] = { { 0, 300, 33, 1, { 1 }, { 1.0f } } };
	struct env *e = *state;
	struct shard_resp a[MAXQ], b[MAXQ], g[MAXQ];
	struct set s = { .n = 0 }, good = { .n = 0 };
	struct bad bad[16];
	unsigned int nbad = 0, ngood, gi;
	struct q *r;
	char want[256];

	/* the good ones alone, in one batch of their own */
	good_requests(&good, false);
	run_both(&e->off, &good, NULL, g);
	ngood = good.n;

	/* the same good ones with bad ones between them */
	for (gi = 0; gi < ngood; gi++) {
		struct q *d = newq(&s, good.q[gi].method, good.q[gi].path,
				   good.q[gi].ct, good.q[gi].accept);

		put(d, good.q[gi].body, good.q[gi].len);
		switch (gi) {
		case 0:
			r = lb(&s, IN_F32, NULL, 0, H, 21, 1, e1, w1);
			r->len = 12 + 4 * H + 4;	/* pair cut */
			bad[nbad++] = (struct bad){ s.n - 1, 400,
				"layer-batch request truncated" };
			break;
		case 1:
			lb(&s, IN_F32, NULL, 0, H, 22, 1, e6, w1);
			bad[nbad++] = (struct bad){ s.n - 1, 400,
				"expert 6 of layer 0 is not held by this shard" };
			break;
		case 2:
			lb(&s, IN_F32, NULL, 0, 256, 23, 1, e1, w1);
			bad[nbad++] = (struct bad){ s.n - 1, 400,
				"residual length 256 != hidden_size 512" };
			break;
		case 3:
			lb(&s, IN_I8, NULL, 0, H, 24, 1, e1, w1);
			bad[nbad++] = (struct bad){ s.n - 1, 400,
				"i8 expert wire is not enabled on this shard" };
			break;
		case 4:
			ml(&s, true, NULL, tq, 1);
			bad[nbad++] = (struct bad){ s.n - 1, 400,
				"q8k activation needs hidden_size divisible "
				"by 256 (got 300)" };
			break;
		case 5:
			r = newq(&s, HTTP_M_POST, "/v1/walk-ffn",
				 "application/x-larql-ffn", NULL);
			put32(r, 1);		/* layer */
			put32(r, 1);		/* seq_len */
			put32(r, 1);		/* flags: full output */
			put32(r, 8092);		/* top_k */
			put_input(r, IN_F32, H, 25);
			bad[nbad++] = (struct bad){ s.n - 1, 200, NULL };
			break;
		case 6:
			newq(&s, HTTP_M_GET, "/v1/health", NULL, NULL);
			bad[nbad++] = (struct bad){ s.n - 1, 200, NULL };
			ml(&s, false, NULL, tbad, 2);
			bad[nbad++] = (struct bad){ s.n - 1, 400,
				"expert 0 of layer 2 is not held by this shard" };
			break;
		case 7:
			r = newq(&s, HTTP_M_POST, P_ML, T_ML, NULL);
			put32(r, 1000);
			bad[nbad++] = (struct bad){ s.n - 1, 400,
				"multi-layer-batch request truncated" };
			r = newq(&s, HTTP_M_GET, P_LB, NULL, NULL);
			bad[nbad++] = (struct bad){ s.n - 1, 405, NULL };
			break;
		}
	}
	run_both(&e->off, &s, a, b);
	/* each bad one: its own error, alone and among the others */
	for (unsigned int k = 0; k < nbad; k++) {
		unsigned int i = bad[k].at;
		uint8_t *f = st_flat(&b[i]);

		if (b[i].status != bad[k].status)
			fail_msg("request %u (%s): status %d, want %d", i,
				 s.q[i].path, b[i].status, bad[k].status);
		if (bad[k].msg != NULL) {
			st_err_body(want, sizeof(want), "%s", bad[k].msg);
			assert_string_equal(b[i].content_type,
					    "application/json");
			assert_int_equal(b[i].len, strlen(want));
			assert_memory_equal(f, want, b[i].len);
		}
		free(f);
		same_answer(i, &s.q[i], &a[i], &b[i], false);
	}
	/* each good one: as alone, and bit for bit as in the batch without
	 * the bad ones (they add no row) */
	gi = 0;
	for (unsigned int i = 0; i < s.n; i++) {
		bool isbad = false;

		for (unsigned int k = 0; k < nbad; k++)
			isbad |= bad[k].at == i;
		if (isbad)
			continue;
		assert_int_equal(a[i].status, 200);
		same_answer(i, &s.q[i], &a[i], &b[i], false);
		same_answer(i, &s.q[i], &g[gi], &b[i], true);
		gi++;
	}
	assert_int_equal(gi, ngood);
	release_all(a, s.n);
	release_all(b, s.n);
	release_all(g, ngood);
	set_free(&s);
	set_free(&good);
}

/* expert_rows, expert_runs and the per-route statuses of one batch */
static void
test_counters(void **state)
{
	static const uint32_t e12[] = { 1, 2 }, e13[] = { 1, 3 }, e6[] = { 6 };
	static const float w1[] = { 0.5f, 0.5f }, w2[] = { 0.3f, 0.7f };
	static const float w3[] = { 1.0f, 0.0f };
	const struct task t4[] = {
		{ 0, H, 44, 1, { 1 }, { 0.2f } },
		{ 1, H, 45, 2, { 1, 4 }, { 0.5f, 0.5f } },
	};
	struct task t17[17];
	struct env *e = *state;
	struct shard_unit *u = &e->on;
	struct shard_resp b[MAXQ];
	struct shard_stats s0, s1;
	struct set s = { .n = 0 };
	int i200 = st_status_idx(200), i400 = st_status_idx(400);

	for (unsigned int i = 0; i < 17; i++)
		t17[i] = (struct task){ 1, H, 50 + i, 1, { 5 }, { 1.0f } };
	lb(&s, IN_F32, NULL, 0, H, 41, 2, e12, w1);	/* 2 rows */
	lb(&s, IN_F32, NULL, 0, H, 42, 2, e12, w2);	/* 2 rows */
	lb(&s, IN_F32, NULL, 0, H, 43, 2, e13, w3);	/* 1 row (w 0) */
	ml(&s, false, NULL, t4, 2);			/* 3 rows */
	lb(&s, IN_F32, NULL, 0, H, 46, 1, e6, w1);	/* 400 */
	ml(&s, false, NULL, t17, 17);			/* 17 rows */
	shard_stats_sum(u, &s0);
	run_both(u, &s, NULL, b);
	shard_stats_sum(u, &s1);
	/* rows: 2 + 2 + 1 + 3 + 17; runs: (0,1) once for 4 rows, (0,2),
	 * (1,1), (1,4) once each, (1,5) twice (16 rows a pass) */
	assert_int_equal(s1.expert_rows - s0.expert_rows, 25);
	assert_int_equal(s1.expert_runs - s0.expert_runs, 6);
	assert_true(s1.expert_runs - s0.expert_runs <
		    s1.expert_rows - s0.expert_rows);
	assert_int_equal(s1.requests[SHARD_R_LAYER_BATCH][i200] -
			 s0.requests[SHARD_R_LAYER_BATCH][i200], 3);
	assert_int_equal(s1.requests[SHARD_R_LAYER_BATCH][i400] -
			 s0.requests[SHARD_R_LAYER_BATCH][i400], 1);
	assert_int_equal(s1.requests[SHARD_R_MULTI][i200] -
			 s0.requests[SHARD_R_MULTI][i200], 2);
	assert_int_equal(s1.f16_guard, s0.f16_guard);
	release_all(b, s.n);
	set_free(&s);
}

/* §7: f16 chosen by Accept and a finite value past the f16 range: the
 * answer goes in f32 with the f32 type, counted; without the guard, f16
 * with infinities. Per request, in a batch too. */
static void
test_guard(void **state)
{
	static const uint32_t e1[] = { 1 };
	static const float big[] = { 1e6f }, small[] = { 0.5f };
	const struct task tm[] = {
		{ 0, H, 62, 1, { 1 }, { 0.5f } },
		{ 1, H, 63, 1, { 2 }, { 1e6f } },
	};
	struct env *e = *state;
	struct shard_resp a[MAXQ], b[MAXQ];
	struct shard_stats s0, s1;
	struct set s = { .n = 0 };
	bool inf = false;
	uint8_t *f;

	lb(&s, IN_F32, T_LB16, 0, H, 61, 1, e1, big);
	lb(&s, IN_F32, T_LB16, 0, H, 61, 1, e1, small);
	ml(&s, false, T_ML16, tm, 2);
	/* the route's own f16: no guard (§7) */
	lb(&s, IN_F16, NULL, 0, H, 61, 1, e1, big);

	shard_stats_sum(&e->on, &s0);
	run_both(&e->on, &s, a, b);
	shard_stats_sum(&e->on, &s1);
	/* counted once per answer: alone and batched */
	assert_int_equal(s1.f16_guard - s0.f16_guard, 4);
	for (unsigned int i = 0; i < s.n; i++)
		same_answer(i, &s.q[i], &a[i], &b[i], false);
	assert_string_equal(b[0].content_type, T_LB);
	assert_int_equal(b[0].len, 8 + 4 * H);
	f = st_flat(&b[0]);
	for (unsigned int i = 0; i < H; i++) {
		assert_true(isfinite(st_getf(f + 8 + 4 * i)));
		inf |= fabsf(st_getf(f + 8 + 4 * i)) > 65520.0f;
	}
	assert_true(inf);		/* the guard had a reason */
	free(f);
	assert_string_equal(b[1].content_type, T_LB16);
	assert_int_equal(b[1].len, 8 + 2 * H);
	assert_string_equal(b[2].content_type, T_ML);	/* whole answer */
	assert_int_equal(b[2].len, 4 + 2 * (8 + 4 * H));
	assert_string_equal(b[3].content_type, T_LB16);
	release_all(a, s.n);
	release_all(b, s.n);

	/* the guard off: f16, infinities included */
	shard_stats_sum(&e->off, &s0);
	run_both(&e->off, &s, a, b);
	shard_stats_sum(&e->off, &s1);
	assert_int_equal(s1.f16_guard, s0.f16_guard);
	assert_string_equal(b[0].content_type, T_LB16);
	assert_int_equal(b[0].len, 8 + 2 * H);
	f = st_flat(&b[0]);
	inf = false;
	for (unsigned int i = 0; i < H; i++) {
		uint16_t h;

		memcpy(&h, f + 8 + 2 * i, 2);
		inf |= (h & 0x7fff) == 0x7c00;
	}
	assert_true(inf);
	free(f);
	assert_string_equal(b[2].content_type, T_ML16);
	release_all(a, s.n);
	release_all(b, s.n);
	set_free(&s);
}

/* spec/wire.md §4's last paragraph, for experts: a request whose rows
 * (4 H bytes each, held until its sum) would pass the shard's response
 * limit is 413; requests that fit alone but not together are computed
 * one at a time, answering exactly as alone. */
static void
test_response_limit(void **state)
{
	static const uint32_t e10[] = { 0, 1, 2, 3, 4, 5, 0, 1, 2, 3 };
	static const float w10[] = { 0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f,
				     0.1f, 0.1f, 0.1f, 0.1f };
	uint32_t e20[20];
	float w20[20];
	struct env *e = *state;
	struct shard_unit *u = &e->on;
	struct shard_resp a[MAXQ], b[MAXQ];
	struct set s = { .n = 0 };
	uint64_t keep = u->max_response;
	char want[160];
	uint8_t *body;

	for (unsigned int i = 0; i < 20; i++) {
		e20[i] = i % 6;
		w20[i] = 0.05f;
	}
	/* 11 rows (10 pairs + the output) of 2 KiB fit in 32 KiB alone,
	 * two such requests together do not; 21 rows never do */
	u->max_response = 32 << 10;
	lb(&s, IN_F32, NULL, 0, H, 61, 10, e10, w10);
	lb(&s, IN_F32, NULL, 1, H, 62, 10, e10, w10);
	lb(&s, IN_F32, NULL, 0, H, 63, 20, e20, w20);
	run_both(u, &s, a, b);
	u->max_response = keep;
	assert_int_equal(b[0].status, 200);
	assert_int_equal(b[1].status, 200);
	for (unsigned int i = 0; i < 2; i++)
		same_answer(i, &s.q[i], &a[i], &b[i], true);
	snprintf(want, sizeof(want), "{\"error\":\"response of 21 expert "
		 "rows x %u values exceeds the shard's limit of 32768 "
		 "bytes\"}", H);
	assert_int_equal(b[2].status, 413);
	assert_int_equal(a[2].status, 413);
	assert_int_equal(b[2].len, strlen(want));
	body = st_flat(&b[2]);
	assert_non_null(body);
	assert_memory_equal(body, want, strlen(want));
	free(body);
	release_all(a, s.n);
	release_all(b, s.n);
	set_free(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batched_equals_alone),
		cmocka_unit_test(test_isolation),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_guard),
		cmocka_unit_test(test_response_limit),
	};

	st_filter();
	return cmocka_run_group_tests(tests, setup, teardown);
}
