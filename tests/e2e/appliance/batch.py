# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""The worker's batch wait (issue 4, "Compute scheduling": rows of
concurrent requests for the same layer are batched up to batch_max_rows,
waiting at most batch_wait_us for more), seen from outside: passes are
counted by the ffn_batch_rows histogram of GET /metrics, the wait by
when answers arrive.

--wait-us W > 0 (the appliance runs batch_wait_us = W, batch_max_rows =
--max-rows):
  lone:  one 1-row request is one pass of 1 row, answered no sooner
         than 0.9 W after it was sent (the worker waited for company) and
         within W + --slack;
  pair:  two 1-row requests for the same layer on two connections,
         --gap apart (gap < W), are ONE pass of 2 rows;
  full:  two requests of max/2 rows --gap apart are one pass of max
         rows, answered well before W ends (max reached ends the wait).
--wait-us 0:
  pair:  the same two requests are two passes of 1 row.
Every answer is also checked against pyref (rows of a batch must not be
mixed up). The bounds are wide, configured behaviour, not performance:
W is a second, the gap a tenth of it.
"""

import argparse
import re
import select
import time

import fsa
from fsa import Http, wire

A = None
O = None
C = None

BUCKET = re.compile(r'^ffn_batch_rows_bucket\{[^}]*le="([^"]+)"\} (\d+)$')
COUNT = re.compile(r'^ffn_batch_rows_count\{[^}]*\} (\d+)$')


def hist(c):
    """{le: cumulative count} and the pass count of ffn_batch_rows."""
    r = c.request("GET", "/metrics")
    C.eq(r.status, 200, "GET /metrics: status")
    cum, total = {}, None
    for ln in r.body.decode("utf-8").splitlines():
        m = BUCKET.match(ln)
        if m:
            cum[m.group(1)] = int(m.group(2))
        m = COUNT.match(ln)
        if m:
            total = int(m.group(1))
    C.check(total is not None and "1" in cum, "GET /metrics has the "
            "ffn_batch_rows histogram", r.body[:400])
    return cum, total or 0


def passes(before, after):
    """Passes per bucket since before: {le: n} (non-cumulative), total."""
    b, a = before[0], after[0]
    out, prev = {}, 0
    for le in a:
        d = a[le] - b.get(le, 0)
        if d - prev:
            out[le] = d - prev
        prev = d
    return out, after[1] - before[1]


def req(layer, seq_len, seed):
    x = O.x(seq_len, seed)
    body, ct = wire.encode_request([layer], x, "f32")
    return x, fsa.build("POST", "/v1/walk-ffn", body,
                        [("Content-Type", ct), ("Accept", wire.CT_F32)])


def answer(c, layer, x, what):
    r = c.read_response()
    if not C.eq(r.status, 200, what + ": status"):
        return
    _, res = wire.decode_response(r.body, wire.CT_F32)
    C.eq([L for L, _, _ in res], [layer], what + ": layer")
    ok, d = O.close(res[0][2], layer, x)
    C.check(ok, what + ": values vs pyref", d)


def two(m, layer, rows, seeds, what):
    """Two requests of rows rows on m[0], m[1], A.gap apart; the times
    (from the first send) their answers arrived."""
    x0, r0 = req(layer, rows, seeds[0])
    x1, r1 = req(layer, rows, seeds[1])
    t0 = time.monotonic()
    m[0].send(r0)
    # When the first answer starts to arrive (if within the gap).
    t_a = None
    if select.select([m[0].s], [], [], A.gap)[0]:
        t_a = time.monotonic() - t0
    time.sleep(max(0.0, A.gap - (time.monotonic() - t0)))
    m[1].send(r1)
    if t_a is None:
        select.select([m[0].s], [], [], A.slack + 2 * A.wait_us / 1e6)
        t_a = time.monotonic() - t0
    answer(m[0], layer, x0, what + ", first")
    answer(m[1], layer, x1, what + ", second")
    t_b = time.monotonic() - t0
    print("  %s: answers at %.1f ms and %.1f ms after the first send"
          % (what, t_a * 1e3, t_b * 1e3))
    return t_a, t_b


def main():
    global A, O, C
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--model", required=True)
    ap.add_argument("--owned", required=True)
    ap.add_argument("--wait-us", type=int, required=True)
    ap.add_argument("--max-rows", type=int, default=64)
    ap.add_argument("--gap", type=float, default=0.1)
    ap.add_argument("--slack", type=float, default=3.0)
    A = ap.parse_args()
    a, _, b = A.owned.partition("-")
    owned = (int(a), int(b or a))
    layer = owned[0]
    O = fsa.Oracle(A.model, owned)
    C = fsa.Checker("batch wait %d us" % A.wait_us)
    W = A.wait_us / 1e6

    mc = Http(A.host, A.port)
    m = [Http(A.host, A.port, timeout=A.slack + W + 5),
         Http(A.host, A.port, timeout=A.slack + W + 5)]
    # Both connections set up (and the layer touched once) before
    # anything is counted or timed.
    for i, c in enumerate(m):
        x, r = req(layer, 1, 100 + i)
        c.send(r)
        answer(c, layer, x, "warm-up %d" % i)

    if W > 0:
        h0 = hist(mc)
        x, r = req(layer, 1, 1)
        t0 = time.monotonic()
        m[0].send(r)
        answer(m[0], layer, x, "lone")
        dt = time.monotonic() - t0
        print("  lone: answered %.1f ms after the send (wait %.1f ms)"
              % (dt * 1e3, W * 1e3))
        # 0.9: the worker's clock is the TSC at DPDK's estimate of its
        # rate, which may be off by a little; without the wait the
        # answer takes a few ms.
        C.check(dt >= 0.9 * W, "lone 1-row request: answered no sooner "
                "than 0.9 x batch_wait_us after it was sent",
                "%.1f ms" % (dt * 1e3))
        C.check(dt <= W + A.slack, "lone 1-row request: answered within "
                "batch_wait_us + %.1f s" % A.slack, "%.1f ms" % (dt * 1e3))
        got = passes(h0, hist(mc))
        C.eq(got, ({"1": 1}, 1), "lone: one pass of 1 row")

    h0 = hist(mc)
    t_a, t_b = two(m, layer, 1, (2, 3), "pair")
    got = passes(h0, hist(mc))
    if W > 0:
        C.eq(got, ({"2": 1}, 1), "pair %.0f ms apart: ONE pass of 2 rows "
             "(the worker waited for the second)" % (A.gap * 1e3))
        C.check(t_a > A.gap, "pair: the first is not answered before "
                "the second was sent", "%.1f ms" % (t_a * 1e3))
        C.check(t_b <= W + A.slack, "pair: both answered within "
                "batch_wait_us + %.1f s" % A.slack, "%.1f ms" % (t_b * 1e3))
    else:
        C.eq(got, ({"1": 2}, 2), "pair %.0f ms apart, batch_wait_us 0: "
             "two passes of 1 row" % (A.gap * 1e3))

    if W > 0 and A.max_rows >= 2 and A.max_rows % 2 == 0:
        half = A.max_rows // 2
        le = str(1 << (A.max_rows - 1).bit_length())
        h0 = hist(mc)
        t_a, t_b = two(m, layer, half, (4, 5), "full (%d + %d rows)"
                       % (half, half))
        got = passes(h0, hist(mc))
        C.eq(got, ({le: 1}, 1), "two requests of %d rows: one pass of "
             "%d (batch_max_rows) rows" % (half, A.max_rows))
        C.check(t_b < A.gap + W / 2, "batch_max_rows reached ends the "
                "wait: both answered well before batch_wait_us ends "
                "(< gap + wait/2)", "%.1f ms" % (t_b * 1e3))
    for c in m + [mc]:
        c.close()
    C.done()


if __name__ == "__main__":
    main()
