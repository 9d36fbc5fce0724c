#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""The appliance's routes against pyref (spec/wire.md), over raw sockets.

    test_routes.py --host IP --port P --model DIR --owned A-B
                   [--i8 0|1] [--f16 0|1] [--api-key KEY] [--max-body N]
                   [--header-timeout-ms MS] [--body-timeout-ms MS]
                   [--groups routes,binary,...]

Run by test_routes.sh / test_worker.sh inside the test's namespace, against
an appliance serving DIR's layers A-B. --i8/--f16 say which response
formats the appliance was configured to enable; --api-key that every
request but health must carry it; --max-body the configured body limit.
Groups: routes binary negotiation router json errors limits conn auth
pipeline (default: all but auth and pipeline, which conn includes).
The groups are in routes_walk.py (what the walks answer) and
routes_http.py (the §4 error table, limits, connections, auth).
"""

import argparse

import fsa
import routes_http
import routes_walk
from routes_http import g_auth, g_conn, g_errors, g_limits, g_pipeline
from routes_walk import (g_binary, g_delivery, g_json, g_negotiation,
                         g_router, g_routes)

GROUPS = {"delivery": g_delivery, "routes": g_routes, "binary": g_binary,
          "negotiation": g_negotiation, "router": g_router, "json": g_json,
          "errors": g_errors, "limits": g_limits, "conn": g_conn,
          "auth": g_auth, "pipeline": g_pipeline}
DEFAULT = "delivery,routes,binary,negotiation,router,json,errors,limits,conn"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--model", required=True)
    ap.add_argument("--owned", required=True)
    ap.add_argument("--i8", type=int, default=0)
    ap.add_argument("--f16", type=int, default=1)
    ap.add_argument("--api-key")
    ap.add_argument("--max-body", type=int, default=0)
    ap.add_argument("--header-timeout-ms", type=int, default=0)
    ap.add_argument("--body-timeout-ms", type=int, default=0)
    ap.add_argument("--groups", default=DEFAULT)
    ap.add_argument("--name", default="test_routes")
    A = ap.parse_args()
    a, _, b = A.owned.partition("-")
    A.owned = (int(a), int(b or a))
    O = fsa.Oracle(A.model, A.owned)
    C = fsa.Checker(A.name)
    AUTH = []
    if A.api_key:
        AUTH = [("Authorization", "Bearer " + A.api_key)]
    # The groups and their checks read these as their module's globals.
    for m in (routes_walk, routes_http):
        m.A, m.O, m.C, m.AUTH = A, O, C, AUTH
    for g in A.groups.split(","):
        C.run(GROUPS[g])
    C.done()


if __name__ == "__main__":
    main()
