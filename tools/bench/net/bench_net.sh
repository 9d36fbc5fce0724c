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
# Servers on core 0, clients on core 1 (docs/DEVELOPING.md).
#
# usage: bench_net.sh BUILD_DIR [SECONDS] [CONNS]
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

cleanup() {
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	ip netns del "$ns_t" 2>/dev/null || true
	ip netns del "$ns_s" 2>/dev/null || true
	ip netns del "$ns_c" 2>/dev/null || true
	rm -rf "$dir" "$sock" /var/run/dpdk/fsn_b*_"$tag"
}
trap cleanup EXIT INT TERM

eal() { echo --no-pci --no-huge -m 1024 --file-prefix "$1" -l "$2" \
	--log-level=lib.eal:error --log-level=pmd.net.tap:error; }

wait_up() {
	for _ in $(seq 300); do
		grep -q 'net_testd: up' "$1" && return 0
		sleep 0.1
	done
	echo "bench_net: server did not come up:" >&2
	cat "$1" >&2
	return 1
}

stop() {
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

echo "# bench_net.sh $(date -u +%FT%TZ) seconds=$secs conns=$conns"

# ---- (a) memif ------------------------------------------------------------
# shellcheck disable=SC2046
timeout $((secs * 4 + 120)) "$testd" $(eal fsn_bs_"$tag" 0) \
	--vdev=net_memif0,role=server,socket="$sock" \
	-- --ip 198.18.1.2/24 --echo 7 --sink 9 --seconds $((secs * 4 + 100)) \
	>"$dir/a-server.out" 2>&1 &
srv=$!
pids+=("$srv")
wait_up "$dir/a-server.out"
runc() {
	# shellcheck disable=SC2046
	timeout $((secs + 60)) "$client" $(eal fsn_bc_"$tag" 1) \
		--vdev=net_memif0,role=client,socket="$sock" \
		-- --ip 198.18.1.3/24 --server 198.18.1.2 --seconds "$secs" "$@"
}
a_rr=$(runc --mode rr --conns "$conns" | awk '/requests_per_s/ {print $2}')
a_lat=$(runc --mode lat --conns 1 | awk '/lat_p/ {printf "%s=%s ", $1, $2}')
a_bulk=$(runc --mode bulk --port 9 --conns 4 | awk '/bulk_gbit_s/ {print $2}')
stop "$srv"
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
# shellcheck disable=SC2046
ip netns exec "$ns_t" timeout $((secs * 4 + 120)) "$testd" \
	$(eal fsn_bt_"$tag" 0) --vdev=net_tap0,iface=fsn0 \
	-- --ip 198.18.1.2/24 --http 80 --seconds $((secs * 4 + 100)) \
	>"$dir/b-server.out" 2>&1 &
srv=$!
pids+=("$srv")
for _ in $(seq 100); do
	ip netns exec "$ns_t" ip link show fsn0 >/dev/null 2>&1 && break
	sleep 0.1
done
ip netns exec "$ns_t" ip addr add 198.18.1.1/24 dev fsn0
ip netns exec "$ns_t" ip link set fsn0 up
wait_up "$dir/b-server.out"

ip link add fsnv0-"$tag" type veth peer name fsnv1-"$tag"
ip link set fsnv0-"$tag" netns "$ns_s"
ip link set fsnv1-"$tag" netns "$ns_c"
ip netns exec "$ns_s" ip addr add 198.18.1.2/24 dev fsnv0-"$tag"
ip netns exec "$ns_c" ip addr add 198.18.1.1/24 dev fsnv1-"$tag"
ip netns exec "$ns_s" ip link set fsnv0-"$tag" up
ip netns exec "$ns_c" ip link set fsnv1-"$tag" up
ip netns exec "$ns_s" taskset -c 0 timeout $((secs * 4 + 100)) "$epoll" \
	198.18.1.2 80 $((secs * 4 + 90)) &
pids+=("$!")
sleep 1

wrk_rps() { awk '/Requests\/sec/ {print $2}'; }
wrk_lat() { awk '$1 == "50%" || $1 == "99%" {printf "p%s=%s ", $1, $2}' |
	tr -d '%'; }
wb=$(ip netns exec "$ns_t" taskset -c 1 wrk -t1 -c"$conns" -d"$secs"s \
	http://198.18.1.2/ | wrk_rps)
wc=$(ip netns exec "$ns_c" taskset -c 1 wrk -t1 -c"$conns" -d"$secs"s \
	http://198.18.1.2/ | wrk_rps)
lb=$(ip netns exec "$ns_t" taskset -c 1 wrk -t1 -c1 -d"$secs"s --latency \
	http://198.18.1.2/ | wrk_lat)
lc=$(ip netns exec "$ns_c" taskset -c 1 wrk -t1 -c1 -d"$secs"s --latency \
	http://198.18.1.2/ | wrk_lat)
echo "(b) tap    wrk<->stack   HTTP 64B body: ${wb:-FAILED} req/s" \
	"(conns=$conns); 1 conn: ${lb:-FAILED}"
echo "(c) veth   wrk<->kernel  HTTP 64B body: ${wc:-FAILED} req/s" \
	"(conns=$conns); 1 conn: ${lc:-FAILED}"
if [ -n "$wb" ] && [ -n "$wc" ]; then
	awk -v b="$wb" -v c="$wc" 'BEGIN { printf "(b)/(c) = %.2f\n", b / c }'
fi
