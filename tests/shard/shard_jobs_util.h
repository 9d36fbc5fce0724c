/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * What test_shard_jobs.c and test_shard_jobs_split.c share: the model
 * (random llama, H 64, nf 96, 3 layers; tools/mkvindex), a unit per test,
 * a shard_mem that counts outstanding job memory, the mix of requests,
 * and the comparison of a batched answer with the job computed alone.
 */
#ifndef SHARD_JOBS_UTIL_H
#define SHARD_JOBS_UTIL_H

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

static inline int
setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	if (e == NULL || st_write_model(e->dir, sizeof(e->dir), 0) < 0 ||
	    st_write_model(e->exdir, sizeof(e->exdir), 1) < 0)
		return -1;
	*state = e;
	return 0;
}

static inline int
teardown(void **state)
{
	struct env *e = *state;

	st_rmtree(e->dir);
	st_rmtree(e->exdir);
	free(e);
	return 0;
}

/* A fresh unit per test (clean counters); i8 responses enabled. */
static inline int
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

static inline int
unit_teardown(void **state)
{
	struct env *e = *state;

	shard_unit_fini(e->u);
	free(e->u);
	e->u = NULL;
	return 0;
}

/* A shard_mem that counts what is outstanding. */

static inline void *
cnt_alloc(void *arg, size_t size)
{
	void *p = aligned_alloc(64, (size + 63) & ~(size_t)63);

	(void)arg;
	if (p != NULL)
		mem_live++;
	return p;
}

static inline void
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
static inline void
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

static inline void
http_req(struct shard_http_req *rq, const struct spec *sp,
	 const struct st_body *b)
{
	st_req(rq, HTTP_M_POST, "/v1/walk-ffn", sp->ct, sp->accept, NULL,
	       b->p, b->len);
}

/* The answer of one job computed alone (flat, latency zeroed). */
static inline uint8_t *
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
static inline float
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
static inline void
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


#endif /* SHARD_JOBS_UTIL_H */
