"""The Data map page in a real browser (the session's server and browser, driven as in tests/test_browser.py): ESAN's and GCNN's maps of
the 9,824 snli-small training pairs side by side, every pair drawn (WebGL); a box dragged over the hard-to-learn
corner lists its pairs, a listed pair opens in the Pair explorer, Back restores the view with the box; a clicked
point opens its pair, Back again. Saves docs/screenshots/data_map.png at 1600 px. Needs the shipped checkpoints
and ../shared/data (skips with the reason otherwise)."""
from __future__ import annotations

import pytest

from tests.test_browser import (PAGE_SECONDS, SCREENSHOTS, assert_clean, click_plotly_point,  # noqa: F401
                                click_table_line, go_back, landed, open_url, page, settle, view)

pytestmark = pytest.mark.slow

URL = "Data_map?models=gcnn-snli-small,esan-snli-small&checkpoint=esan-snli-small&compare=gcnn-snli-small"
MIN_POINTS = 9000

POINTS = """gd => gd._fullData.filter(t => t.type === 'scattergl' && t.mode === 'markers').reduce((n, t) => n + t._length, 0)"""
OVERLAYS = """gd => gd._fullData.filter(t => t.mode === 'lines').map(t => t.name)"""
"""The lines drawn over the points: thresholds, and the selection's outline."""
MIDDLE_POINT = """gd => {
  for (const [curve, t] of gd._fullData.entries()) {
    if (t.mode !== 'markers') continue;
    for (let i = 0; i < t._length; i++) if (t.x[i] > 0.1 && t.x[i] < 0.15 && t.y[i] > 0.45 && t.y[i] < 0.55) return [curve, i];
  }
  throw new Error('no point in the middle of the map');
}"""
"""(curve, index) of a point in the middle of a map, away from the region counts written in its corners."""


def plot(tab, key: str):
    return tab.locator(f".st-key-chart_{key} .js-plotly-plot").first


def drag_box(tab, key: str, xs: tuple[float, float], ys: tuple[float, float]) -> None:
    """Choose Box Select in the toolbar of the chart with key `key`, and drag over data coordinates xs × ys."""
    chart = plot(tab, key)
    chart.scroll_into_view_if_needed()
    chart.hover()
    tab.locator(f".st-key-chart_{key} .modebar-btn[data-val='select']").first.click()
    tab.wait_for_timeout(500)
    corners = chart.evaluate("""(gd, [xs, ys]) => {
        const layout = gd._fullLayout, rect = gd.getBoundingClientRect(), xa = layout.xaxis, ya = layout.yaxis;
        return xs.map((x, i) => [rect.left + xa._offset + xa.l2p(x), rect.top + ya._offset + ya.l2p(ys[i])]);
    }""", [list(xs), list(ys)])
    (x1, y1), (x0, y0) = corners  # from the far corner: a region count is written in the near one
    tab.mouse.move(x0, y0)
    tab.mouse.down()
    for step in range(1, 11):
        tab.mouse.move(x0 + (x1 - x0) * step / 10, y0 + (y1 - y0) * step / 10)
    tab.mouse.up()


def test_data_map_draws_every_pair_lists_a_box_opens_a_pair_and_back_restores_it(app_url, page):
    open_url(page, f"{app_url}/{URL}", "Data map")
    assert "Data map" in page.locator("h1").first.inner_text()
    for key in ("datamap_0", "datamap_1"):
        assert plot(page, key).evaluate(POINTS) >= MIN_POINTS, f"{key}: fewer than {MIN_POINTS} points drawn"
    assert page.locator(".st-key-chart_datamap_0 canvas").count() >= 1, "drawn with WebGL"
    page.mouse.move(0, 0)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "data_map.png"))

    drag_box(page, "datamap_0", (0.0, 0.06), (0.0, 0.12))  # ESAN's most confidently "wrong" pairs
    page.wait_for_function("() => location.search.includes('sel=box')", timeout=PAGE_SECONDS * 1000)
    page.wait_for_selector(".st-key-datamap_selected_pairs_table", timeout=PAGE_SECONDS * 1000)
    settle(page)
    assert_clean(page, "a box on the map")
    assert "selection" in plot(page, "datamap_0").evaluate(OVERLAYS), "the box is drawn on the map"
    boxed = view(page)
    params = dict(boxed[0][1])
    corners = [float(v) for v in params["sel"].removeprefix("box:").split(",")]
    assert params["sel_on"] == "esan-snli-small" and corners == pytest.approx([0.0, 0.06, 0.0, 0.12], abs=0.005)
    assert "esan-snli-small: the box variability" in boxed[2]

    click_table_line(page, "datamap_selected_pairs_table", 0)
    opened = landed(page, "Pair explorer", "a pair of the box")
    assert opened["split"] == "snli_test" and opened["from"] == "datamap" and opened["from.sel"] == params["sel"]
    assert page.get_by_text("a data-map selection").count() >= 1
    go_back(page, boxed, "Back to the data map")
    assert "selection" in plot(page, "datamap_0").evaluate(OVERLAYS), "Back brings the box back"

    curve, index = plot(page, "datamap_1").evaluate(MIDDLE_POINT)  # a point of GCNN's map, clear of the labels
    click_plotly_point(page, "datamap_1", curve, index)
    clicked = landed(page, "Pair explorer", "a clicked point")
    assert clicked["split"] == "snli_test" and clicked["from.checkpoint"] == "gcnn-snli-small"
    go_back(page, boxed, "Back to the data map after a click")
