#!/usr/bin/env bash
# tests/cli/sim_tensor_parallel.sh HWINFER CONFIG HARDWARE_DIR — `hwinfer bench --tp N` on the
# simulator, without mpirun (docs/multi-device.md section 4): N ranks as threads on sim:0..N-1,
# each all-reduce priced by the hardware file's interconnect. Checks, on the tiny F16 model
# (dim 256, 2 layers) and the H100 file (450 GB/s, 1.5 us per hop):
#   - the device JSON reports both ranks, each with the modelled all-reduce time: per step, 2
#     layers x 2 all-reduces, each 2 (N-1)/N x rows x 256 x 4 bytes / 450e9 + 2 (N-1) x 1.5e-6 s;
#   - each rank reads less than the one-device run per step, the system (both ranks) more;
#   - two runs give the same figures (a virtual clock);
#   - refused naming the cause: a hardware file without `interconnect:`, a real device without
#     mpirun, a degree that does not divide the heads.
set -euo pipefail
hw="$1"; config="$2"; hardware="$3"
fail() { echo "sim_tensor_parallel: $*"; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
run() { "$hw" bench --config "$config" --hardware "$hardware/h100-sxm.yaml" --no-progress "$@"; }
run --json "$work/one.json" >/dev/null
run --tp 2 --json "$work/tp2.json" >/dev/null
run --tp 2 --json "$work/tp2-again.json" >/dev/null
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
one, tp, again = (json.load(open(f"{work}/{n}.json")) for n in ("one", "tp2", "tp2-again"))
assert tp["scheduler"]["tensor_parallel"] == 2 and one["scheduler"]["tensor_parallel"] == 1
ranks = tp["devices"][0]["tensor_parallel"]["per_rank"]
assert [r["rank"] for r in ranks] == [0, 1], ranks
# The modelled all-reduce time of the whole run: 4 all-reduces per step, of every token row the
# step ran (each prompt token once, each output token but the last once) x 256 x 4 bytes.
rows = tp["total_input_tokens"] + tp["total_output_tokens"] - tp["completed"]
expected = 4 * (tp["steps"] * 2 * 1.5e-6 + rows * 256 * 4 / 450e9)
for r in ranks:
    assert abs(r["comm_seconds"] - expected) < 1e-9 * max(1, expected), (r, expected)
    assert r["device_seconds"] > r["comm_seconds"] > 0, r
    assert 0 < r["mbu_spec"] < 1, r  # against one H100's 3350 GB/s
one_bytes = one["phases"]["decode"]["bytes"]
assert all(r["bytes"] < one["phases"]["decode"]["bytes"] + one["phases"]["prefill"]["bytes"]
           for r in ranks), ranks
assert tp["phases"]["decode"]["bytes"] > one_bytes  # both ranks, the embedding and norms twice
assert tp["median_tpot_ms"] == again["median_tpot_ms"] and ranks == again["devices"][0]["tensor_parallel"]["per_rank"]
print(f"sim_tensor_parallel: TPOT {one['median_tpot_ms']:.3f} ms at TP 1, {tp['median_tpot_ms']:.3f} "
      f"at TP 2 ({ranks[0]['comm_ms_per_step']:.4f} ms of all-reduces per step)")
PY

expect_error() {  # expect_error PATTERN COMMAND...: non-zero exit and PATTERN in the output
  local pattern="$1" out status=0; shift
  out="$("$@" 2>&1)" || status=$?
  [ "$status" -ne 0 ] || fail "'$*' exited 0"
  grep -q -- "$pattern" <<<"$out" || fail "'$*' did not say '$pattern': $out"
}
printf 'name: No link\npeak_bandwidth_gb_per_s: 1000\npeak_tflops: {f16: 100}\n' >"$work/nolink.yaml"
expect_error "prices its all-reduces by a hardware file's .interconnect:. section; $work/nolink.yaml has none" \
  "$hw" bench --config "$config" --hardware "$work/nolink.yaml" --no-progress --tp 2
expect_error "--tp 2 on the real device cpu:0 runs one rank per process: start it with mpirun -np 2" \
  "$hw" bench --config "$(dirname "$config")/bench-tiny.yaml" --no-progress --tp 2
expect_error "tensor parallelism of 3 does not fit" \
  "$hw" bench --config "$config" --hardware "$hardware/h100-sxm.yaml" --no-progress --tp 3
echo "sim_tensor_parallel: refusals name their cause"
