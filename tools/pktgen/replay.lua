-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 ffn-shard authors
--
-- Replay of recorded request traffic: the client side of TCP sessions
-- carrying LARQL binary walk-ffn requests, synthesised by mkpcap.py or
-- captured from ffn-client and rewritten to this appliance:
--
--   /usr/bin/python3 tools/pktgen/mkpcap.py sessions -n 1000 --client-only \
--       --hidden 2560 --layer 0 --dst-mac MAC --dst-ip 198.18.5.2 \
--       --port 8080 -o sessions.pcap
--   # or: tcpdump -i IF -w client.pcap tcp port 8080   (while ffn-client runs)
--   #     mkpcap.py rewrite --in client.pcap --orig-ip 192.0.2.11 \
--   #         --client-only --dst-mac MAC --dst-ip 198.18.5.2 -o sessions.pcap
--   FFN_RATE=10 FFN_SECONDS=30 \
--   pktgen -l 0-2 -n 4 -a PCI -- -P -m "[1:2].0" -s 0:sessions.pcap \
--       -f tools/pktgen/replay.lua
--
-- pktgen keeps no TCP state: the replayed handshakes cannot complete
-- against a live server (its ISN differs from the recorded one), so the
-- requests end as bad SYN cookies / no_conn drops answered by RSTs, with
-- the real request sizes and segmentation. Served throughput comes from
-- ffn-loadgen or ffn-client running at the same time.

dofile("tools/pktgen/ffn_common.lua")

ffn.replay("replay")
