-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 ffn-shard authors
--
-- Runs every pktgen script of tools/pktgen against a recording stand-in
-- of pktgen's Lua library (app/lpktgenlib.c: names, argument counts and
-- the port-list / "start|inc|min|max" arguments it checks), since CI has
-- no pktgen.  Fails on an unknown function, a wrong argument count or
-- kind, a script error, or a script that never starts/stops its port.
--
--   lua5.4 tools/pktgen/check_scripts.lua      (from the repository root)

local failures = 0
local calls

local function fail(msg)
	error(msg, 3)
end

local function portlist(v)
	if type(v) ~= "string" or not (v == "all" or v:match("^[%d,%-]+$")) then
		fail("port list must be a string like \"0\" or \"all\", got " ..
		     tostring(v))
	end
end

-- name -> {nargs, checker(args)}
local function api(nargs, check)
	return function(name)
		return function(...)
			local a = table.pack(...)
			if a.n ~= nargs then
				fail(string.format("pktgen.%s: %d arguments, takes %d",
					name, a.n, nargs))
			end
			if check then
				check(name, a)
			end
			calls[#calls + 1] = name
			return nil
		end
	end
end

local function p1(name, a) portlist(a[1]) end
local function onoff(name, a)
	portlist(a[1])
	local s = a[2]
	if not (s == "on" or s == "off" or s == "enable" or s == "disable") then
		fail("pktgen." .. name .. ": state must be on/off, got " .. tostring(s))
	end
end
local function rng(name, a)
	portlist(a[1])
	local w = a[2]
	if not (w == "start" or w == "inc" or w == "min" or w == "max") then
		fail("pktgen.range." .. name .. ": what must be start|inc|min|max")
	end
end
local function setv(name, a)
	portlist(a[1])
	local ok = { count = 1, size = 1, rate = 1, burst = 1, sport = 1,
		     dport = 1, ttl = 1, seq_cnt = 1, prime = 1 }
	if not ok[a[2]] then
		fail("pktgen.set does not support " .. tostring(a[2]))
	end
	if type(a[3]) ~= "number" then
		fail("pktgen.set " .. a[2] .. ": value must be a number")
	end
end
local function addr(name, a)
	portlist(a[1])
	if a[2] ~= "src" and a[2] ~= "dst" then
		fail("pktgen." .. name .. ": src or dst")
	end
	if type(a[3]) ~= "string" then
		fail("pktgen." .. name .. ": address must be a string")
	end
end

local function stats_table(n)
	local t = { n = 1 }
	t[0] = { ipackets = n, opackets = n, ibytes = 64 * n, obytes = 64 * n,
		 ierrors = 0, oerrors = 0, rx_nombuf = 0, imissed = 0,
		 pkts_rx = n, pkts_tx = n, mbits_rx = 1, mbits_tx = 1,
		 arp_pkts = n, echo_pkts = 100 * n }
	return t
end

local function make_pktgen()
	local tick = 0
	local pg = {}
	local simple = {
		set = api(3, setv), start = api(1, p1), stop = api(1, p1),
		set_mac = api(3, addr), set_ipaddr = api(3, addr),
		set_proto = api(2, p1), set_type = api(2, p1),
		ping4 = api(1, p1), pcap = api(2, onoff),
		icmp_echo = api(2, onoff), send_arp = api(2, p1),
		screen = api(1), delay = api(1), pause = api(2), sleep = api(1),
		clear = api(1, p1), clr = api(0), set_range = api(2, onoff),
		process = api(2, onoff), capture = api(2, onoff),
		latency = api(2, onoff), page = api(1), reset = api(1, p1),
	}
	for k, f in pairs(simple) do
		pg[k] = f(k)
	end
	pg.portStats = function(pl, kind)
		portlist(pl)
		if kind ~= "port" and kind ~= "rate" then
			fail("pktgen.portStats: kind must be port or rate")
		end
		tick = tick + 1
		calls[#calls + 1] = "portStats"
		return stats_table(tick)
	end
	pg.pktStats = function(pl)
		portlist(pl)
		tick = tick + 1
		calls[#calls + 1] = "pktStats"
		return stats_table(tick)
	end
	pg.range = {}
	for _, k in ipairs({ "dst_mac", "src_mac", "dst_ip", "src_ip",
			     "src_port", "dst_port", "ttl", "vlan_id",
			     "pkt_size", "cos", "tos" }) do
		pg.range[k] = api(3, rng)(k)
	end
	pg.range.ip_proto = api(2, p1)("ip_proto")
	return pg
end

local scripts = {
	{ "reachability.lua", {} },
	{ "syn_flood.lua", { FFN_SECONDS = "3" } },
	{ "range_flood.lua", { FFN_DST_MAC = "02:00:00:00:00:02",
			       FFN_SECONDS = "3" } },
	{ "malformed.lua", { FFN_SECONDS = "2" } },
	{ "replay.lua", { FFN_RATE = "10", FFN_SECONDS = "2" } },
}

local real_getenv = os.getenv
for _, s in ipairs(scripts) do
	local name, envs = s[1], s[2]
	calls = {}
	os.getenv = function(k)
		if envs[k] ~= nil then
			return envs[k]
		end
		if k:match("^FFN_") then
			return nil
		end
		return real_getenv(k)
	end
	pktgen = make_pktgen()
	printf = function(fmt, ...) io.write(string.format(fmt, ...)) end
	ffn = nil
	local ok, err = pcall(dofile, "tools/pktgen/" .. name)
	local started, stopped = false, false
	for _, c in ipairs(calls) do
		if c == "start" then started = true end
		if c == "stop" then stopped = true end
	end
	if name == "reachability.lua" then
		started, stopped = true, true	-- sends single pings, no start
	end
	if not ok then
		print("FAIL " .. name .. ": " .. tostring(err))
		failures = failures + 1
	elseif not (started and stopped) then
		print("FAIL " .. name .. ": never started and stopped its port")
		failures = failures + 1
	else
		print("ok   " .. name .. " (" .. #calls .. " pktgen calls)")
	end
end

-- A flood without the appliance's MAC must refuse to start.
calls = {}
os.getenv = function(k) if k:match("^FFN_") then return nil end return real_getenv(k) end
pktgen = make_pktgen()
local ok = pcall(dofile, "tools/pktgen/range_flood.lua")
if ok then
	print("FAIL range_flood.lua ran without FFN_DST_MAC")
	failures = failures + 1
else
	print("ok   range_flood.lua refuses to run without FFN_DST_MAC")
end
os.getenv = real_getenv

if failures > 0 then
	os.exit(1)
end
print("check_scripts: OK")
