#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# ffn-shard end to end (issue 4, "Tests"): every route, the binary and
# JSON walk-ffn against pyref, the §4 error table, the appliance's own
# limits, keep-alive, pipelining, 100-continue, chunked bodies and
# Authorization, over net_tap in a namespace of its own (fsa,
# 198.18.3.0/24). Needs root. test_routes.py does the checking.
#
#   test_routes.sh BUILD_DIR
#
# Runs (one appliance each, single-lcore on lcore 0):
#   A  llama, f32 weights (feature-major), owns 1-4 of 6, i8 = on by the
#      config, max_body = 128K, header_timeout_ms = 1500,
#      body_timeout_ms = 1500: all groups
#      but auth; and curl POSTs a binary walk-ffn body from a file.
#   B  gemma3, f16 weights (dense, §2.3), owns all 4, i8 off in the config
#      but LARQL_I8_WIRE in the environment, api_key set: every request
#      carries the key; routes, binary, router, json, errors, limits, auth.
#   C  gemma3, f32 interleaved (written by tools/mkvindex), f16 = off by
#      LARQL_F16_WIRE_DISABLE: negotiation and the router's call;
#      idle_timeout_ms = 2000: an idle keep-alive connection is closed;
#      send_timeout_ms = 1500: a client that stops reading is reset.
#   D  gemma3, f16, rate_limit = 6/hour, trust_forwarded_for = on: the
#      per-client limit (ratelimit.py).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
fsa_init routes "${1:-build}"

fails=
# routes ARGS...: one test_routes.py run; a failing run does not stop
# the next one (all differences show in one go).
routes() {
	fsa_client 300 "$FSA_PY" "$HERE/test_routes.py" --host "$FSA_IP" \
		--port 8080 "$@" || fails="$fails $FSA_STEP"
}

# idle_closed MS: a keep-alive connection left idle after one answer is
# closed by the appliance (idle_timeout_ms = MS in the config; the
# default is 60 s) not before MS and within MS + 4 s.
idle_closed() {
	fsa_client 30 "$FSA_PY" - "$HERE" "$FSA_IP" "$1" <<'EOF'
import sys, time
sys.path.insert(0, sys.argv[1])
import fsa
ms = int(sys.argv[3])
c = fsa.Http(sys.argv[2], 8080)
r = c.request("GET", "/v1/health")
t0 = time.time()
ok = r.status == 200 and r.header("connection") != "close"
closed = c.at_eof(ms / 1000 + 4)
dt = time.time() - t0
print("idle keep-alive connection: %s after %.2f s (idle_timeout_ms %d)"
      % ("closed" if closed else "still open", dt, ms))
sys.exit(0 if ok and closed and dt >= 0.8 * ms / 1000 else 1)
EOF
}

# send_reset MS: a client that asks for a large answer (4 layers of 48
# rows, 196 KiB) through a small receive buffer and never reads is
# reset once no byte was acknowledged for MS (send_timeout_ms; its
# kernel keeps ACKing the zero-window probes), counted in /metrics as
# ffn_send_timeouts_total, not before 0.7 MS and within MS + 4 s.
send_reset() {
	fsa_client 30 "$FSA_PY" - "$HERE" "$FSA_PYREF" "$FSA_IP" "$1" <<'EOF'
import socket, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import numpy as np
import fsa
import wire
host, ms = sys.argv[3], int(sys.argv[4])

def resets():
    r = fsa.Http(host, 8080).request("GET", "/metrics")
    for ln in r.body.decode().splitlines():
        if ln.startswith("ffn_send_timeouts_total{"):
            return int(ln.split()[-1])
    return -1

x = np.random.default_rng(7).standard_normal((48, 256)).astype(np.float32)
body, ct = wire.encode_request([0, 1, 2, 3], x, "f32")
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect((host, 8080))
base = resets()
s.sendall(fsa.build("POST", "/v1/walk-ffn", body, [("Content-Type", ct)]))
t0 = time.time()
time.sleep(0.7 * ms / 1000)
early = resets() - base
n = early
while n == 0 and time.time() - t0 < ms / 1000 + 4:
    time.sleep(0.05)
    n = resets() - base
dt = time.time() - t0
reset = False
s.settimeout(5)
try:
    while s.recv(1 << 16):
        pass
except ConnectionResetError:
    reset = True
print("unread answer: %d send timeout(s) after %.2f s (none at %.2f s: "
      "%s), connection %s (send_timeout_ms %d)" % (n, dt, 0.7 * ms / 1000,
      early == 0, "reset" if reset else "not reset", ms))
sys.exit(0 if base >= 0 and early == 0 and n == 1 and reset else 1)
EOF
}

# curl_walk: curl POSTs a binary walk-ffn body from a file (layer 1,
# seq_len 3, f32; no Accept: f32 back) as a plain HTTP client would; the
# answer is 200 and a single f32 frame of 12 + 3 * 256 * 4 bytes
# (spec/wire.md §5.2).
curl_walk() {
	local got want=$((12 + 3 * 256 * 4))
	"$FSA_PY" - "$FSA_PYREF" "$FSA_DIR/walk.bin" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import wire
x = np.random.default_rng(5).standard_normal((3, 256)).astype(np.float32)
body, _ = wire.encode_request([1], x, "f32")
open(sys.argv[2], "wb").write(body)
EOF
	got=$(fsa_client 20 curl -s -o "$FSA_DIR/walk.out" \
		-w '%{http_code} %{size_download}' \
		-H "Content-Type: application/x-larql-ffn" \
		--data-binary "@$FSA_DIR/walk.bin" \
		"http://$FSA_IP:8080/v1/walk-ffn") || true
	echo "curl POST /v1/walk-ffn: $got (want 200 $want)"
	[ "$got" = "200 $want" ] && [ "$(stat -c %s "$FSA_DIR/walk.out")" = "$want" ]
}

FSA_STEP="models"
m=$FSA_DIR/models
fsa_model "$m/llama-f32" --hidden 256 --features 512 --layers 6 \
	--model-type llama --dtype f32 --layout features --seed 11
fsa_model "$m/gemma3-f16" --hidden 256 --features 512 --layers 4 \
	--model-type gemma3 --dtype f16 --layout dense --seed 12
# This one by the C writer (tools/mkvindex): pyref reads it as the oracle.
"$FSA_BUILD/tools/mkvindex/mkvindex" --hidden 256 --intermediate 512 \
	--layers 4 --family gemma3 --layout interleaved --seed 13 \
	"$m/gemma3-il" >/dev/null

fsa_conf "$FSA_DIR/a.conf" "$m/llama-f32" 1-4 i8=on max_body=128K \
	header_timeout_ms=1500 body_timeout_ms=1500
fsa_start "$FSA_DIR/a.conf"
FSA_STEP="run A"
routes --name "A llama-f32" --model "$m/llama-f32" --owned 1-4 --i8 1 \
	--max-body 131072 --header-timeout-ms 1500 --body-timeout-ms 1500
FSA_STEP="run A: curl POST"
curl_walk || fails="$fails $FSA_STEP"
fsa_stop

key=e2e-key-0123456789abcdef
fsa_conf "$FSA_DIR/b.conf" "$m/gemma3-f16" 0-3 i8=off api_key=$key
fsa_start "$FSA_DIR/b.conf" LARQL_I8_WIRE=1
FSA_STEP="run B"
routes --name "B gemma3-f16" --model "$m/gemma3-f16" --owned 0-3 --i8 1 \
	--api-key "$key" \
	--groups delivery,routes,binary,router,json,errors,limits,auth
fsa_stop

fsa_conf "$FSA_DIR/c.conf" "$m/gemma3-il" 0-3 idle_timeout_ms=2000 \
	send_timeout_ms=1500
fsa_start "$FSA_DIR/c.conf" LARQL_F16_WIRE_DISABLE=1
FSA_STEP="run C"
routes --name "C gemma3-interleaved" --model "$m/gemma3-il" --owned 0-3 \
	--f16 0 --groups delivery,negotiation,router
FSA_STEP="run C: idle_timeout_ms"
idle_closed 2000 || fails="$fails $FSA_STEP"
FSA_STEP="run C: send_timeout_ms"
send_reset 1500 || fails="$fails $FSA_STEP"
fsa_stop

fsa_conf "$FSA_DIR/d.conf" "$m/gemma3-f16" 0-3 rate_limit=6/hour \
	trust_forwarded_for=on
fsa_start "$FSA_DIR/d.conf"
FSA_STEP="run D: rate_limit"
fsa_client 60 "$FSA_PY" "$HERE/ratelimit.py" --host "$FSA_IP" --port 8080 \
	--model "$m/gemma3-f16" --owned 0-3 --n 6 || fails="$fails $FSA_STEP"
fsa_stop
FSA_STEP=done
if [ -n "$fails" ]; then
	echo "test_routes.sh: FAILED in:$fails"
	exit 1
fi
echo "test_routes.sh: ok"
