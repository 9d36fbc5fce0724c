-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 ffn-shard authors
--
-- Shared settings of the ffn-shard pktgen scripts (tools/pktgen/README.md).
-- Every value comes from the environment, with the defaults of
-- appliance-pktgen.conf (appliance 198.18.5.2 on TCP 8080, pktgen .1,
-- spoofed sources .10-.250 of 198.18.5.0/24):
--   FFN_PORT      pktgen port number                       "0"
--   FFN_DST_MAC   the appliance port's MAC (required for floods;
--                 reachability.lua prints it)
--   FFN_DST_IP    the appliance address                    198.18.5.2
--   FFN_SRC_IP    pktgen's address, with prefix            198.18.5.1/24
--   FFN_LISTEN    the shard's listen port                  8080
--   FFN_SRC_MIN, FFN_SRC_MAX  spoofed source range    198.18.5.10 .. .250
--   FFN_RATE      percent of line rate                     100
--   FFN_SECONDS   how long to send                         30
--
-- Loaded by the other scripts with dofile(); pktgen runs them with
-- `-f tools/pktgen/<script>.lua` or `load tools/pktgen/<script>.lua`.
-- Written for DPDK Pktgen 23.06.1 (the newest release on DPDK 22.11) and
-- for the Lua API of later releases where it differs (ffn.counters).

ffn = {}

-- Pktgen defines no printf for `-f` scripts (its own scripts get one from
-- its Pktgen.lua, which is not on a -f script's path): the kit has its
-- own, flushed so that whoever reads Pktgen's output sees each line.
function ffn.printf(fmt, ...)
	io.write(string.format(fmt, ...))
	io.flush()
end

local function env(name, default)
	local v = os.getenv(name)
	if v == nil or v == "" then
		return default
	end
	return v
end

ffn.port = env("FFN_PORT", "0")
ffn.dst_mac = env("FFN_DST_MAC", nil)
ffn.dst_ip = env("FFN_DST_IP", "198.18.5.2")
ffn.src_ip = env("FFN_SRC_IP", "198.18.5.1/24")
ffn.listen = tonumber(env("FFN_LISTEN", "8080"))
ffn.src_min = env("FFN_SRC_MIN", "198.18.5.10")
ffn.src_max = env("FFN_SRC_MAX", "198.18.5.250")
ffn.rate = tonumber(env("FFN_RATE", "100"))
ffn.seconds = tonumber(env("FFN_SECONDS", "30"))

-- The port as pktgen's stats tables index it.
ffn.pid = tonumber(ffn.port)

function ffn.need_mac()
	if ffn.dst_mac == nil then
		error("set FFN_DST_MAC to the appliance port's MAC: " ..
		      "reachability.lua prints it (FFN_DST_MAC=...), as " ..
		      "does `ip neigh show " .. ffn.dst_ip .. "` on a host " ..
		      "of its subnet after a ping")
	end
end

--
-- The port's counters, whichever Lua API this Pktgen has:
--   23.06: pktgen.portStats(ports, "port")[pid].ipackets, ...
--          and pktgen.pktStats(ports)[pid].arp_pkts / .echo_pkts;
--   26.02: pktgen.portStats(ports)[pid].curr.ipackets, ...
--          and .ext.arp_pkts / .ext.echo_pkts (pktStats is gone).
-- Told apart by the shape of what comes back, not by a version number:
-- a release that takes the old call but answers in the new shape (or the
-- reverse) is read right either way.
--
local function counters_of(p, k)
	return { ipackets = p.ipackets, opackets = p.opackets,
		 obytes = p.obytes, oerrors = p.oerrors,
		 arp = k.arp_pkts, echo = k.echo_pkts }
end

function ffn.counters()
	local ok, t = pcall(pktgen.portStats, ffn.port, "port")

	if ok and type(t) == "table" and type(t[ffn.pid]) == "table" then
		local p = t[ffn.pid]

		if p.ipackets ~= nil then
			return counters_of(p, pktgen.pktStats(ffn.port)[ffn.pid])
		end
		if type(p.curr) == "table" then
			return counters_of(p.curr, p.ext)
		end
	end
	t = pktgen.portStats(ffn.port)[ffn.pid]
	if type(t) ~= "table" or type(t.curr) ~= "table" then
		error("pktgen.portStats: neither the 23.06 nor the 26.02 shape")
	end
	return counters_of(t.curr, t.ext)
end

-- The appliance's MAC as pktgen's port knows it (learnt from an ARP
-- reply), or nil while it is unknown (all zeros). portInfo keeps it in
-- .info.l2_l3_info in 23.06 and in .l2_l3_info in 26.02.
function ffn.learnt_mac()
	local i = pktgen.portInfo(ffn.port)[ffn.pid] or {}
	local l = i.l2_l3_info or (i.info and i.info.l2_l3_info) or {}
	local m = l.dst_mac

	if m == nil or m:lower() == "00:00:00:00:00:00" then
		return nil
	end
	return m:lower()
end

-- Print the port's rates once a second for `seconds` (from its counters:
-- the same on every Pktgen), then the totals.
function ffn.watch(label, seconds)
	local c0 = ffn.counters()
	local prev = c0

	for i = 1, seconds do
		pktgen.delay(1000)
		local c = ffn.counters()
		ffn.printf("%s %3ds: tx %d pps %d Mbit/s, rx %d pps\n", label, i,
			   c.opackets - prev.opackets,
			   (c.obytes - prev.obytes) * 8 // 1000000,
			   c.ipackets - prev.ipackets)
		prev = c
	end
	ffn.printf("%s: sent %d packets, received %d, tx errors %d\n", label,
		   prev.opackets - c0.opackets, prev.ipackets - c0.ipackets,
		   prev.oerrors - c0.oerrors)
end

-- Run a pcap loaded with `-s PORT:FILE` on the command line, at ffn.rate.
function ffn.replay(label)
	pktgen.screen("off")
	pktgen.set(ffn.port, "rate", ffn.rate)
	pktgen.set(ffn.port, "count", 0)	-- forever: the pcap loops
	pktgen.pcap(ffn.port, "on")
	pktgen.clr()
	ffn.printf("%s: replaying the pcap of port %s at %g%% for %d s\n",
		   label, ffn.port, ffn.rate, ffn.seconds)
	pktgen.start(ffn.port)
	ffn.watch(label, ffn.seconds)
	pktgen.stop(ffn.port)
	pktgen.pcap(ffn.port, "off")
	ffn.printf("%s: done\n", label)
end

return ffn
