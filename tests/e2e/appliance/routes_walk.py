# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""test_routes.py's checks of what the appliance answers (spec/wire.md):
the shared state and checks against pyref, and the groups delivery,
routes, binary, negotiation, router and json. The HTTP-level groups are
in routes_http.py; test_routes.py sets A, O, C and AUTH and runs them.
"""

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
        # RFC 9110 §15.5.6: a 405 lists the path's methods.
        C.eq(r.header("allow"), {405: "POST" if "walk" in path else
                                 "GET, HEAD"}.get(status),
             "%s %s: Allow" % (method, path))
    # GET /metrics: Prometheus text with the walk-ffn counters (issue 4).
    r = c.request("GET", "/metrics", headers=AUTH)
    C.eq(r.status, 200, "GET /metrics: status")
    C.check((r.header("content-type") or "").startswith("text/plain"),
            "GET /metrics: text/plain", r.header("content-type"))
    C.check(b"\nffn_" in b"\n" + r.body, "GET /metrics: ffn_ series",
            r.body[:300])
    probs = fsa.prom_problems(r.body.decode("utf-8", "replace"))
    C.check(not probs, "GET /metrics: Prometheus text format (TYPE before "
            "samples, one group per family, label sets unique)",
            "\n".join(probs[:10]))
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
    # A hybrid-MoE client's whole-layer request: refused, not answered
    # with the plain FFN (§6); features mode ignores the key.
    r = jwalk(c, {"layer": L[0], "residual": xs, "full_output": True,
                  "moe_layer": True})
    check_error(r, 400, "moe_layer=true but server has no --moe-shards "
                "configured", "JSON moe_layer full_output")
    r = jwalk(c, {"layer": L[0], "residual": xs, "top_k": 5,
                  "moe_layer": True})
    if C.eq(r.status, 200, "JSON moe_layer features: status"):
        check_features(json_obj(r), L[0], x, 5, "JSON moe_layer features")
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
