-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 ffn-shard authors
--
-- ARP and ICMP reachability of the appliance's port (lib/net: ARP answers
-- for its address, ICMP echo).  pktgen answers the appliance's ARP
-- requests itself (pktgen -P ... processes ARP/ICMP on its ports).
--
--   FFN_DST_IP=198.18.5.2 FFN_SRC_IP=198.18.5.1/24 \
--   pktgen -l 0-2 -n 4 -a PCI -- -P -m "[1:2].0" -f tools/pktgen/reachability.lua
--
-- Passes when the gratuitous ARP / ARP request got answers and every one
-- of the pings got its echo reply (ffn_net_total{counter="arp_req_answered"}
-- and {counter="icmp_echo_tx"} rise on the appliance).

dofile("tools/pktgen/ffn_common.lua")

local pings = 10

pktgen.screen("off")
pktgen.set_type(ffn.port, "ipv4")
pktgen.set_proto(ffn.port, "icmp")
pktgen.set_ipaddr(ffn.port, "src", ffn.src_ip)
pktgen.set_ipaddr(ffn.port, "dst", ffn.dst_ip)
if ffn.dst_mac ~= nil then
	pktgen.set_mac(ffn.port, "dst", ffn.dst_mac)
end
pktgen.process(ffn.port, "on")		-- answer ARP, count echo replies
pktgen.icmp_echo(ffn.port, "on")
pktgen.clr()

local s0 = pktgen.pktStats(ffn.port)[ffn.pid]
pktgen.send_arp(ffn.port, "g")		-- gratuitous: announce ourselves
pktgen.delay(200)
pktgen.send_arp(ffn.port, "r")		-- who-has FFN_DST_IP
pktgen.delay(500)
for i = 1, pings do
	pktgen.ping4(ffn.port)
	pktgen.delay(100)
end
pktgen.delay(1000)
local s1 = pktgen.pktStats(ffn.port)[ffn.pid]

local arp = s1.arp_pkts - s0.arp_pkts
local echo = s1.echo_pkts - s0.echo_pkts
printf("reachability: ARP packets received %d, ICMP echo packets " ..
       "received %d of %d pings\n", arp, echo, pings)
if arp < 1 or echo < pings then
	printf("reachability: FAILED (is FFN_DST_IP right, the port up, " ..
	       "the appliance running?)\n")
else
	printf("reachability: OK\n")
end
