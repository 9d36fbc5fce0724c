#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Overload, measured side by side in one run (issue 15 §3): ffn-shard's
# capacity at C connections (closed loop), then open loop at 1.5x and 3x
# that rate over the same connections. Prints, per run, req/s, goodput
# (req/s over capacity), latency from the schedule (includes the wait for
# a free connection: the generator's queue), the server's share from the
# send, max/p99 of that share (fairness: no connection starves), errors.
#
# usage: overload.sh BUILD_DIR [CONNECTIONS] [SECONDS]
#   env as memif-run.sh (HIDDEN 256, LAYERS 2 here, NET_LCORES, ...),
#   WORKER=1: the appliance in worker mode (memif-run.sh's WORKER_LCORE)
set -euo pipefail

build=${1:?usage: overload.sh BUILD_DIR [CONNECTIONS] [SECONDS]}
conns=${2:-2000}
secs=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
export HIDDEN=${HIDDEN:-256} LAYERS=${LAYERS:-2}
out=$(mktemp -d /tmp/fsb-overload.XXXXXX)
trap 'rm -rf "$out"' EXIT

# One memif-run, repeated only when it gave no result (RUNS: the memif
# PMD's).
run() {
	local name=$1
	shift
	RUNS=3 "$here/memif-run.sh" "$build" --connections "$conns" \
		--warmup 3 --duration "$secs" --wire f16 "$@" \
		>"$out/$name.txt" 2>&1 || true
	grep -q '^RESULT' "$out/$name.txt" && return 0
	tail -20 "$out/$name.txt" >&2
	echo "overload.sh: $name: no result" >&2
	exit 1
}

echo "== ffn-shard overload: $conns connections, HIDDEN=$HIDDEN," \
	"$(nproc) CPUs, $(date -u +%FT%TZ)"
run capacity
cap=$(sed -n 's/^RESULT.* rps=\([0-9.]*\).*/\1/p' "$out/capacity.txt")
for x in 1.5 3; do
	run "x$x" --rate "$(python3 -c "print(round($cap * $x))")"
done
python3 - "$out" "$cap" <<'PY'
import re, sys
out, cap = sys.argv[1], float(sys.argv[2])
def ms(line, key):
    return float(re.search(key + r" ([0-9.]+)", line).group(1))
print(f"{'run':<10} {'offered':>9} {'req/s':>9} {'goodput':>8} "
      f"{'p99 ms':>9} {'max ms':>9} {'svc p99':>8} {'svc max':>8} "
      f"{'max/p99':>8} {'errors':>6}")
for name, x in (("capacity", None), ("x1.5", 1.5), ("x3", 3.0)):
    t = open(f"{out}/{name}.txt").read()
    res = dict(kv.split("=") for kv in
               re.search(r"^RESULT (.*)$", t, re.M).group(1).split())
    lat = re.search(r"^latency .*$", t, re.M).group(0)
    svc = re.search(r"^service .*$", t, re.M)
    svc = svc.group(0) if svc else lat
    p99, mx = ms(svc, "p99"), ms(svc, "max")
    rps = float(res["rps"])
    print(f"{name:<10} {'closed' if x is None else round(cap * x):>9} "
          f"{rps:>9.0f} {rps / cap:>8.2f} {ms(lat, 'p99'):>9.1f} "
          f"{ms(lat, 'max'):>9.1f} {p99:>8.1f} {mx:>8.1f} "
          f"{mx / p99:>8.2f} {res['errors']:>6}")
PY
