#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""SIGTERM while a request computes (issue 4: "SIGINT/SIGTERM: stop
accepting, finish in-flight requests (bounded), close").

    drain.py --host IP --port P --model DIR --owned A-B --pid PID
             [--seq-len N] [--idle-wait S]

Run by test_worker.sh against an appliance in worker mode serving DIR's
layers A-B, whose process (or timeout(1) in front of it) is PID:
- an idle keep-alive connection (one health request answered) is open;
- a second connection pipelines a large binary walk-ffn (every owned
  layer, seq_len N: the worker computes for a while) and a health GET;
- the appliance must not have answered the walk when SIGTERM is sent
  (otherwise nothing was in flight: raise N);
- then: the idle connection is closed at once, while the walk still
  computes (RFC 9112 §9.6: a server closes idle connections when it
  stops); a new connection is refused (the listener is gone); the walk's
  answer arrives whole and equal to pyref, and it does not announce
  "close" because a request after it is still to be answered (RFC 9112
  §9.6: after a response with "close" the server processes no further
  request); the health answer arrives with "Connection: close"; then
  the connection ends.
The caller checks that the process exits 0 within the drain bound.
"""

import argparse
import fcntl
import os
import select
import signal
import socket
import struct
import sys
import termios
import time

import fsa
from fsa import Http, wire


def readable(c):
    if c.buf:
        return True
    r, _, _ = select.select([c.s], [], [], 0)
    return bool(r)


def unacked(c):
    """Bytes of c's socket not yet acknowledged (Linux SIOCOUTQ)."""
    return struct.unpack("i", fcntl.ioctl(c.s.fileno(), termios.TIOCOUTQ,
                                          b"\0\0\0\0"))[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--model", required=True)
    ap.add_argument("--owned", required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--seq-len", type=int, default=4096)
    ap.add_argument("--idle-wait", type=float, default=3.0)
    A = ap.parse_args()
    a, _, b = A.owned.partition("-")
    owned = (int(a), int(b or a))
    layers = list(range(owned[0], owned[1] + 1))
    O = fsa.Oracle(A.model, owned)
    C = fsa.Checker("drain")

    idle = Http(A.host, A.port)
    r = idle.request("GET", "/v1/health")
    C.eq(r.status, 200, "idle connection: health answered")
    C.check(r.header("connection") != "close", "idle connection: kept "
            "alive before the signal", r.headers)

    x = O.x(A.seq_len, 77)
    body, ct = wire.encode_request(layers, x, "f32", batch=True)
    big = Http(A.host, A.port, timeout=30.0)
    big.send(fsa.build("POST", "/v1/walk-ffn", body,
                       [("Content-Type", ct), ("Accept", wire.CT_F32)]) +
             fsa.build("GET", "/v1/health"))
    # In flight: once the appliance acknowledged every byte (the socket's
    # send queue, unacked bytes included, is empty), it holds both
    # requests; the walk computes for far longer than this takes.
    end = time.time() + 10
    while unacked(big) > 0 and time.time() < end:
        time.sleep(0.005)
    C.eq(unacked(big), 0, "the appliance acknowledged both requests")
    if not C.check(not readable(big), "the walk is still in flight when "
                   "SIGTERM is sent (raise --seq-len)"):
        C.done()
    os.kill(A.pid, signal.SIGTERM)
    t_sig = time.time()

    # The idle connection ends now, not when the process exits.
    C.check(idle.at_eof(A.idle_wait), "idle keep-alive connection closed "
            "within %.1f s of SIGTERM" % A.idle_wait)
    C.check(not readable(big), "... while the walk was still computing "
            "(closed at once, not at exit)")
    idle.close()

    # No new connections: the listener is gone (RST to the SYN).
    time.sleep(0.1)
    try:
        n = Http(A.host, A.port, timeout=2.0)
        try:
            r = n.request("GET", "/v1/health")
            got = "answered %d" % r.status
        except (fsa.Closed, OSError) as e:
            got = "accepted, then %r" % e
        n.close()
        C.check(False, "a new connection after SIGTERM is refused", got)
    except ConnectionRefusedError:
        C.check(True, "a new connection after SIGTERM is refused")
    except OSError as e:
        C.check(False, "a new connection after SIGTERM is refused",
                "connect: %r" % e)

    # The in-flight walk: whole and right.
    r = big.read_response()
    print("  walk answered %.2f s after SIGTERM" % (time.time() - t_sig))
    if C.eq(r.status, 200, "in-flight walk: status"):
        C.eq(r.header("content-type"), wire.CT_F32,
             "in-flight walk: Content-Type")
        lat, res = wire.decode_response(r.body, wire.CT_F32)
        C.eq([L for L, _, _ in res], layers, "in-flight walk: layers")
        for L, sl, y in res:
            ok, d = O.close(y, L, x)
            C.check(ok, "in-flight walk: layer %d vs pyref" % L, d)
    C.check(r.header("connection") != "close", "in-flight walk: no "
            "\"Connection: close\" while a pipelined request follows "
            "(RFC 9112 §9.6)", r.headers)
    r = big.read_response()
    C.eq(r.status, 200, "pipelined health after the walk: status")
    C.eq(r.header("connection"), "close", "pipelined health, the last "
         "answer: \"Connection: close\"")
    C.check(big.at_eof(3.0), "the connection ends after the last answer")
    big.close()
    C.done()


if __name__ == "__main__":
    try:
        main()
    except socket.timeout as e:
        print("FAIL drain: timed out: %r" % e)
        sys.exit(1)
