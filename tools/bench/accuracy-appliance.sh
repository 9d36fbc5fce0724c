#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# docs/ACCURACY.md against the appliance: the models of
# tests/e2e/pyref/run_accuracy.sh served by ffn-shard, two units (layers
# 0-3 on :8080, 4-7 on :8081) on one net_tap port in namespace fsa-acc,
# ffn-bench inside the namespace. usage: accuracy-appliance.sh [BUILD [DIR]]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-$top/build}" && pwd); T=${2:-/tmp/ffn-acc-app}; PY=/usr/bin/python3; P=$top/tests/e2e/pyref
mkdir -p $T
mk() { [ -f "$T/$1/index.json" ] && return; "$PY" "$P/mkmodel.py" random "$T/$1" --hidden 512 --features 1536 --layers 8 --seed 42 --vocab 2048 "${@:2}" >/dev/null; }
mk llama --model-type llama; mk gemma3 --model-type gemma3; mk outlier --model-type llama --down-scale 1:100000
for m in llama gemma3 outlier; do
  ns=fsa-acc; ip netns del $ns 2>/dev/null; ip netns add $ns; ip netns exec $ns ip link set lo up
  cat > $T/$m.conf <<CONF
[eal]
args = -l 0-1 --no-pci --no-huge -m 768 --file-prefix fsa_acc --vdev net_tap0,iface=fsa9 --log-level=pmd.net.tap:error
[port 0]
device = net_tap0
address = 198.18.3.2/24
[shard lo]
model = $T/$m
layers = 0-3
listen = 8080
net_lcores = 0
i8 = on
[shard hi]
model = $T/$m
layers = 4-7
listen = 8081
net_lcores = 1
i8 = on
CONF
  ip netns exec $ns timeout 900 $B/app/ffn-shard/ffn-shard -c $T/$m.conf > $T/$m.log 2>&1 &
  pid=$!
  for i in $(seq 100); do ip netns exec $ns ip link show fsa9 >/dev/null 2>&1 && break; sleep 0.1; done
  ip netns exec $ns ip addr add 198.18.3.1/24 dev fsa9; ip netns exec $ns ip link set fsa9 up
  for i in $(seq 100); do grep -q serving $T/$m.log && [ $(grep -c serving $T/$m.log) -ge 2 ] && break; sleep 0.2; done
  L="0-3=http://198.18.3.2:8080,4-7=http://198.18.3.2:8081"
  echo "### $m"
  echo '$ ffn-bench --ffn "'"$L"'" --model '"MODEL"' --steps 32 --wire f32,f16,i8'
  ip netns exec $ns timeout 600 $B/tools/client/ffn-bench --ffn "$L" --model "$T/$m" --steps 32 --wire f32,f16,i8
  if [ $m != outlier ]; then
    echo '$ ffn-bench ... --request-wire f32   (f32 requests, narrowed responses)'
    ip netns exec $ns timeout 600 $B/tools/client/ffn-bench --ffn "$L" --model "$T/$m" --steps 32 --wire f32,f16,i8 --request-wire f32 | sed -n '4,7p'
  fi
  kill -TERM $pid; wait $pid 2>/dev/null; ip netns del $ns
done
