/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 */

/*
 * What one system call costs on this machine, for reading the tap
 * benchmark (tools/bench/net/README.md): net_tap does one readv() per
 * received frame (and one that finds nothing per empty poll) and one
 * writev() per sent frame, so the figures below bound (b) from below.
 *
 *   syscall_cost [N]	(root: it makes a tap in a network namespace of its
 *			own, gone when it exits)
 *
 * Prints ns per call of getppid(), of a readv() on an empty tap queue
 * (EAGAIN), and of a writev() of a 64-byte frame into a tap that is down
 * (the kernel drops it at once).  Pin it: taskset -c 0 syscall_cost.
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000, i;
	unsigned char frame[64] = { 0 };
	char buf[2048];
	struct iovec rd = { buf, sizeof(buf) }, wr = { frame, sizeof(frame) };
	struct ifreq ifr;
	double t0;
	int fd;

	if (n <= 0)
		n = 200000;
	t0 = now_s();
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	printf("getppid_ns %.0f\n", (now_s() - t0) / n * 1e9);

	if (unshare(CLONE_NEWNET) != 0) {
		fprintf(stderr, "syscall_cost: unshare: %s\n", strerror(errno));
		return 1;
	}
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "fsnsc0");
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) != 0) {
		fprintf(stderr, "syscall_cost: tap: %s\n", strerror(errno));
		return 1;
	}
	t0 = now_s();
	for (i = 0; i < n; i++)
		if (readv(fd, &rd, 1) >= 0)
			break;
	printf("tap_readv_eagain_ns %.0f\n", (now_s() - t0) / n * 1e9);
	memset(frame, 0xff, 6);		/* broadcast, ethertype 0 */
	t0 = now_s();
	for (i = 0; i < n; i++)
		if (writev(fd, &wr, 1) < 0 && errno != EIO)
			break;
	printf("tap_writev_down_ns %.0f\n", (now_s() - t0) / n * 1e9);
	close(fd);
	return 0;
}
