"""The tagger measured against gold tags: agreement arithmetic on hand-made tags, and (with
../shared/data) the RepEval annotation release joined to the MultiNLI dev sets."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from nlivis.analysis.tag_report import load_annotated_pairs, markdown_table, tag_agreement
from nlivis.analysis.tags import TAGS

GOLD = {"a": frozenset({"NEGATION", "MODAL"}), "b": frozenset({"NEGATION"}), "c": frozenset(),
        "d": frozenset({"MODAL"})}
AUTOMATIC = {"a": frozenset({"NEGATION"}), "b": frozenset({"NEGATION", "MODAL"}), "c": frozenset({"NEGATION"}),
             "d": frozenset(), "e": frozenset({"MODAL"})}  # "e" has no gold tags: not scored


def test_tag_agreement_counts_precision_recall_f1():
    table = tag_agreement(GOLD, AUTOMATIC).set_index("tag")
    negation = table.loc["NEGATION"]
    assert (negation["gold"], negation["automatic"], negation["true_positive"]) == (2, 3, 2)
    assert negation["precision"] == pytest.approx(2 / 3) and negation["recall"] == 1.0
    assert negation["f1"] == pytest.approx(0.8)
    modal = table.loc["MODAL"]  # gold a, d; automatic b → no overlap
    assert (modal["true_positive"], modal["precision"], modal["recall"], modal["f1"]) == (0, 0.0, 0.0, 0.0)
    belief = table.loc["BELIEF"]
    assert math.isnan(belief["precision"]) and math.isnan(belief["recall"]) and math.isnan(belief["f1"])
    assert list(table.index) == list(TAGS)


def test_markdown_table_has_a_line_per_tag_and_the_rules():
    report = tag_agreement(GOLD, AUTOMATIC, "matched")
    both = report.assign(subset="mismatched")
    text = markdown_table(pd.concat([report, both, report.assign(subset="all")]))
    assert "| NEGATION | 2 | 3 | 0.67 | 1.00 | 0.80 | 0.80 | 0.80 |" in text
    assert "| BELIEF | 0 | 0 | – | – | – | – | – |" in text
    assert "- **COREF**:" in text


def test_annotated_pairs_join_the_dev_sets(shared_data):
    matched = load_annotated_pairs(shared_data, "matched")
    assert len(matched.pairs) == 495 and matched.ambiguous == ()
    mismatched = load_annotated_pairs(shared_data, "mismatched")
    assert len(mismatched.pairs) == 492 and len(mismatched.ambiguous) == 3  # pairIDs the dev file repeats
    pair_id, pair = next(iter(matched.pairs.items()))
    assert pair.id == pair_id and pair.premise and pair.label in ("entailment", "neutral", "contradiction")
