#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Frames and pcap files for stressing ffn-shard at L2-L4 (issue 5, "pktgen kit").

One frame factory serves both users:
  - tools/pktgen/*.lua replay the pcap files written here with DPDK pktgen
    (pktgen -s P:file.pcap), at line rate, against a real NIC port;
  - tests/e2e/stress_blast.py imports this module and sends the same frames
    from the kernel side of a net_tap port in CI.

Subcommands (scapy from Debian's python3-scapy; run with /usr/bin/python3):

  synflood   SYNs to the listen port from random sources of a range
  malformed  every malformed kind in KINDS (or --kinds a,b,...)
  sessions   complete TCP sessions carrying LARQL binary walk-ffn requests
  rewrite    rewrite a capture of real client traffic (tcpdump -w) to
             another server MAC/IP/port, recomputing checksums

Common options: --dst-mac (the appliance port's MAC), --dst-ip, --port,
--src-mac, --src-net (spoofed sources, CIDR or FIRST-LAST), --seed.

A pcap replay is stateless (pktgen keeps no TCP state): the server's ISN in a
recorded session is not the live server's, so replayed ACKs and requests
meet bad SYN cookies / out-of-window checks and RSTs, never served requests.
That is the point: it stresses the out-of-state paths with realistic payload
sizes while real clients (ffn-client, ffn-loadgen) are served.
"""

import argparse
import ipaddress
import random
import struct
import sys

from scapy.all import (ARP, ICMP, IP, TCP, UDP, Dot1Q, Ether, Raw,  # noqa
                       PcapReader, PcapWriter, IPOption_NOP,
                       IPOption_RR, IPOption_Timestamp)

ETH_IPV4 = 0x0800


# --------------------------------------------------------------------------
# Checksums (RFC 1071), so that mutated headers can still pass the checks
# and reach deeper code.

def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def fix_ip_cksum(frame, l2=14):
    """Recompute the IPv4 header checksum in place (bytearray)."""
    ihl = (frame[l2] & 0xf) * 4
    if ihl < 20 or len(frame) < l2 + ihl:
        return
    frame[l2 + 10:l2 + 12] = b"\0\0"
    frame[l2 + 10:l2 + 12] = struct.pack("!H", csum(bytes(frame[l2:l2 + ihl])))


def fix_tcp_cksum(frame, l2=14):
    """Recompute the TCP checksum over what the IP total length covers."""
    ihl = (frame[l2] & 0xf) * 4
    tot = struct.unpack("!H", frame[l2 + 2:l2 + 4])[0]
    seg = bytearray(frame[l2 + ihl:l2 + tot])
    if ihl < 20 or len(seg) < 18 or tot > len(frame) - l2:
        return
    seg[16:18] = b"\0\0"
    ph = bytes(frame[l2 + 12:l2 + 20]) + struct.pack("!BBH", 0, 6, len(seg))
    frame[l2 + ihl + 16:l2 + ihl + 18] = struct.pack("!H", csum(ph + bytes(seg)))


# --------------------------------------------------------------------------
# Context: who we talk to.

class Ctx:
    def __init__(self, dst_mac, dst_ip, port, src_mac, src_net, seed):
        self.dst_mac = dst_mac
        self.dst_ip = dst_ip
        self.port = port
        self.src_mac = src_mac
        self.srcs = parse_range(src_net)
        self.rng = random.Random(seed)

    def src(self):
        return self.rng.choice(self.srcs)

    def sport(self):
        return self.rng.randint(1024, 65535)

    def eth(self, dst=None):
        return Ether(dst=dst or self.dst_mac, src=self.src_mac)

    def syn(self, src=None, dport=None, opts=True):
        r = self.rng
        o = []
        if opts:
            o = [("MSS", r.choice([536, 1460, 8960]))]
            if r.random() < 0.7:
                o += [("SAckOK", b"")]
            if r.random() < 0.7:
                o += [("Timestamp", (r.getrandbits(32), 0))]
            if r.random() < 0.7:
                o += [("NOP", None), ("WScale", r.randint(0, 14))]
        return (self.eth() /
                IP(src=src or self.src(), dst=self.dst_ip, ttl=64,
                   id=r.getrandbits(16)) /
                TCP(sport=self.sport(), dport=dport or self.port,
                    seq=r.getrandbits(32), flags="S",
                    window=r.choice([1024, 29200, 65535]), options=o))


def parse_range(spec):
    """198.18.5.0/24 (hosts .10-.250 of a /24 are used to keep clear of the
    real peers) or FIRST-LAST."""
    if "-" in spec:
        a, b = spec.split("-")
        a, b = int(ipaddress.ip_address(a)), int(ipaddress.ip_address(b))
    else:
        n = ipaddress.ip_network(spec, strict=False)
        a = int(n.network_address) + (10 if n.prefixlen == 24 else 1)
        b = int(n.broadcast_address) - (5 if n.prefixlen == 24 else 1)
    if b < a:
        raise ValueError("empty source range %s" % spec)
    return [str(ipaddress.ip_address(x)) for x in range(a, b + 1)]


# --------------------------------------------------------------------------
# Malformed kinds. Each builder returns a list of frames (bytes) and names,
# in the comment, the counter of /metrics it is expected to raise
# (ffn_net_total{counter=...} or ffn_tcp_drops_total{reason=...}).

def k_eth_runt(c):
    # drop_eth_short: shorter than an Ethernet header.
    return [bytes(c.rng.getrandbits(8) for _ in range(n)) for n in (1, 6, 12, 13)]


def k_eth_not_ours(c):
    # drop_eth_not_ours: unicast to another MAC.
    f = c.syn()
    f[Ether].dst = "02:00:00:%02x:%02x:%02x" % tuple(c.rng.getrandbits(8) for _ in range(3))
    return [bytes(f)]


def k_eth_type(c):
    # drop_eth_type: IPv6, LLDP, a local experimental type.
    out = []
    for t in (0x86dd, 0x88cc, 0x88b5, 0x0000, 0xffff):
        out.append(bytes(Ether(dst=c.dst_mac, src=c.src_mac, type=t) /
                         Raw(bytes(c.rng.getrandbits(8) for _ in range(46)))))
    return out


def k_vlan(c):
    # drop_vlan: tagged frames on an untagged port, double tags, a tag
    # header cut short.
    s = c.syn()
    a = Ether(dst=c.dst_mac, src=c.src_mac) / Dot1Q(vlan=c.rng.randint(1, 4094)) / s[IP]
    b = (Ether(dst=c.dst_mac, src=c.src_mac) / Dot1Q(vlan=7) /
         Dot1Q(vlan=8) / s[IP])
    short = bytes(Ether(dst=c.dst_mac, src=c.src_mac, type=0x8100))[:14] + b"\x00"
    return [bytes(a), bytes(b), short]


def k_arp_bad(c):
    # drop_arp_bad: truncated, wrong hardware/protocol/lengths/opcode,
    # multicast sender.
    base = ARP(op=1, hwsrc=c.src_mac, psrc=c.src(), pdst=c.dst_ip)
    e = Ether(dst="ff:ff:ff:ff:ff:ff", src=c.src_mac)
    v = [bytes(e / base)[:14 + c.rng.randint(0, 27)]]
    for kw in ({"hwtype": 6}, {"ptype": 0x86dd}, {"hwlen": 8}, {"plen": 16},
               {"op": 9}, {"op": 0}, {"hwsrc": "01:00:5e:00:00:01"}):
        a = ARP(op=1, hwsrc=c.src_mac, psrc=c.src(), pdst=c.dst_ip)
        for k, val in kw.items():
            setattr(a, k, val)
        v.append(bytes(e / a)[:42])
    return v


def k_arp_not_ours(c):
    # drop_arp_not_ours: requests for other hosts of the subnet.
    t = str(ipaddress.ip_address(c.dst_ip) + 75)
    return [bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=c.src_mac) /
                  ARP(op=1, hwsrc=c.src_mac, psrc=c.src(), pdst=t))]


def _ip_bytes(c, **kw):
    return bytearray(bytes(c.syn(**kw)))


def k_ip_short(c):
    # drop_ip_short: IPv4 ethertype, fewer than 20 bytes after it.
    f = bytes(c.syn())
    return [f[:14 + n] for n in (0, 1, 8, 19)]


def k_ip_version(c):
    # drop_ip_version: version 0, 5, 6, 15 with an IPv4 ethertype.
    out = []
    for v in (0, 5, 6, 15):
        f = _ip_bytes(c)
        f[14] = (v << 4) | (f[14] & 0xf)
        fix_ip_cksum(f)
        out.append(bytes(f))
    return out


def k_ip_ihl(c):
    # drop_ip_ihl: IHL 0..4 (below the minimum), 15 over a 20-byte header
    # at the end of a frame (beyond the data).
    out = []
    for ihl in (0, 1, 4):
        f = _ip_bytes(c)
        f[14] = 0x40 | ihl
        out.append(bytes(f))
    f = bytes(c.syn(opts=False))[:34]
    f = bytearray(f)
    f[14] = 0x4f
    out.append(bytes(f))
    return out


def k_ip_len(c):
    # drop_ip_len: total length beyond the frame, below the IHL, and a
    # frame truncated in the middle of its TCP header (IP length intact).
    out = []
    for tot in (0, 19, 1500, 65535):
        f = _ip_bytes(c)
        f[16:18] = struct.pack("!H", tot)
        fix_ip_cksum(f)
        out.append(bytes(f))
    f = bytes(c.syn())
    out.append(f[:14 + 20 + 10])
    return out


def k_ip_cksum(c):
    # drop_ip_cksum: a wrong header checksum.
    f = _ip_bytes(c)
    f[24] ^= 0x5a
    return [bytes(f)]


def k_ip_ttl(c):
    # drop_ip_ttl: TTL 0 (with a correct checksum).
    f = _ip_bytes(c)
    f[22] = 0
    fix_ip_cksum(f)
    return [bytes(f)]


def k_ip_not_ours(c):
    # drop_ip_not_ours: another destination, martian sources.
    out = []
    other = str(ipaddress.ip_address(c.dst_ip) + 1)
    s = c.syn()
    s[IP].dst = other
    out.append(bytes(s))
    for src in ("0.0.0.0", "127.0.0.1", "224.0.0.1", "255.255.255.255"):
        out.append(bytes(c.syn(src=src)))
    return out


def k_ip_frag(c):
    # drop_ip_frag: first fragment (MF), middle and last fragments, a tiny
    # overlapping fragment carrying the TCP flags.
    out = []
    s = c.syn()
    for flags, frag in ((1, 0), (1, 1), (0, 3), (0, 8191)):
        f = s.copy()
        f[IP].flags = flags
        f[IP].frag = frag
        del f[IP].chksum
        out.append(bytes(f))
    return out


def k_ip_options(c):
    # drop_ip_options: NOPs, record route, timestamp, a garbage option.
    out = []
    for opts in ([IPOption_NOP()] * 4, [IPOption_RR(length=39)],
                 [IPOption_Timestamp(flg=0, length=40)],
                 [b"\xfe\x03\x00\x00"]):
        s = c.syn()
        s[IP].options = opts
        del s[IP].ihl
        del s[IP].len
        del s[IP].chksum
        out.append(bytes(s))
    return out


def k_ip_proto(c):
    # drop_ip_proto: UDP (no UDP service), GRE, SCTP, 255.
    out = [bytes(c.eth() / IP(src=c.src(), dst=c.dst_ip) /
                 UDP(sport=c.sport(), dport=c.port) / Raw(b"x" * 32))]
    for p in (47, 132, 255):
        out.append(bytes(c.eth() / IP(src=c.src(), dst=c.dst_ip, proto=p) /
                         Raw(bytes(c.rng.getrandbits(8) for _ in range(24)))))
    return out


def k_icmp_bad(c):
    # drop_icmp_bad: wrong checksum, fewer than 8 bytes of ICMP.
    f = bytearray(bytes(c.eth() / IP(src=c.src(), dst=c.dst_ip) /
                        ICMP(type=8, id=1, seq=1) / Raw(b"ping" * 8)))
    f[14 + 20 + 2] ^= 0xff
    g = bytearray(bytes(c.eth() / IP(src=c.src(), dst=c.dst_ip, len=24, proto=1) /
                        Raw(b"\x08\x00\xf7\xff")))
    return [bytes(f), bytes(g)]


def k_icmp_type(c):
    # drop_icmp_type: destination unreachable quoting a TCP header of ours
    # (an RFC 5927 style attack), redirect, timestamp, echo reply, echo
    # with code 1.
    quote = bytes(IP(src=c.dst_ip, dst=c.src()) /
                  TCP(sport=c.port, dport=c.sport(), flags="SA"))[:28]
    out = []
    for t, code in ((3, 4), (3, 3), (5, 1), (13, 0), (0, 0), (8, 1), (11, 0)):
        out.append(bytes(c.eth() / IP(src=c.src(), dst=c.dst_ip) /
                         ICMP(type=t, code=code) / Raw(quote)))
    return out


def k_icmp_echo(c):
    # icmp_echo_rx (then ARP for the spoofed source): valid echoes of
    # odd sizes.
    return [bytes(c.eth() / IP(src=c.src(), dst=c.dst_ip) /
                  ICMP(type=8, id=c.rng.getrandbits(16), seq=n) /
                  Raw(b"\xa5" * n)) for n in (0, 1, 7, 1472)]


def k_tcp_short(c):
    # ffn_tcp_drops_total{reason="short"}: a TCP segment below 20 bytes
    # with a consistent IP length.
    out = []
    for n in (0, 1, 13, 19):
        f = bytes(c.syn(opts=False))
        ip = IP(f[14:34])
        ip.len = 20 + n
        del ip.chksum
        out.append(bytes(Ether(f[:14])) [:14] + bytes(ip)[:20] + f[34:34 + n])
    return out


def k_tcp_cksum(c):
    # ffn_tcp_drops_total{reason="checksum"}.
    f = _ip_bytes(c)
    f[14 + 20 + 16] ^= 0x33
    return [bytes(f)]


def k_tcp_doff(c):
    # reason="short" (or a clean drop): data offset 0..4, and 15 (60 bytes)
    # over a 20-byte segment, both with correct checksums.
    out = []
    for doff in (0, 1, 4, 15, 6):
        f = bytearray(bytes(c.syn(opts=False)))
        f[14 + 20 + 12] = (doff << 4)
        fix_tcp_cksum(f)
        out.append(bytes(f))
    return out


def k_tcp_flags(c):
    # Impossible flag combinations to the listen port (no connection):
    # SYN+FIN, SYN+RST, SYN+FIN+RST+PSH+URG (xmas), none, FIN alone,
    # URG+PSH+FIN, SYN+ACK, RST alone, all eight bits.
    out = []
    for fl in ("SF", "SR", "FSRPAUEC", "", "F", "FPU", "SA", "R", "RA",
               "SEC", "SU"):
        s = c.syn(opts=c.rng.random() < 0.5)
        s[TCP].flags = fl
        s[TCP].ack = c.rng.getrandbits(32) if "A" in fl else 0
        s[TCP].urgptr = 0xffff if "U" in fl else 0
        del s[TCP].chksum
        out.append(bytes(s))
    return out


def k_tcp_opts(c):
    # Malformed options in SYNs: length 0, 1, past the header end, MSS of
    # length 3 / value 0, window shift 255, SACK-permitted of length 4,
    # timestamps of length 9, SACK blocks in a SYN, EOL then garbage,
    # an unknown option filling the header.
    raws = [b"\x02\x00\x05\xb4", b"\x02\x01\x05\xb4", b"\x02\x28\x05\xb4",
            b"\x02\x03\x05\x01", b"\x02\x04\x00\x00", b"\x01\x03\x03\xff",
            b"\x04\x04\x00\x00", b"\x08\x09" + b"\x00" * 6 + b"\x01\x01",
            b"\x05\x0a" + b"\x00" * 8 + b"\x01\x01",
            b"\x00\xde\xad\xbe", b"\x63\x28" + b"\x00" * 38,
            b"\x01" * 39 + b"\x08"]
    out = []
    for r in raws:
        r = r + b"\x00" * (-len(r) % 4)
        s = c.syn(opts=False)
        f = bytearray(bytes(s))
        seg = f[34:] + r
        seg[12] = ((20 + len(r)) // 4) << 4 | (seg[12] & 0xf)
        f = bytearray(f[:34]) + seg
        f[16:18] = struct.pack("!H", 20 + len(seg))
        fix_ip_cksum(f)
        fix_tcp_cksum(f)
        out.append(bytes(f))
    return out


def k_tcp_noconn(c):
    # reason="no_conn" (answered by RST): ACK, data, FIN, to the listen
    # port from a 4-tuple with no connection; a SYN to a closed port.
    out = []
    for fl, data in (("A", b""), ("PA", b"POST /v1/walk-ffn HTTP/1.1\r\n\r\n"),
                     ("FA", b"")):
        s = c.syn(opts=False)
        s[TCP].flags = fl
        s[TCP].ack = c.rng.getrandbits(32)
        s = s / Raw(data) if data else s
        del s[IP].len
        del s[IP].chksum
        del s[TCP].chksum
        out.append(bytes(s))
    out.append(bytes(c.syn(dport=c.port + 1)))
    return out


def k_tcp_syn_data(c):
    # A SYN carrying a request (data must not be delivered before the
    # handshake), and a SYN to port 0 / from port 0.
    s = c.syn() / Raw(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
    del s[IP].len
    del s[IP].chksum
    del s[TCP].chksum
    z = c.syn()
    z[TCP].sport = 0
    del z[TCP].chksum
    return [bytes(s), bytes(z), bytes(c.syn(dport=0))]


def k_land(c):
    # A SYN from our own address and port to ourselves (LAND).
    s = c.syn(src=c.dst_ip)
    s[TCP].sport = c.port
    del s[TCP].chksum
    return [bytes(s)]


def k_pad(c):
    # Valid SYN with Ethernet padding after the IP datagram (must be
    # trimmed, then answered like any SYN).
    return [bytes(c.syn()) + bytes(c.rng.getrandbits(8) for _ in range(30))]


def k_jumbo(c):
    # Frames longer than the port MTU: a 9000-byte SYN+data frame and a
    # 1515-byte one (needs the sender's MTU raised).
    out = []
    for size in (1515, 4000, 9000):
        s = c.syn(opts=False) / Raw(b"\x5a" * (size - 54))
        del s[IP].len
        del s[IP].chksum
        del s[TCP].chksum
        out.append(bytes(s))
    return out


def k_fuzz(c):
    # Random mutations of a valid SYN or ACK segment: 1-4 random bytes of
    # the IP+TCP headers, checksums recomputed half the time so that the
    # mutated header reaches the deeper checks.
    out = []
    for _ in range(8):
        f = bytearray(bytes(c.syn()))
        n = len(f) - 14
        for _ in range(c.rng.randint(1, 4)):
            i = 14 + c.rng.randrange(n)
            f[i] = c.rng.getrandbits(8)
        if c.rng.random() < 0.5:
            fix_ip_cksum(f)
            fix_tcp_cksum(f)
        out.append(bytes(f))
    return out


KINDS = {
    "eth_runt": k_eth_runt, "eth_not_ours": k_eth_not_ours,
    "eth_type": k_eth_type, "vlan": k_vlan, "arp_bad": k_arp_bad,
    "arp_not_ours": k_arp_not_ours, "ip_short": k_ip_short,
    "ip_version": k_ip_version, "ip_ihl": k_ip_ihl, "ip_len": k_ip_len,
    "ip_cksum": k_ip_cksum, "ip_ttl": k_ip_ttl, "ip_not_ours": k_ip_not_ours,
    "ip_frag": k_ip_frag, "ip_options": k_ip_options, "ip_proto": k_ip_proto,
    "icmp_bad": k_icmp_bad, "icmp_type": k_icmp_type,
    "icmp_echo": k_icmp_echo, "tcp_short": k_tcp_short,
    "tcp_cksum": k_tcp_cksum, "tcp_doff": k_tcp_doff,
    "tcp_flags": k_tcp_flags, "tcp_opts": k_tcp_opts,
    "tcp_noconn": k_tcp_noconn, "tcp_syn_data": k_tcp_syn_data,
    "land": k_land, "pad": k_pad, "jumbo": k_jumbo, "fuzz": k_fuzz,
}

# Counters of /metrics each kind must raise (exact Prometheus series
# substrings). Kinds whose effect depends on the device (runts the kernel
# may refuse to send, jumbo frames the PMD may drop) are not listed.
EXPECT = {
    "eth_not_ours": ['ffn_net_total{counter="drop_eth_not_ours"}'],
    "eth_type": ['ffn_net_total{counter="drop_eth_type"}'],
    "vlan": ['ffn_net_total{counter="drop_vlan"}'],
    "arp_bad": ['ffn_net_total{counter="drop_arp_bad"}'],
    "arp_not_ours": ['ffn_net_total{counter="drop_arp_not_ours"}'],
    "ip_short": ['ffn_net_total{counter="drop_ip_short"}'],
    "ip_version": ['ffn_net_total{counter="drop_ip_version"}'],
    "ip_ihl": ['ffn_net_total{counter="drop_ip_ihl"}'],
    "ip_len": ['ffn_net_total{counter="drop_ip_len"}'],
    "ip_cksum": ['ffn_net_total{counter="drop_ip_cksum"}'],
    "ip_ttl": ['ffn_net_total{counter="drop_ip_ttl"}'],
    "ip_not_ours": ['ffn_net_total{counter="drop_ip_not_ours"}'],
    "ip_frag": ['ffn_net_total{counter="drop_ip_frag"}'],
    "ip_options": ['ffn_net_total{counter="drop_ip_options"}'],
    "ip_proto": ['ffn_net_total{counter="drop_ip_proto"}'],
    "icmp_bad": ['ffn_net_total{counter="drop_icmp_bad"}'],
    "icmp_type": ['ffn_net_total{counter="drop_icmp_type"}'],
    "icmp_echo": ['ffn_net_total{counter="icmp_echo_rx"}'],
    "tcp_short": ['ffn_tcp_drops_total{lcore="0",reason="short"}'],
    "tcp_cksum": ['ffn_tcp_drops_total{lcore="0",reason="checksum"}'],
    "tcp_noconn": ['ffn_tcp_drops_total{lcore="0",reason="no_conn"}'],
}


def malformed(c, kinds):
    out = []
    for k in kinds:
        for f in KINDS[k](c):
            out.append((k, f))
    return out


def synflood(c, n):
    return [("syn", bytes(c.syn())) for _ in range(n)]


# --------------------------------------------------------------------------
# Sessions: the client side of complete TCP sessions carrying LARQL
# binary requests (spec/wire.md §3), with the server side synthesised so
# that the file reads as a real conversation in wireshark.

def larql_request(layer, hidden, seq_len, rng):
    vals = [rng.uniform(-1, 1) for _ in range(hidden * seq_len)]
    body = struct.pack("<IIII", layer, seq_len, 1, 8092)
    body += struct.pack("<%df" % len(vals), *vals)
    head = ("POST /v1/walk-ffn HTTP/1.1\r\nHost: %s\r\n"
            "Content-Type: application/x-larql-ffn\r\n"
            "Accept: application/x-larql-ffn-f16, application/x-larql-ffn\r\n"
            "Content-Length: %d\r\n\r\n" % ("shard", len(body)))
    return head.encode() + body


def session(c, req, client_only, server_mac, mss=1460):
    r = c.rng
    cip, cport = c.src(), c.sport()
    cisn, sisn = r.getrandbits(32), r.getrandbits(32)
    out = []

    def cl(flags, seq, ack, data=b""):
        p = (Ether(dst=c.dst_mac, src=c.src_mac) /
             IP(src=cip, dst=c.dst_ip) /
             TCP(sport=cport, dport=c.port, flags=flags, seq=seq, ack=ack,
                 window=65535))
        out.append(("session", bytes(p / Raw(data) if data else p)))

    def sv(flags, seq, ack, data=b""):
        if client_only:
            return
        p = (Ether(dst=c.src_mac, src=server_mac) /
             IP(src=c.dst_ip, dst=cip) /
             TCP(sport=c.port, dport=cport, flags=flags, seq=seq, ack=ack,
                 window=65535))
        out.append(("session", bytes(p / Raw(data) if data else p)))

    syn = (Ether(dst=c.dst_mac, src=c.src_mac) / IP(src=cip, dst=c.dst_ip) /
           TCP(sport=cport, dport=c.port, flags="S", seq=cisn,
               options=[("MSS", mss)]))
    out.append(("session", bytes(syn)))
    sv("SA", sisn, cisn + 1)
    cl("A", cisn + 1, sisn + 1)
    off = 0
    while off < len(req):
        chunk = req[off:off + mss]
        cl("PA", cisn + 1 + off, sisn + 1, chunk)
        off += len(chunk)
    resp = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
    sv("PA", sisn + 1, cisn + 1 + len(req), resp)
    cl("A", cisn + 1 + len(req), sisn + 1 + len(resp))
    cl("FA", cisn + 1 + len(req), sisn + 1 + len(resp))
    sv("FA", sisn + 1 + len(resp), cisn + 2 + len(req))
    cl("A", cisn + 2 + len(req), sisn + 2 + len(resp))
    return out


def rewrite(inp, outp, a):
    """Point a capture of real ffn-client traffic at another server: the
    packets to the original server get dst MAC/IP/port, the ones from it
    src MAC/IP/port; checksums are recomputed."""
    w = PcapWriter(outp, sync=True)
    n = 0
    for p in PcapReader(inp):
        if IP not in p or TCP not in p:
            continue
        if p[IP].dst == a.orig_ip and p[TCP].dport == a.orig_port:
            p[Ether].dst = a.dst_mac
            p[IP].dst = a.dst_ip
            p[TCP].dport = a.port
        elif p[IP].src == a.orig_ip and p[TCP].sport == a.orig_port:
            if a.client_only:
                continue
            p[Ether].src = a.dst_mac
            p[IP].src = a.dst_ip
            p[TCP].sport = a.port
        else:
            continue
        del p[IP].chksum
        del p[TCP].chksum
        w.write(Ether(bytes(p)))
        n += 1
    w.close()
    return n


def write_pcap(path, frames, pps=1000000):
    """Classic pcap, LINKTYPE_ETHERNET, frames byte for byte (runts too),
    timestamps spaced 1/pps apart."""
    with open(path, "wb") as w:
        w.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, (_, f) in enumerate(frames):
            us = i * 1000000 // pps
            w.write(struct.pack("<IIII", us // 1000000, us % 1000000,
                                len(f), len(f)))
            w.write(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cmd", choices=["synflood", "malformed", "sessions",
                                    "rewrite", "kinds"])
    ap.add_argument("-o", "--out", help="output pcap")
    ap.add_argument("--in", dest="inp", help="input pcap (rewrite)")
    ap.add_argument("--dst-mac", default="02:00:00:00:00:02")
    ap.add_argument("--dst-ip", default="198.18.5.2")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--src-mac", default="02:00:00:00:00:01")
    ap.add_argument("--src-net", default="198.18.5.0/24")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-n", "--count", type=int, default=65536,
                    help="SYNs (synflood) or sessions (sessions)")
    ap.add_argument("--kinds", default=",".join(KINDS),
                    help="malformed kinds, comma-separated (see 'kinds')")
    ap.add_argument("--repeat", type=int, default=1,
                    help="malformed: rounds of every kind (fresh randomness)")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layer", type=int, default=0)
    ap.add_argument("--seq-len", type=int, default=1)
    ap.add_argument("--client-only", action="store_true",
                    help="sessions/rewrite: only client->server packets "
                         "(what a replay sends)")
    ap.add_argument("--server-mac", default="02:00:00:00:00:02")
    ap.add_argument("--orig-ip", help="rewrite: the captured server address")
    ap.add_argument("--orig-port", type=int, default=8080)
    a = ap.parse_args()

    if a.cmd == "kinds":
        for k, fn in KINDS.items():
            print("%-14s %s" % (k, (fn.__doc__ or "").strip()))
        return 0
    if not a.out:
        ap.error("--out is required")
    c = Ctx(a.dst_mac, a.dst_ip, a.port, a.src_mac, a.src_net, a.seed)
    if a.cmd == "synflood":
        frames = synflood(c, a.count)
    elif a.cmd == "malformed":
        kinds = [k for k in a.kinds.split(",") if k]
        for k in kinds:
            if k not in KINDS:
                ap.error("unknown kind %s" % k)
        frames = []
        for _ in range(a.repeat):
            frames += malformed(c, kinds)
    elif a.cmd == "sessions":
        frames = []
        for _ in range(a.count):
            req = larql_request(a.layer, a.hidden, a.seq_len, c.rng)
            frames += session(c, req, a.client_only, a.server_mac)
    else:
        if not a.inp or not a.orig_ip:
            ap.error("rewrite needs --in and --orig-ip")
        n = rewrite(a.inp, a.out, a)
        print("%s: %d packets" % (a.out, n))
        return 0
    write_pcap(a.out, frames)
    print("%s: %d frames" % (a.out, len(frames)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
