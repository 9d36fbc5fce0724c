#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The appliance against the best a kernel HTTP server does here (issue 5):
# wrk, in a namespace, POSTs LARQL requests to ffn-shard on net_tap, then
# GETs a file of the same size as each response from nginx (Debian) across
# a veth pair, one connection and 64, per wire format. Both servers get one
# core (core 0: the appliance's lcore, nginx's single worker); wrk runs on
# core 1. Prints one Markdown table, ratios measured in this run.
#
# The model has hidden 1024 (the response sizes of a 1024-wide model) and
# intermediate 16 (192 KiB of weights, a few microseconds of compute), so
# the network and HTTP path, not the FFN, is what is compared with nginx;
# bench-ffn measures the FFN.
#
# usage: bench-appliance.sh BUILD_DIR [SECONDS]
set -euo pipefail

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
mkdir -p "$dir/www" "$dir/ngx"
cat >"$dir/nginx.conf" <<CONF
user root;
worker_processes 1;
worker_cpu_affinity 01;
daemon off;
pid $dir/ngx/nginx.pid;
error_log $dir/ngx/error.log;
events { worker_connections 4096; }
http {
	access_log off;
	sendfile on;
	tcp_nodelay on;
	keepalive_requests 1000000;
	client_body_temp_path $dir/ngx;
	proxy_temp_path $dir/ngx;
	fastcgi_temp_path $dir/ngx;
	uwsgi_temp_path $dir/ngx;
	scgi_temp_path $dir/ngx;
	server {
		listen 198.18.4.130:8080;
		root $dir/www;
	}
}
CONF
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

# wrk prints "Requests/sec: N" and, with --latency, "99%  X(us|ms|s)".
run_wrk() { # ns conns url [lua]
	local out
	out=$(ip netns exec "$1" taskset -c 1 wrk -t1 -c"$2" -d"${secs}s" \
		--latency ${4:+-s "$4"} "$3" 2>&1)
	local rps p99 errs
	rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
	p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
	errs=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out" | tr '\n' ' ')
	echo "$rps ${p99:-?} ${errs:-}"
}

to_ms() { # "123.45us" -> 0.123
	/usr/bin/python3 -c "import re,sys;v=sys.argv[1];m=re.match(r'([0-9.]+)(us|ms|s)',v);print('?' if not m else round(float(m[1])*{'us':1e-3,'ms':1,'s':1e3}[m[2]],3))" "$1"
}

echo "| format | conns | ffn-shard req/s | p99 ms | nginx req/s | p99 ms | req/s ratio |"
echo "|---|---|---|---|---|---|---|"
for fmt in f32 f16 i8; do
	case $fmt in
	f32) accept=application/x-larql-ffn ;;
	f16) accept=application/x-larql-ffn-f16 ;;
	i8) accept=application/x-larql-ffn-i8 ;;
	esac
	for c in 1 64; do
		read -r a_rps a_p99 a_err < <(FSB_BODY="$dir/req.bin" \
			FSB_ACCEPT="$accept" run_wrk "$ns_a" "$c" \
			http://198.18.4.2:8080/v1/walk-ffn "$dir/post.lua")
		read -r n_rps n_p99 n_err < <(run_wrk "$ns_c" "$c" \
			"http://198.18.4.130:8080/$fmt.bin")
		ratio=$(/usr/bin/python3 -c "import sys;a,b=sys.argv[1:];print(f'{float(a)/float(b):.2f}' if a and b else '?')" "$a_rps" "$n_rps")
		echo "| $fmt | $c | $a_rps | $(to_ms "$a_p99") | $n_rps | $(to_ms "$n_p99") | $ratio |"
		if [ -n "$a_err" ]; then
			echo "<!-- ffn-shard errors: $a_err -->"
		fi
		if [ -n "$n_err" ]; then
			echo "<!-- nginx errors: $n_err -->"
		fi
	done
done
