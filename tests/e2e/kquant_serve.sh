#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# K-quant shards served end to end (issue 6): mkvindex writes Q4_K/Q6_K
# vindexes in both Q6_K arrangements; ffn-shard serves each on net_tap
# (namespace fsa-kq-*, 198.18.3.0/24 .x2) with q6k_layout set to match;
# every answer (f32/f16/i8 walk-ffn, batch, Q8_K route) must equal
# ffn-frame's for the same body (latency excepted), /v1/stats must name
# the arrangement, and serving with the wrong arrangement must change the
# answers (the key is applied). lib/ffn/kquant's unit tests check the
# kernels against the original f32 weights.
#
# usage: kquant_serve.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
ns=fsa-kq-$$
prefix=fsa_kq_$$
dir=$(mktemp -d /tmp/fsa-kq.XXXXXX)
pid=
step=setup
PY=/usr/bin/python3

cleanup() {
	rc=$?
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "/var/run/dpdk/$prefix"_*
	[ "$rc" -ne 0 ] && { echo "kquant_serve.sh: FAILED at '$step'" >&2;
		tail -20 "$dir/app.log" >&2 2>/dev/null || true; }
	rm -rf "$dir"
	exit "$rc"
}
trap cleanup EXIT INT TERM

H=512
# Request bodies: single f32, batch of layers 1,0,1, Q8_K for layer 1.
$PY - "$dir" $H <<'PY'
import struct, sys, random
d, h = sys.argv[1], int(sys.argv[2])
random.seed(9)
x = [random.gauss(0, 1) for _ in range(h)]
open(f"{d}/single.bin", "wb").write(struct.pack(f"<4I{h}f", 1, 1, 1, 8092, *x))
open(f"{d}/batch.bin", "wb").write(struct.pack("<II", 0xFFFFFFFF, 3) +
    struct.pack("<3I", 1, 0, 1) + struct.pack(f"<3I{h}f", 1, 1, 8092, *x))
nb = h // 256
qs, ds, sums = [], [], []
for b in range(nb):
    blk = x[b * 256:(b + 1) * 256]
    dd = max(abs(v) for v in blk) / 127
    q = [max(-127, min(127, round(v / dd))) for v in blk]
    qs += q; ds.append(dd); sums += [sum(q[g * 32:(g + 1) * 32]) for g in range(8)]
open(f"{d}/q8k.bin", "wb").write(struct.pack("<III", 1, 1, nb) +
    struct.pack(f"<{h}b", *qs) + struct.pack(f"<{nb}f", *ds) +
    struct.pack(f"<{nb * 8}h", *sums))
PY

nsx() { ip netns exec "$ns" "$@"; }
ip netns add "$ns"
nsx ip link set lo up
nsx sysctl -qw net.ipv6.conf.all.disable_ipv6=1

n_start=0
start() { # MODEL LAYOUT [KQ_Q8K]
	# A new tap name each time: net_tap leaves its device behind.
	tap=fsakq$n_start
	n_start=$((n_start + 1))
	cat >"$dir/app.conf" <<CONF
[eal]
args = -l 0 --no-pci --no-huge -m 512 --file-prefix ${prefix}_$n_start --vdev net_tap0,iface=$tap --log-level=pmd.net.tap:error
[port 0]
device = net_tap0
address = 198.18.3.82/24
[shard kq]
model = $1
layers = 0-1
listen = 8080
net_lcores = 0
i8 = on
q6k_layout = $2
kq_q8k = ${3:-off}
CONF
	# Not through nsx: a backgrounded shell function is a subshell, and
	# $! must be timeout(1) itself for TERM to reach ffn-shard.
	ip netns exec "$ns" timeout 300 "$build/app/ffn-shard/ffn-shard" \
		-c "$dir/app.conf" >"$dir/app.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		nsx ip link show "$tap" >/dev/null 2>&1 && break
		sleep 0.1
	done
	for t in $(nsx ip -o link show | awk -F': ' '/fsakq/ {print $2}'); do
		[ "$t" = "$tap" ] || nsx ip link set "$t" down
	done
	nsx ip addr add 198.18.3.81/24 dev "$tap"
	nsx ip link set "$tap" up
	for _ in $(seq 100); do grep -q serving "$dir/app.log" && break; sleep 0.1; done
	grep -q serving "$dir/app.log"
}
stop() { kill -TERM "$pid"; wait "$pid" || true; pid=; }

# POST body with Content-Type/Accept to the appliance and to ffn-frame;
# the bodies must be equal but for the latency word (bytes 8-11).
same() { # MODEL LAYOUT PATH BODY ACCEPT (KQ: --kq-q8k for ffn-frame)
	nsx taskset -c 1 curl -sS -m 20 -o "$dir/got" -w '%{http_code}' \
		--data-binary @"$dir/$4" -H 'Content-Type: application/x-larql-ffn' \
		${5:+-H "Accept: $5"} "http://198.18.3.82:8080$3" >"$dir/code"
	if [ "$(cat "$dir/code")" != 200 ]; then
		echo "HTTP $(cat "$dir/code") from $3: $(head -c 300 "$dir/got")" >&2
		return 1
	fi
	"$build/tools/ffn-frame/ffn-frame" --model "$1" --layers 0-1 --i8-enable \
		--q6k-layout "$2" --path "$3" ${KQ:-} \
		--content-type application/x-larql-ffn ${5:+--accept "$5"} \
		<"$dir/$4" >"$dir/want" 2>"$dir/want.err"
	tail -1 "$dir/want.err" | grep -q '^200 ' ||
		{ cat "$dir/want.err" >&2; return 1; }
	if [ "$3" = /v1/walk-ffn ]; then
		cmp <(head -c 8 "$dir/got") <(head -c 8 "$dir/want")
		cmp <(tail -c +13 "$dir/got") <(tail -c +13 "$dir/want")
	else
		cmp "$dir/got" "$dir/want" ||
			{ ls -l "$dir/got" "$dir/want" >&2; return 1; }
	fi
}

for layout in private ggml; do
	m=$dir/q4k-$layout
	step="mkvindex $layout"
	"$build/tools/mkvindex/mkvindex" --hidden $H --intermediate 384 \
		--layers 2 --family llama --seed 4 --quant q4k \
		--q6k-layout $layout "$m" >/dev/null
	step="start $layout"
	# The ggml pass also uses the integer Q8_K input path (kq_q8k).
	kq=off
	KQ=
	[ $layout = ggml ] && { kq=on; KQ=--kq-q8k; }
	start "$m" $layout $kq
	step="stats $layout"
	nsx curl -sS -m 10 http://198.18.3.82:8080/v1/stats >"$dir/stats"
	grep -q "\"q6k_layout\":\"$layout\"" "$dir/stats"
	grep -q "\"kq_input\":\"$([ $kq = on ] && echo q8k || echo f32)\"" \
		"$dir/stats"
	grep -q '"layout":"q4k"\|"layout":"interleaved-q4k"\|q4k' "$dir/stats"
	for acc in "" application/x-larql-ffn-f16 application/x-larql-ffn-i8; do
		step="walk-ffn $layout accept '$acc'"
		same "$m" $layout /v1/walk-ffn single.bin "$acc"
	done
	step="batch $layout"
	same "$m" $layout /v1/walk-ffn batch.bin ""
	step="q8k $layout"
	same "$m" $layout /v1/walk-ffn-q8k q8k.bin ""
	cp "$dir/got" "$dir/right-$layout"
	stop
done

# The key is applied: the ggml model served as LARQL-private differs.
step="wrong arrangement"
start "$dir/q4k-ggml" private
nsx taskset -c 1 curl -sS -m 20 -o "$dir/wrong" \
	--data-binary @"$dir/q8k.bin" http://198.18.3.82:8080/v1/walk-ffn-q8k
stop
! cmp -s "$dir/wrong" "$dir/right-ggml"
echo "kquant_serve.sh: both Q6_K arrangements served and checked"
