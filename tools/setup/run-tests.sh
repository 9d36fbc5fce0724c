#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The test command: installs, builds and runs every test suite
# (unit, slow, e2e, and the fuzz smoke). Needs root for the e2e suite
# (namespaces, tap). With arguments (meson test's, e.g. --suite unit)
# only those tests run, without the fuzz smoke.
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
# The fuzz smoke (suite 'fuzz'): every libFuzzer harness of tests/fuzz
# over its committed corpus, then 10 s of fuzzing, under ASan and UBSan.
# A build of its own with clang; only the harnesses build there
# (tests/fuzz/meson.build). Campaigns: tools/fuzz/run-all SECONDS.
[ "$#" -eq 0 ] || exit 0
fuzz=${FUZZ_BUILD_DIR:-$top/build-fuzz}
if [ ! -f "$fuzz/build.ninja" ]; then
	CC=clang meson setup "$fuzz" "$top" -Dfuzz=true
fi
meson compile -C "$fuzz" fuzz
meson test -C "$fuzz" --suite fuzz --no-rebuild --print-errorlogs \
	--num-processes 1
if grep -q '"result": "SKIP"' "$fuzz/meson-logs/testlog.json" 2>/dev/null; then
	echo "run-tests: some fuzz tests were skipped; failing" >&2
	exit 1
fi
