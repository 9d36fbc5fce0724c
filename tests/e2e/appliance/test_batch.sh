#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The worker's batch wait (issue 4, "Compute scheduling": batch rows of
# concurrent requests for the same layer up to batch_max_rows, waiting no
# longer than batch_wait_us). batch.py, against a worker-mode appliance
# (network lcore 0, worker lcore 1):
#   batch_wait_us = 1000000 (the maximum, so that every margin is wide):
#     a lone 1-row request is answered no sooner than the wait; two 1-row
#     requests 100 ms apart are one pass of 2 rows (ffn_batch_rows in
#     GET /metrics); two of 32 rows are one pass of 64 = batch_max_rows,
#     answered long before the wait ends;
#   batch_wait_us = 0: the same two 1-row requests are two passes.
# Namespace fsa-batch-*, 198.18.3.0/24; about 15 s.
#
#   test_batch.sh BUILD_DIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
fsa_init batch "${1:-build}"

FSA_STEP="model"
m=$FSA_DIR/m
fsa_model "$m" --hidden 256 --features 512 --layers 2 --model-type llama \
	--dtype f32 --layout features --seed 31

for wait in 1000000 0; do
	fsa_conf "$FSA_DIR/b$wait.conf" "$m" 0-1 eal_lcores=0-1 \
		worker_lcores=1 batch_wait_us=$wait batch_max_rows=64
	fsa_start "$FSA_DIR/b$wait.conf"
	FSA_STEP="batch_wait_us $wait"
	fsa_client 60 "$FSA_PY" "$HERE/batch.py" --host "$FSA_IP" \
		--port 8080 --model "$m" --owned 0-1 --wait-us "$wait" \
		--max-rows 64
	fsa_stop
done
FSA_STEP=done
echo "test_batch.sh: ok"
