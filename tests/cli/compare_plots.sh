#!/usr/bin/env bash
# tests/cli/compare_plots.sh HWINFER OUT_DIR FILE.json... — runs `hwinfer compare -o OUT_DIR` and
# checks every plot exists as PNG and SVG (and, with $EXPECT_MBU_TEXT set, that mbu.svg holds that
# text: a bar above 100% is labelled in the plot, besides compare's own warning). Without any
# Python that can import matplotlib ($HWINFER_PYTHON, python3 on PATH, Debian's /usr/bin/python3:
# where hwinfer looks) it exits 77 (ctest: skipped) — except under CI or HWINFER_STRICT_TESTS
# (tools/run-tests.sh sets it, and its set-up installs python3-matplotlib), where a skip would
# hide the plotting path: that fails.
set -uo pipefail
hw="$1"; out="$2"; shift 2
found=""
for python in ${HWINFER_PYTHON:-} python3 /usr/bin/python3; do
  if "$python" -c 'import matplotlib' 2>/dev/null; then found="$python"; break; fi
done
if [ -z "$found" ]; then
  if [ -n "${CI:-}" ] || [ -n "${HWINFER_STRICT_TESTS:-}" ]; then
    echo "FAIL: no Python can import matplotlib (tools/setup.sh installs python3-matplotlib)"
    exit 1
  fi
  echo "SKIP: matplotlib is not importable (install python3-matplotlib)"; exit 77
fi
rm -rf "$out"
"$hw" compare -o "$out" "$@" || { echo "FAIL: hwinfer compare -o exited $?"; exit 1; }
for plot in throughput_latency roofline mbu; do
  for ext in png svg; do
    [ -s "$out/$plot.$ext" ] || { echo "FAIL: $out/$plot.$ext was not written"; exit 1; }
  done
done
if [ -n "${EXPECT_MBU_TEXT:-}" ] && ! grep -qF "$EXPECT_MBU_TEXT" "$out/mbu.svg"; then
  echo "FAIL: $out/mbu.svg does not hold the text: $EXPECT_MBU_TEXT"; exit 1
fi
echo "OK: all plots written (found $found)"
