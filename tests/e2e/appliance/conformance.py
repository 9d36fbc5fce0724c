#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""HTTP/1.1 conformance of the appliance (issue 24): every requirement
of RFC 9110 and RFC 9112 that falls on an origin server, as listed in
docs/HTTP-CONFORMANCE.md, one case each, in raw bytes over a kernel
socket (no HTTP library: a test controls every byte and reads every
byte back). The harness is conformance_lib.py, the cases
conformance_cases.py.

    conformance.py --host IP --routes PATH/TO/ffn-routes --api-key KEY
                   --max-body N --max-header N --header-timeout-ms N
                   --body-timeout-ms N --idle-timeout-ms N --rate-limit N
                   [--only ID,...]

The appliance runs with those settings (test_conformance.sh); the route
cases (HEAD, OPTIONS, 405, unknown methods) are generated from the route
table as ffn-routes prints it, so a new route is covered without a new
test. A case checks the status, the fields required and forbidden, the
body (exactly, or its length) and the connection's state after its last
answer: open (a GET /v1/health on the same connection is answered) or
closed (EOF, nothing more). Every answer is also held to the rules of
every answer (the R-*, I-1XX-FIELDS, X-* invariants): they are cases of
their own, reported after the others with what they saw.

The IDs must match the tables of docs/HTTP-CONFORMANCE.md both ways
(each doc ID has a case, or names a unit test that exists; each case
has a doc row). One line per case, PASS or FAIL; exit 1 if any failed.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

import fsa
from conformance_lib import (A, Bad, CASES, DOC, INV, INV_RFC, MUST_SEE,
                             ROOT, SEEN, T, read_answer, req)
from conformance_cases import fixed_cases, route_cases


# ---- the doc's tables ----------------------------------------------------

ID_RE = re.compile(r"[A-Z][A-Z0-9]*(-[A-Z0-9]+)+")


def doc_rows():
    """{ID: test cell} of every table row of the doc whose first cell
    is an ID (`X-Y`); repeated IDs are an error."""
    rows, dup = {}, []
    with open(DOC, encoding="utf-8") as f:
        for ln in f:
            cells = [c.strip() for c in ln.strip().strip("|").split("|")]
            if not ln.startswith("|") or len(cells) < 3:
                continue
            cid = cells[0].strip("`")
            if not ID_RE.fullmatch(cid):
                continue
            if cid in rows:
                dup.append(cid)
            rows[cid] = cells[-1]
    return rows, dup


def doc_sync(cases):
    """The doc's IDs and the suite's cases (and invariants), both ways.
    Returns the problems (empty: in step)."""
    rows, dup = doc_rows()
    probs = ["doc: %s listed twice" % d for d in dup]
    bases = {c.base for c in cases} | set(INV)
    for cid, cell in sorted(rows.items()):
        refs = re.findall(r"(tests/[\w/.-]+\.c):(\w+)", cell)
        for path, fn in refs:
            full = os.path.join(ROOT, path)
            if not os.path.isfile(full) or re.search(
                    r"^%s\(" % re.escape(fn), open(full).read(),
                    re.M) is None:
                probs.append("doc: %s names %s:%s, which does not exist"
                             % (cid, path, fn))
        if cid not in bases and not refs:
            probs.append("doc: %s has no case in conformance.py and names "
                         "no unit test" % cid)
    for b in sorted(bases - set(rows)):
        probs.append("suite: case %s has no row in %s" % (b, DOC))
    return probs


# ---- main ----------------------------------------------------------------

def setup():
    c = fsa.Http(A.host, A.port)
    c.send(req("GET", "/v1/stats", auth=True))
    A.hidden = json.loads(read_answer(c).body)["hidden_size"]
    c.close()
    out = subprocess.run([A.routes], check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    return [json.loads(ln) for ln in out.splitlines() if ln.strip()]


def run(c):
    t = T(c.cid)
    t0 = time.time()
    try:
        c.fn(t)
    except (Bad, OSError, fsa.Closed, ValueError) as e:
        t.fail("%s: %s" % (type(e).__name__, e))
    finally:
        if t.c is not None:
            t.c.close()
    dt = time.time() - t0
    if not t.fails:
        print("PASS %s" % c.cid, flush=True)
        return True
    print("FAIL %s (%s, %.1f s)" % (c.cid, c.rfc, dt))
    for f in t.fails:
        print("     " + f)
    s = t.sent if len(t.sent) <= 400 else t.sent[:400] + b"..."
    print("     sent: %r" % s)
    for a in t.got:
        print("     got:  %r" % a)
    sys.stdout.flush()
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--routes", required=True, help="the ffn-routes tool")
    ap.add_argument("--api-key", required=True)
    ap.add_argument("--max-body", type=int, required=True)
    ap.add_argument("--max-header", type=int, required=True)
    ap.add_argument("--header-timeout-ms", type=int, required=True)
    ap.add_argument("--body-timeout-ms", type=int, required=True)
    ap.add_argument("--idle-timeout-ms", type=int, required=True)
    ap.add_argument("--rate-limit", type=int, required=True,
                    help="rate_limit's N (per hour)")
    ap.add_argument("--only", help="IDs (or ID prefixes) to run")
    ap.parse_args(namespace=A)
    t0 = time.time()
    routes = setup()
    route_cases(routes)
    fixed_cases()
    ids = [c.cid for c in CASES]
    dups = sorted({i for i in ids if ids.count(i) > 1})
    probs = ["suite: case %s defined twice" % d for d in dups]
    probs += doc_sync(CASES)
    for p in probs:
        print("FAIL " + p)
    todo = CASES
    if A.only:
        keys = A.only.split(",")
        todo = [c for c in CASES if any(c.cid.startswith(k) for k in keys)]
    failed = [c.cid for c in todo if not run(c)]
    if not A.only:
        miss = sorted(MUST_SEE - SEEN)
        if miss:
            for k in ("R-DATE", "R-CONTENT-LENGTH", "R-NO-TE"):
                INV[k][1].append("(no answer of status %s)" %
                                 ", ".join(map(str, miss)))
        for k, (n, bad) in INV.items():
            if n == 0:
                print("FAIL %s (%s): no answer to check" % (k, INV_RFC[k]))
                failed.append(k)
            elif bad:
                print("FAIL %s (%s): broken in %d of %d answers, by %s" %
                      (k, INV_RFC[k], len(bad), n, ", ".join(
                          sorted(set(bad)))))
                failed.append(k)
            else:
                print("PASS %s (%d answers)" % (k, n))
        print("statuses seen: %s" % " ".join(map(str, sorted(SEEN))))
    n = len(todo) + (0 if A.only else len(INV))
    print("conformance: %d cases, %d failed, %d doc/suite problems "
          "(%.1f s)" % (n, len(failed), len(probs), time.time() - t0))
    if failed:
        print("failed: " + " ".join(failed))
    sys.exit(1 if failed or probs else 0)


if __name__ == "__main__":
    main()
