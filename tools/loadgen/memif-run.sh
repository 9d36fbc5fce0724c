#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# One ffn-shard and one ffn-loadgen on this machine over net_memif, for
# figures: the appliance (memif server, lcore 0, i8 on) serves a synthetic
# model at 198.18.4.2:8080; ffn-loadgen (memif client, lcore 1,
# 198.18.4.1) runs with the arguments given.  Test network of the load
# generator: prefix fsb, 198.18.4.0/24 (docs/DEVELOPING.md).
#
# usage: memif-run.sh BUILD_DIR [ffn-loadgen options...]
#   env: HIDDEN (256), INTER (4*HIDDEN), LAYERS (4),
#        MODEL: serve this vindex directory (LAYERS layers) instead of
#          generating one,
#        TEL_OUT: after the run, write the appliance's /ffn/shard/stats
#          (tools/telemetry/ffn-tel.py) to this file,
#        TEL_NET_OUT: and its /ffn/net/stats and /ffn/net/tcp, a JSON
#          line each, to this one,
#        LG_EAL: ffn-loadgen's lcores (-l 1), e.g. "--lcores 1@1,2@0":
#          one worker and one memif queue pair per lcore,
#        MAX_CONNECTIONS: the appliance's max_connections (4096),
#        GATEWAY: the appliance's gateway (none), e.g. 198.18.4.1 (the
#          load generator) for the answers to a --syn-flood's sources,
#        WORKER=1: the appliance in worker mode, its compute lcore on
#          the network lcore's CPU (a correctness setup on 2 CPUs),
#        NET_LCORES: the appliance's network lcores = queues (1 or 2;
#          with several ffn-loadgen lcores, as many as those),
#        EXPERTS: the unit's experts = A-B (issue 23; MODEL a hybrid
#          MoE), with LAYERS=0 for an expert-only unit (no layers key),
#        KQ_Q8K: the unit's kq_q8k (on or off; unset: the default, off),
#          the Q8_K integer path of K-quant layers,
#        RUNS: up to this many runs (1), each with a fresh appliance,
#          until one gives a RESULT line and the telemetry asked for;
#          the output is the last run's
#   e.g. memif-run.sh build --connections 16 --wire f16 --duration 10
set -euo pipefail

build=$(cd "${1:?usage: memif-run.sh BUILD_DIR [options]}" && pwd)
shift

# RUNS: why a run is repeated. A memif server sometimes refuses the next
# client for a moment after the last one left (loadgen_memif.sh), and
# DPDK 22.11's net_memif can crash the appliance as the client leaves,
# before its telemetry is read (loadgen_memif_pmd_race.sh). Both are the
# PMD's; a run that gave its result and telemetry is never repeated, so
# a failing run (errors, exit 3) still fails.
if [ "${RUNS:-1}" -gt 1 ]; then
	out=$(mktemp /tmp/fsb-runs.XXXXXX)
	trap 'rm -f "$out"' EXIT
	for ((i = 1; i <= RUNS; i++)); do
		rc=0
		rm -f "${TEL_OUT:-}" "${TEL_NET_OUT:-}"
		RUNS=1 "$0" "$build" "$@" >"$out" 2>&1 || rc=$?
		grep -q '^RESULT' "$out" &&
			{ [ -z "${TEL_OUT:-}" ] || [ -s "$TEL_OUT" ]; } &&
			{ [ -z "${TEL_NET_OUT:-}" ] || [ -s "$TEL_NET_OUT" ]; } &&
			break
		echo "memif-run.sh: run $i of $RUNS (exit $rc) gave no" \
			"result or no telemetry: $(grep -m1 -E \
			'Segmentation|refused|RESULT' "$out" || echo none)" >&2
		sleep 1
	done
	cat "$out"
	exit "$rc"
fi
hidden=${HIDDEN:-256}
inter=${INTER:-$((4 * hidden))}
layers=${LAYERS:-4}
dir=$(mktemp -d /tmp/fsb-run.XXXXXX)
pid=
shard_eal="-l 0" shard_net=0
shard_workers=
if [ "${NET_LCORES:-1}" -eq 2 ]; then
	shard_eal="--lcores 0@0,1@1"
	shard_net=0-1
elif [ -n "${WORKER:-}" ]; then
	# worker mode: lcore 2 computes, sharing CPU 0 with the network
	# lcore (ffn-loadgen has CPU 1)
	shard_eal="--lcores 0@0,2@0"
	shard_workers="worker_lcores = 2"
fi

cleanup() {
	rc=$?
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	[ "$rc" -ne 0 ] && [ -f "$dir/shard.log" ] && tail "$dir/shard.log" >&2
	rm -rf "$dir" "/var/run/dpdk/fsb-run-$$" "/var/run/dpdk/fsb-rlg-$$"
	exit "$rc"
}
trap cleanup EXIT INT TERM

model=${MODEL:-$dir/model}
[ -n "${MODEL:-}" ] ||
	"$build/tools/mkvindex/mkvindex" --hidden "$hidden" \
		--intermediate "$inter" --layers "$layers" --family llama \
		--seed 7 "$model" >/dev/null
cat >"$dir/shard.conf" <<CONF
[eal]
args = $shard_eal --no-pci --no-huge -m 1024 --file-prefix fsb-run-$$ --vdev net_memif0,role=server,socket=$dir/memif.sock
[log]
level = warning
[port 0]
device = net_memif0
address = 198.18.4.2/24
${GATEWAY:+gateway = $GATEWAY}
[shard run]
model = $model
$([ "$layers" -gt 0 ] && echo "layers = 0-$((layers - 1))")
${EXPERTS:+experts = $EXPERTS}
listen = 8080
port = 0
numa_node = 0
net_lcores = $shard_net
f16 = on
i8 = on
${MAX_CONNECTIONS:+max_connections = $MAX_CONNECTIONS}
${KQ_Q8K:+kq_q8k = $KQ_Q8K}
$shard_workers
CONF
timeout 900 "$build/app/ffn-shard/ffn-shard" -c "$dir/shard.conf" \
	>"$dir/shard.log" 2>&1 &
pid=$!
for _ in $(seq 600); do
	grep -q serving "$dir/shard.log" && break
	kill -0 "$pid"
	sleep 0.1
done
grep serving "$dir/shard.log"
echo "+ ffn-loadgen ${LG_EAL:--l 1} ... -- --ip 198.18.4.1/24 --target 198.18.4.2:8080 $*"
lrc=0
# shellcheck disable=SC2086 # LG_EAL: several EAL words
timeout 900 "$build/tools/loadgen/ffn-loadgen" ${LG_EAL:--l 1} --no-pci --no-huge \
	-m 512 --file-prefix "fsb-rlg-$$" \
	--vdev "net_memif0,role=client,socket=$dir/memif.sock" \
	--log-level=pmd.net.memif:error -- --ip 198.18.4.1/24 \
	--target 198.18.4.2:8080 "$@" || lrc=$?
if [ -n "${TEL_OUT:-}" ]; then
	python3 "$(dirname "$0")/../telemetry/ffn-tel.py" "fsb-run-$$" \
		/ffn/shard/stats,run >"$TEL_OUT"
fi
if [ -n "${TEL_NET_OUT:-}" ]; then
	for cmd in /ffn/net/stats /ffn/net/tcp; do
		python3 "$(dirname "$0")/../telemetry/ffn-tel.py" \
			"fsb-run-$$" "$cmd"
	done >"$TEL_NET_OUT"
fi
exit "$lrc"
