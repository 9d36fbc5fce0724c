/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * What a unit's grid keys mean: router URLs (spec/wire.md §9: plain
 * HTTP/2, "http://host:port") and the address each router is reached
 * from. The grid key is read by lib/conf's conf_secret_read().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "grid.h"

int
grid_url_parse(const char *s, struct grid_url *u, char *why, size_t whylen)
{
	static const char scheme[] = "http://";
	const char *h, *colon, *end;
	char *pend;
	unsigned long port;
	size_t hl;

	memset(u, 0, sizeof(*u));
	if (strlen(s) >= sizeof(u->text)) {
		snprintf(why, whylen, "longer than %d bytes",
			 GRID_URL_MAX - 1);
		return -EINVAL;
	}
	snprintf(u->text, sizeof(u->text), "%s", s);
	if (strncmp(s, "https://", 8) == 0) {
		/* §9: the reference's grid port is plain HTTP/2. */
		snprintf(why, whylen, "https is not supported: the grid "
			 "port is plain HTTP/2 (spec/wire.md §9)");
		return -EINVAL;
	}
	if (strncmp(s, scheme, sizeof(scheme) - 1) != 0) {
		snprintf(why, whylen, "not http://HOST:PORT");
		return -EINVAL;
	}
	h = s + sizeof(scheme) - 1;
	end = h + strlen(h);
	if (end > h && end[-1] == '/')
		end--;		/* "http://h:p/" as people paste it */
	colon = memchr(h, ':', (size_t)(end - h));
	if (colon == NULL || colon == h) {
		snprintf(why, whylen, "not http://HOST:PORT (%s)",
			 colon == NULL ? "no port" : "no host");
		return -EINVAL;
	}
	if (memchr(h, '/', (size_t)(end - h)) != NULL ||
	    memchr(h, '@', (size_t)(end - h)) != NULL) {
		snprintf(why, whylen, "not http://HOST:PORT (a path or "
			 "user part)");
		return -EINVAL;
	}
	errno = 0;
	port = strtoul(colon + 1, &pend, 10);
	if (colon + 1 == end || pend != end || errno != 0 || port == 0 ||
	    port > 65535) {
		snprintf(why, whylen, "port not in 1..65535");
		return -EINVAL;
	}
	hl = (size_t)(colon - h);
	memcpy(u->host, h, hl);
	u->host[hl] = '\0';
	u->port = (uint16_t)port;
	snprintf(u->target, sizeof(u->target), "%s:%lu", u->host, port);
	return 0;
}

int
grid_url_source(const struct grid_url *u, char *src, size_t srclen,
		char *why, size_t whylen)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_DGRAM };
	struct addrinfo *res = NULL;
	struct sockaddr_in me, to;
	socklen_t len = sizeof(me);
	int fd, rc = 0;

	rc = getaddrinfo(u->host, NULL, &hints, &res);
	if (rc != 0 || res == NULL) {
		snprintf(why, whylen, "getaddrinfo(%s): %s", u->host,
			 rc != 0 ? gai_strerror(rc) : "no IPv4 address");
		return -EHOSTUNREACH;
	}
	memcpy(&to, res->ai_addr, sizeof(to));
	to.sin_port = htons(u->port);
	freeaddrinfo(res);
	rc = 0;
	/* A connected UDP socket asks the kernel's routing table for the
	 * source address; nothing is sent. */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, whylen, "socket: %s", strerror(errno));
		return -errno;
	}
	if (connect(fd, (const struct sockaddr *)&to, sizeof(to)) < 0) {
		rc = -errno;
		snprintf(why, whylen, "connect: %s", strerror(errno));
	} else if (getsockname(fd, (struct sockaddr *)&me, &len) < 0) {
		rc = -errno;
		snprintf(why, whylen, "getsockname: %s", strerror(errno));
	} else if (inet_ntop(AF_INET, &me.sin_addr, src,
			     (socklen_t)srclen) == NULL) {
		rc = -errno;
		snprintf(why, whylen, "inet_ntop: %s", strerror(errno));
	}
	close(fd);
	return rc;
}
