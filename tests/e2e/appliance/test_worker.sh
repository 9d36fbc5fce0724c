#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# ffn-shard in worker mode (issue 4, "Compute scheduling"): the network
# lcore 0 hands complete requests to a worker lcore 1 over a ring and
# sends its answers. The subset of test_routes.py that goes through that
# path: binary walk-ffn in every request and response format (f32 against
# pyref, f16/i8 byte-equal to pyref's narrowing of the f32 answer), the
# router's call, pipelining (answers come back in request order even
# when the worker batches them), and the JSON path (full output and
# features), which workers also run so the network lcore never computes. The clients share core 1 with the
# worker: fine for correctness. Namespace fsa-worker-*, 198.18.3.0/24.
#
#   test_worker.sh BUILD_DIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
fsa_init worker "${1:-build}"

FSA_STEP="model"
m=$FSA_DIR/m
fsa_model "$m" --hidden 256 --features 512 --layers 4 --model-type gemma3 \
	--dtype f16 --layout features --seed 21
fsa_conf "$FSA_DIR/w.conf" "$m" 0-3 eal_lcores=0-1 worker_lcores=1 i8=on
fsa_start "$FSA_DIR/w.conf"
grep -q 'worker mode' "$FSA_DIR/shard.out" || {
	echo "the appliance does not say it runs in worker mode" >&2
	exit 1
}
FSA_STEP="checks"
fsa_client 300 "$FSA_PY" "$HERE/test_routes.py" --name "worker gemma3-f16" \
	--host "$FSA_IP" --port 8080 --model "$m" --owned 0-3 --i8 1 \
	--groups delivery,binary,router,pipeline,json
fsa_stop
FSA_STEP=done
echo "test_worker.sh: ok"
