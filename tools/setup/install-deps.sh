#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Installs what ffn-shard builds, tests and runs with, from Debian 12's
# archive only. Idempotent: skips apt when everything is present.
set -euo pipefail

PKGS=(
	build-essential meson ninja-build pkg-config
	dpdk dpdk-dev libdpdk-dev
	libopenblas-dev libnuma-dev libcmocka-dev libjson-c-dev
	iproute2 ethtool curl wrk tcpdump procps kmod
	python3 python3-numpy python3-scapy valgrind nginx-light
	iputils-ping arping
	lua5.4 liblua5.4-dev
	clang libclang-rt-14-dev
	libgrpc-dev libprotobuf-c-dev protobuf-c-compiler
	python3-grpcio python3-grpc-tools
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
