"""`python -m nlivis edits` and `probe`: the JSON contracts on a tiny checkpoint and on the shipped ones, and
one-line errors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlivis.analysis.edits import KINDS
from nlivis.cli import main
from tests.fixtures.app_checkpoints import APP_DATA, train_variant

SHIPPED = Path(__file__).resolve().parents[1] / "checkpoints"
SHIPPED_SNLI = [SHIPPED / f"{family}-snli-small" for family in ("gcnn", "esan")]
shipped = pytest.mark.skipif(not all((folder / "COMPLETE").is_file() for folder in SHIPPED_SNLI),
                             reason="shipped checkpoints gcnn-snli-small / esan-snli-small absent")
EDIT_FIELDS = {"kind", "side", "change", "premise", "hypothesis", "expected", "expectation", "direction", "reason",
               "predictions", "flipped", "meets_expectation"}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return train_variant(tmp_path_factory.mktemp("interventions") / "checkpoints", "gcnn")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_edits_json_contract_on_a_tiny_checkpoint(tiny, capsys, wordnet):
    code, out, _ = run(capsys, "edits", tiny, "--premise", "The tall man is playing a guitar .",
                       "--hypothesis", "The man is playing a guitar .", "--label", "entailment", "--json",
                       "--kinds", ",".join(KINDS))
    assert code == 0
    result = json.loads(out)
    name = tiny.name
    assert result["task"] == "nli" and result["label"] == "entailment"
    assert set(result["original"]["predictions"][name]) == {"label", "probabilities"}
    assert set(result["original"]["predictions"][name]["probabilities"]) == {"entailment", "neutral", "contradiction"}
    assert result["edits"] and all(set(edit) == EDIT_FIELDS for edit in result["edits"])
    for edit in result["edits"]:
        assert set(edit["change"]) == {"word", "replacement", "relation", "source", "position"}
        assert set(edit["change"]["position"]) == {"premise", "hypothesis"}
        assert edit["expectation"] in ("label", "invariant", "direction", None)
        assert isinstance(edit["flipped"][name], bool)
        assert (edit["meets_expectation"][name] is None) == (edit["expectation"] is None)
        flipped = edit["predictions"][name]["label"] != result["original"]["predictions"][name]["label"]
        assert edit["flipped"][name] == flipped
    negated = next(e for e in result["edits"] if e["kind"] == "negation" and e["side"] == "hypothesis")
    assert negated["hypothesis"] == "The man is not playing a guitar ." and negated["expected"] == "contradiction"
    assert "Reduced protocol" in result["checkpoints"][name]["protocol_note"]


def test_edits_table_and_kinds(tiny, capsys):
    code, out, _ = run(capsys, "edits", tiny, "--premise", "The man isn't sleeping .", "--hypothesis",
                       "A man is awake .", "--kinds", "negation,swap")
    assert code == 0
    assert "−n't" in out and "premise ↔ hypothesis" in out and "typo" not in out


def test_edits_writes_nothing_under_home_and_escapes_what_it_prints(tiny, capsys, wordnet, monkeypatch, tmp_path):
    from nlivis.store.files import cache_root

    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(cache_root()))
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    code, out, _ = run(capsys, "edits", tiny, "--premise", "A tall \x1b[31mred\x1b[0m man plays .",
                       "--hypothesis", "A man \x1b]0;pwned\x07 plays .")
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "\\x1b[31mred" in out
    assert list(home.iterdir()) == [], "nothing written under HOME"


@pytest.mark.parametrize("argv, message", [
    (["--premise", "x" * 1001, "--hypothesis", "A man ."], "at most 1,000"),
    (["--premise", "   ", "--hypothesis", "A man ."], "is empty"),
    (["--premise", "A man .", "--hypothesis", "A man .", "--kinds", "paraphrasing"], "unknown edit kind"),
    (["--premise", "A man .", "--hypothesis", "A man .", "--label", "duplicate"], "is not one of this nli model's"),
], ids=["too-long", "empty", "unknown-kind", "wrong-label"])
def test_edits_errors_are_one_line(tiny, capsys, argv, message):
    code, out, err = run(capsys, "edits", tiny, *argv, "--json")
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err
    assert message in json.loads(out)["error"]


def test_probe_json_contract_on_a_tiny_checkpoint(tiny, capsys, tmp_path, wordnet):
    code, out, err = run(capsys, "probe", tiny, "--suite", "nli", "--max-cases", "3", "--data-dir", APP_DATA,
                         "--cache-dir", tmp_path, "--json")
    assert code == 0 and "probe: predicting" in err
    result = json.loads(out)
    name = tiny.name
    assert len({test["capability"] for test in result["tests"]}) >= 10
    for test in result["tests"]:
        assert {"capability", "name", "type", "generator", "cases", "by_model"} <= set(test)
        assert test["type"] in ("MFT", "INV", "DIR") and test["cases"] == len(test["case_list"]) <= 3
        assert test["generator"] in ("engine", "independent")
        assert test["type"] == "MFT" or test["generator"] == "engine"  # dev pairs edited by the engine
        entry = test["by_model"][name]
        assert entry["failures"] == len(entry["failing"])
        if test["cases"] == 0:  # twelve fixture pairs give some dev-built tests nothing: said, not hidden
            assert entry["rate"] is None and entry["interval"] is None
            continue
        assert entry["rate"] == pytest.approx(entry["failures"] / test["cases"], abs=1e-6)
        low, high = entry["interval"]
        assert 0 <= low <= entry["rate"] <= high <= 1
        for failing in entry["failing"]:
            case = test["case_list"][failing["case"]]
            assert set(case) >= {"premise", "hypothesis", "expected", "expectation", "original", "source"}
    assert any(test["type"] == "INV" for test in result["tests"])  # dev-built tests from the fixture's SNLI dev
    overlap = result["checkpoints"][name]["training_overlap"]
    assert overlap["split"] == "snli_test" and overlap["cases_checked"] > 0
    assert result["comparisons"] == []  # one checkpoint: nothing to compare
    code, again, err = run(capsys, "probe", tiny, "--suite", "nli", "--max-cases", "3", "--data-dir", APP_DATA,
                           "--cache-dir", tmp_path, "--json")
    assert code == 0 and json.loads(again) == result, "the same suite on the same checkpoint: the kept predictions"
    assert "probe: predicting" not in err and "spaCy on" not in err


def test_probe_refuses_a_suite_of_another_task(tiny, capsys):
    code, out, err = run(capsys, "probe", tiny, "--suite", "paraphrase", "--json")
    assert code == 2 and "they are nli models" in err and "error" in json.loads(out)


@shipped
def test_edits_on_shipped_checkpoints_give_tall_short(capsys, wordnet):
    code, out, _ = run(capsys, "edits", *SHIPPED_SNLI, "--premise", "The man is tall .", "--hypothesis",
                       "The man is tall .", "--label", "entailment", "--kinds", "antonym", "--json")
    assert code == 0
    result = json.loads(out)
    antonym = next(e for e in result["edits"] if e["side"] == "hypothesis" and e["change"]["replacement"] == "short")
    assert antonym["hypothesis"] == "The man is short ." and antonym["expected"] == "contradiction"
    assert set(antonym["predictions"]) == {"gcnn-snli-small", "esan-snli-small"}


@shipped
def test_probe_compares_two_shipped_checkpoints_with_mcnemar(capsys, tmp_path, wordnet):
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(2)  # as the app runs: the two models predict side by side at one torch thread each,
    try:  # and torch's own count is back as it was after
        code, out, err = run(capsys, "probe", *SHIPPED_SNLI, "--suite", "nli", "--max-cases", "20", "--cache-dir",
                             tmp_path, "--json")
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)
    assert code == 0 and "probe: esan-snli-small done" in err
    result = json.loads(out)
    assert len(result["comparisons"]) == len(result["tests"]) == 15  # 16 templates, one off by default
    assert "WordNet antonym adjectives" in result["switched_off"]
    assert "WordNet antonym adjectives" not in {test["name"] for test in result["tests"]}
    assert all(0 <= row["p"] <= row["p_holm"] <= 1 for row in result["comparisons"])
    assert all(result["checkpoints"][name]["training_overlap"]["checked"] is False for name in result["checkpoints"])
