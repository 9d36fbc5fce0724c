#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Seed the fuzzing corpora (tests/fuzz/corpus/<harness>/) from the tests.

The unit tests hold many literal requests, JSON bodies and config files:
their C string literals (adjacent ones concatenated, string macros of the
file and of its local headers expanded) are extracted and the relevant
ones kept. Binary frames (spec/wire.md §3, §8; the Q8_K frames of issue 6)
are built here, as the tests build them; TCP conversations are scripted
here in fuzz_tcp.c's step format, and small models in every layout come
from tools/mkvindex (build-dev/ or build/), packed with
tools/fuzz/vindex-pack.py. Each seed gets the harness's
control bytes in front (see the comment at the top of each
tests/fuzz/fuzz_*.c). Files are named by the SHA-1 of their bytes, as
libFuzzer names its own, so running this again adds nothing twice and
never removes what a campaign merged (tools/fuzz/run-all --merge).

usage: tools/fuzz/seed.py [--out DIR] [--max N]
"""

import argparse
import hashlib
import os
import re
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# ---------------------------------------------------------------------------
# C string literals


def _unescape(body):
    """Bytes of a C string literal's body (between the quotes)."""
    out = bytearray()
    i = 0
    simple = {'n': 10, 'r': 13, 't': 9, '0': 0, '\\': 92, '"': 34,
              "'": 39, 'a': 7, 'b': 8, 'f': 12, 'v': 11, '?': 63}
    while i < len(body):
        c = body[i]
        if c != '\\':
            out += c.encode()
            i += 1
            continue
        e = body[i + 1]
        if e == 'x':
            m = re.match(r'[0-9a-fA-F]+', body[i + 2:])
            out.append(int(m.group(0), 16) & 0xff)
            i += 2 + len(m.group(0))
        elif e in '01234567':
            m = re.match(r'[0-7]{1,3}', body[i + 1:])
            out.append(int(m.group(0), 8) & 0xff)
            i += 1 + len(m.group(0))
        elif e == 'u':
            out += chr(int(body[i + 2:i + 6], 16)).encode()
            i += 6
        elif e in simple:
            out.append(simple[e])
            i += 2
        else:
            out += e.encode()
            i += 2
    return bytes(out)


_TOKEN = re.compile(r'''
    (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<chr>'(?:[^'\\\n]|\\.)*')
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<ws>\s+)
  | (?P<other>.)
''', re.S | re.X)


def _tokens(text):
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ('comment', 'ws'):
            continue
        yield kind, m.group(kind)


def _runs(text, macros):
    """Concatenated runs of string literals and string macros."""
    run, has_lit = [], False
    for kind, tok in _tokens(text):
        if kind == 'str':
            run.append(_unescape(tok[1:-1]))
            has_lit = True
            continue
        if kind == 'ident' and tok in macros:
            run.append(macros[tok])
            continue
        if run and has_lit:
            yield b''.join(run)
        run, has_lit = [], False
    if run and has_lit:
        yield b''.join(run)


def _macros(paths):
    """#define NAME <string literals and earlier macros> of the files."""
    macros = {}
    for p in paths:
        text = open(p, encoding='utf-8', errors='replace').read()
        text = text.replace('\\\n', ' ')
        for m in re.finditer(r'^#define\s+(\w+)\s+(.*)$', text, re.M):
            name, val = m.group(1), m.group(2)
            parts, ok = [], True
            for kind, tok in _tokens(val):
                if kind == 'str':
                    parts.append(_unescape(tok[1:-1]))
                elif kind == 'ident' and tok in macros:
                    parts.append(macros[tok])
                else:
                    ok = False
                    break
            if ok and parts:
                macros[name] = b''.join(parts)
    return macros


def literals(*rel):
    """Every literal run of the files (paths relative to the root); each
    file's own macros and those of the local headers it includes."""
    out = []
    for r in rel:
        path = os.path.join(ROOT, r)
        text = open(path, encoding='utf-8', errors='replace').read()
        incs = [os.path.join(os.path.dirname(path), h) for h in
                re.findall(r'^#include\s+"([^"]+)"', text, re.M)]
        incs = [h for h in incs if os.path.exists(h)]
        macros = _macros(incs + [path])
        body = re.sub(r'^#.*(?:\\\n.*)*$', '', text, flags=re.M)
        out += list(_runs(body, macros))
    return out

# ---------------------------------------------------------------------------
# frames


def u32(*v):
    return struct.pack('<%dI' % len(v), *v)


def f32(*v):
    return struct.pack('<%df' % len(v), *v)


def f16(*v):
    return struct.pack('<%de' % len(v), *v)


def i8_row(vals):
    """spec/wire.md §5.3: scale = max|x| / 127 (1 when 0), q = round."""
    m = max(abs(x) for x in vals)
    scale = m / 127.0 if m else 1.0
    qs = [max(-127, min(127, int(round(x / scale)))) for x in vals]
    return f32(scale, 0.0) + struct.pack('<%db' % len(qs), *qs)


def binary_bodies():
    x = [1.0, -2.0, 0.5, 3.0]
    x2 = x + [0.25, -1.5, 100.0, -0.001]
    bodies = []
    for payload, fmt in ((f32(*x), 0), (f16(*x), 1), (i8_row(x), 2)):
        bodies.append((fmt, u32(5, 1, 1, 8092) + payload))
        bodies.append((fmt, u32(0xffffffff, 2, 5, 20, 1, 1, 8092) +
                       payload))
    bodies.append((0, u32(5, 2, 1, 8092) + f32(*x2)))
    bodies.append((1, u32(5, 2, 1, 8092) + f16(*x2)))
    bodies.append((2, u32(5, 2, 1, 8092) + i8_row(x) + i8_row(x2[4:])))
    bodies.append((0, u32(0xffffffff, 0, 1, 1, 8092) + f32(*x)))
    bodies.append((0, u32(0xffffffff, 3, 1, 2, 1, 1, 1, 8092) + f32(*x)))
    bodies.append((0, u32(5, 1, 1, 8092)))                 # no payload
    bodies.append((2, u32(5, 0, 1, 8092) + i8_row(x)))      # seq_len 0
    bodies.append((0, u32(5, 1, 0, 8092) + f32(*x)))       # flags 0
    bodies.append((0, u32(5, 1, 1, 8092) + f32(*x)[:-1]))  # not % 4
    bodies.append((1, u32(5, 1, 1, 8092) + f16(*x)[:-1]))  # not % 2
    bodies.append((2, u32(5, 3, 1, 8092) + i8_row(x)))     # not % rows
    bodies.append((2, u32(5, 1, 1, 8092) + f32(1.0, 0.0)))  # no data
    bodies.append((0, u32(5, 1, 1)))                       # too short
    bodies.append((0, u32(0xffffffff, 4, 1)))              # short list
    bodies.append((0, u32(0xffffffff, 1, 5, 1, 1)))        # truncated
    bodies.append((0, u32(7, 1, 1, 8092) + f32(float('nan'),
                   float('inf'), -0.0, 1e-45)))
    bodies.append((1, u32(7, 1, 1, 8092) +
                   struct.pack('<4H', 0x7c00, 0xfc01, 0x0001, 0x8000)))
    return bodies


def wire_seeds():
    # [0] Content-Type | Accept << 4 (tables of fuzz_wire.c: Content-Type
    # 0 f32, 1 f16, 2 i8; Accept 1 f32, 2 f16, 3 i8, 4 the client's all)
    # [1] f16 | i8 << 1 | fit hidden (16)  [2-3] hidden  [4] num_layers
    # [5] first [6] last [7] latency
    out = []
    for fmt, body in binary_bodies():
        for acc, fl in ((1, 0x13), (2, 0x11), (3, 0x13), (4, 0x13),
                        (0, 0x10 | 0x08)):
            out.append(bytes([fmt | acc << 4, fl, 4, 0, 64, 0, 63, 22]) +
                       body)
    # a Content-Type from the input (selector 12): length-prefixed
    ct = b'application/x-larql-ffn-f16; q=1'
    out.append(bytes([12 | 2 << 4, 0x11, 4, 0, 64, 0, 63, 22, len(ct)]) +
               ct + binary_bodies()[1][1])
    # the JSON path through the binary route's classifier
    out.append(bytes([3, 0x10, 4, 0, 64, 0, 63, 22]) +
               b'{"residual":[1,2,3,4],"layer":5}')
    return out


def q8k_entry(layer, nb, seed):
    qs = bytes(((i * 37 + seed) % 255) - 127 & 0xff
               for i in range(256 * nb))
    d = f32(*[0.01 * (b + 1) for b in range(nb)])
    sums = struct.pack('<%dh' % (8 * nb), *[(i * 3) % 100 for i in
                                            range(8 * nb)])
    return u32(layer, nb) + qs + d + sums


def q8k_seeds():
    # [0] flags (bit 1 owns all, bit 2 raw hidden) [1-2] hidden
    # [3] num_layers [4] first [5] last
    hdr1 = bytes([0, 0, 0, 8, 1, 2])            # hidden 256, owns 1-2
    hdr2 = bytes([2, 1, 0, 8, 0, 7])            # hidden 512, owns all
    out = []
    e1 = q8k_entry(1, 1, 3)
    e2 = q8k_entry(2, 1, 9)
    out.append(hdr1 + u32(0))
    out.append(hdr1 + u32(1) + e1)
    out.append(hdr1 + u32(2) + e1 + e2)
    out.append(hdr1 + u32(2) + e1 + e1)
    out.append(hdr1 + u32(1) + e1 + b'\0')            # trailing byte
    out.append(hdr1 + u32(1) + e1[:-1])               # truncated
    out.append(hdr1 + u32(2) + e1)                    # second missing
    out.append(hdr1 + u32(1) + q8k_entry(0, 1, 1))    # not owned
    out.append(hdr1 + u32(1) + q8k_entry(9, 1, 1))
    out.append(hdr1 + u32(1) + q8k_entry(1, 2, 1))    # blocks != hidden
    out.append(hdr2 + u32(1) + q8k_entry(3, 2, 5))
    out.append(hdr2 + u32(3) + q8k_entry(0, 2, 5) + q8k_entry(7, 2, 6) +
               q8k_entry(8, 2, 7))
    out.append(bytes([1, 0, 0, 8, 0, 7]) + u32(0))    # no model
    out.append(bytes([6, 0, 0, 8, 0, 7]) + u32(2) + u32(1, 0) +
               u32(2, 0))                             # hidden 0
    out.append(hdr1 + u32(0xffffffff))
    out.append(hdr1 + b'\1\0')
    return out

# ---------------------------------------------------------------------------
# extracted from the tests


def http_seeds(rng):
    reqs = []
    for lit in literals('tests/http/test_http_parse.c',
                        'tests/http/test_http_hostile.c',
                        'tests/http/test_http_mutate.c'):
        if b'HTTP/' in lit or lit[:1] in (b'0', b'1', b'5', b'a', b'f'):
            reqs.append(lit)
    # pipelined, chunked, the routes of spec/wire.md §2
    reqs += [
        b'GET /v1/health HTTP/1.1\r\nHost: a\r\n\r\n' * 3,
        b'POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n'
        b'Content-Type: application/x-larql-ffn\r\n'
        b'Content-Length: 32\r\n\r\n' + u32(5, 1, 1, 8092) +
        f32(1, -2, 0.5, 3) +
        b'GET /v1/stats HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n',
        b'POST /v1/walk-ffn HTTP/1.1\r\nHost: a\r\n'
        b'Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n'
        b'4;ext=1\r\nabcd\r\n10\r\n0123456789abcdef\r\n0\r\n'
        b'X-Trailer: t\r\n\r\n'
        b'POST /v1/walk-ffn-q8k HTTP/1.1\r\nHost: a\r\n'
        b'Content-Length: 4\r\n\r\n\0\0\0\0',
        b'POST http://shard:8080/v1/walk-ffn?x=1 HTTP/1.0\r\n'
        b'Connection: keep-alive\r\nContent-Length: 3\r\n\r\nabc',
        b'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n'
        b'\r\n1;' + b'x' * 1030 + b'\r\na\r\n0\r\n\r\n',
        b'\r\n\r\nDELETE /x HTTP/1.1\r\nHost: [::1]:80\r\n'
        b'Authorization: Bearer k3y\r\nAccept: a\r\nAccept: b\r\n\r\n',
    ]
    reqs = [r for r in dict.fromkeys(reqs) if len(r) <= 16000]
    # whole, the parser copying, 8K head: every request first
    out = [bytes([0, 0, 0, 0]) + r for r in reqs]
    # then split at random points, with another body mode, head buffer,
    # body limit (as many as --max leaves room for)
    for r in reqs:
        flags = rng.choice([0x01, 0x02, 0x03, 0x41, 0x84, 0xd5, 0x2c])
        out.append(bytes([flags, rng.randrange(1, 64),
                          rng.randrange(256), rng.randrange(256)]) + r)
    return out


def json_seeds():
    bodies = []
    for lit in literals('tests/wire/test_wire_json.c',
                        'tests/shard/test_shard_json.c',
                        'tests/shard/test_shard_json_lenient.c'):
        s = lit.lstrip(b' \t\r\n')
        if s[:1] in (b'{', b'[') or b'residual' in lit:
            bodies.append(lit)
    bodies += [
        b'{"residual":[1,-2,0.5,3],"layer":5,"seq_len":1,'
        b'"full_output":true}',
        b'{"residual":[1,-2,0.5,3,0.25,-1.5,100,-0.001],"layers":[1,2],'
        b'"seq_len":2,"full_output":true,"top_k":8092}',
        b'{"residual":[1e-7,1.5e300,-0.0,4.9e-324],"layer":0}',
        b'{"residual":[1,2,3,4],"layers":[0,1,2],"moe_layer":true,'
        b'"full_output":true}',
        b'{"\\u0072esidual":[1],"layer":null,"layers":null,'
        b'"x":{"a":[true,false,null,"\\ud83d\\ude00"]}}',
    ]
    out = []
    for b in dict.fromkeys(bodies):
        # [0] loaded, owns all (2), fit hidden (4)  [1-2] hidden 4
        # [3] num_layers 64 [4] first 0 [5] last 63 [6] latency
        out.append(bytes([0x06, 4, 0, 64, 0, 63, 22]) + b)
        out.append(bytes([0x00, 4, 0, 8, 1, 2, 5]) + b)
    return out


def conf_seeds():
    out = []
    for name in sorted(os.listdir(os.path.join(ROOT, 'configs'))):
        if name.endswith('.conf'):
            out.append(open(os.path.join(ROOT, 'configs', name),
                            'rb').read())
    for lit in literals('tests/conf/test_conf.c',
                        'tests/conf/test_conf_hostile.c',
                        'tests/conf/test_conf_eal.c'):
        if b'[' in lit and b'=' in lit and b'\n' in lit:
            out.append(lit)
    return list(dict.fromkeys(out))

def _pick(sel, d):
    """fuzz_tcp.c's seq/ack selector: sel u8, delta i16."""
    return struct.pack('<Bh', sel, d)


def _seg(peer, flags, seq, ack, win=65535, opts=b'', mask=0, ln=0):
    """A fuzz-tcp segment step (op % 8 < 4) from peer 0..3."""
    return (bytes([(peer << 3) | 0, flags]) + seq + ack +
            struct.pack('<HB', win, mask) + opts + struct.pack('<H', ln))


def tcp_seeds():
    """Scripted conversations for fuzz-tcp (the op bytes of fuzz_tcp.c):
    passive handshakes with and without options, data both ways, FIN
    from either side, an active open, RST, time passing."""
    syn_opts = struct.pack('>H', 1460) + bytes([7, 0, 0])  # mss, ws, ts
    rel_isn = _pick(1, -1)      # the peer's ISN
    rel_ack = _pick(0, 0)       # at the stack's ACK (its rcv_nxt)
    rel_hi = _pick(0, 0)        # at the stack's highest sequence
    ts = bytes([0, 0])
    hs = (_seg(0, 0x02, rel_isn, _pick(0, 0), opts=syn_opts, mask=0x0f) +
          _seg(0, 0x10, rel_ack, rel_hi, opts=ts, mask=0x08))
    hs_plain = (_seg(0, 0x02, rel_isn, _pick(0, 0)) +
                _seg(0, 0x10, rel_ack, rel_hi))
    data = _seg(0, 0x18, rel_ack, rel_hi, opts=ts, mask=0x08, ln=700)
    data_plain = _seg(0, 0x18, rel_ack, rel_hi, ln=1400)
    fin = _seg(0, 0x11, rel_ack, rel_hi, opts=ts, mask=0x08)
    ack = _seg(0, 0x10, rel_ack, rel_hi, opts=ts, mask=0x08)
    rst = _seg(0, 0x04, rel_ack, rel_hi)
    tick = lambda us: bytes([4]) + struct.pack('<H', us)
    app = lambda slot, act: bytes([(slot << 3) | 5, act])
    ooo = _seg(0, 0x18, _pick(0, 1400), rel_hi, ln=500)
    sack = _seg(0, 0x10, rel_ack, _pick(1, 0),
                opts=bytes([2, 0, 1, 0, 4]), mask=0x10)
    scripts = [
        hs, hs + data + ack, hs + data + fin + ack,
        hs + data + app(0, 0) + tick(50000) + ack + fin + tick(60000),
        hs + app(0, 1) + app(0, 3) + tick(1000) + sack + ack + app(0, 5),
        hs_plain + data_plain + data_plain + ooo + data_plain + fin,
        hs + ooo + data + rst, hs + app(0, 6) + ack,
        hs + data + tick(65535) + tick(65535) + tick(65535) + ack,
        hs + app(0, 8) + data + data + app(0, 0x77) + ack + fin,
        hs + bytes([7]) + data + tick(40000) + bytes([7]) + ack,
        hs + bytes([15]) + ack + bytes([23]) + hs,
    ]
    # active open: peer 3 answers our SYN with SYN-ACK
    synack = _seg(3, 0x12, rel_isn, rel_hi, opts=syn_opts, mask=0x0f)
    act = [synack + _seg(3, 0x18, rel_ack, rel_hi, opts=ts, mask=0x08,
                         ln=300) + _seg(3, 0x11, rel_ack, rel_hi),
           synack + tick(2000) + _seg(3, 0x11, rel_ack, rel_hi),
           tick(65535) + tick(65535) + synack]
    # control bytes: c[0] config, c[1] mtu, c[2] limits, c[3] clock,
    # c[4..7] the application's seed
    heads = [bytes([0, 0, 0x47, 1, 1, 2, 3, 4]),
             bytes([0x21, 0, 0x2f, 2, 9, 8, 7, 6]),
             bytes([0x1e, 10, 0x07, 0, 5, 5, 5, 5]),
             bytes([0x81, 0, 0xff, 3, 0x10, 0x20, 0x30, 0x40])]
    out = []
    for h in heads:
        for sc in scripts:
            out.append(h + sc)
        for sc in act:
            out.append(bytes([h[0] | 0x40]) + h[1:] + sc)
    return out


def vindex_seeds():
    """Small valid models in every layout (tools/mkvindex, gcc build),
    packed by tools/fuzz/vindex-pack.py, with owned ranges and the mmap
    placement; and some with a file dropped or a payload cut short."""
    import shutil
    import subprocess
    import tempfile
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    vp = __import__('vindex-pack')
    mk = None
    for b in ('build-dev', 'build'):
        p = os.path.join(ROOT, b, 'tools', 'mkvindex', 'mkvindex')
        if os.access(p, os.X_OK):
            mk = p
            break
    if mk is None:
        print('vindex: no mkvindex (ninja -C build-dev '
              'tools/mkvindex/mkvindex): skipped', file=sys.stderr)
        return []
    models = [
        ['--hidden', '8', '--intermediate', '16'],
        ['--hidden', '8', '--widths', '4,12,8', '--layout', 'interleaved'],
        ['--hidden', '4', '--intermediate', '8', '--layout', 'dense',
         '--dtype', 'f16'],
        ['--hidden', '4', '--intermediate', '8', '--layout', 'dense'],
        ['--hidden', '8', '--intermediate', '8', '--dtype', 'f16',
         '--family', 'gemma3'],
        ['--example'],
        ['--hidden', '32', '--intermediate', '16', '--layers', '1',
         '--quant', 'q4k'],
        ['--hidden', '16', '--widths', '8,24', '--quant', 'q4k',
         '--down-q4k'],
        ['--hidden', '16', '--intermediate', '8', '--layers', '1',
         '--quant', 'q4k', '--q6k-layout', 'ggml'],
    ]
    ctls = [bytes.fromhex(c) for c in
            ('00ffff', '20ffff', '100101', '080000')]
    out = []
    tmp = tempfile.mkdtemp(prefix='fuzz-vindex-seed.')
    try:
        for i, args in enumerate(models):
            d = os.path.join(tmp, 'm%d' % i)
            subprocess.run([mk] + args + [d], check=True,
                           stdout=subprocess.DEVNULL)
            files = sorted(os.listdir(d))
            for c in ctls:
                if 'ggml' in args and c[0] & 8 == 0:
                    c = bytes([c[0] | 8]) + c[1:]
                out.append(vp.pack(d, c))
            for drop in files:      # each file missing in turn
                out.append(vp.pack(d, ctls[0],
                                   [f for f in files if f != drop]))
            for f in files:         # a payload cut short
                if f.endswith('.bin'):
                    p = os.path.join(d, f)
                    data = open(p, 'rb').read()
                    open(p, 'wb').write(data[:len(data) * 3 // 4])
                    out.append(vp.pack(d, ctls[0]))
                    open(p, 'wb').write(data)
    finally:
        shutil.rmtree(tmp)
    return out


def moe_vindex_seeds(mk=None):
    """Hybrid-MoE vindexes (spec/moe.md §5, §6) for fuzz-moe-vindex:
    §6's example (Q4_K and F32) and small mkvindex models (Q4_K at H 8
    and 256, F32 with one layer file), packed with their layers/
    directory, under each ownership (none, a range text, a units file,
    all), copy and mmap placement, the mix with a pair not held; and
    the first with a file dropped or a layer file cut short."""
    import shutil
    import subprocess
    import tempfile
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    vp = __import__('vindex-pack')
    for b in ('build-dev', 'build'):
        p = os.path.join(ROOT, b, 'tools', 'mkvindex', 'mkvindex')
        if mk is None and os.access(p, os.X_OK):
            mk = p
    if mk is None:
        print('moe-vindex: no mkvindex: skipped', file=sys.stderr)
        return []
    units = [b'{"layer_experts": {"0": [[0,0]], "1": [[1,3],[0,0]]}}\n',
             b'{"layer_experts": {"1": [[0,1]]}, "other": 1}\n']
    models = [  # mkvindex arguments, (ctl, units.json or None)...
        (['--example-moe'], [('00ffff', None), ('0c0000', None),
                             ('010001', b' 1 - 2 \n')]),
        (['--example-moe-f32'], [('000000', None), ('050102', None),
                                 ('120000', units[0])]),
        (['--experts', '4', '--expert-width', '16', '--hidden', '8',
          '--layers', '2', '--no-dense', '--seed', '3'],
         [('120000', units[0]), ('160000', units[1]), ('1b0000', None),
          ('090002', None)]),
        (['--experts', '1', '--expert-width', '4', '--hidden', '256',
          '--layers', '1', '--no-dense'],
         [('030000', None), ('0f0000', None), ('010000', b'0-0')]),
        (['--experts', '3', '--expert-width', '5', '--hidden', '8',
          '--layers', '2', '--expert-layers', '1-1', '--expert-quant',
          'f32', '--no-dense'],
         [('000000', None), ('120000', units[1]), ('1c0000', None)]),
    ]
    out = []
    tmp = tempfile.mkdtemp(prefix='fuzz-moe-vindex-seed.')
    try:
        for i, (args, ctls) in enumerate(models):
            d = os.path.join(tmp, 'm%d' % i)
            subprocess.run([mk] + args + [d], check=True,
                           stdout=subprocess.DEVNULL)
            for f in ('embeddings.bin', 'tokenizer.json'):  # unread
                if os.path.exists(os.path.join(d, f)):
                    os.remove(os.path.join(d, f))
            for c, u in ctls:
                up = os.path.join(d, 'units.json')
                if u is not None:
                    open(up, 'wb').write(u)
                out.append(vp.pack(d, bytes.fromhex(c), subdirs=True))
                if u is not None:
                    os.remove(up)
        d = os.path.join(tmp, 'm0')
        files = vp._files(d, True)
        for drop in files:          # each file missing in turn
            out.append(vp.pack(d, b'\x00\xff\xff',
                               [f for f in files if f != drop], True))
        p = os.path.join(d, 'layers', 'layer_00.weights')
        data = open(p, 'rb').read()
        open(p, 'wb').write(data[:len(data) * 3 // 4])
        out.append(vp.pack(d, b'\x00\xff\xff', subdirs=True))
    finally:
        shutil.rmtree(tmp)
    return out


# fuzz_front.c's layouts (index: bits 0-2 of its control byte [1])
FRONT_LAYOUTS = [
    [(0, 7)], [(0, 3), (4, 7)], [(0, 0), (1, 5), (6, 7)],
    [(0, 1), (2, 3), (4, 5), (6, 7)], [(0, 0), (1, 1), (2, 2), (3, 3)],
    [(0, 0), (1, 63)], [(0, 4), (5, 5), (6, 200)],
    [(0, 2), (3, 3), (4, 4), (5, 9)],
]


def _front_owner(lay, layer):
    for r, (a, b) in enumerate(lay):
        if a <= layer <= b:
            return r
    return -1


def _front_answer(fmt, layers, seq, hidden, lat):
    """A shard's right answer (spec/wire.md §5.2) to a sub of layers."""
    vals = [((i * 7) % 11 - 5) * 0.375 for i in range(seq * hidden)]
    if fmt == 0:
        pl = f32(*vals)
    elif fmt == 1:
        pl = f16(*vals)
    else:
        pl = b''.join(i8_row(vals[r * hidden:(r + 1) * hidden])
                      for r in range(seq))
    if len(layers) == 1:
        return u32(layers[0], seq) + f32(lat) + pl
    out = u32(0xffffffff, len(layers)) + f32(lat)
    for la in layers:
        out += u32(la, seq, seq * hidden) + pl
    return out


def front_seeds():
    """fuzz-front: binary requests split over fuzz_front.c's layouts with
    the shards' right answers (whole, in pieces, wider than asked, and
    rebuilt by the harness's repair bit), JSON bodies cut by owner, and
    JSON answers to merge (see the top of fuzz_front.c)."""
    out = []
    hidden = 4
    reqs = [  # (layers, seq_len, batch form)
        ([5], 1, False), ([5], 2, False), ([1, 5], 1, True),
        ([0, 4, 1, 7, 4], 1, True), ([6, 2, 2, 0], 2, True),
        ([3, 3], 1, True), ([], 1, True), ([9], 1, False),
    ]
    for li, lay in enumerate(FRONT_LAYOUTS):
        for ri, (layers, seq, batch) in enumerate(reqs):
            if (li + ri) % 2 and len(layers) < 4:
                continue
            fmt_in = (li + ri) % 3
            x = [0.5 * (i % 9) - 2 for i in range(seq * hidden)]
            if fmt_in == 0:
                payload = f32(*x)
            elif fmt_in == 1:
                payload = f16(*x)
            else:
                payload = b''.join(i8_row(x[r * hidden:(r + 1) * hidden])
                                   for r in range(seq))
            if batch:
                req = u32(0xffffffff, len(layers), *layers) + \
                    u32(seq, 1, 8092) + payload
            else:
                req = u32(layers[0], seq, 1, 8092) + payload
            if any(_front_owner(lay, la) < 0 for la in layers):
                continue
            subs = []
            for la in layers:
                r = _front_owner(lay, la)
                for sb in subs:
                    if sb[0] == r:
                        sb[1].append(la)
                        break
                else:
                    subs.append((r, [la]))
            # answers: right ones as f32, f16, i8; in pieces; repaired
            for mode in range(4):
                tail = b''
                for si, (r, ls) in enumerate(subs):
                    afmt = (mode + si) % 3 if mode < 3 else 0
                    body = _front_answer(afmt, ls, seq, hidden, 1.5)
                    pieces = (si + mode) % 4
                    if mode == 3:
                        tail += bytes([afmt | 4 | pieces << 4, 7 + si,
                                       0, 0])
                        tail += body + b'\0'  # and the byte to spare
                    else:
                        tail += bytes([afmt | pieces << 4, 3 * si + mode]) \
                            + struct.pack('<H', len(body)) + body
                c = li | (fmt_in << 3) | 0x20
                out.append(bytes([0, c, hidden, 0, 0, 22]) +
                           struct.pack('<H', len(req)) + req + tail)
    # an answer Content-Type from the input (format 3)
    ct = b' Application/X-Larql-Ffn-F16 ; q=1'
    req = u32(5, 1, 1, 8092) + f32(1, 2, 3, 4)
    body = _front_answer(1, [5], 1, 4, 2.0)
    out.append(bytes([0, 0x20, 4, 0, 0, 9]) + struct.pack('<H', len(req)) +
               req + bytes([3, 1]) + struct.pack('<H', len(body)) +
               bytes([len(ct)]) + ct + body)

    # JSON sub-request bodies: the layers given, or the request's own by
    # owner (bit 0, layout in bits 1-3)
    bodies = [
        b'{"residual":[1,-2,0.5,3],"layer":5,"seq_len":1}',
        b'{"residual":[1,-2,0.5,3,0.25,-1.5,100,-0.001],"layers":[1,2,6],'
        b'"seq_len":2,"full_output":true,"top_k":8092}',
        b' { "layers" : [ 0 , 4 , 1 ] , "residual" : [ 1e-7 , 2 ] ,'
        b' "x" : { "layer" : [ true , null , "\\ud83d\\ude00" ] } } ',
        b'{"lay\\u0065r":3,"residual":[1],"moe_layer":true,'
        b'"l\\u0061yers":[7,0],"extra":"\\"}"}',
        b'{"residual":[],"layers":[],"layer":null}',
    ]
    for b in bodies:
        out.append(bytes([1, 0x00, 0]) + b)
        out.append(bytes([1, 0x10, 0, 9]) + b)
        out.append(bytes([1, 0x30, 0, 1, 0xf0, 0xff, 0xff, 0xff, 0xff,
                          3]) + b)
        for li in (1, 3, 6):
            out.append(bytes([1, 1 | li << 1, 0]) + b)

    # JSON answers to merge, NUL-separated
    ans = [
        b'{"latency_ms":1.25,"results":[{"layer":3,"output":[1.0,2.5],'
        b'"seq_len":1},{"layer":1,"output":[0.0,-1.0],"seq_len":1}],'
        b'"seq_len":1}',
        b'{"latency_ms":0.5,"layer":2,"output":[1e-7,3.0],"seq_len":1}',
        b' {"results":[{"features":[1,2],"layer":0,"scores":[0.5,0.25]}],'
        b'"latency_ms":12} ',
        b'{"r\\u0065sults":[],"latency_ms":1e2,"results":[{"layer":'
        b'18446744073709551615},{"layer":-1},{"layer":1.0},7,"s"]}',
        b'{"layer":0,"results":{"a":1},"latency_ms":0.05}',
    ]
    for k in range(1, len(ans) + 1):
        for c in (0x00, 0x03):
            out.append(bytes([2, c, 0, 5 + k]) + b'\0'.join(ans[:k]))
    out.append(bytes([2, 0x01, 0, 1]) + b'\0'.join(reversed(ans)))
    out.append(bytes([2, 0x80, 0, 0]))
    out.append(bytes([2, 0x00, 0, 0]) + b'{"results":[]}\0[]')
    return out


# ---------------------------------------------------------------------------


def write(outdir, harness, seeds, limit):
    d = os.path.join(outdir, harness)
    os.makedirs(d, exist_ok=True)
    n = 0
    for s in seeds[:limit]:
        name = hashlib.sha1(s).hexdigest()
        p = os.path.join(d, name)
        if not os.path.exists(p):
            with open(p, 'wb') as f:
                f.write(s)
            n += 1
    print('%-5s %4d seeds (%d new) in %s' % (harness, min(len(seeds),
          limit), n, os.path.relpath(d, ROOT)))


def main():
    import random
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', default=os.path.join(ROOT, 'tests', 'fuzz',
                                                  'corpus'))
    ap.add_argument('--max', type=int, default=300,
                    help='seeds per harness (default 300)')
    a = ap.parse_args()
    rng = random.Random(15)     # issue 15: the same seeds on every run
    write(a.out, 'http', http_seeds(rng), a.max)
    write(a.out, 'wire', wire_seeds(), a.max)
    write(a.out, 'json', json_seeds(), a.max)
    write(a.out, 'q8k', q8k_seeds(), a.max)
    write(a.out, 'conf', conf_seeds(), a.max)
    write(a.out, 'tcp', tcp_seeds(), a.max)
    write(a.out, 'vindex', vindex_seeds(), a.max)
    write(a.out, 'moe-vindex', moe_vindex_seeds(), a.max)
    write(a.out, 'front', front_seeds(), a.max)
    return 0


if __name__ == '__main__':
    sys.exit(main())
