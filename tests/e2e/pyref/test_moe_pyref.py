#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Unit tests of pyref's MoE oracle (moe.py) against spec/moe.md's own
numbers: §6's example written here from the spec's bytes (Q4_K and F32),
its intermediate values and its output bits, every §6 frame both ways,
the §5.3 checks, Q8_K (§3.5) and the §7 answer formats; moe_expect.py's
gen and check on every route.

    python3 tests/e2e/pyref/test_moe_pyref.py
"""

import json
import os
import shutil
import struct
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import moe  # noqa: E402
import moe_expect  # noqa: E402
import wire  # noqa: E402
from vindex import VindexError  # noqa: E402


def hx(s):
    return bytes.fromhex("".join(s.split()))


def dump(text):
    """A hex dump with 'OFFSET:' prefixes -> bytes."""
    return b"".join(bytes.fromhex(line.split(":", 1)[1])
                    for line in text.strip().splitlines())


# ---- spec/moe.md §6, copied from the spec text --------------------------

X = [1, -2, 0.5, 3]
PAIRS = [(1, 0.25), (0, 0.75)]
OUT = [1.55121, 0.279009, 1.85159, -0.438160]
OUT_BITS = [0x3fc68df0, 0x3e8eda40, 0x3fed00f4, 0xbee05680]
OUT_SILU = [1.34665, 0.301435, 1.66077, -0.440019]
H_ROW = [1.05963, -0.529813, 0.397360, 1.58944]
Y0 = [2.28048, 0.188312, 2.46879, -0.188312]
Y1 = [-0.636604, 0.551099, 0, -1.18770]
INDEX = """
    {"version": 2, "model": "example/tiny-moe", "family": "gemma4",
     "num_layers": 1, "hidden_size": 4, "intermediate_size": 8,
     "vocab_size": 4, "embed_scale": 2.0, "layers": [], "down_top_k": 1,
     "has_model_weights": true, "quant": "q4k", "ffn_layout": "per_layer",
     "model_config": {"model_type": "gemma4", "head_dim": 2, "num_q_heads": 2,
       "num_kv_heads": 1, "rope_base": 10000.0,
       "moe": {"num_experts": 2, "top_k": 2, "shared_expert": false,
               "router_type": "gemma4_top_k_softmax",
               "moe_intermediate_size": 32, "hybrid": true}}}"""
MANIFEST = ('[{"key":"layers.0.pre_feedforward_layernorm_2.weight",'
            '"kind":"vector","shape":[4],"offset":0,"length":16,'
            '"file":"norms.bin"}]')
NORMS = "00000040 0000003f 0000c03f 0000803f"
Q4K_HEAD = """
    0000: 4c 59 52 57 01 00 00 00 04 00 00 00 02 00 00 00
    0010: 20 00 00 00 04 00 00 00 58 00 00 00 00 00 00 00
    0020: 90 00 00 00 00 00 00 00 e8 00 00 00 00 00 00 00
    0030: 40 02 00 00 00 00 00 00 28 03 00 00 00 00 00 00
    0040: 90 00 00 00 00 00 00 00 b8 03 00 00 00 00 00 00
    0050: 40 02 00 00 00 00 00 00"""
BLOCK_HEAD = "00 38 00 38 01 01 01 01 02 02 02 02 21 21 21 21"
BLOCKS = [
    "[0]=24 [5]=24 [64]=24 [65]=24 [66]=24 [67]=24 [70]=24 [71]=20",
    "[0]=24", "[1]=24", "[0]=24 [1]=24", "[1]=20",
    "[2]=24 [4]=23 [7]=23 [64]=26 [69]=24",
    "[1]=24", "[0]=24", "", "[0]=20 [1]=24"]
F32_FILE = """
    0000: 4c 59 52 57 01 00 00 00 00 00 00 00 02 00 00 00
    0010: 02 00 00 00 04 00 00 00 58 00 00 00 00 00 00 00
    0020: 40 00 00 00 00 00 00 00 98 00 00 00 00 00 00 00
    0030: 20 00 00 00 00 00 00 00 b8 00 00 00 00 00 00 00
    0040: 40 00 00 00 00 00 00 00 f8 00 00 00 00 00 00 00
    0050: 20 00 00 00 00 00 00 00 00 00 80 3f 00 00 00 00
    0060: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 80 3f
    0070: 00 00 00 00 00 00 00 00 00 00 80 3f 00 00 80 3f
    0080: 00 00 80 3f 00 00 80 3f 00 00 00 00 00 00 00 00
    0090: 00 00 80 3f 00 00 80 bf 00 00 80 3f 00 00 00 00
    00a0: 00 00 00 00 00 00 80 3f 00 00 80 3f 00 00 80 3f
    00b0: 00 00 00 00 00 00 80 bf 00 00 00 00 00 00 00 00
    00c0: 00 00 80 3f 00 00 00 00 00 00 00 3f 00 00 00 00
    00d0: 00 00 00 00 00 00 00 3f 00 00 00 40 00 00 00 00
    00e0: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 80 3f
    00f0: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 80 3f
    0100: 00 00 80 3f 00 00 00 00 00 00 00 00 00 00 00 00
    0110: 00 00 80 bf 00 00 80 3f"""
# §6 frames
LB_REQ = """00000000 04000000 02000000 0000803f 000000c0 0000003f 00004040
    01000000 0000803e 00000000 0000403f"""
LB_RESP = "04000000 0000c03f f08dc63f 40da8e3e f400ed3f 8056e0be"
LB16_REQ = """00000000 04000000 02000000 003c 00c0 0038 0042
    01000000 0000803e 00000000 0000403f"""
LB16_RESP = "04000000 0000c03f 343e 7734 683f 03b7"
LB16_VALUES = [1.55078, 0.279053, 1.85156, -0.438232]
ML_REQ = """01000000 00000000 04000000 02000000 0000803f 000000c0 0000003f
    00004040 01000000 00000000 0000803e 0000403f"""
ML_RESP = "01000000 00000000 04000000 f08dc63f 40da8e3e f400ed3f 8056e0be"
EB_REQ = """02000000 04000000 00000000 00000000 0000803f 000000c0 0000003f
    00004040 00000000 01000000 0000803f 000000c0 0000003f 00004040"""
EB_RESP = """02000000 04000000 0000c03f
    00000000 00000000 55f31140 e2d4403e a3001e40 e2d440be
    00000000 01000000 80f822bf d6140d3f 00000000 ab0698bf"""
SINGLE_OUT = '{"output":[-0.6366043,0.5510992,0.0,-1.1877035]'


def q4k_file():
    out = bytearray(dump(Q4K_HEAD))
    for spec in BLOCKS:
        qs = bytearray(b"\x22" * 128)
        for item in spec.split():
            pos, val = item.split("=")
            qs[int(pos.strip("[]"))] = int(val, 16)
        out += hx(BLOCK_HEAD) + qs
    return bytes(out)


def write_example(d, layer_file, width):
    os.makedirs(os.path.join(d, "layers"), exist_ok=True)
    idx = json.loads(INDEX)
    idx["model_config"]["moe"]["moe_intermediate_size"] = width
    with open(os.path.join(d, "index.json"), "w") as f:
        json.dump(idx, f)
    with open(os.path.join(d, "weight_manifest.json"), "w") as f:
        f.write(MANIFEST)
    with open(os.path.join(d, "norms.bin"), "wb") as f:
        f.write(hx(NORMS))
    with open(os.path.join(d, "layers", "layer_00.weights"), "wb") as f:
        f.write(layer_file)


class Example(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="moe-pyref.")
        cls.q4k = os.path.join(cls.tmp, "q4k")
        cls.f32 = os.path.join(cls.tmp, "f32")
        write_example(cls.q4k, q4k_file(), 32)
        write_example(cls.f32, dump(F32_FILE), 2)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_block_grid(self):
        # "d = dmin = 0.5, all 8 sub-block scales 1 and mins 2, so a
        # stored nibble q means 0.5q - 1"
        for q in range(16):
            blk = hx(BLOCK_HEAD) + bytes([q | q << 4]) * 128
            np.testing.assert_array_equal(moe.q4k_dequant(blk, 1),
                                          [0.5 * q - 1] * 256)
        self.assertEqual(len(q4k_file()), 1528)

    def test_reads_the_example(self):
        for d, cols in ((self.q4k, 32), (self.f32, 2)):
            mv = moe.load(d)
            self.assertTrue(mv.hybrid)
            self.assertEqual((mv.num_layers, mv.hidden, mv.num_experts,
                              mv.width, mv.model_id),
                             (1, 4, 2, cols, "tiny-moe"))
            np.testing.assert_array_equal(mv.norm(0), [2, 0.5, 1.5, 1])
            G, U, D = mv.expert(0, 1)
            self.assertEqual((G.shape, D.shape), ((cols, 4), (4, cols)))
            np.testing.assert_array_equal(G[:2], [[0, 0, 1, 0],
                                                  [0.5, 0, 0, 0.5]])
            np.testing.assert_array_equal(U[:2], [[2, 0, 0, 0], [0, 1, 0, 0]])
            np.testing.assert_array_equal(D[:, :2], [[0, 1], [1, 0], [0, 0],
                                                     [-1, 1]])
            self.assertFalse(G[2:].any() or U[2:].any() or D[:, 2:].any())
            self.assertIsNone(mv.expert(0, 2))
            self.assertIsNone(mv.expert(1, 0))

    def test_table_values(self):
        for d in (self.q4k, self.f32):
            mv = moe.load(d)
            h = moe.norm64(X, mv.norm(0))
            np.testing.assert_allclose(h, H_ROW, rtol=5e-6)
            np.testing.assert_allclose(moe.expert64(mv.expert(0, 0), h), Y0,
                                       rtol=5e-6, atol=5e-6)
            np.testing.assert_allclose(moe.expert64(mv.expert(0, 1), h), Y1,
                                       rtol=5e-6, atol=5e-6)
            out = moe.layer_batch64(mv, 0, X, PAIRS)
            np.testing.assert_allclose(out, OUT, rtol=5e-6)
            out32 = moe.layer_batch32(mv, 0, X, PAIRS)
            self.assertEqual(list(out32.view(np.uint32)), OUT_BITS, d)

    def test_silu_would_differ(self):
        mv = moe.load(self.f32)
        h = moe.norm64(X, mv.norm(0))
        out = np.zeros(4)
        for e, w in PAIRS:
            G, U, D = mv.expert(0, e)
            g = G @ h
            out += w * (D @ (g / (1 + np.exp(-g)) * (U @ h)))
        np.testing.assert_allclose(out, OUT_SILU, rtol=5e-6)

    def test_batch_rules(self):
        mv = moe.load(self.q4k)
        # zero weights (either sign) are skipped without a lookup
        out = moe.layer_batch64(mv, 0, X, PAIRS + [(7, 0.0), (9, -0.0)])
        np.testing.assert_allclose(out, OUT, rtol=5e-6)
        with self.assertRaises(moe.Unheld) as c:
            moe.layer_batch64(mv, 0, X, PAIRS + [(2, 0.5)])
        self.assertEqual(str(c.exception),
                         "expert 2 of layer 0 is not held by this shard")
        with self.assertRaises(moe.Unheld):
            moe.layer_batch64(mv, 0, X, PAIRS, owned=(1, 1))
        with self.assertRaises(moe.Unheld):
            moe.layer_batch64(mv, 1, X, [(0, 1.0)])
        # a pair listed twice counts twice; K = 0 gives zeros
        twice = moe.layer_batch64(mv, 0, X, [(0, 0.75), (0, 0.75)])
        np.testing.assert_allclose(twice, 1.5 * np.array(Y0), rtol=5e-6)
        np.testing.assert_array_equal(moe.layer_batch64(mv, 0, X, []),
                                      [0] * 4)
        # no norm vector: h = x
        np.testing.assert_array_equal(moe.norm64(X, None), X)


class Validation(unittest.TestCase):
    """§5.3: every load-time check refuses with a message."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="moe-pyref-v.")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def bad(self, data, width=32, match=""):
        d = os.path.join(self.tmp, "v%d" % len(os.listdir(self.tmp)))
        write_example(d, bytes(data), width)
        mv = moe.load(d)
        with self.assertRaises(VindexError) as c:
            mv.expert(0, 0)
        self.assertIn(match, str(c.exception))

    def test_checks(self):
        good = bytearray(q4k_file())

        def patched(off, fmt, v):
            b = bytearray(good)
            struct.pack_into(fmt, b, off, v)
            return b

        self.bad(patched(0, "<4s", b"LYRX"), match="magic")
        self.bad(patched(4, "<I", 2), match="format_version")
        self.bad(patched(8, "<I", 5), match="Q6_K")
        self.bad(patched(12, "<I", 3), match="num_entries")
        self.bad(patched(16, "<I", 16), match="intermediate")
        self.bad(patched(20, "<I", 8), match="hidden")
        self.bad(patched(32, "<Q", 288), match="gate_up_bytes")
        self.bad(patched(48, "<Q", 144), match="down_bytes")
        self.bad(patched(24 + 32 + 16, "<Q", 1500), match="outside")
        self.bad(good[:1000], match="outside")
        self.bad(good[:40], match="table")
        self.bad(good, width=16, match="intermediate")
        # F32: down of S' = I or S columns only
        f = bytearray(dump(F32_FILE))
        struct.pack_into("<Q", f, 24 + 24, 48)
        self.bad(f, width=2, match="down_bytes")

    def test_missing_file_and_norm(self):
        d = os.path.join(self.tmp, "nofile")
        write_example(d, q4k_file(), 32)
        os.unlink(os.path.join(d, "layers", "layer_00.weights"))
        with open(os.path.join(d, "weight_manifest.json"), "w") as f:
            f.write(MANIFEST.replace('"length":16', '"length":32'))
        mv = moe.load(d)
        self.assertIsNone(mv.expert(0, 0))
        self.assertIsNone(mv.norm(0))


class Frames(unittest.TestCase):
    """Every §6 frame encodes to the spec's bytes and decodes back."""

    def test_layer_batch(self):
        self.assertEqual(moe.encode_layer_batch(0, X, PAIRS), hx(LB_REQ))
        layer, hidden, x, pairs = moe.decode_layer_batch(hx(LB_REQ))
        self.assertEqual((layer, hidden, list(x), pairs), (0, 4, X, PAIRS))
        out = np.array(OUT_BITS, np.uint32).view(np.float32)
        self.assertEqual(moe.encode_layer_answer(out), hx(LB_RESP))
        hidden, lat, v, _ = moe.decode_layer_answer(hx(LB_RESP))
        self.assertEqual((hidden, lat), (4, 1.5))
        self.assertEqual(list(v.view(np.uint32)), OUT_BITS)
        with self.assertRaises(wire.WireError) as c:
            moe.decode_layer_batch(hx(LB_REQ)[:-1])
        self.assertEqual(c.exception.message,
                         "layer-batch request truncated")

    def test_layer_batch_f16(self):
        self.assertEqual(moe.encode_layer_batch(0, X, PAIRS, "f16"),
                         hx(LB16_REQ))
        layer, hidden, x, pairs = moe.decode_layer_batch(hx(LB16_REQ), "f16")
        self.assertEqual((layer, hidden, list(x), pairs), (0, 4, X, PAIRS))
        out = np.array(OUT_BITS, np.uint32).view(np.float32)
        self.assertEqual(moe.encode_layer_answer(out, "f16"), hx(LB16_RESP))
        _, _, v, _ = moe.decode_layer_answer(hx(LB16_RESP), "f16")
        np.testing.assert_allclose(v, LB16_VALUES, rtol=1e-5)
        with self.assertRaises(wire.WireError) as c:
            moe.decode_layer_batch(hx(LB16_REQ)[:30], "f16")
        self.assertEqual(c.exception.message,
                         "layer-batch-f16 request truncated")

    def test_layer_batch_i8(self):
        body = moe.encode_layer_batch(0, X, PAIRS, "i8")
        self.assertEqual(len(body), 12 + 8 + 4 + 16)
        scale, zp = struct.unpack_from("<ff", body, 12)
        self.assertEqual((scale, zp), (np.float32(3) / np.float32(127), 0.0))
        self.assertEqual(list(np.frombuffer(body, np.int8, 4, 20)),
                         [42, -85, 21, 127])
        layer, hidden, x, pairs = moe.decode_layer_batch(body, "i8")
        self.assertEqual((layer, hidden, pairs), (0, 4, PAIRS))
        np.testing.assert_allclose(x, X, atol=scale / 2)
        with self.assertRaises(wire.WireError) as c:
            moe.decode_layer_batch(body[:-1], "i8")
        self.assertEqual(c.exception.message,
                         "layer-batch-i8 request truncated")

    def test_answers_f16_i8(self):
        # §7: each result vector replaced; the header unchanged
        out = np.array(OUT_BITS, np.uint32).view(np.float32)
        b = moe.encode_layer_answer(out, "i8")
        self.assertEqual(len(b), 8 + 8 + 4)
        hidden, lat, v, scale = moe.decode_layer_answer(b, "i8")
        self.assertEqual((hidden, lat), (4, 1.5))
        self.assertEqual(scale, np.float32(out[2]) / np.float32(127))
        np.testing.assert_allclose(v, out, atol=scale / 2)
        b = moe.encode_multi_answer([(0, out), (3, [])], "f16")
        self.assertEqual(len(b), 4 + 8 + 8 + 8)
        r = moe.decode_multi_answer(b, "f16")
        self.assertEqual([(L, n) for L, n, _, _ in r], [(0, 4), (3, 0)])
        np.testing.assert_allclose(r[0][2], LB16_VALUES, rtol=1e-5)
        self.assertEqual(moe.choose_answer("layer", "f32", "x, " +
                                           moe.CT_LAYER + "-i8"), "i8")
        self.assertEqual(moe.choose_answer("layer", "f32", moe.CT_LAYER +
                                           "-i8", i8_enabled=False), "f32")
        self.assertEqual(moe.choose_answer("multi", "f32", moe.CT_MULTI +
                                           "-f16"), "f16")
        self.assertEqual(moe.choose_answer("multi", "f32", moe.CT_LAYER +
                                           "-f16"), "f32")
        self.assertEqual(moe.format_of(moe.CT_MULTI + "-i8", "multi", "f32"),
                         "i8")
        self.assertEqual(moe.format_of(moe.CT_LAYER, "layer", "f16"), "f32")
        self.assertEqual(moe.format_of("", "layer", "f16"), "f16")

    def test_multi_layer(self):
        self.assertEqual(moe.encode_multi([(0, X, [1, 0], [0.25, 0.75])]),
                         hx(ML_REQ))
        (layer, hidden, x, ids, ws), = moe.decode_multi(hx(ML_REQ))
        self.assertEqual((layer, hidden, list(x), ids, ws),
                         (0, 4, X, [1, 0], [0.25, 0.75]))
        out = np.array(OUT_BITS, np.uint32).view(np.float32)
        self.assertEqual(moe.encode_multi_answer([(0, out)]), hx(ML_RESP))
        (layer, hidden, v, _), = moe.decode_multi_answer(hx(ML_RESP))
        self.assertEqual((layer, hidden, list(v.view(np.uint32))),
                         (0, 4, OUT_BITS))
        self.assertEqual(moe.encode_multi([]), hx("00000000"))
        for cut in (3, 15, len(hx(ML_REQ)) - 1):
            with self.assertRaises(wire.WireError) as c:
                moe.decode_multi(hx(ML_REQ)[:cut])
            self.assertEqual(c.exception.message,
                             "multi-layer-batch request truncated")

    def test_q8k(self):
        rng = np.random.default_rng(3)
        h = rng.standard_normal(512).astype(np.float32)
        h[300] = 0.5 * 127 / 127 * 3  # block 1 max below
        qs, d, sums = moe.q8k_quantise(h)
        for b in range(2):
            blk = h[256 * b:256 * b + 256]
            self.assertEqual(d[b], np.float32(np.abs(blk).max()) /
                             np.float32(127))
            self.assertEqual(np.abs(qs[256 * b:256 * b + 256]).max(), 127)
        np.testing.assert_array_equal(
            sums, qs.astype(int).reshape(-1, 32).sum(axis=1))
        np.testing.assert_allclose(moe.q8k_dequant(qs, d), h,
                                   atol=float(d.max()) / 2 * 1.0001)
        # round half away from zero: 0.5 steps
        v = np.zeros(256, np.float32)
        v[:4] = [127, 0.5, -0.5, -2.5]
        qs, d, _ = moe.q8k_quantise(v)
        self.assertEqual((d[0], list(qs[:4])), (1.0, [127, 1, -1, -3]))
        qs, d, sums = moe.q8k_quantise(np.zeros(256, np.float32))
        self.assertEqual((d[0], qs.any(), sums.any()), (0, False, False))
        body = moe.encode_multi_q8k([(2, h, [0, 3], [0.5, 0.5])])
        self.assertEqual(len(body), 4 + 12 + 512 + 8 + 32 + 16)
        (layer, hidden, hq, ids, ws, (qs, d, sums)), = \
            moe.decode_multi_q8k(body)
        self.assertEqual((layer, hidden, ids, ws), (2, 512, [0, 3],
                                                    [0.5, 0.5]))
        np.testing.assert_array_equal(hq, moe.q8k_dequant(qs, d))
        with self.assertRaises(wire.WireError) as c:
            moe.decode_multi_q8k(body[:-1])
        self.assertEqual(c.exception.message,
                         "multi-layer-batch-q8k request truncated")

    def test_expert_batch(self):
        items = [(0, 0, X), (0, 1, X)]
        self.assertEqual(moe.encode_expert_batch(items), hx(EB_REQ))
        hidden, got = moe.decode_expert_batch(hx(EB_REQ))
        self.assertEqual((hidden, [(L, e, list(x)) for L, e, x in got]),
                         (4, [(L, e, X) for L, e, _ in items]))
        lat, res = moe.decode_expert_batch_answer(hx(EB_RESP))
        self.assertEqual(lat, 1.5)
        np.testing.assert_allclose(res[0][2], Y0, rtol=5e-6, atol=5e-6)
        np.testing.assert_allclose(res[1][2], Y1, rtol=5e-6, atol=5e-6)
        self.assertEqual(moe.encode_expert_batch_answer(res), hx(EB_RESP))
        self.assertEqual(moe.encode_expert_batch_answer([]),
                         struct.pack("<IIf", 0, 0, 1.5))
        with self.assertRaises(wire.WireError) as c:
            moe.decode_expert_batch(hx(EB_REQ)[:-1])
        self.assertEqual(c.exception.message,
                         "binary expert request truncated")

    def test_json(self):
        self.assertEqual(json.loads(moe.encode_single(X)),
                         {"residual": X})
        tmp = tempfile.mkdtemp(prefix="moe-pyref-j.")
        self.addCleanup(shutil.rmtree, tmp)
        write_example(tmp, dump(F32_FILE), 2)
        mv = moe.load(tmp)
        y1 = moe.expert32(mv.expert(0, 1), moe.norm32(X, mv.norm(0)))
        body = moe.encode_single_answer(y1)
        self.assertTrue(body.decode().startswith(SINGLE_OUT), body)
        v, lat = moe.decode_single_answer(body)
        self.assertEqual((list(v), lat), (list(y1), 1.5))
        items = [(0, 0, X), (0, 1, X)]
        self.assertEqual([(L, e, list(x)) for L, e, x in
                          moe.decode_batch_json(moe.encode_batch_json(items))],
                         [(L, e, X) for L, e, _ in items])
        lat, res = moe.decode_batch_json_answer(
            moe.encode_batch_json_answer([(0, 1, y1)]))
        self.assertEqual((lat, res[0][:2], list(res[0][2])),
                         (1.5, (0, 1), list(y1)))
        self.assertEqual(moe.decode_batch_json_answer(
            b'{"results":[],"latency_ms":0.25}'), (0.25, []))
        self.assertEqual(moe.json_number(np.float32("inf")), "null")
        self.assertEqual(json.loads(moe.encode_topology(mv, (0, 1))),
                         {"model_id": "tiny-moe", "num_experts": 2,
                          "num_layers": 1, "owned_start": 0, "owned_end": 1})



class Expect(unittest.TestCase):
    """moe_expect.py: gen's requests decode to its expectations, and check
    accepts an answer encoded from them and refuses a wrong one."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="moe-expect.")
        cls.vx = os.path.join(cls.tmp, "vx")
        write_example(cls.vx, dump(F32_FILE), 2)
        cls.req = os.path.join(cls.tmp, "req")
        cls.exp = os.path.join(cls.tmp, "exp")
        cls.resp = os.path.join(cls.tmp, "resp")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def run_main(self, *argv):
        import contextlib
        import io
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = moe_expect.main(list(argv))
        return rc, out.getvalue()

    def gen(self, route, *more):
        rc, out = self.run_main("gen", self.vx, "--route", route, "--body",
                                self.req, "--expect", self.exp, "--seed",
                                "4", *more)
        self.assertEqual(rc, 0)
        with open(self.exp) as f:
            exp = json.load(f)
        with open(self.req, "rb") as f:
            return exp, f.read(), out

    def answer(self, exp, fmt, bump=0.0):
        """An answer body encoded from the expectation (f32 values)."""
        vs = [np.float32(o["values"]) + np.float32(bump)
              for o in exp["outputs"]]
        r = exp["route"]
        if r.startswith("layer"):
            return moe.encode_layer_answer(vs[0], fmt)
        if r.startswith("multi"):
            return moe.encode_multi_answer(
                [(o["layer"], v) for o, v in zip(exp["outputs"], vs)], fmt)
        res = [(o["layer"], o["expert"], v)
               for o, v in zip(exp["outputs"], vs)]
        if r == "expert-batch-bin":
            return moe.encode_expert_batch_answer(res)
        if r == "expert-batch-json":
            return moe.encode_batch_json_answer(res)
        return moe.encode_single_answer(vs[0])

    def check(self, body, ctype, *more):
        with open(self.resp, "wb") as f:
            f.write(body)
        args = ["check", "--expect", self.exp, "--body", self.resp]
        if ctype is not None:
            args += ["--content-type", ctype]
        return self.run_main(*args, *more)

    def test_routes(self):
        mv = moe.load(self.vx)
        for route, fmt, ctype in (
                ("layer-batch", "f32", moe.CT_LAYER),
                ("layer-batch-f16", "f16", None),
                ("layer-batch-i8", "i8", moe.CT_LAYER + "-i8"),
                ("multi-layer-batch", "f32", moe.CT_MULTI),
                ("expert-batch-bin", "f32", moe.CT_EXPERT),
                ("expert-batch-json", "f32", moe.CT_JSON),
                ("expert-single", "f32", moe.CT_JSON)):
            exp, req, out = self.gen(route)
            self.assertIn("path=%s" % exp["path"], out)
            self.assertEqual(exp["status"], 200)
            if route.startswith("layer"):
                L, _, x, pairs = moe.decode_layer_batch(req, fmt)
                np.testing.assert_allclose(
                    exp["outputs"][0]["values"],
                    moe.layer_batch64(mv, L, x, pairs), rtol=1e-12)
                self.assertEqual(len(pairs), 2)
                self.assertAlmostEqual(sum(w for _, w in pairs), 1, 6)
            rc, out = self.check(self.answer(exp, fmt), ctype)
            self.assertEqual(rc, 0, (route, out))
            self.assertIn("OK", out)
            rc, out = self.check(self.answer(exp, fmt, bump=0.05), ctype)
            self.assertEqual(rc, 1, (route, out))
            self.assertIn("MISMATCH", out)
        self.assertEqual(exp["path"], "/v1/expert/%d/%d" % (
            exp["outputs"][0]["layer"], exp["outputs"][0]["expert"]))

    def test_accept_and_guard(self):
        exp, _, out = self.gen("multi-layer-batch", "--accept", "f16")
        self.assertIn("accept=" + moe.CT_MULTI + "-f16", out)
        self.assertEqual(self.check(self.answer(exp, "f16"),
                                    moe.CT_MULTI + "-f16")[0], 0)
        # the §7 guard: f32 instead of a requested f16 is right
        self.assertEqual(self.check(self.answer(exp, "f32"),
                                    moe.CT_MULTI)[0], 0)
        # i8 was not asked for
        self.assertEqual(self.check(self.answer(exp, "i8"),
                                    moe.CT_MULTI + "-i8")[0], 1)

    def test_errors(self):
        exp, req, _ = self.gen("layer-batch", "--experts", "1-1",
                               "--unheld")
        self.assertEqual((exp["status"], exp["error"]),
                         (400, "expert 0 of layer 0 is not held by this "
                          "shard"))
        body = json.dumps({"error": exp["error"]}).encode()
        self.assertEqual(self.check(body, moe.CT_JSON, "--status",
                                    "400")[0], 0)
        self.assertEqual(self.check(body, moe.CT_JSON, "--status",
                                    "200")[0], 1)
        self.assertEqual(self.check(b'{"error":"x"}', moe.CT_JSON)[0], 1)
        exp, _, _ = self.gen("expert-single", "--experts", "0-0",
                             "--unheld")
        self.assertEqual(exp["error"], "expert 1 not owned by this shard "
                         "(owns 0\u20130)")
        exp, _, _ = self.gen("expert-batch-bin", "--unheld")
        self.assertEqual(exp["error"], "per-layer entry missing for layer 0 "
                         "expert 2")
        exp, _, _ = self.gen("multi-layer-batch-q8k")
        self.assertEqual(exp["error"], "q8k activation needs hidden_size "
                         "divisible by 256 (got 4)")
        # zero weights are skipped: the expectation is unchanged
        exp, req, _ = self.gen("layer-batch", "--zero-weights",
                               "--experts", "0-0")
        _, _, _, pairs = moe.decode_layer_batch(req)
        self.assertEqual([(e, w) for e, w in pairs[1:]], [(1, 0.0), (0, 0.0)])
        self.assertEqual(exp["status"], 200)


if __name__ == "__main__":
    unittest.main()
