/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * The kernel interface behind a net_af_xdp port (issue 17), as
 * `ffn-shard --check` reports it and the port logs it once started:
 * driver, MTU, RX queues (ethtool channels), the XDP features the
 * driver declares (generic netlink family "netdev", Linux 6.3+) and the
 * XDP program attached to it (rtnetlink IFLA_XDP). Control path only:
 * a few system calls, never on a polling lcore.
 */

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "net_xdp.h"

/* include/uapi/linux/netdev.h (Linux 6.3); Debian 12's headers are 6.1. */
#define XNL_NETDEV_CMD_DEV_GET		1
#define XNL_NETDEV_A_DEV_IFINDEX	1
#define XNL_NETDEV_A_DEV_XDP_FEATURES	3

/* One netlink request and its first answer into buf; the answer's
 * length, or -errno (an NLMSG_ERROR answer gives its error). */
static int
nl_ask(int proto, void *req, size_t len, void *buf, size_t cap)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 2 };
	struct nlmsghdr *h = buf;
	ssize_t n;
	int fd, rc;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, req, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	n = recv(fd, buf, cap, 0);
	rc = n < 0 ? -errno : (int)n;
	close(fd);
	if (rc < (int)sizeof(*h) || !NLMSG_OK(h, (unsigned int)rc))
		return rc < 0 ? rc : -EIO;
	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(h);

		return e->error < 0 ? e->error : -EIO;
	}
	return rc;
}

/* The attribute of type t among [a, a + len), or NULL. */
static const struct nlattr *
nl_attr(const void *a, int len, unsigned int t)
{
	const struct nlattr *at = a;

	while (len >= (int)sizeof(*at) && at->nla_len >= sizeof(*at) &&
	       at->nla_len <= len) {
		if ((at->nla_type & NLA_TYPE_MASK) == t)
			return at;
		len -= NLA_ALIGN(at->nla_len);
		at = (const struct nlattr *)((const char *)at +
					     NLA_ALIGN(at->nla_len));
	}
	return NULL;
}

static void *
nl_put(struct nlmsghdr *h, unsigned int t, const void *v, size_t n)
{
	struct nlattr *at = (struct nlattr *)((char *)h +
					      NLMSG_ALIGN(h->nlmsg_len));

	at->nla_type = t;
	at->nla_len = NLA_HDRLEN + n;
	memcpy((char *)at + NLA_HDRLEN, v, n);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + NLA_ALIGN(at->nla_len);
	return at;
}

/* The generic netlink id of family name, or -errno (-ENOENT: none). */
static int
genl_family(const char *name)
{
	struct {
		struct nlmsghdr h;
		struct genlmsghdr g;
		char a[64];
	} req = {
		.h = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN),
		       .nlmsg_type = GENL_ID_CTRL,
		       .nlmsg_flags = NLM_F_REQUEST },
		.g = { .cmd = CTRL_CMD_GETFAMILY, .version = 1 },
	};
	char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
	const struct nlattr *id;
	int n;

	nl_put(&req.h, CTRL_ATTR_FAMILY_NAME, name, strlen(name) + 1);
	n = nl_ask(NETLINK_GENERIC, &req, req.h.nlmsg_len, buf, sizeof(buf));
	if (n < 0)
		return n;
	id = nl_attr((char *)NLMSG_DATA(buf) + GENL_HDRLEN,
		     n - NLMSG_LENGTH(GENL_HDRLEN), CTRL_ATTR_FAMILY_ID);
	if (id == NULL || id->nla_len < NLA_HDRLEN + 2)
		return -EIO;
	return *(const uint16_t *)((const char *)id + NLA_HDRLEN);
}

/* NETDEV_A_DEV_XDP_FEATURES of ifindex, or -1 when the kernel does not
 * say (no "netdev" family before Linux 6.3). */
static int64_t
xdp_features(unsigned int ifindex)
{
	struct {
		struct nlmsghdr h;
		struct genlmsghdr g;
		char a[16];
	} req = {
		.h = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN),
		       .nlmsg_flags = NLM_F_REQUEST },
		.g = { .cmd = XNL_NETDEV_CMD_DEV_GET, .version = 1 },
	};
	char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
	const struct nlattr *f;
	uint32_t idx = ifindex;
	uint64_t v;
	int fam, n;

	fam = genl_family("netdev");
	if (fam < 0)
		return -1;
	req.h.nlmsg_type = (uint16_t)fam;
	nl_put(&req.h, XNL_NETDEV_A_DEV_IFINDEX, &idx, sizeof(idx));
	n = nl_ask(NETLINK_GENERIC, &req, req.h.nlmsg_len, buf, sizeof(buf));
	if (n < 0)
		return -1;
	f = nl_attr((char *)NLMSG_DATA(buf) + GENL_HDRLEN,
		    n - NLMSG_LENGTH(GENL_HDRLEN), XNL_NETDEV_A_DEV_XDP_FEATURES);
	if (f == NULL || f->nla_len < NLA_HDRLEN + 8)
		return -1;
	memcpy(&v, (const char *)f + NLA_HDRLEN, sizeof(v));
	return (int64_t)(v & INT64_MAX);
}

/* IFLA_XDP of ifindex: how a program is attached (XDP_ATTACHED_*) and
 * its id; -errno when the link cannot be read. */
static int
xdp_attached(unsigned int ifindex, int *mode, unsigned int *prog_id)
{
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} req = {
		.h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
		       .nlmsg_type = RTM_GETLINK,
		       .nlmsg_flags = NLM_F_REQUEST },
		.i = { .ifi_family = AF_UNSPEC, .ifi_index = (int)ifindex },
	};
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	const struct nlattr *x, *a;
	int n;

	*mode = XDP_ATTACHED_NONE;
	*prog_id = 0;
	n = nl_ask(NETLINK_ROUTE, &req, req.h.nlmsg_len, buf, sizeof(buf));
	if (n < 0)
		return n;
	x = nl_attr((char *)NLMSG_DATA(buf) +
		    NLMSG_ALIGN(sizeof(struct ifinfomsg)),
		    n - NLMSG_LENGTH(sizeof(struct ifinfomsg)), IFLA_XDP);
	if (x == NULL)
		return 0;
	a = nl_attr((const char *)x + NLA_HDRLEN, x->nla_len - NLA_HDRLEN,
		    IFLA_XDP_ATTACHED);
	if (a != NULL)
		*mode = *((const uint8_t *)a + NLA_HDRLEN);
	a = nl_attr((const char *)x + NLA_HDRLEN, x->nla_len - NLA_HDRLEN,
		    IFLA_XDP_PROG_ID);
	if (a != NULL)
		memcpy(prog_id, (const char *)a + NLA_HDRLEN, 4);
	return 0;
}

int
net_xdp_if_read(const char *name, struct net_xdp_if *f, char *why,
		size_t whylen)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr;
	int fd, rc;

	memset(f, 0, sizeof(*f));
	if (strlen(name) >= sizeof(f->name)) {
		snprintf(why, whylen, "interface name \"%s\" is longer than "
			 "%zu bytes", name, sizeof(f->name) - 1);
		return -EINVAL;
	}
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->ifindex = if_nametoindex(name);
	if (f->ifindex == 0) {
		rc = -errno;
		snprintf(why, whylen, "interface %s: if_nametoindex: %s (in "
			 "this network namespace)", name, strerror(-rc));
		return rc;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, whylen, "socket(AF_INET): %s", strerror(-rc));
		return rc;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0) {
		rc = -errno;
		close(fd);
		snprintf(why, whylen, "interface %s: SIOCGIFMTU: %s", name,
			 strerror(-rc));
		return rc;
	}
	f->mtu = (unsigned int)ifr.ifr_mtu;
	ifr.ifr_data = (void *)&di;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0)
		snprintf(f->driver, sizeof(f->driver), "%s", di.driver);
	else
		snprintf(f->driver, sizeof(f->driver), "?");
	/* An XDP socket binds to one RX queue: the channels that have one
	 * (combined, or RX-only as veth reports them). A driver without
	 * ETHTOOL_GCHANNELS has the one queue. */
	ifr.ifr_data = (void *)&ch;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0)
		f->rx_queues = ch.combined_count + ch.rx_count;
	if (f->rx_queues == 0)
		f->rx_queues = 1;
	close(fd);
	f->xdp_features = xdp_features(f->ifindex);
	if (xdp_attached(f->ifindex, &f->attached, &f->prog_id) < 0)
		f->attached = -1;
	return 0;
}

const char *
net_xdp_attached_name(int mode)
{
	switch (mode) {
	case XDP_ATTACHED_NONE: return "none";
	case XDP_ATTACHED_DRV: return "native (driver)";
	case XDP_ATTACHED_SKB: return "generic (skb)";
	case XDP_ATTACHED_HW: return "offloaded (hardware)";
	case XDP_ATTACHED_MULTI: return "several modes";
	default: return "unknown";
	}
}

int
net_xdp_mode_str(const struct net_xdp_if *f, char *buf, size_t len)
{
	if (f->xdp_features < 0)
		return snprintf(buf, len, "native if driver %s implements "
				"XDP, else generic (skb); this kernel (< 6.3) "
				"does not say", f->driver);
	if (!(f->xdp_features & NET_XDP_ACT_BASIC))
		return snprintf(buf, len, "generic (skb): driver %s has no "
				"native XDP; every packet is copied from an "
				"skb", f->driver);
	return snprintf(buf, len, "native (driver %s), %s", f->driver,
			(f->xdp_features & NET_XDP_ACT_XSK_ZEROCOPY) ?
			"zero-copy" : "copy mode (no zero-copy XSK)");
}
