# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Sourced by the appliance e2e scripts: a network namespace of the test's
# own (prefix fsa, 198.18.3.0/24, docs/DEVELOPING.md), the appliance on
# net_tap inside it (198.18.3.2, lcore 0), the kernel side 198.18.3.1
# (clients run there, pinned to core 1), cleanup on any exit.
#
#   . lib.sh; fsa_init NAME BUILD_DIR
#   fsa_conf FILE MODEL LAYERS [key=value ...]   write an appliance config
#   fsa_start FILE [ENV=VALUE ...]               start it, wait for serving
#   fsa_in CMD...                                run CMD in the namespace
#   fsa_client CMD...                            same, bounded, on core 1
#   fsa_stop                                     SIGTERM, wait
#   fsa_impair SECONDS ARGS...   clients (and fsa_bridge's port) behind
#                                impair.py, in a second namespace FSA_CNS
#   fsa_impair_stop              stop the relay, print its counters
#   fsa_impair_relay SECONDS ARGS...   start it again (per-run counters)
#
# Other suites with a test network of their own (the stress suites: fss,
# 198.18.5.0/24; lib/net's net_tap.sh: fsn, 198.18.1.0/24) set, before
# sourcing this file, FSA_PFX (names of the namespace, the DPDK file
# prefixes, the interfaces) and FSA_NET (the /24's first three octets).
# For them (and test_load.sh) also:
#   fsa_ns_init NAME                  namespace and cleanup, no appliance
#   fsa_bridge                        a second L2 port next to the tap
#   fsa_loadgen SECONDS OUT ARGS...   ffn-loadgen through that port
#   fsa_result KEY OUT                a value of ffn-loadgen's RESULT line
# and a function fsa_on_fail, when the script defines one, runs on failure.
# FSA_TIMEOUT (seconds, 900) bounds the appliance's run (tools/soak: more).
# FSA_PMD=af_xdp runs the appliance on net_af_xdp instead of net_tap
# (issue 17): a veth pair in the namespace, the appliance's end
# ${FSA_PFX}x0, the kernel side FSA_IF as the tap's would be; TX
# checksum and segmentation offloads off on FSA_IF, as on a wire (XDP
# takes frames as they are). Everything else is the same.
# FSA_NICE (e.g. -5), when set, is the niceness fsa_start and fsa_loadgen
# run their DPDK processes with: on a machine shared with builds, a stress
# test measures the appliance, not the scheduler's choice among builds.

FSA_PY=${PYTHON:-/usr/bin/python3}
FSA_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FSA_PYREF=$FSA_HERE/../pyref
FSA_PFX=${FSA_PFX:-fsa}
FSA_NET=${FSA_NET:-198.18.3}
FSA_IP=$FSA_NET.2
FSA_PEER=$FSA_NET.1
FSA_IF=${FSA_PFX}0
FSA_PMD=${FSA_PMD:-tap}
FSA_XDP_IF=${FSA_PFX}x0
FSA_PID=
FSA_BG_PIDS=
FSA_STEP=setup
FSA_RUN=0

fsa_cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	fsa_stop_quiet
	ip netns del "$FSA_NS" 2>/dev/null || true
	[ -z "${FSA_CNS:-}" ] || ip netns del "$FSA_CNS" 2>/dev/null || true
	rm -rf /var/run/dpdk/"$FSA_NAME"_* 2>/dev/null || true
	if [ "$rc" -ne 0 ]; then
		echo "$FSA_NAME: FAILED at step '$FSA_STEP' (exit $rc)" >&2
		if declare -F fsa_on_fail >/dev/null; then
			fsa_on_fail >&2 || true
		fi
		if [ -f "$FSA_DIR/shard.out" ]; then
			echo "--- appliance output (last 40 lines):" >&2
			tail -n 40 "$FSA_DIR/shard.out" >&2
		fi
	fi
	rm -rf "$FSA_DIR"
	exit "$rc"
}

# fsa_init NAME BUILD_DIR
fsa_init() {
	FSA_BUILD=$(cd "$2" && pwd)
	FSA_BIN=$FSA_BUILD/app/ffn-shard/ffn-shard
	[ -x "$FSA_BIN" ] || { echo "no $FSA_BIN" >&2; exit 1; }
	fsa_ns_init "$1"
}

# fsa_ns_init NAME: the namespace $FSA_PFX-NAME-PID, a scratch directory
# FSA_DIR, DPDK file prefixes ${FSA_NAME}_*, all removed on exit.
fsa_ns_init() {
	FSA_NAME=${FSA_PFX}_$1_$$
	FSA_NS=$FSA_PFX-$1-$$
	FSA_DIR=$(mktemp -d "/tmp/$FSA_PFX-$1.XXXXXX")
	trap fsa_cleanup EXIT
	trap 'exit 130' INT TERM
	ip netns add "$FSA_NS"
	fsa_in ip link set lo up
	# No IPv6 chatter (router/MLD solicitations) on the test links.
	fsa_in sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	fsa_in sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	case $FSA_PMD in
	tap) ;;
	af_xdp)
		fsa_in ip link add "$FSA_IF" type veth peer name "$FSA_XDP_IF"
		fsa_in ethtool -K "$FSA_IF" tx off tso off gso off >/dev/null
		fsa_in ip link set "$FSA_XDP_IF" up
		fsa_in ip link set "$FSA_IF" up
		;;
	*) echo "FSA_PMD=$FSA_PMD: tap or af_xdp" >&2; return 1 ;;
	esac
}

# fsa_vdev: the appliance's port as an EAL --vdev argument (FSA_PMD).
fsa_vdev() {
	case $FSA_PMD in
	tap) echo "net_tap0,iface=$FSA_IF --log-level=pmd.net.tap:error" ;;
	af_xdp) echo "net_af_xdp0,iface=$FSA_XDP_IF,start_queue=0,queue_count=1" ;;
	esac
}

fsa_in() { ip netns exec "$FSA_NS" "$@"; }

# fsa_client SECONDS CMD...: in the clients' namespace (FSA_CNS once
# fsa_impair moved them, else the appliance's), on core 1, bounded.
fsa_client() {
	local t=$1
	shift
	ip netns exec "${FSA_CNS:-$FSA_NS}" timeout "$t" taskset -c 1 "$@"
}

# fsa_impair SECONDS IMPAIR_ARGS...: put the clients behind impair.py
# (this kernel has no sch_netem). The kernel side 198.18.3.1 moves to a
# veth in a second namespace FSA_CNS, with the MAC of the tap's kernel
# side (the appliance's ARP entry stays right); impair.py relays frames
# between the tap and that veth with delay, loss, duplication and
# reordering. Offloads off: frames must carry complete checksums.
# After fsa_bridge, ffn-loadgen's port moves behind the relay as well
# (fsa_impair_bridge), and fsa_loadgen runs in FSA_CNS.
fsa_impair() {
	local secs=$1 mac
	shift
	FSA_STEP="impairment setup"
	FSA_CNS=$FSA_NS-c
	ip netns add "$FSA_CNS"
	ip netns exec "$FSA_CNS" ip link set lo up
	ip netns exec "$FSA_CNS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$FSA_CNS" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	fsa_in ip link add "${FSA_PFX}1" type veth peer name "${FSA_PFX}2" \
		netns "$FSA_CNS"
	if [ -n "${FSA_LG_IF:-}" ]; then
		fsa_impair_bridge
	else
		mac=$(fsa_in cat "/sys/class/net/$FSA_IF/address")
		fsa_in ip addr flush dev "$FSA_IF"
		ip netns exec "$FSA_CNS" ip link set "${FSA_PFX}2" address \
			"$mac"
	fi
	fsa_in ethtool -K "${FSA_PFX}1" tx off tso off gso off gro off \
		>/dev/null 2>&1 || true
	ip netns exec "$FSA_CNS" ethtool -K "${FSA_PFX}2" tx off tso off gso off \
		gro off >/dev/null 2>&1 || true
	fsa_in ethtool -K "$FSA_IF" tx off tso off gso off gro off \
		>/dev/null 2>&1 || true
	fsa_in ip link set "${FSA_PFX}1" up
	[ -n "${FSA_LG_IF:-}" ] || ip netns exec "$FSA_CNS" ip addr add \
		"$FSA_PEER/24" dev "${FSA_PFX}2"
	ip netns exec "$FSA_CNS" ip link set "${FSA_PFX}2" up
	fsa_impair_relay "$secs" "$@"
}

# fsa_impair_relay SECONDS IMPAIR_ARGS...: (re)start impair.py on
# fsa_impair's plumbing (after fsa_impair_stop: counters of one run).
fsa_impair_relay() {
	local secs=$1
	shift
	ip netns exec "$FSA_NS" timeout "$((secs + 30))" taskset -c 1 \
		"$FSA_PY" "$FSA_HERE/impair.py" "$FSA_IF" "${FSA_PFX}1" \
		--seconds "$secs" "$@" \
		>"$FSA_DIR/impair.out" 2>&1 &
	FSA_IMPAIR_PID=$!
	sleep 1
	cat "$FSA_DIR/impair.out"
	[ -z "${FSA_LG_IF:-}" ] || fsa_impair_ping
}

# fsa_impair_bridge: fsa_impair's plumbing once fsa_bridge ran, so that
# ffn-loadgen is behind the relay too. fsa_bridge's bridge goes; the
# tap's kernel side is left to the relay alone; in FSA_CNS a bridge of
# the same name and MAC (the appliance's ARP entry for FSA_PEER stays
# right) joins the relay's end ${FSA_PFX}2 and ffn-loadgen's veth pair,
# moved over whole (FSA_LG_IF keeps its MAC, and so the appliance's
# entry for $FSA_NET.3); FSA_PEER moves onto that bridge. The relay's
# end is a bridge port: its own MAC is never a destination.
fsa_impair_bridge() {
	local br=${FSA_PFX}br d c="ip netns exec $FSA_CNS"
	fsa_in ip link set "$FSA_IF" nomaster
	fsa_in ip link del "$br"
	for d in "$FSA_LG_IF" "${FSA_PFX}l1"; do
		fsa_in ip link set "$d" netns "$FSA_CNS"
		$c ethtool -K "$d" tx off tso off gso off gro off \
			>/dev/null 2>&1 || true
	done
	$c ip link add "$br" type bridge forward_delay 0
	$c ip link set "$br" address \
		"02:00:$(printf '%02x:%02x:%02x' ${FSA_NET//./ }):01"
	$c ip link set "${FSA_PFX}2" master "$br"
	$c ip link set "${FSA_PFX}l1" master "$br"
	$c ip addr add "$FSA_PEER/24" dev "$br"
	$c ip link set "${FSA_PFX}l1" up
	$c ip link set "$FSA_LG_IF" up
	$c ip link set "$br" up
	FSA_LG_NS=$FSA_CNS
}

# fsa_impair_ping: the appliance answers through the relay (a few tries:
# the relay loses some of them). Bounded: 10 s.
fsa_impair_ping() {
	local i
	for i in $(seq 10); do
		ip netns exec "$FSA_CNS" ping -q -c 1 -W 1 "$FSA_IP" \
			>/dev/null 2>&1 && return 0
	done
	echo "the appliance does not answer ping through the relay" >&2
	return 1
}

# fsa_impair_stop: stop the relay, print its counters. The relay prints
# them as it exits, so wait for it to be gone; "wait" alone does not do
# that when this runs in a subshell ("$(...)", a pipe), where the relay
# is not a child and wait returns at once. Bounded: 10 s.
fsa_impair_stop() {
	local i=0
	kill -TERM "$FSA_IMPAIR_PID" 2>/dev/null || true
	while kill -0 "$FSA_IMPAIR_PID" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	wait "$FSA_IMPAIR_PID" 2>/dev/null || true
	cat "$FSA_DIR/impair.out"
}

# fsa_conf FILE MODEL LAYERS [key=value ...]: a one-unit config; extra
# keys go into the [shard] section ("eal_lcores=0-1" sets EAL's -l; a
# map with '@', "eal_lcores=0@0,1@1,2@1", is given as --lcores instead,
# so several lcores can share a core).
fsa_conf() {
	local file=$1 model=$2 layers=$3 lcores=0 lopt=-l kv
	shift 3
	for kv in "$@"; do
		case $kv in eal_lcores=*) lcores=${kv#eal_lcores=} ;; esac
	done
	case $lcores in *@*) lopt=--lcores ;; esac
	FSA_RUN=$((FSA_RUN + 1))
	{
		echo "# written by tests/e2e/appliance/lib.sh"
		echo "[eal]"
		echo "args = $lopt $lcores --no-pci --no-huge -m 512" \
			"--file-prefix ${FSA_NAME}_$FSA_RUN" \
			"--vdev $(fsa_vdev)"
		echo "[log]"
		echo "level = notice"
		echo "[port 0]"
		echo "device = net_${FSA_PMD}0"
		echo "address = $FSA_IP/24"
		echo "gateway = $FSA_PEER"
		echo "[shard e2e]"
		echo "model = $model"
		# "-": no layers key (an expert-only unit, issue 23)
		[ "$layers" = - ] || echo "layers = $layers"
		echo "listen = 8080"
		echo "net_lcores = 0"
		for kv in "$@"; do
			case $kv in
			eal_lcores=*) ;;
			*) echo "${kv%%=*} = ${kv#*=}" ;;
			esac
		done
	} >"$file"
}

# fsa_start CONF [ENV=VALUE ...]: run the appliance in the namespace,
# bring the kernel side of its tap up, wait for "serving".
fsa_start() {
	local conf=$1 i
	shift
	FSA_STEP="start $(basename "$conf")"
	: >"$FSA_DIR/shard.out"
	# Not through a function: $! must be timeout(1), so TERM reaches
	# the appliance.
	ip netns exec "$FSA_NS" env "$@" ${FSA_NICE:+nice -n "$FSA_NICE"} \
		timeout "${FSA_TIMEOUT:-900}" "$FSA_BIN" -c "$conf" \
		>"$FSA_DIR/shard.out" 2>&1 &
	FSA_PID=$!
	for i in $(seq 150); do
		fsa_in ip link show "$FSA_IF" >/dev/null 2>&1 && break
		kill -0 "$FSA_PID" 2>/dev/null || break
		sleep 0.1
	done
	# replace: a veth's kernel side (af_xdp) keeps it from the last run
	fsa_in ip addr replace "$FSA_PEER/24" dev "$FSA_IF"
	fsa_in ip link set "$FSA_IF" up
	for i in $(seq 300); do
		grep -q '^ffn-shard: \[shard .*\] serving' "$FSA_DIR/shard.out" &&
			break
		kill -0 "$FSA_PID" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q '^ffn-shard: \[shard .*\] serving' "$FSA_DIR/shard.out"
	then
		echo "the appliance did not come up with $conf:" >&2
		cat "$FSA_DIR/shard.out" >&2
		return 1
	fi
	grep '^ffn-shard: \[shard' "$FSA_DIR/shard.out"
	# The kernel side must still hold its address once the port has
	# started (the tap PMD may reset the interface while configuring
	# it) and the appliance must answer ARP/ICMP before clients go.
	for i in $(seq 50); do
		if ! fsa_in ip -4 addr show dev "$FSA_IF" |
		     grep -q "$FSA_PEER/"; then
			echo "(the kernel side of $FSA_IF lost $FSA_PEER after" \
				"start: re-added)"
			fsa_in ip addr add "$FSA_PEER/24" dev "$FSA_IF" || true
		fi
		fsa_in ip link set "$FSA_IF" up
		fsa_in ping -q -c 1 -W 1 "$FSA_IP" >/dev/null 2>&1 && break
		sleep 0.1
	done
	fsa_in ping -q -c 1 -W 2 "$FSA_IP" >/dev/null || {
		echo "the appliance does not answer ping on $FSA_IP" >&2
		return 1
	}
	echo "($(basename "$conf") up at ${SECONDS}s)"
}

fsa_stop_quiet() {
	local p
	# Background helpers a script registered (blasters, relays).
	for p in ${FSA_BG_PIDS:-}; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	FSA_BG_PIDS=
	if [ -n "${FSA_IMPAIR_PID:-}" ]; then
		kill -TERM "$FSA_IMPAIR_PID" 2>/dev/null || true
		wait "$FSA_IMPAIR_PID" 2>/dev/null || true
	fi
	if [ -n "$FSA_PID" ] && kill -0 "$FSA_PID" 2>/dev/null; then
		kill -TERM "$FSA_PID" 2>/dev/null || true
		fsa_reap "$FSA_PID" 2>/dev/null || true
	fi
	FSA_PID=
}

# fsa_reap PID: wait for the appliance (PID: timeout(1), the appliance
# its child) to end after a SIGTERM. One still running 60 s later (a
# drain that never ends) is killed, with a line saying so: a poll loop
# must not outlive its test and spin on core 0 under the next ones
# (timeout(1) without -k waits for its child forever). wait's status.
fsa_reap() {
	local p=$1 st end=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$end" ]; do
		st=$(awk '/^State:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
		# gone, or exited and not yet waited for
		[ -n "$st" ] && [ "$st" != Z ] || break
		sleep 0.1
	done
	if [ -n "$st" ] && [ "$st" != Z ]; then
		echo "$FSA_NAME: the appliance did not end within 60 s of" \
			"SIGTERM: killed" >&2
		pkill -KILL -P "$p" 2>/dev/null || true
		kill -KILL "$p" 2>/dev/null || true
	fi
	wait "$p"
}

# fsa_stop: SIGTERM; the appliance must drain and exit 0.
fsa_stop() {
	local rc=0
	FSA_STEP="stop"
	[ -n "$FSA_PID" ] || return 0
	kill -TERM "$FSA_PID"
	fsa_reap "$FSA_PID" || rc=$?
	FSA_PID=
	if [ "$rc" -ne 0 ]; then
		echo "the appliance exited with $rc after SIGTERM" >&2
		tail -n 20 "$FSA_DIR/shard.out" >&2
		return 1
	fi
}

# fsa_start_small: a 2-layer llama model of hidden 64 served on the tap
# with the default config; FSA_MAC is the appliance's MAC as the kernel
# side resolved it (the stress scripts address raw frames to it).
fsa_start_small() {
	FSA_STEP="start"
	"$FSA_BUILD/tools/mkvindex/mkvindex" --hidden 64 --intermediate 128 \
		--layers 2 "$FSA_DIR/model" >/dev/null
	fsa_conf "$FSA_DIR/shard.conf" "$FSA_DIR/model" 0-1
	fsa_start "$FSA_DIR/shard.conf"
	FSA_MAC=$(fsa_in ip neigh show "$FSA_IP" dev "$FSA_IF" |
		awk '{ print $3 }')
	[ -n "$FSA_MAC" ]
}

# fsa_model DIR KIND ARGS...: a synthetic model written by pyref's mkmodel.
fsa_model() {
	"$FSA_PY" "$FSA_PYREF/mkmodel.py" random "$@" >/dev/null
}

# fsa_bridge: a second L2 port beside the appliance's tap, for a DPDK
# client of its own (ffn-loadgen on net_af_packet, FSA_LG_IF): a bridge
# ${FSA_PFX}br joins the tap's kernel side and a veth whose other end is
# FSA_LG_IF (${FSA_PFX}l0). The kernel side FSA_PEER moves onto the bridge.
# The tap PMD gives the kernel side of the tap the DPDK port's own MAC: as
# a bridge port that MAC would be the bridge's (frames to the appliance
# delivered locally), so the tap's kernel side and the bridge get MACs of
# their own (locally administered, from FSA_NET), and the bridge's first
# ARP request updates the appliance's entry for FSA_PEER (RFC 826). Raw
# frames sent on the tap itself (AF_PACKET) still go to the appliance only.
# Offloads off on the veth: af_packet hands frames over as they are, so
# they must be whole (checksums done, no GSO/GRO super-frames).
fsa_bridge() {
	local br=${FSA_PFX}br d i o
	FSA_STEP="bridge"
	FSA_LG_IF=${FSA_PFX}l0
	o=$(printf '%02x:%02x:%02x' ${FSA_NET//./ })
	fsa_in ip link set "$FSA_IF" address "02:01:$o:01"
	fsa_in ip link add "$br" type bridge forward_delay 0
	fsa_in ip link set "$br" address "02:00:$o:01"
	fsa_in ip link add "$FSA_LG_IF" type veth peer name "${FSA_PFX}l1"
	for d in "$FSA_LG_IF" "${FSA_PFX}l1"; do
		fsa_in ethtool -K "$d" tx off tso off gso off gro off \
			>/dev/null 2>&1 || true
	done
	fsa_in ip addr flush dev "$FSA_IF"
	fsa_in ip link set "$FSA_IF" master "$br"
	fsa_in ip link set "${FSA_PFX}l1" master "$br"
	fsa_in ip addr add "$FSA_PEER/24" dev "$br"
	fsa_in ip link set "${FSA_PFX}l1" up
	fsa_in ip link set "$FSA_LG_IF" up
	fsa_in ip link set "$br" up
	for i in $(seq 50); do
		fsa_in ping -q -c 1 -W 1 "$FSA_IP" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "the appliance does not answer ping through $br" >&2
	return 1
}

# fsa_loadgen SECONDS OUT ARGS...: ffn-loadgen on FSA_LG_IF (fsa_bridge;
# in FSA_CNS once fsa_impair moved it behind the relay)
# as $FSA_NET.3, on core 1, against the appliance, bounded; its output
# goes to OUT; returns its exit status (0: no error at all).
fsa_loadgen() {
	local t=$1 out=$2 rc=0
	shift 2
	FSA_LG_RUN=$((${FSA_LG_RUN:-0} + 1))
	ip netns exec "${FSA_LG_NS:-$FSA_NS}" \
		${FSA_NICE:+nice -n "$FSA_NICE"} timeout "$t" taskset -c 1 \
		"$FSA_BUILD/tools/loadgen/ffn-loadgen" -l 1 --no-pci --no-huge \
		-m 512 --file-prefix "${FSA_NAME}_lg$FSA_LG_RUN" \
		--vdev "net_af_packet0,iface=$FSA_LG_IF" \
		-- --ip "$FSA_NET.3/24" --target "$FSA_IP:8080" "$@" \
		>"$out" 2>&1 || rc=$?
	return "$rc"
}

# fsa_result KEY OUT: KEY's value on ffn-loadgen's RESULT line in OUT.
fsa_result() {
	sed -n "s/^RESULT.* $1=\([0-9.]*\).*/\1/p" "$2"
}
