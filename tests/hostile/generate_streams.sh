#!/usr/bin/env bash
# tests/hostile/generate_streams.sh HWINFER MODEL OUT_DIR — `hwinfer generate` must print each
# token as it is sampled: a run of 2000 tokens is killed as soon as its first token appears, and
# what it printed until then must be there (it used to print nothing before the end, so a run
# killed after 20 s left nothing).
set -uo pipefail
hw="$1"; model="$2"; out="$3"
rm -rf "$out"; mkdir -p "$out"
"$hw" generate -m "$model" --prompt-tokens 1,2,3 -n 2000 >"$out/tokens.txt" 2>"$out/err.txt" &
pid=$!
for _ in $(seq 1 6000); do  # up to 60 s for the first token
  [ -s "$out/tokens.txt" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.01
done
if ! kill -0 "$pid" 2>/dev/null; then
  wait "$pid"; rc=$?
  echo "FAIL: generate ended (exit $rc) before its first token was seen in its output"
  cat "$out/err.txt"; exit 1
fi
kill -KILL "$pid"; wait "$pid" 2>/dev/null
count=$(wc -w <"$out/tokens.txt")
if ! grep -Eq '^[0-9]+( [0-9]+)*' "$out/tokens.txt"; then
  echo "FAIL: the killed run left no tokens:"; cat "$out/tokens.txt"; exit 1
fi
# All 2000 at once would mean they were printed at the end, not as they were sampled.
if [ "$count" -ge 2000 ]; then
  echo "FAIL: all $count tokens appeared together, at the end of the run"; exit 1
fi
echo "OK: $count token(s) printed before the run was killed"
