#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# ffn-shard under load (issue 4, "Tests"): wrk at a few hundred
# connections for a bounded time, POST binary walk-ffn (load.lua checks
# every answer's status, length and bytes) and GET /v1/health; zero
# errors of any kind (non-2xx, connect/read/write errors, timeouts) and
# correct bodies (load_check.py: the reference answer against pyref, and
# every answer wrk saw differ from it). Then the same through impair.py
# (tc netem's job; sch_netem is not in this kernel): 20 ms +- 5 ms delay,
# 1% loss, 1% duplication, 5% reordering, both directions.
# Namespace fsa-load-*, 198.18.3.0/24; appliance on lcore 0, wrk on core 1.
#
#   test_load.sh BUILD_DIR [SECONDS] [CONNECTIONS]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
fsa_init load "${1:-build}"
SECS=${2:-10}
CONNS=${3:-300}
fails=0
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

FSA_STEP="model"
m=$FSA_DIR/m
fsa_model "$m" --hidden 256 --features 512 --layers 4 --model-type llama
fsa_conf "$FSA_DIR/load.conf" "$m" 0-3 i8=on max_connections=1024
fsa_start "$FSA_DIR/load.conf"

# tcp_counters: the appliance's TCP counters (GET /metrics), for the
# log: resets sent, SYN cookies, drops by reason.
tcp_counters() {
	fsa_client 20 curl -s -m 10 "http://$FSA_IP:8080/metrics" |
		grep -E '^ffn_tcp_(resets|syncookies|drops|retransmits)' || true
}

# run_walk TAG ACCEPT SEQ_LEN LAYER EXTRA_WRK_ARGS...
run_walk() {
	local tag=$1 accept=$2 seq=$3 layer=$4 d=$FSA_DIR/$1 line
	shift 4
	FSA_STEP="$tag"
	mkdir -p "$d/out"
	fsa_client 60 "$FSA_PY" "$HERE/load_check.py" prepare "$d" \
		--host "$FSA_IP" --model "$m" --owned 0-3 --layer "$layer" \
		--seq-len "$seq" --accept "$accept"
	local ct=application/x-larql-ffn acc
	case $accept in
	f32) acc="application/x-larql-ffn" ;;
	f16) acc="application/x-larql-ffn-f16, application/x-larql-ffn" ;;
	i8) acc="application/x-larql-ffn-i8, application/x-larql-ffn-f16, application/x-larql-ffn" ;;
	esac
	fsa_client $((SECS + 60)) env FSA_BODY="$d/body.bin" FSA_CT="$ct" \
		FSA_ACCEPT="$acc" FSA_EXPECT="$d/expect.bin" FSA_OUT="$d/out" \
		wrk -t 2 -c "$CONNS" -d "${SECS}s" "$@" -s "$HERE/load.lua" \
		"http://$FSA_IP:8080/v1/walk-ffn" | tee "$d/wrk.out"
	line=$(grep '^fsa-load:' "$d/wrk.out") || {
		bad "$tag: no summary from load.lua"
		return
	}
	# fsa-load: responses R bad_status S bad_length L differ D connect C
	#           read R write W timeout T status X
	set -- $line
	[ "$3" -gt 0 ] || bad "$tag: no responses"
	[ "$5" -eq 0 ] || bad "$tag: $5 answers were not 200"
	[ "$7" -eq 0 ] || bad "$tag: $7 answers had the wrong length"
	local e
	for e in "connect ${11}" "read ${13}" "write ${15}" "timeout ${17}" \
		"non-2xx ${19}"; do
		[ "${e#* }" -eq 0 ] || bad "$tag: wrk counted ${e#* } ${e% *} errors"
	done
	echo "$tag: $3 answers, $9 differ from the reference bytes (checked" \
		"against pyref below)"
	fsa_client 60 "$FSA_PY" "$HERE/load_check.py" verify "$d" \
		--model "$m" --owned 0-3 --layer "$layer" --seq-len "$seq" \
		--accept "$accept" || bad "$tag: saved answers are wrong"
	tcp_counters
}

# run_health TAG EXTRA_WRK_ARGS...
run_health() {
	local tag=$1 d=$FSA_DIR/$1
	shift
	FSA_STEP="$tag"
	mkdir -p "$d"
	fsa_client $((SECS + 60)) wrk -t 2 -c "$CONNS" -d "${SECS}s" "$@" \
		"http://$FSA_IP:8080/v1/health" | tee "$d/wrk.out"
	if grep -E 'Socket errors|Non-2xx' "$d/wrk.out"; then
		bad "$tag: errors"
	fi
	grep -qE '^ +[1-9][0-9]* requests in' "$d/wrk.out" ||
		bad "$tag: no requests"
	tcp_counters
}

run_walk walk-f16 f16 1 2 --timeout 5s
run_walk walk-i8-seq4 i8 4 0 --timeout 5s
run_health health --timeout 5s

# The same through a lossy, slow, reordering, duplicating link (both
# directions; impair.py, as sch_netem is not in this kernel).
fsa_impair $((4 * SECS + 60)) --delay-ms 20 --jitter-ms 5 --loss 0.01 \
	--dup 0.01 --reorder 0.05 --reorder-ms 15
run_walk impaired-walk-f32 f32 2 3 --timeout 10s
run_health impaired-health --timeout 10s
FSA_STEP="impairment counters"
fsa_impair_stop >"$FSA_DIR/impair.stop"
line=$(tail -n 1 "$FSA_DIR/impair.stop")
echo "$line"
# impair: frames F lost L dup D reordered R sent S send_err E
set -- $line
[ "$2" = frames ] && [ "$5" -gt 0 ] && [ "$7" -gt 0 ] && [ "$9" -gt 0 ] ||
	bad "the relay did not drop, duplicate and reorder: $line"

fsa_stop
FSA_STEP=done
if [ "$fails" -ne 0 ]; then
	echo "test_load.sh: $fails FAILED"
	exit 1
fi
echo "test_load.sh: ok"
