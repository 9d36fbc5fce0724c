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
- that connection has a small receive buffer and is not read until the
  checks below are done, so the walk's answer (megabytes) is in flight
  when SIGTERM is sent and stays so, whether the host is still computing
  it or already sending it: no check depends on the host's speed;
- SIGTERM is sent twice, 50 ms apart (a duplicate, as timeout(1)
  sends it: the drain must go on as after one);
- then: the idle connection is closed at once, while the process runs
  and the walk's connection is open (RFC 9112 §9.6: a server closes
  idle connections when it stops); a new connection is refused (the listener is gone); the walk's
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


# Linux doubles it, and keeps at least a few KiB.
RCVBUF = 16384
# The appliance's TCP send buffer per connection (lib/net/tcp/tcp.h,
# snd_buf's default). An answer queued whole lets the next one's head be
# written: the walk's must be larger than this with room to spare, or
# the pipelined health after it can be answered, "keep-alive", before
# the signal whenever the walk was computed by then.
APPLIANCE_SNDBUF = 4 << 20


def appliance_pid(pid):
    """The appliance: pid itself, or the child of timeout(1) at pid."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = f.read().split()
    except OSError:
        kids = []
    return int(kids[0]) if len(kids) == 1 else pid


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def big_closed(c):
    """True if c has seen a FIN or RST. Peeks (MSG_PEEK) at what is
    queued without taking it."""
    t = c.s.gettimeout()
    c.s.setblocking(False)
    try:
        return c.s.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
    finally:
        c.s.settimeout(t)


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
    # A small receive buffer: the walk's answer (seq_len x hidden f32 per
    # layer, megabytes) cannot be delivered whole until this client reads
    # it, so it stays in flight through the checks below however fast the
    # host computes it.
    big = Http(A.host, A.port, timeout=30.0, rcvbuf=RCVBUF)
    big.send(fsa.build("POST", "/v1/walk-ffn", body,
                       [("Content-Type", ct), ("Accept", wire.CT_F32)]) +
             fsa.build("GET", "/v1/health"))
    # In flight: once the appliance acknowledged every byte (the socket's
    # send queue, unacked bytes included, is empty), it holds both
    # requests.
    end = time.time() + 10
    while unacked(big) > 0 and time.time() < end:
        time.sleep(0.005)
    C.eq(unacked(big), 0, "the appliance acknowledged both requests")
    computing = not readable(big)
    C.check(len(x) * len(layers) * x.shape[1] * 4 >
            APPLIANCE_SNDBUF + 8 * RCVBUF + (1 << 20),
            "the walk's answer is far larger than the appliance's send "
            "buffer and this receive buffer (raise --seq-len)")
    os.kill(A.pid, signal.SIGTERM)
    t_sig = time.time()
    # The same TERM once more, as timeout(1) and any kill of a process
    # group deliver it (coreutils sends it to the child, then to the
    # group): a copy within SHARD_SIGNAL_DUP_MS is not an operator's
    # second signal and must not cut the drain short. Sent to the
    # appliance itself (timeout(1) ignores TERM once it has forwarded
    # one), 50 ms later: it has surely handled the first by then.
    time.sleep(0.05)
    os.kill(appliance_pid(A.pid), signal.SIGTERM)
    print("  SIGTERM (twice) while the walk was %s" %
          ("computing" if computing else "being sent"))

    # The idle connection ends now, not when the process exits: the
    # process still runs (the walk's answer waits for this client) and
    # the walk's connection is still open.
    C.check(idle.at_eof(A.idle_wait), "idle keep-alive connection closed "
            "within %.1f s of SIGTERM" % A.idle_wait)
    C.check(alive(A.pid), "... while the appliance still runs (closed at "
            "once, not at exit)")
    C.check(not big_closed(big), "... and the in-flight walk's "
            "connection is still open")
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

    # The in-flight walk: whole and right, read with a larger buffer
    # (the window scale, fixed at the SYN, follows tcp_rmem, not
    # SO_RCVBUF): 16 KiB windows to a reader that shares its core with a
    # polling worker came at one per scheduler slice, seconds for the
    # whole answer, too close to the drain's 5 s bound on a loaded host.
    big.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
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
