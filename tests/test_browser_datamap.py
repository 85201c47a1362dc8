"""The Data map page in a real browser (the session's server and browser, driven as in tests/test_browser.py):
ESAN's and GCNN's maps of the 9,824 snli-small training pairs side by side, drawn by the server (the frame as SVG,
the points as one image over the plot: components/point_map; no Vega-Lite, no plotly); a hovered point says its pair;
a box dragged over the hard-to-learn corner lists exactly the pairs inside it, a listed pair opens in the Pair
explorer, Back restores the view with the box; a clicked point opens its pair, Back again; a linked box past the axes'
ends leaves the map its size. Saves
docs/screenshots/data_map.png at 1600 px, the box drawn. Needs the shipped checkpoints and ../shared/data (skips
with the reason otherwise)."""
from __future__ import annotations

import pytest

from tests.test_browser import (PAGE_SECONDS, ROOT, SCREENSHOTS, assert_clean, click_table_line,  # noqa: F401
                                go_back, landed, open_when_drawn_by_server, page, requested, settle, view)

pytestmark = pytest.mark.slow

URL = "Data_map?models=gcnn-snli-small,esan-snli-small&checkpoint=esan-snli-small&compare=gcnn-snli-small"
MIN_POINTS = 9000

PIXELS = """(figure, points) => {
  const image = figure.querySelector('image').getBoundingClientRect(), domain = figure.nlivisPoints.domain;
  const [x0, x1] = domain.x, [y0, y1] = domain.y;
  return points.map(([x, y]) => [image.left + (x - x0) / (x1 - x0) * image.width,
                                 image.top + (y1 - y) / (y1 - y0) * image.height]);
}"""
"""The page coordinates of data points (variability, confidence) on a map: the points' image spans the axes'
domains."""


def figure(tab, key: str):
    return tab.locator(f".st-key-chart_{key} .nlivis-point-map").first


def drawn(tab, key: str) -> dict[str, int]:
    """What map `key` shows: the points its browser half holds, the points' images, the outline's lines."""
    return figure(tab, key).evaluate("""f => ({points: f.nlivisPoints.x.length, images: f.querySelectorAll('image').length,
                                               outline: f.querySelectorAll('.mark-line path').length})""")


def pixels(tab, key: str, points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    element = figure(tab, key)
    element.scroll_into_view_if_needed()
    return [tuple(p) for p in element.evaluate(PIXELS, [list(p) for p in points])]


def drag_box(tab, key: str, xs: tuple[float, float], ys: tuple[float, float]) -> None:
    """Drag over data coordinates xs × ys on the map with key `key`, from the far corner (a region count is
    written in the near one), as a reader drags a box: no toolbar, the drag is the selection."""
    (x0, y0), (x1, y1) = pixels(tab, key, [(xs[1], ys[1]), (xs[0], ys[0])])
    before = requested(tab)
    tab.mouse.move(x0, y0)
    tab.mouse.down()
    for step in range(1, 11):
        tab.mouse.move(x0 + (x1 - x0) * step / 10, y0 + (y1 - y0) * step / 10)
    tab.mouse.up()
    settle(tab, before)


def click_at(tab, key: str, point: tuple[float, float]) -> None:
    ((x, y),) = pixels(tab, key, [point])
    tab.mouse.move(x, y)
    tab.wait_for_timeout(300)
    tab.mouse.click(x, y)


def dense_point(name: str) -> tuple[float, float]:
    """A point of checkpoint `name`'s map amid others (a click a pixel off still lands on a point), clear of the
    threshold lines and of the region counts written at the top and bottom."""
    import numpy as np

    from nlivis.analysis.datamap import drawn_coordinates
    from nlivis.workflows.datamap import read_data_map

    x, y = drawn_coordinates(read_data_map(ROOT / "checkpoints" / name))
    keep = np.isfinite(x) & (np.abs(x - 0.2) > 0.02) & (np.abs(y - 0.75) > 0.04) & (np.abs(y - 0.25) > 0.04) \
        & (y > 0.1) & (y < 0.9)
    x, y = x[keep], y[keep]
    neighbours = [int(((np.abs(x - a) < 0.004) & (np.abs(y - b) < 0.008)).sum()) for a, b in zip(x, y)]
    best = int(np.argmax(neighbours))
    return float(x[best]), float(y[best])


def test_data_map_draws_every_pair_lists_a_box_opens_a_pair_and_back_restores_it(app_url, page):
    from nlivis.analysis.datamap import members, parse_selection
    from nlivis.workflows.datamap import read_data_map

    open_when_drawn_by_server(page, f"{app_url}/{URL}", "Data map", "datamap_0")
    assert "Data map" in page.locator("h1").first.inner_text()
    assert not page.locator('[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"]').count(), \
        "no plotly or Vega-Lite chart: their chunks and Vega's parsing cost every new tab"
    for key in ("datamap_0", "datamap_1"):
        shown = drawn(page, key)
        assert shown["points"] >= MIN_POINTS and shown["images"] == 1, f"{key}: every pair, one image ({shown})"
        assert not shown["outline"], f"{key}: no selection drawn yet"
    point = dense_point("esan-snli-small")
    ((x, y),) = pixels(page, "datamap_0", [point])
    page.mouse.move(x, y)
    hover = page.locator("#nlivis-hover")
    hover.wait_for(state="visible", timeout=PAGE_SECONDS * 1000)
    said = dict(line.split(": ", 1) for line in hover.inner_text().strip().splitlines())
    assert said.keys() == {"pair", "variability", "confidence", "correctness"}, said
    assert abs(float(said["variability"]) - point[0]) < 0.01 and abs(float(said["confidence"]) - point[1]) < 0.02
    page.mouse.move(0, 0)
    hover.wait_for(state="hidden", timeout=PAGE_SECONDS * 1000)

    drag_box(page, "datamap_0", (0.0, 0.06), (0.0, 0.12))  # ESAN's most confidently "wrong" pairs
    page.wait_for_function("() => location.search.includes('sel=box')", timeout=PAGE_SECONDS * 1000)
    page.wait_for_selector(".st-key-datamap_selected_pairs_table", timeout=PAGE_SECONDS * 1000)
    settle(page)
    assert_clean(page, "a box on the map")
    assert drawn(page, "datamap_0")["outline"], "the box is drawn on the map"
    boxed = view(page)
    params = dict(boxed[0][1])
    corners = [float(v) for v in params["sel"].removeprefix("box:").split(",")]
    assert params["sel_on"] == "esan-snli-small" and corners == pytest.approx([0.0, 0.06, 0.0, 0.12], abs=0.005)
    assert "esan-snli-small: the box variability" in boxed[2]
    inside = members(read_data_map(ROOT / "checkpoints" / "esan-snli-small"), parse_selection(params["sel"]))
    assert len(inside) and f" of {len(inside):,}. " in boxed[2], "the list holds exactly the pairs inside the box"
    page.mouse.move(0, 0)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "data_map.png"))

    click_table_line(page, "datamap_selected_pairs_table", 0)
    opened = landed(page, "Pair explorer", "a pair of the box")
    assert opened["split"] == "snli_test" and opened["from"] == "datamap" and opened["from.sel"] == params["sel"]
    assert page.get_by_text("a data-map selection").count() >= 1
    go_back(page, boxed, "Back to the data map")
    assert drawn(page, "datamap_0")["outline"], "Back brings the box back"

    click_at(page, "datamap_1", dense_point("gcnn-snli-small"))  # a point of GCNN's map, amid others
    clicked = landed(page, "Pair explorer", "a clicked point")
    assert clicked["split"] == "snli_test" and clicked["from.checkpoint"] == "gcnn-snli-small"
    go_back(page, boxed, "Back to the data map after a click")


def test_a_box_past_the_axes_ends_leaves_the_map_its_size(app_url, page):
    """A link's box over the whole unit square (`box:0,1,0,1`) on a map whose variability axis ends near 0.5: the
    map is drawn as large as without it (its outline once ran past the plot, widening the drawing, and the page
    scaled the map down until its text could not be read)."""
    def plot_width(url: str) -> float:
        open_when_drawn_by_server(page, f"{app_url}/{url}", "Data map", "datamap_0")
        return figure(page, "datamap_0").evaluate("f => f.querySelector('image').getBoundingClientRect().width")

    single = "Data_map?models=esan-snli-small&checkpoint=esan-snli-small"
    plain = plot_width(single)
    boxed = plot_width(f"{single}&sel=box:0,1,0,1&sel_on=esan-snli-small")
    assert drawn(page, "datamap_0")["outline"], "the box is drawn"
    assert boxed == pytest.approx(plain, rel=0.02), f"the plot is {boxed:.0f} px wide with the box, {plain:.0f} without"
