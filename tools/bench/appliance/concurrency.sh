#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The appliance under concurrency (issue 14): one Gemma-size layer
# (hidden 2560, intermediate 10240) with f32, f16 and Q4_K weights,
# served by one single-lcore ffn-shard (lcore 0: network and compute) over
# net_memif to ffn-loadgen (lcore 1, closed loop, f16 answers), at 1, 4,
# 16, 64 and 128 connections; a fresh appliance per point
# (tools/loadgen/memif-run.sh). For each point: req/s, p50, p99, the mean
# rows per compute pass (rows_computed / compute_passes from
# /ffn/shard/stats over DPDK telemetry, warm-up included), and the
# engine's ceiling at that batch size: rows / time(rows) of bench-ffn
# --roofline, run first in this same script (kernels the appliance uses,
# time interpolated linearly between the measured row counts), and
# req/s / ceiling. Issue 14's goal: >= 0.85 at 64 connections, and req/s
# never falling as connections grow. Q4_K's ceiling comes from
# bench-kquant --roofline the same way: its f32 path (the appliance's
# default; kq_q8k off), Q4_K gate/up + Q6_K down as mkvindex --quant q4k
# writes them; the row "q4k-q8k" is the same weights served with
# kq_q8k = on, against the roofline's Q8_K path.
#
# usage: concurrency.sh BUILD_DIR [SECONDS]        (about 3 minutes)
set -euo pipefail

top=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "${1:?usage: concurrency.sh BUILD_DIR [SECONDS]}" && pwd)
secs=${2:-4}
dir=$(mktemp -d /tmp/fsb-conc.XXXXXX)
trap 'rm -rf "$dir"' EXIT

mkv() { # NAME ARGS...
	local name=$1
	shift
	"$build/tools/mkvindex/mkvindex" --hidden 2560 --intermediate 10240 \
		--layers 1 --family gemma3 --seed 7 "$@" "$dir/$name" \
		>/dev/null
}
mkv f32 --dtype f32
# f16: all three matrices f16, as LARQL's extractor writes them (spec/
# vindex.md §2.3), which is what bench-ffn's f16 ceiling times. The
# feature-major files (§2.1) keep up and down f32 whatever the dtype: a
# model there served 0.55-0.72 of the all-f16 ceiling at 1-4
# connections, as it reads 1.7x the bytes.
mkv f16 --dtype f16 --layout dense
mkv q4k --quant q4k

# OpenBLAS settings do not matter to the kernels timed here.
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE taskset -c 0 \
	"$build/tools/bench/ffn/bench-ffn" --roofline --size gemma --iters 2 \
	>"$dir/roof.txt"
isa=$(grep -o '^kernels [a-z0-9]*' "$dir/roof.txt" | tail -1 | cut -d' ' -f2)
echo "ceiling: bench-ffn --roofline --size gemma --iters 2, kernels $isa"
taskset -c 0 "$build/tools/bench/kquant/bench-kquant" --roofline 2 \
	2560:10240 >"$dir/kqroof.txt"
kqisa=$(grep -o '^kernels [a-z0-9]*' "$dir/kqroof.txt" | tail -1 |
	cut -d' ' -f2)
echo "q4k ceiling: bench-kquant --roofline 2 2560:10240, f32 path (q4k-q8k: q8k path), kernels $kqisa"

: >"$dir/points.txt"
for w in f32 f16 q4k q4k-q8k; do
	# q4k-q8k: the q4k model, kq_q8k = on (memif-run.sh KQ_Q8K)
	model=$dir/${w%-q8k}
	kq=off
	[ "$w" = q4k-q8k ] && kq=on
	for c in 1 4 16 64 128; do
		# repeated only when it gave no result or telemetry
		# (memif-run.sh RUNS: the memif PMD's)
		rc=0
		RUNS=3 MODEL=$model KQ_Q8K=$kq LAYERS=1 \
			TEL_OUT=$dir/tel.json \
			"$top/tools/loadgen/memif-run.sh" "$build" \
			--connections "$c" --wire f16 --warmup 1 \
			--duration "$secs" >"$dir/run.txt" 2>&1 || rc=$?
		res=$(grep '^RESULT' "$dir/run.txt" || true)
		if [ -z "$res" ] || [ ! -s "$dir/tel.json" ]; then
			echo "$w at $c connections: no result (exit $rc)" >&2
			tail -25 "$dir/run.txt" >&2
			exit 1
		fi
		echo "$w $c $rc $res $(cat "$dir/tel.json")" >>"$dir/points.txt"
	done
done

python3 - "$dir/roof.txt" "$isa" "$dir/points.txt" "$dir/kqroof.txt" \
	"$kqisa" <<'PY'
import json, re, sys
roof, isa, pts, kqroof, kqisa = sys.argv[1:6]
# the active kernel set's block: "  f32  64  96.78 ..." rows -> ms; of
# bench-kquant's, the f32 path's rows are the q4k weights', the q8k
# path's the q4k-q8k ones'
t = {"f32": {}, "f16": {}, "q4k": {}, "q4k-q8k": {}}
for path, want, names in ((roof, isa, {"f32": "f32", "f16": "f16"}),
                          (kqroof, kqisa, {"f32": "q4k", "q8k": "q4k-q8k"})):
    cur = None
    for line in open(path):
        m = re.match(r"kernels (\S+):", line)
        if m:
            cur = m.group(1)
            continue
        m = re.match(r"\s+(f32|f16|q8k)\s+(\d+)\s+([\d.]+)", line)
        if m and cur == want and m.group(1) in names:
            t[names[m.group(1)]][int(m.group(2))] = float(m.group(3)) / 1e3

def ceiling(w, b):
    rows = sorted(t.get(w, {}))
    if not rows or b <= 0:
        return None
    b = min(max(b, rows[0]), rows[-1])
    lo = max(r for r in rows if r <= b)
    hi = min(r for r in rows if r >= b)
    tl, th = t[w][lo], t[w][hi]
    tb = tl if hi == lo else tl + (th - tl) * (b - lo) / (hi - lo)
    return b / tb

print("| weights | connections | req/s | p50 ms | p99 ms | errors "
      "| rows/pass | ceiling rows/s | req/s ÷ ceiling |")
print("|---|---|---|---|---|---|---|---|---|")
prev = {}
falls = []
for line in open(pts):
    w, c, rc, rest = line.split(" ", 3)
    res = dict(kv.split("=") for kv in re.findall(r"\w+=[\d.]+", rest))
    tel = json.loads(rest[rest.index("{"):])
    rps = float(res["rps"])
    b = tel["rows_computed"] / max(tel["compute_passes"], 1)
    ce = ceiling(w, b)
    q = f"{rps / ce:.2f}" if ce else ""
    print(f"| {w} | {c} | {rps:.1f} | {float(res['p50_us']) / 1e3:.2f} "
          f"| {float(res['p99_us']) / 1e3:.2f} | {res['errors']} "
          f"| {b:.1f} | {f'{ce:.0f}' if ce else ''} | {q} |")
    if w in prev and rps < 0.97 * prev[w][1]:
        falls.append(f"{w}: {prev[w][0]} -> {c} connections "
                     f"{prev[w][1]:.1f} -> {rps:.1f} req/s")
    prev[w] = (c, rps)
print()
print("req/s fell (> 3%) as connections grew: " +
      ("; ".join(falls) if falls else "never"))
PY
