/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The layer split of shard.h (issue 4): shard_walk_prepare → a job split
 * into parts (split_min_rows) → shard_parts_run, in any order, batched,
 * on several threads → shard_job_finish once the last part is done. Split
 * answers equal the job computed whole; counters; memory ownership.
 * Model: random llama, H 64, nf 96, 3 layers (tools/mkvindex).
 */
#include "shard_jobs_util.h"

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
		T(test_split_parts),
		T(test_split_threads),
		T(test_split_batched),
	};

	st_filter();
	return cmocka_run_group_tests(tests, setup, teardown);
}
