"""`viz.vega.raster_cells`: a heatmap's cells become one image that shows every cell in its colour at its place,
with every cell's hover text, and nothing else in a figure changes."""
from __future__ import annotations

import base64
import html
import io
import json
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from PIL import Image

from nlivis.viz.vega import export
from nlivis.viz.vega.raster_cells import GRID_ATTRIBUTE, MIN_CELLS, raster_cells


def cell(x: float, y: float, width: float, height: float, fill: str, label: str) -> str:
    """A cell as `export.page_svg` writes Vega's rect mark."""
    return (f'<path role="graphics-symbol" data-hover="1" aria-label="{html.escape(label, quote=True)}" '
            f'aria-roledescription="rect mark" d="M{x!r},{y!r}h{width!r}v{height!r}h-{width!r}Z" fill="{fill}"/>')


def group(cells: list[str]) -> str:
    return f'<g class="mark-rect role-mark concat_1_marks" role="graphics-object">{"".join(cells)}</g>'


def image_of(svg: str) -> tuple[dict, np.ndarray, dict]:
    """The one image's attributes, its pixels and its grid."""
    (tag,) = re.findall(r"<image [^>]*/>", svg)
    attributes = {name: html.unescape(value) for name, value in re.findall(r' ([\w:-]+)="([^"]*)"', tag)}
    png = base64.b64decode(attributes["href"].split(",", 1)[1])
    return attributes, np.asarray(Image.open(io.BytesIO(png)).convert("RGBA")), json.loads(attributes[GRID_ATTRIBUTE])


@settings(max_examples=60, deadline=None)
@given(columns=st.integers(8, 24), rows=st.integers(8, 24), x_step=st.floats(0.5, 40), y_step=st.floats(0.5, 40),
       overlap=st.floats(0, 2), origin=st.tuples(st.floats(-50, 50), st.floats(-50, 50)), data=st.data())
def test_every_cell_shows_in_its_colour_at_its_place_with_its_hover_text(columns, rows, x_step, y_step, overlap,
                                                                           origin, data):
    colours = data.draw(st.lists(st.tuples(*[st.integers(0, 255)] * 3), min_size=columns * rows,
                                 max_size=columns * rows))
    # a missing cell (a value Vega does not draw), never a whole row or column: the grid stays one grid
    missing = {(c, r) for c in range(columns) for r in range(rows)
               if data.draw(st.integers(0, 9), label=f"cell {c},{r}") == 0 and c != r}
    cells, expected = [], {}
    for r in range(rows):
        for c in range(columns):
            if (c, r) in missing:
                continue
            colour, label = colours[r * columns + c], f'dimension: {r}\ntoken: "a<b>&{c}'
            left = origin[0] + c * x_step - overlap / 2
            top = origin[1] + r * y_step - overlap / 2
            cells.append(cell(left, top, x_step + overlap, y_step + overlap, "rgb({}, {}, {})".format(*colour), label))
            expected[(c, r)] = (colour, label)
    svg = '<svg><g class="mark-text role-axis-label"><text>A</text></g>' + group(cells) + "</svg>"
    out = raster_cells(svg)
    if len(cells) < MIN_CELLS:
        assert out == svg
        return
    attributes, pixels, grid = image_of(out)
    assert "<path" not in out and out.startswith('<svg><g class="mark-text role-axis-label"><text>A</text></g>')
    assert pixels.shape == (rows, columns, 4) and (grid["columns"], grid["rows"]) == (columns, rows)
    for r in range(rows):
        for c in range(columns):
            colour, label = expected.get((c, r), (None, ""))
            assert grid["labels"][r * columns + c] == label
            assert tuple(pixels[r, c]) == ((*colour, 255) if colour else (0, 0, 0, 0))
    assert float(attributes["x"]) == pytest.approx(origin[0], abs=1e-3)
    assert float(attributes["y"]) == pytest.approx(origin[1], abs=1e-3)
    assert float(attributes["width"]) == pytest.approx(columns * x_step, rel=1e-4)
    assert float(attributes["height"]) == pytest.approx(rows * y_step, rel=1e-4)
    assert "pixelated" in attributes["style"] and attributes["preserveAspectRatio"] == "none"


def grid_cells(columns: int = 10, rows: int = 10, step: float = 5.0) -> list[str]:
    return [cell(c * step, r * step, step, step, "#3366cc", f"{c},{r}") for r in range(rows) for c in range(columns)]


@pytest.mark.parametrize("spoil, why", [
    (lambda cells: cells[:-1] + [cells[-1].replace('fill="#3366cc"', 'fill="#3366cc" stroke="black"')], "a stroke"),
    (lambda cells: cells[:-1] + [cells[-1].replace('role="graphics-symbol"', 'role="graphics-symbol" data-click="99"')],
     "a clickable cell"),
    (lambda cells: cells[:-1] + [cell(47.5, 45, 5, 5, "#3366cc", "off the grid")], "a cell off the grid"),
    (lambda cells: cells[:-1] + [cell(45, 45, 3, 5, "#3366cc", "narrower")], "a narrower cell"),
    (lambda cells: cells + [cell(0, 0, 5, 5, "#3366cc", "twice")], "two cells on one place"),
    (lambda cells: cells[:-1] + [cells[-1].replace('fill="#3366cc"', 'fill="url(#gradient)"')], "a gradient fill"),
    (lambda cells: cells[:MIN_CELLS - 1], "too few cells"),
    (lambda cells: [c for c in cells if 'd="M5.0,' not in c], "a whole column missing"),
])
def test_anything_but_plain_cells_of_one_grid_is_left_as_vega_drew_it(spoil, why):
    svg = "<svg>" + group(spoil(grid_cells())) + "</svg>"
    assert raster_cells(svg) == svg, why


def test_a_heatmap_drawn_for_a_page_is_one_image_with_the_hover_text_its_cells_had(monkeypatch):
    """Through the converter: the cells' hover texts, row by row, are those Vega's cells carried, the image has a
    pixel per cell, and the figure's axes and title stay text."""
    from nlivis.viz.vega.heatmaps import colour, token_heatmap

    rng = np.random.default_rng(0)
    values = rng.random((9, 12))
    premise, hypothesis = [f"p{i}" for i in range(9)], [f"h{j}" for j in range(12)]
    spec = token_heatmap(values, premise, hypothesis, "softmax weight", ("premise token", "hypothesis token"),
                         ("premise tokens", "hypothesis tokens"), "nine by twelve",
                         colour("softmax weight", [0, 1], "blues"))
    svg = export.page_svg(export.page_json(spec, dark=False))
    monkeypatch.setattr(export, "raster_cells", lambda text: text)
    as_paths = export.page_svg(export.page_json(spec, dark=False))
    cells = re.findall(r'aria-label="([^"]*)" aria-roledescription="rect mark" d="M([-\d.e]+),([-\d.e]+)', as_paths)
    by_place = [html.unescape(label) for label, x, y in sorted(cells, key=lambda found: (float(found[2]), float(found[1])))]
    _, pixels, grid = image_of(svg)
    assert grid["labels"] == by_place and len(by_place) == 9 * 12
    assert pixels.shape[:2] == (grid["rows"], grid["columns"]) and (pixels[..., 3] == 255).all()
    assert "nine by twelve" in svg and ">p0<" in svg and ">h11<" in svg, "title and tokens stay text"
    assert len(svg) < len(as_paths) and 'aria-roledescription="rect mark"' not in svg


def test_the_svg_a_reader_downloads_keeps_every_cell_as_a_vector_mark():
    from nlivis.viz.vega.heatmaps import colour, token_heatmap

    values = np.random.default_rng(1).random((9, 12))
    spec = token_heatmap(values, [f"p{i}" for i in range(9)], [f"h{j}" for j in range(12)], "softmax weight",
                         ("premise token", "hypothesis token"), ("premise tokens", "hypothesis tokens"), "cells",
                         colour("softmax weight", [0, 1], "blues"))
    downloaded = export.spec_svg(spec)
    assert "<image" not in downloaded and downloaded.count('aria-roledescription="rect mark"') == 9 * 12
