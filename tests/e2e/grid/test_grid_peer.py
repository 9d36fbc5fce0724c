#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Self-test of grid_peer.py, the strict grid router peer (spec/wire.md §9),
with no appliance: a Python gRPC client plays the shard.

    /usr/bin/python3 tests/e2e/grid/test_grid_peer.py

Each sub-run starts grid_peer.py on 127.0.0.1 (a free port), plays one or
more cases, stops it with SIGTERM and checks its exit status and events:
  (a) a correct announce with the key gets an Ack; a heartbeat and a
      dropping are accepted (no error event, exit 0);
  (b) a wrong or missing key: UNAUTHENTICATED "invalid grid key" (Join
      and Status), an "unauthenticated" event, not an error;
  (c) a wrong vindex_hash: an error event, exit 1;
  (d) layer_stats not sorted: an error event, exit 1;
  (e) the control file "unassign": the client gets UnassignMsg with the
      announced model and range;
  (f) the two §9 hash vectors;
and a few more of the peer's checks: control "reject", a first message
that is not an announce, an unknown field, a heartbeat gap too short,
Status's coverage. Exit 0 when every check passed.
"""

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import grid_peer  # noqa: E402

pb = grid_peer.load_stubs()
import grpc  # noqa: E402
import grid_pb2_grpc  # noqa: E402  (loaded by load_stubs)

KEY = "s3cret-grid-key"
MODEL = "demo-model"
URL = "http://127.0.0.1:18080"
URL2 = "http://127.0.0.1:18081"
EXPECT = ["model=%s,layers=0-1,url=%s,num_layers=4" % (MODEL, URL),
          "model=%s,layers=2-3,url=%s,num_layers=4" % (MODEL, URL2)]
GOOD_HASH = "01c0e4262a2daa31"

FAILS = []
PASSES = [0]


def check(cond, what, detail=""):
    if cond:
        PASSES[0] += 1
        print("ok   " + what)
    else:
        FAILS.append(what)
        print("FAIL " + what + (": " + str(detail) if detail else ""))


class PeerRun:
    """grid_peer.py as a subprocess, with its events and control dir."""

    def __init__(self, *extra, key=KEY):
        self.dir = tempfile.mkdtemp(prefix="test_grid_peer.")
        self.events = os.path.join(self.dir, "events.jsonl")
        self.control = os.path.join(self.dir, "control")
        os.mkdir(self.control)
        args = [sys.executable, os.path.join(HERE, "grid_peer.py"),
                "--listen", "127.0.0.1:0", "--events", self.events,
                "--control", self.control]
        if key is not None:
            args += ["--key", key]
        for e in EXPECT:
            args += ["--expect", e]
        args += list(extra)
        self.p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        if not line.startswith("grid_peer: listening on "):
            self.p.kill()
            raise SystemExit("grid_peer did not start: %r" % line)
        self.addr = line.split()[-1]
        self.ch = grpc.insecure_channel(self.addr)
        self.stub = grid_pb2_grpc.GridServiceStub(self.ch)
        self.raw_join = self.ch.stream_stream(
            "/larql.grid.v1.GridService/Join",
            request_serializer=lambda b: b,
            response_deserializer=pb.RouterMessage.FromString)

    def stop(self):
        """SIGTERM; the exit status and the events."""
        self.ch.close()
        self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = "hung"
        evs = self.read_events()
        shutil.rmtree(self.dir, ignore_errors=True)
        return rc, evs

    def read_events(self):
        with open(self.events) as f:
            return [json.loads(x) for x in f if x.strip()]

    def wait_event(self, pred, timeout=5.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for e in self.read_events():
                if pred(e):
                    return e
            time.sleep(0.05)
        return None


class Shard:
    """A client stream playing the shard: send() queues a message,
    recv() waits for the router's next one."""

    def __init__(self, run, key=KEY, raw=False):
        self.q = queue.Queue()
        self.rx = queue.Queue()
        md = [("authorization", "Bearer " + key)] if key is not None else []

        def gen():
            while True:
                m = self.q.get()
                if m is None:
                    return
                yield m
        join = run.raw_join if raw else run.stub.Join
        self.call = join(gen(), metadata=md)
        self.t = threading.Thread(target=self._pump, daemon=True)
        self.t.start()

    def _pump(self):
        try:
            for m in self.call:
                self.rx.put(m)
            self.rx.put(("end", grpc.StatusCode.OK, ""))
        except grpc.RpcError as e:
            self.rx.put(("end", e.code(), e.details()))

    def send(self, m):
        self.q.put(m)

    def recv(self, timeout=5.0):
        try:
            return self.rx.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self):
        self.q.put(None)


def announce(url=URL, a=0, b=1, h=GOOD_HASH, model=MODEL):
    return pb.ServerMessage(announce=pb.AnnounceMsg(
        model_id=model, layer_start=a, layer_end=b, ram_bytes=123456789,
        listen_url=url, vindex_hash=h))


def heartbeat(stats, inflight=0):
    return pb.ServerMessage(heartbeat=pb.HeartbeatMsg(
        cpu_pct=0.0, ram_used=0, requests_in_flight=inflight,
        layer_stats=[pb.LayerLatency(layer=ly, avg_ms=a, p99_ms=p)
                     for ly, a, p in stats]))


def dropping(reason, a=0, b=1, model=MODEL):
    return pb.ServerMessage(dropping=pb.DroppingMsg(
        model_id=model, layer_start=a, layer_end=b, reason=reason))


def errors(evs):
    return [e for e in evs if e["ev"] == "error"]


def evs_of(evs, name):
    return [e for e in evs if e["ev"] == name]


def is_ack(m):
    return isinstance(m, pb.RouterMessage) and m.WhichOneof("payload") == \
        "ack"


def ended_ok(sh):
    m = sh.recv()
    return isinstance(m, tuple) and m[1] == grpc.StatusCode.OK, m


def case_f():
    """(f) the two §9 vectors (also asserted at grid_peer's import)."""
    for m, n, h in (("gemma-3-4b-it", 34, "6f04b24d6cfecd10"),
                    ("demo-model", 4, "01c0e4262a2daa31")):
        got = grid_peer.vindex_hash(m, n)
        check(got == h, "(f) vindex_hash(%r, %d) = %s" % (m, n, h), got)
    # The reference SipHash-1-3 test key gives a known value for the
    # empty input too: keys 0, 0 must differ from it (the keys matter).
    check(grid_peer.siphash13(b"") != grid_peer.siphash13(b"", 1, 0),
          "(f) the keys enter the hash")


def run_good():
    """(a), (b), (e) and Status on one peer that must end with no error."""
    r = PeerRun("--heartbeat-ms", "200")
    try:
        # (a)
        sh = Shard(r)
        sh.send(announce())
        m = sh.recv()
        check(is_ack(m) and m.ack.server_id.startswith("srv-"),
              "(a) a correct announce gets AckMsg srv-<secs>-<n>", m)
        sid = m.ack.server_id if is_ack(m) else ""
        parts = sid.split("-")
        check(len(parts) == 3 and parts[1].isdigit() and
              abs(int(parts[1]) - time.time()) < 60 and parts[2].isdigit(),
              "(a) server_id is srv-<unix secs>-<n>", sid)
        time.sleep(0.3)
        sh.send(heartbeat([(0, 1.5, 2.0), (1, 0.25, 0.5)], inflight=2))
        hb = r.wait_event(lambda e: e["ev"] == "heartbeat")
        check(hb is not None and hb["layer_stats"] ==
              [[0, 1.5, 2.0], [1, 0.25, 0.5]] and
              hb["requests_in_flight"] == 2,
              "(a) the heartbeat is recorded with its layer_stats", hb)
        st = r.stub.Status(pb.StatusRequest(),
                           metadata=[("authorization", "Bearer " + KEY)])
        check(len(st.models) == 1 and st.models[0].model_id == MODEL and
              st.models[0].num_layers == 4 and
              [(s.layer_start, s.layer_end, list(s.server_ids))
               for s in st.models[0].shards] == [(0, 1, [sid])] and
              [(g.layer_start, g.layer_end) for g in st.models[0].gaps] ==
              [(2, 3)],
              "Status: coverage 0-1 by %s, gap 2-3" % sid, st)
        check(len(st.servers) == 1 and st.servers[0].server_id == sid and
              st.servers[0].listen_url == URL and
              st.servers[0].requests_in_flight == 2 and
              len(st.servers[0].layer_stats) == 2,
              "Status: the server's info from its last heartbeat", st)
        sh.send(dropping("shutdown"))
        sh.close()
        ok, m = ended_ok(sh)
        check(ok, "(a) after dropping and close, the call ends OK", m)
        e = r.wait_event(lambda e: e["ev"] == "stream_end")
        check(e is not None and e["how"] == "client closed",
              "(a) stream_end: client closed", e)

        # (b) wrong key, missing key: Join and Status
        for what, key in (("wrong", "nope"), ("missing", None)):
            sh = Shard(r, key=key)
            sh.send(announce())
            m = sh.recv()
            check(isinstance(m, tuple) and
                  m[1] == grpc.StatusCode.UNAUTHENTICATED and
                  m[2] == "invalid grid key",
                  "(b) Join with a %s key: UNAUTHENTICATED "
                  "\"invalid grid key\"" % what, m)
            sh.close()
        try:
            r.stub.Status(pb.StatusRequest(),
                          metadata=[("authorization", "Bearer nope")])
            check(False, "(b) Status with a wrong key: UNAUTHENTICATED")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.UNAUTHENTICATED and
                  e.details() == "invalid grid key",
                  "(b) Status with a wrong key: UNAUTHENTICATED "
                  "\"invalid grid key\"", (e.code(), e.details()))

        # (e) unassign through the control directory, filtered by URL:
        # two streams, only URL2's gets it.
        s1 = Shard(r)
        s1.send(announce())
        s2 = Shard(r)
        s2.send(announce(URL2, 2, 3))
        m1, m2 = s1.recv(), s2.recv()
        check(is_ack(m1) and is_ack(m2), "(e) two units acked", (m1, m2))
        with open(os.path.join(r.control, "unassign.tmp"), "w") as f:
            f.write(URL2 + "\n")
        os.rename(os.path.join(r.control, "unassign.tmp"),
                  os.path.join(r.control, "unassign"))
        m = s2.recv()
        check(isinstance(m, pb.RouterMessage) and
              m.WhichOneof("payload") == "unassign" and
              (m.unassign.model_id, m.unassign.layer_start,
               m.unassign.layer_end, m.unassign.reason) ==
              (MODEL, 2, 3, "rebalance"),
              "(e) UnassignMsg {demo-model, 2, 3, rebalance} to the "
              "unit of %s" % URL2, m)
        check(s1.recv(timeout=0.5) is None,
              "(e) the other unit gets nothing (filter)")
        check(not os.path.exists(os.path.join(r.control, "unassign")),
              "(e) the control file is consumed")
        s2.send(dropping("reassigned", 2, 3))
        s2.close()
        ok, m = ended_ok(s2)
        check(ok, "(e) dropping reassigned, close: the call ends OK", m)
        s1.send(dropping("shutdown"))
        s1.close()
        ended_ok(s1)

        # control "reject": the next announce gets RejectMsg.
        with open(os.path.join(r.control, "reject"), "w") as f:
            f.write("reason=full up\n")
        r.wait_event(lambda e: e["ev"] == "reject_armed")
        sh = Shard(r)
        sh.send(announce())
        m = sh.recv()
        check(isinstance(m, pb.RouterMessage) and
              m.WhichOneof("payload") == "reject" and
              m.reject.reason == "full up",
              "control reject: RejectMsg {full up}", m)
        sh.close()
        ok, m = ended_ok(sh)
        check(ok, "control reject: the client closes, the call ends OK", m)
    finally:
        rc, evs = r.stop()
    check(rc == 0 and not errors(evs),
          "(a,b,e) the peer exits 0 with no error event",
          (rc, errors(evs)))
    check(len(evs_of(evs, "unauthenticated")) == 3,
          "(b) three \"unauthenticated\" events (2 Join, 1 Status)",
          evs_of(evs, "unauthenticated"))
    ex = evs_of(evs, "exit")
    check(len(ex) == 1 and ex[0]["errors"] == 0, "exit event, errors 0", ex)
    an = evs_of(evs, "announce")
    check(len(an) == 4 and an[0]["vindex_hash"] == GOOD_HASH and
          an[0]["ram_bytes"] == 123456789 and an[0]["listen_url"] == URL,
          "(a) announce events carry every field", an[:1])
    dr = evs_of(evs, "dropping")
    check([d["reason"] for d in dr] == ["shutdown", "reassigned",
                                        "shutdown"],
          "(a,e) dropping events with their reasons", dr)
    us = evs_of(evs, "unassign_sent")
    check(len(us) == 1 and us[0]["url"] == URL2, "(e) one unassign_sent",
          us)


def run_bad(name, play, want_substr, extra=()):
    """A sub-run whose shard breaks one rule: an error event naming it,
    exit status 1."""
    r = PeerRun(*extra)
    try:
        play(r)
        e = r.wait_event(lambda e: e["ev"] == "error")
    finally:
        rc, evs = r.stop()
    errs = errors(evs)
    check(errs and any(want_substr in x["msg"] for x in errs),
          "%s: an error event containing %r" % (name, want_substr), errs)
    check(rc == 1, "%s: the peer exits 1" % name, rc)
    return e


def play_hash(r):
    sh = Shard(r)
    sh.send(announce(h="01c0e4262a2daa32"))
    m = sh.recv()
    # The peer still acks (so that a test sees every error), but records
    # it; the check is the error event.
    check(is_ack(m), "(c) the announce with a wrong hash is answered", m)
    sh.close()


def play_unsorted(r):
    sh = Shard(r)
    sh.send(announce())
    sh.recv()
    sh.send(heartbeat([(1, 1.0, 1.0), (0, 1.0, 1.0)]))
    r.wait_event(lambda e: e["ev"] == "heartbeat")
    sh.close()


def play_not_announce(r):
    sh = Shard(r)
    sh.send(heartbeat([]))
    m = sh.recv()
    check(isinstance(m, tuple) and m[1] == grpc.StatusCode.INVALID_ARGUMENT,
          "a first message other than announce: INVALID_ARGUMENT", m)
    sh.close()


def play_unknown_field(r):
    sh = Shard(r, raw=True)
    # The announce plus field 7 (a later router's "capabilities", §9:
    # not wire-compatible with c880fb7) inside AnnounceMsg.
    inner = announce().announce.SerializeToString() + b"\x3a\x02ab"
    sh.send(b"\x0a" + bytes([len(inner)]) + inner)
    sh.recv()
    sh.close()


def play_short_gap(r):
    sh = Shard(r)
    sh.send(announce())
    sh.recv()
    sh.send(heartbeat([]))
    time.sleep(0.02)
    sh.send(heartbeat([]))
    time.sleep(0.3)
    sh.close()


def play_layer_outside(r):
    sh = Shard(r)
    sh.send(announce())
    sh.recv()
    sh.send(heartbeat([(0, 1.0, 2.0), (2, 1.0, 2.0)]))
    r.wait_event(lambda e: e["ev"] == "heartbeat")
    sh.close()


def main():
    case_f()
    run_good()
    run_bad("(c) wrong vindex_hash", play_hash, "vindex_hash")
    run_bad("(d) unsorted layer_stats", play_unsorted,
            "not sorted strictly ascending")
    run_bad("first message not announce", play_not_announce,
            "not announce")
    run_bad("unknown field 7 in AnnounceMsg", play_unknown_field,
            "unknown field 7")
    run_bad("heartbeat gap 20 ms at 1000 ms", play_short_gap,
            "heartbeat gap", ("--heartbeat-ms", "1000"))
    run_bad("layer_stats outside the announced range", play_layer_outside,
            "outside the announced")
    if FAILS:
        print("test_grid_peer.py: %d FAILED: %s" % (len(FAILS), FAILS))
        return 1
    print("test_grid_peer.py: ok (%d checks)" % PASSES[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
