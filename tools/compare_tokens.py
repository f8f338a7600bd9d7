#!/usr/bin/env python3
"""tools/compare_tokens.py A.jsonl B.jsonl [--tolerance T] [--exact] [--min-identical F] — compares the greedy tokens two
`hwinfer bench --tokens` runs generated (two backends, or two builds) the way vLLM compares models
(check_logprobs_close): per request the outputs must be identical, except that at the first
position where they differ the two candidates must be a near-tie in BOTH runs — each run's token
among the other's kept top candidates, and the two logits within T of each other in each run —
after which the sequences legitimately diverge and the rest is not compared. A difference that is
not a near-tie (or different request ids or lengths) is a failure: exit status 1, naming the
request and position. With --exact every token must be equal (no near-tie allowed: for models
whose activations are not quantized, where two correct backends differ by ~1e-6 in the logits).
With --min-identical F, fewer than F (a fraction) of the requests identical throughout also
fails. Prints one summary line.

Why not exact equality: two correct backends differ by rounding (~1e-6 relative in F32), and a
quantized model amplifies that: when x is quantized to 8-bit blocks, a value within an ulp of a
rounding boundary lands on different integers, moving logits by ~1e-2. A random-weight model has
many near-ties between its top tokens, so exact agreement over thousands of tokens is luck."""
import argparse
import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--tolerance", type=float, default=0.05,
                        help="largest logit gap between the two tokens at a divergence (default 0.05)")
    parser.add_argument("--exact", action="store_true",
                        help="every token must be equal; a divergence at a near-tie fails too")
    parser.add_argument("--min-identical", type=float, default=0.0,
                        help="fail when fewer than this fraction of requests are identical")
    args = parser.parse_args()
    a, b = load(args.a), load(args.b)
    if [r["id"] for r in a] != [r["id"] for r in b]:
        sys.exit(f"compare_tokens: {args.a} and {args.b} hold different requests")
    identical = diverged = compared = total = 0
    worst_gap = 0.0
    for ra, rb in zip(a, b):
        rid, out_a, out_b = ra["id"], ra["output"], rb["output"]
        if len(out_a) != len(out_b):
            sys.exit(f"compare_tokens: request {rid}: {len(out_a)} vs {len(out_b)} output tokens")
        total += len(out_a)
        for i, (ta, tb) in enumerate(zip(out_a, out_b)):
            if ta == tb:
                compared += 1
                continue
            if args.exact:
                sys.exit(f"compare_tokens: request {rid} position {i}: {ta} vs {tb} (--exact)")
            if i >= len(ra.get("top", [])) or i >= len(rb.get("top", [])):
                sys.exit(f"compare_tokens: request {rid} position {i}: {ta} vs {tb} and no top "
                         "logits to judge it (run hwinfer bench with --tokens)")
            top_a = {tok: logit for tok, logit in ra["top"][i]}
            top_b = {tok: logit for tok, logit in rb["top"][i]}
            if tb not in top_a or ta not in top_b:
                sys.exit(f"compare_tokens: request {rid} position {i}: {ta} vs {tb}, and one is not "
                         f"among the other's top candidates ({args.a}: {ra['top'][i]}; "
                         f"{args.b}: {rb['top'][i]})")
            gap = max(top_a[ta] - top_a[tb], top_b[tb] - top_b[ta])
            if gap > args.tolerance:
                sys.exit(f"compare_tokens: request {rid} position {i}: {ta} vs {tb} is not a near-tie "
                         f"(logit gap {gap:.4g} > {args.tolerance})")
            worst_gap = max(worst_gap, gap)
            diverged += 1
            break
        else:
            identical += 1
    print(f"compare_tokens: {identical} of {len(a)} requests identical; {diverged} diverged at a "
          f"near-tie (largest gap {worst_gap:.3g} <= {args.tolerance}); {compared} of {total} "
          "tokens compared equal")
    if identical < args.min_identical * len(a) or not a:
        sys.exit(f"compare_tokens: only {identical} of {len(a)} requests identical throughout "
                 f"(--min-identical {args.min_identical})")


if __name__ == "__main__":
    main()
