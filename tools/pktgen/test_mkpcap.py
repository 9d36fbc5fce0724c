#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Unit checks of mkpcap.py: each malformed kind carries the defect its
name promises (decoded independently by scapy), SYN floods are SYNs to the
listen port from the requested range, sessions carry valid LARQL frames,
the pcap writer round-trips bytes exactly.  Exit 1 on the first failure."""

import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mkpcap  # noqa: E402
from scapy.all import IP, TCP, Ether, rdpcap  # noqa: E402

MAC, DIP, PORT = "02:aa:00:00:00:02", "198.18.5.2", 8080


def ctx(seed=3):
    return mkpcap.Ctx(MAC, DIP, PORT, "02:aa:00:00:00:01",
                      "198.18.5.0/24", seed)


def check(cond, msg):
    if not cond:
        print("FAIL: " + msg)
        sys.exit(1)


def ip_of(f):
    return bytearray(f[14:])


def ip_cksum_ok(f):
    ihl = (f[14] & 0xf) * 4
    return mkpcap.csum(bytes(f[14:14 + ihl])) == 0


def tcp_cksum_ok(f):
    ihl = (f[14] & 0xf) * 4
    tot = struct.unpack("!H", f[16:18])[0]
    seg = bytes(f[14 + ihl:14 + tot])
    ph = bytes(f[26:34]) + struct.pack("!BBH", 0, 6, len(seg))
    return mkpcap.csum(ph + seg) == 0


def test_synflood():
    c = ctx()
    fr = mkpcap.synflood(c, 500)
    srcs = set()
    for _, f in fr:
        p = Ether(f)
        check(p[TCP].flags == "S", "synflood frame not a bare SYN")
        check(p[TCP].dport == PORT and p[IP].dst == DIP, "synflood target")
        check(p[Ether].dst == MAC, "synflood dst MAC")
        check(ip_cksum_ok(f) and tcp_cksum_ok(f), "synflood checksums")
        last = int(p[IP].src.split(".")[3])
        check(p[IP].src.startswith("198.18.5.") and 10 <= last <= 250,
              "synflood source outside .10-.250: " + p[IP].src)
        srcs.add((p[IP].src, p[TCP].sport))
    check(len(srcs) > 450, "synflood sources do not vary")


def test_kinds():
    c = ctx()
    for k in mkpcap.KINDS:
        fr = mkpcap.KINDS[k](c)
        check(len(fr) >= 1, "kind %s built no frame" % k)
    for k in mkpcap.EXPECT:
        check(k in mkpcap.KINDS, "EXPECT names unknown kind " + k)
    g = lambda k: mkpcap.KINDS[k](ctx())
    check(all(len(f) < 14 for f in g("eth_runt")), "eth_runt not short")
    check(all(Ether(f).dst != MAC for f in g("eth_not_ours")), "eth_not_ours")
    check(all(f[14] >> 4 != 4 for f in g("ip_version")), "ip_version")
    check(all(f[14] & 0xf < 5 or (f[14] & 0xf) * 4 > len(f) - 14
              for f in g("ip_ihl")), "ip_ihl")
    for f in g("ip_len"):
        tot = struct.unpack("!H", f[16:18])[0]
        check(tot < 20 or tot > len(f) - 14 or len(f) - 14 < tot,
              "ip_len frame is consistent")
    check(all(not ip_cksum_ok(f) for f in g("ip_cksum")), "ip_cksum ok")
    check(all(f[22] == 0 and ip_cksum_ok(f) for f in g("ip_ttl")), "ip_ttl")
    for f in g("ip_frag"):
        fo = struct.unpack("!H", f[20:22])[0]
        check(fo & 0x3fff, "ip_frag without MF/offset")
    check(all(f[14] & 0xf > 5 and ip_cksum_ok(f) for f in g("ip_options")),
          "ip_options")
    check(all(f[23] != 6 and f[23] != 1 for f in g("ip_proto")), "ip_proto")
    for f in g("tcp_short"):
        tot = struct.unpack("!H", f[16:18])[0]
        check(tot < 40 and len(f) - 14 == tot and ip_cksum_ok(f),
              "tcp_short")
    check(all(ip_cksum_ok(f) and not tcp_cksum_ok(f) for f in g("tcp_cksum")),
          "tcp_cksum")
    for f in g("tcp_doff"):
        check(ip_cksum_ok(f) and tcp_cksum_ok(f), "tcp_doff checksums")
        tot = struct.unpack("!H", f[16:18])[0]
        doff = f[34 + 12] >> 4
        check(doff < 5 or doff * 4 > tot - 20, "tcp_doff consistent")
    for f in g("tcp_opts"):
        check(ip_cksum_ok(f) and tcp_cksum_ok(f), "tcp_opts checksums")
        check(f[34 + 12] >> 4 > 5, "tcp_opts without options")
    for f in g("tcp_flags"):
        check(ip_cksum_ok(f) and tcp_cksum_ok(f), "tcp_flags checksums")
        check(Ether(f)[TCP].flags != "S", "tcp_flags plain SYN")
    for f in g("land"):
        p = Ether(f)
        check(p[IP].src == p[IP].dst and p[TCP].sport == p[TCP].dport,
              "land")
    for f in g("pad"):
        tot = struct.unpack("!H", f[16:18])[0]
        check(len(f) - 14 > tot and tcp_cksum_ok(f), "pad")


def test_fix_cksum():
    f = bytearray(bytes(ctx().syn()))
    f[14 + 8] = 7           # TTL: IP checksum now wrong
    f[34 + 14] ^= 0xff      # window: TCP checksum now wrong
    check(not ip_cksum_ok(f) and not tcp_cksum_ok(f), "mutation")
    mkpcap.fix_ip_cksum(f)
    mkpcap.fix_tcp_cksum(f)
    check(ip_cksum_ok(f) and tcp_cksum_ok(f), "fix_*_cksum")
    p = Ether(bytes(f))
    ic, tc = p[IP].chksum, p[TCP].chksum
    del p[IP].chksum
    del p[TCP].chksum
    q = Ether(bytes(p))
    check(q[IP].chksum == ic and q[TCP].chksum == tc, "scapy disagrees")


def test_sessions_and_pcap():
    c = ctx()
    req = mkpcap.larql_request(2, 16, 1, c.rng)
    head, body = req.split(b"\r\n\r\n", 1)
    check(b"Content-Length: %d" % len(body) in head, "content-length")
    check(struct.unpack("<IIII", body[:16]) == (2, 1, 1, 8092), "frame head")
    check(len(body) == 16 + 4 * 16, "frame payload")
    fr = mkpcap.session(c, req, True, MAC)
    data = b"".join(bytes(Ether(f)[TCP].payload) for _, f in fr)
    check(data == req, "client-only session does not carry the request")
    check(all(Ether(f)[IP].dst == DIP for _, f in fr), "client-only dst")
    full = mkpcap.session(ctx(), req, False, MAC)
    check(len(full) > len(fr), "full session lacks server packets")
    bad = mkpcap.malformed(ctx(), list(mkpcap.KINDS))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "x.pcap")
        mkpcap.write_pcap(path, bad)
        back = rdpcap(path)
        check(len(back) == len(bad), "pcap frame count")
        check(all(bytes(b) == f for b, (_, f) in zip(back, bad)),
              "pcap bytes differ")


def main():
    test_fix_cksum()
    test_synflood()
    test_kinds()
    test_sessions_and_pcap()
    print("test_mkpcap: OK")


if __name__ == "__main__":
    main()
