#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Write vindex directories (spec/vindex.md §1-§2.3) for tests.

    mkmodel.py example DIR [--layout features|interleaved|dense]
               [--dtype f32|f16] [--model-type llama]
    mkmodel.py random DIR --hidden H --features NF --layers N [--seed S]
               [--layout ...] [--dtype ...] [--model-type ...] [--vocab V]

`example` is the hand-checkable model of vindex.md §3. `random` draws
weights ~ N(0, 1/sqrt(fan_in)), so outputs stay O(1) at any size; --vocab
adds embeddings.bin [V, H] f32 (what ffn-bench uses as embeddings and tied
LM head); --down-scale L:F scales one layer's W_down (outliers).
"""

import argparse
import json
import os

import numpy as np

EXAMPLE = [
    (np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1]], np.float32),
     np.array([[1, 1, 1, 1], [0, 2, 0, 0], [1, 0, 0, -1]], np.float32),
     np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], np.float32)),
    (np.array([[0.5, 0, 0, 0], [0, 0, 0, 0.5], [1, -1, 0, 0]], np.float32),
     np.array([[2, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], np.float32),
     np.array([[1, 0, 0], [0, 0, 0], [0, 1, 0], [0, 0, -1]], np.float32)),
]


def write(path, layers, layout="features", dtype="f32", model_type="llama",
          embeddings=None, name=None):
    """layers: [(G [nf,H], U [nf,H], Wd [H,nf])] in checkpoint orientation."""
    os.makedirs(path, exist_ok=True)
    for f in os.listdir(path):
        if f.endswith(".bin") or f.endswith(".json"):
            os.remove(os.path.join(path, f))
    H = layers[0][0].shape[1]
    gdt = "<f2" if dtype == "f16" else "<f4"
    entries = []
    off = 0
    for L, (G, _, _) in enumerate(layers):
        n = G.size * np.dtype(gdt).itemsize
        entries.append({"layer": L, "num_features": int(G.shape[0]),
                        "offset": off, "length": n})
        off += n
    idx = {"num_layers": len(layers), "hidden_size": H,
           "intermediate_size": int(layers[0][0].shape[0]),
           "dtype": dtype if layout != "interleaved" else "f32",
           "quant": "none", "model": name or os.path.basename(
               os.path.normpath(path)),
           "family": model_type, "model_config": {"model_type": model_type},
           "layers": entries}

    def out(fname, arrays, dt):
        with open(os.path.join(path, fname), "wb") as f:
            for a in arrays:
                f.write(np.ascontiguousarray(a).astype(dt).tobytes())

    if layout == "interleaved":
        out("interleaved.bin",
            [m for G, U, Wd in layers for m in (G, U, Wd.T)], "<f4")
    else:
        out("gate_vectors.bin", [G for G, _, _ in layers], gdt)
    if layout == "features":
        out("up_features.bin", [U for _, U, _ in layers], "<f4")
        out("down_features.bin", [Wd.T for _, _, Wd in layers], "<f4")
    elif layout == "dense":
        # §2.3: up [nf, H] and down [H, nf] in checkpoint orientation.
        man = []
        for fname, kind, sel in (("up_weights.bin", "up_proj", 1),
                                 ("down_weights.bin", "down_proj", 2)):
            off = 0
            for L, m in enumerate(layers):
                a = m[sel]
                n = a.size * np.dtype(gdt).itemsize
                man.append({"key": "layers.%d.mlp.%s.weight" % (L, kind),
                            "kind": "tensor", "shape": list(a.shape),
                            "offset": off, "length": n, "file": fname})
                off += n
            out(fname, [m[sel] for m in layers], gdt)
        with open(os.path.join(path, "weight_manifest.json"), "w") as f:
            json.dump(man, f, indent=1)
    elif layout != "interleaved":
        raise ValueError("unknown layout %r" % layout)
    if embeddings is not None:
        out("embeddings.bin", [embeddings], "<f4")
        idx["vocab_size"] = int(embeddings.shape[0])
    with open(os.path.join(path, "index.json"), "w") as f:
        json.dump(idx, f, indent=1)


def random_layers(hidden, features, n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        G = rng.standard_normal((features, hidden)) / np.sqrt(hidden)
        U = rng.standard_normal((features, hidden)) / np.sqrt(hidden)
        Wd = rng.standard_normal((hidden, features)) / np.sqrt(features)
        out.append((G.astype(np.float32), U.astype(np.float32),
                    Wd.astype(np.float32)))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kind", choices=["example", "random"])
    ap.add_argument("dir")
    ap.add_argument("--layout", default="features",
                    choices=["features", "interleaved", "dense"])
    ap.add_argument("--dtype", default="f32", choices=["f32", "f16"])
    ap.add_argument("--model-type", default="llama")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--features", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--vocab", type=int, default=0)
    ap.add_argument("--down-scale", action="append", default=[],
                    metavar="L:F", help="multiply layer L's W_down by F "
                    "(outliers, e.g. beyond the f16 range)")
    a = ap.parse_args(argv)
    if a.kind == "example":
        layers = EXAMPLE
        emb = None
    else:
        layers = random_layers(a.hidden, a.features, a.layers, a.seed)
        for spec in a.down_scale:
            L, _, f = spec.partition(":")
            G, U, Wd = layers[int(L)]
            layers[int(L)] = (G, U, (Wd * np.float32(float(f))).astype(
                np.float32))
        emb = None
        if a.vocab:
            rng = np.random.default_rng(a.seed + 1000)
            emb = rng.standard_normal((a.vocab, a.hidden)).astype(np.float32)
    write(a.dir, layers, a.layout, a.dtype, a.model_type, emb)
    print(a.dir)


if __name__ == "__main__":
    main()
