#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""What grid_peer.py checks a joining shard's bytes with (spec/wire.md §9):
SipHash-1-3 for vindex_hash, the Python stubs generated from
lib/grid/grid.proto, and a strict walk of the protobuf wire format that
finds unknown fields, wrong wire types and out-of-range values.
"""

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "..", "lib",
                                          "grid"))

# --- SipHash-1-3, keys 0, 0 (Rust's DefaultHasher; §9 step 1) ----------

M64 = (1 << 64) - 1


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & M64


def siphash13(data, k0=0, k1=0):
    """SipHash-1-3 of DATA: one compression round per 8-byte word, three
    finalisation rounds; the last word carries len(DATA) mod 256 in its
    top byte (the reference SipHash; Rust's SipHasher13 gives the same
    for the bytes its Hash impls feed it)."""
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573

    def rnd():
        nonlocal v0, v1, v2, v3
        v0 = (v0 + v1) & M64
        v1 = _rotl(v1, 13) ^ v0
        v0 = _rotl(v0, 32)
        v2 = (v2 + v3) & M64
        v3 = _rotl(v3, 16) ^ v2
        v0 = (v0 + v3) & M64
        v3 = _rotl(v3, 21) ^ v0
        v2 = (v2 + v1) & M64
        v1 = _rotl(v1, 17) ^ v2
        v2 = _rotl(v2, 32)

    n = len(data)
    end = n - n % 8
    for i in range(0, end, 8):
        m = int.from_bytes(data[i:i + 8], "little")
        v3 ^= m
        rnd()
        v0 ^= m
    b = ((n & 0xFF) << 56) | int.from_bytes(data[end:], "little")
    v3 ^= b
    rnd()
    v0 ^= b
    v2 ^= 0xFF
    for _ in range(3):
        rnd()
    return v0 ^ v1 ^ v2 ^ v3


def vindex_hash(model_id, num_layers):
    """§9 step 1: Rust's (model_id: &str, num_layers: usize).hash() with
    DefaultHasher: the str's bytes, a 0xff byte, the usize as 8 bytes
    little-endian; 16 lowercase hex digits of the u64."""
    data = model_id.encode() + b"\xff" + num_layers.to_bytes(8, "little")
    return "%016x" % siphash13(data)


SPEC_VECTORS = (("gemma-3-4b-it", 34, "6f04b24d6cfecd10"),
                ("demo-model", 4, "01c0e4262a2daa31"))
for _m, _n, _h in SPEC_VECTORS:
    if vindex_hash(_m, _n) != _h:
        raise AssertionError("grid_peer: siphash13 is wrong: (%r, %d) gives"
                             " %s, §9 says %s" % (_m, _n, vindex_hash(_m, _n),
                                                  _h))

# --- stubs ---------------------------------------------------------------

pb = None       # grid_pb2, once load_stubs() ran
grpc = None


def load_stubs():
    """Generate grid_pb2 / grid_pb2_grpc from lib/grid/grid.proto into a
    temporary directory (nothing generated is kept) and import them."""
    global pb, grpc
    if pb is not None:
        return pb
    d = tempfile.mkdtemp(prefix="grid_peer_pb.")
    try:
        r = subprocess.run([sys.executable, "-m", "grpc_tools.protoc",
                            "-I", PROTO_DIR, "--python_out=" + d,
                            "--grpc_python_out=" + d, "grid.proto"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("grpc_tools.protoc failed: " + r.stderr)
        sys.path.insert(0, d)
        import grid_pb2          # noqa: E402
        import grid_pb2_grpc     # noqa: E402,F401
        import grpc as _grpc     # noqa: E402
    finally:
        sys.path.remove(d) if d in sys.path else None
        shutil.rmtree(d, ignore_errors=True)
    pb = grid_pb2
    grpc = _grpc
    return pb


# --- a strict walk of the protobuf wire format ---------------------------
# Parsing alone hides what an encoder got wrong (a field of an unknown
# number, a uint32 sent as a 64-bit varint, two members of the oneof, a
# wrong wire type of a known field, invalid UTF-8): walk the bytes against
# the message's descriptor. Unknown fields are found here for every
# protobuf version (and cross-checked with DiscardUnknownFields below).

_WT_OF_TYPE = {}        # FieldDescriptor.TYPE_* -> wire type, filled lazily


def _wire_types():
    if not _WT_OF_TYPE:
        from google.protobuf.descriptor import FieldDescriptor as F
        for t in (F.TYPE_INT32, F.TYPE_INT64, F.TYPE_UINT32, F.TYPE_UINT64,
                  F.TYPE_SINT32, F.TYPE_SINT64, F.TYPE_BOOL, F.TYPE_ENUM):
            _WT_OF_TYPE[t] = 0
        for t in (F.TYPE_FIXED64, F.TYPE_SFIXED64, F.TYPE_DOUBLE):
            _WT_OF_TYPE[t] = 1
        for t in (F.TYPE_STRING, F.TYPE_BYTES, F.TYPE_MESSAGE):
            _WT_OF_TYPE[t] = 2
        for t in (F.TYPE_FIXED32, F.TYPE_SFIXED32, F.TYPE_FLOAT):
            _WT_OF_TYPE[t] = 5
    return _WT_OF_TYPE


def _varint(buf, i, what, probs):
    v = 0
    shift = 0
    start = i
    while True:
        if i >= len(buf):
            probs.append("%s: truncated varint" % what)
            return None, i
        c = buf[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            break
        if i - start >= 10:
            probs.append("%s: varint longer than 10 bytes" % what)
            return None, i
    if i - start > 1 and buf[i - 1] == 0:
        probs.append("%s: non-minimal varint %s" %
                     (what, buf[start:i].hex()))
    return v, i


def wire_problems(buf, desc, path=None):
    """What is wrong in BUF as an encoding of message DESC (a list)."""
    from google.protobuf.descriptor import FieldDescriptor as F
    wt_of = _wire_types()
    path = path or desc.name
    probs = []
    seen = {}
    oneof_members = {}
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i, path + " tag", probs)
        if key is None:
            return probs
        num, wt = key >> 3, key & 7
        f = desc.fields_by_number.get(num)
        fname = "%s.%s" % (path, f.name if f else "#%d" % num)
        if num == 0:
            probs.append("%s: field number 0" % path)
            return probs
        if f is None:
            probs.append("%s: unknown field %d (wire type %d)" %
                         (path, num, wt))
        elif wt != wt_of[f.type]:
            probs.append("%s: wire type %d, want %d" %
                         (fname, wt, wt_of[f.type]))
        if f is not None and f.label != F.LABEL_REPEATED:
            seen[num] = seen.get(num, 0) + 1
            if seen[num] == 2:
                probs.append("%s: singular field sent more than once" %
                             fname)
            if f.containing_oneof is not None:
                oneof_members.setdefault(f.containing_oneof.name,
                                         set()).add(f.name)
        if wt == 0:
            v, i = _varint(buf, i, fname, probs)
            if v is None:
                return probs
            if f is not None and f.type in (F.TYPE_UINT32, F.TYPE_INT32,
                                            F.TYPE_ENUM) and v >= 1 << 32:
                probs.append("%s: value %d out of 32-bit range" %
                             (fname, v))
        elif wt == 1:
            if i + 8 > len(buf):
                probs.append("%s: truncated fixed64" % fname)
                return probs
            i += 8
        elif wt == 5:
            if i + 4 > len(buf):
                probs.append("%s: truncated fixed32" % fname)
                return probs
            i += 4
        elif wt == 2:
            n, i = _varint(buf, i, fname + " length", probs)
            if n is None:
                return probs
            if i + n > len(buf):
                probs.append("%s: length %d beyond the message" %
                             (fname, n))
                return probs
            body = bytes(buf[i:i + n])
            i += n
            if f is not None and f.type == F.TYPE_STRING:
                try:
                    body.decode("utf-8")
                except UnicodeDecodeError:
                    probs.append("%s: invalid UTF-8 %r" % (fname, body))
            elif f is not None and f.type == F.TYPE_MESSAGE:
                probs += wire_problems(body, f.message_type, fname)
        else:
            probs.append("%s: wire type %d (groups or invalid)" %
                         (fname, wt))
            return probs
    for name, members in oneof_members.items():
        if len(members) > 1:
            probs.append("%s: oneof %s has %d members set: %s" %
                         (path, name, len(members), sorted(members)))
    return probs


def unknown_field_problem(msg):
    """Cross-check with the library: a copy without unknown fields must
    serialise to the same size (works in every protobuf version, also for
    nested messages)."""
    c = type(msg)()
    c.CopyFrom(msg)
    c.DiscardUnknownFields()
    if c.ByteSize() != msg.ByteSize():
        return ("%s carries %d bytes of unknown fields" %
                (msg.DESCRIPTOR.name, msg.ByteSize() - c.ByteSize()))
    return None
