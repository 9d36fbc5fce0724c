#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""The harness of conformance.py (issue 24): raw requests, answers read
byte by byte, the invariants every answer is held to, and the case
builders (simple, bad, W...) the cases of conformance_cases.py use."""

import argparse
import calendar
import json
import os
import re
import socket
import struct
import time

import fsa

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
DOC = os.path.join(ROOT, "docs", "HTTP-CONFORMANCE.md")

# The arguments, and hidden: the model's hidden size (/v1/stats); one
# object that conformance.py fills and every module reads.
A = argparse.Namespace(hidden=0)
OPEN, CLOSED = "open", "closed"
UNKNOWN_METHODS = ("FOO", "PATCH", "PUT", "DELETE", "TRACE")
CT_BIN = "application/x-larql-ffn"

# Invariants over every answer: id -> [answers checked, failures].
INV = {k: [0, []] for k in (
    "R-STATUS-LINE", "R-DATE", "R-CONTENT-LENGTH", "R-NO-TE",
    "R-CONTENT-TYPE", "R-401-CHALLENGE", "R-405-ALLOW", "I-1XX-FIELDS",
    "X-ERROR-BODY", "X-CLOSE-MEANS-CLOSE")}
INV_RFC = {
    "R-STATUS-LINE": "RFC 9112 §4, RFC 9110 §2.5",
    "R-DATE": "RFC 9110 §6.6.1, §5.6.7",
    "R-CONTENT-LENGTH": "RFC 9110 §8.6, RFC 9112 §6.3",
    "R-NO-TE": "RFC 9112 §6.1",
    "R-CONTENT-TYPE": "RFC 9110 §8.3",
    "R-401-CHALLENGE": "RFC 9110 §11.6.1, §15.5.2",
    "R-405-ALLOW": "RFC 9110 §15.5.6",
    "I-1XX-FIELDS": "RFC 9110 §8.6, §15.2",
    "X-ERROR-BODY": "spec/wire.md §4",
    "X-CLOSE-MEANS-CLOSE": "RFC 9112 §9.6",
}
# Statuses the rules of every answer must have seen at least once (so
# that "every status has one Date and one Content-Length" is not vacuous).
MUST_SEE = {100, 200, 400, 401, 404, 405, 408, 413, 414, 417, 429, 431,
            501, 505}
SEEN = set()
IMF = re.compile(r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|"
                 r"May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT")


def E(msg):
    """spec/wire.md §4: an error body, {"error":"MSG"}."""
    return b'{"error":"' + msg.encode("utf-8") + b'"}'


def key():
    return b"Authorization: Bearer " + A.api_key.encode() + b"\r\n"


def req(method, target, fields=b"", body=b"", version=b"HTTP/1.1",
        host=True, auth=False, cl=None):
    """A request's bytes: Host unless host is False, the key if auth,
    Content-Length cl (None: len(body) when there is a body)."""
    if isinstance(method, str):
        method = method.encode()
    if isinstance(target, str):
        target = target.encode()
    h = method + b" " + target + b" " + version + b"\r\n"
    if host:
        h += b"Host: fsa\r\n"
    if auth:
        h += key()
    if cl is None and body:
        cl = len(body)
    if cl is not None:
        h += b"Content-Length: %d\r\n" % cl
    return h + fields + b"\r\n" + body


def walk_body():
    """A valid binary walk-ffn body: layer 0, one row of zeros (f32);
    its answer is a single frame of 12 + 4 * hidden bytes (§5.2)."""
    return struct.pack("<IIII", 0, 1, 1, 8092) + b"\0" * (4 * A.hidden)


def walk_len():
    return 12 + 4 * A.hidden


# ---- answers ---------------------------------------------------------

class Bad(Exception):
    """The answer (or its absence) breaks the case: stop it here."""


class Answer:
    def __init__(self, line, fields, body, head):
        self.line = line
        m = re.match(rb"HTTP/(\d)\.(\d) (\d{3})", line)
        self.status = int(m.group(3)) if m else 0
        self.fields = fields		# [(name lower, value)], in order
        self.body = body
        self.head = head		# answer to HEAD: no body

    def all(self, name):
        return [v for k, v in self.fields if k == name]

    def get(self, name):
        v = self.all(name)
        return v[0] if v else None

    def says_close(self):
        return any(t.strip().lower() == "close"
                   for v in self.all("connection") for t in v.split(","))

    def __repr__(self):
        b = self.body if len(self.body) <= 120 else self.body[:120] + b".."
        return "%s %s %r" % (self.line.decode("latin-1"),
                             "; ".join("%s: %s" % f for f in self.fields), b)


def fill(c):
    try:
        d = c.s.recv(1 << 20)
    except socket.timeout:
        raise Bad("no answer within %.0f s (got so far: %r)" %
                  (c.s.gettimeout(), c.buf[:200]))
    except ConnectionResetError:
        raise Bad("connection reset before the answer (got so far: %r)" %
                  c.buf[:200])
    if not d:
        raise Bad("connection closed before the answer (got so far: %r)"
                  % c.buf[:200])
    c.buf += d


def read_answer(c, head=False):
    """One answer off c (an fsa.Http), read strictly: CRLF lines, a
    status line, name: value fields, then Content-Length bytes of body
    (none for 1xx and for an answer to HEAD)."""
    while b"\r\n\r\n" not in c.buf:
        fill(c)
    raw, c.buf = c.buf.split(b"\r\n\r\n", 1)
    lines = raw.split(b"\r\n")
    if not re.fullmatch(rb"HTTP/\d\.\d \d{3} [\t\x20-\x7e\x80-\xff]*",
                        lines[0]):
        raise Bad("malformed status line %r" % lines[0])
    fields = []
    for ln in lines[1:]:
        name, sep, v = ln.partition(b":")
        if not sep or not re.fullmatch(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+",
                                       name) or b"\n" in ln:
            raise Bad("malformed field line %r" % ln)
        fields.append((name.decode().lower(),
                       v.decode("latin-1").strip(" \t")))
    a = Answer(lines[0], fields, b"", head)
    if 100 <= a.status < 200 or head:
        return a
    cls = a.all("content-length")
    if len(cls) != 1 or not cls[0].isdigit():
        raise Bad("R-CONTENT-LENGTH: cannot frame the body: "
                  "Content-Length %r" % cls)
    n = int(cls[0])
    while len(c.buf) < n:
        fill(c)
    a.body, c.buf = c.buf[:n], c.buf[n:]
    return a


def invariants(a):
    """The rules every answer keeps: [(invariant id, problem)]."""
    bad = []
    SEEN.add(a.status)

    def inv(k, ok, why):
        INV[k][0] += 1
        if not ok:
            bad.append((k, why))
    inv("R-STATUS-LINE", re.fullmatch(rb"HTTP/1\.1 [1-5]\d\d [\x20-\x7e]+",
                                      a.line) is not None,
        "status line %r" % a.line)
    inv("R-NO-TE", not a.all("transfer-encoding"),
        "Transfer-Encoding %r" % a.all("transfer-encoding"))
    if a.status < 200:
        inv("I-1XX-FIELDS", not a.all("content-length"),
            "Content-Length in a 1xx")
        return bad
    dates = a.all("date")
    ok = len(dates) == 1 and IMF.fullmatch(dates[0]) is not None
    if ok:
        t = calendar.timegm(time.strptime(dates[0],
                                          "%a, %d %b %Y %H:%M:%S GMT"))
        ok = abs(t - time.time()) < 600
    inv("R-DATE", ok, "Date %r (one IMF-fixdate, the current time)" % dates)
    cls = a.all("content-length")
    inv("R-CONTENT-LENGTH", len(cls) == 1 and cls[0].isdigit() and
        (a.head or int(cls[0]) == len(a.body)),
        "Content-Length %r for %d body bytes" % (cls, len(a.body)))
    inv("R-CONTENT-TYPE", a.head or not a.body or
        len(a.all("content-type")) == 1,
        "%d body bytes with Content-Type %r" % (len(a.body),
                                                a.all("content-type")))
    if a.status == 401:
        inv("R-401-CHALLENGE", any(v.lower().startswith("bearer")
                                   for v in a.all("www-authenticate")),
            "WWW-Authenticate %r" % a.all("www-authenticate"))
    if a.status == 405:
        inv("R-405-ALLOW", len(a.all("allow")) == 1,
            "Allow %r" % a.all("allow"))
    if a.status >= 400 and a.status not in (401, 429) and not a.head:
        ok = a.get("content-type") == "application/json"
        try:
            j = json.loads(a.body)
            ok = ok and isinstance(j, dict) and list(j) == ["error"] and \
                j["error"] != ""
        except ValueError:
            ok = False
        inv("X-ERROR-BODY", ok, "error body %r (%s)" %
            (a.body[:80], a.get("content-type")))
    return bad


# ---- a case's run -----------------------------------------------------

class T:
    """One case's connection(s), what was sent and what came back."""

    def __init__(self, cid):
        self.cid = cid
        self.c = None
        self.sent = b""
        self.got = []
        self.fails = []
        self.last = None
        self.half = False		# the client closed its side

    def fail(self, why):
        self.fails.append(why)

    def check(self, ok, why):
        if not ok:
            self.fail(why)
        return ok

    def connect(self, timeout=10.0):
        if self.c is not None:
            self.c.close()
        self.c = fsa.Http(A.host, A.port, timeout=timeout)
        self.last = None
        return self.c

    def send(self, data):
        self.sent += data
        self.c.send(data)

    def answer(self, status=None, head=False, fields=None, absent=(),
               body=None, body_len=None, timeout=None):
        """Read the next answer and check it: status (an int or a tuple
        of the statuses allowed), fields {name: value, or a function of
        the value}, absent names, the body exactly or its length."""
        if timeout is not None:
            self.c.s.settimeout(timeout)
        a = read_answer(self.c, head)
        self.got.append(a)
        if a.status >= 200:
            self.last = a
        for k, why in invariants(a):
            INV[k][1].append(self.cid)
            self.fail("%s: %s" % (k, why))
        if status is not None and a.status not in (
                status if isinstance(status, tuple) else (status,)):
            raise Bad("status %d, want %s" % (a.status, status))
        for k, v in (fields or {}).items():
            got = a.all(k.lower())
            if len(got) != 1:
                self.fail("%s: %r, want one" % (k, got))
            elif callable(v):
                self.check(v(got[0]), "%s: %r" % (k, got[0]))
            else:
                self.check(got[0] == v, "%s: %r, want %r" % (k, got[0], v))
        for k in absent:
            self.check(not a.all(k.lower()), "%s present: %r" %
                       (k, a.all(k.lower())))
        if body is not None:
            self.check(a.body == body, "body %r, want %r" % (a.body, body))
        if callable(body_len):
            self.check(body_len(len(a.body)), "body of %d bytes" %
                       len(a.body))
        elif body_len is not None:
            self.check(len(a.body) == body_len, "body of %d bytes, want %d"
                       % (len(a.body), body_len))
        return a

    def shut(self):
        """Close the client's side (a FIN after the bytes sent)."""
        self.half = True
        self.c.s.shutdown(socket.SHUT_WR)

    def _says(self, state):
        """X-CLOSE-MEANS-CLOSE: an answer saying "close" is followed by
        the close; and unless the client closed first, a close follows
        only an answer saying so."""
        if self.last is None:
            return
        INV["X-CLOSE-MEANS-CLOSE"][0] += 1
        if self.last.says_close() != (state == CLOSED) and not (
                self.half and state == CLOSED):
            INV["X-CLOSE-MEANS-CLOSE"][1].append(self.cid)
            self.fail("X-CLOSE-MEANS-CLOSE: the answer says Connection: "
                      "%s, and the connection is %s" %
                      (self.last.get("connection"), state))

    def open(self):
        """The connection goes on: a GET /v1/health on it is answered."""
        self._says(OPEN)
        self.send(b"GET /v1/health HTTP/1.1\r\nHost: fsa\r\n\r\n")
        try:
            a = self.answer(200)
        except Bad as e:
            raise Bad("connection not usable after the answer: %s" % e)
        self.check(b'"status":"ok"' in a.body, "follow-up health body %r"
                   % a.body)

    def closed(self, wait=5.0, rst_ok=False):
        """The server closes: EOF (a FIN; a reset only if rst_ok) with no
        byte after the last answer. Returns "fin" or "rst"."""
        self._says(CLOSED)
        self.c.s.settimeout(wait)
        extra = self.c.buf
        how = None
        try:
            while True:
                d = self.c.s.recv(1 << 16)
                if not d:
                    how = "fin"
                    break
                extra += d
        except socket.timeout:
            self.fail("not closed within %.0f s of the answer" % wait)
        except ConnectionResetError:
            how = "rst"
            if not rst_ok:
                self.fail("reset (RST) instead of a close (FIN)")
        if extra:
            self.fail("%d bytes after the answer: %r" % (len(extra),
                                                          extra[:80]))
        return how


class Case:
    def __init__(self, cid, rfc, fn):
        self.cid = cid
        self.rfc = rfc
        self.fn = fn

    @property
    def base(self):
        return self.cid.split("[", 1)[0]


CASES = []


def simple(cid, rfc, raw, *wants, conn=OPEN):
    """A case of one write: raw, then the answers wants (dicts of
    T.answer's arguments, in order), then the connection's state."""
    def fn(t):
        t.connect()
        t.send(raw)
        for w in wants:
            t.answer(**w)
        if conn == OPEN:
            t.open()
        else:
            t.closed()
    CASES.append(Case(cid, rfc, fn))


def bad(cid, rfc, raw, status, msg):
    """A case of one request refused with status and msg, then closed."""
    simple(cid, rfc, raw, W_close(status, msg), conn=CLOSED)


def W(status, **kw):
    kw["status"] = status
    return kw


def W_err(status, msg, **kw):
    """An error answer with its spec/wire.md §4 body."""
    return W(status, body=E(msg), fields=dict(
        {"Content-Type": "application/json"}, **kw.pop("fields", {})), **kw)


def W_close(status, msg):
    """An error that ends the connection: its body and Connection: close."""
    return W_err(status, msg, fields={"Connection": "close"})


# ---- generated from the route table ----------------------------------

def get_then_head(t, path, auth, tries=5):
    """HEAD path between two GETs, pipelined: (get, head, get) answers.
    A route's body may change between calls (uptime, counters): tried
    until both GETs have the same length, which the HEAD's
    Content-Length must then be."""
    for _ in range(tries):
        t.connect()
        t.send(req("GET", path, auth=auth) + req("HEAD", path, auth=auth) +
               req("GET", path, auth=auth))
        g1 = t.answer()
        h = t.answer(head=True)
        g2 = t.answer()
        if len(g1.body) == len(g2.body):
            break
    return g1, h, g2


def same_head(t, g1, h, g2):
    """RFC 9110 §9.3.2: the HEAD answer is the GET's without its body."""
    t.check(h.status == g1.status, "HEAD %d, GET %d" % (h.status, g1.status))
    cl = int(h.get("content-length") or -1)
    lo, hi = sorted((len(g1.body), len(g2.body)))
    t.check(lo <= cl <= hi, "HEAD Content-Length %d, GET bodies %d and %d"
            % (cl, len(g1.body), len(g2.body)))
    skip = ("date", "content-length")
    t.check([f for f in h.fields if f[0] not in skip] ==
            [f for f in g1.fields if f[0] not in skip],
            "HEAD fields %r, GET fields %r" % (h.fields, g1.fields))
