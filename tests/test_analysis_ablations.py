"""Ablation comparisons: the seed-noise verdict beside significance, short chart labels, and paper rows
compared only on the dataset our protocol trains on."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from nlivis.analysis.ablations import (OURS, OURS_ON, VariantRecord, compare_variants, full_model_seeds,
                                      paper_ablations, seed_noise, short_names)
from nlivis.analysis.paper_tables import OUR_SPLITS, STAND_INS, our_split
from nlivis.analysis.paper_tables import paper_dataset
from nlivis.store.predictions import Prediction


def answers(correct: list[bool]) -> list[Prediction]:
    """Predictions on pairs p0, p1, … all with gold 'entailment', right where `correct` says."""
    return [Prediction(f"p{i}", "entailment", "entailment" if ok else "neutral", (0.5, 0.5, 0.0))
            for i, ok in enumerate(correct)]


def test_a_significant_difference_inside_the_seed_spread_is_marked_within_seed_noise():
    n = 1000
    reference = answers([True] * 700 + [False] * 300)
    second_seed = answers([False] * 40 + [True] * 660 + [False] * 300)   # 4.0% below the reference
    variant = answers([False] * 30 + [True] * 670 + [False] * 300)      # 3.0% below: significant, yet inside 4.0%
    other = answers([False] * 60 + [True] * 640 + [False] * 300)        # 6.0% below: beyond
    noise = seed_noise(reference, second_seed)
    assert np.isclose(noise.gap, 0.04) and noise.pairs == n and noise.seeds == ("seed 1", "seed 2")
    table = compare_variants(reference, {"variant": variant, "other": other}, noise).set_index("variant")
    assert bool(table.loc["variant", "significant"]) and bool(table.loc["variant", "within seed noise"])
    assert bool(table.loc["other", "significant"]) and not bool(table.loc["other", "within seed noise"])
    columns = list(table.reset_index().columns)
    assert columns.index("within seed noise") == columns.index("significant") + 1
    assert "within seed noise" not in compare_variants(reference, {"variant": variant}).columns


def record(name: str, config: str, seed: int) -> VariantRecord:
    return VariantRecord(folder=Path("/checkpoints") / name, model=config.split("-")[0], config_name=config,
                         protocol="snli-small", seed=seed, select_split="snli_dev", select_accuracy=0.7)


def test_short_names_drop_the_family_and_protocol_and_name_seeds_only_where_needed():
    members = [record("diin-snli-small", "diin", 1), record("diin-snli-small-seed2", "diin", 2),
               record("diin-no_self_attention-snli-small", "diin-no_self_attention", 1)]
    assert short_names(members) == {"diin-snli-small": "full model · seed 1", "diin-snli-small-seed2": "full model · seed 2",
                                     "diin-no_self_attention-snli-small": "no_self_attention"}
    twins = [record("a", "diin-no_conv", 1), record("b", "diin-no_conv", 1)]
    assert short_names(twins) == {"a": "a", "b": "b"}


def test_paper_rows_are_compared_only_on_the_protocols_dataset():
    assert (paper_dataset("snli-small"), paper_dataset("mnli-small"), paper_dataset("quora-small")) == ("SNLI", "MultiNLI", "Quora")
    assert paper_dataset("xnli") is None
    quora = paper_ablations("gcnn", {"gcnn": {"quora_test": 73.0}}, dataset="Quora")
    assert set(quora["reported on (full data)"]) == {"Quora test"}
    assert quora.set_index("paper row").loc["GCNN", [OURS, OURS_ON]].tolist() == [73.0, "quora_test"]
    everything = paper_ablations("gcnn", {"gcnn": {"quora_test": 73.0}})
    assert any(where.startswith("MultiNLI") for where in everything["reported on (full data)"])
    assert paper_ablations("gcnn", {"gcnn": {"snli_dev": 73.0}}, dataset="SNLI").empty  # GCNN reports no SNLI rows
    diin = paper_ablations("diin", {"diin-no_conv": {"snli_dev": 72.3}}, dataset="SNLI")
    assert set(diin["reported on (full data)"]) == {"SNLI dev", "SNLI test"}


def test_ours_stand_beside_a_paper_row_on_its_split_or_the_nearest_held_out_one_of_the_same_dataset():
    """mnli-small is selected on XNLI-en dev: beside MultiNLI's matched / mismatched test (no public labels) stand our
    MultiNLI dev matched / mismatched, never the XNLI number; snli-small trains on SNLI test, so SNLI dev stands in."""
    mnli = {"esan": {"xnli_en_dev": 62.9, "mnli_dev_matched": 58.2, "mnli_dev_mismatched": 58.6}}
    table = paper_ablations("esan", mnli, dataset="MultiNLI").set_index("reported on (full data)")
    assert table.loc["MultiNLI matched test", [OURS, OURS_ON]].tolist() == [58.2, "mnli_dev_matched (stand-in)"]
    assert table.loc["MultiNLI mismatched test", [OURS, OURS_ON]].tolist() == [58.6, "mnli_dev_mismatched (stand-in)"]
    assert list(table.columns).index(OURS) == list(table.columns).index("reported accuracy (%)") + 1
    xnli_only = paper_ablations("esan", {"esan": {"xnli_en_dev": 62.9}}, dataset="MultiNLI")
    assert xnli_only[OURS].isna().all() and set(xnli_only[OURS_ON]) == {"—"}  # another dataset is no comparison
    snli = {"diin": {"snli_dev": 70.0, "snli_test": 99.0}}
    def full_model(table):  # the paper's rows our config `diin` reproduces; the others have no number of ours
        rows = table[table["our config"] == "diin"].set_index("reported on (full data)")
        assert (table.loc[table["our config"] != "diin", OURS_ON] == "—").all()
        return rows

    trained = full_model(paper_ablations("diin", snli, trained={"snli_test"}, dataset="SNLI"))  # DIIN's Table 3: SNLI test
    assert trained.loc["SNLI test", [OURS, OURS_ON]].tolist() == [70.0, "snli_dev (stand-in)"]
    untrained = full_model(paper_ablations("diin", snli, dataset="SNLI"))
    assert untrained.loc["SNLI test", [OURS, OURS_ON]].tolist() == [99.0, "snli_test"]  # that very split


@pytest.mark.parametrize("dataset, split", sorted({*OUR_SPLITS, *STAND_INS}))
def test_our_split_never_names_another_dataset_nor_a_trained_split(dataset, split):
    every = {*OUR_SPLITS.values(), *STAND_INS.values(), "xnli_en_dev"}
    key, same = our_split(dataset, split, every)
    prefix = {"SNLI": "snli_", "MultiNLI": "mnli_", "Quora": "quora_"}[dataset]
    assert key is not None and key.startswith(prefix) and same == ((dataset, split) in OUR_SPLITS)
    assert our_split(dataset, split, every, trained=every) == (None, False)
    assert our_split(dataset, split, {"xnli_en_dev"}) == (None, False)


def test_tag_deltas_compare_variant_and_reference_on_each_tags_shared_pairs():
    from nlivis.analysis.ablations import tag_deltas

    reference = answers([True, True, False, False, True, False])
    variant = answers([True, False, True, True, True, False])
    tags = {"p0": frozenset({"NEGATION"}), "p1": frozenset({"NEGATION"}), "p2": frozenset({"NEGATION", "QUANTIFIER"}),
            "p3": frozenset({"QUANTIFIER"})}
    other_split = [Prediction(p.id, "neutral", p.predicted, p.probs) for p in variant]
    table = tag_deltas(reference, {"variant": variant, "other split": other_split}, tags).set_index("tag")
    assert set(table["variant"]) == {"variant"}  # predictions of another split are left out
    assert table.loc["NEGATION", "count"] == 3 and np.isclose(table.loc["NEGATION", "reference accuracy"], 2 / 3)
    assert np.isclose(table.loc["NEGATION", "delta"], 0.0) and table.loc["QUANTIFIER", "delta"] == 1.0
    assert not table["significant"].any()


def test_seed_noise_from_three_seeds_is_their_range_and_spread():
    """Three seeds at 70%, 66% and 72%: range 6 points, sample SD 3.06 points; a variant 5 points below the
    reference is outside two seeds' noise (4 points) but inside three's."""
    first = answers([True] * 700 + [False] * 300)
    second = answers([False] * 40 + [True] * 660 + [False] * 300)
    third = answers([True] * 720 + [False] * 280)
    variant = answers([False] * 50 + [True] * 650 + [False] * 300)
    two, three = seed_noise(first, second), seed_noise(first, second, third, names=["a", "b", "c"])
    assert three.seeds == ("a", "b", "c") and three.accuracies == pytest.approx((0.70, 0.66, 0.72))
    assert three.gap == pytest.approx(0.06) and three.standard_deviation == pytest.approx(np.std([0.70, 0.66, 0.72], ddof=1))
    assert not compare_variants(first, {"v": variant}, two).loc[0, "within seed noise"]
    assert compare_variants(first, {"v": variant}, three).loc[0, "within seed noise"]
    assert "3 seeds" in three.describe("snli_dev") and "range 6.0%" in three.describe("snli_dev")
    with pytest.raises(ValueError, match="at least two"):
        seed_noise(first)
    with pytest.raises(ValueError, match="gold label"):
        seed_noise(first, [Prediction(p.id, "neutral", p.predicted, p.probs) for p in second])


def test_tag_differences_are_significant_only_after_holm_over_the_whole_table():
    """Each of 13 tags has 9 pairs only the variant gets right and 1 only the reference gets right: McNemar
    p = 2·11/1024 ≈ 0.021 < 0.05 for every tag, but Holm over the 13 tests multiplies the smallest by 13
    (0.28): nothing is significant, which the unadjusted test would have called 13 findings."""
    from nlivis.analysis.ablations import tag_deltas
    from nlivis.analysis.significance import mcnemar_exact
    from nlivis.analysis.tags import TAGS

    reference, variant, tags = [], [], {}
    for t, tag in enumerate(TAGS):
        for i in range(10):
            pair_id = f"t{t}-{i}"
            tags[pair_id] = frozenset({tag})
            reference.append(Prediction(pair_id, "entailment", "entailment" if i == 0 else "neutral", (0.5, 0.5, 0.0)))
            variant.append(Prediction(pair_id, "entailment", "neutral" if i == 0 else "entailment", (0.5, 0.5, 0.0)))
    table = tag_deltas(reference, {"variant": variant}, tags)
    p = mcnemar_exact(9, 1)
    assert p == pytest.approx(2 * 11 / 1024) and len(table) == 13
    assert table["McNemar p"].tolist() == pytest.approx([p] * 13)
    assert table["Holm p"].tolist() == pytest.approx([min(1.0, 13 * p)] * 13)
    assert table["BH q"].tolist() == pytest.approx([p] * 13)  # equal p-values: BH leaves them
    assert not table["significant"].any()


def test_a_compute_matched_control_or_an_augmented_run_is_no_second_seed_of_the_full_model():
    """Only runs of the full config trained as the first one was are its seeds: the seed-2 compute-matched control
    (more steps) and an augmented run sort before `-seed2` and were once taken for it."""
    def run(name, seed, steps, kinds=()):
        return replace(record(name, "gcnn", seed), training_run=(steps, kinds))

    members = [run("gcnn-snli-small", 1, 924), run("gcnn-snli-small-augmented-seed2", 2, 830, ("synonym",)),
               run("gcnn-snli-small-matched-seed2", 2, 830), run("gcnn-snli-small-seed2", 2, 924),
               record("gcnn-no_forget_gate-snli-small", "gcnn-no_forget_gate", 1)]
    assert [r.name for r in full_model_seeds(members)] == ["gcnn-snli-small", "gcnn-snli-small-seed2"]
