#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Soak samples of a running ffn-shard (tools/soak/run).

    sample.py take FILE_PREFIX PID PHASE      one JSON line on stdout: time,
        phase, RSS (kB, /proc), objects in use per mempool (/ffn/mempools),
        TCP connections by state and counters (/ffn/net/tcp), net counters
        (/ffn/net/stats)
    sample.py check SAMPLES.jsonl             compare the last sample (idle,
        after the load) with the first (idle, before it) and the first
        sample after the first load phase; exit 1 on a difference
"""

import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TEL = os.path.join(HERE, "..", "telemetry", "ffn-tel.py")

# TCP states a connection may still be in once the load has stopped and
# the appliance has closed its idle connections: TIME_WAIT (2 MSL) only.
IDLE_STATES = ("conns_LISTEN", "conns_TIME_WAIT")
# RSS may grow while pools and the heap are first touched (--no-huge
# memory is paged in on use); after the first load phase it must not.
RSS_SLACK_KB = 8 * 1024


def tel(prefix, cmd):
    out = subprocess.run([sys.executable, TEL, prefix, cmd], check=True,
                         capture_output=True, text=True, timeout=20).stdout
    return json.loads(out)


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1])
    return -1


def take(prefix, pid, phase):
    tcp = tel(prefix, "/ffn/net/tcp")
    print(json.dumps({
        "t": round(time.time(), 1), "phase": phase, "rss_kb": rss_kb(pid),
        "mempools": tel(prefix, "/ffn/mempools"),
        "conns": {k: v for k, v in tcp.items() if k.startswith("conns_")},
        "tcp": {k: v for k, v in tcp.items()
                if not k.startswith("conns_")},
        "net": tel(prefix, "/ffn/net/stats"),
    }), flush=True)


def check(path):
    s = [json.loads(ln) for ln in open(path)]
    first, last = s[0], s[-1]
    warm = next((x for x in s if x["phase"] not in ("idle", "start")),
                first)
    bad = []
    for k, v in last["conns"].items():
        if k not in IDLE_STATES and v != 0:
            bad.append("%s: %d connections left" % (k, v))
    tw = last["conns"].get("conns_TIME_WAIT", 0)
    for name, n in last["mempools"].items():
        base = first["mempools"].get(name, 0)
        # a TIME_WAIT connection keeps its tcp_conn (tcp_cp_*) entry
        allow = base + (tw if name.startswith("tcp_cp") else 0)
        if n > allow:
            bad.append("mempool %s: %d in use, %d before the load%s" %
                       (name, n, base, " (+%d TIME_WAIT)" % tw
                        if name.startswith("tcp_cp") else ""))
    peak = max(x["rss_kb"] for x in s)
    if last["rss_kb"] > warm["rss_kb"] + RSS_SLACK_KB or \
            peak > warm["rss_kb"] + RSS_SLACK_KB:
        bad.append("RSS grew after the first load phase: %d kB then, "
                   "%d kB at peak, %d kB at the end" %
                   (warm["rss_kb"], peak, last["rss_kb"]))
    for k in ("drop_no_mbuf", "drop_tx_stall"):
        if last["net"].get(k, 0) != 0:
            bad.append("net %s: %d" % (k, last["net"][k]))
    print("soak check: %d samples over %.0f s; RSS %d kB idle, %d kB after "
          "the first phase, %d kB at the end; connections at the end: %s" %
          (len(s), last["t"] - first["t"], first["rss_kb"], warm["rss_kb"],
           last["rss_kb"], {k: v for k, v in last["conns"].items() if v}))
    for b in bad:
        print("FAIL soak: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "take":
        take(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(check(sys.argv[2]))
