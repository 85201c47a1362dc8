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
from typing import TYPE_CHECKING, Any

from nlivis.cli.edits import short_name

if TYPE_CHECKING:
    from nlivis.workflows.probes import ProbeRun

CHECKPOINTS_HELP = "checkpoint folders (one task, matching --suite)"
JSON_HELP = ("print JSON (tests with their cases, failures per model with the failing cases, McNemar comparisons, "
             "training overlap) instead of a table")


def add_display_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown (the README's) "
                        "instead of plain text")


def print_text(run: ProbeRun, args: argparse.Namespace) -> None:
    """The failure-rate table of the run, plain or (--markdown) markdown."""
    record = run.record()
    print(format_probe_markdown(record) if args.markdown else format_probe_table(record))


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
