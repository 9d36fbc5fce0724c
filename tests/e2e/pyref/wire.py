# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""The LARQL remote-FFN wire (spec/wire.md §3-§5), client and server side.

Number conversions follow §5.3 exactly:
- f16: numpy's float32 -> float16 cast (round to nearest even, overflow to
  Inf, f32 subnormals to +-0, f16 subnormals rounded correctly); NaNs are
  quieted as F16C does (top payload bits kept, quiet bit set).
  test_pyref checks this against a bit-level definition.
- i8: per row, f32 division by scale = max|x| / 127.0f, clamp to
  [-127, 127], round half away from zero, NaN -> 0.
"""

import struct

import numpy as np

BATCH = 0xFFFFFFFF
CT_F32 = "application/x-larql-ffn"
CT_F16 = "application/x-larql-ffn-f16"
CT_I8 = "application/x-larql-ffn-i8"
CT = {"f32": CT_F32, "f16": CT_F16, "i8": CT_I8}
# §5.1: what clients send in Accept for each preference.
ACCEPT = {"i8": "%s, %s, %s" % (CT_I8, CT_F16, CT_F32),
          "f16": "%s, %s" % (CT_F16, CT_F32),
          "f32": CT_F32}
TOP_K = 8092
F16_MAX = 65504.0


class WireError(Exception):
    """A request the server refuses: status and the exact §4 message."""

    def __init__(self, status, message):
        Exception.__init__(self, message)
        self.status = status
        self.message = message


# ---- number conversions (§5.3) ------------------------------------------

def f32_to_f16_bits(v):
    v = np.asarray(v, dtype=np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        h = v.astype(np.float16).view(np.uint16).copy()
    nan = np.isnan(v)
    if nan.any():
        # F16C: sign, exponent all ones, quiet bit, top 9 payload bits.
        b = v.view(np.uint32)
        h[nan] = (((b[nan] >> 16) & 0x8000) | 0x7E00 |
                  ((b[nan] >> 13) & 0x3FF)).astype(np.uint16)
    return h


def f16_bits_to_f32(h):
    return np.asarray(h, dtype=np.uint16).view(np.float16).astype(np.float32)


def i8_quantise_row(v):
    """One row of f32 values -> (scale f32, q int8 array), §5.3."""
    v = np.asarray(v, dtype=np.float32)
    a = np.abs(v)
    a = a[~np.isnan(a)]
    max_abs = np.float32(a.max()) if a.size else np.float32(0)
    if max_abs < 0:
        max_abs = np.float32(0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        scale = (np.float32(max_abs) / np.float32(127.0)
                 if max_abs != 0 else np.float32(1.0))
        q = (v / scale).astype(np.float32)
        q = np.clip(q, np.float32(-127), np.float32(127))
        # roundf in float64: |q| + 0.5 is exact there, so no double rounding.
        q64 = q.astype(np.float64)
        r = np.sign(q64) * np.floor(np.abs(q64) + 0.5)
    r[np.isnan(r)] = 0
    return np.float32(scale), r.astype(np.int8)


def i8_encode_rows(x):
    """[rows, n] f32 -> bytes of rows i8 rows [scale][0.0][n x i8]."""
    x = np.atleast_2d(np.asarray(x, dtype=np.float32))
    out = bytearray()
    for row in x:
        scale, q = i8_quantise_row(row)
        out += struct.pack("<ff", scale, 0.0) + q.tobytes()
    return bytes(out)


def i8_decode_rows(buf, rows, n):
    out = np.empty((rows, n), dtype=np.float32)
    step = 8 + n
    for r in range(rows):
        scale = np.frombuffer(buf, "<f4", 1, r * step)[0]
        q = np.frombuffer(buf, np.int8, n, r * step + 8)
        out[r] = q.astype(np.float32) * np.float32(scale)
    return out


def encode_payload(x, fmt):
    x = np.atleast_2d(np.asarray(x, dtype=np.float32))
    if fmt == "f32":
        return x.astype("<f4").tobytes()
    if fmt == "f16":
        return f32_to_f16_bits(x.ravel()).astype("<u2").tobytes()
    if fmt == "i8":
        return i8_encode_rows(x)
    raise ValueError("unknown wire format %r" % fmt)


def roundtrip(x, fmt):
    """What the other side decodes after x went over the wire as fmt."""
    x = np.atleast_2d(np.asarray(x, dtype=np.float32))
    if fmt == "f32":
        return x.copy()
    if fmt == "f16":
        return f16_bits_to_f32(f32_to_f16_bits(x))
    return i8_decode_rows(i8_encode_rows(x), x.shape[0], x.shape[1])


# ---- client side: requests out, responses in ----------------------------

def encode_request(layers, x, fmt="f32", flags=1, top_k=TOP_K, batch=None):
    """Body and Content-Type of a binary request (§3). A single layer uses
    the single frame unless batch=True."""
    x = np.atleast_2d(np.asarray(x, dtype=np.float32))
    seq_len = x.shape[0]
    if isinstance(layers, int):
        layers = [layers]
    if batch is None:
        batch = len(layers) != 1
    if batch:
        head = struct.pack("<II", BATCH, len(layers))
        head += struct.pack("<%dI" % len(layers), *layers)
    else:
        head = struct.pack("<I", layers[0])
    head += struct.pack("<III", seq_len, flags, top_k)
    return head + encode_payload(x, fmt), CT[fmt]


def format_of(content_type):
    """§3 / §5: number format named by a Content-Type (substring tests)."""
    if CT_I8 in content_type:
        return "i8"
    if CT_F16 in content_type:
        return "f16"
    return "f32"


def _payload(buf, off, fmt, seq_len, num_values):
    rows = max(seq_len, 1)
    hidden = num_values // seq_len if seq_len else 0
    if fmt == "f32":
        n = 4 * num_values
        v = np.frombuffer(buf, "<f4", num_values, off).astype(np.float32)
    elif fmt == "f16":
        n = 2 * num_values
        v = f16_bits_to_f32(np.frombuffer(buf, "<u2", num_values, off))
    else:
        n = rows * (8 + hidden)
        v = i8_decode_rows(buf[off:off + n], rows, hidden)
    return v.reshape(seq_len, -1) if seq_len else v.reshape(0, 0), n


def decode_response(body, content_type, hidden=None):
    """-> (latency_ms, [(layer, seq_len, y[S, H] f32)]) (§5.2). A single
    frame does not carry num_values: hidden comes from the payload length
    (f32/f16) or from it and seq_len (i8)."""
    fmt = format_of(content_type)
    first, = struct.unpack_from("<I", body, 0)
    if first == BATCH:
        n, lat = struct.unpack_from("<If", body, 4)
        off = 12
        out = []
        for _ in range(n):
            layer, seq_len, nv = struct.unpack_from("<III", body, off)
            off += 12
            y, used = _payload(body, off, fmt, seq_len, nv)
            off += used
            out.append((layer, seq_len, y))
        if off != len(body):
            raise ValueError("batch response: %d trailing bytes"
                             % (len(body) - off))
        return float(lat), out
    layer, seq_len, lat = struct.unpack_from("<IIf", body, 0)
    plen = len(body) - 12
    rows = max(seq_len, 1)
    if fmt == "f32":
        nv = plen // 4
    elif fmt == "f16":
        nv = plen // 2
    else:
        nv = (plen // rows - 8) * seq_len
    y, used = _payload(body, 12, fmt, seq_len, nv)
    if used != plen:
        raise ValueError("single response: payload %d bytes, decoded %d"
                         % (plen, used))
    return float(lat), [(layer, seq_len, y)]


# ---- server side: requests in, responses out ----------------------------

def decode_request(body, content_type, hidden, num_layers, owned=None):
    """Validate and decode a binary request in the §4 order.
    -> (layers, seq_len, x[S, H] f32) or raises WireError."""
    fmt = format_of(content_type)
    if len(body) < 16:
        raise WireError(400, "binary: body too short (need \u2265 16 bytes)")
    first, = struct.unpack_from("<I", body, 0)
    if first == BATCH:
        k, = struct.unpack_from("<I", body, 4)
        if len(body) < 8 + 4 * k:
            raise WireError(400, "binary batch: body too short for %d layer "
                            "indices" % k)
        layers = list(struct.unpack_from("<%dI" % k, body, 8))
        off = 8 + 4 * k
    else:
        layers = [first]
        off = 4
    if len(body) - off < 12:
        raise WireError(400, "binary: truncated fixed header "
                        "(seq_len/flags/top_k)")
    seq_len, flags, _top_k = struct.unpack_from("<III", body, off)
    payload = body[off + 12:]
    n = len(payload)
    if fmt == "f32":
        if n % 4:
            raise WireError(400, "binary: residual byte length is not a "
                            "multiple of 4")
        x = np.frombuffer(payload, "<f4").astype(np.float32)
    elif fmt == "f16":
        if n % 2:
            raise WireError(400, "f16 binary request: residual byte length "
                            "is not a multiple of f16")
        x = f16_bits_to_f32(np.frombuffer(payload, "<u2"))
    else:
        rows = max(seq_len, 1)
        if n % rows:
            raise WireError(400, "i8 binary request: payload of %d bytes is "
                            "not a multiple of seq_len %d" % (n, rows))
        per_row = n // rows
        if per_row <= 8:
            raise WireError(400, "i8 binary request: %d bytes per position "
                            "leaves no residual data after the 8-byte "
                            "scale/zero header" % per_row)
        x = i8_decode_rows(payload, rows, per_row - 8).ravel()
    if not flags & 1:
        raise WireError(400, "binary wire format requires full_output = true")
    e = seq_len * hidden
    if e >= 1 << 64:
        raise WireError(400, "seq_len * hidden overflow")
    if x.size != e:
        raise WireError(400, "residual has %d elements, expected %d "
                        "(seq_len=%d * hidden_size=%d)"
                        % (x.size, e, seq_len, hidden))
    if seq_len == 0:
        raise WireError(400, "seq_len must be >= 1")
    check_layers(layers, num_layers, owned)
    return layers, seq_len, x.reshape(seq_len, hidden)


def check_layers(layers, num_layers, owned):
    for L in layers:
        if owned is not None and not owned[0] <= L <= owned[1]:
            raise WireError(400, "layer %d not served by this shard "
                            "(owned: %d\u2013%d)" % (L, owned[0], owned[1]))
        if L >= num_layers:
            raise WireError(400, "layer %d out of range (num_layers = %d)"
                            % (L, num_layers))


def choose_format(accept, i8_enabled=False, f16_enabled=True):
    """§5.1: first Accept value, substring tests, silent fallback."""
    if accept is None:
        return "f32"
    if CT_I8 in accept and i8_enabled:
        return "i8"
    if CT_F16 in accept and f16_enabled:
        return "f16"
    return "f32"


def encode_response(results, fmt, latency_ms):
    """results: [(layer, seq_len, y[S, H])] -> body (§5.2). Exactly one
    result -> single frame; zero or several -> batch frame."""
    if len(results) == 1:
        layer, seq_len, y = results[0]
        return (struct.pack("<IIf", layer, seq_len, latency_ms) +
                encode_payload(y, fmt))
    out = struct.pack("<IIf", BATCH, len(results), latency_ms)
    for layer, seq_len, y in results:
        y = np.atleast_2d(np.asarray(y, dtype=np.float32))
        out += struct.pack("<III", layer, seq_len, y.size)
        out += encode_payload(y, fmt)
    return out
