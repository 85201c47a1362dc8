"""How good the automatic tags are, said wherever they are used: the tagger report per half with the tags
whose F1 is below 0.5 on a half marked approximate (and so in every breakdown), and a tag that cannot be
decided without WordNet shown as unavailable everywhere (tags-report, evaluate --by-tag, the Table 7 layout),
never as a count or a recall of 0."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from nlivis.analysis import tag_report, tags as tagging
from nlivis.analysis.breakdown import (TaggedSplit, accuracy_by_tag_and_source, table7_long, table7_with_counts,
                                       with_status_marks)
from nlivis.store.predictions import Prediction
from nlivis.analysis.tag_report import AnnotatedPairs, markdown_table, tag_agreement, with_quality_status
from nlivis.analysis.tags import TAG_QUALITY, TAGS, approximate_tags
from nlivis.features.wordnet import WordNetUnavailable
from nlivis.cli import main
from nlivis.data.records import Pair
from tests.fixtures.training.helpers import FIXTURE_DIR, trained_tiny


@pytest.fixture
def no_wordnet(monkeypatch):
    """WordNet as on a machine without it."""
    def missing():
        raise WordNetUnavailable("apt-get install wordnet-base wordnet-sense-index")

    monkeypatch.setattr(tagging, "load_wordnet", missing)


def report_rows(f1_matched: float, f1_mismatched: float) -> pd.DataFrame:
    rows = [{"subset": subset, "tag": "COREF", "gold": 10, "automatic": 10, "true_positive": 5, "precision": f1,
             "recall": f1, "f1": f1, "status": "ok"}
            for subset, f1 in (("matched", f1_matched), ("mismatched", f1_mismatched),
                               ("all", (f1_matched + f1_mismatched) / 2))]
    return pd.DataFrame(rows)


def test_a_tag_is_approximate_when_either_half_is_below_one_half():
    """The held-out question per half: 0.9 on matched (where a rule was tuned) says nothing for 0.3 on
    mismatched; the worse half decides, even when both halves together reach 0.6."""
    assert set(with_quality_status(report_rows(0.9, 0.3))["status"]) == {"approximate: F1 below 0.5 on a half"}
    assert set(with_quality_status(report_rows(0.3, 0.9))["status"]) == {"approximate: F1 below 0.5 on a half"}
    assert set(with_quality_status(report_rows(0.6, 0.55))["status"]) == {"ok"}


def test_the_recorded_quality_marks_the_six_judgement_tags_approximate():
    marked = approximate_tags()
    assert set(marked) == {tag for tag, halves in TAG_QUALITY.items() if min(halves) < 0.5}
    assert set(marked) == {"WORD_OVERLAP", "TENSE_DIFFERENCE", "ACTIVE/PASSIVE", "PARAPHRASE",
                           "QUANTITY/TIME_REASONING", "COREF"}
    assert "0.29 on MultiNLI dev matched / 0.24 mismatched" in marked["COREF"]
    assert set(TAG_QUALITY) == set(TAGS)


def test_breakdowns_mark_approximate_automatic_tags_but_not_gold_ones():
    predictions = [Prediction(str(i), "entailment", "entailment", (1.0, 0.0, 0.0)) for i in range(4)]
    gold = {"0": frozenset({"COREF"}), "1": frozenset({"NEGATION"})}
    automatic = {"2": frozenset({"COREF"}), "3": frozenset({"NEGATION"})}
    table = accuracy_by_tag_and_source(predictions, gold, automatic).set_index(["source", "tag"])
    assert table.loc[("gold", "COREF"), "status"] == "ok"
    assert table.loc[("automatic", "COREF"), "status"].startswith("approximate: F1 0.29")
    assert table.loc[("automatic", "COREF"), "count"] == 1  # still counted: approximate, not unavailable
    assert table.loc[("automatic", "NEGATION"), "status"] == "ok"
    marked = with_status_marks(table.reset_index())
    assert "COREF ≈" in set(marked["tag"]) and "NEGATION" in set(marked["tag"])
    long = table7_long({"matched": TaggedSplit({"m": predictions}, automatic)}, source="automatic", unavailable={})
    assert table7_with_counts(long).loc["COREF", "status"].startswith("approximate")


def test_without_wordnet_the_table7_layout_says_unavailable_not_zero(no_wordnet):
    predictions = [Prediction(str(i), "entailment", "neutral", (0.0, 1.0, 0.0)) for i in range(3)]
    automatic = {str(i): frozenset({"NEGATION"}) for i in range(3)}  # tagged without WordNet: no ANTO anywhere
    wide = table7_with_counts(table7_long({"matched": TaggedSplit({"m": predictions}, automatic)}, source="automatic"))
    assert wide.loc["ANTO", "status"].startswith("unavailable: ANTO needs WordNet")
    assert pd.isna(wide.loc["ANTO", "matched pairs"]) and wide.loc["ANTO", "matched m"] == ""
    assert wide.loc["PARAPHRASE", "status"].startswith("unavailable")


def test_tag_agreement_without_wordnet_has_no_numbers_for_the_tags_it_cannot_decide():
    gold = {"a": frozenset({"ANTO"}), "b": frozenset()}
    table = tag_agreement(gold, {"a": frozenset(), "b": frozenset()},
                          unavailable={"ANTO": "ANTO needs WordNet: install it"}).set_index("tag")
    anto = table.loc["ANTO"]
    assert anto["gold"] == 1 and all(math.isnan(anto[c]) for c in ("automatic", "precision", "recall", "f1"))
    assert anto["status"] == "unavailable: ANTO needs WordNet: install it"
    text = markdown_table(pd.concat([table.reset_index().assign(subset=s) for s in ("matched", "mismatched", "all")]))
    assert "| ANTO | 1 | unavailable |" in text and "Rules tuned on both halves" in text


def test_tags_report_without_wordnet_prints_unavailable_not_a_recall_of_zero(no_wordnet, monkeypatch, capsys):
    halves = {
        "matched": AnnotatedPairs("matched", {"m1": Pair("m1", "The soup is hot.", "The soup is cold.", "contradiction")},
                                  {"m1": frozenset({"ANTO"})}),
        "mismatched": AnnotatedPairs("mismatched", {"x1": Pair("x1", "A man is not here.", "A man is here.",
                                                               "contradiction")}, {"x1": frozenset({"NEGATION"})}),
    }
    monkeypatch.setattr(tag_report, "load_annotated_pairs", lambda root, subset: halves[subset])
    assert main(["tags-report", "--data-dir", "unused", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "| ANTO | 1 | unavailable | unavailable |" in out and "| PARAPHRASE | 0 | unavailable |" in out
    assert "| NEGATION | 1 | 1 | 1.00 | 1.00 | 1.00 |" in out
    assert main(["tags-report", "--data-dir", "unused", "--json"]) == 0
    records = [r for r in json.loads(capsys.readouterr().out) if r["tag"] == "ANTO"]
    assert {r["recall"] for r in records} == {None} and all(r["status"].startswith("unavailable") for r in records)


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    return trained_tiny(tmp_path_factory.mktemp("quality"))


def test_evaluate_by_tag_without_wordnet_reports_unavailable_and_marks_approximate(trained, no_wordnet, capsys):
    code = main(["evaluate", str(trained), "--dataset", "snli", "--split", "dev", "--data-dir", str(FIXTURE_DIR),
                 "--by-tag", "--json", "--cache-dir", str(trained.parent / "cache")])
    output = json.loads(capsys.readouterr().out)
    assert code == 0
    rows = {row["tag"]: row for row in output["by_tag"] if row["source"] == "automatic"}
    for tag in ("ANTO", "PARAPHRASE"):
        assert rows[tag]["count"] is None and rows[tag]["accuracy"] is None
        assert rows[tag]["status"].startswith(f"unavailable: {tag} needs WordNet")
    assert rows["COREF"]["status"].startswith("approximate") and rows["NEGATION"]["status"] == "ok"


@pytest.fixture(scope="module")
def measured_report() -> pd.DataFrame:
    """`tags-report` on ../shared/data (the RepEval annotations joined to MultiNLI dev, every pair parsed and
    tagged: the slow part), once for the tests that read it."""
    from tests.conftest import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (set NLIVIS_SHARED_DATA to its path)")
    return tag_report.tagger_report(SHARED_DATA)[0]


@pytest.mark.slow
def test_list_and_length_tags_reach_f1_090_against_gold(measured_report):
    """The issue's aim, kept: the six tags a word list or a length defines agree with the annotators."""
    overall = measured_report[measured_report["subset"] == "all"].set_index("tag")["f1"]
    for tag in ("CONDITIONAL", "NEGATION", "QUANTIFIER", "MODAL", "BELIEF", "LONG_SENTENCE"):
        assert overall[tag] >= 0.9, (tag, overall[tag])


@pytest.mark.slow
def test_recorded_tag_quality_is_what_tags_report_measures(measured_report):
    report = measured_report
    measured = {tag: tuple(round(float(report[(report["subset"] == half) & (report["tag"] == tag)]["f1"].iloc[0]), 3)
                           for half in ("matched", "mismatched")) for tag in TAGS}
    assert measured == TAG_QUALITY
