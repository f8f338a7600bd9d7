#!/usr/bin/env python3
"""tools/gpu_check_table.py OUT_DIR — the table tools/gpu-check.sh prints last, from the files it
wrote into OUT_DIR: probe.json (`hwinfer probe --json`), conformance-<backend>.txt (the suite's
output), bench.json (the Google Benchmark JSON of each run, keyed gemv-<backend> for
BM_GemvLlama2_7b and prefill-<gemm> for BM_PrefillTinyLlama / BM_Matmul with the cuda plugin
option gemm=builtin | cublas; older runs wrote gemv-<backend>.json instead) and sweep-<type>.json
(`hwinfer sweep --json`; sweep-f16-nographs.json: batch 1 with decode graphs off). Prints Markdown: conformance counts; each GEMV's weight GB/s and its share
of the device's measured copy bandwidth (issue 6's targets: F16 >= 90 %, Q4_0 >= 80 %); each
prefill GEMM's TFLOP/s with the built-in kernel and with cuBLAS; and per sweep point output tok/s,
TTFT, TPOT and decode MBU against the spec peak (target: batch-1 f16 >= 80 %). A file that is
missing or unreadable becomes a line saying so; never raises."""
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


def bench_run(out, name):
    """The Google Benchmark JSON of run |name| from bench.json (else the older <name>.json)."""
    path = os.path.join(out, "bench.json")
    if os.path.exists(path):
        data = (load_json(path) or {}).get(name) or {}
        if "error" in data:
            print(f"- {name}: not available ({data['error']})")
            return None
        return data
    return load_json(os.path.join(out, f"{name}.json"))


def medians(data):
    """{run name: benchmark} of the median aggregates (or of plain runs without aggregates)."""
    return {b.get("run_name", b.get("name", "")): b for b in (data or {}).get("benchmarks", [])
            if b.get("aggregate_name") in (None, "median")}


def prefill(out):
    print("\n| prefill GEMM (cuda) | built-in TFLOP/s | cuBLAS TFLOP/s | speed-up |\n|---|---|---|---|")
    builtin = medians(bench_run(out, "prefill-builtin"))
    cublas = medians(bench_run(out, "prefill-cublas"))
    for name, b in builtin.items():
        c = cublas.get(name, {})
        m = re.search(r"dtype:(\d+)(/m:\d+/n:\d+/k:\d+)?", name)
        label = re.sub(r"/manual_time$", "", name)
        if m:
            label = label.replace(f"dtype:{m.group(1)}", DTYPES.get(m.group(1), m.group(1)))
        rate_b, rate_c = b.get("FLOP/s"), c.get("FLOP/s")
        speed = f"{rate_c / rate_b:.2f}x" if rate_b and rate_c else "-"
        text_b = f"{rate_b / 1e12:.1f}" if rate_b else b.get("error_message", "-")
        text_c = f"{rate_c / 1e12:.1f}" if rate_c else c.get("error_message", "-")
        print(f"| {label} | {text_b} | {text_c} | {speed} |")


def gemv(out, copy):
    print("\n| GEMV (m = 1) | backend | n x k | GB/s | % of copy | target |\n|---|---|---|---|---|---|")
    for backend in ("cuda", "vulkan"):
        data = bench_run(out, f"gemv-{backend}")
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
    for weight_type, label in (("f16", "f16"), ("q4_0", "q4_0"),
                               ("f16-nographs", "f16, no decode graphs")):
        data = load_json(os.path.join(out, f"sweep-{weight_type}.json"))
        if not data:
            continue
        hardware = data.get("config", {}).get("hardware", {})
        above = []
        for point in data.get("points", []):
            mbu = point.get("phases", {}).get("decode", {}).get("mbu_spec", 0.0)
            print(f"| {label} | {point.get('batch')} | "
                  f"{point.get('output_throughput', 0):.0f} | "
                  f"{point.get('median_ttft_ms', 0):.1f} | {point.get('median_tpot_ms', 0):.2f} | "
                  f"{mbu:.1%} |")
            if mbu > 1:
                above.append(f"decode MBU {mbu:.0%} at batch {point.get('batch')}")
        if above:  # as hwinfer's UtilisationWarnings words it: the peak, and why it can be beaten
            peak = hardware.get("peak_bandwidth_bytes_per_s", 0) / 1e9
            source = hardware.get("spec_source", "")
            verb = "exceeds" if len(above) == 1 else "exceed"
            print(f"\nwarning: {label}: {', '.join(above)} {verb} 100% of the spec "
                  f"bandwidth {peak:.1f} GB/s ({source}): bytes are counted as if read from "
                  "memory, so a working set served from the caches reads faster than memory; or "
                  "the declared peak is too low")


def main():
    if len(sys.argv) != 2:
        print("usage: gpu_check_table.py OUT_DIR", file=sys.stderr)
        return 2
    out = sys.argv[1]
    print("## gpu-check summary")
    conformance(out)
    gemv(out, copy_bandwidths(out))
    prefill(out)
    sweeps(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
