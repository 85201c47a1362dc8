"""Evaluation throughput by batch size, per model: the measurement behind each model's `inference_chunk`.

    OMP_NUM_THREADS=1 python bench/eval_batch.py [--models diin,gcnn] [--sizes shipped,paper]
                                                 [--batches 32,64,128,256] [--rounds 3] [--out FILE]

For each model and size, 512 (`--pairs`) MultiNLI-like pairs are length-bucketed into batches of each size (as
`predict_probabilities` buckets them) and run in eval mode under inference_mode; every round measures
every batch size once, in a rotating order, and the table gives the median pairs per second and each
size's time per pair relative to the best size. `MatchingModel.inference_chunk` caps the batch a
forward pass sees where a smaller one measured faster (DIIN: its [B, d, L, L] interaction tensors
and dense-block concatenations stop fitting in cache above 64 pairs).
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from harness import Report, add_out_option, command_line, length_limits, load_average
from nlivis.workflows.bench import FAMILIES, bench_config, length_bucketed_batches
from nlivis.models import build


def throughput_row(family: str, size: str, sizes: list[int], pairs: int, rounds: int) -> str:
    """One model and size: the median pairs per second of each batch size, the best, each one's time against it."""
    config = bench_config(family, size)
    torch.manual_seed(0)
    model = build(config["model"]).eval()
    max_p, max_h = length_limits(config)
    batches = {b: length_bucketed_batches(b, max_p, max_h, pairs // b, seed=2) for b in sizes}
    with torch.inference_mode():
        model(batches[sizes[0]][0])  # warm-up
        rates: dict[int, list[float]] = {b: [] for b in sizes}
        for r in range(rounds):
            for b in sizes[r % len(sizes):] + sizes[:r % len(sizes)]:
                start = time.perf_counter()
                for batch in batches[b]:
                    model(batch)
                rates[b].append(pairs / (time.perf_counter() - start))
    medians = {b: statistics.median(v) for b, v in rates.items()}
    best = max(medians, key=medians.get)
    return (f"| {family} | {size} | " + " | ".join(f"{medians[b]:.0f}" for b in sizes) + f" | {best} | " +
            " | ".join(f"{medians[best] / medians[b]:.2f}×" for b in sizes) + " |")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=",".join(FAMILIES))
    parser.add_argument("--sizes", default="shipped,paper")
    parser.add_argument("--batches", default="32,64,128,256")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=512, help="pairs per measurement (a multiple of every batch size)")
    add_out_option(parser)
    args = parser.parse_args()
    sizes = [int(b) for b in args.batches.split(",")]
    with Report(args.out) as report:
        report.print(command_line(f"torch threads {torch.get_num_threads()}, median of {args.rounds} rotating rounds, "
                                  f"{args.pairs} pairs per measurement"), load_average("start") + "\n",
                     "| model | size | " + " | ".join(f"b={b} pairs/s" for b in sizes) + " | best | " +
                     " | ".join(f"b={b} time/pair vs best" for b in sizes) + " |",
                     "|---|---|" + "---|" * (2 * len(sizes) + 1))
        for family in args.models.split(","):
            for size in args.sizes.split(","):
                report.print(throughput_row(family, size, sizes, args.pairs, args.rounds))
        report.print("\n" + load_average("end"))
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
