#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The appliance against the best a kernel HTTP server does here (issue 5):
# wrk, in a namespace, POSTs LARQL requests to ffn-shard on net_tap, then
# the same request to nginx (Debian) across a veth pair, which answers with
# a file of the same size as each response: one connection and 64, per wire
# format. Both servers get one core (core 0: the appliance's lcore, nginx's
# single worker); wrk runs on core 1. Prints one Markdown table, ratios
# measured in this run.
#
# One server at a time: the appliance's lcore busy-polls core 0 even with
# no traffic, so it is stopped (SIGSTOP) while nginx is measured. Left
# running (before 2026-12-02 23:40) it took half of core 0 from nginx,
# whose worker waited 46-50% of its runs for the poller's time slice (f32,
# 3 s runs, quiet machine, side by side): nginx at 1 connection 5.1-5.4k
# req/s, p99 3.3-4.6 ms, against 13-21k req/s, p99 0.12 ms with it
# stopped; at 64 connections 19.6k against 40k req/s (59k with
# open_file_cache, below; 49k when POSTed the appliance's 4 KiB request
# rather than a GET). Not a wake-up cost: a SCHED_IDLE spinner keeping
# core 0 out of idle did not make nginx faster (1 connection p50 69-81 us
# against 37-79 us).
#
# The model has hidden 1024 (the response sizes of a 1024-wide model) and
# intermediate 16 (192 KiB of weights, a few microseconds of compute), so
# the network and HTTP path, not the FFN, is what is compared with nginx;
# bench-ffn measures the FFN.
#
# usage: bench-appliance.sh BUILD_DIR [SECONDS]
set -euo pipefail
# shellcheck source=tools/bench/appliance/nginx_conf.sh
. "$(dirname "$0")/nginx_conf.sh"

build=$(cd "$1" && pwd)
secs=${2:-8}
top=$(cd "$(dirname "$0")/../../.." && pwd)
ns_a=fsb-app-$$
ns_n=fsb-ngx-$$
ns_c=fsb-cli-$$
dir=$(mktemp -d /tmp/fsb-bench.XXXXXX)
app_pid=
ngx_pid=

cleanup() {
	[ -n "$app_pid" ] && kill -CONT "$app_pid" 2>/dev/null
	[ -n "$app_pid" ] && kill -TERM "$app_pid" 2>/dev/null && \
		wait "$app_pid" 2>/dev/null
	[ -n "$ngx_pid" ] && kill -TERM "$ngx_pid" 2>/dev/null
	sleep 0.5
	for n in "$ns_a" "$ns_n" "$ns_c"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$dir" "/var/run/dpdk/fsb_app_$$"
}
trap cleanup EXIT

command -v wrk >/dev/null || { echo "bench-appliance: wrk missing" >&2; exit 1; }
command -v nginx >/dev/null || { echo "bench-appliance: nginx missing" \
	"(apt-get install nginx-light)" >&2; exit 1; }

H=1024
"$build/tools/mkvindex/mkvindex" --hidden $H --intermediate 16 --layers 2 \
	--family llama --seed 3 "$dir/model" >/dev/null

# --- the appliance, on net_tap inside ns_a; wrk reaches it from inside.
cat >"$dir/app.conf" <<CONF
[eal]
args = -l 0 --no-pci --no-huge -m 512 --file-prefix fsb_app_$$ --vdev net_tap0,iface=fsb0 --log-level=pmd.net.tap:error
[port 0]
device = net_tap0
address = 198.18.4.2/24
[shard bench]
model = $dir/model
layers = 0-1
listen = 8080
net_lcores = 0
i8 = on
max_connections = 1024
CONF
ip netns add "$ns_a"
ip netns exec "$ns_a" ip link set lo up
ip netns exec "$ns_a" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip netns exec "$ns_a" "$build/app/ffn-shard/ffn-shard" -c "$dir/app.conf" \
	>"$dir/app.log" 2>&1 &
app_pid=$!
for _ in $(seq 100); do
	ip netns exec "$ns_a" ip link show fsb0 >/dev/null 2>&1 && break
	sleep 0.1
done
ip netns exec "$ns_a" ip addr add 198.18.4.1/24 dev fsb0
ip netns exec "$ns_a" ip link set fsb0 up
for _ in $(seq 100); do grep -q serving "$dir/app.log" && break; sleep 0.1; done
grep -q serving "$dir/app.log" || { cat "$dir/app.log"; exit 1; }

# --- nginx in ns_n, wrk in ns_c, a veth pair between them.
ip netns add "$ns_n"
ip netns add "$ns_c"
ip link add fsbn0 netns "$ns_n" type veth peer name fsbc0 netns "$ns_c"
ip netns exec "$ns_n" ip addr add 198.18.4.130/25 dev fsbn0
ip netns exec "$ns_c" ip addr add 198.18.4.129/25 dev fsbc0
for n in "$ns_n" "$ns_c"; do
	ip netns exec "$n" ip link set lo up
	ip netns exec "$n" ip link set "$([ "$n" = "$ns_n" ] && echo fsbn0 || \
		echo fsbc0)" up
done
mkdir -p "$dir/www"
# POST the request the appliance gets (same bytes both ways): the static
# module refuses POST with 405; serve the file.
nginx_conf "$dir" "" "
		listen 198.18.4.130:8080;
		root $dir/www;
		error_page 405 =200 \$uri;" >"$dir/nginx.conf"
ip netns exec "$ns_n" nginx -c "$dir/nginx.conf" &
ngx_pid=$!
sleep 1

# One request body (seq_len 1, layer 0, f32 input) and the response sizes.
/usr/bin/python3 - "$dir" $H <<'PY'
import struct, sys, random
d, h = sys.argv[1], int(sys.argv[2])
random.seed(5)
x = [random.gauss(0, 1) for _ in range(h)]
open(f"{d}/req.bin", "wb").write(struct.pack(f"<4I{h}f", 0, 1, 1, 8092, *x))
for name, n in (("f32", 12 + 4 * h), ("f16", 12 + 2 * h), ("i8", 12 + 8 + h)):
    open(f"{d}/www/{name}.bin", "wb").write(bytes(n))
PY

cat >"$dir/post.lua" <<'LUA'
local f = io.open(os.getenv("FSB_BODY"), "rb")
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/x-larql-ffn"
wrk.headers["Accept"] = os.getenv("FSB_ACCEPT")
LUA

# wrk prints "Requests/sec: N" and, with --latency, "50%  X(us|ms|s)".
# run_wrk NS CONNS URL [LUA] prints "req/s p50_ms p99_ms errors...".
run_wrk() {
	ip netns exec "$1" taskset -c 1 wrk -t1 -c"$2" -d"${secs}s" \
		--latency ${4:+-s "$4"} "$3" 2>&1 | awk '
	function ms(v, u) {
		u = v; sub(/^[0-9.]+/, "", u)
		return (v + 0) * (u == "us" ? 1e-3 : u == "s" ? 1e3 : 1)
	}
	/Requests\/sec/ { r = $2 }
	$1 == "50%" { a = ms($2) }
	$1 == "99%" { b = ms($2) }
	/Non-2xx|Socket errors/ { e = e " " $0 }
	END { printf "%s %.3f %.3f%s\n", r ? r : "?", a, b, e }'
}

# Run-queue wait of a server's thread over its runs (/proc/PID/schedstat,
# ns): the share of core 0 other processes of this shared machine took.
qwait() { awk '{print $2}' /proc/"$1"/schedstat; }

ngx_w=$(pgrep -P "$ngx_pid" | head -1)
[ -n "$ngx_w" ] || { echo "bench-appliance: no nginx worker" >&2; exit 1; }
a_wait=0 n_wait=0 runs=0
echo "| format | conns | ffn-shard req/s | p50 ms | p99 ms | nginx req/s |" \
	"p50 ms | p99 ms | req/s ratio | p99 ratio | waited % |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for fmt in f32 f16 i8; do
	case $fmt in
	f32) accept=application/x-larql-ffn ;;
	f16) accept=application/x-larql-ffn-f16 ;;
	i8) accept=application/x-larql-ffn-i8 ;;
	esac
	for c in 1 64; do
		q0=$(qwait "$app_pid")
		read -r a_rps a_p50 a_p99 a_err < <(FSB_BODY="$dir/req.bin" \
			FSB_ACCEPT="$accept" run_wrk "$ns_a" "$c" \
			http://198.18.4.2:8080/v1/walk-ffn "$dir/post.lua")
		aw=$(($(qwait "$app_pid") - q0))
		kill -STOP "$app_pid"
		q0=$(qwait "$ngx_w")
		read -r n_rps n_p50 n_p99 n_err < <(FSB_BODY="$dir/req.bin" \
			FSB_ACCEPT="$accept" run_wrk "$ns_c" "$c" \
			"http://198.18.4.130:8080/$fmt.bin" "$dir/post.lua")
		nw=$(($(qwait "$ngx_w") - q0))
		kill -CONT "$app_pid"
		a_wait=$((a_wait + aw)) n_wait=$((n_wait + nw)) runs=$((runs + 1))
		# Both ratios > 1 when ffn-shard does better.
		awk -v f="$fmt" -v c="$c" -v ar="$a_rps" -v a5="$a_p50" \
			-v a9="$a_p99" -v nr="$n_rps" -v n5="$n_p50" \
			-v n9="$n_p99" -v aw="$aw" -v nw="$nw" -v s="$secs" \
			'BEGIN {
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | ", \
				f, c, ar, a5, a9, nr, n5, n9
			printf "%s | %s | %d / %d |\n", \
				(ar + 0 && nr + 0) ? sprintf("%.2f", ar / nr) : "?", \
				(a9 + 0 && n9 + 0) ? sprintf("%.2f", n9 / a9) : "?", \
				aw / (s * 1e7), nw / (s * 1e7)
		}'
		if [ -n "$a_err" ]; then
			echo "<!-- ffn-shard errors: $a_err -->"
		fi
		if [ -n "$n_err" ]; then
			echo "<!-- nginx errors: $n_err -->"
		fi
	done
done

tot=$((runs * secs * 10000000))
echo
echo "Servers run one at a time on core 0 (ffn-shard stopped while nginx is" \
	"measured, POSTed the same request); they waited $((a_wait / tot))%" \
	"(ffn-shard) and" \
	"$((n_wait / tot))% (nginx) of their runs for core 0 (other load on the" \
	"machine; per row in \"waited %\", ffn-shard / nginx: a row where" \
	"either waited is disturbed). p99 ratio = nginx p99 / ffn-shard p99."
echo "At 1 connection req/s is 1 / mean latency: that row compares the" \
	"latency of one request at a time, the 64-connection rows capacity."
