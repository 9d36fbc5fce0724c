/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 ffn-shard authors
 *
 * net_port_precheck(): what a port must satisfy before net_port_init()
 * configures it, checked after EAL probed it (`ffn-shard --check` and
 * every start). For net_af_xdp, the kernel interface behind the port
 * (net_xdp.h) too: the kernel keeps that interface, so what the PMD
 * cannot see (its MTU, which queues carry which flows) decides whether
 * traffic reaches the appliance at all.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>

#include "net.h"
#include "net_priv.h"
#include "net_xdp.h"

#define FAIL(k, ...) do {					\
		*key = (k);					\
		snprintf(why, whylen, __VA_ARGS__);		\
		rc = -EINVAL;					\
		goto out;					\
	} while (0)

/* The value of devargs key k as an unsigned number, or dflt if absent;
 * -1 when it is not a number. */
static long
kv_num(struct rte_kvargs *kv, const char *k, long dflt)
{
	const char *v = kv ? rte_kvargs_get(kv, k) : NULL;
	char *end;
	long n;

	if (v == NULL)
		return dflt;
	errno = 0;
	n = strtol(v, &end, 10);
	return (errno || end == v || *end || n < 0) ? -1 : n;
}

/* What an af_xdp port's --vdev says: iface ("" if absent),
 * start_queue and queue_count (the PMD's defaults 0 and 1; -1 when not
 * a number). One parse for the log and the checks. */
struct af_xdp_args {
	char iface[128];	/* net_xdp_if_read() refuses a long one */
	long q0, nq;
};

static void
af_xdp_args(const struct rte_eth_dev_info *di, struct af_xdp_args *a)
{
	const struct rte_devargs *da = rte_dev_devargs(di->device);
	struct rte_kvargs *kv = NULL;
	const char *v;

	if (da != NULL && da->args != NULL && da->args[0] != '\0')
		kv = rte_kvargs_parse(da->args, NULL);
	v = kv ? rte_kvargs_get(kv, "iface") : NULL;
	snprintf(a->iface, sizeof(a->iface), "%s", v != NULL ? v : "");
	a->q0 = kv_num(kv, "start_queue", 0);
	a->nq = kv_num(kv, "queue_count", 1);
	rte_kvargs_free(kv);
}

void
net_port_xdp_log(uint16_t port_id)
{
	struct rte_eth_dev_info di;
	struct af_xdp_args a;
	struct net_xdp_if f;
	char err[200];

	if (rte_eth_dev_info_get(port_id, &di) != 0 || !net_is_af_xdp(&di))
		return;
	af_xdp_args(&di, &a);
	if (a.iface[0] == '\0')
		return;
	if (net_xdp_if_read(a.iface, &f, err, sizeof(err)) != 0) {
		NET_LOG(WARNING, "port %u: %s\n", port_id, err);
		return;
	}
	/* The mode the kernel gave, which --check could only foresee. */
	NET_LOG(INFO, "port %u: XDP program %u on %s, %s mode\n", port_id,
		f.prog_id, a.iface, net_xdp_attached_name(f.attached));
}

static int
check_af_xdp(uint16_t port_id, const struct rte_eth_dev_info *di,
	     uint16_t nb_queues, uint16_t mtu, FILE *out, const char **key,
	     char *why, size_t whylen)
{
	struct af_xdp_args a;
	struct net_xdp_if f;
	const char *iface = a.iface;
	char mode[160], err[200];
	long q0, nq;
	int rc = 0;

	af_xdp_args(di, &a);
	q0 = a.q0;
	nq = a.nq;
	if (iface[0] == '\0')
		FAIL("device", "net_af_xdp without iface= in its --vdev");
	if (q0 < 0 || nq < 1)
		FAIL("device", "net_af_xdp on %s: start_queue and "
		     "queue_count must be numbers (queue_count >= 1)", iface);
	if (net_xdp_if_read(iface, &f, err, sizeof(err)) < 0)
		FAIL("device", "net_af_xdp: %s", err);
	/* One XDP socket per queue, one queue per network lcore: a queue
	 * no lcore polls would swallow the flows the NIC hashes to it. */
	if (nq != nb_queues)
		FAIL("device", "net_af_xdp on %s: queue_count=%ld in its "
		     "--vdev, but the port has %u network lcore queue(s): "
		     "make them equal", iface, nq, nb_queues);
	if (q0 + nq > (long)f.rx_queues)
		FAIL("device", "net_af_xdp on %s: queues %ld-%ld, but the "
		     "interface has %u RX queue(s) (ethtool -l %s)", iface,
		     q0, q0 + nq - 1, f.rx_queues, iface);
	if (mtu > f.mtu)
		FAIL("mtu", "%u is above %s's MTU %u: longer frames never "
		     "arrive (ip link set %s mtu %u, or a smaller mtu)", mtu,
		     iface, f.mtu, iface, mtu);
	net_xdp_mode_str(&f, mode, sizeof(mode));
	if (out != NULL) {
		fprintf(out, "  port %u: net_af_xdp on %s (ifindex %u, driver "
			"%s): queues %ld-%ld of %u, MTU %u (interface %u, PMD "
			"at most %u)\n", port_id, iface, f.ifindex, f.driver,
			q0, q0 + nq - 1, f.rx_queues, mtu, f.mtu, di->max_mtu);
		fprintf(out, "    XDP mode: %s\n", mode);
		if (q0 != 0 || nq < (long)f.rx_queues)
			fprintf(out, "    warning: %s's queues outside %ld-%ld "
				"stay with the kernel: flows the NIC hashes "
				"there never reach the appliance (ethtool -L "
				"%s combined %ld, or steer them with ethtool "
				"-N)\n", iface, q0, q0 + nq - 1, iface, nq);
		if (f.prog_id != 0)
			fprintf(out, "    warning: XDP program %u is attached "
				"to %s already (%s): the PMD loads its own "
				"only where none is, unless xdp_prog= names "
				"it\n", f.prog_id, iface,
				net_xdp_attached_name(f.attached));
	}
out:
	return rc;
}

int
net_port_precheck(uint16_t port_id, uint16_t nb_queues, uint16_t mtu,
		  FILE *out, const char **key, char *why, size_t whylen)
{
	struct rte_eth_dev_info di;
	int rc;

	*key = "device";
	rc = rte_eth_dev_info_get(port_id, &di);
	if (rc != 0) {
		snprintf(why, whylen, "rte_eth_dev_info_get: %s",
			 strerror(-rc));
		return -EINVAL;
	}
	if (mtu > di.max_mtu || mtu < di.min_mtu) {
		*key = "mtu";
		snprintf(why, whylen, "%u is outside what %s takes (%u-%u)",
			 mtu, di.driver_name, di.min_mtu, di.max_mtu);
		return -EINVAL;
	}
	if (net_is_af_xdp(&di))
		return check_af_xdp(port_id, &di, nb_queues, mtu, out, key,
				    why, whylen);
	if (nb_queues > di.max_rx_queues || nb_queues > di.max_tx_queues) {
		snprintf(why, whylen, "%u queues, %s has %u RX and %u TX",
			 nb_queues, di.driver_name, di.max_rx_queues,
			 di.max_tx_queues);
		return -EINVAL;
	}
	return 0;
}
