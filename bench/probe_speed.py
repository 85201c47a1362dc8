"""The NLI probe suite on the five shipped snli-small models (issue 22: ≥ 2,000 cases × 5 models ≤ 30 s on 2 cores).

    OMP_NUM_THREADS=1 python bench/probe_speed.py --data-dir ../shared/data [--threads 1] [--include-off] [--out FILE]

Three runs, each in a fresh process. "first" and "again" are a user's `python -m nlivis probe`: "first" with an
empty cache folder (the suite is built: WordNet and spaCy's parser load, dev pairs are parsed and edited; every
case sentence is analysed by spaCy) and "again" with the cache the first run left (the suite and the
predictions are read back). "in the app" is the app's first run of the suite on its Behavioural tests tab: the
process first loads what the app's warm-up has loaded before a user can click (the five models, spaCy's two
pipelines, WordNet and its sense counts, one pair analysed and tagged, and — since session 29 — the suite built
and kept on disk, which the warm-up does last, pausing whenever a page runs; not timed), then runs the suite with
torch's own thread count, as the app does (`--threads` sets the other two runs only): the first click of a user
who waited for the warm-up (`bench/suite_ready.py` times how long after a launch that is). Each
phase shows wall and CPU seconds of the process (on a busy shared machine, CPU time at one thread is close to
what the wall time would be on an idle one); the load average is printed beside the table.

Every run predicts the tests the CLI and the app run by default (`analysis.probes.default_tests`, as
`workflows.probes.probe_models` does): the tests switched off by default are built with the suite but not run.
Until session 27 this bench ran them too (2,090 cases, 2,292 distinct pairs, against the 1,540 cases and 1,676
pairs a user's run predicts); `--include-off` measures that, as `probe --include-off` does.
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


RUNS = ("first", "again", "in the app")
APP_RUN = "in the app"


def warm_up_as_the_app(data_dir: str | None = None, cache_dir: str | None = None) -> None:
    """What the app's background warm-up (`app.background.warm_up`) has done before a user can click: spaCy's
    pipeline for token features (loaded by name: the pair's analyses may be read from disk without it), its
    parser, WordNet (the annotation tagger loads both) and one pair through each; with `data_dir`, last, the
    behavioural suite built and kept in `cache_dir` (`app.cache.keep_probe_suite`, the tab's settings)."""
    from nlivis.analysis.tags import tag_pairs
    from nlivis.data.records import Pair
    from nlivis.features.sentences import analyse_text_pair
    from nlivis.features.spacy_pipeline import load_nlp

    premise, hypothesis = "A man is playing a guitar on stage.", "A person is playing music."
    analyse_text_pair(premise, hypothesis)
    load_nlp()
    tag_pairs([Pair(id="shown", premise=premise, hypothesis=hypothesis)])
    if data_dir is not None:
        from nlivis.workflows.probes import load_suite

        load_suite("nli", data_dir, seed=1, cache_dir=cache_dir)


def measure(data_dir: str, cache_dir: str, threads: int | None, checkpoints: str, as_app: bool = False,
            include_off: bool = False) -> dict:
    """One probe run, phase by phase (what `workflows.probes.probe_models` does for the CLI and the app); `as_app`:
    after the app's warm-up; `include_off`: also the tests switched off by default."""
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
    from nlivis.analysis.probes import ProbeResult, default_tests, probe_record
    from nlivis.workflows.subjects import load_checkpoints
    from nlivis.workflows.probes import load_suite, run_probes, training_overlap

    loaded = load_checkpoints([str(Path(checkpoints) / f"{family}-snli-small") for family in SHIPPED])
    names = checkpoint_names(loaded)
    if as_app:
        warm_up_as_the_app(data_dir, cache_dir)
    mark("import + load 5 checkpoints (in the app: and its warm-up, the suite built)")
    tests = load_suite("nli", data_dir, seed=1, cache_dir=cache_dir)
    tests = tests if include_off else default_tests(tests)
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
    parser.add_argument("--include-off", action="store_true",
                        help="also run the tests switched off by default (as probe --include-off)")
    parser.add_argument("--measure", default=None, help=argparse.SUPPRESS)  # the child process: cache folder
    parser.add_argument("--as-app", action="store_true", help=argparse.SUPPRESS)  # the child process: after warm-up
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.data_dir, args.measure, args.threads, args.checkpoints, args.as_app,
                                 args.include_off)))
        return 0

    runs = {}
    with tempfile.TemporaryDirectory(prefix="probe-bench-") as cache, \
            tempfile.TemporaryDirectory(prefix="probe-bench-app-") as app_cache:
        for run in RUNS:
            command = [sys.executable, __file__, "--data-dir", args.data_dir, "--checkpoints", args.checkpoints]
            command += ["--include-off"] if args.include_off else []
            command += ["--measure", app_cache, "--as-app"] if run == APP_RUN else \
                ["--measure", cache] + (["--threads", str(args.threads)] if args.threads else [])
            environment = {name: value for name, value in os.environ.items()  # the app sets no thread count
                           if run != APP_RUN or name not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, check=True, env=environment)
            runs[run] = {**json.loads(done.stdout.strip().splitlines()[-1]), "process": time.perf_counter() - start}
    publish(table(runs, args.include_off), args.out)
    return 0


def table(runs: dict, include_off: bool = False) -> list[str]:
    """The phases of the three runs side by side, wall and CPU seconds, with their totals and what follows the
    loading phase (in the app: what a user waits for after the click)."""
    first, app = runs["first"], runs[APP_RUN]
    which = "every test, those switched off too" if include_off else "the tests run by default"
    lines = [f"NLI probe suite, {which}: {first['tests']} tests, {first['cases']:,} cases × {len(SHIPPED)} shipped "
             f"snli-small models (torch threads {first['threads']}; in the app {app['threads']}; 1-min load "
             f"{os.getloadavg()[0]:.1f} after the runs):", "",
             "| phase | " + " | ".join(f"{run}: wall (s) | CPU (s)" for run in RUNS) + " |",
             "|---|" + "---|---|" * len(RUNS)]
    phases = {run: list(runs[run]["phases"].values()) for run in RUNS}
    for position, phase in enumerate(first["phases"]):
        lines.append(f"| {phase} | " + " | ".join(f"{phases[run][position][0]:.1f} | {phases[run][position][1]:.1f}"
                                                  for run in RUNS) + " |")
    for name, start in (("total", 0), ("after loading (in the app: after the click)", 1)):
        lines.append(f"| {name} | " + " | ".join(f"{sum(w for w, _ in phases[run][start:]):.1f} | "
                                                 f"{sum(c for _, c in phases[run][start:]):.1f}" for run in RUNS) + " |")
    lines.append("| process, start to exit (wall) | " + " | ".join(f"{runs[run]['process']:.1f} | " for run in RUNS) + "|")
    return lines

if __name__ == "__main__":
    raise SystemExit(main())
