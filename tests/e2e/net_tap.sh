#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# lib/net against the Linux kernel through net_tap (issue 3, "Tests").
# net_testd runs inside a namespace of its own (prefix fsn, 198.18.1.0/24,
# docs/DEVELOPING.md), so its tap device and the kernel peer never touch the
# root namespace (set up and removed by tests/e2e/appliance/lib.sh).  The
# kernel side is 198.18.1.1, the stack 198.18.1.2.
#
# usage: net_tap.sh NET_TESTD [TCP_CLIENT_PY]
#   With TCP_CLIENT_PY (tests/e2e/net_tcp_client.py) also runs the TCP
#   checks: transfers of 1 B..64 MiB verified byte for byte, 1000
#   concurrent connections, and the same under tc netem.
set -euo pipefail

testd=$1
client=${2:-}
FSA_PFX=fsn
FSA_NET=198.18.1
. "$(dirname "$0")/appliance/lib.sh"
fsa_ns_init tap
prefix=${FSA_NAME}_testd
out=/dev/null
fsa_on_fail() { tail -n 60 "$out" 2>/dev/null || true; }
nsx() { fsa_in "$@"; }
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$out"; }

# start_testd LABEL [net_testd options...]: net_testd on a fresh tap fsn0,
# for testd_secs seconds at most (it must outlive the client's bound).
testd_secs=880
start_testd() {
	local label=$1
	shift
	out="$FSA_DIR/testd-$label.out"
	# Not through nsx: a shell function in the background is a subshell,
	# and $! must be timeout(1) itself so that TERM reaches net_testd.
	ip netns exec "$FSA_NS" timeout $((testd_secs + 20)) "$testd" \
		--no-pci --no-huge -m 512 \
		--file-prefix "$prefix" -l 0 --vdev="net_tap0,iface=$FSA_IF" \
		--log-level=pmd.net.tap:error \
		-- --ip "$FSA_IP/24" --seconds "$testd_secs" --idle-us 20 "$@" \
		>"$out" 2>&1 &
	FSA_PID=$!
	FSA_STEP="$label: tap device"
	for _ in $(seq 100); do
		nsx ip link show "$FSA_IF" >/dev/null 2>&1 && break
		sleep 0.1
	done
	nsx ip addr add "$FSA_PEER/24" dev "$FSA_IF"
	nsx ip link set "$FSA_IF" up
	for _ in $(seq 200); do
		grep -q 'net_testd: up' "$out" && break
		sleep 0.1
	done
	grep -q 'net_testd: up' "$out"
}

stop_testd() {
	FSA_STEP="stop"
	kill -TERM "$FSA_PID"
	wait "$FSA_PID" || true
	FSA_PID=
	for _ in $(seq 100); do
		grep -q '^drop_no_mbuf ' "$out" && break
		sleep 0.1
	done
	grep -v ' 0$' "$out" | grep -v '^EAL\|^tap\|^qdisc\|^eth_dev\|^TEL' || true
}

svc=()
[ -n "$client" ] && svc=(--echo 7 --sink 9)
start_testd clean "${svc[@]}"

FSA_STEP="ping"
nsx timeout 20 ping -q -c 5 -i 0.2 -W 2 "$FSA_IP"
FSA_STEP="ping full MTU with pattern"
nsx timeout 20 ping -q -c 3 -i 0.2 -W 2 -s 1472 -p a55a0ff0 -M do "$FSA_IP"
FSA_STEP="arping"
nsx timeout 20 arping -q -c 3 -w 5 -I "$FSA_IF" "$FSA_IP"
FSA_STEP="fragmented ping is dropped"
if nsx timeout 10 ping -q -c 2 -i 0.2 -W 1 -s 2000 -M dont "$FSA_IP"; then
	echo "a fragmented echo request was answered" >&2
	exit 1
fi

FSA_STEP="telemetry"
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
	FSA_STEP="tcp"
	nsx timeout 700 taskset -c 1 python3 "$client" "$FSA_IP" 7 9
fi

stop_testd
FSA_STEP="counters"
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
	# netem_run LABEL SPEC MAX_BYTES BOUND_SECONDS
	netem_run() {
		testd_secs=$(($4 + 60))
		start_testd "$1" "${svc[@]}" --check 11 --netem "$2"
		FSA_STEP="$1: tcp"
		nsx timeout "$4" taskset -c 1 python3 "$client" "$FSA_IP" 7 9 \
			--check 11 --label "$1" --timeout 120 --parallel 6 \
			--max-size "$3"
		stop_testd
		FSA_STEP="$1: counters"
		[ "$(stat_of netem_up_lost)" -gt 0 ]
		[ "$(stat_of netem_down_lost)" -gt 0 ]
		[ "$(stat_of netem_up_dups)" -gt 0 ]
		[ "$(stat_of netem_down_reordered)" -gt 0 ]
		[ "$(stat_of netem_up_corrupted)" -gt 0 ]
		[ "$(stat_of tcp_retransmits)" -gt 0 ]
		[ "$(stat_of tcp_check_bad)" -eq 0 ]
	}
	netem_run netem-1pct "delay_ms=25,loss=1,dup=1,corrupt=0.5,reorder=5" \
		"${NETEM_MAX:-67108864}" 600
	# 5 %: the stack's sender (source, echo) decides the time, at
	# ~100 KB/s per connection (CUBIC, 50 ms RTT, 5.5 % effective loss;
	# Mathis ~150 KB/s); the kernel's sender (BBR here) does 1.2 MB/s.
	# Issue 3 asks for 64 MiB under 1-5 % loss, so this runs to 64 MiB:
	# on the loaded 2-core machine source 688 s and echo 748 s side by
	# side (before tail loss probes; with them, at 32 MiB, 338 / 357 s,
	# the same rate), net_tap ~18 min in all, CI ~27 min of its 90.
	# Bound 1500 s (2x).  Tail loss probes (RFC 8985 §7) halved the
	# timeouts but not the time: this profile alone at 16 MiB,
	# before/after, source 100.4 / 101.7 KB/s, echo 97.9 / 102.9 KB/s,
	# tcp_rto_expired 289 / 130 (the run's total, the 1000 concurrent
	# connections included), 196 probes.  NETEM5_MAX=33554432
	# NETEM5_BOUND=900 runs a shorter 32 MiB check.
	netem_run netem-5pct "delay_ms=25,loss=5,dup=1,corrupt=0.5,reorder=5" \
		"${NETEM5_MAX:-67108864}" "${NETEM5_BOUND:-1500}"
fi
echo "net_tap.sh: ok"
