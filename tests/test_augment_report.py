"""scripts/augment_report.py's paired comparison and seed noise, and results_table's command for an augmented
run, on small files written here."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from nlivis.analysis.significance import mcnemar_exact
from nlivis.store.predictions import write_predictions

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def script(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def predictions(folder: Path, predicted: list[str], gold: list[str | None]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_predictions(folder / "predictions_snli_dev.jsonl.gz",
                             [{"id": str(i), "gold": g, "predicted": p, "probs": [1.0, 0.0, 0.0]}
                              for i, (p, g) in enumerate(zip(predicted, gold))])


def test_paired_counts_only_labelled_pairs_both_hold_and_tests_the_discordant_ones(tmp_path):
    report = script("augment_report")
    gold = ["entailment", "neutral", "contradiction", "neutral", None]
    before = predictions(tmp_path / "a", ["entailment", "entailment", "contradiction", "neutral", "neutral"], gold)
    after = predictions(tmp_path / "b", ["entailment", "neutral", "neutral", "entailment", "neutral"], gold)
    result = report.paired(report.outcomes(before), report.outcomes(after))
    assert result["pairs"] == 4  # the unlabelled pair is left out
    assert (result["before"], result["after"]) == (0.75, 0.5)
    assert (result["only_before_right"], result["only_after_right"]) == (2, 1)
    assert result["p"] == pytest.approx(mcnemar_exact(2, 1))


def test_significant_regressions_come_first_then_other_losses_then_the_rest():
    report = script("augment_report")
    rows = [{"name": "gain", "before": 0.5, "after": 0.7, "p_holm": 0.001},
            {"name": "small loss", "before": 0.6, "after": 0.59, "p_holm": 0.8},
            {"name": "big loss", "before": 0.7, "after": 0.4, "p_holm": 0.002},
            {"name": "flat", "before": 0.5, "after": 0.5, "p_holm": 1.0}]
    ordered = report.regressions_first(rows, lambda row: row["after"] < row["before"])
    assert [row["name"] for row in ordered] == ["big loss", "small loss", "gain", "flat"]
    assert [row["regression"] for row in ordered] == [True, False, False, False]
    assert report.flag(ordered[0]) == " **regression**" and report.flag(ordered[2]) == ""


def test_categories_are_tested_each_on_its_own_pairs(tmp_path):
    report = script("augment_report")
    data = tmp_path / "set.jsonl"
    rows = [{"premise": f"p{i}", "hypothesis": f"h{i}", "label": "entailment", "tags": ["A"] if i < 6 else ["B"],
             "id": str(i)} for i in range(10)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    gold = ["entailment"] * 10
    before = predictions(tmp_path / "a", ["entailment"] * 10, gold)
    after = predictions(tmp_path / "b", ["neutral"] * 6 + ["entailment"] * 4, gold)
    found = report.category_comparisons([data], "tags", before, after)
    assert [(row["category"], row["pairs"], row["before"], row["after"]) for row in found] == [
        ("A", 6, 1.0, 0.0), ("B", 4, 1.0, 1.0)]
    assert found[0]["only_before_right"] == 6 and found[0]["p_holm"] == pytest.approx(min(1.0, 2 * mcnemar_exact(6, 0)))


def test_seed_noise_is_the_gap_to_the_seed2_sibling_or_none(tmp_path):
    report = script("augment_report")
    base = tmp_path / "esan-snli-small"
    for folder, accuracy in ((base, 0.73), (tmp_path / "esan-snli-small-seed2", 0.7318)):
        folder.mkdir()
        (folder / "metrics.json").write_text(json.dumps({"best_dev_accuracy": accuracy}))
    noise = report.seed_noise(base)
    assert noise["seed2"] == "esan-snli-small-seed2" and noise["gap"] == pytest.approx(0.0018)
    (tmp_path / "gcnn-snli-small").mkdir()
    assert report.seed_noise(tmp_path / "gcnn-snli-small") is None


def test_results_table_cites_the_augmentation_of_an_augmented_run():
    table = script("results_table")
    config = {"config_name": "esan", "size": "shipped", "dataset": {"protocol": "snli-small"},
              "embeddings": {"source": "minilm"}, "seed": 1, "training": {"epochs": 4.0},
              "augmentation": {"kinds": ["antonym", "negation"], "ratio": 0.5}}
    command = table.reproduce_command(config, "esan-snli-small-augmented")
    assert "--epochs 4 --augment antonym,negation --augment-ratio 0.5 --out checkpoints/esan-snli-small-augmented" in command
    del config["augmentation"]
    assert "--augment" not in table.reproduce_command(config, "esan-snli-small")


def test_results_table_cites_the_step_budget_of_a_run_cut_short_by_max_steps():
    """A compute-matched pair stops both runs at the same step, before their epochs: the command says so."""
    table = script("results_table")
    config = {"config_name": "amn", "size": "shipped", "dataset": {"protocol": "snli-small"},
              "embeddings": {"source": "minilm"}, "seed": 1, "training": {"epochs": 12.0}, "epochs": 5.3896,
              "steps": 830}
    assert "--epochs 12 --max-steps 830 --out" in table.reproduce_command(config, "amn-snli-small-matched")
    config.update(epochs=12.0, steps=1848)
    assert "--max-steps" not in table.reproduce_command(config, "amn-snli-small-e12")
