/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The layer split (issue 4) on a K-quant unit: a vindex written by
 * mkvindex --quant q4k (H 300; widths 600, 300 and 200, so layers have
 * three, two and one 256-feature blocks) served by a unit that splits
 * every binary walk-ffn job into 2 and 3 parts. Each part's slices are
 * whole blocks (an empty share when a layer has fewer blocks than parts);
 * the answer, f32 frames of all three layers, equals the job computed
 * whole within f32 summation order (relative L2 1e-4 per result; a block
 * lost or counted twice is off by tens of per cent), on the f32 and the
 * Q8_K input paths.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ffn_kq.h"
#include "kq_fixture.h"
#include "shard_test_util.h"

#define H 300
#define S 3
#define CT_F32 "application/x-larql-ffn"

static const unsigned widths[3] = { 600, 300, 200 };
static char dir[64];

static int
setup(void **state)
{
	struct vw_opts o = kq_fixture_opts(H, 3, widths, 17);

	(void)state;
	return kq_fixture_write(dir, sizeof(dir), "shard-kq", &o,
				FFN_KQ_Q6_PRIVATE);
}

static int
teardown(void **state)
{
	(void)state;
	kq_fixture_remove(dir);
	return 0;
}

/* Prepare the batch of layers 0, 1, 2 over x (S rows) on u. */
static void
prepare(struct shard_unit *u, struct st_body *b, struct shard_job *job)
{
	static const uint32_t layers[3] = { 0, 1, 2 };
	struct shard_http_req rq;
	struct shard_resp err;
	float x[S * H];

	for (int i = 0; i < S * H; i++)
		x[i] = (float)sin(0.37 * i + 1.0);
	st_body_alloc(b, 32 + 12 + sizeof(x), 0);
	st_batch(b, layers, 3, S, 1, x, sizeof(x));
	st_req(&rq, HTTP_M_POST, "/v1/walk-ffn", CT_F32, NULL, NULL, b->p,
	       b->len);
	assert_int_equal(shard_walk_prepare(u, &rq, job, &err,
					    &shard_mem_heap, 0), 0);
}

static void
test_split_kq(void **state)
{
	struct shard_unit *u = calloc(1, sizeof(*u));
	struct ffn_scratch *s;

	(void)state;
	assert_non_null(u);
	assert_int_equal(st_unit(u, dir, -1, -1, NULL), 0);
	assert_int_equal(ffn_model_info(u->model)->layout, FFN_LAYOUT_Q4K);
	s = ffn_scratch_new(u->model, 8, -1);
	assert_non_null(s);
	for (int q8 = 0; q8 < 2; q8++)
		for (unsigned int parts = 2; parts <= 3; parts++) {
			struct shard_job whole, split, *jp = &whole;
			struct st_body bw, bs;
			uint8_t *a, *b;
			size_t per = 12 + (size_t)S * H * 4;

			ffn_model_set_kq_q8k(u->model, q8);
			u->split_min_rows = 0;
			prepare(u, &bw, &whole);
			assert_int_equal(whole.n_parts, 0);
			shard_jobs_compute(&jp, 1, s, 0);
			shard_job_finish(&whole, 0);
			u->split_min_rows = S;
			u->split_parts = parts;
			prepare(u, &bs, &split);
			assert_int_equal(split.n_parts, parts);
			for (int p = (int)parts - 1; p >= 0; p--)
				assert_int_equal(shard_part_run(
					&split.parts[p], s, 0), p == 0);
			assert_int_equal(split.resp.status, 200);
			assert_int_equal(split.resp.len, whole.resp.len);
			a = st_flat(&whole.resp);
			b = st_flat(&split.resp);
			assert_non_null(a);
			assert_non_null(b);
			/* batch header (latency aside), then 3 results */
			assert_memory_equal(a, b, 8);
			assert_int_equal(whole.resp.len, 12 + 3 * per);
			for (int r = 0; r < 3; r++) {
				const uint8_t *ra = a + 12 + r * per;
				const uint8_t *rb = b + 12 + r * per;
				double num = 0, den = 0;

				assert_memory_equal(ra, rb, 12);
				for (size_t i = 0; i < (size_t)S * H; i++) {
					double va = st_getf(ra + 12 + 4 * i);
					double vb = st_getf(rb + 12 + 4 * i);

					num += (va - vb) * (va - vb);
					den += va * va;
				}
				assert_true(den > 0);
				if (sqrt(num / den) >= 1e-4)
					fail_msg("q8k %d parts %u result %d: "
						 "%g", q8, parts, r,
						 sqrt(num / den));
			}
			free(a);
			free(b);
			shard_resp_release(&whole.resp);
			shard_resp_release(&split.resp);
			st_body_free(&bw);
			st_body_free(&bs);
		}
	assert_int_equal(u->stats[0].split_jobs, 4);
	ffn_scratch_free(s);
	shard_unit_fini(u);
	free(u);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_kq),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
