#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""One soak kind against a running ffn-shard, for SECONDS (tools/soak/run):

  pipeline  keep-alive connections of 8 pipelined binary walk-ffn
            requests, every answer's values against pyref; every third
            connection ends with Connection: close (connect/close churn)
  json      JSON walk-ffn (full_output), values against pyref
  bad       malformed and refused requests: each gets its 4xx status and
            a JSON {"error": ...} body, and the appliance stays up
  noread    a client asks for a large answer through a small receive
            buffer and never reads: reset within send_timeout_ms + 4 s,
            counted in ffn_send_timeouts_total

    mixed.py KIND HOST PORT MODEL FIRST-LAST SECONDS [--send-timeout-ms N]

Prints the requests and failures; exits 1 on any failure.
"""

import argparse
import json
import os
import socket
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e",
                                "appliance"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e", "pyref"))
import fsa  # noqa: E402
import wire  # noqa: E402

WALK = "/v1/walk-ffn"


class Soak:
    def __init__(self, a):
        self.a = a
        self.o = fsa.Oracle(a.model, a.owned)
        self.layers = list(range(a.owned[0], a.owned[1] + 1))
        self.n = 0
        self.fails = 0
        self.seed = 0

    def fail(self, what):
        self.fails += 1
        print("FAIL %s: %s" % (self.a.kind, what), flush=True)

    def conn(self):
        return fsa.Http(self.a.host, self.a.port, timeout=10.0)

    def check_f32(self, r, layer, x, what):
        self.n += 1
        if r.status != 200:
            return self.fail("%s: status %d %r" % (what, r.status, r.body))
        _, items = wire.decode_response(r.body, r.header("content-type"),
                                        self.o.hidden)
        got = np.asarray(items[0][2], dtype=np.float64).reshape(x.shape)
        ok, d = self.o.close(got, layer, x)
        if not ok:
            self.fail("%s: %s" % (what, d))

    def pipeline(self):
        c = self.conn()
        for i in range(3):
            reqs = []
            for k in range(8):
                self.seed += 1
                layer = self.layers[self.seed % len(self.layers)]
                x = self.o.x(1 + self.seed % 3, self.seed)
                body, ct = wire.encode_request([layer], x, "f32")
                h = [("Content-Type", ct)]
                if i == 2 and k == 7 and self.seed % 3 == 0:
                    h.append(("Connection", "close"))
                reqs.append((layer, x, fsa.build("POST", WALK, body, h)))
            c.send(b"".join(q[2] for q in reqs))
            for layer, x, _ in reqs:
                self.check_f32(c.read_response(), layer, x, "pipelined")
        if self.seed % 3 == 0 and not c.at_eof(5.0):
            self.fail("Connection: close answered, connection left open")
        c.close()

    def json(self):
        c = self.conn()
        for _ in range(10):
            self.seed += 1
            layer = self.layers[self.seed % len(self.layers)]
            x = self.o.x(1, self.seed)
            body = json.dumps({"layer": layer, "full_output": True,
                               "residual": [float(v) for v in x.ravel()]})
            r = c.request("POST", WALK, body.encode(),
                          [("Content-Type", "application/json")])
            self.n += 1
            if r.status != 200:
                self.fail("json: status %d %r" % (r.status, r.body))
                continue
            o = fsa.json_obj(r)
            item = o.get("results", [o])[0] if "results" in o else o
            out = np.array(item.get("output", []), dtype=np.float64)
            if out.size != x.size:
                self.fail("json: %d output values" % out.size)
                continue
            ok, d = self.o.close(out.reshape(x.shape), layer, x)
            if not ok:
                self.fail("json: " + d)
        c.close()

    def bad(self):
        x = self.o.x(1, 1)
        good, ct = wire.encode_request([self.layers[0]], x, "f32")
        cases = [
            (fsa.build("GET", "/nope"), 404, True),
            (fsa.build("POST", WALK, good[:-4], [("Content-Type", ct)]),
             400, True),
            (fsa.build("POST", WALK, b"{not json",
                       [("Content-Type", "application/json")]), 400, True),
            # not binary: the JSON path (spec/wire.md §3), not JSON
            (fsa.build("POST", WALK, good, [("Content-Type", "text/csv")]),
             400, True),
            (fsa.build("GET", "/v1/health",
                       headers=[("X-Big", "a" * 9000)]), 431, False),
            (b"GARBAGE\r\n\r\n", 400, False),
        ]
        for raw, status, keep in cases:
            c = self.conn()
            c.send(raw)
            try:
                r = c.read_response()
            except (fsa.Closed, ConnectionResetError) as e:
                self.fail("bad %r: no answer (%s)" % (raw[:30], e))
                c.close()
                continue
            self.n += 1
            if r.status != status:
                self.fail("bad %r: status %d, want %d" % (raw[:30],
                                                         r.status, status))
            try:
                o = fsa.json_obj(r)
                if list(o) != ["error"]:
                    raise ValueError(o)
            except ValueError:
                self.fail("bad %r: body %r" % (raw[:30], r.body[:80]))
            if keep:
                r = c.request("GET", "/v1/health")
                if r.status != 200:
                    self.fail("bad: health after a 4xx: %d" % r.status)
            c.close()

    def noread(self):
        ms = self.a.send_timeout_ms
        x = self.o.x(48, 7)
        body, ct = wire.encode_request(self.layers, x, "f32")
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(10)
        s.connect((self.a.host, self.a.port))
        base = self.resets()
        s.sendall(fsa.build("POST", WALK, body, [("Content-Type", ct)]))
        t0 = time.time()
        n = 0
        while n == 0 and time.time() - t0 < ms / 1000 + 4:
            time.sleep(0.1)
            n = self.resets() - base
        reset = False
        s.settimeout(5)
        try:
            while s.recv(1 << 16):
                pass
        except ConnectionResetError:
            reset = True
        s.close()
        self.n += 1
        if n < 1 or not reset:
            self.fail("noread: %d send timeouts after %.1f s, %s" %
                      (n, time.time() - t0,
                       "reset" if reset else "not reset"))

    def resets(self):
        r = self.conn().request("GET", "/metrics")
        return sum(int(ln.split()[-1]) for ln in r.body.decode().splitlines()
                   if ln.startswith("ffn_send_timeouts_total{"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["pipeline", "json", "bad", "noread"])
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("model")
    ap.add_argument("owned")
    ap.add_argument("seconds", type=float)
    ap.add_argument("--send-timeout-ms", type=int, default=2000)
    a = ap.parse_args()
    a.owned = tuple(int(v) for v in a.owned.split("-"))
    s = Soak(a)
    end = time.time() + a.seconds
    fn = getattr(s, a.kind)
    while time.time() < end:
        try:
            fn()
        except Exception as e:  # an exception is a failure, not a stop
            s.fail("%s raised %r" % (a.kind, e))
    print("mixed %s: %d checked, %d failed" % (a.kind, s.n, s.fails))
    sys.exit(1 if s.fails or s.n == 0 else 0)


main()
