#!/usr/bin/env bash
# examples/eval-quality.sh HWINFER MODEL_DIR OUT_DIR [WINDOWS] [DEVICE...] — the quality tables
# of examples/README.md section 6 (`hwinfer eval`, docs/evaluation.md):
#   1. MODEL_DIR/tinyllama-f16.gguf and its quantizations MODEL_DIR/tinyllama-TYPE.gguf (written by
#      `hwinfer model quantize`), each with f16 and i8 KV, against the F16 / f16-KV run on cpu:0,
#      scored on tests/data/text/eval-sample.txt (ctx 512, the first WINDOWS windows, default 2);
#   2. the llama.cpp-quantized files of tests/data/gguf-quant-mixes against their F32 original
#      tests/data/gguf/tiny-llama-f32.gguf, on seeded random token ids (the files have no
#      tokenizer), ctx 128, 8 windows; then the F32, Q4_K_M and Q4_0 files on each extra DEVICE
#      (e.g. vulkan:0: lavapipe takes minutes a window of the TinyLlama shape) against the same
#      CPU reference.
# Prints both tables as Markdown; every run's JSON stays in OUT_DIR.
set -euo pipefail
hw="$1"; models="$2"; out="$3"; windows="${4:-2}"
shift 3; [ $# -gt 0 ] && shift
src="$(cd "$(dirname "$0")/.." && pwd)"
text="$src/tests/data/text/eval-sample.txt"
mkdir -p "$out"
eval_run() {  # NAME ARGS...: one eval, its JSON in OUT_DIR/NAME.json
  local name="$1"; shift
  echo "eval-quality: $name" >&2
  "$hw" eval --no-progress --json "$@" >"$out/$name.json"
}

big=(--text "$text" --ctx 512 --max-windows "$windows")
eval_run tinyllama-f16-kv-f16-cpu -m "$models/tinyllama-f16.gguf" "${big[@]}" \
  --save-logits "$out/tinyllama-ref.bin"
for type in f16 bf16 q8_0 q6_k q5_k_m q4_k_m q4_0 q3_k_m q2_k; do
  for kv in f16 i8; do
    [ "$type/$kv" = f16/f16 ] && continue
    eval_run "tinyllama-$type-kv-$kv-cpu" -m "$models/tinyllama-$type.gguf" "${big[@]}" \
      --kv-dtype "$kv" --reference "$out/tinyllama-ref.bin"
  done
done

small=(--tokens "$out/random-ids.txt" --ctx 128)
/usr/bin/python3 -c "
import random
random.seed(22)
print(','.join(str(random.randrange(3, 512)) for _ in range(128 * 8)))" >"$out/random-ids.txt"
eval_run mix-f32 -m "$src/tests/data/gguf/tiny-llama-f32.gguf" "${small[@]}" \
  --save-logits "$out/mix-ref.bin"
for file in "$src"/tests/data/gguf-quant-mixes/tiny-llama-*-mix.gguf; do
  name="$(basename "$file" .gguf)"
  eval_run "mix-${name#tiny-llama-}" -m "$file" "${small[@]}" --reference "$out/mix-ref.bin"
done
mixes="$src/tests/data/gguf-quant-mixes"
for device in "$@"; do
  for file in "$src/tests/data/gguf/tiny-llama-f32.gguf" "$mixes/tiny-llama-q4_k_m-mix.gguf" \
              "$mixes/tiny-llama-q4_0-mix.gguf"; do
    name="$(basename "$file" .gguf)"
    eval_run "mix-${name#tiny-llama-}-${device/:/}" -m "$file" "${small[@]}" --device "$device" \
      --reference "$out/mix-ref.bin"
  done
done

/usr/bin/python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
def row(path):
    r = json.load(open(path))
    ref = r.get("reference")
    name = os.path.basename(path)[:-5]
    cells = [name, f"{r['perplexity']:.1f} ± {r['perplexity_error']:.1f}"]
    if ref is None:
        cells += ["(reference)", "", "", "", ""]
    else:
        cells += [f"{ref['perplexity_ratio']:.5f}", f"{ref['kl_mean']:.3g}", f"{ref['kl_p99']:.3g}",
                  f"{ref['kl_max']:.3g}", f"{100 * ref['top1_agreement']:.1f}%"]
    cells.append(f"{r['tokens_per_second']:.1f}")
    return "| " + " | ".join(cells) + " |"
head = ("| run | PPL ± s.e. | PPL ratio | mean KL | p99 KL | max KL | top-1 agree | tok/s |\n"
        "|---|---|---|---|---|---|---|---|")
for prefix in ("tinyllama", "mix"):
    print(head)
    # In the order they ran: the reference first.
    paths = sorted(glob.glob(os.path.join(out, prefix + "-*.json")), key=os.path.getmtime)
    for path in paths:
        print(row(path))
    print()
PY
