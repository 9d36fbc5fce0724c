-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 ffn-shard authors
--
-- Random malformed frames at line rate: every kind of mkpcap.py
-- (`mkpcap.py kinds` lists them: runts, foreign MACs and ethertypes, VLAN
-- tags, bad ARP, short/bad-version/bad-IHL/bad-length/bad-checksum IPv4,
-- TTL 0, martian sources, fragments, IP options, unknown protocols, bad
-- ICMP, short TCP, bad TCP checksums and data offsets, impossible flag
-- combinations, malformed TCP options, segments without a connection,
-- SYN with data, LAND, Ethernet padding, frames beyond the MTU, random
-- header mutations), each kind in --repeat fresh random variants:
--
--   /usr/bin/python3 tools/pktgen/mkpcap.py malformed --repeat 64 \
--       --dst-mac MAC --dst-ip 198.18.5.2 --port 8080 -o malformed.pcap
--   FFN_SECONDS=30 \
--   pktgen -l 0-2 -n 4 -a PCI -- -P -m "[1:2].0" -s 0:malformed.pcap \
--       -f tools/pktgen/malformed.lua
--
-- Every kind has the drop counter it must raise in mkpcap.EXPECT
-- (ffn_net_total{counter="drop_..."}, ffn_tcp_drops_total{reason=...}).
-- Runts below 60 bytes: a NIC pads or drops them on transmit, so on a
-- real wire they arrive as padded frames (or not at all).

dofile("tools/pktgen/ffn_common.lua")

ffn.replay("malformed")
