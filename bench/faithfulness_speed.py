"""`faithfulness` on the five shipped snli-small models: every method over a sample of SNLI dev (issue 20
target: 500 pairs × five models × all methods ≤ 3 min on 2 cores).

    OMP_NUM_THREADS=1 python bench/faithfulness_speed.py --data-dir ../shared/data/snli/esnli_tokenized \
        [--sample 500] [--workers 2] [--steps N] [--commit COMMIT] [--out FILE]

The split is analysed (spaCy, cached) before the clock starts; then `--workers` processes with one torch
thread each take the models, slowest first, and run `faithfulness.compute_records` for every method from
scratch (no attribution cache: the command caches per checkpoint and settings, so a second run reads its
records in milliseconds). Prints per model the wall and CPU seconds and each stage's wall / CPU seconds, the
deletion variants evaluated, and the total wall time with the load average. With one thread per worker
and a busy shared machine, a worker's CPU seconds are close to what its wall time would be on an idle
one; the `idle estimate` is the largest worker's CPU total. `--commit` times the `nlivis/` of an earlier
commit instead (git archive into a temporary folder): before issue 20 there was no `compute_records`, and
each method ran alone (`method_records`, word-vector attribution, one random ranking), so the stages are
not split.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

from harness import SHIPPED as APP_ORDER, add_checkpoints_option, add_out_option, commit_tree, publish

SHIPPED = tuple(sorted(APP_ORDER, key=lambda family: family != "diin"))
"""DIIN (the slowest by far: a full forward pass per deletion on its fixed grid) first, so the last model to start
is a quick one."""
STAGES = ("predictions", "integrated_gradients", "gradients", "attention", "occlusion", "rankings", "deletions")
_ITEMS: list = []


def _run_model(job: tuple[str, str, int | None]) -> dict:
    import torch

    import nlivis.workflows.faithfulness as faithfulness
    from nlivis.inference import load_checkpoint

    FAITHFULNESS_METHODS = faithfulness.FAITHFULNESS_METHODS
    compute_records = getattr(faithfulness, "compute_records", None)

    torch.set_num_threads(1)
    family, checkpoints, steps = job
    loaded = load_checkpoint(Path(checkpoints) / f"{family}-snli-small")
    timings: dict[str, float] = {"variants": 0}
    start, cpu_start = time.perf_counter(), time.process_time()
    if compute_records is None:  # an earlier commit: one method at a time
        from nlivis.workflows.faithfulness import method_records

        for method in FAITHFULNESS_METHODS:
            method_records(loaded.model, loaded.featurizer, _ITEMS, method, seed=1, steps=steps)
    else:
        compute_records(loaded.model, loaded.featurizer, _ITEMS, FAITHFULNESS_METHODS, seed=1, steps=steps,
                        timings=timings)
    return {"model": family, "wall": time.perf_counter() - start, "cpu": time.process_time() - cpu_start,
            "worker": os.getpid(), **timings}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True, help="SNLI line-aligned files (../shared/data/snli/esnli_tokenized)")
    parser.add_argument("--sample", type=int, default=500, help="SNLI dev pairs (seed 1, the faithfulness draw; default 500)")
    parser.add_argument("--workers", type=int, default=2, help="processes, one torch thread each (default 2)")
    parser.add_argument("--steps", type=int, default=None, help="fixed integrated-gradients steps (default: adaptive)")
    add_checkpoints_option(parser)
    parser.add_argument("--commit", default=None, help="time the nlivis/ of this earlier commit (default: the working tree)")
    add_out_option(parser)
    args = parser.parse_args(argv)
    if args.commit:
        sys.path.insert(0, str(commit_tree(args.commit, Path(tempfile.mkdtemp(prefix="nlivis-faithfulness-")))))

    from nlivis.analysis.faithfulness import sample_items
    from nlivis.features.dataset import load_split_analysed
    from nlivis.data.protocols import resolve_split

    items, _ = load_split_analysed(resolve_split("snli", "dev"), args.data_dir)
    _ITEMS[:] = sample_items(items, args.sample, seed=1)
    jobs = [(family, args.checkpoints, args.steps) for family in SHIPPED]
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        results = list(pool.imap_unordered(_run_model, jobs))
    wall = time.perf_counter() - start
    by_worker: dict[int, float] = {}
    for result in results:
        by_worker[result["worker"]] = by_worker.get(result["worker"], 0.0) + result["cpu"]
    results.sort(key=lambda r: SHIPPED.index(r["model"]))
    lines = [f"faithfulness{f' at {args.commit}' if args.commit else ''}, {len(_ITEMS)} SNLI dev pairs × "
             f"{len(SHIPPED)} models × all methods, "
             f"{args.workers} workers × 1 thread, IG {'adaptive' if args.steps is None else f'{args.steps} steps'}; "
             f"load average at the end {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", "",
             "| model (snli-small) | wall s | CPU s | " + " | ".join(STAGES) + " | deletion variants |",
             "|---|---|---|" + "---|" * len(STAGES) + "---|"]
    for r in results:  # each stage: wall / CPU seconds ("–" for an earlier commit, which times no stages)
        stages = " | ".join(f"{r[stage]:.1f} / {r[f'cpu:{stage}']:.1f}" if stage in r else "–" for stage in STAGES)
        variants = f"{int(r['variants']):,}" if r["variants"] else "–"
        lines.append(f"| {r['model']} | {r['wall']:.1f} | {r['cpu']:.1f} | {stages} | {variants} |")
    lines += ["", f"total wall {wall:.1f} s ({wall / 60:.2f} min); CPU per worker "
              + ", ".join(f"{cpu:.1f}" for cpu in sorted(by_worker.values(), reverse=True))
              + f" s; idle estimate (largest worker's CPU) {max(by_worker.values()):.1f} s"]
    publish(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
