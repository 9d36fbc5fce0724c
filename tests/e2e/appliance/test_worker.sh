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
# features), which workers also run so the network lcore never computes;
# then SIGTERM while a large request computes (drain.py). The clients
# share core 1 with the worker: fine for correctness. Namespace fsa-worker-*, 198.18.3.0/24.
#
#   test_worker.sh BUILD_DIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
fsa_init worker "${1:-build}"

# exited_within PID SECONDS: true once PID (a child of this shell) is a
# zombie or gone, polled every 0.1 s for at most SECONDS.
exited_within() {
	local i st
	for i in $(seq $(($2 * 10))); do
		st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null || echo X)
		case $st in Z|X) return 0 ;; esac
		sleep 0.1
	done
	return 1
}

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

# SIGTERM with a request in flight (issue 4: stop accepting, finish
# in-flight requests, bounded, close): drain.py sends the signal and
# checks the connections; the process must then exit 0 within the drain
# bound (app/ffn-shard: 5 s) and a few seconds of teardown.
FSA_STEP="drain"
fsa_client 60 "$FSA_PY" "$HERE/drain.py" --host "$FSA_IP" --port 8080 \
	--model "$m" --owned 0-3 --pid "$FSA_PID" --seq-len 2048
exited_within "$FSA_PID" 10 || {
	echo "the appliance still runs 10 s after SIGTERM" >&2
	exit 1
}
rc=0
wait "$FSA_PID" || rc=$?
FSA_PID=
[ "$rc" -eq 0 ] || { echo "the appliance exited with $rc after the drain" >&2
	exit 1; }
grep -q '^ffn-shard: signal 15: drained and stopped' "$FSA_DIR/shard.out" || {
	echo "no \"drained and stopped\" line after SIGTERM" >&2
	exit 1
}
FSA_STEP=done
echo "test_worker.sh: ok"
