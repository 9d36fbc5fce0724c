#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Is ffn-loadgen's reference answer right? stress_tap.sh holds every
answer under stress to the first one ffn-loadgen got (--save-body): this
checks that one against pyref (tests/e2e/pyref, float64 numpy), so the
whole chain rests on an independent computation, not on the appliance
agreeing with itself.

The input is ffn-loadgen's (tools/loadgen/lg_main.c make_input): seq_len
rows of hidden xorshift32 values from --seed, s / 2^31 - 1 as float32.

usage: stress_ref.py --model DIR --body FILE --layer L --hidden H
           [--seq-len 1] [--seed 1]
Exit 0 when the f32 single frame (spec/wire.md §5.2) has the layer, the
seq_len and values within appliance/fsa.py's f32 bound of pyref's.
"""

import argparse
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "appliance"))
import fsa  # noqa: E402


def loadgen_input(seed, n):
    s = seed or 0x9E3779B9
    x = np.empty(n, dtype=np.float32)
    for i in range(n):
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        x[i] = np.float32(s / 2147483648.0 - 1.0)
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--body", required=True)
    ap.add_argument("--layer", type=int, required=True)
    ap.add_argument("--hidden", type=int, required=True)
    ap.add_argument("--seq-len", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    body = open(a.body, "rb").read()
    n = a.seq_len * a.hidden
    if len(body) != 12 + 4 * n:
        print("stress_ref.py: %s is %d bytes, an f32 single frame of %d "
              "values is %d" % (a.body, len(body), n, 12 + 4 * n))
        return 1
    layer, seq_len, lat = struct.unpack_from("<IIf", body, 0)
    if (layer, seq_len) != (a.layer, a.seq_len):
        print("stress_ref.py: frame says layer %d seq_len %d, asked %d %d"
              % (layer, seq_len, a.layer, a.seq_len))
        return 1
    got = np.frombuffer(body, dtype="<f4", offset=12).reshape(seq_len, -1)
    x = loadgen_input(a.seed, n).reshape(a.seq_len, a.hidden)
    oracle = fsa.Oracle(a.model, (a.layer, a.layer))
    ok, why = oracle.close(got, a.layer, x)
    if not ok:
        print("stress_ref.py: the reference answer is not pyref's: " + why)
        return 1
    print("reference answer (layer %d, %d values, latency_ms %.3f) agrees "
          "with pyref within the f32 bound" % (layer, n, lat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
