#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""The bodies of test_load.sh.

    load_check.py prepare --host IP --model DIR --owned A-B --layer L
                  --seq-len S --accept f32|f16|i8 DIR
        write DIR/body.bin (a binary walk-ffn request) and DIR/expect.bin
        (the appliance's answer, checked here against pyref: f32 within
        the f32 bound, narrowed formats exactly equal to pyref's
        narrowing of the appliance's own f32 answer).
    load_check.py verify --model DIR --owned A-B --layer L --seq-len S
                  --accept FMT DIR
        check every DIR/*.bin answer wrk saved (those that differed from
        expect.bin, and a sample of the equal ones) against pyref within
        the format's bound; fail on any saved non-200 or wrong length.
    load_check.py loadgen --model DIR --owned A-B --layers L[,L...]
                  --seq-len S --accept FMT --request FMT --body FILE
        ffn-loadgen's reference answer (--save-body FILE; every other
        answer of its run agreed with it, --verify-body) against pyref
        on ffn-loadgen's input (seed 1, ../stress_ref.py) as the
        appliance decoded it from the request format, within the answer
        format's bound.
"""

import argparse
import glob
import os
import struct
import sys

import numpy as np

import fsa
from fsa import wire

SEED = 4242


def bound(fmt, want):
    m = np.abs(want).max(axis=1, keepdims=True)
    if fmt == "f32":
        return fsa.F32_RTOL * m + fsa.F32_ATOL
    # the narrowing's own error (spec/wire.md §5.3) on top
    return m * (2.0 ** -11 if fmt == "f16" else 1 / 254.0) * 1.01 + 1e-5


def check_body(o, a, body):
    x = o.x(a.seq_len, SEED)
    want = o.y64(a.layer, x)
    _, res = wire.decode_response(body, wire.CT[a.accept])
    if [(L, s) for L, s, _ in res] != [(a.layer, a.seq_len)]:
        return "layers/seq_len %s" % [(L, s) for L, s, _ in res]
    err = np.abs(res[0][2] - want)
    b = bound(a.accept, want)
    if not np.all(err <= b):
        return "max error %g over the bound %g" % (err.max(), b.max())
    return None


def check_loadgen(o, a):
    sys.path.insert(0, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), ".."))
    from stress_ref import loadgen_input
    layers = [int(v) for v in a.layers.split(",")]
    x = loadgen_input(1, a.seq_len * o.hidden).reshape(a.seq_len, -1)
    x = wire.roundtrip(x, a.request)
    with open(a.body, "rb") as f:
        body = f.read()
    try:
        _, res = wire.decode_response(body, wire.CT[a.accept])
    except (ValueError, struct.error) as e:
        sys.exit("loadgen: %s is no %s frame: %s" % (a.body, a.accept, e))
    got = [(L, s) for L, s, _ in res]
    if got != [(L, a.seq_len) for L in layers]:
        sys.exit("loadgen: %s holds layers/seq_len %s, asked %s x %d"
                 % (a.body, got, layers, a.seq_len))
    for L, _, y in res:
        want = o.y64(L, x)
        err = np.abs(y - want)
        b = bound(a.accept, want)
        if not np.all(err <= b):
            sys.exit("loadgen: layer %d: max error %g over the bound %g"
                     % (L, err.max(), b.max()))
    print("load_check: ffn-loadgen's reference answer (%s, layers %s, "
          "seq_len %d, %s request) agrees with pyref"
          % (a.accept, a.layers, a.seq_len, a.request))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["prepare", "verify", "loadgen"])
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--host")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--model", required=True)
    ap.add_argument("--owned", required=True)
    ap.add_argument("--layer", type=int)
    ap.add_argument("--layers")
    ap.add_argument("--seq-len", type=int, default=1)
    ap.add_argument("--accept", default="f32")
    ap.add_argument("--request", default="f32")
    ap.add_argument("--body")
    a = ap.parse_args()
    lo, _, hi = a.owned.partition("-")
    o = fsa.Oracle(a.model, (int(lo), int(hi or lo)))
    if a.cmd == "loadgen":
        check_loadgen(o, a)
        return
    x = o.x(a.seq_len, SEED)
    body, ct = wire.encode_request([a.layer], x, "f32")
    if a.cmd == "prepare":
        try:
            c = fsa.Http(a.host, a.port)
            r32 = c.request("POST", "/v1/walk-ffn", body,
                            [("Content-Type", ct), ("Accept", wire.CT_F32)])
            r = c.request("POST", "/v1/walk-ffn", body,
                          [("Content-Type", ct),
                           ("Accept", wire.ACCEPT[a.accept])])
            c.close()
        except OSError as e:
            sys.exit("prepare: no answer to the reference request (%s); "
                     "test_routes.py's delivery group says which answers "
                     "are lost" % e)
        if r32.status != 200 or r.status != 200:
            sys.exit("prepare: status %d / %d" % (r32.status, r.status))
        if r.header("content-type") != wire.CT[a.accept]:
            sys.exit("prepare: Content-Type %r" % r.header("content-type"))
        _, res32 = wire.decode_response(r32.body, wire.CT_F32)
        ok, d = o.close(res32[0][2], a.layer, x)
        if not ok:
            sys.exit("prepare: the f32 answer is wrong: " + d)
        want = bytearray(wire.encode_response(res32, a.accept, 0.0))
        want[8:12] = r.body[8:12]
        if bytes(want) != r.body:
            sys.exit("prepare: the %s answer is not pyref's narrowing of "
                     "the f32 one" % a.accept)
        with open(os.path.join(a.dir, "body.bin"), "wb") as f:
            f.write(body)
        with open(os.path.join(a.dir, "expect.bin"), "wb") as f:
            f.write(r.body)
        print("load_check: request %d bytes, answer %d bytes (%s), checked "
              "against pyref" % (len(body), len(r.body), a.accept))
        return
    bad = 0
    files = sorted(glob.glob(os.path.join(a.dir, "out", "*.bin")))
    for p in files:
        name = os.path.basename(p)
        with open(p, "rb") as f:
            b = f.read()
        if not (name.startswith("diff-") or name.startswith("same-")):
            print("FAIL wrk saved %s: %r" % (name, b[:200]))
            bad += 1
            continue
        why = check_body(o, a, b)
        if why:
            print("FAIL %s: %s" % (name, why))
            bad += 1
    print("load_check: %d saved answers checked against pyref, %d bad"
          % (len(files), bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
