#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Unit tests of pyref against the spec's own numbers: wire.md §8 frames,
§4 messages, §5.1 negotiation, §5.3 conversions, vindex.md §3 table;
server.py's --api-key (the appliance's 401 rule).

    python3 tests/e2e/pyref/test_pyref.py
"""

import http.client
import json
import math
import os
import struct
import sys
import tempfile
import threading
import unittest
from unittest import mock
from fractions import Fraction

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ffn  # noqa: E402
import mkmodel  # noqa: E402
import server  # noqa: E402
import vindex  # noqa: E402
import wire  # noqa: E402


def hx(s):
    return bytes.fromhex(s.replace(" ", "").replace("\n", ""))


X = [1, -2, 0.5, 3]
# vindex.md §3 table.
SILU = [[1.827646, 0.9536234, -6.794814, -4.013545],
        [0.6224593, 0, 0.6131809, -8.573167]]
GELU = [[2.102980, 0.1816092, -6.998768, -4.714178],
        [0.6914280, 0, 0.6997858, -8.989088]]


def f16_spec(bits32):
    """wire.md §5.3 f16, from the definition: exact rational rounding to
    nearest even, overflow to Inf, quiet NaN keeping the top payload bits."""
    s = (bits32 >> 16) & 0x8000
    e = (bits32 >> 23) & 0xFF
    m = bits32 & 0x7FFFFF
    if e == 255:
        return s | 0x7C00 | ((0x200 | (m >> 13)) if m else 0)
    if e == 0 and m == 0:
        return s
    mant = m | (0x800000 if e else 0)
    v = Fraction(mant) * Fraction(2) ** ((e if e else 1) - 150)
    E = (e - 127) if e else (m.bit_length() - 1 - 149)
    qexp = max(E, -14) - 10
    r = round(v / Fraction(2) ** qexp)
    if r * Fraction(2) ** qexp > 65504:
        return s | 0x7C00
    if qexp == -24 and r <= 1024:
        return s | r
    if r == 2048:
        r, qexp = 1024, qexp + 1
    return s | ((qexp + 25) << 10) | (r - 1024)


class TestFrames(unittest.TestCase):
    """wire.md §8, byte for byte."""

    def test_request_single(self):
        body, ct = wire.encode_request(5, [X])
        self.assertEqual(body, hx("05000000 01000000 01000000 9c1f0000 "
                                  "0000803f 000000c0 0000003f 00004040"))
        self.assertEqual(ct, "application/x-larql-ffn")

    def test_request_batch(self):
        body, _ = wire.encode_request([5, 20], [X])
        self.assertEqual(body, hx(
            "ffffffff 02000000 05000000 14000000 01000000 01000000 9c1f0000"
            "0000803f 000000c0 0000003f 00004040"))

    def test_request_decodes_back(self):
        body, ct = wire.encode_request([5, 20], [X])
        layers, s, x = wire.decode_request(body, ct, 4, 32)
        self.assertEqual((layers, s), ([5, 20], 1))
        self.assertEqual(x.tolist(), [X])

    def _single(self, fmt):
        return wire.encode_response(
            [(5, 1, np.array([[0.25, -1.5, 100, -0.001]], np.float32))],
            fmt, 7.3)

    def test_response_single_f32(self):
        self.assertEqual(self._single("f32"), hx(
            "05000000 01000000 9a99e940 0000803e 0000c0bf 0000c842 6f1283ba"))

    def test_response_single_f16(self):
        self.assertEqual(self._single("f16"), hx(
            "05000000 01000000 9a99e940 0034 00be 4056 1994"))

    def test_response_single_i8(self):
        self.assertEqual(self._single("i8"), hx(
            "05000000 01000000 9a99e940 2693493f 00000000 00 fe 7f 00"))

    def _batch(self, fmt):
        return wire.encode_response(
            [(5, 1, np.array([[0.25, -1.5]], np.float32)),
             (20, 1, np.array([[100, -0.001]], np.float32))], fmt, 7.3)

    def test_response_batch_f32(self):
        self.assertEqual(self._batch("f32"), hx(
            "ffffffff 02000000 9a99e940"
            "05000000 01000000 02000000 0000803e 0000c0bf"
            "14000000 01000000 02000000 0000c842 6f1283ba"))

    def test_response_batch_i8(self):
        self.assertEqual(self._batch("i8"), hx(
            "ffffffff 02000000 9a99e940"
            "05000000 01000000 02000000 0683413c 00000000 15 81"
            "14000000 01000000 02000000 2693493f 00000000 7f 00"))

    def test_response_empty_batch(self):
        self.assertEqual(wire.encode_response([], "f32", 0.0),
                         hx("ffffffff 00000000 00000000"))

    def test_i8_zero_row(self):
        self.assertEqual(wire.i8_encode_rows([[0, 0]]),
                         hx("0000803f 00000000 00 00"))

    def test_decode_responses(self):
        for fmt in ("f32", "f16", "i8"):
            lat, res = wire.decode_response(self._batch(fmt), wire.CT[fmt])
            self.assertAlmostEqual(lat, 7.3, places=5)
            self.assertEqual([(L, s) for L, s, _ in res], [(5, 1), (20, 1)])
            self.assertEqual(res[1][2].shape, (1, 2))
            lat, res = wire.decode_response(self._single(fmt), wire.CT[fmt])
            self.assertEqual(res[0][2].shape, (1, 4))
            np.testing.assert_allclose(res[0][2][0], [0.25, -1.5, 100,
                                                      -0.001],
                                       atol=0.8 if fmt == "i8" else 0.07)


class TestConversions(unittest.TestCase):
    """wire.md §5.3."""

    def test_f16_matches_definition(self):
        bits = []
        for hi in range(0, 1 << 16, 3):
            for lo in (0x0000, 0x0FFF, 0x1000, 0x1001, 0x3000, 0xFFFF):
                bits.append((hi << 16) | lo)
        rng = np.random.default_rng(7)
        bits += [int(b) for b in rng.integers(0, 1 << 32, 20000)]
        bits += [0x477FF000, 0x477FEFFF, 0x477FE000, 0x33000000, 0x33000001,
                 0x387FC000, 0x7F800001, 0xFFC00000, 0x80000000, 0x00000001]
        a = np.array(bits, dtype=np.uint32)
        got = wire.f32_to_f16_bits(a.view(np.float32))
        want = np.array([f16_spec(b) for b in bits], dtype=np.uint16)
        bad = np.nonzero(got != want)[0]
        self.assertEqual(len(bad), 0, "first mismatch f32 %08x: %04x != %04x"
                         % ((bits[bad[0]], got[bad[0]], want[bad[0]])
                            if len(bad) else (0, 0, 0)))

    def test_f16_overflow_and_specials(self):
        v = np.array([65504, 65519.99, 65520, 1e9, -1e9, 0.0, -0.0,
                      1e-30], np.float32)
        self.assertEqual(wire.f32_to_f16_bits(v).tolist(),
                         [0x7BFF, 0x7BFF, 0x7C00, 0x7C00, 0xFC00, 0, 0x8000,
                          0])

    def test_i8_rounds_half_away_from_zero(self):
        # max 127 -> scale 1: q = v exactly, so ties are visible.
        s, q = wire.i8_quantise_row([127, 0.5, -0.5, 1.5, -2.5,
                                     0.49999997])
        self.assertEqual(s, np.float32(1.0))
        self.assertEqual(q.tolist(), [127, 1, -1, 2, -3, 0])

    def test_i8_nan_and_scale_rules(self):
        s, q = wire.i8_quantise_row([float("nan"), 2.0, -4.0])
        self.assertEqual(s, np.float32(4.0) / np.float32(127.0))
        self.assertEqual(q.tolist(), [0, 64, -127])
        s, q = wire.i8_quantise_row([float("nan"), float("nan")])
        self.assertEqual((s, q.tolist()), (1.0, [0, 0]))
        s, q = wire.i8_quantise_row([float("inf"), 5.0, -float("inf")])
        self.assertTrue(math.isinf(s))
        self.assertEqual(q.tolist(), [0, 0, 0])

    def test_i8_divides_not_multiplies(self):
        rng = np.random.default_rng(3)
        for _ in range(200):
            v = rng.standard_normal(64).astype(np.float32) * 10
            s, q = wire.i8_quantise_row(v)
            d = (v / s).astype(np.float32).astype(np.float64)
            want = np.sign(d) * np.floor(np.abs(d) + 0.5)
            self.assertEqual(q.tolist(), want.astype(int).tolist())
            self.assertGreaterEqual(int(q.min()), -127)


def model(tmp, layout, dtype="f32", mt="llama"):
    d = os.path.join(tmp, "%s-%s-%s" % (layout, dtype, mt))
    mkmodel.write(d, mkmodel.EXAMPLE, layout, dtype, mt)
    return vindex.load(d)


class TestModel(unittest.TestCase):
    """vindex.md §3's table, through each dense layout and dtype."""

    def test_table(self):
        with tempfile.TemporaryDirectory() as tmp:
            for layout, dtype in (("features", "f32"), ("features", "f16"),
                                  ("interleaved", "f32"), ("dense", "f32"),
                                  ("dense", "f16")):
                for mt, table, act in (("llama", SILU, "silu"),
                                       ("gemma3", GELU, "gelu_tanh")):
                    vi = model(tmp, layout, dtype, mt)
                    self.assertEqual(vi.activation, act)
                    for L in (0, 1):
                        G, U, D = vi.weights[L]
                        for f in (ffn.compute64, ffn.compute32):
                            y = f(G, U, D, [X], vi.activation)[0]
                            np.testing.assert_allclose(
                                y, table[L], rtol=2e-6, atol=1e-6,
                                err_msg="%s %s %s L%d" % (layout, dtype, mt,
                                                          L))

    def test_zero_row(self):
        with tempfile.TemporaryDirectory() as tmp:
            vi = model(tmp, "features")
            G, U, D = vi.weights[1]
            self.assertEqual(ffn.compute64(G, U, D, [[0] * 4], "silu")
                             .tolist(), [[0] * 4])

    def test_activation_choice(self):
        self.assertEqual(vindex.activation_of("gemma"), "gelu_tanh")
        self.assertEqual(vindex.activation_of("gemma2_text"), "gelu_tanh")
        self.assertEqual(vindex.activation_of("gemma4"), "gelu_tanh")
        self.assertEqual(vindex.activation_of("gemmax"), "silu")
        self.assertEqual(vindex.activation_of("qwen2"), "silu")
        self.assertRaises(vindex.VindexError, vindex.activation_of, "gpt2")


class TestChecks(unittest.TestCase):
    """wire.md §4, in order, exact messages; §5.1 negotiation."""

    def err(self, body, ct="application/x-larql-ffn", hidden=4, n=32,
            owned=None):
        with self.assertRaises(wire.WireError) as c:
            wire.decode_request(body, ct, hidden, n, owned)
        return c.exception.status, c.exception.message

    def test_messages(self):
        p = struct.pack
        self.assertEqual(self.err(b"\0" * 15), (
            400, "binary: body too short (need \u2265 16 bytes)"))
        self.assertEqual(self.err(p("<IIII", 0xFFFFFFFF, 3, 0, 0)), (
            400, "binary batch: body too short for 3 layer indices"))
        self.assertEqual(self.err(p("<IIIII", 0xFFFFFFFF, 2, 0, 0, 1)), (
            400, "binary: truncated fixed header (seq_len/flags/top_k)"))
        self.assertEqual(self.err(p("<IIII", 0, 1, 1, 0) + b"abc"), (
            400, "binary: residual byte length is not a multiple of 4"))
        self.assertEqual(self.err(p("<IIII", 0, 1, 1, 0) + b"abc",
                                  wire.CT_F16), (
            400, "f16 binary request: residual byte length is not a "
            "multiple of f16"))
        self.assertEqual(self.err(p("<IIII", 0, 2, 1, 0) + b"a" * 21,
                                  wire.CT_I8), (
            400, "i8 binary request: payload of 21 bytes is not a multiple "
            "of seq_len 2"))
        self.assertEqual(self.err(p("<IIII", 0, 2, 1, 0) + b"a" * 16,
                                  wire.CT_I8), (
            400, "i8 binary request: 8 bytes per position leaves no "
            "residual data after the 8-byte scale/zero header"))
        self.assertEqual(self.err(p("<IIII", 0, 1, 0, 0) + b"\0" * 16), (
            400, "binary wire format requires full_output = true"))
        self.assertEqual(self.err(p("<IIII", 0, 1, 1, 0) + b"\0" * 12), (
            400, "residual has 3 elements, expected 4 (seq_len=1 * "
            "hidden_size=4)"))
        self.assertEqual(self.err(p("<IIII", 0, 0, 1, 0)), (
            400, "seq_len must be >= 1"))
        self.assertEqual(self.err(p("<IIII", 9, 1, 1, 0) + b"\0" * 16,
                                  owned=(0, 3)), (
            400, "layer 9 not served by this shard (owned: 0\u20133)"))
        self.assertEqual(self.err(p("<IIII", 32, 1, 1, 0) + b"\0" * 16), (
            400, "layer 32 out of range (num_layers = 32)"))

    def test_empty_batch_accepted(self):
        b = struct.pack("<IIIII", 0xFFFFFFFF, 0, 1, 1, 0) + b"\0" * 16
        self.assertEqual(wire.decode_request(b, wire.CT_F32, 4, 32)[0], [])

    def test_negotiation(self):
        c = wire.choose_format
        self.assertEqual(c(None, True, True), "f32")
        self.assertEqual(c(wire.ACCEPT["i8"], False, True), "f16")
        self.assertEqual(c(wire.ACCEPT["i8"], True, True), "i8")
        self.assertEqual(c(wire.ACCEPT["i8"], False, False), "f32")
        self.assertEqual(c(wire.ACCEPT["f16"], True, True), "f16")
        self.assertEqual(c("*/*", True, True), "f32")


class TestEnvironment(unittest.TestCase):
    """§5.1: the server reads LARQL_I8_WIRE / LARQL_F16_WIRE_DISABLE by
    presence; defaults f16 on, i8 off."""

    def shard(self, env):
        saved = dict(os.environ)
        for k in ("LARQL_I8_WIRE", "LARQL_F16_WIRE_DISABLE"):
            os.environ.pop(k, None)
        os.environ.update(env)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                mkmodel.write(tmp, mkmodel.EXAMPLE, "features")
                return server.Shard(tmp, None)
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def test_defaults_and_presence(self):
        s = self.shard({})
        self.assertEqual((s.i8, s.f16), (False, True))
        s = self.shard({"LARQL_I8_WIRE": "", "LARQL_F16_WIRE_DISABLE": "0"})
        self.assertEqual((s.i8, s.f16), (True, False))


class TestServer(unittest.TestCase):
    """server.py over a real socket: routes, negotiation, keep-alive."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = os.path.join(cls.tmp.name, "m")
        mkmodel.write(d, mkmodel.EXAMPLE, "features")
        os.environ["LARQL_I8_WIRE"] = "1"
        shard = server.Shard(d, (0, 1))
        del os.environ["LARQL_I8_WIRE"]
        cls.srv = server.ThreadingHTTPServer(("127.0.0.1", 0), server.Handler)
        cls.srv.shard = shard
        cls.srv.daemon_threads = True
        cls.t = threading.Thread(target=cls.srv.serve_forever, daemon=True)
        cls.t.start()
        cls.conn = http.client.HTTPConnection("127.0.0.1",
                                              cls.srv.server_address[1])

    @classmethod
    def tearDownClass(cls):
        cls.conn.close()
        cls.srv.shutdown()
        cls.srv.server_close()
        cls.tmp.cleanup()

    def req(self, method, path, body=None, headers=None):
        self.conn.request(method, path, body, headers or {})
        r = self.conn.getresponse()
        return r.status, r.getheader("Content-Type"), r.read()

    def test_routes(self):
        s, ct, b = self.req("GET", "/v1/stats")
        st = json.loads(b)
        self.assertEqual((s, st["hidden_size"], st["layers"], st["mode"]),
                         (200, 4, 2, "ffn-service"))
        self.assertEqual(json.loads(self.req("GET", "/v1/health")[2])
                         ["status"], "ok")
        self.assertEqual(self.req("GET", "/nope")[0], 404)
        self.assertEqual(self.req("GET", "/v1/walk-ffn")[0], 405)
        self.assertEqual(self.req("POST", "/v1/stats", b"")[0], 405)

    def test_binary_each_format(self):
        for fmt in ("f32", "f16", "i8"):
            body, ct = wire.encode_request([0, 1], [X])
            s, rct, b = self.req("POST", "/v1/walk-ffn", body, {
                "Content-Type": ct, "Accept": wire.ACCEPT[fmt]})
            self.assertEqual((s, rct), (200, wire.CT[fmt]))
            _, res = wire.decode_response(b, rct)
            tol = {"f32": 1e-5, "f16": 1e-2, "i8": 0.05}[fmt]
            for (L, _, y), want in zip(res, SILU):
                np.testing.assert_allclose(y[0], want, atol=tol)

    def test_no_accept_is_f32_and_error_is_json(self):
        body, ct = wire.encode_request(1, [X])
        s, rct, b = self.req("POST", "/v1/walk-ffn", body,
                             {"Content-Type": ct})
        self.assertEqual((s, rct, len(b)), (200, wire.CT_F32, 12 + 16))
        s, rct, b = self.req("POST", "/v1/walk-ffn", b"\0" * 4,
                             {"Content-Type": ct})
        self.assertEqual((s, rct), (400, "application/json"))
        self.assertIn("too short", json.loads(b)["error"])

    def test_json_path(self):
        s, _, b = self.req("POST", "/v1/walk-ffn", json.dumps(
            {"layer": 0, "residual": X, "full_output": True}))
        o = json.loads(b)
        self.assertEqual((s, o["layer"], o["seq_len"]), (200, 0, 1))
        np.testing.assert_allclose(o["output"], SILU[0], rtol=1e-5)
        s, _, b = self.req("POST", "/v1/walk-ffn", json.dumps(
            {"layer": 0, "residual": X, "top_k": 2}))
        o = json.loads(b)
        self.assertEqual((o["features"], o["scores"]), ([2, 1], [3.5, -2.0]))
        s, _, b = self.req("POST", "/v1/walk-ffn", json.dumps(
            {"residual": X}))
        self.assertEqual((s, json.loads(b)["error"]),
                         (400, "must provide 'layer' or 'layers'"))
        s, _, b = self.req("POST", "/v1/walk-ffn", b"{bad")
        self.assertEqual(s, 400)
        self.assertTrue(json.loads(b)["error"].startswith("invalid JSON: "))


class TestAuth(unittest.TestCase):
    """--api-key: the appliance's rule (shard_authorized, issue 4): every
    route but /v1/health needs the Bearer key, else 401 with an empty body
    and the challenge; 401 before 404, a wrong method still 405."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = os.path.join(cls.tmp.name, "m")
        mkmodel.write(d, mkmodel.EXAMPLE, "features")
        cls.srv = server.ThreadingHTTPServer(("127.0.0.1", 0), server.Handler)
        cls.srv.shard = server.Shard(d, None, api_key="k3y")
        cls.srv.daemon_threads = True
        cls.t = threading.Thread(target=cls.srv.serve_forever, daemon=True)
        cls.t.start()
        cls.conn = http.client.HTTPConnection("127.0.0.1",
                                              cls.srv.server_address[1])

    @classmethod
    def tearDownClass(cls):
        cls.conn.close()
        cls.srv.shutdown()
        cls.srv.server_close()
        cls.tmp.cleanup()

    def req(self, method, path, body=None, auth=None):
        h = {} if auth is None else {"Authorization": auth}
        if body is not None:
            h["Content-Type"] = wire.CT_F32
        self.conn.request(method, path, body, h)
        r = self.conn.getresponse()
        return r, r.read()

    def test_refused(self):
        body, _ = wire.encode_request(0, [X])
        for auth in (None, "Bearer k3", "Bearer k3yy", "Basic k3y", "k3y",
                     "Bearer  k3y ", "Bearerk3y"):
            for method, path, b in (("POST", "/v1/walk-ffn", body),
                                    ("GET", "/v1/stats", None),
                                    ("GET", "/nope", None)):
                r, got = self.req(method, path, b, auth)
                what = "%s %s, Authorization %r" % (method, path, auth)
                self.assertEqual((r.status, got), (401, b""), what)
                self.assertEqual(r.getheader("WWW-Authenticate"), "Bearer",
                                 what)
                self.assertEqual(r.getheader("Content-Length"), "0", what)
                self.assertIsNone(r.getheader("Content-Type"), what)
        self.assertEqual(self.req("GET", "/v1/walk-ffn")[0].status, 405)

    def test_key(self):
        body, _ = wire.encode_request(0, [X])
        for auth in ("Bearer k3y", "bEaReR k3y", "Bearer   k3y"):
            r, got = self.req("POST", "/v1/walk-ffn", body, auth)
            self.assertEqual((r.status, r.getheader("Content-Type"),
                              len(got)), (200, wire.CT_F32, 12 + 16), auth)
            r, got = self.req("GET", "/v1/stats", None, auth)
            self.assertEqual((r.status, json.loads(got)["hidden_size"]),
                             (200, 4), auth)
        self.assertEqual(self.req("GET", "/nope", None,
                                  "Bearer k3y")[0].status, 404)
        r, got = self.req("GET", "/v1/health")
        self.assertEqual((r.status, json.loads(got)["status"]), (200, "ok"))

    def test_option_and_environment(self):
        """--api-key, else $PYREF_API_KEY, else no key."""
        class Stop(Exception):
            pass

        made = []
        real = server.Shard

        def shard(*a):
            made.append(real(*a))
            raise Stop	# before the socket

        d = os.path.join(self.tmp.name, "m")
        for env, argv, want in ((None, [], None), ("e", [], "e"),
                                ("e", ["--api-key", "o"], "o")):
            e = {} if env is None else {"PYREF_API_KEY": env}
            with mock.patch.dict(os.environ, e), \
                    mock.patch.object(server, "Shard", shard):
                if env is None:
                    os.environ.pop("PYREF_API_KEY", None)
                with self.assertRaises(Stop):
                    server.main(["--model", d] + argv)
            self.assertEqual(made[-1].api_key, want, (env, argv))

if __name__ == "__main__":
    unittest.main()
