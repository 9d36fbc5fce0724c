/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * The kernel baseline for tools/bench/net (issue 3, benchmark (c)): one
 * thread, epoll, non-blocking sockets, the same canned HTTP/1.1 response
 * with a 64-byte body per request that net_testd --http sends.
 *
 *   epoll_http ADDR PORT SECONDS
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 64\r\n"
	"\r\n0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

#define MAXFD 65536
static unsigned char crlf[MAXFD];

static int
nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void
serve(int fd)
{
	static const char end[] = "\r\n\r\n";
	char buf[16384], out[16384];
	ssize_t n, i;
	size_t o = 0;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			close(fd);
			return;
		}
		if (n < 0)
			break;
		for (i = 0; i < n; i++) {
			if (buf[i] == end[crlf[fd]])
				crlf[fd]++;
			else
				crlf[fd] = buf[i] == '\r';
			if (crlf[fd] == 4) {
				crlf[fd] = 0;
				if (o + sizeof(resp) > sizeof(out)) {
					if (write(fd, out, o) < 0)
						break;
					o = 0;
				}
				memcpy(out + o, resp, sizeof(resp) - 1);
				o += sizeof(resp) - 1;
			}
		}
		/* A short read took all there was: no second read to learn
		 * EAGAIN (one syscall a request, about a fifth of the
		 * server's time on the bench VM).  Epoll is level-triggered:
		 * anything arriving later is reported again. */
		if (n < (ssize_t)sizeof(buf))
			break;
	}
	if (o > 0 && write(fd, out, o) < 0 && errno != EAGAIN)
		close(fd);
}

int
main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct epoll_event ev, evs[256];
	int one = 1, lfd, ep, n, i;
	time_t end;

	if (argc != 4 || inet_pton(AF_INET, argv[1], &a.sin_addr) != 1) {
		fprintf(stderr, "usage: epoll_http ADDR PORT SECONDS\n");
		return 2;
	}
	a.sin_port = htons(atoi(argv[2]));
	end = time(NULL) + atoi(argv[3]);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
			listen(lfd, 4096) != 0) {
		perror("epoll_http: bind/listen");
		return 1;
	}
	nonblock(lfd);
	ep = epoll_create1(0);
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	while (time(NULL) < end) {
		n = epoll_wait(ep, evs, 256, 1000);
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd != lfd) {
				serve(fd);
				continue;
			}
			while ((fd = accept(lfd, NULL, NULL)) >= 0) {
				if (fd >= MAXFD) {
					close(fd);
					continue;
				}
				nonblock(fd);
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
					sizeof(one));
				crlf[fd] = 0;
				ev.events = EPOLLIN;
				ev.data.fd = fd;
				epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
			}
		}
	}
	return 0;
}
