# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Remote MoE experts (spec/moe.md), the oracle side: written from the
spec alone, independent of the C code.

- MoeVindex: index.json's moe keys (§5.1), the pre-experts norms of
  weight_manifest.json + norms.bin (§5.2), layers/layer_{LL}.weights in
  LYRW with every §5.3 check, Q4_K blocks decoded as vindex.md §2.4 says.
- compute in float64 on the dequantised weights (§1): norm (no +1
  offset, eps 1e-6), one expert y_e (GELU-tanh), a layer batch; and an
  f32 variant with the spec's order of operations (index-order sums,
  multiply and add as separate roundings) for bit-level checks of §6.
- every expert frame of §3 and §7, both directions; JSON shapes of §2.
"""

import json
import os
import struct

import numpy as np

import wire
from vindex import VindexError

CT_JSON = "application/json"
CT_EXPERT = "application/x-larql-expert"
CT_LAYER = "application/x-larql-experts-layer"
CT_MULTI = "application/x-larql-experts-multi-layer"
# §7: the answer types of each route family, by format.
CT_FAMILY = {
    "layer": {"f32": CT_LAYER, "f16": CT_LAYER + "-f16",
              "i8": CT_LAYER + "-i8"},
    "multi": {"f32": CT_MULTI, "f16": CT_MULTI + "-f16",
              "i8": CT_MULTI + "-i8"},
}
NORM_EPS = 1e-6
GELU_C = 0.7978846
GELU_A = 0.044715
LYRW_MAGIC = b"LYRW"
TAG_F32 = 0
TAG_Q4K = 4
TAG_NAMES = {0: "F32", 1: "F16", 2: "BF16", 3: "Q4_0", 4: "Q4_K",
             5: "Q6_K", 6: "Q8_0", 7: "FP4"}
Q4K_BYTES = 144


class Unheld(Exception):
    """A pair with w != 0 whose expert this shard does not hold (§1)."""

    def __init__(self, layer, expert):
        Exception.__init__(self, "expert %d of layer %d is not held by "
                           "this shard" % (expert, layer))
        self.layer = layer
        self.expert = expert


def pad256(n):
    return (n + 255) // 256 * 256


# ---- Q4_K (vindex.md §2.4) ---------------------------------------------

def q4k_dequant(buf, nblocks):
    """nblocks Q4_K blocks -> float64 [nblocks * 256], exactly
    d * sc * q - dmin * m."""
    b = np.frombuffer(bytes(buf[:Q4K_BYTES * nblocks]),
                      np.uint8).reshape(nblocks, Q4K_BYTES)
    d = b[:, 0:2].copy().view("<f2").astype(np.float64)[:, 0]
    dmin = b[:, 2:4].copy().view("<f2").astype(np.float64)[:, 0]
    s = b[:, 4:16].astype(np.int64)
    sc = np.empty((nblocks, 8), np.int64)
    m = np.empty((nblocks, 8), np.int64)
    for j in range(8):
        if j < 4:
            sc[:, j] = s[:, j] & 63
            m[:, j] = s[:, j + 4] & 63
        else:
            sc[:, j] = (s[:, j + 4] & 15) | ((s[:, j - 4] >> 6) << 4)
            m[:, j] = (s[:, j + 4] >> 4) | ((s[:, j] >> 6) << 4)
    qs = b[:, 16:].astype(np.int64).reshape(nblocks, 4, 32)
    y = np.empty((nblocks, 4, 2, 32), np.float64)
    for g in range(4):
        for h, q in ((0, qs[:, g] & 15), (1, qs[:, g] >> 4)):
            j = 2 * g + h
            y[:, g, h] = ((d * sc[:, j])[:, None] * q
                          - (dmin * m[:, j])[:, None])
    return y.reshape(-1)


# ---- the vindex (§5) -----------------------------------------------------

class MoeVindex:
    """A hybrid-MoE vindex: attributes num_layers, hidden (H),
    num_experts (E), width (I), top_k, model, model_id, model_type,
    hybrid; norm(L); expert(L, e) -> (G [I, H], U [I, H], D [H, I])
    float64, or None when not held; layer_file(L) -> the validated
    header and table, or None when the file is missing."""

    def __init__(self, path):
        self.path = path
        ipath = os.path.join(path, "index.json")
        try:
            with open(ipath) as f:
                idx = json.load(f)
        except (OSError, ValueError) as e:
            raise VindexError("%s: %s" % (ipath, e))
        self.index = idx
        for key in ("num_layers", "hidden_size"):
            if key not in idx:
                raise VindexError("%s: missing key %r" % (ipath, key))
        mc = idx.get("model_config") or {}
        moe = mc.get("moe") or {}
        self.model = str(idx.get("model", ""))
        self.model_id = self.model.split("/")[-1]
        self.model_type = str(mc.get("model_type", ""))
        self.hybrid = (self.model_type.startswith("gemma4")
                       and moe.get("hybrid") is True)
        self.num_layers = int(idx["num_layers"])
        self.hidden = int(idx["hidden_size"])
        self.num_experts = int(moe.get("num_experts", 0))
        self.width = int(moe.get("moe_intermediate_size", 0))
        self.top_k = int(moe.get("top_k", 0))
        self.vectors = self._load_vectors()
        self._files = {}
        self._experts = {}

    # §5.2 -- a vector entry whose range does not fit its file is ignored
    def _load_vectors(self):
        out = {}
        mpath = os.path.join(self.path, "weight_manifest.json")
        if not os.path.exists(mpath):
            return out
        with open(mpath) as f:
            entries = json.load(f)
        for e in entries:
            if e.get("kind") != "vector":
                continue
            n = int(e["shape"][0])
            length, off = int(e["length"]), int(e["offset"])
            p = os.path.join(self.path, e["file"])
            if length == 4 * n:
                dt = np.dtype("<f4")
            elif length == 2 * n:
                dt = np.dtype("<f2")
            else:
                continue
            if not os.path.exists(p) or off + length > os.path.getsize(p):
                continue
            with open(p, "rb") as f:
                f.seek(off)
                out[e["key"]] = np.frombuffer(f.read(length), dt).astype(
                    np.float64)
        return out

    def norm(self, L):
        """layers.{L}.pre_feedforward_layernorm_2.weight, or None."""
        v = self.vectors.get("layers.%d.pre_feedforward_layernorm_2.weight"
                             % L)
        return v if v is not None and v.size == self.hidden else None

    def file_name(self, L):
        return os.path.join(self.path, "layers", "layer_%02d.weights" % L)

    def layer_file(self, L):
        """§5.3, every load-time check; None when the file is missing."""
        if L in self._files:
            return self._files[L]
        p = self.file_name(L)
        if not os.path.exists(p):
            self._files[L] = None
            return None
        with open(p, "rb") as f:
            b = f.read()
        E, I, H = self.num_experts, self.width, self.hidden
        if len(b) < 24:
            raise VindexError("%s: %d bytes, shorter than the header"
                              % (p, len(b)))
        magic, ver, tag, ne, inter, hid = struct.unpack_from("<4s5I", b, 0)
        if magic != LYRW_MAGIC:
            raise VindexError("%s: magic %r, expected 'LYRW'" % (p, magic))
        if ver != 1:
            raise VindexError("%s: format_version %d, expected 1" % (p, ver))
        if tag not in (TAG_F32, TAG_Q4K):
            raise VindexError("%s: quant_format %d (%s) is not supported"
                              % (p, tag, TAG_NAMES.get(tag, "unknown")))
        for name, got, want in (("num_entries", ne, E),
                                ("intermediate", inter, I),
                                ("hidden", hid, H)):
            if got != want:
                raise VindexError("%s: %s %d, expected %d"
                                  % (p, name, got, want))
        if 24 + 32 * E > len(b):
            raise VindexError("%s: the table of %d entries does not fit in "
                              "%d bytes" % (p, E, len(b)))
        S = pad256(I)
        if tag == TAG_Q4K:
            gb = Q4K_BYTES * -(-2 * I * H // 256)
            dbs = (Q4K_BYTES * H * S // 256,)
        else:
            gb = 8 * I * H
            dbs = (4 * H * I, 4 * H * S)
        table = []
        for e in range(E):
            go, gl, do, dl = struct.unpack_from("<4Q", b, 24 + 32 * e)
            if gl != gb:
                raise VindexError("%s: expert %d gate_up_bytes %d, expected "
                                  "%d" % (p, e, gl, gb))
            if dl not in dbs:
                raise VindexError("%s: expert %d down_bytes %d, expected %s"
                                  % (p, e, dl, " or ".join(map(str, dbs))))
            for what, o, n in (("gate_up", go, gl), ("down", do, dl)):
                if o + n > len(b):
                    raise VindexError("%s: expert %d %s [%d, %d) outside "
                                      "the file (%d bytes)"
                                      % (p, e, what, o, o + n, len(b)))
            table.append((go, gl, do, dl))
        lf = {"tag": tag, "table": table, "bytes": b}
        self._files[L] = lf
        return lf

    def expert(self, L, e):
        """(G, U, D) float64 of expert e of layer L, or None."""
        if L < 0 or L >= self.num_layers or e < 0 or e >= self.num_experts:
            return None
        key = (L, e)
        if key in self._experts:
            return self._experts[key]
        lf = self.layer_file(L)
        if lf is None:
            return None
        I, H = self.width, self.hidden
        go, gl, do, dl = lf["table"][e]
        b = lf["bytes"]
        if lf["tag"] == TAG_Q4K:
            gu = q4k_dequant(b[go:go + gl], gl // Q4K_BYTES)[:2 * I * H]
            cols = pad256(I)
            dn = q4k_dequant(b[do:do + dl], dl // Q4K_BYTES)
        else:
            gu = np.frombuffer(b, "<f4", 2 * I * H, go).astype(np.float64)
            cols = dl // (4 * H)
            dn = np.frombuffer(b, "<f4", H * cols, do).astype(np.float64)
        G = gu[:I * H].reshape(I, H)
        U = gu[I * H:].reshape(I, H)
        D = np.ascontiguousarray(dn.reshape(H, cols)[:, :I])
        self._experts[key] = (G, U, D)
        return self._experts[key]


def load(path):
    return MoeVindex(path)


# ---- compute (§1) --------------------------------------------------------

def gelu_tanh(g):
    t = g.dtype.type
    return t(0.5) * g * (t(1) + np.tanh(t(GELU_C) * (g + t(GELU_A) * g * g
                                                     * g)))


def norm64(x, n):
    """Pre-experts RMSNorm in float64; n None -> x."""
    x = np.asarray(x, np.float64)
    if n is None:
        return x.copy()
    r = np.sqrt(np.sum(x * x) / x.size + NORM_EPS)
    return x / r * np.asarray(n, np.float64)


def expert64(w, h):
    G, U, D = w
    h = np.asarray(h, np.float64)
    return D @ (gelu_tanh(G @ h) * (U @ h))


def held(mv, L, e, owned=None):
    """The expert's weights when this shard holds it, else None. owned:
    None (all) or an inclusive (first, last)."""
    if owned is not None and not owned[0] <= e <= owned[1]:
        return None
    return mv.expert(L, e)


def mix64(mv, L, h, pairs, owned=None):
    """out = sum_k w_k y_{e_k}(h) over the pairs with w != 0; raises
    Unheld for a w != 0 pair whose expert is not held. h is normed."""
    out = np.zeros(mv.hidden, np.float64)
    for e, w in pairs:
        if w == 0:
            continue
        wts = held(mv, L, e, owned)
        if wts is None:
            raise Unheld(L, e)
        out = out + np.float64(np.float32(w)) * expert64(wts, h)
    return out


def layer_batch64(mv, L, x, pairs, owned=None):
    """A layer batch on the raw x (§1): norm, then the weighted sum."""
    return mix64(mv, L, norm64(x, mv.norm(L)), pairs, owned)


# f32, in the spec's order (index-order sums, no fused multiply-add)

def _dot32(row, v):
    s = np.float32(0)
    for a, b in zip(row, v):
        s = np.float32(s + np.float32(a * b))
    return s


def norm32(x, n):
    x = np.asarray(x, np.float32)
    if n is None:
        return x.copy()
    n = np.asarray(n, np.float32)
    s = _dot32(x, x)
    r = np.sqrt(np.float32(s / np.float32(x.size)) + np.float32(NORM_EPS))
    return np.array([np.float32(np.float32(xi / r) * ni)
                     for xi, ni in zip(x, n)], np.float32)


def expert32(w, h):
    G, U, D = (np.asarray(m, np.float32) for m in w)
    h = np.asarray(h, np.float32)
    g = np.array([_dot32(r, h) for r in G], np.float32)
    u = np.array([_dot32(r, h) for r in U], np.float32)
    a = gelu_tanh(g) * u
    return np.array([_dot32(r, a) for r in D], np.float32)


def layer_batch32(mv, L, x, pairs):
    h = norm32(x, mv.norm(L))
    out = np.zeros(mv.hidden, np.float32)
    for e, w in pairs:
        if w == 0:
            continue
        out = (out + np.float32(w) * expert32(mv.expert(L, e), h)).astype(
            np.float32)
    return out


# ---- numbers on the wire --------------------------------------------------

def f16_round(v):
    """f32 values as an f16 wire carries them (wire.md §5.3)."""
    return wire.f16_bits_to_f32(wire.f32_to_f16_bits(v))


def _round_half_away(v):
    v = np.asarray(v, np.float64)
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def q8k_quantise(h):
    """§3.5, as the client does: per 256 values d = max|h|/127,
    qs = round_half_away(h * (1/d)) with 1/d an f32 reciprocal; sums per
    32. Returns (qs int8 [hidden], d f32 [nb], sums int16 [8 nb]) with
    nb = floor(hidden / 256); values past nb blocks quantise to 0."""
    h = np.asarray(h, np.float32)
    nb = h.size // 256
    qs = np.zeros(h.size, np.int8)
    d = np.zeros(nb, np.float32)
    for b in range(nb):
        blk = h[256 * b:256 * b + 256]
        amax = np.float32(np.max(np.abs(blk)))
        d[b] = np.float32(amax / np.float32(127))
        if d[b] == 0:
            continue
        inv = np.float32(np.float32(1) / d[b])
        q = _round_half_away((blk * inv).astype(np.float32))
        qs[256 * b:256 * b + 256] = np.clip(q, -127, 127).astype(np.int8)
    sums = qs[:256 * nb].astype(np.int64).reshape(-1, 32).sum(axis=1)
    return qs, d, sums.astype(np.int16)


def q8k_dequant(qs, d):
    """h_i = d[i/256] * qs[i] (f32), for the nb * 256 values with a d."""
    qs = np.asarray(qs, np.int8)
    n = 256 * len(d)
    return (np.repeat(np.asarray(d, np.float32), 256) *
            qs[:n].astype(np.float32)).astype(np.float32)


def i8_request_row(x):
    """§7 i8 request residual: [scale][zero_point 0][hidden x i8] (the
    wire.md §5.3 row)."""
    return wire.i8_encode_rows(np.asarray(x, np.float32).reshape(1, -1))


def i8_request_decode(buf, off, hidden):
    """x_i = q_i * scale + zero_point, in f32."""
    scale, zp = struct.unpack_from("<ff", buf, off)
    q = np.frombuffer(buf, np.int8, hidden, off + 8).astype(np.float32)
    return (q * np.float32(scale) + np.float32(zp)).astype(np.float32)


def vec_bytes(v, fmt):
    """One result vector in an answer format (§7): f32, f16, or the i8
    row; an empty vector is empty in every format."""
    v = np.asarray(v, np.float32).ravel()
    if v.size == 0:
        return b""
    if fmt == "f32":
        return v.astype("<f4").tobytes()
    if fmt == "f16":
        return wire.f32_to_f16_bits(v).astype("<u2").tobytes()
    if fmt == "i8":
        return wire.i8_encode_rows(v.reshape(1, -1))
    raise ValueError("unknown format %r" % fmt)


def vec_size(hidden, fmt):
    if hidden == 0:
        return 0
    return {"f32": 4 * hidden, "f16": 2 * hidden, "i8": 8 + hidden}[fmt]


def vec_decode(buf, off, hidden, fmt):
    """-> (f32 values, i8 scale or None); raises ValueError when short."""
    n = vec_size(hidden, fmt)
    if off + n > len(buf):
        raise ValueError("vector of %d %s values at %d: only %d bytes"
                         % (hidden, fmt, off, len(buf) - off))
    if hidden == 0:
        return np.zeros(0, np.float32), None
    if fmt == "f32":
        return np.frombuffer(buf, "<f4", hidden, off).astype(np.float32), None
    if fmt == "f16":
        return wire.f16_bits_to_f32(np.frombuffer(buf, "<u2", hidden, off)), \
            None
    scale, = struct.unpack_from("<f", buf, off)
    return i8_request_decode(buf, off, hidden), float(scale)


def format_of(content_type, family, own):
    """The answer format a Content-Type names in a route family (§7);
    own when none of the family's types is named."""
    ct = content_type or ""
    types = CT_FAMILY[family]
    if types["i8"] in ct:
        return "i8"
    if types["f16"] in ct:
        return "f16"
    if ct.split(";")[0].strip() == types["f32"]:
        return "f32"
    return own


def choose_answer(family, own, accept, i8_enabled=True, f16_enabled=True):
    """§7 negotiation from the first Accept field (substring search)."""
    accept = accept or ""
    types = CT_FAMILY[family]
    if types["i8"] in accept and i8_enabled:
        return "i8"
    if types["f16"] in accept and f16_enabled:
        return "f16"
    return own


# ---- §3.2 / 3.3 / §7: layer batch ------------------------------------------

LAYER_ROUTES = {"f32": "/v1/experts/layer-batch",
                "f16": "/v1/experts/layer-batch-f16",
                "i8": "/v1/experts/layer-batch-i8"}


def residual_bytes(x, fmt):
    x = np.asarray(x, np.float32)
    if fmt == "f32":
        return x.astype("<f4").tobytes()
    if fmt == "f16":
        return wire.f32_to_f16_bits(x).astype("<u2").tobytes()
    return i8_request_row(x) if x.size else struct.pack("<ff", 1.0, 0.0)


def encode_layer_batch(layer, x, pairs, fmt="f32", hidden=None):
    """Request body of a layer-batch route; fmt names the residual."""
    x = np.asarray(x, np.float32).ravel()
    hidden = x.size if hidden is None else hidden
    out = struct.pack("<III", layer, hidden, len(pairs))
    out += residual_bytes(x, fmt)
    for e, w in pairs:
        out += struct.pack("<If", e, w)
    return out


def decode_layer_batch(body, fmt="f32"):
    """-> (layer, hidden, x f32 as the shard decodes it, [(e, w)]);
    raises wire.WireError(400, '... request truncated')."""
    name = {"f32": "layer-batch", "f16": "layer-batch-f16",
            "i8": "layer-batch-i8"}[fmt]
    short = wire.WireError(400, "%s request truncated" % name)
    if len(body) < 12:
        raise short
    layer, hidden, k = struct.unpack_from("<III", body, 0)
    rb = {"f32": 4 * hidden, "f16": 2 * hidden, "i8": 8 + hidden}[fmt]
    if len(body) < 12 + rb + 8 * k:
        raise short
    if fmt == "f32":
        x = np.frombuffer(body, "<f4", hidden, 12).astype(np.float32)
    elif fmt == "f16":
        x = wire.f16_bits_to_f32(np.frombuffer(body, "<u2", hidden, 12))
    else:
        x = i8_request_decode(body, 12, hidden)
    pairs = [struct.unpack_from("<If", body, 12 + rb + 8 * i)
             for i in range(k)]
    return layer, hidden, x, pairs


def encode_layer_answer(out, fmt="f32", latency=1.5):
    out = np.asarray(out, np.float32).ravel()
    return struct.pack("<If", out.size, latency) + vec_bytes(out, fmt)


def decode_layer_answer(body, fmt="f32"):
    """-> (hidden, latency_ms, out f32, i8 scale or None)."""
    hidden, lat = struct.unpack_from("<If", body, 0)
    v, scale = vec_decode(body, 8, hidden, fmt)
    return hidden, lat, v, scale


# ---- §3.4 / 3.5: multi-layer ------------------------------------------------

def encode_multi(tasks):
    """tasks: [(layer, x, ids, weights)] -> the §3.4 request."""
    out = struct.pack("<I", len(tasks))
    for layer, x, ids, ws in tasks:
        x = np.asarray(x, np.float32).ravel()
        out += struct.pack("<III", layer, x.size, len(ids))
        out += x.astype("<f4").tobytes()
        out += struct.pack("<%dI" % len(ids), *ids)
        out += struct.pack("<%df" % len(ws), *ws)
    return out


def _multi_short(q8k):
    return wire.WireError(400, "multi-layer-batch%s request truncated"
                          % ("-q8k" if q8k else ""))


def decode_multi(body):
    """-> [(layer, hidden, x f32, ids, weights)]."""
    if len(body) < 4:
        raise _multi_short(False)
    n, = struct.unpack_from("<I", body, 0)
    off, tasks = 4, []
    for _ in range(n):
        if len(body) < off + 12:
            raise _multi_short(False)
        layer, hidden, ne = struct.unpack_from("<III", body, off)
        off += 12
        if len(body) < off + 4 * hidden + 8 * ne:
            raise _multi_short(False)
        x = np.frombuffer(body, "<f4", hidden, off).astype(np.float32)
        off += 4 * hidden
        ids = list(struct.unpack_from("<%dI" % ne, body, off))
        ws = list(struct.unpack_from("<%df" % ne, body, off + 4 * ne))
        off += 8 * ne
        tasks.append((layer, hidden, x, ids, ws))
    return tasks


def encode_multi_q8k(tasks):
    """tasks: [(layer, h, ids, weights)], h the normed input in f32 (or
    (qs, d, sums) already quantised) -> the §3.5 request."""
    out = struct.pack("<I", len(tasks))
    for layer, h, ids, ws in tasks:
        qs, d, sums = h if isinstance(h, tuple) else q8k_quantise(h)
        out += struct.pack("<III", layer, len(qs), len(ids))
        out += np.asarray(qs, np.int8).tobytes()
        out += np.asarray(d, "<f4").tobytes()
        out += np.asarray(sums, "<i2").tobytes()
        out += struct.pack("<%dI" % len(ids), *ids)
        out += struct.pack("<%df" % len(ws), *ws)
    return out


def decode_multi_q8k(body):
    """-> [(layer, hidden, h f32 = d * qs, ids, weights, (qs, d, sums))]."""
    if len(body) < 4:
        raise _multi_short(True)
    n, = struct.unpack_from("<I", body, 0)
    off, tasks = 4, []
    for _ in range(n):
        if len(body) < off + 12:
            raise _multi_short(True)
        layer, hidden, ne = struct.unpack_from("<III", body, off)
        off += 12
        nb = hidden // 256
        if len(body) < off + hidden + 4 * nb + 16 * nb + 8 * ne:
            raise _multi_short(True)
        qs = np.frombuffer(body, np.int8, hidden, off)
        off += hidden
        d = np.frombuffer(body, "<f4", nb, off).astype(np.float32)
        off += 4 * nb
        sums = np.frombuffer(body, "<i2", 8 * nb, off)
        off += 16 * nb
        ids = list(struct.unpack_from("<%dI" % ne, body, off))
        ws = list(struct.unpack_from("<%df" % ne, body, off + 4 * ne))
        off += 8 * ne
        tasks.append((layer, hidden, q8k_dequant(qs, d), ids, ws,
                      (qs, d, sums)))
    return tasks


def encode_multi_answer(results, fmt="f32"):
    """results: [(layer, out)] -> the §3.4 response (§7 formats)."""
    out = struct.pack("<I", len(results))
    for layer, v in results:
        v = np.asarray(v, np.float32).ravel()
        out += struct.pack("<II", layer, v.size) + vec_bytes(v, fmt)
    return out


def decode_multi_answer(body, fmt="f32"):
    """-> [(layer, hidden, out f32, i8 scale or None)]."""
    n, = struct.unpack_from("<I", body, 0)
    off, out = 4, []
    for _ in range(n):
        layer, hidden = struct.unpack_from("<II", body, off)
        off += 8
        v, scale = vec_decode(body, off, hidden, fmt)
        off += vec_size(hidden, fmt)
        out.append((layer, hidden, v, scale))
    return out


# ---- §3.1: expert batch, binary -----------------------------------------

def encode_expert_batch(items, hidden=None):
    """items: [(layer, expert, x)] -> the §3.1 request."""
    if hidden is None:
        hidden = len(items[0][2]) if items else 0
    out = struct.pack("<II", len(items), hidden)
    for layer, e, x in items:
        out += struct.pack("<II", layer, e)
        out += np.asarray(x, "<f4").ravel().tobytes()
    return out


def decode_expert_batch(body):
    """-> (hidden, [(layer, expert, x f32)])."""
    short = wire.WireError(400, "binary expert request truncated")
    if len(body) < 8:
        raise short
    n, hidden = struct.unpack_from("<II", body, 0)
    if len(body) < 8 + n * (8 + 4 * hidden):
        raise short
    items, off = [], 8
    for _ in range(n):
        layer, e = struct.unpack_from("<II", body, off)
        x = np.frombuffer(body, "<f4", hidden, off + 8).astype(np.float32)
        items.append((layer, e, x))
        off += 8 + 4 * hidden
    return hidden, items


def encode_expert_batch_answer(results, latency=1.5):
    """results: [(layer, expert, y)]; hidden 0 when there are none."""
    hidden = len(results[0][2]) if results else 0
    out = struct.pack("<IIf", len(results), hidden, latency)
    for layer, e, y in results:
        out += struct.pack("<II", layer, e)
        out += np.asarray(y, "<f4").ravel().tobytes()
    return out


def decode_expert_batch_answer(body):
    """-> (latency_ms, [(layer, expert, y f32)])."""
    n, hidden, lat = struct.unpack_from("<IIf", body, 0)
    if len(body) < 12 + n * (8 + 4 * hidden):
        raise ValueError("expert batch answer of %d items of %d values: "
                         "only %d bytes" % (n, hidden, len(body)))
    out, off = [], 12
    for _ in range(n):
        layer, e = struct.unpack_from("<II", body, off)
        y = np.frombuffer(body, "<f4", hidden, off + 8).astype(np.float32)
        out.append((layer, e, y))
        off += 8 + 4 * hidden
    return lat, out


# ---- §2: JSON shapes ------------------------------------------------------

def json_number(v):
    """Shortest round-trip decimal of an f32; 0.0 for zero; null when not
    finite."""
    v = np.float32(v)
    if not np.isfinite(v):
        return "null"
    if v == 0:
        return "-0.0" if np.signbit(v) else "0.0"
    return str(v)


def json_vector(v):
    return "[" + ",".join(json_number(x) for x in np.asarray(v).ravel()) + \
        "]"


def encode_single(x):
    """POST /v1/expert/{layer}/{expert_id} body."""
    return ('{"residual":%s}' % json_vector(x)).encode()


def encode_single_answer(y, latency=1.5):
    return ('{"output":%s,"latency_ms":%r}' % (json_vector(y),
                                               float(latency))).encode()


def _floats(v):
    return np.array([np.nan if a is None else a for a in v], np.float32)


def decode_single_answer(body):
    """-> (output f32, latency_ms)."""
    o = json.loads(body)
    return _floats(o["output"]), o["latency_ms"]


def encode_batch_json(items):
    """items: [(layer, expert, x)] -> the JSON /v1/expert/batch body."""
    return ('{"requests":[%s]}' % ",".join(
        '{"layer":%d,"expert_id":%d,"residual":%s}' % (L, e, json_vector(x))
        for L, e, x in items)).encode()


def decode_batch_json(body):
    o = json.loads(body)
    return [(int(r["layer"]), int(r["expert_id"]),
             np.asarray(r["residual"], np.float32)) for r in o["requests"]]


def encode_batch_json_answer(results, latency=1.5):
    return ('{"results":[%s],"latency_ms":%s}' % (",".join(
        '{"layer":%d,"expert_id":%d,"output":%s}' % (L, e, json_vector(y))
        for L, e, y in results), json_number(latency))).encode()


def decode_batch_json_answer(body):
    """-> (latency_ms, [(layer, expert, y f32)])."""
    o = json.loads(body)
    return o["latency_ms"], [(r["layer"], r["expert_id"],
                              _floats(r["output"])) for r in o["results"]]


def topology(mv, owned):
    """The §2 topology answer of a shard started with --experts A-B."""
    return {"model_id": mv.model_id, "num_experts": mv.num_experts,
            "num_layers": mv.num_layers, "owned_start": owned[0],
            "owned_end": owned[1]}


def encode_topology(mv, owned):
    t = topology(mv, owned)
    return json.dumps(t, separators=(",", ":")).encode()


def decode_topology(body):
    o = json.loads(body)
    return (o["model_id"], o["num_experts"], o["num_layers"],
            o["owned_start"], o["owned_end"])
