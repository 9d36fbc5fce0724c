#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# The CI smoke of one harness (suite 'fuzz'): every input of the committed
# corpus, then FUZZ_SMOKE_SECONDS (default 10) of fuzzing from it. New
# inputs go to a scratch directory that is removed (the corpus changes only
# by `tools/fuzz/run-all --merge`); a crash, leak, sanitizer report or
# broken invariant fails the test and leaves its input in ARTIFACTS.
#
# usage: smoke.sh HARNESS CORPUS ARTIFACTS [libFuzzer flags...]
set -eu

exe=$1
corpus=$2
artifacts=$3
shift 3
secs=${FUZZ_SMOKE_SECONDS:-10}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-smoke.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
mkdir -p "$artifacts"

# -timeout: an input that takes 10 s is a hang, reported as a crash.
# -error_exitcode: libFuzzer's default, 77, is what meson reads as "skipped";
# a crash must fail the test, so no code the fuzzer exits with may be 77.
# The scratch directory comes first: libFuzzer writes new inputs there.
rc=0
"$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	-error_exitcode=1 -print_final_stats=1 \
	-artifact_prefix="$artifacts/" "$@" "$scratch" "$corpus" || rc=$?
if [ "$rc" -ne 0 ]; then
	echo "smoke: $(basename "$exe") exited $rc; its input is in" \
	     "$artifacts (reproduce: $exe <that file>)" >&2
	[ "$rc" -eq 77 ] && rc=1
fi
exit "$rc"
