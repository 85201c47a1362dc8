"""Contrast sets, paraphrase challenge files and the training-overlap check of `evaluate --file` (issue 22 §4):
contrast consistency against hand-computed values, counterfactually-augmented NLI's layout evaluated as a
contrast set, 0 / 1 labelled paraphrase files on a tiny Quora checkpoint, a file of one task refused by a
checkpoint of the other, and the overlap with the recorded training split found (or said to be unchecked)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nlivis.analysis.challenge import OVERALL_GROUP, contrast_consistency
from nlivis.cli import main
from nlivis.store.predictions import Prediction, read_predictions
from tests.fixtures.training.helpers import FIXTURE_DIR, TINY_CONFIG

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CHALLENGE = FIXTURES / "challenge"
COUNTERFACTUAL = CHALLENGE / "counterfactual" / "NLI"
PARAPHRASE_DATA = FIXTURES / "paraphrase"
"""Hand-written Quora-format train / dev / test files (24 / 8 / 8 pairs) for a tiny paraphrase checkpoint."""
SHIPPED = Path(__file__).resolve().parents[1] / "checkpoints"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """A checkpoint root with a tiny NLI checkpoint (`nli`, trained on the SNLI-format fixture's train split) and a
    tiny paraphrase checkpoint (`quora`, trained on `PARAPHRASE_DATA`'s train split)."""
    root = tmp_path_factory.mktemp("contrast")
    for name, dataset, data in (("nli", "snli", FIXTURE_DIR), ("quora", "quora", PARAPHRASE_DATA)):
        code = main(["train", "--config", str(TINY_CONFIG), "--dataset", dataset, "--data-dir", str(data),
                     "--out", str(root / name), "--device", "cpu", "--max-steps", "4",
                     "--cache-dir", str(root / "cache")])
        assert code == 0
    return root


def run_json(capsys, *argv) -> tuple[int, dict | None, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 and captured.out.startswith("{") else None), captured.err


@pytest.fixture
def no_spacy(monkeypatch):
    from nlivis.features import sentences as analysis

    def refuse(*args, **kwargs):
        raise AssertionError("spaCy ran before the input was validated")

    monkeypatch.setattr(analysis, "analyse_sentences", refuse)


# ------------------------------------------------------------------------------ contrast consistency, by hand

def prediction(pair_id: str, right: bool) -> Prediction:
    return Prediction(pair_id, "entailment", "entailment" if right else "neutral", (0.6, 0.3, 0.1))


def test_contrast_consistency_against_hand_computed_values():
    # five groups of an original and its edits: g1 and g2 right on every member, g3-g5 wrong somewhere;
    # g6 has one member (no contrast group), g7's second member has no gold label (so one labelled member)
    right = {"g1": [True, True, True], "g2": [True, True], "g3": [True, False], "g4": [False, False, True],
             "g5": [True, True, False, True], "g6": [True]}
    predictions, contrast = [], {}
    for group, outcomes in right.items():
        for index, outcome in enumerate(outcomes):
            predictions.append(prediction(f"{group}-{index}", outcome))
            contrast[f"{group}-{index}"] = (group,)
    predictions += [prediction("g7-0", False), Prediction("g7-1", None, "neutral", (0.2, 0.7, 0.1))]
    contrast.update({"g7-0": ("g7",), "g7-1": ("g7",), "loose": ("(none)",)})
    predictions.append(prediction("loose", False))  # a pair without a group value belongs to no group
    overall = contrast_consistency(predictions, contrast).set_index("group").loc[OVERALL_GROUP]
    assert (overall["contrast_groups"], overall["consistent"], overall["single_member_groups"]) == (5, 2, 2)
    assert overall["consistency"] == pytest.approx(0.4)
    # Wilson 95%, 2 of 5 by hand: z = 1.959964; (0.4 + z²/10 ∓ z·sqrt(0.4·0.6/5 + z²/100)) / (1 + z²/5)
    assert (round(overall["ci_low"], 4), round(overall["ci_high"], 4)) == (0.1176, 0.7693)
    # the accuracy beside it, on the 14 pairs of those five groups: 10 right
    assert overall["members"] == 14 and overall["member_accuracy"] == pytest.approx(10 / 14)


CATEGORY_PREDICTIONS = [prediction("o1", True), prediction("p1a", True), prediction("p1b", True),
                        prediction("h1a", False), prediction("h1b", True), prediction("o2", False),
                        prediction("p2a", False), prediction("p2b", True), prediction("h2a", True), prediction("h2b", True)]
"""Two originals (o1 right, o2 wrong), each with two revised premises and two revised hypotheses."""
CATEGORY_CONTRAST = {p.id: (p.id[-2] if p.id[0] != "o" else p.id[1],) for p in CATEGORY_PREDICTIONS}


def test_contrast_consistency_by_category_takes_each_original_with_its_edits():
    kind = {p.id: ({"o": "Original", "p": "revised_premise", "h": "revised_hypothesis"}[p.id[0]],)
            for p in CATEGORY_PREDICTIONS}
    table = contrast_consistency({"m": CATEGORY_PREDICTIONS}, CATEGORY_CONTRAST, kind).set_index("group")
    assert list(table["model"].unique()) == ["m"]
    # o1 + p1a + p1b all right; o2 wrong. o1 + h1a (wrong) + h1b; o2 wrong (h2a and h2b right)
    assert table.loc["revised_premise", ["contrast_groups", "consistent", "members"]].tolist() == [2, 1, 6]
    assert table.loc["revised_hypothesis", ["contrast_groups", "consistent", "members"]].tolist() == [2, 0, 6]
    # the original's row: each original with all four of its edits, right on none (h1a, o2)
    assert table.loc["Original", ["contrast_groups", "consistent", "members", "single_member_groups"]].tolist() == \
        [2, 0, 10, 0]
    assert table.loc[OVERALL_GROUP, ["contrast_groups", "consistent"]].tolist() == [2, 0]  # whole groups


def test_without_an_original_value_each_category_cuts_the_groups():
    kind = {p.id: ({"o": "source", "p": "revised_premise", "h": "revised_hypothesis"}[p.id[0]],)
            for p in CATEGORY_PREDICTIONS}
    table = contrast_consistency(CATEGORY_PREDICTIONS, CATEGORY_CONTRAST, kind).set_index("group")
    assert table.loc["revised_premise", ["contrast_groups", "consistent"]].tolist() == [2, 1]
    assert table.loc["revised_hypothesis", ["contrast_groups", "consistent"]].tolist() == [2, 1]
    assert table.loc["source", ["contrast_groups", "single_member_groups"]].tolist() == [0, 2]


# --------------------------------------------------------------------------- evaluate --file: contrast sets

def test_counterfactual_folder_is_a_contrast_set_with_its_training_overlap(root, tmp_path, capsys):
    code, output, err = run_json(capsys, "evaluate", root / "nli", "--file", COUNTERFACTUAL, "--group-by", "file",
                                 "--data-dir", FIXTURE_DIR, "--json", "--cache-dir", tmp_path / "cache")
    assert code == 0, err
    assert output["count"] == 15 and output["files"] == [str(COUNTERFACTUAL / kind / "test.tsv") for kind in
                                                         ("original", "revised_premise", "revised_hypothesis")]
    correct = {p.id: p.correct for p in read_predictions(Path(output["predictions_file"]))}
    groups = {str(i): [f"original:{i + 1}", f"revised_premise:{2 * i}", f"revised_premise:{2 * i + 1}",
                       f"revised_hypothesis:{2 * i}", f"revised_hypothesis:{2 * i + 1}"] for i in (1, 2, 3)}
    consistent = sum(all(correct[pair_id] for pair_id in members) for members in groups.values())
    contrast = output["contrast_consistency"]
    assert contrast["field"] == "contrast_group"
    assert contrast["overall"]["contrast_groups"] == 3 and contrast["overall"]["consistent"] == consistent
    assert contrast["overall"]["members"] == 15 and contrast["overall"]["single_member_groups"] == 0
    assert 0 <= contrast["overall"]["ci_low"] <= contrast["overall"]["consistency"] <= contrast["overall"]["ci_high"]
    by_file = {row["group"]: row for row in contrast["by_group"]}
    # every group holds its original: each original with all its edits is the whole group
    assert by_file["original"]["contrast_groups"] == 3 and by_file["original"]["consistent"] == consistent
    assert contrast["per_original"] == {k: v for k, v in by_file["original"].items() if k != "group"}
    premises = sum(all(correct[pair_id] for pair_id in members[:3]) for members in groups.values())
    assert by_file["revised_premise"]["contrast_groups"] == 3 and by_file["revised_premise"]["consistent"] == premises
    assert by_file["revised_premise"]["members"] == 9  # each original and its two revised premises
    assert {row["group"]: row["count"] for row in output["by_group"]} == \
        {"revised_premise": 6, "revised_hypothesis": 6, "original": 3}
    # the first original is train-000 of the fixture's training split: that pair, its premise (kept by both revised
    # hypotheses) and its hypothesis (kept by both revised premises) are found there
    assert output["training_overlap"] == {"checked": True, "split": "snli_train", "total": 15, "pairs": 1,
                                          "premises": 3, "hypotheses": 3, "reason": None, "note": None}
    low, high = output["accuracy_interval"]
    assert low <= output["accuracy"] <= high


def test_the_table_says_consistency_and_overlap_beside_accuracy(root, tmp_path, capsys):
    code = main(["evaluate", str(root / "nli"), "--file", str(COUNTERFACTUAL), "--cache-dir", str(tmp_path / "cache")])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    accuracy = next(i for i, line in enumerate(lines) if line.startswith("accuracy ") and "% [" in line)
    assert lines[accuracy + 1].startswith("contrast consistency ") and "of 3 groups (contrast_group" in lines[accuracy + 1]
    assert lines[accuracy + 2] == ("training overlap not checked: training data not found: give the data root "
                                   "holding snli_train (--data-dir)")


def test_a_named_contrast_field_and_groups_of_one(root, tmp_path, capsys):
    path = tmp_path / "contrast.csv"
    path.write_text("premise,hypothesis,label,original\n"
                    "A man is playing a guitar on a stage .,A man is playing music .,e,a\n"
                    "A man is playing a guitar on a stage .,A man is playing the drums .,c,a\n"
                    "A man is sleeping .,A man is awake .,c,b\n"
                    "A dog runs .,An animal moves .,e,c\n"
                    "A dog sleeps .,An animal moves .,c,c\n")
    code, output, err = run_json(capsys, "evaluate", root / "nli", "--file", path, "--contrast-group", "ORIGINAL",
                                 "--json", "--cache-dir", tmp_path / "cache")
    assert code == 0, err
    correct = {p.id: p.correct for p in read_predictions(Path(output["predictions_file"]))}
    overall = output["contrast_consistency"]["overall"]
    assert overall["contrast_groups"] == 2 and overall["single_member_groups"] == 1 and overall["members"] == 4
    assert overall["consistent"] == (correct["2"] and correct["3"]) + (correct["5"] and correct["6"])
    assert any("1 ORIGINAL value(s) have one labelled pair" in note for note in output["notes"])
    assert "contrast_consistency" in json.loads((Path(output["predictions_file"]).parent / "evaluation.json").read_text())


def test_contrast_and_split_options_are_checked_before_spacy(root, capsys, no_spacy):
    code, _, err = run_json(capsys, "evaluate", root / "nli", "--file", COUNTERFACTUAL, "--contrast-group", "original")
    assert code == 2 and "--contrast-group original:" in err and "no field 'original'" in err and "contrast_group" in err
    assert "--group-by" not in err
    code, _, err = run_json(capsys, "evaluate", root / "nli", "--file", COUNTERFACTUAL, "--group-by", "nosuch")
    assert code == 2 and "--group-by nosuch:" in err and "--contrast-group" not in err
    code, _, err = run_json(capsys, "evaluate", root / "nli", "--file", CHALLENGE / "conj_like.tsv", "--split", "test")
    assert code == 2 and "--split with --file picks the split of a counterfactually-augmented folder" in err
    code, _, err = run_json(capsys, "evaluate", root / "nli", "--file", COUNTERFACTUAL, "--split", "dev")
    assert code == 2 and "split 'dev' lacks" in err
    code, _, err = run_json(capsys, "evaluate", root / "nli", "--file", CHALLENGE)
    assert code == 2 and "is a folder; give the file itself" in err
    code, _, err = run_json(capsys, "evaluate", root / "nli", "--dataset", "snli", "--split", "dev", "--data-dir",
                            FIXTURE_DIR, "--contrast-group", "x")
    assert code == 2 and "--contrast-group needs --file" in err


# ------------------------------------------------------------------------------------ paraphrase challenge files

@pytest.mark.parametrize("name, field, groups, overlap", [
    ("paraphrase_like.tsv", "category", {"names and things": 3, "paraphrase": 2, "seen": 1}, (1, 2, 1)),
    ("paraphrase_like.csv", "category", {"names and things": 2, "paraphrase": 2}, (0, 0, 0)),
    ("paraphrase_like.jsonl", "tags", {"names and things": 2, "paraphrase": 2, "science": 2, "(none)": 1}, (1, 1, 1)),
])
def test_paraphrase_files_on_a_paraphrase_checkpoint(root, tmp_path, capsys, name, field, groups, overlap):
    code, output, err = run_json(capsys, "evaluate", root / "quora", "--file", CHALLENGE / name, "--group-by", field,
                                 "--data-dir", PARAPHRASE_DATA, "--json", "--cache-dir", tmp_path / "cache")
    assert code == 0, err
    assert output["labels"] == ["not_duplicate", "duplicate"] and output["label_mapping"] is None
    assert {row["group"]: row["count"] for row in output["by_group"]} == groups
    rows = read_predictions(Path(output["predictions_file"]))
    assert all(len(p.probs) == 2 and p.gold in ("duplicate", "not_duplicate") for p in rows)
    training = output["training_overlap"]
    assert training["checked"] and training["split"] == "quora_train"
    assert (training["pairs"], training["premises"], training["hypotheses"]) == overlap
    assert output["contrast_consistency"] is None


def test_a_file_of_the_other_task_is_refused_naming_it(root, capsys, no_spacy):
    path = CHALLENGE / "paraphrase_like.tsv"
    code, _, err = run_json(capsys, "evaluate", root / "nli", "--file", path)
    assert code == 2 and f"{path}: a paraphrase file (gold labels 'duplicate' (first on line 2)" in err
    assert "cannot be scored by this NLI checkpoint" in err and "1 = duplicate" in err and "nothing was analysed" in err
    path = CHALLENGE / "conj_like.tsv"
    code, _, err = run_json(capsys, "evaluate", root / "quora", "--file", path)
    assert code == 2 and f"{path}: an NLI file (gold labels 'entailment' (first on line 2)" in err
    assert "cannot be scored by this paraphrase checkpoint (labels not_duplicate, duplicate)" in err


# ---------------------------------------------------------------- the shipped snli-small models on SNLI test

def test_snli_test_pairs_are_found_in_a_shipped_snli_small_training_split(shared_data, tmp_path, capsys):
    """snli-small trains on SNLI test: a challenge file made of SNLI test pairs (as CAD's test split and
    SNLI-hard are) is not held out, and evaluate says so. The file is written here from ../shared/data."""
    checkpoint = SHIPPED / "gcnn-snli-small"
    folder = shared_data / "snli" / "esnli_tokenized"
    if not (checkpoint / "COMPLETE").is_file() or not (folder / "s1.test").is_file():
        pytest.skip("shipped gcnn-snli-small or ../shared/data/snli absent")
    config = json.loads((checkpoint / "config.json").read_text())
    copy = tmp_path / "root" / checkpoint.name  # a copy: the named evaluation is not written into checkpoints/
    shutil.copytree(checkpoint, copy, ignore=shutil.ignore_patterns("evaluations"))
    embeddings = (checkpoint / config["embeddings"]["file"]).resolve()
    (tmp_path / "root" / "embeddings").mkdir()
    shutil.copy(embeddings, tmp_path / "root" / "embeddings" / embeddings.name)
    columns = [(folder / f"{name}.test").read_text().splitlines()[:20] for name in ("s1", "s2", "labels")]
    path = tmp_path / "from_snli_test.tsv"
    path.write_text("sentence1\tsentence2\tgold_label\n" + "".join(
        f"{premise}\t{hypothesis.upper()}\t{label}\n" for premise, hypothesis, label in zip(*columns)))
    code, output, err = run_json(capsys, "evaluate", copy, "--file", path, "--data-dir", shared_data, "--json",
                                 "--cache-dir", tmp_path / "cache")
    assert code == 0, err
    overlap = output["training_overlap"]
    assert overlap["checked"] and overlap["split"] == "snli_test" and overlap["note"] is None
    assert overlap["pairs"] == overlap["premises"] == overlap["hypotheses"] == overlap["total"] == 20
