-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 ffn-shard authors
--
-- ARP and ICMP reachability of the appliance's port (lib/net: ARP answers
-- for its address, ICMP echo), with frames that are valid on the wire.
--
-- 1. ARP: a gratuitous ARP and a who-has FFN_DST_IP (pktgen.send_arp),
--    then the script waits (up to 5 s) until the reply is in and checks
--    that it came from FFN_DST_MAC.
-- 2. ICMP: FFN_PINGS [10] echo requests from the pcap loaded with
--    `-s PORT:echo.pcap` (mkpcap.py echo), and it counts the echo
--    replies. Not pktgen.ping4: up to Pktgen 26.02 it builds its ICMP
--    header 8 bytes late (type 99, bad checksum), which the appliance
--    rightly drops as drop_icmp_bad.
--
-- Pktgen keeps send_arp's frames in its TX buffer until the port next
-- transmits, so the first echo request goes out to carry them: it is
-- sent alone, and the others only once the ARP reply is in.
--
--   /usr/bin/python3 tools/pktgen/mkpcap.py echo -n 10 --dst-mac MAC \
--       --dst-ip 198.18.5.2 --src-ip 198.18.5.1 -o echo.pcap
--   FFN_DST_MAC=MAC FFN_DST_IP=198.18.5.2 FFN_SRC_IP=198.18.5.1/24 \
--   pktgen -l 0-2 -n 4 -a PCI -- -P -m "[1:2].0" -s 0:echo.pcap \
--       -f tools/pktgen/reachability.lua
--
-- Ends with `reachability: OK` or `reachability: FAILED: why`, then
-- `reachability: done`; on the appliance
-- ffn_net_total{counter="arp_req_answered"} and {counter="icmp_echo_tx"}
-- rise.

dofile("tools/pktgen/ffn_common.lua")
ffn.need_mac()

local pings = tonumber(os.getenv("FFN_PINGS") or "10")
local p = ffn.port
local failed = nil

-- Wait up to ms for cond(), polling every 100 ms.
local function wait_for(ms, cond)
	for i = 1, ms // 100 do
		if cond() then
			return true
		end
		pktgen.delay(100)
	end
	return cond()
end

pktgen.screen("off")
pktgen.set_type(p, "ipv4")
pktgen.set_proto(p, "icmp")
pktgen.set_ipaddr(p, "src", ffn.src_ip)
pktgen.set_ipaddr(p, "dst", ffn.dst_ip)
pktgen.process(p, "on")		-- answer ARP, count ARP replies
pktgen.icmp_echo(p, "on")	-- count echo replies
pktgen.pcap(p, "on")
pktgen.set(p, "rate", 1)
pktgen.clr()

local c0 = ffn.counters()
pktgen.send_arp(p, "g")		-- gratuitous: announce ourselves
pktgen.send_arp(p, "r")		-- who-has FFN_DST_IP
pktgen.delay(100)		-- the TX lcore takes them into its buffer
pktgen.set(p, "count", 1)
pktgen.start(p)			-- the first echo request, and the ARP frames
local mac = nil
wait_for(5000, function()
	mac = ffn.learnt_mac()
	return mac ~= nil
end)
local c1 = ffn.counters()
if mac == nil then
	failed = "no ARP reply from " .. ffn.dst_ip .. " in 5 s (is " ..
		 "FFN_DST_IP right, the port up, the appliance running?)"
else
	ffn.printf("reachability: ARP packets received %d; %s is at %s\n",
		   c1.arp - c0.arp, ffn.dst_ip, mac)
	if ffn.dst_mac:lower() ~= mac then
		failed = "FFN_DST_MAC is " .. ffn.dst_mac .. " but " ..
			 ffn.dst_ip .. " answered from " .. mac
	end
end

if failed == nil then
	if pings > 1 then
		pktgen.set(p, "count", pings - 1)
		pktgen.start(p)
	end
	wait_for(5000, function()
		return ffn.counters().echo - c0.echo >= pings
	end)
	local c2 = ffn.counters()
	ffn.printf("reachability: %d echo replies received of %d\n",
		   c2.echo - c0.echo, pings)
	if c2.echo - c0.echo < pings then
		failed = "echo replies missing (was the echo pcap of " ..
			 "mkpcap.py loaded with -s " .. p .. ":echo.pcap?)"
	end
end
pktgen.stop(p)
pktgen.pcap(p, "off")

if failed ~= nil then
	ffn.printf("reachability: FAILED: %s\n", failed)
else
	ffn.printf("reachability: OK\n")
end
ffn.printf("reachability: done\n")
