#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# lib/net against the Linux kernel through net_tap (issue 3, "Tests").
# net_testd runs inside a namespace of its own (prefix fsn, 198.18.1.0/24,
# docs/DEVELOPING.md), so its tap device and the kernel peer never touch the
# root namespace.  The kernel side is 198.18.1.1, the stack 198.18.1.2.
#
# usage: net_tap.sh NET_TESTD [TCP_CLIENT_PY]
#   With TCP_CLIENT_PY (tests/e2e/net_tcp_client.py) also runs the TCP
#   checks: transfers of 1 B..64 MiB verified byte for byte, 1000
#   concurrent connections, and the same under tc netem.
set -euo pipefail

testd=$1
client=${2:-}
ns=fsn-tap-$$
prefix=fsn_tap_$$
dir=$(mktemp -d /tmp/fsn-tap.XXXXXX)
pid=
out=/dev/null
step=setup

cleanup() {
	rc=$?
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "/var/run/dpdk/$prefix"
	if [ "$rc" -ne 0 ]; then
		echo "net_tap.sh: FAILED at step '$step'" >&2
		tail -n 60 "$out" >&2 2>/dev/null || true
	fi
	rm -rf "$dir"
	exit "$rc"
}
trap cleanup EXIT INT TERM

nsx() { ip netns exec "$ns" "$@"; }
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$out"; }

ip netns add "$ns"
nsx ip link set lo up
# No IPv6 chatter (router/MLD solicitations) in the counters.
nsx sysctl -qw net.ipv6.conf.all.disable_ipv6=1
nsx sysctl -qw net.ipv6.conf.default.disable_ipv6=1

# start_testd LABEL [net_testd options...]: net_testd on a fresh tap fsn0
start_testd() {
	local label=$1
	shift
	out="$dir/testd-$label.out"
	# Not through nsx: a shell function in the background is a subshell,
	# and $! must be timeout(1) itself so that TERM reaches net_testd.
	ip netns exec "$ns" timeout 900 "$testd" --no-pci --no-huge -m 512 \
		--file-prefix "$prefix" -l 0 --vdev=net_tap0,iface=fsn0 \
		--log-level=pmd.net.tap:error \
		-- --ip 198.18.1.2/24 --seconds 880 --idle-us 20 "$@" \
		>"$out" 2>&1 &
	pid=$!
	step="$label: tap device"
	for _ in $(seq 100); do
		nsx ip link show fsn0 >/dev/null 2>&1 && break
		sleep 0.1
	done
	nsx ip addr add 198.18.1.1/24 dev fsn0
	nsx ip link set fsn0 up
	for _ in $(seq 200); do
		grep -q 'net_testd: up' "$out" && break
		sleep 0.1
	done
	grep -q 'net_testd: up' "$out"
}

stop_testd() {
	step="stop"
	kill -TERM "$pid"
	wait "$pid" || true
	pid=
	for _ in $(seq 100); do
		grep -q '^drop_no_mbuf ' "$out" && break
		sleep 0.1
	done
	grep -v ' 0$' "$out" | grep -v '^EAL\|^tap\|^qdisc\|^eth_dev\|^TEL' || true
}

svc=()
[ -n "$client" ] && svc=(--echo 7 --sink 9)
start_testd clean "${svc[@]}"

step="ping"
nsx timeout 20 ping -q -c 5 -i 0.2 -W 2 198.18.1.2
step="ping full MTU with pattern"
nsx timeout 20 ping -q -c 3 -i 0.2 -W 2 -s 1472 -p a55a0ff0 -M do 198.18.1.2
step="arping"
nsx timeout 20 arping -q -c 3 -w 5 -I fsn0 198.18.1.2
step="fragmented ping is dropped"
if nsx timeout 10 ping -q -c 2 -i 0.2 -W 1 -s 2000 -M dont 198.18.1.2; then
	echo "a fragmented echo request was answered" >&2
	exit 1
fi

step="telemetry"
# /ffn/net/stats over DPDK's telemetry socket, as an operator would read it.
python3 - "/var/run/dpdk/$prefix/dpdk_telemetry.v2" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.recv(1024)                      # greeting
s.send(b"/ffn/net/stats")
st = json.loads(s.recv(65536))["/ffn/net/stats"]
assert st["icmp_echo_tx"] >= 8 and st["arp_req_answered"] >= 3, st
print("telemetry /ffn/net/stats:", st["rx_pkts"], "rx,", st["tx_pkts"], "tx")
PY

if [ -n "$client" ]; then
	step="tcp"
	nsx timeout 700 taskset -c 1 python3 "$client" 198.18.1.2 7 9
fi

stop_testd
step="counters"
[ "$(stat_of icmp_echo_tx)" -ge 8 ]
[ "$(stat_of arp_req_answered)" -ge 3 ]
[ "$(stat_of drop_ip_frag)" -ge 2 ]
[ "$(stat_of drop_ip_cksum)" -eq 0 ]

if [ -n "$client" ]; then
	# The kernel here has no sch_netem: net_testd impairs both directions
	# itself (tests/net/net_testd_netem.c).  25 ms each way is the 50 ms
	# RTT of "tc netem delay 50ms" on one interface; reordered frames are
	# 10 ms late.  Loss bounds each connection's rate (Mathis: MSS/RTT *
	# 1.22/sqrt(p), ~290 KB/s at 1.5 % effective loss, ~150 KB/s at 5.5 %),
	# so the client runs the transfers side by side (--parallel), each
	# verified on its own; the largest decides the time.  --check adds
	# the stack as receiver alone (net_testd verifies what the kernel's
	# congestion control sends).
	# netem_run LABEL SPEC MAX_BYTES
	netem_run() {
		start_testd "$1" "${svc[@]}" --check 11 --netem "$2"
		step="$1: tcp"
		nsx timeout 600 taskset -c 1 python3 "$client" 198.18.1.2 7 9 \
			--check 11 --label "$1" --timeout 120 --parallel 6 \
			--max-size "$3"
		stop_testd
		step="$1: counters"
		[ "$(stat_of netem_up_lost)" -gt 0 ]
		[ "$(stat_of netem_down_lost)" -gt 0 ]
		[ "$(stat_of netem_up_dups)" -gt 0 ]
		[ "$(stat_of netem_down_reordered)" -gt 0 ]
		[ "$(stat_of netem_up_corrupted)" -gt 0 ]
		[ "$(stat_of tcp_retransmits)" -gt 0 ]
		[ "$(stat_of tcp_check_bad)" -eq 0 ]
	}
	netem_run netem-1pct "delay_ms=25,loss=1,dup=1,corrupt=0.5,reorder=5" \
		"${NETEM_MAX:-67108864}"
	netem_run netem-5pct "delay_ms=25,loss=5,dup=1,corrupt=0.5,reorder=5" \
		"${NETEM5_MAX:-16777216}"
fi
echo "net_tap.sh: ok"
