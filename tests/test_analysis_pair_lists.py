"""The logic pages used to hold, now in analysis/ and data/, tested without Streamlit: the lists of pairs behind
numbers (filters, orders, positions), Table 7's pairing of matched and mismatched halves, seed noise of a
family, and the split a view starts on."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from nlivis.analysis.pair_lists import PairFilter, filter_pairs, position_of, prediction_rows, sort_pairs, token_counts
from nlivis.analysis.tag_sources import split_tags, table7_halves
from nlivis.data.records import Pair
from nlivis.data.split_choice import default_split, matching_split, split_half, split_label, training_splits
from nlivis.store.predictions import Prediction

LABELS = ("entailment", "neutral", "contradiction")


def prediction(pair_id: str, gold: str, predicted: str, confidence: float = 0.6) -> Prediction:
    probs = [round((1 - confidence) / 2, 3)] * 3
    probs[LABELS.index(predicted)] = confidence
    return Prediction(pair_id, gold, predicted, tuple(probs))


PAIRS = [Pair(str(i + 1), f"premise {i}", f"hypothesis {i}") for i in range(6)]
PREDICTIONS = [prediction("1", "entailment", "entailment", 0.9), prediction("2", "neutral", "contradiction", 0.5),
               prediction("3", "neutral", "contradiction", 0.8), prediction("4", "contradiction", "neutral", 0.7),
               prediction("5", "entailment", "neutral", 0.4), Prediction("6", None, "neutral", (0.2, 0.6, 0.2))]
ROWS = {pair.id: row for row, pair in enumerate(PAIRS)}
TAGS = {"2": frozenset({"NEGATION"}), "3": frozenset({"NEGATION", "MODAL"}), "4": frozenset()}
COUNTS = {"1": (8, 0), "2": (12, 1), "3": (30, 0), "4": (15, 2), "5": (9, 0)}


def frame() -> pd.DataFrame:
    return prediction_rows(PREDICTIONS, ROWS, PAIRS, TAGS, COUNTS)


def test_prediction_rows_have_rows_sentences_tags_and_counts_for_labelled_pairs_only():
    table = frame()
    assert list(table["id"]) == ["1", "2", "3", "4", "5"]  # the unlabelled pair 6 is no error and no hit
    assert list(table["row"]) == [0, 1, 2, 3, 4] and table.loc[1, "premise"] == "premise 1"
    assert table.loc[2, "tags"] == "MODAL, NEGATION" and table.loc[3, "tags"] == "" and pd.isna(table.loc[0, "tags"])
    assert list(table["length"]) == [8, 12, 30, 15, 9] and list(table["unknown"]) == [0, 1, 0, 2, 0]
    assert list(table["correct"]) == [True, False, False, False, False]


def test_filters_keep_a_confusion_cell_errors_a_tag_a_length_range_and_unknown_words():
    table = frame()
    assert list(filter_pairs(table, PairFilter(gold="neutral", predicted="contradiction"))["id"]) == ["2", "3"]
    assert list(filter_pairs(table, PairFilter(wrong_only=True))["id"]) == ["2", "3", "4", "5"]
    assert list(filter_pairs(table, PairFilter(tag="NEGATION"))["id"]) == ["2", "3"]
    assert list(filter_pairs(table, PairFilter(tag="MODAL", wrong_only=True))["id"]) == ["3"]
    assert list(filter_pairs(table, PairFilter(min_length=10, max_length=20))["id"]) == ["2", "4"]
    assert list(filter_pairs(table, PairFilter(unknown="some"))["id"]) == ["2", "4"]
    assert list(filter_pairs(table, PairFilter(unknown="none", wrong_only=True))["id"]) == ["3", "5"]
    assert PairFilter(gold="neutral", predicted="contradiction", tag="NEGATION").describe() == \
        "gold neutral → predicted contradiction, tag NEGATION"
    with pytest.raises(ValueError, match="unknown-word filter"):
        filter_pairs(table, PairFilter(unknown="maybe"))


def test_without_counts_a_length_filter_keeps_nothing_rather_than_guessing():
    table = prediction_rows(PREDICTIONS, ROWS, PAIRS)
    assert table["length"].isna().all() and filter_pairs(table, PairFilter(min_length=1)).empty


def test_orders_are_stable_and_put_unknown_values_last():
    table = frame()
    assert list(sort_pairs(table, "most confident first")["id"]) == ["1", "3", "4", "2", "5"]
    assert list(sort_pairs(table, "longest first")["id"]) == ["3", "4", "2", "5", "1"]
    assert list(sort_pairs(table, "most unknown words first")["id"]) == ["4", "2", "1", "3", "5"]  # ties by row
    assert list(sort_pairs(table.iloc[::-1], "row")["id"]) == ["1", "2", "3", "4", "5"]
    with pytest.raises(ValueError, match="order must be one of"):
        sort_pairs(table, "alphabetical")


def test_a_pair_is_found_in_a_list_by_row_id_or_text():
    errors = filter_pairs(frame(), PairFilter(wrong_only=True))
    assert position_of(errors, row=3) == 2 and position_of(errors, row=0) is None
    assert position_of(errors, pair_id="5") == 3
    assert position_of(errors, premise="premise 1", hypothesis="hypothesis 1") == 0


def test_token_counts_count_what_the_vocabulary_reads_as_unknown():
    from nlivis.features.vocab import PAD, UNK, Vocabulary

    vocabulary = Vocabulary([PAD, UNK, "a", "man", "sleeps"], lowercase=True)
    counts = token_counts({"1": (["A", "man", "snores"], ["He", "sleeps"])}, vocabulary)
    assert counts == {"1": (5, 2)}


def test_split_tags_keep_gold_for_the_split_and_automatic_for_the_rest():
    tags = split_tags(["a", "b", "c"], gold={"a": frozenset({"NEGATION"}), "z": frozenset({"MODAL"})},
                      automatic={"a": frozenset({"MODAL"}), "b": frozenset({"QUANTIFIER"})})
    assert tags.gold == {"a": frozenset({"NEGATION"})} and tags.automatic == {"b": frozenset({"QUANTIFIER"})}
    assert tags.sources == ["gold", "automatic"] and tags.of("gold") is tags.gold
    with pytest.raises(ValueError):
        tags.of("both")


def test_table7_pairs_matched_with_mismatched_and_uses_gold_only_when_both_halves_have_it():
    matched = {"m": [prediction("9001", "entailment", "entailment"), prediction("9002", "contradiction", "neutral")]}
    mismatched = {"m": [prediction("9101", "entailment", "entailment"), prediction("9102", "contradiction", "contradiction")]}
    gold_matched = {"9001": frozenset({"NEGATION"}), "9002": frozenset({"NEGATION", "MODAL"})}
    gold_mismatched = {"9101": frozenset({"NEGATION"}), "9102": frozenset({"MODAL"})}
    tags = split_tags(["9001", "9002"], gold_matched, {})
    asked = []

    def other_tags(key, source):
        asked.append((key, source))
        return gold_mismatched if source == "gold" else {"9101": frozenset({"QUANTIFIER"})}

    built = table7_halves("mnli_dev_matched", matched, tags, lambda key: mismatched, other_tags)
    assert built is not None and built.source == "gold" and ("mnli_dev_mismatched", "gold") in asked
    assert built.splits == {"matched": "mnli_dev_matched", "mismatched": "mnli_dev_mismatched"}
    table = built.table()
    assert table.loc["NEGATION", "matched pairs"] == 2 and table.loc["MODAL", "mismatched pairs"] == 1
    assert list(built.pairs("matched", "MODAL", "m", only_wrong=True)["id"]) == ["9002"]

    automatic_only = table7_halves("mnli_dev_mismatched", mismatched, split_tags(["9101", "9102"], {}, {"9102": frozenset({"MODAL"})}),
                                   lambda key: matched, lambda key, source: {} if source == "gold" else {"9001": frozenset({"MODAL"})})
    assert automatic_only is not None and automatic_only.source == "automatic"
    assert table7_halves("snli_dev", matched, tags, lambda key: mismatched, other_tags) is None  # no other half
    assert table7_halves("mnli_dev_matched", matched, tags, lambda key: None, other_tags) is None  # not evaluated there


def test_the_first_view_of_a_protocol_opens_on_its_report_split_never_a_training_split():
    snli, mnli = [("gcnn-snli-small", "snli-small")], [("gcnn-mnli-small", "mnli-small")]
    assert default_split(snli, ["snli_dev", "snli_test"]) == "snli_dev"
    # issue 21 item 5: mnli-small opens on MultiNLI dev (gold tags, Table 7), not its select split XNLI-en dev
    assert default_split(mnli, ["mnli_dev_matched", "mnli_dev_mismatched", "xnli_en_dev"]) == "mnli_dev_matched"
    assert default_split(mnli, ["xnli_en_dev", "xnli_en_test"]) == "xnli_en_dev"
    assert default_split(snli, ["snli_test"]) == "snli_test"  # only a training split: better than nothing
    assert default_split([("x", None)], []) is None
    trained = training_splits(snli + mnli)
    assert trained["snli_test"] == ["gcnn-snli-small", "gcnn-mnli-small"] and "snli_dev" not in trained
    assert split_label("snli_test", trained) == "snli_test (training split of gcnn-snli-small, gcnn-mnli-small)"
    assert matching_split("mnli_dev_matched") == "mnli_dev_mismatched" and matching_split("snli_dev") is None
    assert split_half("mnli_hard_mismatched_test") == "mismatched"


def test_family_predictions_and_seed_noise_read_through_the_given_reader():
    from nlivis.analysis.ablations import VariantRecord
    from nlivis.analysis.families import family_predictions, measure_seed_noise

    def record(name: str, seed: int, splits=("snli_dev",)) -> VariantRecord:
        return VariantRecord(Path(name), "gcnn", "gcnn", "snli-small", seed, "snli_dev", 0.5, prediction_splits=splits)

    first, second, other = record("gcnn-a", 1), record("gcnn-b", 2), record("gcnn-c", 1, ())
    files = {"gcnn-a": [prediction("1", "neutral", "neutral"), prediction("2", "neutral", "entailment")],
             "gcnn-b": [prediction("1", "neutral", "neutral"), prediction("2", "neutral", "neutral")]}

    def read(folder: Path, split: str):
        return (files[folder.name], None) if folder.name in files else ([], f"{folder.name} has no predictions")

    reference, variants, problems = family_predictions([first, second, other], first, "snli_dev", read)
    assert reference == files["gcnn-a"] and list(variants) == ["gcnn-b"] and problems == []
    noise, problem = measure_seed_noise([first, second], "snli_dev", read)
    assert problem is None and noise.gap == pytest.approx(0.5) and noise.pairs == 2
    assert measure_seed_noise([first], "snli_dev", read) == (None, "one seed only")
    assert measure_seed_noise([first, other], "snli_dev", read)[1] == "gcnn-c has no predictions"


def test_a_new_session_loads_the_full_snli_small_model_of_each_family():
    from nlivis.workflows.checkpoints import default_model_names
    from nlivis.store.checkpoints import CheckpointInfo

    def info(name, model, config, protocol, seed=1):
        return CheckpointInfo(name, model, config, protocol, 0.7, 1, Path(name), "minilm", "shipped", 1, "snli_dev", seed)

    infos = [info("esan-snli-small", "esan", "esan", "snli-small"), info("gcnn-mnli-small", "gcnn", "gcnn", "mnli-small"),
             info("gcnn-snli-small-seed2", "gcnn", "gcnn", "snli-small", 2), info("gcnn-snli-small", "gcnn", "gcnn", "snli-small"),
             info("gcnn-glu-snli-small", "gcnn", "gcnn-glu", "snli-small"), info("amn-snli-small", "amn", "amn", "snli-small")]
    assert default_model_names(infos) == ["gcnn-snli-small", "esan-snli-small", "amn-snli-small"]
    assert default_model_names([infos[1]]) == ["gcnn-mnli-small"]  # no snli-small: the protocol that has some
    assert default_model_names([infos[4]]) == []  # an ablation alone is no default
