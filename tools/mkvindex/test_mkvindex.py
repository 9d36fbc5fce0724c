#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""mkvindex as issue 2 gives it: a synthetic vindex for the given hidden,
intermediate, layers, dtype, activation family and seed, in the real format
of spec/vindex.md (index.json keys, §2.1/§2.2/§2.3 files and sizes, the
manifest), deterministic by seed, with realistic statistics (weights
N(0, 1/fan_in); a few hidden channels whose W_down rows are 4x larger, the
same channels in every layer, as real residual streams have), the §3
example, and usage errors. Standard library only.

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


class Mkvindex(unittest.TestCase):
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


if __name__ == "__main__":
    MKV = sys.argv[1]
    unittest.main(argv=sys.argv[:1], verbosity=2)
