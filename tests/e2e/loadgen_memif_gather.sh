#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Single-lcore mode gathers a batch across RX bursts (shard_lcore.c,
# gather_local). 16 ffn-loadgen clients (closed loop, memif, lcore 1)
# against a single-lcore appliance (lcore 0) serving one layer of hidden
# 2560, intermediate 2048 (63 MB f32: each pass takes milliseconds, in
# which every client's next request arrives). A 2560-float f32 request is
# 7 frames, so one RX burst of 32 frames completes at most 5 requests:
# computing after each burst made passes of at most 5 rows (3.4 measured
# at 64 clients before the fix). Asserts zero errors and a mean above 5.5
# rows per compute pass (/ffn/shard/stats over telemetry), which
# per-burst passes cannot reach. Prefix fsb, 198.18.4.0/24
# (tools/loadgen/memif-run.sh); about 15 s.
#
# usage: loadgen_memif_gather.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/fsb-gather.XXXXXX)
trap 'rm -rf "$dir"' EXIT

"$build/tools/mkvindex/mkvindex" --hidden 2560 --intermediate 2048 \
	--layers 1 --family llama --seed 5 "$dir/model" >/dev/null
# repeated only when it gave no result or telemetry (memif-run.sh RUNS:
# the memif PMD's)
rc=0
RUNS=3 MODEL=$dir/model LAYERS=1 TEL_OUT=$dir/tel.json \
	"$top/tools/loadgen/memif-run.sh" "$build" --connections 16 \
	--wire f32 --warmup 1 --duration 3 >"$dir/run.txt" 2>&1 || rc=$?
grep -E '^(RESULT|errors)' "$dir/run.txt" || { tail -30 "$dir/run.txt"; exit 1; }
[ "$rc" -eq 0 ] || { echo "ffn-loadgen exited $rc" >&2; exit 1; }
cat "$dir/tel.json"
python3 - "$dir/tel.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
mean = t["rows_computed"] / t["compute_passes"]
print(f"mean rows per compute pass: {mean:.1f}")
assert t["requests_served"] > 0, t
assert mean > 5.5, f"passes of {mean:.1f} rows: not gathered across bursts"
PY
echo "loadgen_memif_gather.sh: OK"
