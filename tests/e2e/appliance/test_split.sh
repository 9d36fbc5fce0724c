#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# ffn-shard splitting one layer across workers (issue 4, "Compute
# scheduling": one layer's rows split across a node's workers to cut the
# latency of one large request). The network lcore 0 and two worker
# lcores 1 and 2, both on core 1 (EAL --lcores 0@0,1@1,2@1; this machine
# has 2 cores: correctness only, no speed), with split_min_rows = 1: every
# binary walk-ffn job has each layer's features cut into two slices, one
# per worker, whose partial outputs the last worker sums. The checks of
# test_routes.py that go through that path, against pyref: binary
# walk-ffn in every request and response format (f32/f16/i8), single and
# batch frames, seq_len 1..100, pipelining, the router's call; JSON stays
# whole. Two models: f32 weights (llama, SiLU, nf 501: uneven slices) and
# f16 weights (gemma3, GELU). /metrics must show the jobs were split (two
# parts each), /v1/stats the setting. Then two network lcores: /metrics
# must stay valid Prometheus text with both lcores' TCP counters.
# Namespace fsa-split-*, 198.18.3.0/24.
#
#   test_split.sh BUILD_DIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
fsa_init split "${1:-build}"

# metric NAME: the value of the series NAME{shard="e2e"} in /metrics.
metric() {
	fsa_client 20 curl -sf "http://$FSA_IP:8080/metrics" |
		awk -v n="$1{shard=\"e2e\"}" '$1 == n { print $2 }'
}

run() {
	local name=$1 m=$2 jobs parts stats
	shift 2
	FSA_STEP="model $name"
	fsa_model "$m" "$@"
	fsa_conf "$FSA_DIR/$name.conf" "$m" 0-3 eal_lcores=0@0,1@1,2@1 \
		worker_lcores=1-2 i8=on split_min_rows=1
	fsa_start "$FSA_DIR/$name.conf"
	grep -q 'worker mode' "$FSA_DIR/shard.out" || {
		echo "the appliance does not say it runs in worker mode" >&2
		exit 1
	}
	FSA_STEP="checks $name"
	fsa_client 400 "$FSA_PY" "$HERE/test_routes.py" --name "split $name" \
		--host "$FSA_IP" --port 8080 --model "$m" --owned 0-3 --i8 1 \
		--groups delivery,binary,router,pipeline,json
	FSA_STEP="split counters $name"
	stats=$(fsa_client 20 curl -sf "http://$FSA_IP:8080/v1/stats")
	echo "$stats" | grep -q '"split_min_rows":1,"split_parts":2' || {
		echo "/v1/stats does not show split_min_rows 1 over 2 parts:" \
			"$stats" >&2
		exit 1
	}
	jobs=$(metric ffn_split_jobs_total)
	parts=$(metric ffn_split_parts_total)
	echo "$name: $jobs split jobs, $parts parts"
	# test_routes.py's binary group alone sends 80+ binary walks
	if [ -z "$jobs" ] || [ "$jobs" -lt 80 ] ||
	   [ "$parts" != $((2 * jobs)) ]; then
		echo "/metrics: expected 80+ split jobs of 2 parts each," \
			"got jobs '$jobs' parts '$parts'" >&2
		exit 1
	fi
	fsa_stop
}

run llama-f32 "$FSA_DIR/m32" --hidden 256 --features 501 --layers 4 \
	--model-type llama --dtype f32 --layout features --seed 31
run gemma3-f16 "$FSA_DIR/m16" --hidden 256 --features 512 --layers 4 \
	--model-type gemma3 --dtype f16 --layout features --seed 32
# Two network lcores (net_lcores = 0-1, a queue each, single-lcore mode:
# each computes its own connections' requests): the deliveries and
# pipelining through both, over many connections (the kernel side of
# the tap spreads flows over its queues), then /metrics must still be
# valid Prometheus text: every TCP family once, with its TYPE, holding
# the samples of both lcores (fsa.prom_problems).
FSA_STEP="model two network lcores"
fsa_conf "$FSA_DIR/net2.conf" "$FSA_DIR/m16" 0-3 eal_lcores=0-1 i8=on
sed -i 's/^net_lcores = 0$/net_lcores = 0-1/' "$FSA_DIR/net2.conf"
grep -q '^net_lcores = 0-1$' "$FSA_DIR/net2.conf"
fsa_start "$FSA_DIR/net2.conf"
FSA_STEP="checks two network lcores"
fsa_client 400 "$FSA_PY" "$HERE/test_routes.py" --name "two net lcores" \
	--host "$FSA_IP" --port 8080 --model "$FSA_DIR/m16" --owned 0-3 \
	--i8 1 --groups delivery,routes,pipeline
FSA_STEP="/metrics with two network lcores"
fsa_client 30 "$FSA_PY" - "$HERE" "$FSA_IP" <<'EOF'
import re, sys
sys.path.insert(0, sys.argv[1])
import fsa
c = fsa.Http(sys.argv[2], 8080)
r = c.request("GET", "/metrics")
text = r.body.decode("utf-8", "replace")
probs = fsa.prom_problems(text)
lcores = sorted(set(re.findall(r'^ffn_tcp_segments_total\{lcore="(\d+)"',
                               text, re.M)))
types = re.findall(r"^# TYPE (ffn_tcp_\w+) ", text, re.M)
print("/metrics: %d lines, TCP families %s, lcores %s" %
      (text.count("\n"), types, lcores))
for ln in text.split("\n"):
    if ln.startswith("ffn_tcp_segments_total"):
        print("  " + ln)
for p in probs[:20]:
    print("  " + p)
want = ["ffn_tcp_segments_total", "ffn_tcp_retransmits_total",
        "ffn_tcp_resets_total", "ffn_tcp_syncookies_total",
        "ffn_tcp_drops_total", "ffn_tcp_connections"]
sys.exit(0 if r.status == 200 and not probs and lcores == ["0", "1"]
         and len(types) == len(set(types)) and set(want) <= set(types)
         else 1)
EOF
fsa_stop
FSA_STEP=done
echo "test_split.sh: ok"
