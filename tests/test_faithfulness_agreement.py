"""Agreement between attention and salience without the pooling artefact: the τ within each sentence, their
pair-weighted combination, the sentence-membership baseline beside the pooled τ, undefined τ excluded and
counted, and the keys `faithfulness --json` carries; on hand-built score lists whose τ is known."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlivis.analysis.faithfulness import (agreement, bootstrap_interval, faithfulness_table, hypothesis_above_premise,
                                          kendall_tau, membership_baseline, membership_indicator, sentence_part,
                                          summarize, within_sentences)
from nlivis.cli import main
from tests.fixtures.app_checkpoints import APP_DATA

CHECKPOINT = Path(__file__).resolve().parents[1] / "checkpoints" / "esan-snli-small"

ZEROS = [0.0] * 5


def record(pair_id: str, premise: list[float], hypothesis: list[float], **extra) -> dict:
    """A per-pair record as `FaithfulnessRecords.records` writes it (the AOPC values do not matter here)."""
    return {"id": pair_id, "premise_scores": premise, "hypothesis_scores": hypothesis,
            "comprehensiveness": ZEROS, "sufficiency": ZEROS, **extra}


def test_attention_above_the_premise_in_the_hypothesis_gives_a_high_pooled_tau_and_the_constructed_within_taus():
    """Attention puts every hypothesis token above every premise token (its scale follows the other sentence's
    length); within the premise it ranks |IG| backwards, within the hypothesis exactly. Pooled τ is high
    anyway: of its 10 token pairs the 6 across sentences and the 1 in the hypothesis are concordant, the 3 in
    the premise discordant, τ = (7 − 3) / 10 = 0.4 — although inside the premise attention is exactly wrong."""
    attention = [record("1", [0.1, 0.2, 0.3], [5.0, 6.0])]
    ig = [record("1", [-3.0, 2.0, 1.0], [4.0, -5.0])]   # |IG|: premise 3 > 2 > 1, hypothesis 4 < 5
    assert agreement(attention, ig, "integrated_gradients")["average"] == [pytest.approx(0.4)]
    assert agreement(attention, ig, "integrated_gradients", part="premise")["average"] == [pytest.approx(-1.0)]
    assert agreement(attention, ig, "integrated_gradients", part="hypothesis")["average"] == [pytest.approx(1.0)]
    # |IG| puts both hypothesis tokens above the premise too: the indicator alone has τ-b 6 / √(6 · 10)
    assert membership_baseline(ig, "integrated_gradients") == [pytest.approx(6 / math.sqrt(60))]
    assert hypothesis_above_premise(ig, "integrated_gradients") == 1
    assert hypothesis_above_premise(attention, "attention") == 1


def test_attention_constant_within_each_sentence_has_the_baseline_as_its_pooled_tau_and_no_within_tau():
    """Attention that knows only the sentence (hypothesis tokens above premise tokens, equal inside each)
    reaches exactly the membership baseline when pooled; within a sentence it ranks nothing, so its τ there
    is undefined and counted as such."""
    attention = [record("1", [0.2, 0.2, 0.2], [0.7, 0.7]), record("2", [0.1, 0.1], [0.9, 0.9, 0.9])]
    ig = [record("1", [0.1, -0.4, 0.2], [1.5, -0.3]), record("2", [0.05, 2.0], [1.0, 0.3, -0.2])]
    pooled = agreement(attention, ig, "integrated_gradients")["average"]
    assert pooled == pytest.approx(membership_baseline(ig, "integrated_gradients"))
    summary = summarize({"attention": attention, "integrated_gradients": ig})["methods"]["integrated_gradients"]
    for key in ("agreement_within_premise", "agreement_within_hypothesis", "agreement_within_sentences"):
        assert summary[key]["average"] == {"pairs": 0, "undefined": 2 if key != "agreement_within_sentences" else 4}
    assert summary["agreement_with_attention"]["average"]["median"] == pytest.approx(
        summary["agreement_membership_baseline"]["median"])


def test_undefined_taus_are_left_out_and_counted():
    """One-token sentences and constant scores have no τ: they are excluded from the median and counted."""
    attention = [record("1", [0.3], [0.1, 0.5]),              # premise of one token
                 record("2", [0.3, 0.1], [0.4, 0.2]),
                 record("3", [0.3, 0.1, 0.2], [0.6, 0.6])]    # hypothesis attention constant
    ig = [record("1", [1.0], [0.2, 0.4]),
          record("2", [0.5, 0.6], [0.9, 0.1]),
          record("3", [0.2, 0.1, 0.3], [0.3, 0.4])]
    premise = agreement(attention, ig, "gradient", part="premise")["average"]
    hypothesis = agreement(attention, ig, "gradient", part="hypothesis")["average"]
    assert math.isnan(premise[0]) and premise[1:] == pytest.approx([-1.0, 1 / 3])
    assert hypothesis[:2] == pytest.approx([1.0, 1.0]) and math.isnan(hypothesis[2])
    summary = summarize({"attention": attention, "gradient": ig})["methods"]["gradient"]
    within = summary["agreement_within_premise"]["average"]
    assert (within["pairs"], within["undefined"]) == (2, 1)
    assert within["median"] == pytest.approx((-1.0 + 1 / 3) / 2)
    both = summary["agreement_within_sentences"]["average"]
    assert (both["pairs"], both["undefined"]) == (4, 2)
    # an empty sentence or a constant |score| leaves the indicator's τ undefined too
    assert math.isnan(membership_baseline([record("4", [], [0.1, 0.2])])[0])
    assert math.isnan(membership_baseline([record("5", [0.1, -0.1], [0.1])], "integrated_gradients")[0])
    assert hypothesis_above_premise([record("4", [], [0.1, 0.2]), record("6", [0.5], [0.5, 0.9])]) == 0


def test_within_sentences_is_the_pair_weighted_mean_of_the_two_sentences():
    """The combined mean weights each sentence's mean by the number of pairs with a defined τ."""
    premise = {"average": [0.5, math.nan, 0.1, 0.3]}      # 3 defined, mean 0.3
    hypothesis = {"average": [-0.6, math.nan, math.nan, math.nan]}  # 1 defined, mean −0.6
    combined = within_sentences(premise, hypothesis)["average"]
    defined = [v for v in combined if not math.isnan(v)]
    assert np.mean(defined) == pytest.approx((3 * 0.3 + 1 * -0.6) / 4)
    assert len(combined) == 8


def test_summary_carries_the_three_agreement_keys_with_median_and_interval_for_every_layer():
    attention = [record(str(i), [0.1 * i, 0.3, 0.2], [0.6, 0.4 + 0.01 * i],
                        layers={"layer 1": [0.3, 0.1 * i, 0.2, 0.5, 0.6]}) for i in range(6)]
    ig = [record(str(i), [0.2, -0.1 * i, 0.4], [0.5 * i, -0.3]) for i in range(6)]
    summary = summarize({"attention": attention, "integrated_gradients": ig, "random": ig}, seed=3)["methods"]
    entry = summary["integrated_gradients"]
    for key in ("agreement_with_attention", "agreement_within_premise", "agreement_within_hypothesis",
                "agreement_within_sentences", "agreement_with_attention_signed"):
        assert set(entry[key]) == {"average", "layer 1"}, key
        for layer in entry[key].values():
            for statistic in ("median", "mean"):
                low, high = layer[f"{statistic}_interval"]
                assert low <= layer[statistic] <= high
    baseline = entry["agreement_membership_baseline"]
    assert baseline["median_interval"][0] <= baseline["median"] <= baseline["median_interval"][1]
    assert baseline["pairs"] + baseline["undefined"] == 6
    # attention's own baseline says how much of its ranking is the sentence; random has none
    assert "agreement_membership_baseline" in summary["attention"]
    assert "agreement_membership_baseline" not in summary["random"]
    assert "agreement_within_premise" not in summary["attention"]
    table = faithfulness_table({"m": {"methods": summary}}).set_index("method")
    assert table.loc["integrated_gradients", "median_tau_within_premise"] == pytest.approx(
        entry["agreement_within_premise"]["average"]["median"])
    assert table.loc["integrated_gradients", "median_tau_membership_baseline"] == pytest.approx(baseline["median"])
    assert math.isnan(table.loc["random", "median_tau_within_hypothesis"])


def test_bootstrap_interval_of_the_median():
    values = [0.0] * 30 + [1.0] * 31
    low, high = bootstrap_interval(values, statistic=np.median, seed=2)
    assert (low, high) == (0.0, 1.0)  # the median jumps between the two values
    assert bootstrap_interval([0.4] * 9, statistic=np.median) == pytest.approx((0.4, 0.4))


def test_sentence_part_refuses_an_unknown_part():
    with pytest.raises(ValueError, match="unknown sentence part 'both'"):
        sentence_part([1.0, 2.0], 1, "both")


def same_length_scores(length: int):
    return st.lists(st.floats(-10, 10, allow_nan=False, allow_subnormal=False), min_size=length, max_size=length)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.floats(0.01, 100), st.data())
def test_within_sentence_tau_ignores_the_other_sentences_scale(premise_length, hypothesis_length, factor, data):
    """Scaling the hypothesis's attention by any positive factor (what the other sentence's length does to
    a column sum) leaves both within-sentence τ unchanged."""
    attention_premise, ig_premise = (data.draw(same_length_scores(premise_length)) for _ in range(2))
    attention_hypothesis, ig_hypothesis = (data.draw(same_length_scores(hypothesis_length)) for _ in range(2))
    ig = [record("1", ig_premise, ig_hypothesis)]
    before = [record("1", attention_premise, attention_hypothesis)]
    after = [record("1", attention_premise, [factor * v for v in attention_hypothesis])]
    for part in ("premise", "hypothesis"):
        old = agreement(before, ig, "integrated_gradients", part=part)["average"][0]
        new = agreement(after, ig, "integrated_gradients", part=part)["average"][0]
        assert (math.isnan(old) and math.isnan(new)) or new == pytest.approx(old)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.data())
def test_attention_that_only_knows_the_sentence_pools_to_the_membership_baseline(premise_length, hypothesis_length,
                                                                                 data):
    ig_scores = data.draw(st.lists(st.floats(-5, 5, allow_nan=False), min_size=premise_length + hypothesis_length,
                                   max_size=premise_length + hypothesis_length))
    low, high = data.draw(st.floats(0, 1)), data.draw(st.floats(1.5, 3))
    ig = [record("1", ig_scores[:premise_length], ig_scores[premise_length:])]
    attention = [record("1", [low] * premise_length, [high] * hypothesis_length)]
    pooled = agreement(attention, ig, "integrated_gradients")["average"][0]
    baseline = membership_baseline(ig, "integrated_gradients")[0]
    assert (math.isnan(pooled) and math.isnan(baseline)) or pooled == pytest.approx(baseline)
    expected = kendall_tau(membership_indicator(premise_length, hypothesis_length), [abs(v) for v in ig_scores])
    assert (math.isnan(baseline) and math.isnan(expected)) or baseline == pytest.approx(expected)


def test_faithfulness_json_has_the_three_agreement_keys_and_the_table_the_baseline(capsys, tmp_path):
    argv = ["faithfulness", str(CHECKPOINT), "--dataset", "snli-small", "--split", "dev", "--data-dir", str(APP_DATA),
            "--sample", "6", "--methods", "gradient,attention", "--cache-dir", str(tmp_path), "--no-progress"]
    assert main([*argv, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    gradient = result["methods"]["gradient"]
    for key in ("agreement_within_premise", "agreement_within_hypothesis"):
        layer = gradient[key]["average"]
        assert layer["pairs"] + layer["undefined"] == 6
        if layer["pairs"]:
            assert {"median", "median_interval"} <= set(layer)
    baseline = gradient["agreement_membership_baseline"]
    assert {"median", "median_interval", "hypothesis_above_premise"} <= set(baseline)
    assert "agreement_membership_baseline" in result["methods"]["attention"]
    assert "agreement_membership_baseline" in result["agreement"]
    assert main(argv) == 0  # the table, from the cache
    header = capsys.readouterr().out.splitlines()[1]
    assert header.split()[-5:] == ["pooled", "baseline", "premise", "hypothesis", "signed"]


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 30), st.data())
def test_kendall_tau_b_matches_scipy_with_ties(length, data):
    """Few distinct values, so ties are common on both sides."""
    from scipy.stats import kendalltau

    a = data.draw(st.lists(st.integers(0, 4).map(float), min_size=length, max_size=length))
    b = data.draw(st.lists(st.sampled_from([-1.5, 0.0, 0.25, 2.0]), min_size=length, max_size=length))
    expected = kendalltau(a, b).statistic
    mine = kendall_tau(a, b)
    assert (math.isnan(mine) and math.isnan(expected)) or mine == pytest.approx(expected)
