/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * libFuzzer harness: what lib/grid reads from outside (issue 20,
 * spec/wire.md §9). Input byte 0 picks the reader, the rest is its input:
 *   even: a RouterMessage from a router (grid_msg_router, protobuf-c
 *         code generated from grid.proto). It returns 0 or -EBADMSG;
 *         the strings it copies out are NUL-terminated within their
 *         buffers; an Ack's server_id packed again reads back the same.
 *   odd:  a router URL from a config (grid_url_parse). Accepted URLs
 *         start "http://", their port is 1..65535 and their gRPC target
 *         is exactly HOST:PORT.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"
#include "grid.pb-c.h"
#include "grid_msg.h"
#include "fuzz_util.h"

static void
router_msg(const uint8_t *p, size_t n)
{
	struct grid_rm rm;
	int rc = grid_msg_router(p, n, &rm);

	FZ_CHECK(rc == 0 || rc == -EBADMSG);
	if (rc < 0)
		return;
	FZ_CHECK(rm.kind >= GRID_RM_NONE && rm.kind <= GRID_RM_REJECT);
	FZ_CHECK(memchr(rm.text, '\0', sizeof(rm.text)) != NULL);
	FZ_CHECK(memchr(rm.model_id, '\0', sizeof(rm.model_id)) != NULL);
	if (rm.kind == GRID_RM_ACK && strlen(rm.text) < sizeof(rm.text) - 1) {
		Larql__Grid__V1__RouterMessage m =
			LARQL__GRID__V1__ROUTER_MESSAGE__INIT;
		Larql__Grid__V1__AckMsg a = LARQL__GRID__V1__ACK_MSG__INIT;
		struct grid_rm back;
		uint8_t *buf;
		size_t len;

		a.server_id = rm.text;
		m.payload_case = LARQL__GRID__V1__ROUTER_MESSAGE__PAYLOAD_ACK;
		m.ack = &a;
		len = larql__grid__v1__router_message__get_packed_size(&m);
		buf = malloc(len + 1);
		FZ_CHECK(buf != NULL);
		larql__grid__v1__router_message__pack(&m, buf);
		FZ_CHECK(grid_msg_router(buf, len, &back) == 0);
		FZ_CHECK(back.kind == GRID_RM_ACK);
		/* an embedded NUL ends the C string on both sides */
		FZ_CHECK(strcmp(back.text, rm.text) == 0);
		free(buf);
	}
}

static void
url(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1), why[256], want[GRID_URL_MAX + 8];
	struct grid_url u;
	int rc;

	FZ_CHECK(s != NULL);
	memcpy(s, p, n);
	s[n] = '\0';
	rc = grid_url_parse(s, &u, why, sizeof(why));
	FZ_CHECK(rc == 0 || rc == -EINVAL);
	if (rc == 0) {
		FZ_CHECK(strncmp(s, "http://", 7) == 0);
		FZ_CHECK(strcmp(u.text, s) == 0);
		FZ_CHECK(u.port >= 1);
		FZ_CHECK(u.host[0] != '\0');
		FZ_CHECK(strchr(u.host, '/') == NULL);
		snprintf(want, sizeof(want), "%s:%u", u.host, u.port);
		FZ_CHECK(strcmp(u.target, want) == 0);
	} else {
		FZ_CHECK(memchr(why, '\0', sizeof(why)) != NULL && why[0]);
	}
	free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] % 2 == 0)
		router_msg(data + 1, size - 1);
	else
		url(data + 1, size - 1);
	return 0;
}
