#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""mkvindex models, read by an independent reader, against ffn-frame.

For each layout of spec/vindex.md (§2.1, §2.2, §2.3), dtype f32 and f16,
and both activations, a model written by mkvindex (per-layer widths, its
large-magnitude channels) is read by tests/e2e/pyref/vindex.py (written
from the spec, shares no code with lib/ffn or tools/mkvindex) and its FFN
computed in float64 by pyref/ffn.py; ffn-frame answers a batch request
(layers 2, 0, 2; seq_len 3) and must agree within the f32 error bound
below. The f16 and i8 answers to the same request must then be exactly
the §5.3 conversions of the f32 answer (numpy's float16 cast; the i8 rule
in float32 arithmetic), and features mode must rank by |gate . x|.

    test_frame_pyref.py FFN_FRAME MKVINDEX   (python3 with numpy)
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e", "pyref"))
import ffn  # noqa: E402
import vindex  # noqa: E402

FRAME = MKV = None
CT = "application/x-larql-ffn"
EPS = 2.0 ** -24
LAYERS = [2, 0, 2]
SEQ = 3


def bound(G, U, D, x, act):
    """Per-element bound of an f32 evaluation against the exact value
    (as tests/ffn/test_ffn_compute.c): sums of n products in any order are
    within n*eps of the sum of |products|; |act'| <= 1.13; doubled for
    second-order terms. A misread weight is off by O(|y|)."""
    x = np.atleast_2d(x).astype(np.float64)
    G, U, D = (np.asarray(m, np.float64) for m in (G, U, D))
    H, nf = G.shape[1], G.shape[0]
    g, u = x @ G.T, x @ U.T
    sg, su = np.abs(x) @ np.abs(G).T, np.abs(x) @ np.abs(U).T
    a = ffn.ACTS[act](g) * u
    da = (1.2 * np.abs(u) * H * EPS * sg +
          np.abs(ffn.ACTS[act](g)) * H * EPS * su + 8 * EPS * np.abs(a))
    return 2 * (da @ np.abs(D) + nf * EPS * (np.abs(a) @ np.abs(D))) + 1e-30


def i8_rows(y):
    """spec/wire.md §5.3 in float32 arithmetic, rows of y -> bytes."""
    out = b""
    for row in np.asarray(y, np.float32):
        m = np.float32(np.max(np.abs(row)))
        s = np.float32(1.0) if m == 0 else np.float32(m / np.float32(127))
        q = np.clip(row / s, np.float32(-127), np.float32(127))
        q = np.where(np.isnan(q), 0, np.sign(q) * np.floor(np.abs(q) + 0.5))
        out += struct.pack("<ff", s, 0.0) + q.astype(np.int8).tobytes()
    return out


class FrameVsPyref(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ffn-frame-pyref.")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def frame(self, model, body, *args):
        p = subprocess.run([FRAME, "--model", model, *args], input=body,
                           capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        st, ct = p.stderr.decode().rstrip("\n").split("\n")[-1].split(" ")
        return int(st), ct, p.stdout

    def batch_results(self, out, fmt, H):
        mark, n, _ = struct.unpack_from("<IIf", out)
        self.assertEqual((mark, n), (0xFFFFFFFF, len(LAYERS)))
        per = {"f32": SEQ * H * 4, "f16": SEQ * H * 2,
               "i8": SEQ * (8 + H)}[fmt]
        res, o = [], 12
        for L in LAYERS:
            self.assertEqual(struct.unpack_from("<3I", out, o),
                             (L, SEQ, SEQ * H))
            res.append(out[o + 12:o + 12 + per])
            o += 12 + per
        self.assertEqual(o, len(out))
        return res

    def check_model(self, name, *args):
        d = os.path.join(self.tmp, name)
        subprocess.run([MKV, *args, d], check=True, timeout=60)
        v = vindex.load(d)
        H = v.hidden
        rng = np.random.default_rng(len(name))
        x = rng.standard_normal((SEQ, H)).astype(np.float32)
        x[:, ::13] *= 8  # a few large channels, as residuals have
        body = struct.pack("<2I", 0xFFFFFFFF, len(LAYERS))
        body += struct.pack("<%dI" % len(LAYERS), *LAYERS)
        body += struct.pack("<3I", SEQ, 1, 8092) + x.tobytes()

        st, ct, out = self.frame(d, body, "--content-type", CT)
        self.assertEqual((st, ct), (200, CT))
        f32 = self.batch_results(out, "f32", H)
        for L, raw in zip(LAYERS, f32):
            G, U, D = v.weights[L]
            want = ffn.compute64(G, U, D, x, v.activation)
            tol = bound(G, U, D, x, v.activation)
            got = np.frombuffer(raw, "<f4").reshape(SEQ, H)
            bad = np.abs(got - want) > tol
            self.assertFalse(bad.any(), "%s layer %d: max err %g, tol %g"
                             % (name, L, np.max(np.abs(got - want)),
                                np.min(tol)))
        # the same request answered f16 and i8: §5.3 of those f32 values
        st, ct, out = self.frame(d, body, "--content-type", CT, "--accept",
                                 CT + "-f16")
        self.assertEqual((st, ct), (200, CT + "-f16"))
        for raw, r16 in zip(f32, self.batch_results(out, "f16", H)):
            self.assertEqual(np.frombuffer(raw, "<f4").astype("<f2")
                             .tobytes(), r16)
        st, ct, out = self.frame(d, body, "--content-type", CT, "--accept",
                                 CT + "-i8", "--i8-enable")
        self.assertEqual((st, ct), (200, CT + "-i8"))
        for raw, r8 in zip(f32, self.batch_results(out, "i8", H)):
            self.assertEqual(i8_rows(np.frombuffer(raw, "<f4")
                                     .reshape(SEQ, H)), r8)
        # features mode (§6): ranked by |gate . x|, signed scores
        req = {"layer": 1, "residual": [float(t) for t in x[0]],
               "top_k": 7}
        st, ct, out = self.frame(d, json.dumps(req).encode())
        self.assertEqual((st, ct), (200, "application/json"))
        r = json.loads(out)
        s64 = np.asarray(v.weights[1][0], np.float64) @ x[0].astype(
            np.float64)
        tol = 1e-4 * np.max(np.abs(s64))
        ids = r["features"]
        self.assertEqual(len(ids), 7)
        rest = np.delete(np.abs(s64), ids)
        self.assertGreaterEqual(np.min(np.abs(s64[ids])) + tol,
                                np.max(rest))
        for a, b in zip(ids, ids[1:]):
            self.assertGreaterEqual(abs(s64[a]) + tol, abs(s64[b]))
        for i, sc in zip(ids, r["scores"]):
            self.assertLessEqual(abs(sc - s64[i]), 0.005 + tol)

    def test_long_body(self):
        """A body past ffn-frame's first 64 KiB read buffer (seq_len 300
        of hidden 72: 86 KiB), answered whole and right."""
        d = os.path.join(self.tmp, "long")
        subprocess.run([MKV, "--hidden", "72", "--intermediate", "40",
                        "--layers", "1", "--dtype", "f16", d], check=True,
                       timeout=60)
        v = vindex.load(d)
        x = np.random.default_rng(9).standard_normal((300, 72)).astype(
            np.float32)
        body = struct.pack("<4I", 0, 300, 1, 8092) + x.tobytes()
        self.assertGreater(len(body), 65536)
        st, ct, out = self.frame(d, body, "--content-type", CT)
        self.assertEqual((st, ct), (200, CT))
        self.assertEqual(struct.unpack_from("<II", out), (0, 300))
        self.assertEqual(len(out), 12 + 300 * 72 * 4)
        G, U, D = v.weights[0]
        got = np.frombuffer(out[12:], "<f4").reshape(300, 72)
        want = ffn.compute64(G, U, D, x, v.activation)
        self.assertTrue((np.abs(got - want) <=
                         bound(G, U, D, x, v.activation)).all())

    def test_models(self):
        n = 0
        for layout in ("feature-major", "interleaved", "dense"):
            for dtype in ("f32", "f16"):
                for fam in ("llama", "gemma3"):
                    with self.subTest(layout=layout, dtype=dtype, fam=fam):
                        self.check_model(
                            "%s-%s-%s" % (layout, dtype, fam),
                            "--hidden", "72", "--widths", "50,96,33",
                            "--layout", layout, "--dtype", dtype,
                            "--family", fam, "--seed", str(n + 3))
                    n += 1


if __name__ == "__main__":
    FRAME, MKV = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
