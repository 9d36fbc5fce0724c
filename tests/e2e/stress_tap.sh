#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The pktgen stress of issue 5 ("pktgen kit"), in CI: ffn-shard on net_tap
# inside a namespace of its own (prefix fss, 198.18.5.0/24), blasted from
# the kernel side by stress_blast.py (a SYN flood from spoofed sources and
# every malformed kind of tools/pktgen/mkpcap.py) while stress_client.py
# keeps being served.  The kernel side is 198.18.5.1, the appliance .2.
#
# usage: stress_tap.sh FFN_SHARD MKVINDEX [FLOOD_SECONDS]
#
# Asserts: every client request before, during and after the flood
# succeeded with the right answer (the walk-ffn body equal to the one
# fetched before the flood except latency_ms); the appliance is alive and
# answering afterwards; /metrics shows the SYN cookies and the drop
# counters of every kind listed in mkpcap.EXPECT increased.  Prints the
# client's p99 before and during the flood (not asserted: timing).
set -euo pipefail

shard=$1
mkvindex=$2
flood=${3:-15}
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
ns=fss-$$
prefix=fss_$$
dir=$(mktemp -d /tmp/fss.XXXXXX)
pid=
bpid=
step=setup
url=http://198.18.5.2:8080
# Exploration knobs (the defaults are the CI run): FSS_KINDS (comma list of
# mkpcap.py kinds), FSS_ROUNDS, FSS_SYN_SHARE, FSS_PPS.
kinds=${FSS_KINDS:-$($py -c "import sys; sys.path.insert(0, '$here/../../tools/pktgen'); import mkpcap; print(','.join(mkpcap.KINDS))")}

cleanup() {
	rc=$?
	for p in $bpid $pid; do
		if kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p" 2>/dev/null || true
			wait "$p" 2>/dev/null || true
		fi
	done
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "/var/run/dpdk/$prefix"
	if [ "$rc" -ne 0 ]; then
		echo "stress_tap.sh: FAILED at step '$step'" >&2
		tail -n 40 "$dir/shard.out" >&2 2>/dev/null || true
	fi
	rm -rf "$dir"
	exit "$rc"
}
trap cleanup EXIT INT TERM

nsx() { ip netns exec "$ns" "$@"; }
c1() { ip netns exec "$ns" taskset -c 1 "$@"; }
metrics() { nsx timeout 10 curl -sf "$url/metrics"; }
# Sum of every series whose line starts with $1 (a name plus labels prefix).
mval() {
	awk -v k="$1" 'index($0, k) == 1 { s += $NF } END { printf "%d\n", s }' "$2"
}

step="model"
"$mkvindex" --hidden 256 --intermediate 512 --layers 4 --family llama \
	"$dir/model" >/dev/null

cat >"$dir/shard.conf" <<EOF
[eal]
args = -l 0 --no-pci --no-huge -m 512 --file-prefix $prefix --vdev net_tap0,iface=fss0 --log-level=pmd.net.tap:error
[log]
level = warning
[telemetry]
metrics = on
[port 0]
device = net_tap0
address = 198.18.5.2/24
gateway = 198.18.5.1
mtu = 1500
[shard stress]
model = $dir/model
layers = 0-3
listen = 8080
port = 0
net_lcores = 0
max_connections = 256
EOF

ip netns add "$ns"
nsx ip link set lo up
nsx sysctl -qw net.ipv6.conf.all.disable_ipv6=1
nsx sysctl -qw net.ipv6.conf.default.disable_ipv6=1

step="start appliance"
# $! must be timeout(1) itself so that TERM reaches ffn-shard.
ip netns exec "$ns" timeout $((flood + 240)) "$shard" -c "$dir/shard.conf" \
	>"$dir/shard.out" 2>&1 &
pid=$!
for _ in $(seq 100); do
	nsx ip link show fss0 >/dev/null 2>&1 && break
	sleep 0.1
done
nsx ip addr add 198.18.5.1/24 dev fss0
nsx ip link set fss0 up
for _ in $(seq 150); do
	nsx timeout 2 curl -sf "$url/v1/health" >/dev/null 2>&1 && break
	kill -0 "$pid"
	sleep 0.2
done
nsx timeout 5 curl -sf "$url/v1/health" >/dev/null
mac=$(nsx ip neigh show 198.18.5.2 dev fss0 | awk '{ print $3 }')
[ -n "$mac" ]
# Room for the jumbo kind (frames beyond the appliance's MTU); after the
# port is up, since the tap PMD sets the MTU when it starts.
nsx ip link set fss0 mtu 9000

step="reference answer"
c1 timeout 30 $py "$here/stress_client.py" --url "$url" --hidden 256 \
	--save-ref "$dir/ref.bin"

step="client before the flood"
c1 timeout 60 $py "$here/stress_client.py" --url "$url" --hidden 256 \
	--ref "$dir/ref.bin" --seconds 5 --phase before | tee "$dir/before.json"
metrics >"$dir/m0.txt"

step="flood"
c1 timeout $((flood + 120)) $py "$here/stress_blast.py" --iface fss0 \
	--dst-mac "$mac" --dst-ip 198.18.5.2 --port 8080 \
	--src-net 198.18.5.0/24 --seconds "$flood" \
	--pps "${FSS_PPS:-20000}" --kinds "$kinds" \
	--rounds "${FSS_ROUNDS:-4}" --syn-share "${FSS_SYN_SHARE:-0.7}" --ready "$dir/blast.ready" >"$dir/blast.json" &
bpid=$!
# The blaster builds its frames first (a few seconds of scapy): the client
# starts once frames flow (the blaster touches blast.ready), and stops
# before they do.
for _ in $(seq 600); do
	[ -e "$dir/blast.ready" ] && break
	kill -0 "$bpid"
	sleep 0.1
done
[ -e "$dir/blast.ready" ]
c1 timeout $((flood + 60)) $py "$here/stress_client.py" --url "$url" \
	--hidden 256 --ref "$dir/ref.bin" --seconds $((flood - 3)) \
	--phase during | tee "$dir/during.json"
wait "$bpid"
bpid=
cat "$dir/blast.json"

step="alive after the flood"
kill -0 "$pid"
c1 timeout 60 $py "$here/stress_client.py" --url "$url" --hidden 256 \
	--ref "$dir/ref.bin" --seconds 2 --phase after | tee "$dir/after.json"
metrics >"$dir/m1.txt"
nsx timeout 5 ping -q -c 2 -W 2 198.18.5.2 >/dev/null

step="counters"
fail=0
check() {
	local a b
	a=$(mval "$1" "$dir/m0.txt")
	b=$(mval "$1" "$dir/m1.txt")
	printf '  %-60s %10d -> %10d\n' "$1" "$a" "$b"
	if [ "$b" -le "$a" ]; then
		echo "stress_tap.sh: $1 did not increase" >&2
		fail=1
	fi
}
echo "counters (before -> after the flood):"
check 'ffn_tcp_syncookies_total{'
while read -r series; do
	check "$series"
done < <($py -c "
import sys; sys.path.insert(0, '$here/../../tools/pktgen')
import mkpcap
for k, v in mkpcap.EXPECT.items():
    for s in v if k in '$kinds'.split(',') else []:
        print(s)" | sort -u)
echo "all nonzero ffn_net_total / ffn_tcp_drops_total after the flood:"
grep -E '^ffn_(net_total|tcp_drops_total|tcp_syncookies_total|tcp_connections)' \
	"$dir/m1.txt" | sed 's/^/  /'
[ "$fail" -eq 0 ]

step="report"
# Where latency spikes come from: a kernel client SYN retransmission costs
# 1 s (RFC 6298 initial RTO); frames the tap queue dropped never reached
# the appliance.
echo "kernel side: SYN retransmissions $(nsx nstat -az -s TcpExtTCPSynRetrans |
	awk '$1 == "TcpExtTCPSynRetrans" { print $2 }'), fss0 TX dropped" \
	"$(nsx cat /sys/class/net/fss0/statistics/tx_dropped)"
$py - "$dir/before.json" "$dir/during.json" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))
print("client walk-ffn p99: before %.3f ms (%d req), during flood %.3f ms "
      "(%d req), ratio %.2f" % (b["p99_ms"], b["ok"], d["p99_ms"], d["ok"],
                                d["p99_ms"] / b["p99_ms"]))
EOF
echo "stress_tap.sh: OK"
