#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Kernel-TCP client for net_testd (tests/e2e/net_tap.sh).  Every transfer
# is verified byte for byte; any mismatch, short read or timeout fails.
#   echo   (port E): send N random bytes, read N back, compare.
#   source (port S): send "N\n", read until EOF, compare with the pattern
#                    net_testd_svc.c sends (i*131 + (i>>9)) & 0xff.
#   check  (--check C): send N bytes of that pattern and shut down; the
#                    stack verifies them and answers "ok N\n".
# Then 1000 concurrent echo connections.  net_tap.sh runs it once against a
# clean path and through net_testd's impairment stage (--netem) with
# --parallel: there throughput is bounded by the loss rate per connection
# (Mathis: MSS/RTT * 1.22/sqrt(p)), so the transfers run side by side,
# largest first, and each still verifies its own bytes.
import argparse
from concurrent.futures import ThreadPoolExecutor
import os
import resource
import selectors
import socket
import sys
import threading
import time

SIZES = [1, 2, 100, 1459, 1460, 1461, 4096, 65535, 65536, 1 << 20,
         16 << 20, 32 << 20, 64 << 20]


def pattern(n):
    """(i*131 + (i >> 9)) & 0xff: 512-byte blocks differ by a constant,
    and the whole repeats every 256 blocks."""
    base = bytes((k * 131) & 0xff for k in range(512))
    period = b"".join(
        base.translate(bytes((b + add) & 0xff for b in range(256)))
        for add in range(256))
    return (period * (n // len(period) + 1))[:n]


def recv_exact(s, n):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = s.recv_into(view[got:], min(n - got, 1 << 20))
        if k == 0:
            raise RuntimeError(f"EOF after {got} of {n} bytes")
        got += k
    return bytes(buf)


def send_all(s, data):
    """sendall() in 1 MiB pieces: Python's socket timeout bounds one
    sendall() call as a whole, and a 64 MiB one through the impaired
    path takes minutes (progress is what must not stall)."""
    view = memoryview(data)
    for off in range(0, len(data), 1 << 20):
        s.sendall(view[off:off + (1 << 20)])


def echo_once(host, port, n, timeout):
    data = os.urandom(n)
    with socket.create_connection((host, port), timeout=timeout) as s:
        err = []

        def sender():
            try:
                send_all(s, data)
            except OSError as e:  # reported by the reader
                err.append(e)
        t = threading.Thread(target=sender)
        t.start()
        back = recv_exact(s, n)
        t.join()
        if err:
            raise err[0]
        s.shutdown(socket.SHUT_WR)
        if s.recv(1) != b"":
            raise RuntimeError("echo: data after the echo")
    if back != data:
        bad = next(i for i in range(n) if back[i] != data[i])
        raise RuntimeError(f"echo {n}: mismatch at byte {bad}")


def source_once(host, port, n, timeout, expect):
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(b"%d\n" % n)
        got = recv_exact(s, n)
        if s.recv(1) != b"":
            raise RuntimeError("source: more than asked")
    if got != expect[:n]:
        bad = next(i for i in range(n) if got[i] != expect[i])
        raise RuntimeError(f"source {n}: mismatch at byte {bad}")


def check_once(host, port, n, timeout, expect):
    with socket.create_connection((host, port), timeout=timeout) as s:
        send_all(s, memoryview(expect)[:n])
        s.shutdown(socket.SHUT_WR)
        reply = b""
        while True:
            d = s.recv(64)
            if not d:
                break
            reply += d
    if reply != b"ok %d\n" % n:
        raise RuntimeError(f"check {n}: the stack answered {reply!r}")


def concurrent(host, port, count, timeout):
    sel = selectors.DefaultSelector()
    conns = []
    for i in range(count):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex((host, port))
        msg = b"conn %06d " % i + os.urandom(64)
        st = {"s": s, "msg": msg, "sent": 0, "got": bytearray()}
        conns.append(st)
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, st)
    done = 0
    deadline = time.monotonic() + timeout
    while done < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"concurrent: {done}/{count} done")
        for key, ev in sel.select(timeout=1):
            st = key.data
            s = st["s"]
            if ev & selectors.EVENT_WRITE and st["sent"] < len(st["msg"]):
                try:
                    st["sent"] += s.send(st["msg"][st["sent"]:])
                except (BlockingIOError, InterruptedError):
                    pass
                if st["sent"] == len(st["msg"]):
                    sel.modify(s, selectors.EVENT_READ, st)
            if ev & selectors.EVENT_READ:
                try:
                    d = s.recv(4096)
                except (BlockingIOError, InterruptedError):
                    continue
                if not d:
                    raise RuntimeError("concurrent: early EOF")
                st["got"] += d
                if len(st["got"]) >= len(st["msg"]):
                    if bytes(st["got"]) != st["msg"]:
                        raise RuntimeError("concurrent: mismatch")
                    sel.unregister(s)
                    done += 1
    # all verified while all were open; now close them
    for st in conns:
        st["s"].close()


print_lock = threading.Lock()


def timed(label, kind, fn, n, *args):
    t = time.monotonic()
    fn(*args)
    dt = time.monotonic() - t
    with print_lock:
        print(f"{label}: {n} bytes {kind} ok ({dt:.2f} s, "
              f"{n / dt / 1e3:.1f} KB/s)", flush=True)


def run_all(a, label, sizes, nconc):
    expect = pattern(max(sizes))
    t0 = time.monotonic()
    if a.parallel:
        with ThreadPoolExecutor(a.parallel) as ex:
            jobs = []
            for n in sorted(sizes, reverse=True):
                jobs.append(ex.submit(timed, label, "echo", echo_once, n,
                                      a.host, a.echo, n, a.timeout))
                jobs.append(ex.submit(timed, label, "source", source_once,
                                      n, a.host, a.source, n, a.timeout,
                                      expect))
                if a.check:
                    jobs.append(ex.submit(timed, label, "check",
                                          check_once, n, a.host, a.check,
                                          n, a.timeout, expect))
            for j in jobs:
                j.result()      # the first failure fails the run
    else:
        for n in sizes:
            t = time.monotonic()
            echo_once(a.host, a.echo, n, a.timeout)
            source_once(a.host, a.source, n, a.timeout, expect)
            if a.check:
                check_once(a.host, a.check, n, a.timeout, expect)
            print(f"{label}: {n} bytes echo+source ok "
                  f"({time.monotonic() - t:.2f} s)", flush=True)
    print(f"{label}: transfers done in {time.monotonic() - t0:.1f} s",
          flush=True)
    concurrent(a.host, a.echo, nconc, a.timeout * 4)
    print(f"{label}: {nconc} concurrent connections ok; "
          f"total {time.monotonic() - t0:.1f} s", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("host")
    p.add_argument("echo", type=int)
    p.add_argument("source", type=int)
    p.add_argument("--label", default="clean")
    p.add_argument("--max-size", type=int, default=64 << 20)
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--concurrent", type=int, default=1000)
    p.add_argument("--check", type=int, default=0,
                   help="port of net_testd's verifying sink (0: none)")
    p.add_argument("--parallel", type=int, default=0,
                   help="transfers at once (0: one after the other)")
    a = p.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (8192, 8192))
    sizes = [n for n in SIZES if n <= a.max_size]
    run_all(a, a.label, sizes, a.concurrent)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # one line that names what failed
        print(f"net_tcp_client: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
