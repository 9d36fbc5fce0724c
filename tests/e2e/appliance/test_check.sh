#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# ffn-shard --check-static / --check (issue 4, "Config file"):
# - every shipped config (configs/, tools/pktgen/) passes --check-static;
# - a tap config with a real model passes --check (EAL starts: run in a
#   namespace of its own, fsa, so the tap device never reaches the host),
#   also as "ffn-shard [EAL args] -- --check -c FILE", whose EAL args
#   replace the file's [eal] args;
# - an AF_XDP config on a veth pair passes --check, which names the
#   interface, its queues and the XDP mode, and warns when queues stay
#   with the kernel; its bad variants fail on the key at fault;
# - a unit with join: --check says from which address each router is
#   reached, or why not now; warns of a grid key file others can read;
# - bad configs fail, each with one message that names FILE:LINE, the
#   [section] and the key (static errors, and runtime ones only EAL or
#   the model can find).
#
#   test_check.sh BUILD_DIR
set -euo pipefail
# expect runs last in a pipeline: keep its counters in this shell.
shopt -s lastpipe
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../../.." && pwd)
. "$HERE/lib.sh"
fsa_init check "${1:-build}"
fails=0
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

FSA_STEP="shipped configs"
for f in "$SRC"/configs/*.conf "$SRC"/tools/pktgen/*.conf; do
	if out=$(timeout 20 "$FSA_BIN" --check-static -c "$f" 2>&1); then
		echo "ok   --check-static $(basename "$f")"
	else
		bad "--check-static $(basename "$f"): $out"
	fi
done

FSA_STEP="model"
fsa_model "$FSA_DIR/m" --hidden 64 --features 128 --layers 6 \
	--model-type llama

# The good config; each bad one is it with one change.
good() {
	cat <<EOF
# a tap config for --check
[eal]
args = -l 0 --no-pci --no-huge -m 256 --file-prefix ${FSA_NAME}_chk --vdev net_tap0,iface=fsa0 --log-level=pmd.net.tap:error
[log]
level = notice
[port 0]
device = net_tap0
address = $FSA_IP/24
gateway = $FSA_PEER
[shard e2e]
model = $FSA_DIR/m
layers = 1-4
listen = 8080
net_lcores = 0
EOF
}

FSA_STEP="--check good"
good >"$FSA_DIR/good.conf"
if out=$(fsa_in timeout 60 "$FSA_BIN" --check -c "$FSA_DIR/good.conf" 2>&1) &&
	grep -q ": OK$" <<<"$out"; then
	echo "ok   --check on a tap config"
else
	bad "--check on a tap config: $out"
fi
if out=$(timeout 20 "$FSA_BIN" --check-static -c "$FSA_DIR/good.conf" 2>&1)
then
	echo "ok   --check-static on the tap config"
else
	bad "--check-static on the tap config: $out"
fi

# "ffn-shard [EAL args] -- -c FILE" (issue 4): the command line's EAL
# args replace [eal] args (README, "Deploy"). The good config that way,
# then one whose [eal] args EAL would refuse: it must pass all the same,
# since those args are not used; and a bad option on the command line
# must fail even though the file's args are good (no fallback).
FSA_STEP="--check with EAL args on the command line"
cli_eal=(-l 0 --no-pci --no-huge -m 256 --file-prefix "${FSA_NAME}_cli"
	--vdev net_tap0,iface=fsa0 --log-level=pmd.net.tap:error)
if out=$(fsa_in timeout 60 "$FSA_BIN" "${cli_eal[@]}" -- --check \
	-c "$FSA_DIR/good.conf" 2>&1) && grep -q ": OK$" <<<"$out"; then
	echo "ok   [EAL args] -- --check -c good.conf"
else
	bad "[EAL args] -- --check -c good.conf: $out"
fi
good | sed 's/^args = -l 0 /args = --no-such-eal-option -l 0 /' \
	>"$FSA_DIR/eal-bad.conf"
if out=$(fsa_in timeout 60 "$FSA_BIN" --check -c "$FSA_DIR/eal-bad.conf" \
	2>&1); then
	bad "--check with a bad option in [eal] args passed: $out"
elif ! out=$(fsa_in timeout 60 "$FSA_BIN" "${cli_eal[@]}" -- --check \
	-c "$FSA_DIR/eal-bad.conf" 2>&1) || ! grep -q ": OK$" <<<"$out"; then
	bad "[EAL args] -- --check: the command line's EAL args do not" \
		"replace a bad [eal] args: $out"
elif ! grep -q "^  eal: (command line, replaces \[eal\] args) -l 0 " \
	<<<"$out"; then
	bad "[EAL args] -- --check: the plan does not show the command" \
		"line's EAL args: $out"
else
	echo "ok   [EAL args] -- --check: the command line replaces [eal] args"
fi
if out=$(fsa_in timeout 60 "$FSA_BIN" --no-such-eal-option "${cli_eal[@]}" \
	-- --check -c "$FSA_DIR/good.conf" 2>&1); then
	bad "a bad EAL option on the command line passed: $out"
elif ! grep -q "^ffn-shard: EAL args on the command line: rte_eal_init" \
	<<<"$out"; then
	bad "a bad EAL option on the command line: the message does not" \
		"name the command line: $out"
else
	echo "ok   a bad EAL option on the command line fails: $(grep \
		"rte_eal_init failed" <<<"$out")"
fi

# expect MODE NAME SECTION KEY LINE_REGEX: FILE (stdin) must fail with
# one message naming FILE:LINE (LINE: the first line matching
# LINE_REGEX), [SECTION] and KEY (either may be empty).
n=0
expect() {
	local mode=$1 name=$2 section=$3 key=$4 re=$5 f line out rc=0
	n=$((n + 1))
	f=$FSA_DIR/bad$n-$mode.conf
	cat >"$f"
	line=$(grep -n -m1 -E "$re" "$f" | cut -d: -f1)
	if [ "$mode" = static ]; then
		out=$(timeout 20 "$FSA_BIN" --check-static -c "$f" 2>&1) ||
			rc=$?
	else
		out=$(fsa_in timeout 60 "$FSA_BIN" --check -c "$f" 2>&1) ||
			rc=$?
	fi
	msg=$(grep -F "$f:" <<<"$out" || true)
	if [ "$rc" -eq 0 ]; then
		bad "$name: --$mode passed (exit 0)"
	elif ! grep -qF "$f:$line:" <<<"$msg"; then
		bad "$name: no \"$f:$line:\" in: $out"
	elif [ -n "$section" ] && ! grep -qF "[$section]" <<<"$msg"; then
		bad "$name: no \"[$section]\" in: $msg"
	elif [ -n "$key" ] && ! grep -qF "$key" <<<"$msg"; then
		bad "$name: no key \"$key\" in: $msg"
	else
		echo "ok   $name: ${msg#*: }"
	fi
}

FSA_STEP="bad configs"
good | sed 's/^listen = 8080/lisen = 8080/' |
	expect static "unknown key" "shard e2e" lisen '^lisen'
good | sed 's/^listen = 8080/listen = 70000/' |
	expect static "listen out of range" "shard e2e" listen '^listen'
good | sed 's/^layers = 1-4/layers = 4-1/' |
	expect static "layers reversed" "shard e2e" layers '^layers'
good | sed 's/^\[shard e2e\]/[shrd e2e]/' |
	expect static "unknown section" "shrd e2e" "" '^\[shrd'
good | sed 's|^address = .*|address = 198.18.3.300/24|' |
	expect static "bad address" "port 0" address '^address'
good | sed '/^listen/d' |
	expect static "missing listen" "shard e2e" listen '^\[shard'
(good; echo "listen = 8081") |
	expect static "duplicate key" "shard e2e" listen '^listen = 8081'
(good; echo "api_key =") |
	expect static "empty api_key" "shard e2e" api_key '^api_key'
(good; echo "worker_lcores = 0-1") |
	expect static "lcore both network and worker" "shard e2e" \
		worker_lcores '^worker_lcores'
(good; echo "port = 3") |
	expect static "no such port section" "shard e2e" port '^port = 3'
(good; echo "max_body = 12X") |
	expect static "bad size" "shard e2e" max_body '^max_body'
(good; echo "i8 = maybe") |
	expect static "bad boolean" "shard e2e" i8 '^i8'
(good; echo "garbage line") |
	expect static "not key = value" "" "" '^garbage'
(good; printf '[shard two]\nmodel = %s\nlayers = 3-5\nlisten = 8081\nnet_lcores = 0\n' "$FSA_DIR/m") |
	expect static "overlapping layer ranges of one model" "shard two" \
		layers '^layers = 3-5'
# Runtime: only EAL and the model know.
good | sed 's/^layers = 1-4/layers = 1-9/' |
	expect runtime "layers beyond the model" "shard e2e" layers '^layers'
good | sed "s|^model = .*|model = $FSA_DIR/nope|" |
	expect runtime "no model" "shard e2e" model '^model'
(good; echo "worker_lcores = 1") |
	expect runtime "worker lcore not run by EAL" "shard e2e" \
		worker_lcores '^worker_lcores'
good | sed 's/^device = net_tap0/device = net_tap7/' |
	expect runtime "no such device" "port 0" device '^device'
# Experts (issue 23): the model (llama) is no hybrid MoE; a units file
# that does not read; both keys at once.
(good; echo "experts = 0-3") |
	expect runtime "experts of a dense model" "shard e2e" model '^model'
(good; echo "expert_units = $FSA_DIR/nope.json") |
	expect runtime "expert_units on a dense model" "shard e2e" model \
		'^model'
(good; echo "experts = 0-3"; echo "expert_units = u.json") |
	expect static "experts and expert_units" "shard e2e" expert_units \
		'^expert_units'
good | sed '/^layers/d' |
	expect static "no layers and no experts" "shard e2e" layers \
		'^\[shard'

# The grid (issue 20): --check says from which address each router is
# reached (the kernel's route: lo here), or why it is not reachable now
# (still OK: the unit keeps trying while it serves); a key that does not
# read fails on grid_key; an https router fails statically.
FSA_STEP="grid --check"
fsa_in ip link set lo up
(good; echo "join = http://127.0.0.1:50052, http://198.19.255.1:50052") \
	>"$FSA_DIR/grid.conf"
if out=$(fsa_in timeout 60 "$FSA_BIN" --check -c "$FSA_DIR/grid.conf" \
	2>&1) && grep -q ": OK$" <<<"$out" &&
	grep -qF "[shard e2e] grid: http://127.0.0.1:50052 is reached from 127.0.0.1 over the kernel's network" <<<"$out" &&
	grep -qF "[shard e2e] grid: http://198.19.255.1:50052 is not reachable now (connect: Network is unreachable); the unit will keep trying" <<<"$out" &&
	grep -qF "    grid: joins http://127.0.0.1:50052, http://198.19.255.1:50052 as http://$FSA_IP:8080; key none; heartbeat 10000 ms" <<<"$out"
then
	echo "ok   --check with join: $(grep -F "is reached from" <<<"$out")"
else
	bad "--check with join: $out"
fi
echo "s3cret" >"$FSA_DIR/gridkey"
chmod 644 "$FSA_DIR/gridkey"
(good; echo "join = http://127.0.0.1:50052"; echo "grid_key = file:$FSA_DIR/gridkey") \
	>"$FSA_DIR/grid-key.conf"
if out=$(fsa_in timeout 60 "$FSA_BIN" --check -c "$FSA_DIR/grid-key.conf" \
	2>&1) && grep -q ": OK$" <<<"$out" &&
	grep -qF "[shard e2e] grid_key: warning: $FSA_DIR/gridkey is readable by every user (chmod o-r)" <<<"$out" &&
	chmod 600 "$FSA_DIR/gridkey" &&
	out2=$(fsa_in timeout 60 "$FSA_BIN" --check -c "$FSA_DIR/grid-key.conf" \
	2>&1) && grep -q ": OK$" <<<"$out2" && ! grep -q "warning" <<<"$out2"
then
	echo "ok   --check warns of a grid key file every user can read"
else
	bad "grid key file modes: ${out:-} ${out2:-}"
fi
(good; echo "join = http://127.0.0.1:50052"; echo "grid_key = env:FFN_NO_SUCH_VAR") |
	expect runtime "grid_key from an unset variable" "shard e2e" \
		grid_key '^grid_key'
(good; echo "join = http://127.0.0.1:50052"; echo "grid_key = file:$FSA_DIR/nokey") |
	expect runtime "grid_key from a missing file" "shard e2e" \
		grid_key '^grid_key'
(good; echo "join = https://127.0.0.1:50052") |
	expect static "https router" "shard e2e" join '^join'

# AF_XDP (issue 17): --check reads the kernel interface behind the port.
# fsax0 is one end of a veth pair with one RX queue, fsaq0 of one with
# two. Good: the port line and the XDP mode (the kernel says it from
# Linux 6.3: "native (driver veth)"); queues 0-0 of fsaq0's two: a
# warning that flows hashed to queue 1 stay with the kernel. Bad: a
# queue the interface lacks, an mtu above the interface's, one above
# what the PMD takes, queue_count unlike the port's queues.
FSA_STEP="AF_XDP --check"
fsa_in ip link add fsax0 type veth peer name fsax1
fsa_in ip link add fsaq0 numrxqueues 2 numtxqueues 2 type veth peer name \
	fsaq1 numrxqueues 2 numtxqueues 2
for d in fsax0 fsax1 fsaq0 fsaq1; do fsa_in ip link set "$d" up; done
xdp_good() {
	good | sed -e "s|--vdev net_tap0,iface=fsa0 --log-level=pmd.net.tap:error|--vdev net_af_xdp0,iface=${1:-fsax0},start_queue=0,queue_count=1|" \
		-e 's/^device = net_tap0/device = net_af_xdp0/'
}
kmaj=$(uname -r | cut -d. -f1)
kmin=$(uname -r | cut -d. -f2)
if [ "$kmaj" -gt 6 ] || { [ "$kmaj" -eq 6 ] && [ "$kmin" -ge 3 ]; }; then
	want_mode="XDP mode: native (driver veth)"
else
	want_mode="XDP mode: native if driver veth implements XDP"
fi
xdp_good >"$FSA_DIR/xdp.conf"
if out=$(fsa_in timeout 60 "$FSA_BIN" --check -c "$FSA_DIR/xdp.conf" 2>&1) &&
	grep -q ": OK$" <<<"$out" &&
	grep -q "^  port 0: net_af_xdp on fsax0 (ifindex [0-9]*, driver veth): queues 0-0 of 1, MTU 1500 (interface 1500" <<<"$out" &&
	grep -qF "$want_mode" <<<"$out" && ! grep -q "warning" <<<"$out"; then
	echo "ok   --check on an AF_XDP config: $(grep "XDP mode" <<<"$out")"
else
	bad "--check on an AF_XDP config (want \"$want_mode\"): $out"
fi
xdp_good fsaq0 >"$FSA_DIR/xdp2.conf"
if out=$(fsa_in timeout 60 "$FSA_BIN" --check -c "$FSA_DIR/xdp2.conf" \
	2>&1) && grep -q ": OK$" <<<"$out" &&
	grep -q "queues 0-0 of 2" <<<"$out" &&
	grep -q "warning: fsaq0's queues outside 0-0 stay with the kernel" \
	<<<"$out"; then
	echo "ok   AF_XDP on 1 of 2 queues: $(grep -o "warning: .*kernel" \
		<<<"$out")"
else
	bad "AF_XDP on 1 of 2 queues: no warning: $out"
fi
xdp_good | sed 's/start_queue=0/start_queue=1/' |
	expect runtime "AF_XDP queue the interface lacks" "port 0" device \
		'^device'
xdp_good | sed 's/iface=fsax0/iface=fsanone0/' |
	expect runtime "AF_XDP on a missing interface" "port 0" \
		"did not probe" '^device'
good_mtu() { sed "/^gateway/a mtu = $1"; }
xdp_good | good_mtu 3000 |
	expect runtime "AF_XDP mtu above the interface's" "port 0" mtu '^mtu'
fsa_in ip link set fsax0 mtu 9000
xdp_good | good_mtu 9000 |
	expect runtime "AF_XDP mtu above the PMD's" "port 0" mtu '^mtu'
fsa_in ip link set fsax0 mtu 1500
xdp_good fsaq0 | sed -e 's/^args = -l 0 /args = -l 0-1 /' \
	-e 's/^net_lcores = 0/net_lcores = 0-1/' |
	expect runtime "AF_XDP queue_count unlike the port's queues" "port 0" \
		device '^device'

FSA_STEP=done
if [ "$fails" -ne 0 ]; then
	echo "test_check.sh: $fails FAILED"
	exit 1
fi
echo "test_check.sh: ok"
