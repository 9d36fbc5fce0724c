#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The ffn-bench runs of docs/ACCURACY.md: synthetic models of both families
# (llama/SiLU, gemma3/GELU-tanh) and an outlier model, each split over two
# shards (layers 0-3 and 4-7) served by pyref/server.py on 127.0.0.1
# (ports 18300-18305), f32 vs f16 vs i8.
#
#   tests/e2e/pyref/run_accuracy.sh BUILD_DIR [WORK_DIR]
#
# To measure the appliance instead, serve WORK_DIR/{llama,gemma3,outlier}
# (written by the first run) from it and set SHARDS_<model> to the --ffn
# layout, e.g. SHARDS_llama='0-3=http://198.18.3.2:8080,4-7=http://...'.
set -u
B=${1:-build}
T=${2:-$(mktemp -d /tmp/ffn-accuracy.XXXXXX)}
PY=${PYTHON:-/usr/bin/python3}
P=$(cd "$(dirname "$0")" && pwd)
BENCH=$B/tools/client/ffn-bench
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait' EXIT

mk() {
	[ -f "$T/$1/index.json" ] && return
	"$PY" "$P/mkmodel.py" random "$T/$1" --hidden 512 --features 1536 \
		--layers 8 --seed 42 --vocab 2048 "${@:2}" >/dev/null
}
mk llama --model-type llama
mk gemma3 --model-type gemma3
mk outlier --model-type llama --down-scale 1:100000

serve() {	# PORT MODEL RANGE
	LARQL_I8_WIRE=1 timeout 900 "$PY" "$P/server.py" --model "$2" \
		--layers "$3" --port "$1" >/dev/null 2>&1 &
	PIDS+=($!)
	for _ in $(seq 200); do
		curl -sf "http://127.0.0.1:$1/v1/health" >/dev/null && return
		sleep 0.3
	done
	echo "pyref on port $1 did not start" >&2
	exit 1
}

port=18300
for m in llama gemma3 outlier; do
	var=SHARDS_$m
	L=${!var:-}
	if [ -z "$L" ]; then
		serve $port "$T/$m" 0-3
		serve $((port + 1)) "$T/$m" 4-7
		L="0-3=http://127.0.0.1:$port,4-7=http://127.0.0.1:$((port + 1))"
	fi
	port=$((port + 2))
	echo "### $m"
	echo '$ ffn-bench --ffn "'"$L"'" --model '"$T/$m"' --steps 32 --wire f32,f16,i8'
	timeout 600 "$BENCH" --ffn "$L" --model "$T/$m" --steps 32 \
		--wire f32,f16,i8
	[ $m = outlier ] && continue
	echo '$ ffn-bench ... --request-wire f32   (f32 requests, narrowed responses)'
	timeout 600 "$BENCH" --ffn "$L" --model "$T/$m" --steps 32 \
		--wire f32,f16,i8 --request-wire f32 | sed -n '4,7p'
	echo '$ ffn-bench --ffn ... --vocab 2048 --seed 7 --steps 32 --wire f32,f16,i8   (synthetic embeddings)'
	timeout 600 "$BENCH" --ffn "$L" --vocab 2048 --seed 7 --steps 32 \
		--wire f32,f16,i8 | sed -n '1p;4,7p'
done
