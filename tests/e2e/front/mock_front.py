#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""A small Python model of the fan-out front (issue 19), only for
test_front.sh --self-test: it lets the harness and front_check.py run
end to end before (or without) the appliance's front, so that a failure
of the real run points at the front, not at the test.

    mock_front.py --listen H:P --num-layers N --range 0-3=H:P|H:P ...
                  [--i8] [--hop-timeout-ms MS] [--health-interval-ms MS]
                  [--api-key KEY] [--shard-key SPEC]
                  [--shard-key-for H:P=SPEC ...]

It follows what test_front.sh expects of the front: binary requests
split by owner (one layer: single form; several: batch form), the
client's payload and Content-Type sent to each, Accept the client list
of the negotiated format, answers merged in the client's order, payloads
narrower than needed copied and wider ones narrowed (§5.3; counted as
ffn_front_narrowed_total); JSON as the reference router (one owner:
forwarded unchanged; several: sub-requests, results stable-sorted by
layer, {"latency_ms","results"}); replicas in order, skipping one found
down (connect failure, 5xx, bad answer; ffn_front_shard_errors_total
{shard="http://H:P"}), a health probe every interval; a hop past its
deadline: 504 {"error":"shard http://H:P: timed out"}; no replica left:
502 {"error":"shard http://H:P: WHY"}. Keys as the appliance's: with
--api-key every route but /v1/health needs "Authorization: Bearer KEY",
else 401, empty body, "WWW-Authenticate: Bearer"; each shard is sent
"Authorization: Bearer" its key (--shard-key-for, else --shard-key; SPEC
env:NAME, file:PATH (first line) or the key), probes included; a shard's
4xx (its 401 too) reaches the client unchanged.
"""

import argparse
import http.client
import json
import os
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "pyref"))
import wire  # noqa: E402
from front_check import split_frame, merge_frame  # noqa: E402


class HopError(Exception):
    def __init__(self, status, url, why):
        Exception.__init__(self, why)
        self.status = status
        self.url = url
        self.why = why


def secret(spec):
    """lib/conf's conf_secret_read: env:NAME, file:PATH, or the key."""
    if spec is None:
        return None
    if spec.startswith("env:"):
        return os.environ[spec[4:]]
    if spec.startswith("file:"):
        with open(spec[5:]) as f:
            return f.readline().rstrip("\r\n")
    return spec


class Shard:
    def __init__(self, hp, key=None):
        self.hp = hp
        self.key = key
        self.url = "http://" + hp
        self.host, p = hp.rsplit(":", 1)
        self.port = int(p)
        self.up = True
        self.errors = 0


class Front:
    def __init__(self, a):
        self.a = a
        self.ranges = []	# (first, last, [Shard])
        keys = dict(kv.split("=", 1) for kv in a.shard_key_for or [])
        for spec in a.range:
            r, _, reps = spec.partition("=")
            f, _, l = r.partition("-")
            self.ranges.append((int(f), int(l or f), [
                Shard(s.strip(), secret(keys.get(s.strip(), a.shard_key)))
                for s in reps.split("|")]))
        self.narrowed = 0
        self.hidden = None
        self.lock = threading.Lock()

    def owner(self, L):
        for i, (f, l, _) in enumerate(self.ranges):
            if f <= L <= l:
                return i
        return -1

    def hop(self, sh, method, path, body=b"", headers=None):
        c = http.client.HTTPConnection(sh.host, sh.port,
                                       timeout=self.a.hop_timeout_ms / 1000)
        headers = dict(headers or {})
        if sh.key:
            headers["Authorization"] = "Bearer " + sh.key
        try:
            c.request(method, path, body=body, headers=headers)
            r = c.getresponse()
            return r.status, r.getheader("Content-Type") or "", r.read()
        except socket.timeout:
            raise HopError(504, sh.url, "timed out")
        except (OSError, http.client.HTTPException) as e:
            raise HopError(502, sh.url, "%s" % (e,))
        finally:
            c.close()

    def call(self, ri, method, path, body, headers):
        """One sub-request to range ri: replicas in order, up ones first."""
        reps = self.ranges[ri][2]
        order = [s for s in reps if s.up] + [s for s in reps if not s.up]
        last = None
        for sh in order:
            try:
                st, ct, b = self.hop(sh, method, path, body, headers)
            except HopError as e:
                with self.lock:
                    sh.errors += 1
                    sh.up = False
                if e.status == 504:
                    raise
                last = e
                continue
            if st >= 500:
                with self.lock:
                    sh.errors += 1
                    sh.up = False
                last = HopError(502, sh.url, "status %d" % st)
                continue
            return st, ct, b
        raise last

    def health_loop(self):
        while True:
            time.sleep(self.a.health_interval_ms / 1000)
            for _, _, reps in self.ranges:
                for sh in reps:
                    try:
                        st, _, _ = self.hop(sh, "GET", "/v1/health")
                        ok = st == 200
                    except HopError:
                        ok = False
                    sh.up = ok


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body, ctype):
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        if status == 401:
            self.send_header("WWW-Authenticate", "Bearer")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def err(self, status, msg):
        self.send(status, json.dumps({"error": msg}, separators=(",", ":"),
                                     ensure_ascii=False).encode(),
                  "application/json")

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def route(self, method):
        fr = self.server.front
        path = self.path.split("?", 1)[0]
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if path == "/v1/health" and method == "GET":
            return self.send(200, b'{"status":"ok"}', "application/json")
        key = self.server.api_key
        auth = self.headers.get("Authorization") or ""
        if key and not (auth[:7].lower() == "bearer " and
                        auth[7:].lstrip(" ") == key):
            return self.send(401, b"", None)
        if path == "/metrics" and method == "GET":
            out = ["# TYPE ffn_front_narrowed_total counter",
                   "ffn_front_narrowed_total %d" % fr.narrowed,
                   "# TYPE ffn_front_shard_errors_total counter"]
            for _, _, reps in fr.ranges:
                for sh in reps:
                    out.append('ffn_front_shard_errors_total{shard="%s"} %d'
                               % (sh.url, sh.errors))
            return self.send(200, ("\n".join(out) + "\n").encode(),
                             "text/plain; version=0.0.4")
        if path == "/v1/stats" and method == "GET":
            for ri in range(len(fr.ranges)):
                try:
                    st, ct, b = fr.call(ri, "GET", "/v1/stats", b"", {})
                    return self.send(st, b, ct)
                except HopError:
                    continue
            return self.err(502, "no shard answered /v1/stats")
        if path != "/v1/walk-ffn":
            return self.err(404, "not found")
        if method != "POST":
            return self.err(405, "method not allowed")
        try:
            if fr.hidden is None:
                st, _, b = fr.call(0, "GET", "/v1/stats", b"", {})
                fr.hidden = json.loads(b)["hidden_size"]
            ctype = self.headers.get("Content-Type") or ""
            if "application/x-larql-ffn" in ctype:
                return self.binary(fr, body, ctype)
            return self.walk_json(fr, body)
        except HopError as e:
            return self.err(e.status, "shard %s: %s" % (e.url, e.why))

    def binary(self, fr, body, ctype):
        t0 = time.perf_counter()
        try:
            layers, seq, _ = wire.decode_request(body, ctype, fr.hidden,
                                                 self.server.num_layers)
        except wire.WireError as e:
            return self.err(e.status, e.message)
        accept = self.headers.get_all("Accept")
        fmt = wire.choose_format(accept[0] if accept else None,
                                 self.server.i8, True)
        first, = struct.unpack_from("<I", body, 0)
        hdr = 8 + 4 * len(layers) if first == wire.BATCH else 4
        tail = body[hdr:]		# seq_len, flags, top_k, payload
        groups = {}
        for L in layers:
            groups.setdefault(fr.owner(L), []).append(L)
        answers = {}
        acc = wire.ACCEPT[fmt]
        for ri, ls in groups.items():
            if len(ls) == 1:
                sb = struct.pack("<I", ls[0]) + tail
            else:
                sb = struct.pack("<II%dI" % len(ls), wire.BATCH, len(ls),
                                 *ls) + tail
            st, ct, b = fr.call(ri, "POST", "/v1/walk-ffn", sb,
                                {"Content-Type": ctype, "Accept": acc})
            if st != 200:
                return self.send(st, b, ct)
            afmt = wire.format_of(ct)
            _, _, res = split_frame(b, afmt, fr.hidden)
            out = []
            for h, p in res:
                if afmt != fmt:
                    L, s = struct.unpack_from("<II", h)
                    y = wire.decode_response(h[:8] + b"\0\0\0\0" + p, ct,
                                             fr.hidden)[1][0][2]
                    p = wire.encode_payload(y, fmt)
                    with fr.lock:
                        fr.narrowed += 1
                out.append((h[:8], p))
            answers[ri] = out
        res = []
        pos = {ri: 0 for ri in groups}
        for L in layers:
            ri = fr.owner(L)
            h, p = answers[ri][pos[ri]]
            pos[ri] += 1
            res.append((h, p))
        batch = len(res) != 1
        if batch:
            res = [(h + struct.pack("<I", seq * fr.hidden), p)
                   for h, p in res]
        lat = (time.perf_counter() - t0) * 1000
        self.send(200, merge_frame(batch, res, lat), wire.CT[fmt])

    def walk_json(self, fr, body):
        try:
            req = json.loads(body)
            if req.get("layers") is not None:
                layers = [int(L) for L in req["layers"]]
            else:
                layers = [int(req["layer"])]
        except (ValueError, KeyError, TypeError, AttributeError):
            return self.err(400, "invalid JSON")
        for L in layers:
            if fr.owner(L) < 0:
                return self.err(400, "layer %d out of range (num_layers = "
                                "%d)" % (L, self.server.num_layers))
        groups = {}
        for L in layers:
            groups.setdefault(fr.owner(L), []).append(L)
        h = {"Content-Type": "application/json"}
        if len(groups) == 1:
            st, ct, b = fr.call(next(iter(groups)), "POST", "/v1/walk-ffn",
                                body, h)
            return self.send(st, b, ct)
        res = []
        lat = 0.0
        for ri, ls in groups.items():
            sub = {k: v for k, v in req.items() if k not in ("layer",
                                                            "layers")}
            if len(ls) == 1:
                sub["layer"] = ls[0]
            else:
                sub["layers"] = ls
            st, ct, b = fr.call(ri, "POST", "/v1/walk-ffn",
                                json.dumps(sub).encode(), h)
            if st != 200:
                return self.send(st, b, ct)
            j = json.loads(b)
            lat = max(lat, j.get("latency_ms", 0))
            res += j["results"] if "results" in j else [j]
        res.sort(key=lambda o: o["layer"])
        self.send(200, json.dumps({"latency_ms": round(lat, 1),
                                   "results": res}).encode(),
                  "application/json")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--listen", required=True)
    ap.add_argument("--num-layers", type=int, required=True)
    ap.add_argument("--range", action="append", required=True)
    ap.add_argument("--i8", action="store_true")
    ap.add_argument("--hop-timeout-ms", type=int, default=1500)
    ap.add_argument("--health-interval-ms", type=int, default=300)
    ap.add_argument("--api-key")
    ap.add_argument("--shard-key", help="SPEC: every shard's key")
    ap.add_argument("--shard-key-for", action="append",
                    help="H:P=SPEC: one shard's key")
    a = ap.parse_args()
    fr = Front(a)
    host, port = a.listen.rsplit(":", 1)
    srv = ThreadingHTTPServer((host, int(port)), Handler)
    srv.daemon_threads = True
    srv.front = fr
    srv.num_layers = a.num_layers
    srv.i8 = a.i8
    srv.api_key = a.api_key
    threading.Thread(target=fr.health_loop, daemon=True).start()
    print("mock_front: serving on %s" % a.listen, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
