#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""The checks of the fan-out front's e2e test (issue 19), one group per
run; test_front.sh runs them in order against the front (or, with
--self-test, against mock_front.py).

The oracle is a pyref that owns the whole model (--ref): the answer the
front gives for a request must be the one that pyref gives for the same
body, asked with the Accept that yields the format the front negotiated
(spec/wire.md §5.1 with the front's own switches: f16 on, i8 on), byte
for byte except the frame's latency_ms (bytes 8..12: the front's own wall
time, checked finite and >= 0).

One exception, by construction of the shards (README.md): an i8 answer
for a layer of --f16-layers (owned by a shard that may answer f16 to an
i8 ask: the replica B without LARQL_I8_WIRE) may instead be the i8 of the
f16-decoded f32 answer (spec/wire.md §5.3 applied to what that shard
sent), which can differ from the i8 of the f32 answer by a step. Any
other departure fails.

    front_check.py --front H:P --ref H:P --model DIR [...] GROUP [ARGS]

GROUP: basic, formats, json, errors, takeover, reuse, stall, wait, auth,
auth-shard. With --front-key KEY every request to the front carries
"Authorization: Bearer KEY" (but those of auth that test its absence).
Each failure prints what differed; the exit status is 1 if any did.
"""

import argparse
import json
import math
import os
import signal
import socket
import struct
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "appliance"))
sys.path.insert(0, os.path.join(HERE, "..", "pyref"))
import fsa  # noqa: E402
import wire  # noqa: E402

BATCH = wire.BATCH
# What the front negotiates with the client (§5.1, f16 on, i8 on), and
# what the client sends for each Accept variant (None: no Accept at all).
ACCEPTS = [("none", None, "f32"),
           ("f32", wire.CT_F32, "f32"),
           ("f16-list", wire.ACCEPT["f16"], "f16"),
           ("i8-list", wire.ACCEPT["i8"], "i8")]


def hostport(s):
    h, _, p = s.rpartition(":")
    return h, int(p)


def parse_range(s):
    if not s:
        return set()
    a, _, b = s.partition("-")
    return set(range(int(a), int(b or a) + 1))


class Client:
    """A kept-alive connection, reopened when the server closed it. key:
    "Authorization: Bearer KEY" on each request that has no Authorization
    of its own."""

    def __init__(self, addr, timeout=10.0, key=None):
        self.host, self.port = hostport(addr)
        self.addr = addr
        self.timeout = timeout
        self.key = key
        self.c = None

    def req(self, method, path, body=b"", headers=()):
        headers = list(headers)
        if self.key and not any(k.lower() == "authorization"
                                for k, _ in headers):
            headers.append(("Authorization", "Bearer " + self.key))
        for attempt in (0, 1):
            fresh = self.c is None
            try:
                if self.c is None:
                    self.c = fsa.Http(self.host, self.port, self.timeout)
                r = self.c.request(method, path, body, list(headers))
            except (fsa.Closed, ConnectionResetError, BrokenPipeError):
                self.close()
                # A stale kept-alive connection: once more on a new one.
                if fresh or attempt:
                    raise
                continue
            except Exception:
                self.close()
                raise
            if (r.header("connection") or "").lower() == "close":
                self.close()
            return r
        raise AssertionError("unreachable")

    def close(self):
        if self.c is not None:
            try:
                self.c.close()
            except OSError:
                pass
        self.c = None


def binary_headers(ct, accept):
    h = [("Content-Type", ct)]
    if accept is not None:
        h.append(("Accept", accept))
    return h


def payload_size(fmt, seq_len, nv, hidden):
    if fmt == "f32":
        return 4 * nv
    if fmt == "f16":
        return 2 * nv
    return max(seq_len, 1) * (8 + hidden)


def split_frame(body, fmt, hidden):
    """A §5.2 frame as (batch, latency bytes, [(header, payload)]), the
    header being [layer][seq_len] (single) or [layer][seq_len][num_values]
    (batch). Raises ValueError on a malformed frame."""
    if len(body) < 12:
        raise ValueError("frame of %d bytes (< 12)" % len(body))
    first, = struct.unpack_from("<I", body, 0)
    if first != BATCH:
        seq_len, = struct.unpack_from("<I", body, 4)
        want = payload_size(fmt, seq_len, seq_len * hidden, hidden)
        if len(body) - 12 != want:
            raise ValueError("single frame: payload %d bytes, want %d"
                             % (len(body) - 12, want))
        return False, body[8:12], [(body[0:8], body[12:])]
    n, = struct.unpack_from("<I", body, 4)
    off = 12
    out = []
    for i in range(n):
        if off + 12 > len(body):
            raise ValueError("batch frame: result %d header past the end"
                             % i)
        _, seq_len, nv = struct.unpack_from("<III", body, off)
        size = payload_size(fmt, seq_len, nv, hidden)
        if off + 12 + size > len(body):
            raise ValueError("batch frame: result %d payload past the end"
                             % i)
        out.append((body[off:off + 12], body[off + 12:off + 12 + size]))
        off += 12 + size
    if off != len(body):
        raise ValueError("batch frame: %d bytes left over" % (len(body) - off))
    return True, body[8:12], out


def merge_frame(batch, results, latency_ms, fmt=None):
    """The inverse of split_frame (used by mock_front.py)."""
    lat = struct.pack("<f", latency_ms)
    if not batch:
        h, p = results[0]
        return h + lat + p
    out = struct.pack("<II", BATCH, len(results)) + lat
    for h, p in results:
        out += h + p
    return out


class Env:
    def __init__(self, a):
        self.a = a
        self.front = Client(a.front, timeout=a.timeout, key=a.front_key)
        self.ref = Client(a.ref, timeout=30)
        idx = json.load(open(os.path.join(a.model, "index.json")))
        self.hidden = idx["hidden_size"]
        self.num_layers = idx["num_layers"]
        self.f16_layers = parse_range(a.f16_layers)
        self.ck = fsa.Checker("front " + a.group)

    def x(self, seq_len, seed):
        rng = np.random.default_rng(seed)
        return rng.standard_normal((seq_len, self.hidden)).astype(np.float32)

    # ---- the expected answer of a binary request ----------------------

    def expect(self, body, ct, fmt):
        """What the front must answer: (ref frame, per result the list of
        acceptable payloads)."""
        acc = wire.ACCEPT[fmt] if fmt != "f32" else None
        r = self.ref.req("POST", "/v1/walk-ffn", body,
                         binary_headers(ct, acc))
        if r.status != 200 or r.header("content-type") != wire.CT[fmt]:
            raise RuntimeError("the reference pyref answered %d %s: %r"
                               % (r.status, r.header("content-type"),
                                  r.body[:200]))
        batch, _, res = split_frame(r.body, fmt, self.hidden)
        cands = [[p] for _, p in res]
        layers = [struct.unpack_from("<I", h, 0)[0] for h, _ in res]
        if fmt == "i8" and any(L in self.f16_layers for L in layers):
            r32 = self.ref.req("POST", "/v1/walk-ffn", body,
                               binary_headers(ct, None))
            _, _, res32 = split_frame(r32.body, "f32", self.hidden)
            for i, (h, p) in enumerate(res32):
                if layers[i] not in self.f16_layers:
                    continue
                y = np.frombuffer(p, "<f4").reshape(-1, self.hidden)
                alt = wire.encode_payload(wire.roundtrip(y, "f16"), "i8")
                if alt != cands[i][0]:
                    cands[i].append(alt)
        return r.body, batch, res, cands

    def compare(self, what, r, fmt, expected):
        """r: the front's answer; expected: Env.expect's. True if right;
        else one FAIL line naming the first difference. The count of
        results that matched the f16-narrowed alternative is added to
        self.via_f16."""
        ref_body, batch, res, cands = expected
        ck = self.ck
        if r.status != 200:
            return ck.check(False, "%s: status %d, want 200" % (what,
                            r.status), repr(r.body[:300]))
        ct = r.header("content-type")
        if ct != wire.CT[fmt]:
            return ck.check(False, "%s: Content-Type %r, want exactly %r"
                            % (what, ct, wire.CT[fmt]))
        try:
            gbatch, glat, gres = split_frame(r.body, fmt, self.hidden)
        except ValueError as e:
            return ck.check(False, "%s: malformed %s frame: %s"
                            % (what, fmt, e), r.body[:64].hex())
        lat, = struct.unpack("<f", glat)
        if not (math.isfinite(lat) and lat >= 0):
            return ck.check(False, "%s: latency_ms %r, want finite >= 0"
                            % (what, lat))
        if gbatch != batch:
            return ck.check(False, "%s: %s frame, want %s (%d results)"
                            % (what, "batch" if gbatch else "single",
                               "batch" if batch else "single", len(res)))
        if len(gres) != len(res):
            return ck.check(False, "%s: %d results, want %d"
                            % (what, len(gres), len(res)))
        for i, ((gh, gp), (h, _), cs) in enumerate(zip(gres, res, cands)):
            if gh != h:
                return ck.check(False, "%s: result %d header %s, want %s "
                                "([layer][seq_len]%s)" % (
                                    what, i, gh.hex(), h.hex(),
                                    "[num_values]" if batch else ""))
            if gp not in cs:
                a = np.frombuffer(gp, np.uint8)
                b = np.frombuffer(cs[0], np.uint8)
                d = np.nonzero(a != b)[0] if a.size == b.size else []
                return ck.check(False, "%s: result %d (layer %d) payload "
                                "differs from the reference's %s" % (
                                    what, i, struct.unpack_from("<I", h)[0],
                                    fmt), "%d of %d bytes differ, first at "
                                "%s" % (len(d), b.size,
                                        d[0] if len(d) else "-")
                                + ("" if a.size == b.size else
                                   "; got %d bytes, want %d"
                                   % (a.size, b.size)))
            if len(cs) > 1 and gp == cs[1] and gp != cs[0]:
                self.via_f16 += 1
        return ck.check(True, what)

    via_f16 = 0

    def metrics(self):
        r = self.front.req("GET", "/metrics")
        if r.status != 200:
            raise RuntimeError("GET /metrics: %d %r" % (r.status,
                                                        r.body[:200]))
        return r.body.decode("utf-8", "replace")


def samples(text, name_has, label_has=None):
    """[(line, value)] of /metrics samples whose metric name contains one
    of name_has and whose line contains label_has."""
    out = []
    for ln in text.splitlines():
        if not ln or ln.startswith("#"):
            continue
        name = ln.split("{", 1)[0].split(" ", 1)[0]
        if not any(s in name for s in name_has):
            continue
        if label_has is not None and label_has not in ln:
            continue
        try:
            out.append((ln, float(ln.rsplit(" ", 1)[1])))
        except (IndexError, ValueError):
            pass
    return out


# ---- groups ---------------------------------------------------------------

def g_basic(e):
    ck = e.ck
    r = e.front.req("GET", "/v1/health")
    ok = r.status == 200
    try:
        j = json.loads(r.body)
    except ValueError:
        j = None
    ck.check(ok and isinstance(j, dict) and j.get("status") == "ok",
             "GET /v1/health: 200, JSON with \"status\":\"ok\"",
             "got %d %r" % (r.status, r.body[:200]))
    r = e.front.req("GET", "/v1/stats")
    try:
        j = json.loads(r.body)
    except ValueError:
        j = None
    if not ck.check(r.status == 200 and isinstance(j, dict),
                    "GET /v1/stats: 200 with a JSON object",
                    "got %d %r" % (r.status, r.body[:300])):
        return
    ck.eq(j.get("hidden_size"), e.hidden, "/v1/stats hidden_size")
    ck.eq(j.get("layers"), e.num_layers, "/v1/stats layers (the model's)")
    if e.a.shard_a:
        s = Client(e.a.shard_a).req("GET", "/v1/stats")
        sj = json.loads(s.body)
        for k in ("model", "family", "mode", "features_per_layer", "dtype"):
            ck.eq(j.get(k), sj.get(k), "/v1/stats %s as shard %s says"
                  % (k, e.a.shard_a))


SHAPES = [("single layer 1 (shard A)", [1], False),
          ("single layer 6 (shard C)", [6], False),
          ("batch form, one layer 5 (C)", [5], True),
          ("batch [0,2,3] (A only)", [0, 2, 3], True),
          ("batch [7,4] (C only)", [7, 4], True),
          ("batch [5,1,5,7,0] (both, duplicate)", [5, 1, 5, 7, 0], True),
          ("batch K=0", [], True)]


def g_formats(e):
    seed = 100
    n = 0
    for req_fmt in ("f32", "f16", "i8"):
        for acc_name, accept, fmt in ACCEPTS:
            for shape, layers, batch in SHAPES:
                for seq in (1, 3):
                    seed += 1
                    x = e.x(seq, seed)
                    body, ct = wire.encode_request(layers, x, req_fmt,
                                                   batch=batch)
                    what = ("%s body, Accept %s -> %s, %s, seq_len %d"
                            % (req_fmt, acc_name, fmt, shape, seq))
                    exp = e.expect(body, ct, fmt)
                    r = e.front.req("POST", "/v1/walk-ffn", body,
                                    binary_headers(ct, accept))
                    e.compare(what, r, fmt, exp)
                    n += 1
    print("  %d binary requests compared with the reference (%d i8 results "
          "matched the f16-narrowed form)" % (n, e.via_f16))
    if e.a.no_metrics:
        print("  (no /metrics on this target: the narrowing counter is not "
              "checked)")
        return
    text = e.metrics()
    s = samples(text, ("narrow",))
    total = sum(v for _, v in s)
    e.ck.check(total > 0, "/metrics: a narrowing counter > 0 after answers "
               "narrowed from shard C's f32 (sum %g over %d samples)"
               % (total, len(s)), "samples: %r\n--- /metrics:\n%s"
               % ([ln for ln, _ in s], text))


def json_req(layers, x, full, extra=None):
    o = {"layers": layers} if isinstance(layers, list) else {"layer": layers}
    o.update({"residual": [float(v) for v in np.asarray(x).ravel()],
              "seq_len": int(np.atleast_2d(x).shape[0]),
              "full_output": full})
    if extra:
        o.update(extra)
    return json.dumps(o).encode()


JSON_H = [("Content-Type", "application/json")]


def g_json(e):
    ck = e.ck

    def both(body):
        r = e.front.req("POST", "/v1/walk-ffn", body, JSON_H)
        w = e.ref.req("POST", "/v1/walk-ffn", body, JSON_H)
        if w.status != 200:
            raise RuntimeError("reference: %d %r" % (w.status, w.body[:200]))
        try:
            j = json.loads(r.body)
        except ValueError:
            j = None
        return r, j, json.loads(w.body)

    def lat_ok(what, j):
        v = j.get("latency_ms") if isinstance(j, dict) else None
        return ck.check(isinstance(v, (int, float)) and
                        not isinstance(v, bool) and math.isfinite(v) and
                        v >= 0, "%s: top-level latency_ms a number >= 0"
                        % what, "got %r" % (v,))

    # Single shard: forwarded unchanged, so the shard's answer (the
    # reference's, latency aside) in the shard's shape.
    for what, layers, seq, full in [
            ("JSON layer 2 (A), full_output, seq_len 2", 2, 2, True),
            ("JSON layer 6 (C), full_output", 6, 1, True),
            ("JSON layer 1 (A), features", 1, 1, False),
            ("JSON layers [3,1] (A only), full_output", [3, 1], 2, True),
            ("JSON layers [7,4] (C only), features", [7, 4], 1, False)]:
        x = e.x(seq, 900 + seq + (layers if isinstance(layers, int)
                                  else sum(layers)))
        r, j, w = both(json_req(layers, x, full))
        if not ck.check(r.status == 200 and isinstance(j, dict),
                        "%s: 200 JSON" % what,
                        "got %d %r" % (r.status, r.body[:300])):
            continue
        lat_ok(what, j)
        j.pop("latency_ms", None)
        w.pop("latency_ms", None)
        ck.check(j == w, "%s: the shard's answer unchanged (the reference's "
                 "but latency_ms)" % what, "got  %s\nwant %s"
                 % (json.dumps(j)[:400], json.dumps(w)[:400]))

    # Spanning both shards: merged as the reference router does.
    for what, layers, seq, full in [
            ("JSON layers [5,1,6,0] full_output, seq_len 2",
             [5, 1, 6, 0], 2, True),
            ("JSON layers [5,1,5,0] (duplicate) full_output",
             [5, 1, 5, 0], 1, True),
            ("JSON layers [6,2,4] features", [6, 2, 4], 1, False),
            ("JSON layers [3,4] full_output", [3, 4], 3, True)]:
        x = e.x(seq, 950 + seq + sum(layers))
        r, j, w = both(json_req(layers, x, full))
        if not ck.check(r.status == 200 and isinstance(j, dict),
                        "%s: 200 JSON" % what,
                        "got %d %r" % (r.status, r.body[:300])):
            continue
        ck.eq(sorted(j), ["latency_ms", "results"],
              "%s: top-level keys (router merge: no seq_len)" % what)
        lat_ok(what, j)
        got = j.get("results")
        want = sorted(w["results"], key=lambda o: o["layer"])
        if not ck.check(isinstance(got, list) and len(got) == len(want),
                        "%s: %d results" % (what, len(want)),
                        "got %r" % (got if not isinstance(got, list)
                                    else len(got),)):
            continue
        ck.eq([o.get("layer") for o in got], [o["layer"] for o in want],
              "%s: results stable-sorted by layer" % what)
        for i, (g, o) in enumerate(zip(got, want)):
            g = dict(g)
            # An element from a one-layer sub-request is that shard's
            # whole single answer, latency_ms included (copied as is).
            if "latency_ms" in g:
                lat_ok("%s result %d" % (what, i), g)
                g.pop("latency_ms")
            if g != o:
                keys = sorted(set(g) | set(o))
                diff = [k for k in keys if g.get(k) != o.get(k)]
                ck.check(False, "%s: result %d (layer %s) differs from the "
                         "reference's in %s" % (what, i, o["layer"], diff),
                         "got  %s\nwant %s" % (json.dumps(g)[:300],
                                               json.dumps(o)[:300]))
                break
        else:
            ck.check(True, "%s: every result equals the reference's" % what)


def err_json(r):
    try:
        j = json.loads(r.body)
        return j if isinstance(j, dict) else None
    except ValueError:
        return None


def g_errors(e):
    ck = e.ck
    msg = "binary: body too short (need \u2265 16 bytes)"
    r = e.front.req("POST", "/v1/walk-ffn", b"\x01" * 10,
                    binary_headers(wire.CT_F32, None))
    ck.check(r.status == 400 and err_json(r) == {"error": msg} and
             (r.header("content-type") or "").startswith("application/json"),
             "binary body of 10 bytes: 400 {\"error\":\"%s\"}" % msg,
             "got %d %s %r" % (r.status, r.header("content-type"), r.body))
    x = e.x(1, 7)
    for what, layers, batch in [("binary single layer 8", [8], False),
                                ("binary batch [1,8]", [1, 8], True),
                                ("binary batch [9,5]", [9, 5], True)]:
        body, ct = wire.encode_request(layers, x, "f32", batch=batch)
        r = e.front.req("POST", "/v1/walk-ffn", body,
                        binary_headers(ct, None))
        j = err_json(r)
        ck.check(r.status == 400 and j is not None and
                 "out of range" in str(j.get("error")),
                 "%s: 400 with an error that says \"out of range\"" % what,
                 "got %d %r" % (r.status, r.body[:300]))
    r = e.front.req("POST", "/v1/walk-ffn", json_req([2, 8], x, True),
                    JSON_H)
    j = err_json(r)
    ck.check(r.status == 400 and j is not None and
             "out of range" in str(j.get("error")),
             "JSON layers [2,8]: 400 with an error that says \"out of range\"",
             "got %d %r" % (r.status, r.body[:300]))
    for path in ("/v1/nope", "/v2/walk-ffn"):
        r = e.front.req("GET", path)
        ck.check(r.status == 404, "GET %s: 404" % path,
                 "got %d %r" % (r.status, r.body[:200]))
    # A shard's 4xx passes through unchanged: the same as asking A.
    if e.a.shard_a:
        bad = json_req(1, np.zeros(e.hidden + 3, np.float32), True)
        r = e.front.req("POST", "/v1/walk-ffn", bad, JSON_H)
        w = Client(e.a.shard_a).req("POST", "/v1/walk-ffn", bad, JSON_H)
        ck.check(w.status == 400, "shard A refuses a residual of %d values "
                 "for layer 1 (the test's premise)" % (e.hidden + 3),
                 "got %d %r" % (w.status, w.body))
        ck.check(r.status == w.status and r.body == w.body and
                 r.header("content-type") == w.header("content-type"),
                 "JSON layer 1, residual of the wrong length: the shard's "
                 "%d passes through unchanged" % w.status,
                 "front %d %s %r\nshard %d %s %r" % (
                     r.status, r.header("content-type"), r.body,
                     w.status, w.header("content-type"), w.body))


# ---- replicas, failures ---------------------------------------------------

def cases_low(e, n=6):
    """Binary requests for layers in 0-3 with their expectations."""
    out = []
    shapes = [[1], [0, 3, 2], [2, 2], [3], [0, 1, 2, 3], [1, 0]]
    fmts = ["f32", "f16", "i8"]
    for i in range(n):
        layers = shapes[i % len(shapes)]
        _, accept, fmt = ACCEPTS[i % len(ACCEPTS)]
        x = e.x(1 + i % 2, 3000 + i)
        body, ct = wire.encode_request(layers, x, fmts[i % 3])
        out.append(("layers %s, %s body, %s answer" % (layers, fmts[i % 3],
                                                       fmt),
                    body, ct, accept, fmt, e.expect(body, ct, fmt)))
    return out


def shard_err_ok(r, label):
    j = err_json(r)
    return j is not None and str(j.get("error", "")).startswith(
        "shard http://%s: " % label)


def g_takeover(e):
    ck = e.ck
    a = e.a
    cases = cases_low(e)
    label = a.shard_label
    n = 0
    t_kill = None
    n502 = 0
    bad = 0
    late502 = 0
    per = {"before": 0, "after": 0}
    e.via_f16 = 0
    t0 = time.time()
    while True:
        # Paced: about --n requests over a few seconds, the kill among
        # them (not all before the front's first health probe after it).
        time.sleep(max(0.0, a.pace_ms / 1000 - (time.time() - t0))
                   if n else 0)
        if n == a.kill_after and t_kill is None:
            os.kill(a.kill_pid, signal.SIGKILL)
            t_kill = time.time()
            print("  SIGKILL to pid %d (shard %s) after %d requests"
                  % (a.kill_pid, label, n), flush=True)
        what, body, ct, accept, fmt, exp = cases[n % len(cases)]
        what = "request %d (%s)" % (n, what)
        t0 = time.time()
        try:
            r = e.front.req("POST", "/v1/walk-ffn", body,
                            binary_headers(ct, accept))
        except Exception as ex:
            bad += 1
            ck.check(False, "%s: no answer: %s: %s" % (what,
                     type(ex).__name__, ex))
            r = None
        n += 1
        if r is not None:
            if r.status == 200:
                fails = len(ck.fails)
                # compare() records a check for every answer: keep the
                # report short by counting the good ones here.
                if e.compare(what, r, fmt, exp):
                    ck.n -= 1
                    per["before" if t_kill is None else "after"] += 1
                elif len(ck.fails) > fails:
                    bad += 1
            elif (r.status == 502 and t_kill is not None and
                  t0 < t_kill + 2.0 and shard_err_ok(r, label) and
                  b"mid-answer" in r.body):
                # Only an answer cut by the kill may fail: a request
                # refused, reset or closed before any answer byte is
                # sent again to the replica (issue 19), never a 502.
                n502 += 1
                print("  %s: 502 %s (%.3f s after the kill)"
                      % (what, r.body.decode("utf-8", "replace"),
                         t0 - t_kill))
            else:
                bad += 1
                if r.status == 502:
                    late502 += 1
                ck.check(False, "%s: %d %r (%s)" % (
                    what, r.status, r.body[:300],
                    "before the kill" if t_kill is None else
                    "%.3f s after the kill" % (t0 - t_kill)))
            if bad > 20:
                print("  (more than 20 failures: stopping the loop)")
                break
        if n >= a.n and t_kill is not None and time.time() > t_kill + 3.0:
            break
    dt = time.time() - (t_kill or time.time())
    print("  %d requests: %d right before the kill, %d right after it, %d "
          "502 (allowed <= %d within 2 s of the kill), %d wrong; loop ran "
          "%.1f s past the kill; %d i8 results were the f16-narrowed form "
          "(from B)" % (n, per["before"], per["after"], n502, a.max_502, bad,
                        dt, e.via_f16))
    ck.check(bad == 0, "takeover: every answer right (or one of the few "
             "allowed 502s)", "%d bad, %d of them 502 later than 2 s after "
             "the kill or with another body" % (bad, late502))
    ck.check(n502 <= a.max_502, "takeover: %d 502s <= %d" % (n502, a.max_502))
    ck.check(per["after"] >= 50, "takeover: >= 50 right answers after the "
             "kill (got %d)" % per["after"])
    if a.no_metrics:
        return
    text = e.metrics()
    s = samples(text, ("error", "fail"), label)
    ck.check(any(v > 0 for _, v in s), "/metrics: errors counted for shard %s"
             % label, "samples with %s and error/fail in the name: %r\n"
             "--- /metrics:\n%s" % (label, [ln for ln, _ in s], text))


def served(addr):
    r = Client(addr, timeout=5).req("GET", "/v1/stats")
    return int(json.loads(r.body)["requests_served"])


def g_reuse(e):
    """Shard A (restarted) gets requests again within --seconds."""
    ck = e.ck
    a = e.a
    cases = cases_low(e)
    base = served(a.shard_a)
    t0 = time.time()
    n = 0
    now = base
    while time.time() - t0 < a.seconds:
        what, body, ct, accept, fmt, exp = cases[n % len(cases)]
        r = e.front.req("POST", "/v1/walk-ffn", body,
                        binary_headers(ct, accept))
        if e.compare("after the restart, request %d (%s)" % (n, what), r,
                     fmt, exp):
            ck.n -= 1
        n += 1
        if n % 5 == 0:
            now = served(a.shard_a)
            if now > base:
                break
        time.sleep(0.02)
    now = served(a.shard_a)
    ck.check(now > base, "restarted shard %s used again by the front within "
             "%.0f s (its requests_served %d -> %d over %d requests, %.1f s)"
             % (a.shard_a, a.seconds, base, now, n, time.time() - t0))


def g_stall(e):
    """Shard C's address holds a server that never answers."""
    ck = e.ck
    a = e.a
    label = a.shard_label
    x = e.x(1, 77)
    results = {}

    def stalled(key, layers, batch):
        body, ct = wire.encode_request(layers, x, "f32", batch=batch)
        c = Client(a.front, timeout=a.hop_ms / 1000 + 10)
        t0 = time.time()
        try:
            r = c.req("POST", "/v1/walk-ffn", body, binary_headers(ct, None))
        except Exception as ex:
            r = ex
        results[key] = (r, time.time() - t0)
        c.close()

    ts = [threading.Thread(target=stalled, args=("layer 5", [5], False)),
          threading.Thread(target=stalled, args=("batch [1,5]", [1, 5],
                                                 True))]
    for t in ts:
        t.start()
    # Meanwhile, layers of 0-3 are answered.
    cases = cases_low(e)
    n = good = 0
    t0 = time.time()
    while any(t.is_alive() for t in ts) or n < 10:
        what, body, ct, accept, fmt, exp = cases[n % len(cases)]
        r = e.front.req("POST", "/v1/walk-ffn", body,
                        binary_headers(ct, accept))
        if e.compare("during the stall, request %d (%s)" % (n, what), r,
                     fmt, exp):
            ck.n -= 1
            good += 1
        n += 1
        if time.time() - t0 > a.hop_ms / 1000 + 15:
            break
        time.sleep(0.02)
    ck.check(good == n and n >= 10, "during the stall: %d of %d requests for "
             "layers 0-3 right" % (good, n))
    for t in ts:
        t.join(a.hop_ms / 1000 + 15)
    lim = (a.hop_ms + a.slack_ms) / 1000
    for key in ("layer 5", "batch [1,5]"):
        r, dt = results.get(key, (None, None))
        if not isinstance(r, fsa.Resp):
            ck.check(False, "stall, %s: no answer (%r after %s s)"
                     % (key, r, dt))
            continue
        ck.check(r.status == 504 and shard_err_ok(r, label),
                 "stall, %s: 504 {\"error\":\"shard http://%s: ...\"}"
                 % (key, label), "got %d %r after %.2f s"
                 % (r.status, r.body[:300], dt))
        ck.check(0.8 * a.hop_ms / 1000 <= dt <= lim,
                 "stall, %s: answered at the deadline (%.2f s; want %.2f.."
                 "%.2f s: hop_timeout_ms %d + %d ms slack)"
                 % (key, dt, 0.8 * a.hop_ms / 1000, lim, a.hop_ms,
                    a.slack_ms))


def g_wait(e):
    """Poll until binary requests for --layers are answered right."""
    layers = [int(v) for v in e.a.layers.split(",")]
    x = e.x(1, 55)
    body, ct = wire.encode_request(layers, x, "f32")
    exp = e.expect(body, ct, "f32")
    t0 = time.time()
    last = None
    while time.time() - t0 < e.a.seconds:
        try:
            r = e.front.req("POST", "/v1/walk-ffn", body,
                            binary_headers(ct, None))
            last = "%d %r" % (r.status, r.body[:200])
            if r.status == 200:
                ok = e.compare("wait: layers %s" % layers, r, "f32", exp)
                print("  layers %s answered after %.1f s" % (
                    layers, time.time() - t0))
                return ok
        except Exception as ex:
            last = "%s: %s" % (type(ex).__name__, ex)
        time.sleep(0.2)
    e.ck.check(False, "layers %s not answered 200 within %.0f s" % (
        layers, e.a.seconds), "last: %s" % last)


# ---- keys -------------------------------------------------------------------

def bearer(key):
    return [("Authorization", "Bearer " + key)]


def refused_ok(r):
    """The appliance's 401 (lib/shard, issue 4): empty body, the Bearer
    challenge (docs/HTTP-CONFORMANCE.md A-401)."""
    return (r.status == 401 and r.body == b"" and
            (r.header("www-authenticate") or "").lower().startswith("bearer"))


def g_auth(e):
    """The front with api_key (--front-key) before shards that want their
    own keys: A and B --key-a (from shard_key = env:...), C --key-c (from
    its shard_key IPV4:PORT = file:...)."""
    ck = e.ck
    a = e.a
    # The premise: the shards refuse a request without their key (so the
    # front's answers below prove it sent each shard its own).
    for label, addr, key in (("A", a.shard_a, a.key_a),
                             ("C", a.shard_label, a.key_c)):
        c = Client(addr)
        r = c.req("GET", "/v1/stats")
        ck.check(refused_ok(r), "shard %s (%s) without a key: 401 (the "
                 "premise)" % (label, addr), "got %r" % r)
        r = c.req("GET", "/v1/stats", headers=bearer(key))
        ck.check(r.status == 200, "shard %s with its key %r: 200 (the "
                 "premise)" % (label, key), "got %r" % r)
        c.close()
    x = e.x(2, 4242)
    layers = [5, 1, 5, 7, 0]
    body, ct = wire.encode_request(layers, x, "f32", batch=True)
    bare = Client(a.front, timeout=a.timeout)
    for what, auth in (("no Authorization", []),
                       ("a wrong key", bearer(a.front_key + "x")),
                       ("the shards' key", bearer(a.key_a)),
                       ("Basic scheme", [("Authorization",
                                          "Basic " + a.front_key)]),
                       ("the key without a scheme",
                        [("Authorization", a.front_key)])):
        for method, path, b, h in (
                ("POST", "/v1/walk-ffn", body, binary_headers(ct, None)),
                ("GET", "/v1/stats", b"", []),
                ("GET", "/v1/nope", b"", [])):
            r = bare.req(method, path, b, h + auth)
            ck.check(refused_ok(r), "%s %s, %s: 401, empty body, "
                     "WWW-Authenticate: Bearer" % (method, path, what),
                     "got %d %s %r" % (r.status, r.headers, r.body[:200]))
    r = bare.req("GET", "/v1/health")
    ck.check(r.status == 200 and (err_json(r) or {}).get("status") == "ok",
             "GET /v1/health without a key: 200 \"status\":\"ok\" (exempt)",
             "got %d %r" % (r.status, r.body[:200]))
    bare.close()
    # With the key: the batch over both ranges, as R answers it.
    for acc_name, accept, fmt in ACCEPTS:
        exp = e.expect(body, ct, fmt)
        r = e.front.req("POST", "/v1/walk-ffn", body,
                        binary_headers(ct, accept))
        e.compare("Bearer %s, batch %s (A or B and C), Accept %s -> %s"
                  % (a.front_key, layers, acc_name, fmt), r, fmt, exp)
    r = e.front.req("GET", "/v1/stats")
    j = err_json(r)
    ck.check(r.status == 200 and j is not None and
             j.get("hidden_size") == e.hidden,
             "GET /v1/stats with the key: 200, hidden_size %d (forwarded "
             "with the shards' key)" % e.hidden,
             "got %d %r" % (r.status, r.body[:300]))


def g_auth_shard(e):
    """The front sends shard C (--shard-label) a key C refuses
    (--wrong-key); A and B get theirs.

    What the front does then (lib/front/front_up.c, front_call.c): its
    probe of C is GET /v1/stats (C is not up yet), C answers 401, and
    probe_answered takes every non-200 as a failure: up_fail leaves C
    FR_DOWN, never FR_UP (ffn_front_shard_up 0), probed again at the
    backoff. But FR_DOWN is "not known to be down for good": fr_sub_start,
    finding no healthy replica of 4-7, still sends the sub-request to a
    replica in FR_DOWN (only FR_MISMATCH is never tried), with the same
    wrong key; C answers it 401, and fr_sub_answered passes a shard's
    non-200 answer to the client unchanged (call_pass: status, type, body;
    the server adds the 401's WWW-Authenticate: Bearer as it does to its
    own). So: no 502, no 503 (that is only for /v1/stats with no shard up,
    or a binary walk before any shard's stats came, and A's did), but C's
    own 401, whether the walk needs C alone or C and A."""
    ck = e.ck
    a = e.a
    x = e.x(1, 4343)
    c = Client(a.shard_label)
    cases = []
    for what, layers, batch in (("binary layer 5 (C only)", 5, False),
                                ("binary batch [1,5] (A or B, and C)",
                                 [1, 5], True)):
        body, ct = wire.encode_request(layers, x, "f32", batch=batch)
        cases.append((what, body, binary_headers(ct, None)))
    cases.append(("JSON layer 6 (C), full_output", json_req(6, x, True),
                  JSON_H))
    for what, body, h in cases:
        w = c.req("POST", "/v1/walk-ffn", body, h + bearer(a.wrong_key))
        ck.check(refused_ok(w), "%s: shard C with the key %r: 401 (the "
                 "premise)" % (what, a.wrong_key), "got %r" % w)
        r = e.front.req("POST", "/v1/walk-ffn", body, h)
        hs = ("content-type", "www-authenticate")
        ck.check(r.status == w.status and r.body == w.body and
                 all(r.header(k) == w.header(k) for k in hs),
                 "%s through the front: C's %d passed through unchanged "
                 "(status, body, %s)" % (what, w.status, ", ".join(hs)),
                 "front %d %r %r\nshard %d %r %r" % (
                     r.status, [(k, r.header(k)) for k in hs], r.body[:200],
                     w.status, [(k, w.header(k)) for k in hs], w.body[:200]))
    c.close()
    # Layers 0-3 (A, B: the right key) are served meanwhile.
    body, ct = wire.encode_request([0, 3], x, "f32")
    exp = e.expect(body, ct, "f32")
    e.compare("binary batch [0,3] (A or B) with C refusing the front",
              e.front.req("POST", "/v1/walk-ffn", body,
                          binary_headers(ct, None)), "f32", exp)
    if a.no_metrics:
        return
    s = samples(e.metrics(), ("ffn_front_shard_up",), '"%s"' % a.shard_label)
    if not s:
        print("  (no ffn_front_shard_up for %s on this target)"
              % a.shard_label)
        return
    ck.check(all(v == 0 for _, v in s), "ffn_front_shard_up for %s is 0: "
             "its /v1/stats probe is refused (401)" % a.shard_label,
             "samples: %r" % [ln for ln, _ in s])


def in_flight(text):
    """ffn_requests_in_flight of the front's /metrics (the scrape itself
    is one of them)."""
    for ln in text.splitlines():
        if ln.startswith("ffn_requests_in_flight{"):
            return int(float(ln.rsplit(" ", 1)[1]))
    raise RuntimeError("no ffn_requests_in_flight in /metrics")


def g_concurrent(e):
    """--clients kept-alive clients at once, each --per requests of every
    shape (both ranges, duplicates, seq_len 1 and 2, every format), plus
    clients that hang up before their answer: more sub-requests than the
    shards' pipelines hold, so they queue in the front (issue 19:
    bounded connections). Every answer right; afterwards no request of
    the front still in flight (none lost, none leaked)."""
    ck = e.ck
    a = e.a
    x1, x2 = e.x(1, 4100), e.x(2, 4101)
    cases = []
    shapes = [[5], [1], [5, 1, 5, 7, 0], [0, 3, 2], [7, 4], [6, 2]]
    for i, layers in enumerate(shapes * 2):
        fin = ["f32", "f16", "i8"][i % 3]
        _, accept, fmt = ACCEPTS[i % len(ACCEPTS)]
        body, ct = wire.encode_request(layers, x1 if i % 2 else x2, fin,
                                       batch=len(layers) > 1 or i % 4 == 0)
        cases.append(("layers %s, %s body, %s answer" % (layers, fin, fmt),
                      body, ct, accept, fmt, e.expect(body, ct, fmt)))
    lock = threading.Lock()
    stat = {"right": 0, "wrong": 0, "hung_up": 0}
    first_bad = []

    def client(k):
        c = Client(a.front, timeout=a.timeout, key=a.front_key)
        for j in range(a.per):
            if (k + j) % 7 == 3:
                # a client gone before its answer: the front's call
                # must still end and free what it holds
                what, body, ct, accept, fmt, exp = cases[j % len(cases)]
                host, port = hostport(a.front)
                s = socket.create_connection((host, port), timeout=5)
                s.sendall(("POST /v1/walk-ffn HTTP/1.1\r\nHost: f\r\n"
                           "Content-Type: %s\r\nContent-Length: %d\r\n"
                           "%s\r\n" % (ct, len(body), "" if not a.front_key
                                       else "Authorization: Bearer %s\r\n"
                                       % a.front_key)).encode() + body)
                s.close()
                with lock:
                    stat["hung_up"] += 1
                continue
            what, body, ct, accept, fmt, exp = cases[(k * 5 + j) %
                                                     len(cases)]
            what = "client %d request %d (%s)" % (k, j, what)
            try:
                r = c.req("POST", "/v1/walk-ffn", body,
                          binary_headers(ct, accept))
                sub = fsa.Checker("concurrent")
                env = Env.__new__(Env)
                env.__dict__.update(e.__dict__)
                env.ck = sub
                env.via_f16 = 0
                good = env.compare(what, r, fmt, exp)
                msg = None if good else (sub.fails[0] if sub.fails else
                                         "wrong")
            except Exception as ex:
                good, msg = False, "%s: no answer: %s: %s" % (
                    what, type(ex).__name__, ex)
            with lock:
                stat["right" if good else "wrong"] += 1
                if not good and len(first_bad) < 5:
                    first_bad.append(msg)
        c.close()

    t0 = time.time()
    ts = [threading.Thread(target=client, args=(k,))
          for k in range(a.clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("  %d clients: %d right, %d wrong, %d hung up, %.1f s" % (
        a.clients, stat["right"], stat["wrong"], stat["hung_up"],
        time.time() - t0))
    ck.check(stat["wrong"] == 0 and stat["right"] > 0,
             "concurrent: every answer right",
             "\n".join(str(m) for m in first_bad))
    if a.no_metrics:
        return
    # The hung-up clients' calls end when their shards answer: well
    # within the hop deadline.
    deadline = time.time() + a.hop_ms / 1000 + 5
    n = None
    while time.time() < deadline:
        n = in_flight(e.metrics())
        if n <= 1:
            break
        time.sleep(0.2)
    ck.check(n is not None and n <= 1, "concurrent: no request left in "
             "flight at the front afterwards (got %s, the scrape "
             "included)" % n)


GROUPS = {"basic": g_basic, "formats": g_formats, "json": g_json,
          "errors": g_errors, "takeover": g_takeover, "reuse": g_reuse,
          "stall": g_stall, "wait": g_wait, "auth": g_auth,
          "auth-shard": g_auth_shard, "concurrent": g_concurrent}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--front", required=True, help="HOST:PORT")
    ap.add_argument("--ref", required=True, help="the full pyref HOST:PORT")
    ap.add_argument("--model", required=True)
    ap.add_argument("--shard-a", help="replica A HOST:PORT")
    ap.add_argument("--shard-label", help="HOST:PORT named in errors and "
                    "/metrics (takeover: A; stall, auth, auth-shard: C)")
    ap.add_argument("--front-key", help="the front's api_key: sent as "
                    "Bearer to the front")
    ap.add_argument("--key-a", help="auth: shard A's (and B's) api_key")
    ap.add_argument("--key-c", help="auth: shard C's api_key")
    ap.add_argument("--wrong-key", help="auth-shard: the key the front "
                    "sends C, which C refuses")
    ap.add_argument("--f16-layers", default="",
                    help="A-B: layers whose owner may answer f16 to an i8 "
                    "ask (the front narrows that)")
    ap.add_argument("--no-metrics", action="store_true",
                    help="the target has no /metrics (self-test on pyref)")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--kill-pid", type=int)
    ap.add_argument("--kill-after", type=int, default=100)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--max-502", type=int, default=3)
    ap.add_argument("--pace-ms", type=float, default=10.0,
                    help="takeover: at least this between request starts")
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--hop-ms", type=int, default=1500)
    ap.add_argument("--slack-ms", type=int, default=1500)
    ap.add_argument("--layers", default="5")
    ap.add_argument("--clients", type=int, default=48)
    ap.add_argument("--per", type=int, default=12)
    ap.add_argument("group", choices=sorted(GROUPS))
    a = ap.parse_args()
    if a.group == "takeover" and (a.kill_pid is None or not a.shard_label):
        ap.error("takeover needs --kill-pid and --shard-label")
    if a.group == "reuse" and not a.shard_a:
        ap.error("reuse needs --shard-a")
    if a.group == "stall" and not a.shard_label:
        ap.error("stall needs --shard-label")
    if a.group == "auth" and not (a.front_key and a.shard_a and
                                  a.shard_label and a.key_a and a.key_c):
        ap.error("auth needs --front-key, --shard-a, --shard-label, --key-a "
                 "and --key-c")
    if a.group == "auth-shard" and not (a.front_key and a.shard_label and
                                        a.wrong_key):
        ap.error("auth-shard needs --front-key, --shard-label and "
                 "--wrong-key")
    e = Env(a)
    socket.setdefaulttimeout(a.timeout)
    e.ck.run(GROUPS[a.group], e)
    e.ck.done()


if __name__ == "__main__":
    main()
