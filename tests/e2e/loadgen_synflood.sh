#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# A SYN flood while serving (issue 15 §4): ffn-loadgen over memif
# (tools/loadgen/memif-run.sh, prefix fsb, 198.18.4.0/24) serves 64
# connections while its lcore also sends spoofed-source SYNs
# (--syn-flood max, sources 198.19.0.0/16, answered through the
# appliance's gateway, the load generator) at the appliance's port.
# Asserts: zero errors of any kind and every answer validated, the SYNs
# were sent, and the appliance answered past its SYN backlog with SYN
# cookies (/ffn/net/tcp: syncookies_sent, drop_backlog) while its
# connections stayed within the backlog (SYN_RECEIVED <= max_connections
# / 2). The served p99 against a run without the flood is printed, not
# asserted (timing). About 25 s.
#
# usage: loadgen_synflood.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/fsb-synflood.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export HIDDEN=256 LAYERS=2 GATEWAY=198.18.4.1

# run NAME loadgen-options...: repeated only when it gave no result or
# telemetry (memif-run.sh RUNS: the memif PMD's)
run() {
	local name=$1 rc=0
	shift
	RUNS=3 TEL_NET_OUT=$dir/$name.tel \
		"$top/tools/loadgen/memif-run.sh" "$build" \
		--connections 64 --warmup 3 --duration 5 --wire f16 \
		"$@" >"$dir/$name.txt" 2>&1 || rc=$?
	grep -E '^(latency|errors|flood|validated|port)' "$dir/$name.txt" |
		sed "s/^/$name: /"
	if [ "$rc" -ne 0 ] || [ ! -s "$dir/$name.tel" ]; then
		tail -30 "$dir/$name.txt" >&2
		echo "FAIL $name: ffn-loadgen exited $rc" >&2
		exit 1
	fi
}

run base
run flood --syn-flood max
python3 - "$dir" <<'PY'
import json, re, sys
d = sys.argv[1]
def result(name):
    t = open(f"{d}/{name}.txt").read()
    res = dict(kv.split("=") for kv in
               re.search(r"^RESULT (.*)$", t, re.M).group(1).split())
    assert int(res["errors"]) == 0, f"{name}: errors {res['errors']}"
    assert int(res["requests"]) > 0 and \
        res["validated"] == res["requests"], f"{name}: {res}"
    return t, res
_, base = result("base")
t, flood = result("flood")
syns = int(re.search(r"^flood +(\d+) SYNs", t, re.M).group(1))
assert syns > 0, "no SYN sent"
net, tcp = [json.loads(l) for l in open(f"{d}/flood.tel")]
assert tcp["syncookies_sent"] > 0, tcp
assert tcp["drop_backlog"] > 0, tcp
assert tcp["conns_SYN_RECEIVED"] <= 4096 // 2, tcp
print(f"flood: {syns} SYNs in the window, {tcp['syncookies_sent']} cookies;"
      f" served {flood['rps']} req/s (base {base['rps']}), p99 "
      f"{float(flood['p99_us']) / 1000:.2f} ms (base "
      f"{float(base['p99_us']) / 1000:.2f}, ratio "
      f"{float(flood['p99_us']) / float(base['p99_us']):.2f})")
PY
echo "loadgen_synflood.sh: OK"
