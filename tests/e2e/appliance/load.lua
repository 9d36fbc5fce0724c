-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 ffn-shard authors
--
-- wrk script of test_load.sh: POST one binary walk-ffn request (spec/wire.md
-- §3) and check every answer: status 200, the expected Content-Length and
-- bytes equal to a reference answer except the latency field (bytes 9-12,
-- §5.2). Answers that differ are written to FSA_OUT/diff-T-N.bin (at most
-- 20 per thread) for test_load.sh to check against pyref within the f32
-- bound (another batch composition may sum in another order); a sample of
-- equal ones too. done() prints one line test_load.sh parses:
--   fsa-load: responses R bad_status S bad_length L differ D
--
-- Environment: FSA_BODY (request body file), FSA_CT, FSA_ACCEPT,
-- FSA_EXPECT (a reference answer's bytes), FSA_OUT (a directory).

local function slurp(path)
	local f = assert(io.open(path, "rb"))
	local s = f:read("*a")
	f:close()
	return s
end

wrk.method = "POST"
wrk.body = slurp(os.getenv("FSA_BODY"))
wrk.headers["Content-Type"] = os.getenv("FSA_CT")
wrk.headers["Accept"] = os.getenv("FSA_ACCEPT")

local threads = {}
local next_id = 0

function setup(thread)
	thread:set("id", next_id)
	next_id = next_id + 1
	table.insert(threads, thread)
end

function init(args)
	expect = slurp(os.getenv("FSA_EXPECT"))
	exp_head = expect:sub(1, 8)
	exp_tail = expect:sub(13)
	out = os.getenv("FSA_OUT")
	responses, bad_status, bad_length, differ, saved = 0, 0, 0, 0, 0
end

local function save(kind, body)
	if saved >= 20 then
		return
	end
	saved = saved + 1
	local f = io.open(string.format("%s/%s-%d-%d.bin", out, kind, id,
		saved), "wb")
	if f then
		f:write(body)
		f:close()
	end
end

function response(status, headers, body)
	responses = responses + 1
	if status ~= 200 then
		bad_status = bad_status + 1
		save("status" .. status, body)
	elseif #body ~= #expect then
		bad_length = bad_length + 1
		save("length", body)
	elseif body:sub(1, 8) ~= exp_head or body:sub(13) ~= exp_tail then
		differ = differ + 1
		save("diff", body)
	elseif responses % 2000 == 1 then
		save("same", body)
	end
end

function done(summary, latency, requests)
	local r, s, l, d = 0, 0, 0, 0
	for _, t in ipairs(threads) do
		r = r + t:get("responses")
		s = s + t:get("bad_status")
		l = l + t:get("bad_length")
		d = d + t:get("differ")
	end
	local e = summary.errors
	io.write(string.format("fsa-load: responses %d bad_status %d " ..
		"bad_length %d differ %d connect %d read %d write %d " ..
		"timeout %d status %d\n", r, s, l, d, e.connect, e.read,
		e.write, e.timeout, e.status))
end
