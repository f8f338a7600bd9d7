#!/usr/bin/env bash
# tests/cli/bench_dataset.sh HWINFER SOURCE_DIR OUT_DIR — `hwinfer bench` with prompt datasets on
# the text model (CPU backend), checked against `hwinfer tokenize` run on the dataset files here:
#   1. the ShareGPT sample (config keys dataset, shuffle: false, save_texts): input_lens are the
#      tokenized first human turns, output_lens the answers' token counts, of the conversations
#      that pass the documented rules (a human turn followed by an answer; vLLM's length filter;
#      prompt + answer within the model's 512 tokens); generated_texts match `hwinfer detokenize`
#      of the --tokens ids;
#   2. the JSONL sample with --dataset, --disable-shuffle, --save-texts and --num-prompts past its
#      size: its output_tokens else the workload's output (128), the prompts repeated in order,
#      JSONL lines in the tokens file, a text per request.
set -euo pipefail
hw="$1"; src="$2"; out="$3"
rm -rf "$out"; mkdir -p "$out"
data="$src/tests/cli/data"
"$hw" bench --config "$data/bench-text-sharegpt.yaml" --no-progress --no-probe \
  --json "$out/sharegpt.json" --tokens "$out/sharegpt.tokens.jsonl" >"$out/sharegpt.stdout" \
  2>"$out/sharegpt.stderr"
grep -q "dataset sharegpt:.*sharegpt-sample.json: 11 requests from 11 prompts. skipped 2 without a human turn followed by an answer, 2 by vLLM's length filter, 1 past the model's context (512 tokens)" \
  "$out/sharegpt.stderr"
"$hw" bench --config "$data/bench-text.yaml" --no-progress --no-probe \
  --dataset "jsonl:$src/tests/data/datasets/custom-sample.jsonl" --disable-shuffle \
  --num-prompts 8 --save-texts --json "$out/jsonl.json" --tokens "$out/jsonl.tokens.jsonl" >"$out/jsonl.stdout"
python3 - "$hw" "$src" "$out" <<'PY'
import json, subprocess, sys
hw, src, out = sys.argv[1:4]
model = f"{src}/tests/data/text/tiny-llama-spm-text-q8_0.gguf"
CONTEXT = 512

def tokens(text, bos):
    args = [hw, "tokenize", "-m", model, "--ids"] + ([] if bos else ["--no-bos"]) + ["--", text]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)

def detokenize(ids):
    args = [hw, "detokenize", "-m", model, ",".join(map(str, ids))] if ids else None
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout[:-1] if ids else ""

# 1. ShareGPT: the expected requests, computed here from the rules.
expected_in, expected_out = [], []
for conversation in json.load(open(f"{src}/tests/data/datasets/sharegpt-sample.json")):
    turns = conversation.get("conversations", [])
    humans = [i for i, t in enumerate(turns) if t["from"] in ("human", "user")]
    if not humans or humans[0] + 1 >= len(turns):
        continue
    answer = turns[humans[0] + 1]
    if answer["from"] in ("human", "user", "system"):
        continue
    n_in = len(tokens(turns[humans[0]]["value"], True))
    n_out = len(tokens(answer["value"], False))
    if n_in < 4 or n_out < 4 or n_in > 1024 or n_in + n_out > 2048 or n_in + n_out > CONTEXT:
        continue
    expected_in.append(n_in)
    expected_out.append(n_out)
doc = json.load(open(f"{out}/sharegpt.json"))
assert doc["input_lens"] == expected_in, (doc["input_lens"], expected_in)
assert doc["output_lens"] == expected_out, (doc["output_lens"], expected_out)
assert doc["completed"] == len(expected_in) == 11, doc["completed"]
assert doc["total_input_tokens"] == sum(expected_in)
stats = doc["workload"]["dataset_stats"]
assert (stats["records"], stats["skipped_no_exchange"], stats["skipped_length"],
        stats["skipped_context"], stats["used"]) == (16, 2, 2, 1, 11), stats
texts = doc["generated_texts"]
outputs = [json.loads(line)["output"] for line in open(f"{out}/sharegpt.tokens.jsonl")]
assert len(texts) == len(outputs) == 11
compared = 0
for text, ids in zip(texts, outputs):
    assert isinstance(text, str) and len(ids) > 0
    if "\ufffd" in text or any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in text):
        continue  # detokenize prints these escaped
    # detokenize drops the space the first piece starts with (a prompt's); the stream keeps it
    assert detokenize(ids) == (text[1:] if text.startswith(" ") else text), (text, ids)
    compared += 1
assert compared >= 5, f"only {compared} of 11 texts could be compared"

# 2. JSONL: output_tokens else the workload's 128; 8 requests repeat the 6 prompts in order.
lines = [(n, json.loads(l)) for n, l in enumerate(open(f"{src}/tests/data/datasets/custom-sample.jsonl"), 1)
         if l.strip()]
doc = json.load(open(f"{out}/jsonl.json"))
order = [lines[i % len(lines)] for i in range(8)]
assert doc["input_lens"] == [len(tokens(l["prompt"], True)) for _, l in order], doc["input_lens"]
assert doc["output_lens"] == [l.get("output_tokens", 128) for _, l in order], doc["output_lens"]
assert len(doc["generated_texts"]) == 8 and all(isinstance(t, str) for t in doc["generated_texts"])
assert [json.loads(t)["line"] for t in open(f"{out}/jsonl.tokens.jsonl")] == [n for n, _ in order]
print("bench with datasets: input_lens and output_lens as tokenized here;", compared, "texts compared")
PY
