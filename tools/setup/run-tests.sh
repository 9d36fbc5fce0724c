#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The test command: installs, builds and runs every test suite
# (unit, slow, e2e). Needs root for the e2e suite (namespaces, tap).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
"$top/tools/setup/install-deps.sh"
"$top/tools/setup/build.sh"
build=${BUILD_DIR:-$top/build}
# meson prints "Ok: / Fail: / Skipped:" per run; skipped tests fail the run
# below, so nothing skipped is ever counted as passed.
meson test -C "$build" --print-errorlogs --num-processes 1 \
	--timeout-multiplier 4 "$@"
if grep -q '"result": "SKIP"' "$build/meson-logs/testlog.json" 2>/dev/null; then
	echo "run-tests: some tests were skipped; failing" >&2
	exit 1
fi
