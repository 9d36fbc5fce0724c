/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * lib/net/net_xdp.c: the kernel facts behind an AF_XDP port, read from
 * lo in a network namespace of the test's own (unshare: needs root), so
 * nothing on the host can have attached a program or changed its MTU.
 * and from a veth that iproute2 makes there. --check's use of them runs
 * in tests/e2e/appliance/test_check.sh.
 */
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <cmocka.h>

#include "net_xdp.h"

/* The kernel has the "netdev" generic netlink family (Linux 6.3). */
static int
kernel_says_features(void)
{
	struct utsname u;
	int maj = 0, min = 0;

	assert_int_equal(uname(&u), 0);
	assert_true(sscanf(u.release, "%d.%d", &maj, &min) == 2);
	return maj > 6 || (maj == 6 && min >= 3);
}

static void
test_lo_facts(void **st)
{
	struct net_xdp_if f;
	char why[256] = "";

	(void)st;
	assert_int_equal(net_xdp_if_read("lo", &f, why, sizeof(why)), 0);
	assert_string_equal(f.name, "lo");
	assert_int_equal(f.ifindex, if_nametoindex("lo"));
	assert_int_equal(f.mtu, 65536);	/* a fresh namespace's lo */
	assert_int_equal(f.rx_queues, 1);
	assert_int_equal(f.attached, XDP_ATTACHED_NONE);
	assert_int_equal(f.prog_id, 0);
	if (kernel_says_features())
		/* lo has no native XDP: the features are said, and none */
		assert_int_equal(f.xdp_features, 0);
	else
		assert_int_equal(f.xdp_features, -1);
}

/* A veth made by iproute2 in the test's namespace: ethtool's driver
 * name and channels, and, from Linux 6.3, native XDP without zero-copy
 * (drivers/net/veth.c: NETDEV_XDP_ACT_BASIC, no XSK_ZEROCOPY). */
static void
test_veth_facts(void **st)
{
	struct net_xdp_if f;
	char why[256] = "", mode[200];

	(void)st;
	assert_int_equal(system("ip link add xa0 numrxqueues 3 numtxqueues 3 "
				"type veth peer name xb0 && "
				"ip link set xa0 mtu 2000"), 0);
	assert_int_equal(net_xdp_if_read("xa0", &f, why, sizeof(why)), 0);
	assert_string_equal(f.driver, "veth");
	assert_int_equal(f.rx_queues, 3);
	assert_int_equal(f.mtu, 2000);
	assert_int_equal(f.attached, XDP_ATTACHED_NONE);
	net_xdp_mode_str(&f, mode, sizeof(mode));
	if (kernel_says_features()) {
		assert_true(f.xdp_features & NET_XDP_ACT_BASIC);
		assert_false(f.xdp_features & NET_XDP_ACT_XSK_ZEROCOPY);
		assert_string_equal(mode, "native (driver veth), copy mode "
				    "(no zero-copy XSK)");
	} else {
		assert_int_equal(f.xdp_features, -1);
	}
	assert_int_equal(system("ip link del xa0"), 0);
}

static void
test_missing_interface(void **st)
{
	struct net_xdp_if f;
	char why[256] = "";

	(void)st;
	assert_int_equal(net_xdp_if_read("nosuch0", &f, why, sizeof(why)),
			 -ENODEV);
	assert_non_null(strstr(why, "nosuch0"));
	assert_non_null(strstr(why, "if_nametoindex"));
	assert_int_equal(net_xdp_if_read("a-name-longer-than-16", &f, why,
					 sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "longer than 15 bytes"));
}

static void
test_mode_words(void **st)
{
	struct net_xdp_if f = { .driver = "mlx5_core" };
	char b[200];

	(void)st;
	f.xdp_features = -1;
	net_xdp_mode_str(&f, b, sizeof(b));
	assert_non_null(strstr(b, "native if driver mlx5_core implements"));
	f.xdp_features = 0;
	net_xdp_mode_str(&f, b, sizeof(b));
	assert_non_null(strstr(b, "generic (skb): driver mlx5_core"));
	f.xdp_features = NET_XDP_ACT_BASIC;
	net_xdp_mode_str(&f, b, sizeof(b));
	assert_string_equal(b, "native (driver mlx5_core), copy mode (no "
			    "zero-copy XSK)");
	f.xdp_features = NET_XDP_ACT_BASIC | NET_XDP_ACT_XSK_ZEROCOPY;
	net_xdp_mode_str(&f, b, sizeof(b));
	assert_string_equal(b, "native (driver mlx5_core), zero-copy");
	assert_string_equal(net_xdp_attached_name(XDP_ATTACHED_DRV),
			    "native (driver)");
	assert_string_equal(net_xdp_attached_name(XDP_ATTACHED_SKB),
			    "generic (skb)");
	assert_string_equal(net_xdp_attached_name(XDP_ATTACHED_NONE),
			    "none");
	assert_string_equal(net_xdp_attached_name(-1), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lo_facts),
		cmocka_unit_test(test_veth_facts),
		cmocka_unit_test(test_missing_interface),
		cmocka_unit_test(test_mode_words),
	};

	if (unshare(CLONE_NEWNET) != 0) {
		fprintf(stderr, "test_net_xdp: unshare(CLONE_NEWNET): %s "
			"(needs root)\n", strerror(errno));
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
