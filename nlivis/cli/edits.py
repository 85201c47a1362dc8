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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nlivis.analysis.edit_runs import EditRun

CHECKPOINTS_HELP = "checkpoint folders (one task: all NLI or all paraphrase)"
JSON_HELP = "print JSON (the original's predictions and one record per edit) instead of a table"


def print_text(run: EditRun, args: argparse.Namespace) -> None:
    """`format_edit_table` of the run."""
    print(format_edit_table(run.record()))


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
