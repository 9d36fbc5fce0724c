#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Configures (once) and builds into ${BUILD_DIR:-build}, and DPDK Pktgen
# into ${BUILD_DIR:-build}/pktgen (tools/pktgen/build-pktgen.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$top/build}
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$top" --buildtype=release
fi
ninja -C "$build"
# DPDK Pktgen 23.06.1 for the pktgen kit (tools/pktgen/README.md), from
# the vendored source; cached, so this is a no-op once built.
"$top/tools/pktgen/build-pktgen.sh" "$build/pktgen" >/dev/null
