#!/usr/bin/env bash
# tools/ctest-failure-digest.sh BUILD_DIR — after a failed ctest run, prints what failed in a few
# lines: for each failed test its name and the lines of its output that say why (gtest failures
# with their messages and traces, e.g. the conformance seed; sanitizer reports; error: lines), at
# most 40 lines in all.
# run-tests.sh prints it last so that a log whose tail is all one sees still names the cause;
# ctest's --output-on-failure output above it stays the full record.
set -euo pipefail
log="${1:?usage: ctest-failure-digest.sh BUILD_DIR}/Testing/Temporary/LastTest.log"
if [[ ! -r "$log" ]]; then
  echo "ctest-failure-digest: no $log to read" >&2
  exit 0
fi
echo "== why the failed tests failed (from $log) =="
awk '
  /^[0-9]+\/[0-9]+ Test: / { name = $3; n = 0; in_failure = 0; next }
  /^Output:$/ { in_output = 1; next }
  /^<end of output>$/ { in_output = 0; next }
  # A gtest failure from its "file:line: Failure" to the next [ ... ] line (expected/actual, the
  # message, the trace with e.g. the seed that repeats the inputs); [  FAILED  ] lines; sanitizer
  # reports; crashes.
  in_output && /^\[/ { in_failure = 0 }
  in_output && /: Failure$/ { in_failure = 1 }
  in_output && (in_failure || /^\[  FAILED  \]/ || /Sanitizer/ || /runtime error/ ||
                /error: / || /^SUMMARY: / || /terminate called/ || /Segmentation fault/ ||
                /Aborted/) {
    if (n < 16) lines[n++] = $0
    next
  }
  /^Test Failed\.$/ || /^Test Failed / || /^Test (Timeout|Crashed)/ || /Exception:/ {
    if (name != "") {
      print "-- " name ": " $0
      for (i = 0; i < n; i++) print "   " lines[i]
      name = ""
    }
  }
' "$log" | tail -n 40
