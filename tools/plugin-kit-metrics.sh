#!/usr/bin/env bash
# tools/plugin-kit-metrics.sh — the plugin-side measures of docs/plugin-kit.md (issue 19), from the
# repository root: lines per plugin, guards and NULL checks per backend folder, and the places
# that list the kernel kinds. Run it before and after a change to the plugin layer; the paths are
# variables at the top so the same script measures the tree before and after the kit's renames.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

backends=(backends/cpu backends/sim backends/vulkan backends/cuda)
template=sdk/template/src
kinds=(GEMM MATMUL_QUANTIZED ATTENTION_PREFILL ATTENTION_DECODE_PAGED KV_APPEND RMS_NORM ROPE
       SILU_MUL EMBEDDING BANDWIDTH_PROBE ROPE_KV_APPEND)

count_lines() { { cat "$@" 2>/dev/null || true; } | wc -l; }

echo "## Lines per plugin (entry, internal header, plumbing = entry + *_internal.h + *_backend.h +"
echo "## device, memory, stream, event, kernels.cpp; all = every source in the folder)"
printf '%-22s %8s %8s %9s %8s\n' plugin entry internal plumbing all
for dir in "${backends[@]}"; do
  entry=$(count_lines "$dir"/plugin_entry.cpp)
  internal=$(count_lines "$dir"/*_internal.h)
  plumbing=$(count_lines "$dir"/plugin_entry.cpp "$dir"/*_internal.h "$dir"/*_backend.h \
    "$dir"/{device,memory,stream,event,kernels}.cpp)
  all=$(find "$dir" -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.comp' \) \
    -exec cat {} + | wc -l)
  printf '%-22s %8s %8s %9s %8s\n' "$(basename "$dir")" "$entry" "$internal" "$plumbing" "$all"
done
printf '%-22s %8s %8s %9s %8s\n' template - - - "$(cat "$template"/* | wc -l)"

echo
echo "## Guards and NULL checks"
printf '%-22s %9s %18s %12s\n' folder 'guarded(' 'require_non_null(' 'catch (...)'
for dir in "${backends[@]}" "$template"; do
  printf '%-22s %9s %18s %12s\n' "$dir" "$(grep -rho 'guarded(' "$dir" | wc -l)" \
    "$(grep -rho 'require_non_null(' "$dir" | wc -l)" "$(grep -rho 'catch (\.\.\.)' "$dir" | wc -l)"
done

echo
echo "## Files that name at least 5 of the ${#kinds[@]} kernel kinds"
listed=0
while IFS= read -r file; do
  n=0
  for kind in "${kinds[@]}"; do
    grep -qE "HWINFER_KERNEL_${kind}\b" "$file" && n=$((n + 1))
  done
  if [ "$n" -ge 5 ]; then
    echo "  $n $file"
    listed=$((listed + 1))
  fi
done < <(git ls-files '*.c' '*.h' '*.cpp' '*.def')
echo "  files: $listed"
