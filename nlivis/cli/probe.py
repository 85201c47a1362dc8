"""Run a behavioural test suite on one or more checkpoints: failure rate per test with a Wilson 95% interval,
grouped by capability, models side by side; McNemar's exact test between every two checkpoints on the same
cases; the failing cases (pair, expected, predicted) under --json.

    python -m nlivis probe checkpoints/gcnn-snli-small checkpoints/esan-snli-small --suite nli \\
        --data-dir ../shared/data --json

MFT tests come from nlivis's templates and lexicons; INV / DIR tests edit dev pairs found under --data-dir
(SNLI dev and MultiNLI dev matched for nli, Quora dev for paraphrase), and the overlap of those cases with
each checkpoint's recorded training split is counted. Progress goes to stderr.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from nlivis.analysis.edit_runs import task_of
from nlivis.analysis.probes import DEFAULT_CASES_PER_TEST, DEV_SPLITS
from nlivis.cli.common import fail, positive_int, seed
from nlivis.data.protocols import SplitRef, find_split_file
from nlivis.cli.edits import short_name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoints", nargs="+", help="checkpoint folders (one task, matching --suite)")
    parser.add_argument("--suite", required=True, choices=["nli", "paraphrase"], help="which suite to run")
    parser.add_argument("--data-dir", default=None, help="data root holding the dev sets the INV / DIR tests edit "
                        "(snli/esnli_tokenized and mnli_dev for nli, quora for paraphrase, as in ../shared/data) and "
                        "the checkpoints' training splits for the overlap count (default: none — template tests only)")
    parser.add_argument("--max-cases", type=positive_int, default=None, help="at most this many cases per test "
                        "(default: 110, nlivis.analysis.probes.DEFAULT_CASES_PER_TEST)")
    parser.add_argument("--seed", type=seed, default=1, help="seed of the template sampling and the dev-pair order")
    parser.add_argument("--json", action="store_true", help="print JSON (tests with their cases, failures per model "
                        "with the failing cases, McNemar comparisons, training overlap) instead of a table")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown (the README's) "
                        "instead of plain text")
    parser.add_argument("--cache-dir", default=None, help="folder for the built suite and the spaCy feature cache "
                        "(default: ~/.cache/nlivis, or $NLIVIS_CACHE_DIR)")
    parser.add_argument("--include-off", action="store_true", help="also run the tests switched off by default "
                        "because the hand-judged audit found their expected labels or grammar short of the targets "
                        "(python -m nlivis audit; default: off, and --json lists them under switched_off)")


def run(args: argparse.Namespace) -> int:
    from nlivis.workflows.edits import load_checkpoints
    from nlivis.workflows.probes import ProbeOptions, probe_models, stderr_progress

    per_test = args.max_cases or DEFAULT_CASES_PER_TEST
    problem = data_dir_problem(args.suite, args.data_dir, stderr_progress)
    if problem:
        return fail(problem, args.json)
    loaded = load_checkpoints(args.checkpoints)
    task = task_of(loaded)
    if task != args.suite:
        return fail(f"--suite {args.suite} does not fit these checkpoints: they are {task} models", args.json)
    stderr_progress(f"probe: building the {args.suite} suite ({per_test} cases per test, seed {args.seed})")
    if args.data_dir is None:
        stderr_progress("probe: no --data-dir, so only the template (MFT) tests run")
    options = ProbeOptions(args.suite, args.data_dir, per_test, args.seed, args.cache_dir, args.include_off)
    record = probe_models(loaded, options, progress=stderr_progress).record()
    if args.json:
        print(json.dumps(record, indent=1, ensure_ascii=False))
    elif args.markdown:
        print(format_probe_markdown(record))
    else:
        print(format_probe_table(record))
    return 0


def data_dir_problem(suite: str, data_dir: str | None, progress: Any) -> str | None:
    """Why `--data-dir` cannot feed the INV / DIR tests (not a folder, or none of the suite's dev splits in it),
    or None; dev splits that are absent while others are present are named through `progress`, since their
    tests are then drawn from the others only."""
    if data_dir is None:
        return None
    if not Path(data_dir).is_dir():
        return f"--data-dir {data_dir} is not a folder; give the data root (as ../shared/data) or leave it out for " \
               "the template (MFT) tests only"
    missing = [f"{dataset} {split} ({folder})" for dataset, split, folder in DEV_SPLITS[suite]
               if find_split_file(SplitRef(dataset, split, folder), data_dir) is None]
    if len(missing) == len(DEV_SPLITS[suite]):
        return (f"--data-dir {data_dir} holds none of the {suite} dev splits the INV / DIR tests edit "
                f"({', '.join(missing)}); give the data root or leave --data-dir out for the template tests only")
    if missing:
        progress(f"probe: not under {data_dir}, so the INV / DIR tests draw from the other dev splits only: "
                 f"{', '.join(missing)}")
    return None


def format_probe_table(record: dict[str, Any]) -> str:
    """Capability × test rows, one column per model: failure rate (%) with its Wilson 95% interval."""
    names = list(record["checkpoints"])
    lines = [f"{'capability':<32}{'test':<52}{'type':<5}{'generator':<12}{'cases':>6}  "
             + "".join(f"{short_name(n)[:20]:<22}" for n in names)]
    previous = None
    for test in record["tests"]:
        capability = test["capability"] if test["capability"] != previous else ""
        previous = test["capability"]
        cells = []
        for name in names:
            entry = test["by_model"][name]
            if entry["rate"] is None:
                cells.append(f"{'—':<22}")
            else:
                low, high = entry["interval"]
                cells.append(f"{100 * entry['rate']:5.1f} [{100 * low:4.1f}, {100 * high:5.1f}]".ljust(22))
        lines.append(f"{capability[:31]:<32}{test['name'][:51]:<52}{test['type']:<5}{test['generator']:<12}"
                     f"{test['cases']:>6}  "
                     + "".join(cells))
    lines += ["", "failure rate % [Wilson 95% interval]; a DIR / INV case compares an edited dev pair with the original",
              "generator: engine = built by the same edit engine or lexicons as train --augment, independent = "
              "written without them; only independent tests and held-out files speak for an augmentation's fix"]
    if len(names) == 2:
        lines += ["", f"McNemar exact, {short_name(names[0])} vs {short_name(names[1])} (Holm over all tests):"]
        for row in record["comparisons"]:
            lines.append(f"  {row['name'][:51]:<52} only {short_name(names[0])[:12]} fails {row['only_a_fails']:>4}, "
                         f"only {short_name(names[1])[:12]} fails {row['only_b_fails']:>4}, p = {row['p']:.3g} "
                         f"(Holm {row['p_holm']:.3g})")
    for name in names:
        overlap = record["checkpoints"][name]["training_overlap"]
        if not overlap["checked"]:
            lines.append(f"{name}: training overlap of its {overlap['cases_checked']:,} dev-built cases not checked: "
                         f"{overlap['reason']}")
        else:
            lines.append(f"{name}: of {overlap['cases_checked']:,} dev-built cases, {overlap['pairs']} pairs, "
                         f"{overlap['premises']} premises and {overlap['hypotheses']} hypotheses occur in its training "
                         f"split ({overlap['split']}, normalised text)")
    lines += sorted({entry["protocol_note"] for entry in record["checkpoints"].values() if entry["protocol_note"]})
    return "\n".join(lines)


def format_probe_markdown(record: dict[str, Any]) -> str:
    """The same table as markdown: one row per test, failure rate % [Wilson 95% interval] per model."""
    names = list(record["checkpoints"])
    lines = ["| capability | test | type | generator | cases | " + " | ".join(short_name(n) for n in names) + " |",
             "|---|---|---|---|---|" + "---|" * len(names)]
    for test in record["tests"]:
        cells = []
        for name in names:
            entry = test["by_model"][name]
            if entry["rate"] is None:
                cells.append("—")
            else:
                low, high = entry["interval"]
                cells.append(f"{100 * entry['rate']:.1f} [{100 * low:.1f}, {100 * high:.1f}]")
        lines.append(f"| {test['capability']} | {test['name']} | {test['type']} | {test['generator']} | {test['cases']} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)
