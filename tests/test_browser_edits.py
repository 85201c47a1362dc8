"""The Edits tab and the behavioural tests in a real browser (`streamlit run app.py`, Debian's Chromium through
Playwright; the session's server and browser, tests/conftest.py): a pair's edits → one pinned → its
difference map drawn with the changed token outlined → Attribution → Back restores the pinned view → Back the
unpinned one; the probe table → a model's cell → its failing cases → one opens as a pair in the Pair explorer → Back
restores the probe table with the model's failing cases.
Saves docs/screenshots/edits.png and probes.png at 1600 px. Needs the shipped checkpoints and ../shared/data.
"""
from __future__ import annotations

import pytest

from nlivis.app.components.probes import COLUMN_WIDTHS, MODEL_COLUMN_WIDTH
from nlivis.viz.vega.heatmaps import OUTLINE
from tests.test_browser import (MODELS, PAGE_SECONDS, SCREENSHOTS, assert_clean, click_table_line,  # noqa: F401
                                follow_link, go_back, landed, open_url, page, parameters, requested, settle,
                                view)

pytestmark = pytest.mark.slow

PAIR = "split=snli_dev&pair=3934"
"""Two white-haired women … / These two women aren't making any noise . (contradiction)"""
DIFFERENCE = ".st-key-chart_edits_difference svg.marks"
"""The difference map's marks: a figure that takes no clicks is the server's SVG in a container keyed as the chart."""
SCREENSHOT_HEIGHT = 3000
"""Tall enough for the pair, the edits table, the pinned edit's predictions, both alignments and their difference."""


def wait_for_url(page, fragment: str, since: int = 0) -> None:
    """Wait until the URL holds `fragment` and the run (after `since` requests, see `requested`) has settled."""
    page.wait_for_function("f => location.search.includes(f)", arg=fragment, timeout=PAGE_SECONDS * 1000)
    settle(page, since)


def shot(page, name: str) -> None:
    page.set_viewport_size({"width": 1600, "height": SCREENSHOT_HEIGHT})
    page.locator("h1").first.scroll_into_view_if_needed()
    settle(page)
    page.mouse.move(0, 0)
    page.screenshot(path=str(SCREENSHOTS / name))
    page.set_viewport_size({"width": 1600, "height": 1200})


def test_edits_pin_one_see_the_difference_map_and_back_restores(app_url, page):
    open_url(page, f"{app_url}/Pair_explorer?models={MODELS}&{PAIR}&tab=Edits", "Edits tab")
    page.wait_for_selector(".st-key-explorer_edits_table [data-testid='stDataFrame']", timeout=PAGE_SECONDS * 1000)
    assert page.get_by_text("edit(s)").count() >= 1
    unpinned = view(page)

    before = requested(page)
    click_table_line(page, "explorer_edits_table", 3, on_checkbox=True)
    wait_for_url(page, "pin=3", before)
    assert_clean(page, "an edit pinned")
    assert page.get_by_text("Pinned: edit 3").count() == 1
    difference = page.locator(DIFFERENCE, has_text="edited − original").first
    difference.scroll_into_view_if_needed()
    drawn = difference.evaluate(f"""chart => {{
        const texts = [...chart.querySelectorAll('text')];
        return {{cells: chart.querySelector('.mark-rect').childElementCount,
                 outlines: chart.querySelectorAll('.mark-rect path[stroke="{OUTLINE}"]').length,
                 bold: texts.filter(t => t.getAttribute('font-weight') === 'bold').map(t => t.textContent)}};
    }}""")
    assert drawn["cells"] > 0 and drawn["outlines"] >= 1, drawn  # the changed token's row or column outlined
    assert any("→" in label for label in drawn["bold"]), drawn  # and its label, old→new, bold
    for which in ("original", "edited"):  # the strips (drawn as SVG on the server, their title in it)
        page.locator("[class*='st-key-chart_'] svg.marks", has_text=f"{which} pair · ").first.wait_for(
            timeout=PAGE_SECONDS * 1000)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot(page, "edits.png")
    pinned = view(page)

    follow_link(page, "This pair in Attribution", "Attribution")
    go_back(page, pinned, "Back to the pinned edit")
    assert page.locator(DIFFERENCE, has_text="edited − original").count() == 1
    go_back(page, unpinned, "Back to the unpinned edits")


def test_probe_table_cell_failing_case_pair_and_back(app_url, page):
    open_url(page, f"{app_url}/Error_analysis?models={MODELS}&tab=Behavioural+tests", "Behavioural tests")
    page.get_by_role("button", name="Run the suite").click()
    page.wait_for_selector(".st-key-errors_probes_table [data-testid='stDataFrame']", timeout=PAGE_SECONDS * 1000)
    settle(page)
    assert_clean(page, "the probe table")
    # a figure that takes no clicks: the server's SVG in a container keyed as the chart, found by its title
    assert page.locator("[class*='st-key-chart_'] svg.marks", has_text="failure rate per test").count() == 1

    grid = page.locator(".st-key-errors_probes_table [data-testid='stDataFrame']").first
    grid.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    box = grid.bounding_box()
    model = MODELS.split(",")[0]  # its column: after the fixed-width test columns (components/probes.py)
    x = box["x"] + sum(COLUMN_WIDTHS.values()) + MODEL_COLUMN_WIDTH / 2
    for line in range(16):  # the first test built from dev pairs that this model fails at least once: its
        before = requested(page)  # cases must open as their pair (issue 28)
        page.mouse.click(x, box["y"] + 35 * line + 35 + 35 / 2)
        wait_for_url(page, "probe_test=", before)
        if ("(dev)" in parameters(page)["probe_test"]
                and page.locator(".st-key-errors_probe_cases_table .nlivis-pair-table").count()):
            break
    else:
        pytest.fail(f"{model} fails none of the first 16 tests' dev-built cases")
    assert parameters(page)["probe_model"] == model
    shot(page, "probes.png")
    listed = view(page)

    click_table_line(page, "errors_probe_cases_table", 0)
    opened = landed(page, "Pair explorer", "a failing case")
    assert opened["from"] == "probes" and opened["from.model"] == model
    assert page.get_by_text("Opened from a behavioural test's failing cases").count() >= 1
    assert page.get_by_text("no longer in it").count() == 0  # the case's text is its pair's, so it is found
    assert page.locator(".st-key-explorer_list_next button").count() == 1, "Previous / Next through the cases"
    go_back(page, listed, "Back to the failing cases")
