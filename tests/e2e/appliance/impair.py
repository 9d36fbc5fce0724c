#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""A user-space impairment relay between two interfaces (this kernel has
no sch_netem): every Ethernet frame received on one is sent out of the
other after a delay with jitter, some dropped, some duplicated, some held
back longer (reordered), in both directions.

    impair.py IF_A IF_B --seconds S [--delay-ms 20] [--jitter-ms 5]
              [--loss 0.01] [--dup 0.01] [--reorder 0.05]
              [--reorder-ms 15] [--seed 1]

Prints its counters on exit (SIGTERM or after S seconds).
"""

import argparse
import heapq
import random
import select
import signal
import socket
import time

ETH_P_ALL = 0x0003


def open_if(name):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
    s.bind((name, 0))
    s.setblocking(False)
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("if_a")
    ap.add_argument("if_b")
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--delay-ms", type=float, default=20)
    ap.add_argument("--jitter-ms", type=float, default=5)
    ap.add_argument("--loss", type=float, default=0.01)
    ap.add_argument("--dup", type=float, default=0.01)
    ap.add_argument("--reorder", type=float, default=0.05)
    ap.add_argument("--reorder-ms", type=float, default=15)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    sa, sb = open_if(a.if_a), open_if(a.if_b)
    peer = {sa: sb, sb: sa}
    st = {"frames": 0, "lost": 0, "dup": 0, "reordered": 0, "sent": 0,
          "send_err": 0}
    heap = []
    seq = 0
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    signal.signal(signal.SIGINT, lambda *_: stop.__setitem__(0, True))
    end = time.monotonic() + a.seconds
    print("impair: relaying %s <-> %s" % (a.if_a, a.if_b), flush=True)
    while not stop[0]:
        now = time.monotonic()
        if now >= end:
            break
        wait = min(0.05, heap[0][0] - now) if heap else 0.05
        r, _, _ = select.select([sa, sb], [], [], max(wait, 0))
        now = time.monotonic()
        for s in r:
            for _ in range(256):
                try:
                    data, addr = s.recvfrom(65536)
                except BlockingIOError:
                    break
                if addr[2] == socket.PACKET_OUTGOING:
                    continue
                st["frames"] += 1
                if rnd.random() < a.loss:
                    st["lost"] += 1
                    continue
                d = (a.delay_ms + rnd.uniform(-a.jitter_ms, a.jitter_ms))
                if rnd.random() < a.reorder:
                    d += a.reorder_ms
                    st["reordered"] += 1
                copies = 1
                if rnd.random() < a.dup:
                    copies = 2
                    st["dup"] += 1
                for i in range(copies):
                    seq += 1
                    heapq.heappush(heap, (now + d / 1000.0 + i * 1e-4, seq,
                                          peer[s], data))
        while heap and heap[0][0] <= now:
            _, _, out, data = heapq.heappop(heap)
            try:
                out.send(data)
                st["sent"] += 1
            except OSError:
                st["send_err"] += 1
    print("impair: " + " ".join("%s %d" % kv for kv in st.items()),
          flush=True)


if __name__ == "__main__":
    main()
