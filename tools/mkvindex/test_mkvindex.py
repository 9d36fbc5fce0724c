#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""mkvindex as issue 2 gives it: a synthetic vindex for the given hidden,
intermediate, layers, dtype, activation family and seed, in the real format
of spec/vindex.md (index.json keys, §2.1/§2.2/§2.3 files and sizes, the
manifest), deterministic by seed, with realistic statistics (weights
N(0, 1/fan_in); a few hidden channels whose W_down rows are 4x larger, the
same channels in every layer, as real residual streams have), the §3
example, and usage errors; hybrid-MoE vindexes (spec/moe.md §5: index.json
keys, the §5.2 vectors, LYRW layer files sized by §5.3's formulas) and
§6's example byte for byte. Standard library only.

    test_mkvindex.py MKVINDEX
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

MKV = None


def floats(path, fmt="f"):
    with open(path, "rb") as f:
        b = f.read()
    n = len(b) // struct.calcsize(fmt)
    return list(struct.unpack("<%d%s" % (n, fmt), b))


def mean_std(v):
    m = sum(v) / len(v)
    return m, math.sqrt(sum((x - m) ** 2 for x in v) / len(v))


class TmpDir(unittest.TestCase):
    """A temporary directory per class and mkvindex runs into it."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="mkvindex-test.")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def mk(self, name, *args, rc=0):
        d = os.path.join(self.tmp, name)
        p = subprocess.run([MKV, *args, d], capture_output=True, timeout=60)
        self.assertEqual(p.returncode, rc, p.stderr)
        return d

    def size(self, d, f):
        return os.path.getsize(os.path.join(d, f))

    def index(self, d):
        with open(os.path.join(d, "index.json")) as f:
            return json.load(f)


class Mkvindex(TmpDir):
    def test_options_reach_index_json(self):
        H, NF, NL = 96, 200, 3
        d = self.mk("opts", "--hidden", str(H), "--intermediate", str(NF),
                    "--layers", str(NL), "--dtype", "f16", "--family",
                    "gemma3", "--seed", "7")
        i = self.index(d)
        self.assertEqual((i["hidden_size"], i["intermediate_size"],
                          i["num_layers"], i["dtype"], i["quant"]),
                         (H, NF, NL, "f16", "none"))
        self.assertEqual(i["model_config"]["model_type"], "gemma3")
        self.assertEqual(i["family"], "gemma3")
        self.assertEqual(i["layers"], [
            {"layer": L, "num_features": NF, "offset": L * NF * H * 2,
             "length": NF * H * 2} for L in range(NL)])
        # §2.1 (the default): gate in dtype, up/down always f32
        self.assertEqual(self.size(d, "gate_vectors.bin"), NL * NF * H * 2)
        self.assertEqual(self.size(d, "up_features.bin"), NL * NF * H * 4)
        self.assertEqual(self.size(d, "down_features.bin"), NL * NF * H * 4)
        d = self.mk("llama", "--family", "llama", "--hidden", "8")
        self.assertEqual(self.index(d)["model_config"]["model_type"], "llama")
        d = self.mk("mt", "--model-type", "gemma2", "--hidden", "8")
        self.assertEqual(self.index(d)["model_config"]["model_type"],
                         "gemma2")

    def test_layouts(self):
        H, NF, NL = 16, 24, 2
        common = ["--hidden", str(H), "--intermediate", str(NF),
                  "--layers", str(NL), "--dtype", "f16"]
        d = self.mk("il", *common, "--layout", "interleaved")
        self.assertEqual(sorted(f for f in os.listdir(d)
                                if f.endswith(".bin")), ["interleaved.bin"])
        # §2.2 is f32 whatever the dtype
        self.assertEqual(self.size(d, "interleaved.bin"), NL * 3 * NF * H * 4)
        d = self.mk("dense", *common, "--layout", "dense")
        self.assertEqual(self.size(d, "gate_vectors.bin"), NL * NF * H * 2)
        with open(os.path.join(d, "weight_manifest.json")) as f:
            man = json.load(f)
        keys = {e["key"]: e for e in man}
        for L in range(NL):
            up = keys["layers.%d.mlp.up_proj.weight" % L]
            dn = keys["layers.%d.mlp.down_proj.weight" % L]
            self.assertEqual((up["shape"], up["file"], up["kind"]),
                             ([NF, H], "up_weights.bin", "tensor"))
            self.assertEqual((dn["shape"], dn["file"]),
                             ([H, NF], "down_weights.bin"))
            for e in (up, dn):
                self.assertEqual(e["length"], NF * H * 2)
                self.assertLessEqual(e["offset"] + e["length"],
                                     self.size(d, e["file"]))
        d = self.mk("widths", "--hidden", "8", "--widths", "3,5,2")
        i = self.index(d)
        self.assertEqual([x["num_features"] for x in i["layers"]], [3, 5, 2])
        self.assertEqual([x["offset"] for x in i["layers"]],
                         [0, 3 * 8 * 4, 8 * 8 * 4])
        self.assertEqual(i["num_layers"], 3)
        self.assertEqual(self.size(d, "up_features.bin"), 10 * 8 * 4)

    def test_deterministic_by_seed(self):
        a = self.mk("s1a", "--hidden", "64", "--seed", "3")
        b = self.mk("s1b", "--hidden", "64", "--seed", "3")
        c = self.mk("s2", "--hidden", "64", "--seed", "4")
        for f in ("gate_vectors.bin", "up_features.bin", "down_features.bin"):
            with open(os.path.join(a, f), "rb") as x, \
                 open(os.path.join(b, f), "rb") as y, \
                 open(os.path.join(c, f), "rb") as z:
                xa = x.read()
                self.assertEqual(xa, y.read(), f)
                self.assertNotEqual(xa, z.read(), f)

    def test_down_scale(self):
        # --down-scale S: down is S times the same draw, gate and up the
        # same; a value that is not a positive number is refused
        a = self.mk("ds1", "--hidden", "64", "--seed", "5")
        b = self.mk("ds8", "--hidden", "64", "--seed", "5",
                    "--down-scale", "8")
        for f in ("gate_vectors.bin", "up_features.bin"):
            self.assertEqual(floats(os.path.join(a, f)),
                             floats(os.path.join(b, f)), f)
        da = floats(os.path.join(a, "down_features.bin"))
        db = floats(os.path.join(b, "down_features.bin"))
        self.assertEqual([8 * v for v in da], db)
        self.mk("ds0", "--down-scale", "0", rc=2)

    def test_realistic_statistics(self):
        H, NF, NL = 256, 384, 2
        d = self.mk("stats", "--hidden", str(H), "--intermediate", str(NF),
                    "--layers", str(NL), "--seed", "11")
        for f in ("gate_vectors.bin", "up_features.bin"):
            m, s = mean_std(floats(os.path.join(d, f)))
            self.assertLess(abs(m), 0.05 / math.sqrt(H), f)
            self.assertAlmostEqual(s * math.sqrt(H), 1.0, delta=0.05)
        # down_features.bin is W_downᵀ: [nf, H] per layer; column h is
        # hidden channel h's row of W_down, N(0, 1/nf) or 4x that.
        dn = floats(os.path.join(d, "down_features.bin"))
        big_by_layer = []
        for L in range(NL):
            lay = dn[L * NF * H:(L + 1) * NF * H]
            stds = [mean_std(lay[h::H])[1] * math.sqrt(NF) for h in range(H)]
            big = [h for h in range(H) if stds[h] > 2.5]
            self.assertTrue(1 <= len(big) <= 3, big)
            for h in range(H):
                lo, hi = (3.4, 4.6) if h in big else (0.85, 1.15)
                self.assertTrue(lo < stds[h] < hi, (L, h, stds[h]))
            big_by_layer.append(big)
        self.assertEqual(big_by_layer[0], big_by_layer[1])

    def test_example(self):
        # spec/vindex.md §3: G0 then G1 in gate_vectors.bin, Wdᵀ in down
        d = self.mk("ex", "--example")
        i = self.index(d)
        self.assertEqual((i["num_layers"], i["hidden_size"], i["dtype"]),
                         (2, 4, "f32"))
        self.assertEqual([(x["layer"], x["num_features"], x["offset"])
                          for x in i["layers"]], [(0, 3, 0), (1, 3, 48)])
        self.assertEqual(floats(os.path.join(d, "gate_vectors.bin")),
                         [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1,
                          0.5, 0, 0, 0, 0, 0, 0, 0.5, 1, -1, 0, 0])
        self.assertEqual(floats(os.path.join(d, "down_features.bin"))[:12],
                         [1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1])
        d = self.mk("ex-il", "--example", "--layout", "interleaved")
        self.assertEqual(self.size(d, "interleaved.bin"), 288)

    def test_usage_errors(self):
        for args in (["--dtype", "bf16"], ["--layout", "rows"],
                     ["--family", "gpt2"], ["--hidden", "0"],
                     ["--layers", "0"], ["--quant", "q8"],
                     ["--hidden", "x"]):
            self.mk("bad", *args, rc=2)
        # --layers and --widths must agree, in either order (a width list
        # of 2 with --layers 4 wrote layers of 0 features, unloadable)
        for args in (["--widths", "3,5", "--layers", "4"],
                     ["--layers", "4", "--widths", "3,5"]):
            p = subprocess.run([MKV, "--hidden", "8", *args,
                                os.path.join(self.tmp, "wl")],
                               capture_output=True, timeout=30)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(b"--widths", p.stderr)
        d = self.mk("wl-ok", "--hidden", "8", "--widths", "3,5",
                    "--layers", "2")
        self.assertEqual(self.index(d)["num_layers"], 2)
        p = subprocess.run([MKV], capture_output=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"usage", p.stderr)
        p = subprocess.run([MKV, "--hidden", "8", "/proc/nope/x"],
                           capture_output=True, timeout=30)
        self.assertEqual(p.returncode, 1)
        self.assertIn(b"/proc/nope/x", p.stderr)



# spec/moe.md §6, copied from the spec text.
MOE_INDEX = {
    "version": 2, "model": "example/tiny-moe", "family": "gemma4",
    "num_layers": 1, "hidden_size": 4, "intermediate_size": 8,
    "vocab_size": 4, "embed_scale": 2.0, "layers": [], "down_top_k": 1,
    "has_model_weights": True, "quant": "q4k", "ffn_layout": "per_layer",
    "model_config": {"model_type": "gemma4", "head_dim": 2, "num_q_heads": 2,
                     "num_kv_heads": 1, "rope_base": 10000.0,
                     "moe": {"num_experts": 2, "top_k": 2,
                             "shared_expert": False,
                             "router_type": "gemma4_top_k_softmax",
                             "moe_intermediate_size": 32, "hybrid": True}}}
MOE_MANIFEST = [{"key": "layers.0.pre_feedforward_layernorm_2.weight",
                 "kind": "vector", "shape": [4], "offset": 0, "length": 16,
                 "file": "norms.bin"}]
MOE_NORMS = "00000040 0000003f 0000c03f 0000803f"
MOE_Q4K_HEAD = """
    0000: 4c 59 52 57 01 00 00 00 04 00 00 00 02 00 00 00
    0010: 20 00 00 00 04 00 00 00 58 00 00 00 00 00 00 00
    0020: 90 00 00 00 00 00 00 00 e8 00 00 00 00 00 00 00
    0030: 40 02 00 00 00 00 00 00 28 03 00 00 00 00 00 00
    0040: 90 00 00 00 00 00 00 00 b8 03 00 00 00 00 00 00
    0050: 40 02 00 00 00 00 00 00"""
MOE_BLOCK_HEAD = "00 38 00 38 01 01 01 01 02 02 02 02 21 21 21 21"
# block -> the non-0x22 qs bytes, in file order
MOE_BLOCKS = [
    "[0]=24 [5]=24 [64]=24 [65]=24 [66]=24 [67]=24 [70]=24 [71]=20",
    "[0]=24", "[1]=24", "[0]=24 [1]=24", "[1]=20",
    "[2]=24 [4]=23 [7]=23 [64]=26 [69]=24",
    "[1]=24", "[0]=24", "", "[0]=20 [1]=24"]
MOE_F32 = """
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


def dump_bytes(text):
    """A hex dump with 'OFFSET:' prefixes -> bytes."""
    out = bytearray()
    for line in text.strip().splitlines():
        out += bytes.fromhex(line.split(":", 1)[1])
    return bytes(out)


def moe_q4k_file():
    """§6's 1528-byte layer file from the spec's header and block table."""
    out = bytearray(dump_bytes(MOE_Q4K_HEAD))
    for spec in MOE_BLOCKS:
        qs = bytearray(b"\x22" * 128)
        for item in spec.split():
            pos, val = item.split("=")
            qs[int(pos.strip("[]"))] = int(val, 16)
        out += bytes.fromhex(MOE_BLOCK_HEAD) + qs
    return bytes(out)


def lyrw(path):
    """§5.3 header and table: (tag, E, I, H, [(guo, gub, dno, dnb)...])."""
    with open(path, "rb") as f:
        b = f.read()
    magic, ver, tag, E, I, H = struct.unpack_from("<4s5I", b, 0)
    assert magic == b"LYRW" and ver == 1, (magic, ver)
    tab = [struct.unpack_from("<4Q", b, 24 + 32 * e) for e in range(E)]
    return tag, E, I, H, tab, len(b)


def pad256(n):
    return (n + 255) // 256 * 256


def q4k_block(b):
    """vindex.md §2.4: one 144-byte Q4_K block -> 256 floats."""
    d, dmin = struct.unpack_from("<ee", b, 0)
    s = b[4:16]
    sc, m = [], []
    for j in range(8):
        if j < 4:
            sc.append(s[j] & 63)
            m.append(s[j + 4] & 63)
        else:
            sc.append((s[j + 4] & 15) | ((s[j - 4] >> 6) << 4))
            m.append((s[j + 4] >> 4) | ((s[j] >> 6) << 4))
    y = [0.0] * 256
    for g in range(4):
        for l in range(32):
            q = b[16 + 32 * g + l]
            y[64 * g + l] = d * sc[2 * g] * (q & 15) - dmin * m[2 * g]
            y[64 * g + 32 + l] = (d * sc[2 * g + 1] * (q >> 4)
                                  - dmin * m[2 * g + 1])
    return y


class MkvindexMoe(TmpDir):
    """--experts and --example-moe (spec/moe.md §5, §6)."""

    def read(self, d, name):
        with open(os.path.join(d, name), "rb") as f:
            return f.read()

    def test_example_moe_bytes(self):
        d = self.mk("ex-moe", "--example-moe")
        self.assertEqual(self.index(d), MOE_INDEX)
        with open(os.path.join(d, "weight_manifest.json")) as f:
            self.assertEqual(json.load(f), MOE_MANIFEST)
        self.assertEqual(self.read(d, "norms.bin"), bytes.fromhex(
            MOE_NORMS.replace(" ", "")))
        want = moe_q4k_file()
        self.assertEqual(len(want), 1528)
        self.assertEqual(self.read(d, "layers/layer_00.weights"), want)
        # §5.4: the reference boots with these
        self.assertEqual(self.size(d, "embeddings.bin"), 16 * 4)
        with open(os.path.join(d, "tokenizer.json")) as f:
            self.assertEqual(json.load(f)["model"]["type"], "BPE")
        # the blocks decode to §6's weights: expert 1's gate_up
        blk = q4k_block(want[808:808 + 144])
        self.assertEqual(blk[0:8], [0, 0, 1, 0, 0.5, 0, 0, 0.5])
        self.assertEqual(blk[128:136], [2, 0, 0, 0, 0, 1, 0, 0])
        self.assertEqual(set(blk[8:128] + blk[136:]), {0})

    def test_example_moe_f32_bytes(self):
        d = self.mk("ex-moe-f32", "--example-moe-f32")
        want = dict(MOE_INDEX)
        want["model_config"] = json.loads(json.dumps(
            MOE_INDEX["model_config"]))
        want["model_config"]["moe"]["moe_intermediate_size"] = 2
        self.assertEqual(self.index(d), want)
        self.assertEqual(self.read(d, "layers/layer_00.weights"),
                         dump_bytes(MOE_F32))
        self.assertEqual(self.read(d, "norms.bin"), bytes.fromhex(
            MOE_NORMS.replace(" ", "")))

    def check_layer_file(self, path, tag, E, I, H):
        """§5.3: header, sizes by formula, payloads back to back."""
        t, e, i, h, tab, size = lyrw(path)
        self.assertEqual((t, e, i, h), (tag, E, I, H))
        S = pad256(I)
        if tag == 4:
            gb = 144 * -(-2 * I * H // 256)
            db = 144 * H * S // 256
        else:
            gb, db = 8 * I * H, 4 * H * S
        off = 24 + 32 * E
        for guo, gub, dno, dnb in tab:
            self.assertEqual((guo, gub, dno, dnb), (off, gb, off + gb, db))
            off += gb + db
        self.assertEqual(off, size)

    def test_moe_files(self):
        H, I, E, NL = 8, 16, 4, 3
        d = self.mk("moe", "--experts", str(E), "--expert-width", str(I),
                    "--hidden", str(H), "--layers", str(NL), "--top-k", "3",
                    "--intermediate", "40", "--seed", "5")
        i = self.index(d)
        self.assertEqual((i["quant"], i["ffn_layout"], i["has_model_weights"],
                          i["family"], i["num_layers"], i["hidden_size"]),
                         ("q4k", "per_layer", True, "gemma4", NL, H))
        for k in ("version", "model", "intermediate_size", "vocab_size",
                  "embed_scale", "down_top_k"):
            self.assertIn(k, i)
        mc = i["model_config"]
        self.assertEqual(mc["model_type"], "gemma4")
        for k in ("head_dim", "num_q_heads", "num_kv_heads", "rope_base"):
            self.assertIn(k, mc)
        self.assertEqual(mc["moe"], {
            "num_experts": E, "top_k": 3, "shared_expert": False,
            "router_type": "gemma4_top_k_softmax",
            "moe_intermediate_size": I, "hybrid": True})
        # the dense FFN: the K-quant payload of vindex.md §2.4
        self.assertEqual([(x["layer"], x["num_features"])
                          for x in i["layers"]], [(L, 40) for L in range(NL)])
        self.assertGreater(self.size(d, "interleaved_q4k.bin"), 0)
        with open(os.path.join(d, "interleaved_q4k_manifest.json")) as f:
            self.assertEqual(len(json.load(f)), 3 * NL)
        # §5.5: H 8, I 16, 4 experts: 5336 bytes a layer
        for L in range(NL):
            p = os.path.join(d, "layers", "layer_%02d.weights" % L)
            self.assertEqual(os.path.getsize(p), 5336)
            self.check_layer_file(p, 4, E, I, H)
        # §5.2: every layer's vectors, inside norms.bin, f32
        with open(os.path.join(d, "weight_manifest.json")) as f:
            man = {e["key"]: e for e in json.load(f)}
        norms = self.size(d, "norms.bin")
        shapes = {"pre_feedforward_layernorm_2.weight": H,
                  "router.proj.weight": E * H, "router.scale": H,
                  "router.per_expert_scale": E,
                  "post_feedforward_layernorm_2.weight": H,
                  "post_feedforward_layernorm_1.weight": H,
                  "post_feedforward_layernorm.weight": H,
                  "layer_scalar": 1}
        for L in range(NL):
            for k, n in shapes.items():
                e = man["layers.%d.%s" % (L, k)]
                self.assertEqual((e["kind"], e["shape"], e["length"],
                                  e["file"]), ("vector", [n], 4 * n,
                                               "norms.bin"))
                self.assertLessEqual(e["offset"] + e["length"], norms)
        self.assertEqual(len(man), 8 * NL)
        v = floats(os.path.join(d, "norms.bin"))
        e = man["layers.1.pre_feedforward_layernorm_2.weight"]
        pre = v[e["offset"] // 4:e["offset"] // 4 + H]
        self.assertTrue(all(0.2 < x < 1.8 for x in pre), pre)
        self.assertEqual(self.size(d, "embeddings.bin"),
                         i["vocab_size"] * H * 4)
        with open(os.path.join(d, "tokenizer.json")) as f:
            json.load(f)
        # the weights: N(0, 1/H) gate/up, as quantised
        with open(os.path.join(d, "layers", "layer_00.weights"), "rb") as f:
            b = f.read()
        gu = q4k_block(b[152:152 + 144])
        m, s = mean_std(gu)
        self.assertLess(abs(m), 0.1)
        self.assertAlmostEqual(s * math.sqrt(H), 1.0, delta=0.2)

    def test_moe_odd_sizes_f32_and_expert_only(self):
        # 2IH = 30: one partial Q4_K block; only layer 1 has a file
        d = self.mk("moe-odd", "--experts", "3", "--expert-width", "3",
                    "--hidden", "5", "--layers", "2", "--expert-layers", "1")
        self.assertEqual(os.listdir(os.path.join(d, "layers")),
                         ["layer_01.weights"])
        self.check_layer_file(os.path.join(d, "layers", "layer_01.weights"),
                              4, 3, 3, 5)
        self.assertEqual(self.index(d)["model_config"]["moe"]["top_k"], 2)
        d = self.mk("moe-f32", "--experts", "2", "--expert-width", "16",
                    "--hidden", "8", "--layers", "2", "--expert-quant",
                    "f32", "--expert-layers", "0-1", "--family", "gemma4")
        for L in range(2):
            p = os.path.join(d, "layers", "layer_%02d.weights" % L)
            self.check_layer_file(p, 0, 2, 16, 8)
            self.assertEqual(os.path.getsize(p),
                             24 + 64 + 2 * (8 * 16 * 8 + 4 * 8 * 256))
        # down rows padded with zeros to S = 256
        _, _, _, _, tab, _ = lyrw(os.path.join(d, "layers",
                                               "layer_00.weights"))
        dn = floats(os.path.join(d, "layers", "layer_00.weights"))
        row0 = dn[tab[0][2] // 4:tab[0][2] // 4 + 256]
        self.assertTrue(all(x != 0 for x in row0[:16]))
        self.assertEqual(set(row0[16:]), {0})
        d = self.mk("moe-only", "--experts", "2", "--hidden", "8",
                    "--no-dense")
        i = self.index(d)
        self.assertEqual((i["layers"], i["quant"]), ([], "q4k"))
        self.assertFalse(os.path.exists(os.path.join(
            d, "interleaved_q4k.bin")))
        self.assertEqual(sorted(os.listdir(os.path.join(d, "layers"))),
                         ["layer_00.weights", "layer_01.weights"])
        # a model_type other than gemma4 is written as asked
        d = self.mk("moe-llama", "--experts", "2", "--hidden", "8",
                    "--model-type", "llama")
        self.assertEqual(self.index(d)["model_config"]["model_type"], "llama")

    def test_moe_deterministic(self):
        args = ["--experts", "3", "--hidden", "16", "--layers", "3",
                "--expert-width", "8"]
        a = self.mk("moe-s1", *args, "--seed", "9")
        b = self.mk("moe-s1b", *args, "--seed", "9", "--expert-layers", "2")
        c = self.mk("moe-s2", *args, "--seed", "10")
        f = "layers/layer_02.weights"
        # a layer's experts do not depend on which layers have a file
        self.assertEqual(self.read(a, f), self.read(b, f))
        self.assertNotEqual(self.read(a, f), self.read(c, f))
        self.assertNotEqual(self.read(a, f),
                            self.read(a, "layers/layer_01.weights"))
        self.assertEqual(self.read(a, "norms.bin"), self.read(b, "norms.bin"))
        self.assertNotEqual(self.read(a, "norms.bin"),
                            self.read(c, "norms.bin"))

    def test_moe_usage_errors(self):
        for args, what in (
                (["--experts", "0"], b"--experts"),
                (["--experts", "x"], b"--experts"),
                (["--experts", "2", "--expert-width", "0"],
                 b"--expert-width"),
                (["--experts", "2", "--expert-quant", "q8"],
                 b"--expert-quant"),
                (["--experts", "2", "--expert-layers", "1-0"],
                 b"--expert-layers"),
                (["--experts", "2", "--expert-layers", "0-2"],
                 b"--expert-layers"),
                (["--experts", "2", "--expert-layers", "a"],
                 b"--expert-layers"),
                (["--experts", "2", "--top-k", "3"], b"--top-k"),
                (["--experts", "2", "--top-k", "0"], b"--top-k"),
                (["--expert-width", "8"], b"--experts"),
                (["--no-dense"], b"--experts"),
                (["--top-k", "1"], b"--experts"),
                (["--experts", "2", "--example"], b"--example"),
                (["--family", "gemma5"], b"usage")):
            p = subprocess.run([MKV, "--hidden", "8", *args,
                                os.path.join(self.tmp, "bad-moe")],
                               capture_output=True, timeout=30)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(what, p.stderr, args)


if __name__ == "__main__":
    MKV = sys.argv[1]
    unittest.main(argv=sys.argv[:1], verbosity=2)
