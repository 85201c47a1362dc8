"""The NLI probe suite on the five shipped snli-small models (issue 22: ≥ 2,000 cases × 5 models ≤ 30 s on 2 cores).

    OMP_NUM_THREADS=1 python bench/probe_speed.py --data-dir ../shared/data [--threads 1] [--out FILE]

Two runs, each in a fresh process as a user's `python -m nlivis probe` would be: "first" with an empty cache
folder (the suite is built: WordNet and spaCy's parser load, dev pairs are parsed and edited; every case
sentence is analysed by spaCy) and "again" with the cache the first run left (the suite and the analyses
are read back). Each phase shows wall and CPU seconds of the process (on a busy shared machine, CPU time is
close to what the wall time would be on an idle one); the load average is printed beside the table.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import SHIPPED, add_checkpoints_option, add_out_option, add_threads_option, publish


def measure(data_dir: str, cache_dir: str, threads: int | None, checkpoints: str) -> dict:
    """One probe run, phase by phase (what `nlivis.cli.probe.run` does)."""
    phases = {}
    wall, cpu = time.perf_counter(), time.process_time()

    def mark(name: str) -> None:
        nonlocal wall, cpu
        now_wall, now_cpu = time.perf_counter(), time.process_time()
        phases[name] = (now_wall - wall, now_cpu - cpu)
        wall, cpu = now_wall, now_cpu

    import torch

    if threads:
        torch.set_num_threads(threads)
    from nlivis.analysis.edit_runs import checkpoint_names, protocol_notes
    from nlivis.analysis.probes import ProbeResult, probe_record
    from nlivis.workflows.subjects import load_checkpoints
    from nlivis.workflows.probes import load_suite, run_probes, training_overlap

    loaded = load_checkpoints([str(Path(checkpoints) / f"{family}-snli-small") for family in SHIPPED])
    names = checkpoint_names(loaded)
    mark("import + load 5 checkpoints")
    tests = load_suite("nli", data_dir, seed=1, cache_dir=cache_dir)
    mark("suite (build or read)")
    outcomes = run_probes(loaded, tests, names, cache_dir)
    mark("spaCy + 5 models")
    overlap = {name: training_overlap(item, tests, data_dir) for name, item in zip(names, loaded)}
    json.dumps(probe_record(ProbeResult(tests, tuple(loaded[0].labels), names, outcomes, overlap), "nli", 1,
                            len(tests[0].cases), protocol_notes(loaded, names)))
    mark("overlap + JSON")
    return {"phases": phases, "cases": sum(len(t.cases) for t in tests), "tests": len(tests),
            "threads": torch.get_num_threads()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True, help="data root with snli/esnli_tokenized and mnli_dev")
    add_threads_option(parser)
    add_checkpoints_option(parser)
    add_out_option(parser)
    parser.add_argument("--measure", default=None, help=argparse.SUPPRESS)  # the child process: cache folder
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.data_dir, args.measure, args.threads, args.checkpoints)))
        return 0

    runs = {}
    with tempfile.TemporaryDirectory(prefix="probe-bench-") as cache:
        for run in ("first", "again"):
            command = [sys.executable, __file__, "--data-dir", args.data_dir, "--checkpoints", args.checkpoints,
                       "--measure", cache] + (["--threads", str(args.threads)] if args.threads else [])
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            runs[run] = {**json.loads(done.stdout.strip().splitlines()[-1]), "process": time.perf_counter() - start}
    load = os.getloadavg()[0]
    first = runs["first"]
    lines = [f"NLI probe suite, {first['tests']} tests, {first['cases']:,} cases × {len(SHIPPED)} shipped snli-small "
             f"models (torch threads {first['threads']}, 1-min load {load:.1f} after the runs):", "",
             "| phase | first run: wall (s) | CPU (s) | again, cached: wall (s) | CPU (s) |", "|---|---|---|---|---|"]
    for phase in first["phases"]:
        cells = " | ".join(f"{runs[run]['phases'][phase][0]:.1f} | {runs[run]['phases'][phase][1]:.1f}"
                           for run in ("first", "again"))
        lines.append(f"| {phase} | {cells} |")
    totals = " | ".join(f"{sum(w for w, _ in runs[run]['phases'].values()):.1f} | "
                        f"{sum(c for _, c in runs[run]['phases'].values()):.1f}" for run in ("first", "again"))
    lines.append(f"| total | {totals} |")
    lines.append(f"| process, start to exit (wall) | {runs['first']['process']:.1f} | | {runs['again']['process']:.1f} | |")
    publish(lines, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
