"""Which one-word swaps a model answers contradiction on (`nlivis.analysis.swap_discrimination`): hits, false
alarms and their difference, from small `probe --json` records written here."""
from __future__ import annotations

import pytest

from nlivis.analysis.swap_discrimination import SwapDiscrimination, swap_discrimination


def probe_test(capability: str, cases: int, failing: list[str], generator: str = "independent") -> dict:
    """A test of a `probe --json` record where model "m" fails `len(failing)` cases, answering each as listed."""
    return {"capability": capability, "generator": generator, "cases": cases,
            "by_model": {"m": {"failing": [{"case": i, "predicted": said} for i, said in enumerate(failing)]}}}


def test_hits_are_the_contradicting_swaps_answered_contradiction_and_false_alarms_the_others():
    record = {"tests": [
        probe_test("Word swap: exclusive words", 100, ["neutral"] * 30 + ["entailment"] * 10),  # 60 said contradiction
        probe_test("Monotonicity: upward", 60, ["contradiction"] * 20 + ["neutral"] * 5),
        probe_test("Word swap: synonyms", 40, ["contradiction"] * 10 + ["neutral"] * 10),
        probe_test("Word swap: exclusive words", 50, [], generator="engine"),  # the engine's own words: not counted
        probe_test("Negation", 30, ["contradiction"] * 30)]}  # not a one-word swap
    found = swap_discrimination(record, "m")
    assert found == SwapDiscrimination(contradicting=100, hits=60, non_contradicting=100, false_alarms=30)
    assert found.hit_rate == pytest.approx(0.6) and found.false_alarm_rate == pytest.approx(0.3)
    assert found.discrimination == pytest.approx(0.3)
    low, high = found.interval
    assert 0.15 < low < 0.3 < high < 0.45


def test_a_bias_towards_contradiction_moves_both_rates_and_leaves_the_difference():
    """A model answering contradiction on every swap and one answering it on none both discriminate nothing."""
    def answering(said: str) -> dict:
        exclusive = [] if said == "contradiction" else [said] * 50
        return {"tests": [probe_test("Word swap: exclusive words", 50, exclusive),
                          probe_test("Monotonicity: upward", 50, [said] * 50 if said == "contradiction" else [])]}

    always, never = swap_discrimination(answering("contradiction"), "m"), swap_discrimination(answering("neutral"), "m")
    assert (always.hit_rate, always.false_alarm_rate, always.discrimination) == (1.0, 1.0, 0.0)
    assert (never.hit_rate, never.false_alarm_rate, never.discrimination) == (0.0, 0.0, 0.0)
    low, high = always.interval
    assert low < 0 < high


def test_no_discrimination_without_both_groups_or_the_checkpoint():
    only_exclusive = {"tests": [probe_test("Word swap: exclusive words", 10, [])]}
    assert swap_discrimination(only_exclusive, "m") is None
    both = {"tests": [probe_test("Word swap: exclusive words", 10, []), probe_test("Word swap: synonyms", 10, [])]}
    assert swap_discrimination(both, "other") is None
    assert swap_discrimination({}, "m") is None


def _a_report_with_swaps():  # run as its own script by AppTest: it imports what it needs
    from nlivis.analysis.swap_discrimination import SwapDiscrimination
    from nlivis.app.components import augment_report
    from nlivis.workflows.augment_report import AugmentReport

    report = AugmentReport("control", "augmented", "snli_dev", None, [], [], swaps=[
        ("control", SwapDiscrimination(100, 18, 100, 39)), ("augmented", SwapDiscrimination(100, 74, 100, 79))])
    augment_report.swap_table(report)


def test_the_train_page_shows_each_checkpoints_hits_false_alarms_and_discrimination():
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_function(_a_report_with_swaps).run()
    assert not app.exception, app.exception
    table = app.dataframe[0].value
    assert list(table["checkpoint"]) == ["control (control)", "augmented (changed)"]
    assert table["discrimination"].round(1).tolist() == [-21.0, -5.0], "hits − false alarms, in points"
    assert "A bias towards contradiction moves both" in app.caption[0].value
