#!/usr/bin/env python3
"""benchmarks/vs_llama_cpp.py — hwinfer's CPU backend and llama.cpp side by side, in one run, on
the same GGUF files: prefill (pp) and batch-1 decode (tg) against `llama-bench`, batched decode
total throughput against `llama-batched-bench`'s S_TG. Rounds alternate hwinfer and the peer so
that load from other processes hits both; the medians of the rounds are printed as a Markdown
table with the ratio hwinfer / llama.cpp.

  benchmarks/vs_llama_cpp.py --hwinfer build/bin/hwinfer --peer ../shared/peers/llama.cpp/bin \\
      --rounds 3 --batches 1,4,8,16,32 MODEL.gguf [MODEL.gguf ...]

Run nothing else meanwhile: llama.cpp's threads spin while they wait and slow down many-fold
when another process holds a core (../shared/peers/README.md).
"""
import argparse
import json
import re
import statistics
import subprocess
import sys


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"vs_llama_cpp: {' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


def hwinfer_model(hw, model, prompt, new, batch):
    out = json.loads(run([hw, "bench-model", "-m", model, "-p", str(prompt), "-n", str(new), "-b",
                          str(batch), "-r", "1", "--backend", "cpu", "--json"]))
    return out["prefill_tokens_per_s"], out["decode_tokens_per_s"]


def peer_bench(peer, model, prompt, new, threads):
    rows = json.loads(run([f"{peer}/llama-bench", "-m", model, "-p", str(prompt), "-n", str(new),
                           "-t", str(threads), "-r", "1", "-o", "json"]))
    pp = next(r["avg_ts"] for r in rows if r["n_prompt"] > 0)
    tg = next(r["avg_ts"] for r in rows if r["n_gen"] > 0)
    return pp, tg


def peer_batched(peer, model, prompt, new, batches, threads):
    text = run([f"{peer}/llama-batched-bench", "-m", model, "-c", "8192", "-b", "2048", "-ub",
                "512", "-npp", str(prompt), "-ntg", str(new), "-npl",
                ",".join(map(str, batches)), "-t", str(threads)])
    s_tg = {}
    for line in text.splitlines():  # |  PP |  TG |  B | N_KV | T_PP s | S_PP t/s | T_TG s | S_TG t/s | ...
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 8 and re.fullmatch(r"\d+", cells[2] or ""):
            s_tg[int(cells[2])] = float(cells[7])
    return s_tg


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--hwinfer", default="build/bin/hwinfer")
    parser.add_argument("--peer", default="../shared/peers/llama.cpp/bin")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pp", type=int, default=128)
    parser.add_argument("--tg", type=int, default=64)
    parser.add_argument("--batch-prompt", type=int, default=16)
    parser.add_argument("--batch-new", type=int, default=16)
    parser.add_argument("--batches", default="1,4,8,16,32")
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",") if b]
    print("| model | measure | hwinfer | llama.cpp | ratio |\n|---|---|---:|---:|---:|")
    for model in args.models:
        samples = {}  # measure -> ([hwinfer], [peer])
        def add(measure, ours, theirs):
            pair = samples.setdefault(measure, ([], []))
            pair[0].append(ours)
            pair[1].append(theirs)
        for _ in range(args.rounds):
            pp, tg = hwinfer_model(args.hwinfer, model, args.pp, args.tg, 1)
            peer_pp, peer_tg = peer_bench(args.peer, model, args.pp, args.tg, args.threads)
            add(f"pp{args.pp} tok/s", pp, peer_pp)
            add(f"tg{args.tg} tok/s (batch 1)", tg, peer_tg)
            peer_s_tg = peer_batched(args.peer, model, args.batch_prompt, args.batch_new, batches,
                                     args.threads)
            for b in batches:
                _, ours = hwinfer_model(args.hwinfer, model, args.batch_prompt, args.batch_new, b)
                add(f"decode batch {b}, total tok/s", ours, peer_s_tg.get(b, float("nan")))
        name = model.rsplit("/", 1)[-1]
        for measure, (ours, theirs) in samples.items():
            o, t = statistics.median(ours), statistics.median(theirs)
            print(f"| {name} | {measure} | {o:.1f} | {t:.1f} | {o / t:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
