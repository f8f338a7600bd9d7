#!/usr/bin/env python3
"""tools/plot_results.py --out DIR FILE.json... — the plots of `hwinfer compare -o DIR`.

Reads bench results (`hwinfer bench --json`: vLLM's flat keys, "phases", "env", "hardware") and
sweeps (`hwinfer sweep --json`: {"config", "points"}) and writes, as PNG and SVG:
  throughput_latency  output tok/s vs median TPOT (ms), one line per sweep file (needs a sweep)
  roofline            arithmetic intensity (FLOP/byte) vs achieved FLOP/s per phase (prefill,
                      decode, mixed), with each hardware's bandwidth and compute roofs
  mbu                 decode MBU (% of the spec peak bandwidth) per hardware/device
Hardware roofs come from "hardware": {"peak_bandwidth_bytes_per_s", "peak_flops_f16" (or
"peak_flops")}; a file without them gets points but no roof. It only plots: no measuring.
Errors are one line on stderr ("plot_results.py: error: ...") and exit code 1.
"""
import argparse
import json
import os
import sys

PHASES = ("prefill", "decode", "mixed")


def fail(message):
    print(f"plot_results.py: error: {message}", file=sys.stderr)
    sys.exit(1)


def require(obj, key, path):
    if not isinstance(obj, dict) or key not in obj:
        fail(f"{path}: not a bench result or sweep: missing key '{key}'")
    return obj[key]


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        fail(f"{path}: cannot read: {e.strerror}")
    except json.JSONDecodeError as e:
        fail(f"{path}: not valid JSON: {e}")
    if not isinstance(doc, dict):
        fail(f"{path}: not a bench result or sweep: expected a JSON object")
    return doc


def label_of(path, doc):
    env = doc.get("env") or doc.get("config", {}).get("env") or {}
    hardware = doc.get("hardware") or doc.get("config", {}).get("hardware") or {}
    device = env.get("device") or doc.get("config", {}).get("device") or "?"
    name = hardware.get("name")
    stem = os.path.splitext(os.path.basename(path))[0]
    return f"{stem} ({name or device})"


def peaks_of(doc):
    hardware = doc.get("hardware") or doc.get("config", {}).get("hardware") or {}
    bandwidth = hardware.get("peak_bandwidth_bytes_per_s") or 0
    flops = hardware.get("peak_flops_f16") or hardware.get("peak_flops") or 0
    return float(bandwidth), float(flops), hardware.get("name")


def save(fig, out_dir, name):
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out_dir, f"{name}.{ext}"), dpi=120, bbox_inches="tight")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for the plots")
    parser.add_argument("files", nargs="+", help="bench result or sweep JSON files")
    args = parser.parse_args()

    docs = [(path, load(path)) for path in args.files]
    for path, doc in docs:  # check every file before drawing anything
        summaries = require(doc, "points", path) if "points" in doc else [doc]
        for summary in summaries:
            phases = require(summary, "phases", path)
            for phase in ("prefill", "decode"):
                data = require(phases, phase, path)
                for key in ("mbu_spec", "time_s", "bytes", "flops"):
                    require(data, key, path)
            require(summary, "output_throughput", path)
            require(summary, "median_tpot_ms", path)

    try:
        import matplotlib

        matplotlib.use("Agg")
        matplotlib.rcParams["svg.fonttype"] = "none"  # SVG text stays text (searchable)
        import matplotlib.pyplot as plt
    except ImportError as e:
        fail(f"matplotlib is not available ({e}); install the Debian package python3-matplotlib")

    os.makedirs(args.out, exist_ok=True)

    # throughput_latency: one curve per sweep, one point per single result.
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for path, doc in docs:
        points = doc["points"] if "points" in doc else [doc]
        xs = [p["median_tpot_ms"] for p in points]
        ys = [p["output_throughput"] for p in points]
        ax.plot(xs, ys, marker="o", label=label_of(path, doc))
        for p in points:
            if "batch" in p:
                ax.annotate(str(p["batch"]), (p["median_tpot_ms"], p["output_throughput"]),
                            textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xlabel("median TPOT (ms)")
    ax.set_ylabel("output throughput (tok/s)")
    ax.set_title("Throughput vs latency (labels: batch size)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, args.out, "throughput_latency")
    plt.close(fig)

    # roofline: achieved FLOP/s vs FLOP/byte per phase, roofs per hardware.
    fig, ax = plt.subplots(figsize=(7, 4.5))
    markers = {"prefill": "^", "decode": "o", "mixed": "s"}
    intensities, roofs = [], {}
    for path, doc in docs:
        summaries = doc["points"] if "points" in doc else [doc]
        label = label_of(path, doc)
        for phase in PHASES:
            xs, ys = [], []
            for s in summaries:
                data = s["phases"].get(phase, {})
                if all(data.get(key, 0) > 0 for key in ("time_s", "bytes", "flops")):
                    xs.append(data["flops"] / data["bytes"])
                    ys.append(data["flops"] / data["time_s"])
            if xs:
                ax.scatter(xs, ys, marker=markers[phase], label=f"{label} {phase}")
                intensities += xs
        bandwidth, flops, name = peaks_of(doc)
        if bandwidth > 0 and flops > 0:
            roofs[name or label] = (bandwidth, flops)
    lo = min(intensities + [0.1]) / 4
    hi = max(intensities + [1000.0]) * 4
    for name, (bandwidth, flops) in roofs.items():
        ridge = flops / bandwidth
        xs = [lo, ridge, max(hi, ridge * 4)]
        ax.plot(xs, [min(bandwidth * x, flops) for x in xs], linestyle="--", label=f"{name} roof")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("achieved FLOP/s")
    ax.set_title("Roofline per phase")
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    save(fig, args.out, "roofline")
    plt.close(fig)

    # mbu: decode MBU per hardware (the best point of a sweep).
    fig, ax = plt.subplots(figsize=(7, 4.5))
    names, values = [], []
    for path, doc in docs:
        summaries = doc["points"] if "points" in doc else [doc]
        names.append(label_of(path, doc))
        values.append(100.0 * max(s["phases"]["decode"]["mbu_spec"] for s in summaries))
    colours = ["tab:red" if v > 100.0 else "tab:blue" for v in values]
    ax.bar(range(len(values)), values, color=colours)
    if any(v > 100.0 for v in values):
        # Never a utilisation above 100% without saying so (hwinfer compare prints why).
        ax.axhline(100.0, color="tab:red", linestyle="--", linewidth=1)
        ax.set_ylim(top=max(values) * 1.2)
        for i, v in enumerate(values):
            if v > 100.0:
                ax.annotate(f"{v:.0f}%: above the spec peak\n(see hwinfer's warning)", (i, v),
                            ha="center", va="bottom", fontsize=7, color="tab:red")
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels(names, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("decode MBU (% of spec peak bandwidth)")
    ax.set_title("Decode memory-bandwidth utilisation")
    ax.grid(True, axis="y", alpha=0.3)
    save(fig, args.out, "mbu")
    plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main())
