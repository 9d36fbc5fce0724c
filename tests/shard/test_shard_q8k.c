/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * POST /v1/walk-ffn-q8k (issue 6): frames, every check, and answers equal
 * to /v1/walk-ffn on the dequantised input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shard_test_util.h"

#define H 512			/* two Q8_K blocks */

struct env {
	char dir[64];
	struct shard_unit u;
	float x[H];		/* dequantised input */
	uint8_t entry[8 + H + 8 + 32];	/* one entry without layer/n */
};

static int
setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	struct vw_opts o;
	char err[256];

	snprintf(e->dir, sizeof(e->dir), "/tmp/shard_q8k_XXXXXX");
	if (mkdtemp(e->dir) == NULL)
		return -1;
	vw_defaults(&o);
	o.hidden = H;
	o.intermediate = 64;
	o.layers = 4;
	o.seed = 11;
	if (vw_write(e->dir, &o, err, sizeof(err)) < 0 ||
	    st_unit(&e->u, e->dir, 1, 2, NULL) < 0)
		return -1;
	*state = e;
	return 0;
}

static int
teardown(void **state)
{
	struct env *e = *state;

	shard_unit_fini(&e->u);
	st_rmtree(e->dir);
	free(e);
	return 0;
}

/* A Q8_K entry as llama.cpp quantises (d = max|x| / 127, q = round). */
static size_t
put_entry(uint8_t *p, uint32_t layer, uint32_t nb, unsigned int seed,
	  float *deq)
{
	int8_t *qs = (int8_t *)(p + 8);
	uint8_t *d = p + 8 + (size_t)nb * 256;
	uint8_t *sums = d + 4 * (size_t)nb;

	st_put32(p, layer);
	st_put32(p + 4, nb);
	srand(seed);
	for (uint32_t b = 0; b < nb; b++) {
		float v[256], amax = 0, scale;

		for (int i = 0; i < 256; i++) {
			v[i] = (float)(rand() % 2001 - 1000) / 250.0f;
			amax = fmaxf(amax, fabsf(v[i]));
		}
		scale = amax / 127.0f;
		memcpy(d + 4 * b, &scale, 4);
		for (int g = 0; g < 8; g++) {
			int16_t s = 0;

			for (int i = 0; i < 32; i++) {
				int8_t q = (int8_t)lrintf(v[g * 32 + i] / scale);

				qs[b * 256 + g * 32 + i] = q;
				s = (int16_t)(s + q);
				if (deq)
					deq[b * 256 + g * 32 + i] = scale *
						(float)q;
			}
			memcpy(sums + 2 * (b * 8 + g), &s, 2);
		}
	}
	return 8 + (size_t)nb * (256 + 4 + 16);
}

static void
handle(struct env *e, const void *body, size_t len, struct shard_resp *r)
{
	struct shard_http_req rq;

	st_req(&rq, HTTP_M_POST, "/v1/walk-ffn-q8k", NULL, NULL, NULL, body,
	       len);
	shard_handle(&e->u, &rq, r, &shard_mem_heap, NULL, 0);
}

/* Two entries answer exactly what walk-ffn answers for x = d * q. */
static void
test_answers(void **state)
{
	struct env *e = *state;
	static uint8_t body[4 + 2 * (8 + 2 * 276)];
	float x1[H], x2[H];
	struct shard_resp r, w;
	struct st_body wb;
	struct shard_http_req rq;
	size_t len = 4;
	uint8_t *f, *g;

	st_put32(body, 2);
	len += put_entry(body + len, 2, 2, 5, x1);
	len += put_entry(body + len, 1, 2, 6, x2);
	handle(e, body, len, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type,
			    "application/x-larql-ffn-q8k-batch");
	assert_int_equal(r.len, 4 + 2 * (8 + 4 * H));
	f = st_flat(&r);
	assert_int_equal(st_get32(f), 2);
	for (int i = 0; i < 2; i++) {
		const uint8_t *ent = f + 4 + (size_t)i * (8 + 4 * H);

		st_body_alloc(&wb, 16 + 4 * H, 0);
		st_single(&wb, i == 0 ? 2 : 1, 1, 1, i == 0 ? x1 : x2,
			  4 * H);
		st_req(&rq, HTTP_M_POST, "/v1/walk-ffn",
		       "application/x-larql-ffn", NULL, NULL, wb.p, wb.len);
		shard_handle(&e->u, &rq, &w, &shard_mem_heap, NULL, 0);
		assert_int_equal(w.status, 200);
		g = st_flat(&w);
		assert_int_equal(st_get32(ent), i == 0 ? 2 : 1);
		assert_int_equal(st_get32(ent + 4), H);
		assert_memory_equal(ent + 8, g + 12, 4 * H);
		free(g);
		shard_resp_release(&w);
		st_body_free(&wb);
	}
	free(f);
	shard_resp_release(&r);
}

static void
expect_error(struct env *e, const void *body, size_t len, int status,
	     const char *msg)
{
	struct shard_resp r;
	char want[256];
	uint8_t *f;

	handle(e, body, len, &r);
	assert_int_equal(r.status, status);
	f = st_flat(&r);
	assert_non_null(f);
	if (msg != NULL) {
		snprintf(want, sizeof(want), "{\"error\":\"%s\"}", msg);
		assert_string_equal((char *)f, want);
	} else {
		assert_memory_equal(f, "{\"error\":\"", 10);
	}
	free(f);
	shard_resp_release(&r);
}

/* Truncated anywhere: 400, never a crash or a read past the body. */
static void
test_truncation(void **state)
{
	struct env *e = *state;
	uint8_t body[4 + 8 + 2 * 276];
	size_t len = 4;

	st_put32(body, 1);
	len += put_entry(body + len, 1, 2, 7, NULL);
	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);

		memcpy(copy, body, cut);
		expect_error(e, copy, cut, 400, NULL);
		free(copy);
	}
	/* A byte too many is an error too. */
	{
		uint8_t more[sizeof(body) + 1];

		memcpy(more, body, len);
		more[len] = 0;
		expect_error(e, more, len + 1, 400,
			     "q8k: 1 bytes after the last entry");
	}
}

/* The checks in order: blocks vs hidden (where the reference crashes),
 * then ownership and range with walk-ffn's messages (spec/wire.md §4). */
static void
test_checks(void **state)
{
	struct env *e = *state;
	uint8_t body[4 + 2 * (8 + 3 * 276)];
	size_t len;

	st_put32(body, 1);
	len = 4 + put_entry(body + 4, 1, 1, 8, NULL);
	expect_error(e, body, len, 400, "q8k: entry 0 has 1 blocks of 256 "
		     "values, hidden_size is 512");
	len = 4 + put_entry(body + 4, 3, 2, 8, NULL);
	expect_error(e, body, len, 400,
		     "layer 3 not served by this shard (owned: 1\u20132)");
	/* Ownership of every entry is checked before any range check. */
	st_put32(body, 2);
	len = 4 + put_entry(body + 4, 1, 2, 8, NULL);
	len += put_entry(body + len, 0, 2, 9, NULL);
	expect_error(e, body, len, 400,
		     "layer 0 not served by this shard (owned: 1\u20132)");
}

/* Exactly the bytes asked for (shard_mem_heap rounds up to 64): under
 * valgrind (shard_q8k_valgrind) a write past the answer shows. */
static void *
exact_alloc(void *arg, size_t size)
{
	(void)arg;
	return malloc(size);
}

static void
exact_free(void *arg, void *p)
{
	(void)arg;
	free(p);
}

/* No entries: the 4-byte count alone, and nothing written past it (the
 * count used to be written with entry 0's header, 8 bytes beyond; found
 * by tests/fuzz's q8k harness). */
static void
test_zero_entries(void **state)
{
	static const struct shard_mem exact = {
		.alloc = exact_alloc, .free = exact_free, .arg = NULL,
	};
	struct env *e = *state;
	uint8_t body[4] = { 0 };
	struct shard_http_req rq;
	struct shard_resp r;
	uint8_t *f;

	st_req(&rq, HTTP_M_POST, "/v1/walk-ffn-q8k", NULL, NULL, NULL, body,
	       4);
	shard_handle(&e->u, &rq, &r, &exact, NULL, 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.len, 4);
	f = st_flat(&r);
	assert_int_equal(st_get32(f), 0);
	free(f);
	shard_resp_release(&r);
}

/* Whole-model unit: the range message. */
static void
test_out_of_range(void **state)
{
	struct env *e = *state;
	struct shard_unit *u = calloc(1, sizeof(*u));
	uint8_t body[4 + 8 + 2 * 276];
	struct shard_http_req rq;
	struct shard_resp r;
	size_t len = 4;
	uint8_t *f;

	assert_int_equal(st_unit(u, e->dir, -1, -1, NULL), 0);
	st_put32(body, 1);
	len += put_entry(body + 4, 4, 2, 3, NULL);
	st_req(&rq, HTTP_M_POST, "/v1/walk-ffn-q8k", NULL, NULL, NULL, body,
	       len);
	shard_handle(u, &rq, &r, &shard_mem_heap, NULL, 0);
	assert_int_equal(r.status, 400);
	f = st_flat(&r);
	assert_string_equal((char *)f,
		"{\"error\":\"layer 4 out of range (num_layers = 4)\"}");
	free(f);
	shard_resp_release(&r);
	shard_unit_fini(u);
	free(u);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answers),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_zero_entries),
		cmocka_unit_test(test_out_of_range),
	};

	st_filter();
	return cmocka_run_group_tests(tests, setup, teardown);
}
