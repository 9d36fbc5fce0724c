#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Reproducer (issue 5, pktgen kit): the ARP cache of lib/net never frees a
# slot, so ARP requests for the appliance's address from many sender
# addresses fill it for good, and a peer that arrives afterwards is never
# resolved: it is not served.
#
# ffn-shard on net_tap in a namespace (prefix fss, 198.18.5.0/24). A peer
# at 198.18.5.3 (a second address on the kernel side) is served before the
# ARP flood, then 4096 ARP requests "who-has 198.18.5.2 tell 10.77.x.y"
# arrive, then a new peer 198.18.5.4 must be served too.
#
# usage: stress_arp_fill.sh FFN_SHARD MKVINDEX
# Exit 0 when the new peer is served (the expected behaviour).
set -euo pipefail

shard=$1
mkvindex=$2
py=/usr/bin/python3
ns=fss-arp-$$
prefix=fss_arp_$$
dir=$(mktemp -d /tmp/fss-arp.XXXXXX)
pid=
step=setup
url=http://198.18.5.2:8080

cleanup() {
	rc=$?
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "/var/run/dpdk/$prefix"
	if [ "$rc" -ne 0 ]; then
		echo "stress_arp_fill.sh: FAILED at step '$step'" >&2
		tail -n 20 "$dir/shard.out" >&2 2>/dev/null || true
	fi
	rm -rf "$dir"
	exit "$rc"
}
trap cleanup EXIT INT TERM

nsx() { ip netns exec "$ns" "$@"; }

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

step="ARP flood"
nsx taskset -c 1 timeout 60 $py - "$mac" <<'EOF'
import socket, sys
from scapy.all import ARP, Ether
mac = sys.argv[1]
src = open("/sys/class/net/fss0/address").read().strip()
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("fss0", 0))
for i in range(4096):
    f = Ether(dst=mac, src=src) / ARP(op=1, hwsrc=src,
        psrc="10.77.%d.%d" % (i >> 8, i & 255), pdst="198.18.5.2")
    s.send(bytes(f))
print("sent 4096 ARP requests")
EOF
sleep 1
nsx timeout 10 curl -s "$url/metrics" | grep -E 'drop_arp_table_full|arp_rx' || true

step="new peer .4 served after the ARP flood"
nsx ip addr add 198.18.5.4/24 dev fss0
if ! nsx timeout 15 curl -sf --max-time 12 --interface 198.18.5.4 "$url/v1/health"; then
	echo "stress_arp_fill.sh: a new peer is not served after the ARP cache filled" >&2
	nsx timeout 10 curl -s "$url/metrics" | grep -E 'arp' >&2 || true
	exit 1
fi
echo
echo "stress_arp_fill.sh: OK"
