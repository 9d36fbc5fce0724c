#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Issue 2: kernels "picked at run time from CPU flags (and a clean fallback
# on CPUs without them)". The fallback is only clean if no code that runs
# before or without the CPU check was compiled for AVX: a -march=native or
# -mavx2 that leaked into a library's common c_args would make the scalar
# path fault (SIGILL) on an older CPU, and no test on this AVX-512 machine
# would notice. So: in each archive given, every object whose name does
# not say it is an AVX kernel (avx2/avx512 in its file name) must use no
# VEX/EVEX-encoded instruction (v-prefixed mnemonics), ymm/zmm register
# or AVX-512 opmask.
#
#   check_baseline_isa.sh LIB.a...
set -u
command -v objdump >/dev/null || { echo "objdump missing"; exit 1; }
fails=0
for a in "$@"; do
	[ -f "$a" ] || { echo "FAIL $a: no such archive"; exit 1; }
	out=$(objdump -d --no-show-raw-insn "$a" | awk '
		/file format/ { obj = $1; sub(/:$/, "", obj); n++; next }
		obj !~ /avx/ && /%[yz]mm[0-9]|\{%k[1-7]\}|:\tv[a-z]/ {
			bad[obj]++; if (!(obj in first)) first[obj] = $0 }
		END {
			for (o in bad) printf "%s: %d AVX instructions, e.g.%s\n",
				o, bad[o], first[o]
			if (n == 0) print "no objects"
		}')
	objs=$(objdump -d "$a" | grep -c "file format")
	if [ -n "$out" ]; then
		echo "FAIL $a:"; echo "$out"; fails=$((fails + 1))
	else
		echo "ok   $a: $objs objects, AVX only in the avx2/avx512 kernels"
	fi
done
[ $fails -eq 0 ]
