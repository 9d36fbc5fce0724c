/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * Binary response frames without copies (spec/wire.md §5.2).
 *
 * A slot holds one result. The compute writes its f32 rows at a 64-byte
 * aligned offset; the rows are narrowed in place (lib/quant) and the
 * 12-byte header goes right in front of the payload, so header + payload
 * is one contiguous range. Single and batch frames both put 12 bytes in
 * front of each payload ([layer][seq_len][latency] or
 * [layer][seq_len][num_values]), so a slot does not need to know which
 * frame it ends up in: wire_frame_finish() rewrites word 8 for a single.
 *
 * Layouts (F = f32 rows offset, P = payload offset, H = P - 12):
 *   f32, f16: F = 64, P = 64, H = 52 (f16 narrows onto the same bytes)
 *   i8:       F = roundup(12 + 8 * rows, 64), P = F - 8 * rows, H = P - 12
 *             (quant.h: i8 rows written from P may start
 *             QUANT_I8_HEADROOM(rows) bytes before the f32 rows)
 *   size = roundup(F + 4 * rows * hidden, 64)
 */
#include <errno.h>
#include <string.h>

#include "quant.h"
#include "wire_priv.h"

struct slot_layout {
	size_t f32_off;		/* where the compute writes */
	size_t hdr_off;		/* start of header + payload */
	size_t body_len;	/* 12 + payload bytes */
	size_t size;		/* whole slot, multiple of 64 */
	uint32_t n_values;
};

static size_t
roundup64(size_t v)
{
	return (v + (WIRE_SLOT_ALIGN - 1)) & ~(size_t)(WIRE_SLOT_ALIGN - 1);
}

static int
slot_layout(enum wire_fmt fmt, uint32_t seq_len, uint32_t hidden,
	    struct slot_layout *l)
{
	uint64_t m = (uint64_t)seq_len * hidden;	/* < 2^64 */
	size_t f32_bytes, payload, end;

	/* num_values is a u32 on the wire; quant needs n >= 1. */
	if (seq_len == 0 || hidden == 0 || m > UINT32_MAX)
		return -EINVAL;
	if (__builtin_mul_overflow((size_t)m, (size_t)4, &f32_bytes))
		return -EINVAL;
	switch (fmt) {
	case WIRE_FMT_F32:
	case WIRE_FMT_F16: {
		l->f32_off = WIRE_SLOT_ALIGN;
		l->hdr_off = WIRE_SLOT_ALIGN - WIRE_RESP_HDR_LEN;
		payload = fmt == WIRE_FMT_F32 ? f32_bytes : f32_bytes / 2;
		break;
	}
	case WIRE_FMT_I8: {
		size_t headroom = QUANT_I8_HEADROOM(seq_len); /* < 2^35 */
		size_t row;

		l->f32_off = roundup64(WIRE_RESP_HDR_LEN + headroom);
		l->hdr_off = l->f32_off - headroom - WIRE_RESP_HDR_LEN;
		if (__builtin_mul_overflow((size_t)seq_len,
					   QUANT_I8_ROW_BYTES(hidden), &row))
			return -EINVAL;
		payload = row;
		break;
	}
	default:
		return -EINVAL;
	}
	if (__builtin_add_overflow(l->f32_off, f32_bytes, &end) ||
	    end > SIZE_MAX - WIRE_SLOT_ALIGN)
		return -EINVAL;
	l->size = roundup64(end);
	l->body_len = WIRE_RESP_HDR_LEN + payload;
	l->n_values = (uint32_t)m;
	return 0;
}

size_t
wire_slot_size(enum wire_fmt fmt, uint32_t seq_len, uint32_t hidden)
{
	struct slot_layout l;

	return slot_layout(fmt, seq_len, hidden, &l) == 0 ? l.size : 0;
}

float *
wire_slot_f32(void *slot, enum wire_fmt fmt, uint32_t seq_len,
	      uint32_t hidden)
{
	struct slot_layout l;

	if (slot_layout(fmt, seq_len, hidden, &l) != 0)
		return NULL;
	return (float *)(void *)((uint8_t *)slot + l.f32_off);
}

int
wire_slot_finish(void *slot, enum wire_fmt fmt, uint32_t layer,
		 uint32_t seq_len, uint32_t hidden, struct iovec *iov)
{
	struct slot_layout l;
	uint8_t *s = slot;
	float *rows;

	if (slot_layout(fmt, seq_len, hidden, &l) != 0)
		return -EINVAL;
	rows = (float *)(void *)(s + l.f32_off);
	switch (fmt) {
	case WIRE_FMT_F16:
		quant_f32_to_f16((uint16_t *)(void *)rows, rows, l.n_values);
		break;
	case WIRE_FMT_I8:
		/* dst = rows - QUANT_I8_HEADROOM(seq_len), as quant.h asks */
		quant_f32_to_i8_rows(s + l.hdr_off + WIRE_RESP_HDR_LEN, rows,
				     seq_len, hidden);
		break;
	default:
		break;
	}
	wire_put_le32(s + l.hdr_off, layer);
	wire_put_le32(s + l.hdr_off + 4, seq_len);
	wire_put_le32(s + l.hdr_off + 8, l.n_values);
	iov->iov_base = s + l.hdr_off;
	iov->iov_len = l.body_len;
	return 0;
}

static uint32_t
f32_bits(float v)
{
	uint32_t u;

	memcpy(&u, &v, sizeof(u));
	return u;
}

int
wire_frame_finish(struct wire_frame *frame, struct iovec *iov,
		  uint32_t n_results, double latency_ms)
{
	uint32_t lat = f32_bits((float)latency_ms);
	size_t len = 0;

	if (n_results == 1) {
		/* §5.2 single: [layer][seq_len][latency_ms] + payload */
		wire_put_le32((uint8_t *)iov[1].iov_base + 8, lat);
		frame->iov = &iov[1];
		frame->iovcnt = 1;
		frame->len = iov[1].iov_len;
		return 0;
	}
	/* §5.2 batch, also for zero results */
	if (n_results == UINT32_MAX)
		return -EOVERFLOW;	/* iovcnt would wrap */
	wire_put_le32(frame->hdr, WIRE_BATCH_MARKER);
	wire_put_le32(frame->hdr + 4, n_results);
	wire_put_le32(frame->hdr + 8, lat);
	iov[0].iov_base = frame->hdr;
	iov[0].iov_len = WIRE_RESP_HDR_LEN;
	for (uint32_t i = 0; i <= n_results; i++)
		if (__builtin_add_overflow(len, iov[i].iov_len, &len))
			return -EOVERFLOW;
	frame->iov = iov;
	frame->iovcnt = n_results + 1;
	frame->len = len;
	return 0;
}
