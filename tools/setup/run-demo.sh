#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The run command: installs what is missing, builds, makes a small
# synthetic model, starts ffn-shard on a DPDK tap device (no NIC, no
# hugepages) inside the network namespace "fsd", shows calls against it,
# and keeps serving until Ctrl-C (or stops right away with --once).
# --af-xdp: the same on AF_XDP over a veth pair (configs/af-xdp-dev.conf).
#
# The appliance is 198.18.10.2:8080 (configs/tap-dev.conf); the kernel side
# of the tap, inside the namespace, is 198.18.10.1. To call it yourself:
#     ip netns exec fsd curl -s http://198.18.10.2:8080/v1/stats
set -euo pipefail

once=0
pmd=tap
for a in "$@"; do
	case $a in
	--once) once=1 ;;
	# AF_XDP on a veth pair (configs/af-xdp-dev.conf): the kernel keeps
	# the interface, the appliance reads its queue through XDP.
	--af-xdp) pmd=af_xdp ;;
	*) echo "usage: $0 [--once] [--af-xdp]" >&2; exit 2 ;;
	esac
done
conf=configs/tap-dev.conf
[ "$pmd" = af_xdp ] && conf=configs/af-xdp-dev.conf
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
"$top/tools/setup/install-deps.sh"
"$top/tools/setup/build.sh"
build=${BUILD_DIR:-$top/build}
ns=fsd
url=http://198.18.10.2:8080

# The model configs/tap-dev.conf serves (model = build/demo-model, from
# the repository root, whatever BUILD_DIR the tools came from).
model=$top/build/demo-model
if [ ! -f "$model/index.json" ]; then
	mkdir -p "$top/build"
	"$build/tools/mkvindex/mkvindex" --hidden 256 --intermediate 1024 \
		--layers 4 --family llama --seed 7 "$model"
fi

pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	ip netns del "$ns" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns del "$ns" 2>/dev/null || true
ip netns add "$ns"
ip netns exec "$ns" ip link set lo up
ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1

# AF_XDP: the veth pair of configs/af-xdp-dev.conf, before the appliance
# opens its end; the kernel side fsd0 sends whole frames (see there).
if [ "$pmd" = af_xdp ]; then
	ip -n "$ns" link add fsd0 type veth peer name fsdx0
	ip netns exec "$ns" ethtool -K fsd0 tx off tso off gso off >/dev/null
	ip -n "$ns" link set fsdx0 up
	ip netns exec "$ns" "$build/app/ffn-shard/ffn-shard" --check \
		-c "$conf" | grep -i "port\|xdp" || true
fi

# The appliance polls on lcore 0; clients below run on core 1.
log=$(mktemp /tmp/ffn-shard-demo.XXXXXX)
ip netns exec "$ns" "$build/app/ffn-shard/ffn-shard" \
	-c "$conf" >"$log" 2>&1 &
pid=$!
for _ in $(seq 100); do
	ip netns exec "$ns" ip link show fsd0 >/dev/null 2>&1 && break
	kill -0 "$pid" 2>/dev/null || { cat "$log"; exit 1; }
	sleep 0.1
done
ip netns exec "$ns" ip addr replace 198.18.10.1/24 dev fsd0
ip netns exec "$ns" ip link set fsd0 up
for _ in $(seq 100); do
	grep -q 'serving' "$log" && break
	kill -0 "$pid" 2>/dev/null || { cat "$log"; exit 1; }
	sleep 0.1
done
grep 'ffn-shard:' "$log"

run() { echo; echo "\$ $*"; ip netns exec "$ns" taskset -c 1 "$@"; }
run curl -sS -m 5 "$url/v1/health"; echo
run curl -sS -m 5 "$url/v1/stats"; echo
# --max-err: the answer against a double-precision recomputation, relative
# to its largest value: f32 sums in another order (~1e-6); f16 rounds each
# value to 11 significant bits (at most 2^-11 = 4.9e-4 of max|ref|).
for w in "f32 1e-5" "f16 1e-3"; do
	set -- $w
	run "$build/tools/client/ffn-client" "$url" --layer 2 --wire "$1" \
		--random 1 --show 4 --verify "$model" --max-err "$2"
done
run "$build/tools/client/ffn-client" "$url" --layers 0,1,2,3 --wire f16 \
	--request-wire f16 --random 2 --show 4

if [ "$once" = 1 ]; then
	exit 0
fi
echo
echo "ffn-shard serves $url inside namespace $ns; Ctrl-C stops it."
echo "Try: ip netns exec $ns curl -s $url/metrics"
wait "$pid"
