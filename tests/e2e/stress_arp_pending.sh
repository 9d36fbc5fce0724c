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
# ffn-shard on net_tap in a namespace (prefix fss, 198.18.5.0/24, set up by
# tests/e2e/appliance/lib.sh). A peer
# at 198.18.5.3 is served before the flood; during a SYN flood from
# 198.18.5.10-.250 (stress_blast.py, SYNs only), a new peer 198.18.5.4 on
# the same kernel side (which reuses the kernel's neighbour entry for .2,
# so it sends no ARP request) must be served within 15 s.
#
# usage: stress_arp_pending.sh BUILD_DIR
# Exit 0 when the new peer is served (the expected behaviour).
set -euo pipefail

FSA_PFX=fss
FSA_NET=198.18.5
. "$(dirname "$0")/appliance/lib.sh"
fsa_init arpp "${1:?usage: stress_arp_pending.sh BUILD_DIR}"
url=http://$FSA_IP:8080
here=$(cd "$(dirname "$0")" && pwd)

fsa_start_small
mac=$FSA_MAC

FSA_STEP="peer .3 served before the ARP flood"
fsa_in ip addr add $FSA_NET.3/24 dev "$FSA_IF"
fsa_client 10 curl -sf --interface $FSA_NET.3 "$url/v1/health"
echo

FSA_STEP="SYN flood"
ip netns exec "$FSA_NS" timeout 90 taskset -c 1 /usr/bin/python3 \
	"$here/stress_blast.py" --iface "$FSA_IF" --dst-mac "$mac" \
	--dst-ip "$FSA_IP" --src-net "$FSA_NET.0/24" --kinds "" --seconds 40 \
	--pps "${FSS_PPS:-5000}" --ready "$FSA_DIR/ready" \
	>"$FSA_DIR/blast.json" &
FSA_BG_PIDS=$!
for _ in $(seq 600); do
	[ -e "$FSA_DIR/ready" ] && break
	kill -0 "$FSA_BG_PIDS"
	sleep 0.1
done
[ -e "$FSA_DIR/ready" ]
sleep 3

FSA_STEP="new peer .4 served during the SYN flood"
fsa_in ip addr add $FSA_NET.4/24 dev "$FSA_IF"
if ! fsa_client 20 curl -sf --max-time 15 --interface $FSA_NET.4 \
	"$url/v1/health"; then
	echo "stress_arp_pending.sh: a new peer is not served during the SYN flood" >&2
	fsa_client 10 curl -s "$url/metrics" | grep -E 'arp|syncookies' >&2 || true
	exit 1
fi
echo
echo "peer .3 (resolved before the flood) still served:"
fsa_client 20 curl -sf --max-time 15 --interface $FSA_NET.3 \
	"$url/v1/health"
echo
kill -TERM $FSA_BG_PIDS
wait $FSA_BG_PIDS
FSA_BG_PIDS=
cat "$FSA_DIR/blast.json"
fsa_stop
echo "stress_arp_pending.sh: OK"
