#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""ffn-frame's command line as issue 2 gives it:

    ffn-frame --model DIR [--layers A-B] --content-type CT [--accept A]
              [--i8-enable] [--f16-disable] < body > out

on the hand-checkable model of spec/vindex.md §3 (mkvindex --example):
the response body on stdout byte for byte against spec/wire.md §5.2/§5.3
(values from the §3 table), `STATUS CONTENT-TYPE` as the last stderr
line, §5.1 negotiation by flags and by the reference's environment
variables, single/batch by result count, §4 errors as JSON, the §6 JSON
path, and the usage errors. Standard library only.

    test_ffn_frame.py FFN_FRAME MKVINDEX
"""

import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

FRAME = MKV = None
CT = "application/x-larql-ffn"
CT16 = CT + "-f16"
CT8 = CT + "-i8"
ACCEPT_ALL = CT8 + ", " + CT16 + ", " + CT  # §5.1 client default
X = [1.0, -2.0, 0.5, 3.0]
# vindex.md §3 table, SiLU ("llama"), layers 0 and 1.
WANT = [[1.827646, 0.9536234, -6.794814, -4.013545],
        [0.6224593, 0.0, 0.6131809, -8.573167]]
TOL = 4e-6  # 7 printed digits of |v| < 10, plus f32 evaluation


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def f16_bits(v):
    return struct.unpack("<H", struct.pack("<e", v))[0]


def single_req(layer, rows, payload=None, flags=1):
    body = struct.pack("<4I", layer, len(rows), flags, 8092)
    return body + (payload if payload is not None else
                   b"".join(struct.pack("<%df" % len(r), *r) for r in rows))


def batch_req(layers, rows, payload=None):
    body = struct.pack("<2I", 0xFFFFFFFF, len(layers))
    body += struct.pack("<%dI" % len(layers), *layers)
    body += struct.pack("<3I", len(rows), 1, 8092)
    return body + (payload if payload is not None else
                   b"".join(struct.pack("<%df" % len(r), *r) for r in rows))


def i8_row(v):
    """spec/wire.md §5.3 i8 of one row, from the definition."""
    m = max(abs(x) for x in v)
    s = f32(f32(m) / f32(127.0)) if m else 1.0
    q = []
    for x in v:
        t = f32(f32(x) / s)
        t = max(-127.0, min(127.0, t))
        q.append(int(math.copysign(math.floor(abs(t) + 0.5), t)))
    return s, q


class FrameCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ffn-frame-test.")
        cls.model = os.path.join(cls.tmp, "example")
        subprocess.run([MKV, "--example", cls.model], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def run_frame(self, body, *args, env=None, ct=CT, model=None):
        cmd = [FRAME, "--model", model or self.model]
        if ct is not None:
            cmd += ["--content-type", ct]
        e = dict(os.environ)
        e.pop("LARQL_I8_WIRE", None)
        e.pop("LARQL_F16_WIRE_DISABLE", None)
        e.update(env or {})
        p = subprocess.run(cmd + list(args), input=body,
                           capture_output=True, env=e, timeout=60)
        return p

    def ok(self, body, *args, env=None, ct=CT):
        """Run; exit 0; return (status, content type, stdout)."""
        p = self.run_frame(body, *args, env=env, ct=ct)
        self.assertEqual(p.returncode, 0, p.stderr)
        last = p.stderr.decode().rstrip("\n").split("\n")[-1]
        self.assertRegex(last, r"^[0-9]{3} \S+$")
        status, ctype = last.split(" ")
        return int(status), ctype, p.stdout

    def check_single(self, out, layer, fmt):
        lay, seq, lat = struct.unpack_from("<IIf", out)
        self.assertEqual((lay, seq), (layer, 1))
        self.assertTrue(math.isfinite(lat) and lat >= 0, lat)
        want = WANT[layer]
        p = out[12:]
        if fmt == "f32":
            self.assertEqual(len(p), 16)
            for g, w in zip(struct.unpack("<4f", p), want):
                self.assertAlmostEqual(g, w, delta=TOL)
        elif fmt == "f16":
            self.assertEqual(len(p), 8)
            got = struct.unpack("<4H", p)
            # the f16 of the true value, or a neighbour when the f32
            # result sits within TOL of a rounding boundary
            for g, w in zip(got, want):
                self.assertIn(g, {f16_bits(w - TOL), f16_bits(w),
                                  f16_bits(w + TOL)}, (got, want))
        else:
            self.assertEqual(len(p), 12)
            s, z = struct.unpack_from("<ff", p)
            q = list(struct.unpack_from("<4b", p, 8))
            ws, wq = i8_row(want)
            self.assertAlmostEqual(s, ws, delta=TOL / 127)
            self.assertEqual(z, 0.0)
            self.assertEqual(q, wq)

    # ---- binary path, §5.1 negotiation ----

    def test_f32_no_accept(self):
        # §7: the router's request, bare base type and no Accept
        st, ct, out = self.ok(single_req(0, [X]))
        self.assertEqual((st, ct), (200, CT))
        self.check_single(out, 0, "f32")

    def test_accept_default_is_f16_without_i8(self):
        st, ct, out = self.ok(single_req(1, [X]), "--accept", ACCEPT_ALL)
        self.assertEqual((st, ct), (200, CT16))
        self.check_single(out, 1, "f16")

    def test_i8_enable_flag_and_env(self):
        for args, env in ((["--i8-enable"], None),
                          ([], {"LARQL_I8_WIRE": "0"})):  # by presence
            st, ct, out = self.ok(single_req(0, [X]), "--accept",
                                  ACCEPT_ALL, *args, env=env)
            self.assertEqual((st, ct), (200, CT8), (args, env))
            self.check_single(out, 0, "i8")

    def test_f16_disable_flag_and_env(self):
        for args, env in ((["--f16-disable"], None),
                          ([], {"LARQL_F16_WIRE_DISABLE": ""})):
            st, ct, out = self.ok(single_req(0, [X]), "--accept",
                                  CT16 + ", " + CT, *args, env=env)
            self.assertEqual((st, ct), (200, CT), (args, env))
            self.check_single(out, 0, "f32")

    def test_i8_asked_not_enabled_falls_back(self):
        st, ct, out = self.ok(single_req(0, [X]), "--accept", CT8)
        self.assertEqual((st, ct), (200, CT))
        self.check_single(out, 0, "f32")

    # ---- request payload formats (§3) ----

    def test_f16_and_i8_requests(self):
        p16 = struct.pack("<4e", *X)  # exact in f16
        st, ct, out = self.ok(single_req(1, [X], p16), ct=CT16)
        self.assertEqual((st, ct), (200, CT))
        self.check_single(out, 1, "f32")
        # scale 0.5, zero point ignored, q = 2 -4 1 6 -> X exactly
        p8 = struct.pack("<ff4b", 0.5, 7.0, 2, -4, 1, 6)
        st, ct, out = self.ok(single_req(1, [X], p8), ct=CT8 + "; v=1")
        self.assertEqual((st, ct), (200, CT))
        self.check_single(out, 1, "f32")

    # ---- §5.2: the frame follows the number of results ----

    def test_batch_two_layers(self):
        st, ct, out = self.ok(batch_req([1, 0], [X, [0, 0, 0, 0]]))
        self.assertEqual((st, ct), (200, CT))
        mark, n, lat = struct.unpack_from("<IIf", out)
        self.assertEqual((mark, n), (0xFFFFFFFF, 2))
        self.assertTrue(math.isfinite(lat) and lat >= 0)
        self.assertEqual(len(out), 12 + 2 * (12 + 32))
        for i, layer in enumerate((1, 0)):
            o = 12 + i * 44
            self.assertEqual(struct.unpack_from("<3I", out, o),
                             (layer, 2, 8))
            v = struct.unpack_from("<8f", out, o + 12)
            for g, w in zip(v, WANT[layer] + [0, 0, 0, 0]):
                self.assertAlmostEqual(g, w, delta=TOL)

    def test_batch_of_one_answers_single(self):
        st, ct, out = self.ok(batch_req([1], [X]), "--accept", CT16)
        self.assertEqual((st, ct), (200, CT16))
        self.check_single(out, 1, "f16")

    def test_batch_of_zero(self):
        st, ct, out = self.ok(batch_req([], [X]), "--i8-enable",
                              "--accept", CT8)
        self.assertEqual((st, ct), (200, CT8))
        self.assertEqual(len(out), 12)
        self.assertEqual(struct.unpack_from("<II", out), (0xFFFFFFFF, 0))

    def test_batch_i8_rows(self):
        st, ct, out = self.ok(batch_req([0, 0], [X, X]), "--i8-enable",
                              "--accept", ACCEPT_ALL)
        self.assertEqual((st, ct), (200, CT8))
        self.assertEqual(len(out), 12 + 2 * (12 + 2 * 12))
        ws, wq = i8_row(WANT[0])
        for i in range(2):
            o = 12 + i * 36
            self.assertEqual(struct.unpack_from("<3I", out, o), (0, 2, 8))
            for r in range(2):  # max(seq_len, 1) rows of 8 + hidden
                s, z = struct.unpack_from("<ff", out, o + 12 + r * 12)
                q = struct.unpack_from("<4b", out, o + 12 + r * 12 + 8)
                self.assertAlmostEqual(s, ws, delta=TOL / 127)
                self.assertEqual((z, list(q)), (0.0, wq))

    # ---- §4 errors: JSON bodies, exact messages ----

    def err(self, body, *args, ct=CT):
        st, ctype, out = self.ok(body, *args, ct=ct)
        self.assertEqual(ctype, "application/json")
        return st, json.loads(out.decode("utf-8"))["error"]

    def test_errors(self):
        self.assertEqual(self.err(single_req(0, [X])[:15]),
                         (400, "binary: body too short (need \u2265 16 bytes)"))
        self.assertEqual(self.err(single_req(0, [X]), "--layers", "1-1"),
                         (400, "layer 0 not served by this shard "
                               "(owned: 1\u20131)"))
        self.assertEqual(self.err(single_req(2, [X])),
                         (400, "layer 2 out of range (num_layers = 2)"))
        self.assertEqual(self.err(single_req(0, [X], flags=0)),
                         (400, "binary wire format requires "
                               "full_output = true"))
        self.assertEqual(self.err(single_req(0, [X, X])[:-4]),
                         (400, "residual has 7 elements, expected 8 "
                               "(seq_len=2 * hidden_size=4)"))

    # ---- §6 JSON path (any other Content-Type, none included) ----

    def test_json_full_output_and_features(self):
        body = json.dumps({"layers": [1, 0], "residual": X,
                           "full_output": True}).encode()
        for ct in (None, "application/json"):
            st, ctype, out = self.ok(body, ct=ct)
            self.assertEqual((st, ctype), (200, "application/json"))
            r = json.loads(out)
            self.assertEqual([x["layer"] for x in r["results"]], [1, 0])
            for x, layer in zip(r["results"], (1, 0)):
                for g, w in zip(x["output"], WANT[layer]):
                    self.assertAlmostEqual(g, w, delta=TOL)
        body = json.dumps({"layer": 0, "residual": X, "top_k": 2}).encode()
        st, ctype, out = self.ok(body, ct=None)
        r = json.loads(out)
        self.assertEqual((r["layer"], r["features"], r["scores"]),
                         (0, [2, 1], [3.5, -2.0]))
        st, msg = self.err(b"{\"layer\": 0,", ct="application/json")
        self.assertEqual(st, 400)
        self.assertTrue(msg.startswith("invalid JSON: "), msg)

    # ---- the command line itself ----

    def test_usage_errors(self):
        p = subprocess.run([FRAME], input=b"", capture_output=True,
                           timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"--model DIR", p.stderr)
        for bad in ("3-1", "x", "1-", "1-2x", "-1", "1,2", ""):
            p = self.run_frame(b"", "--layers", bad)
            self.assertEqual(p.returncode, 2, bad)
            self.assertIn(b"--layers", p.stderr)
        # the body comes on stdin only: a file name argument is refused,
        # not silently ignored while stdin is read
        p = self.run_frame(b"", "request.bin")
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"request.bin", p.stderr)
        p = self.run_frame(b"", model=os.path.join(self.tmp, "nope"))
        self.assertEqual(p.returncode, 1)
        self.assertIn(b"cannot load", p.stderr)
        self.assertIn(b"index.json", p.stderr)


if __name__ == "__main__":
    FRAME, MKV = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
