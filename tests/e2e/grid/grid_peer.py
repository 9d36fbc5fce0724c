#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""A strict LARQL grid router peer for tests (spec/wire.md §9).

    grid_peer.py --listen HOST:PORT [--key KEY] [--expect SPEC ...]
                 [--events FILE] [--control DIR] [--heartbeat-ms N]

It serves larql.grid.v1.GridService (Join, Status) as the reference router
at LARQL c880fb7 does, and checks everything a joining shard sends against
§9; each departure is an "error" event. On SIGTERM/SIGINT it stops and
exits 0 when no error event was recorded, else 1.

--expect model=ID,layers=A-B,url=URL,num_layers=N  one expected joiner (the
    peer computes the expected vindex_hash from ID and N itself);
--events FILE  JSON lines, one per event, appended and flushed:
    {"t": monotonic s, "wall": unix s, "ev": NAME, ...}; NAME is join,
    unauthenticated, announce, ack, reject, heartbeat, dropping,
    unassign_sent, stream_end, status, error, exit;
--control DIR  polled every 50 ms: DIR/unassign (optional content: a
    listen_url filter) sends UnassignMsg to the matching acked streams and
    is then deleted (it stays, pending, while no stream matches);
    DIR/reject (optional content: a listen_url filter line and/or a line
    "reason=TEXT") answers the next matching announce with RejectMsg, and
    is deleted when read;
--probe-on-shutdown  on a Dropping "shutdown", connect to the unit's
    listen_url before the stream may end: event shutdown_probe {ok};
--heartbeat-ms N  the shard's configured interval: each heartbeat's gap
    since the previous one must be within [0.5 N, 2 N + 1000] ms, the
    first one's since the announce within N + 1000 ms.

Prints "grid_peer: listening on HOST:PORT" once bound. Needs grpcio and
grpc_tools (Debian: python3-grpcio, python3-grpc-tools); the Python stubs
are generated from lib/grid/grid.proto into a temporary directory.
"""

import argparse
import json
import math
import os
import queue
import signal
import socket
import sys
import threading
import time

import grid_proto  # noqa: E402
from grid_proto import (load_stubs, siphash13,  # noqa: E402,F401
                        unknown_field_problem, vindex_hash, wire_problems)

pb = None       # grid_pb2 and grpc, once main() loaded the stubs
grpc = None

# --- the peer ------------------------------------------------------------

def parse_range(s):
    a, _, b = s.partition("-")
    return int(a), int(b or a)


def parse_expect(spec):
    d = {}
    for kv in spec.split(","):
        k, sep, v = kv.partition("=")
        if not sep:
            raise ValueError("--expect %r: %r is not key=value" % (spec, kv))
        d[k.strip()] = v.strip()
    for k in ("model", "layers", "url", "num_layers"):
        if k not in d:
            raise ValueError("--expect %r: no %s" % (spec, k))
    unknown = set(d) - {"model", "layers", "url", "num_layers"}
    if unknown:
        raise ValueError("--expect %r: unknown keys %s" % (spec, unknown))
    a, b = parse_range(d["layers"])
    n = int(d["num_layers"])
    return {"model_id": d["model"], "layer_start": a, "layer_end": b,
            "listen_url": d["url"], "num_layers": n,
            "vindex_hash": vindex_hash(d["model"], n)}


class Events:
    """JSON lines, appended and flushed one by one (a test reads them
    while the peer runs)."""

    def __init__(self, path):
        self.lock = threading.Lock()
        self.f = open(path, "a") if path else None
        self.errors = 0

    def emit(self, ev, **kw):
        rec = {"t": time.monotonic(), "wall": time.time(), "ev": ev}
        rec.update(kw)
        line = json.dumps(rec, sort_keys=False)
        with self.lock:
            if ev == "error":
                self.errors += 1
            if self.f:
                self.f.write(line + "\n")
                self.f.flush()
        if ev in ("error", "unauthenticated", "exit"):
            print("grid_peer: " + line, file=sys.stderr, flush=True)


ANNOUNCE_WITHIN = 5.0   # §9 step 1: "send AnnounceMsg at once"
CLOSE_WITHIN = 5.0      # after RejectMsg / DroppingMsg, the shard closes
DRAIN_WITHIN = 31.0     # §9 step 4: in-flight requests, at most 30 s


class Stream:
    """One Join call."""

    def __init__(self, peer, sid, ctx):
        self.peer = peer
        self.sid = sid
        self.ctx = ctx
        self.out = queue.Queue()
        self.t_open = time.monotonic()
        self.announce = None        # dict of the announce's fields
        self.expect = None
        self.server_id = None
        self.state = "opening"      # opening, serving, rejected,
        #                             unassigned, dropped, ended
        self.t_last = None          # of the announce or last heartbeat
        self.heartbeats = 0
        self.hb = None              # the last HeartbeatMsg's fields
        self.t_unassign = None
        self.t_reject = None
        self.t_dropping = None
        self.ended = False

    def url(self):
        return self.announce["listen_url"] if self.announce else None


class Peer:
    def __init__(self, args):
        self.a = args
        self.ev = Events(args.events)
        self.expects = [parse_expect(s) for s in args.expect or ()]
        self.lock = threading.Lock()
        self.streams = {}
        self.next_sid = 1
        self.next_srv = 1
        self.reject_pending = None  # (url filter or None, reason)
        self.models = {}            # model_id -> num_layers (0: unknown)

    def err(self, msg, st=None, **kw):
        if st is not None:
            kw.setdefault("sid", st.sid)
            if st.url():
                kw.setdefault("url", st.url())
        self.ev.emit("error", msg=msg, **kw)

    # -- auth (§9: every call, "authorization: Bearer <key>") --
    def auth_ok(self, ctx, method):
        md = list(ctx.invocation_metadata())
        auths = [v for k, v in md if k == "authorization"]
        keys = sorted({k for k, _ in md})
        if self.a.key is None:
            return True, keys, len(auths) > 0
        ok = len(auths) == 1 and auths[0] == "Bearer " + self.a.key
        if not ok:
            self.ev.emit("unauthenticated", method=method, peer=ctx.peer(),
                         authorization_present=len(auths) > 0,
                         authorization_count=len(auths))
        return ok, keys, True

    # -- Join --
    def join(self, request_iterator, ctx):
        ok, keys, _ = self.auth_ok(ctx, "Join")
        with self.lock:
            sid = self.next_sid
            self.next_sid += 1
        self.ev.emit("join", sid=sid, peer=ctx.peer(), metadata_ok=ok,
                     metadata_keys=keys)
        if not ok:
            ctx.abort(grpc.StatusCode.UNAUTHENTICATED, "invalid grid key")
        st = Stream(self, sid, ctx)
        with self.lock:
            self.streams[sid] = st
        rd = threading.Thread(target=self.reader, args=(st, request_iterator),
                              daemon=True)
        rd.start()
        try:
            while True:
                try:
                    item = st.out.get(timeout=0.1)
                except queue.Empty:
                    self.deadlines(st)
                    if not ctx.is_active():
                        return
                    continue
                if item is None:
                    return
                if isinstance(item, tuple):
                    ctx.abort(item[0], item[1])
                yield item
        finally:
            with self.lock:
                st.state = "ended"
                self.streams.pop(sid, None)

    def deadlines(self, st):
        """The shard's duties with a deadline (§9 steps 1, 2, 4)."""
        now = time.monotonic()
        if st.announce is None and st.state == "opening" and \
                now - st.t_open > ANNOUNCE_WITHIN:
            self.err("no AnnounceMsg within %.0f s of opening Join" %
                     ANNOUNCE_WITHIN, st)
            st.state = "late"
        if st.t_reject is not None and st.state == "rejected" and \
                now - st.t_reject > CLOSE_WITHIN:
            self.err("the stream is still open %.0f s after RejectMsg" %
                     CLOSE_WITHIN, st)
            st.state = "reject-timeout"
            st.out.put(None)
        if st.t_unassign is not None and st.state == "unassigned" and \
                now - st.t_unassign > DRAIN_WITHIN:
            self.err("no DroppingMsg within %.0f s of UnassignMsg" %
                     DRAIN_WITHIN, st)
            st.state = "unassign-timeout"
        if st.t_dropping is not None and st.state == "dropped" and \
                now - st.t_dropping > CLOSE_WITHIN:
            self.err("the stream is still open %.0f s after DroppingMsg" %
                     CLOSE_WITHIN, st)
            st.state = "dropping-timeout"
            st.out.put(None)

    def reader(self, st, it):
        how = "client closed"
        try:
            for raw in it:
                self.on_message(st, raw)
        except Exception as e:      # grpc.RpcError on cancellation
            how = "cancelled"
            detail = str(e) or type(e).__name__
        else:
            detail = ""
        self.ev.emit("stream_end", sid=st.sid, url=st.url(), how=how,
                     detail=detail, state=st.state,
                     heartbeats=st.heartbeats)
        if how == "client closed":
            if st.state == "unassigned":
                self.err("the stream closed after UnassignMsg without "
                         "DroppingMsg (§9 step 4)", st)
        st.ended = True
        st.out.put(None)

    def on_message(self, st, raw):
        raw = bytes(raw)
        probs = wire_problems(raw, pb.ServerMessage.DESCRIPTOR)
        try:
            m = pb.ServerMessage.FromString(raw)
        except Exception as e:
            self.err("ServerMessage does not parse: %s (%s)" %
                     (e, raw.hex()), st)
            return
        p = unknown_field_problem(m)
        if p and not any("unknown field" in x for x in probs):
            probs.append(p)
        for x in probs:
            self.err("wire: " + x, st, raw=raw.hex())
        kind = m.WhichOneof("payload")
        if st.state in ("rejected", "dropped", "reject-timeout",
                        "dropping-timeout"):
            self.err("%s after %s: the shard must close the stream" %
                     (kind, "RejectMsg" if "reject" in st.state
                      else "DroppingMsg"), st)
            return
        if st.announce is None:
            if kind != "announce":
                self.err("first message is %s, not announce" % kind, st)
                st.out.put((grpc.StatusCode.INVALID_ARGUMENT,
                            "first message must be announce"))
                return
            self.on_announce(st, m.announce)
        elif kind == "heartbeat":
            self.on_heartbeat(st, m.heartbeat)
        elif kind == "dropping":
            self.on_dropping(st, m.dropping)
        else:
            self.err("unexpected ServerMessage payload %s after the "
                     "announce" % kind, st)

    def on_announce(self, st, a):
        now = time.monotonic()
        f = {"model_id": a.model_id, "layer_start": a.layer_start,
             "layer_end": a.layer_end, "ram_bytes": a.ram_bytes,
             "listen_url": a.listen_url, "vindex_hash": a.vindex_hash}
        st.announce = f
        st.t_last = now
        self.ev.emit("announce", sid=st.sid, url=a.listen_url,
                     delay_s=round(now - st.t_open, 4), **f)
        keys = ("model_id", "layer_start", "layer_end", "listen_url")
        match = [e for e in self.expects
                 if all(e[k] == f[k] for k in keys)]
        if self.expects and not match:
            self.err("announce %s matches no --expect %s" %
                     ({k: f[k] for k in keys},
                      [{k: e[k] for k in keys} for e in self.expects]), st)
        if len(a.vindex_hash) != 16 or \
                any(c not in "0123456789abcdef" for c in a.vindex_hash):
            self.err("vindex_hash %r is not 16 lowercase hex digits" %
                     a.vindex_hash, st)
        if match:
            st.expect = match[0]
            if a.vindex_hash != match[0]["vindex_hash"]:
                self.err("vindex_hash %r, want %s (SipHash-1-3 of %r, "
                         "num_layers %d)" %
                         (a.vindex_hash, match[0]["vindex_hash"],
                          a.model_id, match[0]["num_layers"]), st)
        if a.layer_start > a.layer_end:
            self.err("layer_start %d > layer_end %d" %
                     (a.layer_start, a.layer_end), st)
        with self.lock:
            self.models.setdefault(
                a.model_id, match[0]["num_layers"] if match else 0)
            rej = self.reject_pending
            if rej is not None and (rej[0] is None or rej[0] == a.listen_url):
                self.reject_pending = None
            else:
                rej = None
            n = self.next_srv
            self.next_srv += 1
        if rej is not None:
            st.state = "rejected"
            st.t_reject = time.monotonic()
            st.out.put(pb.RouterMessage(reject=pb.RejectMsg(reason=rej[1])))
            self.ev.emit("reject", sid=st.sid, url=a.listen_url,
                         reason=rej[1])
            return
        st.server_id = "srv-%d-%d" % (int(time.time()), n)
        st.state = "serving"
        st.out.put(pb.RouterMessage(ack=pb.AckMsg(server_id=st.server_id)))
        self.ev.emit("ack", sid=st.sid, url=a.listen_url,
                     server_id=st.server_id)

    def on_heartbeat(self, st, h):
        now = time.monotonic()
        gap_ms = (now - st.t_last) * 1000.0
        first = st.heartbeats == 0
        st.t_last = now
        st.heartbeats += 1
        stats = [[s.layer, s.avg_ms, s.p99_ms] for s in h.layer_stats]
        st.hb = {"cpu_pct": h.cpu_pct, "ram_used": h.ram_used,
                 "requests_in_flight": h.requests_in_flight,
                 "layer_stats": stats}
        self.ev.emit("heartbeat", sid=st.sid, url=st.url(),
                     gap_ms=round(gap_ms, 1), first=first, **st.hb)
        if st.state not in ("serving", "unassigned"):
            self.err("heartbeat in state %s" % st.state, st)
        if not 0 <= h.requests_in_flight < 1 << 32:
            self.err("requests_in_flight %d not a uint32" %
                     h.requests_in_flight, st)
        if not math.isfinite(h.cpu_pct) or h.cpu_pct < 0:
            self.err("cpu_pct %r not finite and >= 0" % h.cpu_pct, st)
        layers = [s[0] for s in stats]
        if any(b <= a for a, b in zip(layers, layers[1:])):
            self.err("layer_stats not sorted strictly ascending by layer: "
                     "%s (§9 step 3)" % layers, st)
        lo, hi = st.announce["layer_start"], st.announce["layer_end"]
        for ly, avg, p99 in stats:
            if not lo <= ly <= hi:
                self.err("layer_stats has layer %d outside the announced "
                         "%d-%d" % (ly, lo, hi), st)
            for nm, v in (("avg_ms", avg), ("p99_ms", p99)):
                if not math.isfinite(v) or v < 0:
                    self.err("layer %d: %s %r not finite and >= 0" %
                             (ly, nm, v), st)
        n = self.a.heartbeat_ms
        if n:
            if first and gap_ms > n + 1000:
                self.err("first heartbeat %.0f ms after the announce, want"
                         " <= %d" % (gap_ms, n + 1000), st)
            elif not first and not 0.5 * n <= gap_ms <= 2 * n + 1000:
                self.err("heartbeat gap %.0f ms, want %.0f..%d" %
                         (gap_ms, 0.5 * n, 2 * n + 1000), st)

    def on_dropping(self, st, d):
        f = {"model_id": d.model_id, "layer_start": d.layer_start,
             "layer_end": d.layer_end, "reason": d.reason}
        since = None
        if st.t_unassign is not None:
            since = round(time.monotonic() - st.t_unassign, 4)
        self.ev.emit("dropping", sid=st.sid, url=st.url(),
                     since_unassign_s=since, **f)
        for k in ("model_id", "layer_start", "layer_end"):
            if f[k] != st.announce[k]:
                self.err("dropping %s %r, announced %r" %
                         (k, f[k], st.announce[k]), st)
        if d.reason not in ("shutdown", "reassigned", "oom"):
            self.err("dropping reason %r not shutdown/reassigned/oom" %
                     d.reason, st)
        elif d.reason == "reassigned" and st.t_unassign is None:
            self.err("dropping reason reassigned without an UnassignMsg",
                     st)
        elif st.t_unassign is not None and d.reason == "oom":
            self.err("dropping reason oom after UnassignMsg (§9 step 4: "
                     "reassigned)", st)
        st.state = "dropped"
        st.t_dropping = time.monotonic()
        if d.reason == "shutdown" and self.a.probe_on_shutdown:
            self.probe_listener(st)

    def probe_listener(self, st):
        """A router stops sending work when it reads Dropping shutdown;
        the unit must still accept then (issue 20: Dropping before the
        listener closes). Connect to its listen_url now, while this
        stream is still open: the unit starts its drain only after the
        router ends the stream, so a refusal here means it did not
        wait."""
        u = st.announce["listen_url"][len("http://"):].rstrip("/")
        host, port = u.rsplit(":", 1)
        t0 = time.monotonic()
        try:
            socket.create_connection((host, int(port)), timeout=0.5).close()
            ok, err = True, ""
        except OSError as e:
            ok, err = False, str(e)
        self.ev.emit("shutdown_probe", sid=st.sid, url=st.url(), ok=ok,
                     err=err, ms=round((time.monotonic() - t0) * 1e3, 2))

    # -- control --
    def poll_control(self):
        d = self.a.control
        if not d:
            return
        p = os.path.join(d, "unassign")
        if os.path.exists(p):
            try:
                flt = open(p).read().strip() or None
            except OSError:
                flt = None
            with self.lock:
                hit = [s for s in self.streams.values()
                       if s.state == "serving" and
                       (flt is None or s.url() == flt)]
                for s in hit:
                    s.state = "unassigned"
                    s.t_unassign = time.monotonic()
            for s in hit:
                a = s.announce
                s.out.put(pb.RouterMessage(unassign=pb.UnassignMsg(
                    model_id=a["model_id"], layer_start=a["layer_start"],
                    layer_end=a["layer_end"], reason="rebalance")))
                self.ev.emit("unassign_sent", sid=s.sid, url=s.url(),
                             model_id=a["model_id"],
                             layer_start=a["layer_start"],
                             layer_end=a["layer_end"], reason="rebalance")
            if hit:
                os.unlink(p)
        p = os.path.join(d, "reject")
        if os.path.exists(p):
            flt, reason = None, "rejected by grid_peer"
            try:
                for line in open(p).read().splitlines():
                    line = line.strip()
                    if line.startswith("reason="):
                        reason = line[len("reason="):]
                    elif line:
                        flt = line
            except OSError:
                pass
            with self.lock:
                self.reject_pending = (flt, reason)
            os.unlink(p)
            self.ev.emit("reject_armed", filter=flt, reason=reason)

    # -- Status --
    def status(self, req, ctx):
        ok, keys, _ = self.auth_ok(ctx, "Status")
        if not ok:
            ctx.abort(grpc.StatusCode.UNAUTHENTICATED, "invalid grid key")
        self.ev.emit("status", peer=ctx.peer())
        with self.lock:
            live = [s for s in self.streams.values()
                    if s.server_id and s.state in ("serving", "unassigned")]
            models = dict(self.models)
        r = pb.StatusResponse()
        for mid, nl in sorted(models.items()):
            mc = r.models.add(model_id=mid, num_layers=nl)
            ranges = {}
            for s in live:
                if s.announce["model_id"] == mid:
                    k = (s.announce["layer_start"], s.announce["layer_end"])
                    ranges.setdefault(k, []).append(s.server_id)
            covered = set()
            for (a, b), ids in sorted(ranges.items()):
                mc.shards.add(layer_start=a, layer_end=b, server_ids=ids,
                              replica_count=len(ids))
                covered.update(range(a, b + 1))
            ly = 0
            while ly < nl:         # maximal runs of uncovered layers
                if ly in covered:
                    ly += 1
                    continue
                a = ly
                while ly + 1 < nl and ly + 1 not in covered:
                    ly += 1
                mc.gaps.add(layer_start=a, layer_end=ly)
                ly += 1
        for s in live:
            a = s.announce
            si = r.servers.add(server_id=s.server_id,
                               listen_url=a["listen_url"],
                               state="serving" if s.state == "serving"
                               else "draining",
                               model_id=a["model_id"],
                               layer_start=a["layer_start"],
                               layer_end=a["layer_end"])
            if s.hb:
                si.cpu_pct = s.hb["cpu_pct"]
                si.ram_used = s.hb["ram_used"]
                si.requests_in_flight = s.hb["requests_in_flight"]
                for ly, avg, p99 in s.hb["layer_stats"]:
                    si.layer_stats.add(layer=ly, avg_ms=avg, p99_ms=p99)
        return r

    def unknown_method(self, req_iter, ctx):
        ctx.abort(grpc.StatusCode.UNIMPLEMENTED, "unknown method")


def make_server(peer, listen):
    from concurrent import futures

    class CatchAll(grpc.GenericRpcHandler):
        def service(self, details):
            peer.err("call of unknown method %s (not larql.grid.v1."
                     "GridService/Join or /Status)" % details.method)
            return grpc.stream_stream_rpc_method_handler(
                peer.unknown_method)

    handlers = {
        # Raw bytes in: the peer walks the wire format itself.
        "Join": grpc.stream_stream_rpc_method_handler(
            peer.join, request_deserializer=None,
            response_serializer=lambda m: m.SerializeToString()),
        "Status": grpc.unary_unary_rpc_method_handler(
            peer.status,
            request_deserializer=pb.StatusRequest.FromString,
            response_serializer=lambda m: m.SerializeToString()),
    }
    gen = grpc.method_handlers_generic_handler("larql.grid.v1.GridService",
                                               handlers)
    # Lenient on HTTP/2 PINGs, as the reference (tonic) is: a shard's
    # keepalive is no error of the protocol under test.
    opts = [("grpc.http2.min_ping_interval_without_data_ms", 1000),
            ("grpc.http2.max_ping_strikes", 0),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.so_reuseport", 0)]
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=32),
                      handlers=[gen, CatchAll()], options=opts)
    port = srv.add_insecure_port(listen)
    if not port:
        raise SystemExit("grid_peer: cannot listen on %s" % listen)
    return srv, port


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--listen", required=True, help="HOST:PORT")
    ap.add_argument("--key", help="the grid key every call must carry")
    ap.add_argument("--expect", action="append", help="an expected unit")
    ap.add_argument("--events", help="JSON lines of events")
    ap.add_argument("--control", help="a directory polled every 50 ms")
    ap.add_argument("--heartbeat-ms", type=int, default=0)
    ap.add_argument("--probe-on-shutdown", action="store_true",
                    help="on a Dropping shutdown, connect to the unit's "
                    "listen_url before the stream may end")
    args = ap.parse_args(argv)
    global pb, grpc
    pb = load_stubs()
    grpc = grid_proto.grpc
    peer = Peer(args)
    srv, port = make_server(peer, args.listen)
    srv.start()
    host = args.listen.rsplit(":", 1)[0]
    stop = threading.Event()

    def on_signal(sig, _frm):
        stop.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    peer.ev.emit("listening", listen="%s:%d" % (host, port),
                 expects=[dict(e) for e in peer.expects])
    print("grid_peer: listening on %s:%d" % (host, port), flush=True)
    while not stop.is_set():
        try:
            peer.poll_control()
        except Exception as e:
            peer.err("control: %s" % e)
        stop.wait(0.05)
    # Bounded: under load, gRPC's shutdown event was once never set
    # (the main thread waited on it for 15 minutes with no RPC live).
    if not srv.stop(1).wait(5):
        peer.ev.emit("stop_slow", note="server.stop(1) not done in 5 s")
    peer.ev.emit("exit", errors=peer.ev.errors)
    return 0 if peer.ev.errors == 0 else 1


if __name__ == "__main__":
    rc = main()
    # timeout(1) sends its TERM to the peer and again to its process
    # group; one that lands during the interpreter's finalization, which
    # restores the default handlers, killed the peer after its "exit"
    # event (status 143). Its work is done: leave without finalizing
    # (gRPC's threads would only be torn down).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)
