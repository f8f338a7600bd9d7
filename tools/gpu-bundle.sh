#!/usr/bin/env bash
# tools/gpu-bundle.sh [BUNDLE_DIR] — builds, HERE, everything tools/gpu-check.sh runs on the lent
# GPU machine, and packs it into BUNDLE_DIR (default gpu-bundle/, git-ignored) to travel with the
# device tool's `carry`. The GPU machine has nvcc, CMake and ninja but none of the Debian libraries
# the build needs (yaml-cpp, fmt, Google Benchmark, GoogleTest, CLI11, glslc, the Vulkan loader),
# so the binaries travel with the shared libraries they load, including this machine's C library
# and dynamic loader (glibc/, used only when the binaries do not run on the machine's own), and
# the Vulkan loader (libvulkan.so.1; the NVIDIA driver there brings the ICD). NOT libcublas (0.5 GB)
# nor libnccl (0.2 GB): the cuda plugin dlopens them at run time, and tools/gpu-check.sh finds the
# machine's own.
#
# Release build, CUDA for sm_90 only (the H200), Vulkan on, HIP off; stripped; under 64 MiB.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bundle="${1:-$repo/gpu-bundle}"
build="$repo/build-gpu"

"$repo/tools/setup.sh" "$build" -DCMAKE_BUILD_TYPE=Release -DHWINFER_WITH_CUDA=ON \
  -DHWINFER_WITH_VULKAN=ON -DHWINFER_WITH_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES=90-real \
  -DHWINFER_BUILD_TESTS=OFF -DHWINFER_BUILD_BENCHMARKS=ON

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib/hwinfer/plugins" "$bundle/glibc"
for program in hwinfer hwinfer_matmul_bench hwinfer_attention_bench; do
  cp "$build/bin/$program" "$bundle/bin/"
done
cp -P "$build"/lib/libhwinfer.so* "$bundle/lib/"
for plugin in cpu cuda vulkan; do
  cp "$build/lib/hwinfer/plugins/hwinfer-$plugin.so" "$bundle/lib/hwinfer/plugins/"
done
cp -L "$(ldconfig -p | awk '/libvulkan.so.1 .*x86-64/ {print $NF; exit}')" "$bundle/lib/libvulkan.so.1"
# GLVND's dispatch libraries, which the NVIDIA Vulkan driver there (libGLX_nvidia.so.0, named by
# its ICD manifest) needs: on 2026-12-04 the loader found no driver there (vkCreateInstance:
# VK_ERROR_INCOMPATIBLE_DRIVER), and their absence from that image is the likely cause, as the
# device tool's notes suggest (not yet verified: gpu-check.sh logs the loader's account).
glvnd=(libGLdispatch.so.0 libGLX.so.0 libEGL.so.1 libOpenGL.so.0 libGL.so.1)
if ! ldconfig -p | grep -q 'libGLdispatch.so.0 .*x86-64'; then
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends libglvnd0 libglx0 libegl1 \
    libopengl0 libgl1
fi
for name in "${glvnd[@]}"; do
  cp -L "$(ldconfig -p | awk -v n="$name" '$1 == n && /x86-64/ {print $NF; exit}')" "$bundle/lib/$name"
done
# The hardware files (spec peaks for MBU and MFU), where libhwinfer looks for installed ones:
# <prefix>/share/hwinfer/hardware beside <prefix>/lib.
mkdir -p "$bundle/share/hwinfer"
cp -r "$repo/configs/hardware" "$bundle/share/hwinfer/hardware"

# Every shared library the programs and plugins load, from this machine; the C library and the
# dynamic loader go to glibc/ (they must match each other, and only replace the machine's own
# when the programs need a newer one).
glibc_names='^(ld-linux-x86-64|libc|libm|libpthread|libdl|librt)\.so'
for file in "$bundle"/bin/* "$bundle"/lib/hwinfer/plugins/*.so "$bundle"/lib/libhwinfer.so \
            "$bundle/lib/libvulkan.so.1" "${glvnd[@]/#/$bundle/lib/}"; do
  ldd "$file" | awk '/=> \// {print $3} /^[ \t]*\/lib.*ld-linux/ {print $1}'
done | sort -u | while read -r library; do
  name="$(basename "$library")"
  if [[ "$name" == libcublas* ]]; then
    continue  # never bundled (see above)
  elif [[ "$name" =~ $glibc_names ]]; then
    cp -L "$library" "$bundle/glibc/$name"
  elif [[ "$name" != libhwinfer.so* ]]; then
    cp -L "$library" "$bundle/lib/$name"
  fi
done
if readelf -d "$bundle/lib/hwinfer/plugins/hwinfer-cuda.so" | grep -q 'NEEDED.*lib\(cublas\|nccl\)'; then
  echo "gpu-bundle: hwinfer-cuda.so links libcublas or libnccl; it must dlopen them" \
       "(vendor_blas.cpp, vendor_comm.cpp)" >&2
  exit 1
fi
strip --strip-unneeded "$bundle"/bin/* "$bundle"/lib/*.so* "$bundle"/lib/hwinfer/plugins/*.so \
  2>/dev/null || true
du -sh "$bundle"
size_kib="$(du -sk "$bundle" | cut -f1)"
if ((size_kib > 60 * 1024)); then
  echo "gpu-bundle: $bundle is ${size_kib} KiB; the device tool carries at most 64 MiB" >&2
  exit 1
fi
echo "gpu-bundle: ready; run on the GPU machine with carry [\"gpu-bundle\"]: tools/gpu-check.sh"
