#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# lib/net benchmarks (issue 3, "Benchmarks"), all in one run so the ratios
# compare like with like on this noisy shared machine:
#  (a) net_bench_client (this stack, DPDK) <-> net_testd over net_memif,
#      one lcore each: 64-byte echo requests/s, p50/p99 at one request in
#      flight, bulk Gbit/s from the source service;
#  (b) wrk in a namespace <-> net_testd --http over net_tap;
#  (c) the same wrk <-> epoll_http (kernel TCP) over veth.
# Servers on core 0, clients on core 1 (docs/DEVELOPING.md).  (b) and (c)
# alternate for ROUNDS rounds (default 3), one server running at a time;
# the best round of each is compared.
#
# usage: [ROUNDS=N] bench_net.sh BUILD_DIR [SECONDS] [CONNS]
set -euo pipefail

build=$(cd "$1" && pwd)
secs=${2:-10}
conns=${3:-16}
testd=$build/tests/net/net_testd
client=$build/tools/bench/net/net_bench_client
epoll=$build/tools/bench/net/epoll_http
tag=$$
sock=/tmp/fsn-memif-$tag.sock
ns_t=fsn-bt-$tag
ns_s=fsn-bs-$tag
ns_c=fsn-bc-$tag
dir=$(mktemp -d /tmp/fsn-bench.XXXXXX)
pids=()

bn_rm="$sock /var/run/dpdk/fsn_b*_$tag*"
# shellcheck source=tools/bench/net/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"
trap bn_cleanup EXIT INT TERM

eal() { echo --no-pci --no-huge -m 1024 --file-prefix "$1" -l "$2" \
	--log-level=lib.eal:error --log-level=pmd.net.tap:error; }

stop() {
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

echo "# bench_net.sh $(date -u +%FT%TZ) seconds=$secs conns=$conns"

# ---- (a) memif ------------------------------------------------------------
# A fresh server for each client: the memif PMD can crash the server when
# a client leaves (README, known problems), which would lose the next run.
runc() {
	local srv rc=0
	rm -f "$dir/a-server.out" "$sock"
	# shellcheck disable=SC2046
	timeout $((secs + 120)) "$testd" $(eal fsn_bs_"$tag" 0) \
		--vdev=net_memif0,role=server,socket="$sock" \
		-- --ip 198.18.1.2/24 --echo 7 --sink 9 \
		--seconds $((secs + 100)) >"$dir/a-server.out" 2>&1 &
	srv=$!
	bn_wait_up "$dir/a-server.out" || return 0
	# shellcheck disable=SC2046
	timeout $((secs + 60)) "$client" $(eal fsn_bc_"$tag" 1) \
		--vdev=net_memif0,role=client,socket="$sock" \
		-- --ip 198.18.1.3/24 --server 198.18.1.2 --seconds "$secs" \
		"$@" || rc=$?
	stop "$srv"
	return $rc
}
# A failed (a) (see README, known problems) still leaves (b) and (c) to run.
a_rr=$(runc --mode rr --conns "$conns" |
	awk '/requests_per_s/ {print $2}') || true
a_lat=$(runc --mode lat --conns 1 |
	awk '/lat_p/ {printf "%s=%s ", $1, $2}') || true
a_bulk=$(runc --mode bulk --port 9 --conns 4 |
	awk '/bulk_gbit_s/ {print $2}') || true
echo "(a) memif  stack<->stack  64B echo rr: ${a_rr:-FAILED} req/s" \
	"(conns=$conns); low load: ${a_lat:-FAILED}(us); bulk: ${a_bulk:-FAILED} Gbit/s"

# ---- (b) wrk <-> stack over tap, (c) wrk <-> kernel over veth ------------
ip netns add "$ns_t"
ip netns add "$ns_s"
ip netns add "$ns_c"
for n in "$ns_t" "$ns_s" "$ns_c"; do
	ip netns exec "$n" ip link set lo up
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
done
ip link add fsnv0-"$tag" type veth peer name fsnv1-"$tag"
ip link set fsnv0-"$tag" netns "$ns_s"
ip link set fsnv1-"$tag" netns "$ns_c"
ip netns exec "$ns_s" ip addr add 198.18.1.2/24 dev fsnv0-"$tag"
ip netns exec "$ns_c" ip addr add 198.18.1.1/24 dev fsnv1-"$tag"
ip netns exec "$ns_s" ip link set fsnv0-"$tag" up
ip netns exec "$ns_c" ip link set fsnv1-"$tag" up

wrk_rps() { awk '/Requests\/sec/ {print $2}'; }
# p50 and p99 in microseconds
wrk_lat() { awk '$1 == "50%" || $1 == "99%" {
	v = $2 + 0; u = $2; sub(/^[0-9.]+/, "", u)
	v *= (u == "ms") ? 1000 : (u == "s") ? 1000000 : 1
	printf "%s%.0f", ($1 == "50%") ? "" : " ", v }'; }
# The server's wait for a CPU (run queue, /proc/PID/schedstat) in ms: the
# share of core 0 that other processes of this shared machine took.
qwait() { awk '{printf "%d", $2 / 1000000}' /proc/"$1"/schedstat; }
best() { sort -n | awk -v hi="$1" 'NR == 1 {lo = $1} {v = $1}
	END {print hi ? v : lo}'; }

# One server at a time: net_testd busy-polls core 0, and left running it
# would take half of core 0 from epoll_http during (c).  (b) and (c)
# alternate for $rounds rounds so that the load other users put on this
# machine falls on both alike.  That load only ever slows a run down, so
# the best round of each is compared (highest rate, lowest latencies).
rounds=${ROUNDS:-3}
run_b() {
	# shellcheck disable=SC2046
	ip netns exec "$ns_t" timeout $((secs * 2 + 60)) "$testd" \
		$(eal fsn_bt_"$tag"_"$1" 0) --vdev=net_tap0,iface=fsn0 \
		-- --ip 198.18.1.2/24 --http 80 --seconds $((secs * 2 + 40)) \
		>"$dir/b-server.out" 2>&1 &
	srv=$!
	pids+=("$srv")
	bn_tap_up "$ns_t" fsn0 "$dir/b-server.out"
	run_wrk "$ns_t" "$(child_of "$srv")" >"$dir/b.$1"
	stop "$srv"
}
run_c() {
	ip netns exec "$ns_s" taskset -c 0 timeout $((secs * 2 + 60)) \
		"$epoll" 198.18.1.2 80 $((secs * 2 + 50)) &
	srv=$!
	pids+=("$srv")
	sleep 1
	run_wrk "$ns_c" "$(child_of "$srv")" >"$dir/c.$1"
	stop "$srv"
}
# prints "req/s wait% p50_us p99_us"
run_wrk() {
	local q0 q1 rps lat
	q0=$(qwait "$2")
	rps=$(ip netns exec "$1" taskset -c 1 wrk -t1 -c"$conns" -d"$secs"s \
		http://198.18.1.2/ | wrk_rps)
	q1=$(qwait "$2")
	lat=$(ip netns exec "$1" taskset -c 1 wrk -t1 -c1 -d"$secs"s \
		--latency http://198.18.1.2/ | wrk_lat)
	echo "${rps:-0} $(((q1 - q0) / (secs * 10))) ${lat:-0 0}"
}
for r in $(seq "$rounds"); do
	run_b "$r"
	run_c "$r"
	read -r rb qb pb pbb <"$dir/b.$r"
	read -r rc qc pc pcc <"$dir/c.$r"
	ratio=$(awk -v b="$rb" -v c="$rc" \
		'BEGIN {printf "%.2f", (c > 0) ? b / c : 0}')
	echo "round $r: (b) $rb req/s, 1 conn p50 ${pb}us p99 ${pbb}us," \
		"server waited ${qb}% for core 0;" \
		"(c) $rc req/s, p50 ${pc}us p99 ${pcc}us, waited ${qc}%;" \
		"(b)/(c) $ratio"
	echo "$rb $pb $pbb $rc $pc $pcc" >>"$dir/rounds"
done
col() { awk -v k="$1" '{print $k}' "$dir/rounds" | best "$2"; }
wb=$(col 1 1)
wc=$(col 4 1)
lb="p50=$(col 2 0)us p99=$(col 3 0)us"
lc="p50=$(col 5 0)us p99=$(col 6 0)us"
echo "(b) tap    wrk<->stack   HTTP 64B body: ${wb:-FAILED} req/s" \
	"(conns=$conns, best of $rounds); 1 conn: ${lb:-FAILED}"
echo "(c) veth   wrk<->kernel  HTTP 64B body: ${wc:-FAILED} req/s" \
	"(conns=$conns, best of $rounds); 1 conn: ${lc:-FAILED}"
if [ -n "$wb" ] && [ -n "$wc" ]; then
	awk -v b="$wb" -v c="$wc" 'BEGIN { printf "(b)/(c) = %.2f\n", b / c }'
fi
