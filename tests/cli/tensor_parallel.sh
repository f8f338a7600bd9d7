#!/usr/bin/env bash
# tests/cli/tensor_parallel.sh HWINFER MPIRUN GGUF_DIR [GPUEMU_DIR] — tensor parallelism over MPI
# on CPU ranks (docs/multi-device.md section 3):
#   - `mpirun -np 2 hwinfer generate --tp 2` prints exactly the one-process tokens on F16 and Q8_0,
#     and -np 4 on F16 (4 ranks over 2 KV heads), with the all-reduces on the devices (the CPU
#     plugin's shared-memory communicator: the default) and through host memory (MPI);
#   - `bench-model --tp 2 --json` reports both ranks (bytes, device and all-reduce time, MBU);
#   - `bench --tp 2` gives every request the one-process tokens and reports both ranks; `sweep
#     --tp 2` runs a point per batch size over the same ranks;
#   - `eval --tp 2` scores a text as one process does (KL against its reference ~0);
#   - `serve --tp 2` answers a completion with the one-process text and exits 0 on SIGTERM;
#   - rank 1 killed mid-run: mpirun ends every rank, non-zero, naming rank 1, within 30 s;
#   - rank 1 stopped (hung) mid-run: rank 0 reports it after --tp-timeout and the run ends,
#     non-zero, within 30 s (device and host all-reduces);
#   - with GPUEMU_DIR (the gpuemu plugin's folder): the cuda plugin's NCCL code on the emulator's
#     stand-in: `--device gpuemu:0 --tp 2` gives the one-process tokens with the all-reduces on
#     the devices, and a stopped rank ends the run within the deadline (the communicator aborted);
#   - refused with a message naming the cause: --tp 2 without mpirun, 3 ranks for 8 heads, a
#     device rank 1 cannot open, a simulated device (no interconnect model yet), device
#     all-reduces on a plugin without them (vulkan).
set -euo pipefail
hw="$1"; mpirun="$2"; gguf="$3"; gpuemu_dir="${4:-}"
# CI runs as root, which OpenMPI refuses unless told; waiting ranks yield their core (2-core runner).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
mpi=("$mpirun" --oversubscribe)
prompt=1,450,73,310,344,338
fail() { echo "tensor_parallel: $*"; exit 1; }

# bench and sweep --tp 2: every request the one-process run's tokens; the device's JSON has both
# ranks; a sweep runs one executor per point over the same ranks.
config="$(dirname "$0")/data/bench-tiny.yaml"
bench=("$hw" bench --config "$config" --device cpu:0 --no-progress --no-probe)
tokens_dir="$(mktemp -d)"
"${bench[@]}" --tokens "$tokens_dir/one.jsonl" >/dev/null
"${mpi[@]}" -np 2 "${bench[@]}" --tp 2 --tokens "$tokens_dir/tp.jsonl" \
  --json "$tokens_dir/tp.json" >/dev/null
python3 "$(dirname "$0")/../../tools/compare_tokens.py" "$tokens_dir/one.jsonl" \
  "$tokens_dir/tp.jsonl" --exact --min-identical 1
python3 - "$tokens_dir/tp.json" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
assert result["scheduler"]["tensor_parallel"] == 2, result["scheduler"]
tp = result["devices"][0]["tensor_parallel"]
assert tp["ranks"] == 2 and [r["rank"] for r in tp["per_rank"]] == [0, 1], tp
assert tp["all_reduces"] == "device", tp  # auto: the CPU plugin's shared-memory communicator
for r in tp["per_rank"]:
    assert r["bytes"] > 0 and r["device_seconds"] > 0 and 0 <= r["comm_seconds"] <= r["device_seconds"] * 1.5, r
# The pooled bytes are both ranks'.
steps_bytes = sum(r["bytes"] for r in tp["per_rank"])
assert result["failed"] == 0, result["failed"]
print(f"tensor_parallel: bench --tp 2: {result['completed']} requests, {steps_bytes:.3g} bytes over both ranks")
PY
rm -rf "$tokens_dir"
"${mpi[@]}" -np 2 "$hw" sweep --config "$config" --device cpu:0 --no-progress --no-probe \
  --batch 1,2 --tp 2 >/dev/null || fail "sweep --tp 2 failed"
echo "tensor_parallel: sweep --tp 2 ran both points"

# eval --tp 2 against the one-process run's reference: the same distributions (the all-reduces
# only reorder sums).
eval_dir="$(mktemp -d)"
/usr/bin/python3 -c "print(','.join(str(i * 37 % 509 + 3) for i in range(256)))" >"$eval_dir/ids.txt"
evaluate=("$hw" eval -m "$gguf/tiny-llama-f16.gguf" --tokens "$eval_dir/ids.txt" --ctx 64
          --device cpu:0 --no-progress --json)
"${evaluate[@]}" --save-logits "$eval_dir/one.bin" >/dev/null
"${mpi[@]}" -np 2 "${evaluate[@]}" --tp 2 --reference "$eval_dir/one.bin" >"$eval_dir/tp.json"
/usr/bin/python3 - "$eval_dir/tp.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert "x TP 2" in r["run"], r["run"]
ref = r["reference"]
assert r["windows"] == 4 and ref["kl_max"] < 1e-5 and ref["top1_agreement"] >= 0.95, r
print(f"tensor_parallel: eval --tp 2: KL max {ref['kl_max']:.2e} against one process")
PY
rm -rf "$eval_dir"

# rank_pid RANK PATTERN: the pid of that rank (from its environment, set by mpirun) among the
# processes whose command line matches PATTERN.
rank_pid() {
  for pid in $(pgrep -f "$2" || true); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
      echo "$pid"; return 0
    fi
  done
  return 1
}

# 4 ranks share the model's 2 KV heads (a copy each). Under the sanitizers (HWINFER_SANITIZED=1),
# one run per all-reduce path.
runs=("tiny-llama-f16.gguf 2 auto" "tiny-llama-f16.gguf 2 host" "tiny-llama-q8_0.gguf 2 auto"
      "tiny-llama-f16.gguf 4 device" "tiny-llama-f16.gguf 4 host")
[ "${HWINFER_SANITIZED:-0}" = 1 ] && runs=("tiny-llama-f16.gguf 2 device" "tiny-llama-f16.gguf 4 host")
for run in "${runs[@]}"; do
  read -r model ranks collectives <<<"$run"
  one="$("$hw" generate -m "$gguf/$model" --prompt-tokens "$prompt" -n 24 --device cpu:0)"
  tp="$("${mpi[@]}" -np "$ranks" "$hw" generate -m "$gguf/$model" --prompt-tokens "$prompt" \
    -n 24 --device cpu:0 --tp "$ranks" --tp-collectives "$collectives")"
  [ "$tp" == "$one" ] || fail "$model: --tp $ranks ($collectives) gave '$tp'; one process gave '$one'"
  echo "tensor_parallel: $model: --tp $ranks --tp-collectives $collectives gives the one-process tokens: $tp"
done

json="$("${mpi[@]}" -np 2 "$hw" bench-model -m "$gguf/tiny-llama-f16.gguf" -p 32 -n 16 -r 2 \
  --device cpu:0 --tp 2 --json)"
python3 - "$json" <<'PY'
import json, sys
result = json.loads(sys.argv[1])
assert result["tensor_parallel"] == 2, result
ranks = result["ranks"]
assert [r["rank"] for r in ranks] == [0, 1], ranks
assert result["all_reduces"] == "device", result["all_reduces"]
for r in ranks:
    assert r["decode_bytes_per_step"] > 0 and r["decode_step_ms"] > 0, r
    assert 0 <= r["decode_comm_ms_per_step"] <= r["decode_step_ms"] * 1.5, r
# Rank 0 also reads the output projection; each rank half of every layer.
assert ranks[0]["decode_bytes_per_step"] > ranks[1]["decode_bytes_per_step"], ranks
print("tensor_parallel: bench-model --tp 2 reports", [round(r["decode_bytes_per_step"]) for r in ranks],
      "bytes per decode step")
PY

# fault_case SIGNAL COLLECTIVES DEVICE [ENV...]: rank 1 of a 2-rank bench-model on DEVICE gets
# SIGNAL mid-run; the run must end, non-zero, within 30 s, naming rank 1 (killed) or reporting the
# hung rank (stopped). ENV: variables for the ranks (the gpuemu plugin's folder).
fault_case() {
  local signal="$1" collectives="$2" device="$3" log job pid="" status=0 start took
  shift 3
  log="$(mktemp)"
  env "$@" "${mpi[@]}" -np 2 "$hw" bench-model -m "$gguf/tiny-llama-f16.gguf" -p 64 -n 256 \
    -r 1000 --device "$device" --tp 2 --tp-timeout 2 --tp-collectives "$collectives" \
    >"$log" 2>&1 &
  job=$!
  for _ in $(seq 100); do pid="$(rank_pid 1 "bench-model -m $gguf")" && break; sleep 0.1; done
  [ -n "$pid" ] || fail "rank 1 never started"
  sleep 1
  kill -"$signal" "$pid"
  start=$SECONDS
  for _ in $(seq 300); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
  kill -9 $job 2>/dev/null || true  # still running after 30 s: the check below fails
  wait $job || status=$?
  kill -9 "$pid" 2>/dev/null || true
  took=$((SECONDS - start))
  [ "$status" -ne 0 ] || fail "rank 1 got SIG$signal and mpirun exited 0 ($collectives, $device)"
  [ "$took" -lt 30 ] ||
    fail "rank 1 got SIG$signal; the run did not end within 30 s ($collectives, $device)"
  if [ "$signal" == KILL ]; then
    grep -q "rank 1 .*exited on signal 9" "$log" || { cat "$log"; fail "no message naming rank 1"; }
  else
    # Rank 0 waits in an MPI call (host) or, on the devices, where its step's all-reduces wait.
    grep -Eq "rank 0 of 2: (no answer from the other ranks|the device all-reduces of step [0-9]+ on $device did not finish) within 2 s" "$log" ||
      { cat "$log"; fail "rank 0 did not report the hung rank ($collectives, $device)"; }
  fi
  echo "tensor_parallel: rank 1 got SIG$signal ($collectives all-reduces on $device): the run ended (exit $status) after $took s"
  rm -f "$log"
}
for fault in "KILL device" "STOP device" "KILL host" "STOP host"; do
  read -r signal collectives <<<"$fault"
  fault_case "$signal" "$collectives" cpu:0
done

# The cuda plugin's collective code (vendor_comm.cpp) on the emulator's NCCL stand-in: the
# one-process tokens, the all-reduces on the devices under auto (its info line) and under device,
# and a hung rank ending the run (the watchdog aborts the communicator, which ends the waiting
# all-reduce). Under the sanitizers only the first (the emulator is slow there; the abort is
# checked by the conformance suite's collective tests on gpuemu).
if [ -n "$gpuemu_dir" ]; then
  emu=(env "HWINFER_PLUGIN_PATH=$gpuemu_dir")
  run=(generate -m "$gguf/tiny-llama-f16.gguf" --prompt-tokens "$prompt" -n 24 --device gpuemu:0)
  one="$("${emu[@]}" "$hw" "${run[@]}")"
  log="$(mktemp)"
  tp="$("${emu[@]}" "${mpi[@]}" -np 2 "$hw" --log-level info "${run[@]}" --tp 2 2>"$log")"
  [ "$tp" == "$one" ] || fail "gpuemu: --tp 2 gave '$tp'; one process gave '$one'"
  grep -q "all-reduces on the devices (gpuemu communicator of 2 ranks)" "$log" ||
    { cat "$log"; fail "gpuemu: --tp 2 did not choose the devices' all-reduces (auto)"; }
  rm -f "$log"
  echo "tensor_parallel: gpuemu: --tp 2 with NCCL-style device all-reduces gives the one-process tokens: $tp"
  if [ "${HWINFER_SANITIZED:-0}" != 1 ]; then
    tp="$("${emu[@]}" "${mpi[@]}" -np 2 "$hw" "${run[@]}" --tp 2 --tp-collectives device)"
    [ "$tp" == "$one" ] || fail "gpuemu: --tp 2 (device) gave '$tp'; one process gave '$one'"
    fault_case STOP device gpuemu:0 "HWINFER_PLUGIN_PATH=$gpuemu_dir"
  fi
fi

# serve --tp 2: the one-process text over HTTP (a synthesised model with the built-in vocabulary;
# seed 1 gives a varied greedy text), then SIGTERM to rank 0 drains it and every rank exits 0
# (mpirun's own SIGTERM would end every rank at once).
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$hw" model synth --shape small --type f16 --seed 1 -o "$work/small.gguf" >/dev/null
text="$("$hw" generate -m "$work/small.gguf" --prompt "Once upon a time" -n 16 --ignore-eos \
  --device cpu:0)"
"${mpi[@]}" -np 2 "$hw" serve -m "$work/small.gguf" --port 0 --device cpu:0 --no-probe --tp 2 \
  >"$work/serve.log" 2>&1 &
server=$!
port=""
for _ in $(seq 300); do
  port="$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.log" | grep -o '[0-9]*$' || true)"
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { cat "$work/serve.log"; kill -9 $server; fail "serve --tp 2 did not start"; }
answer="$(curl -s "http://127.0.0.1:$port/v1/completions" -H 'Content-Type: application/json' \
  -d '{"prompt": "Once upon a time", "max_tokens": 16, "temperature": 0, "ignore_eos": true}')"
served="$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["choices"][0]["text"])' \
  "$answer")"
rank0="$(rank_pid 0 "hwinfer serve -m $work/small.gguf")" || fail "no rank 0 of serve --tp 2"
kill -TERM "$rank0"  # rank 0 drains; the other ranks end when it does
status=0
wait $server || status=$?
[ "$served" == "$text" ] || fail "serve --tp 2 answered '$served'; generate gave '$text'"
[ "$status" -eq 0 ] || { cat "$work/serve.log"; fail "serve --tp 2 exited $status after SIGTERM"; }
echo "tensor_parallel: serve --tp 2 answers the one-process text and exits 0 on SIGTERM"

expect_error() {  # expect_error PATTERN COMMAND...: non-zero exit and PATTERN in the output
  local pattern="$1" out status=0; shift
  out="$("$@" 2>&1)" || status=$?
  [ "$status" -ne 0 ] || fail "'$*' exited 0"
  grep -q -- "$pattern" <<<"$out" || fail "'$*' did not say '$pattern': $out"
}
f16="$gguf/tiny-llama-f16.gguf"
expect_error "--tp 2 needs 2 MPI processes" \
  "$hw" generate -m "$f16" --prompt-tokens 1,2 -n 2 --device cpu:0 --tp 2
expect_error "tensor parallelism of 3 does not fit" \
  "${mpi[@]}" -np 3 "$hw" generate -m "$f16" --prompt-tokens 1,2 -n 2 --device cpu:0 --tp 3
expect_error "rank 1: no device matches 'cpu:7'" \
  "${mpi[@]}" -np 2 "$hw" generate -m "$f16" --prompt-tokens 1,2 -n 2 --devices cpu:0,cpu:7 --tp 2
expect_error "tensor parallelism on the simulated device sim:0" \
  "${mpi[@]}" -np 2 "$hw" bench --config "$(dirname "$0")/data/bench-sim-tiny.yaml" --no-progress \
  --tp 2
expect_error "--tp-collectives device: rank 0: vulkan:0: plugin 'vulkan' has no device collectives" \
  "${mpi[@]}" -np 2 "$hw" generate -m "$f16" --prompt-tokens 1,2 -n 2 --device vulkan:0 --tp 2 \
  --tp-collectives device
echo "tensor_parallel: refusals name their cause"
