#!/usr/bin/env bash
# tests/hostile/unsorted_arrivals.sh HWINFER CONFIG OUT_DIR — a JSONL workload whose arrivals are
# not in file order: the --tokens file must list the requests in file order, each with its line
# and its own prompt length (ids used to be given in arrival order, so outputs joined to the
# wrong inputs).
set -euo pipefail
hw="$1"; config="$2"; out="$3"
rm -rf "$out"; mkdir -p "$out"
"$hw" bench --config "$config" --no-progress --tokens "$out/tokens.jsonl" >"$out/bench.txt"
# unsorted.jsonl: line 1 input 5 (arrives last), line 3 input 9 (first), line 4 input 7.
expected='0 1 5
1 3 9
2 4 7'
actual="$(sed -E 's/.*"id":([0-9]+).*"input_tokens":([0-9]+).*"line":([0-9]+).*/\1 \3 \2/' \
  "$out/tokens.jsonl")"
if [ "$actual" != "$expected" ]; then
  echo "FAIL: expected (id line input_tokens):"; echo "$expected"
  echo "got:"; echo "$actual"; echo "--- tokens file:"; cat "$out/tokens.jsonl"
  exit 1
fi
echo "OK: ids follow the file; lines and prompt lengths join"
