"""Evaluations never overwrite, and bad or hostile input gets a clear message (issue 12 items 7, 9, 12-17;
issue 15's challenge-set breakdown), through the command line on a tiny trained checkpoint."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from nlivis.cli import main
from nlivis.inference import load_checkpoint
from nlivis.store.checkpoints import CheckpointError
from nlivis.store.predictions import find_prediction_files, read_predictions
from nlivis.store.weights import rewrite_checkpoint
from tests.fixtures.training.helpers import FIXTURE_DIR, TINY_CONFIG

CHALLENGE = Path(__file__).resolve().parent / "fixtures" / "challenge"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """A checkpoint root holding one tiny trained checkpoint `tiny` (tests copy it before damaging it)."""
    root = tmp_path_factory.mktemp("evaluation")
    code = main(["train", "--config", str(TINY_CONFIG), "--dataset", "snli", "--data-dir", str(FIXTURE_DIR),
                 "--out", str(root / "tiny"), "--device", "cpu", "--max-steps", "4", "--cache-dir", str(root / "cache")])
    assert code == 0
    return root


@pytest.fixture
def checkpoint(root, tmp_path) -> Path:
    """A fresh copy of the tiny checkpoint in its own root."""
    target = tmp_path / "root" / "tiny"
    shutil.copytree(root / "tiny", target)
    shutil.copytree(root / "embeddings", target.parent / "embeddings")
    return target


def find_named_evaluations(folder: Path) -> dict:
    from nlivis.store.evaluations import find_named_evaluations as find

    return find(folder)


def run_json(capsys, *argv) -> tuple[int, dict | None, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 and captured.out.startswith("{") else None), captured.err


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def write_jsonl(path: Path, rows: list[dict], trailing: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + trailing)
    return path


def snli_rows(count: int, start: int = 1, label: str = "neutral") -> list[dict]:
    return [{"gold_label": label, "sentence1": f"A man number {i} is cooking soup .", "sentence2": "A man sleeps .",
             "pairID": str(i)} for i in range(start, start + count)]


# ------------------------------------------------------------------------- item 7: never overwrite

def test_another_data_dir_goes_to_a_named_evaluation_not_over_the_recorded_split(checkpoint, tmp_path, capsys):
    before = snapshot(checkpoint)
    assert "snli_dev" in find_prediction_files(checkpoint)
    other = write_jsonl(tmp_path / "other" / "snli_1.0_dev.jsonl", snli_rows(7))
    code, output, err = run_json(capsys, "evaluate", str(checkpoint), "--dataset", "snli", "--split", "dev",
                                 "--data-dir", str(other.parent), "--json", "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert snapshot(checkpoint) == before  # the recorded 12-row file and everything else untouched
    assert output["written"] is True and output["count"] == 7
    named = find_named_evaluations(checkpoint)
    assert list(named) == [output["name"]] and output["name"].startswith("snli_dev-")
    evaluation = named[output["name"]]
    assert evaluation.record["data"]["files"][0]["path"] == str(other.resolve())
    assert len(read_predictions(evaluation.predictions_file)) == 7
    assert "not the pairs of the recorded predictions_snli_dev.jsonl.gz, which is kept unchanged" in output["message"]
    # the app's recorded splits are still only the checkpoint's own
    assert set(find_prediction_files(checkpoint)) == {"snli_dev", "snli_test"}
    assert len(read_predictions(find_prediction_files(checkpoint)["snli_dev"])) == 12

    # the same file again: same name, same results, nothing written
    code, again, _ = run_json(capsys, "evaluate", str(checkpoint), "--dataset", "snli", "--split", "dev",
                              "--data-dir", str(other.parent), "--json", "--cache-dir", str(tmp_path / "cache"))
    assert code == 0 and again["written"] is False and again["name"] == output["name"]

    # other data under a taken name is refused, and nothing changes
    write_jsonl(other, snli_rows(5))
    kept = evaluation.predictions_file.read_bytes()
    code, _, err = run_json(capsys, "evaluate", str(checkpoint), "--dataset", "snli", "--split", "dev",
                            "--data-dir", str(other.parent), "--name", output["name"], "--cache-dir", str(tmp_path / "cache"))
    assert code == 2 and "already holds" in err and "another --name" in err
    assert evaluation.predictions_file.read_bytes() == kept


def test_recorded_split_with_the_same_results_writes_nothing(checkpoint, tmp_path, capsys):
    before = {p: p.stat().st_mtime_ns for p in checkpoint.rglob("*")}
    code, output, err = run_json(capsys, "evaluate", str(checkpoint), "--dataset", "snli", "--split", "dev",
                                 "--data-dir", str(FIXTURE_DIR), "--json", "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert output["written"] is False and output["predictions_file"].endswith("predictions_snli_dev.jsonl.gz")
    assert {p: p.stat().st_mtime_ns for p in checkpoint.rglob("*")} == before


def test_bad_evaluation_name_is_refused(checkpoint, tmp_path, capsys):
    code, _, err = run_json(capsys, "evaluate", str(checkpoint), "--file", str(CHALLENGE / "conj_like.tsv"),
                            "--name", "../escape", "--cache-dir", str(tmp_path / "cache"))
    assert code == 2 and "evaluation name" in err and not (checkpoint.parent / "escape").exists()


# ----------------------------------------------------------------- item 16: validate before spaCy

@pytest.fixture
def no_spacy(monkeypatch):
    """Fail the test if anything reaches the spaCy pass."""
    from nlivis.features import sentences as analysis

    def refuse(*args, **kwargs):
        raise AssertionError("spaCy ran before the input was validated")

    monkeypatch.setattr(analysis, "analyse_sentences", refuse)


def test_label_mismatch_is_found_before_spacy(checkpoint, tmp_path, capsys, no_spacy):
    path = tmp_path / "q" / "dev.tsv"
    path.parent.mkdir()
    path.write_text("1\tWhat is it ?\tWhat is this ?\t5\n")
    code, _, err = run_json(capsys, "evaluate", str(checkpoint), "--file", str(path))
    assert code == 2 and "'duplicate' (first on line 1)" in err and "nothing was analysed" in err


def test_unknown_group_field_is_found_before_spacy(checkpoint, capsys, no_spacy):
    code, _, err = run_json(capsys, "evaluate", str(checkpoint), "--file", str(CHALLENGE / "conj_like.tsv"),
                            "--group-by", "heuristic")
    assert code == 2 and "no field 'heuristic'" in err


def test_no_pairs_names_the_file_and_the_dropped_pairs(checkpoint, tmp_path, capsys, no_spacy):
    path = write_jsonl(tmp_path / "d" / "snli_1.0_dev.jsonl", snli_rows(2, label="-"))
    code, _, err = run_json(capsys, "evaluate", str(checkpoint), "--dataset", "snli", "--split", "dev",
                            "--data-dir", str(path.parent))
    assert code == 2 and f"{path}: no pairs to evaluate (2 pair(s) have gold label '-'" in err


def test_blank_line_and_dropped_pairs_are_reported(checkpoint, tmp_path, capsys):
    path = write_jsonl(tmp_path / "d" / "snli_1.0_dev.jsonl", snli_rows(3) + snli_rows(1, start=9, label="-"),
                       trailing="\n")
    code, output, err = run_json(capsys, "evaluate", str(checkpoint), "--dataset", "snli", "--split", "dev",
                                 "--data-dir", str(path.parent), "--json", "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert output["count"] == 3 and output["dropped_no_gold"] == 1
    notes = " ".join(output["notes"])
    assert "1 pair(s)" in notes and "gold label '-'" in notes and "1 blank line(s)" in notes


# ------------------------------------------------------------------------------ item 15: truncation

def test_evaluate_reports_pairs_cut_to_the_model_length(checkpoint, tmp_path, capsys):
    long_premise = " ".join(f"word{i}" for i in range(20)) + " ."   # 21 tokens > 12
    long_hypothesis = " ".join(f"w{i}" for i in range(9)) + " ."    # 10 tokens > 8
    rows = [{"gold_label": "neutral", "sentence1": long_premise, "sentence2": "A man sleeps .", "pairID": "a"},
            {"gold_label": "neutral", "sentence1": "A man eats .", "sentence2": long_hypothesis, "pairID": "b"},
            {"gold_label": "neutral", "sentence1": long_premise, "sentence2": long_hypothesis, "pairID": "c"},
            {"gold_label": "neutral", "sentence1": "A man eats .", "sentence2": "He sleeps .", "pairID": "d"}]
    path = write_jsonl(tmp_path / "cut.jsonl", rows)
    code, output, err = run_json(capsys, "evaluate", str(checkpoint), "--file", str(path), "--json",
                                 "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert output["truncated"] == {"pairs": 3, "premises": 2, "hypotheses": 2, "total": 4,
                                   "max_premise_len": 12, "max_hypothesis_len": 8}
    assert any("3 of 4 pairs were cut" in note for note in output["notes"])
    code = main(["evaluate", str(checkpoint), "--file", str(path), "--cache-dir", str(tmp_path / "cache")])
    assert code == 0 and "3 of 4 pairs were cut" in capsys.readouterr().out


# ------------------------------------------------------------------- issue 15: challenge breakdown

def test_challenge_file_by_group_json(checkpoint, tmp_path, capsys):
    before = snapshot(checkpoint)
    code, output, err = run_json(capsys, "evaluate", str(checkpoint), "--file", str(CHALLENGE / "anli_like.csv"),
                                 "--group-by", "tags", "--json", "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert snapshot(checkpoint) == before and output["written"] is True
    groups = {row["group"]: row for row in output["by_group"]}
    assert {g: groups[g]["count"] for g in ("Basic", "Lexical", "Negation", "(none)")} == \
        {"Basic": 2, "Lexical": 2, "Negation": 1, "(none)": 1}
    for row in output["by_group"]:
        assert set(row) >= {"group", "count", "correct", "accuracy", "ci_low", "ci_high", "majority_label"}
        assert 0 <= row["ci_low"] <= row["accuracy"] <= row["ci_high"] <= 1
    assert output["overall"]["count"] == output["count"] == 5 and output["dropped_no_gold"] == 1
    assert output["overall"]["accuracy"] == pytest.approx(output["accuracy"])
    predictions = read_predictions(find_named_evaluations(checkpoint)[output["name"]].predictions_file)
    correct = {p.id: p.correct for p in predictions}
    assert groups["Lexical"]["correct"] == correct["u1"] + correct["u4"]


def test_hans_like_file_maps_three_way_predictions_and_says_so(checkpoint, tmp_path, capsys):
    code, output, err = run_json(capsys, "evaluate", str(checkpoint), "--file", str(CHALLENGE / "hans_like.txt"),
                                 "--group-by", "heuristic", "--json", "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert output["labels"] == ["entailment", "non-entailment"] and "non-entailment" in output["label_mapping"]
    assert {row["group"]: row["count"] for row in output["by_group"]} == \
        {"lexical_overlap": 2, "constituent": 1, "subsequence": 1}
    rows = read_predictions(Path(output["predictions_file"]))
    assert all(len(p.probs) == 2 and abs(sum(p.probs) - 1) < 1e-3 for p in rows)


def test_stress_test_files_grouped_by_file(checkpoint, tmp_path, capsys):
    files = ["multinli_0.9_antonym_matched.jsonl", "multinli_0.9_negation_matched.jsonl"]
    argv = ["evaluate", str(checkpoint), "--group-by", "file", "--json", "--cache-dir", str(tmp_path / "cache")]
    for name in files:
        argv += ["--file", str(CHALLENGE / name)]
    code, output, err = run_json(capsys, *argv)
    assert code == 0, err
    assert {row["group"]: row["count"] for row in output["by_group"]} == \
        {"multinli_0.9_negation_matched": 3, "multinli_0.9_antonym_matched": 2}


# ------------------------------------------------------------------------- item 12: labels checked

@pytest.mark.parametrize("labels", [["entailment", "neutral"], ["neutral", "entailment", "contradiction"]])
def test_hand_edited_labels_are_refused(checkpoint, capsys, labels):
    config = json.loads((checkpoint / "config.json").read_text())
    config["labels"] = labels
    (checkpoint / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="labels"):
        load_checkpoint(checkpoint)
    code, _, err = run_json(capsys, "predict", str(checkpoint), "--premise", "A man eats .", "--hypothesis", "He sleeps .")
    assert code == 2 and "restore its labels list" in err and "Traceback" not in err


def test_reordered_labels_are_found_from_the_recorded_predictions(checkpoint):
    """Without a known protocol, the recorded predictions still tell the order."""
    config = json.loads((checkpoint / "config.json").read_text())
    config["dataset"]["protocol"] = "hand-made"
    config["labels"] = ["contradiction", "neutral", "entailment"]
    (checkpoint / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="reordered"):
        load_checkpoint(checkpoint)


# ------------------------------------------------------------------------- item 13: non-finite

def test_nan_weights_are_refused_naming_the_checkpoint(checkpoint, capsys):
    loaded = load_checkpoint(checkpoint)
    state = {k: torch.full_like(v, float("nan")) if v.is_floating_point() else v
             for k, v in loaded.model.state_dict().items()}
    for key in loaded.config["weights"]["excluded_keys"]:
        state.pop(key)
    rewrite_checkpoint(checkpoint, weights=(state, torch.float32))
    code, _, err = run_json(capsys, "predict", str(checkpoint), "--premise", "A man eats .", "--hypothesis", "He sleeps .")
    assert code == 2 and str(checkpoint) in err and "NaN" in err
    from nlivis.app.cache import load_model  # the app loads through the same check

    model, error = load_model(checkpoint)
    assert model is None and str(checkpoint) in error and "NaN" in error


def test_non_finite_outputs_are_an_error(checkpoint):
    from nlivis.inference import predict_pair as predict_pairs

    loaded = load_checkpoint(checkpoint)
    with torch.no_grad():
        for parameter in loaded.model.parameters():
            parameter.fill_(float("nan"))
    with pytest.raises(ValueError, match=f"checkpoint {checkpoint}: the model gave non-finite outputs"):
        predict_pairs(loaded, "A man eats .", "He sleeps .")


# --------------------------------------------------------------------- item 14: hostile text

@pytest.mark.parametrize("premise", ["\u200b\u200b", "\x00", "\ufeff", "\x1b\x07 \u200d", "..."])
def test_text_without_a_real_word_is_refused(checkpoint, capsys, premise):
    code, _, err = run_json(capsys, "predict", str(checkpoint), "--premise", premise, "--hypothesis", "He sleeps .")
    assert code == 2 and "no real word" in err and "\x1b" not in err and "\x00" not in err


def test_predict_function_refuses_invisible_text_too(checkpoint):
    from nlivis.inference import predict_pair as predict_pairs

    with pytest.raises(ValueError, match="no real word"):
        predict_pairs(load_checkpoint(checkpoint), "\u200b\ufeff", "A man sleeps .")


def test_escape_sequences_in_notices_are_printed_escaped(checkpoint, capsys):
    code = main(["predict", str(checkpoint), "--premise", "A man \x1b[31mxylo\x1b]0;owned\x07 eats .",
                 "--hypothesis", "He sleeps ."])
    err = capsys.readouterr().err
    assert code == 0 and "\x1b" not in err and "\x07" not in err and "\\x1b" in err


def test_non_utf8_argv_byte_is_named(checkpoint, capsys):
    code, _, err = run_json(capsys, "predict", str(checkpoint), "--premise", "caf\udce9 au lait", "--hypothesis", "He sleeps .")
    assert code == 2 and "not valid UTF-8" in err and "0xe9" in err


def test_unknown_word_notice_cuts_a_huge_token(checkpoint, capsys):
    code = main(["predict", str(checkpoint), "--premise", "A " + "z" * 100_000 + " eats .", "--hypothesis", "He sleeps ."])
    err = capsys.readouterr().err
    assert code == 0 and len(err) < 1_000 and "100,000 characters" in err


# ------------------------------------------------------------------ item 17: outside the root

def test_embeddings_file_outside_the_root_is_refused(checkpoint, tmp_path):
    outside = tmp_path / "elsewhere.safetensors"
    outside.write_bytes(b"secret")
    config = json.loads((checkpoint / "config.json").read_text())
    config["embeddings"].update({"shared": True, "file": str(Path("..") / ".." / outside.name), "sha256": "0" * 64,
                                 "state_key": "x"})
    (checkpoint / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="points outside the checkpoint root"):
        load_checkpoint(checkpoint)


@pytest.mark.parametrize("name", ["vocab.json", "predictions_snli_dev.jsonl.gz"])
def test_symlink_out_of_the_root_is_refused(checkpoint, tmp_path, name):
    from nlivis.store.checkpoints import read_checkpoint_info

    outside = tmp_path / "outside" / name
    outside.parent.mkdir()
    shutil.copy2(checkpoint / name, outside)
    (checkpoint / name).unlink()
    (checkpoint / name).symlink_to(outside)
    for reader in (load_checkpoint, read_checkpoint_info):
        with pytest.raises(CheckpointError, match="points outside the checkpoint root"):
            reader(checkpoint)


def test_symlink_inside_the_root_is_fine(checkpoint):
    inside = checkpoint.parent / "kept_vocab.json"
    shutil.copy2(checkpoint / "vocab.json", inside)
    (checkpoint / "vocab.json").unlink()
    (checkpoint / "vocab.json").symlink_to(inside)
    assert load_checkpoint(checkpoint).labels == ("entailment", "neutral", "contradiction")


# ----------------------------------------------------------------------- functions the app calls

def test_split_truncation_from_the_cache_only(checkpoint, tmp_path, capsys, monkeypatch):
    from nlivis.analysis.evaluation import count_truncated_sides
    from nlivis.data.protocols import SplitRef, read_split
    from nlivis.features.dataset import cached_split_tokens

    loaded = load_checkpoint(checkpoint)
    ref, cache = SplitRef("snli", "dev", ""), tmp_path / "fresh-cache"
    read = read_split(ref, FIXTURE_DIR)
    assert cached_split_tokens(ref, read, cache) is None  # never analysed: no spaCy
    code, output, err = run_json(capsys, "evaluate", str(checkpoint), "--dataset", "snli", "--split", "dev",
                                 "--data-dir", str(FIXTURE_DIR), "--json", "--cache-dir", str(cache))
    assert code == 0, err
    tokens = cached_split_tokens(ref, read, cache)
    assert [pair_id for pair_id, _, _ in tokens] == [pair.id for pair in read.pairs]
    sides = [(premise, hypothesis) for _, premise, hypothesis in tokens]
    assert count_truncated_sides(loaded.featurizer.settings, sides).to_dict() == output["truncated"]


def test_challenge_predictions_reuse_the_named_evaluation(checkpoint, tmp_path):
    from nlivis.workflows.evaluate import challenge_predictions
    from nlivis.data.challenge import read_challenge_files

    loaded = load_checkpoint(checkpoint)
    challenge = read_challenge_files([CHALLENGE / "conj_like.tsv"])
    assert challenge_predictions(loaded, challenge, tmp_path / "cache", compute=False) == ([], None)
    first, evaluation = challenge_predictions(loaded, challenge, tmp_path / "cache")
    assert len(first) == 3 and evaluation.name.startswith("conj_like-")
    stamp = evaluation.predictions_file.stat().st_mtime_ns
    again, same = challenge_predictions(loaded, challenge, tmp_path / "cache", compute=False)
    assert again == first and same.folder == evaluation.folder
    assert evaluation.predictions_file.stat().st_mtime_ns == stamp


def test_symlink_out_of_the_root_inside_a_named_evaluation_is_refused(checkpoint, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    folder = checkpoint / "evaluations" / "mine"
    folder.mkdir(parents=True)
    (folder / "predictions.jsonl.gz").symlink_to(outside)
    with pytest.raises(CheckpointError, match="evaluations/mine/predictions.jsonl.gz points outside"):
        load_checkpoint(checkpoint)


def test_group_by_without_a_file_is_refused(checkpoint, capsys, no_spacy):
    code, _, err = run_json(capsys, "evaluate", str(checkpoint), "--dataset", "snli", "--split", "dev",
                            "--data-dir", str(FIXTURE_DIR), "--group-by", "genre")
    assert code == 2 and "--group-by needs --file" in err


@pytest.mark.parametrize("premise", ["", "\u200b\ufeff", "\x00"])
def test_attribution_refuses_text_without_a_real_word(premise):
    from nlivis.features.dataset import analysed_text_pair

    with pytest.raises(ValueError, match="empty|no real word"):
        analysed_text_pair(premise, "A man sleeps .")
