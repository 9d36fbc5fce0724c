/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Issue 2: "no allocation per request on the binary path beyond
 * caller-provided buffers". This executable interposes the allocator
 * (malloc and friends, for every caller in the process: lib/wire,
 * lib/quant, libc) and counts calls while whole binary requests run
 * through lib/wire: classification, negotiation, decode, validation,
 * payload decoding in each format, in-place narrowing into slots the
 * caller allocated beforehand, framing, and every §4 error with its JSON
 * body. The count must be 0. (One warm-up request first: lazy one-time
 * set-up such as kernel dispatch is not per request.)
 * Not built with the sanitizers, which have their own allocator.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "wire.h"
#include "wire_test_util.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static volatile int counting;
static volatile unsigned long allocs;

void *
malloc(size_t n)
{
	if (counting)
		allocs++;
	return __libc_malloc(n);
}

void *
calloc(size_t a, size_t b)
{
	if (counting)
		allocs++;
	return __libc_calloc(a, b);
}

void *
realloc(void *p, size_t n)
{
	if (counting)
		allocs++;
	return __libc_realloc(p, n);
}

void *
aligned_alloc(size_t al, size_t n)
{
	if (counting)
		allocs++;
	return __libc_memalign(al, n);
}

int
posix_memalign(void **p, size_t al, size_t n)
{
	if (counting)
		allocs++;
	*p = __libc_memalign(al, n);
	return *p ? 0 : ENOMEM;
}

void
free(void *p)
{
	__libc_free(p);
}

#define CT_F32 "application/x-larql-ffn"
#define ACCEPT "application/x-larql-ffn-i8, application/x-larql-ffn-f16, " \
	"application/x-larql-ffn"

static const struct wire_model model = {
	.loaded = true, .hidden = 4, .num_layers = 8,
	.owns_all = false, .first = 0, .last = 5,
};

/* Caller-provided memory, allocated before counting starts. */
static float *xbuf;
static void *slots[3];
static size_t slot_sz;

/*
 * One request through the binary path as lib/shard drives it. Returns
 * the HTTP status it would answer (and leaves the body in out).
 */
static int
one_request(const void *body, size_t len, const char *ct, enum wire_fmt *rf,
	    uint8_t *out, size_t *out_len)
{
	struct wire_opts o = { .f16 = true, .i8 = true };
	struct wire_req r;
	struct wire_error e;
	struct iovec iov[4];
	struct wire_frame fr;
	enum wire_fmt in;
	char ebody[1024];
	int n;

	*out_len = 0;
	if (!wire_request_format(ct, strlen(ct), &in))
		return -1;
	*rf = wire_response_format(ACCEPT, strlen(ACCEPT), &o);
	if (wire_req_decode(&r, body, len, in, &e) != 0 ||
	    wire_req_validate(&r, &model, &e) != 0) {
		n = wire_error_json(&e, ebody, sizeof(ebody));
		if (n > 0) {
			memcpy(out, ebody, (size_t)n);
			*out_len = (size_t)n;
		}
		return e.status;
	}
	if (wire_req_payload_view(&r) == NULL &&
	    wire_req_payload_f32(&r, xbuf, 64) != 0)
		return 500;
	for (uint32_t i = 0; i < r.n_layers && i < 3; i++) {
		float *y = wire_slot_f32(slots[i], *rf, r.seq_len, 4);

		for (uint32_t k = 0; k < r.seq_len * 4; k++)
			y[k] = (float)k * 0.5f - (float)i;
		if (wire_slot_finish(slots[i], *rf, wire_req_layer(&r, i),
				     r.seq_len, 4, &iov[1 + i]) != 0)
			return 500;
	}
	if (wire_frame_finish(&fr, iov, r.n_layers, 1.5) != 0)
		return 500;
	for (unsigned int i = 0; i < fr.iovcnt; i++) {
		memcpy(out + *out_len, fr.iov[i].iov_base, fr.iov[i].iov_len);
		*out_len += fr.iov[i].iov_len;
	}
	return 200;
}

struct reqcase {
	struct bb b;
	const char *ct;
	int want;
};

static void
build_cases(struct reqcase *c, int *nc)
{
	static const uint32_t hdr[][4] = {
		{ 2, 2, 1, 8092 },	/* ok */
		{ 9, 1, 1, 8092 },	/* out of range */
		{ 6, 1, 1, 8092 },	/* not owned */
		{ 1, 0, 1, 8092 },	/* seq_len 0 */
		{ 1, 1, 0, 8092 },	/* flags */
	};
	int n = 0;

	for (int f = 0; f < 3; f++) {
		const char *ct = f == 0 ? CT_F32 : f == 1 ?
			CT_F32 "-f16" : CT_F32 "-i8";

		for (size_t h = 0; h < sizeof(hdr) / sizeof(hdr[0]); h++) {
			struct bb *b = &c[n].b;
			uint32_t rows = hdr[h][1] ? hdr[h][1] : 1;

			b->n = 0;
			for (int k = 0; k < 4; k++)
				bb_u32(b, hdr[h][k]);
			for (uint32_t r = 0; r < rows; r++) {
				if (f == 2) {
					bb_f32(b, 0.5f);
					bb_f32(b, 0.0f);
				}
				for (int k = 0; k < 4; k++) {
					if (f == 0)
						bb_f32(b, (float)k - 1.5f);
					else if (f == 1)
						bb_u16(b, 0x3c00);
					else
						bb_u8(b, (uint8_t)(k * 9 - 5));
				}
			}
			c[n].ct = ct;
			c[n].want = h == 0 ? 200 : 400;
			n++;
		}
		/* batch of three layers, one listed twice */
		struct bb *b = &c[n].b;

		b->n = 0;
		bb_u32(b, 0xFFFFFFFFu);
		bb_u32(b, 3);
		bb_u32(b, 4);
		bb_u32(b, 4);
		bb_u32(b, 0);
		bb_u32(b, 1);
		bb_u32(b, 1);
		bb_u32(b, 8092);
		if (f == 2) {
			bb_f32(b, 2.0f);
			bb_f32(b, 0.0f);
		}
		for (int k = 0; k < 4; k++) {
			if (f == 0)
				bb_f32(b, 1.0f);
			else if (f == 1)
				bb_u16(b, 0xbc00);
			else
				bb_u8(b, 3);
		}
		c[n].ct = ct;
		c[n].want = 200;
		n++;
		/* truncated in the fixed header, and too short */
		c[n] = c[n - 1];
		c[n].b.n = 24;
		c[n].want = 400;
		n++;
		c[n] = c[n - 1];
		c[n].b.n = 7;
		n++;
	}
	*nc = n;
}

static void
test_binary_path_allocates_nothing(void **state)
{
	static struct reqcase c[32];
	static uint8_t out[3][4096];
	size_t out_len[32];
	int status[32];
	enum wire_fmt rf;
	int nc;

	(void)state;
	build_cases(c, &nc);
	xbuf = malloc(64 * sizeof(float));
	for (int f = 0; f < 3; f++)
		if (wire_slot_size((enum wire_fmt)f, 2, 4) > slot_sz)
			slot_sz = wire_slot_size((enum wire_fmt)f, 2, 4);
	for (int i = 0; i < 3; i++)
		slots[i] = aligned_alloc(WIRE_SLOT_ALIGN, slot_sz);
	/* warm-up: one-time lazy set-up is not per request */
	one_request(c[0].b.b, c[0].b.n, c[0].ct, &rf, out[0], &out_len[0]);

	allocs = 0;
	counting = 1;
	for (int i = 0; i < nc; i++) {
		size_t ol;

		status[i] = one_request(c[i].b.b, c[i].b.n, c[i].ct, &rf,
					out[i % 3], &ol);
		out_len[i] = ol;
	}
	counting = 0;
	assert_int_equal(allocs, 0);
	/* and the requests did what they say (not an empty loop) */
	for (int i = 0; i < nc; i++) {
		if (status[i] != c[i].want)
			fail_msg("case %d: status %d, want %d", i, status[i],
				 c[i].want);
		assert_true(out_len[i] > 0);
	}
	assert_int_equal(rf, WIRE_FMT_I8);
	for (int i = 0; i < 3; i++)
		free(slots[i]);
	free(xbuf);
}

/* The counter itself works: the test above can fail. */
static void
test_counter_counts(void **state)
{
	void *p;

	(void)state;
	allocs = 0;
	counting = 1;
	p = malloc(16);
	counting = 0;
	free(p);
	assert_int_equal(allocs, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_counts),
		cmocka_unit_test(test_binary_path_allocates_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
