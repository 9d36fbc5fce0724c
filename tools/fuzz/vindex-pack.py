#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Pack a vindex directory into one fuzz-vindex input, or unpack one.

The container (tests/fuzz/fuzz_vindex.c says the same): 3 control bytes
(c[0] layout/q6k_ggml/placement, c[1] first_layer, c[2] last_layer, 0xff
for the default), then per file: kind u8 (bit 0 clear: the bytes follow),
name length u8, name, length u32 LE, the bytes. Kind bit 0 set: no bytes
follow; the harness writes `length` % 1 MiB bytes of a pattern seeded by
kind instead.

With --subdirs the files of DIR's subdirectories go in too, named
"SUB/NAME" (fuzz-moe-vindex reads "layers/layer_LL.weights" so).

usage: tools/fuzz/vindex-pack.py [--ctl HEX] [--subdirs] DIR OUT  pack
       tools/fuzz/vindex-pack.py --unpack INPUT DIR       unpack
"""

import argparse
import os
import struct
import sys


def _files(d, subdirs):
    """Names of d's files (sorted); with subdirs, "SUB/NAME" too."""
    names = []
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        if os.path.isfile(p):
            names.append(name)
        elif subdirs and os.path.isdir(p):
            names += [name + '/' + n for n in sorted(os.listdir(p))
                      if os.path.isfile(os.path.join(p, n))]
    return names


def pack(d, ctl=b'\x00\xff\xff', only=None, subdirs=False):
    """Bytes of the fuzz input for directory d (files in sorted order)."""
    out = bytearray(ctl)
    for name in _files(d, subdirs):
        if only is not None and name not in only:
            continue
        p = os.path.join(d, name)
        data = open(p, 'rb').read()
        nb = name.encode()
        out += struct.pack('<BB', 0, len(nb)) + nb
        out += struct.pack('<I', len(data)) + data
    return bytes(out)


def unpack(b, d):
    """Write the files of input b into d (as the harness does)."""
    os.makedirs(d, exist_ok=True)
    print('ctl %s' % b[:3].hex())
    i = 3
    while i < len(b):
        kind = b[i]
        nlen = b[i + 1] if i + 1 < len(b) else 0
        name = b[i + 2:i + 2 + nlen]
        i += 2 + nlen
        ln = int.from_bytes(b[i:i + 4].ljust(4, b'\0'), 'little')
        i += 4
        if kind & 1:
            ln %= 1 << 20
            data = None
        else:
            data = b[i:i + ln]
            i += ln
        print('%s kind %d %d bytes' % (name, kind, ln if data is None
                                       else len(data)))
        # a file of d, or of one subdirectory ("layers/NAME")
        if data is not None and name and name.count(b'/') <= 1 and \
                not name.startswith((b'.', b'/')) and \
                not name.endswith(b'/') and b'..' not in name:
            p = os.path.join(d, name.decode('latin-1'))
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, 'wb') as f:
                f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--ctl', default='00ffff',
                    help='the 3 control bytes in hex (default 00ffff)')
    ap.add_argument('--unpack', action='store_true')
    ap.add_argument('--subdirs', action='store_true',
                    help='pack the files of subdirectories too')
    ap.add_argument('src')
    ap.add_argument('dst')
    a = ap.parse_args()
    if a.unpack:
        unpack(open(a.src, 'rb').read(), a.dst)
    else:
        with open(a.dst, 'wb') as f:
            f.write(pack(a.src, bytes.fromhex(a.ctl),
                         subdirs=a.subdirs))
    return 0


if __name__ == '__main__':
    sys.exit(main())
