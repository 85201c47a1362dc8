"""How right the edit engine and the probe suite are, against the hand-judged audit set: expected-label
precision and grammaticality per edit kind and per probe test, each with its Wilson 95% interval.

    python -m nlivis audit --data-dir ../shared/data
    python -m nlivis audit --data-dir ../shared/data --json

The items are drawn with today's engine from SNLI dev in a seeded order (nlivis.analysis.audit says how) and
matched to the judgements in nlivis/data/audit/ (edits.jsonl, probes.jsonl, counterparts.jsonl: pair ids, the edit in words and
the judgement, never a dataset sentence). Only drawn items with a judgement count; `pending` counts the drawn
items waiting for one (the engine proposes something not judged yet), `stale` the judgements whose edit is
no longer drawn and `no_longer_proposed` those whose edit the engine no longer proposes on its pair at all.
--pending prints the waiting items with their texts, one JSON line each, for a reviewer.
"""
from __future__ import annotations

import argparse
import json

from nlivis.analysis.audit import drawn_as_json
from nlivis.workflows.audit import run_audit

SECTION_CHOICES = ("edits", "probes", "counterparts")
TABLE_HEADER = ("stratum", "judged", "label precision", "95% interval", "grammatical", "95% interval")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", required=True, help="data root holding snli/esnli_tokenized/ (e.g. "
                        "../shared/data): the audited items are made again from its SNLI dev pairs by id")
    parser.add_argument("--section", choices=SECTION_CHOICES, default=None,
                        help="audit only the edits, the probe cases or the counterparts that augmentation "
                        "adds (default: all)")
    parser.add_argument("--json", action="store_true", help="print JSON ({edits: {judged, label_precision, "
                        "grammatical, by_kind, drawn, pending, stale, no_longer_proposed}, probes: {… by_test …}, seed, floors}) instead "
                        "of a table")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown (the README's) instead "
                        "of plain text")
    parser.add_argument("--pending", action="store_true", help="instead of the numbers, print every drawn item "
                        "that has no judgement yet, one JSON line each with its original and edited texts (for the "
                        "reviewer who judges them)")


def run(args: argparse.Namespace) -> int:
    sections = (args.section,) if args.section else SECTION_CHOICES
    audit = run_audit(args.data_dir, sections)
    if args.pending:
        for section in sections:
            for item in audit.pending(section):
                print(drawn_as_json(item))
        return 0
    record = audit.summary()
    if args.json:
        print(json.dumps(record, indent=1, ensure_ascii=False))
    else:
        print(format_audit_table(record, markdown=args.markdown))
    return 0


def _share(found: dict) -> tuple[str, str]:
    if not found["of"]:
        return "—", ""
    low, high = found["interval"]
    return f"{found['rate']:.1%} ({found['right']}/{found['of']})", f"{low:.1%}–{high:.1%}"


def _rows(section: dict, by: str) -> list[tuple[str, ...]]:
    rows = [(stratum + (" (off by default)" if tally["switched_off"] else ""), str(tally["judged"]),
             *_share(tally["label_precision"]), *_share(tally["grammatical"]))
            for stratum, tally in section[by].items()]
    rows.append(("all on by default", str(section["judged"]), *_share(section["label_precision"]),
                 *_share(section["grammatical"])))
    every = section["with_switched_off"]
    rows.append(("all, with those off", str(every["judged"]), *_share(every["label_precision"]),
                 *_share(every["grammatical"])))
    return rows


def format_audit_table(record: dict, markdown: bool = False) -> str:
    """Per section a table of its strata and the whole, then coverage (pending, stale) and the floors."""
    lines = []
    floors = record["floors"]
    for section, by in (("edits", "by_kind"), ("probes", "by_test"), ("counterparts", "by_stratum")):
        if section not in record:
            continue
        found = record[section]
        name = {"edits": "edit kind", "probes": "probe test", "counterparts": "counterpart"}[section]
        rows = [(name, *TABLE_HEADER[1:]), *_rows(found, by)]
        if markdown:
            lines += [f"**{section}**", "", "| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
            lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
        else:
            widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
            lines += [section] + ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
        lines += ["", f"{found['drawn']} drawn, {found['pending']} waiting for a judgement, {found['stale']} "
                  f"judgement(s) of edits no longer drawn ({found['no_longer_proposed']} no longer proposed)", ""]
        bullet = "- " if markdown else ""
        lines += [f"{bullet}below floor: {problem}" for tally in found[by].values() for problem in tally["below_floor"]]
        lines += [f"{bullet}{stratum}: off by default — {tally['switched_off']}"
                  for stratum, tally in found[by].items() if tally["switched_off"]]
        lines.append("")
    lines.append(f"Floors: label precision ≥ {floors['label_precision']:.0%}, grammatical ≥ "
                 f"{floors['grammatical']:.0%} on every stratum judged on ≥ {floors['min_cases']} items; seed "
                 f"{record['seed']}.")
    return "\n".join(lines)
