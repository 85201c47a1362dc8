"""What targeted augmentation (`train --augment`) costs: making the candidates, reusing them, and training.

    OMP_NUM_THREADS=1 python bench/augment_cost.py [--data-dir ../shared/data] [--model esan] [--pairs 1000]
        [--kinds antonym,exclusive,…] [--ratio 0.5] [--steps 20] [--rounds 2] [--threads 1] [--out FILE]

Three tables, on snli-small (the shipped checkpoints' protocol, 9,824 training pairs):
1. Candidate generation, uncached: the edit engine (spaCy's parser, WordNet, the filters) over the first `--pairs`
   training pairs in a fresh cache, the seconds per pair and what that gives for the whole split; the parses
   live in this process only, so this is what a first `train --augment` pays once per training split and code.
2. Cached reuse, what every later run pays: the whole split's candidates read from the cache root (when a run
   made them; otherwise the row says so), the seeded draw, and the analysis of the drawn pairs (spaCy features,
   then from the feature cache) — from a Trainer set up with and without `--augment`, whose difference is the
   set-up time augmentation adds.
3. Training-time overhead: seconds per optimizer step with and without the augmented pairs (the same batch
   size, so the same cost per step, up to the pairs' lengths), alternating which goes first in each round, and
   the steps an epoch takes with and without (an epoch grows by the augmented pairs). With the step budget of
   the baseline, as the shipped augmented checkpoints are trained, the run takes as many steps as the baseline;
   with the baseline's epochs it takes the epoch ratio longer.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from harness import ROOT, Report, add_out_option, command_line, load_average, step_seconds
from nlivis.training import augment
from nlivis.training.config import deep_merge, load_config
from nlivis.training.request import TrainRequest
from nlivis.training.trainer import Trainer

WARM_UP_STEPS = 2
"""Steps left out of the seconds per step (first calls allocate and warm caches)."""


def trainer(family: str, data_dir: Path, folder: Path, kinds: tuple[str, ...], ratio: float, steps: int,
            cache_dir: Path | None) -> tuple[Trainer, float]:
    """A Trainer at the shipped size (no evaluation, no state saves) and the seconds its set-up took."""
    config = deep_merge(load_config(family), {"shipped": {"training": {"eval_every_steps": 0,
                                                                        "checkpoint_every_steps": 0}}})
    request = TrainRequest(config, "snli-small", data_dir, folder, device="cpu", seed=1, max_steps=steps,
                           size="shipped", embeddings="minilm", progress=False, augment=kinds,
                           augment_ratio=ratio if kinds else None, cache_dir=cache_dir)
    start = time.perf_counter()
    built = Trainer(request)
    return built, time.perf_counter() - start


def seconds_per_step(built: Trainer) -> float:
    """Mean seconds per optimizer step after the warm-up steps, over the first epoch's batches (the loop stops
    at max_steps)."""
    durations = step_seconds(built)
    built.run_epoch()
    warm = durations[WARM_UP_STEPS:]
    return sum(warm) / len(warm)


def candidate_generation(items, labels, pairs: int) -> tuple[float, int, int]:
    """(seconds, pairs edited, candidates) of the engine over the first `pairs` training pairs, uncached."""
    counts = augment.WordCounts.of(items)
    chosen = [item.pair for item in items[:pairs]]
    start = time.perf_counter()
    pool = augment.build_pool(chosen, augment.task_of_labels(labels), counts)
    return time.perf_counter() - start, len(chosen), len(pool.candidates)


def cached_reuse(report: Report, augmented: Trainer, total: int, augmented_setup: float, plain_setup: float) -> None:
    """Table 2: what a later run pays for the candidates, the draw and the analysis, and the set-up difference."""
    timings = augmented.augmentation.timings
    cached = bool(timings["candidates_cached"])
    report.print("| cached reuse (a later run) | seconds |", "|---|---|",
                 f"| candidates of all {total:,} pairs "
                 f"{'read from the cache' if cached else 'NOT cached: made in this run'} | {timings['candidates_s']:.2f} |",
                 f"| seeded draw of {len(augmented.augmentation.items):,} pairs | {timings['draw_s']:.2f} |",
                 f"| analysis of the drawn pairs (feature cache) | {timings['analysis_s']:.2f} |",
                 f"| Trainer set-up with --augment − without | {augmented_setup - plain_setup:+.2f} "
                 f"({augmented_setup:.1f} − {plain_setup:.1f}) |\n")


def training_overhead(report: Report, args: argparse.Namespace, folder: Path, kinds: tuple[str, ...],
                      plain: Trainer, augmented: Trainer) -> None:
    """Table 3: seconds per step with and without the augmented pairs (alternating which goes first), per epoch."""
    on, off = [], []
    for round_ in range(args.rounds):
        for with_augment in ((True, False) if round_ % 2 == 0 else (False, True)):
            name = f"{'a' if with_augment else 'p'}{round_}"
            built, _ = trainer(args.model, Path(args.data_dir), folder / name, kinds if with_augment else (),
                               args.ratio, args.steps, None)
            (on if with_augment else off).append(seconds_per_step(built))
    plain_batches, augmented_batches = plain.batches_per_epoch, augmented.batches_per_epoch
    with_, without = statistics.median(on), statistics.median(off)
    report.print("| training | plain | augmented | ratio |", "|---|---|---|---|",
                 f"| pairs per epoch | {len(plain.train_items):,} | {len(augmented.train_items):,} | "
                 f"{len(augmented.train_items) / len(plain.train_items):.2f} |",
                 f"| steps per epoch | {plain_batches} | {augmented_batches} | {augmented_batches / plain_batches:.2f} |",
                 f"| s per step (median of {args.rounds}, {args.steps} steps each) | {without:.4f} | "
                 f"{with_:.4f} | {with_ / without:.2f} |",
                 f"| s per epoch (steps × s per step) | {plain_batches * without:.0f} | {augmented_batches * with_:.0f} | "
                 f"{augmented_batches * with_ / (plain_batches * without):.2f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"), help="data root with snli/ "
                        "(default: ../shared/data)")
    parser.add_argument("--model", default="esan", help="config name, trained at its shipped size (default: esan)")
    parser.add_argument("--pairs", type=int, default=1000,
                        help="training pairs the uncached candidate generation edits (default: 1000)")
    parser.add_argument("--kinds", default=",".join(augment.AUGMENT_KINDS),
                        help="augmentation kinds (default: all nine, as the shipped augmented checkpoints)")
    parser.add_argument("--ratio", type=float, default=0.5, help="--augment-ratio (default: 0.5)")
    parser.add_argument("--steps", type=int, default=20, help="optimizer steps per timing run (default: 20)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of (augmented, plain) runs (default: 2)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    add_out_option(parser)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    kinds = augment.parse_kinds(args.kinds)
    data_dir = Path(args.data_dir)
    with tempfile.TemporaryDirectory() as folder, Report(args.out) as report:
        report.print(command_line(f"torch threads {torch.get_num_threads()}, {args.model} at its shipped size on "
                                  f"snli-small, kinds {','.join(kinds)}, ratio {args.ratio:g}"),
                     load_average("start") + "\n")
        folder = Path(folder)
        plain, plain_setup = trainer(args.model, data_dir, folder / "plain", (), args.ratio, args.steps, None)
        seconds, edited, found = candidate_generation(plain.data.train_items, plain.protocol.labels, args.pairs)
        total = len(plain.data.train_items)
        report.print("| candidate generation (uncached) | training pairs edited | seconds | s per pair | candidates | "
                     f"for all {total:,} pairs (s, extrapolated) |", "|---|---|---|---|---|---|",
                     f"| edit engine + filters | {edited:,} | {seconds:.1f} | {seconds / edited:.4f} | {found:,} | "
                     f"{seconds / edited * total:.0f} |\n")
        augmented, augmented_setup = trainer(args.model, data_dir, folder / "augmented", kinds, args.ratio, args.steps,
                                             None)
        cached_reuse(report, augmented, total, augmented_setup, plain_setup)
        training_overhead(report, args, folder, kinds, plain, augmented)
        report.print("\n" + load_average("end"))
    return 0

if __name__ == "__main__":
    sys.exit(main())
