#!/usr/bin/env bash
# tools/quickstart.sh — README command (1): installs what is missing, builds, lists the devices and
# runs the default benchmark on the CPU backend: configs/default.yaml's small Llama shape (its
# random weights synthesised into ~/.cache/hwinfer on the first run) under a short mixed workload
# with continuous batching, ending with the summary table (TTFT, TPOT, ITL, E2E, throughput,
# MBU/MFU per phase). The benchmark itself takes seconds on 2 cores.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$repo/tools/setup.sh" "$repo/build" -DCMAKE_BUILD_TYPE=Release
"$repo/build/bin/hwinfer" --config "$repo/configs/default.yaml" devices
"$repo/build/bin/hwinfer" bench --config "$repo/configs/default.yaml" \
  --json "$repo/build/results/default.json"
