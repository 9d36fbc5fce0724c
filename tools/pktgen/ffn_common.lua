-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 ffn-shard authors
--
-- Shared settings of the ffn-shard pktgen scripts (tools/pktgen/README.md).
-- Every value comes from the environment, with the defaults of
-- appliance-pktgen.conf (appliance 198.18.5.2 on TCP 8080, pktgen .1,
-- spoofed sources .10-.250 of 198.18.5.0/24):
--   FFN_PORT      pktgen port number                       "0"
--   FFN_DST_MAC   the appliance port's MAC (required for floods)
--   FFN_DST_IP    the appliance address                    198.18.5.2
--   FFN_SRC_IP    pktgen's address, with prefix            198.18.5.1/24
--   FFN_LISTEN    the shard's listen port                  8080
--   FFN_SRC_MIN, FFN_SRC_MAX  spoofed source range    198.18.5.10 .. .250
--   FFN_RATE      percent of line rate                     100
--   FFN_SECONDS   how long to send                         30
--
-- Loaded by the other scripts with dofile(); pktgen runs them with
-- `-f tools/pktgen/<script>.lua` or `load tools/pktgen/<script>.lua`.

ffn = {}

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
		error("set FFN_DST_MAC to the appliance port's MAC " ..
		      "(ffn-shard logs it; or run reachability.lua first)")
	end
end

-- Print the port counters once a second for `seconds`, then the totals.
function ffn.watch(label, seconds)
	local p0 = pktgen.portStats(ffn.port, "port")[ffn.pid]
	for i = 1, seconds do
		pktgen.delay(1000)
		local r = pktgen.portStats(ffn.port, "rate")[ffn.pid]
		printf("%s %3ds: tx %d pps %d Mbit/s, rx %d pps\n", label, i,
		       r.pkts_tx, r.mbits_tx, r.pkts_rx)
	end
	local p1 = pktgen.portStats(ffn.port, "port")[ffn.pid]
	printf("%s: sent %d packets, received %d, tx errors %d\n", label,
	       p1.opackets - p0.opackets, p1.ipackets - p0.ipackets,
	       p1.oerrors - p0.oerrors)
end

-- Run a pcap loaded with `-s PORT:FILE` on the command line, at ffn.rate.
function ffn.replay(label)
	pktgen.screen("off")
	pktgen.set(ffn.port, "rate", ffn.rate)
	pktgen.set(ffn.port, "count", 0)	-- forever: the pcap loops
	pktgen.pcap(ffn.port, "on")
	pktgen.clr()
	printf("%s: replaying the pcap of port %s at %d%% for %d s\n", label,
	       ffn.port, ffn.rate, ffn.seconds)
	pktgen.start(ffn.port)
	ffn.watch(label, ffn.seconds)
	pktgen.stop(ffn.port)
	pktgen.pcap(ffn.port, "off")
end

return ffn
