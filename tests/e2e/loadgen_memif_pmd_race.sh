#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Deterministic proof of the race behind loadgen_memif_churn.sh: DPDK
# 22.11's net_memif unmaps a connection's shared memory on the EAL
# interrupt thread (memif_disconnect -> memif_free_regions, memif_socket.c)
# with no synchronisation with a data-path thread that is inside
# eth_memif_rx() and has already passed its ETH_MEMIF_FLAG_CONNECTED check
# and loaded the ring pointer (rte_eth_memif.c, eth_memif_rx).
#
# How: ffn-shard is the memif server, ffn-loadgen the client.  While the
# client sends, gdb stops the shard's lcore at eth_memif_rx+0x3de (just
# after the CONNECTED and ring != NULL checks and the ring->flags read; the
# ring is in r9), parks it there on a two-byte "jmp ." and detaches, so
# every other thread runs.  The client leaves; the EAL interrupt thread runs
# memif_disconnect().  gdb puts the instruction back and resumes the lcore:
# its next instruction, the load of ring->head (rte_eth_memif.c:333),
# faults.  That is the SIGSEGV of the churn test, where preemption of the
# lcore inside those few instructions plays the part of gdb.
#
# Not a meson test: it needs gdb and the exact Debian build of the PMD
# (librte_net_memif.so.23.0 from dpdk 22.11.11-0+deb12u1: the offsets are
# checked against its bytes first).  Exit 0: crash reproduced as described;
# 1: it was not (a fixed PMD); 2: cannot run here.  (prefix fsb,
# 198.18.4.0/24.)
#
# usage: loadgen_memif_pmd_race.sh BUILD_DIR
set -uo pipefail

build=$(cd "${1:-build}" && pwd)
dir=$(mktemp -d /tmp/fsb-race.XXXXXX)
pid= tpid= lg=
# eth_memif_rx in the Debian build: the parking point and the faulting load.
park_off=0x8afe	# 44 0f b7 75 1c   movzwl 0x1c(%rbp),%r14d  (mq->last_head)
fault_off=0x8b03	# 41 0f b7 41 06   movzwl 0x6(%r9),%eax     (ring->head)
want_bytes="44 0f b7 75 1c 41 0f b7 41 06"

cleanup() {
	rc=$?
	for p in $lg $pid $tpid; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "/var/run/dpdk/fsb-rs-$$" "/var/run/dpdk/fsb-rsl-$$" "$dir"
	exit "$rc"
}
trap cleanup EXIT INT TERM

command -v gdb >/dev/null || { echo "$0: needs gdb" >&2; exit 2; }

"$build/tools/mkvindex/mkvindex" --hidden 64 --intermediate 256 \
	--layers 2 --family llama --seed 7 "$dir/model" >/dev/null || exit 2
cat >"$dir/shard.conf" <<CONF
[eal]
args = -l 0 --no-pci --no-huge -m 512 --file-prefix fsb-rs-$$ --vdev net_memif0,role=server,socket=$dir/memif.sock
[port 0]
device = net_memif0
address = 198.18.4.2/24
[shard race]
model = $dir/model
layers = 0-1
listen = 8080
port = 0
numa_node = 0
net_lcores = 0
CONF
timeout 300 "$build/app/ffn-shard/ffn-shard" -c "$dir/shard.conf" \
	>"$dir/shard.log" 2>&1 &
tpid=$!
for _ in $(seq 600); do
	grep -q serving "$dir/shard.log" && break
	kill -0 "$tpid" 2>/dev/null || { cat "$dir/shard.log" >&2; exit 2; }
	sleep 0.1
done
pid=$(pgrep -P "$tpid" -x ffn-shard) || { echo "$0: no ffn-shard" >&2; exit 2; }

lib=$(awk '/librte_net_memif/ { print $6; exit }' "/proc/$pid/maps")
base=$(awk '/librte_net_memif/ && $3 == "00000000" {
	split($1, a, "-"); print a[1]; exit }' "/proc/$pid/maps")
have=$(od -An -tx1 -j $((park_off)) -N 10 "$lib" | tr -s ' \n' ' ' |
	sed 's/^ //; s/ $//')
if [ -z "$base" ] || [ "$have" != "$want_bytes" ]; then
	echo "$0: $lib is not the Debian 22.11.11 build this proof knows" \
		"(bytes at $park_off: '$have')" >&2
	exit 2
fi
park=$(printf '0x%x' $((0x$base + park_off)))
fault=$(printf '0x%x' $((0x$base + fault_off)))

timeout 60 "$build/tools/loadgen/ffn-loadgen" -l 1 --no-pci --no-huge \
	-m 512 --file-prefix "fsb-rsl-$$" \
	--vdev "net_memif0,role=client,socket=$dir/memif.sock" \
	--log-level=pmd.net.memif:error -- --ip 198.18.4.1/24 \
	--target 198.18.4.2:8080 --method GET --path /v1/health \
	--connections 2 --warmup 0 --duration 3 >"$dir/lg.log" 2>&1 &
lg=$!
sleep 2.5	# link up, requests flowing

gdbq() {
	timeout 60 gdb -q -nx -batch -ex 'set pagination off' \
		-ex "attach $pid" "$@" 2>&1 |
		grep -v '^\[New LWP\|^warning: \|^$\|libthread_db'
}
# proc_private->regions[0]: rte_eth_devices[0].process_private (+56).
regions='x/1gx *(void **)((char *)&rte_eth_devices + 56)'

echo "--- 1. park the lcore in eth_memif_rx at $park (ring loaded)"
gdbq -ex "break *$park" -ex continue -ex 'p/x $r9' -ex "$regions" \
	-ex delete -ex "set *(unsigned short *)$park = 0xfeeb" -ex detach

echo "--- 2. the memif client leaves"
wait "$lg"
echo "ffn-loadgen exit $?"
lg=
sleep 1

echo "--- 3. regions after memif_disconnect; resume the lcore"
out=$(gdbq -ex 'thread 1' -ex "$regions" -ex 'p/x $r9' \
	-ex "set *(unsigned short *)$park = 0x0f44" -ex continue \
	-ex bt -ex 'p/x $pc' -ex 'info proc mappings' -ex kill)
echo "$out" | grep -v '^ *0x[0-9a-f]* *0x[0-9a-f]* *0x[0-9a-f]* *0x'
ring=$(echo "$out" | sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p')
mapped=no
if [ -n "$ring" ]; then
	while read -r lo hi _; do
		if (( ring >= lo && ring < hi )); then mapped=yes; fi
	done < <(echo "$out" |
		sed -n 's/^ *\(0x[0-9a-f]*\) *\(0x[0-9a-f]*\) .*/\1 \2/p')
fi
# (here-strings: with pipefail, grep -q closing the pipe early fails echo)
if grep -q 'SIGSEGV' <<<"$out" && grep -qF "\$2 = $fault" <<<"$out" &&
   grep -q 'net_lcore_poll' <<<"$out" && [ "$mapped" = no ]; then
	echo "REPRODUCED: SIGSEGV at eth_memif_rx+0x3e3 (ring->head load)," \
		"ring $ring unmapped by memif_disconnect on the interrupt" \
		"thread while the lcore was inside the burst"
	exit 0
fi
echo "NOT reproduced (mapped=$mapped ring=$ring)"
exit 1
