"""The automatic tagger measured against the human tags of the RepEval 2017 MultiNLI annotation release.

    python -m nlivis tags-report --data-dir ../shared/data [--json] [--show-errors TAG]

The release tags 495 dev matched and 495 dev mismatched pairs by hand (`mnli_annotations/`); their
sentences are in the full dev sets (`mnli_dev/`), joined by pairID. Every annotated pair is tagged by
`tags.tag_pairs` and compared with its gold tags: per tag and subset the gold count, the automatic
count, true positives, precision, recall and F1, and a status: "unavailable" where a tag cannot be decided
here (ANTO and PARAPHRASE without WordNet: no number is shown for them, never a recall of 0), "approximate"
where its F1 is below 0.5 on either half. The rules were tuned on both halves (`tags.RULES_TUNED_ON`), so
the per-half numbers are in-sample; the report says so. `--show-errors TAG` lists the pairs behind a tag's
misses and false alarms, to read when improving a rule (never to copy into one).
"""
from __future__ import annotations

import json
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from nlivis.analysis.tags import (APPROXIMATE_F1, RULES_TUNED_ON, TAG_METHODS, TAGS, read_tag_file, tag_pairs,
                                  unavailable_tags)
from nlivis.data.records import Pair
from nlivis.data.protocols import SplitRef, gold_tag_file, read_split

SUBSETS = ("matched", "mismatched")
REPORT_COLUMNS = ["subset", "tag", "gold", "automatic", "true_positive", "precision", "recall", "f1", "status"]


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
                  subset: str = "all", tags: Sequence[str] = TAGS,
                  unavailable: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Precision, recall and F1 of `automatic` against `gold` per tag, over the pairs `gold` lists
    (NaN where undefined: no automatic tag, or no gold tag). A tag in `unavailable` (tag → reason) has no
    automatic count and no scores, and says why in `status`: the tagger could not decide it, which is not
    a recall of 0."""
    unavailable = dict(unavailable or {})
    rows = []
    for tag in tags:
        gold_ids = {pair_id for pair_id, names in gold.items() if tag in names}
        if tag in unavailable:
            rows.append({"subset": subset, "tag": tag, "gold": len(gold_ids), "automatic": float("nan"),
                         "true_positive": float("nan"), "precision": float("nan"), "recall": float("nan"),
                         "f1": float("nan"), "status": f"unavailable: {unavailable[tag]}"})
            continue
        automatic_ids = {pair_id for pair_id in gold if tag in automatic.get(pair_id, ())}
        rows.append({"subset": subset, "tag": tag, **_scores(gold_ids, automatic_ids), "status": "ok"})
    return pd.DataFrame(rows, columns=REPORT_COLUMNS)


def with_quality_status(report: pd.DataFrame) -> pd.DataFrame:
    """The report with `status` "approximate" for every row of a tag whose F1 is below `tags.APPROXIMATE_F1`
    on either half (matched, mismatched) of this report."""
    halves = report[report["subset"].isin(SUBSETS)]
    worst = halves.groupby("tag")["f1"].min()
    low = {tag for tag, f1 in worst.items() if f1 == f1 and f1 < APPROXIMATE_F1}
    report = report.copy()
    mark = report["tag"].isin(low) & (report["status"] == "ok")
    report.loc[mark, "status"] = f"approximate: F1 below {APPROXIMATE_F1} on a half"
    return report


def tagger_report(data_root: str | Path) -> tuple[pd.DataFrame, dict[str, AnnotatedPairs], dict[str, frozenset[str]]]:
    """(per-tag agreement for matched, mismatched and both together; the annotated subsets; the
    automatic tags of every annotated pair)."""
    subsets = {subset: load_annotated_pairs(data_root, subset) for subset in SUBSETS}
    pairs = [pair for annotated in subsets.values() for pair in annotated.pairs.values()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what cannot be decided is in the report's status column
        automatic = tag_pairs(pairs)
    unavailable = unavailable_tags()
    tables = [tag_agreement(annotated.gold, automatic, subset, unavailable=unavailable)
              for subset, annotated in subsets.items()]
    every_gold = {pair_id: names for annotated in subsets.values() for pair_id, names in annotated.gold.items()}
    tables.append(tag_agreement(every_gold, automatic, "all", unavailable=unavailable))
    return with_quality_status(pd.concat(tables, ignore_index=True)), subsets, automatic


def markdown_table(report: pd.DataFrame) -> str:
    """The README's table: one row per tag, F1 on matched and on mismatched (the worse one decides the
    status), and P / R / F1 over both; an unavailable tag reads "unavailable", never a number."""
    pivot = {subset: report[report["subset"] == subset].set_index("tag") for subset in (*SUBSETS, "all")}
    lines = [f"Rules tuned on {RULES_TUNED_ON}", "",
             "| tag | gold | automatic | precision | recall | F1 (both halves) | F1 matched | F1 mismatched | status |",
             "|---|---|---|---|---|---|---|---|---|"]

    def number(value: float) -> str:
        return "–" if value != value else f"{value:.2f}"

    for tag in pivot["all"].index:
        row = pivot["all"].loc[tag]
        status = str(row.get("status", "ok"))
        if status.startswith("unavailable"):
            lines.append(f"| {tag} | {row['gold']} | unavailable | unavailable | unavailable | unavailable | "
                         f"unavailable | unavailable | {status} |")
            continue
        lines.append(f"| {tag} | {row['gold']} | {int(row['automatic'])} | {number(row['precision'])} | "
                     f"{number(row['recall'])} | {number(row['f1'])} | {number(pivot['matched'].loc[tag, 'f1'])} | "
                     f"{number(pivot['mismatched'].loc[tag, 'f1'])} | {status.split(':')[0]} |")
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
        print(f"\nrules tuned on {RULES_TUNED_ON}")
    for annotated in subsets.values():
        if annotated.ambiguous:
            print(f"note: {annotated.subset}: {len(annotated.ambiguous)} gold-tagged pairID(s) name two dev pairs "
                  f"each and are left out: {', '.join(annotated.ambiguous)}", file=sys.stderr)
    if args.show_errors:
        tag = args.show_errors
        missing = unavailable_tags()
        if tag in missing:
            print(f"no errors to list: {missing[tag]}", file=sys.stderr)
            return 0
        for annotated in subsets.values():
            for pair_id, pair in annotated.pairs.items():
                in_gold, in_automatic = tag in annotated.gold[pair_id], tag in automatic[pair_id]
                if in_gold != in_automatic:
                    kind = "missed" if in_gold else "false alarm"
                    print(f"\n[{kind}] {annotated.subset} {pair_id}\n  P: {pair.premise}\n  H: {pair.hypothesis}")
    return 0
