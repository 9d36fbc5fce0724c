#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Expert shards over the appliance's own TCP stack (issue 23,
# spec/moe.md): experts_http.py against pyref's oracle, on a hybrid-MoE
# vindex made by mkvindex (hidden 512, 8 experts of width 300, Q4_K):
#   worker mode, dense layers + experts 0-5, batch_wait_us 100 ms: every
#     route and format, the 2 MiB single-route limit, pipelined and
#     concurrent layer-batch calls computed together (expert rows in
#     fewer runs, /metrics); the start-up log's expert count, the error
#     log;
#   single-lcore mode, an expert-only unit (no layers key), experts 2-7:
#     the same routes, pipelined calls computed together (one RX burst).
# Namespace fsa-experts-*, 198.18.3.0/24; about 40 s.
#
#   test_experts.sh BUILD_DIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
fsa_init experts "${1:-build}"

FSA_STEP="model"
m=$FSA_DIR/moe
"$FSA_BUILD/tools/mkvindex/mkvindex" --family gemma4 --hidden 512 \
	--intermediate 256 --layers 2 --experts 8 --expert-width 300 \
	--seed 23 "$m" >/dev/null

fsa_conf "$FSA_DIR/worker.conf" "$m" 0-1 eal_lcores=0-1 worker_lcores=1 \
	experts=0-5 i8=on batch_wait_us=100000
fsa_start "$FSA_DIR/worker.conf"
FSA_STEP="worker mode"
fsa_client 300 "$FSA_PY" "$HERE/experts_http.py" --host "$FSA_IP" \
	--port 8080 --model "$m" --experts 0-5 --clients 12 --rounds 3 \
	--expect-batching --burst-batching
FSA_STEP="start-up log"
grep '^ffn-shard: \[shard e2e\] experts: 12 held' "$FSA_DIR/shard.out"
# errors of the expert routes are logged (spec/moe.md §2: the batched
# client hides them); the unheld-expert call was the first
FSA_STEP="error log"
grep '^ffn-shard: \[e2e\] experts-layer-batch answered 400: {"error":"expert' \
	"$FSA_DIR/shard.out"
fsa_stop

fsa_conf "$FSA_DIR/single.conf" "$m" - experts=2-7 i8=on
fsa_start "$FSA_DIR/single.conf"
FSA_STEP="single-lcore, expert-only"
fsa_client 300 "$FSA_PY" "$HERE/experts_http.py" --host "$FSA_IP" \
	--port 8080 --model "$m" --experts 2-7 --clients 8 --rounds 2 \
	--expect-batching
fsa_stop

# kq_q8k = on: Q4_K experts compute as the reference does (Q8_K input
# and inner activation); every route again, within the reference's
# tolerance, and the start-up line and /v1/stats say so
fsa_conf "$FSA_DIR/kq.conf" "$m" - experts=0-7 i8=on kq_q8k=on
fsa_start "$FSA_DIR/kq.conf"
FSA_STEP="kq_q8k"
fsa_client 300 "$FSA_PY" "$HERE/experts_http.py" --host "$FSA_IP" \
	--port 8080 --model "$m" --experts 0-7 --clients 8 --rounds 2 \
	--expect-batching --kq-q8k
FSA_STEP="kq_q8k start-up log"
grep '^ffn-shard: \[shard e2e\] experts: 16 held .*q4k (kq_q8k: Q8_K inputs)' \
	"$FSA_DIR/shard.out"
fsa_stop
FSA_STEP=done
echo "test_experts.sh: ok"
