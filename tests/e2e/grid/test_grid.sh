#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# ffn-shard joining LARQL routers' gRPC grid (spec/wire.md §9, issue 20),
# against grid_peer.py, a strict router peer that checks every message a
# unit sends (its "error" events fail the test through its exit status).
#
# One appliance with two [shard] units (a: layers 0-1 on :8080, b: 2-3 on
# :8081) on one net_tap port, each with a stream of its own; in (viii) a
# second appliance (issue 20: "two units on two appliances") on a tap of
# its own joins the same peer. The first appliance's network
# lcores share core 0 (EAL --lcores 0@0,1@0) so that core 1 stays free
# for the peer, the clients and the appliance's grid control thread.
# The peer listens on 0.0.0.0 in the namespace (it can start before the
# tap, and so 198.18.3.1, exists); the appliance reaches it over kernel
# sockets at 198.18.3.1.
#
# Run A (peer p1, then p2 on the same port; key from env:GRID_KEY;
# heartbeat 300 ms; unit a's public_url set, b's the default):
#  (i)   join: both units announce model_id (the last segment of
#        index.json's "model"), range, listen_url and vindex_hash as the
#        peer expects, get an Ack, log "joined as SERVER_ID"; /metrics
#        shows them connected with that server_id;
#  (ii)  heartbeats every 300 ms (the peer checks every gap); before any
#        walk layer_stats is empty; after binary and JSON walks, computed
#        on the unit's own network lcore and on the other unit's (the tap
#        spreads connections over both queues), it lists exactly the
#        walked layers, avg_ms > 0, p99_ms finite >= 0;
#  (vi)  the peer restarted: both units join again ("joined as" twice);
#  (iv)  unassign during a long walk: heartbeats show it in flight, the
#        walk is answered 200 in full, the "dropping" (reassigned) reaches
#        the peer after the client got the whole answer;
#  (viii) a second appliance (its own tap, 198.18.7.0/24) joins the same
#        peer while the first's unit b is joined, heartbeats, and leaves
#        on SIGTERM with Dropping shutdown while its listener accepts;
#  (v)   SIGTERM: every joined unit's "dropping" (shutdown) reaches the
#        peer while the HTTP listener still accepts (the peer connects
#        to it as it reads the Dropping); then the listener closes
#        (a client connecting every millisecond finds when); exit 0.
# A failed check does not stop the scenarios after it (bad); the script
# exits 1 at the end if any failed.
# Run B:
#  (iii) unit a with a wrong key (file:PATH): "stream ended:
#        UNAUTHENTICATED" twice or more with a growing retry, health
#        still answered;
#  (vii) unit b's router down at start (a literal key): health and
#        walks answered; once a peer comes up there, b joins it.
#
#   test_grid.sh BUILD_DIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
APP=$(cd "$HERE/../appliance" && pwd)
. "$APP/lib.sh"
fsa_init grid "${1:-build}"

# The peer needs grpcio and grpc_tools: Debian's python3 (python3-grpcio,
# python3-grpc-tools), whatever PYTHON (lib.sh's FSA_PY: the clients) is.
GRID_PY=${GRID_PY:-/usr/bin/python3}
KEY="grid-key-$$-Zq7"
R1=http://$FSA_PEER:50052
R2=http://$FSA_PEER:50053
URL_A=http://$FSA_IP:8080
URL_B=http://$FSA_IP:8081
HB_MS=300
MODEL_ID=demo-model
declare -A PEER_PID PEER_EV PEER_CTL PEER_OUT

fsa_on_fail() {
	local t
	for t in "${!PEER_EV[@]}"; do
		echo "--- peer $t: output (last 30 lines)"
		tail -n 30 "${PEER_OUT[$t]}" 2>/dev/null || true
		echo "--- peer $t: events (last 30)"
		tail -n 30 "${PEER_EV[$t]}" 2>/dev/null || true
	done
	echo "--- the appliance's grid lines"
	grep ' grid ' "$FSA_DIR/shard.out" 2>/dev/null | tail -n 40 || true
}

# fail: the run cannot go on. bad: a check failed, the next ones run
# (the script exits 1 at the end).
fail() { echo "FAIL [$FSA_STEP]: $*" >&2; exit 1; }
FAILS=0
bad() { echo "FAIL [$FSA_STEP]: $*" >&2; FAILS=$((FAILS + 1)); }
ok() { echo "ok   [$FSA_STEP] $*"; }

# ---- the peer ------------------------------------------------------------

# peer_start TAG PORT ARGS...: grid_peer.py in the namespace on core 1,
# listening on 0.0.0.0:PORT, events in PEER_EV[TAG], control directory
# PEER_CTL[TAG]; returns once it is bound.
peer_start() {
	local tag=$1 port=$2 i
	shift 2
	PEER_EV[$tag]=$FSA_DIR/peer-$tag.jsonl
	PEER_CTL[$tag]=$FSA_DIR/ctl-$tag
	PEER_OUT[$tag]=$FSA_DIR/peer-$tag.out
	mkdir -p "${PEER_CTL[$tag]}"
	: >"${PEER_EV[$tag]}"
	# Not through fsa_in: $! must be timeout(1), so TERM reaches the
	# peer and wait gives its exit status.
	ip netns exec "$FSA_NS" timeout 600 taskset -c 1 "$GRID_PY" \
		"$HERE/grid_peer.py" \
		--listen "0.0.0.0:$port" --events "${PEER_EV[$tag]}" \
		--control "${PEER_CTL[$tag]}" "$@" >"${PEER_OUT[$tag]}" 2>&1 &
	PEER_PID[$tag]=$!
	FSA_BG_PIDS="${FSA_BG_PIDS:-} $!"
	for i in $(seq 100); do
		grep -q '^grid_peer: listening on ' "${PEER_OUT[$tag]}" &&
			return 0
		kill -0 "${PEER_PID[$tag]}" 2>/dev/null || break
		sleep 0.1
	done
	cat "${PEER_OUT[$tag]}" >&2
	fail "peer $tag did not start on port $port"
}

# peer_stop TAG: SIGTERM; the peer must exit 0 (no error event: every
# message it got followed §9).
peer_stop() {
	local tag=$1 rc=0
	kill -TERM "${PEER_PID[$tag]}" 2>/dev/null || true
	wait "${PEER_PID[$tag]}" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "peer $tag's error events:" >&2
		grep '"ev": "error"' "${PEER_EV[$tag]}" >&2 || true
		echo "peer $tag's output (last 20 lines):" >&2
		tail -n 20 "${PEER_OUT[$tag]}" >&2 || true
		bad "peer $tag exited $rc: the appliance broke §9 (errors above)"
	else
		ok "peer $tag: no error event, exit 0"
	fi
}

# ev TAG EXPR: EXPR (Python, over E: the peer's events as dicts, and the
# helpers below) is true; prints its value.
EVPY='
import json, statistics, sys
E = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def of(ev, url=None, **kw):
    return [e for e in E if e["ev"] == ev and (url is None or
            e.get("url") == url) and all(e.get(k) == v for k, v in kw.items())]
def sid_of(url, n=0):
    a = of("ack", url)
    return a[n]["sid"] if len(a) > n else None
v = eval("(" + sys.argv[2] + ")")
print(json.dumps(v) if not isinstance(v, str) else v)
sys.exit(0 if v else 1)
'
ev() { "$FSA_PY" -c "$EVPY" "${PEER_EV[$1]}" "$2"; }

# ev_wait SECONDS TAG EXPR: poll ev every 0.1 s.
ev_wait() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt "$end" ]; do
		ev "$2" "$3" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	ev "$2" "$3" || true
	return 1
}

# ---- the appliance's side -------------------------------------------------

# log_wait SECONDS REGEX [COUNT]: COUNT (1) lines of shard.out match.
log_wait() {
	local end=$((SECONDS + $1)) n=${3:-1}
	while [ $SECONDS -lt "$end" ]; do
		[ "$(grep -cE "$2" "$FSA_DIR/shard.out" || true)" -ge "$n" ] &&
			return 0
		sleep 0.1
	done
	return 1
}

# metric PORT SERIES_REGEX: the value of the one /metrics sample whose
# name and labels match (a whole-line regex up to the value).
metric() {
	local out
	out=$(fsa_client 20 curl -sf "http://$FSA_IP:$1/metrics") ||
		fail "GET /metrics on :$1 failed"
	grep -E "^$2 " <<<"$out" | awk '{ print $2 }'
}

# The walk client: one POST /v1/walk-ffn (binary or JSON), timed with
# wall clocks (compared with the peer's events), checked against pyref
# when asked. Prints one JSON line; exits 0 on a 200 with a whole,
# decodable answer (and, with --verify, a right one).
cat >"$FSA_DIR/walk.py" <<'EOF'
import argparse, json, os, sys, time
import numpy as np
sys.path.insert(0, os.environ["FSA_APP"])
import fsa
from fsa import Http, wire
ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--layers", required=True)
ap.add_argument("--seq", type=int, default=1)
ap.add_argument("--json", action="store_true")
ap.add_argument("--accept", default="f32")
ap.add_argument("--model", required=True)
ap.add_argument("--verify", action="store_true")
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--out")
ap.add_argument("--lcore", type=int)
A = ap.parse_args()
layers = [int(x) for x in A.layers.split(",")]
hidden = json.load(open(os.path.join(A.model, "index.json")))["hidden_size"]
x = np.random.default_rng(A.seed).standard_normal(
    (A.seq, hidden)).astype(np.float32)
if A.json:
    body = json.dumps({"layers": layers, "residual": x.ravel().tolist(),
                       "seq_len": A.seq, "full_output": True}).encode()
    hdrs = [("Content-Type", "application/json")]
else:
    body, ct = wire.encode_request(layers, x, "f32",
                                   batch=len(layers) != 1)
    hdrs = [("Content-Type", ct), ("Accept", wire.ACCEPT[A.accept])]
host = os.environ.get("FSA_IP", "198.18.3.2")


def lcore_of(c):
    """The network lcore serving connection c: GET /metrics on c itself
    while no other connection is established; None if that is unclear."""
    r = c.request("GET", "/metrics")
    est = {}
    for ln in r.body.decode().splitlines():
        if ln.startswith("ffn_tcp_connections{") and \
                'state="ESTABLISHED"' in ln:
            lc = int(ln.split('lcore="')[1].split('"')[0])
            est[lc] = est.get(lc, 0) + int(ln.split()[-1])
    mine = [lc for lc, n in est.items() if n]
    return mine[0] if len(mine) == 1 and est[mine[0]] == 1 else None


if A.lcore is None:
    c = Http(host, A.port, timeout=120)
    lcore = None
else:
    # The kernel side of the tap spreads flows over the port's queues:
    # new connections until one lands on the wanted lcore.
    for _ in range(60):
        c = Http(host, A.port, timeout=120)
        lcore = lcore_of(c)
        if lcore == A.lcore:
            break
        c.close()
        time.sleep(0.05)
    else:
        print(json.dumps({"ok": False, "detail": "no connection on lcore "
                          "%d in 60 tries" % A.lcore}))
        sys.exit(2)
t0 = time.time()
c.send(fsa.build("POST", "/v1/walk-ffn", body, hdrs))
t_sent = time.time()
if A.out:
    with open(A.out + ".sent", "w") as f:
        f.write("%.6f\n" % t_sent)
r = c.read_response()
t_done = time.time()
res = {"status": r.status, "t_start": t0, "t_sent": t_sent,
       "t_done": t_done, "ms": round((t_done - t0) * 1000, 1),
       "bytes": len(r.body), "lcore": lcore, "ok": False, "detail": ""}
try:
    if r.status != 200:
        raise ValueError("status %d: %r" % (r.status, r.body[:200]))
    if A.json:
        j = json.loads(r.body)
        rs = j["results"] if "results" in j else [j]
        got = [(e["layer"], np.asarray(e["output"], np.float32).reshape(
            A.seq, hidden)) for e in rs]
    else:
        _, rs = wire.decode_response(r.body, r.header("content-type"),
                                     hidden)
        got = [(ly, np.asarray(y, np.float32).reshape(A.seq, hidden))
               for ly, _, y in rs]
    if [g[0] for g in got] != layers:
        raise ValueError("layers %s, asked %s" % ([g[0] for g in got],
                                                   layers))
    for ly, y in got:
        if not np.all(np.isfinite(y)):
            raise ValueError("layer %d: non-finite values" % ly)
    if A.verify:
        O = fsa.Oracle(A.model, (min(layers), max(layers)))
        for ly, y in got:
            good, why = O.close(y, ly, x)
            if not good:
                raise ValueError(why)
    res["ok"] = True
except Exception as e:
    res["detail"] = str(e)
line = json.dumps(res)
if A.out:
    with open(A.out, "w") as f:
        f.write(line + "\n")
print(line)
sys.exit(0 if res["ok"] else 1)
EOF

# walk PORT ARGS...: walk.py in the namespace on core 1.
walk() {
	local port=$1
	shift
	fsa_client 180 env FSA_APP="$APP" FSA_IP="$FSA_IP" "$FSA_PY" \
		"$FSA_DIR/walk.py" --port "$port" --model "$m" "$@"
}

health() {
	fsa_client 10 curl -sf "http://$FSA_IP:$1/v1/health"
}

# grid_lines SECTION ROUTER TEXT: the appliance's grid log lines
# "ffn-shard: [SECTION] grid ROUTER: TEXT..." (TEXT: an ERE).
grid_re() { printf '^ffn-shard: \\[%s\\] grid %s: %s' "$1" "$2" "$3"; }

# conf FILE A_KEYS B_KEYS: two units, a (0-1, :8080, net lcore 0) and b
# (2-3, :8081, net lcore 1), both lcores on core 0. A_KEYS / B_KEYS:
# "key=value" lines of each section.
conf() {
	local f=$1 a=$2 b=$3 kv
	fsa_conf "$f" "$m" 0-1 eal_lcores=0@0,1@0
	# Two queues' mbuf pools need more than fsa_conf's 512 MB.
	sed -i -e 's/^\[shard e2e\]$/[shard a]/' \
		-e '/^args = /s/ -m 512 / -m 1024 /' "$f"
	grep -q '^\[shard a\]$' "$f" || fail "fsa_conf's section name changed"
	grep -q '^args = .* -m 1024 ' "$f" || fail "fsa_conf's -m changed"
	while read -r kv; do
		[ -n "$kv" ] && echo "${kv%%=*} = ${kv#*=}"
	done <<<"$a" >>"$f"
	{
		echo "[shard b]"
		echo "model = $m"
		echo "layers = 2-3"
		echo "listen = 8081"
		echo "net_lcores = 1"
		while read -r kv; do
			[ -n "$kv" ] && echo "${kv%%=*} = ${kv#*=}"
		done <<<"$b"
	} >>"$f"
	GRID_KEY=$KEY timeout 20 "$FSA_BIN" --check-static -c "$f" ||
		fail "--check-static refuses $f"
}

start() {
	fsa_start "$@"
	log_wait 30 '^ffn-shard: \[shard b\] serving' ||
		fail "unit b does not say it is serving"
	log_wait 30 '^ffn-shard: \[shard a\] serving' ||
		fail "unit a does not say it is serving"
}

# ---- the model --------------------------------------------------------------

# mkvindex's model; index.json's "model" becomes "test-org/demo-model"
# so that §9.1's model_id is its last '/'-separated segment, demo-model,
# whose vindex_hash with 4 layers is §9's own check (01c0e4262a2daa31).
# An intermediate of 8192 and i8 answers make the long walk of (iv)
# compute-bound: about 24 kFLOP per byte of answer, so the answer's
# transfer is short beside the compute and the unassign lands in it.
FSA_STEP="model"
m=$FSA_DIR/m
"$FSA_BUILD/tools/mkvindex/mkvindex" --hidden 256 --intermediate 8192 \
	--layers 4 --family llama "$m" >/dev/null
"$FSA_PY" - "$m/index.json" <<'EOF'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["model"] = "test-org/demo-model"
json.dump(d, open(p, "w"), indent=2)
EOF
EXP_A="model=$MODEL_ID,layers=0-1,url=$URL_A,num_layers=4"
EXP_B="model=$MODEL_ID,layers=2-3,url=$URL_B,num_layers=4"
# (viii)'s second appliance: the whole model, on a tap of its own.
URL_C=http://198.18.7.2:8080
EXP_C="model=$MODEL_ID,layers=0-3,url=$URL_C,num_layers=4"
PEER_ARGS=(--key "$KEY" --expect "$EXP_A" --expect "$EXP_B" --expect "$EXP_C"
	--heartbeat-ms "$HB_MS" --probe-on-shutdown)

# ===== run A ===============================================================

FSA_STEP="run A: start"
peer_start p1 50052 "${PEER_ARGS[@]}"
conf "$FSA_DIR/a.conf" "join=$R1
public_url=$URL_A
i8=on
grid_key=env:GRID_KEY
grid_heartbeat_ms=$HB_MS" "join=$R1
grid_key=env:GRID_KEY
grid_heartbeat_ms=$HB_MS"
start "$FSA_DIR/a.conf" GRID_KEY="$KEY"

# (i) ---------------------------------------------------------------------
FSA_STEP="(i) join"
ev_wait 20 p1 "sid_of('$URL_A') and sid_of('$URL_B')" >/dev/null ||
	fail "the units did not both announce and get an Ack within 20 s"
# The peer checked every field against --expect (an "error" event
# otherwise, seen at peer_stop); this says what it got, field by field.
for u in a b; do
	if [ $u = a ]; then url=$URL_A lo=0 hi=1; else url=$URL_B lo=2 hi=3; fi
	if ev p1 "[(x['model_id'], x['layer_start'], x['layer_end'],
	    x['vindex_hash']) for x in of('announce', '$url')][0] ==
	    ('$MODEL_ID', $lo, $hi, '01c0e4262a2daa31')" >/dev/null; then
		ok "unit $u announced $MODEL_ID $lo-$hi at $url, vindex_hash 01c0e4262a2daa31"
	else
		bad "unit $u's announce: $(ev p1 "of('announce', '$url')")"
	fi
	sid=$(ev p1 "of('ack', '$url')[0]['server_id']")
	if log_wait 10 "$(grid_re "shard $u" "$R1" "joined as $sid\$")"; then
		ok "log: [shard $u] grid $R1: joined as $sid"
	else
		bad "no \"[shard $u] grid $R1: joined as $sid\" in the log"
	fi
done
ev p1 "not of('error')" >/dev/null ||
	bad "the peer found errors in the join: $(ev p1 "of('error')")"
for u in a b; do
	if [ $u = a ]; then port=8080 url=$URL_A; else port=8081 url=$URL_B; fi
	sid=$(ev p1 "of('ack', '$url')[0]['server_id']")
	lab="\\{shard=\"$u\",router=\"$R1\"\\}"
	v=$(metric $port "ffn_grid_connected$lab")
	[ "$v" = 1 ] || bad "ffn_grid_connected{shard=\"$u\"} is '$v', not 1"
	v=$(metric $port "ffn_grid_server_info\\{shard=\"$u\",router=\"$R1\",server_id=\"$sid\"\\}")
	[ "$v" = 1 ] ||
		bad "no ffn_grid_server_info{shard=\"$u\",...,server_id=\"$sid\"} 1"
	v=$(metric $port "ffn_grid_last_ack_timestamp_seconds$lab")
	"$FSA_PY" -c "import sys,time; sys.exit(abs(float('${v:-0}') - time.time()) > 120)" ||
		bad "ffn_grid_last_ack_timestamp_seconds{shard=\"$u\"} '$v' is not now"
	ok "/metrics :$port: unit $u connected, server_id $sid, last ack $v"
done

# (ii) --------------------------------------------------------------------
FSA_STEP="(ii) heartbeats"
# Three heartbeats on each stream before any walk: none may list a layer
# (§9.3: "one entry per layer served so far").
ev_wait 10 p1 "len(of('heartbeat', '$URL_A')) >= 3 and
    len(of('heartbeat', '$URL_B')) >= 3" >/dev/null ||
	fail "fewer than 3 heartbeats per unit within 10 s at ${HB_MS} ms"
if ev p1 "all(h['layer_stats'] == [] for h in of('heartbeat'))" >/dev/null
then
	ok "3+ heartbeats per unit before any walk, layer_stats empty"
else
	bad "layer_stats before any walk: $(ev p1 "[h['layer_stats'] for h in of('heartbeat')]")"
fi
# The kernel side of the tap spreads connections over the port's two
# queues whatever their destination port, so a unit's request may be
# computed by the other unit's network lcore: --lcore picks the
# connection's lcore (walk.py), so that both cases are covered each run.
# Unit a: layer 0 on its own lcore 0 (binary f32 and JSON, checked
# against pyref; a batch 0,0 in f16) and layer 1 on lcore 1; unit b:
# layer 3 only, on lcore 0. Each heartbeat after must list exactly
# a: 0, 1 and b: 3.
# WALK_MS[PORT]: the client-side times of the walks on that port (ms,
# spaces between): no layer's compute can take longer than the whole
# request did.
declare -A WALK_MS
w() {
	local what=$1 r
	shift
	if r=$(walk "$@"); then
		WALK_MS[$1]="${WALK_MS[$1]:-} $("$FSA_PY" -c "import json, sys; print(json.loads(sys.argv[1])['ms'])" "$r")"
		ok "walk $what: $(sed 's/"t_[a-z]*": [0-9.]*, //g' <<<"$r")"
	else
		bad "walk $what failed: $r"
	fi
}
w "unit a, layer 0, lcore 0" 8080 --layers 0 --seq 3 --verify --lcore 0
w "unit a, layer 0, JSON" 8080 --layers 0 --json --verify --seed 2
w "unit a, layers 0,0, f16" 8080 --layers 0,0 --seq 2 --accept f16 --seed 3
w "unit a, layer 1, lcore 1" 8080 --layers 1 --seq 2 --verify --lcore 1
w "unit b, layer 3, lcore 0" 8081 --layers 3 --seq 2 --verify --lcore 0
t_walked=$("$FSA_PY" -c 'import time; print(time.time())')
for u in a b; do
	if [ $u = a ]; then url=$URL_A want='[0, 1]'; else url=$URL_B want='[3]'; fi
	expr="[h for h in of('heartbeat', '$url') if h['wall'] > $t_walked + 0.01]"
	ev_wait 5 p1 "len($expr) >= 2" >/dev/null ||
		fail "unit $u: fewer than 2 heartbeats within 5 s after the walks"
	if ev p1 "all([s[0] for s in h['layer_stats']] == $want for h in $expr)" \
		>/dev/null; then
		ok "unit $u: layer_stats $(ev p1 "${expr}[-1]['layer_stats']")"
	else
		bad "unit $u: layer_stats after the walks are $(ev p1 "[h['layer_stats'] for h in $expr]"), want layers $want"
	fi
	ev p1 "all(s[1] > 0 and s[2] == s[2] and 0 <= s[2] < float('inf')
	    for h in $expr for s in h['layer_stats'])" >/dev/null ||
		bad "unit $u: avg_ms > 0 and finite p99_ms >= 0 expected: $(ev p1 "[h['layer_stats'] for h in $expr]")"
	# They match the walks: with fewer than 100 samples p99_ms is the
	# slowest one, and the EMA lies between the samples, so avg_ms <=
	# p99_ms; and no layer took longer than its whole request did on
	# the client's clock.
	port=8080; [ $u = a ] || port=8081
	# (+0.05: walk.py rounds its ms to 0.1)
	slowest=$("$FSA_PY" -c "import sys; print(round(max(float(x) for x in sys.argv[1].split()) + 0.05, 2))" "${WALK_MS[$port]}")
	if ev p1 "all(s[1] <= s[2] * 1.0001 and s[2] <= $slowest
	    for h in $expr for s in h['layer_stats'])" >/dev/null; then
		ok "unit $u: each layer's avg_ms <= p99_ms <= the slowest walk, $slowest ms"
	else
		bad "unit $u: layer_stats do not match the walks (slowest $slowest ms): $(ev p1 "${expr}[-1]['layer_stats']")"
	fi
	ev p1 "all(h['requests_in_flight'] == 0 for h in $expr)" >/dev/null ||
		bad "unit $u: requests_in_flight not 0 when idle: $(ev p1 "[h['requests_in_flight'] for h in $expr]")"
	# The interval: the peer checks each gap (0.5-2x + 1 s); here the
	# median must be the configured 300 ms within 100 ms.
	if ev p1 "abs(statistics.median(h['gap_ms'] for h in
	    of('heartbeat', '$url') if not h['first']) - $HB_MS) <= 100" \
		>/dev/null; then
		ok "unit $u: heartbeat gaps (ms) $(ev p1 "[round(h['gap_ms']) for h in of('heartbeat', '$url')][:12]")"
	else
		bad "unit $u: the median heartbeat gap is not ${HB_MS}+-100 ms: $(ev p1 "[h['gap_ms'] for h in of('heartbeat', '$url')]")"
	fi
	port=8080; [ $u = a ] || port=8081
	n=$(metric $port "ffn_grid_heartbeats_sent_total\\{shard=\"$u\",router=\"$R1\"\\}")
	have=$(ev p1 "len(of('heartbeat', '$url'))")
	if [ "${n:-0}" -ge "$((have - 1))" ]; then
		ok "unit $u: ffn_grid_heartbeats_sent_total $n (peer got $have)"
	else
		bad "unit $u: ffn_grid_heartbeats_sent_total '$n' < $have received"
	fi
done

# (vi) --------------------------------------------------------------------
FSA_STEP="(vi) peer restart"
# The restarted peer rejects unit b's first announce (§9 step 2: log the
# reason, close, retry with backoff); b must join at its next attempt.
mkdir -p "$FSA_DIR/ctl-p2"
printf '%s\nreason=%s\n' "$URL_B" "full for the test" \
	>"$FSA_DIR/ctl-p2/reject"
peer_stop p1
peer_start p2 50052 "${PEER_ARGS[@]}"
ev_wait 30 p2 "sid_of('$URL_A') and sid_of('$URL_B')" >/dev/null ||
	fail "the units did not both join the restarted peer within 30 s"
for u in a b; do
	if log_wait 10 "$(grid_re "shard $u" "$R1" "joined as srv-")" 2; then
		ok "unit $u joined again: $(grep -E "$(grid_re "shard $u" "$R1" "")" \
			"$FSA_DIR/shard.out" | tail -n 3 | sed 's/^ffn-shard: //' |
			tr '\n' '|')"
	else
		bad "unit $u: \"joined as\" not twice in the log"
	fi
done
re_rej=$(grid_re "shard b" "$R1" "rejected: full for the test; retry in [0-9]+ s\$")
# ... after the delay its log line names (§9.5's backoff), not later.
rej_s=$(grep -E "$re_rej" "$FSA_DIR/shard.out" | head -n 1 |
	sed -E 's/.*retry in ([0-9]+) s$/\1/')
if [ -n "$rej_s" ] &&
	ev p2 "len(of('reject', '$URL_B')) == 1 and len(of('announce', '$URL_B')) == 2 and len(of('ack', '$URL_B')) == 1 and $rej_s - 0.1 <= of('announce', '$URL_B')[1]['t'] - of('reject', '$URL_B')[0]['t'] <= $rej_s + 1.0" >/dev/null
then
	ok "unit b rejected once, then joined $(ev p2 "round(of('announce', '$URL_B')[1]['t'] - of('reject', '$URL_B')[0]['t'], 2)") s later: $(grep -E "$re_rej" \
		"$FSA_DIR/shard.out" | sed 's/^ffn-shard: //')"
else
	bad "reject: log '$(grep -E "$(grid_re "shard b" "$R1" "")" \
		"$FSA_DIR/shard.out" | tr '\n' '|')', peer $(ev p2 \
		"[(x['ev'], x.get('url'), round(x['t'], 2)) for x in E if x['ev'] in ('announce', 'reject', 'ack')]")"
fi
v=$(metric 8080 "ffn_grid_reconnects_total\\{shard=\"a\",router=\"$R1\"\\}")
if [ "${v:-0}" -ge 1 ]; then
	ok "ffn_grid_reconnects_total{shard=\"a\"} $v"
else
	bad "ffn_grid_reconnects_total{shard=\"a\"} is '$v' after a reconnect"
fi

# (iv) --------------------------------------------------------------------
FSA_STEP="(iv) unassign during a long walk"
# Size the walk to take about 3 s here: time one of 256 rows first (on
# unit a's own lcore, as the long one).
cal=$(walk 8080 --layers 0,1 --seq 256 --accept i8 --seed 4 --lcore 0) ||
	fail "calibration walk failed: $cal"
seq_long=$("$FSA_PY" -c "
import json, math
ms = json.loads('''$cal''')['ms']
print(max(256, min(16384, int(math.ceil(256 * 3000.0 / max(ms, 1.0))))))")
ok "256 rows took $("$FSA_PY" -c "import json; print(json.loads('''$cal''')['ms'])") ms: the long walk is $seq_long rows of layers 0,1"
rm -f "$FSA_DIR/long.json" "$FSA_DIR/long.json.sent"
walk 8080 --layers 0,1 --seq "$seq_long" --accept i8 --seed 5 --lcore 0 \
	--out "$FSA_DIR/long.json" >/dev/null 2>&1 &
walk_pid=$!
for i in $(seq 200); do
	[ -s "$FSA_DIR/long.json.sent" ] && break
	sleep 0.05
done
[ -s "$FSA_DIR/long.json.sent" ] || fail "the long walk was not sent"
t_sent=$(cat "$FSA_DIR/long.json.sent")
# 0.8 s into a walk of about 3 s: heartbeats (every 0.3 s) have counted
# it in flight, and plenty of it is left.
sleep 0.8
printf '%s\n' "$URL_A" >"${PEER_CTL[p2]}/unassign"
rc=0
wait "$walk_pid" || rc=$?
[ -s "$FSA_DIR/long.json" ] || fail "the long walk gave no result"
long=$(cat "$FSA_DIR/long.json")
[ "$rc" -eq 0 ] || fail "the long walk failed: $long"
t_done=$("$FSA_PY" -c "import json; print(json.loads('''$long''')['t_done'])")
ok "the long walk: $long"
ev_wait 35 p2 "of('dropping', '$URL_A')" >/dev/null ||
	fail "no DroppingMsg from unit a within 35 s of the unassign"
ev p2 "of('unassign_sent', '$URL_A')[0]['wall'] < $t_done" >/dev/null ||
	fail "the walk ended before the unassign was sent: no test (sizing)"
ok "UnassignMsg sent $(ev p2 "round($t_done - of('unassign_sent', '$URL_A')[0]['wall'], 3)") s before the walk's answer was in"
if ev p2 "of('dropping', '$URL_A')[0]['reason'] == 'reassigned'" >/dev/null
then
	ok "unit a's dropping: reason reassigned"
else
	bad "unit a's dropping: $(ev p2 "of('dropping', '$URL_A')")"
fi
if ev p2 "any(h['requests_in_flight'] >= 1 for h in of('heartbeat', '$URL_A')
    if $t_sent < h['wall'] < $t_done)" >/dev/null; then
	ok "heartbeats during the walk counted it in flight"
else
	bad "no heartbeat of unit a counted the long walk in flight: $(ev p2 "[(round(h['wall'] - $t_done, 3), h['requests_in_flight']) for h in of('heartbeat', '$URL_A')]")"
fi
d=$(ev p2 "round(of('dropping', '$URL_A')[0]['wall'] - $t_done, 4)")
if ev p2 "of('dropping', '$URL_A')[0]['wall'] >= $t_done" >/dev/null; then
	ok "dropping (reassigned) reached the peer $d s after the walk's answer"
else
	bad "unit a's dropping reached the peer ${d#-} s BEFORE the client had the walk's answer"
fi
ev_wait 6 p2 "[x for x in of('stream_end', '$URL_A')
    if x['how'] == 'client closed']" >/dev/null ||
	bad "unit a did not close its stream after the dropping"
log_wait 5 "$(grid_re "shard a" "$R1" "unassigned \\(rebalance\\): waiting for [1-9][0-9]* requests in flight")" ||
	bad "no \"unassigned (rebalance): waiting for N>=1 requests in flight\" line"
log_wait 5 "$(grid_re "shard a" "$R1" "dropping \\(reassigned\\) sent")" ||
	bad "no \"dropping (reassigned) sent\" line"
ok "log: $(grep -E "$(grid_re "shard a" "$R1" "(unassigned|dropping)")" \
	"$FSA_DIR/shard.out" | sed 's/^ffn-shard: //' | tr '\n' '|')"
# What the unit does next is not §9's to say beyond step 5 (reconnect
# after a closed stream); shown, not checked.
sleep 2
echo "     after the unassign, unit a at the peer: $(ev p2 "[(x['ev'], round(x['wall'] - $t_done, 2)) for x in E if x.get('url') == '$URL_A' and x['ev'] in ('announce', 'ack', 'dropping', 'stream_end')]" || true)"

# (viii) ------------------------------------------------------------------
# A second appliance (issue 20: "two units on two appliances join the
# peer"): its own EAL instance and tap (fsa1, 198.18.7.0/24, kernel side
# .1), one unit owning the whole model, joining the router at
# 198.18.3.1 through the namespace's kernel routing, as a second host
# would through its management interface. It announces its own range
# and URL beside the first appliance's units, heartbeats, and on SIGTERM
# sends Dropping shutdown while its listener still accepts (the peer
# probes it), then exits 0.
FSA_STEP="(viii) a second appliance"
cat >"$FSA_DIR/c.conf" <<EOF2
[eal]
args = --lcores 0@0 --no-pci --no-huge -m 512 --file-prefix ${FSA_NAME}_c --vdev net_tap1,iface=${FSA_PFX}1 --log-level=pmd.net.tap:error
[log]
level = notice
[port 0]
device = net_tap1
address = 198.18.7.2/24
gateway = 198.18.7.1
[shard c]
model = $m
layers = 0-3
listen = 8080
net_lcores = 0
max_connections = 256
join = $R1
grid_key = env:GRID_KEY
grid_heartbeat_ms = $HB_MS
EOF2
ip netns exec "$FSA_NS" env GRID_KEY="$KEY" timeout 120 "$FSA_BIN" \
	-c "$FSA_DIR/c.conf" >"$FSA_DIR/c.out" 2>&1 &
c_pid=$!
FSA_BG_PIDS="${FSA_BG_PIDS:-} $c_pid"
for _ in $(seq 300); do
	grep -q "serving layers" "$FSA_DIR/c.out" && break
	kill -0 "$c_pid" 2>/dev/null || break
	sleep 0.1
done
grep -q "serving layers" "$FSA_DIR/c.out" ||
	fail "the second appliance did not start in 30 s: $(tail -n 20 "$FSA_DIR/c.out")"
fsa_in ip addr add 198.18.7.1/24 dev "${FSA_PFX}1"
fsa_in ip link set "${FSA_PFX}1" up
live_urls="sorted({a['url'] for a in of('ack') if not [x for x in of('stream_end') if x['sid'] == a['sid']]})"
if ev_wait 30 p2 "of('ack', '$URL_C')" >/dev/null &&
	grep -q "\[shard c\] grid $R1: joined as srv-" "$FSA_DIR/c.out" &&
	ev p2 "'$URL_B' in $live_urls and '$URL_C' in $live_urls" >/dev/null
then
	ok "units of two appliances joined at once: $(ev p2 "$live_urls")"
else
	bad "the second appliance did not join: $(grep ' grid ' "$FSA_DIR/c.out" | tr '\n' '|')"
fi
ev_wait 5 p2 "len(of('heartbeat', '$URL_C')) >= 2" >/dev/null ||
	bad "no heartbeats from the second appliance"
kill -TERM "$c_pid"
c_rc=0
wait "$c_pid" || c_rc=$?
if [ "$c_rc" -eq 0 ] &&
	ev p2 "[d for d in of('dropping', '$URL_C') if d['reason'] == 'shutdown'] and [p for p in of('shutdown_probe', '$URL_C') if p['ok']]" >/dev/null
then
	ok "the second appliance left: dropping (shutdown), its listener open then, exit 0"
else
	bad "the second appliance's stop: exit $c_rc, $(ev p2 "of('dropping', '$URL_C') + of('shutdown_probe', '$URL_C')")"
fi

# (v) ---------------------------------------------------------------------
FSA_STEP="(v) SIGTERM"
# The order (Dropping before the listener closes) is checked by the
# peer itself: it connects to the unit's listener while it handles the
# Dropping, before the stream may end (--probe-on-shutdown). A clock
# comparison across processes cannot show it: unit b's lcore shares
# core 0 with unit a's, so a SYN may wait milliseconds for its poll.
# A client connecting in a loop shows the listener does close, and when.
fsa_client 60 "$FSA_PY" - "$FSA_IP" 8081 \
	"$FSA_DIR/refused.json" <<'PYEOF' &
import json, socket, sys, time
host, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
last_ok = None
n = 0
while True:
    t = time.time()
    try:
        s = socket.create_connection((host, port), timeout=0.3)
        s.close()
        last_ok = t
        n += 1
    except OSError as e:
        json.dump({"t_fail": t, "last_ok": last_ok, "connects": n,
                   "err": str(e)}, open(out, "w"))
        break
    time.sleep(0.001)
PYEOF
loop_pid=$!
sleep 0.5
kill -0 "$loop_pid" 2>/dev/null || fail "the connect loop failed at once"
# The streams live now: acked, not ended.
live=$(ev p2 "sorted({a['url'] for a in of('ack')
    if not [x for x in of('stream_end') if x['sid'] == a['sid']]})")
echo "     streams live at SIGTERM: $live"
ev p2 "'$URL_B' in $live" >/dev/null || fail "unit b is not joined"
t_term=$("$FSA_PY" -c 'import time; print(time.time())')
kill -TERM "$FSA_PID"
for _ in $(seq 300); do
	kill -0 "$FSA_PID" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$FSA_PID" 2>/dev/null && fail "the appliance runs 30 s after SIGTERM"
rc=0
wait "$FSA_PID" || rc=$?
FSA_PID=
[ "$rc" -eq 0 ] || bad "the appliance exited $rc after SIGTERM"
wait "$loop_pid" || true
[ -s "$FSA_DIR/refused.json" ] || fail "the connect loop saw no failure"
t_fail=$("$FSA_PY" -c "import json; print(json.load(open('$FSA_DIR/refused.json'))['t_fail'])")
ok "listener gone: $(cat "$FSA_DIR/refused.json") ($("$FSA_PY" -c "print(round($t_fail - $t_term, 3))") s after SIGTERM)"
for url in $("$FSA_PY" -c "import json; print(' '.join(json.loads('''$live''')))"); do
	if ! ev p2 "[d for d in of('dropping', '$url') if d['reason'] ==
	    'shutdown' and d['wall'] >= $t_term]" >/dev/null; then
		bad "no dropping (shutdown) from $url after SIGTERM: $(ev p2 "of('dropping', '$url')")"
		continue
	fi
	# The peer connected to the unit's listener while it handled the
	# Dropping, before it let the stream end (grid_peer.py
	# --probe-on-shutdown): the listener must have accepted then.
	if ev p2 "[p for p in of('shutdown_probe', '$url') if p['ok']]" \
		>/dev/null; then
		ok "$url: the listener accepted while the router read the dropping (shutdown): $(ev p2 "of('shutdown_probe', '$url')")"
	else
		bad "$url: the listener did not accept while the router read the dropping (shutdown): $(ev p2 "of('shutdown_probe', '$url')")"
	fi
done
for u in a b; do
	url=$URL_A; [ $u = a ] || url=$URL_B
	case " $live " in *"$url"*) ;; *) continue ;; esac
	if grep -qE "$(grid_re "shard $u" "$R1" "dropping \\(shutdown\\) sent")" \
		"$FSA_DIR/shard.out"; then
		ok "log: [shard $u] dropping (shutdown) sent"
	else
		bad "unit $u: no \"dropping (shutdown) sent\" line"
	fi
done
peer_stop p2

# ===== run B ===============================================================

# (iii) -------------------------------------------------------------------
FSA_STEP="run B: start"
peer_start p3 50052 "${PEER_ARGS[@]}"
printf 'wrong-%s\n' "$KEY" >"$FSA_DIR/wrong.key"
conf "$FSA_DIR/b.conf" "join=$R1
grid_key=file:$FSA_DIR/wrong.key
grid_heartbeat_ms=$HB_MS" "join=$R2
grid_key=$KEY
grid_heartbeat_ms=$HB_MS"
start "$FSA_DIR/b.conf"
FSA_STEP="(iii) wrong key"
re_unauth=$(grid_re "shard a" "$R1" "stream ended: UNAUTHENTICATED: invalid grid key; retry in [0-9]+ s\$")
if log_wait 20 "$re_unauth" 2; then
	retries=$(grep -E "$re_unauth" "$FSA_DIR/shard.out" |
		sed -E 's/.*retry in ([0-9]+) s$/\1/' | paste -sd ' ')
	if "$FSA_PY" -c "
import sys
r = [int(x) for x in '$retries'.split()]
sys.exit(not (len(r) >= 2 and all(b > a for a, b in zip(r, r[1:]))))"; then
		ok "UNAUTHENTICATED, retries in $retries s"
	else
		bad "the retries do not grow: $retries"
	fi
else
	bad "not two \"stream ended: UNAUTHENTICATED: invalid grid key; retry in N s\" lines for unit a within 20 s: $(grep -E "$(grid_re "shard a" "$R1" "")" "$FSA_DIR/shard.out" | tr '\n' '|')"
fi
if h=$(health 8080) && grep -q '"status":"ok"' <<<"$h"; then
	ok "health on unit a: $h"
else
	bad "GET /v1/health on unit a: '$h'"
fi
if ev p3 "len(of('unauthenticated')) >= 2 and not of('announce')" >/dev/null
then
	ok "the peer refused $(ev p3 "len(of('unauthenticated'))") calls, got no announce"
else
	bad "the peer's view: $(ev p3 "[(x['ev']) for x in E]")"
fi
v=$(metric 8080 "ffn_grid_connected\\{shard=\"a\",router=\"$R1\"\\}")
if [ "$v" = 0 ]; then
	ok "/metrics: unit a not connected"
else
	bad "ffn_grid_connected{shard=\"a\"} is '$v', not 0"
fi

# (vii) -------------------------------------------------------------------
FSA_STEP="(vii) router down at start"
re_down=$(grid_re "shard b" "$R2" "stream ended: UNAVAILABLE: .*; retry in [0-9]+ s\$")
if log_wait 10 "$re_down"; then
	ok "log: $(grep -E "$re_down" "$FSA_DIR/shard.out" | head -n 1 | sed 's/^ffn-shard: //')"
else
	bad "no \"[shard b] grid $R2: stream ended: UNAVAILABLE: ...; retry in N s\" line: $(grep -E "$(grid_re "shard b" "$R2" "")" "$FSA_DIR/shard.out" | tr '\n' '|')"
fi
if h=$(health 8081) && grep -q '"status":"ok"' <<<"$h"; then
	ok "health on unit b: $h"
else
	bad "GET /v1/health on unit b: '$h'"
fi
# On unit b's own lcore: (ii) covered the other one.
w "unit b (router down), layers 2,3" 8081 --layers 2,3 --seq 2 --verify \
	--lcore 1
w "unit b (router down), layer 2, JSON" 8081 --layers 2 --json --verify \
	--lcore 1
w "unit a (wrong key), layer 1" 8080 --layers 1 --seq 2 --verify
peer_start p4 50053 --key "$KEY" --expect "$EXP_B" --heartbeat-ms "$HB_MS"
ev_wait 70 p4 "sid_of('$URL_B')" >/dev/null ||
	fail "unit b did not join the router once it came up (70 s)"
sid=$(ev p4 "of('ack', '$URL_B')[0]['server_id']")
if log_wait 10 "$(grid_re "shard b" "$R2" "joined as $sid\$")"; then
	ok "unit b joined $R2 once it came up: $sid"
else
	bad "no \"[shard b] grid $R2: joined as $sid\""
fi
# The heartbeats carry the layers walked before the join (2 and 3).
if ev_wait 5 p4 "[h for h in of('heartbeat', '$URL_B') if
    [s[0] for s in h['layer_stats']] == [2, 3]]" >/dev/null; then
	ok "unit b's heartbeats list layers 2, 3"
else
	bad "unit b's heartbeats do not list layers 2, 3: $(ev p4 "[h['layer_stats'] for h in of('heartbeat')]")"
fi
FSA_STEP="run B: stop"
fsa_stop || bad "the appliance did not stop cleanly"
peer_stop p3
peer_stop p4

FSA_STEP=done
if [ "$FAILS" -ne 0 ]; then
	FSA_STEP="the checks above"
	echo "test_grid.sh: $FAILS FAILED" >&2
	exit 1
fi
echo "test_grid.sh: ok"
