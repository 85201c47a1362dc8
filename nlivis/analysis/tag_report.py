"""The automatic tagger measured against the human tags of the RepEval 2017 MultiNLI annotation release.

    python -m nlivis tags-report --data-dir ../shared/data [--json] [--show-errors TAG]

The release tags 495 dev matched and 495 dev mismatched pairs by hand (`mnli_annotations/`); their
sentences are in the full dev sets (`mnli_dev/`), joined by pairID. Every annotated pair is tagged by
`tags.tag_pairs` and compared with its gold tags: per tag and subset the gold count, the automatic
count, true positives, precision, recall and F1. `--show-errors TAG` lists the pairs behind a tag's
misses and false alarms, to read when improving a rule (never to copy into one).
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from nlivis.analysis.tags import TAG_METHODS, TAGS
from nlivis.data.records import Pair

SUBSETS = ("matched", "mismatched")
REPORT_COLUMNS = ["subset", "tag", "gold", "automatic", "true_positive", "precision", "recall", "f1"]


@dataclass
class AnnotatedPairs:
    """One annotated subset: its pairs (pairID → Pair) and their gold tags."""

    subset: str
    pairs: dict[str, Pair]
    gold: dict[str, frozenset[str]]
    ambiguous: tuple[str, ...] = ()
    """Gold-tagged pairIDs that the dev file gives to two pairs: which one was tagged is unknown, so
    they are left out (3 in mismatched)."""


def load_annotated_pairs(data_root: str | Path, subset: str) -> AnnotatedPairs:
    """The gold-tagged pairs of dev `subset` (matched / mismatched) with their sentences; a pairID of the
    tag file missing from the dev set is an error naming both files."""
    from nlivis.analysis.tags import read_tag_file
    from nlivis.data.protocols import SplitRef, gold_tag_file, read_split

    ref = SplitRef("mnli", f"dev_{subset}", "mnli_dev")
    tag_path = gold_tag_file(ref, data_root)
    if tag_path is None:
        raise FileNotFoundError(f"no gold annotation file for MultiNLI dev {subset} under {data_root} "
                                "(expected mnli_annotations/multinli_1.0_{subset}_annotations.txt)")
    gold = read_tag_file(tag_path)  # validated before the dev set is read
    result = read_split(ref, data_root)
    ambiguous = tuple(sorted(set(gold) & set(result.ambiguous_ids)))
    gold = {pair_id: names for pair_id, names in gold.items() if pair_id not in ambiguous}
    by_id = {pair.id: pair for pair in result.pairs}
    missing = sorted(set(gold) - set(by_id))
    if missing:
        raise ValueError(f"{tag_path}: {len(missing)} pairID(s) not among the labelled pairs of {result.path}, "
                         f"e.g. {missing[:3]}")
    return AnnotatedPairs(subset, {pair_id: by_id[pair_id] for pair_id in gold}, gold, ambiguous)


def _scores(gold: set[str], automatic: set[str]) -> dict:
    true_positive = len(gold & automatic)
    precision = true_positive / len(automatic) if automatic else float("nan")
    recall = true_positive / len(gold) if gold else float("nan")
    if precision != precision or recall != recall:
        f1 = float("nan")
    else:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"gold": len(gold), "automatic": len(automatic), "true_positive": true_positive,
            "precision": precision, "recall": recall, "f1": f1}


def tag_agreement(gold: Mapping[str, frozenset[str]], automatic: Mapping[str, frozenset[str]],
                  subset: str = "all", tags: Sequence[str] = TAGS) -> pd.DataFrame:
    """Precision, recall and F1 of `automatic` against `gold` per tag, over the pairs `gold` lists
    (NaN where undefined: no automatic tag, or no gold tag)."""
    rows = []
    for tag in tags:
        gold_ids = {pair_id for pair_id, names in gold.items() if tag in names}
        automatic_ids = {pair_id for pair_id in gold if tag in automatic.get(pair_id, ())}
        rows.append({"subset": subset, "tag": tag, **_scores(gold_ids, automatic_ids)})
    return pd.DataFrame(rows, columns=REPORT_COLUMNS)


def tagger_report(data_root: str | Path) -> tuple[pd.DataFrame, dict[str, AnnotatedPairs], dict[str, frozenset[str]]]:
    """(per-tag agreement for matched, mismatched and both together; the annotated subsets; the
    automatic tags of every annotated pair)."""
    from nlivis.analysis.tags import tag_pairs

    subsets = {subset: load_annotated_pairs(data_root, subset) for subset in SUBSETS}
    pairs = [pair for annotated in subsets.values() for pair in annotated.pairs.values()]
    automatic = tag_pairs(pairs)
    tables = [tag_agreement(annotated.gold, automatic, subset) for subset, annotated in subsets.items()]
    every_gold = {pair_id: names for annotated in subsets.values() for pair_id, names in annotated.gold.items()}
    tables.append(tag_agreement(every_gold, automatic, "all"))
    return pd.concat(tables, ignore_index=True), subsets, automatic


def markdown_table(report: pd.DataFrame) -> str:
    """The README's table: one row per tag, F1 for matched / mismatched and P / R / F1 over all 990 pairs."""
    pivot = {subset: report[report["subset"] == subset].set_index("tag") for subset in (*SUBSETS, "all")}
    lines = ["| tag | gold | automatic | precision | recall | F1 | F1 matched | F1 mismatched |",
             "|---|---|---|---|---|---|---|---|"]

    def number(value: float) -> str:
        return "–" if value != value else f"{value:.2f}"

    for tag in pivot["all"].index:
        row = pivot["all"].loc[tag]
        lines.append(f"| {tag} | {row['gold']} | {row['automatic']} | {number(row['precision'])} | "
                     f"{number(row['recall'])} | {number(row['f1'])} | {number(pivot['matched'].loc[tag, 'f1'])} | "
                     f"{number(pivot['mismatched'].loc[tag, 'f1'])} |")
    lines += ["", "What each rule sees and cannot see (`nlivis.analysis.tags.TAG_METHODS`):", ""]
    lines += [f"- **{tag}**: {TAG_METHODS[tag]}" for tag in pivot["all"].index]
    return "\n".join(lines)


def tags_report_command(args) -> int:
    """`python -m nlivis tags-report --data-dir DIR [--json] [--markdown] [--show-errors TAG]`."""
    report, subsets, automatic = tagger_report(args.data_dir)
    if args.json:
        print(json.dumps(json.loads(report.to_json(orient="records")), indent=1))
    elif args.markdown:
        print(markdown_table(report))
    else:
        print(report.round(3).to_string(index=False))
    for annotated in subsets.values():
        if annotated.ambiguous:
            print(f"note: {annotated.subset}: {len(annotated.ambiguous)} gold-tagged pairID(s) name two dev pairs "
                  f"each and are left out: {', '.join(annotated.ambiguous)}", file=sys.stderr)
    if args.show_errors:
        tag = args.show_errors
        for annotated in subsets.values():
            for pair_id, pair in annotated.pairs.items():
                in_gold, in_automatic = tag in annotated.gold[pair_id], tag in automatic[pair_id]
                if in_gold != in_automatic:
                    kind = "missed" if in_gold else "false alarm"
                    print(f"\n[{kind}] {annotated.subset} {pair_id}\n  P: {pair.premise}\n  H: {pair.hypothesis}")
    return 0
