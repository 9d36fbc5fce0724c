#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# End-to-end test of ffn-client and ffn-bench against pyref/server.py over
# kernel sockets on 127.0.0.1 (ports 18200-18211). Needs no root.
#
#   tests/e2e/pyref/test_tools.sh BUILD_DIR
#
# Checks, per model (vindex.md §3 example; random llama/SiLU and gemma3/GELU
# models in each dense layout, f32 and f16):
# - ffn-client, for every response x request wire format, single and batch
#   frames: --verify against the local double-precision reference within
#   the §5.3 bound of the response format (f32 1e-5, f16 2^-11, i8 1/254
#   of the largest value);
# - negotiation: i8 asked of a server without LARQL_I8_WIRE answers f16;
# - the §6 JSON path; 30 requests on one kept-alive connection;
# - a §4 error comes back as a non-zero exit with the status;
# - ffn-bench over two shards with --assert-topk-match;
# - ffn-bench's f16-range flag: an outlier model (layer 1's W_down x 1e5)
#   has layer 1 flagged "<- beyond f16 range" and non-finite f16 residual
#   values, the ordinary models nothing;
# - a model written by mkvindex --vocab: embeddings.bin [vocab, hidden] f32
#   (size, values), used by ffn-bench as REAL embeddings, and the f32 token
#   stream ffn-bench decodes with it recomputed here in float64.
set -u
BUILD=${1:-build}
PY=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
CLIENT=$BUILD/tools/client/ffn-client
BENCH=$BUILD/tools/client/ffn-bench
MKVINDEX=$BUILD/tools/mkvindex/mkvindex
TMP=$(mktemp -d /tmp/ffn-tools-e2e.XXXXXX)
PIDS=()
FAILS=0

cleanup() {
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }

# serve PORT MODEL [LAYERS] [ENV...]: start pyref, wait for /v1/health.
serve() {
	local port=$1 model=$2 layers=${3:-} i
	shift 3 || shift $#
	env "$@" timeout 300 "$PY" "$HERE/server.py" --model "$model" \
		${layers:+--layers "$layers"} --port "$port" \
		>"$TMP/server-$port.log" 2>&1 &
	PIDS+=($!)
	for i in $(seq 50); do
		curl -sf "http://127.0.0.1:$port/v1/health" >/dev/null &&
			return 0
		sleep 0.2
	done
	echo "server on $port did not come up:"; cat "$TMP/server-$port.log"
	exit 1
}

bound() {
	case $1 in
	f32) echo 1e-5 ;;
	f16) echo 4.9e-4 ;;	# 2^-11 of the value, plus f32 compute noise
	i8) echo 3.94e-3 ;;	# half a step of max/127, plus noise
	esac
}

for x in "$CLIENT" "$BENCH" "$MKVINDEX"; do
	[ -x "$x" ] || { echo "missing $x (build first)"; exit 1; }
done

# Models.
"$PY" "$HERE/mkmodel.py" example "$TMP/example" >/dev/null
"$PY" "$HERE/mkmodel.py" random "$TMP/llama" --hidden 96 --features 320 \
	--layers 4 --seed 11 --layout features --model-type llama >/dev/null
"$PY" "$HERE/mkmodel.py" random "$TMP/gemma" --hidden 64 --features 200 \
	--layers 3 --seed 12 --layout interleaved --model-type gemma3 >/dev/null
"$PY" "$HERE/mkmodel.py" random "$TMP/dense16" --hidden 64 --features 128 \
	--layers 2 --seed 13 --layout dense --dtype f16 \
	--model-type gemma3_text >/dev/null
"$PY" "$HERE/mkmodel.py" random "$TMP/feat16" --hidden 48 --features 100 \
	--layers 2 --seed 14 --layout features --dtype f16 >/dev/null

port=18200
for m in example llama gemma dense16 feat16; do
	serve $port "$TMP/$m" "" LARQL_I8_WIRE=1
	url=http://127.0.0.1:$port
	for w in f32 f16 i8; do
		for r in f32 f16 i8; do
			for shape in "--layer 1" "--layers 0,1 --seq-len 3"; do
				out=$(timeout 20 "$CLIENT" "$url" $shape \
					--wire $w --request-wire $r --random 5 \
					--verify "$TMP/$m" --max-err "$(bound $w)" 2>&1)
				rc=$?
				line=$(echo "$out" | grep '^verify   max')
				if [ $rc -eq 0 ] &&
				   echo "$out" | grep -q "^response $w " &&
				   echo "$out" | grep -q '^verify   ok'; then
					ok "client $m wire=$w req=$r $shape: ${line#verify   }"
				else
					bad "client $m wire=$w req=$r $shape (rc $rc)"
					echo "$out"
				fi
			done
		done
	done
	# §6 JSON path, full output, several rows and layers.
	out=$(timeout 20 "$CLIENT" "$url" --json --layers 1,0 --seq-len 2 \
		--random 9 --verify "$TMP/$m" --max-err 1e-5 2>&1)
	if [ $? -eq 0 ] && echo "$out" | grep -q '^verify   ok'; then
		ok "client $m json --layers 1,0 --seq-len 2"
	else
		bad "client $m json"; echo "$out"
	fi
	port=$((port + 1))
done

# --input/--out on the §3 example: x = [1, -2, 0.5, 3] gives the table.
"$PY" -c "import numpy as np; np.array([1,-2,0.5,3],'<f4').tofile('$TMP/x.bin')"
out=$(timeout 20 "$CLIENT" http://127.0.0.1:18200 --layers 0,1 --hidden 4 \
	--input "$TMP/x.bin" --out "$TMP/y.bin" 2>&1)
if [ $? -eq 0 ] && "$PY" -c "
import numpy as np, sys
y = np.fromfile('$TMP/y.bin', '<f4')
want = [1.827646, 0.9536234, -6.794814, -4.013545,
        0.6224593, 0, 0.6131809, -8.573167]
sys.exit(0 if np.allclose(y, want, rtol=2e-6, atol=1e-6) else 1)"; then
	ok "client --input/--out: vindex.md §3 table, layers 0 and 1"
else
	bad "client --input/--out"; echo "$out"
fi

# Keep-alive: 30 requests on one connection, each answer still right.
out=$(timeout 30 "$CLIENT" http://127.0.0.1:18201 --layer 3 --wire f16 \
	--random 2 --repeat 30 --verify "$TMP/llama" --max-err 4.9e-4 2>&1)
if [ $? -eq 0 ] && echo "$out" | grep -q 'repeat   30 requests on one conn'; then
	ok "client: 30 requests on one kept-alive connection"
else
	bad "client: keep-alive"; echo "$out"
fi

# §5.1: i8 asked, i8 not enabled -> f16, silently.
serve $port "$TMP/llama" ""
out=$(timeout 20 "$CLIENT" http://127.0.0.1:$port --layer 2 --wire i8 \
	--random 1 --verify "$TMP/llama" --max-err 4.9e-4 2>&1)
if [ $? -eq 0 ] && echo "$out" | grep -q '^response f16 '; then
	ok "client: i8 not enabled falls back to f16"
else
	bad "client: i8 fallback"; echo "$out"
fi
# §4: a layer out of range is a 400 and a non-zero exit.
out=$(timeout 20 "$CLIENT" http://127.0.0.1:$port --layer 9 --random 1 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q 'status 400' &&
   echo "$out" | grep -q 'out of range (num_layers = 4)'; then
	ok "client: out-of-range layer reported as 400"
else
	bad "client: out-of-range layer"; echo "$out"
fi
port=$((port + 1))

# ffn-bench over two shards, per family, with a vocabulary (tied head).
for fam in llama gemma3; do
	"$PY" "$HERE/mkmodel.py" random "$TMP/bench-$fam" --hidden 128 \
		--features 384 --layers 6 --seed 21 --vocab 400 \
		--model-type $fam >/dev/null
	p1=$port p2=$((port + 1))
	port=$((port + 2))
	serve $p1 "$TMP/bench-$fam" 0-2 LARQL_I8_WIRE=1
	serve $p2 "$TMP/bench-$fam" 3-5 LARQL_I8_WIRE=1
	layout="0-2=http://127.0.0.1:$p1,3-5=http://127.0.0.1:$p2"
	out=$(timeout 60 "$BENCH" --ffn "$layout" --model "$TMP/bench-$fam" \
		--steps 12 --wire f32,f16 --assert-topk-match 5 2>&1)
	if [ $? -eq 0 ] && echo "$out" | grep -q 'REAL embeddings' &&
	   echo "$out" | grep -q '^f16    f16   12/12   12/12'; then
		ok "bench $fam: f16 keeps every top-5 set over 12 steps"
	else
		bad "bench $fam f16"; echo "$out"
	fi
	# Values of ordinary size: no layer flagged, nothing non-finite.
	if ! echo "$out" | grep -q 'beyond f16 range *$' &&
	   [ "$(echo "$out" | awk '$1 == "f16" && $2 == "f16" {print $NF}')" = 0 ]
	then
		ok "bench $fam: no layer flagged beyond the f16 range"
	else
		bad "bench $fam: flagged beyond f16 range"; echo "$out"
	fi
	out=$(timeout 60 "$BENCH" --ffn "$layout" --steps 12 --vocab 256 \
		--wire f32,i8 --assert-topk-match 1 2>&1)
	if [ $? -eq 0 ] && echo "$out" | grep -q 'SYNTHETIC embeddings' &&
	   echo "$out" | grep -q '^i8     i8    12/12'; then
		ok "bench $fam: i8 keeps every top-1 over 12 steps"
	else
		bad "bench $fam i8"; echo "$out"
	fi
done

# --assert-topk-match must fail when a format changes a top-K set: a top-20
# set over a 400-token vocabulary is not stable under i8 here.
out=$(timeout 60 "$BENCH" --ffn "$layout" --model "$TMP/bench-gemma3" \
	--steps 12 --wire f32,i8 --assert-topk-match 20 2>&1)
if [ $? -eq 1 ] && echo "$out" | grep -q 'top-20 set differs'; then
	ok "bench: --assert-topk-match exits 1 when a top-K set differs"
else
	bad "bench: --assert-topk-match did not fire"; echo "$out"
fi

# f16 range (design note's early-layer concern): layer 1's W_down x 1e5
# pushes its FFN output past 65504; f16 turns those into Inf (§5.3, no
# clamping) and the residual is lost from layer 1 on.
"$PY" "$HERE/mkmodel.py" random "$TMP/outlier" --hidden 128 --features 384 \
	--layers 4 --seed 21 --vocab 400 --model-type llama \
	--down-scale 1:100000 >/dev/null
serve $port "$TMP/outlier" ""
out=$(timeout 60 "$BENCH" --ffn "0-3=http://127.0.0.1:$port" \
	--model "$TMP/outlier" --steps 8 --wire f32,f16 2>&1)
rc=$?
port=$((port + 1))
# Layer rows: "layer mean|h| max|y| y>f16 h>f16 ...": $4 is y>f16.
l0=$(echo "$out" | grep -E '^ +0  ')
l1=$(echo "$out" | grep -E '^ +1  ')
nf32=$(echo "$out" | awk '$1 == "f32" && $2 == "f32" {print $NF}')
nf16=$(echo "$out" | awk '$1 == "f16" && $2 == "f16" {print $NF}')
if [ $rc -eq 0 ] && echo "$l1" | grep -q '<- beyond f16 range$' &&
   [ "$(echo "$l1" | awk '{print $4}')" -gt 0 ] &&
   ! echo "$l0" | grep -q 'beyond f16' && [ "$nf32" = 0 ] &&
   [ "${nf16:-0}" -gt 0 ] && echo "$l1" | grep -q '![0-9]* non-finite'; then
	ok "bench outlier: layer 1 flagged beyond f16 range, $nf16 non-finite f16 values, f32 none"
else
	bad "bench outlier: f16 range not flagged (rc $rc)"; echo "$out"
fi

# mkvindex --vocab: embeddings.bin is [vocab, hidden] f32, raw little-endian
# with no header (vindex.md: every binary file), N(0, 1) with mkvindex's
# few large-magnitude channels 10x (tools/mkvindex/vindex_write.h).
V=400 HID=128
"$MKVINDEX" --hidden $HID --intermediate 384 --layers 4 --seed 5 \
	--vocab $V --family gemma3 "$TMP/mkv" >/dev/null
if "$PY" - "$TMP/mkv" $V $HID <<'PYEOF'
import json, os, sys
import numpy as np
d, V, H = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
p = os.path.join(d, "embeddings.bin")
idx = json.load(open(os.path.join(d, "index.json")))
assert os.path.getsize(p) == V * H * 4, os.path.getsize(p)
assert idx["vocab_size"] == V and idx["hidden_size"] == H, idx
E = np.fromfile(p, "<f4").reshape(V, H)
assert np.isfinite(E).all()
assert len(np.unique(E, axis=0)) == V, "rows repeat"
sd, mu = E.std(axis=0), E.mean(axis=0)
big = sd > 5
assert 1 <= big.sum() <= 3, sd
assert ((sd[big] > 8) & (sd[big] < 12)).all(), sd[big]
assert ((sd[~big] > 0.85) & (sd[~big] < 1.15)).all(), sd[~big]
assert (abs(mu[~big]) < 0.25).all(), mu[~big]
PYEOF
then
	ok "mkvindex --vocab $V: embeddings.bin is [$V, $HID] f32, N(0,1) with 10x channels"
else
	bad "mkvindex --vocab: embeddings.bin"
fi
serve $port "$TMP/mkv" ""
out=$(timeout 60 "$BENCH" --ffn "0-3=http://127.0.0.1:$port" \
	--model "$TMP/mkv" --steps 8 --wire f32,f16 \
	--assert-topk-match 1 2>&1)
rc=$?
port=$((port + 1))
toks=$(echo "$out" | sed -n 's/^tokens (f32): //p')
# ffn-bench's decode loop (docs/ACCURACY.md) in float64 on pyref's reader:
# h = E[1]; h += FFN_L(rmsnorm(h)) per layer; argmax of E . rmsnorm(h)
# over the tokens not yet generated.
want=$("$PY" - "$TMP/mkv" "$HERE" <<'PYEOF'
import sys
import numpy as np
sys.path.insert(0, sys.argv[2])
import ffn, vindex
v = vindex.load(sys.argv[1])
E = v.embeddings().astype(np.float64)
rms = lambda h: h / np.sqrt((h * h).mean() + 1e-6)
toks = [1]
for s in range(8):
    h = E[toks[-1]].copy()
    for L in range(v.num_layers):
        G, U, D = v.weights[L]
        h += ffn.compute64(G, U, D, rms(h), v.activation)[0]
    logit = E @ rms(h)
    logit[toks] = -np.inf
    toks.append(int(np.argmax(logit)))
print(" ".join(map(str, toks)))
PYEOF
)
if [ $rc -eq 0 ] &&
   echo "$out" | grep -q "vocab $V, REAL embeddings.bin of the vindex" &&
   [ -n "$toks" ] && [ "$toks" = "$want" ]; then
	ok "bench on mkvindex --vocab model: REAL embeddings, f32 tokens $toks as recomputed"
else
	bad "bench on mkvindex --vocab model (rc $rc, tokens '$toks', want '$want')"
	echo "$out"
fi

echo "$FAILS failure(s)"
[ $FAILS -eq 0 ]
