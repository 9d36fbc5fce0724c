#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Where the time of benchmark (b) goes, next to (c) (tools/bench/net/
# README.md): the same wrk load on the same pinning as bench_net.sh, and
# for each server
#  - CPU time per core by kind (user/sys/softirq/idle) from /proc/stat,
#  - the server's own run time and run-queue wait (/proc/PID/schedstat)
#    and context switches,
#  - interrupts per core (rescheduling/function-call IPIs, NET_RX softirqs),
#  - with `strace -c` (a separate run: strace slows everything) the
#    syscalls per request,
#  - for (b) the packets per request each way (net_testd counters) and a
#    tcpdump sample of the segments on the tap interface.
# Not a benchmark: the figures explain bench_net.sh's.
#
# usage: diag_tap.sh BUILD_DIR [SECONDS=4] [CONNS=16]
set -euo pipefail

build=$(cd "$1" && pwd)
secs=${2:-4}
conns=${3:-16}
testd=$build/tests/net/net_testd
epoll=$build/tools/bench/net/epoll_http
tag=$$
ns_t=fsn-dt-$tag
ns_s=fsn-ds-$tag
ns_c=fsn-dc-$tag
dir=$(mktemp -d /tmp/fsn-diag.XXXXXX)
pids=()

bn_rm="/var/run/dpdk/fsn_d*_$tag*"
# shellcheck source=tools/bench/net/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"
trap bn_cleanup EXIT INT TERM

snap() {	# snap PID FILE
	{
		grep -E '^cpu[01] ' /proc/stat
		echo "sched $(cat /proc/"$1"/schedstat)"
		echo "ctxt $(awk '/voluntary_ctxt_switches/ {printf "%s ", $2}' \
			/proc/"$1"/status)"
		# wake-ups of the server's other threads (EAL control threads)
		echo "others $(cat /proc/"$1"/task/*/status 2>/dev/null |
			awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}') $(
			awk '/^voluntary_ctxt_switches/ {print $2}' /proc/"$1"/status)"
		awk '$1 == "RES:" || $1 == "CAL:" {print "irq", $1, $2, $3}' \
			/proc/interrupts
		awk '$1 == "NET_RX:" || $1 == "NET_TX:" {print "sirq", $1, $2, $3}' \
			/proc/softirqs
		echo "wall $(date +%s%N)"
	} >"$2"
}

# Differences of two snapshots; REQS requests were served in between.
report() {	# report NAME BEFORE AFTER REQS
	awk -v name="$1" -v reqs="$4" '
	FNR == NR { a[FNR] = $0; next }
	{
		split(a[FNR], o, " ")
		if ($1 ~ /^cpu/) {
			# user nice system idle iowait irq softirq steal
			tot = 0
			for (i = 2; i <= 9; i++) tot += $i - o[i]
			if (tot == 0) tot = 1
			printf "%s %s: user %4.1f%% sys %4.1f%% softirq %4.1f%% irq %4.1f%% idle %4.1f%% steal %4.1f%%\n",
				name, $1, 100 * ($2 - o[2] + $3 - o[3]) / tot,
				100 * ($4 - o[4]) / tot, 100 * ($8 - o[8]) / tot,
				100 * ($7 - o[7]) / tot,
				100 * ($5 - o[5] + $6 - o[6]) / tot,
				100 * ($9 - o[9]) / tot
		} else if ($1 == "sched") {
			run = $2 - o[2]; wait = $3 - o[3]; sl = $4 - o[4]
		} else if ($1 == "ctxt") {
			vol = $2 - o[2]; invol = $3 - o[3]
		} else if ($1 == "others") {
			others = ($2 - $3) - (o[2] - o[3])
		} else if ($1 == "irq" || $1 == "sirq") {
			printf "%s %s per request: cpu0 %.3f cpu1 %.3f\n", name,
				$2, ($3 - o[3]) / reqs, ($4 - o[4]) / reqs
		} else if ($1 == "wall") {
			wall = $2 - o[2]
		}
	}
	END {
		printf "%s server: ran %.1f%% of the wall time, waited on the run queue %.1f%%; %.2f us run time per request; ctx switches per request vol %.3f invol %.3f; other threads woken %.3f per request\n",
			name, 100 * run / wall, 100 * wait / wall,
			run / 1000 / reqs, vol / reqs, invol / reqs,
			others / reqs
	}' "$2" "$3"
}

# wrk in namespace NS for SECS; prints the requests it completed.
wrk_reqs() {	# wrk_reqs NS SECS
	ip netns exec "$1" taskset -c 1 wrk -t1 -c"$conns" -d"$2"s \
		http://198.18.1.2/ | awk '/requests in/ {print $1}'
}

# Run wrk and measure the server PID over the middle of the run.
measure() {	# measure NAME NS PID
	local out=$dir/$1.wrk
	( wrk_reqs "$2" $((secs + 2)) >"$out" ) &
	local w=$!
	sleep 1
	snap "$3" "$dir/$1.0"
	sleep "$secs"
	snap "$3" "$dir/$1.1"
	wait "$w"
	# requests in the window: the run's rate times the window
	local reqs
	reqs=$(awk -v t=$((secs + 2)) -v w="$secs" '{printf "%d", $1 / t * w}' \
		"$out")
	echo "$1: ~$reqs requests in the ${secs}s window ($(cat "$out") in $((secs + 2))s)"
	report "$1" "$dir/$1.0" "$dir/$1.1" "$reqs"
}

# strace -c on the thread PID during a wrk run: syscalls per response
# (per writev/write: one per response on both servers).
trace() {	# trace NAME NS PID
	local out=$dir/$1.strace
	( wrk_reqs "$2" $((secs + 2)) >/dev/null ) &
	local w=$!
	sleep 1
	timeout -s INT "$secs" strace -c -p "$3" -o "$out" 2>/dev/null || true
	wait "$w"
	echo "$1 under strace (slowed), syscalls per response sent:"
	awk '$NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ && $NF != "total" {
		calls[$NF] = $4; err[$NF] = ($5 ~ /^[0-9]+$/) ? $5 : 0
		if ($NF == "writev" || $NF == "write") resp = $4 }
	END { for (k in calls) printf "  %-14s %8.3f (failed %.3f)\n", k,
		calls[k] / resp, err[k] / resp }' "$out" | sort
}

echo "# diag_tap.sh $(date -u +%FT%TZ) seconds=$secs conns=$conns load $(cut -d' ' -f1-3 /proc/loadavg)"

ip netns add "$ns_t"
ip netns add "$ns_s"
ip netns add "$ns_c"
for n in "$ns_t" "$ns_s" "$ns_c"; do
	ip netns exec "$n" ip link set lo up
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
done

# ---- (b), then (b) with net_tap's Rx signal (--tap-rx-signal) -----------
run_b() {	# run_b NAME [net_testd options]
	local name=$1
	shift
	ip netns exec "$ns_t" timeout $((secs * 8 + 60)) "$testd" --no-pci \
		--no-huge -m 1024 --file-prefix fsn_dt_"$tag"_"$name" -l 0 \
		--log-level=lib.eal:error --log-level=pmd.net.tap:error \
		--vdev=net_tap0,iface=fsd0 \
		-- --ip 198.18.1.2/24 --http 80 --seconds $((secs * 8 + 50)) \
		"$@" >"$dir/$name-server.out" 2>&1 &
	srv=$!
	pids+=("$srv")
	bn_tap_up "$ns_t" fsd0 "$dir/$name-server.out"
	# The EAL main thread is the poll loop.
	pid=$(child_of "$srv")
	measure "$name" "$ns_t" "$pid"
	# tcpdump from the second second on: no handshakes in the sample
	( sleep 1; ip netns exec "$ns_t" timeout $((secs + 10)) tcpdump -nn \
		-i fsd0 -c 400 -w "$dir/$name.pcap" tcp port 80 2>/dev/null ) &
	td=$!
	wrk_reqs "$ns_t" 3 >/dev/null
	wait "$td" || true
	echo "$name: 400 segments on the tap (after the handshakes), by direction and kind:"
	tcpdump -nn -r "$dir/$name.pcap" 2>/dev/null | awk '
		{ dir = ($3 ~ /\.80$/) ? "stack->wrk" : "wrk->stack"
		  len = $NF; kind = (len == 0) ? "no payload" : "payload " len
		  n[dir " " kind]++ }
		END { for (k in n) printf "  %-28s %d\n", k, n[k] }' | sort
	trace "$name" "$ns_t" "$pid"
	kill -TERM "$srv"
	wait "$srv" || true
	echo "$name: net_testd counters (whole run):"
	grep -E '^(rx_pkts|tx_pkts|tcp_seg_in|tcp_seg_out|tcp_retransmits) ' \
		"$dir/$name-server.out" | sed 's/^/  /'
}
run_b b
run_b b-sig --tap-rx-signal

# ---- (c) ---------------------------------------------------------------
ip link add fsdv0-"$tag" type veth peer name fsdv1-"$tag"
ip link set fsdv0-"$tag" netns "$ns_s"
ip link set fsdv1-"$tag" netns "$ns_c"
ip netns exec "$ns_s" ip addr add 198.18.1.2/24 dev fsdv0-"$tag"
ip netns exec "$ns_c" ip addr add 198.18.1.1/24 dev fsdv1-"$tag"
ip netns exec "$ns_s" ip link set fsdv0-"$tag" up
ip netns exec "$ns_c" ip link set fsdv1-"$tag" up
ip netns exec "$ns_s" taskset -c 0 timeout $((secs * 8 + 60)) "$epoll" \
	198.18.1.2 80 $((secs * 8 + 50)) &
srv=$!
pids+=("$srv")
sleep 1
pid=$(child_of "$srv")
measure c "$ns_c" "$pid"
trace c "$ns_c" "$pid"
