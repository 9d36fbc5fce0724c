# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Client side of the appliance e2e tests: raw HTTP/1.1 over kernel
sockets (so a test controls every byte: pipelining, partial writes,
malformed heads) and the pyref oracle (tests/e2e/pyref, an independent
numpy reading of spec/wire.md and spec/vindex.md).

Checks record failures instead of stopping at the first one, so one run
shows everything that differs; Checker.done() exits non-zero if any did.
"""

import json
import os
import socket
import struct
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pyref"))
import ffn  # noqa: E402
import vindex  # noqa: E402
import wire  # noqa: E402

# f32 answers against pyref's float64 computation: the appliance sums in
# float32 in its own order, so a row may differ by a few ulps of its
# largest value per accumulated term. With hidden 256 and intermediate
# 512 the worst measured (llama, AVX-512 kernels, 50 answers) is 1.1e-6
# of the row's largest magnitude; 1e-5 of it (and at least 1e-6
# absolute) leaves a 9x margin while still catching any wrong weight,
# activation or row mix-up (those are O(1) off).
F32_RTOL = 1e-5
F32_ATOL = 1e-6


class Resp:
    def __init__(self, status, reason, headers, body):
        self.status = status
        self.reason = reason
        self.headers = headers		# [(name lower, value)]
        self.body = body

    def header(self, name):
        name = name.lower()
        for k, v in self.headers:
            if k == name:
                return v
        return None

    def __repr__(self):
        b = self.body if len(self.body) <= 200 else self.body[:200] + b"..."
        return "<%d %s %r>" % (self.status, self.reason, b)


class Closed(Exception):
    pass


class Http:
    """One TCP connection; requests and responses as bytes."""

    def __init__(self, host, port, timeout=10.0, rcvbuf=None):
        """rcvbuf: SO_RCVBUF, set before the connect so the window
        (and its scale) offered in the SYN follows it."""
        self.host = host
        self.port = port
        if rcvbuf is None:
            self.s = socket.create_connection((host, port), timeout=timeout)
        else:
            self.s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            self.s.settimeout(timeout)
            self.s.connect((host, port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self):
        self.s.close()

    def send(self, data):
        self.s.sendall(data)

    def _fill(self):
        d = self.s.recv(1 << 20)
        if not d:
            raise Closed("connection closed by the appliance")
        self.buf += d

    def read_response(self, head_request=False):
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        ver, status, reason = (lines[0].decode("latin-1").split(" ", 2)
                               + [""])[:3]
        if not ver.startswith("HTTP/1."):
            raise ValueError("bad status line %r" % lines[0])
        headers = []
        for ln in lines[1:]:
            k, _, v = ln.decode("latin-1").partition(":")
            headers.append((k.strip().lower(), v.strip()))
        r = Resp(int(status), reason, headers, b"")
        if r.status == 100 or head_request:
            return r
        n = r.header("content-length")
        if n is None:
            raise ValueError("response %d without Content-Length" % r.status)
        n = int(n)
        while len(self.buf) < n:
            self._fill()
        r.body, self.buf = self.buf[:n], self.buf[n:]
        return r

    def at_eof(self, wait=2.0):
        """True if the appliance closed the connection (nothing more
        to read)."""
        self.s.settimeout(wait)
        try:
            return self.s.recv(1) == b"" and not self.buf
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True

    def request(self, method, path, body=b"", headers=(), raw=False):
        self.send(build(method, path, body, headers, raw))
        return self.read_response()


def build(method, path, body=b"", headers=(), raw=False):
    """A request's bytes. headers: [(name, value)]; Host and
    Content-Length are added unless raw."""
    h = "%s %s HTTP/1.1\r\n" % (method, path)
    if not raw:
        h += "Host: fsa\r\n"
    for k, v in headers:
        h += "%s: %s\r\n" % (k, v)
    if not raw and body:
        h += "Content-Length: %d\r\n" % len(body)
    return h.encode("utf-8") + b"\r\n" + body


def err_body(msg):
    """spec/wire.md §4: {"error":"MESSAGE"}, UTF-8 as written."""
    return b'{"error":"' + msg.encode("utf-8") + b'"}'


class Checker:
    def __init__(self, name):
        self.name = name
        self.fails = []
        self.n = 0

    def check(self, cond, what, detail=""):
        self.n += 1
        if not cond:
            self.fails.append(what)
            print("FAIL %s: %s" % (self.name, what))
            if detail:
                print("     " + str(detail).replace("\n", "\n     "))
        return cond

    def eq(self, got, want, what):
        return self.check(got == want, what,
                          "got  %r\nwant %r" % (got, want))

    def run(self, fn, *args):
        """Run one group of checks; an exception fails it, loudly."""
        t0 = time.time()
        try:
            fn(*args)
        except Exception:
            self.n += 1
            self.fails.append(fn.__name__ + " raised")
            print("FAIL %s: %s raised:" % (self.name, fn.__name__))
            traceback.print_exc(file=sys.stdout)
        print("  %-28s %5.1f s" % (fn.__name__, time.time() - t0),
              flush=True)

    def done(self):
        if self.fails:
            print("%s: %d of %d checks FAILED" % (self.name, len(self.fails),
                                                  self.n))
            sys.exit(1)
        print("%s: all %d checks passed" % (self.name, self.n))


class Oracle:
    """pyref's view of the model the appliance serves."""

    def __init__(self, model_dir, owned):
        self.vi = vindex.load(model_dir, range(owned[0], owned[1] + 1))
        self.owned = owned
        self.hidden = self.vi.hidden
        # float64 copies once (compute64 converts whatever it is given;
        # on float64 input that is free).
        self.w64 = {L: tuple(np.asarray(a, dtype=np.float64) for a in w)
                    for L, w in self.vi.weights.items()}

    def y64(self, layer, x):
        G, U, D = self.w64[layer]
        return ffn.compute64(G, U, D, x, self.vi.activation)

    def close(self, got, layer, x):
        """(ok, detail): f32 answer got[S, H] vs float64 pyref on x."""
        want = self.y64(layer, x)
        got = np.asarray(got, dtype=np.float64).reshape(want.shape)
        if not np.all(np.isfinite(got)):
            return False, "non-finite values in the answer"
        scale = np.maximum(np.abs(want).max(axis=1, keepdims=True), 0.0)
        err = np.abs(got - want)
        bound = F32_RTOL * scale + F32_ATOL
        if np.all(err <= bound):
            return True, ""
        r, c = np.unravel_index(np.argmax(err - bound), err.shape)
        return False, ("layer %d row %d col %d: got %r want %r (|err| %.3g "
                       "> bound %.3g)" % (layer, r, c, got[r, c], want[r, c],
                                          err[r, c], bound[r, 0]))

    def x(self, seq_len, seed):
        rng = np.random.default_rng(seed)
        return rng.standard_normal((seq_len, self.hidden)).astype(np.float32)


def json_obj(r):
    return json.loads(r.body.decode("utf-8"))


def f32_payload_of(body):
    """Results of an f32 binary response: [(hdr bytes, payload bytes)]
    with the frame's latency left out (it differs between calls)."""
    first, = struct.unpack_from("<I", body, 0)
    if first != wire.BATCH:
        return [(body[0:8], body[12:])]
    n, = struct.unpack_from("<I", body, 4)
    off = 12
    out = []
    for _ in range(n):
        _, seq_len, nv = struct.unpack_from("<III", body, off)
        out.append((body[off:off + 12], body[off + 12:off + 12 + 4 * nv]))
        off += 12 + 4 * nv
    return out


def prom_problems(text):
    """What breaks the Prometheus text format 0.0.4 in text (a /metrics
    body), as a list of strings (empty: none): every sample's family (its
    name, or less _bucket/_sum/_count for a histogram or summary) has a
    # TYPE before it; a family's lines form one group (it never comes
    back once another began); one TYPE and one HELP per family; no
    name with the same label set twice; every sample has a number."""
    probs = []
    fams = {}		# name -> {"type": str or None, "help": bool}
    cur = None
    seen = set()
    for i, ln in enumerate(text.split("\n"), 1):
        if not ln:
            continue
        if ln.startswith("#"):
            parts = ln.split(None, 3)
            if len(parts) < 3 or parts[1] not in ("HELP", "TYPE"):
                continue
            kw, name = parts[1], parts[2]
            fam = name
        else:
            name = ln.split("{", 1)[0].split(" ", 1)[0]
            kw = None
            fam = name
            for suf in ("_bucket", "_sum", "_count"):
                base = name[:-len(suf)]
                if (name.endswith(suf) and base in fams and
                        fams[base]["type"] in ("histogram", "summary")):
                    fam = base
            try:
                float(ln.rsplit(" ", 1)[1])
            except (IndexError, ValueError):
                probs.append("line %d: no value: %s" % (i, ln))
        if fam in fams and fam != cur:
            probs.append("line %d: family %s again after %s began" %
                         (i, fam, cur))
        f = fams.setdefault(fam, {"type": None, "help": False})
        cur = fam
        if kw == "TYPE":
            if f["type"] is not None:
                probs.append("line %d: second TYPE of %s" % (i, fam))
            f["type"] = parts[3].strip() if len(parts) > 3 else ""
        elif kw == "HELP":
            if f["help"]:
                probs.append("line %d: second HELP of %s" % (i, fam))
            f["help"] = True
        else:
            if f["type"] is None or not f["help"]:
                probs.append("line %d: sample of %s without a %s "
                             "before it" % (i, fam, "HELP" if f["type"]
                                            else "TYPE"))
            key = ln.rsplit(" ", 1)[0]
            if key in seen:
                probs.append("line %d: %s twice" % (i, key))
            seen.add(key)
    return probs
