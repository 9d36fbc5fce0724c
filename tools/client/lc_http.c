/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * A minimal blocking HTTP/1.1 client (RFC 9112) over kernel sockets, for
 * the tools: one connection, keep-alive, Content-Length bodies only (the
 * LARQL servers never chunk). Errors name the failing call and why, in the
 * manner of Redis anet.c.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <json-c/json.h>

#include "larql_client.h"

#define LC_HEAD_MAX (64 * 1024)
#define LC_BODY_MAX (1u << 30)

static int
fail(struct lc_http *c, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return rc;
}

int
lc_url_parse(const char *url, char *host, size_t hlen, char *port,
	     size_t plen)
{
	const char *h = url, *e, *colon;
	size_t n;

	if (strncmp(h, "http://", 7) == 0)
		h += 7;
	e = h + strcspn(h, "/");
	if (*h == '[') {	/* [v6]:port */
		const char *rb = memchr(h, ']', e - h);

		if (rb == NULL)
			return -EINVAL;
		n = rb - h - 1;
		if (n == 0 || n >= hlen)
			return -EINVAL;
		memcpy(host, h + 1, n);
		host[n] = '\0';
		colon = rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(h, ':', e - h);
		n = (colon ? colon : e) - h;
		if (n == 0 || n >= hlen)
			return -EINVAL;
		memcpy(host, h, n);
		host[n] = '\0';
	}
	if (colon) {
		n = e - colon - 1;
		if (n == 0 || n >= plen)
			return -EINVAL;
		memcpy(port, colon + 1, n);
		port[n] = '\0';
	} else {
		snprintf(port, plen, "80");
	}
	return 0;
}

int
lc_http_init(struct lc_http *c, const char *url)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (lc_url_parse(url, c->host, sizeof(c->host), c->port,
			 sizeof(c->port)) < 0)
		return fail(c, -EINVAL, "bad URL '%s' (want http://host:port)",
			    url);
	return 0;
}

void
lc_http_close(struct lc_http *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->requests = 0;
}

static int
http_connect(struct lc_http *c)
{
	struct addrinfo hints, *res, *ai;
	int rc, fd = -1, one = 1, saved = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(c->host, c->port, &hints, &res);
	if (rc != 0)
		return fail(c, -EHOSTUNREACH, "getaddrinfo %s:%s: %s",
			    c->host, c->port, gai_strerror(rc));
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return fail(c, -saved, "connect %s:%s: %s", c->host, c->port,
			    strerror(saved));
	/* Small requests, one per layer: never wait for Nagle. */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0) {
		saved = errno;
		close(fd);
		return fail(c, -saved, "setsockopt TCP_NODELAY: %s",
			    strerror(saved));
	}
	c->fd = fd;
	c->requests = 0;
	c->connects++;
	return 0;
}

static int
write_all(struct lc_http *c, const void *p, size_t n)
{
	const char *s = p;
	ssize_t w;

	while (n > 0) {
		w = send(c->fd, s, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return fail(c, -errno, "send to %s:%s: %s", c->host,
				    c->port, strerror(errno));
		s += w;
		n -= w;
		c->bytes_out += w;
	}
	return 0;
}

/* Read more into c->buf; returns bytes read, 0 at EOF, or -errno. */
static ssize_t
read_more(struct lc_http *c, size_t want)
{
	ssize_t r;

	/* One spare byte keeps the buffer NUL-terminated for sscanf. */
	if (c->cap - c->len < want + 1) {
		size_t ncap = c->cap ? c->cap : 16384;
		uint8_t *nb;

		while (ncap - c->len < want + 1)
			ncap *= 2;
		nb = realloc(c->buf, ncap);
		if (nb == NULL)
			return fail(c, -ENOMEM, "realloc %zu bytes", ncap);
		c->buf = nb;
		c->cap = ncap;
	}
	do {
		r = recv(c->fd, c->buf + c->len, c->cap - c->len - 1, 0);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return fail(c, -errno, "recv from %s:%s: %s", c->host,
			    c->port, strerror(errno));
	c->len += r;
	c->buf[c->len] = '\0';
	c->bytes_in += r;
	return r;
}

/* Case-insensitive header lookup in [h, end): copies the trimmed value. */
static int
header(const char *h, const char *end, const char *name, char *val,
       size_t vlen)
{
	size_t nl = strlen(name);
	const char *line = h, *eol, *v;

	while (line < end) {
		eol = memchr(line, '\n', end - line);
		if (eol == NULL)
			eol = end;
		if ((size_t)(eol - line) > nl && line[nl] == ':' &&
		    strncasecmp(line, name, nl) == 0) {
			size_t n;

			v = line + nl + 1;
			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			n = eol - v;
			while (n > 0 && (v[n - 1] == '\r' || v[n - 1] == ' '))
				n--;
			if (n >= vlen)
				n = vlen - 1;
			memcpy(val, v, n);
			val[n] = '\0';
			return 1;
		}
		line = eol + 1;
	}
	return 0;
}

static int
exchange(struct lc_http *c, const char *head, size_t hl, const void *body,
	 size_t len, struct lc_http_resp *resp, int *retryable)
{
	const char *eoh = NULL, *b;
	char val[128];
	size_t hlen, blen;
	int close_after = 0;
	ssize_t r;

	*retryable = c->requests > 0;
	if (write_all(c, head, hl) < 0 || write_all(c, body, len) < 0)
		return -EPIPE;
	c->len = 0;
	while (eoh == NULL) {
		r = read_more(c, 4096);
		if (r < 0)
			return (int)r;
		if (r == 0)
			return fail(c, -ECONNRESET, "recv from %s:%s: "
				    "connection closed before a response",
				    c->host, c->port);
		*retryable = 0;
		eoh = memmem(c->buf, c->len, "\r\n\r\n", 4);
		if (eoh == NULL && c->len > LC_HEAD_MAX)
			return fail(c, -EBADMSG, "response head over %d bytes",
				    LC_HEAD_MAX);
	}
	b = (const char *)c->buf;
	hlen = eoh + 4 - b;
	if (sscanf(b, "HTTP/1.%*c %d", &resp->status) != 1)
		return fail(c, -EBADMSG, "bad status line from %s:%s",
			    c->host, c->port);
	if (header(b, eoh, "Transfer-Encoding", val, sizeof(val)))
		return fail(c, -ENOTSUP, "Transfer-Encoding %s not supported",
			    val);
	if (!header(b, eoh, "Content-Length", val, sizeof(val)))
		return fail(c, -EBADMSG, "response without Content-Length");
	blen = strtoull(val, NULL, 10);
	if (blen > LC_BODY_MAX)
		return fail(c, -EFBIG, "response body of %zu bytes", blen);
	if (!header(b, eoh, "Content-Type", resp->ctype, sizeof(resp->ctype)))
		resp->ctype[0] = '\0';
	if (header(b, eoh, "Connection", val, sizeof(val)) &&
	    strcasecmp(val, "close") == 0)
		close_after = 1;
	while (c->len < hlen + blen) {
		r = read_more(c, hlen + blen - c->len);
		if (r < 0)
			return (int)r;
		if (r == 0)
			return fail(c, -ECONNRESET, "recv from %s:%s: closed "
				    "after %zu of %zu body bytes", c->host,
				    c->port, c->len - hlen, blen);
	}
	resp->head_len = hlen;
	resp->body = c->buf + hlen;
	resp->body_len = blen;
	c->requests++;
	if (close_after)
		lc_http_close(c);
	return 0;
}

int
lc_http_request(struct lc_http *c, const char *method, const char *path,
		const char *ctype, const char *accept, const void *body,
		size_t len, struct lc_http_resp *resp)
{
	char head[1024];
	int hl, rc, attempt, retryable;

	hl = snprintf(head, sizeof(head),
		      "%s %s HTTP/1.1\r\nHost: %s:%s\r\n"
		      "Content-Length: %zu\r\n%s%s%s%s%s%s\r\n",
		      method, path, c->host, c->port, len,
		      ctype ? "Content-Type: " : "", ctype ? ctype : "",
		      ctype ? "\r\n" : "",
		      accept ? "Accept: " : "", accept ? accept : "",
		      accept ? "\r\n" : "");
	if (hl < 0 || (size_t)hl >= sizeof(head))
		return fail(c, -EINVAL, "request head too long");
	memset(resp, 0, sizeof(*resp));
	resp->req_len = hl + len;
	for (attempt = 0; attempt < 2; attempt++) {
		if (c->fd < 0) {
			rc = http_connect(c);
			if (rc < 0)
				return rc;
		}
		rc = exchange(c, head, hl, body, len, resp, &retryable);
		if (rc == 0)
			return 0;
		lc_http_close(c);
		/* A kept-alive connection the server closed meanwhile. */
		if (!retryable)
			return rc;
	}
	return rc;
}

int
lc_http_stats(struct lc_http *c, uint32_t *hidden, uint32_t *layers)
{
	struct lc_http_resp r;
	struct json_object *o, *v;
	char *s;
	int rc;

	rc = lc_http_request(c, "GET", "/v1/stats", NULL, NULL, NULL, 0, &r);
	if (rc < 0)
		return rc;
	if (r.status != 200)
		return fail(c, -EPROTO, "GET /v1/stats on %s:%s: status %d",
			    c->host, c->port, r.status);
	s = strndup((const char *)r.body, r.body_len);
	if (s == NULL)
		return fail(c, -ENOMEM, "strndup");
	o = json_tokener_parse(s);
	free(s);
	if (o == NULL)
		return fail(c, -EBADMSG, "GET /v1/stats: body is not JSON");
	rc = 0;
	if (!json_object_object_get_ex(o, "hidden_size", &v) ||
	    json_object_get_int64(v) <= 0)
		rc = fail(c, -EBADMSG, "GET /v1/stats: no hidden_size");
	else
		*hidden = json_object_get_int64(v);
	if (rc == 0 && layers != NULL) {
		if (json_object_object_get_ex(o, "layers", &v) &&
		    json_object_is_type(v, json_type_int))
			*layers = json_object_get_int64(v);
		else
			rc = fail(c, -EBADMSG, "GET /v1/stats: no layers");
	}
	json_object_put(o);
	return rc;
}
