#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Reproducer (issue 5, pktgen kit): during a SYN flood from spoofed
# on-link sources, every one of lib/net's per-lcore pending-ARP slots
# (NET_PENDING_HOPS) holds a spoofed next hop that never answers, so a
# peer the appliance has not resolved yet, and which does not ARP for the
# appliance itself (its neighbour cache already has the appliance's MAC,
# as after an appliance restart), gets no SYN-ACK: it is not served while
# the flood lasts.
#
# ffn-shard on net_tap in a namespace (prefix fss, 198.18.5.0/24). A peer
# at 198.18.5.3 is served before the flood; during a SYN flood from
# 198.18.5.10-.250 (stress_blast.py, SYNs only), a new peer 198.18.5.4 on
# the same kernel side (which reuses the kernel's neighbour entry for .2,
# so it sends no ARP request) must be served within 15 s.
#
# usage: stress_arp_pending.sh FFN_SHARD MKVINDEX
# Exit 0 when the new peer is served (the expected behaviour).
set -euo pipefail

shard=$1
mkvindex=$2
py=/usr/bin/python3
ns=fss-arpp-$$
prefix=fss_arpp_$$
dir=$(mktemp -d /tmp/fss-arpp.XXXXXX)
pid=
bpid=
step=setup
url=http://198.18.5.2:8080

cleanup() {
	rc=$?
	for p in $bpid $pid; do
		if kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p" 2>/dev/null || true
			wait "$p" 2>/dev/null || true
		fi
	done
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "/var/run/dpdk/$prefix"
	if [ "$rc" -ne 0 ]; then
		echo "stress_arp_pending.sh: FAILED at step '$step'" >&2
		tail -n 20 "$dir/shard.out" >&2 2>/dev/null || true
	fi
	rm -rf "$dir"
	exit "$rc"
}
trap cleanup EXIT INT TERM

nsx() { ip netns exec "$ns" "$@"; }
here=$(cd "$(dirname "$0")" && pwd)

"$mkvindex" --hidden 64 --intermediate 128 --layers 2 "$dir/model" >/dev/null
cat >"$dir/shard.conf" <<EOF
[eal]
args = -l 0 --no-pci --no-huge -m 512 --file-prefix $prefix --vdev net_tap0,iface=fss0 --log-level=pmd.net.tap:error
[log]
level = warning
[port 0]
device = net_tap0
address = 198.18.5.2/24
[shard arp]
model = $dir/model
layers = 0-1
listen = 8080
net_lcores = 0
EOF

ip netns add "$ns"
nsx ip link set lo up
nsx sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip netns exec "$ns" timeout 120 "$shard" -c "$dir/shard.conf" \
	>"$dir/shard.out" 2>&1 &
pid=$!
for _ in $(seq 100); do
	nsx ip link show fss0 >/dev/null 2>&1 && break
	sleep 0.1
done
nsx ip addr add 198.18.5.1/24 dev fss0
nsx ip link set fss0 up
for _ in $(seq 150); do
	nsx timeout 2 curl -sf "$url/v1/health" >/dev/null 2>&1 && break
	sleep 0.2
done
mac=$(nsx ip neigh show 198.18.5.2 dev fss0 | awk '{ print $3 }')

step="peer .3 served before the ARP flood"
nsx ip addr add 198.18.5.3/24 dev fss0
nsx timeout 10 curl -sf --interface 198.18.5.3 "$url/v1/health"
echo

step="SYN flood"
nsx taskset -c 1 timeout 90 $py "$here/stress_blast.py" --iface fss0 \
	--dst-mac "$mac" --kinds "" --seconds 40 --pps "${FSS_PPS:-5000}" \
	--ready "$dir/ready" >"$dir/blast.json" &
bpid=$!
for _ in $(seq 600); do
	[ -e "$dir/ready" ] && break
	sleep 0.1
done
sleep 3

step="new peer .4 served during the SYN flood"
nsx ip addr add 198.18.5.4/24 dev fss0
if ! nsx timeout 20 curl -sf --max-time 15 --interface 198.18.5.4 "$url/v1/health"; then
	echo "stress_arp_pending.sh: a new peer is not served during the SYN flood" >&2
	nsx timeout 10 curl -s "$url/metrics" | grep -E 'arp|syncookies' >&2 || true
	exit 1
fi
echo
echo "peer .3 (resolved before the flood) still served:"
nsx timeout 20 curl -sf --max-time 15 --interface 198.18.5.3 "$url/v1/health"
echo
echo "stress_arp_pending.sh: OK"
