#!/usr/bin/env bash
# tests/cli/bench_json.sh HWINFER CONFIG OUT_DIR — runs `hwinfer bench` end to end and checks the
# files it writes: the JSON has every vLLM key and section, its numbers agree with each other
# (completed requests, token totals, E2E vs TTFT + TPOT x (n_out - 1) per request from the CSV),
# the CSV and Markdown files exist, and the --tokens file has one line per request whose output
# length matches the CSV, with the 5 best candidates of each position (the first = the greedy token).
set -euo pipefail
hw="$1"; config="$2"; out="$3"
rm -rf "$out"; mkdir -p "$out"
"$hw" bench --config "$config" --no-progress --json "$out/run.json" --csv "$out/run" \
  --markdown "$out/run.md" --tokens "$out/run.tokens.jsonl" >"$out/stdout.txt"
grep -q "Serving Benchmark Result" "$out/stdout.txt"
grep -q "| TTFT |" "$out/run.md"
python3 - "$out" <<'PY'
import csv, json, sys
out = sys.argv[1]
doc = json.load(open(f"{out}/run.json"))
keys = ["duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
        "request_throughput", "request_goodput", "output_throughput", "total_token_throughput"]
for metric in ["ttft", "tpot", "itl", "e2el"]:
    keys += [f"{s}_{metric}_ms" for s in ["mean", "median", "std", "p90", "p99"]]
missing = [k for k in keys + ["env", "model", "workload", "scheduler", "hardware", "phases"]
           if k not in doc]
assert not missing, f"missing keys {missing}"
for phase in ["prefill", "decode", "mixed", "all"]:
    for k in ["steps", "time_s", "bytes", "flops", "mbu_spec", "mbu_measured", "mfu_spec", "mfu_measured"]:
        assert k in doc["phases"][phase], f"phases.{phase}.{k} missing"
rows = list(csv.DictReader(open(f"{out}/run_requests.csv")))
assert doc["completed"] == len(rows) == doc["workload"]["num_requests"], (doc["completed"], len(rows))
assert doc["total_output_tokens"] == sum(int(r["output_tokens"]) for r in rows)
steps = list(csv.DictReader(open(f"{out}/run_steps.csv")))
assert doc["steps"] == len(steps) and doc["phases"]["all"]["steps"] == len(steps)
for r in rows:
    n = int(r["output_tokens"])
    if n > 1:
        e2e, ttft, tpot = float(r["e2el_ms"]), float(r["ttft_ms"]), float(r["tpot_ms"])
        assert abs(e2e - (ttft + tpot * (n - 1))) < 1e-3, r
tokens = [json.loads(line) for line in open(f"{out}/run.tokens.jsonl")]
assert [t["id"] for t in tokens] == [int(r["id"]) for r in rows], "tokens file: ids"
for t, r in zip(tokens, rows):
    assert len(t["output"]) == int(r["output_tokens"]), (t, r)
    assert t["input_tokens"] == int(r["input_tokens"]), (t, r)
    assert all(isinstance(x, int) and x >= 0 for x in t["output"]), t
    # greedy: each position's best candidate is the token produced; candidates best first
    assert len(t["top"]) == len(t["output"]), t
    for token, top in zip(t["output"], t["top"]):
        assert len(top) == 5 and top[0][0] == token, (token, top)
        assert all(top[j][1] >= top[j + 1][1] for j in range(4)), top
mean_e2e = sum(float(r["e2el_ms"]) for r in rows) / len(rows)
assert abs(mean_e2e - doc["mean_e2el_ms"]) < 1e-3 * max(1.0, mean_e2e), (mean_e2e, doc["mean_e2el_ms"])
print("bench JSON complete and consistent:", doc["completed"], "requests")
PY
