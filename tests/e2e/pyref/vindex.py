# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Independent reader of a LARQL vindex directory (spec/vindex.md §1-§2.3).

Written from the spec alone, as the oracle of end-to-end tests. Every layer
is returned as three float32 [nf, H] matrices: G (rows of W_gate), U (rows of
W_up) and D (rows of W_down^T, "feature-major"), whatever the file layout.
The K-quant layout (§2.4) is recognised and refused: this reference serves
the dense layouts only.
"""

import json
import os

import numpy as np


class VindexError(Exception):
    """A vindex that cannot be loaded; the message names the file and why."""


GELU_PREFIXES = ("gemma2", "gemma3", "gemma4")
REFUSED_TYPES = ("gpt2", "starcoder2")


def activation_of(model_type):
    """vindex.md §1: GELU-tanh for gemma2/3/4* and 'gemma', SiLU otherwise."""
    if model_type in REFUSED_TYPES:
        raise VindexError("model_type %r has a non-gated FFN: not supported"
                          % model_type)
    if model_type == "gemma" or model_type.startswith(GELU_PREFIXES):
        return "gelu_tanh"
    return "silu"


def _dtype_of(name):
    if name == "f32":
        return np.dtype("<f4")
    if name == "f16":
        return np.dtype("<f2")
    raise VindexError("index.json: dtype %r is neither f32 nor f16" % name)


def _read(path, offset, count, dtype, what):
    size = os.path.getsize(path)
    nbytes = count * dtype.itemsize
    if offset < 0 or offset + nbytes > size:
        raise VindexError("%s: %s needs bytes [%d, %d) but the file has %d"
                          % (path, what, offset, offset + nbytes, size))
    with open(path, "rb") as f:
        f.seek(offset)
        buf = f.read(nbytes)
    return np.frombuffer(buf, dtype=dtype).astype(np.float32)


class Vindex:
    """A loaded vindex: attributes num_layers, hidden, intermediate, dtype,
    model_type, activation, model, family, layout, widths {L: nf},
    and weights {L: (G, U, D)} for the loaded layers."""

    def __init__(self, path, layers=None):
        self.path = path
        ipath = os.path.join(path, "index.json")
        try:
            with open(ipath) as f:
                idx = json.load(f)
        except (OSError, ValueError) as e:
            raise VindexError("%s: %s" % (ipath, e))
        self.index = idx
        for key in ("num_layers", "hidden_size", "layers"):
            if key not in idx:
                raise VindexError("%s: missing key %r" % (ipath, key))
        if "fp4" in idx:
            raise VindexError("%s: fp4 block format is not supported" % ipath)
        if "model_config" not in idx:
            raise VindexError("%s: missing model_config" % ipath)
        self.model_type = str(idx["model_config"].get("model_type", ""))
        self.activation = activation_of(self.model_type)
        self.num_layers = int(idx["num_layers"])
        self.hidden = int(idx["hidden_size"])
        self.intermediate = int(idx.get("intermediate_size", 0))
        self.dtype = idx.get("dtype", "f32")
        self.quant = idx.get("quant", "none")
        self.model = str(idx.get("model", os.path.basename(
            os.path.normpath(path))))
        self.family = str(idx.get("family", self.model_type))
        # §1: entries keyed by `layer`, not by position.
        self.entries = {}
        for e in idx["layers"]:
            self.entries[int(e["layer"])] = e
        self.widths = {L: int(e["num_features"])
                       for L, e in self.entries.items()}
        if layers is None:
            layers = range(self.num_layers)
        self.layout = self._choose_layout()
        self.weights = {}
        for L in layers:
            self.weights[L] = self._load_layer(L)

    def _has(self, *names):
        return all(os.path.exists(os.path.join(self.path, n)) for n in names)

    def _choose_layout(self):
        """§2: q4k -> only §2.4; else first present of §2.2, §2.1, §2.4,
        §2.3."""
        if self.quant == "q4k":
            raise VindexError("%s: quant q4k (§2.4) is not supported by pyref"
                              % self.path)
        if self._has("interleaved.bin"):
            return "interleaved"
        if self._has("gate_vectors.bin", "up_features.bin",
                     "down_features.bin"):
            return "features"
        if self._has("interleaved_q4k.bin"):
            raise VindexError("%s: only interleaved_q4k.bin (§2.4) present: "
                              "not supported by pyref" % self.path)
        if self._has("gate_vectors.bin", "up_weights.bin",
                     "down_weights.bin", "weight_manifest.json"):
            self._load_manifest()
            return "dense"
        raise VindexError("%s: no FFN payload found" % self.path)

    def _load_manifest(self):
        mpath = os.path.join(self.path, "weight_manifest.json")
        with open(mpath) as f:
            self.manifest = {e["key"]: e for e in json.load(f)}

    def _width(self, L):
        if L not in self.entries:
            raise VindexError("index.json: no entry for layer %d" % L)
        nf = self.widths[L]
        if nf <= 0:
            raise VindexError("index.json: layer %d has num_features 0" % L)
        return nf

    def _prefix(self, L, per_feature_bytes):
        """P_L / B_L: a prefix sum over the widths of the layers below L."""
        total = 0
        for l in range(L):
            total += self._width(l) * per_feature_bytes
        return total

    def _load_layer(self, L):
        H = self.hidden
        nf = self._width(L)
        f4 = np.dtype("<f4")
        if self.layout == "interleaved":
            p = os.path.join(self.path, "interleaved.bin")
            b = self._prefix(L, 3 * H * 4)
            G = _read(p, b, nf * H, f4, "layer %d gate" % L)
            U = _read(p, b + nf * H * 4, nf * H, f4, "layer %d up" % L)
            D = _read(p, b + 2 * nf * H * 4, nf * H, f4, "layer %d down" % L)
        else:
            gdt = _dtype_of(self.dtype)
            off = int(self.entries[L]["offset"])
            G = _read(os.path.join(self.path, "gate_vectors.bin"), off,
                      nf * H, gdt, "layer %d gate" % L)
            if self.layout == "features":
                pl = self._prefix(L, H * 4)
                U = _read(os.path.join(self.path, "up_features.bin"), pl,
                          nf * H, f4, "layer %d up" % L)
                D = _read(os.path.join(self.path, "down_features.bin"), pl,
                          nf * H, f4, "layer %d down" % L)
            else:
                U = self._tensor("layers.%d.mlp.up_proj.weight" % L,
                                 [nf, H], gdt)
                D = self._tensor("layers.%d.mlp.down_proj.weight" % L,
                                 [H, nf], gdt).reshape(H, nf).T
        return (G.reshape(nf, H), U.reshape(nf, H),
                np.ascontiguousarray(D.reshape(nf, H)))

    def _tensor(self, key, shape, dt):
        """§2.3: locate a tensor by weight_manifest.json, checking shape and
        that offset + length fits in its file."""
        if key not in self.manifest:
            raise VindexError("weight_manifest.json: no entry %r" % key)
        e = self.manifest[key]
        if list(e["shape"]) != shape:
            raise VindexError("weight_manifest.json: %s has shape %s, "
                              "expected %s" % (key, e["shape"], shape))
        n = shape[0] * shape[1]
        if int(e["length"]) != n * dt.itemsize:
            raise VindexError("weight_manifest.json: %s length %d, expected "
                              "%d" % (key, e["length"], n * dt.itemsize))
        return _read(os.path.join(self.path, e["file"]), int(e["offset"]),
                     n, dt, key)

    def embeddings(self):
        """embeddings.bin [vocab, H] f32, or None when absent."""
        p = os.path.join(self.path, "embeddings.bin")
        if not os.path.exists(p):
            return None
        a = np.fromfile(p, dtype="<f4")
        if a.size % self.hidden:
            raise VindexError("%s: size not a multiple of hidden" % p)
        return a.reshape(-1, self.hidden)


def load(path, layers=None):
    return Vindex(path, layers)
