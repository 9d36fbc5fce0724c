#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The pktgen stress of issue 5 ("pktgen kit"), in CI, where DPDK pktgen is
# not installable: the appliance on net_tap in a namespace of its own
# (prefix fss, 198.18.5.0/24, tests/e2e/appliance/lib.sh), blasted from the
# kernel side of its tap by stress_blast.py (the frames of
# tools/pktgen/mkpcap.py: a SYN flood from spoofed sources, every malformed
# kind), while ffn-loadgen, our DPDK load generator on our own TCP stack,
# measures the service: a closed loop of LARQL walk-ffn requests whose
# every answer must be the right one.
#
#   198.18.5.1  kernel side, on the bridge fssbr (curl for /metrics)
#   198.18.5.2  the appliance (net_tap fss0, polls lcore 0)
#   198.18.5.3  ffn-loadgen (net_af_packet on the veth fssl0, lcore 1)
#   .10-.250    the blaster's spoofed SYN sources (raw frames on fss0)
#
# Core budget, 2 cores: the appliance polls core 0; ffn-loadgen polls core
# 1 and the blaster runs on core 1 too, so under stress the two share it
# (the blaster's achieved rate is printed; the load generator's own wait
# for the CPU is in the latencies: one more reason not to assert timing
# targets here).
#
# The run: a baseline window without stress, then the same window while
# the blaster sends each stress kind: SYN flood alone, malformed frames
# alone, both mixed; then a short window after.
#
# Asserts:
#  - every window: ffn-loadgen exit 0 (no connect/reset/timeout/HTTP/
#    frame error of any kind), requests served, and every answer validated
#    (frame fields, §5.2) and its values agreeing with the baseline's first
#    answer (--verify-body, --body-ref; within f32 rounding, not bit for
#    bit: the appliance batches concurrent requests' rows into one matrix
#    product, which changes the summation order); that reference itself
#    agrees with pyref (stress_ref.py); and ffn-loadgen does report
#    answers that do not agree (against a corrupted copy of the reference);
#  - "p99 stays bounded": under every stress kind p99 < FSS_P99_BOUND_MS
#    [1000 ms]. Served requests here take about a millisecond, tens on a
#    busy shared machine; a request that waited for TCP to recover a lost
#    segment by timeout waits at least rto_min (200 ms) and usually the
#    initial RTO of 1 s (RFC 6298 2.1; lib/net/tcp), and one whose
#    connection was lost waits for --timeout (10 s) and counts as an error.
#    So a p99 over 1 s means at least 1 % of the requests stalled on
#    retransmission timeouts, i.e. the stress cost real losses, not just
#    CPU time. One exception: on a machine so busy that the baseline
#    itself (no stress) stalled past the bound (processes descheduled for
#    longer than an RTO: spurious retransmissions), the bound becomes
#    twice the baseline's p99, and says so. The ratio to the baseline's
#    p99 of the same run is printed, not asserted (timing targets belong
#    to benchmarks);
#  - the appliance is alive after the stress (serves, answers ping) and
#    exits 0 on SIGTERM;
#  - /metrics saw the stress: SYN cookies and every drop counter that
#    mkpcap.EXPECT lists for the kinds sent increased.
#
# usage: stress_tap.sh BUILD_DIR [WINDOW_SECONDS]
# Exploration knobs (the defaults are the CI run): FSS_KINDS (comma list
# of mkpcap.py kinds), FSS_ROUNDS, FSS_SYN_SHARE (of the mixed kind),
# FSS_PPS [2000 frames/s: what the appliance keeps up with on one core of
# a 2-core machine shared with builds. Each spoofed SYN costs it a SYN
# cookie, a SYN-ACK and an ARP request (flooded by the bridge); when it
# falls behind, the tap's queue overflows and ffn-loadgen's segments are
# lost with the flood's: RTOs, p99 of seconds. Seen there at 5000/s once
# in four runs, at 20000/s always; on idle cores 20000/s is served],
# FSS_CONNECTIONS, FSS_P99_BOUND_MS, FSS_NICE [-5; empty: default].
set -euo pipefail

FSA_PFX=fss
FSA_NET=198.18.5
# The appliance and ffn-loadgen at a higher priority than the builds this
# machine may be running (not than the blaster: it runs at the default):
# starved of CPU, the appliance lets its tap's queue overflow with the
# flood at any rate, and that measures the machine, not the appliance.
FSA_NICE=${FSS_NICE--5}
. "$(dirname "$0")/appliance/lib.sh"
fsa_init tap "${1:?usage: stress_tap.sh BUILD_DIR [WINDOW_SECONDS]}"
win=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
py=$FSA_PY		# numpy (pyref)
spy=/usr/bin/python3	# scapy, from Debian's python3-scapy
pktgen=$here/../../tools/pktgen
url=http://$FSA_IP:8080
dir=$FSA_DIR
bound_ms=${FSS_P99_BOUND_MS:-1000}
kinds=${FSS_KINDS:-$($spy -c "import sys; sys.path.insert(0, '$pktgen')
import mkpcap; print(','.join(mkpcap.KINDS))")}
# ffn-loadgen's load: closed loop, f32 answers, layer 1 of 4.
# --timeout 10 s: a request not answered then is an error (a lost
# connection), not a slow one, even on a starved machine.
lg_args=(--connections "${FSS_CONNECTIONS:-8}" --hidden 256 --layers 1
	--wire f32 --warmup 1 --duration "$win" --timeout 10000)

fsa_on_fail() {
	local f
	for f in "$dir"/lg-*.out "$dir"/blast-*.json; do
		[ -f "$f" ] || continue
		echo "--- $f (last 15 lines):"
		tail -n 15 "$f"
	done
}

metrics() { fsa_client 10 curl -sf "$url/metrics"; }
# Sum of every series whose line starts with $1 (a name plus labels prefix).
mval() {
	awk -v k="$1" 'index($0, k) == 1 { s += $NF } END { printf "%d\n", s }' "$2"
}

# Frames the kernel could not queue to the appliance (its tap's queue was
# full: the appliance did not read them in time), since the last window.
txdrop_last=0

# check_window NAME: ffn-loadgen's run NAME was clean and every answer
# right; prints its figures.
check_window() {
	local out=$dir/lg-$1.out r v b n
	grep -E '^(requests|latency|errors|validated|bodies|port|  +drop)' \
		"$out" | sed "s/^/  [$1] /"
	n=$(fsa_in cat "/sys/class/net/$FSA_IF/statistics/tx_dropped")
	echo "  [$1] frames to the appliance dropped at its tap's full queue:" \
		"$((n - txdrop_last))"
	txdrop_last=$n
	r=$(fsa_result requests "$out")
	v=$(fsa_result validated "$out")
	b=$(fsa_result bodies "$out")
	[ "$(fsa_result errors "$out")" = 0 ] ||
		{ echo "[$1] ffn-loadgen saw errors" >&2; return 1; }
	[ "${r:-0}" -gt 0 ] || { echo "[$1] no request served" >&2; return 1; }
	[ "$v" = "$r" ] && [ "$b" = "$r" ] ||
		{ echo "[$1] $r requests, $v frames validated, $b bodies" \
			"agreeing with the reference" >&2; return 1; }
}

FSA_STEP="model"
"$FSA_BUILD/tools/mkvindex/mkvindex" --hidden 256 --intermediate 512 \
	--layers 4 --family llama "$dir/model" >/dev/null
fsa_conf "$dir/shard.conf" "$dir/model" 0-3 max_connections=256
fsa_start "$dir/shard.conf"
FSA_STEP="appliance's MAC"
mac=$(fsa_in ip neigh show "$FSA_IP" dev "$FSA_IF" | awk '{ print $3 }')
[ -n "$mac" ]
fsa_bridge
# Room for the jumbo kind (frames beyond the appliance's MTU) on the tap
# the blaster sends on; after the port is up, since the tap PMD sets the
# MTU when it starts.
fsa_in ip link set "$FSA_IF" mtu 9000

FSA_STEP="baseline"
echo "baseline: ${win} s closed loop, no stress"
fsa_loadgen $((win + 60)) "$dir/lg-baseline.out" "${lg_args[@]}" \
	--verify-body --save-body "$dir/ref.bin"
check_window baseline
FSA_STEP="reference answer against pyref"
fsa_client 120 "$py" "$here/stress_ref.py" --model "$dir/model" \
	--body "$dir/ref.bin" --layer 1 --hidden 256
FSA_STEP="a wrong answer is caught"
# The verification can fail: against a reference whose first value is off
# by the row's largest magnitude, every answer is bad_body (exit 3).
"$py" - "$dir/ref.bin" "$dir/wrong.bin" <<'EOF'
import sys
import numpy as np
b = bytearray(open(sys.argv[1], "rb").read())
v = np.frombuffer(bytes(b[12:]), dtype="<f4").copy()
v[0] += np.abs(v).max()
b[12:] = v.astype("<f4").tobytes()
open(sys.argv[2], "wb").write(bytes(b))
EOF
rc=0
fsa_loadgen 60 "$dir/lg-wrong.out" --connections 2 --hidden 256 --layers 1 \
	--wire f32 --warmup 0 --duration 1 --body-ref "$dir/wrong.bin" || rc=$?
grep -E '^(errors|bodies)' "$dir/lg-wrong.out" | sed 's/^/  [wrong] /'
[ "$rc" -eq 3 ] && grep -Eq 'bad_body=[1-9]' "$dir/lg-wrong.out" &&
	[ "$(fsa_result bodies "$dir/lg-wrong.out")" = 0 ] ||
	{ echo "a wrong reference answer was not reported (exit $rc)" >&2
	  exit 1; }
metrics >"$dir/m0.txt"

# stress NAME BLAST_ARGS...: the baseline's window again, while the
# blaster runs (started first; it builds its frames with scapy, then
# touches its ready file; stopped by SIGTERM once the window is over).
stress() {
	local name=$1 bpid
	shift
	FSA_STEP="stress $name: blaster"
	ip netns exec "$FSA_NS" timeout $((win + 180)) taskset -c 1 \
		"$spy" "$here/stress_blast.py" --iface "$FSA_IF" \
		--dst-mac "$mac" --dst-ip "$FSA_IP" --port 8080 \
		--src-net "$FSA_NET.0/24" --seconds $((win + 120)) \
		--pps "${FSS_PPS:-2000}" --rounds "${FSS_ROUNDS:-4}" \
		--ready "$dir/ready-$name" "$@" >"$dir/blast-$name.json" &
	bpid=$!
	FSA_BG_PIDS="$FSA_BG_PIDS $bpid"
	for _ in $(seq 900); do
		[ -e "$dir/ready-$name" ] && break
		kill -0 "$bpid"
		sleep 0.1
	done
	[ -e "$dir/ready-$name" ]
	FSA_STEP="stress $name: ffn-loadgen"
	echo "stress $name: ${win} s closed loop while the blaster runs"
	fsa_loadgen $((win + 60)) "$dir/lg-$name.out" "${lg_args[@]}" \
		--body-ref "$dir/ref.bin" || true
	kill -TERM "$bpid"
	wait "$bpid"
	FSA_BG_PIDS=${FSA_BG_PIDS/ $bpid/}
	echo "  [$name] blaster: $(cat "$dir/blast-$name.json")"
	check_window "$name"
	kill -0 "$FSA_PID"
}
stress syn --kinds ""
stress malformed --kinds "$kinds" --syn-share 0
stress mixed --kinds "$kinds" --syn-share "${FSS_SYN_SHARE:-0.7}"

FSA_STEP="alive after the stress"
kill -0 "$FSA_PID"
fsa_loadgen 60 "$dir/lg-after.out" --connections 2 --hidden 256 \
	--layers 1 --wire f32 --warmup 0 --duration 2 --body-ref "$dir/ref.bin"
check_window after
fsa_client 10 curl -sf "$url/v1/health" >/dev/null
fsa_in timeout 10 ping -q -c 2 -W 2 "$FSA_IP" >/dev/null
metrics >"$dir/m1.txt"

FSA_STEP="counters"
fail=0
check() {
	local a b
	a=$(mval "$1" "$dir/m0.txt")
	b=$(mval "$1" "$dir/m1.txt")
	printf '  %-60s %10d -> %10d\n' "$1" "$a" "$b"
	if [ "$b" -le "$a" ]; then
		echo "stress_tap.sh: $1 did not increase" >&2
		fail=1
	fi
}
echo "counters (before -> after the stress):"
check 'ffn_tcp_syncookies_total{'
while read -r series; do
	check "$series"
done < <($spy -c "
import sys; sys.path.insert(0, '$pktgen')
import mkpcap
for k, v in mkpcap.EXPECT.items():
    for s in v if k in '$kinds'.split(',') else []:
        print(s)" | sort -u)
echo "all nonzero ffn_net_total / ffn_tcp_drops_total after the stress:"
grep -E '^ffn_(net_total|tcp_drops_total|tcp_syncookies_total|tcp_connections)' \
	"$dir/m1.txt" | grep -v ' 0$' | sed 's/^/  /' || true
[ "$fail" -eq 0 ]

FSA_STEP="p99 bound"
# Where a latency spike comes from: the load generator's retransmits and
# RTOs (the "port 0" lines above) are losses or stalls; frames the tap's
# queue dropped (above, per window) never reached the appliance.
base=$(fsa_result p99_us "$dir/lg-baseline.out")
if awk -v b="$base" -v m="$bound_ms" 'BEGIN { exit !(b >= m * 1000) }'; then
	bound_ms=$(awk -v b="$base" 'BEGIN { printf "%d", 2 * b / 1000 }')
	echo "the baseline's p99 ($base us) is past the bound already: this" \
		"machine is starved; bound raised to ${bound_ms} ms"
fi
for name in syn malformed mixed; do
	p99=$(fsa_result p99_us "$dir/lg-$name.out")
	awk -v n="$name" -v p="$p99" -v b="$base" \
		-v rps="$(fsa_result rps "$dir/lg-$name.out")" \
		-v brps="$(fsa_result rps "$dir/lg-baseline.out")" 'BEGIN {
		printf("p99 %-9s %9.3f ms, baseline %8.3f ms: ratio %7.2f;" \
		       " req/s %8.1f vs %8.1f\n", n, p / 1000, b / 1000,
		       b > 0 ? p / b : 0, rps, brps) }'
	if ! awk -v p="$p99" -v m="$bound_ms" 'BEGIN { exit !(p < m * 1000) }'
	then
		echo "stress_tap.sh: p99 under stress '$name' is" \
			"$p99 us, not under $bound_ms ms: requests stalled" >&2
		exit 1
	fi
done

fsa_stop
echo "stress_tap.sh: OK"
