#!/usr/bin/env bash
# tests/hostile/capped.sh COMMAND [ARGS...] — runs COMMAND under a memory cap, so a hostile input
# that makes hwinfer allocate before it validates fails the test instead of passing slowly:
# 2 GiB of address space (ulimit -v) in a plain build; under AddressSanitizer, which reserves
# terabytes of address space, its own limits instead (one allocation at most 1 GiB, 3 GiB RSS),
# as HWINFER_SANITIZED=1 (set by CMake for a sanitizer build) says. The time bound is the
# caller's (`timeout` inside COMMAND, and the ctest TIMEOUT).
set -uo pipefail
if [ -n "${HWINFER_SANITIZED:-}" ]; then
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:max_allocation_size_mb=1024:allocator_may_return_null=0:hard_rss_limit_mb=3072"
else
  ulimit -v $((2 * 1024 * 1024)) || { echo "capped.sh: cannot set ulimit -v" >&2; exit 1; }
fi
exec "$@"
