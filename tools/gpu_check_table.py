#!/usr/bin/env python3
"""tools/gpu_check_table.py OUT_DIR — the table tools/gpu-check.sh prints last, from the files it
wrote into OUT_DIR: probe.json (`hwinfer probe --json`), conformance-<backend>.txt (the suite's
output), gemv-<backend>.json (Google Benchmark JSON of BM_GemvLlama2_7b) and sweep-<type>.json
(`hwinfer sweep --json`). Prints Markdown: conformance counts; each GEMV's weight GB/s and its share
of the device's measured copy bandwidth (issue 6's targets: F16 >= 90 %, Q4_0 >= 80 %); and per
sweep point output tok/s, TTFT, TPOT and decode MBU against the spec peak (target: batch-1 f16
>= 80 %). A file that is missing or unreadable becomes a line saying so; never raises."""
import json
import os
import re
import sys

DTYPES = {"0": "F32", "1": "F16", "2": "Q4_0", "8": "Q8_0", "30": "BF16"}
TARGETS = {"F16": 0.90, "Q4_0": 0.80}


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"- {os.path.basename(path)}: not available ({e})")
        return None


def copy_bandwidths(out):
    """{backend: measured copy bytes/s} from probe.json."""
    probe = load_json(os.path.join(out, "probe.json")) or {}
    result = {}
    for device in probe.get("devices", []):
        copy = device.get("copy_bandwidth", {})
        if copy.get("measured"):
            result[device.get("id", "?").split(":")[0]] = copy.get("bytes_per_s", 0.0)
    return result


def conformance(out):
    print("\n| conformance | passed | failed | skipped | exit |\n|---|---|---|---|---|")
    for backend in ("cuda", "vulkan"):
        path = os.path.join(out, f"conformance-{backend}.txt")
        try:
            text = open(path).read()
        except OSError:
            print(f"| {backend} | - | - | - | missing |")
            continue

        def count(word):
            m = re.search(rf"^\[  {word} *\] (\d+) test", text, re.M)
            return m.group(1) if m else "0"

        m = re.search(r"^exit (\d+)", text, re.M)
        print(f"| {backend} | {count('PASSED')} | {count('FAILED')} | {count('SKIPPED')} | "
              f"{m.group(1) if m else '?'} |")


def gemv(out, copy):
    print("\n| GEMV (m = 1) | backend | n x k | GB/s | % of copy | target |\n|---|---|---|---|---|---|")
    for backend in ("cuda", "vulkan"):
        data = load_json(os.path.join(out, f"gemv-{backend}.json"))
        if not data:
            continue
        for b in data.get("benchmarks", []):
            if b.get("aggregate_name") not in (None, "median") or "weight_bytes/s" not in b:
                continue
            m = re.search(r"dtype:(\d+)/n:(\d+)/k:(\d+)", b.get("run_name", b.get("name", "")))
            if not m:
                continue
            dtype = DTYPES.get(m.group(1), m.group(1))
            rate = b["weight_bytes/s"]
            share = rate / copy[backend] if copy.get(backend) else None
            target = TARGETS.get(dtype)
            verdict = ""
            if target is not None and share is not None:
                verdict = f">= {target:.0%} " + ("met" if share >= target else "NOT met")
            share_text = f"{share:.1%}" if share is not None else "-"
            print(f"| {dtype} | {backend} | {m.group(2)} x {m.group(3)} | {rate / 1e9:.0f} | "
                  f"{share_text} | {verdict} |")
    for backend, rate in copy.items():
        print(f"\nmeasured copy bandwidth ({backend}): {rate / 1e9:.0f} GB/s")


def sweeps(out):
    print("\n| llama2-7b | batch | output tok/s | median TTFT ms | median TPOT ms | decode MBU "
          "(spec) |\n|---|---|---|---|---|---|")
    for weight_type in ("f16", "q4_0"):
        data = load_json(os.path.join(out, f"sweep-{weight_type}.json"))
        if not data:
            continue
        for point in data.get("points", []):
            mbu = point.get("phases", {}).get("decode", {}).get("mbu_spec", 0.0)
            print(f"| {weight_type} | {point.get('batch')} | "
                  f"{point.get('output_throughput', 0):.0f} | "
                  f"{point.get('median_ttft_ms', 0):.1f} | {point.get('median_tpot_ms', 0):.2f} | "
                  f"{mbu:.1%} |")


def main():
    if len(sys.argv) != 2:
        print("usage: gpu_check_table.py OUT_DIR", file=sys.stderr)
        return 2
    out = sys.argv[1]
    print("## gpu-check summary")
    conformance(out)
    gemv(out, copy_bandwidths(out))
    sweeps(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
