/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * lib/grid's pure parts (issue 20, spec/wire.md §9): vindex_hash against
 * §9.1's vectors, model_id, the heartbeat's per-layer EMA and p99, the
 * backoff, router URLs, and the messages packed and unpacked through the
 * protobuf-c code generated from grid.proto. (The grid key's sources:
 * tests/conf, conf_secret_read.)
 */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "grid.h"
#include "grid.pb-c.h"
#include "grid_msg.h"

static void
test_vindex_hash_vectors(void **state)
{
	char h[17];

	(void)state;
	/* spec/wire.md §9.1's checks */
	assert_int_equal(grid_vindex_hash("gemma-3-4b-it", 34, h), 0);
	assert_string_equal(h, "6f04b24d6cfecd10");
	assert_int_equal(grid_vindex_hash("demo-model", 4, h), 0);
	assert_string_equal(h, "01c0e4262a2daa31");
	/* The layer count is in the hash, and so is every byte. */
	grid_vindex_hash("demo-model", 5, h);
	assert_string_not_equal(h, "01c0e4262a2daa31");
	grid_vindex_hash("demo-modem", 4, h);
	assert_string_not_equal(h, "01c0e4262a2daa31");
}

/* SipHash's reference vectors are for SipHash-2-4 with a key; with the
 * keys 0 and c = 1, d = 3, the empty input gives this value (Rust's
 * DefaultHasher::new().finish()). */
static void
test_siphash_empty(void **state)
{
	(void)state;
	assert_true(grid_siphash13("", 0) == 0xd1fba762150c532cull);
}

/* Every input length from 0 to 16 goes through the tail path
 * differently: each must change the hash when one byte changes. */
static void
test_siphash_tails(void **state)
{
	uint8_t b[17];

	(void)state;
	for (size_t n = 1; n <= 16; n++) {
		for (size_t i = 0; i < n; i++)
			b[i] = (uint8_t)(i * 7 + 1);
		uint64_t a = grid_siphash13(b, n);

		b[n - 1] ^= 0x80;
		assert_true(grid_siphash13(b, n) != a);
		assert_true(grid_siphash13(b, n - 1) != a);
	}
}

static void
test_model_id(void **state)
{
	(void)state;
	assert_string_equal(grid_model_id("google/gemma-3-4b-it"),
			    "gemma-3-4b-it");
	assert_string_equal(grid_model_id("a/b/c"), "c");
	assert_string_equal(grid_model_id("demo-model"), "demo-model");
	assert_string_equal(grid_model_id("trailing/"), "");
}

static void
test_lat_ema_p99(void **state)
{
	struct grid_layer_stat st[4];
	struct grid_lat t;

	(void)state;
	assert_int_equal(grid_lat_init(&t, 10, 13), 0);
	/* Nothing seen: no entries (§9.3: "one entry per layer served so
	 * far"). */
	assert_int_equal(grid_lat_stats(&t, st, 4), 0);
	/* The first sample starts the average; then EMA alpha 0.1. */
	assert_int_equal(grid_lat_add(&t, 12, 10.0, 1), 0);
	assert_int_equal(grid_lat_add(&t, 12, 20.0, 1), 0);
	assert_int_equal(grid_lat_add(&t, 10, 4.0, 1), 0);
	assert_int_equal(grid_lat_add(&t, 9, 4.0, 1), -ERANGE);
	assert_int_equal(grid_lat_add(&t, 14, 4.0, 1), -ERANGE);
	assert_int_equal(grid_lat_stats(&t, st, 4), 2);
	/* sorted by layer */
	assert_int_equal(st[0].layer, 10);
	assert_true(fabsf(st[0].avg_ms - 4.0f) < 1e-6f);
	assert_int_equal(st[1].layer, 12);
	assert_true(fabsf(st[1].avg_ms - 11.0f) < 1e-5f);	/* 10+.1*10 */
	/* p99 of {10, 20}: nearest rank ceil(1.98) = 2: 20 */
	assert_true(st[1].p99_ms == 20.0f);
	/* max bounds what is copied out */
	assert_int_equal(grid_lat_stats(&t, st, 1), 1);
	assert_int_equal(st[0].layer, 10);
	grid_lat_fini(&t);
}

/* The window is the last 100 requests: older ones leave it. */
static void
test_lat_window(void **state)
{
	struct grid_layer_stat st[1];
	struct grid_lat t;

	(void)state;
	assert_int_equal(grid_lat_init(&t, 0, 0), 0);
	grid_lat_add(&t, 0, 1000.0, 1);		/* an outlier ... */
	for (int i = 1; i <= 99; i++)
		grid_lat_add(&t, 0, (double)i, 1);
	grid_lat_stats(&t, st, 1);
	/* 100 values 1..99 and 1000: rank 99 is 99 */
	assert_true(st[0].p99_ms == 99.0f);
	grid_lat_add(&t, 0, 5.0, 1);		/* ... pushed out by this */
	grid_lat_stats(&t, st, 1);
	assert_true(st[0].p99_ms == 98.0f);	/* 2..99, 5, 5: rank 99 */
	grid_lat_add(&t, 0, 100.0, 1);
	grid_lat_stats(&t, st, 1);
	assert_true(st[0].p99_ms == 99.0f);	/* 1000 gone, 100 is max */
	grid_lat_add(&t, 0, 100.0, 1);
	grid_lat_stats(&t, st, 1);
	assert_true(st[0].p99_ms == 100.0f);	/* two 100s: rank 99 */
	grid_lat_fini(&t);
}

/* n requests at once are n samples; the closed form past a full window
 * equals adding them one by one. */
static void
test_lat_many_requests(void **state)
{
	struct grid_layer_stat a[1], b[1];
	struct grid_lat ta, tb;

	(void)state;
	assert_int_equal(grid_lat_init(&ta, 0, 0), 0);
	assert_int_equal(grid_lat_init(&tb, 0, 0), 0);
	grid_lat_add(&ta, 0, 50.0, 1);
	grid_lat_add(&tb, 0, 50.0, 1);
	grid_lat_add(&ta, 0, 2.0, 250);
	for (int i = 0; i < 250; i++)
		grid_lat_add(&tb, 0, 2.0, 1);
	grid_lat_stats(&ta, a, 1);
	grid_lat_stats(&tb, b, 1);
	assert_true(fabsf(a[0].avg_ms - b[0].avg_ms) < 1e-6f);
	assert_true(a[0].p99_ms == 2.0f && b[0].p99_ms == 2.0f);
	/* 3 at once from an empty layer: 3 samples in the window */
	grid_lat_add(&ta, 0, 7.0, 3);
	grid_lat_stats(&ta, a, 1);
	assert_true(a[0].p99_ms == 7.0f);
	grid_lat_fini(&ta);
	grid_lat_fini(&tb);
}

static void
test_backoff(void **state)
{
	unsigned int s = GRID_BACKOFF_FIRST_S;
	const unsigned int want[] = { 1, 2, 4, 8, 16, 32, 60, 60 };

	(void)state;
	/* §9.5: 1 s doubling to 60 s */
	for (unsigned int i = 0; i < 8; i++) {
		assert_int_equal(s, want[i]);
		s = grid_backoff_next(s);
	}
}

static void
test_url(void **state)
{
	struct grid_url u;
	char why[256], src[32];

	(void)state;
	assert_int_equal(grid_url_parse("http://198.18.3.1:50052", &u, why,
					sizeof(why)), 0);
	assert_string_equal(u.target, "198.18.3.1:50052");
	assert_string_equal(u.host, "198.18.3.1");
	assert_int_equal(u.port, 50052);
	assert_int_equal(grid_url_parse("http://router:9/", &u, why,
					sizeof(why)), 0);
	assert_string_equal(u.target, "router:9");
	assert_string_equal(u.text, "http://router:9/");
	assert_int_equal(grid_url_parse("https://r:1", &u, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "plain HTTP/2"));
	assert_int_equal(grid_url_parse("http://r", &u, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(grid_url_parse("http://r:0", &u, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(grid_url_parse("http://r:1/x", &u, why,
					sizeof(why)), -EINVAL);
	/* The loopback has a route everywhere; its source is itself. */
	assert_int_equal(grid_url_parse("http://127.0.0.1:1", &u, why,
					sizeof(why)), 0);
	assert_int_equal(grid_url_source(&u, src, sizeof(src), why,
					 sizeof(why)), 0);
	assert_string_equal(src, "127.0.0.1");
	/* A name that cannot resolve says so (".invalid", RFC 6761 §6.4). */
	assert_int_equal(grid_url_parse("http://no-such.invalid:1", &u, why,
					sizeof(why)), 0);
	assert_true(grid_url_source(&u, src, sizeof(src), why,
				    sizeof(why)) < 0);
	assert_non_null(strstr(why, "getaddrinfo(no-such.invalid)"));
}

static const struct grid_unit_conf unit = {
	.section = "shard a", .name = "a", .model_id = "demo-model",
	.num_layers = 4, .layer_start = 1, .layer_end = 2,
	.listen_url = "http://198.18.3.2:8080",
};

static Larql__Grid__V1__ServerMessage *
unpack(const struct grid_bytes *b)
{
	Larql__Grid__V1__ServerMessage *m =
		larql__grid__v1__server_message__unpack(NULL, b->n, b->p);

	assert_non_null(m);
	return m;
}

static void
test_msg_server(void **state)
{
	struct grid_layer_stat st[2] = { { 1, 2.5f, 4.0f },
					 { 2, 0.25f, 1.0f } };
	Larql__Grid__V1__ServerMessage *m;
	struct grid_bytes b;

	(void)state;
	assert_int_equal(grid_msg_announce(&unit, "01c0e4262a2daa31", &b), 0);
	m = unpack(&b);
	assert_int_equal(m->payload_case,
			 LARQL__GRID__V1__SERVER_MESSAGE__PAYLOAD_ANNOUNCE);
	assert_string_equal(m->announce->model_id, "demo-model");
	assert_int_equal(m->announce->layer_start, 1);
	assert_int_equal(m->announce->layer_end, 2);
	assert_true(m->announce->ram_bytes == 0);
	assert_string_equal(m->announce->listen_url,
			    "http://198.18.3.2:8080");
	assert_string_equal(m->announce->vindex_hash, "01c0e4262a2daa31");
	larql__grid__v1__server_message__free_unpacked(m, NULL);
	free(b.p);

	assert_int_equal(grid_msg_heartbeat(7, st, 2, &b), 0);
	m = unpack(&b);
	assert_int_equal(m->payload_case,
			 LARQL__GRID__V1__SERVER_MESSAGE__PAYLOAD_HEARTBEAT);
	assert_int_equal(m->heartbeat->requests_in_flight, 7);
	assert_int_equal(m->heartbeat->n_layer_stats, 2);
	assert_int_equal(m->heartbeat->layer_stats[1]->layer, 2);
	assert_true(m->heartbeat->layer_stats[0]->avg_ms == 2.5f);
	assert_true(m->heartbeat->layer_stats[1]->p99_ms == 1.0f);
	larql__grid__v1__server_message__free_unpacked(m, NULL);
	free(b.p);
	/* An idle unit's heartbeat: no entries, still a heartbeat. */
	assert_int_equal(grid_msg_heartbeat(0, NULL, 0, &b), 0);
	m = unpack(&b);
	assert_int_equal(m->payload_case,
			 LARQL__GRID__V1__SERVER_MESSAGE__PAYLOAD_HEARTBEAT);
	assert_int_equal(m->heartbeat->n_layer_stats, 0);
	larql__grid__v1__server_message__free_unpacked(m, NULL);
	free(b.p);

	assert_int_equal(grid_msg_dropping(&unit, "reassigned", &b), 0);
	m = unpack(&b);
	assert_int_equal(m->payload_case,
			 LARQL__GRID__V1__SERVER_MESSAGE__PAYLOAD_DROPPING);
	assert_string_equal(m->dropping->model_id, "demo-model");
	assert_int_equal(m->dropping->layer_start, 1);
	assert_int_equal(m->dropping->layer_end, 2);
	assert_string_equal(m->dropping->reason, "reassigned");
	larql__grid__v1__server_message__free_unpacked(m, NULL);
	free(b.p);
}

/* §9's field numbers, byte by byte: ServerMessage field 1 (announce,
 * length-delimited: tag 0x0a) holding model_id (field 1, 0x0a) ... */
static void
test_msg_wire_bytes(void **state)
{
	static const struct grid_unit_conf u = {
		.model_id = "m", .layer_start = 0, .layer_end = 3,
		.listen_url = "u",
	};
	static const uint8_t want[] = {
		0x0a, 0x0e,		/* announce, 14 bytes */
		0x0a, 0x01, 'm',	/* model_id 1 */
		0x18, 0x03,		/* layer_end 3 (start 0: default) */
		0x2a, 0x01, 'u',	/* listen_url 5 */
		0x32, 0x04, 'h', 'a', 's', 'h',	/* vindex_hash 6 */
	};
	struct grid_bytes b;

	(void)state;
	assert_int_equal(grid_msg_announce(&u, "hash", &b), 0);
	assert_int_equal(b.n, sizeof(want));
	assert_memory_equal(b.p, want, sizeof(want));
	free(b.p);
	/* dropping is field 5 (0x2a), its reason field 4 (0x22) */
	assert_int_equal(grid_msg_dropping(&u, "oom", &b), 0);
	assert_int_equal(b.p[0], 0x2a);
	assert_int_equal(b.p[b.n - 5], 0x22);
	assert_memory_equal(b.p + b.n - 3, "oom", 3);
	free(b.p);
}

static void
pack_router(const Larql__Grid__V1__RouterMessage *m, struct grid_bytes *b)
{
	b->n = larql__grid__v1__router_message__get_packed_size(m);
	b->p = malloc(b->n + 1);
	assert_non_null(b->p);
	larql__grid__v1__router_message__pack(m, b->p);
}

static void
test_msg_router(void **state)
{
	Larql__Grid__V1__RouterMessage m = LARQL__GRID__V1__ROUTER_MESSAGE__INIT;
	Larql__Grid__V1__AckMsg ack = LARQL__GRID__V1__ACK_MSG__INIT;
	Larql__Grid__V1__RejectMsg rej = LARQL__GRID__V1__REJECT_MSG__INIT;
	Larql__Grid__V1__UnassignMsg un = LARQL__GRID__V1__UNASSIGN_MSG__INIT;
	static const uint8_t garbage[] = { 0x0a, 0x7f, 0x01 };
	struct grid_bytes b;
	struct grid_rm rm;

	(void)state;
	ack.server_id = "srv-1700000000-3";
	m.payload_case = LARQL__GRID__V1__ROUTER_MESSAGE__PAYLOAD_ACK;
	m.ack = &ack;
	pack_router(&m, &b);
	assert_int_equal(grid_msg_router(b.p, b.n, &rm), 0);
	assert_int_equal(rm.kind, GRID_RM_ACK);
	assert_string_equal(rm.text, "srv-1700000000-3");
	free(b.p);

	rej.reason = "vindex_hash mismatch";
	m.payload_case = LARQL__GRID__V1__ROUTER_MESSAGE__PAYLOAD_REJECT;
	m.reject = &rej;
	pack_router(&m, &b);
	assert_int_equal(grid_msg_router(b.p, b.n, &rm), 0);
	assert_int_equal(rm.kind, GRID_RM_REJECT);
	assert_string_equal(rm.text, "vindex_hash mismatch");
	free(b.p);

	un.model_id = "demo-model";
	un.layer_start = 1;
	un.layer_end = 2;
	un.reason = "rebalance";
	m.payload_case = LARQL__GRID__V1__ROUTER_MESSAGE__PAYLOAD_UNASSIGN;
	m.unassign = &un;
	pack_router(&m, &b);
	assert_int_equal(grid_msg_router(b.p, b.n, &rm), 0);
	assert_int_equal(rm.kind, GRID_RM_UNASSIGN);
	assert_string_equal(rm.model_id, "demo-model");
	assert_int_equal(rm.layer_start, 1);
	assert_int_equal(rm.layer_end, 2);
	assert_string_equal(rm.text, "rebalance");
	free(b.p);

	/* An empty message: a payload this revision does not know. */
	assert_int_equal(grid_msg_router((const uint8_t *)"", 0, &rm), 0);
	assert_int_equal(rm.kind, GRID_RM_NONE);
	/* A length past the end is not a message. */
	assert_int_equal(grid_msg_router(garbage, sizeof(garbage), &rm),
			 -EBADMSG);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vindex_hash_vectors),
		cmocka_unit_test(test_siphash_empty),
		cmocka_unit_test(test_siphash_tails),
		cmocka_unit_test(test_model_id),
		cmocka_unit_test(test_lat_ema_p99),
		cmocka_unit_test(test_lat_window),
		cmocka_unit_test(test_lat_many_requests),
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_msg_server),
		cmocka_unit_test(test_msg_wire_bytes),
		cmocka_unit_test(test_msg_router),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
