"""Integrated gradients for one pair on the five shipped snli-small models, warm (issue 14: target < 1 s).

    OMP_NUM_THREADS=1 python bench/attribution_speed.py [--steps 50] [--repeats 10] [--threads 1] [--out FILE]

The pair is analysed once (spaCy is not timed); each model is warmed with one call, then every repeat
runs `attribution.integrated_gradients` with the step count fixed at `--steps` (all steps in one batched
forward/backward, plus the two end points for the completeness gap) on each model in turn: the default
call's first pass. The last column says how many steps the default (adaptive) call uses for this pair;
a pair that needs refinement costs roughly that many steps more (see bench/ig_completeness.py). Prints per-model median wall milliseconds and
median CPU milliseconds of this process (with one thread and a busy shared machine, CPU time is close to
what the wall time would be on an idle one), the sum over the five models per repeat, the completeness gap
and the load average.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from harness import SHIPPED, add_checkpoints_option, add_out_option, add_threads_option, publish, use_threads

PREMISE = "A man in a blue shirt is playing a guitar on the street while people walk past ."
HYPOTHESIS = "A musician is performing outdoors ."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50, help="integrated-gradients steps (default 50)")
    parser.add_argument("--repeats", type=int, default=10, help="timed repeats after one warm-up (default 10)")
    add_threads_option(parser)
    add_checkpoints_option(parser)
    add_out_option(parser)
    args = parser.parse_args(argv)

    import torch

    from nlivis.analysis.attribution import integrated_gradients, predicted_classes
    from nlivis.features.dataset import analysed_text_pair
    from nlivis.inference import load_checkpoint

    use_threads(args.threads)
    item = analysed_text_pair(PREMISE, HYPOTHESIS)
    prepared = []
    for family in SHIPPED:
        loaded = load_checkpoint(Path(args.checkpoints) / f"{family}-snli-small")
        batch = loaded.featurizer.encode([item])
        _, target = predicted_classes(loaded.model, batch)
        integrated_gradients(loaded.model, batch, target, args.steps)  # warm-up
        prepared.append((family, loaded.model, batch, target))
    default_steps = {family: int(integrated_gradients(model, batch, target).steps[0])
                     for family, model, batch, target in prepared}

    times = {family: [] for family in SHIPPED}
    cpu_times = {family: [] for family in SHIPPED}
    gaps = {}
    totals, cpu_totals = [], []
    for _ in range(args.repeats):
        total = cpu_total = 0.0
        for family, model, batch, target in prepared:
            start, cpu_start = time.perf_counter(), time.process_time()
            raw = integrated_gradients(model, batch, target, args.steps)
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
            times[family].append(elapsed)
            cpu_times[family].append(cpu)
            gaps[family] = float(raw.completeness_gap[0])
            total += elapsed
            cpu_total += cpu
        totals.append(total)
        cpu_totals.append(cpu_total)

    tokens = f"{len(item.premise)}+{len(item.hypothesis)} tokens"
    lines = [f"IG, {args.steps} steps, one pair ({tokens}), warm; torch threads {torch.get_num_threads()}, "
             f"{args.repeats} repeats, load average {os.getloadavg()[0]:.2f}", "",
             "| model (snli-small) | median wall ms | median CPU ms | completeness gap | steps by default |",
             "|---|---|---|---|---|"]
    for family in SHIPPED:
        lines.append(f"| {family} | {1000 * statistics.median(times[family]):.1f} | "
                     f"{1000 * statistics.median(cpu_times[family]):.1f} | {gaps[family]:+.5f} | "
                     f"{default_steps[family]} |")
    lines.append(f"| **all five** | **{1000 * statistics.median(totals):.1f}** (worst {1000 * max(totals):.1f}) | "
                 f"**{1000 * statistics.median(cpu_totals):.1f}** | | |")
    publish(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
