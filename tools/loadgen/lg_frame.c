/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/* The expected answer frame (lg_frame.h), spec/wire.md §5.2. */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "larql_client.h"
#include "lg_expert.h"
#include "lg_frame.h"

static void
put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static int
add_check(struct lg_frame *f, uint32_t off, const uint32_t *v, unsigned int n)
{
	struct lg_check *c = realloc(f->chk, (f->nchk + 1) * sizeof(*c));

	if (c == NULL)
		return -ENOMEM;
	f->chk = c;
	c = &f->chk[f->nchk++];
	c->off = off;
	c->len = 4 * n;
	for (unsigned int i = 0; i < n; i++)
		put_u32(c->bytes + 4 * i, v[i]);
	return 0;
}

int
lg_frame_expect(struct lg_frame *f, int fmt, const uint32_t *layers,
		uint32_t nlayers, uint32_t seq_len, uint32_t hidden)
{
	/* Per result payload: f32 4M, f16 2M, i8 max(seq,1)*(8+hidden). */
	size_t pl = lc_payload_bytes((enum lc_fmt)fmt, seq_len, hidden);
	uint32_t v[3];
	int rc;

	memset(f, 0, sizeof(*f));
	f->fmt = fmt;
	if (nlayers == 1) {
		/* layer, seq_len, latency_ms, payload */
		f->body_len = 12 + pl;
		v[0] = layers[0];
		v[1] = seq_len;
		return add_check(f, 0, v, 2);
	}
	/* marker, n, latency_ms, then per result layer, seq_len,
	 * num_values (a count of values, also for f16 and i8), payload */
	f->body_len = 12 + (uint64_t)nlayers * (12 + pl);
	v[0] = LC_BATCH_MARKER;
	v[1] = nlayers;
	rc = add_check(f, 0, v, 2);
	for (uint32_t i = 0; rc == 0 && i < nlayers; i++) {
		v[0] = layers[i];
		v[1] = seq_len;
		v[2] = seq_len * hidden;
		rc = add_check(f, (uint32_t)(12 + i * (12 + pl)), v, 3);
	}
	return rc;
}

const struct lg_frame *
lg_frame_pick(const char *ctype, const char *want, const struct lg_frame *f,
	      const char *g_ctype, const struct lg_frame *g)
{
	if (want == NULL || strcmp(ctype, want) == 0)
		return f;
	if (g_ctype != NULL && strcmp(ctype, g_ctype) == 0)
		return g;
	return NULL;
}

void
lg_frame_free(struct lg_frame *f)
{
	free(f->chk);
	f->chk = NULL;
	f->nchk = 0;
}

int
lg_frame_check(const struct lg_frame *f, uint32_t *cursor, uint64_t off,
	       const uint8_t *p, size_t n)
{
	int bad = 0;

	while (*cursor < f->nchk) {
		const struct lg_check *c = &f->chk[*cursor];
		uint64_t cend = (uint64_t)c->off + c->len, end = off + n;
		uint64_t s = c->off > off ? c->off : off;
		uint64_t e = cend < end ? cend : end;

		if (c->off >= end)
			break;
		if (s < e && memcmp(p + (s - off), c->bytes + (s - c->off),
				    e - s) != 0)
			bad = -1;
		if (cend > end)
			break;	/* the rest of it comes in the next piece */
		(*cursor)++;
	}
	return bad;
}

int
lg_frame_values_close(const struct lg_frame *f, const uint8_t *ref,
		      const uint8_t *body, double *worst)
{
	struct lc_response a, b;
	char err[128];
	double tol, w = 0;
	int rc;

	if (f->expert)
		return lg_expert_values_close(f, ref, body, worst);
	tol = f->fmt == LC_F32 ? 1e-5 : f->fmt == LC_F16 ?
	      1.0 / 1024 + 1e-5 : 2.0 / 127;
	rc = lc_decode_response(&a, ref, f->body_len, (enum lc_fmt)f->fmt, 0,
				err, sizeof(err));
	if (rc < 0)
		return rc;
	rc = lc_decode_response(&b, body, f->body_len, (enum lc_fmt)f->fmt, 0,
				err, sizeof(err));
	if (rc < 0) {
		lc_response_free(&a);
		return rc;
	}
	rc = a.n == b.n;
	for (uint32_t i = 0; rc && i < a.n; i++) {
		const struct lc_result *x = &a.r[i], *y = &b.r[i];
		uint32_t h = x->seq_len ? x->num_values / x->seq_len : 0;

		if (x->num_values != y->num_values || h == 0) {
			rc = 0;
			break;
		}
		for (uint32_t r0 = 0; r0 < x->num_values; r0 += h) {
			double m = 0;

			for (uint32_t j = r0; j < r0 + h; j++)
				m = fmax(m, fabs(x->values[j]));
			for (uint32_t j = r0; j < r0 + h; j++) {
				double d = fabs((double)y->values[j] -
						x->values[j]);

				if (!(d <= tol * m + 1e-6))
					rc = 0;	/* NaN too */
				if (m > 0 && d / m > w)
					w = d / m;
			}
		}
	}
	lc_response_free(&a);
	lc_response_free(&b);
	if (worst != NULL)
		*worst = w;
	return rc;
}
