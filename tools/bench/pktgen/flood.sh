#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Served through a Pktgen SYN flood (issue 16): the pktgen kit's e2e test
# (tests/e2e/pktgen_kit.sh: the appliance on net_tap in a namespace,
# Pktgen 23.06.1 on net_af_packet over the tap's kernel side, 2 CPUs) with
# CALLS verified ffn-client calls (a new connection each) without a flood
# and during a flood at each RATE (% of Pktgen's 10 Gbit/s line), printed
# as the test's table: client wall and in-appliance p50/p99, the client's
# SYN retransmissions, and the frames the tap's kernel queue dropped.
#
# --xdp: the same with the appliance on AF_XDP on a veth pair (the
# README's xdp:setup); the drops column is then the veth's.
#
# usage: flood.sh [--xdp] BUILD_DIR [CALLS [RATES]]
#        (defaults: 100, "0.25 100"; about 4 minutes; root)
set -euo pipefail

top=$(cd "$(dirname "$0")/../../.." && pwd)
layout=tap
[ "${1:-}" = --xdp ] && { layout=xdp; shift; }
build=${1:?usage: flood.sh [--xdp] BUILD_DIR [CALLS [RATES]]}
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) CPUs;" \
     "Pktgen lcores on CPU 1 (--lcores 0@1,1@1, -m 1.0), the appliance polls CPU 0,"
echo "the calls run at SCHED_FIFO on CPU 1"
PKTGEN_KIT_LAYOUT=$layout \
PKTGEN_KIT_CALLS=${2:-100} PKTGEN_KIT_FLOOD_RATE=${3:-0.25 100} \
	"$top/tests/e2e/pktgen_kit.sh" "$build" >"$build/pktgen-flood.log" 2>&1 || {
	tail -30 "$build/pktgen-flood.log" >&2
	exit 1
}
grep -E '^\||^\(ms' "$build/pktgen-flood.log"
