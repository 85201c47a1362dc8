"""The `edits` and `probe` sub-commands: interventions on pairs, run through one or more checkpoints.

    python -m nlivis edits checkpoints/gcnn-snli-small checkpoints/esan-snli-small \\
        --premise "A tall man is playing a guitar." --hypothesis "A man is playing a guitar." --label entailment
    python -m nlivis probe checkpoints/*-snli-small --suite nli --data-dir ../shared/data --json

Every failure a user can cause (bad checkpoint, empty or over-long text, unknown label or kind, missing
data) prints one line and exits 2; with --json the same line is also printed as {"error": …} on stdout.
"""
from __future__ import annotations

import json
import sys
from typing import Any

MAX_TEXT_CHARS = 1000
"""Longest sentence `edits` accepts: every word of it gets edits, and the models read at most a few dozen
tokens anyway."""
PARAPHRASE_LABEL_ALIASES = {"0": "not_duplicate", "1": "duplicate"}


def add_arguments(sub) -> None:
    p = sub.add_parser("edits", help="propose minimal edits of a pair (WordNet substitutions, negation, quantifiers, "
                                     "numbers, names, gender, swap, typo), each with what logic expects, and predict "
                                     "the original and every edit with each checkpoint")
    p.add_argument("checkpoints", nargs="+", help="checkpoint folders (one task: all NLI or all paraphrase)")
    p.add_argument("--premise", required=True, help="the premise (for paraphrase models: the first question)")
    p.add_argument("--hypothesis", required=True, help="the hypothesis (for paraphrase models: the second question)")
    p.add_argument("--label", default=None, help="the original pair's label (entailment / neutral / contradiction, "
                   "or not_duplicate / duplicate, 0 / 1); with it, more edits get a label expectation "
                   "(default: none, so only invariance and direction expectations)")
    p.add_argument("--kinds", default=None, help="comma-separated edit kinds (substitution, number, quantifier, "
                   "negation, name, gender, swap, typo) or substitution relations (synonym, hypernym, hyponym, "
                   "antonym, exclusive) (default: all)")
    p.add_argument("--json", action="store_true", help="print JSON (original predictions and one record per edit) "
                   "instead of a table")

    p = sub.add_parser("probe", help="behavioural test suite (CheckList-style MFT / INV / DIR tests by capability): "
                                     "failure rates with Wilson 95%% intervals per checkpoint, McNemar between them")
    p.add_argument("checkpoints", nargs="+", help="checkpoint folders (one task, matching --suite)")
    p.add_argument("--suite", required=True, choices=["nli", "paraphrase"], help="which suite to run")
    p.add_argument("--data-dir", default=None, help="data root holding the dev sets the INV / DIR tests edit "
                   "(snli/esnli_tokenized, mnli_dev for nli; quora for paraphrase, e.g. ../shared/data) and the "
                   "checkpoints' training splits for the overlap count (default: none — template tests only)")
    p.add_argument("--max-cases", type=int, default=None, help="at most this many cases per test (default: "
                   "nlivis.analysis.probes.DEFAULT_CASES_PER_TEST)")
    p.add_argument("--seed", type=int, default=1, help="seed of the case sampling (default: 1)")
    p.add_argument("--json", action="store_true", help="print JSON (tests, failures per model, failing cases, "
                   "McNemar comparisons, training overlap) instead of a table")
    p.add_argument("--cache-dir", default=None, help="folder for the built suite and the spaCy analyses "
                   "(default: ~/.cache/nlivis, or $NLIVIS_CACHE_DIR)")


def _fail(message: str, as_json: bool) -> int:
    from nlivis.data.text import shown

    if as_json:
        print(json.dumps({"error": message}))
    print(f"error: {shown(message, keep_newlines=True)}", file=sys.stderr)
    return 2


def load_checkpoints(paths: list[str]) -> list:
    """Every checkpoint loaded (CPU), or ValueError naming the one that failed."""
    from nlivis.training.checkpoint import CheckpointError, load_checkpoint

    loaded = []
    for path in paths:
        try:
            loaded.append(load_checkpoint(path))
        except CheckpointError as error:
            raise ValueError(str(error)) from error
    return loaded


def protocol_notes(loaded: list, names: list[str]) -> dict[str, str | None]:
    return {name: (item.config.get("dataset") or {}).get("note") for name, item in zip(names, loaded)}


def _label(value: str | None, task: str) -> str | None:
    from nlivis.analysis.edits import TASK_LABELS

    if value is None:
        return None
    if task == "paraphrase":
        value = PARAPHRASE_LABEL_ALIASES.get(value, value)
    if value not in TASK_LABELS[task]:
        raise ValueError(f"--label {value!r} is not one of this {task} model's labels {list(TASK_LABELS[task])}")
    return value


def edits_command(args) -> int:
    """`python -m nlivis edits CK [CK …] --premise P --hypothesis H [--label L] [--kinds K,…] [--json]`."""
    from nlivis.data.text import text_problem

    for name, text in (("premise", args.premise), ("hypothesis", args.hypothesis)):
        problem = text_problem(text, f"--{name}")
        if problem:
            return _fail(problem, args.json)
        if len(text) > MAX_TEXT_CHARS:
            return _fail(f"the --{name} has {len(text):,} characters; edits take sentences of at most "
                         f"{MAX_TEXT_CHARS:,}", args.json)
    try:
        from nlivis.analysis.edit_runs import checkpoint_names, edit_run_record, run_edits, task_of

        kinds = [k.strip() for k in args.kinds.split(",") if k.strip()] if args.kinds else None
        loaded = load_checkpoints(args.checkpoints)
        task = task_of(loaded)
        run = run_edits(loaded, args.premise, args.hypothesis, _label(args.label, task), kinds)
    except (ValueError, RuntimeError) as error:
        return _fail(str(error), args.json)
    record = edit_run_record(run, protocol_notes(loaded, checkpoint_names(loaded)))
    if args.json:
        print(json.dumps(record, indent=1, ensure_ascii=False))
        return 0
    print(format_edit_table(record))
    return 0


def format_edit_table(record: dict[str, Any]) -> str:
    """One line per edit: what changed, what is expected, and each model's prediction after it (* flipped,
    ✗ expectation not met)."""
    names = list(record["checkpoints"])
    short = {name: name.removesuffix("-snli-small").removesuffix("-mnli-small").removesuffix("-quora-small")
             for name in names}
    original = record["original"]["predictions"]
    lines = [f"premise:    {record['premise']}", f"hypothesis: {record['hypothesis']}",
             f"label:      {record['label'] or '(not given)'}",
             "original:   " + "  ".join(f"{short[n]} {original[n]['label']}" for n in names), ""]
    header = f"{'#':>3} {'kind':<13}{'side':<11}{'change':<28}{'expects':<26}" + "".join(f"{short[n]:<16}" for n in names)
    lines.append(header)
    for number, edit in enumerate(record["edits"], start=1):
        change = edit["change"]
        what = f"{change['word']} → {change['replacement']}" if change["word"] or change["replacement"] else \
            change["relation"]
        if edit["expectation"] == "label":
            expects = edit["expected"]
        elif edit["expectation"] == "direction":
            expects = f"p({edit['expected']}) {edit['direction'].replace('_', ' ')}"
        else:
            expects = edit["expectation"] or "—"
        cells = []
        for name in names:
            mark = ("*" if edit["flipped"][name] else "") + ("✗" if edit["meets_expectation"][name] is False else "")
            cells.append(f"{edit['predictions'][name]['label'][:13] + mark:<16}")
        lines.append(f"{number:>3} {edit['kind']:<13}{edit['side']:<11}{what[:27]:<28}{expects[:25]:<26}" + "".join(cells))
    lines.append("")
    lines.append("* prediction changed from the original's; ✗ expectation not met. Reasons: --json.")
    for note in sorted({entry["protocol_note"] for entry in record["checkpoints"].values() if entry["protocol_note"]}):
        lines.append(note)
    return "\n".join(lines)
