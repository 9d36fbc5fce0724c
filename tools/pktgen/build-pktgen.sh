#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Builds DPDK Pktgen 23.06.1 with Lua from tools/pktgen/vendor (README
# there: why this release, the one build fix) into OUT_DIR, and prints
# the path of the binary. Cached: a second call with the same archive
# does nothing (about 30 s on 2 cores otherwise).
#
# usage: build-pktgen.sh OUT_DIR      (e.g. build/pktgen)
# needs: meson, ninja, libdpdk-dev, liblua5.4-dev (install-deps.sh)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tarball=$here/vendor/pktgen-dpdk-23.06.1.tar.gz
sha=77547c529838b792c199fae6d1db95d903d66926cd87579aaeef778602f8936d
out=${1:?usage: build-pktgen.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
bin=$out/build/app/pktgen

if [ -x "$bin" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$sha" ]; then
	echo "$bin"
	exit 0
fi
echo "$sha  $tarball" | sha256sum -c --quiet - >&2 || {
	echo "build-pktgen: $tarball: sha256 mismatch" >&2
	exit 1
}
pkg-config --exists lua5.4 || {
	echo "build-pktgen: lua5.4 not found by pkg-config" \
	     "(apt-get install liblua5.4-dev; tools/setup/install-deps.sh)" >&2
	exit 1
}
rm -rf "$out/src" "$out/build" "$out/.stamp"
mkdir -p "$out/src"
tar -xzf "$tarball" -C "$out/src" --strip-components=1
# The fix upstream made in 23.10 (vendor/README.md): without dpdk among
# its dependencies lib/lua does not find rte_common.h.
lm=$out/src/lib/lua/meson.build
sed -i 's/dependencies: \[common, utils, vec, lua_dep\]/dependencies: [common, utils, vec, lua_dep, dpdk]/' "$lm"
grep -q 'lua_dep, dpdk\]' "$lm" || {
	echo "build-pktgen: $lm: the dpdk dependency fix did not apply" >&2
	exit 1
}
meson setup "$out/build" "$out/src" -Denable_lua=true >"$out/setup.log" 2>&1 || {
	echo "build-pktgen: meson setup failed; see $out/setup.log" >&2
	tail -20 "$out/setup.log" >&2
	exit 1
}
ninja -C "$out/build" >"$out/build.log" 2>&1 || {
	echo "build-pktgen: ninja failed; see $out/build.log" >&2
	tail -20 "$out/build.log" >&2
	exit 1
}
echo "$sha" >"$out/.stamp"
echo "$bin"
