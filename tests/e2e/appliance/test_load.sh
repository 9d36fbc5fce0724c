#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# ffn-shard under load (issue 4, "Tests"): wrk at a few hundred
# connections for a bounded time, POST binary walk-ffn (load.lua checks
# every answer's status, length and bytes) and GET /v1/health; zero
# errors of any kind (non-2xx, connect/read/write errors, timeouts) and
# correct bodies (load_check.py: the reference answer against pyref, and
# every answer wrk saw differ from it). Then ffn-loadgen (our DPDK load
# generator on our own TCP stack, tools/loadgen) for as long at
# LG_CONNECTIONS in closed loop, binary walk-ffn: f16 answers to f32
# requests (seq_len 1), i8 answers to f16 batch requests of two layers
# (seq_len 4); zero errors of every kind on its report, every frame
# valid (§5.2) and every answer agreeing with the run's first one
# (--verify-body), that one checked against pyref (load_check.py
# loadgen), no packet lost waiting for ARP. Then both through impair.py
# (tc netem's job; sch_netem is not in this kernel): 20 ms +- 5 ms delay,
# 1% loss, 1% duplication, 5% reordering, both directions; wrk (f32
# seq 2, health) and ffn-loadgen (f16 answers to i8 requests, seq 2),
# the same assertions, and the relay must have dropped, duplicated and
# reordered frames of each one's run (a relay run per client).
#
# Namespace fsa-load-*, 198.18.3.0/24 (lib.sh):
#   .2  the appliance (net_tap fsa0, lcore 0)
#   .1  kernel side, wrk and curl (core 1): on fsa0, then on the bridge
#       fsabr (fsa_bridge), then on a bridge fsabr in fsa-load-*-c behind
#       the relay (fsa_impair)
#   .3  ffn-loadgen (net_af_packet on the veth fsal0, core 1), bridged
#       with the tap; behind the relay with .1 in the impaired phase
#
#   test_load.sh BUILD_DIR [SECONDS] [CONNECTIONS] [LG_CONNECTIONS]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
fsa_init load "${1:-build}"
SECS=${2:-10}
CONNS=${3:-300}
LG_CONNS=${4:-250}
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

# segments_out: TCP segments the appliance has sent (all lcores).
segments_out() {
	fsa_client 20 curl -s -m 10 "http://$FSA_IP:8080/metrics" |
		awk '/^ffn_tcp_segments_total\{.*dir="out"/ { s += $2 }
		     END { printf "%d\n", s }'
}

# run_walk TAG ACCEPT SEQ_LEN LAYER EXTRA_WRK_ARGS...
# On a clean link, when request and answer each fit one segment, also:
# about one segment sent per answer, i.e. the ACK of a request rides on
# its answer instead of going alone first (lib/shard conn_send); bound
# 1.5 for handshakes, closes and the odd delayed ACK. (A request of
# several segments is ACKed as it arrives, before its answer.)
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
	local seg0 seg1
	seg0=$(segments_out)
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
	seg1=$(segments_out)
	echo "$tag: $((seg1 - seg0)) segments sent for $3 answers"
	case $tag in
	impaired-*) ;;
	*)	[ "$(stat -c %s "$d/body.bin")" -gt 1200 ] ||
		[ $((2 * (seg1 - seg0))) -le $((3 * $3)) ] ||
			bad "$tag: $((seg1 - seg0)) segments sent for $3" \
				"answers (more than 1.5 each)" ;;
	esac
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

# run_lg TAG ACCEPT REQUEST SEQ_LEN LAYERS EXTRA_LOADGEN_ARGS...:
# ffn-loadgen (fsa_loadgen: DPDK on our own TCP stack, beside the
# kernel's clients), LG_CONNS connections in closed loop for SECS,
# binary walk-ffn of LAYERS (a batch frame when several) with SEQ_LEN
# rows sent as REQUEST, answers asked as ACCEPT. Every answer is held to
# the first valid one (--verify-body: frame fields, §5.2, and values
# within the format's rounding), and that one to pyref (load_check.py
# loadgen).
run_lg() {
	local tag=$1 accept=$2 req=$3 seq=$4 layers=$5 d=$FSA_DIR/$1 rc=0
	local out r v b e
	shift 5
	FSA_STEP="$tag"
	mkdir -p "$d"
	out=$d/lg.out
	echo "$tag: ffn-loadgen, $LG_CONNS connections, ${SECS} s, layers" \
		"$layers seq_len $seq, $req request, $accept answers"
	e=$(fsa_in cat "/sys/class/net/$FSA_IF/statistics/tx_dropped")
	fsa_loadgen $((SECS + 60)) "$out" --connections "$LG_CONNS" \
		--hidden 256 --layers "$layers" --seq-len "$seq" \
		--wire "$accept" --request-wire "$req" --warmup 1 \
		--duration "$SECS" --verify-body --save-body "$d/ref.bin" \
		"$@" || rc=$?
	grep -E '^(requests|latency|errors|status|validated|bodies|port|  +drop|RESULT)' \
		"$out" | sed "s/^/  [$tag] /"
	# Where RTOs on a clean link come from: frames the queue to the
	# appliance dropped (it fell behind: the tap's queue, or the veth's
	# XDP ring with FSA_PMD=af_xdp), or queued past the RTO.
	echo "  [$tag] frames to the appliance dropped at its full" \
		"queue: $(($(fsa_in cat \
		"/sys/class/net/$FSA_IF/statistics/tx_dropped") - e))"
	[ "$rc" -eq 0 ] || {
		bad "$tag: ffn-loadgen exited $rc"
		tail -n 20 "$out"
	}
	r=$(fsa_result requests "$out")
	v=$(fsa_result validated "$out")
	b=$(fsa_result bodies "$out")
	[ "${r:-0}" -gt 0 ] || bad "$tag: no responses"
	[ "$(fsa_result errors "$out")" = 0 ] ||
		bad "$tag: ffn-loadgen counted errors"
	# errors     window W, whole run A: connect=0 reset=0 ...
	for e in $(sed -n 's/^errors .*run [0-9]*://p' "$out"); do
		[ "${e#*=}" = 0 ] || bad "$tag: ffn-loadgen counted ${e/=/ } errors"
	done
	# No SYN lost in ffn-loadgen's own queue of packets for a next hop
	# whose MAC it is resolving (lib/net keeps 16; ffn-loadgen resolves
	# the target before its clients start, lg_prime_targets).
	e=$(sed -n 's/^port .*arp_pending_full \([0-9]*\).*/\1/p' "$out")
	[ "$e" = 0 ] || bad "$tag: ffn-loadgen dropped '$e' packets waiting" \
		"for ARP"
	[ "${v:-x}" = "${r:-y}" ] && [ "${b:-x}" = "${r:-y}" ] ||
		bad "$tag: $r answers, $v frames valid, $b agreeing with the" \
			"reference answer"
	[ -s "$d/ref.bin" ] && fsa_client 60 "$FSA_PY" "$HERE/load_check.py" \
		loadgen --model "$m" --owned 0-3 --layers "$layers" \
		--seq-len "$seq" --accept "$accept" --request "$req" \
		--body "$d/ref.bin" || bad "$tag: the reference answer is wrong"
	tcp_counters
}

# impair_counters TAG: stop the relay; it must have dropped, duplicated
# and reordered frames of TAG's run.
impair_counters() {
	local line
	FSA_STEP="impairment counters $1"
	fsa_impair_stop >"$FSA_DIR/impair-$1.stop"
	line=$(tail -n 1 "$FSA_DIR/impair-$1.stop")
	echo "$1: $line"
	# impair: frames F lost L dup D reordered R sent S send_err E
	set -- "$1" $line
	[ "$3" = frames ] && [ "$6" -gt 0 ] && [ "$8" -gt 0 ] &&
		[ "${10}" -gt 0 ] ||
		bad "$1: the relay did not drop, duplicate and reorder: $line"
}

IMPAIR=(--delay-ms 20 --jitter-ms 5 --loss 0.01 --dup 0.01 --reorder 0.05
	--reorder-ms 15)

run_walk walk-f16 f16 1 2 --timeout 5s
run_walk walk-i8-seq4 i8 4 0 --timeout 5s
run_health health --timeout 5s

# ffn-loadgen on a port of its own bridged with the tap's kernel side
# (fsa_bridge; the kernel's clients move onto the bridge).
fsa_bridge
run_lg lg-f16 f16 f32 1 2 --timeout 5000
run_lg lg-i8-seq4-batch i8 f16 4 0,3 --timeout 5000

# The same through a lossy, slow, reordering, duplicating link (both
# directions; impair.py, as sch_netem is not in this kernel): the
# kernel's clients and ffn-loadgen's port behind the relay, one relay
# run (and its counters) for wrk, one for ffn-loadgen.
fsa_impair $((3 * SECS + 60)) "${IMPAIR[@]}"
run_walk impaired-walk-f32 f32 2 3 --timeout 10s
run_health impaired-health --timeout 10s
impair_counters impaired-wrk
fsa_impair_relay $((SECS + 60)) "${IMPAIR[@]}"
run_lg impaired-lg-f16-seq2 f16 i8 2 1 --timeout 10000
impair_counters impaired-lg

fsa_stop
FSA_STEP=done
if [ "$fails" -ne 0 ]; then
	echo "test_load.sh: $fails FAILED"
	exit 1
fi
echo "test_load.sh: ok"
