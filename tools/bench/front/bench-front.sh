#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The fan-out front (issue 19) measured against calling the shards
# directly, in one run. Needs root, Debian's /usr/bin/python3 (numpy).
#
# Per hidden size (HIDDENS, default "512 2560"): a model of 34 layers
# (Gemma-3-4B's count) and a small intermediate size (INTER, 128), made
# by mkvindex, so that a pyref answer costs well under a millisecond
# (its FFN takes 0.05-0.1 ms in numpy at these sizes; Python's HTTP
# handling is most of the rest); the wire sizes are the real ones for
# the hidden size (the intermediate size is not on the wire).
#
# Network 198.18.4.0/24, prefix fsb (docs/DEVELOPING.md, the bench row),
# in a namespace fsb-front-PID: the appliance on net_tap at .2, one
# [front] unit on lcore 0 (f16 and i8 on); the tap's kernel side .1
# holds three pyref servers (LARQL_I8_WIRE, all on core 1):
#   A  layers 0-16   198.18.4.1:8081  behind the front
#   B  layers 17-33  198.18.4.1:8082  behind the front
#   R  all layers    198.18.4.1:8083  the whole model, never behind it
# The client, bench_front.py, is one Python process on core 1 with
# keep-alive sockets. The direct calls reach the pyrefs over the
# namespace's loopback (the kernel side is local to the client); calls
# through the front cross net_tap twice per hop (client-front,
# front-shard), so the front's added latency below includes two net_tap
# round trips, the appliance's TCP stack and the front's split/merge.
#
#   (a) latency: the same f32 request, to R directly and to the front,
#       in alternating batches (A/B/A/B, the first of each pair swapped
#       every round), for one layer (layer 3, in A) and a batch spanning
#       both shards ([3, 20]); p50/p99 of each, their difference and
#       ratio. K=0 (an empty batch; the front answers it itself, no
#       shard hop) as a floor of the client-front leg.
#   (b) req/s with C = 1, 4, 16 closed-loop connections (one selector
#       loop): single-layer requests alternating between layers of A
#       and B, through the front and directly to the owning shard,
#       alternating rounds. Everything but the front shares core 1, so
#       the pyrefs and the client bound both figures; see the note.
#   (c) bytes per token: one single-layer seq_len 1 request per format
#       through the front (f32, f16, i8 bodies with the matching Accept
#       list, §5.1) and as the reference router forwards it (§7: base
#       Content-Type, no Accept, so an f32 answer), the answer's
#       Content-Length read from the real answer; per token = 34 layers x
#       one request each (a token's layers run in sequence).
#
# ffn-loadgen is not used: it is a DPDK process with its own busy lcore,
# and with the front's poll loop on core 0 only core 1 is left, where
# the pyrefs must run.
#
# usage: bench-front.sh BUILD_DIR [ROUNDS]     (about 2 minutes)
#   ROUNDS: latency rounds of 200 requests per side (default 10)
#   env HIDDENS="512 2560", INTER=128, SECONDS_B=3 (per throughput round),
#   FSA_NICE=N: the appliance's niceness (tests/e2e/appliance/lib.sh), for
#   a machine where other work polls on core 0 too ("front waited" in the
#   tables: its run-queue wait share; a row with more than a few % is
#   disturbed)
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
HERE=$TOP/tools/bench/front
BUILD_ARG=${1:?usage: bench-front.sh BUILD_DIR [ROUNDS]}
ROUNDS=${2:-10}
HIDDENS=${HIDDENS:-512 2560}
INTER=${INTER:-128}
NL=34
SECS_B=${SECONDS_B:-3}
FSA_PFX=fsb
FSA_NET=198.18.4
# shellcheck source=tests/e2e/appliance/lib.sh
. "$TOP/tests/e2e/appliance/lib.sh"
PY=${PYTHON:-/usr/bin/python3}
PYREF=$TOP/tests/e2e/pyref
[ "$(id -u)" = 0 ] || { echo "bench-front.sh: needs root" >&2; exit 1; }
"$PY" -c 'import numpy' 2>/dev/null ||
	{ echo "bench-front.sh: $PY has no numpy" >&2; exit 1; }
fsa_init front "$BUILD_ARG"
MKVINDEX=$FSA_BUILD/tools/mkvindex/mkvindex
[ -x "$MKVINDEX" ] || { echo "bench-front.sh: no $MKVINDEX" >&2; exit 1; }

FRONT=$FSA_IP:8080
A=$FSA_PEER:8081
B=$FSA_PEER:8082
R=$FSA_PEER:8083
declare -A TPID

# pyref TAG ADDR:PORT LAYERS|"" : a pyref on core 1, up once it answers.
pyref() {
	local tag=$1 hp=$2 layers=$3
	ip netns exec "$FSA_NS" timeout 1800 taskset -c 1 env \
		OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 LARQL_I8_WIRE=1 \
		"$PY" "$PYREF/server.py" --model "$M" \
		${layers:+--layers "$layers"} --host "${hp%:*}" \
		--port "${hp#*:}" >"$FSA_DIR/$tag.log" 2>&1 &
	TPID[$tag]=$!
	FSA_BG_PIDS="$FSA_BG_PIDS $!"
	for _ in $(seq 300); do
		fsa_client 5 curl -sf "http://$hp/v1/health" >/dev/null 2>&1 &&
			return 0
		kill -0 "${TPID[$tag]}" 2>/dev/null || break
		sleep 0.1
	done
	cat "$FSA_DIR/$tag.log" >&2
	echo "bench-front.sh: pyref $tag did not come up on $hp" >&2
	return 1
}

net_up() {
	for _ in $(seq 50); do
		fsa_in ip -4 addr show dev "$FSA_IF" | grep -q " $FSA_PEER/" ||
			fsa_in ip addr add "$FSA_PEER/24" dev "$FSA_IF" \
				2>/dev/null || true
		fsa_in ip link set "$FSA_IF" up
		fsa_in ping -q -c 1 -W 1 "$FSA_IP" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "bench-front.sh: the front does not answer ping" >&2
	return 1
}

# start_all: model $M of hidden $H, the front, A, B, R.
start_all() {
	FSA_STEP="model hidden $H"
	M=$FSA_DIR/model-$H
	"$MKVINDEX" --hidden "$H" --intermediate "$INTER" --layers $NL \
		--family llama --seed 19 "$M" >/dev/null
	FSA_STEP="front hidden $H"
	FSA_RUN=$((FSA_RUN + 1))
	CONF=$FSA_DIR/front-$H.conf
	cat >"$CONF" <<EOF
# written by tools/bench/front/bench-front.sh
[eal]
args = -l 0 --no-pci --no-huge -m 512 --file-prefix ${FSA_NAME}_$FSA_RUN --vdev $(fsa_vdev)
[log]
level = notice
[port 0]
device = net_${FSA_PMD}0
address = $FSA_IP/24
[front bench]
listen = 8080
port = 0
net_lcores = 0
f16 = on
i8 = on
max_connections = 256
num_layers = $NL
0-16 = $A
17-33 = $B
EOF
	timeout 20 "$FSA_BIN" --check-static -c "$CONF" >/dev/null
	: >"$FSA_DIR/shard.out"
	# FSA_NICE: a session of its own (setsid), so that the niceness
	# also holds against other sessions' processes under the kernel's
	# autogroup scheduling (its group's nice is set below)
	ip netns exec "$FSA_NS" ${FSA_NICE:+setsid nice -n "$FSA_NICE"} \
		timeout 1800 "$FSA_BIN" -c "$CONF" >"$FSA_DIR/shard.out" 2>&1 &
	FSA_PID=$!
	for _ in $(seq 150); do
		fsa_in ip link show "$FSA_IF" >/dev/null 2>&1 && break
		kill -0 "$FSA_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	net_up
	if [ -n "${FSA_NICE:-}" ] && [ -w "/proc/$FSA_PID/autogroup" ]; then
		echo "$FSA_NICE" >"/proc/$(pgrep -P "$FSA_PID" | head -n 1)/autogroup" ||
			true
	fi
	FSA_STEP="pyrefs hidden $H"
	pyref A "$A" 0-16
	pyref B "$B" 17-33
	pyref R "$R" ""
	net_up
	FSA_STEP="front ready hidden $H"
	# both shards in use: a spanning walk answered
	for _ in $(seq 100); do
		fsa_client 10 "$PY" "$HERE/bench_front.py" latency \
			--front "$FRONT" --ref "$R" --single 3 --span 3,20 \
			--rounds 0 --warmup 0 >"$FSA_DIR/ready.out" 2>&1 &&
			return 0
		sleep 0.2
	done
	echo "bench-front.sh: no walk answered through the front:" \
		"$(tail -n 3 "$FSA_DIR/ready.out")" >&2
	return 1
}

stop_all() {
	local p
	fsa_stop
	for p in ${TPID[A]} ${TPID[B]} ${TPID[R]}; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	FSA_BG_PIDS=
}

drv() { fsa_client 900 "$PY" "$HERE/bench_front.py" "$@"; }

# waited PHASE CMD...: run CMD, then print the share of its wall time the
# appliance spent waiting for core 0 (run-queue wait, /proc/PID/
# schedstat): another busy process on core 0 (a test's appliance) shows
# there, and a row measured while it is above a few % is disturbed.
waited() {
	local phase=$1 app w0 w1 t0 t1
	shift
	app=$(pgrep -P "$FSA_PID" | head -n 1)
	w0=$(awk '{ print $2 }' "/proc/$app/schedstat")
	t0=$(date +%s%N)
	"$@" | tee -a "$RES"
	w1=$(awk '{ print $2 }' "/proc/$app/schedstat")
	t1=$(date +%s%N)
	echo "RESULT waited=$phase hidden=$H share=$(( (w1 - w0) * 1000 / (t1 - t0) ))" |
		tee -a "$RES"
}

echo "# bench-front.sh $(date -u +%FT%TZ) rounds=$ROUNDS hiddens=\"$HIDDENS\" intermediate=$INTER layers=$NL"
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, ISA flags: $(grep -m1 '^flags' /proc/cpuinfo | grep -o -w -E 'avx2|avx512f|avx512bw|f16c' | tr '\n' ' ')kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "front: ffn-shard [front] on net_tap, lcore 0 (core 0${FSA_NICE:+, nice $FSA_NICE}); pyrefs A (0-16), B (17-33), R (0-33) and the client on core 1"
RES=$FSA_DIR/results
: >"$RES"
for H in $HIDDENS; do
	start_all
	FSA_STEP="measure hidden $H"
	echo "== hidden $H: $PY tools/bench/front/bench_front.py latency --front $FRONT --ref $R --single 3 --span 3,20 --k0 --rounds $ROUNDS --batch 200"
	waited latency drv latency --front "$FRONT" --ref "$R" --single 3 --span 3,20 \
		--k0 --rounds "$ROUNDS" --batch 200
	echo "== hidden $H: $PY tools/bench/front/bench_front.py throughput --front $FRONT --shards $A=0-16,$B=17-33 --conns 1,4,16 --seconds $SECS_B --rounds 2"
	waited throughput drv throughput --front "$FRONT" --shards "$A=0-16,$B=17-33" \
		--conns 1,4,16 --seconds "$SECS_B" --rounds 2
	echo "== hidden $H: $PY tools/bench/front/bench_front.py bytes --front $FRONT --ref $R --layer 3 --layers $NL"
	waited bytes drv bytes --front "$FRONT" --ref "$R" --layer 3 --layers $NL
	# the front's own view of its shard hops
	fsa_client 10 curl -s "http://$FRONT/metrics" |
		grep -E '^ffn_front_(shard_latency_seconds_(sum|count)|shard_errors_total|retries_total)' |
		sed 's/^/metrics: /' || true
	stop_all
done
FSA_STEP="report"

"$PY" - "$RES" <<'PY'
import re, sys
rows = [dict(kv.split("=", 1) for kv in l.split()[1:])
        for l in open(sys.argv[1]) if l.startswith("RESULT")]
lat = [r for r in rows if "shape" in r]
thr = [r for r in rows if "conns" in r]
byt = [r for r in rows if "path" in r]
wt = {(r["hidden"], r["waited"]): int(r["share"]) / 10.0
      for r in rows if "waited" in r}
def waited(h, phase):
    return "%.1f%%" % wt.get((h, phase), float("nan"))
names = {"single": "1 layer (3)", "span": "2 shards [3, 20]",
         "k0": "K=0 (front alone)"}
print()
print("(a) latency, f32, seq_len 1, one keep-alive connection "
      "(alternating batches of 200; us; > 1 ms: share of the front's)")
print()
print("| hidden | request | answer B | direct p50 | p99 | mean | front p50 "
      "| p99 | mean | > 1 ms | added p50 | added p99 | p50 ratio "
      "| front waited |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in lat:
    d50, d99, dm, f50, f99, fm = (float(r[k]) for k in
        ("direct_p50", "direct_p99", "direct_mean", "front_p50",
         "front_p99", "front_mean"))
    print("| %s | %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f "
          "| %s%% | %+.0f | %+.0f | %.2f | %s |" %
          (r["hidden"], names[r["shape"]], r["bytes"], d50, d99, dm, f50,
           f99, fm, r["front_over1ms"], f50 - d50, f99 - d99, f50 / d50,
           waited(r["hidden"], "latency")))
print()
print("(b) req/s, single-layer f32 requests alternating between A's and "
      "B's layers, closed loop (mean of 2 alternating rounds)")
print()
print("| hidden | connections | shards directly | through the front "
      "(1 network lcore) | front / direct | rounds (direct; front) "
      "| front waited |")
print("|---|---|---|---|---|---|---|")
for r in thr:
    d, f = float(r["direct_rps"]), float(r["front_rps"])
    print("| %s | %s | %.0f | %.0f | %.2f | %s; %s | %s |" %
          (r["hidden"], r["conns"], d, f, f / d, r["direct_all"],
           r["front_all"], waited(r["hidden"], "throughput")))
print()
print("(c) bytes per token: one single-layer seq_len 1 request per layer, "
      "answers' Content-Length as read")
print()
print("| hidden | layers | path | answer type | request body B | answer "
      "Content-Length B | answer HTTP head B | answers KiB/token "
      "| bodies (req + answer) KiB/token | answers vs router |")
print("|---|---|---|---|---|---|---|---|---|---|")
base = {}
for r in byt:
    if r["path"].startswith("router"):
        base[r["hidden"]] = int(r["content_length"])
for r in byt:
    n, cl, rq = int(r["layers"]), int(r["content_length"]), int(r["req_body"])
    print("| %s | %d | %s | %s | %d | %d | %s | %.1f | %.1f | %.3f |" %
          (r["hidden"], n, r["path"].replace("_", " "),
           r["ctype"].replace("application/", ""), rq, cl, r["head"],
           n * cl / 1024, n * (rq + cl) / 1024, cl / base[r["hidden"]]))
PY

cat <<EOF

Reading: (a) "direct" is the whole-model pyref R over the namespace's
loopback; "front" is the same request through the appliance, which
sends it (or its two halves, in parallel) to A and B over net_tap: the
added time is two net_tap round trips (client-front, front-shard: each
crossing is a system call on the appliance's side, no NIC), the
appliance's TCP stack both ways and the front's split and merge. K=0 is
the client-front leg alone. (b) Everything but the front runs on core 1
(the client, A and B): the direct figure is what the pyrefs and the
client make of that core, and through the front the same core also
carries the kernel's side of the extra tap traffic. The front's lcore is
not the bottleneck here and its per-lcore ceiling is not reached; the
ratio shows what the front costs the rest of the system at a load the
pyrefs set, not the front's capacity (that needs shards and a client
that are not Python, on cores of their own). (c) Through the reference
router every answer is f32 (it drops Accept, §7) and a request body is
f32 too (it rewrites Content-Type to the base type); the front answers
in the negotiated format and passes it to its shards. Per token: one
request per layer, the model's $NL layers in sequence. The "metrics:"
lines are the front's /metrics after each hidden size's run: mean hop
= sum / count (queueing at the pyrefs included); one "connect" error
per shard is the front trying them before they were started.
EOF
