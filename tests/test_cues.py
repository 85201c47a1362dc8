"""Surface cues of a pair and the information they carry about its label (nlivis.analysis.cues), on
sentences written for these tests."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlivis.analysis.cues import (changed_bucket, changed_words, cue_information, cue_rates, cue_table, cue_values,
                                  mutual_information, negation_side)
from nlivis.store.predictions import write_predictions
from nlivis.workflows.cues import cue_report


def test_changed_words_counts_an_aligned_replacement_by_its_longer_side():
    assert changed_words("A cat naps on the sofa.", "A cat naps on the sofa.") == 0
    assert changed_words("A cat naps on the sofa.", "A dog naps on the sofa.") == 1
    assert changed_words("A cat is napping.", "A cat is not napping.") == 1
    assert changed_words("A cat naps.", "A cat does not nap.") == 3
    assert changed_words("A cat naps.", "Two boys fly a red kite.") == 5
    assert [changed_bucket(n) for n in (0, 1, 3, 4, 17)] == ["0", "1", "3", "4+", "4+"]


def test_negation_side_sees_contracted_and_determiner_negations():
    assert negation_side("A cat naps.", "A cat naps.") == "none"
    assert negation_side("A cat isn't napping.", "A cat naps.") == "premise"
    assert negation_side("A cat naps.", "No cat naps.") == "hypothesis"
    assert negation_side("Nobody sings.", "The choir never sings.") == "both"
    assert negation_side("A knot is tied.", "Notes are written.") == "none"  # not a word inside a word
    assert cue_values("A cat naps.", "A cat does not nap.") == {"changed_words": "3", "negation_side": "hypothesis"}


def test_mutual_information_is_zero_for_a_balanced_cue_and_the_label_entropy_for_a_decisive_one():
    balanced = [("1", "entailment"), ("1", "contradiction"), ("4+", "entailment"), ("4+", "contradiction")]
    assert mutual_information(balanced) == 0.0
    decisive = [("1", "contradiction"), ("1", "contradiction"), ("4+", "entailment"), ("4+", "entailment")]
    assert math.isclose(mutual_information(decisive), 1.0)
    assert mutual_information([]) == 0.0


def test_one_word_contradictions_beside_entailments_carry_the_shortcut_and_balanced_ones_do_not():
    pairs = [("A cat naps.", "A dog naps."), ("A cat naps.", "A cat sleeps."),
             ("A boy runs in a park.", "Some children are playing outdoors today."),
             ("A boy runs in a park.", "An old woman reads her newspaper at home.")]
    shortcut = cue_information(pairs, ["contradiction", "contradiction", "entailment", "entailment"])
    balanced = cue_information(pairs, ["contradiction", "entailment", "entailment", "contradiction"])
    assert shortcut["changed_words"] == 1.0 and balanced["changed_words"] == 0.0
    assert shortcut["negation_side"] == balanced["negation_side"] == 0.0  # no negation anywhere


def test_cue_rates_list_the_ordered_values_first_and_skip_unlabelled_pairs():
    rows = cue_rates(["4+", "1", "1", "2", "1"], ["entailment", "contradiction", None, "neutral", "entailment"],
                     order=("1", "4+"))
    assert [row["value"] for row in rows] == ["1", "4+", "2"]
    assert rows[0] == {"value": "1", "pairs": 2, "rates": {"contradiction": 50.0, "entailment": 50.0}}


@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from(["x", "y", "z"])), max_size=60))
def test_mutual_information_is_bounded_by_either_entropy(observations):
    information = mutual_information(observations)

    def entropy(values):
        total = len(values)
        return -sum(values.count(v) / total * math.log2(values.count(v) / total) for v in set(values)) if total else 0

    assert 0.0 <= information <= min(entropy([c for c, _ in observations]), entropy([l for _, l in observations])) + 1e-9


def test_cue_table_shows_a_model_saying_contradiction_where_one_word_changed_and_gold_does_not():
    pairs = [("A cat naps.", "A dog naps."), ("A cat naps.", "A kitty naps."), ("A cat naps.", "A cat rests."),
             ("A boy runs in a park.", "Some children are playing outdoors today."),
             ("A boy runs in a park.", "The boy is not running anywhere at all.")]
    gold = ["contradiction", "entailment", "entailment", "neutral", "contradiction"]
    shortcut = ["contradiction", "contradiction", "contradiction", "neutral", "contradiction"]
    table = cue_table(pairs, gold, {"shortcut": shortcut, "gold-like": gold}, "contradiction")
    one_word = next(row for row in table["changed_words"] if row["value"] == "1")
    assert one_word["pairs"] == 3 and one_word["gold"] == 33.3
    assert one_word["models"]["shortcut"] == {"predicted": 100.0, "accuracy": 33.3}
    assert one_word["models"]["gold-like"] == {"predicted": 33.3, "accuracy": 100.0}
    assert [row["value"] for row in table["negation_side"]] == ["none", "hypothesis"]


def _checkpoint(folder, protocol, split, predicted):
    """A checkpoint folder as far as `cues` reads it: its protocol and its recorded predictions (on its select
    split and, for mnli-small, on MultiNLI dev matched, whose data the tests do not have)."""
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"dataset": {"protocol": protocol}}), encoding="utf-8")
    for key in [split] + (["mnli_dev_matched"] if protocol == "mnli-small" else []):
        write_predictions(folder / f"predictions_{key}.jsonl.gz",
                          [{"id": str(i + 2), "gold": None, "predicted": label, "probs": [1 / 3] * 3}
                           for i, label in enumerate(predicted)])
    return folder


def test_cue_report_reads_an_mnli_small_pair_on_the_splits_it_recorded_and_refuses_mixed_protocols(tmp_path):
    (tmp_path / "xnli_en").mkdir()
    rows = [("telephone", "contradiction", "A cat naps.", "A dog naps."),
            ("travel", "entailment", "A cat naps.", "A kitty naps."),
            ("fiction", "neutral", "A boy runs in a park.", "Some children are playing outdoors today.")]
    (tmp_path / "xnli_en" / "xnli.dev.en.genre.tsv").write_text(
        "genre\tgold_label\tsentence1\tsentence2\n" + "".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")
    control = _checkpoint(tmp_path / "control", "mnli-small", "xnli_en_dev", ["contradiction", "entailment", "neutral"])
    shortcut = _checkpoint(tmp_path / "shortcut", "mnli-small", "xnli_en_dev",
                           ["contradiction", "contradiction", "neutral"])
    record = cue_report([control, shortcut], tmp_path).record()
    one_word = next(row for row in record["sets"]["xnli_en_dev"]["changed_words"] if row["value"] == "1")
    assert one_word["pairs"] == 2 and one_word["gold"] == 50.0
    assert one_word["models"]["control"]["predicted"] == 50.0 and one_word["models"]["shortcut"]["predicted"] == 100.0
    assert list(record["sets"]) == ["xnli_en_dev"]  # no MultiNLI dev here: its recorded predictions are skipped
    snli = _checkpoint(tmp_path / "snli", "snli-small", "snli_dev", ["neutral"])
    with pytest.raises(ValueError, match=r"different protocols: control \(mnli-small\), snli \(snli-small\)"):
        cue_report([control, snli], tmp_path)
