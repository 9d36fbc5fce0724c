#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Reproducer (issue 5, pktgen kit): the ARP cache of lib/net never frees a
# slot, so ARP requests for the appliance's address from many sender
# addresses fill it for good, and a peer that arrives afterwards is never
# resolved: it is not served.
#
# ffn-shard on net_tap in a namespace (prefix fss, 198.18.5.0/24, set up by
# tests/e2e/appliance/lib.sh). A peer
# at 198.18.5.3 (a second address on the kernel side) is served before the
# ARP flood, then 4096 ARP requests "who-has 198.18.5.2 tell 10.77.x.y"
# arrive, then a new peer 198.18.5.4 must be served too.
#
# usage: stress_arp_fill.sh BUILD_DIR
# Exit 0 when the new peer is served (the expected behaviour).
set -euo pipefail

FSA_PFX=fss
FSA_NET=198.18.5
. "$(dirname "$0")/appliance/lib.sh"
fsa_init arp "${1:?usage: stress_arp_fill.sh BUILD_DIR}"
url=http://$FSA_IP:8080

fsa_start_small
mac=$FSA_MAC

FSA_STEP="peer .3 served before the ARP flood"
fsa_in ip addr add $FSA_NET.3/24 dev "$FSA_IF"
fsa_client 10 curl -sf --interface $FSA_NET.3 "$url/v1/health"
echo

FSA_STEP="ARP flood"
fsa_client 60 /usr/bin/python3 - "$mac" "$FSA_IF" "$FSA_IP" <<'EOF'
import socket, sys
from scapy.all import ARP, Ether
mac, iface, ip = sys.argv[1:4]
src = open("/sys/class/net/%s/address" % iface).read().strip()
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((iface, 0))
for i in range(4096):
    f = Ether(dst=mac, src=src) / ARP(op=1, hwsrc=src,
        psrc="10.77.%d.%d" % (i >> 8, i & 255), pdst=ip)
    s.send(bytes(f))
print("sent 4096 ARP requests")
EOF
sleep 1
fsa_client 10 curl -s "$url/metrics" | grep -E 'drop_arp_table_full|arp_rx' || true

FSA_STEP="new peer .4 served after the ARP flood"
fsa_in ip addr add $FSA_NET.4/24 dev "$FSA_IF"
if ! fsa_client 15 curl -sf --max-time 12 --interface $FSA_NET.4 \
	"$url/v1/health"; then
	echo "stress_arp_fill.sh: a new peer is not served after the ARP cache filled" >&2
	fsa_client 10 curl -s "$url/metrics" | grep -E 'arp' >&2 || true
	exit 1
fi
echo
fsa_stop
echo "stress_arp_fill.sh: OK"
