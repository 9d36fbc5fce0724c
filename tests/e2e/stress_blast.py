#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""The CI stand-in for pktgen (issue 5, "pktgen kit"): blast SYNs from
spoofed sources and every malformed kind of tools/pktgen/mkpcap.py at the
appliance, from the kernel side of its net_tap port, for a bounded time.

Frames are built once with scapy (the same factory the pktgen pcap files
come from), then sent round-robin through one AF_PACKET socket, paced to
--pps, for --seconds or until SIGTERM. Prints one JSON line: frames sent
per kind, send errors, seconds. --syn-share 0: malformed frames only;
--kinds "": SYNs only.

usage: stress_blast.py --iface fss0 --dst-mac MAC [--dst-ip 198.18.5.2]
           [--port 8080] [--src-net 198.18.5.0/24] [--seconds 15]
           [--pps 20000] [--syn-share 0.7] [--seed 1]
"""

import argparse
import json
import os
import signal
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "pktgen"))
import mkpcap  # noqa: E402


def build(a):
    c = mkpcap.Ctx(a.dst_mac, a.dst_ip, a.port, a.src_mac, a.src_net, a.seed)
    kinds = [k for k in a.kinds.split(",") if k]
    bad = []
    for _ in range(a.rounds):
        bad += mkpcap.malformed(c, kinds)
    if a.syn_share <= 0:
        if not bad:
            raise SystemExit("stress_blast.py: no SYNs and no kinds")
        return bad
    # Enough SYNs that the sources and ISNs keep changing within the run.
    nsyn = max(1, int(len(bad) * a.syn_share / (1 - a.syn_share)))
    syn = mkpcap.synflood(c, max(nsyn, 2048))
    # Interleave: the malformed frames spread evenly through the SYNs.
    out, step = [], max(1, len(syn) // max(1, len(bad)))
    bi = 0
    for i, f in enumerate(syn):
        out.append(f)
        if i % step == 0 and bi < len(bad):
            out.append(bad[bi])
            bi += 1
    out += bad[bi:]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iface", required=True)
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--dst-ip", default="198.18.5.2")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--src-mac", default=None,
                    help="source MAC (default: the interface's)")
    ap.add_argument("--src-net", default="198.18.5.0/24")
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--pps", type=int, default=20000)
    ap.add_argument("--syn-share", type=float, default=0.7)
    ap.add_argument("--kinds", default=",".join(mkpcap.KINDS))
    ap.add_argument("--rounds", type=int, default=4,
                    help="fresh variants of every malformed kind")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pcap", help="also write the frames to this pcap")
    ap.add_argument("--ready", help="create this file when sending starts")
    a = ap.parse_args()
    if a.src_mac is None:
        with open("/sys/class/net/%s/address" % a.iface) as f:
            a.src_mac = f.read().strip()

    frames = build(a)
    if a.pcap:
        mkpcap.write_pcap(a.pcap, frames)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((a.iface, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)

    # SIGTERM ends the run early, with the report: the caller stops the
    # blast when its measurement is over.
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    sent, errs = {}, {}
    if a.ready:
        open(a.ready, "w").close()
    n = len(frames)
    t0 = time.monotonic()
    end = t0 + a.seconds
    i = total = 0
    batch = 64
    while True:
        now = time.monotonic()
        if now >= end or stop:
            break
        # Pace: never ahead of pps * elapsed.
        ahead = total - (now - t0) * a.pps
        if ahead > 0:
            time.sleep(min(ahead / a.pps, 0.01))
            continue
        for _ in range(batch):
            kind, f = frames[i]
            i = (i + 1) % n
            try:
                s.send(f)
                sent[kind] = sent.get(kind, 0) + 1
            except OSError as e:
                k = "%s:%s" % (kind, e.errno)
                errs[k] = errs.get(k, 0) + 1
            total += 1
    dt = time.monotonic() - t0
    print(json.dumps({"seconds": round(dt, 2), "frames": total,
                      "pps": int(total / dt), "sent": sent,
                      "errors": errs, "distinct_frames": n}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
