#!/usr/bin/env bash
# tests/cli/compare_plots.sh HWINFER OUT_DIR FILE.json... — runs `hwinfer compare -o OUT_DIR` and
# checks every plot exists as PNG and SVG. Exits 77 (ctest: skipped) when the Python that hwinfer
# would use ($HWINFER_PYTHON, default python3) cannot import matplotlib.
set -uo pipefail
hw="$1"; out="$2"; shift 2
if ! "${HWINFER_PYTHON:-python3}" -c 'import matplotlib' 2>/dev/null; then
  echo "SKIP: matplotlib is not importable (install python3-matplotlib)"; exit 77
fi
rm -rf "$out"
"$hw" compare -o "$out" "$@" || { echo "FAIL: hwinfer compare -o exited $?"; exit 1; }
for plot in throughput_latency roofline mbu; do
  for ext in png svg; do
    [ -s "$out/$plot.$ext" ] || { echo "FAIL: $out/$plot.$ext was not written"; exit 1; }
  done
done
echo "OK: all plots written"
