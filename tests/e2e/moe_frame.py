#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Expert routes through the appliance's pipeline, offline (issue 23).

ffn-frame runs exactly lib/shard's code for one request; this drives it
over every expert route of spec/moe.md and checks each answer:

- every route and answer format against pyref's float64 oracle
  (tests/e2e/pyref/moe_expect.py) on random hybrid-MoE vindexes made by
  mkvindex: Q4_K and F32 experts, hidden 512 (so the Q8_K route runs);
- spec/moe.md §6's example from its bytes (mkvindex --example-moe writes
  the spec's files, tested byte for byte by mkvindex-cli), answers equal to
  the spec's frames but for latency_ms;
- every error of §4 and §7 with its status, Content-Type and exact body;
- the precision guard (§7) on an expert route and on /v1/walk-ffn;
- expert-only units (--no-dense) and units ownership (--expert-units).

  moe_frame.py BUILD_DIR
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PYREF = os.path.join(HERE, "pyref")
sys.path.insert(0, PYREF)
import moe  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
MK = os.path.join(BUILD, "tools/mkvindex/mkvindex")
FRAME = os.path.join(BUILD, "tools/ffn-frame/ffn-frame")
EXPECT = os.path.join(PYREF, "moe_expect.py")
TMP = tempfile.mkdtemp(prefix="moe-frame-")
failures = []
checks = 0


def ok(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def mkvindex(name, *args):
    d = os.path.join(TMP, name)
    subprocess.run([MK, *args, d], check=True, stdout=subprocess.DEVNULL)
    return d


def frame(model, path, body=b"", ct=None, accept=None, args=()):
    """One request through ffn-frame: (status, content type, body)."""
    cmd = [FRAME, "--model", model, "--path", path, *args]
    if ct is not None:
        cmd += ["--content-type", ct]
    if accept is not None:
        cmd += ["--accept", accept]
    p = subprocess.run(cmd, input=body, capture_output=True, timeout=120)
    last = p.stderr.decode().strip().splitlines()[-1]
    status, _, ctype = last.partition(" ")
    if not status.isdigit():
        raise RuntimeError("ffn-frame %s: %s" % (path, p.stderr.decode()))
    return int(status), ctype, p.stdout


# --- every route and format against the oracle ------------------------

def oracle_case(model, own, route, frame_args=(), **gen):
    """gen a request with moe_expect, run it, check the answer."""
    req = os.path.join(TMP, "req")
    exp = os.path.join(TMP, "exp")
    resp = os.path.join(TMP, "resp")
    cmd = [sys.executable, EXPECT, "gen", model, "--route", route,
           "--body", req, "--expect", exp, "--experts", own]
    for k, v in gen.items():
        flag = "--" + k.replace("_", "-")
        cmd += [flag] if v is True else [flag, str(v)]
    out = subprocess.run(cmd, check=True, capture_output=True,
                         text=True).stdout
    kv = dict(line.split("=", 1) for line in out.split())
    kv = {k: v.strip("'") for k, v in kv.items()}
    with open(req, "rb") as f:
        body = f.read()
    status, ctype, got = frame(model, kv["path"], body, kv["content_type"],
                               kv["accept"], ["--experts", own,
                                              *frame_args])
    with open(resp, "wb") as f:
        f.write(got)
    c = subprocess.run([sys.executable, EXPECT, "check", "--expect", exp,
                        "--body", resp, "--content-type", ctype,
                        "--status", str(status)], capture_output=True,
                       text=True)
    what = "%s %s %s" % (os.path.basename(model), route, gen)
    ok(c.returncode == 0, what + ": " + c.stdout.strip())
    return status, ctype, got


def test_oracle():
    for quant in ("q4k", "f32"):
        m = mkvindex("m-" + quant, "--family", "gemma4", "--hidden", "512",
                     "--intermediate", "256", "--layers", "3",
                     "--experts", "8", "--expert-width", "300",
                     "--expert-layers", "0-1", "--expert-quant", quant,
                     "--seed", "7")
        own = "2-6"
        for seed, route in enumerate(["layer-batch", "layer-batch-f16",
                                      "layer-batch-i8", "multi-layer-batch",
                                      "multi-layer-batch-q8k",
                                      "expert-batch-bin",
                                      "expert-batch-json", "expert-single"]):
            args = ["--i8-enable"] if route.endswith("i8") else []
            oracle_case(m, own, route, args, seed=seed + 1)
            if route.startswith(("layer", "multi")):
                for acc in ("f32", "f16", "i8"):
                    oracle_case(m, own, route, ["--i8-enable"],
                                seed=seed + 11, accept=acc)
                oracle_case(m, own, route, args, seed=seed + 21,
                            zero_weights=True)
            oracle_case(m, own, route, args, seed=seed + 31, unheld=True)
        # top-k 8 of 8 with duplicates allowed by the oracle's routing
        oracle_case(m, "0-7", "layer-batch", (), seed=99, top_k=8)


# --- spec/moe.md §6 from its bytes --------------------------------------

def hexb(s):
    return bytes.fromhex("".join(s.split()))


LAYER_REQ = hexb("""00000000 04000000 02000000 0000803f 000000c0 0000003f
    00004040 01000000 0000803e 00000000 0000403f""")
LAYER_OUT = hexb("f08dc63f 40da8e3e f400ed3f 8056e0be")
F16_REQ = hexb("""00000000 04000000 02000000 003c 00c0 0038 0042
    01000000 0000803e 00000000 0000403f""")
F16_OUT = hexb("343e 7734 683f 03b7")
MULTI_REQ = hexb("""01000000 00000000 04000000 02000000 0000803f 000000c0
    0000003f 00004040 01000000 00000000 0000803e 0000403f""")
MULTI_RESP = hexb("""01000000 00000000 04000000 f08dc63f 40da8e3e f400ed3f
    8056e0be""")
BATCH_REQ = hexb("""02000000 04000000 00000000 00000000 0000803f 000000c0
    0000003f 00004040 00000000 01000000 0000803f 000000c0 0000003f
    00004040""")
BATCH_ITEMS = hexb("""00000000 00000000 55f31140 e2d4403e a3001e40 e2d440be
    00000000 01000000 80f822bf d6140d3f 00000000 ab0698bf""")


def close32(got, want, ulps=2):
    """f32 vectors (bytes) equal within ulps: spec/moe.md §1 compares
    with a tolerance (lib/ffn's GELU-tanh is within a few ulp of libm's,
    tests/ffn/test_ffn_act.c)."""
    if len(got) != len(want) or len(got) % 4:
        return False
    g = struct.unpack("<%di" % (len(got) // 4), got)
    w = struct.unpack("<%di" % (len(want) // 4), want)
    return all(abs(a - b) <= ulps for a, b in zip(g, w))


def test_spec_example():
    for flag in ("--example-moe", "--example-moe-f32"):
        m = mkvindex("ex" + flag, flag)
        a = ["--experts", "0-1", "--no-dense"]
        st, ct, b = frame(m, "/v1/experts/layer-batch", LAYER_REQ, args=a)
        ok(st == 200 and ct == moe.CT_LAYER and len(b) == 24 and
           b[:4] == hexb("04000000") and close32(b[8:], LAYER_OUT),
           "§6 layer-batch %s: %d %s %s" % (flag, st, ct, b.hex()))
        st, ct, b = frame(m, "/v1/experts/layer-batch-f16", F16_REQ,
                          args=a)
        ok(st == 200 and ct == moe.CT_LAYER + "-f16" and
           b[:4] == hexb("04000000") and b[8:] == F16_OUT,
           "§6 layer-batch-f16 %s: %d %s %s" % (flag, st, ct, b.hex()))
        st, ct, b = frame(m, "/v1/experts/multi-layer-batch", MULTI_REQ,
                          args=a)
        ok(st == 200 and ct == moe.CT_MULTI and b[:12] == MULTI_RESP[:12]
           and close32(b[12:], MULTI_RESP[12:]),
           "§6 multi-layer-batch %s: %d %s %s" % (flag, st, ct, b.hex()))
        st, ct, b = frame(m, "/v1/expert/batch", BATCH_REQ, moe.CT_EXPERT,
                          args=a)
        ok(st == 200 and ct == moe.CT_EXPERT and len(b) == 60 and
           b[:8] == hexb("02000000 04000000") and
           close32(b[12:], BATCH_ITEMS),
           "§6 expert/batch %s: %d %s %s" % (flag, st, ct, b.hex()))
        st, ct, b = frame(m, "/v1/expert/0/1", b'{"residual":[1,-2,0.5,3]}',
                          "application/json", args=a)
        out = json.loads(b).get("output") if st == 200 else None
        ok(out is not None and b.startswith(b'{"output":[') and
           b'"latency_ms":' in b and
           close32(struct.pack("<4f", *out),
                   struct.pack("<4f", -0.6366043, 0.5510992, 0.0,
                               -1.1877035)),
           "§6 single %s: %d %s" % (flag, st, b[:80]))
        st, ct, b = frame(m, "/v1/expert/topology", args=a)
        ok(st == 200 and json.loads(b) == {
            "model_id": "tiny-moe", "num_experts": 2, "num_layers": 1,
            "owned_start": 0, "owned_end": 1},
           "§6 topology %s: %d %s" % (flag, st, b))
        # the key order of §2
        ok(b.startswith(b'{"model_id":"tiny-moe","num_experts":2,'),
           "topology key order: %s" % b)


# --- §4 and §7 errors ----------------------------------------------------

def expect(model, path, body, want_status, want_body, ct=None, args=(),
           accept=None, want_ct=None):
    st, got_ct, b = frame(model, path, body, ct, accept, args)
    if want_ct is None:
        want_ct = ("application/json" if want_body.startswith("{") else
                   "text/plain; charset=utf-8")
    good = (st == want_status and got_ct == want_ct and
            b.decode(errors="replace") == want_body)
    ok(good, "%s %r: got %d %s %r, want %d %s %r" % (
        path, body[:24], st, got_ct, b[:120], want_status, want_ct,
        want_body))


def jerr(msg):
    return json.dumps({"error": msg}, ensure_ascii=False,
                      separators=(",", ":"))


def layer_body(layer, hidden, pairs, x=None):
    x = x if x is not None else [0.5] * hidden
    return (struct.pack("<III", layer, hidden, len(pairs)) +
            struct.pack("<%df" % len(x), *x) +
            b"".join(struct.pack("<If", e, w) for e, w in pairs))


def test_errors():
    m = os.path.join(TMP, "m-q4k")
    dense = mkvindex("dense", "--family", "gemma3", "--hidden", "512",
                     "--layers", "2", "--intermediate", "256")
    a = ["--experts", "2-6"]
    H = 512
    lb = "/v1/experts/layer-batch"
    # truncation, at every length short of the frame (§3.6: never an
    # allocation from the counts)
    full = layer_body(0, H, [(2, 0.5)])
    for n in (0, 4, 11, 12, 12 + 4 * H - 1, len(full) - 1):
        expect(m, lb, full[:n], 400, jerr("layer-batch request truncated"),
               args=a)
    expect(m, lb, struct.pack("<III", 0, 0xFFFFFFFF, 0xFFFFFFFF), 400,
           jerr("layer-batch request truncated"), args=a)
    expect(m, lb + "-f16", b"\0" * 11, 400,
           jerr("layer-batch-f16 request truncated"), args=a)
    expect(m, lb + "-i8", b"\0" * 11, 400,
           jerr("i8 expert wire is not enabled on this shard"), args=a)
    expect(m, lb + "-i8", b"\0" * 11, 400,
           jerr("layer-batch-i8 request truncated"),
           args=a + ["--i8-enable"])
    expect(m, lb, layer_body(0, 8, [(2, 1.0)]), 400,
           jerr("residual length 8 != hidden_size 512"), args=a)
    expect(dense, lb, layer_body(0, H, [(2, 1.0)]), 400,
           jerr("model is not a hybrid MoE \u2014 no expert endpoints "
                "available"))
    # the first pair not held is named: an unowned expert, or any expert
    # of a layer without a layer file (2) or beyond the model (9)
    for e, L, bad in ((1, 0, 1), (7, 0, 7), (2, 2, 3), (2, 9, 3)):
        expect(m, lb, layer_body(L, H, [(3, 0.5), (e, 0.25)]), 400,
               jerr("expert %d of layer %d is not held by this shard"
                    % (bad, L)), args=a)
    # a few wire bytes a pair ask for 4 H bytes a pair: past the shard's
    # response limit (1 GiB by default), 413 before any allocation
    many = 600000
    body = layer_body(0, H, [(2, 0.5)] * many)
    expect(m, lb, body, 413,
           jerr("response of %d expert rows x %d values exceeds the "
                "shard's limit of 1073741824 bytes" % (many + 1, H)),
           args=a)
    # hidden 0: 200, an 8-byte answer; K 0 / zero weights: H zeros
    st, ct, b = frame(m, lb, layer_body(0, 0, [(9, 1.0)], []), args=a)
    ok(st == 200 and len(b) == 8 and b[:4] == b"\0\0\0\0",
       "hidden 0: %d %r" % (st, b))
    for pairs in ([], [(1, 0.0), (99, -0.0)]):
        st, ct, b = frame(m, lb, layer_body(0, H, pairs), args=a)
        ok(st == 200 and len(b) == 8 + 4 * H and
           b[8:] == b"\0" * (4 * H), "zeros for %s: %d" % (pairs, st))
    # multi-layer
    ml = "/v1/experts/multi-layer-batch"
    st, ct, b = frame(m, ml, b"\0\0\0\0", args=a)
    ok(st == 200 and b == b"\0\0\0\0", "multi n=0: %d %r" % (st, b))
    for body in (b"", b"\1\0\0", struct.pack("<I", 0xFFFFFFFF),
                 struct.pack("<IIII", 1, 0, H, 0)):
        expect(m, ml, body, 400,
               jerr("multi-layer-batch request truncated"), args=a)
        expect(m, ml + "-q8k", body, 400,
               jerr("multi-layer-batch-q8k request truncated"), args=a)
    task = struct.pack("<III", 0, 300, 0) + b"\0" * (300 + 4 + 16)
    expect(m, ml + "-q8k", struct.pack("<I", 1) + task, 400,
           jerr("q8k activation needs hidden_size divisible by 256 "
                "(got 300)"), args=a)
    t_ok = struct.pack("<III", 0, H, 0) + b"\0" * (4 * H)
    t_bad = struct.pack("<III", 1, 16, 0) + b"\0" * 64
    expect(m, ml, struct.pack("<I", 2) + t_ok + t_bad, 400,
           jerr("residual length 16 != hidden_size 512"), args=a)
    # expert batch
    eb = "/v1/expert/batch"
    expect(m, eb, b"\1\0\0\0\0\2\0\0", 400,
           jerr("binary expert request truncated"), moe.CT_EXPERT, a)
    st, ct, b = frame(m, eb, b"{", "application/json", args=a)
    ok(st == 400 and b.startswith(b'{"error":"JSON parse: '),
       "batch JSON parse: %d %r" % (st, b))
    st, ct, b = frame(m, eb, b"\0" * 8, moe.CT_EXPERT, args=a)
    ok(st == 200 and len(b) == 12 and b[:8] == b"\0" * 8,
       "empty binary batch: %d %r" % (st, b))
    st, ct, b = frame(m, eb, b'{"requests":[]}', "application/json",
                      args=a)
    ok(st == 200 and b.startswith(b'{"results":[],"latency_ms":'),
       "empty JSON batch: %d %r" % (st, b))
    item = struct.pack("<II", 0, 9) + b"\0" * (4 * H)
    expect(m, eb, struct.pack("<II", 1, H) + item, 400,
           jerr("expert 9 not owned by this shard (owns 2\u20136)"),
           moe.CT_EXPERT, a)
    # single route, §4's order
    res = json.dumps({"residual": [0.25] * H}).encode()
    expect(m, "/v1/expert/x%41/2", res, 400, "Invalid URL: Cannot parse "
           "value at index 0 with value `xA` to a `u64`",
           "application/json", a)
    expect(m, "/v1/expert/1/18446744073709551616", res, 400,
           "Invalid URL: Cannot parse value at index 1 with value "
           "`18446744073709551616` to a `u64`", "application/json", a)
    expect(m, "/v1/expert/0/2", res, 415, "Expected request with "
           "`Content-Type: application/json`", "text/plain", a)
    st, ct, b = frame(m, "/v1/expert/0/2", b'{"residual":[1,', "application/json",
                      args=a)
    ok(st == 400 and ct.startswith("text/plain") and
       b.startswith(b"Failed to parse the request body as JSON: "),
       "single syntax: %d %s %r" % (st, ct, b))
    st, ct, b = frame(m, "/v1/expert/0/2", b'{"residual":"x"}',
                      "application/vnd.x+json", args=a)
    ok(st == 422 and ct.startswith("text/plain") and b.startswith(
        b"Failed to deserialize the JSON body into the target type: "),
       "single 422: %d %s %r" % (st, ct, b))
    expect(m, "/v1/expert/0/7", res, 400,
           jerr("expert 7 not owned by this shard (owns 2\u20136)"),
           "application/json", a)
    expect(dense, "/v1/expert/0/7", res, 400,
           jerr("model is not a hybrid MoE \u2014 no expert endpoints "
                "available"), "application/json")
    expect(m, "/v1/expert/0/2", b'{"residual":[1,2]}', 400,
           jerr("residual length 2 != hidden_size 512"),
           "application/json", a)
    expect(m, "/v1/expert/2/2", res, 400,
           jerr("per-layer entry missing for layer 2 expert 2"),
           "application/json", a)
    expect(m, "/v1/expert/0/2", b" " * (2 << 20) + b"{}", 413,
           "Failed to buffer the request body: length limit exceeded",
           "application/json", a)
    # units ownership (the reference's --units)
    units = os.path.join(TMP, "units.json")
    with open(units, "w") as f:
        json.dump({"layer_experts": {"0": [[0, 1], [5, 5]]}}, f)
    ua = ["--expert-units", units]
    expect(m, "/v1/expert/0/3", res, 400,
           jerr("(layer=0, expert=3) not owned by this shard (--units "
                "manifest defines its ownership set)"),
           "application/json", ua)
    st, ct, b = frame(m, "/v1/expert/0/5", res, "application/json",
                      args=ua)
    ok(st == 200, "units-owned expert: %d %r" % (st, b[:80]))
    # topology: 404 and an empty body unless experts = A-B
    for args in (ua, []):
        st, ct, b = frame(m, "/v1/expert/topology", args=args)
        ok(st == 404 and b == b"", "topology %s: %d %r" % (args, st, b))
    # an expert-only unit: walk-ffn has no model
    st, ct, b = frame(m, "/v1/walk-ffn", json.dumps(
        {"layer": 0, "residual": [0.0] * H}).encode(), "application/json",
        args=a + ["--no-dense"])
    ok(st == 404 and b == jerr("no model loaded").encode(),
       "expert-only walk-ffn: %d %r" % (st, b))
    st, ct, b = frame(m, lb, layer_body(0, H, [(2, 1.0)]),
                      args=a + ["--no-dense"])
    ok(st == 200, "expert-only layer-batch: %d" % st)


# --- the precision guard (§7) -------------------------------------------

def test_guard():
    m = os.path.join(TMP, "m-f32")
    a = ["--experts", "0-7"]
    big = [3.0e4] * 512
    body = layer_body(0, 512, [(1, 1.0e6)], big)
    lb = "/v1/experts/layer-batch"
    st, ct, b = frame(m, lb, body, accept=moe.CT_LAYER + "-f16", args=a)
    vals = struct.unpack("<512f", b[8:]) if st == 200 and len(b) == 2056 \
        else ()
    ok(st == 200 and ct == moe.CT_LAYER and
       any(abs(v) > 65520 for v in vals) and
       all(v == v and abs(v) != float("inf") for v in vals),
       "guard: f16 asked, f32 sent: %d %s %d" % (st, ct, len(b)))
    st, ct, b = frame(m, lb, body, accept=moe.CT_LAYER + "-f16",
                      args=a + ["--no-f16-guard"])
    ok(st == 200 and ct == moe.CT_LAYER + "-f16" and len(b) == 8 + 1024,
       "guard off: f16 with Inf: %d %s" % (st, ct))
    # the route's own f16 keeps +-Inf (§7, last rule)
    f16 = struct.pack("<III", 0, 512, 1) + struct.pack(
        "<512e", *[3.0e4] * 512) + struct.pack("<If", 1, 1.0e6)
    st, ct, b = frame(m, lb + "-f16", f16, args=a)
    ok(st == 200 and ct == moe.CT_LAYER + "-f16" and len(b) == 8 + 1024,
       "own f16 not guarded: %d %s" % (st, ct))
    # the dense route's negotiated f16 (wire.md §5.1) is guarded too
    dense = os.path.join(TMP, "dense")
    walk = struct.pack("<IIII", 0, 1, 1, 8092) + struct.pack(
        "<512f", *[300.0] * 512)
    st, ct, b = frame(dense, "/v1/walk-ffn", walk, "application/x-larql-ffn",
                      "application/x-larql-ffn-f16")
    ok(st == 200 and ct == "application/x-larql-ffn",
       "dense guard: %d %s" % (st, ct))
    st, ct, b = frame(dense, "/v1/walk-ffn", walk, "application/x-larql-ffn",
                      "application/x-larql-ffn-f16", ["--no-f16-guard"])
    ok(st == 200 and ct == "application/x-larql-ffn-f16",
       "dense guard off: %d %s" % (st, ct))


def main():
    try:
        test_oracle()
        test_spec_example()
        test_errors()
        test_guard()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("moe_frame.py: %d checks, %d failed" % (checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
