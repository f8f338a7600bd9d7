#!/usr/bin/env bash
# tools/run-tests.sh — README command (2), and what CI runs: installs what is missing, builds,
# runs every test through ctest, then builds the tests again with ASan+UBSan in a separate folder
# and runs them there; any sanitizer report fails the run. Both trees carry -g1 debug info (line
# tables and function names: what backtraces and sanitizer reports print), not full -g: it
# compiles a third faster under the sanitizers (one CLI file: 27 s vs 40 s) and keeps the CI run
# under 30 minutes on 2 cores.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="$(nproc 2>/dev/null || echo 2)"
# Everything this script needs is installed by it: a test may not skip for want of it.
export HWINFER_STRICT_TESTS=1

# Seconds since the script started, for the stage lines (CI's whole run should stay under 30
# minutes on 2 cores: the lines say which stage grew).
started=$SECONDS
elapsed() { echo "$((SECONDS - started)) s"; }

# ctest in BUILD_DIR; when a test fails, the digest of why comes last (a log's tail names it).
run_ctest() {
  local rc=0
  echo "== $1 built: $(elapsed) since the start; testing =="
  ctest --test-dir "$1" --output-on-failure -j "$jobs" || rc=$?
  if ((rc != 0)); then
    "$repo/tools/ctest-failure-digest.sh" "$1"
    exit "$rc"
  fi
  echo "== $1 tested: $(elapsed) since the start =="
}

echo "== build and test (build/) =="
# The GPU plugins are compiled for one architecture of each kind their kernels branch on, not
# every default one (they cannot run here; compiling is the check): CUDA for sm_90 (the H200),
# HIP for gfx90a (64-wide wavefronts) and gfx1030 (32-wide). A third of hipcc's time and two
# thirds of nvcc's.
# Tests and benchmarks on explicitly: the quick start (README command 1) configures the same
# build folder without them.
"$repo/tools/setup.sh" "$repo/build" -DHWINFER_WARNINGS_AS_ERRORS=ON \
  -DHWINFER_BUILD_TESTS=ON -DHWINFER_BUILD_BENCHMARKS=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_CUDA_ARCHITECTURES=90-real -DHWINFER_HIP_ARCHITECTURES="gfx90a;gfx1030"
run_ctest "$repo/build"

echo "== ASan + UBSan build and test (build-asan/) =="
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Not built again here: the CUDA and HIP plugins (their kernel source runs under the sanitizers in
# the GPU emulator plugin, built here too), the benchmarks, and the fuzz target (sanitized itself).
"$repo/tools/setup.sh" "$repo/build-asan" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" -DCMAKE_C_FLAGS_DEBUG="-g1 -O1" \
  -DHWINFER_SANITIZE=address,undefined -DHWINFER_WARNINGS_AS_ERRORS=ON -DHWINFER_BUILD_TESTS=ON \
  -DHWINFER_BUILD_BENCHMARKS=OFF -DHWINFER_WITH_CUDA=OFF -DHWINFER_WITH_HIP=OFF
run_ctest "$repo/build-asan"
