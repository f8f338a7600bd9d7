#!/usr/bin/env bash
# tools/quickstart.sh — README command (1): installs what is missing, builds the CLI and the CPU
# plugin (not the tests, benchmarks or other backends), lists the devices and runs two benchmarks
# on the CPU backend:
#   1. configs/default.yaml: a small Llama shape under a short mixed workload with continuous
#      batching: the serving picture (TTFT, TPOT, ITL, E2E, throughput, goodput), in seconds;
#   2. configs/memory-bound.yaml: a TinyLlama-1.1B-shape Q4_0 model decoding one sequence at a
#      time, so each step reads every weight from memory: the MBU a real model gets here.
# Both models' random weights are synthesised into ~/.cache/hwinfer on the first run (the
# TinyLlama one in about half a minute); after the build, the whole run takes under 2 minutes on
# 2 cores. Results: build/results/default.json and build/results/memory-bound.json.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HWINFER_SETUP_TARGETS="hwinfer_cli hwinfer-cpu" "$repo/tools/setup.sh" "$repo/build" \
  -DCMAKE_BUILD_TYPE=Release -DHWINFER_BUILD_TESTS=OFF -DHWINFER_BUILD_BENCHMARKS=OFF
hw="$repo/build/bin/hwinfer"
"$hw" --config "$repo/configs/default.yaml" devices
"$hw" bench --config "$repo/configs/default.yaml" --json "$repo/build/results/default.json"
"$hw" bench --config "$repo/configs/memory-bound.yaml" \
  --json "$repo/build/results/memory-bound.json"
