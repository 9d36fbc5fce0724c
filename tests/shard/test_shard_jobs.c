/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The split lifecycle of shard.h (the appliance's path):
 * shard_walk_prepare → shard_jobs_compute (several jobs, rows at the same
 * layer batched) → shard_job_finish → shard_resp_release. Batched answers
 * equal answers computed alone; latency_ms is t_end - t_start (§5.2); the
 * response limit (413); unaligned bodies; counters; memory ownership.
 * Model: random llama, H 64, nf 96, 3 layers (tools/mkvindex).
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "quant.h"
#include "shard_test_util.h"

#define H 64
#define CT_F32 "application/x-larql-ffn"
#define CT_F16 "application/x-larql-ffn-f16"
#define CT_I8 "application/x-larql-ffn-i8"

/* Job memory blocks outstanding (cnt_mem). */
static long mem_live;

struct env {
	char dir[64];
	char exdir[64];
	struct shard_unit *u;
};

static int
setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	if (e == NULL || st_write_model(e->dir, sizeof(e->dir), 0) < 0 ||
	    st_write_model(e->exdir, sizeof(e->exdir), 1) < 0)
		return -1;
	*state = e;
	return 0;
}

static int
teardown(void **state)
{
	struct env *e = *state;

	st_rmtree(e->dir);
	st_rmtree(e->exdir);
	free(e);
	return 0;
}

/* A fresh unit per test (clean counters); i8 responses enabled. */
static int
unit_setup(void **state)
{
	struct env *e = *state;

	mem_live = 0;	/* a failed test leaks what it held */
	e->u = calloc(1, sizeof(*e->u));
	if (e->u == NULL || st_unit(e->u, e->dir, -1, -1, NULL) < 0)
		return -1;
	e->u->wire.i8 = true;
	return 0;
}

static int
unit_teardown(void **state)
{
	struct env *e = *state;

	shard_unit_fini(e->u);
	free(e->u);
	e->u = NULL;
	return 0;
}

/* A shard_mem that counts what is outstanding. */

static void *
cnt_alloc(void *arg, size_t size)
{
	void *p = aligned_alloc(64, (size + 63) & ~(size_t)63);

	(void)arg;
	if (p != NULL)
		mem_live++;
	return p;
}

static void
cnt_free(void *arg, void *p)
{
	(void)arg;
	if (p != NULL)
		mem_live--;
	free(p);
}

static const struct shard_mem cnt_mem = { cnt_alloc, cnt_free, NULL };

/* One request of the mix. */
struct spec {
	uint32_t layers[4];
	uint32_t K;		/* 0xFF: single frame of layers[0] */
	uint32_t seq_len;
	const char *ct;		/* payload format */
	const char *accept;
};

#define SINGLE 0xFFu

static const struct spec mix[] = {
	{ { 0 }, SINGLE, 1, CT_F32, NULL },
	{ { 1, 0, 2 }, 3, 3, CT_F32, CT_F16 },
	{ { 1 }, SINGLE, 2, CT_F32, CT_I8 },
	{ { 0, 0 }, 2, 1, CT_F16, NULL },
	{ { 2, 1 }, 2, 4, CT_I8, CT_F16 },
	{ { 0 }, 0, 1, CT_F32, NULL },		/* K = 0 */
	{ { 2, 2, 0, 1 }, 4, 5, CT_F32, CT_I8 },
	{ { 1 }, 1, 7, CT_F32, NULL },		/* batch frame, K = 1 */
	/* 1 + 1 + 3 x 6 = 20 rows at layer 0 in the first pass: over
	 * ffn_compute's BLAS threshold (17) while each job alone is not. */
	{ { 0 }, SINGLE, 6, CT_F32, NULL },
	{ { 0, 2 }, 2, 6, CT_F16, CT_F16 },
	{ { 0 }, SINGLE, 6, CT_F32, CT_I8 },
};
#define N_MIX (sizeof(mix) / sizeof(mix[0]))

/* Body of sp at offset off: payload from deterministic values
 * (seed), in sp's payload format. */
static void
make_body(struct st_body *b, const struct spec *sp, uint64_t seed,
	  size_t off)
{
	size_t n = (size_t)sp->seq_len * H, plen;
	float *x = malloc(n * 4);
	uint8_t *pl = malloc(n * 4 + 8 * (size_t)sp->seq_len);

	assert_non_null(x);
	assert_non_null(pl);
	vw_normal(x, n, 1.0f, seed);
	if (strcmp(sp->ct, CT_F16) == 0) {
		quant_f32_to_f16((uint16_t *)(void *)pl, x, n);
		plen = n * 2;
	} else if (strcmp(sp->ct, CT_I8) == 0) {
		quant_f32_to_i8_rows(pl, x, sp->seq_len, H);
		plen = (size_t)sp->seq_len * (8 + H);
	} else {
		memcpy(pl, x, n * 4);
		plen = n * 4;
	}
	st_body_alloc(b, 32 + 4 * 4 + plen, off);
	if (sp->K == SINGLE)
		st_single(b, sp->layers[0], sp->seq_len, 1, pl, plen);
	else
		st_batch(b, sp->layers, sp->K, sp->seq_len, 1, pl, plen);
	free(x);
	free(pl);
}

static void
http_req(struct shard_http_req *rq, const struct spec *sp,
	 const struct st_body *b)
{
	st_req(rq, HTTP_M_POST, "/v1/walk-ffn", sp->ct, sp->accept, NULL,
	       b->p, b->len);
}

/* The answer of one job computed alone (flat, latency zeroed). */
static uint8_t *
alone(struct shard_unit *u, const struct spec *sp, const struct st_body *b,
      struct ffn_scratch *s, size_t *len)
{
	struct shard_http_req rq;
	struct shard_job job, *jp = &job;
	struct shard_resp err;
	uint8_t *f;

	http_req(&rq, sp, b);
	assert_int_equal(shard_walk_prepare(u, &rq, &job, &err,
					    &shard_mem_heap, 0), 0);
	shard_jobs_compute(&jp, 1, s, 0);
	shard_job_finish(&job, 0);
	assert_int_equal(job.resp.status, 200);
	f = st_flat(&job.resp);
	assert_non_null(f);
	*len = job.resp.len;
	memset(f + 8, 0, 4);
	shard_resp_release(&job.resp);
	return f;
}

/* Payload value i of a result (f32 / f16 / i8 rows of H), and the size
 * of one step of its format there. */
static float
val_at(const uint8_t *pl, const char *ct, uint32_t i, float *step)
{
	if (strcmp(ct, CT_F16) == 0) {
		uint16_t h;
		float v;

		memcpy(&h, pl + 2 * (size_t)i, 2);
		v = quant_f16_to_f32_1(h);
		*step = fabsf(v) * 0x1p-10f + 0x1p-24f;
		return v;
	}
	if (strcmp(ct, CT_I8) == 0) {
		const uint8_t *row = pl + (size_t)(i / H) * (8 + H);

		*step = st_getf(row);
		return (float)(int8_t)row[8 + i % H] * *step;
	}
	*step = 0;
	return st_getf(pl + 4 * (size_t)i);
}

/* got and want are the same frame but for summation order: headers equal
 * byte for byte, values within f32 rounding plus one step of the format
 * (lib/shard: a row alone and in a batch may differ in the last bits). */
static void
assert_frames_close(const uint8_t *got, const uint8_t *want, size_t len,
		    const char *ct, const struct spec *sp)
{
	uint32_t n = sp->K == SINGLE ? 1 : sp->K, nv = sp->seq_len * H;
	size_t per = strcmp(ct, CT_I8) == 0 ? (size_t)sp->seq_len * (8 + H) :
		     strcmp(ct, CT_F16) == 0 ? 2 * (size_t)nv : 4 * (size_t)nv;
	/* single: [layer][seq][latency] payload; batch: [marker][n]
	 * [latency], then per result [layer][seq][num_values] payload. */
	size_t off = n == 1 ? 0 : 12;

	assert_memory_equal(got, want, 12); /* latency zeroed in both */
	for (uint32_t r = 0; r < n; r++) {
		const uint8_t *g = got + off + 12, *w = want + off + 12;
		float maxabs = 0, st;

		assert_memory_equal(got + off, want + off, 12);
		for (uint32_t i = 0; i < nv; i++)
			maxabs = fmaxf(maxabs, fabsf(val_at(w, ct, i, &st)));
		for (uint32_t i = 0; i < nv; i++) {
			float sg, sw, a = val_at(g, ct, i, &sg);
			float b = val_at(w, ct, i, &sw);

			if (!(fabsf(a - b) <= 1e-5f * maxabs + fmaxf(sg, sw)))
				fail_msg("result %u value %u: %g batched, %g "
					 "alone", r, i, a, b);
		}
		off += 12 + per;
	}
	assert_int_equal(off, len);
}

/* Run the whole mix batched (jobs[i] prepared on lcore 1, computed on
 * lcore 2, finished on lcore 2) and compare each answer with the job
 * alone: headers exactly, values within rounding. */
static void
run_mix(struct shard_unit *u, size_t off)
{
	struct shard_job jobs[N_MIX], *jp[N_MIX];
	struct st_body b[N_MIX];
	struct ffn_scratch *s = ffn_scratch_new(u->model, 64, -1);

	assert_non_null(s);
	for (size_t i = 0; i < N_MIX; i++) {
		struct shard_http_req rq;
		struct shard_resp err;

		make_body(&b[i], &mix[i], 100 + i, off);
		http_req(&rq, &mix[i], &b[i]);
		assert_int_equal(shard_walk_prepare(u, &rq, &jobs[i], &err,
						    &cnt_mem, 1), 0);
		jp[i] = &jobs[i];
	}
	shard_jobs_compute(jp, N_MIX, s, 2);
	for (size_t i = 0; i < N_MIX; i++) {
		uint8_t *got, *want;
		size_t wlen;

		assert_true(jobs[i].t_end_ns >= jobs[i].t_start_ns);
		shard_job_finish(&jobs[i], 2);
		assert_int_equal(jobs[i].resp.status, 200);
		got = st_flat(&jobs[i].resp);
		assert_non_null(got);
		memset(got + 8, 0, 4);
		want = alone(u, &mix[i], &b[i], s, &wlen);
		assert_int_equal(jobs[i].resp.len, wlen);
		assert_frames_close(got, want, wlen,
				    jobs[i].resp.content_type, &mix[i]);
		free(got);
		free(want);
		shard_resp_release(&jobs[i].resp);
		st_body_free(&b[i]);
	}
	assert_int_equal(mem_live, 0);
	ffn_scratch_free(s);
}

/* Our kernels: batched rows give the same bytes as alone. */
static void
test_mix_equals_alone_kernel(void **state)
{
	struct env *e = *state;

	ffn_model_set_engine(e->u->model, FFN_ENGINE_KERNEL, 0);
	run_mix(e->u, 0);
}

/*
 * Default engine (AUTO: OpenBLAS from 17 rows per pass): a request's
 * answer must not depend on what it was batched with. Known to FAIL at
 * the time of writing (reported to the lead): the mix's first pass has
 * 20 rows at layer 0 and goes to cblas_sgemm, while each of its jobs
 * alone (<= 6 rows) goes to our kernels; the f32 sums differ in their
 * low bits, so the same request gets different bytes under load.
 */
static void
test_bug_mix_equals_alone_auto(void **state)
{
	struct env *e = *state;

	run_mix(e->u, 0);
}

/* Unaligned bodies (f32 payload copied into job memory, not viewed)
 * give the same answers. */
static void
test_mix_unaligned(void **state)
{
	struct env *e = *state;

	ffn_model_set_engine(e->u->model, FFN_ENGINE_KERNEL, 0);
	for (size_t off = 1; off < 4; off++)
		run_mix(e->u, off);
}

/* Jobs of two units (same model files, B owns layers 1-2) in one call:
 * each computed on its own unit's model, answers equal alone, counters
 * on the right unit. */
static void
test_two_units(void **state)
{
	struct env *e = *state;
	static const struct spec sps[4] = {
		{ { 1 }, SINGLE, 2, CT_F32, NULL },
		{ { 1 }, SINGLE, 3, CT_F32, CT_F16 },
		{ { 2, 1 }, 2, 1, CT_F32, NULL },
		{ { 2 }, SINGLE, 2, CT_F16, NULL },
	};
	struct shard_unit *ub = calloc(1, sizeof(*ub)), *us[4];
	struct shard_job jobs[4], *jp[4];
	struct st_body b[4];
	struct ffn_scratch *s = ffn_scratch_new(e->u->model, 64, -1);

	assert_non_null(ub);
	assert_int_equal(st_unit(ub, e->dir, 1, 2, NULL), 0);
	ffn_model_set_engine(e->u->model, FFN_ENGINE_KERNEL, 0);
	ffn_model_set_engine(ub->model, FFN_ENGINE_KERNEL, 0);
	for (int i = 0; i < 4; i++) {
		struct shard_http_req rq;
		struct shard_resp err;

		us[i] = i % 2 ? ub : e->u;
		make_body(&b[i], &sps[i], 70 + i, 0);
		http_req(&rq, &sps[i], &b[i]);
		assert_int_equal(shard_walk_prepare(us[i], &rq, &jobs[i], &err,
						    &cnt_mem, 0), 0);
		jp[i] = &jobs[i];
	}
	shard_jobs_compute(jp, 4, s, 0);
	assert_int_equal(e->u->stats[0].layers_computed, 3);
	assert_int_equal(e->u->stats[0].rows_computed, 2 + 1 + 1);
	assert_int_equal(ub->stats[0].layers_computed, 2);
	assert_int_equal(ub->stats[0].rows_computed, 3 + 2);
	for (int i = 0; i < 4; i++) {
		uint8_t *got, *want;
		size_t wlen;

		shard_job_finish(&jobs[i], 0);
		assert_int_equal(jobs[i].resp.status, 200);
		got = st_flat(&jobs[i].resp);
		assert_non_null(got);
		memset(got + 8, 0, 4);
		want = alone(us[i], &sps[i], &b[i], s, &wlen);
		assert_int_equal(jobs[i].resp.len, wlen);
		assert_frames_close(got, want, wlen,
				    jobs[i].resp.content_type, &sps[i]);
		free(got);
		free(want);
		shard_resp_release(&jobs[i].resp);
		st_body_free(&b[i]);
	}
	assert_int_equal(mem_live, 0);
	ffn_scratch_free(s);
	shard_unit_fini(ub);
	free(ub);
}

/* An aligned f32 payload is read in place; an unaligned one is copied,
 * with the same answer. */
static void
test_payload_view_or_copy(void **state)
{
	struct env *e = *state;
	static const struct spec sp = { { 1 }, SINGLE, 2, CT_F32, NULL };
	struct shard_job job, *jp = &job;
	struct shard_http_req rq;
	struct shard_resp err;
	struct ffn_scratch *s = ffn_scratch_new(e->u->model, 64, -1);
	uint8_t *res[2];

	for (size_t off = 0; off < 2; off++) {
		struct st_body b;

		make_body(&b, &sp, 5, off);
		http_req(&rq, &sp, &b);
		assert_int_equal(shard_walk_prepare(e->u, &rq, &job, &err,
						    &cnt_mem, 0), 0);
		if (off == 0) {
			assert_ptr_equal(job.x, b.p + 16);
		} else {
			assert_true((const uint8_t *)job.x < b.mem ||
				    (const uint8_t *)job.x >= b.p + b.len);
			assert_int_equal((uintptr_t)job.x % 4, 0);
			assert_memory_equal(job.x, b.p + 16, 2 * H * 4);
		}
		shard_jobs_compute(&jp, 1, s, 0);
		shard_job_finish(&job, 0);
		res[off] = st_flat(&job.resp);
		assert_non_null(res[off]);
		memset(res[off] + 8, 0, 4);
		shard_resp_release(&job.resp);
		st_body_free(&b);
	}
	assert_memory_equal(res[0], res[1], 12 + 2 * H * 4);
	free(res[0]);
	free(res[1]);
	ffn_scratch_free(s);
	assert_int_equal(mem_live, 0);
}

/* latency_ms (§5.2) is t_end - t_start in ms, as f32: 7.3 ms gives the
 * bytes of spec/wire.md §8 (9a99e940), single and batch frames. */
static void
test_latency_field(void **state)
{
	struct env *e = *state;
	static const uint8_t l73[4] = { 0x9a, 0x99, 0xe9, 0x40 };
	static const struct spec sps[2] = {
		{ { 2 }, SINGLE, 1, CT_F32, NULL },
		{ { 2, 0 }, 2, 1, CT_F32, NULL },
	};
	struct ffn_scratch *s = ffn_scratch_new(e->u->model, 64, -1);

	for (int k = 0; k < 2; k++) {
		struct shard_job job, *jp = &job;
		struct shard_http_req rq;
		struct shard_resp err;
		struct st_body b;
		uint8_t *f;

		make_body(&b, &sps[k], 9, 0);
		http_req(&rq, &sps[k], &b);
		assert_int_equal(shard_walk_prepare(e->u, &rq, &job, &err,
						    &cnt_mem, 0), 0);
		assert_true(job.t_start_ns > 0);
		assert_int_equal(job.t_end_ns, 0);
		shard_jobs_compute(&jp, 1, s, 0);
		assert_true(job.t_end_ns >= job.t_start_ns);
		job.t_start_ns = 5000000000ull;
		job.t_end_ns = job.t_start_ns + 7300000ull;
		shard_job_finish(&job, 0);
		f = st_flat(&job.resp);
		assert_non_null(f);
		assert_memory_equal(f + 8, l73, 4);
		free(f);
		shard_resp_release(&job.resp);
		st_body_free(&b);
	}
	ffn_scratch_free(s);
	assert_int_equal(mem_live, 0);
}

/* The response limit (§4 last paragraph): n_layers x slot bytes over
 * u->max_response is 413 with a JSON body; at the limit it passes. */
static void
test_response_limit(void **state)
{
	struct env *e = *state;
	static const struct spec sp = { { 0, 1, 2 }, 3, 2, CT_F32, NULL };
	size_t slot = wire_slot_size(WIRE_FMT_F32, 2, H);
	struct shard_job job;
	struct shard_http_req rq;
	struct shard_resp err, r;
	struct st_body b;
	char want[256];
	uint8_t *f;

	assert_true(slot > 0);
	make_body(&b, &sp, 3, 0);
	http_req(&rq, &sp, &b);
	e->u->max_response = 3 * slot;
	assert_int_equal(shard_walk_prepare(e->u, &rq, &job, &err, &cnt_mem,
					    0), 0);
	shard_resp_release(&job.resp);
	e->u->max_response = 3 * slot - 1;
	assert_int_equal(shard_walk_prepare(e->u, &rq, &job, &err, &cnt_mem,
					    0), -1);
	assert_int_equal(err.status, 413);
	assert_string_equal(err.content_type, "application/json");
	assert_int_equal(err.route, SHARD_R_WALK);
	assert_int_equal(err.fmt_out, -1);
	f = st_flat(&err);
	assert_non_null(f);
	st_err_body(want, sizeof(want), "response of 3 layers x %zu bytes "
		    "exceeds the shard's limit of %zu bytes", slot,
		    3 * slot - 1);
	assert_string_equal((char *)f, want);
	free(f);
	shard_resp_release(&err);
	assert_int_equal(mem_live, 0);	/* nothing allocated for a 413 */

	/* Through shard_handle too. */
	shard_handle(e->u, &rq, &r, &cnt_mem, NULL, 0);
	assert_int_equal(r.status, 413);
	f = st_flat(&r);
	assert_string_equal((char *)f, want);
	free(f);
	shard_resp_release(&r);
	e->u->max_response = 1ull << 30;
	st_body_free(&b);
	assert_int_equal(mem_live, 0);
}

/* Counters of the split path (the caller counts the response with
 * shard_count, as the server does): walk_in at prepare, walk_out and
 * walk_served at count, layers/rows at compute, passes in batch_hist. */
static void
test_counters(void **state)
{
	struct env *e = *state;
	struct shard_unit *u = e->u;
	static const struct spec big[2] = {
		{ { 2 }, SINGLE, 200, CT_F32, NULL },
		{ { 2 }, SINGLE, 100, CT_F16, CT_I8 },
	};
	const struct spec *sps[N_MIX + 2];
	struct shard_job jobs[N_MIX + 2], *jp[N_MIX + 2];
	struct st_body b[N_MIX + 2];
	struct ffn_scratch *s = ffn_scratch_new(u->model, 64, -1);
	uint64_t in[4] = { 0 }, out[4] = { 0 }, layers = 0, rows = 0;
	uint64_t bin = 0, bout = 0;
	struct shard_stats sum;

	for (size_t i = 0; i < N_MIX + 2; i++)
		sps[i] = i < 2 ? &big[i] : &mix[i - 2];
	for (size_t i = 0; i < N_MIX + 2; i++) {
		struct shard_http_req rq;
		struct shard_resp err;
		uint32_t nl = sps[i]->K == SINGLE ? 1 : sps[i]->K;

		make_body(&b[i], sps[i], 50 + i, 0);
		http_req(&rq, sps[i], &b[i]);
		assert_int_equal(shard_walk_prepare(u, &rq, &jobs[i], &err,
						    &cnt_mem, 1), 0);
		jp[i] = &jobs[i];
		in[jobs[i].req.fmt]++;
		out[jobs[i].out_fmt]++;
		layers += nl;
		rows += (uint64_t)nl * sps[i]->seq_len;
		bin += b[i].len;
	}
	/* The two big jobs first: 300 rows at layer 2 → passes of 256 and
	 * 44 (the mix's jobs join later passes). */
	shard_jobs_compute(jp, 2, s, 2);
	assert_int_equal(u->stats[2].batch_hist[SHARD_BATCH_BUCKETS - 1], 1);
	assert_int_equal(u->stats[2].batch_hist[6], 1);
	shard_jobs_compute(jp + 2, N_MIX, s, 2);
	for (size_t i = 0; i < N_MIX + 2; i++) {
		shard_job_finish(&jobs[i], 2);
		assert_int_equal(jobs[i].resp.status, 200);
		shard_count(u, &jobs[i].resp, b[i].len, 1);
		bout += jobs[i].resp.len;
		shard_resp_release(&jobs[i].resp);
		st_body_free(&b[i]);
	}
	for (int f = 0; f < 4; f++) {
		assert_int_equal(u->stats[1].walk_in[f], in[f]);
		assert_int_equal(u->stats[1].walk_out[f], out[f]);
	}
	assert_int_equal(u->stats[1].walk_served, N_MIX + 2);
	assert_int_equal(u->stats[1].requests[SHARD_R_WALK][0], N_MIX + 2);
	assert_int_equal(u->stats[1].bytes_in, bin);
	assert_int_equal(u->stats[1].bytes_out, bout);
	assert_int_equal(u->stats[2].layers_computed, layers);
	assert_int_equal(u->stats[2].rows_computed, rows);
	shard_stats_sum(u, &sum);
	assert_int_equal(sum.walk_served, N_MIX + 2);
	assert_int_equal(sum.layers_computed, layers);
	assert_int_equal(sum.rows_computed, rows);
	{
		uint64_t n = 0;

		for (int i = 0; i < SHARD_LAT_BUCKETS; i++)
			n += sum.lat_hist[i];
		assert_int_equal(n, N_MIX + 2);
	}
	ffn_scratch_free(s);
	assert_int_equal(mem_live, 0);
}

/* shard_resp_release frees the job memory and the heap body, once, and
 * is idempotent; a prepare error allocates no job memory. */
static void
test_release_idempotent(void **state)
{
	struct env *e = *state;
	static const struct spec sp = { { 0, 2 }, 2, 3, CT_F32, CT_F16 };
	struct shard_job job, *jp = &job;
	struct shard_http_req rq;
	struct shard_resp err;
	struct st_body b;
	struct ffn_scratch *s = ffn_scratch_new(e->u->model, 64, -1);

	make_body(&b, &sp, 11, 1);
	http_req(&rq, &sp, &b);
	assert_int_equal(shard_walk_prepare(e->u, &rq, &job, &err, &cnt_mem,
					    0), 0);
	assert_int_equal(mem_live, 1);
	shard_jobs_compute(&jp, 1, s, 0);
	shard_job_finish(&job, 0);
	assert_int_equal(mem_live, 1);
	shard_resp_release(&job.resp);
	assert_int_equal(mem_live, 0);
	assert_null(job.resp.mem);
	assert_null(job.resp.heap);
	assert_int_equal(job.resp.iovcnt, 0);
	shard_resp_release(&job.resp);
	assert_int_equal(mem_live, 0);

	/* Error response: heap body, released twice. */
	rq.body_len = 10;
	assert_int_equal(shard_walk_prepare(e->u, &rq, &job, &err, &cnt_mem,
					    0), -1);
	assert_int_equal(mem_live, 0);
	assert_int_equal(err.status, 400);
	assert_non_null(err.heap);
	shard_resp_release(&err);
	assert_null(err.heap);
	shard_resp_release(&err);
	ffn_scratch_free(s);
	st_body_free(&b);
}

static void *
null_alloc(void *arg, size_t size)
{
	(void)arg;
	(void)size;
	return NULL;
}

/* Job memory that cannot be had: 503 with a JSON body, counted once by
 * shard_handle, nothing held. */
static void
test_alloc_failure(void **state)
{
	struct env *e = *state;
	static const struct shard_mem none = { null_alloc, cnt_free, NULL };
	static const struct spec sp = { { 0, 1 }, 2, 1, CT_F32, NULL };
	struct shard_job job;
	struct shard_http_req rq;
	struct shard_resp err, r;
	struct st_body b;
	char want[128];
	uint8_t *f;

	st_err_body(want, sizeof(want), "out of memory for the response");
	make_body(&b, &sp, 2, 0);
	http_req(&rq, &sp, &b);
	assert_int_equal(shard_walk_prepare(e->u, &rq, &job, &err, &none, 0),
			 -1);
	assert_int_equal(err.status, 503);
	f = st_flat(&err);
	assert_non_null(f);
	assert_string_equal((char *)f, want);
	free(f);
	shard_resp_release(&err);
	assert_null(job.resp.mem);

	shard_handle(e->u, &rq, &r, &none, NULL, 5);
	assert_int_equal(r.status, 503);
	assert_string_equal(r.content_type, "application/json");
	f = st_flat(&r);
	assert_non_null(f);
	assert_string_equal((char *)f, want);
	free(f);
	shard_resp_release(&r);
	assert_int_equal(e->u->stats[5].requests[SHARD_R_WALK][11], 1);
	assert_int_equal(e->u->stats[5].walk_served, 0);
	assert_int_equal(e->u->stats[5].layers_computed, 0);
	assert_int_equal(mem_live, 0);
	st_body_free(&b);
}

/* Rewrite the stack below the caller's frame (where a callee's locals
 * lived). */
static void __attribute__((noinline))
scribble_stack(void)
{
	volatile uint8_t junk[65536];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0xA5;
}

/*
 * A compute failure answers 500 "FFN compute failed" (shard.h: job->error)
 * for EVERY job whose rows were in the failed pass, and the response stays
 * valid after shard_handle returns. A scratch made for another model
 * (H 4) makes ffn_compute fail with -EINVAL.
 * Known to FAIL at the time of writing (reported to the lead):
 * shard_jobs_compute marks only the lead job (or the job that filled the
 * 256-row pass) as failed, so the others are answered 200 with slot
 * memory the compute never wrote; and shard_handle copies job.resp whose
 * iov points at job.resp.one, a local of shard_handle.
 */
static void
test_bug_compute_failure_handle(void **state)
{
	struct env *e = *state;
	static const struct spec sp = { { 1 }, SINGLE, 1, CT_F32, NULL };
	struct shard_unit *ex = calloc(1, sizeof(*ex));
	struct ffn_scratch *wrong;
	struct shard_http_req rq;
	struct shard_resp r;
	struct st_body b;
	char want[64];
	uint8_t *f;

	assert_non_null(ex);
	assert_int_equal(st_unit(ex, e->exdir, -1, -1, NULL), 0);
	wrong = ffn_scratch_new(ex->model, 64, -1);
	assert_non_null(wrong);
	st_err_body(want, sizeof(want), "FFN compute failed");
	make_body(&b, &sp, 1, 0);
	http_req(&rq, &sp, &b);

	/* shard_handle: 500 with a body that outlives the call. */
	shard_handle(e->u, &rq, &r, &cnt_mem, wrong, 0);
	scribble_stack();
	assert_int_equal(r.status, 500);
	assert_int_equal(mem_live, 0);
	f = st_flat(&r);
	assert_non_null(f);
	assert_string_equal((char *)f, want);
	free(f);
	shard_resp_release(&r);

	ffn_scratch_free(wrong);
	shard_unit_fini(ex);
	free(ex);
	st_body_free(&b);
}

/* Two jobs in one pass: both fail (see test_bug_compute_failure_handle). */
static void
test_bug_compute_failure_every_job(void **state)
{
	struct env *e = *state;
	static const struct spec sp = { { 1 }, SINGLE, 1, CT_F32, NULL };
	struct shard_unit *ex = calloc(1, sizeof(*ex));
	struct ffn_scratch *wrong;
	struct shard_job jobs[2], *jp[2] = { &jobs[0], &jobs[1] };
	struct shard_http_req rq;
	struct shard_resp err;
	struct st_body b;
	char want[64];
	uint8_t *f;

	assert_non_null(ex);
	assert_int_equal(st_unit(ex, e->exdir, -1, -1, NULL), 0);
	wrong = ffn_scratch_new(ex->model, 64, -1);
	assert_non_null(wrong);
	st_err_body(want, sizeof(want), "FFN compute failed");
	make_body(&b, &sp, 1, 0);
	http_req(&rq, &sp, &b);
	for (int i = 0; i < 2; i++)
		assert_int_equal(shard_walk_prepare(e->u, &rq, &jobs[i], &err,
						    &cnt_mem, 0), 0);
	shard_jobs_compute(jp, 2, wrong, 0);
	for (int i = 0; i < 2; i++) {
		shard_job_finish(&jobs[i], 0);
		assert_int_equal(jobs[i].resp.status, 500);
		f = st_flat(&jobs[i].resp);
		assert_non_null(f);
		assert_string_equal((char *)f, want);
		free(f);
		shard_resp_release(&jobs[i].resp);
	}
	assert_int_equal(mem_live, 0);
	ffn_scratch_free(wrong);
	shard_unit_fini(ex);
	free(ex);
	st_body_free(&b);
}

/*
 * Layer split (issue 4): with split_min_rows 2 and 3 parts, every job of
 * the mix with 2+ rows is split; its parts run in an interleaved,
 * reversed order (as workers would take them), only the last returns
 * true, and its answer equals the job computed whole, within summation
 * order (assert_frames_close); jobs of 1 row are not split. Counters and
 * memory as for whole jobs; a split job given to shard_jobs_compute is
 * computed whole.
 */
static void
test_split_parts(void **state)
{
	struct env *e = *state;
	struct shard_job jobs[N_MIX];
	struct st_body b[N_MIX];
	struct ffn_scratch *s = ffn_scratch_new(e->u->model, 64, -1);
	unsigned int n_split = 0, finished = 0, parts = 0;
	uint64_t layers = 0;

	assert_non_null(s);
	ffn_model_set_engine(e->u->model, FFN_ENGINE_KERNEL, 0);
	e->u->split_min_rows = 2;
	e->u->split_parts = 3;
	for (size_t i = 0; i < N_MIX; i++) {
		struct shard_http_req rq;
		struct shard_resp err;

		make_body(&b[i], &mix[i], 300 + i, i % 2);
		http_req(&rq, &mix[i], &b[i]);
		assert_int_equal(shard_walk_prepare(e->u, &rq, &jobs[i], &err,
						    &cnt_mem, 1), 0);
		if (mix[i].seq_len >= 2 && jobs[i].req.n_layers > 0) {
			assert_int_equal(jobs[i].n_parts, 3);
			assert_int_equal(jobs[i].parts_left, 3);
			n_split++;
		} else {
			assert_int_equal(jobs[i].n_parts, 0);
		}
	}
	assert_true(n_split >= 6);
	/* part 2 of every job, then 1, then 0: the last finishes */
	for (int p = 2; p >= 0; p--)
		for (size_t i = 0; i < N_MIX; i++) {
			if (jobs[i].n_parts == 0)
				continue;
			parts++;
			if (shard_part_run(&jobs[i].parts[p], s, 3)) {
				assert_int_equal(p, 0);
				assert_int_equal(jobs[i].parts_left, 0);
				assert_int_equal(jobs[i].resp.status, 200);
				assert_true(jobs[i].t_end_ns >=
					    jobs[i].t_start_ns);
				finished++;
				layers += jobs[i].req.n_layers;
			} else {
				assert_true(p > 0);
			}
		}
	assert_int_equal(finished, n_split);
	assert_int_equal(e->u->stats[3].split_jobs, n_split);
	assert_int_equal(e->u->stats[3].split_parts, parts);
	assert_int_equal(e->u->stats[3].layers_computed, layers);
	/* the answers, against each job computed whole (split off) */
	e->u->split_min_rows = 0;
	for (size_t i = 0; i < N_MIX; i++) {
		uint8_t *got, *want;
		size_t wlen;

		if (jobs[i].n_parts == 0) {
			struct shard_job *jp = &jobs[i];

			shard_jobs_compute(&jp, 1, s, 3);
			shard_job_finish(&jobs[i], 3);
		}
		got = st_flat(&jobs[i].resp);
		assert_non_null(got);
		memset(got + 8, 0, 4);
		want = alone(e->u, &mix[i], &b[i], s, &wlen);
		assert_int_equal(jobs[i].resp.len, wlen);
		assert_frames_close(got, want, wlen,
				    jobs[i].resp.content_type, &mix[i]);
		free(got);
		free(want);
		shard_resp_release(&jobs[i].resp);
	}
	assert_int_equal(mem_live, 0);
	/* a split job through shard_jobs_compute: whole, same answer */
	e->u->split_min_rows = 1;
	{
		struct shard_http_req rq;
		struct shard_resp err;
		struct shard_job job, *jp = &job;
		uint8_t *got, *want;
		size_t wlen;

		http_req(&rq, &mix[1], &b[1]);
		assert_int_equal(shard_walk_prepare(e->u, &rq, &job, &err,
						    &cnt_mem, 1), 0);
		assert_int_equal(job.n_parts, 3);
		shard_jobs_compute(&jp, 1, s, 3);
		shard_job_finish(&job, 3);
		got = st_flat(&job.resp);
		memset(got + 8, 0, 4);
		e->u->split_min_rows = 0;
		want = alone(e->u, &mix[1], &b[1], s, &wlen);
		assert_int_equal(job.resp.len, wlen);
		assert_frames_close(got, want, wlen, job.resp.content_type,
				    &mix[1]);
		free(got);
		free(want);
		shard_resp_release(&job.resp);
	}
	/* no split beyond the response limit (partials are bounded too) */
	e->u->split_min_rows = 1;
	e->u->max_response = wire_slot_size(WIRE_FMT_F16, 3, H) * 3;
	{
		struct shard_http_req rq;
		struct shard_resp err;
		struct shard_job job;

		http_req(&rq, &mix[1], &b[1]);
		assert_int_equal(shard_walk_prepare(e->u, &rq, &job, &err,
						    &cnt_mem, 1), 0);
		assert_int_equal(job.n_parts, 0);
		shard_resp_release(&job.resp);
	}
	for (size_t i = 0; i < N_MIX; i++)
		st_body_free(&b[i]);
	assert_int_equal(mem_live, 0);
	ffn_scratch_free(s);
}

/* Passes counted in lcore's rows-per-pass histogram. */
static uint64_t
passes(const struct shard_unit *u, unsigned int lcore)
{
	uint64_t n = 0;

	for (int b = 0; b < SHARD_BATCH_BUCKETS; b++)
		n += u->stats[lcore].batch_hist[b];
	return n;
}

/*
 * shard_parts_run batches parts as shard_jobs_compute batches jobs: the
 * slice 2 of every split job of the mix in one call takes fewer passes
 * than there are (part, layer) pairs and finishes nothing; then slices 1
 * and 0 of every job together (two parts of one job in one call) finish
 * each job exactly once, with the answer of the job computed whole.
 */
static void
test_split_batched(void **state)
{
	struct env *e = *state;
	struct shard_job jobs[N_MIX], *done[2 * N_MIX];
	struct shard_part *pp[2 * N_MIX];
	struct st_body b[N_MIX];
	struct ffn_scratch *s = ffn_scratch_new(e->u->model, 64, -1);
	unsigned int n = 0, pairs = 0, nd;

	ffn_model_set_engine(e->u->model, FFN_ENGINE_KERNEL, 0);
	e->u->split_min_rows = 1;
	e->u->split_parts = 3;
	for (size_t i = 0; i < N_MIX; i++) {
		struct shard_http_req rq;
		struct shard_resp err;

		make_body(&b[i], &mix[i], 700 + i, 0);
		http_req(&rq, &mix[i], &b[i]);
		assert_int_equal(shard_walk_prepare(e->u, &rq, &jobs[i], &err,
						    &cnt_mem, 1), 0);
		if (jobs[i].n_parts > 0) {
			pp[n++] = &jobs[i].parts[2];
			pairs += jobs[i].req.n_layers;
		}
	}
	assert_int_equal(shard_parts_run(pp, n, s, 6, done), 0);
	assert_true(passes(e->u, 6) > 0);
	assert_true(passes(e->u, 6) < pairs);
	n = 0;
	for (size_t i = 0; i < N_MIX; i++)
		if (jobs[i].n_parts > 0) {
			pp[n++] = &jobs[i].parts[0];
			pp[n++] = &jobs[i].parts[1];
		}
	nd = shard_parts_run(pp, n, s, 6, done);
	assert_int_equal(nd, n / 2);
	for (unsigned int k = 0; k < nd; k++) {
		assert_int_equal(done[k]->parts_left, 0);
		for (unsigned int l = 0; l < k; l++)
			assert_ptr_not_equal(done[k], done[l]);
	}
	assert_int_equal(e->u->stats[6].split_jobs, nd);
	e->u->split_min_rows = 0;
	for (size_t i = 0; i < N_MIX; i++) {
		uint8_t *got, *want;
		size_t wlen;

		if (jobs[i].n_parts == 0) {
			struct shard_job *jp = &jobs[i];

			shard_jobs_compute(&jp, 1, s, 1);
			shard_job_finish(&jobs[i], 1);
		}
		assert_int_equal(jobs[i].resp.status, 200);
		got = st_flat(&jobs[i].resp);
		assert_non_null(got);
		memset(got + 8, 0, 4);
		want = alone(e->u, &mix[i], &b[i], s, &wlen);
		assert_int_equal(jobs[i].resp.len, wlen);
		assert_frames_close(got, want, wlen, jobs[i].resp.content_type,
				    &mix[i]);
		free(got);
		free(want);
		shard_resp_release(&jobs[i].resp);
		st_body_free(&b[i]);
	}
	assert_int_equal(mem_live, 0);
	ffn_scratch_free(s);
}

/* One worker of test_split_threads: part idx of every split job. */
struct runner {
	struct shard_job *jobs;
	size_t n;
	uint32_t idx;
	unsigned int lcore;
	unsigned int finished;
	struct ffn_scratch *s;
};

static void *
run_parts(void *arg)
{
	struct runner *r = arg;

	for (size_t i = 0; i < r->n; i++) {
		struct shard_job *j = &r->jobs[r->idx == 0 ? i : r->n - 1 - i];

		if (j->n_parts > 0 &&
		    shard_part_run(&j->parts[r->idx], r->s, r->lcore))
			r->finished++;
	}
	return NULL;
}

/*
 * Two threads run the two parts of every split job at once (one from the
 * front of the list, one from the back, so they meet on the same jobs):
 * each job is finished exactly once, by whichever part ends last, and its
 * answer equals the job computed whole. Rounds repeat to vary the races.
 */
static void
test_split_threads(void **state)
{
	struct env *e = *state;
	struct shard_job jobs[N_MIX];
	struct st_body b[N_MIX];
	struct ffn_scratch *sw = ffn_scratch_new(e->u->model, 64, -1);
	uint64_t split_total = 0;

	ffn_model_set_engine(e->u->model, FFN_ENGINE_KERNEL, 0);
	for (int round = 0; round < 20; round++) {
		struct runner r[2];
		pthread_t th[2];
		unsigned int n_split = 0;

		e->u->split_min_rows = 1;
		e->u->split_parts = 2;
		for (size_t i = 0; i < N_MIX; i++) {
			struct shard_http_req rq;
			struct shard_resp err;

			make_body(&b[i], &mix[i], 500 + i + round, 0);
			http_req(&rq, &mix[i], &b[i]);
			assert_int_equal(shard_walk_prepare(e->u, &rq,
					&jobs[i], &err, &cnt_mem, 1), 0);
			n_split += jobs[i].n_parts > 0;
		}
		assert_int_equal(n_split, N_MIX - 1);	/* all but K = 0 */
		for (uint32_t t = 0; t < 2; t++) {
			r[t] = (struct runner){ jobs, N_MIX, t, 4 + t, 0,
						ffn_scratch_new(e->u->model,
								64, -1) };
			assert_non_null(r[t].s);
			assert_int_equal(pthread_create(&th[t], NULL,
							run_parts, &r[t]), 0);
		}
		for (int t = 0; t < 2; t++) {
			pthread_join(th[t], NULL);
			ffn_scratch_free(r[t].s);
		}
		assert_int_equal(r[0].finished + r[1].finished, n_split);
		split_total += n_split;
		e->u->split_min_rows = 0;
		for (size_t i = 0; i < N_MIX; i++) {
			uint8_t *got, *want;
			size_t wlen;

			if (jobs[i].n_parts == 0) {
				struct shard_job *jp = &jobs[i];

				shard_jobs_compute(&jp, 1, sw, 1);
				shard_job_finish(&jobs[i], 1);
			}
			assert_int_equal(jobs[i].resp.status, 200);
			got = st_flat(&jobs[i].resp);
			assert_non_null(got);
			memset(got + 8, 0, 4);
			want = alone(e->u, &mix[i], &b[i], sw, &wlen);
			assert_int_equal(jobs[i].resp.len, wlen);
			assert_frames_close(got, want, wlen,
					    jobs[i].resp.content_type, &mix[i]);
			free(got);
			free(want);
			shard_resp_release(&jobs[i].resp);
			st_body_free(&b[i]);
		}
	}
	assert_int_equal(e->u->stats[4].split_jobs + e->u->stats[5].split_jobs,
			 split_total);
	assert_int_equal(e->u->stats[4].split_parts, split_total);
	assert_int_equal(e->u->stats[5].split_parts, split_total);
	assert_int_equal(mem_live, 0);
	ffn_scratch_free(sw);
}

#define T(f) cmocka_unit_test_setup_teardown(f, unit_setup, unit_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_mix_equals_alone_kernel),
		T(test_bug_mix_equals_alone_auto),
		T(test_mix_unaligned),
		T(test_two_units),
		T(test_payload_view_or_copy),
		T(test_latency_field),
		T(test_response_limit),
		T(test_counters),
		T(test_release_idempotent),
		T(test_alloc_failure),
		T(test_bug_compute_failure_handle),
		T(test_bug_compute_failure_every_job),
		T(test_split_parts),
		T(test_split_threads),
		T(test_split_batched),
	};

	st_filter();
	return cmocka_run_group_tests(tests, setup, teardown);
}
