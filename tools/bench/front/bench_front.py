#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""The client of bench-front.sh (issue 19's front benchmark).

    bench_front.py latency    --front HP --ref HP --single L --span L1,L2 ...
    bench_front.py throughput --front HP --shards HP=A-B,HP=A-B ...
    bench_front.py bytes      --front HP --ref HP --layers N ...

Plain HTTP/1.1 on keep-alive sockets (no http.client: its per-request
cost would be measured with the servers'). Every request is a binary
walk-ffn (spec/wire.md §3) of seq_len 1; the hidden size comes from the
server's /v1/stats. One process, meant to be pinned to one core.
Prints "RESULT key=value ..." lines for bench-front.sh and checks every
answer's status (a non-200 stops it with exit 1).
"""

import argparse
import json
import os
import selectors
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../../../tests/e2e/pyref"))
import numpy as np  # noqa: E402
import wire  # noqa: E402


def hp(s):
    h, _, p = s.rpartition(":")
    return h, int(p)


class Conn:
    """One keep-alive connection; request() returns (status, head, body)."""

    def __init__(self, addr):
        self.addr = addr
        self.s = socket.create_connection(addr, timeout=30)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def raw(self, method, path, body=b"", headers=()):
        h = ["%s %s HTTP/1.1" % (method, path),
             "Host: %s:%d" % self.addr]
        h += list(headers)
        if body or method == "POST":
            h.append("Content-Length: %d" % len(body))
        return ("\r\n".join(h) + "\r\n\r\n").encode() + body

    def send(self, data):
        self.s.sendall(data)

    def recv(self):
        while True:
            i = self.buf.find(b"\r\n\r\n")
            if i >= 0:
                break
            d = self.s.recv(262144)
            if not d:
                raise IOError("%s:%d closed the connection" % self.addr)
            self.buf += d
        head = self.buf[:i + 4]
        n = 0
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                n = int(v)
        while len(self.buf) < i + 4 + n:
            d = self.s.recv(262144)
            if not d:
                raise IOError("%s:%d closed the connection" % self.addr)
            self.buf += d
        body = self.buf[i + 4:i + 4 + n]
        self.buf = self.buf[i + 4 + n:]
        status = int(head.split(b" ", 2)[1])
        return status, head, body

    def request(self, data):
        self.send(data)
        return self.recv()

    def get_json(self, path):
        st, _, body = self.request(self.raw("GET", path))
        if st != 200:
            raise IOError("GET %s on %s:%d: %d %r" % (path, *self.addr, st,
                                                      body[:200]))
        return json.loads(body)


def header(body):
    """The header dict of an answer's head bytes."""
    out = {}
    for line in body.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if v:
            out[k.strip().lower().decode()] = v.strip().decode()
    return out


def walk(conn, layers, x, fmt="f32", accept=None, ctype=None, batch=None):
    body, ct = wire.encode_request(layers, x, fmt, batch=batch)
    hs = ["Content-Type: %s" % (ctype or ct)]
    if accept is not None:
        hs.append("Accept: %s" % accept)
    return conn.raw("POST", "/v1/walk-ffn", body, hs), len(body)


def strip_latency(body):
    """An answer frame without its latency_ms field (§5.2: offset 8)."""
    return body[:8] + body[12:]


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def x_of(hidden, seed=5):
    r = np.random.RandomState(seed)
    return r.standard_normal((1, hidden)).astype(np.float32)


# ---- (a) latency -----------------------------------------------------------

def cmd_latency(a):
    ref, front = Conn(hp(a.ref)), Conn(hp(a.front))
    hidden = ref.get_json("/v1/stats")["hidden_size"]
    x = x_of(hidden)
    acc = wire.ACCEPT[a.wire]
    shapes = [("single", [a.single], False),
              ("span", [int(v) for v in a.span.split(",")], True)]
    if a.k0:
        shapes.append(("k0", [], True))
    for name, layers, batch in shapes:
        req, _ = walk(ref, layers, x, a.wire, acc, batch=batch)
        out = {}
        for tag, c in (("direct", ref), ("front", front)):
            st, head, body = c.request(req)
            if st != 200:
                sys.exit("latency: %s %s answered %d: %r" %
                         (name, tag, st, body[:200]))
            out[tag] = body
        # the same bytes both ways (but latency_ms): the front is
        # measured doing the job, not failing fast
        if strip_latency(out["direct"]) != strip_latency(out["front"]):
            sys.exit("latency: %s: the front's answer differs from the "
                     "whole-model pyref's" % name)
        t = {"direct": [], "front": []}
        order = (("direct", ref), ("front", front))
        for _ in range(a.warmup):
            for _, c in order:
                c.request(req)
        for rnd in range(a.rounds):
            # A/B/A/B: even rounds direct first, odd rounds front first
            for tag, c in (order if rnd % 2 == 0 else order[::-1]):
                v = t[tag]
                for _ in range(a.batch):
                    t0 = time.perf_counter_ns()
                    c.send(req)
                    st, _, _ = c.recv()
                    v.append(time.perf_counter_ns() - t0)
                    if st != 200:
                        sys.exit("latency: %s %s: %d" % (name, tag, st))
        d, f = t["direct"], t["front"]
        if not d:
            continue
        kv = ["shape=%s layers=%s hidden=%d n=%d bytes=%d" %
              (name, ",".join(map(str, layers)) or "-", hidden, len(d),
               len(out["front"]))]
        for tag, v in (("direct", d), ("front", f)):
            kv.append("%s_p50=%.1f %s_p90=%.1f %s_p99=%.1f %s_mean=%.1f "
                      "%s_over1ms=%.2f" %
                      (tag, pct(v, .5) / 1e3, tag, pct(v, .9) / 1e3,
                       tag, pct(v, .99) / 1e3, tag, sum(v) / len(v) / 1e3,
                       tag, 100.0 * sum(1 for t in v if t > 1e6) / len(v)))
        print("RESULT " + " ".join(kv), flush=True)


# ---- (b) throughput --------------------------------------------------------

def run_closed(targets, conns, secs):
    """conns connections, closed loop (one request in flight each) for
    secs seconds; targets: a list of (addr, request bytes), connection i
    sends targets[(i + k) % n] as its k-th request, on a keep-alive
    socket of its own to that address. Returns (answers, seconds)."""
    sel = selectors.DefaultSelector()
    addrs = sorted(set(t[0] for t in targets))
    socks = [{ad: Conn(ad) for ad in addrs} for _ in range(conns)]
    for i in range(conns):
        for ad, c in socks[i].items():
            sel.register(c.s, selectors.EVENT_READ, (i, ad))
    state = [None] * conns

    def send_next(i, k):
        ad, req = targets[(i + k) % len(targets)]
        c = socks[i][ad]
        c.send(req)
        state[i] = (k, c)

    n = 0
    t0 = time.perf_counter()
    t_end = t0
    stop = t0 + secs
    for i in range(conns):
        send_next(i, 0)
    live = conns
    while live:
        ev = sel.select(timeout=10)
        if not ev:
            sys.exit("throughput: no answer in 10 s")
        for key, _ in ev:
            i, ad = key.data
            k, c = state[i]
            if c is None or c.s is not key.fileobj:
                continue
            d = c.s.recv(262144)
            if not d:
                sys.exit("throughput: %s:%d closed a connection" % ad)
            c.buf += d
            got = parse_one(c)
            if got is None:
                continue
            if got != 200:
                sys.exit("throughput: %s:%d answered %d" % (*ad, got))
            n += 1
            now = time.perf_counter()
            if now >= stop:
                state[i] = (k, None)
                live -= 1
                t_end = max(t_end, now)
                continue
            send_next(i, k + 1)
    for i in range(conns):
        for c in socks[i].values():
            c.s.close()
    sel.close()
    return n, t_end - t0


def parse_one(c):
    """One whole answer at the head of c.buf: its status (consumed), or
    None when more bytes are needed."""
    i = c.buf.find(b"\r\n\r\n")
    if i < 0:
        return None
    head = c.buf[:i + 4]
    n = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v)
    if len(c.buf) < i + 4 + n:
        return None
    c.buf = c.buf[i + 4 + n:]
    return int(head.split(b" ", 2)[1])


def cmd_throughput(a):
    front = hp(a.front)
    shards = []
    for s in a.shards.split(","):
        addr, _, rng = s.partition("=")
        lo, _, hi = rng.partition("-")
        shards.append((hp(addr), int(lo), int(hi)))
    c0 = Conn(front)
    hidden = c0.get_json("/v1/stats")["hidden_size"]
    c0.s.close()
    x = x_of(hidden)
    acc = wire.ACCEPT[a.wire]
    # single-layer requests, alternating between the shards: layer lo+j
    # of each shard in turn
    layers = []
    for j in range(4):
        for (_, lo, hi) in shards:
            layers.append(lo + j % (hi - lo + 1))
    tg = {"front": [], "direct": []}
    dummy = Conn(front)
    for L in layers:
        req, _ = walk(dummy, L, x, a.wire, acc)
        owner = [ad for (ad, lo, hi) in shards if lo <= L <= hi][0]
        tg["front"].append((front, req))
        tg["direct"].append((owner, req))
    dummy.s.close()
    for conns in [int(v) for v in a.conns.split(",")]:
        res = {"front": [], "direct": []}
        run_closed(tg["direct"], conns, a.warmup)
        run_closed(tg["front"], conns, a.warmup)
        for rnd in range(a.rounds):
            order = ("direct", "front") if rnd % 2 == 0 else \
                ("front", "direct")
            for tag in order:
                n, dt = run_closed(tg[tag], conns, a.seconds)
                res[tag].append(n / dt)
        print("RESULT conns=%d hidden=%d direct_rps=%.1f front_rps=%.1f "
              "direct_all=%s front_all=%s" %
              (conns, hidden, sum(res["direct"]) / len(res["direct"]),
               sum(res["front"]) / len(res["front"]),
               "/".join("%.0f" % v for v in res["direct"]),
               "/".join("%.0f" % v for v in res["front"])), flush=True)


# ---- (c) bytes per token ---------------------------------------------------

def cmd_bytes(a):
    front, ref = Conn(hp(a.front)), Conn(hp(a.ref))
    st = front.get_json("/v1/stats")
    hidden = st["hidden_size"]
    nl = a.layers or st["layers"]
    x = x_of(hidden)
    rows = []
    # The reference router (§7): the request's bytes as they are,
    # Content-Type rewritten to exactly the base type, no Accept: every
    # answer f32 (and a request body other than f32 would be misread, so
    # a client behind it sends f32).
    req, n = walk(ref, a.layer, x, "f32", None, ctype=wire.CT_F32)
    s, head, body = ref.request(req)
    rows.append(("router (f32 only)", n, s, head, body))
    for fmt in ("f32", "f16", "i8"):
        req, n = walk(front, a.layer, x, fmt, wire.ACCEPT[fmt])
        s, head, body = front.request(req)
        rows.append(("front %s" % fmt, n, s, head, body))
    for name, n, s, head, body in rows:
        h = header(head)
        if s != 200:
            sys.exit("bytes: %s: %d %r" % (name, s, body[:200]))
        if int(h["content-length"]) != len(body):
            sys.exit("bytes: %s: Content-Length %s, %d bytes read" %
                     (name, h["content-length"], len(body)))
        print("RESULT path=%s hidden=%d layers=%d req_body=%d "
              "content_length=%d head=%d ctype=%s" %
              (name.replace(" ", "_"), hidden, nl, n, len(body), len(head),
               h.get("content-type", "?")), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sp = ap.add_subparsers(dest="cmd", required=True)
    p = sp.add_parser("latency")
    p.add_argument("--front", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--single", type=int, default=0)
    p.add_argument("--span", default="0,1")
    p.add_argument("--k0", action="store_true",
                   help="also K=0 (the front answers alone)")
    p.add_argument("--wire", default="f32", choices=("f32", "f16", "i8"))
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--batch", type=int, default=200)
    p.add_argument("--warmup", type=int, default=50)
    p = sp.add_parser("throughput")
    p.add_argument("--front", required=True)
    p.add_argument("--shards", required=True)
    p.add_argument("--conns", default="1,4,16")
    p.add_argument("--wire", default="f32", choices=("f32", "f16", "i8"))
    p.add_argument("--seconds", type=float, default=3)
    p.add_argument("--warmup", type=float, default=0.5)
    p.add_argument("--rounds", type=int, default=2)
    p = sp.add_parser("bytes")
    p.add_argument("--front", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--layer", type=int, default=0)
    p.add_argument("--layers", type=int, default=0)
    a = ap.parse_args()
    {"latency": cmd_latency, "throughput": cmd_throughput,
     "bytes": cmd_bytes}[a.cmd](a)


if __name__ == "__main__":
    main()
