/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The split lifecycle of shard.h (the appliance's path):
 * shard_walk_prepare → shard_jobs_compute (several jobs, rows at the same
 * layer batched) → shard_job_finish → shard_resp_release. Batched answers
 * equal answers computed alone; latency_ms is t_end - t_start (§5.2); the
 * response limit (413); unaligned bodies; counters; memory ownership.
 * The layer split (jobs in parts) is test_shard_jobs_split.c's.
 * Model: random llama, H 64, nf 96, 3 layers (tools/mkvindex).
 */
#include "shard_jobs_util.h"

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

/* Our kernels: batched rows give the answer they give alone (run_mix:
 * headers equal, values within rounding). */
static void
test_mix_equals_alone_kernel(void **state)
{
	struct env *e = *state;

	ffn_model_set_engine(e->u->model, FFN_ENGINE_KERNEL, 0);
	run_mix(e->u, 0);
}

/*
 * Default engine (AUTO: OpenBLAS from 17 rows per pass): a request batched
 * with others gets the answer it gets alone. The mix's first pass has 20
 * rows at layer 0 and goes to cblas_sgemm, while each of its jobs alone
 * (<= 6 rows) goes to our kernels: the f32 sums run in another order, so
 * run_mix asserts frame headers equal byte for byte and every value within
 * f32 rounding plus one step of the response format (assert_frames_close),
 * not equal bytes.
 */
static void
test_mix_equals_alone_auto(void **state)
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
	assert_int_equal(err.fmt_out, WIRE_FMT_NONE);
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
	assert_int_equal(u->stats[1].requests[SHARD_R_WALK]
			 [st_status_idx(200)], N_MIX + 2);
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
	assert_int_equal(e->u->stats[5].requests[SHARD_R_WALK]
			 [st_status_idx(503)], 1);
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
 * (H 4) makes ffn_compute fail with -EINVAL. Here through shard_handle:
 * its 500 body must survive the call (the stack it ran on is scribbled
 * over before the body is read), and no job memory stays allocated.
 */
static void
test_compute_failure_handle(void **state)
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

/* Two jobs in one pass: both are answered 500 "FFN compute failed", not
 * only the one that led the pass (see test_compute_failure_handle). */
static void
test_compute_failure_every_job(void **state)
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

/* The grid's per-layer compute times (spec/wire.md §9.3): each layer's
 * passes call layer_time once, on the computing lcore, with the requests
 * that waited for it: A {1}, B {2, 1} and C {2} run layer 1 (A), layer 2
 * (B and C), then layer 1 (B). */
struct lt_call {
	unsigned int lcore;
	uint32_t layer;
	uint64_t ns;
	unsigned int requests;
};
static struct lt_call lt_calls[8];
static unsigned int lt_n;

static void
record_layer_time(void *arg, unsigned int lcore, uint32_t layer, uint64_t ns,
		  unsigned int requests)
{
	assert_ptr_equal(arg, &lt_n);
	assert_true(lt_n < 8);
	lt_calls[lt_n++] = (struct lt_call){ lcore, layer, ns, requests };
}

static void
test_layer_time(void **state)
{
	struct env *e = *state;
	static const struct spec sps[3] = {
		{ { 1 }, SINGLE, 2, CT_F32, NULL },
		{ { 2, 1 }, 2, 3, CT_F32, CT_F16 },
		{ { 2 }, SINGLE, 1, CT_F32, NULL },
	};
	static const struct lt_call want[3] = {
		{ 3, 1, 0, 1 }, { 3, 2, 0, 2 }, { 3, 1, 0, 1 },
	};
	struct shard_job jobs[3], *jp[3];
	struct st_body b[3];
	struct ffn_scratch *s = ffn_scratch_new(e->u->model, 64, -1);

	lt_n = 0;
	e->u->layer_time = record_layer_time;
	e->u->layer_time_arg = &lt_n;
	for (int i = 0; i < 3; i++) {
		struct shard_http_req rq;
		struct shard_resp err;

		make_body(&b[i], &sps[i], 90 + i, 0);
		http_req(&rq, &sps[i], &b[i]);
		assert_int_equal(shard_walk_prepare(e->u, &rq, &jobs[i], &err,
						    &cnt_mem, 0), 0);
		jp[i] = &jobs[i];
	}
	shard_jobs_compute(jp, 3, s, 3);
	assert_int_equal(lt_n, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(lt_calls[i].lcore, want[i].lcore);
		assert_int_equal(lt_calls[i].layer, want[i].layer);
		assert_int_equal(lt_calls[i].requests, want[i].requests);
		assert_true(lt_calls[i].ns > 0);
		shard_job_finish(&jobs[i], 3);
		shard_resp_release(&jobs[i].resp);
		st_body_free(&b[i]);
	}
	e->u->layer_time = NULL;
	e->u->layer_time_arg = NULL;
	ffn_scratch_free(s);
	assert_int_equal(mem_live, 0);
}


#define T(f) cmocka_unit_test_setup_teardown(f, unit_setup, unit_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_mix_equals_alone_kernel),
		T(test_mix_equals_alone_auto),
		T(test_mix_unaligned),
		T(test_two_units),
		T(test_payload_view_or_copy),
		T(test_latency_field),
		T(test_response_limit),
		T(test_counters),
		T(test_release_idempotent),
		T(test_alloc_failure),
		T(test_compute_failure_handle),
		T(test_compute_failure_every_job),
		T(test_layer_time),
	};

	st_filter();
	return cmocka_run_group_tests(tests, setup, teardown);
}
