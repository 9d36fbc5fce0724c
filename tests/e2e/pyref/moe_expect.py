#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Requests and expectations for the expert routes (spec/moe.md), from
pyref's MoE oracle (moe.py), for end-to-end tests.

    moe_expect.py gen VINDEX --route ROUTE --body REQ --expect EXP
        [--seed N] [--experts A-B] [--top-k K] [--layer L] [--tasks T]
        [--items N] [--accept f32|f16|i8] [--scale S] [--unheld]
        [--zero-weights]
    moe_expect.py check --expect EXP --body RESP [--content-type CT]
        [--status N] [--rtol R]

ROUTE: layer-batch, layer-batch-f16, layer-batch-i8, multi-layer-batch,
multi-layer-batch-q8k, expert-batch-bin, expert-batch-json,
expert-single.

gen writes a random request body (seeded) to REQ and the float64 expected
answer (or the expected error) to EXP as JSON, and prints, one per line,
shell assignments of what to send: method, path, content_type, accept,
status. Experts are drawn from --experts A-B (the shard's ownership;
default every expert), layers from those with a layer file (or --layer).
Layer routes: K = --top-k distinct experts with softmax weights of random
logits; --zero-weights adds a 0.0 pair naming an expert the shard does
not hold and a -0.0 pair (both skipped, §1); --unheld makes the last pair
(or item) name an expert the shard does not hold: the expectation is then
the §4 400 error. --accept asks for an answer format by Accept (§7).

check decodes RESP by its Content-Type (absent: the route's own format),
compares it with EXP and prints a verdict; exit 0 match, 1 mismatch,
2 usage or undecodable. Tolerance per element:
rtol * max|expected vector| (default 1e-4), plus the answer format's
rounding: f16 2^-11 * |expected|, i8 scale / 2.
"""

import argparse
import json
import os
import shlex
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import moe  # noqa: E402

ROUTES = {
    # route: (family, own format, path, request Content-Type)
    "layer-batch": ("layer", "f32", "/v1/experts/layer-batch", moe.CT_LAYER),
    "layer-batch-f16": ("layer", "f16", "/v1/experts/layer-batch-f16",
                        moe.CT_LAYER + "-f16"),
    "layer-batch-i8": ("layer", "i8", "/v1/experts/layer-batch-i8",
                       moe.CT_LAYER + "-i8"),
    "multi-layer-batch": ("multi", "f32", "/v1/experts/multi-layer-batch",
                          moe.CT_MULTI),
    "multi-layer-batch-q8k": ("multi", "f32",
                              "/v1/experts/multi-layer-batch-q8k",
                              moe.CT_MULTI),
    "expert-batch-bin": ("batch", "f32", "/v1/expert/batch", moe.CT_EXPERT),
    "expert-batch-json": ("json", "f32", "/v1/expert/batch", moe.CT_JSON),
    "expert-single": ("single", "f32", None, moe.CT_JSON),
}


def die(msg, rc=2):
    sys.stderr.write("moe_expect: %s\n" % msg)
    sys.exit(rc)


def parse_range(text):
    try:
        a, _, b = text.partition("-")
        a = int(a)
        b = int(b) if b else a
    except ValueError:
        die("--experts: %r is not A-B" % text)
    if a > b:
        die("--experts: %d > %d" % (a, b))
    return a, b


class Gen:
    def __init__(self, args, mv):
        self.a = args
        self.mv = mv
        self.rng = np.random.default_rng(args.seed)
        E = mv.num_experts
        self.owned_given = args.experts is not None
        self.owned = parse_range(args.experts) if args.experts else \
            (0, E - 1)
        first, last = self.owned[0], min(self.owned[1], E - 1)
        self.ids = list(range(first, last + 1))
        outside = [e for e in range(E) if not first <= e <= self.owned[1]]
        self.unheld_id = outside[0] if outside else max(E, self.owned[1] + 1)
        if args.layer is not None:
            self.layers = [args.layer]
        else:
            self.layers = [L for L in range(mv.num_layers)
                           if mv.layer_file(L) is not None]
        if not self.layers:
            die("%s: no layer has a layer file" % mv.path)
        if not self.ids:
            die("--experts %s: no expert of 0..%d" % (args.experts, E - 1))
        self.error = None

    def x(self):
        return (self.rng.standard_normal(self.mv.hidden) *
                self.a.scale).astype(np.float32)

    def layer(self):
        return int(self.rng.choice(self.layers))

    def pairs(self, L, last):
        k = min(self.a.top_k or self.mv.top_k or 2, len(self.ids))
        ids = [int(e) for e in self.rng.choice(self.ids, k, replace=False)]
        logits = self.rng.standard_normal(k)
        w = np.exp(logits - logits.max())
        w = (w / w.sum()).astype(np.float32)
        pairs = [(e, float(v)) for e, v in zip(ids, w)]
        if self.a.zero_weights:
            pairs += [(self.unheld_id, 0.0), (ids[0], -0.0)]
        if self.a.unheld and last:
            pairs[-1 if not self.a.zero_weights else k - 1] = (
                self.unheld_id, float(w[-1]) or 0.5)
            self.unheld_error(L, self.unheld_id, "layer")
        return pairs

    def unheld_error(self, L, e, family):
        if self.error:
            return
        if family == "layer":
            msg = "expert %d of layer %d is not held by this shard" % (e, L)
        elif self.owned_given and not self.owned[0] <= e <= self.owned[1]:
            msg = "expert %d not owned by this shard (owns %d\u2013%d)" % (
                e, self.owned[0], self.owned[1])
        else:
            msg = "per-layer entry missing for layer %d expert %d" % (L, e)
        self.error = msg

    def mix(self, L, h, pairs, normed):
        try:
            if normed:
                return moe.mix64(self.mv, L, h, pairs, self.owned)
            return moe.layer_batch64(self.mv, L, h, pairs, self.owned)
        except moe.Unheld:
            return None

    def layer_route(self, fmt):
        L = self.layer()
        body = moe.encode_layer_batch(L, self.x(), self.pairs(L, True), fmt)
        L, _, x, pairs = moe.decode_layer_batch(body, fmt)
        return body, [{"layer": L, "values": self.mix(L, x, pairs, False)}]

    def multi_route(self, q8k):
        H = self.mv.hidden
        tasks, outs = [], []
        n = self.a.tasks
        for t in range(n):
            L = self.layer()
            x = self.x()
            pairs = self.pairs(L, t == n - 1)
            ids = [e for e, _ in pairs]
            ws = [w for _, w in pairs]
            if q8k:
                # the client's own normed h (§1), then Q8_K (§3.5)
                h = moe.norm64(x, self.mv.norm(L)).astype(np.float32)
                tasks.append((L, h, ids, ws))
            else:
                tasks.append((L, x, ids, ws))
        if q8k:
            body = moe.encode_multi_q8k(tasks)
            if H % 256 and n:
                self.error = ("q8k activation needs hidden_size divisible "
                              "by 256 (got %d)" % H)
                return body, []
            for L, _, h, ids, ws, _ in moe.decode_multi_q8k(body):
                outs.append({"layer": L, "values": self.mix(
                    L, h, list(zip(ids, ws)), True)})
        else:
            body = moe.encode_multi(tasks)
            for L, _, x, ids, ws in moe.decode_multi(body):
                outs.append({"layer": L, "values": self.mix(
                    L, x, list(zip(ids, ws)), False)})
        return body, outs

    def items(self, n):
        out = []
        for i in range(n):
            L = self.layer()
            e = int(self.rng.choice(self.ids))
            if self.a.unheld and i == n - 1:
                e = self.unheld_id
                self.unheld_error(L, e, "batch")
            out.append((L, e, self.x()))
        return out

    def expert_outputs(self, items):
        outs = []
        for L, e, x in items:
            w = moe.held(self.mv, L, e, self.owned)
            y = None if w is None else moe.expert64(
                w, moe.norm64(x, self.mv.norm(L)))
            outs.append({"layer": L, "expert": e, "values": y})
        return outs

    def run(self, route):
        if route.startswith("layer-batch"):
            return self.layer_route(ROUTES[route][1])
        if route.startswith("multi"):
            return self.multi_route(route.endswith("q8k"))
        items = self.items(1 if route == "expert-single" else self.a.items)
        if route == "expert-batch-bin":
            body = moe.encode_expert_batch(items)
            _, items = moe.decode_expert_batch(body)
        elif route == "expert-batch-json":
            body = moe.encode_batch_json(items)
            items = moe.decode_batch_json(body)
        else:
            body = moe.encode_single(items[0][2])
            x = json.loads(body)["residual"]
            items = [(items[0][0], items[0][1], np.asarray(x, np.float32))]
        return body, self.expert_outputs(items)


def gen(args):
    if args.route not in ROUTES:
        die("--route: %r is not one of %s" % (args.route,
                                              ", ".join(sorted(ROUTES))))
    family, own, path, ctype = ROUTES[args.route]
    if args.zero_weights and family not in ("layer", "multi"):
        die("--zero-weights: only for the layer and multi-layer routes")
    if args.accept and family not in ("layer", "multi"):
        die("--accept: only for the layer and multi-layer routes")
    mv = moe.load(args.vindex)
    g = Gen(args, mv)
    body, outs = g.run(args.route)
    if path is None:
        path = "/v1/expert/%d/%d" % (outs[0]["layer"], outs[0]["expert"])
    accept = ctype
    answer = own
    if args.accept:
        accept = moe.CT_FAMILY[family][args.accept]
        # §7: Accept can ask for i8 or f16; f32 only as the own format
        answer = moe.choose_answer(family, own, accept)
    exp = {"route": args.route, "family": family, "own": own,
           "answer": answer, "method": "POST", "path": path,
           "content_type": ctype, "accept": accept, "hidden": mv.hidden,
           "status": 400 if g.error else 200}
    if g.error:
        exp["error"] = g.error
    else:
        exp["outputs"] = [dict(o, values=[float(v) for v in o["values"]])
                          for o in outs]
    with open(args.body, "wb") as f:
        f.write(body)
    with open(args.expect, "w") as f:
        json.dump(exp, f)
    for k in ("method", "path", "content_type", "accept", "status"):
        print("%s=%s" % (k, shlex.quote(str(exp[k]))))
    return 0


# ---- check -----------------------------------------------------------------

def decode(exp, body, ctype):
    """-> (format, [(layer, expert or None, values f32, i8 scale)])."""
    fam, own = exp["family"], exp["own"]
    if fam == "layer":
        fmt = moe.format_of(ctype, "layer", own)
        hidden, _, v, scale = moe.decode_layer_answer(body, fmt)
        return fmt, [(None, None, v, scale)]
    if fam == "multi":
        fmt = moe.format_of(ctype, "multi", own)
        return fmt, [(L, None, v, s) for L, _, v, s in
                     moe.decode_multi_answer(body, fmt)]
    if fam == "batch":
        _, res = moe.decode_expert_batch_answer(body)
    elif fam == "json":
        _, res = moe.decode_batch_json_answer(body)
    else:
        v, _ = moe.decode_single_answer(body)
        res = [(None, None, v)]
    return "f32", [(L, e, v, None) for L, e, v in res]


def compare(exp, got, fmt, rtol):
    """-> list of mismatch lines, and the worst error/bound ratio."""
    bad, worst = [], 0.0
    outs = exp["outputs"]
    if len(got) != len(outs):
        return ["%d vectors, expected %d" % (len(got), len(outs))], worst
    for k, (o, (L, e, v, scale)) in enumerate(zip(outs, got)):
        want = np.asarray(o["values"], np.float64)
        if L is not None and L != o["layer"]:
            bad.append("vector %d: layer %d, expected %d" % (k, L,
                                                             o["layer"]))
        if e is not None and e != o.get("expert"):
            bad.append("vector %d: expert %d, expected %s" % (
                k, e, o.get("expert")))
        if v.size != want.size:
            bad.append("vector %d: %d values, expected %d" % (k, v.size,
                                                             want.size))
            continue
        m = float(np.max(np.abs(want))) if want.size else 0.0
        bound = rtol * m + np.zeros(want.size)
        if fmt == "f16":
            bound += np.abs(want) * 2.0 ** -11
        elif fmt == "i8" and scale is not None:
            bound += abs(scale) / 2
        err = np.abs(v.astype(np.float64) - want)
        over = np.nonzero(~(err <= bound))[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(bound > 0, err / bound, np.where(err > 0, np.inf, 0))
        if r.size:
            worst = max(worst, float(np.max(r)))
        for i in over[:5]:
            bad.append("vector %d element %d: got %.9g, expected %.9g "
                       "(|err| %.3g > bound %.3g)" % (k, i, v[i], want[i],
                                                      err[i], bound[i]))
        if over.size > 5:
            bad.append("vector %d: %d more elements out of bound"
                       % (k, over.size - 5))
    return bad, worst


def check(args):
    with open(args.expect) as f:
        exp = json.load(f)
    with open(args.body, "rb") as f:
        body = f.read()
    what = "%s %s" % (exp["route"], exp["path"])
    if args.status is not None and args.status != exp["status"]:
        print("moe_expect: MISMATCH %s: status %d, expected %d; body %r"
              % (what, args.status, exp["status"], body[:200]))
        return 1
    if "error" in exp:
        try:
            msg = json.loads(body)["error"]
        except (ValueError, KeyError, TypeError):
            print("moe_expect: MISMATCH %s: body %r is not "
                  '{"error": ...}' % (what, body[:200]))
            return 1
        if msg != exp["error"]:
            print("moe_expect: MISMATCH %s: error %r, expected %r"
                  % (what, msg, exp["error"]))
            return 1
        print("moe_expect: OK %s: error %r" % (what, msg))
        return 0
    try:
        fmt, got = decode(exp, body, args.content_type)
    except (ValueError, KeyError, TypeError, struct.error) as e:
        print("moe_expect: MISMATCH %s: cannot decode the answer (%s): %s"
              % (what, args.content_type, e))
        return 1
    bad = []
    allowed = {exp["answer"]}
    if exp["answer"] == "f16" and exp["own"] != "f16":
        allowed.add("f32")	# the §7 precision guard
    if args.content_type is not None and fmt not in allowed:
        bad.append("answer format %s (Content-Type %r), expected %s"
                   % (fmt, args.content_type, " or ".join(sorted(allowed))))
    rtol = args.rtol if args.rtol is not None else 1e-4
    more, worst = compare(exp, got, fmt, rtol)
    bad += more
    if bad:
        print("moe_expect: MISMATCH %s (%s answer, rtol %g):" % (what, fmt,
                                                                 rtol))
        for line in bad:
            print("  " + line)
        return 1
    print("moe_expect: OK %s: %d vector(s), %s answer, worst error %.3g of "
          "its bound (rtol %g)" % (what, len(got), fmt, worst, rtol))
    return 0


def main(argv):
    p = argparse.ArgumentParser(
        description="expert-route requests and expectations (pyref)")
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen", help="write a request and its expectation")
    g.add_argument("vindex")
    g.add_argument("--route", required=True)
    g.add_argument("--body", required=True, help="request body out")
    g.add_argument("--expect", required=True, help="expectation out")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--experts", help="the shard's --experts A-B")
    g.add_argument("--top-k", type=int, default=0)
    g.add_argument("--layer", type=int)
    g.add_argument("--tasks", type=int, default=3)
    g.add_argument("--items", type=int, default=3)
    g.add_argument("--accept", choices=("f32", "f16", "i8"))
    g.add_argument("--scale", type=float, default=1.0)
    g.add_argument("--unheld", action="store_true")
    g.add_argument("--zero-weights", action="store_true")
    c = sub.add_parser("check", help="compare an answer with EXP")
    c.add_argument("--expect", required=True)
    c.add_argument("--body", required=True, help="response body")
    c.add_argument("--content-type")
    c.add_argument("--status", type=int)
    c.add_argument("--rtol", type=float)
    args = p.parse_args(argv)
    if args.cmd == "gen":
        try:
            return gen(args)
        except moe.VindexError as e:
            die(str(e))
    return check(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
