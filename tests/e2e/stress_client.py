#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""A real client kept being served during stress_tap.sh: a loop of binary
walk-ffn requests (spec/wire.md §3) and GET /v1/health, each on a fresh
kernel TCP connection (so every request also goes through the handshake
the SYN flood competes with), checking every answer.

  stress_client.py --url http://198.18.5.2:8080 --hidden 256 --save-ref F
      one request; writes the response body to F (the reference).
  stress_client.py --url ... --hidden 256 --ref F --seconds 15 [--phase P]
      loop; every walk-ffn answer must be 200, Content-Type f16 and equal to
      the reference byte for byte except latency_ms (bytes 8..11,
      spec/wire.md §5.2); every health answer 200 with "status":"ok".
      Prints one JSON line: phase, requests, failures (with the first few
      reasons), walk-ffn latency p50/p90/p99/max in ms (connect included).
Exit status 1 if any request failed or was wrong.
"""

import argparse
import json
import socket
import struct
import sys
import time
import urllib.parse


def request_body(layer, hidden):
    # Deterministic input: a ramp in [-1, 1).
    vals = [((i * 37) % 200) / 100.0 - 1.0 for i in range(hidden)]
    return (struct.pack("<IIII", layer, 1, 1, 8092) +
            struct.pack("<%df" % hidden, *vals))


def read_response(sock, deadline):
    buf = b""
    while b"\r\n\r\n" not in buf:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        d = sock.recv(65536)
        if not d:
            raise IOError("connection closed in the head")
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    hdr = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hdr[k.strip().lower()] = v.strip()
    n = int(hdr.get("content-length", "0"))
    while len(rest) < n:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        d = sock.recv(65536)
        if not d:
            raise IOError("connection closed in the body")
        rest += d
    return status, hdr, rest[:n]


def one(host, port, body, timeout):
    """walk-ffn then health on one fresh connection.
    Returns (walk_status, walk_hdr, walk_body, walk_s, health_status,
    health_body)."""
    deadline = time.monotonic() + timeout
    t0 = time.monotonic()
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        s.sendall(("POST /v1/walk-ffn HTTP/1.1\r\nHost: %s\r\n"
                   "Content-Type: application/x-larql-ffn\r\n"
                   "Accept: application/x-larql-ffn-f16, "
                   "application/x-larql-ffn\r\n"
                   "Content-Length: %d\r\n\r\n" % (host, len(body))
                   ).encode() + body)
        st, hd, bd = read_response(s, deadline)
        dt = time.monotonic() - t0
        s.sendall(("GET /v1/health HTTP/1.1\r\nHost: %s\r\n"
                   "Connection: close\r\n\r\n" % host).encode())
        hst, _, hbd = read_response(s, deadline)
    finally:
        s.close()
    return st, hd, bd, dt, hst, hbd


def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--hidden", type=int, required=True)
    ap.add_argument("--layer", type=int, default=1)
    ap.add_argument("--save-ref")
    ap.add_argument("--ref")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--phase", default="run")
    a = ap.parse_args()
    u = urllib.parse.urlparse(a.url)
    host, port = u.hostname, u.port or 80
    body = request_body(a.layer, a.hidden)

    if a.save_ref:
        st, hd, bd, _, hst, _ = one(host, port, body, a.timeout)
        if st != 200 or hst != 200:
            print("reference request failed: %d / %d %r" % (st, hst, bd[:200]),
                  file=sys.stderr)
            return 1
        with open(a.save_ref, "wb") as f:
            f.write(bd)
        print(json.dumps({"ref_bytes": len(bd),
                          "content_type": hd.get("content-type")}))
        return 0

    ref = open(a.ref, "rb").read()
    lat, fails, n = [], [], 0
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        n += 1
        try:
            st, hd, bd, dt, hst, hbd = one(host, port, body, a.timeout)
        except (OSError, IOError, ValueError, IndexError) as e:
            fails.append("request %d: %s" % (n, e))
            continue
        why = None
        if st != 200:
            why = "walk-ffn status %d %r" % (st, bd[:120])
        elif hd.get("content-type") != "application/x-larql-ffn-f16":
            why = "content-type %r" % hd.get("content-type")
        elif len(bd) != len(ref) or bd[:8] != ref[:8] or bd[12:] != ref[12:]:
            why = "walk-ffn body differs from the reference (%d vs %d bytes)" % (
                len(bd), len(ref))
        elif hst != 200 or b'"status":"ok"' not in hbd:
            why = "health %d %r" % (hst, hbd[:120])
        if why:
            fails.append("request %d: %s" % (n, why))
        else:
            lat.append(dt * 1000.0)
    out = {"phase": a.phase, "requests": n, "ok": len(lat),
           "failures": len(fails), "first_failures": fails[:5],
           "p50_ms": pct(lat, 50), "p90_ms": pct(lat, 90),
           "p99_ms": pct(lat, 99), "max_ms": max(lat) if lat else None}
    for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms"):
        if out[k] is not None:
            out[k] = round(out[k], 3)
    print(json.dumps(out))
    return 1 if fails or not lat else 0


if __name__ == "__main__":
    sys.exit(main())
