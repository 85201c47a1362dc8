"""A heatmap's cells in a server-drawn SVG as one image: the browser parses, styles and lays out one element
instead of one path per cell.

Vega draws each cell of a heatmap as its own `<path>` with its hover text (`export.page_svg`). A model's gates on
the Gates page are ~2,000 such paths, half a megabyte of SVG: by URL the page read +0.61 s over Streamlit's floor,
+0.41 s with a 10-pixel SVG in the figure's place (bench/RESULTS.md, session 32). `raster_cells` replaces a group of cells that
tile a regular grid (Vega-Lite's `rect` marks on two band scales, drawn seamless) with one PNG `<image>`, one pixel
per cell, stretched over the same area with `image-rendering: pixelated` (sharp blocks, no blur), and carries the
cells' hover texts, row by row, in the image's `GRID_ATTRIBUTE` (the page's hover code finds the cell under the
pointer, `app.components.figures.HOVER_JS`). Anything else — bars, text, lines, a clickable mark (`data-click`), a
cell with a stroke or an opacity, cells that do not tile one grid — is left exactly as Vega drew it. The SVG file a
reader downloads is drawn from the spec again (`export.spec_svg`): vector cells, untouched. The image describes
itself to a screen reader by its number of cells; the cells' values are no longer read out one by one (a screen
reader never usefully read thousands of them; the figure's CSV download has every value)."""
from __future__ import annotations

import base64
import html
import io
import json
import re

import numpy as np
from PIL import Image

GRID_ATTRIBUTE = "data-grid"
"""An image's cells for the hover code: JSON `{"columns": c, "rows": r, "labels": [...]}`, labels row by row ("" for
no cell)."""
MIN_CELLS = 64
"""Fewer cells than this stay paths: the image would save the browser nothing worth its PNG."""

_GROUP = re.compile(r'(<g class="mark-rect role-mark[^"]*"[^>]*>)(.*?)(</g>)', re.S)
_CELL = re.compile(r'<path role="graphics-symbol" data-hover="1" aria-label="([^"]*)" aria-roledescription="[^"]*" '
                   r'd="M([-\d.e]+),([-\d.e]+)h([\d.e]+)v([\d.e]+)h-[\d.e]+Z" fill="([^"]+)"/>')
"""One cell as `export.page_svg` leaves it: hover text, x, y, width, height, fill (nothing else: no stroke, no
opacity, no click number)."""
_RGB = re.compile(r"rgb\((\d+), ?(\d+), ?(\d+)\)|#([0-9a-fA-F]{6})")
_CLOSE = 1e-6


def raster_cells(svg: str) -> str:
    """`svg` with each group of `MIN_CELLS` or more heatmap cells on one regular grid drawn as one image."""
    return _GROUP.sub(lambda found: found.group(1) + (_as_image(found.group(2)) or found.group(2)) + found.group(3),
                      svg)


def _as_image(group: str) -> str | None:
    """The group's cells as one `<image>`, or None when they are not all plain cells of one regular grid."""
    cells = _CELL.findall(group)
    if len(cells) < MIN_CELLS or "".join(_CELL.sub("", group).split()):
        return None
    labels = [html.unescape(cell[0]) for cell in cells]
    xs, ys, widths, heights = (np.array([float(cell[i]) for cell in cells]) for i in (1, 2, 3, 4))
    colours = [_rgb(cell[5]) for cell in cells]
    grid = [_axis(xs, widths), _axis(ys, heights)]
    if None in colours or None in grid or np.ptp(widths) > _CLOSE or np.ptp(heights) > _CLOSE:
        return None
    (x_start, x_step, columns, column_of), (y_start, y_step, rows, row_of) = grid
    pixels = np.zeros((rows, columns, 4), dtype=np.uint8)
    texts = [""] * (rows * columns)
    for column, row, colour, label in zip(column_of, row_of, colours, labels):
        if pixels[row, column, 3]:
            return None  # two cells on one place: not a grid
        pixels[row, column] = (*colour, 255)
        texts[row * columns + column] = label
    # the cells overlap their neighbours by a little (drawn seamless): the grid's band starts that much further in
    left, top = x_start + (widths[0] - x_step) / 2, y_start + (heights[0] - y_step) / 2
    described = html.escape(json.dumps({"columns": columns, "rows": rows, "labels": texts}, ensure_ascii=False),
                            quote=True)
    return (f'<image role="img" aria-label="{len(cells)} cells; hover a cell for its values" x="{left:g}" y="{top:g}" '
            f'width="{columns * x_step:g}" height="{rows * y_step:g}" preserveAspectRatio="none" '
            f'style="image-rendering: pixelated" href="data:image/png;base64,{_png(pixels)}" '
            f'{GRID_ATTRIBUTE}="{described}"/>')


def _axis(starts: np.ndarray, sizes: np.ndarray) -> tuple[float, float, int, np.ndarray] | None:
    """(first start, step, places, each cell's place) when the cells' starts lie on one regular grid whose cells
    they cover (size at least the step), else None."""
    places = np.unique(np.round(starts, 6))
    if len(places) == 1:
        return float(places[0]), float(sizes[0]), 1, np.zeros(len(starts), dtype=int)
    steps = np.diff(places)
    step = float(steps.mean())
    position = (starts - places[0]) / step
    index = np.round(position).astype(int)
    if np.ptp(steps) > 1e-4 * step or np.abs(position - index).max() > 1e-4 or sizes[0] < step - _CLOSE:
        return None
    return float(places[0]), step, int(index.max()) + 1, index


def _rgb(fill: str) -> tuple[int, int, int] | None:
    found = _RGB.fullmatch(fill.strip())
    if found is None:
        return None
    if found.group(4):
        return tuple(int(found.group(4)[i:i + 2], 16) for i in (0, 2, 4))  # type: ignore[return-value]
    return int(found.group(1)), int(found.group(2)), int(found.group(3))


def _png(pixels: np.ndarray) -> str:
    buffer = io.BytesIO()
    Image.fromarray(pixels, "RGBA").save(buffer, format="PNG", optimize=False, compress_level=6)
    return base64.b64encode(buffer.getvalue()).decode("ascii")
