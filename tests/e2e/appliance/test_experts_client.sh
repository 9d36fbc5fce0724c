#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# ffn-client --expert-route against the appliance (spec/moe.md, issue 23):
# a hybrid-MoE vindex from mkvindex (hidden 512, 16 Q4_K experts of width
# 256 in each of 2 layers), the appliance on net_tap with its dense layers
# 0-1 and experts 0-7. For every expert route, ffn-client builds the
# request (random x and routing from --random, or --experts), decodes the
# answer by its Content-Type and recomputes it with lib/ffn's ffn_moe
# (--verify): within 1e-3 of max|ref| for f32 answers, plus the format's
# rounding for f16 and i8 answers (exit 3 above). Also: the topology, and
# an expert the shard does not own refused with 400.
# Namespace fsa-xclient-*, 198.18.3.0/24; about 15 s.
#
#   test_experts_client.sh BUILD_DIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
fsa_init xclient "${1:-build}"
client=$FSA_BUILD/tools/client/ffn-client
url=http://$FSA_IP:8080

FSA_STEP="model"
m=$FSA_DIR/moe
"$FSA_BUILD/tools/mkvindex/mkvindex" --family gemma4 --hidden 512 \
	--intermediate 256 --layers 2 --experts 16 --expert-width 256 \
	--seed 23 "$m" >/dev/null

fsa_conf "$FSA_DIR/x.conf" "$m" 0-1 experts=0-7 f16=on i8=on
fsa_start "$FSA_DIR/x.conf"

# xc STEP ARGS...: one ffn-client call that must pass --verify; its
# output goes to $FSA_DIR/c.out and is shown.
xc() {
	FSA_STEP=$1
	shift
	echo "--- $FSA_STEP"
	fsa_client 30 "$client" "$url" --verify "$m" --show 4 "$@" \
		>"$FSA_DIR/c.out" 2>&1 || {
		cat "$FSA_DIR/c.out"
		return 1
	}
	cat "$FSA_DIR/c.out"
	grep -q '^verify   ok' "$FSA_DIR/c.out"
}
# ctype STEP: the answer carried exactly this Content-Type.
ctype() {
	grep -q "^status 200  content-type $1\$" "$FSA_DIR/c.out" ||
		{ echo "expected content-type $1" >&2; return 1; }
}

FSA_STEP=topology
fsa_client 30 "$client" "$url" --expert-route topology >"$FSA_DIR/c.out"
cat "$FSA_DIR/c.out"
grep -q '"num_experts":16' "$FSA_DIR/c.out"
grep -q '"owned_start":0,"owned_end":7' "$FSA_DIR/c.out"

for w in f32 f16; do
	xc "layer-batch $w" --expert-route layer-batch --layer 1 --wire $w \
		--random 1
	ctype "application/x-larql-experts-layer$([ $w = f32 ] || echo -$w)"
	xc "multi-layer-batch $w" --expert-route multi-layer-batch \
		--layers 0,1 --wire $w --random 2
	ctype "application/x-larql-experts-multi-layer$([ $w = f32 ] ||
		echo -$w)"
	xc "multi-layer-batch-q8k $w" --expert-route multi-layer-batch-q8k \
		--layer 0 --wire $w --random 3
	ctype "application/x-larql-experts-multi-layer$([ $w = f32 ] ||
		echo -$w)"
done
xc "layer-batch-f16" --expert-route layer-batch-f16 --layer 0 --random 4
ctype application/x-larql-experts-layer-f16
xc "layer-batch-i8" --expert-route layer-batch-i8 --layer 1 --random 5
ctype application/x-larql-experts-layer-i8
xc "layer-batch, i8 answer" --expert-route layer-batch --layer 0 \
	--wire i8 --random 6
ctype application/x-larql-experts-layer-i8
xc "layer-batch, given pairs" --expert-route layer-batch --layer 0 \
	--experts 3:0.75,1:0.25 --random 7
grep -q ', 2 pairs' "$FSA_DIR/c.out"
xc "expert-batch" --expert-route expert-batch --layer 1 --top-k 3 \
	--random 8
ctype application/x-larql-expert
[ "$(grep -c '^layer 1 expert ' "$FSA_DIR/c.out")" = 3 ]
xc "expert (JSON)" --expert-route expert --layer 0 --experts 5:1 \
	--random 9
ctype application/json

FSA_STEP="an expert not owned"
rc=0
fsa_client 30 "$client" "$url" --expert-route layer-batch --layer 0 \
	--experts 12:1 --random 10 >"$FSA_DIR/c.out" 2>&1 || rc=$?
cat "$FSA_DIR/c.out"
[ "$rc" = 1 ]
grep -q '^status 400' "$FSA_DIR/c.out"
grep -q 'expert 12 of layer 0 is not held by this shard' "$FSA_DIR/c.out"

fsa_stop
FSA_STEP=done
echo "test_experts_client.sh: ok"
