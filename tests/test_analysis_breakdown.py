"""Breakdown arithmetic on hand-made predictions with hand-counted answers."""
from __future__ import annotations

import math

import pytest

from nlivis.analysis.breakdown import (TaggedSplit, accuracy_by_genre, accuracy_by_label, accuracy_by_tag,
                                       accuracy_by_tag_and_source, compare_models, confusion_matrix, disagreements,
                                       overall_accuracy, pairs_with_tag, per_label_scores, table7, table7_long, table7_with_counts)
from nlivis.analysis.significance import wilson_interval
from nlivis.store.predictions import Prediction

E, N, C = "entailment", "neutral", "contradiction"


def p(pair_id, gold, predicted, probs=(0.6, 0.3, 0.1)):
    return Prediction(pair_id, gold, predicted, tuple(probs))


# gold / predicted for six labelled pairs and one unlabelled one
MODEL_A = [p("1", E, E), p("2", E, N), p("3", N, N), p("4", C, C), p("5", C, E), p("6", N, N),
           p("7", None, E)]
TAGS = {"1": frozenset({"NEGATION", "MODAL"}), "2": frozenset({"NEGATION"}), "3": frozenset(),
        "4": frozenset({"NEGATION"}), "5": frozenset({"MODAL"}), "6": frozenset(),
        "7": frozenset({"NEGATION"})}


def test_accuracy_by_tag_counts_frequency_and_majority():
    table = accuracy_by_tag(MODEL_A, TAGS).set_index("tag")
    negation = table.loc["NEGATION"]
    # pairs 1 (right), 2 (wrong), 4 (right); the unlabelled pair 7 does not count
    assert (negation["count"], negation["correct"]) == (3, 2)
    assert negation["accuracy"] == pytest.approx(2 / 3)
    assert negation["frequency"] == pytest.approx(3 / 6)
    assert negation["majority_label"] == E and negation["majority_accuracy"] == pytest.approx(2 / 3)
    modal = table.loc["MODAL"]
    assert (modal["count"], modal["correct"], modal["accuracy"]) == (2, 1, 0.5)
    belief = table.loc["BELIEF"]
    assert belief["count"] == 0 and math.isnan(belief["accuracy"])
    assert table.attrs["pairs"] == 6
    assert list(table.index[:2]) == ["CONDITIONAL", "WORD_OVERLAP"]


def test_accuracy_by_tag_only_counts_annotated_pairs_and_marks_unavailable():
    subset = {"1": TAGS["1"], "2": TAGS["2"]}
    table = accuracy_by_tag(MODEL_A, subset, unavailable={"ANTO": "needs WordNet"}).set_index("tag")
    assert table.loc["NEGATION", "frequency"] == 1.0
    assert table.loc["MODAL", "count"] == 1
    assert math.isnan(table.loc["ANTO", "count"])
    assert table.loc["ANTO", "status"] == "unavailable: needs WordNet"


def test_accuracy_by_label_and_genre():
    by_label = accuracy_by_label(MODEL_A, labels=(E, N, C)).set_index("label")
    assert by_label.loc[E, "accuracy"] == 0.5 and by_label.loc[N, "accuracy"] == 1.0
    assert by_label.loc[C, "count"] == 2
    genres = {"1": "fiction", "2": "fiction", "3": "travel", "4": "travel", "5": "travel"}
    by_genre = accuracy_by_genre(MODEL_A, genres).set_index("genre")
    assert by_genre.loc["fiction", "accuracy"] == 0.5
    assert by_genre.loc["travel", "accuracy"] == pytest.approx(2 / 3)
    assert by_genre.loc["(none)", "count"] == 1


def test_confusion_matrix_and_scores():
    matrix = confusion_matrix(MODEL_A)
    assert matrix.loc[E, E] == 1 and matrix.loc[E, N] == 1 and matrix.loc[C, E] == 1
    assert matrix.to_numpy().sum() == 6
    scores = per_label_scores(MODEL_A).set_index("label")
    # entailment: predicted 1 and 5 → precision 1/2; gold 1 and 2 → recall 1/2
    assert scores.loc[E, "precision"] == 0.5 and scores.loc[E, "recall"] == 0.5
    # neutral: predicted 2, 3, 6 (two right) → 2/3; gold 3 and 6 → recall 1
    assert scores.loc[N, "precision"] == pytest.approx(2 / 3) and scores.loc[N, "recall"] == 1.0
    assert scores.loc[N, "f1"] == pytest.approx(2 * (2 / 3) / (2 / 3 + 1))
    assert scores.loc[C, "support"] == 2
    with pytest.raises(ValueError, match="not among"):
        confusion_matrix([p("1", "duplicate", "duplicate")])


MODEL_B = [p("1", E, N, (0.1, 0.8, 0.1)), p("2", E, E, (0.9, 0.05, 0.05)), p("3", N, N), p("4", C, C),
           p("5", C, C, (0.1, 0.1, 0.8)), p("6", N, E, (0.5, 0.4, 0.1)), p("7", None, N)]


def test_table7_layout():
    table = table7(TaggedSplit({"A": MODEL_A, "B": MODEL_B}, TAGS),
                   TaggedSplit({"A": MODEL_A}, {"1": TAGS["1"]}))
    assert list(table.columns) == ["matched frequency", "matched A", "matched B",
                                   "mismatched frequency", "mismatched A"]
    assert table.index[0] == "CONDITIONAL"
    assert table.loc["NEGATION", "matched A"] == pytest.approx(2 / 3)
    assert table.loc["NEGATION", "matched B"] == pytest.approx(2 / 3)  # B: 1 wrong, 2 right, 4 right
    assert table.loc["MODAL", "mismatched A"] == 1.0


def test_compare_models():
    comparison = compare_models(MODEL_A, MODEL_B)
    # A right only on 1 and 6; B right only on 2 and 5
    assert comparison.pairs == 6
    assert (comparison.only_a_correct, comparison.only_b_correct) == (2, 2)
    assert comparison.mcnemar_p == 1.0
    assert comparison.accuracy_a == comparison.accuracy_b == pytest.approx(4 / 6)
    assert comparison.difference.estimate == 0.0
    assert comparison.as_dict()["mcnemar_p"] == 1.0
    with pytest.raises(ValueError, match="share no"):
        compare_models(MODEL_A, [p("99", E, E)])


def test_disagreements_ranked_by_spread():
    table = disagreements({"A": MODEL_A, "B": MODEL_B})
    assert set(table["id"]) == {"1", "2", "5", "6", "7"}
    # gold-probability spreads: 1 → 0.6-0.1, 2 → 0.9-0.6, 5 → 0.8-0.1, 6 → 0.4-0.3; 7 has no gold
    assert table["id"].tolist() == ["5", "1", "2", "6", "7"]
    assert table.loc[0, "A"] == E and table.loc[0, "B"] == C
    assert table.loc[0, "models_correct"] == 1
    assert math.isnan(table.loc[4, "gold_probability_spread"])
    with pytest.raises(ValueError, match="at least two"):
        disagreements({"A": MODEL_A})


def test_several_models_are_stacked_with_a_model_column():
    by_tag = accuracy_by_tag({"A": MODEL_A, "B": MODEL_B}, TAGS)
    assert list(by_tag.columns[:2]) == ["model", "tag"]
    assert len(by_tag) == 2 * 13
    b_modal = by_tag[(by_tag["model"] == "B") & (by_tag["tag"] == "MODAL")].iloc[0]
    assert (b_modal["count"], b_modal["correct"]) == (2, 1)  # B: pair 1 wrong, pair 5 right
    by_label = accuracy_by_label({"A": MODEL_A, "B": MODEL_B}, labels=(E, N, C))
    assert by_label.set_index(["model", "label"]).loc[("B", C), "accuracy"] == 1.0
    by_genre = accuracy_by_genre({"A": MODEL_A}, {"1": "fiction"})
    assert set(by_genre["model"]) == {"A"}


def test_wilson_interval_known_values():
    assert wilson_interval(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert wilson_interval(0, 5) == pytest.approx((0.0, 0.4345), abs=1e-4)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


def test_accuracy_by_tag_carries_a_95_percent_interval():
    negation = accuracy_by_tag(MODEL_A, TAGS).set_index("tag").loc["NEGATION"]
    assert (negation["ci_low"], negation["ci_high"]) == pytest.approx(wilson_interval(2, 3))
    assert negation["ci_low"] < negation["accuracy"] < negation["ci_high"]


def test_gold_and_automatic_tags_are_scored_apart():
    gold = {"1": frozenset({"NEGATION"}), "2": frozenset()}
    automatic = {"1": frozenset({"MODAL"}), "2": frozenset({"NEGATION"}), "4": frozenset({"NEGATION"}),
                 "5": frozenset({"NEGATION"})}
    table = accuracy_by_tag_and_source(MODEL_A, gold, automatic).set_index(["source", "tag"])
    # gold: pairs 1 (right, NEGATION) and 2 (no gold tag); their automatic tags are ignored
    assert table.loc[("gold", "NEGATION"), "count"] == 1 and table.loc[("gold", "MODAL"), "count"] == 0
    # automatic: only pairs 4 (right) and 5 (wrong), the pairs without gold tags
    assert (table.loc[("automatic", "NEGATION"), "count"], table.loc[("automatic", "NEGATION"), "correct"]) == (2, 1)
    assert set(accuracy_by_tag_and_source(MODEL_A, gold, None)["source"]) == {"gold"}
    stacked = accuracy_by_tag_and_source({"A": MODEL_A}, gold, automatic)
    assert list(stacked.columns[:3]) == ["model", "source", "tag"]


def test_table7_with_counts_shows_pairs_majority_and_intervals():
    long = table7_long({"matched": TaggedSplit({"A": MODEL_A, "B": MODEL_B}, TAGS),
                        "mismatched": TaggedSplit({"A": MODEL_A}, {"1": TAGS["1"], "5": TAGS["5"]})})
    assert set(long["split"]) == {"matched", "mismatched"} and set(long["source"]) == {"gold"}
    table = table7_with_counts(long)
    assert list(table.columns) == ["matched pairs", "matched majority", "matched A", "matched B",
                                   "mismatched pairs", "mismatched majority", "mismatched A"]
    assert table.loc["NEGATION", "matched pairs"] == 3
    assert table.loc["NEGATION", "matched majority"] == "66.7"
    low, high = wilson_interval(2, 3)
    assert table.loc["NEGATION", "matched A"] == f"66.7 [{100 * low:.1f}, {100 * high:.1f}]"
    assert table.loc["MODAL", "mismatched pairs"] == 2 and table.loc["BELIEF", "matched A"] == ""


def test_pairs_with_tag_are_the_pairs_behind_the_number():
    assert pairs_with_tag(MODEL_A, TAGS, "NEGATION")["id"].tolist() == ["1", "2", "4"]
    assert pairs_with_tag(MODEL_A, TAGS, "NEGATION", only_wrong=True)["id"].tolist() == ["2"]
    assert len(pairs_with_tag(MODEL_A, TAGS)) == 6


def test_overall_accuracy_with_interval_and_majority_baseline():
    table = overall_accuracy({"A": MODEL_A, "B": MODEL_B}).set_index("model")
    assert table.loc["A", "count"] == 6 and table.loc["A", "accuracy"] == pytest.approx(4 / 6)
    assert (table.loc["A", "ci_low"], table.loc["A", "ci_high"]) == pytest.approx(wilson_interval(4, 6))
    # gold labels: E, E, N, C, C, N → each 2 of 6; the first most frequent is the baseline
    assert table.loc["B", "majority_accuracy"] == pytest.approx(2 / 6)
