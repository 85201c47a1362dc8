"""FLOPs per pair as the benchmark counted them before its corrections and as it counts them now.

    OMP_NUM_THREADS=1 python bench/flops_check.py [--models gcnn,esan] [--sizes shipped,paper] [--batches 5] [--out FILE]

Counts do not depend on the machine's speed or load, so this table is exact wherever it runs. "Before":
the middle one of the length-bucketed training batches only, torch's FlopCounterMode as it is (it
counts nothing for the fused CPU LSTM layer), 300-d word vectors at every size. "Now"
(`nlivis.workflows.bench.flops_per_pair` over `bench_config`): every training batch, the fused LSTM layer
counted, and the shipped rows at the 384-d MiniLM width they are trained with.
"""
from __future__ import annotations

import argparse

import torch
from torch.utils.flop_counter import FlopCounterMode

from harness import Report, add_out_option, command_line, length_limits
from nlivis.workflows.bench import FAMILIES, GLOVE_DIM, bench_config, flops_per_pair, length_bucketed_batches
from nlivis.models import build


def counted_before(model, batch) -> float:
    counter = FlopCounterMode(display=False)
    with counter:
        model.loss(model(batch), batch.labels).backward()
    model.zero_grad(set_to_none=True)
    return counter.get_total_flops() / len(batch)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=",".join((*FAMILIES, "esim")))
    parser.add_argument("--sizes", default="shipped,paper")
    parser.add_argument("--batches", type=int, default=5, help="training batches per count (the full run's 5)")
    add_out_option(parser)
    args = parser.parse_args()
    with Report(args.out) as report:
        report.print(command_line() + "\n",
                     "| model | size | params before | params now | GFLOP/pair before (middle batch, no LSTM, 300-d) | "
                     "GFLOP/pair now | before ÷ now |", "|---|---|---|---|---|---|---|")
        for family in args.models.split(","):
            for size in args.sizes.split(","):
                config = bench_config(family, size)
                max_p, max_h = length_limits(config)
                batch_size = int(config.get("training", {}).get("batch_size", 64))
                batches = length_bucketed_batches(batch_size, max_p, max_h, args.batches, seed=1)
                torch.manual_seed(0)
                old = build({**config["model"], "word_dim": GLOVE_DIM}).train()
                torch.manual_seed(0)
                new = build(config["model"]).train()
                before = counted_before(old, batches[len(batches) // 2])
                now = flops_per_pair(new, batches)
                report.print(f"| {family} | {size} | {old.count_parameters() / 1e6:.2f}M | "
                             f"{new.count_parameters() / 1e6:.2f}M | {before / 1e9:.3f} | {now / 1e9:.3f} | "
                             f"{before / now:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
