#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Our stack against the kernel's on the same virtual link with the same
# client (issue 17, "Fair benchmarks"). A veth pair joins two namespaces;
# the client, ffn-loadgen, runs on AF_XDP on its end (core 1), so no
# server is measured through the client's kernel. On the other end, one
# server at a time on core 0, with the same address and MAC:
#   (a) ffn-shard on AF_XDP            vs nginx (kernel TCP, one worker)
#       POST /v1/walk-ffn, f32/f16/i8 answers; nginx sends the answer
#       bodies ffn-shard gave in the same run, byte for byte (the client
#       checks every body against them);
#   (b) net_testd --http on AF_XDP     vs epoll_http (kernel TCP, epoll)
#       GET, the same canned 64-byte response from both.
# At 1 and 64 connections, closed loop. ROUNDS rounds (default 2)
# alternate the servers; the best round of each is compared.
#
# Reported per row: req/s, p50 and p99 (ms), and the server core's CPU:
# its busy share over the run (/proc/stat, core 0) and that share's time
# per request. A DPDK server polls, so its core is always busy: its
# time per request is 1 / req/s; the kernel's is what it used. The
# kernel's receive work for a frame from the client runs on the
# client's core (veth delivers in the sender's context), which the
# kernel servers get for free: the client core's busy share is shown.
#
# Both sides compute checksums in software: AF_XDP takes frames as they
# are, so TX checksum and segmentation offloads are off on both veth ends
# (a veth would hand a peer frames whose checksum it left to an offload).
#
# usage: [ROUNDS=N] bench-af-xdp.sh BUILD_DIR [SECONDS]
set -euo pipefail
# shellcheck source=tools/bench/appliance/nginx_conf.sh
. "$(dirname "$0")/nginx_conf.sh"

build=$(cd "$1" && pwd)
secs=${2:-5}
rounds=${ROUNDS:-2}
tag=$$
ns_s=fsx-srv-$tag
ns_c=fsx-cli-$tag
dir=$(mktemp -d /tmp/fsx-bench.XXXXXX)
srv_pid=
srv_kind=
H=1024

for t in app/ffn-shard/ffn-shard tools/loadgen/ffn-loadgen \
	 tools/mkvindex/mkvindex tests/net/net_testd \
	 tools/bench/net/epoll_http; do
	[ -x "$build/$t" ] || { echo "bench-af-xdp: no $build/$t" >&2; exit 1; }
done
command -v nginx >/dev/null || { echo "bench-af-xdp: nginx missing" \
	"(apt-get install nginx-light)" >&2; exit 1; }

srv_stop() {
	[ -n "$srv_pid" ] || return 0
	kill -TERM "$srv_pid" 2>/dev/null || true
	wait "$srv_pid" 2>/dev/null || true
	srv_pid=
	ip netns exec "$ns_s" ip addr flush dev fsxs0 2>/dev/null || true
}
cleanup() {
	srv_stop
	ip netns del "$ns_s" 2>/dev/null || true
	ip netns del "$ns_c" 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$dir"; rm -rf /var/run/dpdk/fsx_*_"$tag"*
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$ns_s"
ip netns add "$ns_c"
ip link add fsxs0 netns "$ns_s" type veth peer name fsxc0 netns "$ns_c"
for x in "$ns_s fsxs0" "$ns_c fsxc0"; do
	set -- $x
	ip netns exec "$1" ip link set lo up
	ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$1" ethtool -K "$2" tx off tso off gso off >/dev/null
	ip netns exec "$1" ip link set "$2" up
done

"$build/tools/mkvindex/mkvindex" --hidden $H --intermediate 16 --layers 2 \
	--family llama --seed 3 "$dir/model" >/dev/null
cat >"$dir/app.conf" <<CONF
[eal]
args = -l 0 --no-pci --no-huge -m 512 --file-prefix fsx_app_$tag --vdev net_af_xdp0,iface=fsxs0,start_queue=0,queue_count=1
[log]
level = notice
[port 0]
device = net_af_xdp0
address = 198.18.4.2/24
[shard bench]
model = $dir/model
layers = 0-1
listen = 8080
net_lcores = 0
i8 = on
max_connections = 1024
CONF

mkdir -p "$dir/www"
# The answer ffn-shard gave for the format the client accepts, with its
# Content-Type. The static module refuses POST with 405 (after the cached
# open): served as a GET instead, as in bench-appliance.sh. Regexes in
# order: an i8 Accept lists f16 as well (spec/wire.md §5.1).
nginx_conf "$dir" "
	map \$http_accept \$ffn_answer {
		default /f32.bin;
		\"~x-larql-ffn-i8\" /i8.bin;
		\"~x-larql-ffn-f16\" /f16.bin;
	}" "
		listen 198.18.4.2:8080;
		root $dir/www;
		error_page 405 =200 \$uri;
		location = /v1/walk-ffn { rewrite ^ \$ffn_answer last; }
		location = /f32.bin { types { } default_type application/x-larql-ffn; }
		location = /f16.bin { types { } default_type application/x-larql-ffn-f16; }
		location = /i8.bin { types { } default_type application/x-larql-ffn-i8; }" \
	>"$dir/nginx.conf"

# cpu_busy CPU: "busy total" jiffies of that CPU so far (/proc/stat).
cpu_busy() {
	awk -v c="cpu$1" '$1 == c {
		t = 0; for (i = 2; i <= NF; i++) t += $i
		print t - $5 - $6, t }' /proc/stat
}

# Run-queue wait of the server's working thread so far (ns,
# /proc/PID/schedstat): time other load on this shared machine took
# from it. nginx works in its worker, the others in their main thread.
srv_wait() {
	local p=$srv_pid
	[ "$srv_kind" = nginx ] && p=$(pgrep -P "$srv_pid" | head -1)
	awk '{ print $2 }' "/proc/${p:-0}/schedstat" 2>/dev/null || echo 0
}

# loadgen CONNS OUT ARGS...: ffn-loadgen on AF_XDP on fsxc0, core 1;
# prints "rps p50_ms p99_ms errors cpu0% cpu1% waited%" (cpu: busy
# shares over the whole run, warm-up included; waited: the server's
# run-queue wait share).
loadgen() {
	local c=$1 out=$2 b0 b1 e0 e1 w0 w1 n0 n1 rc=0
	shift 2
	read -r b0 t0 < <(cpu_busy 0)
	read -r b1 t1 < <(cpu_busy 1)
	w0=$(srv_wait)
	n0=$(date +%s%N)
	ip netns exec "$ns_c" timeout $((secs + 60)) taskset -c 1 \
		"$build/tools/loadgen/ffn-loadgen" -l 1 --no-pci --no-huge \
		-m 512 --file-prefix "fsx_lg_$tag" --log-level=pmd.net.af_xdp:error \
		--vdev net_af_xdp0,iface=fsxc0,start_queue=0,queue_count=1 \
		-- --ip 198.18.4.1/24 --target 198.18.4.2:8080 \
		--connections "$c" --warmup 1 --duration "$secs" "$@" \
		>"$out" 2>&1 || rc=$?
	read -r e0 u0 < <(cpu_busy 0)
	read -r e1 u1 < <(cpu_busy 1)
	w1=$(srv_wait)
	n1=$(date +%s%N)
	awk -v rc="$rc" -v c0="$(( (e0 - b0) * 1000 / (u0 - t0 + 1) ))" \
		-v c1="$(( (e1 - b1) * 1000 / (u1 - t1 + 1) ))" \
		-v w="$(( (w1 - w0) * 1000 / (n1 - n0) ))" '
	/^RESULT/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
	END {
		if (!("rps" in v)) { print "? ? ? exit" rc, c0 / 10, c1 / 10, w / 10; exit }
		printf "%s %.3f %.3f %s %.1f %.1f %.1f\n", v["rps"], v["p50_us"] / 1e3,
			v["p99_us"] / 1e3, v["errors"] + 0 ? v["errors"] : (rc ? "exit" rc : 0),
			c0 / 10, c1 / 10, w / 10 }' "$out"
}

wait_log() {
	local i
	for i in $(seq 100); do
		grep -q "$2" "$1" && return 0
		kill -0 "$srv_pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "bench-af-xdp: the server did not come up:" >&2
	cat "$1" >&2
	return 1
}

# The kernel servers' address; the DPDK ones own it on AF_XDP instead.
kernel_addr() { ip netns exec "$ns_s" ip addr add 198.18.4.2/24 dev fsxs0; }

start() {
	srv_kind=$1
	case $1 in
	ffn-shard)
		ip netns exec "$ns_s" "$build/app/ffn-shard/ffn-shard" \
			-c "$dir/app.conf" >"$dir/srv.log" 2>&1 &
		srv_pid=$!
		wait_log "$dir/srv.log" "serving" ;;
	nginx)
		kernel_addr
		ip netns exec "$ns_s" nginx -c "$dir/nginx.conf" \
			>"$dir/srv.log" 2>&1 &
		srv_pid=$!
		sleep 1 ;;
	net_testd)
		ip netns exec "$ns_s" "$build/tests/net/net_testd" -l 0 \
			--no-pci --no-huge -m 512 --file-prefix "fsx_td_$tag" \
			--vdev net_af_xdp0,iface=fsxs0,start_queue=0,queue_count=1 \
			-- --ip 198.18.4.2/24 --http 8080 --seconds 100000 \
			>"$dir/srv.log" 2>&1 &
		srv_pid=$!
		sleep 3 ;;
	epoll_http)
		kernel_addr
		ip netns exec "$ns_s" taskset -c 0 \
			"$build/tools/bench/net/epoll_http" 198.18.4.2 8080 100000 \
			>"$dir/srv.log" 2>&1 &
		srv_pid=$!
		sleep 1 ;;
	esac
}

# run SERVER ROW CONNS ARGS...: one measured run into $dir/res.
run() {
	local s=$1 row=$2 c=$3
	shift 3
	echo "$row $c $s $(loadgen "$c" "$dir/lg-$s-$row-$c.out" "$@")" \
		>>"$dir/res"
}

echo "# bench-af-xdp.sh $(date -u +%FT%TZ) seconds=$secs rounds=$rounds"
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, kernel $(uname -r)"
: >"$dir/res"
for r in $(seq "$rounds"); do
	start ffn-shard
	for f in f32 f16 i8; do
		for c in 1 64; do
			sb=()
			[ -s "$dir/www/$f.bin" ] ||
				sb=(--save-body "$dir/www/$f.bin")
			run ffn-shard "$f" "$c" --hidden $H --layers 0 \
				--wire "$f" --verify-body "${sb[@]}"
		done
	done
	grep -i "XDP program" "$dir/srv.log" | sed 's/^/  /' | head -1
	srv_stop
	for f in f32 f16 i8; do
		[ -s "$dir/www/$f.bin" ] || {
			echo "bench-af-xdp: no $f answer from ffn-shard" >&2
			cat "$dir/lg-ffn-shard-$f-1.out" >&2
			exit 1
		}
	done
	start nginx
	for f in f32 f16 i8; do
		for c in 1 64; do
			run nginx "$f" "$c" --hidden $H --layers 0 --wire "$f" \
				--body-ref "$dir/www/$f.bin"
		done
	done
	srv_stop
	start net_testd
	for c in 1 64; do
		run net_testd get "$c" --method GET --path / --hidden 1
	done
	srv_stop
	start epoll_http
	for c in 1 64; do
		run epoll_http get "$c" --method GET --path / --hidden 1
	done
	srv_stop
done

# Best round (highest req/s) per server, row and connections.
best() {
	awk -v s="$1" -v r="$2" -v c="$3" '
	$1 == r && $2 == c && $3 == s && $4 != "?" && ($4 + 0 > b + 0) {
		b = $4; l = $0 }
	END { if (l == "") print "? ? ? ? ? ? ?"; else {
		split(l, f, " "); print f[4], f[5], f[6], f[7], f[8], f[9], f[10] } }' \
		"$dir/res"
}
# row DPDK KERNEL ROW CONNS: one Markdown row, both ratios > 1 when the
# DPDK server does better.
row() {
	local a k
	a=$(best "$1" "$3" "$4")
	k=$(best "$2" "$3" "$4")
	awk -v r="$3" -v c="$4" -v a="$a" -v k="$k" 'BEGIN {
		split(a, x, " "); split(k, y, " ")
		printf "| %s | %s | %s | %s | %s | %.0f%% / %s | %s | %s | %s | %.0f%% / %s | %s | %s | %s |\n",
			r, c, x[1], x[2], x[3],
			x[5], (x[1] + 0) ? sprintf("%.1f us", x[5] * 1e4 / x[1]) : "?",
			y[1], y[2], y[3],
			y[5], (y[1] + 0) ? sprintf("%.1f us", y[5] * 1e4 / y[1]) : "?",
			(x[1] + 0 && y[1] + 0) ? sprintf("%.2f", x[1] / y[1]) : "?",
			(x[3] + 0 && y[3] + 0) ? sprintf("%.2f", y[3] / x[3]) : "?",
			x[6] "% / " y[6] "%; server waited " x[7] "% / " y[7] "%" \
			(x[4] != "0" || y[4] != "0" ? \
			", errors " x[4] " / " y[4] : "")
	}'
}
hdr() {
	echo "| $1 | conns | $2 req/s | p50 ms | p99 ms | core 0 busy / per req |" \
		"$3 req/s | p50 ms | p99 ms | core 0 busy / per req |" \
		"req/s ratio | p99 ratio | client core busy; server waited |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
}
echo
echo "(a) ffn-shard on AF_XDP vs nginx, POST /v1/walk-ffn (hidden $H, the same answer bytes)"
echo
hdr format ffn-shard nginx
for f in f32 f16 i8; do
	for c in 1 64; do row ffn-shard nginx "$f" "$c"; done
done
echo
echo "(b) lib/net's HTTP service (net_testd) on AF_XDP vs epoll_http, GET, 64-byte body"
echo
hdr request net_testd epoll_http
for c in 1 64; do row net_testd epoll_http get "$c"; done
echo
echo "Best of $rounds alternating rounds of $secs s (+1 s warm-up) per row;" \
	"ffn-loadgen on AF_XDP on core 1 is the client of every server;" \
	"servers on core 0, one at a time. p99 ratio = kernel p99 / ours." \
	"Core 0 busy: its non-idle share over the run (a DPDK server polls:" \
	"100%); per req: that share of a second / req/s. Client core: core" \
	"1's busy share (ours / kernel's run): the client polls, and the" \
	"kernel's receive path for the client's frames also runs there." \
	"Server waited: its run-queue wait share (other load on this" \
	"machine; a row where either waited is disturbed)."
