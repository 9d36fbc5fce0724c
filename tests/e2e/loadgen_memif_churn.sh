#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The appliance must survive memif clients coming and going: ffn-shard
# is the memif server, ffn-loadgen connects, sends GET /v1/health for
# half a second, and leaves, CYCLES times; the appliance must still be
# running and answering at the end.  (prefix fsb, 198.18.4.0/24.)
#
# Fails on a busy machine, and not because of our code: DPDK 22.11's
# net_memif tears a connection down on the EAL interrupt thread
# (memif_disconnect -> memif_free_regions munmaps the shared regions,
# memif_socket.c) with no synchronisation with an lcore that is inside
# eth_memif_rx/eth_memif_tx past their ETH_MEMIF_FLAG_CONNECTED check with
# the ring pointer already loaded (rte_eth_memif.c).  An lcore preempted in
# those few instructions while a client leaves resumes on unmapped memory:
# SIGSEGV at the ring->head load (rte_eth_memif.c:333), called from
# net_lcore_poll().  loadgen_memif_pmd_race.sh reproduces it
# deterministically under gdb.  The PMD raises no LSC event (no
# RTE_ETH_DEV_INTR_LSC) and gives no hook before the unmap, and a link
# check in the application is the same check-then-use race the PMD's own
# flag check loses: there is no application-side guard.  Not registered in
# meson: it fails as often as the lcore is preempted, i.e. by the load of
# the machine (2 shared CPUs at load 8-11: 1 of 5 runs of 30 cycles died;
# CONTEND=1, one bounded busy loop per CPU: 4 of 4 runs died, after 10,
# 23, 36 and 69 cycles).
#
# usage: [CONTEND=1] loadgen_memif_churn.sh BUILD_DIR [CYCLES]
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
cycles=${2:-30}
dir=$(mktemp -d /tmp/fsb-churn.XXXXXX)
pid=
hogs=()

cleanup() {
	rc=$?
	[ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null || true
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "/var/run/dpdk/fsb-ch-$$" "/var/run/dpdk/fsb-chl-$$"
	[ "$rc" -ne 0 ] && tail -n 20 "$dir/shard.log" >&2
	rm -rf "$dir"
	exit "$rc"
}
trap cleanup EXIT INT TERM

"$build/tools/mkvindex/mkvindex" --hidden 64 --intermediate 256 \
	--layers 2 --family llama --seed 7 "$dir/model" >/dev/null
cat >"$dir/shard.conf" <<CONF
[eal]
args = -l 0 --no-pci --no-huge -m 512 --file-prefix fsb-ch-$$ --vdev net_memif0,role=server,socket=$dir/memif.sock
[port 0]
device = net_memif0
address = 198.18.4.2/24
[shard churn]
model = $dir/model
layers = 0-1
listen = 8080
port = 0
numa_node = 0
net_lcores = 0
CONF
timeout 600 "$build/app/ffn-shard/ffn-shard" -c "$dir/shard.conf" \
	>"$dir/shard.log" 2>&1 &
pid=$!
for _ in $(seq 600); do
	grep -q serving "$dir/shard.log" && break
	kill -0 "$pid"
	sleep 0.1
done

if [ "${CONTEND:-0}" = 1 ]; then
	# Busy loops on every CPU make the kernel preempt the lcore, so the
	# window inside the burst is open when a client leaves.
	for c in $(seq 0 $(($(nproc) - 1))); do
		timeout 900 taskset -c "$c" sh -c 'while :; do :; done' &
		hogs+=($!)
	done
fi

for i in $(seq "$cycles"); do
	rc=0
	timeout 30 "$build/tools/loadgen/ffn-loadgen" -l 1 --no-pci \
		--no-huge -m 512 --file-prefix "fsb-chl-$$" \
		--vdev "net_memif0,role=client,socket=$dir/memif.sock" \
		--log-level=pmd.net.memif:error -- --ip 198.18.4.1/24 \
		--target 198.18.4.2:8080 --method GET --path /v1/health \
		--connections 2 --warmup 0 --duration 0.5 \
		>"$dir/lg.log" 2>&1 || rc=$?
	sleep 0.2
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid" || echo "ffn-shard exit status $?" >&2
		pid=
		echo "loadgen_memif_churn.sh: appliance died after client" \
			"$i of $cycles" >&2
		exit 1
	fi
	[ "$rc" -eq 0 ] || { echo "cycle $i: ffn-loadgen exited $rc" >&2;
			     tail -n 5 "$dir/lg.log" >&2; }
done
echo "loadgen_memif_churn.sh: OK, $cycles clients"
