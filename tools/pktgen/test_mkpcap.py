#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Unit checks of mkpcap.py: each malformed kind carries the defect its
name promises (decoded independently by scapy), and raises its TABLE
counters in a model of lib/net's receive checks both as built and after
Pktgen's padding and cut (kinds marked sendable), SYN floods are SYNs to
the listen port from the requested range, echo requests are valid frames
of 60 bytes or more, sessions carry valid LARQL frames, the pcap writer
round-trips bytes exactly, the README's table is `mkpcap.py kinds
--markdown`.  Exit 1 on the first failure."""

import os
import random
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mkpcap  # noqa: E402
from scapy.all import ARP, ICMP, IP, TCP, Dot1Q, Ether, rdpcap  # noqa: E402

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


# --------------------------------------------------------------------------
# A model of what lib/net does with one received frame, in the order of its
# checks (net_lcore.c net_rx_one, net_arp.c net_arp_input, net_ipv4.c
# net_ipv4_input and icmp_input, tcp/tcp_input.c tcp_input and tcp_open.c
# tcp_input_listen), with no connection open and a listener on PORT only. It returns the counter in TABLE's names ("drop_*",
# "icmp_echo_rx", "tcp:R"), or what happens to a frame nothing drops.

def _sum16(b):
    return mkpcap.csum(bytes(b)) == 0


def _tcp_opts_ok(seg, hlen):
    # tcp_parse_opts: the lengths only; values never fail.
    i, n = 20, hlen - 20
    while n > 0:
        kind = seg[i]
        if kind == 0:
            break
        if kind == 1:
            i, n = i + 1, n - 1
            continue
        if n < 2 or seg[i + 1] < 2 or seg[i + 1] > n:
            return False
        i, n = i + seg[i + 1], n - seg[i + 1]
    return True


def appliance_sees(f, vlan=None):
    """vlan: None for an untagged port (TABLE's counters are for one),
    else the port's VLAN id."""
    if len(f) < 14:
        return "drop_eth_short"
    if f[0:6] != bytes.fromhex(MAC.replace(":", "")) and f[0:6] != b"\xff" * 6:
        return "drop_eth_not_ours"
    t, l2 = struct.unpack("!H", f[12:14])[0], 14
    if t == 0x8100:
        if (vlan is None or len(f) < 18 or
                struct.unpack("!H", f[14:16])[0] & 0xfff != vlan):
            return "drop_vlan"
        t, l2 = struct.unpack("!H", f[16:18])[0], 18
    elif vlan is not None:
        return "drop_vlan"
    d = bytes(f[l2:])
    ours = bytes(int(x) for x in DIP.split("."))
    if t == 0x0806:
        if len(d) < 28:
            return "drop_arp_bad"
        op = struct.unpack("!H", d[6:8])[0]
        if (d[0:4] != b"\x00\x01\x08\x00" or d[4] != 6 or d[5] != 4 or
                op not in (1, 2) or d[8] & 1):
            return "drop_arp_bad"
        if d[24:28] != ours or d[14:18] == ours:
            return "drop_arp_not_ours"
        return "arp"
    if t != 0x0800:
        return "drop_eth_type"
    if len(d) < 20:
        return "drop_ip_short"
    if d[0] >> 4 != 4:
        return "drop_ip_version"
    ihl = (d[0] & 0xf) * 4
    if ihl < 20 or ihl > len(d):
        return "drop_ip_ihl"
    tot = struct.unpack("!H", d[2:4])[0]
    if tot < ihl or tot > len(d):
        return "drop_ip_len"
    if not _sum16(d[:ihl]):
        return "drop_ip_cksum"
    if d[8] == 0:
        return "drop_ip_ttl"
    if (d[16:20] != ours or d[12] == 0 or d[12] >> 4 == 0xe or
            d[12:16] == b"\xff" * 4):
        return "drop_ip_not_ours"
    if struct.unpack("!H", d[6:8])[0] & 0x3fff:
        return "drop_ip_frag"
    if ihl != 20:
        return "drop_ip_options"
    d = d[:tot]                     # Ethernet padding trimmed
    if d[9] == 1:
        ic = d[20:]
        if len(ic) < 8 or not _sum16(ic):
            return "drop_icmp_bad"
        if ic[0] != 8 or ic[1] != 0:
            return "drop_icmp_type"
        return "icmp_echo_rx"
    if d[9] != 6:
        return "drop_ip_proto"      # UDP included: no UDP service
    seg = d[20:]
    if len(seg) < 20:
        return "tcp:short"
    hlen = (seg[12] >> 4) * 4
    if hlen < 20 or hlen > len(seg):
        return "tcp:short"
    ph = d[12:20] + struct.pack("!BBH", 0, 6, len(seg))
    if not _sum16(ph + seg):
        return "tcp:checksum"
    fl = seg[13]
    if not _tcp_opts_ok(seg, hlen):
        return "tcp:short"
    if fl & 4 or struct.unpack("!H", seg[2:4])[0] != PORT:
        return "tcp:no_conn"
    if fl & 0x12 == 0x10:
        return "tcp:ack"            # no_conn, or bad_cookie after a flood
    if fl & 0x13 != 0x02:
        return "tcp:no_conn"
    return "tcp:syn"


def pktgen(f, rng, stale=None):
    """What Pktgen 23.06.1 puts on the wire for a pcap frame (without -j):
    under 60 bytes padded to 60 with stale mbuf bytes (random, or those
    of the frame `stale` that used the mbuf before), over 1514 cut."""
    if len(f) < 60:
        if stale is None:
            stale = bytes(rng.getrandbits(8) for _ in range(60))
        f = f + (stale + b"\0" * 60)[len(f):60]
    return f[:1514]


def stale_frames():
    """Frames an mbuf may have held before: valid ones, the worst case,
    since their bytes can complete a cut-short header into a valid one."""
    c = ctx(99)
    arp = bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=c.src_mac) /
                ARP(op=1, hwsrc=c.src_mac, psrc=c.src(), pdst=DIP))
    return [bytes(c.syn(opts=False)), bytes(c.syn()), arp, b"",
            mkpcap.echo(c, 1, "198.18.5.1", 18)[0][1],
            bytes(Ether(dst=MAC, src=c.src_mac) / Dot1Q(vlan=7) /
                  c.syn()[IP])]


def test_model():
    # The model itself, on frames whose fate is known.
    s = bytes(ctx().syn())
    check(appliance_sees(s) == "tcp:syn", "model: a valid SYN")
    e = mkpcap.echo(ctx(), 1, "198.18.5.1")[0][1]
    check(appliance_sees(e) == "icmp_echo_rx", "model: a valid echo")


def test_pktgen_survival():
    rng = random.Random(7)
    stale = stale_frames()
    for k in mkpcap.TABLE:
        # Seeds enough that every random SYN option set shows up.
        for seed in range(12):
            fr = k.build(ctx(seed))
            seen = [appliance_sees(f) for f in fr]
            for x in k.counters:
                check(x in seen, "kind %s raises no %s (model: %s)" %
                      (k.name, x, sorted(set(seen))))
            if k.pktgen:
                continue
            # Several stale paddings per frame: the outcome is the frame's,
            # on an untagged port and on one of VLAN 7 (where a tag cut
            # short and a tag completed by padding differ).
            for f in fr:
                for vl in (None, 7):
                    was = appliance_sees(f, vl)
                    for st in [None] * 6 + stale:
                        now = appliance_sees(pktgen(f, rng, st), vl)
                        check(now == was, "kind %s: through Pktgen %s, not "
                              "%s (port VLAN %s)" % (k.name, now, was, vl))
    # A kind marked unsendable is so: Pktgen pads or cuts every frame of
    # it, and changes some outcome (vlan_runt's only on a VLAN port: on
    # an untagged one any tag is dropped, short or not).
    for k in mkpcap.TABLE:
        if not k.pktgen:
            continue
        fr = k.build(ctx())
        check(all(len(f) < 60 or len(f) > 1514 for f in fr),
              "kind %s is marked unsendable, Pktgen keeps a frame" % k.name)
        check(any(appliance_sees(pktgen(f, rng, st), vl) !=
                  appliance_sees(f, vl)
                  for f in fr for st in [None] * 6 + stale
                  for vl in (None, 7)),
              "kind %s is marked unsendable, Pktgen keeps it" % k.name)
    check(set(mkpcap.SENDABLE) ==
          {k.name for k in mkpcap.TABLE if k.pktgen is None}, "SENDABLE")


def test_echo():
    fr = mkpcap.echo(ctx(), 300, "198.18.5.1")
    ids = set()
    for _, f in fr:
        p = Ether(f)
        check(len(f) >= 60, "echo frame of %d bytes" % len(f))
        check(ip_cksum_ok(f), "echo IP checksum")
        check(mkpcap.csum(bytes(f[34:])) == 0, "echo ICMP checksum")
        check(p[IP].src == "198.18.5.1" and p[IP].dst == DIP and
              p[Ether].dst == MAC, "echo addresses")
        check(p[ICMP].type == 8 and p[ICMP].code == 0, "echo type")
        check(len(p[ICMP].payload) == 56, "echo payload")
        ids.add((p[ICMP].id, p[ICMP].seq))
    check(len(ids) == len(fr), "echo id/seq repeat")
    small = mkpcap.echo(ctx(), 2, "198.18.5.1", 18)
    check(all(len(f) >= 60 for _, f in small), "echo of 18 bytes under 60")
    try:
        mkpcap.echo(ctx(), 1, "198.18.5.1", 17)
        check(False, "echo built a frame under 60 bytes")
    except ValueError:
        pass


def test_readme_table():
    here = os.path.dirname(os.path.abspath(__file__))
    text = open(os.path.join(here, "README.md")).read()
    a, b = "<!-- kinds:begin -->\n", "<!-- kinds:end -->"
    check(a in text and b in text, "README: no kinds markers")
    table = text[text.index(a) + len(a):text.index(b)]
    out = subprocess.run([sys.executable, os.path.join(here, "mkpcap.py"),
                          "kinds", "--markdown"], check=True,
                         capture_output=True, text=True).stdout
    check(table == out, "README's kinds table differs from "
          "`mkpcap.py kinds --markdown`: paste that between the markers")


def test_kinds():
    c = ctx()
    for k in mkpcap.KINDS:
        fr = mkpcap.KINDS[k](c)
        check(len(fr) >= 1, "kind %s built no frame" % k)
    for k in mkpcap.EXPECT:
        check(k in mkpcap.KINDS, "EXPECT names unknown kind " + k)
    g = lambda k: mkpcap.KINDS[k](ctx())
    check(all(len(f) < 14 for f in g("eth_runt")), "eth_runt not short")
    check(all(len(f) < 34 for f in g("ip_runt")), "ip_runt not short")
    for f in g("ip_short"):
        tot = struct.unpack("!H", f[16:18])[0]
        check(len(f) == 60 and tot < 20 and ip_cksum_ok(f), "ip_short")
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
    test_model()
    test_pktgen_survival()
    test_echo()
    test_sessions_and_pcap()
    test_readme_table()
    print("test_mkpcap: OK")


if __name__ == "__main__":
    main()
