"""The training-overlap check shared by `evaluate --file` and `probe`: normalised text, counts against the
training split a checkpoint records, and "not checked" (never a silent 0) when that split cannot be read."""
from __future__ import annotations

from pathlib import Path

import pytest

from nlivis.analysis.overlap import normalised, training_overlap
from nlivis.data.challenge import read_challenge_files

CAD = Path(__file__).resolve().parent / "fixtures" / "challenge" / "counterfactual" / "NLI"
SNLI_SMALL = {"dataset": {"protocol": "snli-small", "train": ["snli_test"], "train_pairs": 3}}


def snli_small_root(root: Path, rows: list[tuple[str, str, str]]) -> Path:
    """A data root in ../shared/data's layout whose SNLI test split (the snli-small training split) is `rows`."""
    folder = root / "snli" / "esnli_tokenized"
    folder.mkdir(parents=True)
    for name, column in (("s1", 0), ("s2", 1), ("labels", 2)):
        (folder / f"{name}.test").write_text("".join(row[column] + "\n" for row in rows))
    return root


def test_normalised_text_ignores_case_spacing_and_punctuation():
    assert normalised("A man .") == normalised("a  man.") == "a man"
    assert normalised("Don't!") == "don t"
    assert normalised("\uff21 Man") == "a man"  # NFKC: a full-width letter is the letter


def test_counterfactual_test_split_made_from_the_training_split_is_found(tmp_path):
    """The shipped snli-small models train on SNLI test, and CAD's test split is made of SNLI test pairs: its
    originals are training pairs, every revised-hypothesis row keeps a training premise, every
    revised-premise row a training hypothesis."""
    challenge = read_challenge_files([CAD])
    originals = [(p.premise, p.hypothesis, p.label) for p in challenge.pairs if p.id.startswith("original:")]
    root = snli_small_root(tmp_path, [(p, h.replace(" .", "."), label) for p, h, label in originals])  # spacing differs
    overlap = training_overlap(SNLI_SMALL, [(p.premise, p.hypothesis) for p in challenge.pairs], root)
    assert overlap.checked and overlap.split == "snli_test" and overlap.total == 15 and overlap.note is None
    # 3 originals; premises: 3 originals + 6 revised hypotheses; hypotheses: 3 originals + 6 revised premises
    assert (overlap.pairs, overlap.premises, overlap.hypotheses) == (3, 9, 9)
    assert "3 of 15 pairs, 9 premises and 9 hypotheses" in overlap.describe()


def test_a_pair_counts_in_either_order_and_sentences_against_both_sides(tmp_path):
    root = snli_small_root(tmp_path, [("A dog runs .", "An animal moves .", "entailment"),
                                      ("A cat sleeps .", "A cat is awake .", "contradiction")])
    pairs = [("An animal moves .", "A dog runs ."),   # the training pair swapped
             ("A cat is awake .", "A bird sings ."),  # a training hypothesis as premise
             ("A bird sings .", "A bird is loud .")]
    overlap = training_overlap({**SNLI_SMALL, "dataset": {**SNLI_SMALL["dataset"], "train_pairs": 2}}, pairs, root)
    assert (overlap.pairs, overlap.premises, overlap.hypotheses) == (1, 2, 1)
    assert overlap.to_dict() == {"checked": True, "split": "snli_test", "total": 3, "pairs": 1, "premises": 2,
                                 "hypotheses": 1, "reason": None, "note": None}


def test_a_training_split_of_another_size_is_said(tmp_path):
    root = snli_small_root(tmp_path, [("A dog runs .", "An animal moves .", "entailment")])
    overlap = training_overlap({"dataset": {**SNLI_SMALL["dataset"], "train_pairs": 9824}}, [("A b .", "C d .")], root)
    assert overlap.checked and "has 1 pairs, the checkpoint recorded 9,824" in overlap.note
    assert overlap.note in overlap.describe()


@pytest.mark.parametrize("config, data_dir, reason", [
    (SNLI_SMALL, None, "training data not found: give the data root holding snli_test (--data-dir)"),
    (SNLI_SMALL, "empty", "training data not found: no snli_test file under"),
    ({"dataset": {}}, "empty", "records no training protocol"),
    ({"dataset": {"protocol": "nope", "train": ["x"]}}, "empty", "unknown dataset or protocol 'nope'"),
    ({"dataset": {"protocol": "snli-small", "train": ["snli_dev"]}}, "empty", "has no training split snli_dev"),
])
def test_not_checked_says_why_and_counts_nothing(tmp_path, config, data_dir, reason):
    overlap = training_overlap(config, [("A b .", "C d .")], tmp_path if data_dir else None)
    assert not overlap.checked and overlap.pairs is None and overlap.premises is None and overlap.hypotheses is None
    assert reason in overlap.reason and overlap.describe().startswith("training overlap not checked: ")


def test_an_unreadable_training_split_is_not_checked_and_names_the_file(tmp_path):
    root = snli_small_root(tmp_path, [("A dog runs .", "An animal moves .", "maybe")])
    overlap = training_overlap(SNLI_SMALL, [("A dog runs .", "x")], root)
    assert not overlap.checked and "training data unreadable" in overlap.reason and "labels.test" in overlap.reason


def test_a_changed_training_file_is_read_again(tmp_path):
    root = snli_small_root(tmp_path, [("A dog runs .", "An animal moves .", "entailment")])
    pairs = [("A cat sleeps .", "A cat is awake .")]
    assert training_overlap(SNLI_SMALL, pairs, root).pairs == 0
    folder = root / "snli" / "esnli_tokenized"
    (folder / "s1.test").write_text("A cat sleeps .\n")
    (folder / "s2.test").write_text("A cat is awake .\n")
    assert training_overlap(SNLI_SMALL, pairs, root).pairs == 1
