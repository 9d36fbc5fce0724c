#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# HTTP/1.1 conformance (issue 24): every origin-server requirement of
# RFC 9110 and RFC 9112 that docs/HTTP-CONFORMANCE.md lists, one raw-byte
# case each (conformance.py), against one appliance on net_tap in a
# namespace of its own (fsa, 198.18.3.0/24). Needs root.
#
#   test_conformance.sh BUILD_DIR
#
# The appliance: a 2-layer llama model of hidden 64 from tools/mkvindex,
# an api_key (the 401 cases), small limits so that 408, 413, 414 and 431
# cost little (max_body 4K, max_header 1K, header and body timeouts 1 s,
# idle timeout 3 s), and a rate limit per client (600/hour, the client
# taken from X-Forwarded-For) that only the 429 case, as a client of its
# own, runs into. The route cases come from ffn-routes (the route table).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
fsa_init conf "${1:-build}"

key="conf-key-0123456789abcdef"
FSA_STEP="model"
# a hybrid MoE with experts served, so that every route of the table
# answers: GET /v1/expert/topology is 404 without experts = A-B
# (spec/moe.md §2)
"$FSA_BUILD/tools/mkvindex/mkvindex" --hidden 64 --intermediate 128 \
	--layers 2 --experts 4 --expert-width 32 "$FSA_DIR/model" >/dev/null
fsa_conf "$FSA_DIR/conf.conf" "$FSA_DIR/model" 0-1 experts=0-3 \
	api_key=$key \
	max_body=4K max_header=1K header_timeout_ms=1000 \
	body_timeout_ms=1000 idle_timeout_ms=3000 \
	rate_limit=600/hour trust_forwarded_for=on
fsa_start "$FSA_DIR/conf.conf"
FSA_STEP="conformance"
rc=0
fsa_client 300 "$FSA_PY" "$HERE/conformance.py" --host "$FSA_IP" \
	--port 8080 --routes "$FSA_BUILD/tools/ffn-frame/ffn-routes" \
	--api-key "$key" --max-body 4096 --max-header 1024 \
	--header-timeout-ms 1000 --body-timeout-ms 1000 \
	--idle-timeout-ms 3000 --rate-limit 600 || rc=$?
fsa_stop
if [ "$rc" -ne 0 ]; then
	FSA_STEP="conformance"
	echo "test_conformance.sh: FAILED"
	exit 1
fi
FSA_STEP="done"
echo "test_conformance.sh: ok"
