/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Binary responses (spec/wire.md §5.2, §5.3, §8): the worked frames byte
 * for byte in f32/f16/i8, single and batch, built through slots narrowed in
 * place; slot geometry, alignment, bounds and overflow.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <cmocka.h>

#include "quant.h"
#include "wire.h"
#include "wire_test_util.h"

#define LAT 7.3

/* Build a response of n results (layer[i], rows out[i]) in fresh slots,
 * finishing them in reverse order, and flatten it into buf. */
static size_t
build(enum wire_fmt fmt, uint32_t n, const uint32_t *layers,
      const float *const *out, uint32_t seq, uint32_t hidden, uint8_t *buf,
      unsigned int *iovcnt)
{
	struct iovec iov[8];
	void *slot[8];
	struct wire_frame fr;
	size_t sz = wire_slot_size(fmt, seq, hidden), len = 0;

	assert_true(sz > 0 && sz % 64 == 0);
	for (uint32_t i = 0; i < n; i++) {
		float *rows;

		slot[i] = aligned_alloc(64, sz);
		memset(slot[i], 0xa5, sz);	/* no reliance on zeroing */
		rows = wire_slot_f32(slot[i], fmt, seq, hidden);
		assert_non_null(rows);
		assert_int_equal((uintptr_t)rows % 64, 0);
		memcpy(rows, out[i], sizeof(float) * seq * hidden);
	}
	for (uint32_t i = n; i-- > 0;)
		assert_int_equal(wire_slot_finish(slot[i], fmt, layers[i], seq,
						  hidden, &iov[1 + i]), 0);
	assert_int_equal(wire_frame_finish(&fr, iov, n, LAT), 0);
	*iovcnt = fr.iovcnt;
	for (unsigned int i = 0; i < fr.iovcnt; i++) {
		memcpy(buf + len, fr.iov[i].iov_base, fr.iov[i].iov_len);
		len += fr.iov[i].iov_len;
	}
	assert_int_equal(len, fr.len);
	for (uint32_t i = 0; i < n; i++)
		free(slot[i]);
	return len;
}

static void
expect_frame(enum wire_fmt fmt, uint32_t n, const uint32_t *layers,
	     const float *const *out, uint32_t seq, uint32_t hidden,
	     const char *hex, unsigned int want_iovcnt)
{
	uint8_t got[512], want[512];
	unsigned int iovcnt;
	size_t glen = build(fmt, n, layers, out, seq, hidden, got, &iovcnt);
	size_t wlen = hex_bytes(hex, want);

	assert_int_equal(iovcnt, want_iovcnt);
	assert_int_equal(glen, wlen);
	assert_memory_equal(got, want, wlen);
}

static const float out4[4] = { 0.25f, -1.5f, 100.0f, -0.001f };
static const uint32_t l5[1] = { 5 };
static const uint32_t l5_20[2] = { 5, 20 };

static void
test_worked_single_f32(void **state)
{
	const float *o[1] = { out4 };

	(void)state;
	/* one contiguous range: header sits in front of the payload */
	expect_frame(WIRE_FMT_F32, 1, l5, o, 1, 4,
		     "05000000 01000000 9a99e940 0000803e 0000c0bf 0000c842 "
		     "6f1283ba", 1);
}

static void
test_worked_single_f16(void **state)
{
	const float *o[1] = { out4 };

	(void)state;
	expect_frame(WIRE_FMT_F16, 1, l5, o, 1, 4,
		     "05000000 01000000 9a99e940 0034 00be 4056 1994", 1);
}

static void
test_worked_single_i8(void **state)
{
	const float *o[1] = { out4 };

	(void)state;
	expect_frame(WIRE_FMT_I8, 1, l5, o, 1, 4,
		     "05000000 01000000 9a99e940 2693493f 00000000 00 fe 7f 00",
		     1);
}

static void
test_worked_batch_f32(void **state)
{
	const float *o[2] = { out4, out4 + 2 };

	(void)state;
	expect_frame(WIRE_FMT_F32, 2, l5_20, o, 1, 2,
		     "ffffffff 02000000 9a99e940 "
		     "05000000 01000000 02000000 0000803e 0000c0bf "
		     "14000000 01000000 02000000 0000c842 6f1283ba", 3);
}

static void
test_worked_batch_i8(void **state)
{
	const float *o[2] = { out4, out4 + 2 };

	(void)state;
	expect_frame(WIRE_FMT_I8, 2, l5_20, o, 1, 2,
		     "ffffffff 02000000 9a99e940 "
		     "05000000 01000000 02000000 0683413c 00000000 15 81 "
		     "14000000 01000000 02000000 2693493f 00000000 7f 00", 3);
}

static void
test_batch_f16(void **state)
{
	const float *o[2] = { out4, out4 + 2 };

	(void)state;
	/* num_values counts values (2), not bytes */
	expect_frame(WIRE_FMT_F16, 2, l5_20, o, 1, 2,
		     "ffffffff 02000000 9a99e940 "
		     "05000000 01000000 02000000 0034 00be "
		     "14000000 01000000 02000000 4056 1994", 3);
}

static void
test_zero_row_i8(void **state)
{
	static const float z[2] = { 0.0f, 0.0f };
	const float *o[1] = { z };

	(void)state;
	/* §8: an all-zero i8 row of two values has scale 1.0 */
	expect_frame(WIRE_FMT_I8, 1, l5, o, 1, 2,
		     "05000000 01000000 9a99e940 0000803f 00000000 00 00", 1);
}

static void
test_zero_results_is_batch(void **state)
{
	struct iovec iov[1];
	struct wire_frame fr;
	uint8_t want[12];

	(void)state;
	assert_int_equal(wire_frame_finish(&fr, iov, 0, LAT), 0);
	assert_int_equal(fr.iovcnt, 1);
	assert_int_equal(fr.len, 12);
	hex_bytes("ffffffff 00000000 9a99e940", want);
	assert_memory_equal(fr.iov[0].iov_base, want, 12);
	/*
	 * latency_ms to f32 rounds to nearest (Rust's `as f32`): 0.1 is
	 * 0x3dcccccd, truncation would give ...cc; 1e-46 underflows to 0;
	 * beyond f32 range is Inf (the field is informational, never an
	 * error).
	 */
	assert_int_equal(wire_frame_finish(&fr, iov, 0, 0.1), 0);
	hex_bytes("ffffffff 00000000 cdcccc3d", want);
	assert_memory_equal(fr.iov[0].iov_base, want, 12);
	assert_int_equal(wire_frame_finish(&fr, iov, 0, 2.0 / 3.0), 0);
	hex_bytes("ffffffff 00000000 abaa2a3f", want);
	assert_memory_equal(fr.iov[0].iov_base, want, 12);
	assert_int_equal(wire_frame_finish(&fr, iov, 0, 1e300), 0);
	hex_bytes("ffffffff 00000000 0000807f", want);
	assert_memory_equal(fr.iov[0].iov_base, want, 12);
}

static void
test_seq2_single_and_duplicate_layers(void **state)
{
	static const float a[4] = { 1.0f, 2.0f, -3.0f, 0.5f };
	const float *o[3] = { a, a, a };
	static const uint32_t l[3] = { 7, 7, 1 };

	(void)state;
	/* seq_len 2, hidden 2, f32 */
	expect_frame(WIRE_FMT_F32, 1, l, o, 2, 2,
		     "07000000 02000000 9a99e940 "
		     "0000803f 00000040 000040c0 0000003f", 1);
	/* the same layer twice is returned twice, in request order */
	expect_frame(WIRE_FMT_F32, 3, l, o, 2, 2,
		     "ffffffff 03000000 9a99e940 "
		     "07000000 02000000 04000000 "
		     "0000803f 00000040 000040c0 0000003f "
		     "07000000 02000000 04000000 "
		     "0000803f 00000040 000040c0 0000003f "
		     "01000000 02000000 04000000 "
		     "0000803f 00000040 000040c0 0000003f", 4);
}

/* In-place narrowing across shapes: each slot, allocated to its exact
 * size, must give the bytes of an out-of-place reference conversion and
 * keep its range inside the slot. */
static void
test_slot_geometry_and_in_place(void **state)
{
	(void)state;
	for (int f = 0; f < 3; f++) {
		for (uint32_t seq = 1; seq <= 6; seq++) {
			for (uint32_t h = 1; h <= 11; h++) {
				enum wire_fmt fmt = (enum wire_fmt)f;
				size_t sz = wire_slot_size(fmt, seq, h);
				size_t m = (size_t)seq * h;
				uint8_t *slot = aligned_alloc(64, sz);
				float *in = malloc(m * 4);
				uint8_t *ref = malloc(seq * (8 + h) + 4 * m);
				float *rows = wire_slot_f32(slot, fmt, seq, h);
				struct iovec iov;
				size_t plen;

				assert_int_equal(sz % 64, 0);
				assert_int_equal((uintptr_t)rows % 64, 0);
				for (size_t i = 0; i < m; i++)
					in[i] = (float)((int)(i * 37 % 23) - 11) *
						0.37f;
				memcpy(rows, in, m * 4);
				assert_int_equal(wire_slot_finish(slot, fmt, 3,
						 seq, h, &iov), 0);
				assert_true((uint8_t *)iov.iov_base >= slot);
				assert_true((uint8_t *)iov.iov_base +
					    iov.iov_len <= slot + sz);
				if (fmt == WIRE_FMT_F32) {
					plen = 4 * m;
					memcpy(ref, in, plen);
				} else if (fmt == WIRE_FMT_F16) {
					plen = 2 * m;
					for (size_t i = 0; i < m; i++) {
						uint16_t v = quant_f32_to_f16_1(in[i]);

						memcpy(ref + 2 * i, &v, 2);
					}
				} else {
					plen = seq * (8 + h);
					quant_kernels_scalar.f32_to_i8_rows(
						ref, in, seq, h);
				}
				assert_int_equal(iov.iov_len, 12 + plen);
				/* quant.h: from the i8 dst, the buffer holds
				 * QUANT_I8_HEADROOM(rows) + 4 * rows * n */
				if (fmt == WIRE_FMT_I8) {
					uint8_t *dst = (uint8_t *)iov.iov_base + 12;

					assert_ptr_equal(dst +
						QUANT_I8_HEADROOM(seq), rows);
					assert_true(dst + QUANT_I8_HEADROOM(seq) +
						    4 * m <= slot + sz);
				} else {
					assert_true((uint8_t *)rows + 4 * m <=
						    slot + sz);
					assert_ptr_equal((uint8_t *)iov.iov_base
							 + 12, rows);
				}
				assert_memory_equal((uint8_t *)iov.iov_base + 12,
						    ref, plen);
				free(ref);
				free(in);
				free(slot);
			}
		}
	}
}

static void
test_slot_size_limits(void **state)
{
	uint8_t dummy[64] __attribute__((aligned(64)));
	struct iovec iov;

	(void)state;
	assert_int_equal(wire_slot_size(WIRE_FMT_F32, 0, 4), 0);
	assert_int_equal(wire_slot_size(WIRE_FMT_F32, 1, 0), 0);
	assert_null(wire_slot_f32(dummy, WIRE_FMT_F16, 0, 4));
	assert_int_equal(wire_slot_finish(dummy, WIRE_FMT_I8, 1, 0, 4, &iov),
			 -EINVAL);
	/* num_values must fit its u32 field */
	assert_int_equal(wire_slot_size(WIRE_FMT_F32, 65536, 65536), 0);
	assert_int_equal(wire_slot_size(WIRE_FMT_I8, 0xFFFFFFFFu, 0xFFFFFFFFu),
			 0);
	assert_int_equal(wire_slot_size(WIRE_FMT_I8, 0xFFFFFFFFu, 2), 0);
	/* largest legal: 2^32 - 1 values */
	assert_int_equal(wire_slot_size(WIRE_FMT_F32, 0xFFFFFFFFu, 1),
			 64 + 4 * (size_t)0xFFFFFFFFu + 4);
	/* i8: headroom 8 * rows in front of the f32 rows */
	assert_int_equal(wire_slot_size(WIRE_FMT_I8, 0xFFFFFFFFu, 1),
			 ((12 + 8 * (size_t)0xFFFFFFFFu + 63) & ~(size_t)63) +
			 4 * (size_t)0xFFFFFFFFu + 4);
	/* exact small sizes */
	assert_int_equal(wire_slot_size(WIRE_FMT_F32, 1, 4), 128);
	assert_int_equal(wire_slot_size(WIRE_FMT_F16, 1, 12), 128);
	assert_int_equal(wire_slot_size(WIRE_FMT_F32, 1, 12), 128);
	assert_int_equal(wire_slot_size(WIRE_FMT_F32, 1, 16), 128);
	assert_int_equal(wire_slot_size(WIRE_FMT_F32, 1, 17), 192);
	/* i8 6 x 2: f32 rows at 64 (12 + 48 <= 64), end 112 */
	assert_int_equal(wire_slot_size(WIRE_FMT_I8, 6, 2), 128);
	/* i8 7 x 2: f32 rows at 128 (12 + 56 > 64), end 184 */
	assert_int_equal(wire_slot_size(WIRE_FMT_I8, 7, 2), 192);
	/* (enum out of range) */
	assert_int_equal(wire_slot_size((enum wire_fmt)7, 1, 1), 0);
}

static void
test_frame_length_overflow(void **state)
{
	struct iovec iov[3];
	struct wire_frame fr;

	(void)state;
	iov[1].iov_base = NULL;
	iov[1].iov_len = SIZE_MAX - 5;
	iov[2].iov_base = NULL;
	iov[2].iov_len = 12;
	assert_int_equal(wire_frame_finish(&fr, iov, 2, 0.0), -EOVERFLOW);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_single_f32),
		cmocka_unit_test(test_worked_single_f16),
		cmocka_unit_test(test_worked_single_i8),
		cmocka_unit_test(test_worked_batch_f32),
		cmocka_unit_test(test_worked_batch_i8),
		cmocka_unit_test(test_batch_f16),
		cmocka_unit_test(test_zero_row_i8),
		cmocka_unit_test(test_zero_results_is_batch),
		cmocka_unit_test(test_seq2_single_and_duplicate_layers),
		cmocka_unit_test(test_slot_geometry_and_in_place),
		cmocka_unit_test(test_slot_size_limits),
		cmocka_unit_test(test_frame_length_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
