#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
"""Read one DPDK telemetry command of a running ffn-shard (or any DPDK
process) and print its value as JSON on one line.

usage: ffn-tel.py FILE_PREFIX COMMAND[,PARAMS]
  e.g. ffn-tel.py fsb-run-123 /ffn/shard/stats
       ffn-tel.py fsb-run-123 /ffn/shard/stats,run

The socket is /var/run/dpdk/FILE_PREFIX/dpdk_telemetry.v2 (root; EAL
--file-prefix). Exit 0 with the value, 2 when the command answered null
(unknown command, or the handler refused its parameters, e.g. a unit
name that does not exist), 1 when the socket cannot be used. The same as
dpdk-telemetry.py, without its interactive prompt, for scripts.
"""
import json
import socket
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 1
    path = f"/var/run/dpdk/{sys.argv[1]}/dpdk_telemetry.v2"
    cmd = sys.argv[2]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.settimeout(5)
        s.connect(path)
        hello = json.loads(s.recv(1024))
        s.send(cmd.encode())
        reply = json.loads(s.recv(hello.get("max_output_len", 16384)))
    except (OSError, ValueError) as e:
        print(f"ffn-tel.py: {path}: {e}", file=sys.stderr)
        return 1
    value = reply.get(cmd.split(",", 1)[0])
    if value is None:
        print(f"ffn-tel.py: {cmd}: null (unknown command or bad "
              "parameters)", file=sys.stderr)
        return 2
    print(json.dumps(value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
