#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# ffn-loadgen against two ffn-shard appliances over net_memif (issue 5,
# "ffn-loadgen"): three DPDK processes on this machine, no kernel network
# (prefix fsb, 198.18.4.0/24, docs/DEVELOPING.md).  Appliance A serves
# layers 0-1 of a 4-layer synthetic model on link A (198.18.4.0/26), B
# serves layers 2-3 on link B (198.18.4.64/26); each is the memif server
# of its link, ffn-loadgen the client of both.
#
# Asserts, for closed loop at f32, f16 (batch frame, f16 body), i8 (i8
# body, seq_len 3), the fan-out walk over A and B, GET /v1/health and open
# loop: exit 0, zero errors of every kind, requests > 0, every binary frame
# validated.  And that validation can fail: i8 asked of B (i8 off there,
# so it answers f16) must be reported as bad_ctype with exit 3.
#
# Then ffn-loadgen on two lcores (one RX/TX queue pair of each memif port
# each) against appliances with two network lcores (two queues): memif
# has no RSS, queue i of one side is queue i of the other, so each of
# our lcores talks to one of theirs.  Asserts that both lcores carried
# connections and requests, and zero errors with --verify-body (every
# answer agrees with its lcore's reference, and the lcores' references
# agree), closed loop, fan-out, and open loop.  The lcores share this
# machine's cores (EAL --lcores): correctness only, no timing.
#
# Last, expert layer batches (spec/moe.md, issue 23): A serves a
# hybrid-MoE model with experts 0-15; ffn-loadgen --experts-route
# layer-batch, 16 connections, --verify-body, f32 and f16 answers:
# zero errors, every answer validated and agreeing with the first one.
#
# usage: loadgen_memif.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
shard=$build/app/ffn-shard/ffn-shard
lg=$build/tools/loadgen/ffn-loadgen
mkv=$build/tools/mkvindex/mkvindex
dir=$(mktemp -d /tmp/fsb-lg.XXXXXX)
pa= pb=
step=setup

stop() {
	if [ -n "$1" ] && kill -0 "$1" 2>/dev/null; then
		kill -TERM "$1" 2>/dev/null || true
		wait "$1" 2>/dev/null || true
	fi
}

cleanup() {
	rc=$?
	stop "$pa"
	stop "$pb"
	rm -rf "/var/run/dpdk/fsb-a-$$" "/var/run/dpdk/fsb-b-$$" \
		"/var/run/dpdk/fsb-lg-$$"
	if [ "$rc" -ne 0 ]; then
		echo "loadgen_memif.sh: FAILED at step '$step'" >&2
		for f in "$dir"/*.log; do
			echo "--- $f" >&2
			tail -n 30 "$f" >&2 || true
		done
	fi
	rm -rf "$dir"
	exit "$rc"
}
trap cleanup EXIT INT TERM

"$mkv" --hidden 256 --intermediate 1024 --layers 4 --family llama \
	--seed 7 "$dir/model" >/dev/null

# appliance NAME ADDR LAYERS I8 [NET_LCORES]: with 2, the port has two
# queues, each polled by its own network lcore (on shared cores).
# A_MODEL and A_EXPERTS, when set, are A's model and [shard] experts (a
# dense model: A_EXPERTS unset).
appliance() {
	local eal="-l 0" net=0 model=$dir/model experts=

	if [ "$1" = a ] && [ -n "${A_MODEL:-}" ]; then
		model=$A_MODEL
		[ -n "${A_EXPERTS:-}" ] && experts="experts = $A_EXPERTS"
	fi

	if [ "${5:-1}" -eq 2 ]; then
		eal="--lcores 0@0,1@1"
		net=0-1
	fi
	cat >"$dir/$1.conf" <<CONF
[eal]
args = $eal --no-pci --no-huge -m 512 --file-prefix fsb-$1-$$ --vdev net_memif0,role=server,socket=$dir/$1.sock
[log]
level = warning
[port 0]
device = net_memif0
address = $2/26
[shard $1]
model = $model
layers = $3
$experts
listen = 8080
port = 0
numa_node = 0
net_lcores = $net
f16 = on
i8 = $4
CONF
	[ -f "$dir/$1.log" ] && mv "$dir/$1.log" "$dir/$1.prev.log"
	timeout 600 "$shard" -c "$dir/$1.conf" >"$dir/$1.log" 2>&1 &
}

# Fresh appliances for every run: DPDK 22.11's memif server unmaps a
# leaving client's rings on its interrupt thread while the lcore may be
# inside the RX/TX burst (loadgen_memif_churn.sh, loadgen_memif_pmd_race.sh
# say how), so a loaded machine can crash an appliance that outlives a
# client; each run here is a new client.  Their logs are kept per run.
# NET_LCORES: network lcores (= queues) of each (LG_NET, default 1).
# Returns 1 (not an exit) when one did not come up.
start_appliances() {
	stop "$pa"
	stop "$pb"
	appliance a 198.18.4.2 0-1 on "$1"
	pa=$!
	appliance b 198.18.4.66 2-3 off "$1"
	pb=$!
	for _ in $(seq 600); do
		grep -q serving "$dir/a.log" && grep -q serving "$dir/b.log" &&
			return 0
		kill -0 "$pa" 2>/dev/null && kill -0 "$pb" 2>/dev/null ||
			return 1
		sleep 0.1
	done
	return 1
}

# Segfaults the kernel logged in the memif PMD so far (dmesg; 0 where it
# cannot be read: then no run is repeated for one).
memif_crashes() {
	dmesg 2>/dev/null | grep -c 'segfault.*librte_net_memif' || true
}

# Both appliances still run a second after the client left: the PMD's
# crash (above) comes as the client's memif disconnects. Checked only
# for a run whose appliances are read afterwards (LG_ALIVE set): the
# others are stopped at once, a crash then is harmless.
survived() {
	local i
	for i in $(seq 10); do
		kill -0 "$pa" 2>/dev/null && kill -0 "$pb" 2>/dev/null || return 1
		sleep 0.1
	done
}

A=198.18.4.2:8080
B=198.18.4.66:8080
n=0
# loadgen EXPECTED_EXIT ARGS...: one run over both links; sets $out.
# env: LG_EAL (our lcores, default -l 1), LG_NET (the appliances'
# network lcores, default 1).
loadgen() {
	local want=$1 rc=0 c0
	shift
	n=$((n + 1))
	out=$dir/run$n.log
	# Two faults of DPDK 22.11's net_memif, not ours, are retried, each
	# with fresh appliances, and said on stderr: a server sometimes
	# refuses the next client for a moment after the previous one left
	# (connect() on its socket fails, the port does not start: exit 1
	# before any traffic); and a server can crash in the PMD when a
	# client leaves or arrives (the kernel logs a segfault in
	# librte_net_memif.so: loadgen_memif_pmd_race.sh proves the race).
	# Any other failure fails the step.
	for try in 1 2 3 4 5; do
		rc=0
		# the last run's appliances may crash as they stop (its
		# client gone): not counted against this run
		stop "$pa"
		stop "$pb"
		c0=$(memif_crashes)
		if ! start_appliances "${LG_NET:-1}"; then
			if [ "$(memif_crashes)" -gt "$c0" ] && [ "$try" -lt 5 ]
			then
				echo "  [$step] an appliance crashed in" \
					"librte_net_memif at start, retry $try" >&2
				continue
			fi
			echo "an appliance did not come up" >&2
			return 1
		fi
		echo "\$ ffn-loadgen ${LG_EAL:--l 1} ... $*" >"$out"
		# shellcheck disable=SC2086 # LG_EAL: several EAL words
		timeout 60 "$lg" ${LG_EAL:--l 1} --no-pci --no-huge -m 512 \
			--file-prefix "fsb-lg-$$" \
			--vdev "net_memif0,role=client,socket=$dir/a.sock" \
			--vdev "net_memif1,role=client,socket=$dir/b.sock" \
			--log-level=pmd.net.memif:error \
			-- --ip 198.18.4.1/26 --ip 198.18.4.65/26 \
			--warmup 1 --duration 3 "$@" >>"$out" 2>&1 || rc=$?
		if [ "$rc" -eq 1 ] && grep -q 'Failed to connect socket' "$out"
		then
			echo "  [$step] memif connect refused, retry $try" >&2
		elif [ "$rc" -ne "$want" ] && [ "$(memif_crashes)" -gt "$c0" ]
		then
			echo "  [$step] an appliance crashed in librte_net_memif" \
				"during the run (exit $rc), retry $try" >&2
		elif [ -n "${LG_ALIVE:-}" ] && ! survived &&
			[ "$(memif_crashes)" -gt "$c0" ] && [ "$try" -lt 5 ]
		then
			# the step after this run reads the appliance's
			# telemetry: it must outlive its client
			echo "  [$step] an appliance crashed in librte_net_memif" \
				"as the client left, retry $try" >&2
		else
			break
		fi
		sleep 1
	done
	grep -E '^(requests|latency|token|errors|target|lcore|RESULT)' "$out" | \
		sed "s|^|  [$step] |"
	if [ "$rc" -ne "$want" ]; then
		echo "ffn-loadgen exited $rc, expected $want" >&2
		return 1
	fi
}
field() { sed -n "s/^RESULT.* $1=\([0-9.]*\).*/\1/p" "$out"; }

# Closed-loop binary runs: no error, work done, every answer validated.
check_clean() {
	[ "$(field errors)" = 0 ] || { echo "errors" >&2; return 1; }
	[ "$(field requests)" -gt 0 ] || { echo "no requests" >&2; return 1; }
	[ "$(field validated)" = "$(field requests)" ] ||
		{ echo "not every frame validated" >&2; return 1; }
}

step="f32 closed loop"
LG_ALIVE=1 loadgen 0 --target $A --connections 4 --wire f32 --layers 1
check_clean

step="telemetry /ffn/shard/stats"
# A's counters over DPDK telemetry, as run-all's concurrency section reads
# them (memif is not the kernel's: no /metrics from here). Every answer
# the run counted was served and computed (warm-up ones too: >=); the 4
# clients' rows went in passes of 1-4 rows.
tel=$(python3 "$top/tools/telemetry/ffn-tel.py" "fsb-a-$$" \
	/ffn/shard/stats,a)
echo "  [$step] $tel"
python3 - "$tel" "$(field requests)" <<'PY'
import json, sys
t, req = json.loads(sys.argv[1]), int(sys.argv[2])
assert t["shard"] == "a", t
assert t["requests_served"] >= req > 0, (t, req)
assert t["rows_computed"] >= t["requests_served"], t
assert 0 < t["compute_passes"] <= t["rows_computed"], t
assert sum(v for k, v in t.items() if k.startswith("batch_rows_")) == \
    t["compute_passes"], t
assert all(t[k] == 0 for k in ("batch_rows_le_8", "batch_rows_le_16",
    "batch_rows_le_32", "batch_rows_le_64", "batch_rows_more")), t
PY
rc=0
python3 "$top/tools/telemetry/ffn-tel.py" "fsb-a-$$" /ffn/shard/stats,nosuch \
	2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || { echo "unknown unit: exit $rc, want 2" >&2; false; }

step="f16 batch, f16 body"
loadgen 0 --target $A --connections 4 --wire f16 --request-wire f16 \
	--layers 0,1
check_clean

step="i8, i8 body, seq_len 3"
loadgen 0 --target $A --connections 4 --wire i8 --request-wire i8 \
	--seq-len 3 --layers 0
check_clean

step="fan-out over A and B"
loadgen 0 --layout "0-1=$A,2-3=$B" --connections 4 --wire f16
check_clean
[ "$(field tokens)" -gt 0 ]
# Every token is four requests, two to each shard, in layer order: per
# shard, twice the tokens, give or take the walks cut by the window's
# edges (at most 2 per client at each edge).
for t in $A $B; do
	r=$(sed -n "s/^target *$t requests \([0-9]*\)/\1/p" "$out")
	[ $(( r - 2 * $(field tokens) )) -le 8 ] &&
		[ $(( 2 * $(field tokens) - r )) -le 8 ] ||
		{ echo "target $t: $r requests for $(field tokens) tokens" >&2
		  false; }
done

step="open loop, 200/s"
loadgen 0 --target $A --connections 8 --rate 200 --layers 1
check_clean

step="GET /v1/health on both"
loadgen 0 --target $A --target $B --connections 4 --method GET \
	--path /v1/health
[ "$(field errors)" = 0 ]
[ "$(field requests)" -gt 0 ]

# Validation can fail: B has i8 off and answers i8 requests in f16
# (spec/wire.md §5.1), which is not the format asked for.
step="i8 of B is refused by validation"
loadgen 3 --target $B --connections 2 --wire i8 --layers 2 --duration 1
grep -Eq 'bad_ctype=[1-9]' "$out"
[ "$(field validated)" = 0 ]

# lcore_share QUEUE: the report line of our lcore on that queue carried
# connections and requests, without error.
lcore_share() {
	local line

	line=$(grep -E "^lcore +[0-9]+ +queue $1: " "$out") ||
		{ echo "no lcore on queue $1" >&2; return 1; }
	echo "$line" | grep -Eq 'requests [1-9][0-9]*, connects [1-9][0-9]*, errors 0$' ||
		{ echo "queue $1 idle or failing: $line" >&2; return 1; }
}

# Two lcores each, two queues per memif port.
step="two lcores, --verify-body"
LG_EAL="--lcores 1@1,2@0" LG_NET=2 loadgen 0 --target $A --connections 8 \
	--wire f16 --layers 0 --verify-body
check_clean
grep -q ', 2 lcores ==' "$out"
[ "$(field bodies)" = "$(field requests)" ]
lcore_share 0
lcore_share 1

step="two lcores, fan-out, --verify-body"
LG_EAL="--lcores 1@1,2@0" LG_NET=2 loadgen 0 --layout "0-1=$A,2-3=$B" \
	--connections 4 --wire f16 --verify-body
check_clean
[ "$(field tokens)" -gt 0 ]
[ "$(field bodies)" = "$(field requests)" ]
lcore_share 0
lcore_share 1

step="two lcores, open loop 200/s"
LG_EAL="--lcores 1@1,2@0" LG_NET=2 loadgen 0 --target $A --connections 8 \
	--rate 200 --layers 1
check_clean
lcore_share 0
lcore_share 1

# Expert layer batches on A (B as always): a hybrid-MoE vindex, experts
# 0-15 of both layers owned; num_experts and the owned range from
# GET /v1/expert/topology, hidden from /v1/stats. Each answer: 200, the
# negotiated Content-Type, 8 + vector bytes, its hidden field, and the
# values of the first answer to the same request.
"$mkv" --family gemma4 --hidden 512 --intermediate 256 --layers 2 \
	--experts 16 --expert-width 256 "$dir/moe" >/dev/null
for w in f32 f16; do
	step="experts layer-batch, $w answers, --verify-body"
	A_MODEL=$dir/moe A_EXPERTS=0-15 loadgen 0 --target $A \
		--connections 16 --experts-route layer-batch --wire $w \
		--expert-layer 0,1 --verify-body
	check_clean
	[ "$(field bodies)" = "$(field requests)" ]
	grep -q "answer $w, top-k 8 of 16 experts" "$out"
done

# The precision guard (spec/moe.md §7, the dense route too): down 10^6
# times larger, so every f16 answer would overflow and comes in f32.
# ffn-loadgen holds each to the f32 frame, counts it, and it is no error.
"$mkv" --hidden 256 --intermediate 1024 --layers 4 --family llama \
	--seed 7 --down-scale 1e6 "$dir/big" >/dev/null
step="precision guard: f16 asked, f32 answered"
A_MODEL=$dir/big loadgen 0 --target $A --connections 4 --wire f16 \
	--layers 1
check_clean
[ "$(field guard_f32)" = "$(field requests)" ] ||
	{ echo "not every answer was the guard's f32" >&2; false; }

step=done
echo "loadgen_memif.sh: OK"
