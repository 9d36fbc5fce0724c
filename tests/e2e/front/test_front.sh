#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The fan-out front end to end (issue 19): one [front] unit of the
# appliance serves a whole 8-layer model at 198.18.8.1:8080 by splitting
# each walk-ffn request by layer owner over three pyref shards, and must
# answer as one pyref owning the whole model would (front_check.py does
# the checking; README.md has the table). Needs root.
#
#   test_front.sh BUILD_DIR [--self-test]
#
# Network 198.18.8.0/24 in a namespace fsa-front-e2e-PID (docs/
# DEVELOPING.md): the appliance on net_tap (lcore 0) at .1; the tap's
# kernel side holds .2 .3 .4 .5, where the shards listen (pyref, on
# core 1, as the clients):
#   A  layers 0-3  198.18.8.2:8081  LARQL_I8_WIRE (i8, f16, f32)
#   B  layers 0-3  198.18.8.3:8081  A's replica, no LARQL_I8_WIRE (f16, f32)
#   C  layers 4-7  198.18.8.4:8082  no i8, LARQL_F16_WIRE_DISABLE (f32 only)
#   R  all layers  198.18.8.5:8083  LARQL_I8_WIRE: the oracle, never behind
#                                   the front
# Why these switches: the front's i8 = on, so the shards disagree and the
# front must narrow: C's answers always come as f32 and the front's f16
# and i8 of them are exact (the same bytes as R's); B answers an i8 ask
# with f16, and the front's i8 of that may differ from R's by a step, so
# for layers 0-3 front_check.py also accepts exactly that form (i8 of the
# f16-decoded values) and counts how often it saw it.
#
# Steps (a failed check does not stop the next steps; the script exits 1
# at the end if any failed; a set-up failure stops it at once):
#   1 basic     GET /v1/health, /v1/stats through the front
#   2 formats   binary walk-ffn: f32/f16/i8 bodies x 4 Accepts x shapes
#               (single A, single C, batch within A, within C, spanning
#               [5,1,5,7,0], K=0) x seq_len 1, 3; /metrics narrowing
#   3 json      single shard (unchanged) and spanning (router merge)
#   4 errors    short body, layer out of range, 404, a shard's 4xx
#   4b concurrent  48 clients at once, some hanging up before their
#               answer: every answer right, nothing left in flight
#   5 takeover  SIGKILL A under load: B takes over (requests refused or
#               closed before an answer byte are retried: no 502 but at
#               most 3 for answers the kill cut, "mid-answer"), the
#               errors in /metrics; A restarted is used again
#   6 stall     C replaced by a server that never answers: 504 at
#               hop_timeout_ms, layers 0-3 still served
#   6b closing  C answers Connection: close each time: 24 clients at
#               once all right, the unread pipeline sent again without
#               a retry counted
#   7 bench     ffn-bench --assert-topk-match 1 through the front, its
#               f32 tokens those of the same run against R
#   8 auth      the front restarted with api_key = kfront and keys towards
#               the shards (A, B restarted with api_key ka: shard_key =
#               env:FRONT_SHARD_KEY; C with kc: shard_key 198.18.8.4:8082 =
#               file:kc.key, mode 0600): 401 without / with a wrong key,
#               health exempt, a batch over both ranges right with the key;
#               then the front again with "wrong" in kc.key: a walk that
#               needs C gets C's own 401 (front_check.py g_auth_shard says
#               why not a 502/503)
#
# --self-test runs everything against mock_front.py (a Python model of
# the front) on a veth pair instead of the appliance: it checks
# the harness itself, so that a failure of the real run is the front's.
# (FRONT_MOCK=FILE: another mock, e.g. one with a bug planted, to see the
# checks fail.)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
APP=$(cd "$HERE/../appliance" && pwd)
PYREF=$(cd "$HERE/../pyref" && pwd)
BUILD_ARG=${1:-build}
SELF=0
[ "${2:-}" = --self-test ] && SELF=1
FSA_PFX=fsa-front
FSA_NET=198.18.8
. "$APP/lib.sh"
PY=${PYTHON:-/usr/bin/python3}
[ "$(id -u)" = 0 ] || { echo "test_front.sh: needs root" >&2; exit 1; }
"$PY" -c 'import numpy' 2>/dev/null ||
	{ echo "test_front.sh: $PY has no numpy (use Debian's /usr/bin/python3)" >&2; exit 1; }
if [ $SELF = 1 ]; then
	FSA_BUILD=$(cd "$BUILD_ARG" && pwd)
	fsa_ns_init e2e
else
	fsa_init e2e "$BUILD_ARG"
fi
MKVINDEX=$FSA_BUILD/tools/mkvindex/mkvindex
BENCH=$FSA_BUILD/tools/client/ffn-bench
for x in "$MKVINDEX" "$BENCH"; do
	[ -x "$x" ] || { echo "test_front.sh: no $x (build first)" >&2; exit 1; }
done

FRONT_IP=$FSA_NET.1
A=$FSA_NET.2:8081
B=$FSA_NET.3:8081
C=$FSA_NET.4:8082
R=$FSA_NET.5:8083
FRONT=$FRONT_IP:8080
HOP_MS=1500
HEALTH_MS=300
declare -A TPID LOG

FAILS=
fail() { echo "FAIL [$FSA_STEP]: $*" >&2; exit 1; }
bad() { echo "FAIL [$FSA_STEP]: $*" >&2; FAILS="$FAILS|$FSA_STEP"; }
ok() { echo "ok   [$FSA_STEP] $*"; }

fsa_on_fail() {
	local t
	for t in "${!LOG[@]}"; do
		echo "--- $t: ${LOG[$t]} (last 15 lines)"
		tail -n 15 "${LOG[$t]}" 2>/dev/null || true
	done
}

# metrics_dump: the front's /metrics, for a failure's report.
FRONT_KEY=
metrics_dump() {
	echo "--- the front's /metrics:"
	fsa_client 10 curl -s ${FRONT_KEY:+-H "Authorization: Bearer $FRONT_KEY"} \
		"http://$FRONT/metrics" || echo "(no answer)"
}

# check GROUP ARGS...: one front_check.py group in the namespace on core 1.
check() {
	local g=$1
	shift
	FSA_STEP=$g
	echo "== $g"
	if fsa_client "${CHECK_T:-240}" "$PY" "$HERE/front_check.py" \
		--front "$FRONT" --ref "$R" --model "$M" --shard-a "$A" \
		--f16-layers 0-3 "$@" "$g"; then
		ok "front_check.py $g"
	else
		bad "front_check.py $g (see above)"
		return 1
	fi
}

# bg TAG CMD...: run CMD in the namespace on core 1 under timeout(1);
# $! (TPID[TAG]) is timeout's pid, TERM to it reaches CMD.
bg() {
	local tag=$1
	shift
	LOG[$tag]=$FSA_DIR/$tag.log
	ip netns exec "$FSA_NS" timeout 900 taskset -c 1 "$@" \
		>"${LOG[$tag]}" 2>&1 &
	TPID[$tag]=$!
	FSA_BG_PIDS="${FSA_BG_PIDS:-} $!"
}

# bg_stop TAG: TERM it, wait for it.
bg_stop() {
	kill -TERM "${TPID[$1]}" 2>/dev/null || true
	wait "${TPID[$1]}" 2>/dev/null || true
}

# pyref TAG ADDR:PORT LAYERS|"" [ENV=VALUE...]: a pyref shard; returns
# once it answers /v1/health. One BLAS thread: every pyref computes the
# same bytes for the same input.
pyref() {
	local tag=$1 hp=$2 layers=$3
	shift 3
	bg "$tag" env OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYREF_LOG=1 \
		"$@" "$PY" "$PYREF/server.py" --model "$M" \
		${layers:+--layers "$layers"} --host "${hp%:*}" \
		--port "${hp#*:}"
	for _ in $(seq 100); do
		fsa_client 5 curl -sf "http://$hp/v1/health" >/dev/null 2>&1 &&
			return 0
		kill -0 "${TPID[$tag]}" 2>/dev/null || break
		sleep 0.1
	done
	cat "${LOG[$tag]}" >&2
	fail "pyref $tag did not come up on $hp"
}

# pid_of TAG: the pid of the process timeout(1) runs for TAG (its only
# child: taskset and env exec it).
pid_of() {
	local p
	p=$(pgrep -P "${TPID[$1]}" | head -n 1)
	[ -n "$p" ] || fail "no child process of ${TPID[$1]} ($1)"
	echo "$p"
}

# front_conf FILE N [LINE...]: the front's config, EAL file prefix _N (a
# restart's own), each LINE added to its [front m] section.
front_conf() {
	local conf=$1 n=$2
	shift 2
	{
		cat <<EOF
# written by tests/e2e/front/test_front.sh
[eal]
args = -l 0 --no-pci --no-huge -m 512 --file-prefix ${FSA_NAME}_$n --vdev $(fsa_vdev)
[log]
level = notice
[port 0]
device = net_${FSA_PMD}0
address = $FRONT_IP/24
[front m]
listen = 8080
port = 0
net_lcores = 0
i8 = on
num_layers = 8
0-3 = $A | $B
4-7 = $C
hop_timeout_ms = $HOP_MS
health_interval_ms = $HEALTH_MS
EOF
		[ $# = 0 ] || printf '%s\n' "$@"
	} >"$conf"
}

# front_start CONF [ENV=VALUE...]: the appliance with CONF (ENV in its
# environment), its output added to shard.out; returns once its tap
# interface exists.
front_start() {
	local conf=$1
	shift
	timeout 20 env "$@" "$FSA_BIN" --check-static -c "$conf" ||
		fail "ffn-shard --check-static refuses $conf: $(cat "$conf")"
	FSA_STEP="front start"
	LOG[front]=$FSA_DIR/shard.out
	# $! must be timeout(1), so TERM reaches the appliance (fsa_stop;
	# env execs it).
	ip netns exec "$FSA_NS" timeout 900 env "$@" "$FSA_BIN" -c "$conf" \
		>>"$FSA_DIR/shard.out" 2>&1 &
	FSA_PID=$!
	for _ in $(seq 150); do
		fsa_in ip link show "$FSA_IF" >/dev/null 2>&1 && break
		kill -0 "$FSA_PID" 2>/dev/null || fail "the appliance exited"
		sleep 0.1
	done
	fsa_in ip link show "$FSA_IF" >/dev/null 2>&1 ||
		fail "no $FSA_IF after 15 s"
}

# mock_start [ENV=VALUE...] [-- ARG...]: --self-test's front, mock_front.py
# (ARGs added to its command line).
mock_start() {
	local env=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	[ $# = 0 ] || shift
	bg front env OPENBLAS_NUM_THREADS=1 PYTHONPATH="$HERE:$PYREF" \
		"${env[@]}" "$PY" "${FRONT_MOCK:-$HERE/mock_front.py}" \
		--listen "$FRONT" --num-layers 8 --i8 \
		--range "0-3=$A|$B" --range "4-7=$C" \
		--hop-timeout-ms $HOP_MS --health-interval-ms $HEALTH_MS "$@"
}

# ---- model, network, front ------------------------------------------------

FSA_STEP="model"
M=$FSA_DIR/model
"$MKVINDEX" --hidden 128 --intermediate 256 --layers 8 --family llama \
	--vocab 512 --seed 19 "$M" >/dev/null

if [ $SELF = 1 ]; then
	FSA_STEP="self-test: veth and mock_front.py"
	# (no dummy interfaces in every kernel: a veth pair, one end used)
	fsa_in ip link add "$FSA_IF" type veth peer name "${FSA_PFX}1"
	fsa_in ip link set "${FSA_PFX}1" up
	for h in 1 2 3 4 5; do
		fsa_in ip addr add "$FSA_NET.$h/24" dev "$FSA_IF"
	done
	fsa_in ip link set "$FSA_IF" up
	mock_start
else
	FSA_STEP="front config"
	CONF=$FSA_DIR/front.conf
	front_conf "$CONF" 1
	: >"$FSA_DIR/shard.out"
	front_start "$CONF"
fi

# The shards' addresses on the kernel side (the tap PMD may reset the
# interface while the port starts: added again until they stay), and
# the front answers ping.
net_up() {
	local h
	for _ in $(seq 50); do
		for h in 2 3 4 5; do
			fsa_in ip -4 addr show dev "$FSA_IF" |
				grep -q " $FSA_NET.$h/" ||
				fsa_in ip addr add "$FSA_NET.$h/24" dev "$FSA_IF" \
					2>/dev/null || true
		done
		fsa_in ip link set "$FSA_IF" up
		fsa_in ping -q -c 1 -W 1 "$FRONT_IP" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	fail "the front does not answer ping on $FRONT_IP"
}
FSA_STEP="network"
[ $SELF = 1 ] || net_up

FSA_STEP="shards"
pyref R "$R" "" LARQL_I8_WIRE=1
pyref A "$A" 0-3 LARQL_I8_WIRE=1
pyref B "$B" 0-3
pyref C "$C" 4-7 LARQL_F16_WIRE_DISABLE=1
[ $SELF = 1 ] || net_up

# front_ready: GET /v1/health (no key needed) answered 200 within 30 s.
front_ready() {
	FSA_STEP="front ready"
	for _ in $(seq 300); do
		fsa_client 5 curl -sf "http://$FRONT/v1/health" >/dev/null 2>&1 &&
			break
		[ -z "$FSA_PID" ] || kill -0 "$FSA_PID" 2>/dev/null ||
			fail "the appliance exited"
		sleep 0.1
	done
	fsa_client 5 curl -sf "http://$FRONT/v1/health" >/dev/null ||
		fail "GET /v1/health on $FRONT: no 200 within 30 s"
	ok "front health answered at ${SECONDS}s"
}
front_ready
# The front has found its shards: a layer of each range answered.
CHECK_T=60 check wait --layers 0,5 --seconds 20 || fail "no walk answered"

# ---- 1-4: answers -----------------------------------------------------------

check basic || true
check formats || true
check json || true
check errors || true
check concurrent --clients 48 --per 12 --hop-ms $HOP_MS || true

# ---- 5: replica takeover ----------------------------------------------------

FSA_STEP="takeover"
apid=$(pid_of A)
check takeover --kill-pid "$apid" --shard-label "$A" --n 300 \
	--kill-after 100 --max-502 3 || true
{ wait "${TPID[A]}"; } 2>/dev/null || true
kill -0 "$apid" 2>/dev/null && bad "shard A (pid $apid) still runs after SIGKILL"
FSA_STEP="takeover: restart A"
pyref A "$A" 0-3 LARQL_I8_WIRE=1
check reuse --seconds 6 || true

# ---- 6: a stalled shard -----------------------------------------------------

FSA_STEP="stall: C replaced"
bg_stop C
bg stall "$PY" -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(64)
print("stall: listening", flush=True)
held = []
while True:
    c, peer = s.accept()
    held.append(c)		# never read, never answered, never closed
    print("stall: accepted %s:%d" % peer, flush=True)
' "${C%:*}" "${C#*:}"
for _ in $(seq 50); do
	grep -q '^stall: listening' "${LOG[stall]}" && break
	sleep 0.1
done
grep -q '^stall: listening' "${LOG[stall]}" ||
	fail "the stall server did not start: $(cat "${LOG[stall]}")"
check stall --shard-label "$C" --hop-ms $HOP_MS --slack-ms 1500 || true
FSA_STEP="stall"
n=$(grep -c '^stall: accepted' "${LOG[stall]}" || true)
if [ "$n" -ge 1 ]; then
	ok "the stall server held $n connection(s) from the front"
else
	bad "the front never connected to the stalled shard $C"
fi
FSA_STEP="stall: C restored"
bg_stop stall
pyref C "$C" 4-7 LARQL_F16_WIRE_DISABLE=1
CHECK_T=60 check wait --layers 5,1 --seconds 15 || true

# ---- 6b: a shard that ends every connection after one answer -------------
# (Connection: close, as a proxy at its keep-alive limit): what the front
# pipelined behind that answer was never read, so it goes again on
# another connection, neither failed nor counted as a retry.

retries() {
	fsa_client 10 curl -s "http://$FRONT/metrics" |
		awk '/^ffn_front_retries_total/ { print $2 }'
}
FSA_STEP="closing: C restarted"
bg_stop C
pyref C "$C" 4-7 LARQL_F16_WIRE_DISABLE=1 PYREF_CLOSE=1
CHECK_T=60 check wait --layers 5,1 --seconds 15 || true
r0=$(retries)
check concurrent --clients 24 --per 8 --hop-ms $HOP_MS || true
FSA_STEP="closing"
r1=$(retries)
if [ -n "$r0" ] && [ "$r0" = "$r1" ]; then
	ok "answers pipelined behind a Connection: close went again," \
		"not as retries ($r0 before, $r1 after)"
else
	bad "ffn_front_retries_total moved from '$r0' to '$r1' with a" \
		"shard that closes after each answer"
fi
FSA_STEP="closing: C restored"
bg_stop C
pyref C "$C" 4-7 LARQL_F16_WIRE_DISABLE=1
CHECK_T=60 check wait --layers 5,1 --seconds 15 || true

# ---- 7: ffn-bench through the front ------------------------------------------

FSA_STEP="ffn-bench"
# ffn-bench's accuracy run (tools/bench/accuracy-appliance.sh): f32 the
# baseline, f16 and i8 teacher-forced on its tokens; --assert-topk-match 1
# exits 1 when a step's top-1 differs. With a bare URL the layers come
# from the front's /v1/stats.
bench() {
	fsa_client 300 "$BENCH" --ffn "$1" --model "$M" --steps 12 \
		--wire f32,f16,i8 --assert-topk-match 1 2>&1
}
rc=0
out=$(bench "http://$FRONT") || rc=$?
echo "$out" | sed 's/^/  | /'
rrc=0
ref=$(bench "0-7=http://$R") || rrc=$?
[ $rrc = 0 ] || { echo "$ref"; bad "ffn-bench against pyref R itself failed ($rrc): the premise"; }
if [ $rc = 0 ] && grep -q 'assert-topk-match 1: ok' <<<"$out"; then
	ok "ffn-bench through the front: exit 0, assert-topk-match 1: ok"
else
	bad "ffn-bench through the front: exit $rc, not \"assert-topk-match 1: ok\""
fi
if grep -q '^ffn-bench: 1 shard(s), 8 layers (0-7), hidden 128, vocab 512, REAL embeddings' <<<"$out"; then
	ok "ffn-bench read 8 layers, hidden 128 from the front's /v1/stats"
else
	bad "ffn-bench's first line: $(head -n 1 <<<"$out")"
fi
if grep -q 'server fell back' <<<"$out"; then
	bad "the front answered another format than asked (i8 = on, f16 on)"
else
	ok "every format answered as asked"
fi
t_front=$(sed -n 's/^tokens (f32): //p' <<<"$out")
t_ref=$(sed -n 's/^tokens (f32): //p' <<<"$ref")
if [ -n "$t_front" ] && [ "$t_front" = "$t_ref" ]; then
	ok "f32 tokens as against the whole-model pyref: $t_front"
else
	bad "f32 tokens through the front '$t_front', against pyref R '$t_ref'"
fi

# ---- 8: keys ----------------------------------------------------------------

# The front again, now with a key of its own and one towards each shard:
# A and B's from the environment, C's from a file (an override for C).
FRONT_KEY=kfront
KEY_FILE=$FSA_DIR/kc.key
# front_keyed N: stop the front, start it with the keys (EAL prefix _N).
front_keyed() {
	FSA_STEP="auth: the front with keys"
	if [ $SELF = 1 ]; then
		bg_stop front
		mock_start FRONT_SHARD_KEY=ka -- --api-key "$FRONT_KEY" \
			--shard-key env:FRONT_SHARD_KEY \
			--shard-key-for "$C=file:$KEY_FILE"
	else
		fsa_stop || bad "the appliance did not exit 0 after SIGTERM"
		FSA_STEP="auth: the front with keys"
		front_conf "$FSA_DIR/front-auth.conf" "$1" \
			"api_key = $FRONT_KEY" \
			"shard_key = env:FRONT_SHARD_KEY" \
			"shard_key $C = file:$KEY_FILE"
		front_start "$FSA_DIR/front-auth.conf" FRONT_SHARD_KEY=ka
		net_up
	fi
	front_ready
}
# up_again HOST:PORT...: shards still running answer /v1/health (their
# listening sockets outlive the tap's addresses, which net_up put back).
up_again() {
	local hp
	for hp in "$@"; do
		for _ in $(seq 50); do
			fsa_client 5 curl -sf "http://$hp/v1/health" \
				>/dev/null 2>&1 && continue 2
			sleep 0.1
		done
		fail "$hp does not answer /v1/health after the front's restart"
	done
}

FSA_STEP="auth: shards stopped"
t_auth=$SECONDS
# Stopped before the front: their connections close while it still runs.
bg_stop A
bg_stop B
bg_stop C
(umask 077 && printf 'kc\n' >"$KEY_FILE")
front_keyed 2
FSA_STEP="auth: shards with keys"
pyref A "$A" 0-3 LARQL_I8_WIRE=1 PYREF_API_KEY=ka
pyref B "$B" 0-3 PYREF_API_KEY=ka
pyref C "$C" 4-7 LARQL_F16_WIRE_DISABLE=1 PYREF_API_KEY=kc
up_again "$R"
CHECK_T=60 check wait --front-key "$FRONT_KEY" --layers 0,5 --seconds 20 ||
	true
check auth --front-key "$FRONT_KEY" --shard-label "$C" --key-a ka \
	--key-c kc || true

# C's key wrong (the file rewritten, still 0600): C refuses the front.
printf 'wrong\n' >"$KEY_FILE"
front_keyed 3
up_again "$R" "$A" "$B" "$C"
CHECK_T=60 check wait --front-key "$FRONT_KEY" --layers 0 --seconds 20 ||
	true
# (--timeout 8: C's 401 comes in milliseconds; a front that loses the
# call fails here without waiting 20 s)
check auth-shard --front-key "$FRONT_KEY" --shard-label "$C" \
	--wrong-key wrong --timeout 8 || true
FSA_STEP="auth"
ok "the keys step took $((SECONDS - t_auth)) s"

# ---- the end ----------------------------------------------------------------

if [ -n "$FAILS" ]; then
	metrics_dump || true
fi
FSA_STEP="stop"
if [ $SELF = 1 ]; then
	bg_stop front
else
	fsa_stop || bad "the appliance did not exit 0 after SIGTERM"
fi
FSA_STEP="the checks above"
if [ -n "$FAILS" ]; then
	echo "test_front.sh: FAILED in: ${FAILS#|}" >&2
	exit 1
fi
echo "test_front.sh: ok$([ $SELF = 0 ] || echo " (self-test: mock_front.py)")"
