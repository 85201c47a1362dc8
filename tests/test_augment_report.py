"""The before → after report (`nlivis.workflows.augment_report`, which scripts/augment_report.py and the Train
page build): paired comparisons, Holm and regressions first, categories, the suite's capabilities, seed noise and
the recorded control; and results_table's command for an augmented run — on small records written here."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlivis.analysis.significance import mcnemar_exact
from nlivis.store.predictions import read_predictions, write_predictions
from nlivis.workflows import augment_report as report
from tests.conftest import load_script


def predictions(folder: Path, predicted: list[str], gold: list[str | None]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_predictions(folder / "predictions_snli_dev.jsonl.gz",
                             [{"id": str(i), "gold": g, "predicted": p, "probs": [1.0, 0.0, 0.0]}
                              for i, (p, g) in enumerate(zip(predicted, gold))])


def test_paired_counts_only_labelled_pairs_both_hold_and_tests_the_discordant_ones(tmp_path):
    gold = ["entailment", "neutral", "contradiction", "neutral", None]
    before = predictions(tmp_path / "a", ["entailment", "entailment", "contradiction", "neutral", "neutral"], gold)
    after = predictions(tmp_path / "b", ["entailment", "neutral", "neutral", "entailment", "neutral"], gold)
    result = report.paired(report.outcomes(read_predictions(before)), report.outcomes(read_predictions(after)))
    assert result.pairs == 4  # the unlabelled pair is left out
    assert (result.before, result.after) == (0.75, 0.5)
    assert (result.only_before_right, result.only_after_right) == (2, 1)
    assert result.p == pytest.approx(mcnemar_exact(2, 1))


def row(name: str, right_before: int, right_after: int, only_before: int, only_after: int) -> report.ReportRow:
    return report.ReportRow(name, report.Comparison(100, right_before, right_after, only_before, only_after,
                                                    mcnemar_exact(only_before, only_after)))


def test_significant_regressions_come_first_then_other_losses_then_the_rest():
    rows = [row("gain", 50, 70, 0, 20), row("small loss", 60, 59, 1, 0), row("big loss", 70, 40, 30, 0),
            row("flat", 50, 50, 0, 0)]
    ordered = report.judged(rows)
    assert [r.name for r in ordered] == ["big loss", "small loss", "gain", "flat"]
    assert [r.regression for r in ordered] == [True, False, False, False], "a gain is never a regression"
    assert ordered[0].p_holm == pytest.approx(min(1.0, 4 * mcnemar_exact(30, 0)))


def test_holm_can_take_a_loss_below_the_threshold_out_of_the_regressions():
    """p = 0.016 alone is a regression; among four rows Holm multiplies the smallest p by 4 (0.063)."""
    alone = report.judged([row("loss", 60, 53, 7, 0)])
    assert alone[0].comparison.p < 0.05 and alone[0].regression
    among = report.judged([row("loss", 60, 53, 7, 0), row("a", 50, 50, 0, 0), row("b", 50, 50, 1, 1),
                           row("c", 50, 51, 0, 1)])
    assert among[0].name == "loss" and among[0].p_holm == pytest.approx(4 * mcnemar_exact(7, 0))
    assert not any(r.regression for r in among), "worse, but not significant after Holm: not marked"


def test_categories_are_tested_each_on_its_own_pairs():
    groups = {str(i): ("A",) if i < 6 else ("B",) for i in range(10)}
    before = {str(i): ("entailment", "entailment") for i in range(10)}
    after = {str(i): ("entailment", "neutral" if i < 6 else "entailment") for i in range(10)}
    found = report.category_rows(groups, before, after)
    assert [(r.name, r.comparison.pairs, r.comparison.before, r.comparison.after) for r in found] == [
        ("A", 6, 1.0, 0.0), ("B", 4, 1.0, 1.0)]
    assert found[0].comparison.only_before_right == 6
    assert found[0].p_holm == pytest.approx(min(1.0, 2 * mcnemar_exact(6, 0)))


def probe_record(seed: dict[str, list[int]] | None = None) -> dict:
    """A `probe --json` record of two checkpoints (and a second seed "a2" of "a", failing `seed[capability]`), with
    the fields `capability_comparisons` reads."""
    def test(capability, generator, failing_a, failing_b):
        by_model = {"a": {"failing": [{"case": c, "predicted": "neutral"} for c in failing_a]},
                    "b": {"failing": [{"case": c, "predicted": "contradiction"} for c in failing_b]}}
        if seed is not None:
            by_model["a2"] = {"failing": [{"case": c, "predicted": "neutral"} for c in seed[capability]]}
        return {"capability": capability, "name": capability, "generator": generator, "cases": 20,
                "case_list": [{"expected": "entailment", "expectation": "label"}] * 20, "by_model": by_model}

    return {"tests": [test("Quantifiers", "independent", [], list(range(12))), test("Numbers", "engine", [1], []),
                      test("Negation", "independent", [1, 2], [1])]}


def test_probe_rows_are_accuracy_on_the_cases_and_keep_only_the_generators_asked_for():
    every = report.probe_rows(probe_record(), "a", "b")
    assert [(r.generator, r.name) for r in every][0] == ("independent", "Quantifiers")
    quantifiers = every[0].comparison
    assert (quantifiers.before, quantifiers.after, quantifiers.only_before_right) == (1.0, 0.4, 12)
    independent = report.probe_rows(probe_record(), "a", "b", report.INDEPENDENT_ONLY)
    assert [r.name for r in independent] == ["Quantifiers", "Negation"]
    assert independent[0].regression and independent[0].p_holm == pytest.approx(2 * mcnemar_exact(12, 0))
    assert independent[0].answers == ({}, {"entailment → contradiction": 12})  # what the failures answered


def test_a_significant_loss_within_the_control_seeds_spread_is_no_regression():
    """Two seeds of one command can differ significantly on a capability (README, "Seeds of the control"): a loss
    that leaves the changed checkpoint no worse than the worst of the control's seeds on the same cases stays a loss,
    flagged within seed spread; one worse than every seed, or one with no other seed to weigh it by, is a
    regression — whichever seed is the reference."""
    wide = report.probe_rows(probe_record({"Quantifiers": list(range(13)), "Numbers": [], "Negation": []}), "a", "b",
                             report.INDEPENDENT_ONLY, ["a2"])
    quantifiers = wide[0]  # "b" fails 12 of 20, "a2" 13: no worse than the worst seed
    assert quantifiers.seeds == pytest.approx((1.0, 0.35)) and quantifiers.seed_gap == pytest.approx(0.65)
    assert quantifiers.worse and quantifiers.p_holm < report.SIGNIFICANT and quantifiers.within_control_seeds
    assert not quantifiers.regression
    beyond = report.probe_rows(probe_record({"Quantifiers": list(range(11)), "Numbers": [], "Negation": []}), "a", "b",
                               report.INDEPENDENT_ONLY, ["a2"])
    assert beyond[0].seed_gap == pytest.approx(0.55) and beyond[0].regression, \
        "12 failures against seeds failing 0 and 11: worse than both, though the loss (0.6) is near their range"
    narrow = report.probe_rows(probe_record({"Quantifiers": [3], "Numbers": [], "Negation": [1, 2]}), "a", "b",
                               report.INDEPENDENT_ONLY, ["a2"])
    assert narrow[0].seed_gap == pytest.approx(0.05) and narrow[0].regression and not narrow[0].within_control_seeds
    assert narrow[1].seed_gap == 0.0  # "a2" fails what "a" fails on Negation
    alone = report.probe_rows(probe_record(), "a", "b", report.INDEPENDENT_ONLY)
    assert alone[0].seeds == () and alone[0].seed_gap is None and alone[0].regression
    assert not alone[0].within_control_seeds


def test_the_seed_accuracies_are_the_control_seeds_on_the_pairs_all_of_them_hold():
    gold = {str(i): ("entailment", "entailment") for i in range(10)}
    second = {str(i): ("entailment", "neutral" if i < 3 else "entailment") for i in range(9)}  # lacks pair 9
    third = {str(i): ("entailment", "neutral" if i == 0 else "entailment") for i in range(10)}
    assert report.seed_accuracies(gold, gold, [second, third]) == pytest.approx((1.0, 6 / 9, 8 / 9))
    assert report.seed_accuracies(gold, gold, [third], ids=["1", "2"]) == (1.0, 1.0)
    assert report.seed_accuracies(gold, gold, []) == () and report.seed_accuracies(gold, gold, [{}]) == ()
    worse = {str(i): ("entailment", "neutral" if i < 3 else "entailment") for i in range(10)}
    recorded = {"control": gold, "augmented": worse, "control-seed2": second}
    sources = report.ReportSources(select=recorded.get, probes=lambda: None, file=lambda held_out: None,
                                   control_seeds=("control-seed2",))
    select = report.build_report("control", "augmented", sources).select
    assert select.seed_gap == pytest.approx(3 / 9) and select.within_control_seeds and not select.regression


def test_a_controls_other_seeds_are_the_finished_seed_n_folders_beside_it(tmp_path):
    base = tmp_path / "esan-snli-small-matched"
    for name in ("esan-snli-small-matched-seed3", "esan-snli-small-matched-seed2", "esan-snli-small-matched-seedx",
                 "esan-snli-small-matched-seed1", "esan-snli-small-matched-seed4"):
        (tmp_path / name).mkdir()
        if not name.endswith("seed4"):  # seed 4 never finished: no metrics.json
            (tmp_path / name / "metrics.json").write_text("{}")
    assert [p.name for p in report.control_seed_folders(base)] == ["esan-snli-small-matched-seed2",
                                                                   "esan-snli-small-matched-seed3"]
    base.mkdir()
    (base / "metrics.json").write_text("{}")
    assert [p.name for p in report.control_seed_folders(tmp_path / "esan-snli-small-matched-seed2")] == [
        "esan-snli-small-matched", "esan-snli-small-matched-seed3"]  # seed 1 is the name without a suffix
    (base / "metrics.json").unlink()
    base.rmdir()
    augment_script = load_script("augment_report")
    for folder in (base, tmp_path / "augmented"):
        folder.mkdir()
        (folder / "metrics.json").write_text(json.dumps({"select_split": "snli_dev"}))
    sources = augment_script.CommandSources([(base, tmp_path / "augmented")], str(tmp_path), probes=False)
    assert [Path(f).name for f in sources.folders] == ["esan-snli-small-matched", "augmented",
                                                       "esan-snli-small-matched-seed2", "esan-snli-small-matched-seed3"]
    sources.record = {"checkpoints": {"c": {}, "aug": {}, "c2": {}, "c3": {}}}
    pair = sources.for_pair(base, tmp_path / "augmented")
    assert pair.probes()[1] == ["c", "aug", "c2", "c3"] and [Path(s).name for s in pair.control_seeds] == [
        "esan-snli-small-matched-seed2", "esan-snli-small-matched-seed3"]


def test_the_report_lists_its_regressions_and_what_it_could_not_compare():
    labelled = {str(i): ("entailment", "entailment") for i in range(30)}
    worse = {str(i): ("entailment", "neutral" if i < 20 else "entailment") for i in range(30)}
    grouped = report.HeldOutFile("set", (Path("set.jsonl"),), "tags")
    sources = report.ReportSources(
        select=lambda name: labelled if name == "control" else {k: ("entailment", "entailment") for k in labelled},
        probes=lambda: (probe_record(), ["a", "b"]),
        file=lambda held_out: (report.FileOutcomes(labelled, worse, {k: ("X",) for k in labelled})
                               if held_out is grouped else None))
    missing = report.HeldOutFile("other", (Path("other.jsonl"),))
    said = []
    built = report.build_report("control", "augmented", sources, [missing, grouped],
                                probe_generators=report.INDEPENDENT_ONLY, progress=said.append)
    assert built.select.comparison.before == 1.0 and not built.select.regression
    assert built.missing == ["other: not evaluated by both checkpoints"]
    assert [table for table, _ in built.tables()] == ["snli_dev", "behavioural suite", "challenge files",
                                                      "set by tags"]
    assert [(table, r.name) for table, r in built.regressions()] == [
        ("behavioural suite", "Quantifiers"), ("challenge files", "set"), ("set by tags", "X")]
    assert said[0] == "report: snli_dev from the recorded predictions" and said[-1] == "report: set"
    assert json.loads(json.dumps(built.record()))["files"][0]["regression"] is True
    assert built.swaps == []  # the record holds no word-swap tests


def test_the_report_says_whether_each_checkpoint_tells_the_contradicting_swaps_apart():
    def swaps(capability, failing_a, failing_b):
        return {"capability": capability, "name": capability, "generator": "independent", "cases": 10,
                "case_list": [{"expected": "contradiction", "expectation": "label"}] * 10,
                "by_model": {"a": {"failing": [{"case": c, "predicted": "neutral"} for c in failing_a]},
                             "b": {"failing": [{"case": c, "predicted": "contradiction"} for c in failing_b]}}}

    record = {"tests": [swaps("Word swap: exclusive words", range(8), []), swaps("Word swap: synonyms", [], range(9))]}
    sources = report.ReportSources(select=lambda name: None, probes=lambda: (record, ["a", "b"]),
                                   file=lambda held_out: None)
    built = report.build_report("a", "b", sources)
    assert [(name, found.hit_rate, found.false_alarm_rate) for name, found in built.swaps] == [
        ("a", 0.2, 0.0), ("b", 1.0, 0.9)]
    saved = json.loads(json.dumps(built.record()))["swap_discrimination"]
    assert [(row["role"], row["checkpoint"]) for row in saved] == [("control", "a"), ("changed", "b")]
    assert saved[1]["discrimination"] == pytest.approx(0.1)


class Fields:
    """A read challenge set's fields as `field_values` asks for them."""

    def __init__(self, values: dict[str, dict[str, tuple[str, ...]]]):
        self.values = values

    def field_names(self) -> list[str]:
        return list(self.values)

    def groups(self, name: str) -> dict[str, tuple[str, ...]]:
        return self.values[name]


def test_a_file_is_split_by_its_first_category_field_with_two_values_or_more():
    one_file = Fields({"file": {"1": ("a",), "2": ("a",)}, "label": {"1": ("x",), "2": ("y",)}})
    tagged = Fields({"file": {"1": ("a",), "2": ("a",)}, "tags": {"1": ("Basic", "Lexical"), "2": ("Basic",)}})
    assert report.field_values(one_file) == {"file": 1} and report.field_values(tagged) == {"tags": 2, "file": 1}
    whole = report.held_out_file([Path("d/conj_dev.tsv")], report.field_values(one_file))
    assert (whole.name, whole.group) == ("conj_dev.tsv", None), "one value would repeat the file's own line"
    assert report.held_out_file([Path("a.csv"), Path("b.csv")], report.field_values(tagged)).group == "tags"


def test_a_suite_line_lists_the_cases_only_the_judged_checkpoint_fails():
    """The list behind a capability's line: `versus` keeps the failing cases its control passes."""
    from types import SimpleNamespace

    from nlivis.workflows.specs import failing_case_rows

    def failing(indices):
        case = SimpleNamespace(original=None, expectation="label", expected="entailment", premise="p", hypothesis="h",
                               direction=None, source="template")
        return [SimpleNamespace(index=i, case=case, predicted="neutral", original_predicted=None) for i in indices]

    run = SimpleNamespace(failing=lambda test, model: {"after": failing([1, 2, 5]), "before": failing([2])}.get(model))
    every = failing_case_rows(run, {"test": "t", "model": "after"})
    only = failing_case_rows(run, {"test": "t", "model": "after", "versus": "before"})
    assert [r.columns["case"] for r in every] == [1, 2, 5] and [r.columns["case"] for r in only] == [1, 5]
    with pytest.raises(ValueError, match="no test “t” for absent"):
        failing_case_rows(run, {"test": "t", "model": "after", "versus": "absent"})


def test_seed_noise_is_the_gap_to_the_seed2_sibling_or_none(tmp_path):
    base = tmp_path / "esan-snli-small"
    for folder, accuracy in ((base, 0.73), (tmp_path / "esan-snli-small-seed2", 0.7318)):
        folder.mkdir()
        (folder / "metrics.json").write_text(json.dumps({"best_dev_accuracy": accuracy}))
    noise = report.seed_noise(base)
    assert noise.seed2 == "esan-snli-small-seed2" and noise.gap == pytest.approx(0.0018)
    (tmp_path / "gcnn-snli-small").mkdir()
    assert report.seed_noise(tmp_path / "gcnn-snli-small") is None


def test_the_recorded_control_comes_from_config_json_or_is_none(tmp_path):
    augmented, plain, broken = (tmp_path / name for name in ("augmented", "plain", "broken"))
    for folder in (augmented, plain, broken):
        folder.mkdir()
    (augmented / "config.json").write_text(json.dumps({"augmentation": {"control": "esan-snli-small-matched"}}))
    (plain / "config.json").write_text(json.dumps({"model": {}}))
    (broken / "config.json").write_text("{")
    assert report.recorded_control(augmented) == "esan-snli-small-matched"
    assert report.recorded_control(plain) is None and report.recorded_control(broken) is None
    assert report.recorded_control(tmp_path / "absent") is None


def test_results_table_cites_the_augmentation_of_an_augmented_run():
    table = load_script("results_table")
    config = {"config_name": "esan", "size": "shipped", "dataset": {"protocol": "snli-small"},
              "embeddings": {"source": "minilm"}, "seed": 1, "training": {"epochs": 4.0},
              "augmentation": {"kinds": ["antonym", "negation"], "ratio": 0.5}}
    command = table.reproduce_command(config, "esan-snli-small-augmented")
    assert "--epochs 4 --augment antonym,negation --augment-ratio 0.5 --out checkpoints/esan-snli-small-augmented" in command
    del config["augmentation"]
    assert "--augment" not in table.reproduce_command(config, "esan-snli-small")


def test_results_table_cites_the_step_budget_of_a_run_cut_short_by_max_steps():
    """A compute-matched pair stops both runs at the same step, before their epochs: the command says so."""
    table = load_script("results_table")
    config = {"config_name": "amn", "size": "shipped", "dataset": {"protocol": "snli-small"},
              "embeddings": {"source": "minilm"}, "seed": 1, "training": {"epochs": 12.0}, "epochs": 5.3896,
              "steps": 830}
    assert "--epochs 12 --max-steps 830 --out" in table.reproduce_command(config, "amn-snli-small-matched")
    config.update(epochs=12.0, steps=1848)
    assert "--max-steps" not in table.reproduce_command(config, "amn-snli-small-e12")


def test_the_report_judges_a_pair_on_its_own_select_split_and_mnli_small_pairs_on_taxinli(tmp_path):
    """An mnli-small pair is compared on XNLI-en dev and, with the TaxiNLI file in the data folder, on both
    MultiNLI dev halves by TaxiNLI category; an snli-small pair on SNLI dev and no TaxiNLI table."""
    augment_script = load_script("augment_report")
    data, mnli, snli = tmp_path / "data", [tmp_path / "mnli-a", tmp_path / "mnli-b"], [tmp_path / "snli-a"]
    (data / "taxinli").mkdir(parents=True)
    for folder, split in ((mnli[0], "xnli_en_dev"), (mnli[1], "xnli_en_dev"), (snli[0], "snli_dev")):
        folder.mkdir()
        (folder / "metrics.json").write_text(json.dumps({"select_split": split}))
        for recorded in (["mnli_dev_matched", "mnli_dev_mismatched"] if split == "xnli_en_dev" else []):
            (folder / f"predictions_{recorded}.jsonl.gz").write_bytes(b"")
    assert augment_script.select_split(mnli[0]) == "xnli_en_dev" and augment_script.select_split(snli[0]) == "snli_dev"
    assert augment_script.taxinli_held_out(data, [tuple(mnli)]) == []  # no TaxiNLI file in the data folder
    (data / "taxinli" / "taxinli10k_MNLIDev.tsv").write_text("")
    found = augment_script.taxinli_held_out(data, [tuple(mnli)])
    assert [f.name for f in found] == ["MultiNLI dev matched, TaxiNLI pairs", "MultiNLI dev mismatched, TaxiNLI pairs"]
    assert {f.group for f in found} == {augment_script.TAXINLI_GROUP}
    assert augment_script.taxinli_held_out(data, [(snli[0], mnli[1])]) == []
    with pytest.raises(SystemExit, match="no metrics.json"):
        augment_script.select_split(tmp_path / "absent")


def test_a_control_shared_by_several_pairs_is_probed_once_and_found_for_each(tmp_path):
    """`probe` lists each checkpoint once, so a control repeated across --pair options must map to its one name
    (two pairs over one control once failed with an IndexError after every probe had run)."""
    augment_script = load_script("augment_report")
    control, first, second = tmp_path / "control", tmp_path / "first", tmp_path / "second"
    for folder in (control, first, second):
        (folder / "metrics.json").parent.mkdir()
        (folder / "metrics.json").write_text(json.dumps({"select_split": "snli_dev"}))
    sources = augment_script.CommandSources([(control, first), (control, second)], str(tmp_path), probes=False)
    assert sources.folders == [str(control), str(first), str(second)]
    sources.record = {"checkpoints": {"control": {}, "first": {}, "second": {}}}
    assert sources.for_pair(control, second).probes()[1] == ["control", "second"]
    assert sources.for_pair(control, first).probes()[1] == ["control", "first"]


def test_the_probe_run_takes_more_cases_only_when_asked(tmp_path):
    """--max-cases reaches `probe` (every template case for the power a large held-out set has); the default
    command stays the suite's, so the README's commands print what they printed."""
    augment_script = load_script("augment_report")
    pairs = [(tmp_path / "control", tmp_path / "augmented")]
    default = augment_script.CommandSources(pairs, "data", probes=False).probe_command()
    assert "--max-cases" not in default and default[-1] == "--json"
    more = augment_script.CommandSources(pairs, "data", probes=False, max_cases=2000).probe_command()
    assert more[more.index("--max-cases") + 1] == "2000"
    assert [part for part in more if part not in ("--max-cases", "2000")] == default


def test_a_control_judged_against_its_own_second_seed_differs_only_within_the_seed_spread():
    """The changed checkpoint may be the control's other seed itself: each of its losses equals the spread, counted
    from the capability's failures one way and from the pairs right the other, and is within it, never a
    regression."""
    record = probe_record({"Quantifiers": list(range(12)), "Numbers": [1], "Negation": list(range(17))})
    for test in record["tests"]:
        test["by_model"]["b"] = test["by_model"]["a2"]
    rows = report.probe_rows(record, "a", "b", report.INDEPENDENT_ONLY, ["a2"])
    assert rows[0].p_holm < report.SIGNIFICANT and not any(r.regression for r in rows)
    negation = rows[1]  # 17 failures of 20: 3/20 = 0.15 counted from the cases right, 1 − 17/20 = 0.15000000000000002
    assert negation.name == "Negation" and negation.worse and negation.within_control_seeds
