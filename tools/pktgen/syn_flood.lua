-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 ffn-shard authors
--
-- SYN flood at line rate on the listen port, from random sources of a
-- range, replayed from a pcap written by mkpcap.py (exact SYN flags,
-- random source address/port/ISN and options per frame):
--
--   /usr/bin/python3 tools/pktgen/mkpcap.py synflood -n 65536 \
--       --dst-mac MAC --dst-ip 198.18.5.2 --port 8080 \
--       --src-net 198.18.5.10-198.18.5.250 -o synflood.pcap
--   FFN_SECONDS=30 FFN_RATE=100 \
--   pktgen -l 0-2 -n 4 -a PCI -- -P -m "[1:2].0" -s 0:synflood.pcap \
--       -f tools/pktgen/syn_flood.lua
--
-- The appliance must keep serving real clients: the listener's SYN
-- backlog fills (ffn_tcp_connections{state="SYN_RECEIVED"} at the
-- backlog) and every further SYN is answered with a SYN cookie
-- (ffn_tcp_syncookies_total rises at the SYN rate); the SYN-ACKs to the
-- spoofed sources wait for ARP that never comes
-- (ffn_net_total{counter="drop_arp_pending_full"}).
-- range_flood.lua is the same stress from pktgen's own range generator.

dofile("tools/pktgen/ffn_common.lua")

ffn.replay("syn_flood")
