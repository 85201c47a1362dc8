"""Evaluation throughput by batch size, per model: the measurement behind each model's `inference_chunk`.

    OMP_NUM_THREADS=1 python bench/eval_batch.py [--models diin,gcnn] [--sizes shipped,paper]
                                                 [--batches 32,64,128,256] [--rounds 3]

For each model and size, 512 (`--pairs`) MultiNLI-like pairs are length-bucketed into batches of each size (as
`predict_probabilities` buckets them) and run in eval mode under inference_mode; every round measures
every batch size once, in a rotating order, and the table gives the median pairs per second and each
size's time per pair relative to the best size. `MatchingModel.inference_chunk` caps the batch a
forward pass sees where a smaller one measured faster (DIIN: its [B, d, L, L] interaction tensors
and dense-block concatenations stop fitting in cache above 64 pairs).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nlivis.workflows.bench import FAMILIES, bench_config, length_bucketed_batches
from nlivis.models import build  # noqa: E402



def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=",".join(FAMILIES))
    parser.add_argument("--sizes", default="shipped,paper")
    parser.add_argument("--batches", default="32,64,128,256")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=512, help="pairs per measurement (a multiple of every batch size)")
    args = parser.parse_args()
    pairs = args.pairs
    sizes = [int(b) for b in args.batches.split(",")]
    print(f"Command: python bench/eval_batch.py {' '.join(sys.argv[1:])}  (torch threads {torch.get_num_threads()}, "
          f"median of {args.rounds} rotating rounds, {pairs} pairs per measurement)")
    print(f"Load average (1 min) at start {os.getloadavg()[0]:.2f}\n")
    print("| model | size | " + " | ".join(f"b={b} pairs/s" for b in sizes) + " | best | " +
          " | ".join(f"b={b} time/pair vs best" for b in sizes) + " |")
    print("|---|---|" + "---|" * (2 * len(sizes) + 1))
    for family in args.models.split(","):
        for size in args.sizes.split(","):
            config = bench_config(family, size)
            torch.manual_seed(0)
            model = build(config["model"]).eval()
            features = config.get("features", {})
            max_p, max_h = int(features.get("max_premise_len", 48)), int(features.get("max_hypothesis_len", 48))
            batches = {b: length_bucketed_batches(b, max_p, max_h, pairs // b, seed=2) for b in sizes}
            with torch.inference_mode():
                model(batches[sizes[0]][0])  # warm-up
                rates: dict[int, list[float]] = {b: [] for b in sizes}
                for r in range(args.rounds):
                    for b in sizes[r % len(sizes):] + sizes[:r % len(sizes)]:
                        start = time.perf_counter()
                        for batch in batches[b]:
                            model(batch)
                        rates[b].append(pairs / (time.perf_counter() - start))
            medians = {b: statistics.median(v) for b, v in rates.items()}
            best = max(medians, key=medians.get)
            print(f"| {family} | {size} | " + " | ".join(f"{medians[b]:.0f}" for b in sizes) + f" | {best} | " +
                  " | ".join(f"{medians[best] / medians[b]:.2f}×" for b in sizes) + " |", flush=True)
    print(f"\nLoad average (1 min) at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
