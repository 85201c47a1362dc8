"""`python -m nlivis train / evaluate / predict` on the fixture data: outputs, exit codes, no tracebacks."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nlivis.cli import main
from tests.fixtures.training.helpers import FIXTURE_DIR, TINY_CONFIG
from tests.fixtures.waiting import wait_for

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A checkpoint trained through the command line (in-process, so it stays fast)."""
    root = tmp_path_factory.mktemp("cli")
    code = main(["train", "--config", str(TINY_CONFIG), "--dataset", "snli", "--data-dir", str(FIXTURE_DIR),
                 "--out", str(root / "tiny"), "--device", "cpu", "--max-steps", "4",
                 "--cache-dir", str(root / "cache")])
    assert code == 0 and (root / "tiny" / "COMPLETE").is_file()
    return root / "tiny"


def test_train_refuses_to_overwrite_a_complete_checkpoint(trained, capsys):
    code = main(["train", "--config", str(TINY_CONFIG), "--dataset", "snli", "--data-dir", str(FIXTURE_DIR),
                 "--out", str(trained), "--device", "cpu", "--max-steps", "1"])
    assert code == 2
    assert "already holds a complete checkpoint" in capsys.readouterr().err


def test_evaluate_prints_scores_and_keeps_predictions_without_overwriting(trained, capsys):
    recorded = trained / "predictions_snli_test.jsonl.gz"
    before = recorded.read_bytes()
    code = main(["evaluate", str(trained), "--dataset", "snli", "--split", "test", "--data-dir", str(FIXTURE_DIR),
                 "--json", "--cache-dir", str(trained.parent / "cache")])
    assert code == 0
    output = json.loads(capsys.readouterr().out)
    assert output["count"] == 12 and 0.0 <= output["accuracy"] <= 1.0
    assert set(output["per_label"]) == {"entailment", "neutral", "contradiction"}
    assert sum(map(sum, output["confusion"]["matrix"])) == 12
    # the recorded split, same pairs, same results: nothing written, the recorded file named
    assert output["written"] is False and output["predictions_file"] == str(recorded)
    assert recorded.read_bytes() == before and not (trained / "evaluations").exists()
    lines = gzip.decompress(recorded.read_bytes()).splitlines()
    assert len(lines) == 12 and set(json.loads(lines[0])) == {"id", "gold", "predicted", "probs"}


def test_evaluate_by_tag_with_a_tags_file(trained, tmp_path, capsys):
    tags = tmp_path / "tags.tsv"
    tags.write_text("dev-000\tNEGATION\ndev-001\tWORD_OVERLAP,NEGATION\ndev-002\n")
    code = main(["evaluate", str(trained), "--dataset", "snli", "--split", "dev", "--data-dir", str(FIXTURE_DIR),
                 "--by-tag", "--tags-file", str(tags), "--tag-source", "gold", "--json",
                 "--cache-dir", str(trained.parent / "cache")])
    assert code == 0
    output = json.loads(capsys.readouterr().out)
    rows = {row["tag"]: row for row in output["by_tag"]}
    assert {row["source"] for row in output["by_tag"]} == {"gold"} and "3 pairs" in output["tag_sources"]
    assert rows["NEGATION"]["count"] == 2 and rows["WORD_OVERLAP"]["count"] == 1
    assert rows["NEGATION"]["ci_low"] < rows["NEGATION"]["ci_high"]


def test_evaluate_by_tag_scores_gold_and_automatic_pairs_apart(trained, tmp_path, capsys):
    tags = tmp_path / "repeval.txt"  # the RepEval release's shape: '#' marks, a trailing tab
    tags.write_text("dev-000\t#NEGATION\ndev-001\t#WORD_OVERLAP\t#NEGATION\ndev-002\t\n")
    code = main(["evaluate", str(trained), "--dataset", "snli", "--split", "dev", "--data-dir", str(FIXTURE_DIR),
                 "--by-tag", "--tags-file", str(tags), "--json", "--cache-dir", str(trained.parent / "cache")])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)["by_tag"]
    gold = {row["tag"]: row for row in rows if row["source"] == "gold"}
    automatic = [row for row in rows if row["source"] == "automatic"]
    assert gold["NEGATION"]["count"] == 2 and automatic
    from nlivis.analysis.tags import tag_pairs
    from nlivis.data.readers import read_file

    others = [pair for pair in read_file(FIXTURE_DIR / "snli_1.0_dev.jsonl").pairs
              if pair.id not in ("dev-000", "dev-001", "dev-002")]
    expected = tag_pairs(others)  # the automatic rows cover the other pairs only
    assert {row["tag"]: row["count"] for row in automatic} == {
        tag: sum(tag in names for names in expected.values()) for tag in {row["tag"] for row in automatic}}


def test_a_bad_tags_file_stops_evaluate_before_any_work(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("dev-000\t#NEGATION\ndev-001\t#SARCASM\n")
    # the checkpoint does not even exist: the tags file is checked first, in milliseconds
    code = main(["evaluate", str(tmp_path / "no-checkpoint"), "--dataset", "snli", "--split", "dev",
                 "--data-dir", str(FIXTURE_DIR), "--by-tag", "--tags-file", str(bad)])
    assert code == 2 and "bad.txt, line 2: unknown tag(s) SARCASM" in capsys.readouterr().err
    other = tmp_path / "other.txt"
    other.write_text("113976e\t#MODAL\n")
    code = main(["evaluate", str(tmp_path / "no-checkpoint"), "--dataset", "snli", "--split", "dev",
                 "--data-dir", str(FIXTURE_DIR), "--by-tag", "--tags-file", str(other)])
    assert code == 2 and "none of its 1 pair ids is a pair of snli_dev" in capsys.readouterr().err


def test_predict_table_and_json(trained, capsys):
    assert main(["predict", str(trained), "--premise", "A man plays a guitar .", "--hypothesis", "A man sleeps ."]) == 0
    out = capsys.readouterr().out
    assert out.startswith("label: ") and "unknown words: 0" in out
    assert main(["predict", str(trained), "--premise", "A man plays a xylophone .", "--hypothesis", "A man sleeps .",
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["unknown_words"] == ["xylophone"] and result["unknown_word_count"] == 1
    assert sum(result["probabilities"].values()) == pytest.approx(1.0)


@pytest.mark.parametrize("premise", ["", "   \t "])
def test_predict_empty_text_exits_2_with_a_message(trained, capsys, premise):
    assert main(["predict", str(trained), "--premise", premise, "--hypothesis", "A man sleeps ."]) == 2
    err = capsys.readouterr().err
    assert "premise is empty" in err and "Traceback" not in err


def test_predict_over_long_text_is_cut_with_a_notice(trained, capsys):
    long_premise = " ".join(["man"] * 30)
    assert main(["predict", str(trained), "--premise", long_premise, "--hypothesis", "A man sleeps .", "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["truncation"] == "premise cut from 30 to 12 tokens" and len(result["premise_tokens"]) == 12
    assert "notice: premise cut from 30 to 12 tokens" in captured.err


def test_predict_on_a_broken_checkpoint_names_it(trained, tmp_path, capsys):
    assert main(["predict", str(tmp_path / "missing"), "--premise", "a", "--hypothesis", "b"]) == 2
    assert f"checkpoint {tmp_path / 'missing'}: not a folder" in capsys.readouterr().err


def test_cli_train_subprocess_without_traceback(tmp_path):
    """The real entry point, bad dataset name: one line on stderr, exit code 2."""
    result = subprocess.run(
        [sys.executable, "-m", "nlivis", "train", "--config", str(TINY_CONFIG), "--dataset", "nope",
         "--data-dir", str(FIXTURE_DIR), "--out", str(tmp_path / "x"), "--device", "cpu"],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2
    assert "unknown dataset or protocol 'nope'" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_sigterm_saves_state_and_resume_completes(tmp_path):
    """A running `train` that gets SIGTERM saves its state, exits 130 with a message; --resume finishes it."""
    import signal

    out = tmp_path / "root" / "run"
    command = [sys.executable, "-m", "nlivis", "train", "--config", str(TINY_CONFIG), "--dataset", "snli",
               "--data-dir", str(FIXTURE_DIR), "--out", str(out), "--device", "cpu", "--epochs", "400",
               "--cache-dir", str(tmp_path / "cache")]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    wait_for(lambda: (out / "metrics.jsonl").is_file() and (out / "metrics.jsonl").read_text().count("\n") >= 2,
             lambda: process.poll() is None, lambda: f"it logged two metrics lines: {process.communicate()}")
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate()
    assert process.returncode == 130, err
    assert "training stopped at step" in err and "--resume" in err and "Traceback" not in err
    assert (out / "state" / "state.json").is_file() and not (out / "COMPLETE").exists()
    finished = subprocess.run([*command[:-4], "--epochs", "2", "--resume", "--cache-dir", str(tmp_path / "cache")],
                              cwd=ROOT, capture_output=True, text=True, env=env)
    assert finished.returncode == 0, finished.stderr
    assert (out / "COMPLETE").is_file()


def test_train_says_a_missing_glove_file_before_reading_any_data(tmp_path, capsys, monkeypatch):
    """The embeddings' source is checked with the config, before spaCy analyses a split (minutes on real data)
    and before the output folder is made."""
    from nlivis.training import trainer

    def no_data(*args, **kwargs):
        raise AssertionError("data was read before the embeddings' source was checked")

    monkeypatch.setattr(trainer, "prepare_data", no_data)
    missing = tmp_path / "glove.840B.300d.txt"
    code = main(["train", "--config", str(TINY_CONFIG), "--dataset", "snli", "--data-dir", str(FIXTURE_DIR),
                 "--out", str(tmp_path / "run"), "--device", "cpu", "--max-steps", "1",
                 "--embeddings", f"glove:{missing}"])
    assert code == 2
    assert str(missing) in capsys.readouterr().err
    assert not (tmp_path / "run" / "COMPLETE").exists()
