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

FSA_PY=${PYTHON:-/usr/bin/python3}
FSA_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FSA_PYREF=$FSA_HERE/../pyref
FSA_IP=198.18.3.2
FSA_PEER=198.18.3.1
FSA_PID=
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
	FSA_NAME=fsa_$1_$$
	FSA_NS=fsa-$1-$$
	FSA_BUILD=$(cd "$2" && pwd)
	FSA_BIN=$FSA_BUILD/app/ffn-shard/ffn-shard
	FSA_DIR=$(mktemp -d "/tmp/fsa-$1.XXXXXX")
	trap fsa_cleanup EXIT
	trap 'exit 130' INT TERM
	[ -x "$FSA_BIN" ] || { echo "no $FSA_BIN" >&2; exit 1; }
	ip netns add "$FSA_NS"
	fsa_in ip link set lo up
	fsa_in sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	fsa_in sysctl -qw net.ipv6.conf.default.disable_ipv6=1
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
fsa_impair() {
	local secs=$1 mac
	shift
	FSA_STEP="impairment setup"
	FSA_CNS=$FSA_NS-c
	ip netns add "$FSA_CNS"
	ip netns exec "$FSA_CNS" ip link set lo up
	ip netns exec "$FSA_CNS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$FSA_CNS" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	fsa_in ip link add fsa1 type veth peer name fsa2 netns "$FSA_CNS"
	mac=$(fsa_in cat /sys/class/net/fsa0/address)
	fsa_in ip addr flush dev fsa0
	ip netns exec "$FSA_CNS" ip link set fsa2 address "$mac"
	fsa_in ethtool -K fsa1 tx off tso off gso off gro off >/dev/null 2>&1 || true
	ip netns exec "$FSA_CNS" ethtool -K fsa2 tx off tso off gso off gro off \
		>/dev/null 2>&1 || true
	fsa_in ethtool -K fsa0 tx off tso off gso off gro off >/dev/null 2>&1 || true
	fsa_in ip link set fsa1 up
	ip netns exec "$FSA_CNS" ip addr add "$FSA_PEER/24" dev fsa2
	ip netns exec "$FSA_CNS" ip link set fsa2 up
	ip netns exec "$FSA_NS" timeout "$((secs + 30))" taskset -c 1 \
		"$FSA_PY" "$FSA_HERE/impair.py" fsa0 fsa1 --seconds "$secs" "$@" \
		>"$FSA_DIR/impair.out" 2>&1 &
	FSA_IMPAIR_PID=$!
	sleep 1
	cat "$FSA_DIR/impair.out"
}

# fsa_impair_stop: stop the relay, print its counters.
fsa_impair_stop() {
	kill -TERM "$FSA_IMPAIR_PID" 2>/dev/null || true
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
			"--vdev net_tap0,iface=fsa0 --log-level=pmd.net.tap:error"
		echo "[log]"
		echo "level = notice"
		echo "[port 0]"
		echo "device = net_tap0"
		echo "address = $FSA_IP/24"
		echo "gateway = $FSA_PEER"
		echo "[shard e2e]"
		echo "model = $model"
		echo "layers = $layers"
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
	ip netns exec "$FSA_NS" env "$@" timeout 900 "$FSA_BIN" -c "$conf" \
		>"$FSA_DIR/shard.out" 2>&1 &
	FSA_PID=$!
	for i in $(seq 150); do
		fsa_in ip link show fsa0 >/dev/null 2>&1 && break
		kill -0 "$FSA_PID" 2>/dev/null || break
		sleep 0.1
	done
	fsa_in ip addr add "$FSA_PEER/24" dev fsa0
	fsa_in ip link set fsa0 up
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
		if ! fsa_in ip -4 addr show dev fsa0 | grep -q "$FSA_PEER/"; then
			echo "(the kernel side of fsa0 lost $FSA_PEER after start: re-added)"
			fsa_in ip addr add "$FSA_PEER/24" dev fsa0 || true
		fi
		fsa_in ip link set fsa0 up
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
	if [ -n "${FSA_IMPAIR_PID:-}" ]; then
		kill -TERM "$FSA_IMPAIR_PID" 2>/dev/null || true
		wait "$FSA_IMPAIR_PID" 2>/dev/null || true
	fi
	if [ -n "$FSA_PID" ] && kill -0 "$FSA_PID" 2>/dev/null; then
		kill -TERM "$FSA_PID" 2>/dev/null || true
		wait "$FSA_PID" 2>/dev/null || true
	fi
	FSA_PID=
}

# fsa_stop: SIGTERM; the appliance must drain and exit 0.
fsa_stop() {
	local rc=0
	FSA_STEP="stop"
	[ -n "$FSA_PID" ] || return 0
	kill -TERM "$FSA_PID"
	wait "$FSA_PID" || rc=$?
	FSA_PID=
	if [ "$rc" -ne 0 ]; then
		echo "the appliance exited with $rc after SIGTERM" >&2
		tail -n 20 "$FSA_DIR/shard.out" >&2
		return 1
	fi
}

# fsa_model DIR KIND ARGS...: a synthetic model written by pyref's mkmodel.
fsa_model() {
	"$FSA_PY" "$FSA_PYREF/mkmodel.py" random "$@" >/dev/null
}
