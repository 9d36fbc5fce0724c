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
  malformed  every malformed kind Pktgen carries intact (or --kinds a,b,...;
             --unsendable for the others: see below)
  sessions   complete TCP sessions carrying LARQL binary walk-ffn requests
  rewrite    rewrite a capture of real client traffic (tcpdump -w) to
             another server MAC/IP/port, recomputing checksums
  echo       -n valid ICMP echo requests from --src-ip [198.18.5.1] and
             --src-mac to --dst-ip/--dst-mac, distinct id/seq, --size
             bytes of payload [56]: a reachability test replayed by Pktgen
             (its own ping4 builds broken ICMP)
  kinds      the malformed kinds: name, counter, what (--markdown: the
             README's table)

Common options: --dst-mac (the appliance port's MAC), --dst-ip, --port,
--src-mac, --src-net (spoofed sources, CIDR or FIRST-LAST), --seed.

Pktgen 23.06.1 in pcap mode pads frames under 60 bytes to 60 with stale
mbuf bytes and cuts frames over 1514 bytes to 1514 (without -j). A kind
whose defect cannot survive that is marked so in TABLE and left out of
`malformed` unless --unsendable: runts reach the appliance as 60-byte
frames of whatever the padding made them, jumbo frames as ip_len drops.

A pcap replay is stateless (pktgen keeps no TCP state): the server's ISN in a
recorded session is not the live server's, so replayed ACKs and requests
meet bad SYN cookies / out-of-window checks and RSTs, never served requests.
That is the point: it stresses the out-of-state paths with realistic payload
sizes while real clients (ffn-client, ffn-loadgen) are served.
"""

import argparse
import collections
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
# Malformed kinds: the builders. Each returns a list of frames (bytes); what
# each kind must raise, and whether Pktgen carries it, is its row of TABLE
# below, not here.
#
# Pktgen 23.06.1 in pcap mode pads a frame under 60 bytes to 60 with stale
# mbuf bytes (not zeros) and cuts one over 1514 bytes to 1514 (without -j).
# So a kind meant for Pktgen keeps its defect where neither can reach it:
# in the headers, with every length inside the frame checked against the
# IPv4 total length (lib/net trims what lies beyond it), in frames of 60
# to 1514 bytes. Kinds whose defect is the frame's end itself cannot cross
# Pktgen and say so in TABLE.

def k_eth_runt(c):
    # Shorter than an Ethernet header: AF_PACKET refuses these too (EINVAL).
    return [bytes(c.rng.getrandbits(8) for _ in range(n)) for n in (1, 6, 12, 13)]


def k_eth_not_ours(c):
    f = c.syn()
    f[Ether].dst = "02:00:00:%02x:%02x:%02x" % tuple(c.rng.getrandbits(8) for _ in range(3))
    return [bytes(f)]


def k_eth_type(c):
    # IPv6, LLDP, a local experimental type, 0 and ffff; 46 bytes of body
    # make them 60 bytes, so nothing is padded.
    out = []
    for t in (0x86dd, 0x88cc, 0x88b5, 0x0000, 0xffff):
        out.append(bytes(Ether(dst=c.dst_mac, src=c.src_mac, type=t) /
                         Raw(bytes(c.rng.getrandbits(8) for _ in range(46)))))
    return out


def k_vlan(c):
    # The port is untagged: any tag is the defect, and it sits in the
    # first 18 bytes, before anything padding could touch.
    s = c.syn()
    a = Ether(dst=c.dst_mac, src=c.src_mac) / Dot1Q(vlan=c.rng.randint(1, 4094)) / s[IP]
    b = (Ether(dst=c.dst_mac, src=c.src_mac) / Dot1Q(vlan=7) /
         Dot1Q(vlan=8) / s[IP])
    return [bytes(a), bytes(b)]


def k_vlan_runt(c):
    # A tag header cut short (1 and 3 of its 4 bytes): only a sender that
    # does not pad can deliver that.
    e = bytes(Ether(dst=c.dst_mac, src=c.src_mac, type=0x8100))[:14]
    return [e + b"\x00", e + b"\x00\x07\x08"]


def k_arp_bad(c):
    # Wrong hardware/protocol/lengths/opcode, multicast sender. 42-byte
    # frames: padding lands after the 28-byte ARP body lib/net reads.
    e = Ether(dst="ff:ff:ff:ff:ff:ff", src=c.src_mac)
    v = []
    for kw in ({"hwtype": 6}, {"ptype": 0x86dd}, {"hwlen": 8}, {"plen": 16},
               {"op": 9}, {"op": 0}, {"hwsrc": "01:00:5e:00:00:01"}):
        a = ARP(op=1, hwsrc=c.src_mac, psrc=c.src(), pdst=c.dst_ip)
        for k, val in kw.items():
            setattr(a, k, val)
        v.append(bytes(e / a)[:42])
    return v


def k_arp_runt(c):
    # An ARP body cut short (0, 7, 20, 27 of its 28 bytes).
    a = bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=c.src_mac) /
              ARP(op=1, hwsrc=c.src_mac, psrc=c.src(), pdst=c.dst_ip))
    return [a[:14 + n] for n in (0, 7, 20, 27)]


def k_arp_not_ours(c):
    # Requests for other hosts of the subnet.
    t = str(ipaddress.ip_address(c.dst_ip) + 75)
    return [bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=c.src_mac) /
                  ARP(op=1, hwsrc=c.src_mac, psrc=c.src(), pdst=t))]


def _ip_bytes(c, **kw):
    return bytearray(bytes(c.syn(**kw)))


def _frame60(f):
    # Exactly 60 bytes, padded with zeros here so that no sender pads it.
    return bytes(f[:60]) + b"\0" * max(0, 60 - len(f))


def k_ip_runt(c):
    # IPv4 ethertype, fewer than 20 bytes after it.
    f = bytes(c.syn())
    return [f[:14 + n] for n in (0, 1, 8, 19)]


def k_ip_short(c):
    # What a short datagram looks like once a wire has padded it: total
    # length 0, 1, 8, 19 (below its own 20-byte header), valid header
    # checksum, in a 60-byte frame.
    out = []
    for tot in (0, 1, 8, 19):
        f = _ip_bytes(c)
        f[16:18] = struct.pack("!H", tot)
        fix_ip_cksum(f)
        out.append(_frame60(f))
    return out


def k_ip_version(c):
    # Version 0, 5, 6, 15 with an IPv4 ethertype.
    out = []
    for v in (0, 5, 6, 15):
        f = _ip_bytes(c)
        f[14] = (v << 4) | (f[14] & 0xf)
        fix_ip_cksum(f)
        out.append(bytes(f))
    return out


def k_ip_ihl(c):
    # IHL 0..4 (below the minimum), and 15 over a 20-byte header at the end
    # of a 34-byte frame: padded to 60 it still holds 46 bytes of the 60
    # the IHL claims.
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
    # Total length beyond the frame (1500, 65535), and a 60-byte frame cut
    # inside its 100-byte TCP payload with the IP length intact: every
    # claimed length exceeds the 60 bytes any padding could make.
    out = []
    for tot in (1500, 65535):
        f = _ip_bytes(c)
        f[16:18] = struct.pack("!H", tot)
        fix_ip_cksum(f)
        out.append(bytes(f))
    s = c.syn() / Raw(b"\x5a" * 100)
    del s[IP].len
    del s[IP].chksum
    out.append(bytes(s)[:60])
    return out


def k_ip_cksum(c):
    f = _ip_bytes(c)
    f[24] ^= 0x5a
    return [bytes(f)]


def k_ip_ttl(c):
    # TTL 0 with a correct checksum.
    f = _ip_bytes(c)
    f[22] = 0
    fix_ip_cksum(f)
    return [bytes(f)]


def k_ip_not_ours(c):
    # Another destination, martian sources.
    out = []
    other = str(ipaddress.ip_address(c.dst_ip) + 1)
    s = c.syn()
    s[IP].dst = other
    out.append(bytes(s))
    for src in ("0.0.0.0", "127.0.0.1", "224.0.0.1", "255.255.255.255"):
        out.append(bytes(c.syn(src=src)))
    return out


def k_ip_frag(c):
    # First fragment (MF), middle and last fragments, a tiny overlapping
    # fragment carrying the TCP flags.
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
    # NOPs, record route, timestamp, a garbage option.
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
    # UDP (no UDP service), GRE, SCTP, 255.
    out = [bytes(c.eth() / IP(src=c.src(), dst=c.dst_ip) /
                 UDP(sport=c.sport(), dport=c.port) / Raw(b"x" * 32))]
    for p in (47, 132, 255):
        out.append(bytes(c.eth() / IP(src=c.src(), dst=c.dst_ip, proto=p) /
                         Raw(bytes(c.rng.getrandbits(8) for _ in range(24)))))
    return out


def k_icmp_bad(c):
    # Wrong checksum; 4 bytes of ICMP (the IP length says so: padding
    # after them is trimmed).
    f = bytearray(bytes(c.eth() / IP(src=c.src(), dst=c.dst_ip) /
                        ICMP(type=8, id=1, seq=1) / Raw(b"ping" * 8)))
    f[14 + 20 + 2] ^= 0xff
    g = bytearray(bytes(c.eth() / IP(src=c.src(), dst=c.dst_ip, len=24, proto=1) /
                        Raw(b"\x08\x00\xf7\xff")))
    return [bytes(f), bytes(g)]


def k_icmp_type(c):
    # Destination unreachable quoting a TCP header of ours (an RFC 5927
    # style attack), redirect, timestamp, echo reply, echo with code 1,
    # time exceeded.
    quote = bytes(IP(src=c.dst_ip, dst=c.src()) /
                  TCP(sport=c.port, dport=c.sport(), flags="SA"))[:28]
    out = []
    for t, code in ((3, 4), (3, 3), (5, 1), (13, 0), (0, 0), (8, 1), (11, 0)):
        out.append(bytes(c.eth() / IP(src=c.src(), dst=c.dst_ip) /
                         ICMP(type=t, code=code) / Raw(quote)))
    return out


def k_icmp_echo(c):
    # Valid echoes of odd sizes, up to the largest unfragmented one (1514
    # bytes: not cut); each makes the appliance ARP for the spoofed source.
    return [bytes(c.eth() / IP(src=c.src(), dst=c.dst_ip) /
                  ICMP(type=8, id=c.rng.getrandbits(16), seq=n) /
                  Raw(b"\xa5" * n)) for n in (0, 1, 7, 1472)]


def k_tcp_short(c):
    # A TCP segment below 20 bytes with a consistent IP length.
    out = []
    for n in (0, 1, 13, 19):
        f = bytes(c.syn(opts=False))
        ip = IP(f[14:34])
        ip.len = 20 + n
        del ip.chksum
        out.append(bytes(Ether(f[:14])) [:14] + bytes(ip)[:20] + f[34:34 + n])
    return out


def k_tcp_cksum(c):
    f = _ip_bytes(c)
    f[14 + 20 + 16] ^= 0x33
    return [bytes(f)]


def k_tcp_doff(c):
    # Data offset 0, 1, 4, and 15 and 6 over a 20-byte segment, with
    # correct checksums.
    out = []
    for doff in (0, 1, 4, 15, 6):
        f = bytearray(bytes(c.syn(opts=False)))
        f[14 + 20 + 12] = (doff << 4)
        fix_tcp_cksum(f)
        out.append(bytes(f))
    return out


def k_tcp_flags(c):
    # Impossible flag combinations to the listen port (no connection):
    # SYN+FIN, SYN+RST, all eight bits, none, FIN alone, URG+PSH+FIN,
    # SYN+ACK, RST, RST+ACK, SYN+ECE+CWR, SYN+URG.
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
    # an unknown option filling the header, a kind without its length
    # byte at the header end.
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
    # ACK, data, FIN to the listen port from a 4-tuple with no connection;
    # a SYN to a closed port.
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
    # handshake), a SYN from port 0, a SYN to port 0.
    s = c.syn() / Raw(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
    del s[IP].len
    del s[IP].chksum
    del s[TCP].chksum
    z = c.syn()
    z[TCP].sport = 0
    del z[TCP].chksum
    # Not c.syn(dport=0): 0 there means the listen port.
    d = c.syn()
    d[TCP].dport = 0
    del d[TCP].chksum
    return [bytes(s), bytes(z), bytes(d)]


def k_land(c):
    # A SYN from our own address and port to ourselves (LAND).
    s = c.syn(src=c.dst_ip)
    s[TCP].sport = c.port
    del s[TCP].chksum
    return [bytes(s)]


def k_pad(c):
    # A valid SYN with 30 bytes of Ethernet padding of our own after the
    # datagram: over 60 bytes, so Pktgen adds none.
    return [bytes(c.syn()) + bytes(c.rng.getrandbits(8) for _ in range(30))]


def k_jumbo(c):
    # SYN+data frames of 1515, 4000 and 9000 bytes.
    out = []
    for size in (1515, 4000, 9000):
        s = c.syn(opts=False) / Raw(b"\x5a" * (size - 54))
        del s[IP].len
        del s[IP].chksum
        del s[TCP].chksum
        out.append(bytes(s))
    return out


def k_fuzz(c):
    # 1-4 random bytes of the IP+TCP headers of a SYN, checksums recomputed
    # half the time so that the mutated header reaches the deeper checks.
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


# --------------------------------------------------------------------------
# The kinds, one row each: everything decided about a kind is here, and
# KINDS, EXPECT, SENDABLE, `mkpcap.py kinds` and the README's table derive
# from it.
#
#   name, builder, what: one line;
#   counters: what the appliance raises for the frames as built, at least
#     one of them each: "drop_*"/"icmp_*" are ffn_net_total{counter=...},
#     "tcp:R" is ffn_tcp_drops_total{reason="R"}; empty when the frames
#     are answered or the outcome is random. For a Pktgen-sendable kind
#     this is also what arrives after Pktgen's padding and cut
#     (test_mkpcap.py checks it against a model of lib/net);
#   pktgen: None when the defect crosses Pktgen intact, else why not.
#     Those kinds still serve senders that neither pad nor cut (AF_PACKET:
#     tests/e2e/stress_blast.py).

Kind = collections.namedtuple("Kind", "name build what counters pktgen")

_RUNT = ("no: under 60 bytes, Pktgen pads it with stale bytes, which "
         "then decide what arrives")

TABLE = (
    Kind("eth_runt", k_eth_runt,
         "shorter than an Ethernet header (drop_eth_short if it arrived: "
         "AF_PACKET refuses it too; lib/net's unit tests cover it)",
         (), _RUNT),
    Kind("eth_not_ours", k_eth_not_ours,
         "unicast to another MAC (a NIC passes it only in promiscuous mode)",
         ("drop_eth_not_ours",), None),
    Kind("eth_type", k_eth_type,
         "IPv6, LLDP, experimental, 0 and ffff ethertypes",
         ("drop_eth_type",), None),
    Kind("vlan", k_vlan, "802.1Q tag, double tag, on the untagged port",
         ("drop_vlan",), None),
    Kind("vlan_runt", k_vlan_runt, "802.1Q tag header cut short",
         ("drop_vlan",), _RUNT + " (they complete the tag; `vlan` covers "
         "drop_vlan)"),
    Kind("arp_bad", k_arp_bad,
         "ARP of wrong hardware/protocol/lengths/opcode, multicast sender",
         ("drop_arp_bad",), None),
    Kind("arp_runt", k_arp_runt, "ARP body cut short (under 28 bytes)",
         ("drop_arp_bad",), _RUNT + " (they complete the ARP body)"),
    Kind("arp_not_ours", k_arp_not_ours, "ARP requests for other hosts",
         ("drop_arp_not_ours",), None),
    Kind("ip_runt", k_ip_runt, "IPv4 ethertype, under 20 bytes after it",
         ("drop_ip_short",), _RUNT + " (46 bytes follow the ethertype: "
         "`ip_short` is the sendable form)"),
    Kind("ip_short", k_ip_short,
         "IPv4 total length 0-19, below its own header, in 60-byte frames",
         ("drop_ip_len",), None),
    Kind("ip_version", k_ip_version, "IP version 0, 5, 6, 15",
         ("drop_ip_version",), None),
    Kind("ip_ihl", k_ip_ihl, "IHL below 5, IHL 15 beyond the frame",
         ("drop_ip_ihl",), None),
    Kind("ip_len", k_ip_len,
         "total length beyond the frame; frame cut inside its TCP payload",
         ("drop_ip_len",), None),
    Kind("ip_cksum", k_ip_cksum, "wrong IPv4 header checksum",
         ("drop_ip_cksum",), None),
    Kind("ip_ttl", k_ip_ttl, "TTL 0", ("drop_ip_ttl",), None),
    Kind("ip_not_ours", k_ip_not_ours,
         "another destination; martian sources",
         ("drop_ip_not_ours",), None),
    Kind("ip_frag", k_ip_frag, "first, middle, last and tiny fragments",
         ("drop_ip_frag",), None),
    Kind("ip_options", k_ip_options,
         "IP options: NOPs, record route, timestamp, garbage",
         ("drop_ip_options",), None),
    Kind("ip_proto", k_ip_proto, "UDP, GRE, SCTP, protocol 255",
         ("drop_ip_proto",), None),
    Kind("icmp_bad", k_icmp_bad, "ICMP checksum wrong; 4 bytes of ICMP",
         ("drop_icmp_bad",), None),
    Kind("icmp_type", k_icmp_type,
         "unreachable quoting our TCP, redirect, timestamp, echo reply...",
         ("drop_icmp_type",), None),
    Kind("icmp_echo", k_icmp_echo, "valid echo requests of 0-1472 bytes",
         ("icmp_echo_rx",), None),
    Kind("tcp_short", k_tcp_short, "TCP segment under 20 bytes",
         ("tcp:short",), None),
    Kind("tcp_cksum", k_tcp_cksum, "wrong TCP checksum",
         ("tcp:checksum",), None),
    Kind("tcp_doff", k_tcp_doff, "data offset below 5 or beyond the segment",
         ("tcp:short",), None),
    Kind("tcp_flags", k_tcp_flags,
         "impossible flag combinations to the listen port",
         ("tcp:no_conn",), None),
    Kind("tcp_opts", k_tcp_opts,
         "malformed TCP options in SYNs (bad lengths, odd values)",
         ("tcp:short",), None),
    Kind("tcp_noconn", k_tcp_noconn,
         "ACK/data/FIN without a connection; SYN to a closed port",
         ("tcp:no_conn",), None),
    Kind("tcp_syn_data", k_tcp_syn_data,
         "SYN carrying a request; SYNs from and to port 0",
         ("tcp:no_conn",), None),
    Kind("land", k_land,
         "SYN from our own address and port (LAND; taken as a SYN)",
         (), None),
    Kind("pad", k_pad, "valid SYN with Ethernet padding (answered)",
         (), None),
    Kind("jumbo", k_jumbo,
         "SYN+data frames of 1515-9000 bytes, beyond the port's MTU "
         "(the NIC's to drop)",
         (), "no: Pktgen cuts them to 1514 (unless run with -j), which "
         "makes them `ip_len` frames"),
    Kind("fuzz", k_fuzz,
         "1-4 random bytes of a SYN's IP/TCP headers (outcome random)",
         (), None),
)

KINDS = {k.name: k.build for k in TABLE}
ROWS = {k.name: k for k in TABLE}
# The kinds `malformed` writes for Pktgen unless told otherwise.
SENDABLE = [k.name for k in TABLE if k.pktgen is None]


def series(counter):
    """The /metrics series prefix of a TABLE counter; lcore="0" is the
    network lcore of the CI appliance (tests/e2e/stress_tap.sh)."""
    if counter.startswith("tcp:"):
        return 'ffn_tcp_drops_total{lcore="0",reason="%s"}' % counter[4:]
    return 'ffn_net_total{counter="%s"}' % counter


# Counters of /metrics each kind must raise when its frames arrive as
# built (stress_tap.sh asserts them after an AF_PACKET blast).
EXPECT = {k.name: [series(x) for x in k.counters] for k in TABLE
          if k.counters}


def counter_text(counter):
    if counter.startswith("tcp:"):
        return 'ffn_tcp_drops_total{reason="%s"}' % counter[4:]
    return counter


def kinds_markdown():
    out = ["| kind | what | counter on the appliance | through Pktgen |",
           "|---|---|---|---|"]
    for k in TABLE:
        cnt = ", ".join("`%s`" % counter_text(x) for x in k.counters)
        if cnt and k.pktgen:
            cnt += " when intact (AF_PACKET)"
        out.append("| `%s` | %s | %s | %s |" % (
            k.name, k.what, cnt or "none",
            k.pktgen or "yes"))
    return "\n".join(out) + "\n"


def kinds_text():
    out = []
    for k in TABLE:
        cnt = ",".join(counter_text(x) for x in k.counters) or "-"
        out.append("%-13s %-38s %s%s" % (
            k.name, cnt, k.what,
            "" if k.pktgen is None else " [not through Pktgen]"))
    return "\n".join(out) + "\n"


def malformed(c, kinds):
    out = []
    for k in kinds:
        for f in KINDS[k](c):
            out.append((k, f))
    return out


# --------------------------------------------------------------------------
# ICMP echo requests for a pcap-based reachability test: Pktgen's own ping4
# builds broken ICMP.

def echo(c, n, src_ip, size=56):
    """n echo requests src_ip -> c.dst_ip, each a distinct (id, seq), the
    index and a ping-like pattern as payload; size >= 18 keeps the frame
    at 60 bytes or more, so Pktgen's padding cannot change it."""
    if not 18 <= size <= 1472:
        raise ValueError("echo payload of %d bytes: 18..1472" % size)
    ident = c.rng.getrandbits(16)
    pat = bytes((0x10 + j) & 0xff for j in range(size))
    out = []
    for i in range(n):
        data = struct.pack("!Q", i) + pat[8:]
        p = (Ether(dst=c.dst_mac, src=c.src_mac) /
             IP(src=src_ip, dst=c.dst_ip, ttl=64, id=i & 0xffff) /
             ICMP(type=8, code=0, id=(ident + ((i + 1) >> 16)) & 0xffff,
                  seq=(i + 1) & 0xffff) / Raw(data))
        out.append(("echo", bytes(p)))
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
                                    "rewrite", "echo", "kinds"])
    ap.add_argument("-o", "--out", help="output pcap")
    ap.add_argument("--in", dest="inp", help="input pcap (rewrite)")
    ap.add_argument("--dst-mac", default="02:00:00:00:00:02")
    ap.add_argument("--dst-ip", default="198.18.5.2")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--src-mac", default="02:00:00:00:00:01")
    ap.add_argument("--src-net", default="198.18.5.0/24")
    ap.add_argument("--src-ip", default="198.18.5.1",
                    help="echo: the source address (Pktgen's port)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-n", "--count", type=int,
                    help="SYNs (synflood) or sessions (sessions) [65536], "
                         "echo requests (echo) [64]")
    ap.add_argument("--size", type=int, default=56,
                    help="echo: ICMP payload bytes, 18-1472 [56]")
    ap.add_argument("--kinds",
                    help="malformed kinds, comma-separated (see 'kinds') "
                         "[every kind Pktgen carries intact]")
    ap.add_argument("--unsendable", action="store_true",
                    help="malformed: allow the kinds Pktgen cannot carry "
                         "intact (default: every kind), for a sender that "
                         "neither pads nor cuts, or jumbo with Pktgen -j")
    ap.add_argument("--repeat", type=int, default=1,
                    help="malformed: rounds of every kind (fresh randomness)")
    ap.add_argument("--markdown", action="store_true",
                    help="kinds: as the README's markdown table")
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
        sys.stdout.write(kinds_markdown() if a.markdown else kinds_text())
        return 0
    if not a.out:
        ap.error("--out is required")
    c = Ctx(a.dst_mac, a.dst_ip, a.port, a.src_mac, a.src_net, a.seed)
    count = a.count if a.count is not None else (
        64 if a.cmd == "echo" else 65536)
    if a.cmd == "synflood":
        frames = synflood(c, count)
    elif a.cmd == "echo":
        if not 18 <= a.size <= 1472:
            ap.error("--size %d: 18-1472 (a frame of 60-1514 bytes)" % a.size)
        frames = echo(c, count, a.src_ip, a.size)
    elif a.cmd == "malformed":
        if a.kinds is None:
            kinds = list(KINDS) if a.unsendable else SENDABLE
        else:
            kinds = [k for k in a.kinds.split(",") if k]
        for k in kinds:
            if k not in KINDS:
                ap.error("unknown kind %s" % k)
            # A kind Pktgen would change arrives as another kind: it has
            # to be asked for.
            if ROWS[k].pktgen and not a.unsendable:
                ap.error("kind %s is not for Pktgen (%s); --unsendable "
                         "keeps it" % (k, ROWS[k].pktgen[4:]))
        frames = []
        for _ in range(a.repeat):
            frames += malformed(c, kinds)
    elif a.cmd == "sessions":
        frames = []
        for _ in range(count):
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
