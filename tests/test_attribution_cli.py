"""`python -m nlivis explain` and `faithfulness` on a shipped checkpoint: the JSON fields the issue names,
the cache, and one-line errors for bad input."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlivis.cli import main
from tests.fixtures.app_checkpoints import APP_DATA

CHECKPOINT = Path(__file__).resolve().parents[1] / "checkpoints" / "esan-snli-small"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_explain_prints_tokens_scores_and_the_completeness_gap(capsys):
    code, out, _ = run(capsys, "explain", str(CHECKPOINT), "--premise", "A man plays a guitar .",
                       "--hypothesis", "A man sleeps .", "--method", "integrated_gradients", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["premise_tokens"] == ["A", "man", "plays", "a", "guitar", "."]
    assert result["hypothesis_tokens"] == ["A", "man", "sleeps", "."]
    assert len(result["premise_scores"]) == 6 and len(result["hypothesis_scores"]) == 4
    assert result["target"] == result["predicted"]
    assert abs(result["completeness_gap"]) < 0.05
    assert result["steps"] >= 50 and result["steps_adaptive"] is True
    assert abs(result["completeness_difference"]) >= 0.01 and result["completeness_gap_note"] is None


def test_explain_with_explicit_steps_does_not_refine(capsys):
    code, out, _ = run(capsys, "explain", str(CHECKPOINT), "--premise", "A man plays a guitar .",
                       "--hypothesis", "A man sleeps .", "--steps", "3", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["steps"] == 3 and result["steps_adaptive"] is False
    assert "as requested" in result["note"]
    if abs(result["completeness_gap"]) >= 0.05:  # 3 steps may or may not be enough: the note must say which
        assert "no refinement" in result["completeness_gap_note"]
    else:
        assert result["completeness_gap_note"] is None


def test_explain_attention_for_another_class(capsys):
    code, out, _ = run(capsys, "explain", str(CHECKPOINT), "--premise", "A man plays a guitar .",
                       "--hypothesis", "A man sleeps .", "--method", "attention", "--target", "neutral", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["target"] == "neutral"
    assert set(result["layers"]) == {"cross-attention layer 1", "cross-attention layer 2"}
    assert "completeness_gap" not in result


@pytest.mark.parametrize("argv, message", [
    (["--method", "saliency"], "unknown attribution method"),
    (["--target", "maybe"], "neither one of this model's labels"),
])
def test_explain_rejects_bad_input_in_one_line(capsys, argv, message):
    code, _, err = run(capsys, "explain", str(CHECKPOINT), "--premise", "A man plays .", "--hypothesis", "A man .", *argv)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_faithfulness_prints_methods_and_caches_them(capsys, tmp_path):
    argv = ["faithfulness", str(CHECKPOINT), "--dataset", "snli-small", "--split", "dev", "--data-dir", str(APP_DATA),
            "--sample", "5", "--methods", "gradient,attention,random", "--cache-dir", str(tmp_path), "--json",
            "--no-progress"]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    result = json.loads(out)
    assert set(result["methods"]) == {"gradient", "attention", "random"}
    gradient = result["methods"]["gradient"]
    assert gradient["pairs"] == 5
    low, high = gradient["comprehensiveness_interval"]
    assert low <= gradient["comprehensiveness"] <= high
    assert "average" in gradient["agreement_with_attention"]
    assert result["highlights"] is None and "plausibility" not in gradient
    assert result["cached"] == []
    code, again, _ = run(capsys, *argv)
    assert json.loads(again)["cached"] == ["gradient", "attention", "random"]
    assert json.loads(again)["methods"] == result["methods"]


def test_faithfulness_caches_integrated_gradients_by_its_settings(capsys, tmp_path):
    """The adaptive default and an explicit step count give different records, so they never share a file."""
    argv = ["faithfulness", str(CHECKPOINT), "--dataset", "snli-small", "--split", "dev", "--data-dir", str(APP_DATA),
            "--sample", "3", "--methods", "integrated_gradients", "--cache-dir", str(tmp_path), "--json", "--no-progress"]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    adaptive = json.loads(out)
    assert adaptive["integrated_gradients_steps"] == "steps16to1600-tol0.05-floor0.01"
    gap = adaptive["methods"]["integrated_gradients"]["completeness_gap"]
    assert gap["pairs_missing_tolerance"] == 0 and gap["steps_max"] >= 16
    code, out, _ = run(capsys, *argv, "--steps", "4")
    fixed = json.loads(out)
    assert fixed["cached"] == [] and fixed["integrated_gradients_steps"] == "steps4"
    assert fixed["methods"]["integrated_gradients"]["completeness_gap"]["steps_max"] == 4
    names = sorted(path.name.split("-integrated_gradients-")[1] for path in tmp_path.rglob("*integrated_gradients*.json"))
    assert names == ["token_features-steps16to1600-tol0.05-floor0.01.json", "token_features-steps4.json"]
    code, out, _ = run(capsys, *argv, "--steps", "4", "--attribute-at", "word_vectors")
    assert code == 0 and json.loads(out)["cached"] == [] and json.loads(out)["attribute_at"] == "word_vectors"
    code, out, _ = run(capsys, *argv)
    assert json.loads(out)["cached"] == ["integrated_gradients"]
