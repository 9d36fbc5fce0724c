#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# End-to-end test of ffn-client and ffn-bench against pyref/server.py over
# kernel sockets on 127.0.0.1 (ports 18200-18209). Needs no root.
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
# - ffn-bench over two shards with --assert-topk-match.
set -u
BUILD=${1:-build}
PY=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
CLIENT=$BUILD/tools/client/ffn-client
BENCH=$BUILD/tools/client/ffn-bench
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

for x in "$CLIENT" "$BENCH"; do
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

echo "$FAILS failure(s)"
[ $FAILS -eq 0 ]
