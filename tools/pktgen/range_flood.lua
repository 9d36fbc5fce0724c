-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 ffn-shard authors
--
-- TCP flood on the listen port from pktgen's range generator: source
-- address over FFN_SRC_MIN..FFN_SRC_MAX, source port over 1024..65535,
-- 64-byte frames, at FFN_RATE percent of line rate.  No pcap needed, so
-- it reaches full line rate on any port.
--
--   FFN_DST_MAC=MAC FFN_SECONDS=30 \
--   pktgen -l 0-2 -n 4 -a PCI -- -P -m "[1:2].0" -f tools/pktgen/range_flood.lua
--
-- The TCP flags of pktgen's generated TCP frames depend on its version
-- (check one frame with `page range` or a capture; 23.06.1 sends ACKs).
-- A bare ACK flood is answered with a RST per segment, counted as
-- ffn_tcp_drops_total{reason="no_conn"}; within 128 s of a SYN-backlog
-- overflow (a SYN flood just before) the listener checks each ACK as a
-- possible SYN cookie first, and counts {reason="bad_cookie"} instead
-- (lib/net/tcp, as Linux). A SYN flood is syn_flood.lua, whose frames
-- are exact.

dofile("tools/pktgen/ffn_common.lua")
ffn.need_mac()

local p = ffn.port

pktgen.screen("off")
pktgen.set_type(p, "ipv4")
pktgen.set_proto(p, "tcp")
pktgen.range.ip_proto(p, "tcp")
pktgen.set_ipaddr(p, "src", ffn.src_ip)
pktgen.set_ipaddr(p, "dst", ffn.dst_ip)

pktgen.range.dst_mac(p, "start", ffn.dst_mac)

pktgen.range.dst_ip(p, "start", ffn.dst_ip)
pktgen.range.dst_ip(p, "inc", "0.0.0.0")
pktgen.range.dst_ip(p, "min", ffn.dst_ip)
pktgen.range.dst_ip(p, "max", ffn.dst_ip)

pktgen.range.src_ip(p, "start", ffn.src_min)
pktgen.range.src_ip(p, "inc", "0.0.0.1")
pktgen.range.src_ip(p, "min", ffn.src_min)
pktgen.range.src_ip(p, "max", ffn.src_max)

pktgen.range.dst_port(p, "start", ffn.listen)
pktgen.range.dst_port(p, "inc", 0)
pktgen.range.dst_port(p, "min", ffn.listen)
pktgen.range.dst_port(p, "max", ffn.listen)

-- An increment coprime to the range size walks every port in a
-- scattered order, so consecutive frames differ in address and port.
pktgen.range.src_port(p, "start", 1024)
pktgen.range.src_port(p, "inc", 7919)
pktgen.range.src_port(p, "min", 1024)
pktgen.range.src_port(p, "max", 65535)

pktgen.range.pkt_size(p, "start", 64)
pktgen.range.pkt_size(p, "inc", 0)
pktgen.range.pkt_size(p, "min", 64)
pktgen.range.pkt_size(p, "max", 64)

pktgen.set(p, "rate", ffn.rate)
pktgen.set(p, "count", 0)
pktgen.set_range(p, "on")
pktgen.clr()
ffn.printf("range_flood: TCP to %s:%d from %s..%s at %g%% for %d s\n",
       ffn.dst_ip, ffn.listen, ffn.src_min, ffn.src_max, ffn.rate,
       ffn.seconds)
pktgen.start(p)
ffn.watch("range_flood", ffn.seconds)
pktgen.stop(p)
pktgen.set_range(p, "off")
ffn.printf("range_flood: done\n")
