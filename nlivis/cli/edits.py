"""Propose minimal edits of a pair, each with the relation to the original that logic fixes, and run the
original and every edit through each checkpoint.

    python -m nlivis edits checkpoints/gcnn-snli-small checkpoints/esan-snli-small \\
        --premise "A tall man is playing a guitar." --hypothesis "A man is playing a guitar." --label entailment

Kinds: WordNet substitutions (synonym, hypernym, hyponym, antonym) and exclusive co-hyponyms from nlivis's
lexicons, numbers, quantifiers, negation of the main verb, names and gender swapped on both sides, premise
↔ hypothesis, a typo (nlivis.analysis.edits says how each expectation follows). The table marks a changed
prediction with * and a missed expectation with ✗; --json adds each edit's reason and probabilities.
"""
from __future__ import annotations

import argparse
import json
from typing import Any

from nlivis.analysis.edit_runs import EditOptions, task_of
from nlivis.analysis.edit_expectations import TASK_LABELS
from nlivis.cli.common import fail
from nlivis.data.text import text_problem

MAX_TEXT_CHARS = 1000
"""Longest sentence `edits` accepts: every word of it gets edits, and the models read a few dozen tokens."""
PARAPHRASE_LABEL_ALIASES = {"0": "not_duplicate", "1": "duplicate"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoints", nargs="+", help="checkpoint folders (one task: all NLI or all paraphrase)")
    parser.add_argument("--premise", required=True, help="the premise (for paraphrase models: the first question)")
    parser.add_argument("--hypothesis", required=True,
                        help="the hypothesis (for paraphrase models: the second question)")
    parser.add_argument("--label", default=None, help="the original pair's label (entailment / neutral / "
                        "contradiction, or not_duplicate / duplicate, also 0 / 1); with it, more edits get a label "
                        "expectation (default: none, so only invariance and direction expectations)")
    parser.add_argument("--kinds", default=None, help="comma-separated edit kinds (substitution, number, quantifier, "
                        "negation, name, gender, swap, typo) or substitution relations (synonym, hypernym, hyponym, "
                        "antonym, exclusive) (default: all but quantifier, negation, gender and antonym, which the "
                        "hand-judged audit found short of its targets and which are made only when named here: "
                        "nlivis.analysis.edit_filters.OFF_BY_DEFAULT says why)")
    parser.add_argument("--json", action="store_true", help="print JSON (the original's predictions and one record "
                        "per edit) instead of a table")


def task_label(value: str | None, task: str) -> str | None:
    """`--label` as one of the task's label names (paraphrase also takes 0 / 1); ValueError otherwise."""
    if value is None:
        return None
    if task == "paraphrase":
        value = PARAPHRASE_LABEL_ALIASES.get(value, value)
    if value not in TASK_LABELS[task]:
        raise ValueError(f"--label {value!r} is not one of this {task} model's labels {list(TASK_LABELS[task])}")
    return value


def run(args: argparse.Namespace) -> int:
    from nlivis.workflows.edits import edit_pair, load_checkpoints

    for name, text in (("premise", args.premise), ("hypothesis", args.hypothesis)):
        problem = text_problem(text, f"--{name}")
        if problem:
            return fail(problem, args.json)
        if len(text) > MAX_TEXT_CHARS:
            return fail(f"the --{name} has {len(text):,} characters; edits take sentences of at most "
                        f"{MAX_TEXT_CHARS:,}", args.json)
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip()) if args.kinds else None
    loaded = load_checkpoints(args.checkpoints)
    label = task_label(args.label, task_of(loaded))
    record = edit_pair(loaded, EditOptions(args.premise, args.hypothesis, label, kinds)).record()
    if args.json:
        print(json.dumps(record, indent=1, ensure_ascii=False))
    else:
        print(format_edit_table(record))
    return 0


def short_name(name: str) -> str:
    for suffix in ("-snli-small", "-mnli-small", "-quora-small"):
        name = name.removesuffix(suffix)
    return name


def format_edit_table(record: dict[str, Any]) -> str:
    """One line per edit: what changed, what is expected, and each model's prediction after it (* flipped,
    ✗ expectation not met), then the checkpoints' protocol notes."""
    names = list(record["checkpoints"])
    original = record["original"]["predictions"]
    lines = [f"premise:    {record['premise']}", f"hypothesis: {record['hypothesis']}",
             f"label:      {record['label'] or '(not given)'}",
             "original:   " + "  ".join(f"{short_name(n)} {original[n]['label']}" for n in names), "",
             f"{'#':>3} {'kind':<13}{'side':<11}{'change':<28}{'expects':<26}"
             + "".join(f"{short_name(n)[:15]:<16}" for n in names)]
    for number, edit in enumerate(record["edits"], start=1):
        change = edit["change"]
        if change["word"] and change["replacement"]:
            what = f"{change['word']} → {change['replacement']}"
        elif change["word"] or change["replacement"]:
            what = f"−{change['word']}" if change["word"] else f"+{change['replacement']}"
        else:
            what = change["relation"]
        if edit["expectation"] == "label":
            expects = edit["expected"]
        elif edit["expectation"] == "direction":
            expects = f"p({edit['expected']}) {edit['direction'].replace('_', ' ')}"
        else:
            expects = edit["expectation"] or "none"  # logic fixes no label: the edit expects nothing
        cells = "".join(f"{edit['predictions'][n]['label'][:13] + ('*' if edit['flipped'][n] else '') + ('✗' if edit['meets_expectation'][n] is False else ''):<16}"
                        for n in names)
        lines.append(f"{number:>3} {edit['kind']:<13}{edit['side']:<11}{what[:27]:<28}{expects[:25]:<26}{cells}")
    lines += ["", "* prediction changed from the original's; ✗ expectation not met; none: logic fixes no label for the "
              "edit (its expected is null in --json); --json gives each edit's reason."]
    lines += sorted({entry["protocol_note"] for entry in record["checkpoints"].values() if entry["protocol_note"]})
    return "\n".join(lines)
