#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The pktgen kit in DPDK Pktgen itself (issue 16): the command lines of
# tools/pktgen/README.md, section "Without a NIC", run as written, block
# by block (<!-- tap:NAME --> marks each), with Pktgen 23.06.1 built from
# tools/pktgen/vendor (build-pktgen.sh, cached in BUILD_DIR/pktgen) and
# found on PATH through tests/e2e/pktgen/pktgen, which gives it a terminal
# and quits it after the script's "<name>: done" line.
#
# For every script it asserts what the README claims: no Lua error, the
# script ends, every pcap loads whole (Pktgen's "for N packets" equals
# the frames mkpcap wrote), and the appliance's counters move as stated;
# the malformed kinds are the README's own table (each kind that crosses
# Pktgen raises its counter). Then the service through a SYN flood:
# verified ffn-client calls (a new connection each, SCHED_FIFO on CPU 1
# beside Pktgen) without and during a flood, each answer checked against
# a local recomputation; p50/p99, SYN retransmissions and the tap queue's
# drops are printed, not asserted (timing targets belong to benchmarks:
# docs/PERFORMANCE.md). Last, the appliance still answers ping and a
# verified call, and exits 0 on SIGTERM.
#
# Namespace fss, 198.18.5.0/24, EAL file prefixes fss and pg (the
# README's). Root. About 2 minutes.
#
# PKTGEN_KIT_LAYOUT=xdp runs the README's AF_XDP variant: its xdp:setup
# and xdp:teardown blocks (the appliance on net_af_xdp on a veth pair),
# every other block as it is.
#
# usage: pktgen_kit.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:?usage: pktgen_kit.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tests/e2e
readme=$top/tools/pktgen/README.md
work=$(mktemp -d /tmp/pktgen-kit.XXXXXX)
step=start

fail() {
	echo "pktgen_kit.sh: FAIL ($step): $*" >&2
	exit 1
}

cleanup() {
	local rc=$?
	[ "$rc" -ne 0 ] && [ -f /tmp/fss.log ] && tail -20 /tmp/fss.log >&2
	pkill -f 'appliance-pktgen-(tap|xdp).conf' 2>/dev/null || true
	pkill -f 'file-prefix pg' 2>/dev/null || true
	sleep 0.5
	ip netns del fss 2>/dev/null || true
	rm -rf "$work" /var/run/dpdk/pg /var/run/dpdk/fss
	exit "$rc"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || fail "needs root (namespaces, DPDK)"
cd "$top"	# the README's command lines run from the repository root
if ip netns list | grep -qw fss; then
	fail "namespace fss exists: another run of the kit is up"
fi

step="build Pktgen"
pgbin=$("$top/tools/pktgen/build-pktgen.sh" "$build/pktgen")
[ -x "$pgbin" ] || fail "no Pktgen binary"
export PKTGEN_BIN=$pgbin
export PATH=$here/pktgen:$PATH
export FFN_SECONDS=4

# The README's paths are those of the default build directory, build/;
# for another BUILD_DIR the blocks and the config they name are pointed
# at it (a copy of the config in $work).
layout=${PKTGEN_KIT_LAYOUT:-tap}
case $layout in tap|xdp) ;; *) fail "PKTGEN_KIT_LAYOUT=$layout: tap or xdp" ;; esac
conf=tools/pktgen/appliance-pktgen-$layout.conf
if [ "$build" != "$top/build" ]; then
	sed "s#= build/#= $build/#" "$conf" >"$work/${conf##*/}"
	conf_sub="s#$conf#$work/${conf##*/}#g"
else
	conf_sub=""
fi

# The fenced block after <!-- tap:NAME --> (<!-- xdp:NAME --> for the
# set-up and tear-down of the AF_XDP layout).
block() {
	local m=tap
	case $1 in setup|teardown) m=$layout ;; esac
	awk -v m="<!-- $m:$1 -->" '
		$0 == m { on = 1; next }
		on && /^```sh/ { inb = 1; next }
		inb && /^```/ { exit }
		inb { print }' "$readme" |
		sed -e "$conf_sub" -e "s#\\bbuild/#$build/#g"
}

# Runs block NAME in this shell (its variables stay), output to
# $work/NAME.out; Pktgen's to $work/NAME.pg(.txt).
run_block() {
	local b
	b=$(block "$1")
	[ -n "$b" ] || fail "README has no block for $1 ($layout layout)"
	export PKTGEN_LOG=$work/$1.pg
	eval "$b" >"$work/$1.out" 2>&1 ||
		{ cat "$work/$1.out" "$PKTGEN_LOG.txt" >&2 2>/dev/null;
		  fail "block $1 failed ($layout layout)"; }
}

in_ns() { ip netns exec fss "$@"; }
metrics() { in_ns curl -sf --max-time 5 http://198.18.5.2:8080/metrics; }
# Sum of the metric lines starting with $1 (name and labels prefix).
# From one /metrics snapshot ($2, a file) if given, else a fresh one.
metric() {
	{ if [ -n "${2:-}" ]; then cat "$2"; else metrics; fi; } |
		awk -v k="$1" 'index($0, k) == 1 { s += $NF } END { print s + 0 }'
}

# The kit script's own output: no Lua error, its done line.
check_script() {
	local name=$1 log=$work/$1.pg.txt
	grep -aq "Executing 'tools/pktgen/$name.lua'" "$log" ||
		fail "$name: Pktgen did not run the script"
	if grep -aE "lua-shell:|stack traceback|attempt to|Error:" "$log"; then
		fail "$name: Lua error"
	fi
	grep -aq "^$name: done" "$log" || fail "$name: the script did not end"
	grep -aq "FAILED" "$log" && { grep -a FAILED "$log"; fail "$name: FAILED"; }
	grep -a "^$name" "$log" | tail -3
}

# Every frame of the pcap mkpcap wrote ("PATH: N frames") was loaded.
check_pcap() {
	local name=$1 want got
	want=$(sed -n 's/^[^ ]*\.pcap: \([0-9]*\) frames.*/\1/p' "$work/$name.out" | tail -1)
	got=$(sed -n 's/.*Number of MBUFs *[0-9]* for *\([0-9]*\) packets.*/\1/p' \
		"$work/$name.pg.txt" | tail -1)
	[ -n "$want" ] && [ "$want" = "$got" ] ||
		fail "$name: pcap of ${want:-?} frames, Pktgen loaded ${got:-none}"
	echo "$name: pcap loaded whole ($got frames)"
}

rose() {	# rose LABEL BEFORE AFTER [MIN]
	[ "$3" -ge $(($2 + ${4:-1})) ] ||
		fail "$1 did not rise by ${4:-1} ($2 -> $3)"
}

step="set-up"
run_block setup
app=$!		# the setup block's last background job: ffn-shard
[[ "$MAC" =~ ^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$ ]] ||
	fail "the appliance logged no MAC (got '$MAC')"
for _ in $(seq 50); do
	metrics >/dev/null 2>&1 && break
	sleep 0.2
done
metrics >/dev/null || fail "the appliance does not answer /metrics"
echo "appliance up, MAC $MAC"

step="reachability"
a0=$(metric 'ffn_net_total{counter="arp_req_answered"}')
e0=$(metric 'ffn_net_total{counter="icmp_echo_tx"}')
b0=$(metric 'ffn_net_total{counter="drop_icmp_bad"}')
run_block reachability
check_script reachability
check_pcap reachability
grep -aq '^reachability: OK' "$work/reachability.pg.txt" || fail "not OK"
grep -aiq "is at $MAC" "$work/reachability.pg.txt" ||
	fail "the ARP reply did not carry the logged MAC"
rose arp_req_answered "$a0" "$(metric 'ffn_net_total{counter="arp_req_answered"}')"
rose icmp_echo_tx "$e0" "$(metric 'ffn_net_total{counter="icmp_echo_tx"}')" 10
[ "$(metric 'ffn_net_total{counter="drop_icmp_bad"}')" = "$b0" ] ||
	fail "echo requests were dropped as bad ICMP"

# Before any SYN flood (range_flood, malformed): no recent backlog
# overflow, so bare ACKs count as no_conn, as the README's table says.
step="range_flood"
n0=$(metric 'ffn_tcp_drops_total{lcore="0",reason="no_conn"}')
c0=$(metric 'ffn_tcp_drops_total{lcore="0",reason="bad_cookie"}')
run_block range_flood
check_script range_flood
rose 'no_conn drops' "$n0" "$(metric 'ffn_tcp_drops_total{lcore="0",reason="no_conn"}')" 1000
[ "$(metric 'ffn_tcp_drops_total{lcore="0",reason="bad_cookie"}')" = "$c0" ] ||
	fail "ACKs were checked as cookies without a backlog overflow"

step="malformed"
# The README's table: kinds that cross Pktgen, and their counters.
mapfile -t rows < <(sed -n '/<!-- kinds:begin -->/,/<!-- kinds:end -->/p' "$readme" |
	awk -F' \\| ' '/^\| `/ && $4 ~ /^yes/ { print $1 " " $3 }' | tr -d '`|' |
	sed 's/^ *//')
[ "${#rows[@]}" -ge 20 ] || fail "the README's kinds table has ${#rows[@]} sendable rows"
declare -A before
counter_key() {	# drop_x -> its metric prefix; ffn_tcp_... as is; none
	case $1 in
	none) echo "" ;;
	ffn_*) echo "$1" | sed 's/{reason=/{lcore="0",reason=/' ;;
	*) echo "ffn_net_total{counter=\"$1\"}" ;;
	esac
}
for r in "${rows[@]}"; do
	k=$(counter_key "$(echo "$r" | awk '{print $2}')")
	[ -n "$k" ] && before[$k]=$(metric "$k")
done
run_block malformed
check_script malformed
check_pcap malformed
for r in "${rows[@]}"; do
	kind=$(echo "$r" | awk '{print $1}')
	k=$(counter_key "$(echo "$r" | awk '{print $2}')")
	[ -n "$k" ] || continue
	rose "$kind: $k" "${before[$k]}" "$(metric "$k")"
done
echo "malformed: every kind's counter rose (${#rows[@]} kinds)"

step="syn_flood"
s0=$(metric 'ffn_tcp_syncookies_total')
k0=$(metric 'ffn_tcp_drops_total{lcore="0",reason="backlog"}')
run_block syn_flood
check_script syn_flood
check_pcap syn_flood
sleep 1		# what the tap still held is read by now
metrics >"$work/snap"
s1=$(metric 'ffn_tcp_syncookies_total' "$work/snap")
rose syncookies "$s0" "$s1" 1000
k1=$(metric 'ffn_tcp_drops_total{lcore="0",reason="backlog"}' "$work/snap")
[ $((k1 - k0)) = $((s1 - s0)) ] ||
	fail "cookies sent ($((s1 - s0))) and backlog drops ($((k1 - k0))) differ"
synrcvd=$(metric 'ffn_tcp_connections{lcore="0",state="SYN_RECEIVED"}' "$work/snap")
[ "$synrcvd" = 128 ] || fail "SYN_RECEIVED is $synrcvd, not the backlog (128)"
echo "syn_flood: $((s1 - s0)) cookies, SYN_RECEIVED at the backlog (128)"

step="replay"
w0=$(metric 'ffn_requests_total{shard="pktgen",route="walk-ffn"')
d0=$(( $(metric 'ffn_tcp_drops_total{lcore="0",reason="no_conn"}') +
       $(metric 'ffn_tcp_drops_total{lcore="0",reason="bad_cookie"}') ))
run_block replay
check_script replay
check_pcap replay
[ "$(metric 'ffn_requests_total{shard="pktgen",route="walk-ffn"')" = "$w0" ] ||
	fail "a replayed session was served"
rose 'no_conn + bad_cookie drops' "$d0" \
	"$(( $(metric 'ffn_tcp_drops_total{lcore="0",reason="no_conn"}') +
	     $(metric 'ffn_tcp_drops_total{lcore="0",reason="bad_cookie"}') ))" 100

# Served through a SYN flood: N verified calls, a new connection each,
# one every 0.2 s. FIFO priority: the caller, not Pktgen's polling lcore,
# has CPU 1 when it is runnable.
calls() {	# calls N TAG -> $work/TAG.ms: "wall server" ms per call
	in_ns chrt -f 20 taskset -c 1 bash -c '
		for i in $(seq "$1"); do
			"$2/tools/client/ffn-client" http://198.18.5.2:8080 \
				--layer 1 --random "$i" --hidden 256 \
				--verify "$2/pktgen-model" --max-err 1e-4 \
				>"$3/call.out" 2>&1 || { cat "$3/call.out"; exit 1; }
			sed -n "s/.*server \([0-9.]*\) ms *wall \([0-9.]*\) ms.*/\2 \1/p" \
				"$3/call.out"
			sleep 0.2
		done' calls "$1" "$build" "$work" >>"$work/$2.ms" ||
		{ metrics | grep -E '^ffn_tcp_(drops|resets|syncookies)' >&2;
		  fail "a verified call failed ($2)"; }
	[ "$(wc -l <"$work/$2.ms")" -ge "$1" ] || fail "calls missing ($2)"
}
pct() {	# pct FILE COLUMN P
	awk -v c="$2" '{ print $c }' "$1" | sort -g | awk -v p="$3" '
		{ v[NR] = $1 } END { i = int((NR - 1) * p / 100 + 0.5) + 1; print v[i] }'
}
synretrans() { in_ns nstat -az TcpExtTCPSynRetrans | awk '/SynRetrans/ { print $2 }'; }
# Frames lost on the way to the appliance: the tap's full queue (fss0's
# TX), or on AF_XDP the veth's receive side (fssx0's RX: its ring full
# while its NAPI, in the softirq of the sender's CPU, had no turn).
tapdrops() {
	if [ "$layout" = xdp ]; then
		in_ns cat /sys/class/net/fssx0/statistics/rx_dropped
	else
		in_ns cat /sys/class/net/fss0/statistics/tx_dropped
	fi
}

ncalls=${PKTGEN_KIT_CALLS:-30}
step="calls without a flood"
sr0=$(synretrans)
calls "$ncalls" base
# One row per flood rate (PKTGEN_KIT_FLOOD_RATE: % of Pktgen's 10 Gbit/s
# line, a list for a table; 0.25 is about 33 000 SYN/s).
dcol="tap drops"
[ "$layout" = xdp ] && dcol="veth drops"
echo "| flood | SYN/s sent | wall p50 | wall p99 | appliance p50 | appliance p99 | SYN retransmits | $dcol |"
echo "|---|---|---|---|---|---|---|---|"
printf '| none | 0 | %s | %s | %s | %s | %s | 0 |\n' \
	"$(pct "$work/base.ms" 1 50)" "$(pct "$work/base.ms" 1 99)" \
	"$(pct "$work/base.ms" 2 50)" "$(pct "$work/base.ms" 2 99)" \
	"$(( $(synretrans) - sr0 ))"
for rate in ${PKTGEN_KIT_FLOOD_RATE:-0.25}; do
	step="calls during a SYN flood at $rate%"
	export PKTGEN_LOG=$work/flood-$rate.pg
	PKTGEN_TIMEOUT=$((ncalls / 3 + 60)) FFN_SECONDS=$((ncalls / 3 + 6)) \
	FFN_RATE=$rate in_ns pktgen $PG -- \
		-P -m 1.0 -s 0:/tmp/synflood.pcap -f tools/pktgen/syn_flood.lua \
		>/dev/null 2>&1 &
	flood=$!
	for _ in $(seq 100); do
		grep -aq 'syn_flood   1s' "$PKTGEN_LOG" 2>/dev/null && break
		sleep 0.2
	done
	grep -aq 'syn_flood   1s' "$PKTGEN_LOG" || fail "the flood did not start"
	sr1=$(synretrans)
	td0=$(tapdrops)
	rm -f "$work/flood.ms"
	calls "$ncalls" flood
	td1=$(tapdrops)
	sr2=$(synretrans)
	wait "$flood" || fail "Pktgen's flood run failed"
	pps=$(sed -n 's/^syn_flood   3s: tx \([0-9]*\) pps.*/\1/p' "$PKTGEN_LOG.txt")
	printf '| %s%% | %s | %s | %s | %s | %s | %s | %s |\n' "$rate" "${pps:-?}" \
		"$(pct "$work/flood.ms" 1 50)" "$(pct "$work/flood.ms" 1 99)" \
		"$(pct "$work/flood.ms" 2 50)" "$(pct "$work/flood.ms" 2 99)" \
		"$((sr2 - sr1))" "$((td1 - td0))"
	sleep 1
done
echo "(ms; $ncalls verified calls per row, a new connection each; wall: ffn-client's, appliance: the server time in its answer)"

step="after"
in_ns ping -c 2 -W 2 198.18.5.2 >/dev/null || fail "no ping answer"
calls 3 after
run_block teardown
for _ in $(seq 50); do
	pgrep -f "appliance-pktgen-$layout.conf" >/dev/null || break
	sleep 0.2
done
rc=0
wait "$app" || rc=$?
[ "$rc" = 0 ] || fail "the appliance exited $rc on SIGTERM"
echo "pktgen_kit.sh: OK"
