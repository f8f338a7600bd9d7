#!/usr/bin/env bash
# tools/setup.sh [BUILD_DIR] [extra cmake args...] — installs the Debian packages hwinfer needs
# (only those missing), then configures and builds into BUILD_DIR (default: build); with
# HWINFER_SETUP_TARGETS set, only those targets.
# Used by tools/quickstart.sh and tools/run-tests.sh; safe to run again (incremental).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${1:-$repo/build}"
shift || true

packages=(
  g++ cmake ninja-build pkg-config ccache
  libyaml-cpp-dev libfmt-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libpcre2-dev xz-utils  # byte-level BPE pre-tokenizers; the Llama 3 vocabulary is kept xz'd
  libcpp-httplib-dev curl python3-prometheus-client  # `hwinfer serve` and its tests
  clang libclang-rt-14-dev
  python3-matplotlib
  glslc libvulkan-dev mesa-vulkan-drivers  # the Vulkan backend; lavapipe runs it on the CPU
  hipcc libamdhip64-dev  # the HIP backend (compiled and loaded in CI; no AMD GPU needed)
  libopenmpi-dev openmpi-bin  # tensor parallelism across processes (mpirun -np N ... --tp N)
)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing missing Debian packages: ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

jobs="$(nproc 2>/dev/null || echo 2)"
# ccache keeps every compile in ~/.cache/ccache: a second build on this machine (another tree, a
# fresh clone, the next CI run) recompiles only what changed. nvcc goes through it too; hipcc's
# custom commands do not.
launchers=()
# Paths inside the clone are hashed relative to it (and the working directory not at all), so a
# fresh clone elsewhere on the machine hits the cache too; debug info then names files relative
# to the build folder.
export CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=1
if command -v ccache >/dev/null; then
  launchers=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
             -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$repo" -B "$build_dir" -G Ninja "${launchers[@]}" "$@"
# HWINFER_SETUP_TARGETS (space-separated): build only those targets (the quick start's CLI and
# CPU plugin); unset: everything the configuration enables.
targets=()
if [ -n "${HWINFER_SETUP_TARGETS:-}" ]; then
  read -r -a names <<<"$HWINFER_SETUP_TARGETS"
  targets=(--target "${names[@]}")
fi
cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
