"""Where a model's training step or inference spends its time (torch.profiler, CPU).

    python bench/profile_model.py gcnn shipped [--steps 5] [--infer] [--rows 25] [--batch N]

Runs the benchmark's own synthetic, length-bucketed batches (nlivis.bench) and prints the operators
by self CPU time, plus the number of operator calls per step (a proxy for Python/dispatch overhead,
which dominates at the shipped sizes on two cores).
"""
from __future__ import annotations

import argparse

import torch
from torch.profiler import ProfilerActivity, profile

from harness import add_threads_option, use_threads, length_limits
from nlivis.workflows.bench import bench_config, length_bucketed_batches
from nlivis.models import build


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.add_argument("size", choices=["shipped", "paper"])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--infer", action="store_true", help="profile inference at batch 256 instead of training")
    parser.add_argument("--trace", action="store_true", help="inference with tracing on (8×20 batch)")
    parser.add_argument("--rows", type=int, default=25)
    parser.add_argument("--batch", type=int, default=None)
    add_threads_option(parser)
    args = parser.parse_args()
    use_threads(args.threads)

    config = bench_config(args.config, args.size)
    torch.manual_seed(0)
    model = build(config["model"])
    max_p, max_h = length_limits(config)
    if args.infer or args.trace:
        model.eval()
        size = args.batch or (8 if args.trace else 256)
        batches = length_bucketed_batches(size, max_p, max_h, count=2, seed=10)

        def step(batch) -> None:
            with torch.inference_mode():
                model(batch, trace=args.trace)
    else:
        size = args.batch or int(config.get("training", {}).get("batch_size", 64))
        batches = length_bucketed_batches(size, max_p, max_h, count=3, seed=0)
        optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-4)
        model.train()

        def step(batch) -> None:
            optimizer.zero_grad(set_to_none=True)
            model.loss(model(batch), batch.labels).backward()
            optimizer.step()

    for batch in batches:  # warm-up
        step(batch)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for i in range(args.steps):
            step(batches[i % len(batches)])
    events = prof.key_averages()
    calls = sum(e.count for e in events if not e.key.startswith(("autograd::", "Optimizer")))
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows))
    print(f"{args.config} {args.size}: batch {size}, ~{calls / args.steps:.0f} profiled operator calls per step")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
