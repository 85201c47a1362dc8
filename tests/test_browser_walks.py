"""The diagnosis path in a real browser (the session's server and browser, tests/conftest.py, driven with the helpers
of tests/test_browser.py): from a number to its pairs to why, with no exception or error box on any page and the
same view after each Back. Error analysis → a confusion cell → a pair → Attribution → Gates → DIIN → Back → Back;
a projection point, a challenge-set category and a Table 7 cell each → their pair → Back. Needs the shipped
checkpoints and ../shared/data (skips with the reason otherwise); never downloads a browser.
"""
from __future__ import annotations

import pytest

from tests.test_browser import (MODELS, PAGE_SECONDS, ROOT, assert_clean, click_plotly_point,  # noqa: F401
                                click_table_line, follow_link, go_back, landed, open_url, page, requested, settle,
                                view)

pytestmark = pytest.mark.slow

CHALLENGE = ROOT / "tests" / "fixtures" / "challenge" / "anli_like.csv"


def test_confusion_cell_to_pair_to_attribution_gates_diin_and_back(app_url, page):
    """Error analysis → a confusion cell → a pair (a click on a cell of its line) → Next → Attribution → Gates → DIIN
    → the sidebar's Error analysis, on a split pair, then Back step by step to the view first opened: one Back per
    step, each showing the view that step showed."""
    open_url(page, f"{app_url}/Error_analysis?models={MODELS}", "Error analysis")
    opened_view = view(page)
    cells = page.locator(".st-key-chart_confusion_3 .js-plotly-plot").first.evaluate(
        "gd => gd._fullData[1].customdata.map(c => [c[0], c[1], c[2]])")
    index, (gold, predicted, count) = next((i, c) for i, c in enumerate(cells) if c[0] != c[1] and c[2] > 1)
    click_plotly_point(page, "confusion_3", 1, index)  # ESAN's matrix
    page.wait_for_selector(".st-key-errors_cell_pairs_table", timeout=PAGE_SECONDS * 1000)
    settle(page)
    assert_clean(page, "Error analysis, cell listed")
    cell_view = view(page)
    assert f"esan-snli-small: gold {gold}, predicted {predicted}" in cell_view[2]

    click_table_line(page, "errors_cell_pairs_table", 0)
    params = landed(page, "Pair explorer", "the cell's first pair")
    assert params["split"] == "snli_dev" and params["from.via"] == "cell" and params["from.gold"] == gold
    assert page.get_by_text(f"pair 1 of {count:,}").count() >= 1
    first_pair_view = view(page)
    page.locator(".st-key-explorer_list_next button").click()  # Next steps through the cell, in its order
    page.wait_for_function("t => document.body.innerText.includes(t)", arg=f"pair 2 of {count:,}",
                           timeout=PAGE_SECONDS * 1000)
    page.wait_for_function("old => !location.search.includes('&pair=' + old + '&')", arg=params["pair"],
                           timeout=PAGE_SECONDS * 1000)
    settle(page)
    assert_clean(page, "the cell's second pair")
    second_pair_view = view(page)

    follow_link(page, "This pair in Attribution", "Attribution")
    attribution_view = view(page)
    follow_link(page, "This pair in Gates", "Gates")
    gates_view = view(page)
    follow_link(page, "This pair in DIIN interaction space", "DIIN")
    assert page.locator("g.heatmaplayer g.hm").count() >= 1
    diin_view = view(page)
    page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"] a', has_text="Error analysis").click()
    assert landed(page, "Error analysis", "the sidebar's Error analysis")["models"] == MODELS
    assert view(page)[2] == cell_view[2], "the sidebar returns to the page's last view"
    go_back(page, diin_view, "Back to DIIN")
    go_back(page, gates_view, "Back to Gates")
    go_back(page, attribution_view, "Back to Attribution")
    go_back(page, second_pair_view, "Back to the cell's second pair")
    go_back(page, first_pair_view, "Back to the cell's first pair")
    go_back(page, cell_view, "Back to the cell's list")
    go_back(page, opened_view, "Back to the page before the cell")


def test_projection_and_challenge_pairs_open_and_come_back(app_url, page):
    # a projection point → its pair → Back
    open_url(page, f"{app_url}/Projection?models={MODELS}&method=pca&colour=gold", "Projection")
    projection_view = view(page)
    click_plotly_point(page, "projection", 0, 0)
    params = landed(page, "Pair explorer", "a projection point")
    assert params["from"] == "projection" and params["from.colour"] == "gold"
    go_back(page, projection_view, "Back to the projection")

    # a challenge-set category → a pair → Back (evaluated into the writable copy of gcnn-snli-small)
    open_url(page, f"{app_url}/Error_analysis?models=gcnn-snli-small&tab=Challenge+set"
                   f"&challenge_mode=a+path+on+this+machine&challenge_path={CHALLENGE}", "Challenge set")
    if page.get_by_role("button", name="Evaluate 1 model(s) on this file").count():
        before = requested(page)
        page.get_by_role("button", name="Evaluate 1 model(s) on this file").click()
        settle(page, before)
    page.wait_for_selector(".st-key-errors_challenge_pairs_table", timeout=PAGE_SECONDS * 1000)
    before = requested(page)
    page.reload()  # the page as it is once the evaluation is stored (offered as an earlier one, no Evaluate button)
    settle(page, before)
    page.wait_for_selector(".st-key-errors_challenge_pairs_table", timeout=PAGE_SECONDS * 1000)
    challenge_view = view(page)
    click_table_line(page, "errors_challenge_pairs_table", 0)
    params = landed(page, "Pair explorer", "a challenge pair")
    assert params["from"] == "challenge" and params.get("gold")
    go_back(page, challenge_view, "Back to the challenge set")


def test_a_table7_pair_opens_and_back_returns_to_table7(app_url, page):
    # a Table 7 cell (mnli-small on MultiNLI dev, gold tags) → its pairs → a pair → Back
    open_url(page, f"{app_url}/Error_analysis?models=gcnn-mnli-small&tab=By+annotation+tag+%28Table+7%29", "Table 7")
    page.wait_for_selector(".st-key-errors_t7_pairs_table", timeout=PAGE_SECONDS * 1000)
    table7_view = view(page)
    click_table_line(page, "errors_t7_pairs_table", 0)
    params = landed(page, "Pair explorer", "a Table 7 pair")
    assert params["split"] == "mnli_dev_matched" and params["from.via"] == "table7" and params["from.tags"] == "gold"
    assert page.get_by_text("(gold)").count() >= 1, "the pair's gold tags are shown, marked"
    go_back(page, table7_view, "Back to Table 7")
