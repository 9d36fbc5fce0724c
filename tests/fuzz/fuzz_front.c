/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * libFuzzer harness: the fan-out front's frame code (issue 19,
 * lib/front/front_frame.h), which reads bytes from the network: a
 * client's binary request split by owner, the shards' binary answers
 * merged (in pieces, as TCP segments bring them), a client's JSON body cut
 * into sub-request bodies, and the shards' JSON answers merged. Every
 * block comes from front_alloc_heap, counted here; an allocation chosen
 * by the input fails.
 *
 * Input byte 0 (% 3) picks the path; the rest is its input.
 *
 * 0 binary: [1] bits 0-2 layout (table below, 1-4 ranges), bits 3-4
 *   payload format (0 f32, 1 f16, 2 i8, 3 f32), bit 5 hidden_size taken
 *   from the request (so that validation passes)  [2] hidden (% 64,
 *   0 reads as 1)  [3] the model's num_layers (0: the layout's)
 *   [4] allocation that fails (1..8: that one, counted from 1; else none)
 *   [5] latency in 1/3 ms  [6-7] request length (LE), then the request
 *   (decoded and validated as the front does: wire_req_decode,
 *   wire_req_validate; owns_all), split (front_plan_binary). Then per
 *   sub: [a] bits 0-1 answer format (0 f32, 1 f16, 2 i8, 3 from a
 *   Content-Type in the input: front_answer_fmt), bit 2 repair (headers
 *   and length made what the sub asked), bit 3 with repair: break one
 *   thing, bits 4-6 pieces - 1  [b] cut seed  [c-d] length (LE; unless
 *   repaired); for format 3 a length byte (% 64) and the Content-Type;
 *   then the answer's bytes (zeros past the input's end). The answers are
 *   merged (front_merge_binary) into each binary out_fmt.
 *   Checks: every sub-request decodes and validates to its layers, in the
 *   client's order, owned by its range, with the client's seq_len, flags
 *   and top_k; on success the merged length is the sum of the iovecs,
 *   every range lies in an answer piece or the merged block, and the
 *   frame decodes to the client's layers with the answers' payloads
 *   (narrowed where wider, counted); answers repaired and not broken are
 *   accepted; errors: -EPROTO with *bad < n_sub and a 502 "malformed
 *   answer: ..." message, -ENOMEM only when an allocation failed.
 *
 * 1 JSON sub-request body: [1] bit 0 the layers are the request's own,
 *   grouped by front_json_plan on layout bits 1-3; else bits 4-7 the
 *   number of layers given next  [2] allocation that fails (as above),
 *   then the layers (a byte each; 0xf0 and above: a u32 LE follows), then
 *   the body. Only a body wire_json_req_parse accepts is cut (as the
 *   front does): front_json_sub_body must then succeed (or -ENOMEM),
 *   and its output parse to exactly the layers given with every other
 *   field of the client's request unchanged.
 *
 * 2 JSON merge: [1] bits 0-1 most pieces per answer - 1, bit 7 no answer
 *   at all  [2] allocation that fails  [3] cut seed; then the answers,
 *   separated by NUL bytes (at most 16). On success (front_json_merge)
 *   the output is JSON (json-c) with "latency_ms" (the answers' largest
 *   latency_ms, rounded to 0.1) and "results": each answer's "results"
 *   array elements, or the answer itself when it has "layer", sorted by
 *   layer (stable); errors: -EPROTO with *bad < n, a 502 message.
 */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "front_frame.h"
#include "quant.h"
#include "wire.h"
#include "fuzz_util.h"

/* FUZZ_VERBOSE=1: say what each call returned (for seeds, reproducers) */
static int verbose = -1;

#define SAY(...) do { \
	if (verbose < 0) \
		verbose = getenv("FUZZ_VERBOSE") != NULL; \
	if (verbose) \
		fprintf(stderr, __VA_ARGS__); \
} while (0)

/* ---- memory: front_alloc_heap, counted, one allocation may fail ------ */

#define MAX_BLOCKS 64

static struct {
	void *p;
	size_t size;
} blocks[MAX_BLOCKS];
static unsigned int n_allocs, fail_at;	/* fail_at 0: none fails */
static bool failed;

static void *
t_alloc(void *arg, size_t size)
{
	void *p;

	(void)arg;
	if (++n_allocs == fail_at) {
		failed = true;
		return NULL;
	}
	p = front_alloc_heap.alloc(front_alloc_heap.arg, size);
	if (p == NULL)
		return NULL;
	FZ_CHECK(((uintptr_t)p & 63) == 0);
	for (unsigned int i = 0; i < MAX_BLOCKS; i++)
		if (blocks[i].p == NULL) {
			blocks[i].p = p;
			blocks[i].size = size;
			return p;
		}
	FZ_CHECK(!"too many blocks");
	return NULL;
}

static void
t_free(void *arg, void *p)
{
	(void)arg;
	for (unsigned int i = 0; i < MAX_BLOCKS; i++)
		if (blocks[i].p == p) {
			blocks[i].p = NULL;
			front_alloc_heap.free(front_alloc_heap.arg, p);
			return;
		}
	FZ_CHECK(!"freeing a block not allocated");
}

static const struct front_alloc A = { t_alloc, t_free, NULL };

static size_t
block_size(const void *p)
{
	for (unsigned int i = 0; i < MAX_BLOCKS; i++)
		if (blocks[i].p == p)
			return blocks[i].size;
	FZ_CHECK(!"not a block");
	return 0;
}

static void
mem_reset(uint8_t fail)
{
	n_allocs = 0;
	fail_at = fail >= 1 && fail <= 8 ? fail : 0;
	failed = false;
}

static void
mem_check_empty(void)
{
	for (unsigned int i = 0; i < MAX_BLOCKS; i++)
		FZ_CHECK(blocks[i].p == NULL);
}

/* ---- bodies in pieces: each piece its own exact heap block ----------- */

#define MAX_PIECES 8

struct pieces {
	struct iovec iov[MAX_PIECES];
	unsigned int n;
	size_t len;
};

static int
cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* b[0, len) cut into n pieces (1..MAX_PIECES) at points from seed; a cut
 * may repeat (an empty piece) */
static void
pieces_make(struct pieces *ps, const uint8_t *b, size_t len, unsigned int n,
	    uint32_t seed)
{
	size_t cut[MAX_PIECES + 1];

	if (n < 1)
		n = 1;
	if (n > MAX_PIECES)
		n = MAX_PIECES;
	cut[0] = 0;
	cut[n] = len;
	for (unsigned int i = 1; i < n; i++)
		cut[i] = len ? fz_rand(&seed) % (len + 1) : 0;
	qsort(cut + 1, n - 1, sizeof(cut[0]), cmp_size);
	for (unsigned int i = 0; i < n; i++) {
		size_t k = cut[i + 1] - cut[i];
		/* exactly k bytes: a read past a piece hits the redzone */
		uint8_t *p = malloc(k ? k : 1);

		FZ_CHECK(p != NULL);
		if (k)
			memcpy(p, b + cut[i], k);
		ps->iov[i].iov_base = p;
		ps->iov[i].iov_len = k;
	}
	ps->n = n;
	ps->len = len;
}

static void
pieces_free(struct pieces *ps)
{
	for (unsigned int i = 0; i < ps->n; i++)
		free(ps->iov[i].iov_base);
	ps->n = 0;
}

static struct front_gather
gather_of(const struct pieces *ps)
{
	struct front_gather g = { ps->iov, ps->n, ps->len };

	return g;
}

/* the gather helpers on one body: whole copy, ranges, count */
static void
check_gather(const struct pieces *ps, const uint8_t *b)
{
	struct front_gather g = gather_of(ps);
	struct iovec r[MAX_PIECES];
	unsigned int nonempty = 0;
	uint8_t *c = malloc(ps->len ? ps->len : 1);
	size_t at = 0;
	int k;

	FZ_CHECK(c != NULL);
	FZ_CHECK(front_gather_copy(&g, 0, c, ps->len) == 0);
	FZ_CHECK(ps->len == 0 || memcmp(c, b, ps->len) == 0);
	FZ_CHECK(front_gather_copy(&g, 1, c, ps->len) == -ERANGE ||
		 ps->len == 0);
	free(c);
	for (unsigned int i = 0; i < ps->n; i++)
		nonempty += ps->iov[i].iov_len > 0;
	k = front_gather_ranges(&g, 0, ps->len, r, MAX_PIECES);
	FZ_CHECK(k == (int)nonempty);
	for (int i = 0; i < k; i++) {
		FZ_CHECK(r[i].iov_len > 0);
		FZ_CHECK(memcmp(r[i].iov_base, b + at, r[i].iov_len) == 0);
		at += r[i].iov_len;
	}
	FZ_CHECK(at == ps->len);
	FZ_CHECK(front_gather_count(&g, 0, ps->len) == nonempty);
	FZ_CHECK(front_gather_ranges(&g, 0, ps->len + 1, r, MAX_PIECES) ==
		 -ERANGE);
}

/* ---- path 0: binary split and merge ---------------------------------- */

struct lay {
	unsigned int n;
	uint32_t first[4], last[4];
};

static const struct lay layouts[8] = {
	{ 1, { 0 }, { 7 } },
	{ 2, { 0, 4 }, { 3, 7 } },
	{ 3, { 0, 1, 6 }, { 0, 5, 7 } },
	{ 4, { 0, 2, 4, 6 }, { 1, 3, 5, 7 } },
	{ 4, { 0, 1, 2, 3 }, { 0, 1, 2, 3 } },
	{ 2, { 0, 1 }, { 0, 63 } },
	{ 3, { 0, 5, 6 }, { 4, 5, 200 } },
	{ 4, { 0, 3, 4, 5 }, { 2, 3, 4, 9 } },
};

static void
layout_make(struct front_layout *l, unsigned int k)
{
	const struct lay *t = &layouts[k & 7];

	memset(l, 0, sizeof(*l));
	l->n = t->n;
	for (unsigned int i = 0; i < t->n; i++) {
		l->first[i] = t->first[i];
		l->last[i] = t->last[i];
	}
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static bool
fmt_binary(enum wire_fmt f)
{
	return f == WIRE_FMT_F32 || f == WIRE_FMT_F16 || f == WIRE_FMT_I8;
}

/* §5.2 payload bytes of one result */
static size_t
pl_size(enum wire_fmt f, uint32_t seq, uint32_t hidden)
{
	size_t m = (size_t)seq * hidden;

	if (f == WIRE_FMT_F32)
		return 4 * m;
	if (f == WIRE_FMT_F16)
		return 2 * m;
	return (size_t)(seq ? seq : 1) * ((size_t)hidden + 8);
}

static const char *const cts[4] = {
	"application/x-larql-ffn",
	"application/x-larql-ffn-f16",
	"application/x-larql-ffn-i8",
	NULL,
};

/* front_answer_fmt on ct (n bytes): what it says, checked */
static enum wire_fmt
answer_fmt(const char *ct, size_t n)
{
	enum wire_fmt f = front_answer_fmt(ct, n);
	size_t b = 0, e = n;
	const char *semi = memchr(ct, ';', n);

	FZ_CHECK(f == WIRE_FMT_NONE || f == WIRE_FMT_F32 ||
		 f == WIRE_FMT_F16 || f == WIRE_FMT_I8 ||
		 f == WIRE_FMT_JSON);
	if (f == WIRE_FMT_NONE)
		return f;
	/* the bare type is the named one, case aside */
	if (semi != NULL)
		e = (size_t)(semi - ct);
	while (b < e && (ct[b] == ' ' || ct[b] == '\t'))
		b++;
	while (e > b && (ct[e - 1] == ' ' || ct[e - 1] == '\t'))
		e--;
	FZ_CHECK(e - b == strlen(wire_fmt_content_type(f)));
	FZ_CHECK(strncasecmp(ct + b, wire_fmt_content_type(f), e - b) == 0);
	return f;
}

/* One sub's answer: the bytes (contiguous), their pieces, the format. */
struct answer {
	uint8_t *b;
	size_t len;
	struct pieces ps;
	enum wire_fmt fmt;
	bool good;	/* repaired and not broken: a right answer */
};

/* The layers sub s was asked for, in the client's order. */
static uint32_t
sub_layers(const struct front_plan *p, unsigned int s, uint32_t *out)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < p->n_layers; i++)
		if (p->res_sub[i] == s)
			out[k++] = p->layer[i];
	return k;
}

/* take n bytes of f into dst, zeros past its end */
static void
take(struct fz *f, uint8_t *dst, size_t n)
{
	size_t k = n < f->n ? n : f->n;

	if (k)
		memcpy(dst, f->p, k);
	memset(dst + k, 0, n - k);
	f->p += k;
	f->n -= k;
}

static void
answer_read(struct answer *an, struct fz *f, const struct front_plan *p,
	    unsigned int s, uint32_t hidden, uint32_t *lay)
{
	uint8_t c = fz_u8(f);
	uint32_t seed = fz_u8(f);
	size_t len = fz_u16(f);
	bool repair = c & 4, breakit = c & 8;
	unsigned int npieces = 1 + ((c >> 4) & 7);
	uint32_t k = sub_layers(p, s, lay);
	size_t pl, e;

	memset(an, 0, sizeof(*an));
	if ((c & 3) == 3) {
		uint8_t ctb[64];
		size_t n = fz_u8(f) % 64;

		take(f, ctb, n);
		an->fmt = answer_fmt((const char *)ctb, n);
	} else {
		an->fmt = answer_fmt(cts[c & 3], strlen(cts[c & 3]));
		FZ_CHECK(an->fmt == (enum wire_fmt)(c & 3));
	}
	pl = pl_size(an->fmt, p->seq_len, hidden);
	e = k == 1 ? WIRE_RESP_HDR_LEN + pl :
	    WIRE_RESP_HDR_LEN + k * (WIRE_RESP_HDR_LEN + pl);
	FZ_CHECK(k == p->sub[s].n_layers);
	/* a few MB at most: the executions stay fast */
	if (repair && fmt_binary(an->fmt) && e <= (1u << 22)) {
		an->len = e + 1;	/* room for one byte more */
		an->b = malloc(an->len);
		FZ_CHECK(an->b != NULL);
		take(f, an->b, e + 1);
		if (k == 1) {
			put32(an->b, lay[0]);
			put32(an->b + 4, p->seq_len);
		} else {
			put32(an->b, WIRE_BATCH_MARKER);
			put32(an->b + 4, k);
			for (uint32_t j = 0; j < k; j++) {
				uint8_t *h = an->b + WIRE_RESP_HDR_LEN +
					     j * (WIRE_RESP_HDR_LEN + pl);

				put32(h, lay[j]);
				put32(h + 4, p->seq_len);
				put32(h + 8, p->seq_len * hidden);
			}
		}
		an->len = e;
		an->good = true;
		if (breakit) {
			/* one departure: a header word, or a byte short or
			 * over */
			size_t w = (seed >> 2) % (k == 1 ? 2 : 2 + 3 * k);
			/* the word: frame header's first two, or a result
			 * header's three */
			size_t off = w < 2 ? 4 * w : WIRE_RESP_HDR_LEN +
				     (w - 2) / 3 * (WIRE_RESP_HDR_LEN + pl) +
				     4 * ((w - 2) % 3);

			switch (seed % 3) {
			case 0:
				an->b[off] ^= 1 << ((seed >> 5) & 7);
				break;
			case 1:
				an->len--;
				break;
			default:
				an->len++;
				break;
			}
			an->good = false;
		}
	} else {
		an->len = len;
		an->b = malloc(len ? len : 1);
		FZ_CHECK(an->b != NULL);
		take(f, an->b, len);
	}
	pieces_make(&an->ps, an->b, an->len, npieces, seed * 2654435761u + s);
}

/* Is [b, b + n) inside one of the answers' pieces, or the block m? */
static bool
inside(const struct answer *an, unsigned int n_ans, const uint8_t *m,
       size_t m_size, const uint8_t *b, size_t n)
{
	if (b >= m && b + n <= m + m_size)
		return true;
	for (unsigned int s = 0; s < n_ans; s++)
		for (unsigned int i = 0; i < an[s].ps.n; i++) {
			const uint8_t *p = an[s].ps.iov[i].iov_base;

			if (b >= p && b + n <= p + an[s].ps.iov[i].iov_len)
				return true;
		}
	return false;
}

/* The payload of result i in out_fmt, as the merge must give it: the
 * answer's bytes, narrowed by lib/quant when the answer is wider. */
static void
expect_payload(const struct front_plan *p, const struct answer *an,
	       enum wire_fmt out_fmt, uint32_t hidden, uint32_t i,
	       uint8_t *dst)
{
	const struct answer *a = &an[p->res_sub[i]];
	size_t in_pl = pl_size(a->fmt, p->seq_len, hidden);
	size_t off = WIRE_RESP_HDR_LEN, m = (size_t)p->seq_len * hidden;
	const uint8_t *src;
	float *x;

	if (p->sub[p->res_sub[i]].n_layers > 1)
		off += WIRE_RESP_HDR_LEN +
		       p->res_idx[i] * (WIRE_RESP_HDR_LEN + in_pl);
	src = a->b + off;
	if (a->fmt == out_fmt) {
		memcpy(dst, src, in_pl);
		return;
	}
	x = malloc(4 * m);
	FZ_CHECK(x != NULL);
	if (a->fmt == WIRE_FMT_F32) {
		memcpy(x, src, 4 * m);
	} else {
		uint16_t *h = malloc(2 * m);

		FZ_CHECK(h != NULL);
		memcpy(h, src, 2 * m);
		quant_f16_to_f32(x, h, m);
		free(h);
	}
	if (out_fmt == WIRE_FMT_F16) {
		uint16_t *h = malloc(2 * m);

		FZ_CHECK(h != NULL);
		quant_f32_to_f16(h, x, m);
		memcpy(dst, h, 2 * m);
		free(h);
	} else {
		quant_f32_to_i8_rows(dst, x, p->seq_len, hidden);
	}
	free(x);
}

static void
check_merged(const struct front_plan *p, const struct answer *an,
	     enum wire_fmt out_fmt, uint32_t hidden, double latency_ms,
	     const struct front_merged *mg)
{
	uint32_t n = p->n_layers, narrowed = 0;
	size_t sum = 0, m_size = block_size(mg->mem), opl, want, at;
	float latf = (float)latency_ms;
	uint32_t lat;
	uint8_t *flat, *exp;

	memcpy(&lat, &latf, sizeof(lat));
	FZ_CHECK(mg->iovcnt >= 1);
	FZ_CHECK((uint8_t *)mg->iov >= (uint8_t *)mg->mem &&
		 (uint8_t *)(mg->iov + mg->iovcnt) <=
		 (uint8_t *)mg->mem + m_size);
	for (unsigned int k = 0; k < mg->iovcnt; k++) {
		FZ_CHECK(mg->iov[k].iov_len > 0);
		FZ_CHECK(inside(an, p->n_sub, mg->mem, m_size,
				mg->iov[k].iov_base, mg->iov[k].iov_len));
		sum += mg->iov[k].iov_len;
	}
	FZ_CHECK(sum == mg->len);

	opl = pl_size(out_fmt, p->seq_len, hidden);
	want = n == 1 ? WIRE_RESP_HDR_LEN + opl :
	       WIRE_RESP_HDR_LEN + n * (WIRE_RESP_HDR_LEN + opl);
	FZ_CHECK(mg->len == want);
	flat = malloc(want);
	exp = malloc(opl ? opl : 1);
	FZ_CHECK(flat != NULL && exp != NULL);
	at = 0;
	for (unsigned int k = 0; k < mg->iovcnt; k++) {
		memcpy(flat + at, mg->iov[k].iov_base, mg->iov[k].iov_len);
		at += mg->iov[k].iov_len;
	}
	/* §5.2: single [layer][seq_len][latency] + payload; batch
	 * [marker][n][latency], per result [layer][seq_len][num_values] */
	at = 0;
	if (n != 1) {
		FZ_CHECK(fz_le32(flat) == WIRE_BATCH_MARKER);
		FZ_CHECK(fz_le32(flat + 4) == n);
		FZ_CHECK(fz_le32(flat + 8) == lat);
		at = WIRE_RESP_HDR_LEN;
	}
	for (uint32_t i = 0; i < n; i++) {
		FZ_CHECK(fz_le32(flat + at) == p->layer[i]);
		FZ_CHECK(fz_le32(flat + at + 4) == p->seq_len);
		FZ_CHECK(fz_le32(flat + at + 8) ==
			 (n == 1 ? lat : p->seq_len * hidden));
		at += WIRE_RESP_HDR_LEN;
		expect_payload(p, an, out_fmt, hidden, i, exp);
		FZ_CHECK(memcmp(flat + at, exp, opl) == 0);
		at += opl;
		narrowed += an[p->res_sub[i]].fmt != out_fmt;
	}
	FZ_CHECK(at == want);
	FZ_CHECK(mg->narrowed == narrowed);
	free(flat);
	free(exp);
}

/* Every sub-request, as sent (header, then the client's payload), decodes
 * and validates to its layers with the client's other fields. */
static void
check_plan(const struct front_plan *p, const struct wire_req *rq,
	   const uint8_t *body, const struct front_layout *l,
	   const struct wire_model *m)
{
	static uint32_t lay[65536];
	uint32_t total = 0;
	bool seen[FRONT_MAX_RANGES] = { false };

	FZ_CHECK(p->n_layers == rq->n_layers);
	FZ_CHECK(p->payload == rq->payload &&
		 p->payload_len == rq->payload_len);
	FZ_CHECK(p->n_sub >= 1 && p->n_sub <= l->n);
	for (uint32_t i = 0; i < p->n_layers; i++) {
		FZ_CHECK(p->layer[i] == wire_req_layer(rq, i));
		FZ_CHECK(p->res_sub[i] < p->n_sub);
		FZ_CHECK(front_layout_owner(l, p->layer[i]) ==
			 (int)p->sub[p->res_sub[i]].range);
	}
	if (p->n_sub == 1)
		FZ_CHECK(p->sub[0].hdr == body &&
			 p->sub[0].hdr + p->sub[0].hdr_len == rq->payload);
	for (unsigned int s = 0; s < p->n_sub; s++) {
		const struct front_sub *sb = &p->sub[s];
		uint32_t k = sub_layers(p, s, lay);
		size_t len = sb->hdr_len + p->payload_len;
		uint8_t *b = malloc(len ? len : 1);
		struct wire_req r;
		struct wire_error e;

		FZ_CHECK(b != NULL);
		FZ_CHECK(!seen[sb->range]);
		seen[sb->range] = true;
		FZ_CHECK(k == sb->n_layers && k >= 1);
		FZ_CHECK(p->n_sub == 1 || sb->hdr_len ==
			 (k == 1 ? 16 : 20 + 4 * k));
		/* the first result of a sub is its first in client order */
		for (uint32_t j = 0, i = 0; i < p->n_layers; i++)
			if (p->res_sub[i] == s)
				FZ_CHECK(p->res_idx[i] == j++);
		total += k;
		memcpy(b, sb->hdr, sb->hdr_len);
		if (p->payload_len)
			memcpy(b + sb->hdr_len, p->payload, p->payload_len);
		FZ_CHECK(wire_req_decode(&r, b, len, rq->fmt, &e) == 0);
		FZ_CHECK(wire_req_validate(&r, m, &e) == 0);
		FZ_CHECK(r.n_layers == k);
		for (uint32_t j = 0; j < k; j++)
			FZ_CHECK(wire_req_layer(&r, j) == lay[j]);
		FZ_CHECK(r.seq_len == rq->seq_len && r.flags == rq->flags &&
			 r.top_k == rq->top_k);
		FZ_CHECK(r.payload_len == rq->payload_len &&
			 r.n_values == rq->n_values);
		free(b);
	}
	FZ_CHECK(total == p->n_layers);
}

static void
binary(struct fz *f)
{
	static const enum wire_fmt fmts[4] = {
		WIRE_FMT_F32, WIRE_FMT_F16, WIRE_FMT_I8, WIRE_FMT_F32,
	};
	uint8_t c = fz_u8(f), hb = fz_u8(f), nl = fz_u8(f), fail = fz_u8(f);
	double latency_ms = fz_u8(f) / 3.0;
	size_t req_len = fz_u16(f);
	struct front_layout l;
	struct wire_model m = { .loaded = true, .owns_all = true };
	enum wire_fmt fmt_in = fmts[(c >> 3) & 3];
	struct answer an[FRONT_MAX_RANGES];
	static uint32_t lay[65536];
	struct front_plan p;
	struct front_merged mg;
	struct wire_req rq;
	struct wire_error e;
	struct fz_buf body;
	unsigned int bad;
	uint32_t hidden;
	int rc;

	layout_make(&l, c);
	if (req_len > f->n)
		req_len = f->n;
	FZ_CHECK(fz_buf_copy(&body, f->p, req_len, c >> 5) == 0);
	f->p += req_len;
	f->n -= req_len;
	hidden = hb % 64 ? hb % 64 : 1;
	m.num_layers = nl ? nl : l.last[l.n - 1] + 1;

	/* as the front: decode, validate, split */
	if (wire_req_decode(&rq, body.p, req_len, fmt_in, &e) != 0) {
		SAY("decode: %s\n", e.msg);
		goto out;
	}
	if ((c & 0x20) && rq.seq_len > 0 && rq.n_values % rq.seq_len == 0 &&
	    rq.n_values / rq.seq_len >= 1 && rq.n_values / rq.seq_len <= 4096)
		hidden = (uint32_t)(rq.n_values / rq.seq_len);
	m.hidden = hidden;
	if (wire_req_validate(&rq, &m, &e) != 0) {
		SAY("validate: %s\n", e.msg);
		goto out;
	}
	mem_reset(fail);
	rc = front_plan_binary(&p, &rq, body.p, &l, &A, &e);
	SAY("plan: %d (%u layers, %u subs) %s\n", rc, rq.n_layers,
	    rc ? 0 : p.n_sub, rc ? e.msg : "");
	if (rc != 0) {
		FZ_CHECK(rc == -EINVAL || (rc == -ENOMEM && failed));
		if (rc == -EINVAL) {
			FZ_CHECK(e.status == 400);
			FZ_CHECK(strstr(e.msg, " out of range (num_layers = ")
				 != NULL);
		}
		FZ_CHECK(p.mem == NULL);
		goto out;
	}
	if (rq.n_layers == 0) {
		FZ_CHECK(p.n_sub == 0 && p.mem == NULL);
	} else {
		check_plan(&p, &rq, body.p, &l, &m);
	}

	for (unsigned int s = 0; s < p.n_sub; s++) {
		answer_read(&an[s], f, &p, s, hidden, lay);
		check_gather(&an[s].ps, an[s].b);
	}
	/* not a binary out_fmt, hidden 0: refused */
	{
		struct front_sub_answer sa[FRONT_MAX_RANGES];

		for (unsigned int s = 0; s < p.n_sub; s++) {
			sa[s].fmt = an[s].fmt;
			sa[s].body = gather_of(&an[s].ps);
		}
		FZ_CHECK(front_merge_binary(&p, sa, WIRE_FMT_JSON, hidden,
					    latency_ms, &A, &mg, &e, &bad) ==
			 -EINVAL);
		FZ_CHECK(front_merge_binary(&p, sa, WIRE_FMT_F32, 0,
					    latency_ms, &A, &mg, &e, &bad) ==
			 -EINVAL);
		FZ_CHECK(front_answer_fmt(NULL, 0) == WIRE_FMT_NONE);
		FZ_CHECK(front_accept_for(WIRE_FMT_JSON) == NULL);
		for (enum wire_fmt o = WIRE_FMT_F32; o <= WIRE_FMT_I8; o++) {
			bool all_good = true;
			const char *acc = front_accept_for(o);
			struct wire_opts wo = { .f16 = true, .i8 = true };

			/* the Accept sent to shards names o first */
			FZ_CHECK(acc != NULL);
			FZ_CHECK(front_answer_fmt(acc, strcspn(acc, ",")) == o);
			FZ_CHECK(wire_response_format(acc, strlen(acc), &wo) ==
				 o);

			for (unsigned int s = 0; s < p.n_sub; s++)
				all_good &= an[s].good && an[s].fmt <= o;
			bad = UINT32_MAX;
			memset(&e, 0, sizeof(e));
			rc = front_merge_binary(&p, sa, o, hidden, latency_ms,
						&A, &mg, &e, &bad);
			SAY("merge %s: %d %s\n", wire_fmt_name(o), rc,
			    rc ? e.msg : "");
			if (rc == 0) {
				for (unsigned int s = 0; s < p.n_sub; s++)
					FZ_CHECK(fmt_binary(an[s].fmt) &&
						 an[s].fmt <= o);
				check_merged(&p, an, o, hidden, latency_ms,
					     &mg);
				front_merged_free(&mg, &A);
				FZ_CHECK(mg.mem == NULL);
				continue;
			}
			/* right answers are taken (memory aside) */
			FZ_CHECK(!all_good || (rc == -ENOMEM && failed));
			FZ_CHECK(mg.mem == NULL && mg.iov == NULL);
			if (rc == -ENOMEM) {
				FZ_CHECK(failed);
				continue;
			}
			FZ_CHECK(rc == -EPROTO);
			FZ_CHECK(bad < p.n_sub);
			FZ_CHECK(e.status == 502);
			FZ_CHECK(memchr(e.msg, '\0', sizeof(e.msg)) != NULL);
			FZ_CHECK(strncmp(e.msg, "malformed answer: ", 18) == 0);
			FZ_CHECK(e.msg[18] != '\0');
		}
	}
	for (unsigned int s = 0; s < p.n_sub; s++) {
		pieces_free(&an[s].ps);
		free(an[s].b);
	}
	front_plan_free(&p, &A);
out:
	mem_check_empty();
	free(body.base);
}

/* ---- path 1: JSON sub-request bodies ---------------------------------- */

/* out (len bytes) parses to the layers given and the client's fields */
static void
check_sub_body(const struct wire_json_req *orig, const char *out, size_t len,
	       const uint32_t *layers, uint32_t n)
{
	struct wire_json_req r;
	struct wire_error e;

	FZ_CHECK(out[len] == '\0' && strlen(out) == len);
	FZ_CHECK(wire_json_req_parse(&r, out, len, &e) == 0);
	FZ_CHECK(wire_json_req_n_layers(&r) == n);
	for (uint32_t i = 0; i < n; i++)
		FZ_CHECK(wire_json_req_layer(&r, i) == layers[i]);
	FZ_CHECK(r.has_layers == (n != 1) && r.has_layer == (n == 1));
	FZ_CHECK(r.n_residual == orig->n_residual);
	FZ_CHECK(r.n_residual == 0 || memcmp(r.residual, orig->residual,
			r.n_residual * sizeof(float)) == 0);
	FZ_CHECK(r.seq_len == orig->seq_len && r.top_k == orig->top_k);
	FZ_CHECK(r.full_output == orig->full_output &&
		 r.moe_layer == orig->moe_layer);
	wire_json_req_free(&r);
}

static void
sub_body(const char *body, size_t len, const struct wire_json_req *jr,
	 const uint32_t *layers, uint32_t n)
{
	char *out = NULL;
	size_t out_len = 0;
	int rc = front_json_sub_body(body, len, layers, n, &A, &out,
				     &out_len);

	SAY("sub body (%u layers): %d %.*s\n", n, rc, rc ? 0 : (int)out_len,
	    rc ? "" : out);

	/* the front takes any error for a lack of memory: a body
	 * wire_json_req_parse accepted must be cut */
	if (rc == -ENOMEM && failed)
		return;
	FZ_CHECK(rc == 0);
	check_sub_body(jr, out, out_len, layers, n);
	A.free(A.arg, out);
}

static void
json_sub(struct fz *f)
{
	uint8_t c = fz_u8(f), fail = fz_u8(f);
	static uint32_t layers[16];
	uint32_t n = 0;
	struct wire_json_req jr;
	struct wire_error e;
	struct fz_buf body;

	if (!(c & 1)) {
		n = c >> 4;
		for (uint32_t i = 0; i < n; i++) {
			uint8_t b = fz_u8(f);

			if (b >= 0xf0) {
				layers[i] = fz_u16(f);
				layers[i] |= (uint32_t)fz_u16(f) << 16;
			} else {
				layers[i] = b;
			}
		}
	}
	FZ_CHECK(fz_buf_copy(&body, f->p, f->n, c >> 1) == 0);
	if (wire_json_req_parse(&jr, (const char *)body.p, f->n, &e) != 0) {
		SAY("json parse: %s\n", e.msg);
		goto out;
	}
	mem_reset(fail);
	if (!(c & 1)) {
		sub_body((const char *)body.p, f->n, &jr, layers, n);
	} else if (jr.has_layer || jr.has_layers) {
		/* as the front: the request's layers by owner */
		size_t k = wire_json_req_n_layers(&jr), total = 0;
		uint64_t *ls = malloc((k ? k : 1) * sizeof(*ls));
		struct front_json_plan jp;
		struct front_layout l;
		int rc;

		FZ_CHECK(ls != NULL);
		for (size_t i = 0; i < k; i++)
			ls[i] = wire_json_req_layer(&jr, i);
		layout_make(&l, c >> 1);
		rc = front_json_plan(&jp, ls, k, &l, &A, &e);
		if (rc == 0) {
			FZ_CHECK(jp.n_sub >= 1 && jp.n_sub <= l.n);
			for (unsigned int s = 0; s < jp.n_sub; s++) {
				size_t j = 0;

				/* its layers: the request's of its owner, in
				 * order */
				for (size_t i = 0; i < k; i++)
					if (ls[i] <= UINT32_MAX &&
					    front_layout_owner(&l,
						(uint32_t)ls[i]) ==
					    (int)jp.range[s]) {
						FZ_CHECK(j < jp.n_layers[s]);
						FZ_CHECK(jp.layers[s][j++] ==
							 ls[i]);
					}
				FZ_CHECK(j == jp.n_layers[s] && j >= 1);
				total += j;
				sub_body((const char *)body.p, f->n, &jr,
					 jp.layers[s], jp.n_layers[s]);
			}
			FZ_CHECK(total == k);
			front_json_plan_free(&jp, &A);
		} else if (rc == -ENOMEM) {
			FZ_CHECK(failed);
		} else {
			FZ_CHECK(rc == -EINVAL && e.status == 400);
			FZ_CHECK(k == 0 ?
				 strcmp(e.msg, "empty layer list") == 0 :
				 strstr(e.msg, " out of range (num_layers = ")
				 != NULL);
			FZ_CHECK(jp.mem == NULL);
		}
		free(ls);
	}
	wire_json_req_free(&jr);
out:
	mem_check_empty();
	free(body.base);
}

/* ---- path 2: JSON merge ------------------------------------------------ */

#define MAX_JSON_ANS 16

struct jel {
	struct json_object *o;
	uint64_t layer;
	size_t idx;
};

static int
jel_cmp(const void *x, const void *y)
{
	const struct jel *a = x, *b = y;

	if (a->layer != b->layer)
		return a->layer < b->layer ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static struct json_object *
jparse(const char *s, size_t len)
{
	/* serde nests 127 deep; json-c's default is 32 */
	struct json_tokener *tok = json_tokener_new_ex(256);
	struct json_object *o;

	FZ_CHECK(tok != NULL);
	o = json_tokener_parse_ex(tok, s, (int)len);
	if (o != NULL && (json_tokener_get_error(tok) != json_tokener_success ||
			  json_tokener_get_parse_end(tok) != len)) {
		/* json-c stops after the value: only space may follow */
		for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
			if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' &&
			    s[i] != '\r') {
				json_object_put(o);
				o = NULL;
				break;
			}
	}
	json_tokener_free(tok);
	return o;
}

/* serde's v["layer"].as_u64().unwrap_or(0), through json-c; *odd when
 * json-c may have clamped the number */
static uint64_t
jlayer(struct json_object *o, bool *odd)
{
	struct json_object *v;
	int64_t i;

	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "layer", &v) ||
	    !json_object_is_type(v, json_type_int))
		return 0;
	i = json_object_get_int64(v);
	if (i < 0) {
		*odd |= i == INT64_MIN;
		return 0;
	}
	if (i == INT64_MAX) {
		uint64_t u = json_object_get_uint64(v);

		*odd |= u == UINT64_MAX;
		return u;
	}
	return (uint64_t)i;
}

/* Whether a key of the JSON text s holds an escaped NUL ("a\u0000"):
 * json-c ends its keys there ("a"), serde and the front do not, so the
 * answers are then not compared through json-c. */
static bool
key_has_nul(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		bool nul = false;
		size_t j;

		if (s[i] != '"')
			continue;
		for (j = i + 1; j < len && s[j] != '"'; j++)
			if (s[j] == '\\') {
				nul |= len - j > 5 && s[j + 1] == 'u' &&
				       memcmp(s + j + 2, "0000", 4) == 0;
				j++;
			}
		i = j;
		while (j + 1 < len && (s[j + 1] == ' ' || s[j + 1] == '\t' ||
				       s[j + 1] == '\n' || s[j + 1] == '\r'))
			j++;
		if (nul && j + 1 < len && s[j + 1] == ':')
			return true;
	}
	return false;
}

static void
json_merge(struct fz *f)
{
	uint8_t c = fz_u8(f), fail = fz_u8(f);
	uint32_t seed = fz_u8(f);
	struct pieces ps[MAX_JSON_ANS];
	struct front_gather g[MAX_JSON_ANS];
	struct json_object *ao[MAX_JSON_ANS] = { NULL };
	const uint8_t *start[MAX_JSON_ANS];
	size_t alen[MAX_JSON_ANS];
	unsigned int n = 0, bad;
	struct wire_error e;
	size_t out_len = 0;
	char *out = NULL;
	int rc;

	/* the answers: NUL-separated; past MAX_JSON_ANS the last takes
	 * the rest */
	if (!(c & 0x80)) {
		const uint8_t *p = f->p, *end = f->p + f->n;

		while (n < MAX_JSON_ANS) {
			const uint8_t *z = n + 1 < MAX_JSON_ANS ?
					   memchr(p, 0, (size_t)(end - p)) :
					   NULL;

			start[n] = p;
			alen[n] = z ? (size_t)(z - p) : (size_t)(end - p);
			n++;
			if (z == NULL)
				break;
			p = z + 1;
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		unsigned int np = 1 + fz_rand(&seed) % (1 + (c & 3));

		pieces_make(&ps[i], start[i], alen[i], np, fz_rand(&seed));
		g[i] = gather_of(&ps[i]);
	}
	mem_reset(fail);
	bad = UINT32_MAX;
	rc = front_json_merge(n ? g : NULL, n, &A, &out, &out_len, &e, &bad);
	SAY("json merge (%u answers): %d %s\n", n, rc,
	    rc ? e.msg : out);
	if (rc == -ENOMEM) {
		FZ_CHECK(failed);
	} else if (rc != 0) {
		FZ_CHECK(rc == -EPROTO && bad < n && e.status == 502);
		FZ_CHECK(strncmp(e.msg, "malformed answer: ", 18) == 0 &&
			 e.msg[18] != '\0');
	} else {
		struct json_object *o, *lat, *res;
		struct jel *want = NULL;
		size_t n_want = 0, cap = 0;
		double max = 0.0, m10;
		bool odd = false;

		FZ_CHECK(out[out_len] == '\0');
		/* every answer is JSON; its elements, as the reference
		 * router takes them */
		for (unsigned int i = 0; i < n; i++) {
			struct json_object *r, *v;

			ao[i] = jparse((const char *)start[i], alen[i]);
			FZ_CHECK(ao[i] != NULL);
			odd |= key_has_nul((const char *)start[i], alen[i]);
			FZ_CHECK(json_object_is_type(ao[i], json_type_object));
			if (json_object_object_get_ex(ao[i], "latency_ms",
						      &v) &&
			    (json_object_is_type(v, json_type_double) ||
			     json_object_is_type(v, json_type_int))) {
				double d = json_object_get_double(v);

				if (json_object_is_type(v, json_type_int) &&
				    (json_object_get_int64(v) == INT64_MIN ||
				     json_object_get_int64(v) == INT64_MAX))
					odd = true;	/* clamped */
				if (d > max)
					max = d;
			}
			if (json_object_object_get_ex(ao[i], "results", &r) &&
			    json_object_is_type(r, json_type_array)) {
				size_t k = json_object_array_length(r);

				for (size_t j = 0; j < k; j++) {
					if (n_want == cap) {
						cap = cap ? 2 * cap : 16;
						want = realloc(want,
							cap * sizeof(*want));
						FZ_CHECK(want != NULL);
					}
					want[n_want].o =
						json_object_array_get_idx(r, j);
					want[n_want].layer =
						jlayer(want[n_want].o, &odd);
					want[n_want].idx = n_want;
					n_want++;
				}
				continue;
			}
			FZ_CHECK(odd ||
				 json_object_object_get_ex(ao[i], "layer", &v));
			if (n_want == cap) {
				cap = cap ? 2 * cap : 16;
				want = realloc(want, cap * sizeof(*want));
				FZ_CHECK(want != NULL);
			}
			want[n_want].o = ao[i];
			want[n_want].layer = jlayer(ao[i], &odd);
			want[n_want].idx = n_want;
			n_want++;
		}
		if (n_want > 1)
			qsort(want, n_want, sizeof(*want), jel_cmp);

		o = jparse(out, out_len);
		FZ_CHECK(o != NULL);
		FZ_CHECK(json_object_is_type(o, json_type_object));
		FZ_CHECK(json_object_object_length(o) == 2);
		FZ_CHECK(json_object_object_get_ex(o, "latency_ms", &lat));
		FZ_CHECK(json_object_object_get_ex(o, "results", &res));
		FZ_CHECK(json_object_is_type(res, json_type_array));
		FZ_CHECK(odd || json_object_array_length(res) == n_want);
		m10 = round(max * 10.0) / 10.0;
		if (!isfinite(m10)) {
			FZ_CHECK(json_object_is_type(lat, json_type_null));
		} else {
			FZ_CHECK(json_object_is_type(lat, json_type_double));
			FZ_CHECK(odd || json_object_get_double(lat) == m10);
		}
		for (size_t j = 0; !odd && j < n_want; j++)
			FZ_CHECK(json_object_equal(
				json_object_array_get_idx(res, j), want[j].o));
		json_object_put(o);
		free(want);
		A.free(A.arg, out);
	}
	for (unsigned int i = 0; i < n; i++) {
		if (ao[i] != NULL)
			json_object_put(ao[i]);
		pieces_free(&ps[i]);
	}
	mem_check_empty();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };

	switch (fz_u8(&f) % 3) {
	case 0:
		binary(&f);
		break;
	case 1:
		json_sub(&f);
		break;
	default:
		json_merge(&f);
		break;
	}
	return 0;
}
