#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""A small threaded HTTP/1.1 server of the LARQL FFN protocol (spec/wire.md),
the reference the tools and end-to-end tests are checked against.

    server.py --model DIR [--layers A-B] [--port P] [--host 127.0.0.1]
              [--api-key KEY]

Environment, by presence (wire.md §5.1): LARQL_I8_WIRE enables i8
responses, LARQL_F16_WIRE_DISABLE disables f16 ones. PYREF_CLOSE: every
answer says Connection: close and ends its connection. Computes in float32
(set PYREF_F64=1 for float64).

--api-key KEY (or PYREF_API_KEY=KEY; the option wins): as the appliance's
api_key (lib/shard/shard_route.c shard_authorized), every request but
GET /v1/health needs "Authorization: Bearer KEY" (the scheme in any case,
one or more spaces), else 401 with an empty body and
"WWW-Authenticate: Bearer" (issue 4; docs/HTTP-CONFORMANCE.md A-401). An
unknown path without the key is 401, not 404; a known path's wrong
method stays 405.
"""

import argparse
import hmac
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ffn  # noqa: E402
import vindex  # noqa: E402
import wire  # noqa: E402

ROUTES = {"/v1/walk-ffn": ("POST",), "/v1/stats": ("GET",),
          "/v1/health": ("GET",), "/v1/walk-ffn-q8k": ("POST",)}


class Shard:
    def __init__(self, model_dir, owned, api_key=None):
        first, last = owned if owned else (None, None)
        self.vi = vindex.load(model_dir, None if owned is None
                              else range(first, last + 1))
        self.owned = owned
        self.api_key = api_key or None
        self.i8 = "LARQL_I8_WIRE" in os.environ
        self.f16 = "LARQL_F16_WIRE_DISABLE" not in os.environ
        self.compute = (ffn.compute64 if os.environ.get("PYREF_F64")
                        else ffn.compute32)
        self.started = time.time()
        self.served = 0
        self.lock = threading.Lock()

    def authorized(self, auth):
        """shard_authorized: "Bearer" in any case, 1*SP, the key exactly
        (compared in constant time)."""
        if self.api_key is None:
            return True
        if auth is None or len(auth) <= 6 or auth[:6].lower() != "bearer" \
                or auth[6] != " ":
            return False
        # (http.server decodes header values as latin-1)
        return hmac.compare_digest(auth[6:].lstrip(" ").encode("latin-1"),
                                   self.api_key.encode("utf-8"))

    def stats(self):
        vi = self.vi
        s = {"model": vi.model, "family": vi.family, "mode": "ffn-service",
             "layers": vi.num_layers, "hidden_size": vi.hidden,
             "features_per_layer": vi.intermediate, "dtype": vi.dtype,
             "layout": vi.layout, "activation": vi.activation,
             "wire": {"f32": True, "f16": self.f16, "i8": self.i8},
             "requests_served": self.served, "server": "pyref"}
        if self.owned:
            s["owned_layers"] = list(self.owned)
        return s

    def run(self, layers, x):
        out = []
        for L in layers:
            G, U, D = self.vi.weights[L]
            y = self.compute(G, U, D, x, self.vi.activation)
            out.append((L, x.shape[0], y.astype(np.float32)))
        return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "pyref"
    # Headers and body go out in two writes: without TCP_NODELAY the body
    # waits for the client's delayed ACK (~40 ms a request).
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        if os.environ.get("PYREF_LOG"):
            BaseHTTPRequestHandler.log_message(self, fmt, *args)

    def _send(self, status, body, ctype):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if os.environ.get("PYREF_CLOSE"):
            # One answer per connection (RFC 9112 §9.6), as a proxy at
            # its keep-alive limit does: what a client pipelined behind
            # it is never read.
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status, obj):
        self._send(status, json.dumps(obj, sort_keys=True,
                                      ensure_ascii=False).encode(),
                   "application/json")

    def _error(self, status, msg):
        self._json(status, {"error": msg})

    def _unauthorized(self):
        # The appliance's 401: no body, no Content-Type, the challenge.
        self.send_response(401)
        self.send_header("WWW-Authenticate", "Bearer")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _route(self, method):
        path = self.path.split("?", 1)[0]
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        shard = self.server.shard
        # The appliance's order: a known path's wrong method is 405;
        # then the key (an unknown path included); then 404.
        if path in ROUTES and method not in ROUTES[path]:
            return self._error(405, "method not allowed")
        if path != "/v1/health" and not shard.authorized(
                self.headers.get("Authorization")):
            return self._unauthorized()
        if path not in ROUTES:
            return self._error(404, "not found")
        if path == "/v1/health":
            return self._json(200, {"status": "ok",
                                    "uptime_seconds":
                                    int(time.time() - shard.started),
                                    "requests_served": shard.served})
        if path == "/v1/stats":
            return self._json(200, shard.stats())
        if path == "/v1/walk-ffn-q8k":
            return self._error(404, "q8k route not supported")
        with shard.lock:
            shard.served += 1
        ctype = self.headers.get("Content-Type") or ""
        if "application/x-larql-ffn" in ctype:
            return self._binary(shard, body, ctype)
        return self._walk_json(shard, body)

    def _binary(self, shard, body, ctype):
        vi = shard.vi
        try:
            layers, _, x = wire.decode_request(body, ctype, vi.hidden,
                                               vi.num_layers, shard.owned)
        except wire.WireError as e:
            return self._error(e.status, e.message)
        t0 = time.perf_counter()
        results = shard.run(layers, x)
        lat = (time.perf_counter() - t0) * 1000.0
        accept = self.headers.get_all("Accept")
        fmt = wire.choose_format(accept[0] if accept else None,
                                 shard.i8, shard.f16)
        self._send(200, wire.encode_response(results, fmt, lat),
                   wire.CT[fmt])

    def _walk_json(self, shard, body):
        vi = shard.vi
        try:
            req = json.loads(body.decode("utf-8"))
            if not isinstance(req, dict):
                raise ValueError("expected an object")
        except ValueError as e:
            return self._error(400, "invalid JSON: %s" % e)
        if "residual" not in req:
            return self._error(400, "invalid JSON: missing field `residual`")
        if req.get("layers") is not None:
            layers = [int(L) for L in req["layers"]]
        elif req.get("layer") is not None:
            layers = [int(req["layer"])]
        else:
            return self._error(400, "must provide 'layer' or 'layers'")
        seq_len = int(req.get("seq_len", 1))
        top_k = int(req.get("top_k", wire.TOP_K))
        full = bool(req.get("full_output", False))
        x = np.asarray(req["residual"], dtype=np.float32)
        try:
            wire.check_layers(layers, vi.num_layers, shard.owned)
        except wire.WireError as e:
            return self._error(e.status, e.message)
        t0 = time.perf_counter()
        if full:
            if seq_len < 1:
                return self._error(400, "seq_len must be >= 1")
            if x.size != seq_len * vi.hidden:
                return self._error(400, "residual has %d elements, expected "
                                   "%d (seq_len=%d * hidden_size=%d)"
                                   % (x.size, seq_len * vi.hidden, seq_len,
                                      vi.hidden))
            if req.get("moe_layer") is True:
                # spec/wire.md §6: no MoE layer is served here.
                return self._error(400, "moe_layer=true but server has "
                                   "no --moe-shards configured")
            res = [{"layer": L, "output": [float(v) for v in y.ravel()],
                    "seq_len": seq_len}
                   for L, _, y in shard.run(layers,
                                            x.reshape(seq_len, vi.hidden))]
        else:
            if x.size != vi.hidden:
                return self._error(400, "residual has %d elements, expected "
                                   "%d" % (x.size, vi.hidden))
            res = []
            for L in layers:
                ids, scores = ffn.features(vi.weights[L][0], x, top_k)
                res.append({"features": ids, "layer": L, "scores": scores})
        lat = round((time.perf_counter() - t0) * 1000.0, 1)
        if len(res) == 1:
            out = dict(res[0])
            out["latency_ms"] = lat
        else:
            out = {"latency_ms": lat, "results": res}
            if full:
                out["seq_len"] = seq_len
        return self._json(200, out)

    def do_GET(self):
        self._route("GET")

    def do_POST(self):
        self._route("POST")

    def do_PUT(self):
        self._route("PUT")

    def do_DELETE(self):
        self._route("DELETE")

    def do_PATCH(self):
        self._route("PATCH")

    def do_HEAD(self):
        self._route("HEAD")


def parse_range(s):
    a, _, b = s.partition("-")
    return (int(a), int(b or a))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--layers", help="owned range A-B (inclusive)")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--api-key", default=os.environ.get("PYREF_API_KEY"),
                    help="require Authorization: Bearer KEY on every route "
                    "but /v1/health (default: $PYREF_API_KEY; none: no "
                    "auth)")
    a = ap.parse_args(argv)
    shard = Shard(a.model, parse_range(a.layers) if a.layers else None,
                  a.api_key)
    srv = ThreadingHTTPServer((a.host, a.port), Handler)
    srv.daemon_threads = True
    srv.shard = shard
    print("pyref: serving %s (%s, %s) on %s:%d%s" % (
          a.model, shard.vi.layout, shard.vi.activation, a.host, a.port,
          ", api_key set" if shard.api_key else ""), flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    srv.server_close()


if __name__ == "__main__":
    main()
