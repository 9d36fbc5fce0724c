#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""The cases of conformance.py (issue 24): route_cases() from the route
table as ffn-routes prints it, fixed_cases() for the rest; each adds
Case rows to CASES, one per ID of docs/HTTP-CONFORMANCE.md."""

import socket
import struct
import time

from conformance_lib import (
    A, Bad, CASES, CLOSED, CT_BIN, Case, E, INV, UNKNOWN_METHODS, W,
    W_close, W_err, bad, get_then_head, invariants, key, read_answer, req,
    same_head, simple, walk_body, walk_len)


def route_cases(routes):
    # what OPTIONS * lists: the methods of the other rows, and HEAD
    # for the GET ones
    methods = {r["method"] for r in routes if r["path"] != "*"}
    for r in routes:
        # a pattern route (/v1/expert/{layer}/{expert_id}) is asked
        # through a target of its own
        path = r.get("target", r["path"])
        allow, auth = r["allow"], r["auth"]
        tag = "[%s]" % r["path"]
        if path == "*":
            want = methods | ({"HEAD"} if "GET" in methods else set())
            def star(t, al=allow, w=want):
                # no key: a question about the server as a whole
                t.connect()
                t.send(req("OPTIONS", "*"))
                t.answer(200, body=b"", absent=("Content-Type",),
                         fields={"Allow": al, "Content-Length": "0",
                                 "Connection": "keep-alive"})
                t.check({m.strip() for m in al.split(",")} == w,
                        "Allow %r, the table's methods %r" % (al, sorted(w)))
                t.open()
            CASES.append(Case("M-OPTIONS-STAR" + tag, "RFC 9110 §9.3.7, "
                              "§10.2.1; RFC 9112 §3.2.4", star))
            continue
        if r["method"] == "GET":
            def head_get(t, p=path, au=auth):
                g1, h, g2 = get_then_head(t, p, au)
                t.check(g1.status == 200, "GET %s: %d" % (p, g1.status))
                same_head(t, g1, h, g2)
                t.open()
            CASES.append(Case("M-GET-HEAD" + tag, "RFC 9110 §9.1, §9.3.2, "
                              "§8.6", head_get))
        else:
            def head_other(t, p=path, au=auth, al=allow):
                g1, h, g2 = get_then_head(t, p, au)
                t.check(h.status == 405, "HEAD %s: %d" % (p, h.status))
                t.check(h.get("allow") == al, "Allow %r" % h.get("allow"))
                same_head(t, g1, h, g2)
                t.open()
            CASES.append(Case("M-HEAD-405" + tag, "RFC 9110 §9.3.2, "
                              "§15.5.6; spec/wire.md §2", head_other))
        simple("M-OPTIONS-ROUTE" + tag, "RFC 9110 §9.3.7; spec/wire.md §2",
               req("OPTIONS", path, auth=auth),
               W_err(405, "method not allowed", fields={"Allow": allow}))
        wrong = "POST" if r["method"] != "POST" else "GET"
        simple("M-405-ALLOW" + tag, "RFC 9110 §15.5.6; spec/wire.md §2",
               req(wrong, path, auth=auth,
                   body=b"abcd" if wrong == "POST" else b""),
               W_err(405, "method not allowed", fields={"Allow": allow}))
        for m in UNKNOWN_METHODS:
            simple("M-UNKNOWN-405[%s %s]" % (m, path), "RFC 9110 §9.1; "
                   "spec/wire.md §2", req(m, path, auth=auth),
                   W_err(405, "method not allowed", fields={"Allow": allow}))


# ---- the cases ----------------------------------------------------------


def walk_ctx():
    """What many cases share: the Host field, the API key's field, the
    binary Content-Type field, a walk body, its answer's length and
    check, and walk() (a POST /v1/walk-ffn with them)."""
    H = b"Host: fsa\r\n"
    K = key()
    CTB = b"Content-Type: " + CT_BIN.encode() + b"\r\n"
    wb, wl = walk_body(), walk_len()
    WALK_OK = W(200, body_len=wl, fields={"Content-Type": CT_BIN})

    def walk(fields=b"", body=None, **kw):
        return req("POST", "/v1/walk-ffn", CTB + fields,
                   wb if body is None else body, auth=True, **kw)
    return H, K, CTB, wb, wl, WALK_OK, walk


def cases_request():
    """Methods, target, request line, field syntax, Host"""
    H, K, CTB, wb, wl, WALK_OK, walk = walk_ctx()

    # -- methods
    simple("M-HEAD-404", "RFC 9110 §9.3.2, §8.6",
           req("GET", "/nope", auth=True) + req("HEAD", "/nope", auth=True),
           W_err(404, "not found"),
           W(404, head=True, fields={"Content-Length":
                                     str(len(E("not found")))}))
    simple("M-OPTIONS-404", "RFC 9110 §9.3.7", req("OPTIONS", "/nope",
                                                   auth=True),
           W_err(404, "not found"))
    for m in UNKNOWN_METHODS:
        simple("M-501[%s]" % m, "RFC 9110 §9.1",
               req(m, "/nope", auth=True), W_err(501,
                                                 "method not implemented"))
    simple("M-CASE", "RFC 9110 §9.1; spec/wire.md §2",
           req("get", "/v1/health"), W_err(405, "method not allowed",
                                           fields={"Allow": "GET, HEAD"}))
    simple("M-LONG", "RFC 9112 §3", req("X" * 200, "/nope", auth=True),
           W_err(501, "method not implemented"))

    # -- request target
    simple("T-ORIGIN-QUERY", "RFC 9112 §3.2.1",
           req("GET", "/v1/health?probe=1&x=%41"), W(200))
    simple("T-ABSOLUTE", "RFC 9112 §3.2.2",
           req("GET", "http://fsa/v1/health"), W(200))
    simple("T-ABSOLUTE-HOST", "RFC 9112 §3.2.2",
           b"GET http://fsa:8080/v1/health HTTP/1.1\r\n"
           b"Host: elsewhere.example\r\n\r\n", W(200))
    simple("T-ABSOLUTE-EMPTY-PATH", "RFC 9112 §3.2.2, RFC 9110 §4.2.3",
           req("GET", "http://fsa", auth=True), W_err(404, "not found"))
    for m in ("GET", "POST"):
        bad("T-ASTERISK-OTHER[%s]" % m, "RFC 9112 §3.2.4",
            req(m, "*"), 400, "malformed request target")
    bad("T-AUTHORITY", "RFC 9112 §3.2.3",
        req("CONNECT", "fsa:8080"), 400, "malformed request target")
    bad("T-FRAGMENT", "RFC 9112 §3.2", req("GET", "/v1/health#top"),
        400, "malformed request target")
    bad("T-BAD-PCT", "RFC 9112 §3.2, RFC 3986 §2.1",
        req("GET", "/v1/%zz"), 400, "malformed request target")
    bad("T-USERINFO", "RFC 9110 §4.2.4",
        req("GET", "http://u:p@fsa/v1/health"),
        400, "malformed request target")

    # -- request line, version, message syntax
    simple("L-LEADING-CRLF", "RFC 9112 §2.2",
           b"\r\n\r\n" + req("GET", "/v1/health"), W(200))
    bad("L-GARBAGE", "RFC 9112 §2.2", b"HELLO\r\n\r\n",
        400, "malformed request line: method")
    bad("L-DOUBLE-SP", "RFC 9112 §3",
        b"GET  /v1/health HTTP/1.1\r\n" + H + b"\r\n",
        400, "malformed request target")
    bad("L-SP-IN-TARGET", "RFC 9112 §3.2",
        b"GET /v1/he alth HTTP/1.1\r\n" + H + b"\r\n",
        400, "malformed HTTP version")
    bad("L-VERSION-CASE", "RFC 9112 §2.3",
        b"GET /v1/health http/1.1\r\n" + H + b"\r\n",
        400, "malformed HTTP version")
    simple("L-HTTP10", "RFC 9110 §2.5, RFC 9112 §9.3",
           b"GET /v1/health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
           W(200, fields={"Connection": "keep-alive"}))
    simple("L-HTTP11-MINOR", "RFC 9110 §2.5, RFC 9112 §2.3",
           req("GET", "/v1/health", version=b"HTTP/1.7"),
           W(200, fields={"Connection": "keep-alive"}))
    bad("L-BARE-LF", "RFC 9112 §2.2",
        b"GET /v1/health HTTP/1.1\nHost: fsa\n\n",
        400, "bare LF in request head")
    bad("L-BARE-CR", "RFC 9112 §2.2",
        b"GET /v1/health HTTP/1.1\r\nHost: fsa\r\nX: a\rb\r\n\r\n",
        400, "bare CR in request head")
    bad("L-WS-FIRST-LINE", "RFC 9112 §2.2",
        b"GET /v1/health HTTP/1.1\r\n Host: fsa\r\n\r\n",
        400, "obsolete line folding")

    # -- field syntax
    bad("S-WS-COLON", "RFC 9112 §5.1",
        b"GET /v1/health HTTP/1.1\r\nHost : fsa\r\n\r\n",
        400, "whitespace between field name and colon")
    bad("S-OBS-FOLD", "RFC 9112 §5.2",
        b"GET /v1/health HTTP/1.1\r\nHost: fsa\r\nX-A: 1\r\n\t2\r\n\r\n",
        400, "obsolete line folding")
    bad("S-NUL", "RFC 9110 §5.5",
        b"GET /v1/health HTTP/1.1\r\nHost: fsa\r\nX-A: a\0b\r\n\r\n",
        400, "invalid character in header")
    simple("S-NAME-CASE", "RFC 9110 §5.1",
           b"POST /v1/walk-ffn HTTP/1.1\r\nhOST: fsa\r\n"
           b"authorization: Bearer " + A.api_key.encode() + b"\r\n"
           b"CONTENT-TYPE: " + CT_BIN.encode() + b"\r\n"
           b"CONTENT-LENGTH: %d\r\n\r\n" % len(wb) + wb, WALK_OK)
    simple("S-OWS", "RFC 9110 §5.5, §5.6.3",
           b"POST /v1/walk-ffn HTTP/1.1\r\nHost:fsa\r\n" + K + CTB +
           b"Content-Length:\t %d \t\r\n\r\n" % len(wb) + wb, WALK_OK)
    simple("S-UNKNOWN-FIELD", "RFC 9110 §5.1",
           req("GET", "/v1/health", b"X-Unknown-Field: 1\r\nX-E:\r\n"),
           W(200))
    bad("S-DUP-SINGLETON", "RFC 9110 §5.3",
        walk(b"Content-Type: application/json\r\n"),
        400, "duplicate Content-Type")

    # -- Host
    bad("H-MISSING", "RFC 9112 §3.2",
        req("GET", "/v1/health", host=False), 400, "missing Host")
    bad("H-DUP", "RFC 9112 §3.2",
        req("GET", "/v1/health", b"Host: other\r\n"), 400, "duplicate Host")
    bad("H-DUP-HTTP10", "RFC 9112 §3.2",
        b"GET /v1/health HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n",
        400, "duplicate Host")
    bad("H-INVALID", "RFC 9112 §3.2, RFC 9110 §7.2",
        b"GET /v1/health HTTP/1.1\r\nHost: fsa/x\r\n\r\n", 400, "invalid Host")
    bad("H-INVALID-HTTP10", "RFC 9112 §3.2",
        b"GET /v1/health HTTP/1.0\r\nHost: a b\r\n\r\n", 400, "invalid Host")
    bad("H-ABSOLUTE-MISSING", "RFC 9112 §3.2, §3.2.2",
        req("GET", "http://fsa/v1/health", host=False), 400, "missing Host")
    simple("H-EMPTY", "RFC 9110 §7.2",
           b"GET /v1/health HTTP/1.1\r\nHost:\r\n\r\n", W(200))
    for v in (b"fsa:8080", b"198.18.3.2", b"[::1]:8080"):
        simple("H-FORMS[%s]" % v.decode(), "RFC 9110 §7.2, RFC 3986 "
               "§3.2.2", b"GET /v1/health HTTP/1.1\r\nHost: " + v +
               b"\r\n\r\n", W(200))
    simple("H-HTTP10-NONE", "RFC 9112 §3.2",
           b"GET /v1/health HTTP/1.0\r\n\r\n",
           W(200, fields={"Connection": "close"}), conn=CLOSED)


def cases_framing():
    """Message framing: Content-Length, chunked, incomplete input"""
    H, K, CTB, wb, wl, WALK_OK, walk = walk_ctx()

    # -- framing
    simple("F-CL", "RFC 9112 §6.3 item 6", walk(), WALK_OK)
    bad("F-CL-TE", "RFC 9112 §6.1, §6.3 item 3",
        walk(b"Transfer-Encoding: chunked\r\n", body=b"0\r\n\r\n",
             cl=5), 400, "both Content-Length and Transfer-Encoding")
    bad("F-CL-DIFF", "RFC 9112 §6.3 item 5",
        walk(b"Content-Length: %d\r\n" % (len(wb) - 4)),
        400, "conflicting Content-Length")
    bad("F-CL-LIST-DIFF", "RFC 9112 §6.3 item 5",
        req("POST", "/v1/walk-ffn", CTB + b"Content-Length: 4, 5\r\n",
            auth=True) + b"abcde", 400, "conflicting Content-Length")
    simple("F-CL-LIST-SAME", "RFC 9110 §8.6, RFC 9112 §6.3 item 5",
           req("POST", "/v1/walk-ffn", CTB + b"Content-Length: %d, %d\r\n"
               b"Content-Length: %d\r\n" % ((len(wb),) * 3), auth=True) +
           wb, WALK_OK)
    for v in (b"+4", b"-1", b"0x10", b"4 4", b"abc", b"",
              b"18446744073709551616"):
        bad("F-CL-INVALID[%s]" % v.decode(), "RFC 9112 §6.3 item 5",
            req("POST", "/v1/walk-ffn", CTB + b"Content-Length: " + v +
                b"\r\n", auth=True) + b"abcd", 400, "invalid Content-Length")

    def chunked(t):
        # sizes with leading zeros and in either case, an extension
        # (ignored), a trailer (dropped): the body is wb exactly.
        a, b = 7, 7 + 100
        body = (b"0007;name=\"v\" ; x\r\n" + wb[:a] + b"\r\n" +
                b"%X\r\n" % (b - a) + wb[a:b] + b"\r\n" +
                b"%x;e\r\n" % (len(wb) - b) + wb[b:] + b"\r\n" +
                b"0;last\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\n")
        t.connect()
        t.send(req("POST", "/v1/walk-ffn", CTB +
                   b"Transfer-Encoding: chunked\r\n", auth=True) + body)
        t.answer(**WALK_OK)
        t.open()
    CASES.append(Case("F-TE-CHUNKED", "RFC 9112 §7.1, §7.1.1, §7.1.2",
                      chunked))
    simple("F-TE-CASE", "RFC 9112 §7",
           req("POST", "/v1/walk-ffn", CTB + b"Transfer-Encoding: Chunked"
               b"\r\n", auth=True) + b"%x\r\n" % len(wb) + wb +
           b"\r\n0\r\n\r\n", WALK_OK)
    for v in (b"gzip", b"chunked, gzip", b"xchunked"):
        bad("F-TE-NOT-FINAL[%s]" % v.decode(), "RFC 9112 §6.3 item 4",
            req("POST", "/v1/walk-ffn", CTB + b"Transfer-Encoding: " +
                v + b"\r\n", auth=True) + b"0\r\n\r\n",
            400, "chunked is not the final coding")
    bad("F-TE-UNKNOWN", "RFC 9112 §6.1",
        req("POST", "/v1/walk-ffn", CTB + b"Transfer-Encoding: gzip, "
            b"chunked\r\n", auth=True) + b"0\r\n\r\n",
        501, "unsupported transfer coding")
    bad("F-TE-TWICE", "RFC 9112 §6.1",
        req("POST", "/v1/walk-ffn", CTB + b"Transfer-Encoding: chunked"
            b"\r\nTransfer-Encoding: chunked\r\n", auth=True) +
        b"0\r\n\r\n", 400, "chunked is not the final coding")
    bad("F-TE-HTTP10", "RFC 9112 §6.1",
        b"POST /v1/walk-ffn HTTP/1.0\r\n" + K + CTB +
        b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        400, "Transfer-Encoding in an HTTP/1.0 request")
    bad("F-CHUNK-BAD", "RFC 9112 §7.1",
        req("POST", "/v1/walk-ffn", CTB + b"Transfer-Encoding: chunked"
            b"\r\n", auth=True) + b"zz\r\n", 400, "malformed chunk size")
    bad("F-CHUNK-OVERFLOW", "RFC 9112 §7.1",
        req("POST", "/v1/walk-ffn", CTB + b"Transfer-Encoding: chunked"
            b"\r\n", auth=True) + b"10000000000000004\r\nabcd\r\n",
        400, "chunk size overflow")
    bad("F-CHUNK-NO-CRLF", "RFC 9112 §7.1",
        req("POST", "/v1/walk-ffn", CTB + b"Transfer-Encoding: chunked"
            b"\r\n", auth=True) + b"4\r\nabcdXY",
        400, "chunk data not followed by CRLF")
    bad("F-CHUNK-EXT-LONG", "RFC 9112 §7.1.1",
        req("POST", "/v1/walk-ffn", CTB + b"Transfer-Encoding: chunked"
            b"\r\n", auth=True) + b"4;" + b"e" * 1100 + b"\r\n",
        400, "chunk size line too long")
    simple("F-BODY-ON-GET", "RFC 9112 §6, §9.3; RFC 9110 §9.3.1",
           req("GET", "/v1/health", body=b"GET /x HTTP/1.1\r\n\r\n") +
           req("GET", "/v1/health"), W(200), W(200))
    simple("F-BODY-DROPPED", "RFC 9112 §9.3",
           req("POST", "/nope", b"Transfer-Encoding: chunked\r\n",
               auth=True) + b"5\r\nhello\r\n0\r\n\r\n" +
           req("POST", "/nope", body=b"GET /x HTTP/1.1\r\n\r\n",
               auth=True), W_err(404, "not found"),
           W_err(404, "not found"))

    def cl_incomplete(t):
        t.connect()
        t.send(walk(cl=len(wb))[:-len(wb) + 10])
        t.shut()
        t.answer(**W_close(408, "request body timeout"),
                 timeout=A.body_timeout_ms / 1000 + 10)
        t.closed()
    CASES.append(Case("F-CL-INCOMPLETE", "RFC 9112 §6.3 item 6, §8",
                      cl_incomplete))

    def head_incomplete(t):
        t.connect()
        t.send(b"GET /v1/health HTTP/1.1\r\nHost: fsa\r\n")
        t.shut()
        t.closed(wait=A.header_timeout_ms / 1000 + 10)
    CASES.append(Case("F-HEAD-INCOMPLETE", "RFC 9112 §8",
                      head_incomplete))


def cases_expect():
    """Expect and 1xx"""
    H, K, CTB, wb, wl, WALK_OK, walk = walk_ctx()

    # -- Expect and 1xx
    def expect_100(t):
        t.connect()
        t.send(walk(b"Expect: 100-continue\r\n", body=b"", cl=len(wb)))
        t.answer(100, body=b"")
        t.check(t.got[-1].line == b"HTTP/1.1 100 Continue" and
                not t.got[-1].fields, "interim answer %r" % t.got[-1])
        t.send(wb)
        t.answer(**WALK_OK)
        t.open()
    CASES.append(Case("E-100", "RFC 9110 §10.1.1, §15.2.1", expect_100))

    def expect_final(head, status, msg):
        """Expect: 100-continue on a request refused from its head: the
        refusal comes at once (or a 100 first), never a wait for the
        body (which the client holds back)."""
        def fn(t):
            t.connect()
            t.send(head)
            a = t.answer((100, status),
                         timeout=A.body_timeout_ms / 1000 + 10)
            if a.status == 100:
                t.send(b"\0" * 16)
                a = t.answer(status)
            elif not a.says_close():
                t.send(b"\0" * 16)	# the server reads on (§10.1.1)
            if msg is not None:
                t.check(a.body == E(msg), "body %r" % a.body)
            if a.says_close():
                t.closed()
            else:
                t.open()
        return fn
    for status, head, msg in (
            (401, req("POST", "/v1/walk-ffn", CTB + b"Expect: 100-continue"
                      b"\r\n", cl=16), None),
            (404, req("POST", "/nope", b"Expect: 100-continue\r\n",
                      auth=True, cl=16), "not found"),
            (405, req("POST", "/v1/health", b"Expect: 100-continue\r\n",
                      cl=16), "method not allowed"),
            (413, req("POST", "/v1/walk-ffn", CTB + b"Expect: 100-continue"
                      b"\r\n", auth=True, cl=A.max_body + 1),
             "request body too large")):
        CASES.append(Case("E-100-FINAL[%d]" % status, "RFC 9110 §10.1.1",
                          expect_final(head, status, msg)))

    def expect_nobody_route(t):
        # a route that takes no body: 100 (then the body is dropped)
        # or the answer at once; never a wait for the body. Answered at
        # once, the connection is closed or reads the body on (§10.1.1).
        t.connect()
        t.send(req("GET", "/v1/health", b"Expect: 100-continue\r\n",
                   cl=16))
        a = t.answer((100, 200), timeout=A.body_timeout_ms / 1000 + 10)
        if a.status == 100:
            t.send(b"\0" * 16)
            a = t.answer(200)
        elif not a.says_close():
            t.send(b"\0" * 16)
        if a.says_close():
            t.closed()
        else:
            t.open()
    CASES.append(Case("E-100-UNUSED-BODY", "RFC 9110 §10.1.1",
                      expect_nobody_route))
    simple("E-100-NO-CONTENT", "RFC 9110 §10.1.1",
           walk(b"Expect: 100-continue\r\n", body=b"", cl=0),
           W_err(400, "binary: body too short (need \u2265 16 bytes)"))
    bad("E-417", "RFC 9110 §10.1.1, §15.5.18",
        walk(b"Expect: 200-ok\r\n"), 417, "unsupported expectation")

    def expect_http10(t):
        # no 100 to an HTTP/1.0 client: the body follows a pause in
        # which a 100 would have come; the first answer is the final one.
        t.connect()
        t.send(b"POST /v1/walk-ffn HTTP/1.0\r\nConnection: keep-alive\r\n"
               + K + CTB + b"Expect: 100-continue\r\nContent-Length: %d"
               b"\r\n\r\n" % len(wb))
        time.sleep(0.3)
        t.send(wb)
        t.answer(**WALK_OK)
        t.open()
    CASES.append(Case("I-NO-1XX-HTTP10", "RFC 9110 §15.2, §10.1.1",
                      expect_http10))

    def continue_order(t):
        t.connect()
        t.send(req("GET", "/v1/health") +
               walk(b"Expect: 100-continue\r\n", body=b"", cl=len(wb)))
        t.answer(200)
        t.answer(100)
        t.send(wb)
        t.answer(**WALK_OK)
        t.open()
    CASES.append(Case("I-100-ORDER", "RFC 9110 §15.2, RFC 9112 §9.3.2",
                      continue_order))
    simple("I-NO-101", "RFC 9110 §7.8",
           req("GET", "/v1/health", b"Connection: Upgrade\r\n"
               b"Upgrade: h2c, websocket\r\nHTTP2-Settings: AAMAAABkAAQ\r\n"),
           W(200, absent=("Upgrade",)))


def cases_persistence():
    """Optional semantics, then persistence"""
    H, K, CTB, wb, wl, WALK_OK, walk = walk_ctx()

    # -- optional semantics: conditionals, ranges, negotiation, codings
    simple("O-IF-NONE-MATCH", "RFC 9110 §13.1.2, §13.2.1",
           req("GET", "/v1/health", b"If-None-Match: *\r\n"), W(200))
    simple("O-IF-MATCH", "RFC 9110 §13.1.1, §13.2.1",
           walk(b'If-Match: "x"\r\n'), WALK_OK)
    simple("O-IF-DATES", "RFC 9110 §13.1.3, §13.1.4",
           req("GET", "/v1/health", b"If-Modified-Since: Sun, 06 Nov 2044 "
               b"08:49:37 GMT\r\nIf-Unmodified-Since: Sun, 06 Nov 1994 "
               b"08:49:37 GMT\r\n"), W(200, absent=("Last-Modified",)))
    simple("O-RANGE", "RFC 9110 §14.2",
           req("GET", "/v1/health", b"Range: bytes=0-3\r\n"),
           W(200, absent=("Content-Range",),
             body_len=lambda n: n > 4))
    simple("O-ACCEPT", "RFC 9110 §12.5.1; spec/wire.md §5.1",
           walk(b"Accept: text/html\r\n"), WALK_OK)
    simple("O-ACCEPT-ENCODING", "RFC 9110 §12.5.3",
           req("GET", "/v1/health", b"Accept-Encoding: gzip, br\r\n"),
           W(200, absent=("Content-Encoding",)))
    simple("O-CONTENT-ENCODING", "RFC 9110 §8.4",
           walk(b"Content-Encoding: gzip\r\n"), WALK_OK)

    # -- persistence
    def keepalive(t):
        t.connect()
        for p in ("/v1/health", "/v1/stats", "/v1/models"):
            t.send(req("GET", p, auth=True))
            t.answer(200, fields={"Connection": "keep-alive"})
        t.open()
    CASES.append(Case("C-KEEPALIVE", "RFC 9112 §9.3", keepalive))
    simple("C-CLOSE", "RFC 9112 §9.6",
           req("GET", "/v1/health", b"Connection: close\r\n"),
           W(200, fields={"Connection": "close"}), conn=CLOSED)
    simple("C-CLOSE-PIPELINED", "RFC 9112 §9.6",
           req("GET", "/v1/health", b"Connection: close\r\n") +
           req("GET", "/v1/health") + req("GET", "/v1/stats", auth=True),
           W(200, fields={"Connection": "close"}), conn=CLOSED)
    simple("C-CLOSE-TOKEN", "RFC 9110 §7.6.1",
           req("GET", "/v1/health", b"Connection: Upgrade, CLOSE\r\n"),
           W(200, fields={"Connection": "close"}), conn=CLOSED)
    simple("C-HTTP10-DEFAULT", "RFC 9112 §9.3",
           b"GET /v1/health HTTP/1.0\r\nHost: fsa\r\n\r\n",
           W(200, fields={"Connection": "close"}), conn=CLOSED)
    simple("C-HTTP10-KEEPALIVE", "RFC 9112 §9.3, Appendix C.2.2",
           b"GET /v1/health HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n" +
           b"GET /v1/health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
           W(200, fields={"Connection": "keep-alive"}),
           W(200, fields={"Connection": "keep-alive"}))
    simple("C-UNKNOWN-OPTION", "RFC 9110 §7.6.1",
           req("GET", "/v1/health", b"Connection: foo, bar\r\n"),
           W(200, fields={"Connection": "keep-alive"}))
    simple("C-PIPELINE", "RFC 9112 §9.3.2",
           req("GET", "/v1/health") + req("HEAD", "/v1/stats", auth=True) +
           req("GET", "/nope", auth=True) + req("OPTIONS", "*") +
           walk() + req("POST", "/v1/health", body=b"x") +
           req("GET", "/v1/models", auth=True),
           W(200, body_len=None), W(200, head=True), W_err(404, "not found"),
           W(200, fields={"Allow": "GET, HEAD, POST"}), WALK_OK,
           W_err(405, "method not allowed"), W(200))
    simple("C-PIPELINE-DEPTH", "RFC 9112 §9.3.2",
           b"".join(req("GET", "/v1/health?n=%d" % i) for i in range(40)),
           *[W(200)] * 40)

    def half_close(t):
        t.connect()
        t.send(req("GET", "/v1/health") + req("GET", "/v1/stats",
                                              auth=True))
        t.shut()
        t.answer(200)
        t.answer(200)
        t.closed()
    CASES.append(Case("C-HALF-CLOSE", "RFC 9112 §9.6", half_close))

    def bytewise(t):
        t.connect()
        for b in walk():
            t.send(bytes([b]))
        t.answer(**WALK_OK)
        t.open()
    CASES.append(Case("C-BYTEWISE", "RFC 9112 §2.1", bytewise))

    def nagle(t):
        # A sender with Nagle on (the socket default) holds a sub-MSS
        # tail while anything it sent is unacknowledged (RFC 9293
        # §3.7.4): a request still arriving must be ACKed, or every one
        # whose segments before the tail are odd in number (the stack
        # ACKs every second one) waits for the delayed-ACK timer (40 ms
        # here). Heads and bodies in two writes: a body under one MSS
        # (1-5 rows, 272-1296 bytes) waits for the head's ACK. 30 walks.
        c = t.connect()
        c.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
        slow = []
        for i in range(30):
            rows = 1 + i % 5
            body = struct.pack("<IIII", 0, rows, 1, 8092) + \
                b"\0" * (4 * A.hidden * rows)
            head = req("POST", "/v1/walk-ffn", CTB, auth=True,
                       cl=len(body))
            t0 = time.time()
            t.send(head)
            t.send(body)
            t.answer(200, body_len=12 + 4 * A.hidden * rows)
            if time.time() - t0 > 0.030:
                slow.append(rows)
        # a stall is 40 ms; allow a few slow answers on a loaded host
        t.check(len(slow) <= 4, "answers over 30 ms (rows): %s" % slow)
        t.open()
    CASES.append(Case("C-NAGLE", "RFC 9293 §3.7.4, §3.8.6.3", nagle))

    def idle(t):
        # closed gracefully (a FIN, not a reset), and not before
        # idle_timeout_ms
        t.connect()
        t.send(req("GET", "/v1/health"))
        t.answer(200, fields={"Connection": "keep-alive"})
        t0 = time.time()
        t.last = None		# closing an idle connection says nothing
        t.closed(wait=A.idle_timeout_ms / 1000 + 10)
        dt = time.time() - t0
        t.check(dt >= 0.9 * A.idle_timeout_ms / 1000,
                "closed after %.2f s, idle_timeout_ms %d"
                % (dt, A.idle_timeout_ms))
    CASES.append(Case("C-IDLE", "RFC 9112 §9.5", idle))


def cases_errors():
    """What follows an error, and the limits"""
    H, K, CTB, wb, wl, WALK_OK, walk = walk_ctx()

    # -- what follows an error
    simple("X-PARSE-ERROR-CLOSE", "RFC 9112 §9.6, §2.2",
           req("GET", "/v1/health") + b"GET /v1/health HTTP/1.1\r\n\r\n" +
           req("GET", "/v1/stats", auth=True),
           W(200, fields={"Connection": "keep-alive"}),
           W_close(400, "missing Host"), conn=CLOSED)
    for status, raw in (
            (404, req("GET", "/nope", auth=True)),
            (405, req("DELETE", "/v1/walk-ffn", auth=True)),
            (400, walk(body=b"\1" * 15)),
            (401, req("POST", "/v1/walk-ffn", CTB, wb)),
            (501, req("PATCH", "/nope", auth=True))):
        simple("X-ROUTE-ERROR-OPEN[%d]" % status, "RFC 9112 §9.3",
               raw, W(status, fields={"Connection": "keep-alive"}))

    def linger(t):
        # more request bytes behind a bad one: the 400 still arrives
        # whole (RFC 9112 §9.6, the TCP reset problem).
        t.connect()
        t.send(b"HELLO\r\n\r\n" + b"x" * 65536)
        time.sleep(0.3)
        try:
            t.c.s.sendall(b"y" * 65536)
        except OSError:
            pass		# the server has closed: expected
        time.sleep(0.3)
        t.answer(**W_close(400, "malformed request line: method"))
        t.closed(rst_ok=True)
    CASES.append(Case("X-LINGER", "RFC 9112 §9.6", linger))

    # -- limits
    def head_408(t):
        t.connect()
        t.send(b"GET /v1/health HTTP/1.1\r\nHost: fsa\r\nX-Slow: 1")
        t.answer(**W_close(408, "request header timeout"),
                 timeout=A.header_timeout_ms / 1000 + 10)
        t.closed()
    CASES.append(Case("LIM-408-HEAD", "RFC 9110 §15.5.9", head_408))

    def body_408(t):
        t.connect()
        t.send(walk(cl=len(wb))[:-len(wb) + 5])
        t.answer(**W_close(408, "request body timeout"),
                 timeout=A.body_timeout_ms / 1000 + 10)
        t.closed()
    CASES.append(Case("LIM-408-BODY", "RFC 9110 §15.5.9", body_408))
    simple("LIM-411", "RFC 9112 §6.3 item 7, RFC 9110 §15.5.12; "
           "spec/wire.md §4", req("POST", "/v1/walk-ffn", CTB, auth=True),
           W_err(400, "binary: body too short (need \u2265 16 bytes)",
                 fields={"Connection": "keep-alive"}))
    simple("LIM-411-JSON", "RFC 9112 §6.3 item 7; spec/wire.md §6",
           req("POST", "/v1/walk-ffn", auth=True),
           W(400, fields={"Connection": "keep-alive",
                          "Content-Type": "application/json"}))
    for cl in (A.max_body + 1, (1 << 64) - 1):
        bad("LIM-413-CL[%d]" % cl, "RFC 9110 §15.5.14",
            req("POST", "/v1/walk-ffn", CTB, auth=True, cl=cl) + wb,
            413, "request body too large")
    simple("LIM-413-CL-EXACT", "RFC 9110 §15.5.14",
           walk(body=b"\0" * A.max_body),
           W(400, fields={"Connection": "keep-alive"}))

    def chunked_413(t):
        t.connect()
        t.send(req("POST", "/v1/walk-ffn", CTB + b"Transfer-Encoding: "
                   b"chunked\r\n", auth=True))
        chunk = b"400\r\n" + b"\0" * 1024 + b"\r\n"
        try:
            for _ in range(A.max_body // 1024 + 1):
                t.send(chunk)
        except OSError:
            pass
        t.answer(**W_close(413, "request body too large"))
        t.closed()
    CASES.append(Case("LIM-413-CHUNKED", "RFC 9110 §15.5.14",
                      chunked_413))
    bad("LIM-414", "RFC 9112 §3, RFC 9110 §15.5.15",
        req("GET", "/v1/health?" + "a" * (A.max_header + 10)),
        414, "request line too long")
    bad("LIM-431", "RFC 9110 §5.4, RFC 6585 §5",
        req("GET", "/v1/health", b"X-Big: " + b"b" * A.max_header +
            b"\r\n"), 431, "request header fields too large")
    bad("LIM-431-TRAILER", "RFC 9112 §7.1.2, RFC 6585 §5",
        req("POST", "/v1/walk-ffn", CTB + b"Transfer-Encoding: chunked"
            b"\r\n", auth=True) + b"0\r\nX-T: " + b"t" * A.max_header +
        b"\r\n\r\n", 431, "trailer fields too large")
    for v in (b"HTTP/2.0", b"HTTP/0.9", b"HTTP/3.1"):
        bad("LIM-505[%s]" % v.decode(), "RFC 9110 §15.6.6, §2.5",
            req("GET", "/v1/health", version=v),
            505, "HTTP version not supported")

    def rate_429(t):
        # A client of its own (X-Forwarded-For, trust_forwarded_for =
        # on) spends its rate_limit tokens on OPTIONS *, pipelined in
        # batches; the next request is 429 with Retry-After, and the
        # connection goes on.
        xff = b"X-Forwarded-For: 192.0.2.77\r\n"
        one = req("OPTIONS", "*", xff)
        t.connect()
        left = A.rate_limit
        while left > 0:
            n = min(left, 50)
            t.c.send(one * n)
            for _ in range(n):
                a = read_answer(t.c)
                for k, why in invariants(a):
                    INV[k][1].append(t.cid)
                    t.fail("%s: %s" % (k, why))
                if a.status != 200:
                    raise Bad("token %d: %d" % (A.rate_limit - left,
                                                a.status))
            left -= n
        t.send(req("GET", "/v1/stats", xff, auth=True))
        t.answer(429, body=b"rate limit exceeded",
                 fields={"Content-Type": "text/plain; charset=utf-8",
                         "Retry-After": lambda v: v.isdigit() and
                         int(v) >= 1, "Connection": "keep-alive"})
        t.open()
    CASES.append(Case("A-429", "RFC 6585 §4, RFC 9110 §10.2.3", rate_429))


def cases_auth():
    """Authorization (issue 4)"""
    H, K, CTB, wb, wl, WALK_OK, walk = walk_ctx()

    # -- authorization (issue 4)
    simple("A-401", "RFC 9110 §11.6.1, §15.5.2",
           req("GET", "/v1/stats"),
           W(401, body=b"", absent=("Content-Type",),
             fields={"WWW-Authenticate": "Bearer",
                     "Content-Length": "0"}))
    simple("A-401-BODY-DROPPED", "RFC 9112 §9.3",
           walk(body=wb).replace(key(), b"") + req("GET", "/v1/health"),
           W(401, body=b""), W(200))
    simple("A-401-BEFORE-404", "RFC 9110 §15.5.2",
           req("GET", "/nope"), W(401, body=b""))
    simple("A-401-HEAD", "RFC 9110 §9.3.2, §15.5.2",
           req("HEAD", "/v1/stats"),
           W(401, head=True, fields={"Content-Length": "0"}))
    simple("A-HEALTH-OPEN", "spec/wire.md §2",
           req("GET", "/v1/health"), W(200))
    simple("A-SCHEME-CASE", "RFC 9110 §11.1",
           req("GET", "/v1/stats", b"Authorization: bEaReR " +
               A.api_key.encode() + b"\r\n"), W(200))
    simple("A-WRONG-KEY", "RFC 9110 §15.5.2",
           req("GET", "/v1/stats", b"Authorization: Bearer " +
               A.api_key.encode()[:-1] + b"x\r\n"), W(401, body=b""))
    bad("A-DUP", "RFC 9110 §5.3",
        req("GET", "/v1/stats", b"Authorization: Bearer x\r\n",
            auth=True), 400, "duplicate Authorization")


def fixed_cases():
    """Every case not generated from the route table."""
    cases_request()
    cases_framing()
    cases_expect()
    cases_persistence()
    cases_errors()
    cases_auth()
