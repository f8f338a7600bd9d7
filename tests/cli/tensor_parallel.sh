#!/usr/bin/env bash
# tests/cli/tensor_parallel.sh HWINFER MPIRUN GGUF_DIR — tensor parallelism over MPI on CPU ranks
# (docs/multi-device.md section 3):
#   - `mpirun -np 2 hwinfer generate --tp 2` prints exactly the one-process tokens on F16 and Q8_0;
#   - `bench-model --tp 2 --json` reports both ranks (bytes, device and all-reduce time, MBU);
#   - rank 1 killed mid-run: mpirun ends every rank, non-zero, naming rank 1, within 30 s;
#   - rank 1 stopped (hung) mid-run: rank 0 reports it after --tp-timeout and the run ends,
#     non-zero, within 30 s;
#   - refused with a message naming the cause: --tp 2 without mpirun, 4 ranks for 2 KV heads, a
#     device rank 1 cannot open.
set -euo pipefail
hw="$1"; mpirun="$2"; gguf="$3"
# CI runs as root, which OpenMPI refuses unless told; waiting ranks yield their core (2-core runner).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
mpi=("$mpirun" --oversubscribe)
prompt=1,450,73,310,344,338
fail() { echo "tensor_parallel: $*"; exit 1; }

for model in tiny-llama-f16.gguf tiny-llama-q8_0.gguf; do
  one="$("$hw" generate -m "$gguf/$model" --prompt-tokens "$prompt" -n 24 --device cpu:0)"
  tp="$("${mpi[@]}" -np 2 "$hw" generate -m "$gguf/$model" --prompt-tokens "$prompt" -n 24 \
    --device cpu:0 --tp 2)"
  [ "$tp" == "$one" ] || fail "$model: --tp 2 gave '$tp'; one process gave '$one'"
  echo "tensor_parallel: $model: --tp 2 gives the one-process tokens: $tp"
done

json="$("${mpi[@]}" -np 2 "$hw" bench-model -m "$gguf/tiny-llama-f16.gguf" -p 32 -n 16 -r 2 \
  --device cpu:0 --tp 2 --json)"
python3 - "$json" <<'PY'
import json, sys
result = json.loads(sys.argv[1])
assert result["tensor_parallel"] == 2, result
ranks = result["ranks"]
assert [r["rank"] for r in ranks] == [0, 1], ranks
for r in ranks:
    assert r["decode_bytes_per_step"] > 0 and r["decode_step_ms"] > 0, r
    assert 0 <= r["decode_comm_ms_per_step"] <= r["decode_step_ms"] * 1.5, r
# Rank 0 also reads the output projection; each rank half of every layer.
assert ranks[0]["decode_bytes_per_step"] > ranks[1]["decode_bytes_per_step"], ranks
print("tensor_parallel: bench-model --tp 2 reports", [round(r["decode_bytes_per_step"]) for r in ranks],
      "bytes per decode step")
PY

# The pid of rank $1 of the running bench-model (from its environment, set by mpirun).
rank_pid() {
  for pid in $(pgrep -f "bench-model -m $gguf" || true); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
      echo "$pid"; return 0
    fi
  done
  return 1
}
for signal in KILL STOP; do
  log="$(mktemp)"
  "${mpi[@]}" -np 2 "$hw" bench-model -m "$gguf/tiny-llama-f16.gguf" -p 64 -n 256 -r 1000 \
    --device cpu:0 --tp 2 --tp-timeout 2 >"$log" 2>&1 &
  job=$!
  pid=""
  for _ in $(seq 100); do pid="$(rank_pid 1)" && break; sleep 0.1; done
  [ -n "$pid" ] || fail "rank 1 never started"
  sleep 1
  kill -"$signal" "$pid"
  start=$SECONDS
  status=0
  ( sleep 30; kill -9 $job 2>/dev/null ) & watchdog=$!
  wait $job || status=$?
  kill $watchdog 2>/dev/null || true
  kill -9 "$pid" 2>/dev/null || true
  took=$((SECONDS - start))
  [ "$status" -ne 0 ] || fail "rank 1 got SIG$signal and mpirun exited 0"
  [ "$took" -lt 30 ] || fail "rank 1 got SIG$signal; the run did not end within 30 s"
  if [ "$signal" == KILL ]; then
    grep -q "rank 1 .*exited on signal 9" "$log" || { cat "$log"; fail "no message naming rank 1"; }
  else
    grep -q "rank 0 of 2: no answer from the other ranks within 2 s" "$log" ||
      { cat "$log"; fail "rank 0 did not report the hung rank"; }
  fi
  echo "tensor_parallel: rank 1 got SIG$signal: the run ended (exit $status) after $took s"
  rm -f "$log"
done

expect_error() {  # expect_error PATTERN COMMAND...: non-zero exit and PATTERN in the output
  local pattern="$1" out status=0; shift
  out="$("$@" 2>&1)" || status=$?
  [ "$status" -ne 0 ] || fail "'$*' exited 0"
  grep -q -- "$pattern" <<<"$out" || fail "'$*' did not say '$pattern': $out"
}
f16="$gguf/tiny-llama-f16.gguf"
expect_error "--tp 2 needs 2 MPI processes" \
  "$hw" generate -m "$f16" --prompt-tokens 1,2 -n 2 --device cpu:0 --tp 2
expect_error "tensor parallelism of 4 does not divide the 2 KV heads" \
  "${mpi[@]}" -np 4 "$hw" generate -m "$f16" --prompt-tokens 1,2 -n 2 --device cpu:0 --tp 4
expect_error "rank 1: no device matches 'cpu:7'" \
  "${mpi[@]}" -np 2 "$hw" generate -m "$f16" --prompt-tokens 1,2 -n 2 --devices cpu:0,cpu:7 --tp 2
echo "tensor_parallel: refusals name their cause"
