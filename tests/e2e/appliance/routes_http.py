# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""test_routes.py's HTTP-level groups (spec/wire.md §4 and the
appliance's own limits): errors, limits, conn, pipeline, auth. The checks
they share with the walk groups are routes_walk.py's; test_routes.py sets
A, O, C and AUTH here as there.
"""

import json
import struct

import numpy as np

import fsa
from fsa import wire
from routes_walk import (WALK, check_error, check_f32_answer,
                         check_json_error, conn, layers_owned, out_formats,
                         walk)

A = None		# parsed arguments
O = None		# fsa.Oracle
C = None		# fsa.Checker
AUTH = []		# [("Authorization", "Bearer KEY")] when --api-key


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
    # 414: a request-target longer than the head limit (RFC 9112 §3 MUST;
    # hyper, under the reference, answers 414 too).
    c.send(b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    r = c.read_response()
    check_json_error(r, 414, "a 20000-byte request target")
    expect_close(c, "414")
    c.close()
    # An absolute-form target is served as its origin-form path (RFC 9112
    # §3.2.2: a server MUST accept it; hyper, under the reference, does).
    c = conn()
    c.send(b"GET http://x/v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
    r = c.read_response()
    C.eq(r.status, 200, "absolute-form target: status")
    C.check(b'"status":"ok"' in r.body, "absolute-form target: health body",
            r.body)
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
    # A head that never completes is answered 408 after header_timeout_ms
    # (slowloris; issue 4), with Connection: close, then closed (RFC 9110
    # §15.5.9; nothing of a response was sent on that request).
    if A.header_timeout_ms:
        what = "an incomplete head after header_timeout_ms"
        c = conn()
        c.s.settimeout(A.header_timeout_ms / 1000.0 + 5)
        c.send(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n")
        check_408_close(c, what)
        c.close()
    # A body that stops after its head is answered 408 after
    # body_timeout_ms (+ 5 bytes / body_min_rate, 10 ms at the default),
    # with Connection: close, then closed: a trickle under the TCP idle
    # timeout no longer holds the connection.
    if A.body_timeout_ms:
        what = "a body stalled after body_timeout_ms"
        c = conn()
        c.s.settimeout(A.body_timeout_ms / 1000.0 + 5)
        c.send(b"POST /v1/walk-ffn HTTP/1.1\r\nHost: x\r\n"
               b"Content-Type: " + wire.CT_F32.encode() + b"\r\n" +
               b"".join(b"%s: %s\r\n" % (k.encode(), v.encode())
                        for k, v in AUTH) +
               b"Content-Length: 100\r\n\r\n12345")
        check_408_close(c, what, b'{"error":"request body timeout"}')
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


def check_408_close(c, what, body=None):
    """The next thing on c is a JSON 408 (with this body, if given) with
    Connection: close, and then the close (RFC 9110 §15.5.9)."""
    try:
        r = c.read_response()
    except (OSError, fsa.Closed) as e:
        C.check(False, what + ": answered 408 before the close", e)
        return
    check_json_error(r, 408, what)
    if body is not None:
        C.eq(r.body, body, what + ": its message")
    C.eq(r.header("connection"), "close", what + ": Connection: close")
    C.check(c.at_eof(wait=5), what + ": closed after the 408")


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
    # HEAD (RFC 9110 §9.1, §9.3.2; RFC 9112 §6.3): a GET route answers
    # it as GET, the others with their error, each the head alone; the
    # answer pipelined after them starts right there.
    c = conn()
    c.send(fsa.build("HEAD", "/v1/health", headers=AUTH) +
           fsa.build("HEAD", "/v1/stats", headers=AUTH) +
           fsa.build("HEAD", "/v1/models", headers=AUTH) +
           fsa.build("HEAD", WALK, headers=AUTH) +
           fsa.build("HEAD", "/nope", headers=AUTH) +
           fsa.build("GET", "/v1/health"))
    for path, status in (("/v1/health", 200), ("/v1/stats", 200),
                         ("/v1/models", 200), (WALK, 405), ("/nope", 404)):
        r = c.read_response(head_request=True)
        C.eq(r.status, status, "HEAD %s: status" % path)
        C.check(int(r.header("content-length") or 0) > 0, "HEAD %s: the "
                "Content-Length of the body a GET would get" % path,
                r.headers)
        C.check(not c.buf.startswith(b"{"), "HEAD %s: no body before the "
                "next answer" % path, c.buf[:60])
    r = c.read_response()
    C.eq(r.status, 200, "GET /v1/health after five HEADs: status")
    C.check(b'"status":"ok"' in r.body, "GET /v1/health after five HEADs: "
            "body", r.body)
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
                                   ("GET", "/v1/stats", b"", []),
                                   ("GET", "/v1/models", b"", [])):
            r = c.request(method, path, b, h + auth)
            C.eq(r.status, 401, "%s %s, %s: status" % (method, path, what))
            C.eq(r.body, b"", "%s %s, %s: empty body" % (method, path, what))
    good = [("Authorization", "Bearer " + key)]
    r = c.request("POST", WALK, body, [("Content-Type", ct)] + good)
    check_f32_answer(r, [L[0]], x, "walk with the key")
    r = c.request("GET", "/v1/stats", b"", good)
    C.eq(r.status, 200, "stats with the key")
    r = c.request("GET", "/v1/models", b"", good)
    C.eq(r.status, 200, "models with the key")
    C.eq(json.loads(r.body).get("object"), "list", "models: a list")
    r = c.request("GET", "/v1/health")
    C.eq(r.status, 200, "health without a key (exempt)")
    c.close()
