#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""The appliance's routes against pyref (spec/wire.md), over raw sockets.

    test_routes.py --host IP --port P --model DIR --owned A-B
                   [--i8 0|1] [--f16 0|1] [--api-key KEY] [--max-body N]
                   [--header-timeout-ms MS] [--groups routes,binary,...]

Run by test_routes.sh / test_worker.sh inside the test's namespace, against
an appliance serving DIR's layers A-B. --i8/--f16 say which response
formats the appliance was configured to enable; --api-key that every
request but health must carry it; --max-body the configured body limit.
Groups: routes binary negotiation router json errors limits conn auth
pipeline (default: all but auth and pipeline, which conn includes).
"""

import argparse
import json
import math
import struct

import numpy as np

import fsa
from fsa import Http, err_body, json_obj, wire

WALK = "/v1/walk-ffn"
A = None		# parsed arguments
O = None		# fsa.Oracle
C = None		# fsa.Checker
AUTH = []		# [("Authorization", "Bearer KEY")] when --api-key


def conn():
    return Http(A.host, A.port)


def walk(c, body, ctype, accept=None, extra=()):
    h = []
    if ctype is not None:
        h.append(("Content-Type", ctype))
    if accept is not None:
        h.append(("Accept", accept))
    return c.request("POST", WALK, body, h + AUTH + list(extra))


def layers_owned():
    return list(range(A.owned[0], A.owned[1] + 1))


def first_diff(a, b):
    for i in range(min(len(a), len(b))):
        if a[i] != b[i]:
            return i
    return min(len(a), len(b))


def check_error(r, status, msg, what):
    C.eq(r.status, status, what + ": status")
    C.eq(r.header("content-type"), "application/json",
         what + ": Content-Type")
    C.eq(r.body, err_body(msg), what + ": body")


def check_json_error(r, status, what):
    """The appliance's own limits: a status and some {"error": str}."""
    C.eq(r.status, status, what + ": status")
    try:
        o = json_obj(r)
        ok = (list(o.keys()) == ["error"] and isinstance(o["error"], str)
              and o["error"])
    except ValueError:
        ok = False
    C.check(ok, what + ": body is a JSON {\"error\": MESSAGE}", r.body)


# ---- binary walk-ffn, checked against pyref --------------------------

def check_f32_answer(r, layers, x_in, what):
    """r: a 200 f32 response to layers on x (decoded by the appliance as
    x_in). Returns its decoded results, or None."""
    if not C.eq(r.status, 200, what + ": status"):
        print("     body: %r" % r.body[:300])
        return None
    C.eq(r.header("content-type"), wire.CT_F32, what + ": Content-Type")
    single = len(layers) == 1
    first, = struct.unpack_from("<I", r.body, 0)
    C.check((first != wire.BATCH) == single, what + ": frame is %s (§5.2: "
            "exactly one result -> single)" % ("single" if single else
                                               "batch"), "first u32 %#x"
            % first)
    lat, res = wire.decode_response(r.body, wire.CT_F32)
    C.check(math.isfinite(lat) and lat >= 0, what + ": latency_ms finite "
            "and >= 0", lat)
    C.eq([L for L, _, _ in res], list(layers), what + ": layers in order")
    S = x_in.shape[0]
    for L, sl, y in res:
        C.eq(sl, S, what + ": seq_len of layer %d" % L)
        if L in O.vi.weights and y.shape == x_in.shape:
            ok, d = O.close(y, L, x_in)
            C.check(ok, what + ": layer %d values vs pyref" % L, d)
        else:
            C.check(False, what + ": layer %d shape %s" % (L, y.shape))
    return res


def check_narrowed(r, res32, fmt, what):
    """r answers the same request as res32 (the appliance's own f32
    answer) in fmt: its bytes must be pyref's narrowing of res32 (§5.3),
    the frame's latency aside."""
    if not C.eq(r.status, 200, what + ": status"):
        return
    C.eq(r.header("content-type"), wire.CT[fmt], what + ": Content-Type")
    want = bytearray(wire.encode_response(res32, fmt, 0.0))
    if len(r.body) >= 12:
        want[8:12] = r.body[8:12]
        lat, = struct.unpack_from("<f", r.body, 8)
        C.check(math.isfinite(lat) and lat >= 0, what + ": latency_ms "
                "finite and >= 0", lat)
    want = bytes(want)
    i = first_diff(r.body, want)
    C.check(r.body == want, what + ": bytes == pyref narrowing of the f32 "
            "answer", "len got %d want %d; first difference at byte %d: "
            "got %s want %s" % (len(r.body), len(want), i,
                                r.body[i:i + 16].hex(), want[i:i + 16].hex()))


def out_formats():
    f = ["f32"]
    if A.f16:
        f.append("f16")
    if A.i8:
        f.append("i8")
    return f


def binary_case(c, req_fmt, layers, seq_len, batch, seed):
    what = "binary %s req, layers %s, seq_len %d, %s frame" % (
        req_fmt, layers, seq_len, "batch" if batch else "single")
    x = O.x(seq_len, seed)
    body, ct = wire.encode_request(layers, x, req_fmt, batch=batch)
    x_in = wire.roundtrip(x, req_fmt)
    r32 = walk(c, body, ct, wire.ACCEPT["f32"])
    res = check_f32_answer(r32, layers, x_in, what + " -> f32")
    if res is None:
        return
    for fmt in out_formats()[1:]:
        r = walk(c, body, ct, wire.ACCEPT[fmt])
        check_narrowed(r, res, fmt, what + " -> " + fmt)


def g_binary():
    L = layers_owned()
    c = conn()
    seed = 100
    for req_fmt in ("f32", "f16", "i8"):
        for layers, batch in (([L[0]], False), ([L[-1]], True),
                              ([L[0], L[-1]], True),
                              ([L[1], L[0], L[1]], True)):
            for seq_len in (1, 3):
                seed += 1
                binary_case(c, req_fmt, layers, seq_len, batch, seed)
    # K = 0: accepted, an empty batch (§3, §5.2).
    for fmt in out_formats():
        body = struct.pack("<IIIII", wire.BATCH, 0, 1, 1, wire.TOP_K)
        body += O.x(1, 7).tobytes()
        r = walk(c, body, wire.CT_F32, wire.ACCEPT[fmt])
        C.eq(r.status, 200, "K=0 -> %s: status" % fmt)
        C.eq(r.header("content-type"), wire.CT[fmt], "K=0: Content-Type")
        C.eq(r.body[:8] + r.body[12:], struct.pack("<II", wire.BATCH, 0),
             "K=0 -> %s: an empty batch frame" % fmt)
    # A large request: many TCP segments both ways.
    binary_case(c, "f32", [L[0]], 48, False, 5)
    # Flags bits other than bit 0 are ignored; top_k is ignored (§3).
    x = O.x(2, 9)
    base, ct = wire.encode_request([L[0]], x, "f32", flags=1, top_k=8092)
    odd, _ = wire.encode_request([L[0]], x, "f32", flags=0xFFFFFFFF,
                                 top_k=3)
    ra = walk(c, base, ct, wire.ACCEPT["f32"])
    rb = walk(c, odd, ct, wire.ACCEPT["f32"])
    C.eq(fsa.f32_payload_of(rb.body), fsa.f32_payload_of(ra.body),
         "flags 0xffffffff and top_k 3 give the same answer as flags 1 "
         "top_k 8092")
    # Content-Type parameters are allowed (§3).
    r = walk(c, base, ct + "; charset=binary", wire.ACCEPT["f32"])
    check_f32_answer(r, [L[0]], x, "Content-Type with a parameter")
    c.close()


def g_negotiation():
    """§5.1: which format answers which Accept, given the switches."""
    L = layers_owned()
    c = conn()
    x = O.x(1, 11)
    body, ct = wire.encode_request([L[0]], x, "f32")
    want_i8 = "i8" if A.i8 else ("f16" if A.f16 else "f32")
    want_f16 = "f16" if A.f16 else "f32"
    cases = [
        (None, "f32"),
        (wire.ACCEPT["i8"], want_i8),
        (wire.ACCEPT["f16"], want_f16),
        (wire.CT_I8, want_i8),
        (wire.CT_F32, "f32"),
        ("*/*", "f32"),
        ("application/json", "f32"),
        # substring test on the first Accept value: a list that names
        # f16 anywhere picks f16.
        ("%s, %s" % (wire.CT_F32, wire.CT_F16), want_f16),
    ]
    for accept, fmt in cases:
        r = walk(c, body, ct, accept)
        C.eq(r.header("content-type"), wire.CT[fmt],
             "Accept %r -> Content-Type" % accept)
    # Only the first Accept field counts.
    r = c.request("POST", WALK, body, [("Content-Type", ct),
                                       ("Accept", wire.CT_F32),
                                       ("Accept", wire.CT_F16)] + AUTH)
    C.eq(r.header("content-type"), wire.CT_F32,
         "two Accept fields: the first (f32) decides")
    c.close()


def g_router():
    """§7: the router forwards with exactly the base Content-Type and no
    Accept: f32, single and batch."""
    L = layers_owned()
    c = conn()
    for layers in ([L[0]], [L[0], L[-1]]):
        x = O.x(2, 21)
        body, _ = wire.encode_request(layers, x, "f32")
        r = c.request("POST", WALK, body,
                      [("Content-Type", "application/x-larql-ffn")] + AUTH)
        check_f32_answer(r, layers, x, "router call, layers %s" % layers)
    c.close()


# ---- routes ------------------------------------------------------------

def g_routes():
    c = conn()
    r = c.request("GET", "/v1/health")
    C.eq(r.status, 200, "health: status")
    C.eq(r.header("content-type"), "application/json", "health: type")
    h = json_obj(r)
    C.eq(sorted(h), ["requests_served", "status", "uptime_seconds"],
         "health: keys")
    C.eq(h.get("status"), "ok", "health: status ok")
    for k in ("uptime_seconds", "requests_served"):
        C.check(isinstance(h.get(k), int) and h[k] >= 0,
                "health: %s a non-negative integer" % k, h.get(k))
    r = c.request("GET", "/v1/stats", headers=AUTH)
    C.eq(r.status, 200, "stats: status")
    C.eq(r.header("content-type"), "application/json", "stats: type")
    s = json_obj(r)
    vi = O.vi
    want = {"model": vi.model, "family": vi.family, "mode": "ffn-service",
            "layers": vi.num_layers, "hidden_size": vi.hidden,
            "features_per_layer": vi.intermediate, "dtype": vi.dtype}
    for k, v in want.items():
        C.eq(s.get(k), v, "stats: %s" % k)
    for method, path, status in (
            ("GET", "/nope", 404), ("POST", "/v1/walk", 404),
            ("GET", "/v1/health/", 404), ("GET", "/V1/HEALTH", 404),
            ("GET", WALK, 405), ("PUT", WALK, 405),
            ("POST", "/v1/health", 405), ("DELETE", "/v1/stats", 405),
            ("GET", "/v1/walk-ffn-q8k", 405)):
        r = c.request(method, path, headers=AUTH)
        C.eq(r.status, status, "%s %s: status" % (method, path))
        check_json_error(r, status, "%s %s" % (method, path))
    # GET /metrics: Prometheus text with the walk-ffn counters (issue 4).
    r = c.request("GET", "/metrics", headers=AUTH)
    C.eq(r.status, 200, "GET /metrics: status")
    C.check((r.header("content-type") or "").startswith("text/plain"),
            "GET /metrics: text/plain", r.header("content-type"))
    C.check(b"\nffn_" in b"\n" + r.body, "GET /metrics: ffn_ series",
            r.body[:300])
    # The optional Q8_K route: clients fall back on any error (§2).
    r = c.request("POST", "/v1/walk-ffn-q8k", b"\0" * 32,
                  [("Content-Type", wire.CT_F32)] + AUTH)
    C.check(r.status >= 400, "walk-ffn-q8k: an error status", r)
    # A query string does not change the route.
    r = c.request("GET", "/v1/health?x=1")
    C.eq(r.status, 200, "GET /v1/health?x=1: status")
    # Health counts served walk requests.
    n0 = json_obj(c.request("GET", "/v1/health"))["requests_served"]
    body, ct = wire.encode_request([layers_owned()[0]], O.x(1, 3), "f32")
    walk(c, body, ct)
    n1 = json_obj(c.request("GET", "/v1/health"))["requests_served"]
    C.check(n1 > n0, "health: requests_served grows with walk-ffn calls",
            (n0, n1))
    c.close()


# ---- JSON path (§6) ------------------------------------------------------

def jwalk(c, obj, ctype="application/json"):
    body = json.dumps(obj).encode()
    return walk(c, body, ctype)


def check_full_item(item, L, x, what):
    C.eq(item.get("layer"), L, what + ": layer")
    C.eq(item.get("seq_len"), x.shape[0], what + ": seq_len")
    out = item.get("output")
    if not C.check(isinstance(out, list) and len(out) == x.size,
                   what + ": output of seq_len*hidden values",
                   len(out) if isinstance(out, list) else out):
        return
    ok, d = O.close(np.array(out, dtype=np.float64).reshape(x.shape), L, x)
    C.check(ok, what + ": values vs pyref", d)


def check_latency_json(o, what):
    lat = o.get("latency_ms")
    C.check(isinstance(lat, (int, float)) and lat >= 0 and
            abs(lat * 10 - round(lat * 10)) < 1e-6,
            what + ": latency_ms >= 0 rounded to 0.1", lat)


def check_features(item, L, x, top_k, what):
    """§6 features mode vs pyref: ids ranked by |gate . x| descending,
    scores the signed dot products rounded to 2 decimals. Tolerant of
    float32 ties: the ranking is checked against float64 scores."""
    G = O.vi.weights[L][0].astype(np.float64)
    s = G @ x.astype(np.float64).ravel()
    k = min(top_k, G.shape[0])
    ids, scores = item.get("features"), item.get("scores")
    C.eq(item.get("layer"), L, what + ": layer")
    if not C.check(isinstance(ids, list) and isinstance(scores, list) and
                   len(ids) == k and len(scores) == k,
                   what + ": %d features and scores" % k,
                   (len(ids or []), len(scores or []))):
        return
    ref_ids, _ = fsa.ffn.features(O.vi.weights[L][0], x.ravel(), top_k)
    if ids == ref_ids:
        C.check(True, what + ": ids == pyref")
    else:
        a = np.abs(s)
        chosen = np.array(ids)
        rest = np.setdiff1d(np.arange(G.shape[0]), chosen)
        ok = (len(set(ids)) == k and
              np.all(np.diff(a[chosen]) <= 1e-4) and
              (rest.size == 0 or a[chosen].min() >= a[rest].max() - 1e-4))
        C.check(ok, what + ": ids ranked by |gate.x| (ties within 1e-4)",
                "got %s\npyref %s" % (ids[:20], ref_ids[:20]))
    # "Rounded to 2 decimals": the appliance rounds in f32, as the
    # reference does ((s * 100.0).round() / 100.0 on f32), and prints
    # that f32 widened to f64 (-3.609999895095825 for -3.61f); pyref
    # rounds in f64. Both are a whole number of hundredths to f32
    # precision; an unrounded score is not.
    bad = [(i, sc, s[i]) for i, sc in zip(ids, scores)
           if not abs(sc - round(s[i], 2)) <= 0.0100001 or
           abs(sc * 100 - round(sc * 100)) > 1e-3]
    C.check(not bad, what + ": scores = dot products rounded to 2 "
            "decimals (§6)", "\n".join(
                "feature %d: JSON score %r, gate.x in float64 %.6f" % b
                for b in bad[:5]))


def g_json():
    L = layers_owned()
    c = conn()
    for S in (1, 2):
        x = O.x(S, 30 + S)
        r = jwalk(c, {"layer": L[0], "residual": [float(v) for v in
                                                   x.ravel()],
                      "seq_len": S, "full_output": True})
        what = "JSON full_output layer %d seq_len %d" % (L[0], S)
        if C.eq(r.status, 200, what + ": status"):
            o = json_obj(r)
            C.eq(sorted(o), ["latency_ms", "layer", "output", "seq_len"],
                 what + ": keys")
            check_latency_json(o, what)
            check_full_item(o, L[0], x, what)
    x = O.x(2, 40)
    lys = [L[-1], L[0], L[-1]]
    r = jwalk(c, {"layers": lys, "layer": 999, "seq_len": 2, "top_k": 5,
                  "residual": [float(v) for v in x.ravel()],
                  "full_output": True, "unknown_key": [1, 2]})
    what = "JSON full_output layers %s seq_len 2" % lys
    if C.eq(r.status, 200, what + ": status"):
        o = json_obj(r)
        C.eq(sorted(o), ["latency_ms", "results", "seq_len"], what + ": keys")
        C.eq(o.get("seq_len"), 2, what + ": seq_len")
        check_latency_json(o, what)
        res = o.get("results", [])
        C.eq(len(res), 3, what + ": 3 results")
        for item, Lr in zip(res, lys):
            C.eq(sorted(item), ["layer", "output", "seq_len"],
                 what + ": result keys")
            check_full_item(item, Lr, x, what + " result layer %d" % Lr)
    # Features mode (full_output false, the default), one and two layers.
    x = O.x(1, 50)
    for top_k in (10, None):
        req = {"layer": L[0], "residual": [float(v) for v in x.ravel()]}
        if top_k is not None:
            req["top_k"] = top_k
        r = jwalk(c, req)
        what = "JSON features layer %d top_k %s" % (L[0], top_k)
        if C.eq(r.status, 200, what + ": status"):
            o = json_obj(r)
            C.eq(sorted(o), ["features", "latency_ms", "layer", "scores"],
                 what + ": keys")
            check_latency_json(o, what)
            check_features(o, L[0], x, top_k or wire.TOP_K, what)
    r = jwalk(c, {"layers": [L[1], L[0]], "top_k": 7, "full_output": False,
                  "residual": [float(v) for v in x.ravel()]})
    what = "JSON features layers %s" % [L[1], L[0]]
    if C.eq(r.status, 200, what + ": status"):
        o = json_obj(r)
        C.eq(sorted(o), ["latency_ms", "results"], what + ": keys")
        res = o.get("results", [])
        C.eq(len(res), 2, what + ": 2 results")
        for item, Lr in zip(res, [L[1], L[0]]):
            C.eq(sorted(item), ["features", "layer", "scores"],
                 what + ": result keys")
            check_features(item, Lr, x, 7, what + " layer %d" % Lr)
    # No Content-Type at all is the JSON path (§3).
    r = walk(c, json.dumps({"layer": L[0], "full_output": True,
                            "residual": [float(v) for v in x.ravel()]})
             .encode(), None)
    what = "JSON without Content-Type"
    if C.eq(r.status, 200, what + ": status"):
        check_full_item(json_obj(r), L[0], x, what)
    # Errors of §6.
    xs = [float(v) for v in x.ravel()]
    r = jwalk(c, {"residual": xs, "full_output": True})
    check_error(r, 400, "must provide 'layer' or 'layers'",
                "JSON without layer(s)")
    for bad in (b"{", b"[1,2", b"not json", b""):
        r = walk(c, bad, "application/json")
        C.eq(r.status, 400, "JSON %r: status" % bad)
        C.check(r.body.startswith(b'{"error":"invalid JSON: '),
                "JSON %r: invalid JSON message" % bad, r.body)
    r = jwalk(c, {"layer": L[0], "residual": xs[:-1], "full_output": True})
    H = O.hidden
    check_error(r, 400, "residual has %d elements, expected %d (seq_len=1 "
                "* hidden_size=%d)" % (H - 1, H, H), "JSON short residual")
    if A.owned[0] > 0:
        r = jwalk(c, {"layer": 0, "residual": xs, "full_output": True})
        check_error(r, 400, "layer 0 not served by this shard (owned: "
                    "%d\u2013%d)" % tuple(A.owned), "JSON layer 0")
    c.close()


# ---- §4 error table --------------------------------------------------------

def g_errors():
    L = layers_owned()
    H = O.hidden
    first, last = A.owned
    n_layers = O.vi.num_layers
    x1 = O.x(1, 60).tobytes()
    head = lambda layer, seq, flags=1: struct.pack("<IIII", layer, seq,
                                                   flags, wire.TOP_K)
    cases = [
        ("body 0 bytes", b"", wire.CT_F32, 400,
         "binary: body too short (need \u2265 16 bytes)"),
        ("body 15 bytes", b"\1" * 15, wire.CT_F32, 400,
         "binary: body too short (need \u2265 16 bytes)"),
        ("batch K=5 in 16 bytes", struct.pack("<IIII", wire.BATCH, 5, 1, 1),
         wire.CT_F32, 400,
         "binary batch: body too short for 5 layer indices"),
        ("batch K=2^32-1", struct.pack("<IIII", wire.BATCH, 0xFFFFFFFF, 1, 1),
         wire.CT_F32, 400,
         "binary batch: body too short for 4294967295 layer indices"),
        ("batch, 8 bytes after the layer list",
         struct.pack("<IIIII", wire.BATCH, 1, L[0], 1, 1), wire.CT_F32, 400,
         "binary: truncated fixed header (seq_len/flags/top_k)"),
        ("f32 payload of 5 bytes", head(L[0], 1) + b"\0" * 5, wire.CT_F32,
         400, "binary: residual byte length is not a multiple of 4"),
        ("f16 payload of 3 bytes", head(L[0], 1) + b"\0" * 3, wire.CT_F16,
         400, "f16 binary request: residual byte length is not a multiple "
         "of f16"),
        ("i8 payload 100 bytes, seq_len 3", head(L[0], 3) + b"\0" * 100,
         wire.CT_I8, 400, "i8 binary request: payload of 100 bytes is not a "
         "multiple of seq_len 3"),
        ("i8 8 bytes per row", head(L[0], 2) + b"\0" * 16, wire.CT_I8, 400,
         "i8 binary request: 8 bytes per position leaves no residual data "
         "after the 8-byte scale/zero header"),
        ("i8 empty payload", head(L[0], 1), wire.CT_I8, 400,
         "i8 binary request: 0 bytes per position leaves no residual data "
         "after the 8-byte scale/zero header"),
        ("flags 0", head(L[0], 1, 0) + x1, wire.CT_F32, 400,
         "binary wire format requires full_output = true"),
        ("flags 2", head(L[0], 1, 2) + x1, wire.CT_F32, 400,
         "binary wire format requires full_output = true"),
        # order: flags before the element count and the layers
        ("flags 0, short payload, layer 9999",
         head(9999, 1, 0) + x1[:8], wire.CT_F32, 400,
         "binary wire format requires full_output = true"),
        ("f32 count", head(L[0], 2) + x1, wire.CT_F32, 400,
         "residual has %d elements, expected %d (seq_len=2 * hidden_size=%d)"
         % (H, 2 * H, H)),
        ("f16 count", head(L[0], 1) + b"\0" * 2 * (H + 1), wire.CT_F16, 400,
         "residual has %d elements, expected %d (seq_len=1 * hidden_size=%d)"
         % (H + 1, H, H)),
        ("i8 seq_len 0 with one row", head(L[0], 0) + b"\0" * (8 + H),
         wire.CT_I8, 400, "residual has %d elements, expected 0 (seq_len=0 "
         "* hidden_size=%d)" % (H, H)),
        ("i8 rows of hidden+1", head(L[0], 1) + b"\0" * (9 + H), wire.CT_I8,
         400, "residual has %d elements, expected %d (seq_len=1 * "
         "hidden_size=%d)" % (H + 1, H, H)),
        ("seq_len 2^32-1", head(L[0], 0xFFFFFFFF) + x1, wire.CT_F32, 400,
         "residual has %d elements, expected %d (seq_len=4294967295 * "
         "hidden_size=%d)" % (H, 0xFFFFFFFF * H, H)),
        # order: the count before seq_len 0 and the layer checks
        ("count before layer", head(9999, 1) + x1[:-4], wire.CT_F32, 400,
         "residual has %d elements, expected %d (seq_len=1 * hidden_size=%d)"
         % (H - 1, H, H)),
        ("seq_len 0", head(L[0], 0), wire.CT_F32, 400,
         "seq_len must be >= 1"),
        ("seq_len 0 batch", struct.pack("<IIIIII", wire.BATCH, 1, L[0], 0, 1,
                                        8092), wire.CT_F32, 400,
         "seq_len must be >= 1"),
    ]
    # Layer checks: the message pyref's check_layers gives for the
    # configured range. The appliance always has an owned range (the
    # config requires `layers`), so "out of range (num_layers = N)" is
    # not reachable; nor are "no model loaded" (a model is always
    # loaded), "seq_len * hidden overflow" (u32 * hidden fits in 64 bits),
    # 503 and 500.
    def layer_msg(layers):
        try:
            wire.check_layers(layers, n_layers, A.owned)
        except wire.WireError as e:
            return e.message
        raise AssertionError("pyref accepts layers %s" % layers)
    bad_layers = [[last + 1], [n_layers], [n_layers + 5], [0xFFFFFFFE],
                  [L[0], last + 1], [L[0], L[-1], 0xFFFFFFFE]]
    if first > 0:
        bad_layers += [[first - 1], [L[0], first - 1, last + 1]]
    for ls in bad_layers:
        if len(ls) == 1:
            b = head(ls[0], 1) + x1
        else:
            b = (struct.pack("<II", wire.BATCH, len(ls)) +
                 struct.pack("<%dI" % len(ls), *ls) +
                 struct.pack("<III", 1, 1, 8092) + x1)
        cases.append(("layers %s" % ls, b, wire.CT_F32, 400, layer_msg(ls)))
    c = conn()
    for what, body, ct, status, msg in cases:
        r = walk(c, body, ct, wire.ACCEPT["i8"])
        check_error(r, status, msg, "§4 " + what)
    # Errors do not close the connection: it still answers.
    body, ct = wire.encode_request([L[0]], O.x(1, 61), "f32")
    r = walk(c, body, ct)
    C.eq(r.status, 200, "the connection still serves after §4 errors")
    c.close()


# ---- the appliance's own limits --------------------------------------------

def expect_close(c, what):
    C.check(c.at_eof(), what + ": connection closed after the error")


def g_limits():
    L = layers_owned()
    # 413: Content-Length over max_body, answered at the head.
    if A.max_body:
        c = conn()
        c.send(fsa.build("POST", WALK, b"", [
            ("Content-Type", wire.CT_F32),
            ("Content-Length", str(A.max_body + 1))] + AUTH))
        r = c.read_response()
        check_json_error(r, 413, "Content-Length max_body+1")
        expect_close(c, "413")
        c.close()
        # A chunked body growing past max_body.
        c = conn()
        c.send(fsa.build("POST", WALK, b"", [
            ("Content-Type", wire.CT_F32),
            ("Transfer-Encoding", "chunked")] + AUTH))
        chunk = b"%x\r\n" % 4096 + b"\0" * 4096 + b"\r\n"
        r = None
        try:
            for _ in range(A.max_body // 4096 + 2):
                c.send(chunk)
        except OSError:
            pass
        r = c.read_response()
        check_json_error(r, 413, "chunked body over max_body")
        c.close()
        # Exactly max_body is accepted (a §4 error, not 413).
        c = conn()
        r = walk(c, b"\0" * A.max_body, wire.CT_F32)
        C.check(r.status != 413, "a body of exactly max_body is not 413", r)
        c.close()
    # 431: a head larger than max_header (8K default).
    c = conn()
    c.send(fsa.build("GET", "/v1/health", b"", [("X-Big", "a" * 20000)]))
    r = c.read_response()
    check_json_error(r, 431, "a 20000-byte header field")
    expect_close(c, "431")
    c.close()
    c = conn()
    c.send(b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    r = c.read_response()
    check_json_error(r, 431, "a 20000-byte request target")
    c.close()
    # Malformed requests: 400, and the connection is closed.
    good = wire.encode_request([L[0]], O.x(1, 70), "f32")[0]
    for what, raw, status in (
            ("garbage request line", b"HELLO\r\n\r\n", 400),
            ("no Host", b"GET /v1/health HTTP/1.1\r\n\r\n", 400),
            ("bare LF", b"GET /v1/health HTTP/1.1\nHost: x\n\n", 400),
            ("space before colon",
             b"GET /v1/health HTTP/1.1\r\nHost : x\r\n\r\n", 400),
            ("obs-fold", b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX: a\r\n"
             b" b\r\n\r\n", 400),
            ("two Content-Lengths",
             b"POST /v1/walk-ffn HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
             b"Content-Length: 5\r\n\r\nabcde", 400),
            ("Content-Length and Transfer-Encoding",
             b"POST /v1/walk-ffn HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
             b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
            ("negative Content-Length",
             b"POST /v1/walk-ffn HTTP/1.1\r\nHost: x\r\n"
             b"Content-Length: -1\r\n\r\n", 400),
            ("bad chunk size",
             b"POST /v1/walk-ffn HTTP/1.1\r\nHost: x\r\n"
             b"Transfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
            ("absolute-form target",
             b"GET http://x/v1/health HTTP/1.1\r\nHost: x\r\n\r\n", 400),
            ("unknown transfer coding",
             b"POST /v1/walk-ffn HTTP/1.1\r\nHost: x\r\n"
             b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
            ("Expect other than 100-continue",
             b"POST /v1/walk-ffn HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n"
             b"Content-Length: %d\r\n\r\n" % len(good) + good, 417),
            ("HTTP/2.0", b"GET /v1/health HTTP/2.0\r\nHost: x\r\n\r\n", 505)):
        c = conn()
        c.send(raw)
        try:
            r = c.read_response()
        except fsa.Closed:
            C.check(False, what + ": closed without an answer")
            c.close()
            continue
        check_json_error(r, status, what)
        if status in (400, 501):
            expect_close(c, what)
        c.close()
    # A head that never completes is closed after header_timeout_ms
    # (slowloris; issue 4).
    if A.header_timeout_ms:
        c = conn()
        c.send(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n")
        C.check(c.at_eof(wait=A.header_timeout_ms / 1000.0 + 5),
                "an incomplete head is closed after header_timeout_ms")
        c.close()
    # Response size limit: the appliance refuses a batch whose answer
    # would exceed its limit (spec §4 last paragraph), with 413.
    if not A.max_body or A.max_body > 5 << 20:
        K = 1100000
        body = struct.pack("<II", wire.BATCH, K) + \
            struct.pack("<I", L[0]) * K + struct.pack("<III", 1, 1, 8092) + \
            O.x(1, 71).tobytes()
        c = conn()
        r = walk(c, body, wire.CT_F32)
        check_json_error(r, 413, "batch of %d layers" % K)
        c.close()


# ---- connections ----------------------------------------------------------

def walk_req(layer, x, fmt_in, accept_fmt, extra=()):
    body, ct = wire.encode_request([layer], x, fmt_in)
    return fsa.build("POST", WALK, body, [("Content-Type", ct),
                                          ("Accept", wire.ACCEPT[accept_fmt])]
                     + AUTH + list(extra))


def check_walk_resp(r, layer, x, fmt_in, accept_fmt, what):
    """A pipelined/kept-alive answer: f32 within tolerance; narrowed ones
    decoded and checked within their format's own bound."""
    if not C.eq(r.status, 200, what + ": status"):
        return
    fmt = accept_fmt if accept_fmt in out_formats() else (
        "f16" if A.f16 else "f32")
    C.eq(r.header("content-type"), wire.CT[fmt], what + ": Content-Type")
    x_in = wire.roundtrip(x, fmt_in)
    _, res = wire.decode_response(r.body, wire.CT[fmt])
    C.eq([(L, s) for L, s, _ in res], [(layer, x.shape[0])],
         what + ": layer and seq_len")
    y = res[0][2]
    want = O.y64(layer, x_in)
    if fmt == "f32":
        ok, d = O.close(y, layer, x_in)
    else:
        # the narrowing's own error (§5.3) on top of the f32 bound
        b = (np.abs(want).max(axis=1, keepdims=True) *
             (2.0 ** -11 if fmt == "f16" else 1 / 254.0) * 1.01 + 1e-5)
        err = np.abs(y - want)
        ok, d = bool(np.all(err <= b)), "max err %g" % err.max()
    C.check(ok, what + ": values", d)


def g_pipeline():
    """N requests in one write, N answers in order, more than the
    pipeline depth (16 by default)."""
    L = layers_owned()
    fmts = out_formats()
    reqs, expect = [], []
    for i in range(40):
        kind = i % 5
        if kind == 3:
            reqs.append(fsa.build("GET", "/v1/health"))
            expect.append(("health",))
        elif kind == 4:
            reqs.append(fsa.build("GET", "/nope", headers=AUTH))
            expect.append(("404",))
        else:
            layer = L[i % len(L)]
            x = O.x(1 + i % 3, 200 + i)
            fin = ("f32", "f16", "i8")[i % 3]
            fout = fmts[i % len(fmts)]
            reqs.append(walk_req(layer, x, fin, fout))
            expect.append(("walk", layer, x, fin, fout))
    c = conn()
    c.send(b"".join(reqs))
    for i, e in enumerate(expect):
        r = c.read_response()
        what = "pipelined request %d (%s)" % (i, e[0])
        if e[0] == "health":
            C.eq(r.status, 200, what + ": status")
            C.check(b'"status":"ok"' in r.body, what + ": body", r.body)
        elif e[0] == "404":
            C.eq(r.status, 404, what + ": status")
        else:
            check_walk_resp(r, e[1], e[2], e[3], e[4], what)
    # An error in the middle: the answers before it, then it, then close.
    c.send(walk_req(L[0], O.x(1, 1), "f32", "f32") +
           fsa.build("GET", "/v1/health") + b"BAD REQUEST\r\n\r\n" +
           fsa.build("GET", "/v1/health"))
    r1, r2, r3 = c.read_response(), c.read_response(), c.read_response()
    check_walk_resp(r1, L[0], O.x(1, 1), "f32", "f32",
                    "pipeline with a bad 3rd request: 1st")
    C.eq(r2.status, 200, "pipeline with a bad 3rd request: 2nd")
    C.eq(r3.status, 400, "pipeline with a bad 3rd request: 3rd is 400")
    expect_close(c, "pipeline with a bad 3rd request")
    c.close()


def g_conn():
    L = layers_owned()
    fmts = out_formats()
    # keep-alive: many requests on one connection, each answered right.
    c = conn()
    for i in range(150):
        layer = L[i % len(L)]
        x = O.x(1, 300 + i)
        fin = ("f32", "f16", "i8")[i % 3]
        fout = fmts[(i // 3) % len(fmts)]
        c.send(walk_req(layer, x, fin, fout))
        check_walk_resp(c.read_response(), layer, x, fin, fout,
                        "keep-alive request %d" % i)
    C.eq(c.request("GET", "/v1/health").status, 200,
         "keep-alive: health after 150 walks")
    c.close()
    g_pipeline()
    # Expect: 100-continue: the interim answer, then the body, then 200.
    x = O.x(2, 400)
    body, ct = wire.encode_request([L[0]], x, "f32")
    c = conn()
    c.send(fsa.build("POST", WALK, b"", [
        ("Content-Type", ct), ("Expect", "100-continue"),
        ("Content-Length", str(len(body)))] + AUTH))
    r = c.read_response()
    if C.eq(r.status, 100, "Expect: 100-continue: interim 100 first"):
        c.send(body)
        r = c.read_response()
    check_walk_resp(r, L[0], x, "f32", "f32", "after 100 Continue")
    # twice on the same connection
    c.send(fsa.build("POST", WALK, b"", [
        ("Content-Type", ct), ("Expect", "100-continue"),
        ("Content-Length", str(len(body)))] + AUTH))
    r = c.read_response()
    C.eq(r.status, 100, "Expect: 100-continue again on the connection")
    c.send(body)
    check_walk_resp(c.read_response(), L[0], x, "f32", "f32",
                    "second 100-continue")
    c.close()
    # Chunked request body, with a chunk extension and a trailer.
    x = O.x(3, 410)
    body, ct = wire.encode_request([L[-1]], x, "f16")
    cuts = [0, 7, 7 + 1000, len(body)]
    chunked = b"".join(b"%x;ext=1\r\n" % (b - a) + body[a:b] + b"\r\n"
                       for a, b in zip(cuts, cuts[1:]))
    chunked += b"0\r\nX-Trailer: t\r\n\r\n"
    c = conn()
    c.send(fsa.build("POST", WALK, b"", [
        ("Content-Type", ct), ("Accept", wire.CT_F32),
        ("Transfer-Encoding", "chunked")] + AUTH) + chunked)
    check_walk_resp(c.read_response(), L[-1], x, "f16", "f32",
                    "chunked request body")
    # ... and a request sent in small pieces.
    x = O.x(2, 420)
    raw = walk_req(L[0], x, "f32", "f32")
    for i in range(0, len(raw), 97):
        c.send(raw[i:i + 97])
    check_walk_resp(c.read_response(), L[0], x, "f32", "f32",
                    "a request written in 97-byte pieces")
    c.close()
    # Connection: close is honoured; so is HTTP/1.0 without keep-alive.
    c = conn()
    c.send(walk_req(L[0], x, "f32", "f32", [("Connection", "close")]))
    r = c.read_response()
    check_walk_resp(r, L[0], x, "f32", "f32", "Connection: close")
    C.eq((r.header("connection") or "").lower(), "close",
         "Connection: close echoed")
    expect_close(c, "Connection: close")
    c.close()
    c = conn()
    c.send(b"GET /v1/health HTTP/1.0\r\n\r\n")
    r = c.read_response()
    C.eq(r.status, 200, "HTTP/1.0 health")
    expect_close(c, "HTTP/1.0 without keep-alive")
    c.close()


# ---- Authorization --------------------------------------------------------

def g_auth():
    L = layers_owned()
    key = A.api_key
    x = O.x(1, 500)
    body, ct = wire.encode_request([L[0]], x, "f32")
    c = conn()
    for what, auth in (("no Authorization", []),
                       ("wrong key", [("Authorization", "Bearer x" + key)]),
                       ("key one byte off",
                        [("Authorization", "Bearer " + key[:-1] +
                          chr(ord(key[-1]) ^ 1))]),
                       ("Basic scheme", [("Authorization", "Basic " + key)]),
                       ("key without scheme", [("Authorization", key)])):
        for method, path, b, h in (("POST", WALK, body,
                                    [("Content-Type", ct)]),
                                   ("GET", "/v1/stats", b"", [])):
            r = c.request(method, path, b, h + auth)
            C.eq(r.status, 401, "%s %s, %s: status" % (method, path, what))
            C.eq(r.body, b"", "%s %s, %s: empty body" % (method, path, what))
    good = [("Authorization", "Bearer " + key)]
    r = c.request("POST", WALK, body, [("Content-Type", ct)] + good)
    check_f32_answer(r, [L[0]], x, "walk with the key")
    r = c.request("GET", "/v1/stats", b"", good)
    C.eq(r.status, 200, "stats with the key")
    r = c.request("GET", "/v1/health")
    C.eq(r.status, 200, "health without a key (exempt)")
    c.close()


def g_delivery():
    """Every response size arrives: the HTTP head's length (odd or even,
    by Content-Type and Content-Length digits) and the body by reference
    must not matter. Run first: if answers are lost, every later group
    would only time out."""
    L = layers_owned()
    lost = []
    for S in (1, 3, 10, 30, 100):
        for fmt in out_formats():
            c = Http(A.host, A.port, timeout=5)
            x = O.x(S, 900 + S)
            body, ct = wire.encode_request([L[0]], x, "f32")
            try:
                r = walk(c, body, ct, wire.ACCEPT[fmt])
                C.eq(r.status, 200, "seq_len %d -> %s: status" % (S, fmt))
            except OSError as e:
                lost.append("seq_len %d -> %s (%s)" % (S, fmt, e))
            c.close()
    if not C.check(not lost, "every answer arrives", "lost: %s\n(the "
                   "appliance sent them: tcpdump -vv on the tap shows "
                   "whether the kernel dropped them for a bad TCP "
                   "checksum)" % lost):
        C.done()


GROUPS = {"delivery": g_delivery, "routes": g_routes, "binary": g_binary,
          "negotiation": g_negotiation, "router": g_router, "json": g_json,
          "errors": g_errors, "limits": g_limits, "conn": g_conn,
          "auth": g_auth, "pipeline": g_pipeline}
DEFAULT = "delivery,routes,binary,negotiation,router,json,errors,limits,conn"


def main():
    global A, O, C, AUTH
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--model", required=True)
    ap.add_argument("--owned", required=True)
    ap.add_argument("--i8", type=int, default=0)
    ap.add_argument("--f16", type=int, default=1)
    ap.add_argument("--api-key")
    ap.add_argument("--max-body", type=int, default=0)
    ap.add_argument("--header-timeout-ms", type=int, default=0)
    ap.add_argument("--groups", default=DEFAULT)
    ap.add_argument("--name", default="test_routes")
    A = ap.parse_args()
    a, _, b = A.owned.partition("-")
    A.owned = (int(a), int(b or a))
    O = fsa.Oracle(A.model, A.owned)
    C = fsa.Checker(A.name)
    if A.api_key:
        AUTH = [("Authorization", "Bearer " + A.api_key)]
    for g in A.groups.split(","):
        C.run(GROUPS[g])
    C.done()


if __name__ == "__main__":
    main()
