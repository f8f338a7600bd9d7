#!/usr/bin/env bash
# tools/quickstart.sh — README command (1): installs what is missing, builds, and runs the main
# job on the CPU backend. Until the benchmark lands that is: list the devices, then probe them.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$repo/tools/setup.sh" "$repo/build" -DCMAKE_BUILD_TYPE=Release
"$repo/build/bin/hwinfer" --config "$repo/configs/default.yaml" devices
"$repo/build/bin/hwinfer" --config "$repo/configs/default.yaml" probe
