"""Before/after for one speed change: two commits' models measured in alternating rounds.

    python bench/ab.py BEFORE AFTER --models amn --sizes shipped,paper [--rounds 5] [--threads N]
        [--out FILE]

On a shared two-core machine one benchmark run drifts by ±20 % from the next, so a change is judged
by interleaving: each round runs `nlivis.workflows.bench.bench_model` (today's benchmark code, quick settings:
3 repetitions after 1 warm-up, 2 length-bucketed training batches) once on BEFORE's models and once
on AFTER's, each in a fresh process, and the table gives the median over rounds of each side, plus
the one-pair latency (one 10-token pair, traces on, the app's path without spaCy). AFTER may be
"worktree" (the working tree's models).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import ROOT, Report, add_out_option, command_line, commit_tree, load_average, with_todays_bench

MEASURE = """
import json, sys, time, statistics
import torch
from nlivis.workflows import bench
family, size, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
if threads:
    torch.set_num_threads(threads)
row = bench.bench_model(family, size, torch.device("cpu"), repeats=3, warmup=1, train_batches=2, count_flops=False)
config = bench.bench_config(family, size)
torch.manual_seed(0)
model = bench.build(config["model"]).eval()
pair = bench.synthetic_batch(1, 32, 32, seed=3, fixed_length=10)
times = []
with torch.inference_mode():
    for i in range(23):
        start = time.perf_counter()
        model(pair, trace=True)[1].detach()
        if i >= 3:
            times.append(time.perf_counter() - start)
print(json.dumps({"train": row.train_pairs_per_s, "infer": row.infer_pairs_per_s, "latency": row.latency_ms,
                  "traced": row.latency_traced_ms, "pair": statistics.median(times) * 1000}))
"""
COLUMNS = (("train", "train pairs/s"), ("infer", "infer pairs/s (b=256)"), ("latency", "8×20 latency (ms)"),
           ("traced", "8×20 traced (ms)"), ("pair", "one pair, traced (ms)"))


def tree_for(commit: str, folder: Path) -> Path:
    if commit == "worktree":
        return ROOT
    return with_todays_bench(commit_tree(commit, folder))


def measure(tree: Path, family: str, size: str, threads: int) -> dict:
    out = subprocess.run([sys.executable, "-c", MEASURE, family, size, str(threads)], cwd=tree, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--models", required=True)
    parser.add_argument("--sizes", default="shipped")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    add_out_option(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nlivis-ab-") as tmp, Report(args.out) as report:
        trees = {args.before: tree_for(args.before, Path(tmp) / "before"),
                 args.after: tree_for(args.after, Path(tmp) / "after")}
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        report.print(command_line(f"worktree at {head}; median of {args.rounds} interleaved rounds, threads "
                                  f"{args.threads or 'torch default'}"), load_average("start") + "\n",
                     f"| model | size | models of | {' | '.join(label for _, label in COLUMNS)} |",
                     "|---|---|---|" + "---|" * len(COLUMNS))
        for family in args.models.split(","):
            for size in args.sizes.split(","):
                results: dict[str, list[dict]] = {commit: [] for commit in trees}
                for _ in range(args.rounds):
                    for commit, tree in trees.items():
                        results[commit].append(measure(tree, family, size, args.threads))
                medians = {c: {k: statistics.median(r[k] for r in rs) for k, _ in COLUMNS} for c, rs in results.items()}
                for commit in trees:
                    cells = " | ".join(f"{medians[commit][k]:.1f}" if medians[commit][k] < 100 else f"{medians[commit][k]:.0f}"
                                       for k, _ in COLUMNS)
                    report.print(f"| {family} | {size} | {commit} | {cells} |")
                b, a = medians[args.before], medians[args.after]
                change = " | ".join(f"{(a[k] / b[k] - 1) * 100:+.0f}%" for k, _ in COLUMNS)
                report.print(f"| {family} | {size} | change | {change} |")
        report.print("\n" + load_average("end"))
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
