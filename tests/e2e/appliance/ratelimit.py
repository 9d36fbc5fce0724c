#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""The per-client rate limit (issue 15 §6, larql-server's --rate-limit),
against an appliance configured with rate_limit = N/hour and
trust_forwarded_for = on:

    ratelimit.py --host IP --port P --model DIR --owned A-B --n N

- the first N requests of a client are answered, the next one gets 429
  with the plain-text body "rate limit exceeded" and a Retry-After of
  whole seconds within the hour's refill interval, on any route but
  /v1/health, which stays exempt;
- a refused walk-ffn's body is read and dropped: the same connection
  goes on (a health request after it is answered);
- new connections of a refused client are refused too (the bucket is
  the address's, not the connection's);
- X-Forwarded-For's last address is the client: a request naming
  another address has a bucket of its own, and addresses before the
  last one (the client's own claims) change nothing;
- /metrics counts the 429s by route.
N per hour: no check here depends on how fast the host runs (a token
comes back only 3600/N seconds after it was taken).
"""

import argparse
import re
import sys

import fsa
from fsa import Http, wire

MSG = b"rate limit exceeded"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--model", required=True)
    ap.add_argument("--owned", required=True)
    ap.add_argument("--n", type=int, required=True)
    A = ap.parse_args()
    a, _, b = A.owned.partition("-")
    owned = (int(a), int(b or a))
    O = fsa.Oracle(A.model, owned)
    C = fsa.Checker("ratelimit")
    interval = 3600.0 / A.n

    def refused(r, what):
        C.eq(r.status, 429, what + ": status")
        C.eq(r.header("content-type"), "text/plain; charset=utf-8",
             what + ": Content-Type")
        C.eq(r.body, MSG, what + ": body")
        ra = r.header("retry-after")
        C.check(ra is not None and ra.isdigit() and
                1 <= int(ra) <= int(interval) + 1,
                what + ": Retry-After in whole seconds, at most the "
                "refill interval (%.0f s)" % interval, repr(ra))

    # The peer's own bucket: N answers, then 429 on every limited route.
    c = Http(A.host, A.port)
    for i in range(A.n):
        r = c.request("GET", "/v1/stats")
        C.eq(r.status, 200, "request %d of %d: answered" % (i + 1, A.n))
    refused(c.request("GET", "/v1/stats"), "request N+1 (stats)")
    refused(c.request("GET", "/nope"), "request N+2 (an unknown path)")
    r = c.request("GET", "/v1/health")
    C.eq(r.status, 200, "/v1/health is exempt")
    x = O.x(2, 5)
    body, ct = wire.encode_request([owned[0]], x, "f32")
    refused(c.request("POST", "/v1/walk-ffn", body,
                      [("Content-Type", ct)]), "walk-ffn with a body")
    r = c.request("GET", "/v1/health")
    C.eq(r.status, 200, "the connection goes on after a refused body")
    C.check(r.header("connection") != "close", "... kept alive",
            r.headers)
    c.close()
    c = Http(A.host, A.port)
    refused(c.request("GET", "/v1/stats"), "a new connection of the "
            "same client")
    # Claims before the last X-Forwarded-For address are the client's
    # own: they do not make a new client.
    refused(c.request("GET", "/v1/stats", headers=[
        ("X-Forwarded-For", "198.18.3.200, %s" % c.s.getsockname()[0])]),
        "X-Forwarded-For naming a stranger, then the peer")
    c.close()

    # Another client behind the proxy: a bucket of its own, answered
    # in full (a walk-ffn among them, checked against pyref).
    xff = [("X-Forwarded-For", "203.0.113.7, 198.18.3.77")]
    c = Http(A.host, A.port)
    r = c.request("POST", "/v1/walk-ffn", body,
                  [("Content-Type", ct)] + xff)
    if C.eq(r.status, 200, "X-Forwarded-For 198.18.3.77: walk-ffn"):
        _, res = wire.decode_response(r.body, r.header("content-type"))
        ok, d = O.close(res[0][2], owned[0], x)
        C.check(ok, "X-Forwarded-For 198.18.3.77: walk-ffn vs pyref", d)
    for i in range(A.n - 1):
        r = c.request("GET", "/v1/stats", headers=xff)
        C.eq(r.status, 200, "X-Forwarded-For 198.18.3.77: request %d"
             % (i + 2))
    refused(c.request("GET", "/v1/stats", headers=xff),
            "X-Forwarded-For 198.18.3.77: request N+1")

    # /metrics (itself limited: asked as a third client).
    r = c.request("GET", "/metrics",
                  headers=[("X-Forwarded-For", "198.18.3.78")])
    C.eq(r.status, 200, "/metrics")
    text = r.body.decode()
    for route, want in (("stats", 4), ("other", 1), ("walk-ffn", 1)):
        m = re.search(r'ffn_requests_total\{shard="[^"]*",route="%s",'
                      r'status="429"\} (\d+)' % re.escape(route), text)
        C.eq(int(m.group(1)) if m else None, want,
             "/metrics: 429s of route %s" % route)
    c.close()
    C.done()


if __name__ == "__main__":
    sys.exit(main())
