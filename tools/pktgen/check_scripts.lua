-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 ffn-shard authors
--
-- Runs every pktgen script of tools/pktgen against recording stand-ins
-- of pktgen's Lua library (app/lpktgenlib.c: names, argument counts and
-- the port-list / "start|inc|min|max" arguments it checks) as 23.06.1
-- and 26.02 define it: a fast lint beside the real thing (the pktgen-kit
-- e2e test runs the scripts in Pktgen 23.06.1 itself). Fails on an
-- unknown function, a wrong argument count or kind, a script error, a
-- script that never starts/stops its port or never prints its done line.
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

-- Counters that grow with every read, so that waits for replies end.
local function counters(n)
	return { ipackets = n, opackets = n, ibytes = 64 * n, obytes = 64 * n,
		 ierrors = 0, oerrors = 0, rx_nombuf = 0, imissed = 0 }
end

-- The Lua library of a Pktgen release: "23.06" (portStats(ports, kind),
-- pktStats, portInfo()[pid].info.l2_l3_info) or "26.02" (portStats(ports)
-- with .curr and .ext, no pktStats, portInfo()[pid].l2_l3_info).
local function make_pktgen(version)
	local tick = 0
	local arp_sent = false
	local pg = {}
	local simple = {
		set = api(3, setv), start = api(1, p1), stop = api(1, p1),
		set_mac = api(3, addr), set_ipaddr = api(3, addr),
		set_proto = api(2, p1), set_type = api(2, p1),
		ping4 = api(1, p1), pcap = api(2, onoff),
		icmp_echo = api(2, onoff),
		screen = api(1), delay = api(1), pause = api(2), sleep = api(1),
		clear = api(1, p1), clr = api(0), set_range = api(2, onoff),
		process = api(2, onoff), capture = api(2, onoff),
		latency = api(2, onoff), page = api(1), reset = api(1, p1),
		quit = api(0),
	}
	for k, f in pairs(simple) do
		pg[k] = f(k)
	end
	local send_arp = api(2, p1)("send_arp")
	pg.send_arp = function(pl, kind)
		send_arp(pl, kind)
		arp_sent = true
	end
	local function ext(n)
		return { arp_pkts = n, echo_pkts = 100 * n, ip_pkts = n,
			 ipv6_pkts = 0, vlan_pkts = 0, dropped_pkts = 0,
			 unknown_pkts = 0, tx_failed = 0 }
	end
	if version == "23.06" then
		pg.portStats = function(pl, kind)
			portlist(pl)
			if kind ~= "port" and kind ~= "rate" then
				fail("pktgen.portStats: kind must be port or rate")
			end
			tick = tick + 1
			calls[#calls + 1] = "portStats"
			return { n = 1, [0] = counters(tick) }
		end
		pg.pktStats = function(pl)
			portlist(pl)
			tick = tick + 1
			calls[#calls + 1] = "pktStats"
			return { n = 1, [0] = ext(tick) }
		end
	else
		pg.portStats = function(...)
			local a = table.pack(...)
			if a.n ~= 1 then
				fail("pktgen.portStats: 1 argument in " .. version)
			end
			portlist(a[1])
			tick = tick + 1
			calls[#calls + 1] = "portStats"
			return { n = 1, [0] = { curr = counters(tick),
						ext = ext(tick) } }
		end
	end
	pg.portInfo = function(pl)
		portlist(pl)
		calls[#calls + 1] = "portInfo"
		local l = { dst_mac = arp_sent and "02:00:00:00:00:02" or
				      "00:00:00:00:00:00" }
		if version == "23.06" then
			return { n = 1, [0] = { info = { l2_l3_info = l } } }
		end
		return { n = 1, [0] = { l2_l3_info = l } }
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

local mac = "02:00:00:00:00:02"
local scripts = {
	{ "reachability.lua", { FFN_DST_MAC = mac } },
	{ "syn_flood.lua", { FFN_SECONDS = "3" } },
	{ "range_flood.lua", { FFN_DST_MAC = mac, FFN_SECONDS = "3" } },
	{ "malformed.lua", { FFN_SECONDS = "2" } },
	{ "replay.lua", { FFN_RATE = "10", FFN_SECONDS = "2" } },
	-- Pktgen takes fractions of a percent
	{ "syn_flood.lua", { FFN_RATE = "0.25", FFN_SECONDS = "2" } },
	{ "range_flood.lua", { FFN_DST_MAC = mac, FFN_RATE = "0.5",
			       FFN_SECONDS = "2" } },
}

local real_getenv = os.getenv
local real_write = io.write
local function with_env(envs)
	os.getenv = function(k)
		if envs[k] ~= nil then
			return envs[k]
		end
		if k:match("^FFN_") then
			return nil
		end
		return real_getenv(k)
	end
end

-- Each script, against each release's library. Nothing is defined that
-- Pktgen does not define itself (no printf: Pktgen 23.06 has none for
-- -f scripts). A script passes when it runs without error, starts and
-- stops its port, and prints its "<name>: done" line.
for _, version in ipairs({ "23.06", "26.02" }) do
	for _, s in ipairs(scripts) do
		local name, envs = s[1], s[2]
		local label = name:gsub("%.lua$", "")
		local out = {}
		calls = {}
		with_env(envs)
		pktgen = make_pktgen(version)
		ffn = nil
		io.write = function(...)
			for _, v in ipairs({ ... }) do
				out[#out + 1] = tostring(v)
			end
			return io.stdout
		end
		local ok, err = pcall(dofile, "tools/pktgen/" .. name)
		io.write = real_write
		local text = table.concat(out)
		local started, stopped = false, false
		for _, c in ipairs(calls) do
			if c == "start" then started = true end
			if c == "stop" then stopped = true end
		end
		local what = version .. " " .. name
		if not ok then
			print("FAIL " .. what .. ": " .. tostring(err))
			failures = failures + 1
		elseif not (started and stopped) then
			print("FAIL " .. what .. ": never started and stopped its port")
			failures = failures + 1
		elseif not text:find(label .. ": done\n", 1, true) then
			print("FAIL " .. what .. ": no '" .. label .. ": done' line")
			failures = failures + 1
		elseif text:find("FAILED", 1, true) then
			print("FAIL " .. what .. ": " .. text)
			failures = failures + 1
		else
			print("ok   " .. what .. " (" .. #calls .. " pktgen calls)")
		end
	end
end

-- The scripts that need the appliance's MAC refuse to start without it.
for _, name in ipairs({ "range_flood.lua", "reachability.lua" }) do
	calls = {}
	with_env({})
	pktgen = make_pktgen("23.06")
	ffn = nil
	local ok, err = pcall(dofile, "tools/pktgen/" .. name)
	if ok then
		print("FAIL " .. name .. " ran without FFN_DST_MAC")
		failures = failures + 1
	elseif #calls > 0 then
		print("FAIL " .. name .. " called pktgen before refusing")
		failures = failures + 1
	else
		print("ok   " .. name .. " refuses to run without FFN_DST_MAC")
	end
end
os.getenv = real_getenv

if failures > 0 then
	os.exit(1)
end
print("check_scripts: OK")
