# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Shared by bench_net.sh and diag_tap.sh (sourced, not run): the clean-up
# of their namespaces and processes, and the start of a net_tap server,
# so the diagnosis measures exactly the set-up the benchmark does.
# The caller sets ns_t, ns_s, ns_c, dir, pids=() and bn_rm (extra paths
# to remove, e.g. its EAL runtime directories), then `trap bn_cleanup`.

bn_cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	ip netns del "$ns_t" 2>/dev/null || true
	ip netns del "$ns_s" 2>/dev/null || true
	ip netns del "$ns_c" 2>/dev/null || true
	# shellcheck disable=SC2086 # bn_rm holds globs on purpose
	rm -rf "$dir" $bn_rm
}

# The process timeout(1) started (ip netns exec and taskset exec).
child_of() {
	for _ in $(seq 50); do
		pgrep -P "$1" && return 0
		sleep 0.1
	done
	return 1
}

# bn_wait_up LOG: net_testd printed that it serves (bounded: 30 s).
bn_wait_up() {
	for _ in $(seq 300); do
		grep -qs 'net_testd: up' "$1" && return 0
		sleep 0.1
	done
	echo "${0##*/}: server did not come up:" >&2
	cat "$1" >&2
	return 1
}

# bn_tap_up NS IF LOG: once net_testd (started in NS with net_tap IF)
# has made the tap, give the kernel side 198.18.1.1 and wait for the
# server to be up.
bn_tap_up() {
	for _ in $(seq 100); do
		ip netns exec "$1" ip link show "$2" >/dev/null 2>&1 && break
		sleep 0.1
	done
	ip netns exec "$1" ip addr add 198.18.1.1/24 dev "$2"
	ip netns exec "$1" ip link set "$2" up
	bn_wait_up "$3"
}
