#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# bench-moe --quick (a small shape, a few seconds): exits 0 and prints
# the ISA, the floors and the three sections. No timing is asserted.
set -eu
out=$("$1" --quick)
printf '%s\n' "$out"
for want in '^isa: ' '^floors ' 'streaming read [0-9.]* GB/s' \
	'FMA peak ' '^== 1\. One layer batch' '^  q4k .*f32 x (norm + mix)' \
	'^  q4k .*Q8_K h' '^  f32 .*f32 x' '^== 2\. Rows per expert' \
	'^  f32 *16 ' '^  q8k *16 ' '^== 3\. WAN bytes per token' \
	'^  layer-batch  *f32  f32 ' '^  layer-batch-i8 '; do
	printf '%s\n' "$out" | grep -q -- "$want" || {
		echo "bench-moe --quick: no line matching '$want'" >&2
		exit 1
	}
done
echo "bench-moe --quick: ok"
